//! InterPodAffinity (PreFilter, Filter, PreScore, Score): required pod affinity and
//! anti-affinity of the incoming pod, required anti-affinity of existing pods (symmetry), and the
//! preferred terms of both sides as a score, with namespaces and namespaceSelector (Namespace
//! objects' labels are read from the apiserver). Mirrors upstream
//! `pkg/scheduler/framework/plugins/interpodaffinity/plugin.go`.
//!
//! Submodules: `terms` (processed terms, namespaces, topology counters), `filtering`
//! (PreFilter/Filter/AddPod/RemovePod), `scoring` (PreScore/Score/NormalizeScore).

pub(crate) mod filtering;
pub(crate) mod scoring;
pub(crate) mod terms;

use std::sync::{Arc, Mutex};

use k8s_sched_framework::{
    CycleState, FilterPlugin, Handle, NodeInfo, NodeScore, Plugin, PodInfo, PreFilterPlugin,
    PreFilterResult, PreScorePlugin, ScorePlugin, Status,
};
use k8s_types::core::Pod;

use self::filtering::{PreFilterState, PRE_FILTER_STATE_KEY};
use super::names;
use crate::config::inter_pod_affinity_args::InterPodAffinityArgs;
use crate::runtime::kernel::{NodeGate, NodeKernels};
use crate::topology_counts::TopologyIndex;
use k8s_sched_framework::ConfigError;
use k8s_sched_framework::PluginArgs;

pub use self::filtering::{
    ERR_REASON_AFFINITY_RULES_NOT_MATCH, ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH,
    ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH,
};

/// The InterPodAffinity plugin.
#[derive(Debug)]
pub struct InterPodAffinity {
    hard_pod_affinity_weight: i32,
    ignore_preferred_terms_of_existing_pods: bool,
    /// Per-term and per-selector topology counts of the placed pods (PreFilter reads them
    /// instead of visiting every pod; see [`crate::topology_counts`]).
    index: Mutex<TopologyIndex>,
}

impl InterPodAffinity {
    /// Builds the plugin from defaulted, valid args.
    pub fn new(args: &InterPodAffinityArgs) -> InterPodAffinity {
        InterPodAffinity {
            hard_pod_affinity_weight: args.hard_pod_affinity_weight(),
            ignore_preferred_terms_of_existing_pods: args.ignore_preferred_terms_of_existing_pods,
            index: Mutex::default(),
        }
    }

    /// Factory: decodes, defaults and validates `InterPodAffinityArgs`.
    ///
    /// # Errors
    /// Decode errors and `...args.hardPodAffinityWeight: Invalid value: 101: not in valid range
    /// [0, 100]`.
    pub fn factory(a: &PluginArgs<'_>) -> Result<Arc<dyn Plugin>, ConfigError> {
        let args: InterPodAffinityArgs = a.decode()?;
        let args = args.defaulted();
        a.check(args.validate(&a.path))?;
        Ok(Arc::new(InterPodAffinity::new(&args)))
    }
}

impl Plugin for InterPodAffinity {
    fn as_enqueue_extensions(&self) -> Option<&dyn k8s_sched_framework::EnqueueExtensions> {
        Some(self)
    }
    fn name(&self) -> &str {
        names::INTER_POD_AFFINITY
    }
    fn as_pre_filter(&self) -> Option<&dyn PreFilterPlugin> {
        Some(self)
    }
    fn as_filter(&self) -> Option<&dyn FilterPlugin> {
        Some(self)
    }
    fn as_pre_score(&self) -> Option<&dyn PreScorePlugin> {
        Some(self)
    }
    fn as_score(&self) -> Option<&dyn ScorePlugin> {
        Some(self)
    }
}

impl PreFilterPlugin for InterPodAffinity {
    fn pre_filter(
        &self,
        state: &mut CycleState,
        pod: &Pod,
        handle: &dyn Handle,
    ) -> (Option<PreFilterResult>, Status) {
        let computed = match self.index.lock() {
            Ok(mut index) => {
                // Only a pod without required terms needs to know whether some placed pod has
                // required anti-affinity before counting (PreFilter's Skip).
                let any_existing_anti = terms::has_required_terms(pod)
                    || !handle.node_infos_with_required_anti_affinity().is_empty();
                PreFilterState::compute_indexed(
                    pod,
                    handle.node_infos(),
                    crate::runtime::node_arrays::node_generations(handle),
                    any_existing_anti,
                    Some(handle.client()),
                    &mut index,
                )
            }
            // A panic elsewhere poisoned the index: count from scratch.
            Err(_) => {
                let anti_nodes = handle.node_infos_with_required_anti_affinity();
                PreFilterState::compute(
                    pod,
                    handle.node_infos(),
                    Some(&anti_nodes),
                    Some(handle.client()),
                )
            }
        };
        match computed {
            None => (None, Status::skip()),
            Some(s) => {
                state.write(PRE_FILTER_STATE_KEY, s);
                (None, Status::success())
            }
        }
    }

    fn add_pod(
        &self,
        state: &mut CycleState,
        pod_to_schedule: &Pod,
        pod_to_add: &PodInfo,
        node: &NodeInfo,
    ) -> Status {
        filtering::update_state(state, pod_to_schedule, pod_to_add, node, 1)
    }

    fn remove_pod(
        &self,
        state: &mut CycleState,
        pod_to_schedule: &Pod,
        pod_to_remove: &PodInfo,
        node: &NodeInfo,
    ) -> Status {
        filtering::update_state(state, pod_to_schedule, pod_to_remove, node, -1)
    }
}

impl FilterPlugin for InterPodAffinity {
    fn filter(&self, state: &CycleState, pod: &Pod, node: &NodeInfo) -> Status {
        filtering::filter(state, pod, node)
    }

    fn filter_nodes(
        &self,
        state: &CycleState,
        pod: &Pod,
        nodes: &[&NodeInfo],
        failed: &mut Vec<(usize, Status)>,
    ) {
        filtering::filter_nodes(state, pod, nodes, failed);
    }
}

impl PreScorePlugin for InterPodAffinity {
    /// Without a handle the filtered nodes stand for the whole snapshot and namespace selectors
    /// match no namespace.
    fn pre_score(&self, state: &mut CycleState, pod: &Pod, nodes: &[&NodeInfo]) -> Status {
        let all: Vec<NodeInfo> = nodes.iter().map(|n| (*n).clone()).collect();
        scoring::pre_score(
            state,
            pod,
            &all,
            None,
            None,
            self.hard_pod_affinity_weight,
            self.ignore_preferred_terms_of_existing_pods,
        )
    }

    fn pre_score_with_handle(
        &self,
        state: &mut CycleState,
        pod: &Pod,
        _nodes: &[&NodeInfo],
        handle: &dyn Handle,
    ) -> Status {
        // No preferred terms of its own and no placed pod with terms PreScore reads (counted by
        // PreFilter's index on the same snapshot): no pair can be scored, upstream's Skip.
        if !terms::has_preferred_terms(pod, false) && !terms::has_preferred_terms(pod, true) {
            if let Some(s) = state.read::<PreFilterState>(PRE_FILTER_STATE_KEY) {
                if s.pods_with_scoring_terms == Some(0) {
                    return Status::skip();
                }
            }
        }
        let affinity_nodes = handle.node_infos_with_pod_affinity();
        scoring::pre_score(
            state,
            pod,
            handle.node_infos(),
            Some(&affinity_nodes),
            Some(handle.client()),
            self.hard_pod_affinity_weight,
            self.ignore_preferred_terms_of_existing_pods,
        )
    }
}

impl ScorePlugin for InterPodAffinity {
    fn score(&self, state: &CycleState, _pod: &Pod, node: &NodeInfo) -> Result<i64, Status> {
        match scoring::read(state) {
            Some(s) => Ok(s.score(node)),
            None => Err(scoring::missing_state()),
        }
    }

    fn normalize_score(
        &self,
        state: &CycleState,
        _pod: &Pod,
        scores: &mut [NodeScore<'_>],
    ) -> Status {
        match scoring::read(state) {
            Some(s) => {
                s.normalize(scores);
                Status::success()
            }
            None => scoring::missing_state(),
        }
    }
}

impl NodeKernels for InterPodAffinity {
    fn filter_gate(&self, state: &CycleState, _pod: &Pod) -> Option<NodeGate> {
        filtering::gate(state)
    }
}

/// Queueing hints (upstream `interpodaffinity/plugin.go` `EventsToRegister`,
/// `isSchedulableAfterPodChange`, `isSchedulableAfterNodeChange`).
mod queueing_hints {
    use super::*;
    use k8s_sched_framework::events::{as_nodes, as_pods};
    use k8s_sched_framework::{
        ActionType, ClusterEvent, ClusterEventWithHint, EnqueueExtensions, EventObject,
        EventResource, QueueingHint,
    };

    use super::terms::{pod_matches_all_affinity_terms, required_terms};

    impl EnqueueExtensions for InterPodAffinity {
        /// Pod Add|UpdatePodLabel|Delete and Node Add|UpdateNodeLabel, each with a hint.
        fn events_to_register(&self) -> Vec<ClusterEventWithHint> {
            vec![
                ClusterEventWithHint::with_hint(
                    EventResource::Pod,
                    ActionType::ADD | ActionType::UPDATE_POD_LABEL | ActionType::DELETE,
                ),
                ClusterEventWithHint::with_hint(
                    EventResource::Node,
                    ActionType::ADD | ActionType::UPDATE_NODE_LABEL,
                ),
            ]
        }

        fn queueing_hint(
            &self,
            registered: &ClusterEvent,
            pod: &Pod,
            old: Option<EventObject<'_>>,
            new: Option<EventObject<'_>>,
        ) -> Result<QueueingHint, String> {
            let terms = required_terms(pod, false);
            let anti_terms = required_terms(pod, true);
            if registered.resource == EventResource::Node {
                let (_, modified) = as_nodes(old, new)?;
                let modified = modified.ok_or("a node event needs the new node")?;
                // A node with one of the (anti-)affinity topology keys may make room.
                let has_key = terms
                    .iter()
                    .chain(anti_terms.iter())
                    .any(|t| modified.metadata.labels.contains_key(&t.topology_key));
                return Ok(QueueingHint::queue_if(has_key));
            }
            let (original, modified) = as_pods(old, new)?;
            if modified.is_some_and(|m| m.node_name().is_none())
                || original.is_some_and(|o| o.node_name().is_none())
            {
                return Ok(QueueingHint::QueueSkip);
            }
            match (original, modified) {
                (Some(o), Some(m)) => Ok(QueueingHint::queue_if(
                    (!pod_matches_all_affinity_terms(&terms, o)
                        && pod_matches_all_affinity_terms(&terms, m))
                        || (pod_matches_all_affinity_terms(&anti_terms, o)
                            && !pod_matches_all_affinity_terms(&anti_terms, m)),
                )),
                (None, Some(m)) => Ok(QueueingHint::queue_if(pod_matches_all_affinity_terms(
                    &terms, m,
                ))),
                (Some(o), None) => Ok(QueueingHint::queue_if(pod_matches_all_affinity_terms(
                    &anti_terms,
                    o,
                ))),
                (None, None) => Err("a pod event needs a pod".to_string()),
            }
        }
    }
}

#[cfg(test)]
mod tests;
