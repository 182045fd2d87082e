//! Helpers shared by the controllers, after upstream `pkg/controller/controller_utils.go`: pod
//! activity/availability, controller owner references, ReplicaSet orderings
//! (`ReplicaSetsByCreationTimestamp`, `ReplicaSetsBySizeOlder/Newer`), the scale-down ranking of pods
//! (`ActivePodsWithRanks`), pod creation from a template (`GetPodFromTemplate`) and `slowStartBatch`.

use std::cmp::Ordering;
use std::collections::BTreeMap;

use k8s_types::apps::{PodTemplateSpec, ReplicaSet};
use k8s_types::core::pod_conditions;
use k8s_types::core::{condition_status, phases, Pod};
use k8s_types::informer::{Delta, SharedInformerFactory};
use k8s_types::labels::LabelSelector;
use k8s_types::meta::{timestamp_tick, ObjectMeta, OwnerReference};
use k8s_types::workqueue::WorkQueue;
use k8s_types::{CompactString, Kind, Resource, Tick};

use crate::expectations::ControllerExpectations;

/// Event reason when a controller created a pod (upstream `SuccessfulCreatePodReason`).
pub const SUCCESSFUL_CREATE_POD_REASON: &str = "SuccessfulCreate";
/// Event reason when a pod create failed (upstream `FailedCreatePodReason`).
pub const FAILED_CREATE_POD_REASON: &str = "FailedCreate";
/// Event reason when a controller deleted a pod (upstream `SuccessfulDeletePodReason`).
pub const SUCCESSFUL_DELETE_POD_REASON: &str = "SuccessfulDelete";
/// Event reason when a pod delete failed (upstream `FailedDeletePodReason`).
pub const FAILED_DELETE_POD_REASON: &str = "FailedDelete";

/// The pod annotation giving the relative cost of deleting the pod on scale-down (upstream
/// `core.PodDeletionCost`, feature PodDeletionCost, on by default since 1.22).
pub const POD_DELETION_COST_ANNOTATION: &str = "controller.kubernetes.io/pod-deletion-cost";

/// Upstream `controller.SlowStartInitialBatchSize`: the first create batch of `slowStartBatch`.
pub const SLOW_START_INITIAL_BATCH_SIZE: usize = 1;

/// Upstream `controller.IsPodActive`: not Succeeded, not Failed, not being deleted.
pub fn is_pod_active(pod: &Pod) -> bool {
    !pod.is_terminal() && !pod.is_terminating()
}

/// The tick of the `Ready=True` condition's `lastTransitionTime` (upstream `podReadyTime`); `None`
/// when the pod is not ready or the time is missing (Go's zero time).
pub fn pod_ready_tick(pod: &Pod) -> Option<Tick> {
    if !pod.is_ready() {
        return None;
    }
    pod.condition(pod_conditions::READY)
        .filter(|c| c.status == condition_status::TRUE)
        .and_then(|c| c.last_transition_time.as_deref())
        .and_then(timestamp_tick)
}

/// Upstream `podutil.IsPodAvailable`: ready, and ready for more than `min_ready_seconds` ticks
/// (`lastTransitionTime + minReadySeconds < now`, strictly). With `min_ready_seconds == 0` every
/// ready pod is available.
pub fn is_pod_available(pod: &Pod, min_ready_seconds: i32, now: Tick) -> bool {
    if !pod.is_ready() {
        return false;
    }
    if min_ready_seconds <= 0 {
        return true;
    }
    match pod_ready_tick(pod) {
        Some(ready) => ready.saturating_add(min_ready_seconds as Tick) < now,
        None => false,
    }
}

/// The tick of `metadata.creationTimestamp`; `None` when unset or not a k8s-mini timestamp.
pub fn creation_tick(meta: &ObjectMeta) -> Option<Tick> {
    meta.creation_timestamp.as_deref().and_then(timestamp_tick)
}

/// Upstream `metav1.NewControllerRef`: `{apiVersion, kind, name, uid, controller: true,
/// blockOwnerDeletion: true}` pointing at `owner`.
pub fn new_controller_ref(owner: &ObjectMeta, kind: &Kind) -> OwnerReference {
    OwnerReference {
        api_version: kind.api_version().to_string(),
        kind: kind.name().to_string(),
        name: owner.name.clone(),
        uid: owner.uid.clone().unwrap_or_default(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }
}

/// Upstream `metav1.IsControlledBy`: the controller ref of `obj` has the owner's uid.
pub fn is_controlled_by(obj: &ObjectMeta, owner: &ObjectMeta) -> bool {
    match (obj.controller_ref(), owner.uid.as_deref()) {
        (Some(r), Some(uid)) => r.uid == uid,
        _ => false,
    }
}

/// `spec.replicas` of a ReplicaSet, 1 when unset (the apps/v1 default).
pub fn rs_replicas(rs: &ReplicaSet) -> i32 {
    rs.spec.replicas.unwrap_or(1)
}

/// Upstream `controller.FilterActiveReplicaSets`: ReplicaSets with `spec.replicas > 0`.
pub fn filter_active_replica_sets(rss: &[ReplicaSet]) -> Vec<ReplicaSet> {
    rss.iter()
        .filter(|rs| rs_replicas(rs) > 0)
        .cloned()
        .collect()
}

/// Upstream `controller.ReplicaSetsByCreationTimestamp`: older first, ties by name.
pub fn cmp_by_creation_timestamp(a: &ReplicaSet, b: &ReplicaSet) -> Ordering {
    creation_tick(&a.metadata)
        .cmp(&creation_tick(&b.metadata))
        .then_with(|| a.metadata.name.cmp(&b.metadata.name))
}

/// Upstream `controller.ReplicaSetsBySizeOlder`: larger first; equal sizes older first.
pub fn cmp_by_size_older(a: &ReplicaSet, b: &ReplicaSet) -> Ordering {
    rs_replicas(b)
        .cmp(&rs_replicas(a))
        .then_with(|| cmp_by_creation_timestamp(a, b))
}

/// Upstream `controller.ReplicaSetsBySizeNewer`: larger first; equal sizes newer first.
pub fn cmp_by_size_newer(a: &ReplicaSet, b: &ReplicaSet) -> Ordering {
    rs_replicas(b)
        .cmp(&rs_replicas(a))
        .then_with(|| cmp_by_creation_timestamp(b, a))
}

/// Upstream `GetDeletionCostFromPodAnnotations`: the pod-deletion-cost annotation as an int32; 0
/// when absent or invalid (a leading `+` or leading zeros are invalid, as upstream).
pub fn pod_deletion_cost(pod: &Pod) -> i32 {
    let Some(v) = pod.metadata.annotations.get(POD_DELETION_COST_ANNOTATION) else {
        return 0;
    };
    let first_ok = match v.as_bytes().first() {
        None => false,
        Some(b'-') => true,
        Some(b'0') => v == "0",
        Some(c) => c.is_ascii_digit(),
    };
    if !first_ok {
        return 0;
    }
    v.parse::<i32>().unwrap_or(0)
}

/// Upstream `maxContainerRestarts`: the highest restart count among the app containers.
fn max_container_restarts(pod: &Pod) -> i32 {
    pod.status
        .container_statuses
        .iter()
        .map(|c| c.restart_count)
        .max()
        .unwrap_or(0)
        .max(0)
}

/// Upstream `podPhaseToOrdinal`: Pending 0 < Unknown 1 < Running 2; any other phase counts as 0.
fn phase_ordinal(pod: &Pod) -> u8 {
    match pod.phase() {
        "Unknown" => 1,
        phases::RUNNING => 2,
        _ => 0,
    }
}

/// The rank upstream `logarithmicRankDiff` compares (it returns the difference of two ranks):
/// `floor(log2(now - t))` with the duration in nanoseconds (one tick = one second); a duration
/// <= 0 ranks -1.
fn logarithmic_rank(t: Tick, now: Tick) -> i64 {
    if now > t {
        let nanos = (now - t) as f64 * 1e9;
        nanos.log2().floor() as i64
    } else {
        -1
    }
}

/// Upstream `afterOrZero`: a missing time is "smaller"; otherwise the later time is smaller.
fn after_or_zero(t1: Option<Tick>, t2: Option<Tick>) -> bool {
    match (t1, t2) {
        (None, _) | (_, None) => t1.is_none(),
        (Some(a), Some(b)) => a > b,
    }
}

/// A pod with its rank: the number of active related pods on the same node (upstream
/// `getPodsRankedByRelatedPodsOnSameNode`).
#[derive(Clone, Copy, Debug)]
pub struct RankedPod<'a> {
    /// The pod (borrowed: ranking copies no pod).
    pub pod: &'a Pod,
    /// Active related pods on the pod's node (pods of every ReplicaSet with the same controller).
    pub rank: usize,
}

/// Upstream `ActivePodsWithRanks.Less` with its default feature gates (PodDeletionCost and
/// LogarithmicScaleDown on): true when `a` should be deleted before `b`.
///
/// 1. unassigned < assigned;
/// 2. Pending < Unknown < Running;
/// 3. not ready < ready;
/// 4. lower pod-deletion-cost first;
/// 5. higher rank (more colocated related pods) first;
/// 6. both ready: more recently ready first, compared in log2 buckets, equal buckets by uid;
/// 7. more container restarts first;
/// 8. newer creation first (log2 buckets, equal buckets by uid).
pub fn pod_deletion_less(a: &RankedPod<'_>, b: &RankedPod<'_>, now: Tick) -> bool {
    DeletionKey::new(*a, now).less(&DeletionKey::new(*b, now))
}

/// What [`pod_deletion_less`] compares of one pod, read once per sort instead of at every
/// comparison (the phase, readiness, annotations, container statuses and timestamps; the
/// timestamps as their `floor(log2)` ranks at `now`, which is what upstream's
/// `logarithmicRankDiff` compares). Comparing two keys answers exactly as upstream's `Less` on the
/// two pods.
#[derive(Clone, Copy, Debug)]
struct DeletionKey<'a> {
    ranked: RankedPod<'a>,
    unassigned: bool,
    phase: u8,
    ready: bool,
    cost: i32,
    uid: &'a str,
    ready_tick: Option<Tick>,
    ready_rank: i64,
    restarts: i32,
    created: Option<Tick>,
    created_rank: i64,
}

impl<'a> DeletionKey<'a> {
    fn new(ranked: RankedPod<'a>, now: Tick) -> DeletionKey<'a> {
        let p = ranked.pod;
        let ready_tick = pod_ready_tick(p);
        let created = creation_tick(&p.metadata);
        DeletionKey {
            ranked,
            unassigned: p.node_name().unwrap_or("").is_empty(),
            phase: phase_ordinal(p),
            ready: p.is_ready(),
            cost: pod_deletion_cost(p),
            uid: p.metadata.uid.as_deref().unwrap_or(""),
            ready_tick,
            ready_rank: ready_tick.map_or(0, |t| logarithmic_rank(t, now)),
            restarts: max_container_restarts(p),
            created,
            created_rank: created.map_or(0, |t| logarithmic_rank(t, now)),
        }
    }

    /// Upstream `ActivePodsWithRanks.Less` (see [`pod_deletion_less`] for the order).
    fn less(&self, b: &DeletionKey<'_>) -> bool {
        let a = self;
        // Exactly one unassigned (an empty node name): it goes first.
        if a.unassigned != b.unassigned {
            return a.unassigned;
        }
        if a.phase != b.phase {
            return a.phase < b.phase;
        }
        if a.ready != b.ready {
            return !a.ready;
        }
        if a.cost != b.cost {
            return a.cost < b.cost;
        }
        if a.ranked.rank != b.ranked.rank {
            return a.ranked.rank > b.ranked.rank;
        }
        // Equal log2 buckets are ordered by uid.
        let by_rank = |ra: i64, rb: i64| {
            if ra == rb {
                a.uid < b.uid
            } else {
                ra < rb
            }
        };
        if a.ready && b.ready && a.ready_tick != b.ready_tick {
            return match (a.ready_tick, b.ready_tick) {
                (Some(_), Some(_)) => by_rank(a.ready_rank, b.ready_rank),
                (ra, rb) => after_or_zero(ra, rb),
            };
        }
        if a.restarts != b.restarts {
            return a.restarts > b.restarts;
        }
        if a.created != b.created {
            return match (a.created, b.created) {
                (Some(_), Some(_)) => by_rank(a.created_rank, b.created_rank),
                (ta, tb) => after_or_zero(ta, tb),
            };
        }
        false
    }
}

/// Sorts pods so the ones to delete first come first (upstream `sort.Sort(ActivePodsWithRanks)`).
/// Upstream's sort is unstable and its `Less` is not always transitive; k8s-mini uses a stable merge
/// sort that only calls `Less`, and breaks remaining ties by pod name, so the order is deterministic.
pub fn sort_pods_for_deletion(pods: &mut Vec<RankedPod<'_>>, now: Tick) {
    let keyed: Vec<DeletionKey<'_>> = pods.iter().map(|r| DeletionKey::new(*r, now)).collect();
    // The sort moves indices, not keys (a key is about 100 bytes; the merges copy every element
    // once per level).
    let mut order: Vec<usize> = (0..keyed.len()).collect();
    stable_sort_by_less(&mut order, &|&a: &usize, &b: &usize| {
        let (a, b) = (&keyed[a], &keyed[b]);
        if a.less(b) {
            true
        } else if b.less(a) {
            false
        } else {
            a.ranked.pod.metadata.name < b.ranked.pod.metadata.name
        }
    });
    pods.clear();
    pods.extend(order.into_iter().map(|i| keyed[i].ranked));
}

/// A stable merge sort driven by a `less` predicate. Unlike `slice::sort_by` it never requires (or
/// checks) a total order, so a non-transitive upstream comparator cannot make it panic. Top-down:
/// the first `len / 2` elements and the rest are sorted, then merged (an element of the right half
/// goes first only when strictly less), through one scratch buffer.
pub fn stable_sort_by_less<T: Clone>(v: &mut [T], less: &dyn Fn(&T, &T) -> bool) {
    let mut scratch = Vec::with_capacity(v.len());
    merge_sort(v, &mut scratch, less);
}

fn merge_sort<T: Clone>(v: &mut [T], scratch: &mut Vec<T>, less: &dyn Fn(&T, &T) -> bool) {
    if v.len() < 2 {
        return;
    }
    let mid = v.len() / 2;
    merge_sort(&mut v[..mid], scratch, less);
    merge_sort(&mut v[mid..], scratch, less);
    scratch.clear();
    scratch.extend_from_slice(v);
    let (left, right) = scratch.split_at(mid);
    let (mut li, mut ri) = (0, 0);
    for slot in v.iter_mut() {
        // Take from the right only when strictly less: keeps equal elements in order.
        let take_right = li == left.len() || (ri < right.len() && less(&right[ri], &left[li]));
        if take_right {
            *slot = right[ri].clone();
            ri += 1;
        } else {
            *slot = left[li].clone();
            li += 1;
        }
    }
}

/// Upstream `getPodsPrefix`: `<controller name>-`, the pods' `generateName`.
pub fn pods_generate_name(controller_name: &str) -> CompactString {
    k8s_types::format_compact!("{controller_name}-")
}

/// Upstream `GetPodFromTemplate`: a pod with the template's labels, annotations, finalizers and
/// spec, `generateName: <parent>-`, the parent's namespace and `controller_ref` as its only owner.
pub fn pod_from_template(
    template: &PodTemplateSpec,
    parent: &ObjectMeta,
    controller_ref: OwnerReference,
) -> Pod {
    Pod {
        api_version: "v1".into(),
        kind: "Pod".into(),
        metadata: ObjectMeta {
            generate_name: Some(pods_generate_name(&parent.name)),
            namespace: parent.namespace.clone(),
            labels: template.metadata.labels.clone(),
            annotations: template.metadata.annotations.clone(),
            finalizers: template.metadata.finalizers.clone(),
            owner_references: vec![controller_ref].into(),
            ..Default::default()
        },
        spec: template.spec.clone().into(),
        status: Default::default(),
    }
}

/// Upstream `slowStartBatch`: calls `f` `count` times in batches of 1, 2, 4, ... (starting at
/// `initial`); stops after the first batch with a failure. Every call of a batch is made (upstream
/// runs a batch concurrently). Returns the successes and the first error.
pub fn slow_start_batch<E>(
    count: usize,
    initial: usize,
    f: &mut dyn FnMut() -> Result<(), E>,
) -> (usize, Option<E>) {
    let mut remaining = count;
    let mut successes = 0;
    let mut batch = remaining.min(initial.max(1));
    while batch > 0 {
        let mut first_err = None;
        for _ in 0..batch {
            match f() {
                Ok(()) => successes += 1,
                Err(e) => {
                    if first_err.is_none() {
                        first_err = Some(e);
                    }
                }
            }
        }
        if first_err.is_some() {
            return (successes, first_err);
        }
        remaining -= batch;
        batch = (2 * batch).min(remaining);
    }
    (successes, None)
}

/// Adds `key=value` to a copy of `labels` (upstream `labelsutil.CloneAndAddLabel`).
pub fn clone_and_add_label(
    labels: &BTreeMap<String, String>,
    key: &str,
    value: &str,
) -> BTreeMap<String, String> {
    let mut out = labels.clone();
    out.insert(key.to_string(), value.to_string());
    out
}

/// The pod event handlers of a controller that owns pods through a label selector and keeps
/// [`ControllerExpectations`]: upstream `addPod` / `updatePod` / `deletePod` of
/// `pkg/controller/replicaset/replica_set.go`, which `pkg/controller/daemon/daemon_controller.go`
/// repeats. The owner (`owner_kind`, resolved from the pod's controller reference) observes the
/// creation or deletion and is queued; an orphan queues every owner whose selector matches it
/// (`selector_of`) when it is added or its labels or controller reference changed.
///
/// `relabelled_old_deleted`: when a pod being deleted also changed its labels, whether the old
/// version's owner observes a deletion too (the ReplicaSet controller does; the DaemonSet
/// controller's `updatePod` only deletes the current one).
pub(crate) fn on_owned_pod_change<R: Resource>(
    owner_kind: &Kind,
    change: &Delta,
    informers: &SharedInformerFactory,
    expectations: &mut ControllerExpectations,
    queue: &mut WorkQueue,
    selector_of: impl Fn(&R) -> Option<&LabelSelector>,
    relabelled_old_deleted: bool,
) {
    let resolve = |pod: &Pod, cref: &OwnerReference| {
        informers.resolve_controller_ref(owner_kind, pod.metadata.namespace(), cref)
    };
    let selecting = |pod: &Pod| {
        informers.selecting::<R>(
            owner_kind,
            pod.metadata.namespace(),
            &pod.metadata.labels,
            &selector_of,
        )
    };
    // `deletePod`: the controlling owner observes the deletion.
    let mut deleted = |pod: &Pod, queue: &mut WorkQueue| {
        if let Some(key) = pod.metadata.controller_ref().and_then(|c| resolve(pod, c)) {
            expectations.deletion_observed(&key, &change.key);
            queue.add(key);
        }
    };
    let old = change.old.as_deref().and_then(Pod::from_object_ref);
    let Some(cur) = change.new.as_deref().and_then(Pod::from_object_ref) else {
        if let Some(old) = old {
            deleted(old, queue);
        }
        return;
    };
    let Some(old) = old else {
        // `addPod`
        if cur.metadata.deletion_timestamp.is_some() {
            deleted(cur, queue);
            return;
        }
        if let Some(cref) = cur.metadata.controller_ref() {
            if let Some(key) = resolve(cur, cref) {
                expectations.creation_observed(&key);
                queue.add(key);
            }
            return;
        }
        for key in selecting(cur) {
            queue.add(key);
        }
        return;
    };
    // `updatePod`
    if cur.metadata.resource_version == old.metadata.resource_version {
        return;
    }
    let labels_changed = cur.metadata.labels != old.metadata.labels;
    if cur.metadata.deletion_timestamp.is_some() {
        deleted(cur, queue);
        if labels_changed && relabelled_old_deleted {
            deleted(old, queue);
        }
        return;
    }
    let (cur_ref, old_ref) = (cur.metadata.controller_ref(), old.metadata.controller_ref());
    let ref_changed = cur_ref != old_ref;
    if ref_changed {
        if let Some(key) = old_ref.and_then(|c| resolve(old, c)) {
            queue.add(key);
        }
    }
    if let Some(cref) = cur_ref {
        // Upstream also queues the owner minReadySeconds after the pod turned ready; the sync's
        // requeue does it at the tick the pod turns available.
        if let Some(key) = resolve(cur, cref) {
            queue.add(key);
        }
        return;
    }
    if labels_changed || ref_changed {
        for key in selecting(cur) {
            queue.add(key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_types::core::PodCondition;
    use k8s_types::meta::tick_timestamp;

    fn pod(
        name: &str,
        node: Option<&str>,
        phase: &str,
        ready_at: Option<Tick>,
        created: Tick,
    ) -> Pod {
        let mut p = Pod::default();
        p.metadata.name = name.into();
        p.metadata.uid = Some(format!("uid-{name}"));
        p.metadata.creation_timestamp = Some(tick_timestamp(created).into());
        p.spec.node_name = node.map(String::from);
        p.status.phase = Some(phase.into());
        if let Some(t) = ready_at {
            p.status.conditions.push(PodCondition {
                type_: "Ready".into(),
                status: "True".into(),
                last_transition_time: Some(k8s_types::meta::tick_timestamp_compact(t)),
                ..Default::default()
            });
        }
        p
    }

    fn ranked(p: &Pod, rank: usize) -> RankedPod<'_> {
        RankedPod { pod: p, rank }
    }

    #[test]
    fn deletion_order_follows_active_pods_with_ranks() {
        // Hand-ordered per upstream ActivePodsWithRanks.Less: unassigned, pending, not-ready, then
        // ready pods by how recently they became ready (log2 buckets of nanoseconds before now).
        let now = 1000;
        let all = [
            pod("ready-old", Some("n1"), "Running", Some(10), 5),
            pod("ready-new", Some("n1"), "Running", Some(990), 5),
            pod("running-not-ready", Some("n1"), "Running", None, 5),
            pod("pending", Some("n1"), "Pending", None, 5),
            pod("unassigned", None, "Pending", None, 5),
        ];
        let mut pods: Vec<RankedPod<'_>> = all.iter().map(|p| ranked(p, 1)).collect();
        sort_pods_for_deletion(&mut pods, now);
        let names: Vec<_> = pods.iter().map(|p| p.pod.metadata.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "unassigned",
                "pending",
                "running-not-ready",
                "ready-new",
                "ready-old"
            ]
        );
    }

    #[test]
    fn pods_to_delete_are_ranked_by_active_related_pods_on_their_node() {
        // Upstream getPodsToDelete: a pod's rank is the number of active related pods on its
        // node; the Succeeded pod on n1 is not counted, so b (n2: b and c) goes before a (n1: a).
        let now = 100;
        let a = pod("a", Some("n1"), "Running", Some(50), 1);
        let b = pod("b", Some("n2"), "Running", Some(50), 1);
        let c = pod("c", Some("n2"), "Running", Some(50), 1);
        let done = pod("d", Some("n1"), "Succeeded", None, 1);
        let related = [&a, &b, &c, &done];
        let chosen = crate::replica_set::get_pods_to_delete(&[&a, &b], &related, 1, now);
        let names: Vec<_> = chosen.iter().map(|p| p.metadata.name.as_str()).collect();
        assert_eq!(names, ["b"]);
        // Deleting them all keeps the given order (no ranking).
        let all = crate::replica_set::get_pods_to_delete(&[&b, &a], &related, 2, now);
        let names: Vec<_> = all.iter().map(|p| p.metadata.name.as_str()).collect();
        assert_eq!(names, ["b", "a"]);
    }

    #[test]
    fn doubled_up_pods_and_deletion_cost_come_first() {
        let now = 100;
        let mut a = pod("a", Some("n1"), "Running", Some(50), 1);
        let b = pod("b", Some("n2"), "Running", Some(50), 1);
        let mut pods = vec![ranked(&a, 1), ranked(&b, 3)];
        sort_pods_for_deletion(&mut pods, now);
        assert_eq!(
            pods[0].pod.metadata.name, "b",
            "rank 3 (doubled up) goes first"
        );
        a.metadata
            .annotations
            .insert(POD_DELETION_COST_ANNOTATION.into(), "-5".into());
        let mut pods = vec![ranked(&b, 3), ranked(&a, 1)];
        sort_pods_for_deletion(&mut pods, now);
        assert_eq!(
            pods[0].pod.metadata.name, "a",
            "lower deletion cost beats rank"
        );
    }

    #[test]
    fn deletion_cost_rejects_leading_plus_and_zeros() {
        let mut p = Pod::default();
        for (v, want) in [
            ("10", 10),
            ("-3", -3),
            ("0", 0),
            ("+10", 0),
            ("008", 0),
            ("x", 0),
        ] {
            p.metadata
                .annotations
                .insert(POD_DELETION_COST_ANNOTATION.into(), v.into());
            assert_eq!(pod_deletion_cost(&p), want, "{v}");
        }
    }

    #[test]
    fn logarithmic_buckets_group_close_times() {
        // now - t = 3s and 2s: log2(3e9) = 31.48, log2(2e9) = 30.9 -> buckets 31 and 30.
        assert_eq!(logarithmic_rank(97, 100) - logarithmic_rank(98, 100), 1);
        // 5s and 6s: log2(5e9) = 32.2, log2(6e9) = 32.48 -> same bucket 32.
        assert_eq!(logarithmic_rank(95, 100) - logarithmic_rank(94, 100), 0);
        assert_eq!(logarithmic_rank(100, 100) - logarithmic_rank(99, 100), -30);
    }

    #[test]
    fn availability_needs_min_ready_seconds_strictly_passed() {
        let p = pod("p", Some("n"), "Running", Some(10), 1);
        assert!(is_pod_available(&p, 0, 10));
        assert!(!is_pod_available(&p, 5, 15), "10 + 5 < 15 is false");
        assert!(is_pod_available(&p, 5, 16));
    }

    #[test]
    fn slow_start_batches_double_and_stop_on_failure() {
        let mut calls = 0;
        let (ok, err) = slow_start_batch::<()>(10, 1, &mut || {
            calls += 1;
            Ok(())
        });
        assert_eq!((ok, err, calls), (10, None, 10));
        // Fail on the 4th call: batches 1, 2 succeed (3 calls), batch of 4 runs fully with 1 failure.
        let mut n = 0;
        let (ok, err) = slow_start_batch(10, 1, &mut || {
            n += 1;
            if n == 4 {
                Err("boom")
            } else {
                Ok(())
            }
        });
        assert_eq!((ok, err, n), (6, Some("boom"), 7));
    }

    #[test]
    fn replica_set_orderings() {
        let rs = |name: &str, replicas: i32, created: Tick| {
            let mut r = ReplicaSet::default();
            r.metadata.name = name.into();
            r.metadata.creation_timestamp = Some(tick_timestamp(created).into());
            r.spec.replicas = Some(replicas);
            r
        };
        let mut v = [rs("b", 2, 5), rs("a", 2, 5), rs("c", 3, 9), rs("d", 2, 1)];
        v.sort_by(cmp_by_size_older);
        let names: Vec<_> = v.iter().map(|r| r.metadata.name.as_str()).collect();
        assert_eq!(names, ["c", "d", "a", "b"]);
        v.sort_by(cmp_by_size_newer);
        let names: Vec<_> = v.iter().map(|r| r.metadata.name.as_str()).collect();
        assert_eq!(names, ["c", "b", "a", "d"]);
    }

    /// A pod deleted and, in the same update, relabelled and moved from ReplicaSet `a` to `b`
    /// (its controller reference changed): upstream's ReplicaSet `updatePod` calls `deletePod`
    /// for the current and the old version, so `a` (the old owner) observes the deletion it
    /// expected too; the DaemonSet's only for the current one, so `a`'s expectation stays open.
    #[test]
    fn a_relabelled_pod_being_deleted_reaches_the_old_owner_only_when_asked() {
        use k8s_testing::FakeApi;
        use std::sync::Arc;
        let rs = |name: &str| {
            let mut r = ReplicaSet::default();
            r.metadata.name = name.into();
            r.metadata.namespace = Some("default".into());
            r
        };
        let mut api = FakeApi::new();
        api.add(rs("a"));
        api.add(rs("b"));
        let mut informers = SharedInformerFactory::new();
        informers.start(Kind::ReplicaSet);
        informers.sync(&api);
        let uid = |name: &str| {
            informers
                .of(&Kind::ReplicaSet)
                .get(&format!("default/{name}"))
                .and_then(|o| o.meta().uid.clone())
                .expect("uid")
        };
        let owned_by = |name: &str, app: &str| {
            let mut p = pod("p", None, "Running", None, 0);
            p.metadata.namespace = Some("default".into());
            p.metadata.resource_version = Some(if name == "a" { "1" } else { "2" }.into());
            p.metadata.labels = BTreeMap::from([("app".to_string(), app.to_string())]).into();
            p.metadata.owner_references = vec![OwnerReference {
                api_version: "apps/v1".into(),
                kind: "ReplicaSet".into(),
                name: name.into(),
                uid: uid(name),
                controller: Some(true),
                ..Default::default()
            }]
            .into();
            p
        };
        let old = owned_by("a", "web");
        let mut cur = owned_by("b", "web-v2");
        cur.metadata.deletion_timestamp = Some(k8s_types::meta::tick_timestamp(5).into());
        let change = Delta {
            kind: Kind::Pod,
            key: "default/p".into(),
            old: Some(Arc::new(old.into_object())),
            new: Some(Arc::new(cur.into_object())),
        };
        for (relabelled_old_deleted, a_satisfied) in [(true, true), (false, false)] {
            let mut exp = ControllerExpectations::new();
            exp.expect_deletions("default/a", vec!["default/p".into()], 0);
            exp.expect_deletions("default/b", vec!["default/p".into()], 0);
            let mut queue = WorkQueue::default();
            on_owned_pod_change::<ReplicaSet>(
                &Kind::ReplicaSet,
                &change,
                &informers,
                &mut exp,
                &mut queue,
                |r| r.spec.selector.as_ref(),
                relabelled_old_deleted,
            );
            assert!(exp.satisfied("default/b", 1));
            assert_eq!(exp.satisfied("default/a", 1), a_satisfied);
        }
    }
}
