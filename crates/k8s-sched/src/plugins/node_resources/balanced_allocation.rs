//! NodeResourcesBalancedAllocation (PreScore, Score): favors nodes whose resource usage fractions
//! would be close to each other after placing the pod: score = (1 - std(fractions)) * 100,
//! truncated. Uses plain requests (no non-zero defaults); PreScore returns Skip for pods that
//! request none of the resources. Upstream
//! `pkg/scheduler/framework/plugins/noderesources/balanced_allocation.go`.

use std::borrow::Cow;
use std::sync::Arc;

use k8s_sched_framework::{
    CycleState, NodeInfo, Plugin, PreScorePlugin, ScorePlugin, Status, MAX_NODE_SCORE,
};
use k8s_types::core::Pod;

use super::resource_allocation::{ResourceAllocationScorer, ResourceUse, Scorer};
use crate::config::args::NodeResourcesBalancedAllocationArgs;
use crate::plugins::names;
use crate::runtime::kernel::{NodeKernels, NodeScoreKernel};
use k8s_sched_framework::ConfigError;
use k8s_sched_framework::PluginArgs;

/// CycleState key of the pod's per-resource requests.
pub const PRE_SCORE_STATE_KEY: &str = "PreScoreNodeResourcesBalancedAllocation";

/// The pod's per-resource requests computed at PreScore.
#[derive(Clone, Debug, Default)]
pub struct PreScoreState(pub Vec<i64>);

/// The NodeResourcesBalancedAllocation plugin.
#[derive(Debug)]
pub struct NodeResourcesBalancedAllocation {
    scorer: ResourceAllocationScorer,
}

impl NodeResourcesBalancedAllocation {
    /// Builds the plugin from args (defaulted here).
    pub fn new(args: &NodeResourcesBalancedAllocationArgs) -> NodeResourcesBalancedAllocation {
        let args = args.clone().defaulted();
        NodeResourcesBalancedAllocation {
            scorer: ResourceAllocationScorer {
                resources: args.resources,
                use_requested: true,
                scorer: Scorer::Balanced,
            },
        }
    }

    /// Factory: decodes, defaults and validates `NodeResourcesBalancedAllocationArgs`.
    ///
    /// # Errors
    /// Decode errors and upstream validation errors (weights must be 1, names unique).
    pub fn factory(a: &PluginArgs<'_>) -> Result<Arc<dyn Plugin>, ConfigError> {
        let args: NodeResourcesBalancedAllocationArgs = a.decode()?;
        let args = args.defaulted();
        a.check(args.validate(&a.path))?;
        Ok(Arc::new(NodeResourcesBalancedAllocation::new(&args)))
    }

    /// The pod's per-resource scoring requests as PreScore stored them, else computed now.
    fn pre_score_state<'a>(&self, state: &'a CycleState, pod: &Pod) -> Cow<'a, PreScoreState> {
        state.read_or_compute(PRE_SCORE_STATE_KEY, || {
            PreScoreState(self.scorer.pod_requests(pod))
        })
    }
}

impl Plugin for NodeResourcesBalancedAllocation {
    fn name(&self) -> &str {
        names::NODE_RESOURCES_BALANCED_ALLOCATION
    }
    fn as_pre_score(&self) -> Option<&dyn PreScorePlugin> {
        Some(self)
    }
    fn as_score(&self) -> Option<&dyn ScorePlugin> {
        Some(self)
    }
}

impl PreScorePlugin for NodeResourcesBalancedAllocation {
    fn pre_score(&self, state: &mut CycleState, pod: &Pod, _nodes: &[&NodeInfo]) -> Status {
        let reqs = self.scorer.pod_requests(pod);
        if ResourceAllocationScorer::is_best_effort(&reqs) {
            return Status::skip();
        }
        state.write(PRE_SCORE_STATE_KEY, PreScoreState(reqs));
        Status::success()
    }
}

impl ScorePlugin for NodeResourcesBalancedAllocation {
    fn score(&self, state: &CycleState, pod: &Pod, node: &NodeInfo) -> Result<i64, Status> {
        Ok(self.scorer.score(node, &self.pre_score_state(state, pod).0))
    }

    fn score_nodes(
        &self,
        state: &CycleState,
        pod: &Pod,
        nodes: &[&NodeInfo],
        scores: &mut [i64],
    ) -> Result<(), Status> {
        let reqs = self.pre_score_state(state, pod);
        self.scorer.score_nodes(nodes, &reqs.0, scores);
        Ok(())
    }
}

impl NodeKernels for NodeResourcesBalancedAllocation {
    /// Exactly cpu and memory (the default resources).
    fn score_kernel(&self, state: &CycleState, pod: &Pod) -> Option<NodeScoreKernel> {
        let [cpu, memory] = self.scorer.resources.as_slice() else {
            return None;
        };
        if cpu.name != "cpu" || memory.name != "memory" || !self.scorer.use_requested {
            return None;
        }
        let reqs = self.pre_score_state(state, pod);
        let [milli_cpu, mem] = *reqs.0 else {
            return None;
        };
        Some(NodeScoreKernel::BalancedCpuMemory {
            milli_cpu,
            memory: mem,
        })
    }
}

/// Upstream `balancedResourceScorer`: `(1 - std) * 100` truncated, `std` the standard deviation
/// of the resources' usage fractions (each capped at 1; a resource the node has none of left
/// out): `|f0 - f1| / 2` for two, 0 for fewer.
#[inline(always)]
pub fn balanced_resource_score(resources: impl Iterator<Item = ResourceUse> + Clone) -> i64 {
    let fractions = resources
        .filter(|r| r.allocatable != 0)
        .map(|r| fraction(r.requested, r.allocatable));
    let (mut count, mut total) = (0usize, 0f64);
    let (mut first, mut second) = (0f64, 0f64);
    for f in fractions.clone() {
        match count {
            0 => first = f,
            1 => second = f,
            _ => {}
        }
        total += f;
        count += 1;
    }
    let std = match count {
        2 => ((first - second) / 2.0).abs(),
        c if c > 2 => {
            let mean = total / c as f64;
            let sum: f64 = fractions.map(|f| (f - mean) * (f - mean)).sum();
            (sum / c as f64).sqrt()
        }
        _ => 0.0,
    };
    // Upstream truncates: int64((1 - std) * float64(MaxNodeScore)).
    ((1.0 - std) * MAX_NODE_SCORE as f64) as i64
}

/// `requested / allocatable`, capped at 1.
#[inline(always)]
fn fraction(requested: i64, allocatable: i64) -> f64 {
    let f = requested as f64 / allocatable as f64;
    if f > 1.0 {
        1.0
    } else {
        f
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::args::ResourceSpec;
    use crate::plugins::testutil::{container, node_with_pods, pod, score_all};

    // The pods of upstream balanced_allocation_test.go TestNodeResourcesBalancedAllocation.
    fn cpu_only() -> Pod {
        pod(&[
            ("cpu", "1000m", "memory", "0"),
            ("cpu", "2000m", "memory", "0"),
        ])
    }
    fn cpu_and_memory() -> Pod {
        pod(&[
            ("cpu", "1000m", "memory", "2000"),
            ("cpu", "2000m", "memory", "3000"),
        ])
    }
    fn cpu_and_memory_and_gpu() -> Pod {
        let mut p = cpu_and_memory();
        p.spec.containers[1].resources.requests.insert(
            "nvidia.com/gpu".into(),
            k8s_types::Quantity::parse("3").unwrap(),
        );
        p
    }

    #[test]
    fn upstream_cpu_memory_cases() {
        let ba = NodeResourcesBalancedAllocation::new(&Default::default());
        // nothing scheduled, resources requested, differently sized nodes: 87, 100
        let nodes = [
            node_with_pods("node1", "4000m", "10000", &[], vec![]),
            node_with_pods("node2", "6000m", "10000", &[], vec![]),
        ];
        assert_eq!(score_all(&ba, &cpu_and_memory(), &nodes), vec![87, 100]);
        // resources requested, pods scheduled with resources: 82, 95
        let nodes = [
            node_with_pods("node1", "10000m", "20000", &[], vec![cpu_only()]),
            node_with_pods("node2", "10000m", "20000", &[], vec![cpu_and_memory()]),
        ];
        assert_eq!(score_all(&ba, &cpu_and_memory(), &nodes), vec![82, 95]);
        // ... differently sized nodes: 82, 80
        let nodes = [
            node_with_pods("node1", "10000m", "20000", &[], vec![cpu_only()]),
            node_with_pods("node2", "10000m", "50000", &[], vec![cpu_and_memory()]),
        ];
        assert_eq!(score_all(&ba, &cpu_and_memory(), &nodes), vec![82, 80]);
        // requested resources at node capacity: 50, 75
        let nodes = [
            node_with_pods("node1", "6000m", "10000", &[], vec![cpu_only()]),
            node_with_pods("node2", "6000m", "10000", &[], vec![cpu_and_memory()]),
        ];
        assert_eq!(score_all(&ba, &cpu_only(), &nodes), vec![50, 75]);
    }

    #[test]
    fn upstream_scalar_resource_cases() {
        let ba = NodeResourcesBalancedAllocation::new(&NodeResourcesBalancedAllocationArgs {
            resources: vec![
                ResourceSpec::new("cpu", 1),
                ResourceSpec::new("memory", 1),
                ResourceSpec::new("nvidia.com/gpu", 1),
            ],
        });
        // include scalar resource on a node for balanced resource allocation: 70, 65
        let mut gpu_pod = pod(&[]);
        let mut c = container("memory", "0", "nvidia.com/gpu", "1");
        c.name = "c".into();
        gpu_pod.spec.containers.push(c);
        let nodes = [
            node_with_pods(
                "node1",
                "3500m",
                "40000",
                &[("nvidia.com/gpu", "8")],
                vec![cpu_and_memory_and_gpu()],
            ),
            node_with_pods(
                "node2",
                "3500m",
                "40000",
                &[("nvidia.com/gpu", "8")],
                vec![cpu_and_memory()],
            ),
        ];
        assert_eq!(score_all(&ba, &gpu_pod, &nodes), vec![70, 65]);
        // node without the scalar resource should skip the scalar resource: 63, 63
        let nodes = [
            node_with_pods(
                "node1",
                "3500m",
                "40000",
                &[("nvidia.com/gpu", "8")],
                vec![],
            ),
            node_with_pods("node2", "3500m", "40000", &[], vec![]),
        ];
        assert_eq!(score_all(&ba, &cpu_and_memory(), &nodes), vec![63, 63]);
    }

    #[test]
    fn best_effort_pods_skip() {
        let ba = NodeResourcesBalancedAllocation::new(&Default::default());
        let mut state = CycleState::new();
        assert!(ba.pre_score(&mut state, &pod(&[]), &[]).is_skip());
    }
}
