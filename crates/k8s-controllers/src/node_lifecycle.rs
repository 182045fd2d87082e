//! The node lifecycle controller, after upstream
//! `pkg/controller/nodelifecycle/node_lifecycle_controller.go` (`monitorNodeHealth`,
//! `tryUpdateNodeHealth`, `processTaintBaseEviction`, `doNoScheduleTaintingPass`,
//! `markNodeAsReachable`) and `pkg/controller/util/node/controller_utils.go`
//! (`MarkPodsNotReady`, `RecordNodeStatusChange`, `SwapNodeControllerTaint`).
//!
//! Every [`NODE_MONITOR_PERIOD_TICKS`] it looks at every Node: a changed Ready
//! `lastHeartbeatTime` or a changed node Lease `renewTime` (KEP-589) moves the node's probe
//! timestamp to now (the time the controller *observed* the change, as upstream). A node not
//! heard from for more than [`NODE_MONITOR_GRACE_PERIOD_TICKS`] gets every condition the kubelet
//! posts (Ready, MemoryPressure, DiskPressure, PIDPressure) set to `Unknown` with
//! `NodeStatusUnknown` / `Kubelet stopped posting node status.` (lastHeartbeatTime kept,
//! lastTransitionTime now), a `NodeNotReady` event, its pods' Ready condition set to False with a
//! `NodeNotReady` event each (MarkPodsNotReady), and the `node.kubernetes.io/unreachable` taints
//! (NoSchedule from TaintNodesByCondition, NoExecute from taint-based eviction; `timeAdded` now).
//! Ready False gets the `node.kubernetes.io/not-ready` taints instead; Ready True removes them. The
//! pods' default 300 s tolerations of these taints (DefaultTolerationSeconds admission) then run
//! out in the taint eviction controller.
//!
//! Simplifications (docs/fidelity.md): no zones (no zone states, no eviction rate limiting: every
//! node is tainted in the pass that finds it unhealthy), and the NoSchedule taints are reconciled in
//! the monitor pass rather than on each Node update.

use std::collections::BTreeMap;

use k8s_types::apiserver::{ApiClient, ApiExt};
use k8s_types::conflict::retry_on_conflict;
use k8s_types::controller::{Action, Controller, SyncError};
use k8s_types::coordination::{Lease, NODE_LEASE_NAMESPACE};
use k8s_types::core::event::event_types;
use k8s_types::core::taints::effects;
use k8s_types::core::{condition_status, Node, Pod, Taint};
use k8s_types::events::EventRecorder;
use k8s_types::informer::{Delta, SharedInformerFactory};
use k8s_types::meta::{tick_timestamp, tick_timestamp_compact};
use k8s_types::workqueue::WorkQueue;
use k8s_types::{Kind, Object, Resource, Tick};

/// The controller name upstream registers (`node-lifecycle-controller`).
pub const NODE_LIFECYCLE_NAME: &str = "node-lifecycle-controller";
/// The one queue key: the monitor pass over every node.
pub const MONITOR_KEY: &str = "monitorNodeHealth";
/// Upstream `--node-monitor-period` default (5 s).
pub const NODE_MONITOR_PERIOD_TICKS: Tick = 5;
/// Upstream `--node-monitor-grace-period` default (40 s in v1.32; 50 s from v1.33).
pub const NODE_MONITOR_GRACE_PERIOD_TICKS: Tick = 40;
/// Upstream `UpdateTaintBackoff.Steps` (`pkg/controller/controller_utils.go`: `{Steps: 5, Duration:
/// 100ms, Jitter: 1.0}`): attempts of a taint write that meets `409 Conflict`, all in one tick.
pub const UPDATE_TAINT_BACKOFF_STEPS: u32 = 5;
/// Upstream `NodeHealthUpdateRetry` (`pkg/controller/nodelifecycle/scheduler/rate_limited_queue.go`)
/// = 5: `monitorNodeHealth` polls `tryUpdateNodeHealth` every `retrySleepTime` (20 ms) for
/// `5 * retrySleepTime`, each retry on a fresh GET of the node; k8s-mini makes 5 attempts of the
/// node health (Ready=Unknown) write, all in one tick.
pub const NODE_HEALTH_UPDATE_RETRY: u32 = 5;
/// Upstream `v1.TaintNodeUnreachable`.
pub const TAINT_NODE_UNREACHABLE: &str = "node.kubernetes.io/unreachable";
/// Upstream `v1.TaintNodeNotReady`.
pub const TAINT_NODE_NOT_READY: &str = "node.kubernetes.io/not-ready";
/// Condition reason when the kubelet stopped posting (upstream).
pub const REASON_NODE_STATUS_UNKNOWN: &str = "NodeStatusUnknown";
/// Condition message when the kubelet stopped posting (upstream).
pub const MESSAGE_KUBELET_STOPPED: &str = "Kubelet stopped posting node status.";
/// Event reason on the node and on its pods (upstream `NodeNotReady`).
pub const REASON_NODE_NOT_READY: &str = "NodeNotReady";
/// Message of the pods' `NodeNotReady` event (upstream `MarkPodsNotReady`).
pub const MESSAGE_NODE_IS_NOT_READY: &str = "Node is not ready";
/// The conditions the kubelet posts and the controller turns Unknown (upstream
/// `nodeConditionsToUpdate` order: Ready first).
const POSTED_CONDITIONS: [&str; 4] = ["Ready", "MemoryPressure", "DiskPressure", "PIDPressure"];

/// What the controller last saw of a node (upstream `nodeHealthData`).
#[derive(Clone, Debug, PartialEq)]
struct NodeHealth {
    probe: Tick,
    ready_heartbeat: Option<String>,
    lease_renew: Option<String>,
    /// The informer key of the node's Lease (`kube-node-lease/<node>`), kept so a pass does not
    /// format it for every node.
    lease_key: String,
}

/// kube-controller-manager's node lifecycle controller.
#[derive(Clone, Debug)]
pub struct NodeLifecycleController {
    health: BTreeMap<String, NodeHealth>,
    /// Nodes whose Node or Lease changed since the pass that last looked at them (or whose last
    /// look failed): the next pass compares their heartbeats and taints. A node not in it has the
    /// heartbeat, Lease and taints that pass saw, so only its grace period can have run out.
    dirty: std::collections::BTreeSet<String>,
    events: EventRecorder,
}

impl Default for NodeLifecycleController {
    fn default() -> Self {
        Self::new()
    }
}

impl NodeLifecycleController {
    /// A controller that has seen no node yet.
    pub fn new() -> Self {
        NodeLifecycleController {
            health: BTreeMap::new(),
            dirty: Default::default(),
            events: EventRecorder::for_component("node-controller"),
        }
    }
}

fn ready_condition(node: &Node) -> Option<&k8s_types::core::NodeCondition> {
    node.status.conditions.iter().find(|c| c.type_ == "Ready")
}

/// The taints the controller wants for a Ready status (upstream `nodeConditionToTaintKeyStatusMap`
/// and the NoExecute templates): Unknown -> unreachable, False -> not-ready, else none.
fn wanted_key(ready: Option<&str>) -> Option<&'static str> {
    match ready {
        Some(condition_status::UNKNOWN) => Some(TAINT_NODE_UNREACHABLE),
        Some(condition_status::FALSE) => Some(TAINT_NODE_NOT_READY),
        _ => None,
    }
}

/// The node's taints with the controller's replaced by what `ready` calls for (upstream
/// `SwapNodeControllerTaint`: added taints get `timeAdded` now). `None` when nothing changes.
fn reconcile_taints(node: &Node, now: Tick) -> Option<Vec<Taint>> {
    let ready = ready_condition(node).map(|c| c.status.as_str());
    let want = wanted_key(ready);
    let ours = |t: &Taint| {
        (t.key == TAINT_NODE_UNREACHABLE || t.key == TAINT_NODE_NOT_READY)
            && (t.effect == effects::NO_SCHEDULE || t.effect == effects::NO_EXECUTE)
    };
    let mut taints: Vec<Taint> = node
        .spec
        .taints
        .iter()
        .filter(|t| !ours(t) || Some(t.key.as_str()) == want)
        .cloned()
        .collect();
    if let Some(key) = want {
        for effect in [effects::NO_SCHEDULE, effects::NO_EXECUTE] {
            if !taints.iter().any(|t| t.key == key && t.effect == effect) {
                taints.push(Taint {
                    key: key.to_string(),
                    value: String::new(),
                    effect: effect.to_string(),
                    time_added: Some(tick_timestamp(now)),
                });
            }
        }
    }
    (taints != node.spec.taints).then_some(taints)
}

/// Whether the node's taints are already what its Ready condition calls for: `reconcile_taints`
/// would change nothing (checked without building the new list; the monitor pass asks it of every
/// node every 5 s).
fn taints_reconciled(node: &Node) -> bool {
    let want = wanted_key(ready_condition(node).map(|c| c.status.as_str()));
    let ours = |t: &Taint| {
        (t.key == TAINT_NODE_UNREACHABLE || t.key == TAINT_NODE_NOT_READY)
            && (t.effect == effects::NO_SCHEDULE || t.effect == effects::NO_EXECUTE)
    };
    let taints = &node.spec.taints;
    taints
        .iter()
        .all(|t| !ours(t) || Some(t.key.as_str()) == want)
        && want.is_none_or(|key| {
            [effects::NO_SCHEDULE, effects::NO_EXECUTE]
                .iter()
                .all(|e| taints.iter().any(|t| t.key == key && t.effect == *e))
        })
}

/// Sets every posted condition to Unknown (upstream `tryUpdateNodeHealth` past the grace period).
/// Returns whether any changed.
fn mark_unknown(node: &mut Node, now: Tick) -> bool {
    let ts = tick_timestamp(now);
    let mut changed = false;
    for type_ in POSTED_CONDITIONS {
        if let Some(c) = node.status.conditions.iter_mut().find(|c| c.type_ == type_) {
            if c.status != condition_status::UNKNOWN {
                c.status = condition_status::UNKNOWN.into();
                c.reason = Some(REASON_NODE_STATUS_UNKNOWN.into());
                c.message = Some(MESSAGE_KUBELET_STOPPED.into());
                c.last_transition_time = Some(ts.clone());
                changed = true;
            }
        }
    }
    changed
}

/// Whether a monitor pass over `node` writes nothing while nothing else changes: its taints are
/// what its Ready condition calls for, and either its kubelet keeps renewing the node Lease
/// (`renewing`: every renewal moves the probe timestamp, so the grace period never runs out) or
/// every condition the kubelet posts is already `Unknown` (nothing left to mark). A driver that
/// skips idle ticks leaves out the passes over a cluster where this holds for every Node; the
/// first pass after the skip sees the Lease renewed while it was not looking and moves the probe
/// timestamp to now, as upstream's first pass after a controller restart does.
pub fn monitor_pass_is_idle(node: &Node, renewing: bool) -> bool {
    if !taints_reconciled(node) {
        return false;
    }
    renewing
        || POSTED_CONDITIONS.iter().all(|type_| {
            node.status
                .conditions
                .iter()
                .find(|c| c.type_ == *type_)
                .is_none_or(|c| c.status == condition_status::UNKNOWN)
        })
}

impl NodeLifecycleController {
    /// Counts heartbeats a driver skipping idle ticks did not write as observed: each `(node,
    /// tick)` moves that node's probe timestamp to `tick` (the monitor pass that would have seen
    /// the renewal, see `ControllerManager::observe_node_heartbeats`) when it is later than the
    /// one held. Nodes the controller has not seen yet are left to their first pass. `heard` is in
    /// node-name order (a driver passes every node's each time: one merge pass, no lookups); a
    /// node out of order is skipped.
    pub fn observe_heartbeats<'a>(&mut self, heard: impl IntoIterator<Item = (&'a str, Tick)>) {
        // Both in name order: one merge, one string comparison per step.
        let mut health = self.health.iter_mut().peekable();
        for (name, tick) in heard {
            while let Some((n, h)) = health.peek_mut() {
                let order = n.as_str().cmp(name);
                if order == std::cmp::Ordering::Greater {
                    break;
                }
                if order == std::cmp::Ordering::Equal {
                    h.probe = h.probe.max(tick);
                }
                health.next();
                if order == std::cmp::Ordering::Equal {
                    break;
                }
            }
        }
    }

    /// Upstream `MarkPodsNotReady`: each pod on the node whose Ready condition is not False gets
    /// it False (transition now) and a `NodeNotReady` warning event.
    fn mark_pods_not_ready(
        &mut self,
        node: &str,
        informers: &SharedInformerFactory,
        api: &mut dyn ApiClient,
    ) {
        let now = api.now();
        let pods: Vec<Pod> = informers
            .of(&Kind::Pod)
            .pods_on_node(node)
            .into_iter()
            .filter_map(|o| Pod::from_object_ref(o).cloned())
            .collect();
        for mut pod in pods {
            let Some(c) = pod
                .status
                .conditions
                .iter_mut()
                .find(|c| c.type_ == "Ready")
            else {
                continue;
            };
            if c.status == condition_status::FALSE {
                continue;
            }
            c.status = condition_status::FALSE.into();
            c.last_transition_time = Some(tick_timestamp_compact(now));
            let obj = Object::Pod(Box::new(pod.clone()));
            if api.update_status_typed(pod).is_ok() {
                self.events.record(
                    api,
                    &obj,
                    event_types::WARNING,
                    REASON_NODE_NOT_READY,
                    MESSAGE_NODE_IS_NOT_READY,
                );
            }
        }
    }

    /// One node of the monitor pass.
    fn monitor_node(
        &mut self,
        node: &Node,
        informers: &SharedInformerFactory,
        api: &mut dyn ApiClient,
    ) -> Result<(), SyncError> {
        let now = api.now();
        // A pass runs over every node every 5 ticks: the usual node, already known, with neither
        // heartbeat nor Lease moved, is compared in place and nothing is copied.
        let name = node.metadata.name.as_str();
        let heartbeat = ready_condition(node).and_then(|c| c.last_heartbeat_time.as_deref());
        let leases = informers.of(&Kind::Lease);
        let renew_of = |key: &str| {
            leases
                .get_typed::<Lease>(key)
                .and_then(|l| l.spec.renew_time.as_deref())
        };
        if !self.health.contains_key(name) {
            let lease_key = format!("{NODE_LEASE_NAMESPACE}/{name}");
            self.health.insert(
                name.to_string(),
                NodeHealth {
                    probe: now,
                    ready_heartbeat: heartbeat.map(str::to_string),
                    lease_renew: renew_of(&lease_key).map(str::to_string),
                    lease_key,
                },
            );
        }
        let Some(health) = self.health.get_mut(name) else {
            return Ok(());
        };
        let renew = renew_of(&health.lease_key);
        if health.ready_heartbeat.as_deref() != heartbeat {
            health.ready_heartbeat = heartbeat.map(str::to_string);
            health.probe = now;
        }
        if renew.is_some() && health.lease_renew.as_deref() < renew {
            health.lease_renew = renew.map(str::to_string);
            health.probe = now;
        }
        let mut node = std::borrow::Cow::Borrowed(node);
        // Upstream: `now.After(probeTimestamp + gracePeriod)`.
        if now > health.probe.saturating_add(NODE_MONITOR_GRACE_PERIOD_TICKS) {
            let was_ready = ready_condition(&node).map(|c| c.status.clone());
            let mut marked = node.clone().into_owned();
            if mark_unknown(&mut marked, now) {
                // Upstream `monitorNodeHealth`: `tryUpdateNodeHealth` retried up to
                // `NodeHealthUpdateRetry` times, each retry on a fresh GET of the node.
                let mut first = Some(marked);
                let written = retry_on_conflict(NODE_HEALTH_UPDATE_RETRY, || {
                    let m = match first.take() {
                        Some(m) => m,
                        None => {
                            let mut fresh = api.get_typed::<Node>("", name)?;
                            mark_unknown(&mut fresh, now);
                            fresh
                        }
                    };
                    api.update_status_typed(m)
                })
                .map_err(SyncError::Api)?;
                node = std::borrow::Cow::Owned(written);
                if was_ready.as_deref() == Some(condition_status::TRUE) {
                    let obj = Object::Node(Box::new(node.clone().into_owned()));
                    self.events.record(
                        api,
                        &obj,
                        event_types::NORMAL,
                        REASON_NODE_NOT_READY,
                        format!("Node {name} status is now: {REASON_NODE_NOT_READY}"),
                    );
                    self.mark_pods_not_ready(name, informers, api);
                }
            }
        }
        if !taints_reconciled(&node) {
            // Upstream `SwapNodeControllerTaint` -> `AddOrUpdateTaintOnNode` /
            // `RemoveTaintOffNode` (`pkg/controller/controller_utils.go`):
            // `RetryOnConflict(UpdateTaintBackoff)`, the first attempt on the node as cached (upstream
            // reads the apiserver's cache, `resourceVersion: "0"`), each later one on a fresh GET.
            let mut first = Some(node.into_owned());
            retry_on_conflict(UPDATE_TAINT_BACKOFF_STEPS, || {
                let mut n = match first.take() {
                    Some(n) => n,
                    None => api.get_typed::<Node>("", name)?,
                };
                let Some(taints) = reconcile_taints(&n, now) else {
                    return Ok(());
                };
                n.spec.taints = taints;
                api.update_typed(n).map(|_| ())
            })
            .map_err(SyncError::Api)?;
        }
        Ok(())
    }
}

impl Controller for NodeLifecycleController {
    fn name(&self) -> &str {
        NODE_LIFECYCLE_NAME
    }

    fn informers(&self) -> Vec<Kind> {
        vec![Kind::Node, Kind::Lease, Kind::Pod]
    }

    fn on_change(
        &mut self,
        change: &Delta,
        _informers: &SharedInformerFactory,
        queue: &mut WorkQueue,
    ) {
        // The monitor loop starts with the first Node and then runs on its own period.
        if change.kind == Kind::Node && self.health.is_empty() {
            queue.add(MONITOR_KEY);
        }
        if change.kind == Kind::Node && change.new.is_none() {
            if let Some(old) = &change.old {
                self.health.remove(&old.meta().name);
                self.dirty.remove(&old.meta().name);
            }
            return;
        }
        let meta = change.object().meta();
        let node_lease =
            change.kind == Kind::Lease && meta.namespace.as_deref() == Some(NODE_LEASE_NAMESPACE);
        if (change.kind == Kind::Node || node_lease) && !self.dirty.contains(&meta.name) {
            self.dirty.insert(meta.name.clone());
        }
    }

    fn sync(
        &mut self,
        _key: &str,
        informers: &SharedInformerFactory,
        api: &mut dyn ApiClient,
    ) -> Result<Action, SyncError> {
        // Upstream looks at every node; a node whose Node and Lease did not change since the pass
        // that last looked at it (not in `dirty`) would only be compared equal, so the pass looks
        // at the changed nodes and at those past their grace period, in name order as the list.
        let now = api.now();
        let mut names = std::mem::take(&mut self.dirty);
        for (name, h) in &self.health {
            if now > h.probe.saturating_add(NODE_MONITOR_GRACE_PERIOD_TICKS)
                && !names.contains(name)
            {
                names.insert(name.clone());
            }
        }
        let nodes = informers.of(&Kind::Node);
        let mut first_error = None;
        for name in names {
            // Shared with the informer cache: a node is copied only when it is written.
            let Some(node) = nodes.get_typed::<Node>(&name) else {
                continue;
            };
            if let Err(e) = self.monitor_node(node, informers, api) {
                first_error.get_or_insert(e);
                self.dirty.insert(name);
            }
        }
        match first_error {
            Some(e) => Err(e),
            None => Ok(Action::requeue(NODE_MONITOR_PERIOD_TICKS)),
        }
    }

    fn as_any_mut(&mut self) -> Option<&mut dyn std::any::Any> {
        Some(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_types::core::NodeCondition;

    fn node_with_ready(status: &str, taints: Vec<Taint>) -> Node {
        let mut n = Node::default();
        n.status.conditions.push(NodeCondition {
            type_: "Ready".into(),
            status: status.into(),
            ..Default::default()
        });
        n.spec.taints = taints;
        n
    }

    fn taint(key: &str, effect: &str, at: Option<&str>) -> Taint {
        Taint {
            key: key.into(),
            value: String::new(),
            effect: effect.into(),
            time_added: at.map(str::to_string),
        }
    }

    #[test]
    fn ready_false_swaps_unreachable_for_not_ready_and_true_removes_them() {
        let user = taint("gpu", "NoSchedule", None);
        let old = "1970-01-01T00:00:45Z";
        let n = node_with_ready(
            "False",
            vec![
                user.clone(),
                taint(TAINT_NODE_UNREACHABLE, "NoSchedule", Some(old)),
                taint(TAINT_NODE_UNREACHABLE, "NoExecute", Some(old)),
            ],
        );
        let now = "1970-01-01T00:01:40Z";
        assert_eq!(
            reconcile_taints(&n, 100),
            Some(vec![
                user.clone(),
                taint(TAINT_NODE_NOT_READY, "NoSchedule", Some(now)),
                taint(TAINT_NODE_NOT_READY, "NoExecute", Some(now)),
            ])
        );
        // Unknown keeps existing unreachable taints (and their timeAdded) as they are.
        let n = node_with_ready(
            "Unknown",
            vec![
                taint(TAINT_NODE_UNREACHABLE, "NoSchedule", Some(old)),
                taint(TAINT_NODE_UNREACHABLE, "NoExecute", Some(old)),
            ],
        );
        assert_eq!(reconcile_taints(&n, 100), None);
        let n = node_with_ready(
            "True",
            vec![
                user.clone(),
                taint(TAINT_NODE_NOT_READY, "NoExecute", Some(old)),
            ],
        );
        assert_eq!(reconcile_taints(&n, 100), Some(vec![user]));
    }

    /// Heartbeats counted as seen move a known node's probe timestamp forward only, in one merge
    /// over the nodes in name order; an unknown node is left to its first pass.
    #[test]
    fn observed_heartbeats_move_known_probes_forward() {
        let mut c = NodeLifecycleController::new();
        for name in ["a", "b", "c"] {
            c.health.insert(
                name.into(),
                NodeHealth {
                    probe: 5,
                    ready_heartbeat: None,
                    lease_renew: None,
                    lease_key: format!("{NODE_LEASE_NAMESPACE}/{name}"),
                },
            );
        }
        let probe = |c: &NodeLifecycleController, n: &str| c.health.get(n).map(|h| h.probe);
        c.observe_heartbeats([("a", 10), ("aa", 7), ("c", 3), ("d", 9)]);
        assert_eq!(
            ["a", "aa", "b", "c", "d"].map(|n| probe(&c, n)),
            [Some(10), None, Some(5), Some(5), None]
        );
        c.observe_heartbeats([("b", 12), ("c", 12)]);
        assert_eq!(
            ["a", "b", "c"].map(|n| probe(&c, n)),
            [Some(10), Some(12), Some(12)]
        );
    }

    /// `taints_reconciled` answers what `reconcile_taints(..).is_none()` does, without building
    /// the list: every Ready status against every mix of the controller's taints (none, one of
    /// each key and effect, both effects of each key, a user's taint beside them).
    #[test]
    fn taints_reconciled_agrees_with_reconcile_taints() {
        let ours = [
            taint(TAINT_NODE_UNREACHABLE, "NoSchedule", None),
            taint(TAINT_NODE_UNREACHABLE, "NoExecute", None),
            taint(TAINT_NODE_NOT_READY, "NoSchedule", None),
            taint(TAINT_NODE_NOT_READY, "NoExecute", None),
            taint(TAINT_NODE_NOT_READY, "PreferNoSchedule", None),
        ];
        let mut checked = 0;
        for status in ["True", "False", "Unknown"] {
            for mask in 0u32..(1 << ours.len()) {
                for user in [false, true] {
                    let mut taints: Vec<Taint> = ours
                        .iter()
                        .enumerate()
                        .filter(|(i, _)| mask & (1 << i) != 0)
                        .map(|(_, t)| t.clone())
                        .collect();
                    if user {
                        taints.insert(0, taint("gpu", "NoSchedule", None));
                    }
                    let n = node_with_ready(status, taints);
                    assert_eq!(
                        taints_reconciled(&n),
                        reconcile_taints(&n, 100).is_none(),
                        "{status} {:?}",
                        n.spec.taints
                    );
                    checked += 1;
                }
            }
        }
        assert_eq!(checked, 3 * 32 * 2);
        // By hand: Unknown with both unreachable taints is settled; True with none is too.
        assert!(taints_reconciled(&node_with_ready(
            "Unknown",
            ours[..2].to_vec()
        )));
        assert!(taints_reconciled(&node_with_ready("True", vec![])));
        assert!(!taints_reconciled(&node_with_ready(
            "True",
            ours[1..2].to_vec()
        )));
    }

    #[test]
    fn a_monitor_pass_is_idle_only_over_renewing_healthy_or_settled_unknown_nodes() {
        let at = Some("1970-01-01T00:00:45Z");
        let unreachable = || {
            vec![
                taint(TAINT_NODE_UNREACHABLE, "NoSchedule", at),
                taint(TAINT_NODE_UNREACHABLE, "NoExecute", at),
            ]
        };
        // Ready, no controller taint: idle while the kubelet renews; without renewals the grace
        // period runs out.
        assert!(monitor_pass_is_idle(&node_with_ready("True", vec![]), true));
        assert!(!monitor_pass_is_idle(
            &node_with_ready("True", vec![]),
            false
        ));
        // Already Unknown with the unreachable taints: nothing left to write, renewing or not.
        assert!(monitor_pass_is_idle(
            &node_with_ready("Unknown", unreachable()),
            false
        ));
        // Unknown without its taints, or Ready again with them: the pass reconciles the taints.
        assert!(!monitor_pass_is_idle(
            &node_with_ready("Unknown", vec![]),
            false
        ));
        assert!(!monitor_pass_is_idle(
            &node_with_ready("True", unreachable()),
            true
        ));
        // An Unknown Ready with another posted condition still known: the pass marks it.
        let mut n = node_with_ready("Unknown", unreachable());
        n.status.conditions.push(NodeCondition {
            type_: "MemoryPressure".into(),
            status: "False".into(),
            ..Default::default()
        });
        assert!(!monitor_pass_is_idle(&n, false));
    }

    #[test]
    fn mark_unknown_keeps_heartbeats_and_moves_transitions() {
        let mut n = node_with_ready("True", vec![]);
        n.status.conditions[0].last_heartbeat_time = Some("1970-01-01T00:00:00Z".into());
        n.status.conditions.push(NodeCondition {
            type_: "MemoryPressure".into(),
            status: "False".into(),
            ..Default::default()
        });
        assert!(mark_unknown(&mut n, 45));
        for c in &n.status.conditions {
            assert_eq!(c.status, "Unknown");
            assert_eq!(c.reason.as_deref(), Some("NodeStatusUnknown"));
            assert_eq!(
                c.message.as_deref(),
                Some("Kubelet stopped posting node status.")
            );
            assert_eq!(
                c.last_transition_time.as_deref(),
                Some("1970-01-01T00:00:45Z")
            );
        }
        assert_eq!(
            n.status.conditions[0].last_heartbeat_time.as_deref(),
            Some("1970-01-01T00:00:00Z")
        );
        assert!(
            !mark_unknown(&mut n, 50),
            "already Unknown: nothing to write"
        );
    }
}
