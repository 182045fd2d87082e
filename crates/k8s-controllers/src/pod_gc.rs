//! The pod garbage collector, after upstream `pkg/controller/podgc/gc_controller.go`:
//! `gcOrphaned` (pods bound to a node that no longer exists are failed and force-deleted once the node
//! has been missing for the quarantine time, 40 s) and `gcUnscheduledTerminating` (pods being deleted
//! that were never bound are force-deleted).
//!
//! Not modelled: `gcTerminated` (upstream deletes the oldest terminated pods above
//! `--terminated-pod-gc-threshold`, 12500 by default).

use std::collections::{BTreeMap, BTreeSet};

use k8s_types::apiserver::{ApiClient, ApiExt, DeleteOptions};
use k8s_types::controller::Controller;
use k8s_types::core::{condition_status, phases, Pod, PodCondition};
use k8s_types::meta::tick_timestamp;
use k8s_types::{Kind, Object, Tick};

use crate::watch_cache::WatchCache;

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
    /// Nodes and pods as the informers see them.
    nodes: WatchCache,
    pods: WatchCache,
}

impl Default for PodGarbageCollector {
    fn default() -> Self {
        Self::new()
    }
}

impl PodGarbageCollector {
    /// A collector with no quarantined nodes.
    pub fn new() -> Self {
        PodGarbageCollector {
            missing_since: BTreeMap::new(),
            nodes: WatchCache::new(Kind::Node),
            pods: WatchCache::new(Kind::Pod),
        }
    }
}

impl Controller for PodGarbageCollector {
    fn name(&self) -> &str {
        POD_GC_NAME
    }

    fn reconcile(&mut self, api: &mut dyn ApiClient) {
        let now = api.now();
        self.nodes.sync(&*api);
        self.pods.sync(&*api);
        let nodes: BTreeSet<&str> = self
            .nodes
            .objects()
            .map(|(_, n)| n.meta().name.as_str())
            .collect();
        // Only unbound terminating pods and pods of missing nodes are acted on; the others are
        // not copied out of the cache.
        let pods: Vec<Pod> = self
            .pods
            .objects()
            .filter_map(|(_, o)| match o {
                Object::Pod(p) => Some(p),
                _ => None,
            })
            .filter(|p| match p.node_name() {
                None => p.is_terminating(),
                Some(node) => !nodes.contains(node),
            })
            .cloned()
            .collect();
        let mut still_missing = BTreeMap::new();
        for pod in pods {
            let ns = pod.metadata.namespace().to_string();
            let name = pod.metadata.name.clone();
            match pod.node_name() {
                None if pod.is_terminating() => {
                    let opts = DeleteOptions {
                        grace_period_seconds: Some(0),
                    };
                    let _ = api.delete(&Kind::Pod, &ns, &name, opts);
                }
                Some(node) if !nodes.contains(node) => {
                    let since = *self.missing_since.get(node).unwrap_or(&now);
                    still_missing.insert(node.to_string(), since);
                    if now.saturating_sub(since) < QUARANTINE_TICKS {
                        continue;
                    }
                    let mut failed = pod.clone();
                    if !failed.is_terminal() {
                        failed.status.phase = Some(phases::FAILED.to_string());
                    }
                    failed.set_condition(PodCondition {
                        type_: DISRUPTION_TARGET.to_string(),
                        status: condition_status::TRUE.to_string(),
                        reason: Some(REASON_DELETION_BY_POD_GC.to_string()),
                        message: Some(MESSAGE_NODE_GONE.to_string()),
                        last_transition_time: Some(tick_timestamp(now)),
                    });
                    let _ = api.update_status_typed(failed);
                    let opts = DeleteOptions {
                        grace_period_seconds: Some(0),
                    };
                    let _ = api.delete(&Kind::Pod, &ns, &name, opts);
                }
                _ => {}
            }
        }
        self.missing_since = still_missing;
    }
}
