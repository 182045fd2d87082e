//! InterPodAffinity (PreFilter, Filter, PreScore, Score): required pod affinity and
//! anti-affinity of the incoming pod, required anti-affinity of existing pods (symmetry), and the
//! preferred terms of both sides as a score, with namespaces and namespaceSelector (Namespace
//! objects' labels are read from the apiserver). Mirrors upstream
//! `pkg/scheduler/framework/plugins/interpodaffinity/plugin.go`.
//!
//! Submodules: [`terms`] (processed terms, namespaces, topology counters), [`filtering`]
//! (PreFilter/Filter/AddPod/RemovePod), [`scoring`] (PreScore/Score/NormalizeScore).

pub mod filtering;
pub mod scoring;
pub mod terms;

use std::sync::Arc;

use k8s_types::core::Pod;
use k8s_types::framework::{
    CycleState, FilterPlugin, Handle, NodeInfo, NodeScore, Plugin, PodInfo, PreFilterPlugin,
    PreFilterResult, PreScorePlugin, ScorePlugin, Status,
};

use self::filtering::{PreFilterState, PRE_FILTER_STATE_KEY};
use super::names;
use crate::config::inter_pod_affinity_args::InterPodAffinityArgs;
use crate::error::ConfigError;
use crate::registry::PluginArgs;

pub use self::filtering::{
    ERR_REASON_AFFINITY_RULES_NOT_MATCH, ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH,
    ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH,
};

/// The InterPodAffinity plugin.
#[derive(Debug)]
pub struct InterPodAffinity {
    hard_pod_affinity_weight: i32,
    ignore_preferred_terms_of_existing_pods: bool,
}

impl InterPodAffinity {
    /// Builds the plugin from defaulted, valid args.
    pub fn new(args: &InterPodAffinityArgs) -> InterPodAffinity {
        InterPodAffinity {
            hard_pod_affinity_weight: args.hard_pod_affinity_weight(),
            ignore_preferred_terms_of_existing_pods: args.ignore_preferred_terms_of_existing_pods,
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
        let anti_nodes = handle.node_infos_with_required_anti_affinity();
        match PreFilterState::compute(
            pod,
            handle.node_infos(),
            Some(&anti_nodes),
            Some(handle.client()),
        ) {
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

#[cfg(test)]
mod tests;
