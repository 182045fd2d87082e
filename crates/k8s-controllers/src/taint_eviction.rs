//! Taint-based eviction, after upstream `pkg/controller/tainteviction/taint_eviction.go`: a pod bound
//! to a node with `NoExecute` taints it does not tolerate is deleted at once; a pod that tolerates
//! them all with `tolerationSeconds` is deleted when the smallest of those runs out (counted from the
//! tick the controller first saw the pod under the taints); a pod tolerating them without
//! `tolerationSeconds` stays. Before deleting, the pod gets the `DisruptionTarget` condition
//! (`DeletionByTaintManager`) and a `TaintManagerEviction` event, as upstream.
//!
//! Keyed by pod, as upstream's `handlePodUpdate`/`handleNodeUpdate` feed its timed queue: a node
//! whose NoExecute taints change queues its pods (from the informer's node index); a bound pod's
//! change queues it when its node has NoExecute taints or an eviction is pending; a pod tolerating
//! the taints for a while is synced again when its time runs out.

use std::collections::BTreeMap;

use k8s_types::apiserver::{ApiClient, ApiExt, DeleteOptions};
use k8s_types::controller::{Action, Controller, SyncError};
use k8s_types::core::event::event_types;
use k8s_types::core::taints::{effects, tolerated};
use k8s_types::core::{condition_status, Node, Pod, PodCondition, Taint};
use k8s_types::events::EventRecorder;
use k8s_types::informer::{Delta, SharedInformerFactory};
use k8s_types::meta::tick_timestamp_compact;
use k8s_types::workqueue::WorkQueue;
use k8s_types::{Kind, Object, Resource, Tick};

/// The controller name upstream registers (`taint-eviction-controller`).
pub const TAINT_EVICTION_NAME: &str = "taint-eviction-controller";
/// Upstream event reason.
pub const REASON_TAINT_MANAGER_EVICTION: &str = "TaintManagerEviction";
/// Upstream condition reason.
pub const REASON_DELETION_BY_TAINT_MANAGER: &str = "DeletionByTaintManager";
/// Upstream condition message.
pub const MESSAGE_NO_EXECUTE: &str = "Taint manager: deleting due to NoExecute taint";

/// kube-controller-manager's taint eviction controller.
#[derive(Clone, Debug)]
pub struct TaintEvictionController {
    /// `namespace/name` -> tick the pod was first seen under NoExecute taints it tolerates for a
    /// limited time.
    since: BTreeMap<String, Tick>,
    /// The controller's event recorder (upstream: its own broadcaster and recorder).
    events: EventRecorder,
}

impl Default for TaintEvictionController {
    fn default() -> Self {
        Self::new()
    }
}

impl TaintEvictionController {
    /// A controller with no pending evictions.
    pub fn new() -> Self {
        TaintEvictionController {
            since: BTreeMap::new(),
            events: EventRecorder::for_component(TAINT_EVICTION_NAME),
        }
    }
}

/// When the pod must go: `Some(0)` at once, `Some(n)` after n ticks, `None` never (upstream
/// `GetMatchingTolerations`, which keeps the first toleration that tolerates each NoExecute taint,
/// then `getMinTolerationTime` over those: the shortest `tolerationSeconds`, one without seconds
/// never expiring, 0 or less at once).
fn eviction_delay(pod: &Pod, node: &Node) -> Option<Tick> {
    let no_execute: Vec<_> = node
        .spec
        .taints
        .iter()
        .filter(|t| t.effect == effects::NO_EXECUTE)
        .collect();
    if no_execute.is_empty() {
        return None;
    }
    let mut min: Option<i64> = None;
    for taint in no_execute {
        if !tolerated(taint, &pod.spec.tolerations) {
            return Some(0);
        }
        // Only the first toleration that matches this taint counts.
        let first = pod.spec.tolerations.iter().find(|t| t.tolerates(taint));
        if let Some(secs) = first.and_then(|t| t.toleration_seconds) {
            min = Some(min.map_or(secs, |m| m.min(secs)));
        }
    }
    min.map(|s| Tick::try_from(s.max(0)).unwrap_or(0))
}

/// A node's NoExecute taints (what eviction depends on).
fn no_execute_taints(node: &Node) -> Vec<&Taint> {
    node.spec
        .taints
        .iter()
        .filter(|t| t.effect == effects::NO_EXECUTE)
        .collect()
}

fn node_taints_of(o: Option<&std::sync::Arc<Object>>) -> Vec<Taint> {
    o.and_then(|o| Node::from_object_ref(o))
        .map(|n| no_execute_taints(n).into_iter().cloned().collect())
        .unwrap_or_default()
}

impl Controller for TaintEvictionController {
    fn name(&self) -> &str {
        TAINT_EVICTION_NAME
    }

    fn informers(&self) -> Vec<Kind> {
        vec![Kind::Node, Kind::Pod]
    }

    fn on_change(
        &mut self,
        change: &Delta,
        informers: &SharedInformerFactory,
        queue: &mut WorkQueue,
    ) {
        match change.kind {
            Kind::Node => {
                // Upstream `handleNodeUpdate`: only a change of the NoExecute taints matters.
                if node_taints_of(change.old.as_ref()) == node_taints_of(change.new.as_ref()) {
                    return;
                }
                let name = &change.object().meta().name;
                for key in informers.of(&Kind::Pod).keys_on_node(name) {
                    queue.add(key);
                }
            }
            Kind::Pod => {
                let Some(p) = change.new.as_deref().and_then(Pod::from_object_ref) else {
                    self.since.remove(&change.key);
                    return;
                };
                let tainted = p.node_name().is_some_and(|n| {
                    informers
                        .of(&Kind::Node)
                        .get_typed::<Node>(n)
                        .is_some_and(|node| !no_execute_taints(node).is_empty())
                });
                if tainted || self.since.contains_key(&change.key) {
                    queue.add(change.key.clone());
                }
            }
            _ => {}
        }
    }

    fn sync(
        &mut self,
        key: &str,
        informers: &SharedInformerFactory,
        api: &mut dyn ApiClient,
    ) -> Result<Action, SyncError> {
        let now = api.now();
        let pod = informers.of(&Kind::Pod).get_typed::<Pod>(key);
        let pod = pod.filter(|p| !p.is_terminating() && !p.is_terminal());
        let node = pod
            .and_then(|p| p.node_name())
            .and_then(|n| informers.of(&Kind::Node).get_typed::<Node>(n));
        let (Some(pod), Some(node)) = (pod, node) else {
            self.since.remove(key);
            return Ok(Action::AwaitChange);
        };
        let Some(delay) = eviction_delay(pod, node) else {
            self.since.remove(key);
            return Ok(Action::AwaitChange);
        };
        let since = *self.since.entry(key.to_string()).or_insert(now);
        if now.saturating_sub(since) < delay {
            return Ok(Action::requeue(since.saturating_add(delay) - now));
        }
        self.since.remove(key);
        let (ns, name) = (
            pod.metadata.namespace().to_string(),
            pod.metadata.name.clone(),
        );
        self.events.record(
            api,
            &Object::Pod(Box::new(pod.clone())),
            event_types::NORMAL,
            REASON_TAINT_MANAGER_EVICTION,
            format!("Marking for deletion Pod {ns}/{name}"),
        );
        let mut marked = pod.clone();
        marked.set_condition(PodCondition {
            type_: crate::pod_gc::DISRUPTION_TARGET.into(),
            status: condition_status::TRUE.into(),
            reason: Some(REASON_DELETION_BY_TAINT_MANAGER.into()),
            message: Some(MESSAGE_NO_EXECUTE.into()),
            last_transition_time: Some(tick_timestamp_compact(now)),
        });
        let _ = api.update_status_typed(marked);
        let _ = api.delete(&Kind::Pod, &ns, &name, DeleteOptions::default());
        Ok(Action::AwaitChange)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_types::core::{Taint, Toleration};

    fn node_with(effect: &str) -> Node {
        let mut n = Node::default();
        n.spec.taints.push(Taint {
            key: "maintenance".into(),
            value: String::new(),
            effect: effect.into(),
            time_added: None,
        });
        n
    }

    fn pod_tolerating(seconds: Option<i64>) -> Pod {
        let mut p = Pod::default();
        p.spec.tolerations.push(Toleration {
            key: "maintenance".into(),
            operator: "Exists".into(),
            value: String::new(),
            effect: "NoExecute".into(),
            toleration_seconds: seconds,
        });
        p
    }

    #[test]
    fn eviction_delay_follows_min_toleration_time() {
        let node = node_with("NoExecute");
        assert_eq!(eviction_delay(&Pod::default(), &node), Some(0));
        assert_eq!(eviction_delay(&pod_tolerating(Some(5)), &node), Some(5));
        assert_eq!(eviction_delay(&pod_tolerating(None), &node), None);
        assert_eq!(
            eviction_delay(&Pod::default(), &node_with("NoSchedule")),
            None
        );
    }

    /// Upstream `GetMatchingTolerations` keeps the first toleration matching a taint: a first one
    /// without seconds means never, whatever a later one says; the other order evicts after 10.
    #[test]
    fn only_the_first_matching_toleration_of_a_taint_counts() {
        let node = node_with("NoExecute");
        let mut forever_first = pod_tolerating(None);
        forever_first
            .spec
            .tolerations
            .extend(pod_tolerating(Some(10)).spec.tolerations.iter().cloned());
        assert_eq!(eviction_delay(&forever_first, &node), None);
        let mut ten_first = pod_tolerating(Some(10));
        ten_first
            .spec
            .tolerations
            .extend(pod_tolerating(None).spec.tolerations.iter().cloned());
        assert_eq!(eviction_delay(&ten_first, &node), Some(10));
    }
}
