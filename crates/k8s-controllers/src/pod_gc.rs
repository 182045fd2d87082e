//! The pod garbage collector, after upstream `pkg/controller/podgc/gc_controller.go`:
//! `gcOrphaned` (pods bound to a node that no longer exists are failed and force-deleted once the node
//! has been missing for the quarantine time, 40 s) and `gcUnscheduledTerminating` (pods being deleted
//! that were never bound are force-deleted).
//!
//! Keyed by pod: a pod that is unbound and being deleted, or bound to a node the informer does not
//! have, is queued; a node's delete queues its pods (from the informer's node index); a pod of a
//! missing node is synced again when the quarantine runs out.
//!
//! Nodes *outside the input* ([`PodGarbageCollector::with_external_nodes`]: the nodes a loaded dump's
//! pods are bound to without the dump holding them) are treated as existing: their pods are kept,
//! neither failed nor deleted. Upstream's collector sees the whole cluster, where those nodes exist.
//!
//! Not modelled: `gcTerminated` (upstream deletes the oldest terminated pods above
//! `--terminated-pod-gc-threshold`, 12500 by default).

use std::collections::BTreeMap;

use k8s_types::apiserver::{ApiClient, ApiExt, DeleteOptions};
use k8s_types::controller::{Action, Controller, SyncError};
use k8s_types::core::{condition_status, phases, Pod, PodCondition};
use k8s_types::informer::{Delta, SharedInformerFactory};
use k8s_types::meta::tick_timestamp_compact;
use k8s_types::workqueue::WorkQueue;
use k8s_types::{Kind, Resource, Tick};

/// The controller name upstream registers (`pod-garbage-collector`).
pub const POD_GC_NAME: &str = "pod-garbage-collector";
/// Upstream `quarantineTime`: how long (ticks = seconds) a node must be gone before its pods are
/// collected.
pub const QUARANTINE_TICKS: Tick = 40;
/// Upstream condition reason on pods PodGC deletes (`DeletionByPodGC`).
pub const REASON_DELETION_BY_POD_GC: &str = "DeletionByPodGC";
/// Upstream condition message for orphaned pods.
pub const MESSAGE_NODE_GONE: &str = "PodGC: node no longer exists";
/// The pod condition marking a disruption (upstream `DisruptionTarget`).
pub const DISRUPTION_TARGET: &str = "DisruptionTarget";

/// kube-controller-manager's pod garbage collector.
#[derive(Clone, Debug)]
pub struct PodGarbageCollector {
    /// Node name -> first tick it was seen missing while pods were bound to it.
    missing_since: BTreeMap<String, Tick>,
    /// Nodes that live outside the input: never missing.
    external_nodes: std::collections::BTreeSet<String>,
}

impl Default for PodGarbageCollector {
    fn default() -> Self {
        Self::new()
    }
}

impl PodGarbageCollector {
    /// A collector with no quarantined nodes.
    pub fn new() -> Self {
        Self::with_external_nodes(std::collections::BTreeSet::new())
    }

    /// A collector for which the nodes named here exist outside the input (see the module
    /// documentation): pods bound to them are never collected as orphans.
    pub fn with_external_nodes(nodes: std::collections::BTreeSet<String>) -> Self {
        PodGarbageCollector {
            missing_since: BTreeMap::new(),
            external_nodes: nodes,
        }
    }

    /// True when PodGC acts on `pod`: unbound and being deleted, or bound to a node that neither
    /// `informers` has nor lives outside the input.
    fn collectable(&self, pod: &Pod, informers: &SharedInformerFactory) -> bool {
        match pod.node_name() {
            Some(node) if self.external_nodes.contains(node) => false,
            _ => collectable(pod, informers),
        }
    }
}

/// True when PodGC acts on `pod`: unbound and being deleted, or bound to a node `informers` lacks.
fn collectable(pod: &Pod, informers: &SharedInformerFactory) -> bool {
    match pod.node_name() {
        None => pod.is_terminating(),
        Some(node) => informers.of(&Kind::Node).get(node).is_none(),
    }
}

impl Controller for PodGarbageCollector {
    fn name(&self) -> &str {
        POD_GC_NAME
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
                let name = &change.object().meta().name;
                if change.is_delete() {
                    for key in informers.of(&Kind::Pod).keys_on_node(name) {
                        queue.add(key);
                    }
                } else {
                    self.missing_since.remove(name);
                }
            }
            Kind::Pod => {
                if let Some(p) = change.new.as_deref().and_then(Pod::from_object_ref) {
                    if self.collectable(p, informers) {
                        queue.add(change.key.clone());
                    }
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
        let Some(pod) = informers.of(&Kind::Pod).get_typed::<Pod>(key) else {
            return Ok(Action::AwaitChange);
        };
        if !self.collectable(pod, informers) {
            return Ok(Action::AwaitChange);
        }
        let ns = pod.metadata.namespace().to_string();
        let name = pod.metadata.name.clone();
        let force = DeleteOptions {
            grace_period_seconds: Some(0),
            ..Default::default()
        };
        let Some(node) = pod.node_name() else {
            let _ = api.delete(&Kind::Pod, &ns, &name, force);
            return Ok(Action::AwaitChange);
        };
        let since = *self.missing_since.entry(node.to_string()).or_insert(now);
        if now.saturating_sub(since) < QUARANTINE_TICKS {
            return Ok(Action::requeue(since + QUARANTINE_TICKS - now));
        }
        let mut failed = pod.clone();
        if !failed.is_terminal() {
            failed.status.phase = Some(phases::FAILED.into());
        }
        failed.set_condition(PodCondition {
            type_: DISRUPTION_TARGET.into(),
            status: condition_status::TRUE.into(),
            reason: Some(REASON_DELETION_BY_POD_GC.into()),
            message: Some(MESSAGE_NODE_GONE.into()),
            last_transition_time: Some(tick_timestamp_compact(now)),
        });
        let _ = api.update_status_typed(failed);
        let _ = api.delete(&Kind::Pod, &ns, &name, force);
        Ok(Action::AwaitChange)
    }
}
