//! TaintToleration (Filter, PreScore, Score): rejects nodes with a `NoSchedule`/`NoExecute` taint
//! the pod does not tolerate; scores nodes by the number of `PreferNoSchedule` taints the pod does
//! not tolerate, normalized reversed (fewer is better). Upstream
//! `pkg/scheduler/framework/plugins/tainttoleration/taint_toleration.go`.
//!
//! The Filter reason follows the brief's upstream wording `node(s) had untolerated taint {key:
//! value}`; upstream since v1.33 omits the taint (`node(s) had untolerated taint(s)`).

use std::sync::Arc;

use crate::runtime::kernel::NODE_FLAG_TAINTED;
use k8s_sched_framework::{
    CycleState, FilterPlugin, NodeInfo, NodeScore, Plugin, PreScorePlugin, ScorePlugin, Status,
    MAX_NODE_SCORE,
};
use k8s_types::core::taints::{effects, find_untolerated, tolerated};
use k8s_types::core::{Pod, Toleration};

use super::helper::default_normalize_score;
use super::names;
use crate::runtime::kernel::{NodeFilterKernel, NodeKernels, NodeScoreKernel};
use k8s_sched_framework::ConfigError;
use k8s_sched_framework::PluginArgs;

/// Upstream reason prefix; the untolerated taint follows as `{key: value}`.
pub const ERR_REASON_PREFIX: &str = "node(s) had untolerated taint ";
/// CycleState key of the PreferNoSchedule tolerations.
pub const PRE_SCORE_STATE_KEY: &str = "PreScoreTaintToleration";

/// Tolerations with effect PreferNoSchedule or empty.
#[derive(Clone, Debug, Default)]
pub struct PreScoreState(pub Vec<Toleration>);

/// The TaintToleration plugin.
#[derive(Debug, Default)]
pub struct TaintToleration;

impl TaintToleration {
    /// Factory (no args).
    ///
    /// # Errors
    /// Never.
    pub fn factory(_: &PluginArgs<'_>) -> Result<Arc<dyn Plugin>, ConfigError> {
        Ok(Arc::new(TaintToleration))
    }
}

impl Plugin for TaintToleration {
    fn as_enqueue_extensions(&self) -> Option<&dyn k8s_sched_framework::EnqueueExtensions> {
        Some(self)
    }
    fn name(&self) -> &str {
        names::TAINT_TOLERATION
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

impl FilterPlugin for TaintToleration {
    fn filter(&self, _state: &CycleState, pod: &Pod, node: &NodeInfo) -> Status {
        match find_untolerated(
            &node.node().spec.taints,
            &pod.spec.tolerations,
            &[effects::NO_SCHEDULE, effects::NO_EXECUTE],
        ) {
            None => Status::success(),
            Some(t) => {
                Status::unresolvable(format!("{ERR_REASON_PREFIX}{}", t.to_message_string()))
            }
        }
    }

    fn filter_nodes(
        &self,
        state: &CycleState,
        pod: &Pod,
        nodes: &[&NodeInfo],
        failed: &mut Vec<(usize, Status)>,
    ) {
        for (i, node) in nodes.iter().enumerate() {
            // Untainted nodes (the common case) need no toleration check.
            if !node.has_taints() {
                continue;
            }
            let s = self.filter(state, pod, node);
            if !s.is_success() {
                failed.push((i, s));
            }
        }
    }
}

fn prefer_no_schedule_tolerations(pod: &Pod) -> Vec<Toleration> {
    pod.spec
        .tolerations
        .iter()
        .filter(|t| t.effect.is_empty() || t.effect == effects::PREFER_NO_SCHEDULE)
        .cloned()
        .collect()
}

fn count_intolerable(node: &NodeInfo, tolerations: &[Toleration]) -> i64 {
    node.node()
        .spec
        .taints
        .iter()
        .filter(|t| t.effect == effects::PREFER_NO_SCHEDULE && !tolerated(t, tolerations))
        .count() as i64
}

impl PreScorePlugin for TaintToleration {
    fn pre_score(&self, state: &mut CycleState, pod: &Pod, _nodes: &[&NodeInfo]) -> Status {
        state.write(
            PRE_SCORE_STATE_KEY,
            PreScoreState(prefer_no_schedule_tolerations(pod)),
        );
        Status::success()
    }
}

impl ScorePlugin for TaintToleration {
    fn score(&self, state: &CycleState, pod: &Pod, node: &NodeInfo) -> Result<i64, Status> {
        let stored = state.read_or_compute(PRE_SCORE_STATE_KEY, || {
            PreScoreState(prefer_no_schedule_tolerations(pod))
        });
        Ok(count_intolerable(node, &stored.0))
    }

    fn score_nodes(
        &self,
        state: &CycleState,
        pod: &Pod,
        nodes: &[&NodeInfo],
        scores: &mut [i64],
    ) -> Result<(), Status> {
        let stored = state.read_or_compute(PRE_SCORE_STATE_KEY, || {
            PreScoreState(prefer_no_schedule_tolerations(pod))
        });
        let tolerations = &stored.0;
        for (node, out) in nodes.iter().zip(scores.iter_mut()) {
            *out = if !node.has_taints() {
                0
            } else {
                count_intolerable(node, tolerations)
            };
        }
        Ok(())
    }

    fn normalize_score(
        &self,
        _state: &CycleState,
        _pod: &Pod,
        scores: &mut [NodeScore<'_>],
    ) -> Status {
        default_normalize_score(MAX_NODE_SCORE, true, scores);
        Status::success()
    }
}

impl NodeKernels for TaintToleration {
    /// Untainted nodes pass.
    fn filter_kernel(&self, _state: &CycleState, _pod: &Pod) -> Option<NodeFilterKernel> {
        Some(NodeFilterKernel::unless_flags(NODE_FLAG_TAINTED))
    }

    /// Untainted nodes count 0 intolerable taints; when every scored node is untainted, all raw
    /// scores are 0 and upstream's `DefaultNormalizeScore` (reverse) makes each of them 100.
    fn score_kernel(&self, _state: &CycleState, _pod: &Pod) -> Option<NodeScoreKernel> {
        Some(NodeScoreKernel::Constant {
            score: MAX_NODE_SCORE,
            unless_flags: NODE_FLAG_TAINTED,
        })
    }
}

/// Queueing hints (upstream `tainttoleration/taint_toleration.go` `EventsToRegister`,
/// `isSchedulableAfterNodeChange`, `isSchedulableAfterPodTolerationChange`).
mod queueing_hints {
    use super::*;
    use k8s_sched_framework::events::{as_nodes, as_pods};
    use k8s_sched_framework::{
        ActionType, ClusterEvent, ClusterEventWithHint, EnqueueExtensions, EventObject,
        EventResource, QueueingHint,
    };

    impl EnqueueExtensions for TaintToleration {
        /// Node Add|UpdateNodeTaint and Pod UpdatePodToleration, each with a hint.
        fn events_to_register(&self) -> Vec<ClusterEventWithHint> {
            vec![
                ClusterEventWithHint::with_hint(
                    EventResource::Node,
                    ActionType::ADD | ActionType::UPDATE_NODE_TAINT,
                ),
                ClusterEventWithHint::with_hint(
                    EventResource::Pod,
                    ActionType::UPDATE_POD_TOLERATION,
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
                let modified = modified.ok_or("a node event needs the new node")?;
                let filter = [effects::NO_SCHEDULE, effects::NO_EXECUTE];
                let untolerated = |n: &k8s_types::core::Node| {
                    find_untolerated(&n.spec.taints, &pod.spec.tolerations, &filter).is_some()
                };
                let was_untolerated = original.is_none_or(untolerated);
                if was_untolerated && !untolerated(modified) {
                    return Ok(QueueingHint::Queue);
                }
                return Ok(QueueingHint::QueueSkip);
            }
            let (_, modified) = as_pods(old, new)?;
            let modified = modified.ok_or("a pod update needs the new pod")?;
            Ok(QueueingHint::queue_if(
                modified.metadata.uid == pod.metadata.uid,
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_types::core::{Node, Taint};

    fn node(name: &str, taints: &[(&str, &str, &str)]) -> NodeInfo {
        let mut n = Node::default();
        n.metadata.name = name.into();
        n.spec.taints = taints
            .iter()
            .map(|(k, v, e)| Taint {
                key: (*k).into(),
                value: (*v).into(),
                effect: (*e).into(),
                time_added: None,
            })
            .collect();
        NodeInfo::new(Arc::new(n))
    }

    #[test]
    fn filter_names_the_untolerated_taint() {
        let ni = node("a", &[("dedicated", "gpu", "NoSchedule")]);
        let s = TaintToleration.filter(&CycleState::new(), &Pod::default(), &ni);
        assert_eq!(
            s.message(),
            "node(s) had untolerated taint {dedicated: gpu}"
        );
        let cp = node(
            "b",
            &[("node-role.kubernetes.io/control-plane", "", "NoSchedule")],
        );
        assert_eq!(
            TaintToleration
                .filter(&CycleState::new(), &Pod::default(), &cp)
                .message(),
            "node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }"
        );
    }

    #[test]
    fn more_intolerable_taints_score_lower() {
        // Upstream taint_toleration_test.go "the more intolerable taints a node has, the lower
        // score it gets": 100, 50, 0.
        let mut pod = Pod::default();
        pod.spec.tolerations.push(Toleration {
            key: "foo".into(),
            operator: "Equal".into(),
            value: "bar".into(),
            effect: "PreferNoSchedule".into(),
            toleration_seconds: None,
        });
        let nodes = [
            node("nodeA", &[]),
            node("nodeB", &[("cpu-type", "arm64", "PreferNoSchedule")]),
            node(
                "nodeC",
                &[
                    ("cpu-type", "arm64", "PreferNoSchedule"),
                    ("disk-type", "ssd", "PreferNoSchedule"),
                ],
            ),
        ];
        let mut state = CycleState::new();
        let refs: Vec<&NodeInfo> = nodes.iter().collect();
        assert!(TaintToleration
            .pre_score(&mut state, &pod, &refs)
            .is_success());
        let mut scores: Vec<NodeScore> = nodes
            .iter()
            .map(|n| NodeScore {
                name: n.name(),
                score: TaintToleration.score(&state, &pod, n).unwrap(),
            })
            .collect();
        TaintToleration.normalize_score(&state, &pod, &mut scores);
        assert_eq!(
            scores.iter().map(|s| s.score).collect::<Vec<_>>(),
            vec![100, 50, 0]
        );
    }
}
