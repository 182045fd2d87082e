//! PodTopologySpread (PreFilter, Filter, PreScore, Score): spreads matching pods evenly across
//! topology domains (zones, nodes, ...) by the pod's `topologySpreadConstraints`: hard ones
//! (`DoNotSchedule`) filter, soft ones (`ScheduleAnyway`) score. Pods without constraints get the
//! default constraints (upstream `systemDefaultConstraints`: hostname maxSkew 3 and zone maxSkew
//! 5, both `ScheduleAnyway`, with `defaultingType: System`; or the listed `defaultConstraints`),
//! whose selector is deduced from the pod's Services and controller. Supports `minDomains`,
//! `matchLabelKeys`, `nodeAffinityPolicy` and `nodeTaintsPolicy` (all upstream feature gates on).
//! Mirrors upstream `pkg/scheduler/framework/plugins/podtopologyspread/plugin.go`.
//!
//! Submodules: [`common`] (parsed constraints, counting), [`default_selector`] (upstream
//! `helper.DefaultSelector`), [`filtering`] (PreFilter/Filter/AddPod/RemovePod), [`scoring`]
//! (PreScore/Score/NormalizeScore).

pub mod common;
pub mod default_selector;
pub mod filtering;
pub mod scoring;

use std::sync::Arc;

use k8s_types::apiserver::ApiClient;
use k8s_types::core::node::node_labels;
use k8s_types::core::{Pod, TopologySpreadConstraint as ApiConstraint};
use k8s_types::framework::{
    CycleState, FilterPlugin, Handle, NodeInfo, NodeScore, Plugin, PodInfo, PreFilterPlugin,
    PreFilterResult, PreScorePlugin, ScorePlugin, Status,
};

use self::common::{build_default_constraints, filter_constraints, TopologySpreadConstraint};
use self::filtering::{PreFilterState, PRE_FILTER_STATE_KEY};
use self::scoring::{PreScoreState, PRE_SCORE_STATE_KEY};
use super::names;
use crate::config::pod_topology_spread_args::{
    PodTopologySpreadArgs, DO_NOT_SCHEDULE, SCHEDULE_ANYWAY, SYSTEM_DEFAULTING,
};
use crate::error::ConfigError;
use crate::registry::PluginArgs;

pub use self::filtering::{ERR_REASON_CONSTRAINTS_NOT_MATCH, ERR_REASON_NODE_LABEL_NOT_MATCH};

/// Upstream `systemDefaultConstraints`: hostname maxSkew 3, zone maxSkew 5, `ScheduleAnyway`.
pub fn system_default_constraints() -> Vec<ApiConstraint> {
    vec![
        ApiConstraint {
            max_skew: 3,
            topology_key: node_labels::HOSTNAME.to_string(),
            when_unsatisfiable: SCHEDULE_ANYWAY.to_string(),
            ..Default::default()
        },
        ApiConstraint {
            max_skew: 5,
            topology_key: node_labels::ZONE.to_string(),
            when_unsatisfiable: SCHEDULE_ANYWAY.to_string(),
            ..Default::default()
        },
    ]
}

/// The PodTopologySpread plugin.
#[derive(Debug)]
pub struct PodTopologySpread {
    default_constraints: Vec<ApiConstraint>,
    system_defaulted: bool,
}

impl PodTopologySpread {
    /// Builds the plugin from defaulted, valid args (upstream `New`): `System` uses
    /// [`system_default_constraints`].
    pub fn new(args: &PodTopologySpreadArgs) -> PodTopologySpread {
        let args = args.clone().defaulted();
        if args.defaulting_type == SYSTEM_DEFAULTING {
            PodTopologySpread {
                default_constraints: system_default_constraints(),
                system_defaulted: true,
            }
        } else {
            PodTopologySpread {
                default_constraints: args.constraints(),
                system_defaulted: false,
            }
        }
    }

    /// Factory: decodes, defaults and validates `PodTopologySpreadArgs`.
    ///
    /// # Errors
    /// Decode errors and upstream validation errors
    /// (`...args.defaultConstraints[0].maxSkew: Invalid value: 0: not in valid range (0, inf)`).
    pub fn factory(a: &PluginArgs<'_>) -> Result<Arc<dyn Plugin>, ConfigError> {
        let args: PodTopologySpreadArgs = a.decode()?;
        let args = args.defaulted();
        a.check(args.validate(&a.path))?;
        Ok(Arc::new(PodTopologySpread::new(&args)))
    }

    /// The default constraints in use (the system ones or `defaultConstraints`).
    pub fn default_constraints(&self) -> &[ApiConstraint] {
        &self.default_constraints
    }

    /// Upstream `getConstraints` / `initPreScoreState`'s choice: the pod's own constraints with
    /// `action`, or the default ones when the pod has none.
    fn constraints(
        &self,
        pod: &Pod,
        action: &str,
        api: Option<&dyn ApiClient>,
    ) -> Vec<TopologySpreadConstraint> {
        if pod.spec.topology_spread_constraints.is_empty() {
            build_default_constraints(&self.default_constraints, pod, action, api)
        } else {
            filter_constraints(
                &pod.spec.topology_spread_constraints,
                &pod.metadata.labels,
                action,
            )
        }
    }

    fn pre_score_impl(
        &self,
        state: &mut CycleState,
        pod: &Pod,
        filtered: &[&NodeInfo],
        all_nodes: &[NodeInfo],
        api: Option<&dyn ApiClient>,
    ) -> Status {
        if all_nodes.is_empty() {
            return Status::skip();
        }
        // Nodes need every topology key unless the system defaults apply (so nodes without a
        // zone still get hostname spreading).
        let require_all_topologies =
            !pod.spec.topology_spread_constraints.is_empty() || !self.system_defaulted;
        let constraints = self.constraints(pod, SCHEDULE_ANYWAY, api);
        if constraints.is_empty() {
            return Status::skip();
        }
        let s = PreScoreState::compute(
            pod,
            constraints,
            filtered,
            all_nodes,
            require_all_topologies,
        );
        state.write(PRE_SCORE_STATE_KEY, s);
        Status::success()
    }
}

impl Plugin for PodTopologySpread {
    fn name(&self) -> &str {
        names::POD_TOPOLOGY_SPREAD
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

impl PreFilterPlugin for PodTopologySpread {
    fn pre_filter(
        &self,
        state: &mut CycleState,
        pod: &Pod,
        handle: &dyn Handle,
    ) -> (Option<PreFilterResult>, Status) {
        let constraints = self.constraints(pod, DO_NOT_SCHEDULE, Some(handle.client()));
        if constraints.is_empty() {
            return (None, Status::skip());
        }
        let s = PreFilterState::compute(pod, constraints, handle.node_infos());
        state.write(PRE_FILTER_STATE_KEY, s);
        (None, Status::success())
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

impl FilterPlugin for PodTopologySpread {
    fn filter(&self, state: &CycleState, pod: &Pod, node: &NodeInfo) -> Status {
        filtering::filter(state, pod, node)
    }
}

impl PreScorePlugin for PodTopologySpread {
    /// Without a handle the filtered nodes stand for the whole snapshot and default constraints
    /// cannot be built (no apiserver to read the pod's owners from).
    fn pre_score(&self, state: &mut CycleState, pod: &Pod, nodes: &[&NodeInfo]) -> Status {
        let all: Vec<NodeInfo> = nodes.iter().map(|n| (*n).clone()).collect();
        self.pre_score_impl(state, pod, nodes, &all, None)
    }

    fn pre_score_with_handle(
        &self,
        state: &mut CycleState,
        pod: &Pod,
        nodes: &[&NodeInfo],
        handle: &dyn Handle,
    ) -> Status {
        self.pre_score_impl(
            state,
            pod,
            nodes,
            handle.node_infos(),
            Some(handle.client()),
        )
    }
}

impl ScorePlugin for PodTopologySpread {
    fn score(&self, state: &CycleState, pod: &Pod, node: &NodeInfo) -> Result<i64, Status> {
        match scoring::read(state) {
            Some(s) => Ok(s.score(pod, node)),
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
