//! NodeResourcesFit (PreFilter, Filter, PreScore, Score): the pod's requests must fit the node's
//! allocatable minus what assigned pods request, for every resource including extended ones
//! (`Insufficient cpu`, `Insufficient nvidia.com/gpu`, `Too many pods`); nodes are scored with the
//! configured strategy (LeastAllocated, MostAllocated, RequestedToCapacityRatio). Upstream
//! `pkg/scheduler/framework/plugins/noderesources/fit.go`.
//!
//! A shortfall larger than the node's whole allocatable makes the status
//! UnschedulableAndUnresolvable, so preemption skips that node (upstream `Unresolvable`).

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::sync::Arc;

use k8s_sched_framework::{
    Code, CycleState, FilterPlugin, Handle, NodeInfo, Plugin, PreFilterPlugin, PreFilterResult,
    PreScorePlugin, ScorePlugin, Status,
};
use k8s_types::core::Pod;
use k8s_types::resources::{pod_requests, Resources};

use super::resource_allocation::{ResourceAllocationScorer, Scorer};
use crate::config::args::{NodeResourcesFitArgs, MOST_ALLOCATED, REQUESTED_TO_CAPACITY_RATIO};
use crate::plugins::helper::is_extended_resource_name;
use crate::plugins::names;
use crate::runtime::kernel::{AllocationStrategy, NodeFilterKernel, NodeKernels, NodeScoreKernel};
use k8s_sched_framework::ConfigError;
use k8s_sched_framework::PluginArgs;

/// CycleState key of the pod's requests.
pub const PRE_FILTER_STATE_KEY: &str = "PreFilterNodeResourcesFit";
/// CycleState key of the pod's per-resource scoring requests.
pub const PRE_SCORE_STATE_KEY: &str = "PreScoreNodeResourcesFit";
/// Upstream reason for the pod-count limit.
pub const REASON_TOO_MANY_PODS: &str = "Too many pods";
/// Upstream reason for CPU.
pub const REASON_INSUFFICIENT_CPU: &str = "Insufficient cpu";
/// Upstream reason for memory.
pub const REASON_INSUFFICIENT_MEMORY: &str = "Insufficient memory";
/// Upstream reason for ephemeral storage.
pub const REASON_INSUFFICIENT_EPHEMERAL_STORAGE: &str = "Insufficient ephemeral-storage";
/// Prefix of the reason for any other resource: `Insufficient <name>`.
pub const REASON_INSUFFICIENT_PREFIX: &str = "Insufficient ";

/// The pod's requests computed at PreFilter.
#[derive(Clone, Debug, Default)]
pub struct PreFilterState(pub Resources);

/// The pod's per-resource scoring requests computed at PreScore.
#[derive(Clone, Debug, Default)]
pub struct PreScoreState(pub Vec<i64>);

/// One resource the pod does not fit (upstream `InsufficientResource`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InsufficientResource {
    /// Resource name.
    pub resource_name: String,
    /// Reason text.
    pub reason: String,
    /// The pod's request.
    pub requested: i64,
    /// Already requested on the node.
    pub used: i64,
    /// Node allocatable.
    pub capacity: i64,
    /// The request exceeds the node's whole allocatable: preemption cannot help.
    pub unresolvable: bool,
}

/// The NodeResourcesFit plugin.
#[derive(Debug)]
pub struct NodeResourcesFit {
    ignored_resources: BTreeSet<String>,
    ignored_resource_groups: BTreeSet<String>,
    scorer: ResourceAllocationScorer,
}

impl NodeResourcesFit {
    /// Builds the plugin from defaulted, valid args.
    pub fn new(args: &NodeResourcesFitArgs) -> NodeResourcesFit {
        let args = args.clone().defaulted();
        let strategy = args.scoring_strategy.unwrap_or_default();
        let resources = strategy.resources.clone();
        let scorer = match strategy.type_.as_str() {
            MOST_ALLOCATED => ResourceAllocationScorer {
                resources,
                use_requested: false,
                scorer: Scorer::MostAllocated,
            },
            REQUESTED_TO_CAPACITY_RATIO => {
                let shape: Vec<(i64, i64)> = strategy
                    .requested_to_capacity_ratio
                    .map(|r| {
                        r.shape
                            .iter()
                            .map(|p| (i64::from(p.utilization), i64::from(p.score)))
                            .collect()
                    })
                    .unwrap_or_default();
                ResourceAllocationScorer::requested_to_capacity_ratio(resources, &shape)
            }
            _ => ResourceAllocationScorer {
                resources,
                use_requested: false,
                scorer: Scorer::LeastAllocated,
            },
        };
        NodeResourcesFit {
            ignored_resources: args.ignored_resources.into_iter().collect(),
            ignored_resource_groups: args.ignored_resource_groups.into_iter().collect(),
            scorer,
        }
    }

    /// Factory: decodes, defaults and validates `NodeResourcesFitArgs`.
    ///
    /// # Errors
    /// Decode errors and upstream validation errors (`...args.scoringStrategy.type: Unsupported
    /// value: "Foo": ...`).
    pub fn factory(a: &PluginArgs<'_>) -> Result<Arc<dyn Plugin>, ConfigError> {
        let args: NodeResourcesFitArgs = a.decode()?;
        let args = args.defaulted();
        a.check(args.validate(&a.path))?;
        Ok(Arc::new(NodeResourcesFit::new(&args)))
    }

    /// The pod's per-resource scoring requests as PreScore stored them, else computed now.
    fn pre_score_state<'a>(&self, state: &'a CycleState, pod: &Pod) -> Cow<'a, PreScoreState> {
        state.read_or_compute(PRE_SCORE_STATE_KEY, || {
            PreScoreState(self.scorer.pod_requests(pod))
        })
    }

    /// The scorer in use (for tests and `--explain`).
    pub fn scorer(&self) -> &ResourceAllocationScorer {
        &self.scorer
    }

    fn ignored(&self, name: &str) -> bool {
        if !is_extended_resource_name(name) {
            return false;
        }
        if self.ignored_resources.contains(name) {
            return true;
        }
        let group = name.split('/').next().unwrap_or("");
        self.ignored_resource_groups.contains(group)
    }

    /// Every resource `req` does not fit on `node` (upstream `fitsRequest`), in upstream order:
    /// pods, cpu, memory, ephemeral-storage, then extended resources by name.
    pub fn fits_request(&self, req: &Resources, node: &NodeInfo) -> Vec<InsufficientResource> {
        let mut out = Vec::new();
        let alloc = node.allocatable();
        let used = node.requested();
        let pods = node.pod_count() as i64;
        if pods + 1 > alloc.pods {
            out.push(InsufficientResource {
                resource_name: "pods".into(),
                reason: REASON_TOO_MANY_PODS.into(),
                requested: 1,
                used: pods,
                capacity: alloc.pods,
                unresolvable: false,
            });
        }
        if req.milli_cpu == 0
            && req.memory == 0
            && req.ephemeral_storage == 0
            && req.scalar.is_empty()
        {
            return out;
        }
        let mut check = |name: &str, reason: &str, r: i64, u: i64, a: i64| {
            if r > 0 && r > a - u {
                out.push(InsufficientResource {
                    resource_name: name.to_string(),
                    reason: reason.to_string(),
                    requested: r,
                    used: u,
                    capacity: a,
                    unresolvable: r > a,
                });
            }
        };
        check(
            "cpu",
            REASON_INSUFFICIENT_CPU,
            req.milli_cpu,
            used.milli_cpu,
            alloc.milli_cpu,
        );
        check(
            "memory",
            REASON_INSUFFICIENT_MEMORY,
            req.memory,
            used.memory,
            alloc.memory,
        );
        check(
            "ephemeral-storage",
            REASON_INSUFFICIENT_EPHEMERAL_STORAGE,
            req.ephemeral_storage,
            used.ephemeral_storage,
            alloc.ephemeral_storage,
        );
        for (name, q) in &req.scalar {
            if *q == 0 || self.ignored(name) {
                continue;
            }
            let a = alloc.scalar.get(name).copied().unwrap_or(0);
            let u = used.scalar.get(name).copied().unwrap_or(0);
            if *q > a - u {
                out.push(InsufficientResource {
                    resource_name: name.clone(),
                    reason: format!("{REASON_INSUFFICIENT_PREFIX}{name}"),
                    requested: *q,
                    used: u,
                    capacity: a,
                    unresolvable: *q > a,
                });
            }
        }
        out
    }

    /// True when nothing is insufficient; allocation-free (the Filter's fast path).
    fn fits(&self, req: &Resources, node: &NodeInfo) -> bool {
        let (alloc, used) = (node.allocatable(), node.requested());
        if node.pod_count() as i64 + 1 > alloc.pods {
            return false;
        }
        let ok = |r: i64, u: i64, a: i64| !(r > 0 && r > a - u);
        if !ok(req.milli_cpu, used.milli_cpu, alloc.milli_cpu)
            || !ok(req.memory, used.memory, alloc.memory)
        {
            return false;
        }
        if req.ephemeral_storage == 0 && req.scalar.is_empty() {
            return true;
        }
        if !ok(
            req.ephemeral_storage,
            used.ephemeral_storage,
            alloc.ephemeral_storage,
        ) {
            return false;
        }
        req.scalar.iter().all(|(name, q)| {
            *q == 0
                || self.ignored(name)
                || *q
                    <= alloc.scalar.get(name).copied().unwrap_or(0)
                        - used.scalar.get(name).copied().unwrap_or(0)
        })
    }
}

impl Plugin for NodeResourcesFit {
    fn as_enqueue_extensions(&self) -> Option<&dyn k8s_sched_framework::EnqueueExtensions> {
        Some(self)
    }
    fn name(&self) -> &str {
        names::NODE_RESOURCES_FIT
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

impl PreFilterPlugin for NodeResourcesFit {
    fn pre_filter(
        &self,
        state: &mut CycleState,
        pod: &Pod,
        _handle: &dyn Handle,
    ) -> (Option<PreFilterResult>, Status) {
        state.write(PRE_FILTER_STATE_KEY, PreFilterState(pod_requests(pod)));
        (None, Status::success())
    }
}

impl NodeResourcesFit {
    /// The Filter status of a node `req` does not fit (upstream `Filter` after `fitsRequest`).
    fn misfit_status(&self, req: &Resources, node: &NodeInfo) -> Status {
        let insufficient = self.fits_request(req, node);
        let code = if insufficient.iter().any(|i| i.unresolvable) {
            Code::UnschedulableAndUnresolvable
        } else {
            Code::Unschedulable
        };
        Status::new(code, insufficient.into_iter().map(|i| i.reason))
    }
}

impl FilterPlugin for NodeResourcesFit {
    fn filter(&self, state: &CycleState, pod: &Pod, node: &NodeInfo) -> Status {
        let stored =
            state.read_or_compute(PRE_FILTER_STATE_KEY, || PreFilterState(pod_requests(pod)));
        let req = &stored.0;
        if self.fits(req, node) {
            return Status::success();
        }
        self.misfit_status(req, node)
    }

    fn filter_nodes(
        &self,
        state: &CycleState,
        pod: &Pod,
        nodes: &[&NodeInfo],
        failed: &mut Vec<(usize, Status)>,
    ) {
        let stored =
            state.read_or_compute(PRE_FILTER_STATE_KEY, || PreFilterState(pod_requests(pod)));
        let req = &stored.0;
        // Drop the zero and ignored extended resources once per batch instead of once per node:
        // `fits` skips them anyway, so the verdicts are the same (statuses use the full request).
        let trimmed;
        let fit_req = if req
            .scalar
            .iter()
            .any(|(name, q)| *q == 0 || self.ignored(name))
        {
            let mut r = req.clone();
            r.scalar.retain(|name, q| *q != 0 && !self.ignored(name));
            trimmed = r;
            &trimmed
        } else {
            req
        };
        for (i, node) in nodes.iter().enumerate() {
            if !self.fits(fit_req, node) {
                failed.push((i, self.misfit_status(req, node)));
            }
        }
    }
}

impl PreScorePlugin for NodeResourcesFit {
    fn pre_score(&self, state: &mut CycleState, pod: &Pod, _nodes: &[&NodeInfo]) -> Status {
        state.write(
            PRE_SCORE_STATE_KEY,
            PreScoreState(self.scorer.pod_requests(pod)),
        );
        Status::success()
    }
}

impl ScorePlugin for NodeResourcesFit {
    fn score(&self, state: &CycleState, pod: &Pod, node: &NodeInfo) -> Result<i64, Status> {
        if self.scorer.resources.is_empty() {
            return Err(Status::error("resources not found"));
        }
        Ok(self.scorer.score(node, &self.pre_score_state(state, pod).0))
    }

    fn score_nodes(
        &self,
        state: &CycleState,
        pod: &Pod,
        nodes: &[&NodeInfo],
        scores: &mut [i64],
    ) -> Result<(), Status> {
        if self.scorer.resources.is_empty() {
            return Err(Status::error("resources not found"));
        }
        let reqs = self.pre_score_state(state, pod);
        self.scorer.score_nodes(nodes, &reqs.0, scores);
        Ok(())
    }
}

impl NodeKernels for NodeResourcesFit {
    /// Pods that request only cpu and memory (no ephemeral storage, no counted extended
    /// resource): the node passes when it takes one more pod and has the requested cpu and
    /// memory free (`fits`, upstream `fitsRequest`).
    fn filter_kernel(&self, state: &CycleState, pod: &Pod) -> Option<NodeFilterKernel> {
        let stored =
            state.read_or_compute(PRE_FILTER_STATE_KEY, || PreFilterState(pod_requests(pod)));
        let req = &stored.0;
        if req.ephemeral_storage != 0
            || req
                .scalar
                .iter()
                .any(|(name, q)| *q != 0 && !self.ignored(name))
        {
            return None;
        }
        let need = |r: i64| if r > 0 { r } else { i64::MIN };
        Some(NodeFilterKernel {
            slow_flags: 0,
            min_free_pods: 1,
            min_free_milli_cpu: need(req.milli_cpu),
            min_free_memory: need(req.memory),
        })
    }

    /// LeastAllocated and MostAllocated on exactly cpu and memory (the default resources).
    fn score_kernel(&self, state: &CycleState, pod: &Pod) -> Option<NodeScoreKernel> {
        let strategy = match self.scorer.scorer {
            Scorer::LeastAllocated => AllocationStrategy::LeastAllocated,
            Scorer::MostAllocated => AllocationStrategy::MostAllocated,
            _ => return None,
        };
        let [cpu, memory] = self.scorer.resources.as_slice() else {
            return None;
        };
        if cpu.name != "cpu" || memory.name != "memory" {
            return None;
        }
        let reqs = self.pre_score_state(state, pod);
        let [milli_cpu, mem] = *reqs.0 else {
            return None;
        };
        Some(NodeScoreKernel::ResourceAllocation {
            strategy,
            milli_cpu,
            memory: mem,
            cpu_weight: cpu.weight,
            memory_weight: memory.weight,
            use_requested: self.scorer.use_requested,
        })
    }
}

/// Queueing hints (upstream `noderesources/fit.go` `EventsToRegister`,
/// `isSchedulableAfterPodEvent`, `isSchedulableAfterPodScaleDown`,
/// `isSchedulableAfterNodeChange`, `haveAnyRequestedResourcesIncreased`, `isFit`).
mod queueing_hints {
    use super::*;
    use k8s_sched_framework::events::{as_nodes, as_pods};
    use k8s_sched_framework::{
        ActionType, ClusterEvent, ClusterEventWithHint, EnqueueExtensions, EventObject,
        EventResource, QueueingHint,
    };
    use k8s_types::core::Node;

    use crate::plugins::helper::is_scalar_resource_name;

    impl EnqueueExtensions for NodeResourcesFit {
        /// Upstream with queueing hints and InPlacePodVerticalScaling (both on by default):
        /// Pod Delete|UpdatePodScaleDown and Node Add|UpdateNodeAllocatable, each with a hint.
        fn events_to_register(&self) -> Vec<ClusterEventWithHint> {
            vec![
                ClusterEventWithHint::with_hint(
                    EventResource::Pod,
                    ActionType::DELETE | ActionType::UPDATE_POD_SCALE_DOWN,
                ),
                ClusterEventWithHint::with_hint(
                    EventResource::Node,
                    ActionType::ADD | ActionType::UPDATE_NODE_ALLOCATABLE,
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
                return Ok(after_node_change(pod, original, modified));
            }
            let (original, modified) = as_pods(old, new)?;
            match (original, modified) {
                // Deleted: only a scheduled pod frees resources.
                (Some(o), None) if o.node_name().is_none() => Ok(QueueingHint::QueueSkip),
                (Some(_), None) => Ok(QueueingHint::Queue),
                (Some(o), Some(m)) if scaled_down_for(pod, o, m) => Ok(QueueingHint::Queue),
                (Some(_), Some(_)) => Ok(QueueingHint::QueueSkip),
                _ => Err("a pod event needs the old pod".to_string()),
            }
        }
    }

    /// Upstream `isSchedulableAfterPodScaleDown`: the pod itself was scaled down, or a scheduled
    /// pod's request of a resource `target` requests went down.
    fn scaled_down_for(target: &Pod, original: &Pod, modified: &Pod) -> bool {
        if modified.metadata.uid == target.metadata.uid {
            return true;
        }
        if modified.node_name().is_none() {
            return false;
        }
        let (o, m, t) = (
            pod_requests(original),
            pod_requests(modified),
            pod_requests(target),
        );
        (t.milli_cpu != 0 && o.milli_cpu > m.milli_cpu)
            || (t.memory != 0 && o.memory > m.memory)
            || (t.ephemeral_storage != 0 && o.ephemeral_storage > m.ephemeral_storage)
            || t.scalar.iter().any(|(name, v)| {
                *v != 0 && is_scalar_resource_name(name) && o.get(name) > m.get(name)
            })
    }

    /// Upstream `isFit`: the pod fits the node alone (no other pods, nothing ignored).
    fn is_fit(pod: &Pod, node: Option<&Node>) -> bool {
        let Some(node) = node else {
            return false;
        };
        let ni = NodeInfo::new(Arc::new(node.clone()));
        NodeResourcesFit::new(&NodeResourcesFitArgs::default())
            .fits_request(&pod_requests(pod), &ni)
            .is_empty()
    }

    /// Upstream `isSchedulableAfterNodeChange`.
    pub(super) fn after_node_change(
        pod: &Pod,
        original: Option<&Node>,
        modified: Option<&Node>,
    ) -> QueueingHint {
        if !is_fit(pod, modified) {
            return QueueingHint::QueueSkip;
        }
        match (original, modified) {
            (None, _) => QueueingHint::Queue,
            (Some(o), Some(m)) if requested_resources_increased(pod, o, m) => QueueingHint::Queue,
            _ => QueueingHint::QueueSkip,
        }
    }

    /// Upstream `haveAnyRequestedResourcesIncreased`: the allowed pod number, or the allocatable
    /// of a resource the pod requests, grew.
    pub(super) fn requested_resources_increased(
        pod: &Pod,
        original: &Node,
        modified: &Node,
    ) -> bool {
        let req = pod_requests(pod);
        let (o, m) = (
            Resources::from_list(&original.status.allocatable),
            Resources::from_list(&modified.status.allocatable),
        );
        if m.pods > o.pods {
            return true;
        }
        (req.milli_cpu > 0 && m.milli_cpu > o.milli_cpu)
            || (req.memory > 0 && m.memory > o.memory)
            || (req.ephemeral_storage > 0 && m.ephemeral_storage > o.ephemeral_storage)
            || req
                .scalar
                .iter()
                .any(|(name, q)| *q != 0 && m.get(name) > o.get(name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::args::{
        default_resources, RequestedToCapacityRatioParam, ResourceSpec, ScoringStrategy,
        UtilizationShapePoint, LEAST_ALLOCATED,
    };
    use crate::plugins::testutil::{node, pod, score_all};

    fn fit(type_: &str, resources: Vec<ResourceSpec>) -> NodeResourcesFit {
        NodeResourcesFit::new(&NodeResourcesFitArgs {
            scoring_strategy: Some(ScoringStrategy {
                type_: type_.into(),
                resources,
                requested_to_capacity_ratio: None,
            }),
            ..Default::default()
        })
    }

    // Upstream least_allocated_test.go TestLeastAllocatedScoringStrategy.
    #[test]
    fn least_allocated_upstream_cases() {
        let p = fit(LEAST_ALLOCATED, default_resources());
        let two = [
            ("cpu", "1000", "memory", "2000"),
            ("cpu", "2000", "memory", "3000"),
        ];
        // nothing scheduled, resources requested, differently sized nodes
        let nodes = [
            node("node1", "4000", "10000", &[], &[]),
            node("node2", "6000", "10000", &[], &[]),
        ];
        assert_eq!(score_all(&p, &pod(&two), &nodes), vec![37, 50]);
        // no resources requested, pods scheduled with resources
        let nodes = [
            node(
                "node1",
                "10000",
                "20000",
                &[],
                &[("3000", "0"), ("3000", "0")],
            ),
            node(
                "node2",
                "10000",
                "20000",
                &[],
                &[("3000", "0"), ("3000", "5000")],
            ),
        ];
        assert_eq!(score_all(&p, &pod(&[]), &nodes), vec![70, 57]);
        // resources requested, pods scheduled with resources, differently sized nodes
        let nodes = [
            node("node1", "10000", "20000", &[], &[("3000", "0")]),
            node("node2", "10000", "50000", &[], &[("3000", "5000")]),
        ];
        assert_eq!(score_all(&p, &pod(&two), &nodes), vec![57, 60]);
        // requested resources exceed node capacity
        let nodes = [
            node("node1", "4000", "10000", &[], &[("3000", "0")]),
            node("node2", "4000", "10000", &[], &[("3000", "5000")]),
        ];
        assert_eq!(
            score_all(&p, &pod(&[("cpu", "3000", "memory", "0")]), &nodes),
            vec![50, 25]
        );
        // different weight on CPU and memory
        let w = fit(
            LEAST_ALLOCATED,
            vec![ResourceSpec::new("memory", 2), ResourceSpec::new("cpu", 1)],
        );
        let nodes = [
            node("node1", "4000", "10000", &[], &[]),
            node("node2", "6000", "10000", &[], &[]),
        ];
        assert_eq!(score_all(&w, &pod(&two), &nodes), vec![41, 50]);
    }

    // Upstream most_allocated_test.go TestMostAllocatedScoringStrategy.
    #[test]
    fn most_allocated_upstream_cases() {
        let p = fit(MOST_ALLOCATED, default_resources());
        let two = [
            ("cpu", "1000", "memory", "2000"),
            ("cpu", "2000", "memory", "3000"),
        ];
        let nodes = [
            node("node1", "4000", "10000", &[], &[]),
            node("node2", "6000", "10000", &[], &[]),
        ];
        assert_eq!(score_all(&p, &pod(&two), &nodes), vec![62, 50]);
        let nodes = [
            node(
                "node1",
                "10000",
                "20000",
                &[],
                &[("3000", "0"), ("3000", "0")],
            ),
            node(
                "node2",
                "10000",
                "20000",
                &[],
                &[("3000", "0"), ("3000", "5000")],
            ),
        ];
        assert_eq!(score_all(&p, &pod(&[]), &nodes), vec![30, 42]);
        let nodes = [
            node("node1", "10000", "20000", &[], &[("3000", "0")]),
            node("node2", "10000", "20000", &[], &[("3000", "5000")]),
        ];
        assert_eq!(score_all(&p, &pod(&two), &nodes), vec![42, 55]);
        // resources requested equal node capacity
        let eq = [
            ("cpu", "2000", "memory", "4000"),
            ("cpu", "3000", "memory", "5000"),
        ];
        let nodes = [
            node("node1", "5000", "10000", &[], &[]),
            node("node2", "10000", "9000", &[], &[]),
        ];
        assert_eq!(score_all(&p, &pod(&eq), &nodes), vec![95, 75]);
    }

    // Upstream requested_to_capacity_ratio_test.go TestRequestedToCapacityRatioScoringStrategy.
    #[test]
    fn requested_to_capacity_ratio_upstream_case() {
        let p = NodeResourcesFit::new(&NodeResourcesFitArgs {
            scoring_strategy: Some(ScoringStrategy {
                type_: REQUESTED_TO_CAPACITY_RATIO.into(),
                resources: default_resources(),
                requested_to_capacity_ratio: Some(RequestedToCapacityRatioParam {
                    shape: vec![
                        UtilizationShapePoint {
                            utilization: 0,
                            score: 10,
                        },
                        UtilizationShapePoint {
                            utilization: 100,
                            score: 0,
                        },
                    ],
                }),
            }),
            ..Default::default()
        });
        let nodes = [
            node("node1", "4000", "10000", &[], &[("3000", "5000")]),
            node("node2", "6000", "10000", &[], &[("3000", "5000")]),
        ];
        assert_eq!(score_all(&p, &pod(&[]), &nodes), vec![38, 50]);
    }

    #[test]
    fn filter_reasons_and_unresolvable() {
        let p = fit(LEAST_ALLOCATED, default_resources());
        let n = node(
            "n",
            "2",
            "1Gi",
            &[("nvidia.com/gpu", "1")],
            &[("1500m", "0")],
        );
        let big = pod(&[("cpu", "1", "memory", "2Gi")]);
        let mut state = CycleState::new();
        state.write(PRE_FILTER_STATE_KEY, PreFilterState(pod_requests(&big)));
        let s = p.filter(&state, &big, &n);
        assert_eq!(s.reasons(), ["Insufficient cpu", "Insufficient memory"]);
        // 2Gi > the node's whole 1Gi: preemption cannot help.
        assert_eq!(s.code(), Code::UnschedulableAndUnresolvable);
        let small = pod(&[("cpu", "1", "memory", "1Mi")]);
        let s = p.filter(&CycleState::new(), &small, &n);
        assert_eq!(s.reasons(), ["Insufficient cpu"]);
        assert_eq!(s.code(), Code::Unschedulable);
        let mut gpu = pod(&[("cpu", "100m", "memory", "1Mi")]);
        gpu.spec.containers[0].resources.requests.insert(
            "nvidia.com/gpu".into(),
            k8s_types::Quantity::parse("2").unwrap(),
        );
        assert_eq!(
            p.filter(&CycleState::new(), &gpu, &n).reasons(),
            ["Insufficient nvidia.com/gpu"]
        );
    }
}
