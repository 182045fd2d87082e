//! DefaultPreemption (PostFilter): when no node fits, find nodes where evicting lower-priority
//! pods would let the pod fit, pick one, evict its victims and nominate the node. Upstream
//! `pkg/scheduler/framework/plugins/defaultpreemption/default_preemption.go` and
//! `pkg/scheduler/framework/preemption/preemption.go` (`Evaluator.Preempt`, `findCandidates`,
//! `DryRunPreemption`, `SelectCandidate`, `pickOneNodeForPreemption`, `prepareCandidate`).
//!
//! PodDisruptionBudgets count as upstream counts them: on each node the victims whose eviction
//! would exhaust a budget (`filterPodsWithPDBViolation`: a budget of the victim's namespace with
//! a non-empty selector matching it, the victim not already in its `disruptedPods`, each match
//! using up one of its `disruptionsAllowed`) are reprieved first, then the others, each from the
//! most important down (`SelectVictimsOnNode`); the violating victims that still have to go are
//! the node's PDB violations, the first criterion of `pickOneNodeForPreemption`. Preemption
//! still deletes its victims (it does not go through the eviction subresource), as upstream.
//!
//! Simplified on purpose: candidates are searched from offset 0 in node-name order instead of a random offset; the last
//! tie between equally good candidate nodes goes to the node whose name sorts last (the same rule
//! as host selection); preemption is synchronous (upstream's async preemption is a feature gate).
//!
//! Delayed preemption (KEP-4671 "Delayed Preemption", kube-scheduler v1.36's PodGroup scheduling
//! cycle): when the attempt's [`CycleState`] holds a [`DelayedVictims`] entry (written by the
//! PodGroup cycle, `schedule_one/pod_group.rs`), PostFilter chooses the node and its victims as
//! usual but evicts nothing: it records them there and nominates the node. The cycle evicts them
//! (with [`prepare_candidate`]) only when the whole group can be placed with them gone.

use k8s_types::object::Shared;
use std::cmp::Ordering;
use std::sync::Arc;

use k8s_sched_framework::{
    Code, CycleState, Diagnosis, FitError, Handle, NodeInfo, NodeToStatus, Plugin, PodInfo,
    PostFilterPlugin, PostFilterResult, Status,
};
use k8s_types::apiserver::{ApiExt, DeleteOptions};
use k8s_types::core::{condition_status, Pod, PodCondition};
use k8s_types::meta::{tick_timestamp_compact, timestamp_tick};
use k8s_types::object::{Kind, Object};
use k8s_types::policy::PodDisruptionBudget;
use k8s_types::Tick;

use super::names;
use crate::config::args::DefaultPreemptionArgs;
use k8s_sched_framework::ConfigError;
use k8s_sched_framework::PluginArgs;

/// Upstream message when the preemptor's policy forbids preemption.
pub const MSG_NOT_ELIGIBLE_NEVER: &str = "not eligible due to preemptionPolicy=Never.";
/// Upstream message when earlier victims on the nominated node are still terminating.
pub const MSG_NOT_ELIGIBLE_TERMINATING: &str =
    "not eligible due to a terminating pod on the nominated node.";
/// Upstream per-node reason when the node has no lower-priority pod.
pub const MSG_NO_VICTIMS: &str = "No preemption victims found for incoming pod";
/// Upstream reason for nodes where preemption cannot help.
pub const MSG_NOT_HELPFUL: &str = "Preemption is not helpful for scheduling";
/// Prefix DefaultPreemption puts on its messages.
pub const MSG_PREFIX: &str = "preemption: ";
/// Event reason on each victim.
pub const EVENT_REASON_PREEMPTED: &str = "Preempted";
/// Upstream `v1.DisruptionTarget` condition type.
pub const CONDITION_DISRUPTION_TARGET: &str = "DisruptionTarget";
/// Upstream `v1.PodReasonPreemptionByScheduler`.
pub const REASON_PREEMPTION_BY_SCHEDULER: &str = "PreemptionByScheduler";

/// A node where preemption would let the pod fit, with its victims ordered from the most to the
/// least important (upstream `Candidate`).
#[derive(Clone, Debug)]
pub struct Candidate {
    /// Node name.
    pub name: String,
    /// Pods to evict.
    pub victims: Vec<Shared<Pod>>,
    /// Victims whose eviction would violate a PodDisruptionBudget.
    pub num_pdb_violations: usize,
}

/// The [`CycleState`] key of [`DelayedVictims`].
pub const DELAYED_VICTIMS_KEY: &str = "PostFilterDefaultPreemptionDelayed";

/// Victims chosen but not evicted (delayed preemption): written empty into a member's state by
/// the PodGroup scheduling cycle, filled by PostFilter with the chosen node and its victims.
#[derive(Clone, Debug, Default)]
pub struct DelayedVictims {
    /// The node the preemptor was nominated to ("" while none was chosen).
    pub node: String,
    /// The victims on it, most important first.
    pub victims: Vec<Shared<Pod>>,
}

/// The DefaultPreemption plugin.
#[derive(Debug)]
pub struct DefaultPreemption {
    min_candidate_nodes_percentage: i32,
    min_candidate_nodes_absolute: i32,
}

impl Default for DefaultPreemption {
    fn default() -> DefaultPreemption {
        DefaultPreemption::new(&DefaultPreemptionArgs::default())
    }
}

impl DefaultPreemption {
    /// Builds the plugin (args defaulted here).
    pub fn new(args: &DefaultPreemptionArgs) -> DefaultPreemption {
        let a = args.clone().defaulted();
        DefaultPreemption {
            min_candidate_nodes_percentage: a.min_candidate_nodes_percentage.unwrap_or(10),
            min_candidate_nodes_absolute: a.min_candidate_nodes_absolute.unwrap_or(100),
        }
    }

    /// Factory: decodes, defaults and validates `DefaultPreemptionArgs`.
    ///
    /// # Errors
    /// Decode and validation errors.
    pub fn factory(a: &PluginArgs<'_>) -> Result<Arc<dyn Plugin>, ConfigError> {
        let args: DefaultPreemptionArgs = a.decode()?;
        let args = args.defaulted();
        a.check(args.validate(&a.path))?;
        Ok(Arc::new(DefaultPreemption::new(&args)))
    }

    /// Upstream `calculateNumCandidates`.
    fn num_candidates(&self, num_nodes: usize) -> usize {
        let n = num_nodes as i64;
        let mut c = n * i64::from(self.min_candidate_nodes_percentage) / 100;
        c = c.max(i64::from(self.min_candidate_nodes_absolute));
        c.min(n).max(0) as usize
    }

    /// Upstream `PodEligibleToPreemptOthers`.
    fn eligible(
        &self,
        pod: &Pod,
        m: &NodeToStatus,
        handle: &dyn Handle,
    ) -> Result<(), &'static str> {
        if pod.spec.preemption_policy.as_deref() == Some("Never") {
            return Err(MSG_NOT_ELIGIBLE_NEVER);
        }
        if let Some(nom) = pod
            .status
            .nominated_node_name
            .as_deref()
            .filter(|n| !n.is_empty())
        {
            if m.get(nom).code() == Code::UnschedulableAndUnresolvable {
                return Ok(());
            }
            if let Some(ni) = handle.node_info(nom) {
                let prio = pod.priority();
                if ni
                    .pods()
                    .iter()
                    .any(|p| p.pod.priority() < prio && terminating_by_preemption(&p.pod))
                {
                    return Err(MSG_NOT_ELIGIBLE_TERMINATING);
                }
            }
        }
        Ok(())
    }

    /// Upstream `SelectVictimsOnNode` on a private copy of the node: the victims, most
    /// important first, and how many of them violate a PodDisruptionBudget.
    fn select_victims_on_node(
        &self,
        state: &mut CycleState,
        pod: &Pod,
        mut node: NodeInfo,
        handle: &dyn Handle,
        now: Tick,
        pdbs: &[Arc<PodDisruptionBudget>],
    ) -> Result<(Vec<Shared<Pod>>, usize), Status> {
        let prio = pod.priority();
        let mut potential: Vec<_> = node
            .pods()
            .iter()
            .filter(|p| p.pod.priority() < prio)
            .cloned()
            .collect();
        for pi in &potential {
            node.remove_pod(&pi.pod);
            let s = handle.run_pre_filter_extension_remove_pod(state, pod, pi, &node);
            if !s.is_success() {
                return Err(s);
            }
        }
        if potential.is_empty() {
            return Err(Status::unresolvable(MSG_NO_VICTIMS));
        }
        let s = handle.run_filter_plugins_with_nominated_pods(state, pod, &node);
        if !s.is_success() {
            return Err(s);
        }
        potential.sort_by(|a, b| more_important(&a.pod, &b.pod, now));
        let (violating, non_violating) = filter_pods_with_pdb_violation(potential, pdbs);
        let mut victims = Vec::new();
        let mut num_violating = 0;
        // Reprieve as many pods as possible: the PDB-violating ones first, then the others.
        let mut reprieve = |pi: PodInfo, node: &mut NodeInfo| -> Result<bool, Status> {
            node.add_pod(pi.clone());
            let s = handle.run_pre_filter_extension_add_pod(state, pod, &pi, node);
            if !s.is_success() {
                return Err(s);
            }
            let fits = handle
                .run_filter_plugins_with_nominated_pods(state, pod, node)
                .is_success();
            if !fits {
                node.remove_pod(&pi.pod);
                let s = handle.run_pre_filter_extension_remove_pod(state, pod, &pi, node);
                if !s.is_success() {
                    return Err(s);
                }
                victims.push(pi.pod);
            }
            Ok(fits)
        };
        let both = !violating.is_empty() && !non_violating.is_empty();
        for pi in violating {
            if !reprieve(pi, &mut node)? {
                num_violating += 1;
            }
        }
        for pi in non_violating {
            reprieve(pi, &mut node)?;
        }
        if both {
            victims.sort_by(|a, b| more_important(a, b, now));
        }
        Ok((victims, num_violating))
    }

    /// Upstream `findCandidates` + `DryRunPreemption` (sequential, from offset 0).
    fn find_candidates(
        &self,
        state: &CycleState,
        pod: &Pod,
        m: &NodeToStatus,
        handle: &dyn Handle,
    ) -> (Vec<Candidate>, NodeToStatus) {
        let now = handle.now();
        let potential: Vec<String> = m
            .nodes_for_status_code(handle.node_infos(), Code::Unschedulable)
            .into_iter()
            .map(str::to_string)
            .collect();
        let mut statuses = NodeToStatus::default();
        if potential.is_empty() {
            return (Vec::new(), statuses);
        }
        let want = self.num_candidates(potential.len());
        let pdbs = handle.pod_disruption_budgets();
        let mut candidates = Vec::new();
        for name in potential {
            let Some(ni) = handle.node_info(&name) else {
                continue;
            };
            let mut s = state.clone();
            match self.select_victims_on_node(&mut s, pod, ni.clone(), handle, now, &pdbs) {
                Ok((victims, num_pdb_violations)) if !victims.is_empty() => {
                    candidates.push(Candidate {
                        name,
                        victims,
                        num_pdb_violations,
                    });
                    if candidates.len() >= want {
                        break;
                    }
                }
                Ok(_) => statuses.set(
                    name.clone(),
                    Status::error(format!("expected at least one victim pod on node {name:?}")),
                ),
                Err(status) => statuses.set(name, status),
            }
        }
        (candidates, statuses)
    }

    /// Upstream `Evaluator.Preempt` without the message prefix.
    fn preempt(
        &self,
        state: &mut CycleState,
        pod: &Pod,
        m: &NodeToStatus,
        handle: &mut dyn Handle,
    ) -> (Option<PostFilterResult>, Status) {
        if let Err(msg) = self.eligible(pod, m, handle) {
            return (None, Status::unschedulable(msg));
        }
        let num_all_nodes = handle.node_infos().len();
        if num_all_nodes == 0 {
            return (None, Status::error("no nodes available"));
        }
        let (candidates, statuses) = self.find_candidates(&*state, pod, m, handle);
        if candidates.is_empty() {
            let mut diagnosis = Diagnosis {
                node_to_status: statuses,
                ..Default::default()
            };
            diagnosis
                .node_to_status
                .set_absent_nodes_status(Status::unresolvable(MSG_NOT_HELPFUL));
            let fit = FitError {
                num_all_nodes,
                diagnosis,
            };
            return (
                Some(PostFilterResult::with_nominated_node("")),
                Status::unschedulable(fit.to_string()),
            );
        }
        let best = select_candidate(&candidates, handle.now());
        if let Some(delayed) = state.read_mut::<DelayedVictims>(DELAYED_VICTIMS_KEY) {
            // Delayed preemption: the PodGroup cycle evicts them if the whole group fits.
            delayed.node = best.name.clone();
            delayed.victims = best.victims;
            return (
                Some(PostFilterResult::with_nominated_node(best.name)),
                Status::success(),
            );
        }
        if let Err(s) = prepare_candidate(&best, pod, handle) {
            return (None, s);
        }
        (
            Some(PostFilterResult::with_nominated_node(best.name.clone())),
            Status::success(),
        )
    }
}

/// Upstream `prepareCandidate`: evicts the victims (waiting pods are rejected instead) and
/// clears the nomination of lower-priority pods nominated to the node.
pub fn prepare_candidate(c: &Candidate, pod: &Pod, handle: &mut dyn Handle) -> Result<(), Status> {
    let waiting: Vec<String> = handle
        .waiting_pods()
        .iter()
        .filter_map(|w| w.pod.metadata.uid.clone())
        .collect();
    let preemptor_uid = pod.metadata.uid.clone().unwrap_or_default();
    let scheduler_name = pod.scheduler_name().to_string();
    for victim in &c.victims {
        let uid = victim.metadata.uid.clone().unwrap_or_default();
        if !uid.is_empty() && waiting.contains(&uid) {
            handle.reject_waiting_pod(&uid, names::DEFAULT_PREEMPTION, "preempted");
            continue;
        }
        let ns = victim.metadata.namespace().to_string();
        let name = victim.metadata.name.clone();
        let fresh = match handle.client().get_typed::<Pod>(&ns, &name) {
            Ok(p) => p,
            Err(e) if e.is_not_found() => continue,
            Err(e) => return Err(Status::error(e.message)),
        };
        let mut updated = fresh.clone();
        updated.set_condition(PodCondition {
            type_: CONDITION_DISRUPTION_TARGET.into(),
            status: condition_status::TRUE.into(),
            reason: Some(REASON_PREEMPTION_BY_SCHEDULER.into()),
            message: Some(k8s_types::format_compact!(
                "{scheduler_name}: preempting to accommodate a higher priority pod"
            )),
            last_transition_time: Some(tick_timestamp_compact(handle.now())),
        });
        if updated.status != fresh.status {
            match handle.client_mut().update_status_typed(updated) {
                Ok(_) => {}
                Err(e) if e.is_not_found() => continue,
                Err(e) => return Err(Status::error(e.message)),
            }
        }
        let deleted =
            match handle
                .client_mut()
                .delete(&Kind::Pod, &ns, &name, DeleteOptions::default())
            {
                Ok(obj) => obj,
                Err(e) if e.is_not_found() => continue,
                Err(e) => return Err(Status::error(e.message)),
            };
        let involved = match deleted {
            Object::Pod(p) => Object::Pod(p),
            _ => Object::Pod(Box::new(fresh)),
        };
        handle.record_event(
            &involved,
            k8s_types::core::event::event_types::NORMAL,
            EVENT_REASON_PREEMPTED,
            &format!("Preempted by pod {preemptor_uid} on node {}", c.name),
        );
    }
    let prio = pod.priority();
    for p in handle.nominated_pods_for_node(&c.name) {
        if p.priority() >= prio || k8s_sched_framework::node_info::same_pod(&p, pod) {
            continue;
        }
        let Ok(mut fresh) = handle
            .client()
            .get_typed::<Pod>(p.metadata.namespace(), &p.metadata.name)
        else {
            continue;
        };
        if fresh.status.nominated_node_name.is_some() {
            fresh.status.nominated_node_name = None;
            // Best effort, as upstream logs and continues.
            let _ = handle.client_mut().update_status_typed(fresh);
        }
    }
    Ok(())
}

/// Upstream `filterPodsWithPDBViolation`: splits `pods` (kept in their order) into those whose
/// eviction would violate a PodDisruptionBudget and the others. Each budget's
/// `disruptionsAllowed` is used up by the matching pods in order; a pod already in a budget's
/// `disruptedPods` uses nothing (the apiserver has counted it); a pod without labels, or a budget
/// with a missing or empty selector, matches nothing.
pub fn filter_pods_with_pdb_violation(
    pods: Vec<PodInfo>,
    pdbs: &[Arc<PodDisruptionBudget>],
) -> (Vec<PodInfo>, Vec<PodInfo>) {
    if pdbs.is_empty() {
        return (Vec::new(), pods);
    }
    let mut allowed: Vec<i32> = pdbs.iter().map(|p| p.status.disruptions_allowed).collect();
    let (mut violating, mut non_violating) = (Vec::new(), Vec::new());
    for pi in pods {
        let mut violated = false;
        let p = &pi.pod;
        if !p.metadata.labels.is_empty() {
            for (i, pdb) in pdbs.iter().enumerate() {
                if !pdb.covers_for_disruption(p.metadata.namespace(), &p.metadata.labels) {
                    continue;
                }
                if pdb.status.disrupted_pods.contains_key(&p.metadata.name) {
                    continue;
                }
                allowed[i] -= 1;
                if allowed[i] < 0 {
                    violated = true;
                }
            }
        }
        if violated {
            violating.push(pi);
        } else {
            non_violating.push(pi);
        }
    }
    (violating, non_violating)
}

/// Upstream `podTerminatingByPreemption`.
pub fn terminating_by_preemption(p: &Pod) -> bool {
    if p.metadata.deletion_timestamp.is_none() {
        return false;
    }
    p.condition(CONDITION_DISRUPTION_TARGET).is_some_and(|c| {
        c.status == condition_status::TRUE
            && c.reason.as_deref() == Some(REASON_PREEMPTION_BY_SCHEDULER)
    })
}

/// Upstream `GetPodStartTime`: `status.startTime`, or now for pods that have not started.
fn start_time(p: &Pod, now: Tick) -> Tick {
    p.status
        .start_time
        .as_deref()
        .and_then(timestamp_tick)
        .unwrap_or(now)
}

/// Upstream `MoreImportantPod` as an ordering (more important first): higher priority, then
/// earlier start; namespace/name breaks the remaining ties.
fn more_important(a: &Pod, b: &Pod, now: Tick) -> Ordering {
    b.priority()
        .cmp(&a.priority())
        .then(start_time(a, now).cmp(&start_time(b, now)))
        .then_with(|| a.metadata.namespace().cmp(b.metadata.namespace()))
        .then_with(|| a.metadata.name.cmp(&b.metadata.name))
}

/// Upstream `GetEarliestPodStartTime`: the earliest start among the highest-priority victims.
fn earliest_start_of_highest(victims: &[Shared<Pod>], now: Tick) -> Tick {
    let Some(first) = victims.first() else {
        return now;
    };
    let mut max_prio = first.priority();
    let mut earliest = start_time(first, now);
    for v in victims {
        let p = v.priority();
        if p == max_prio {
            earliest = earliest.min(start_time(v, now));
        } else if p > max_prio {
            max_prio = p;
            earliest = start_time(v, now);
        }
    }
    earliest
}

/// Upstream `pickOneNodeForPreemption` criteria, in order: fewest PDB violations, lowest
/// highest-victim priority, smallest sum of victim priorities (each offset by 2^31), fewest
/// victims, latest earliest-start of the highest-priority victims; then the node name sorting
/// last.
pub fn select_candidate(candidates: &[Candidate], now: Tick) -> Candidate {
    let key = |c: &Candidate| {
        let highest = c.victims.first().map(|v| v.priority()).unwrap_or(i32::MIN);
        let sum: i64 = c
            .victims
            .iter()
            .map(|v| i64::from(v.priority()) + i64::from(i32::MAX) + 1)
            .sum();
        (
            c.num_pdb_violations,
            highest,
            sum,
            c.victims.len(),
            std::cmp::Reverse(earliest_start_of_highest(&c.victims, now)),
            std::cmp::Reverse(c.name.clone()),
        )
    };
    candidates
        .iter()
        .min_by_key(|c| key(c))
        .cloned()
        .unwrap_or_else(|| Candidate {
            name: String::new(),
            victims: Vec::new(),
            num_pdb_violations: 0,
        })
}

impl Plugin for DefaultPreemption {
    fn name(&self) -> &str {
        names::DEFAULT_PREEMPTION
    }
    fn as_post_filter(&self) -> Option<&dyn PostFilterPlugin> {
        Some(self)
    }
}

impl PostFilterPlugin for DefaultPreemption {
    fn post_filter(
        &self,
        state: &mut CycleState,
        pod: &Pod,
        statuses: &NodeToStatus,
        handle: &mut dyn Handle,
    ) -> (Option<PostFilterResult>, Status) {
        let (result, status) = self.preempt(state, pod, statuses, handle);
        let msg = status.message();
        if msg.is_empty() {
            return (result, status);
        }
        (
            result,
            Status::with_reason(status.code(), format!("{MSG_PREFIX}{msg}")),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn victim(name: &str, prio: i32, start: Option<Tick>) -> Shared<Pod> {
        let mut p = Pod::default();
        p.metadata.name = name.into();
        p.spec.priority = Some(prio);
        p.status.start_time = start.map(tick_timestamp_compact);
        Shared::from_typed(p)
    }

    fn cand(name: &str, victims: Vec<Shared<Pod>>) -> Candidate {
        Candidate {
            name: name.into(),
            victims,
            num_pdb_violations: 0,
        }
    }

    #[test]
    fn pick_one_node_follows_upstream_criteria() {
        // Lowest highest-victim priority wins.
        let c = select_candidate(
            &[
                cand("a", vec![victim("x", 10, Some(1))]),
                cand("b", vec![victim("y", 5, Some(1))]),
            ],
            100,
        );
        assert_eq!(c.name, "b");
        // Same highest priority: smaller sum of priorities.
        let c = select_candidate(
            &[
                cand("a", vec![victim("x", 5, Some(1)), victim("x2", 4, Some(1))]),
                cand("b", vec![victim("y", 5, Some(1)), victim("y2", 1, Some(1))]),
            ],
            100,
        );
        assert_eq!(c.name, "b");
        // Same sums: fewer victims.
        let c = select_candidate(
            &[
                cand(
                    "a",
                    vec![victim("x", 5, Some(1)), victim("x2", -5, Some(1))],
                ),
                cand("b", vec![victim("y", 5, Some(1))]),
            ],
            100,
        );
        // a: (5+2^31)+(-5+2^31) = 2^32 > b: 5+2^31, so b wins on the sum already.
        assert_eq!(c.name, "b");
        // Everything equal but start time: the latest-started victims' node wins.
        let c = select_candidate(
            &[
                cand("a", vec![victim("x", 5, Some(10))]),
                cand("b", vec![victim("y", 5, Some(3))]),
            ],
            100,
        );
        assert_eq!(c.name, "a");
        // Full tie: the name sorting last.
        let c = select_candidate(
            &[
                cand("a", vec![victim("x", 5, Some(3))]),
                cand("b", vec![victim("y", 5, Some(3))]),
            ],
            100,
        );
        assert_eq!(c.name, "b");
    }

    #[test]
    fn fewest_pdb_violations_comes_first() {
        let mut a = cand("a", vec![victim("x", 1, Some(1))]);
        a.num_pdb_violations = 1;
        let b = cand(
            "b",
            vec![victim("y", 50, Some(1)), victim("y2", 50, Some(1))],
        );
        assert_eq!(select_candidate(&[a, b], 100).name, "b");
    }

    #[test]
    fn pdb_allowances_are_used_up_in_order() {
        let labelled = |name: &str, app: &str| {
            let mut p = Pod::default();
            p.metadata.name = name.into();
            p.metadata.namespace = Some("default".into());
            p.metadata.labels.insert("app".into(), app.into());
            PodInfo::new(Shared::from_typed(p))
        };
        let mut pdb = PodDisruptionBudget::default();
        pdb.metadata.namespace = Some("default".into());
        pdb.spec.selector = Some(k8s_types::labels::LabelSelector::from_labels([(
            "app", "web",
        )]));
        pdb.status.disruptions_allowed = 1;
        let pods = vec![
            labelled("w1", "web"),
            labelled("w2", "web"),
            labelled("o", "other"),
            labelled("w3", "web"),
        ];
        let names = |v: &[PodInfo]| {
            v.iter()
                .map(|p| p.pod.metadata.name.clone())
                .collect::<Vec<_>>()
        };
        let (bad, ok) = filter_pods_with_pdb_violation(pods.clone(), &[Arc::new(pdb.clone())]);
        assert_eq!(names(&bad), ["w2", "w3"]);
        assert_eq!(names(&ok), ["w1", "o"]);
        // w1 was already evicted through the API: it uses nothing, so w2 takes the one allowed.
        pdb.status.disrupted_pods.insert("w1".into(), String::new());
        let (bad, ok) = filter_pods_with_pdb_violation(pods.clone(), &[Arc::new(pdb.clone())]);
        assert_eq!(names(&bad), ["w3"]);
        assert_eq!(names(&ok), ["w1", "w2", "o"]);
        // No budget: nothing violates.
        let (bad, ok) = filter_pods_with_pdb_violation(pods, &[]);
        assert!(bad.is_empty());
        assert_eq!(ok.len(), 4);
    }

    #[test]
    fn num_candidates_follows_upstream() {
        let p = DefaultPreemption::default();
        assert_eq!(p.num_candidates(5), 5);
        assert_eq!(p.num_candidates(5000), 500);
        assert_eq!(p.num_candidates(200), 100);
    }
}
