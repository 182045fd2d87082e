//! PodTopologySpread (PreFilter, Filter, PreScore, Score): spreads matching pods evenly across
//! topology domains (zones, nodes, ...) by the pod's `topologySpreadConstraints`: hard ones
//! (`DoNotSchedule`) filter, soft ones (`ScheduleAnyway`) score. Pods without constraints get the
//! default constraints (upstream `systemDefaultConstraints`: hostname maxSkew 3 and zone maxSkew
//! 5, both `ScheduleAnyway`, with `defaultingType: System`; or the listed `defaultConstraints`),
//! whose selector is deduced from the pod's Services and controller. Supports `minDomains`,
//! `matchLabelKeys`, `nodeAffinityPolicy` and `nodeTaintsPolicy` (all upstream feature gates on).
//! Mirrors upstream `pkg/scheduler/framework/plugins/podtopologyspread/plugin.go`.
//!
//! Submodules: [`common`] (parsed constraints, counting), `default_selector` (upstream
//! `helper.DefaultSelector`), `filtering` (PreFilter/Filter/AddPod/RemovePod), [`scoring`]
//! (PreScore/Score/NormalizeScore).

pub mod common;
pub(crate) mod default_selector;
pub(crate) mod filtering;
pub mod scoring;

use std::sync::{Arc, Mutex};

use k8s_sched_framework::{
    CycleState, FilterPlugin, Handle, NodeInfo, NodeScore, Plugin, PodInfo, PreFilterPlugin,
    PreFilterResult, PreScorePlugin, ScorePlugin, Status,
};
use k8s_types::apiserver::ApiClient;
use k8s_types::core::node::node_labels;
use k8s_types::core::{Pod, TopologySpreadConstraint as ApiConstraint};

use self::common::{build_default_constraints, filter_constraints, TopologySpreadConstraint};
use self::filtering::{PreFilterState, PRE_FILTER_STATE_KEY};
use self::scoring::{PreScoreState, PRE_SCORE_STATE_KEY};
use super::names;
use crate::config::pod_topology_spread_args::{
    PodTopologySpreadArgs, DO_NOT_SCHEDULE, SCHEDULE_ANYWAY, SYSTEM_DEFAULTING,
};
use crate::runtime::kernel::{NodeGate, NodeKernels};
use crate::topology_counts::TopologyIndex;
use k8s_sched_framework::ConfigError;
use k8s_sched_framework::PluginArgs;

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
    /// Matching pods per node and domain for the selectors pods used (PreFilter and PreScore read
    /// it instead of visiting every pod; see [`crate::topology_counts`]).
    index: Mutex<TopologyIndex>,
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
                index: Mutex::default(),
            }
        } else {
            PodTopologySpread {
                default_constraints: args.constraints(),
                system_defaulted: false,
                index: Mutex::default(),
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

    /// Upstream `PreScore`. With a handle the counts come from the topology index
    /// ([`PreScoreState::compute_indexed`]); without one (or with the index poisoned) they are
    /// counted pod by pod ([`PreScoreState::compute`]).
    fn pre_score_impl(
        &self,
        state: &mut CycleState,
        pod: &Pod,
        filtered: &[&NodeInfo],
        all_nodes: &[NodeInfo],
        handle: Option<&dyn Handle>,
    ) -> Status {
        if all_nodes.is_empty() {
            return Status::skip();
        }
        // Nodes need every topology key unless the system defaults apply (so nodes without a
        // zone still get hostname spreading).
        let require_all_topologies =
            !pod.spec.topology_spread_constraints.is_empty() || !self.system_defaulted;
        let constraints = self.constraints(pod, SCHEDULE_ANYWAY, handle.map(|h| h.client()));
        if constraints.is_empty() {
            return Status::skip();
        }
        let index = handle.and_then(|h| Some((h, self.index.lock().ok()?)));
        let s = match index {
            Some((h, mut index)) => PreScoreState::compute_indexed(
                pod,
                constraints,
                filtered,
                all_nodes,
                require_all_topologies,
                crate::runtime::node_arrays::node_generations(h),
                &mut index,
            ),
            None => PreScoreState::compute(
                pod,
                constraints,
                filtered,
                all_nodes,
                require_all_topologies,
            ),
        };
        state.write(PRE_SCORE_STATE_KEY, s);
        Status::success()
    }
}

impl Plugin for PodTopologySpread {
    fn as_enqueue_extensions(&self) -> Option<&dyn k8s_sched_framework::EnqueueExtensions> {
        Some(self)
    }
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
        let s = match self.index.lock() {
            Ok(mut index) => PreFilterState::compute_indexed(
                pod,
                constraints,
                handle.node_infos(),
                crate::runtime::node_arrays::node_generations(handle),
                &mut index,
            ),
            // A panic elsewhere poisoned the index: count from scratch.
            Err(_) => PreFilterState::compute(pod, constraints, handle.node_infos()),
        };
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
        self.pre_score_impl(state, pod, nodes, handle.node_infos(), Some(handle))
    }
}

impl ScorePlugin for PodTopologySpread {
    fn score(&self, state: &CycleState, pod: &Pod, node: &NodeInfo) -> Result<i64, Status> {
        match scoring::read(state) {
            Some(s) => Ok(s.score(pod, node)),
            None => Err(scoring::missing_state()),
        }
    }

    /// [`ScorePlugin::score`] on each node, reading the PreScore state once.
    fn score_nodes(
        &self,
        state: &CycleState,
        pod: &Pod,
        nodes: &[&NodeInfo],
        scores: &mut [i64],
    ) -> Result<(), Status> {
        let Some(s) = scoring::read(state) else {
            // As `score` on each node: the first node fails.
            return match nodes.is_empty() {
                true => Ok(()),
                false => Err(scoring::missing_state()),
            };
        };
        s.score_nodes(pod, nodes, scores);
        Ok(())
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

impl NodeKernels for PodTopologySpread {
    fn filter_gate(&self, state: &CycleState, _pod: &Pod) -> Option<NodeGate> {
        filtering::gate(state)
    }
}

/// Queueing hints (upstream `podtopologyspread/plugin.go` `EventsToRegister`,
/// `isSchedulableAfterPodChange`, `isSchedulableAfterNodeChange`, `involvedInTopologySpreading`,
/// `podLabelsMatchSpreadConstraints`, `checkTopologyKeyLabelsChanged`).
mod queueing_hints {
    use super::*;
    use k8s_sched_framework::events::{as_nodes, as_pods};
    use k8s_sched_framework::{
        ActionType, ClusterEvent, ClusterEventWithHint, EnqueueExtensions, EventObject,
        EventResource, QueueingHint,
    };
    use k8s_types::core::Node;

    use super::common::node_labels_match_spread_constraints;

    impl PodTopologySpread {
        /// Upstream `getConstraints`: the pod's hard constraints, or the default ones.
        ///
        /// # Errors
        /// Hard default constraints, whose selector needs the apiserver (the pod is queued).
        fn hard_constraints(&self, pod: &Pod) -> Result<Vec<TopologySpreadConstraint>, String> {
            if pod.spec.topology_spread_constraints.is_empty()
                && !filter_constraints(
                    &self.default_constraints,
                    &pod.metadata.labels,
                    DO_NOT_SCHEDULE,
                )
                .is_empty()
            {
                return Err("default constraints need the pod's services and owners".to_string());
            }
            Ok(self.constraints(pod, DO_NOT_SCHEDULE, None))
        }
    }

    /// Upstream `involvedInTopologySpreading`: the pod itself, or a scheduled pod in its
    /// namespace.
    fn involved(incoming: &Pod, pod: &Pod) -> bool {
        incoming.metadata.uid == pod.metadata.uid
            || (incoming.node_name().is_some()
                && incoming.metadata.namespace() == pod.metadata.namespace())
    }

    fn any_selector_matches(
        constraints: &[TopologySpreadConstraint],
        labels: &std::collections::BTreeMap<String, String>,
    ) -> bool {
        constraints.iter().any(|c| c.selector.matches(labels))
    }

    impl EnqueueExtensions for PodTopologySpread {
        /// Pod Add|UpdatePodLabel|UpdatePodToleration|Delete and Node
        /// Add|Delete|UpdateNodeLabel|UpdateNodeTaint, each with a hint.
        fn events_to_register(&self) -> Vec<ClusterEventWithHint> {
            vec![
                ClusterEventWithHint::with_hint(
                    EventResource::Pod,
                    ActionType::ADD
                        | ActionType::UPDATE_POD_LABEL
                        | ActionType::UPDATE_POD_TOLERATION
                        | ActionType::DELETE,
                ),
                ClusterEventWithHint::with_hint(
                    EventResource::Node,
                    ActionType::ADD
                        | ActionType::DELETE
                        | ActionType::UPDATE_NODE_LABEL
                        | ActionType::UPDATE_NODE_TAINT,
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
            if registered.resource == EventResource::Node {
                let (original, modified) = as_nodes(old, new)?;
                return Ok(QueueingHint::queue_if(
                    self.after_node_change(pod, original, modified)?,
                ));
            }
            let (original, modified) = as_pods(old, new)?;
            if modified.is_some_and(|m| !involved(m, pod))
                || original.is_some_and(|o| !involved(o, pod))
            {
                return Ok(QueueingHint::QueueSkip);
            }
            let constraints = self.hard_constraints(pod)?;
            match (original, modified) {
                (Some(o), Some(m)) => {
                    if m.metadata.uid == pod.metadata.uid
                        && m.spec.tolerations != o.spec.tolerations
                        && constraints.iter().any(|c| c.honor_node_taints)
                    {
                        return Ok(QueueingHint::Queue);
                    }
                    if m.metadata.labels == o.metadata.labels {
                        return Ok(QueueingHint::QueueSkip);
                    }
                    Ok(QueueingHint::queue_if(constraints.iter().any(|c| {
                        c.selector.matches(&o.metadata.labels)
                            != c.selector.matches(&m.metadata.labels)
                    })))
                }
                (None, Some(m)) => Ok(QueueingHint::queue_if(any_selector_matches(
                    &constraints,
                    &m.metadata.labels,
                ))),
                (Some(o), None) => Ok(QueueingHint::queue_if(any_selector_matches(
                    &constraints,
                    &o.metadata.labels,
                ))),
                (None, None) => Err("a pod event needs a pod".to_string()),
            }
        }
    }

    impl PodTopologySpread {
        /// Upstream `isSchedulableAfterNodeChange` (true = Queue).
        fn after_node_change(
            &self,
            pod: &Pod,
            original: Option<&Node>,
            modified: Option<&Node>,
        ) -> Result<bool, String> {
            let constraints = self.hard_constraints(pod)?;
            let matching = |n: Option<&Node>| {
                n.is_some_and(|n| {
                    node_labels_match_spread_constraints(&n.metadata.labels, &constraints)
                })
            };
            let (was, is) = (matching(original), matching(modified));
            Ok(match (original, modified) {
                (Some(o), Some(m)) => {
                    if was != is {
                        return Ok(true);
                    }
                    let key_changed = constraints.iter().any(|c| {
                        o.metadata.labels.get(&c.topology_key)
                            != m.metadata.labels.get(&c.topology_key)
                    });
                    is && (key_changed || o.spec.taints != m.spec.taints)
                }
                (None, Some(_)) => is,
                (Some(_), None) => was,
                (None, None) => false,
            })
        }
    }
}

#[cfg(test)]
mod tests;
