//! The placement policies a replay can run, and the `KubeSchedulerConfiguration` of each: the six
//! policies of the FGD paper (Weng et al., USENIX ATC '23, §6.1: Random, DotProd, Clustering,
//! Packing, BestFit, FGD), each a Score plugin of k8s-sched with the GPU selection the paper's
//! experiment scripts give it (hkust-adsl/kubernetes-scheduler-simulator
//! `experiments/run_scripts/generate_run_scripts.py`, `scripts/generate_config_and_run.py`), and,
//! for comparison, the blueprint's `binpack` / `spread` / `balanced` presets and upstream's
//! `default` profile.
//!
//! Every profile filters with GpuShare (per-GPU fit), NodeResourcesFit and NodeAffinity, reserves
//! GPUs with GpuShare, and scores every feasible node (`percentageOfNodesToScore: 100`, as the
//! paper's scheduler configuration). The paper-mode replay also makes NodeResourcesFit's Filter
//! ignore the two GPU resources ([`ignore_gpu_resources`]).

use k8s_sched::config::{
    KubeSchedulerConfiguration, Plugin, PluginConfig, Plugins, TypicalPod, TypicalPodArgs,
};
use k8s_sched::plugins::gpu::names as gpu;
use k8s_sched::plugins::names;

use super::TraceError;

/// A placement policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Policy {
    /// RandomScore, random GPU.
    Random,
    /// DotProductScore, best-fit GPU.
    DotProduct,
    /// GpuClusteringScore, best-fit GPU.
    GpuClustering,
    /// GpuPackingScore, best-fit GPU.
    GpuPacking,
    /// BestFitScore, best-fit GPU.
    BestFit,
    /// FGDScore, the GPU FGD prefers.
    Fgd,
    /// The blueprint's binpack: NodeResourcesFit MostAllocated (cpu, memory).
    Binpack,
    /// The blueprint's spread: NodeResourcesFit LeastAllocated (cpu, memory).
    Spread,
    /// The blueprint's balanced: NodeResourcesBalancedAllocation only.
    Balanced,
    /// Upstream's default profile.
    Default,
}

impl Policy {
    /// Every policy, paper policies first.
    pub const ALL: [Policy; 10] = [
        Policy::Random,
        Policy::DotProduct,
        Policy::GpuClustering,
        Policy::GpuPacking,
        Policy::BestFit,
        Policy::Fgd,
        Policy::Binpack,
        Policy::Spread,
        Policy::Balanced,
        Policy::Default,
    ];

    /// The paper's six policies.
    pub const PAPER: [Policy; 6] = [
        Policy::Random,
        Policy::DotProduct,
        Policy::GpuClustering,
        Policy::GpuPacking,
        Policy::BestFit,
        Policy::Fgd,
    ];

    /// CLI names, in [`Policy::ALL`] order.
    pub const NAMES: [&'static str; 10] = [
        "random",
        "dot_product",
        "gpu_clustering",
        "gpu_packing",
        "best_fit",
        "fgd",
        "binpack",
        "spread",
        "balanced",
        "default",
    ];

    /// Parses a CLI name (also the paper's labels, case-insensitive: `DotProd`, `Clustering`,
    /// `Packing`, `BestFit`, `FGD`).
    ///
    /// # Errors
    /// [`TraceError::UnknownPolicy`].
    pub fn parse(name: &str) -> Result<Policy, TraceError> {
        let n = name.to_ascii_lowercase().replace('-', "_");
        let p = match n.as_str() {
            "random" => Policy::Random,
            "dot_product" | "dotprod" | "dotproduct" => Policy::DotProduct,
            "gpu_clustering" | "clustering" | "gpuclustering" => Policy::GpuClustering,
            "gpu_packing" | "packing" | "gpupacking" => Policy::GpuPacking,
            "best_fit" | "bestfit" => Policy::BestFit,
            "fgd" => Policy::Fgd,
            "binpack" => Policy::Binpack,
            "spread" => Policy::Spread,
            "balanced" => Policy::Balanced,
            "default" => Policy::Default,
            _ => return Err(TraceError::UnknownPolicy(name.to_string())),
        };
        Ok(p)
    }

    /// The CLI name.
    pub fn name(self) -> &'static str {
        let i = Policy::ALL.iter().position(|p| *p == self).unwrap_or(0);
        Policy::NAMES[i]
    }

    /// The label of the paper's result files (`derived_unalloc_gpu_summary.csv` `policy`), or the
    /// CLI name for the non-paper policies.
    pub fn paper_label(self) -> &'static str {
        match self {
            Policy::Random => "Random",
            Policy::DotProduct => "DotProd",
            Policy::GpuClustering => "Clustering",
            Policy::GpuPacking => "Packing",
            Policy::BestFit => "BestFit",
            Policy::Fgd => "FGD",
            other => other.name(),
        }
    }

    /// The Score plugin of a paper policy.
    pub fn score_plugin(self) -> Option<&'static str> {
        match self {
            Policy::Random => Some(gpu::RANDOM_SCORE),
            Policy::DotProduct => Some(gpu::DOT_PRODUCT_SCORE),
            Policy::GpuClustering => Some(gpu::GPU_CLUSTERING_SCORE),
            Policy::GpuPacking => Some(gpu::GPU_PACKING_SCORE),
            Policy::BestFit => Some(gpu::BEST_FIT_SCORE),
            Policy::Fgd => Some(gpu::FGD_SCORE),
            _ => None,
        }
    }

    /// GpuShare's `gpuSelMethod` (the paper's `-gpusel`: `random` for Random, FGD's own for FGD,
    /// best fit otherwise).
    pub fn gpu_sel_method(self) -> &'static str {
        match self {
            Policy::Random => "random",
            Policy::Fgd => "FGD",
            _ => "best",
        }
    }

    /// The scheduler configuration of this policy (one profile `replay-<name>`), with `seed` for
    /// the random draws and the target workload `typical` for FGD.
    ///
    /// # Errors
    /// [`TraceError::Config`] when the preset is missing (never for the known policies).
    pub fn scheduler_config(
        self,
        seed: u64,
        typical: &[TypicalPod],
    ) -> Result<KubeSchedulerConfiguration, TraceError> {
        let preset = match self {
            Policy::Binpack => "binpack",
            Policy::Spread => "spread",
            Policy::Balanced => "balanced",
            _ => "default",
        };
        let mut cfg =
            KubeSchedulerConfiguration::preset(preset).ok_or_else(|| TraceError::Config {
                policy: self.name().into(),
                message: format!("no preset {preset:?}"),
            })?;
        cfg.percentage_of_nodes_to_score = Some(100);
        let profile = &mut cfg.profiles[0];
        profile.scheduler_name = Some(format!("replay-{}", self.name()));
        let mut plugins = profile.plugins.take().unwrap_or_default();
        add_gpu_share(&mut plugins);
        if let Some(score) = self.score_plugin() {
            // The paper's profile: every default score plugin off, the policy's with weight 1000.
            plugins.score.disabled = vec![Plugin::named("*")];
            plugins.score.enabled = vec![Plugin::weighted(score, 1000)];
            plugins.pre_score.disabled = vec![Plugin::named("*")];
            plugins.pre_score.enabled = vec![Plugin::named(score)];
            if self == Policy::Fgd {
                plugins.pre_filter.enabled.push(Plugin::named(score));
            }
        }
        profile.plugins = Some(plugins);
        let typical_args: Vec<TypicalPodArgs> = typical.iter().map(TypicalPodArgs::from).collect();
        profile.plugin_config.push(PluginConfig {
            name: gpu::GPU_SHARE.into(),
            args: Some(serde_json::json!({
                "gpuSelMethod": self.gpu_sel_method(),
                "seed": seed,
                "typicalPods": if self == Policy::Fgd { typical_args.clone() } else { Vec::new() },
            })),
        });
        match self {
            Policy::Random => profile.plugin_config.push(PluginConfig {
                name: gpu::RANDOM_SCORE.into(),
                args: Some(serde_json::json!({ "seed": seed })),
            }),
            Policy::DotProduct => profile.plugin_config.push(PluginConfig {
                name: gpu::DOT_PRODUCT_SCORE.into(),
                args: Some(serde_json::json!({ "dimExtMethod": "merge", "normMethod": "max" })),
            }),
            Policy::Fgd => profile.plugin_config.push(PluginConfig {
                name: gpu::FGD_SCORE.into(),
                args: Some(serde_json::json!({ "typicalPods": typical_args })),
            }),
            _ => {}
        }
        Ok(cfg)
    }
}

/// The GPU resources NodeResourcesFit's Filter leaves to GpuShare in a replay.
pub const IGNORED_GPU_RESOURCES: [&str; 2] = [
    k8s_types::core::resource_names::NVIDIA_GPU,
    k8s_types::gpushare::GPU_MILLI,
];

/// Adds [`IGNORED_GPU_RESOURCES`] to NodeResourcesFit's `ignoredResources` (creating its args when
/// the profile has none). The paper-mode replay does this, as in the simulator, where a pod's GPU
/// request is an annotation only the GPU-share plugin reads: with every pod's GPU indices known at
/// once (each pod is reserved and added to the snapshot before the next), GpuShare's per-GPU check
/// implies the node-level sums (a whole-GPU pod needs `k` fully free GPUs, a sharing pod one GPU
/// with `m` milli free), so no result changes and the filter skips two string-keyed map lookups per
/// node. Not for the full control plane (the timeline), where pods assumed but not yet bound make
/// the node-level sums matter.
pub fn ignore_gpu_resources(plugin_config: &mut Vec<PluginConfig>) {
    let pos = match plugin_config
        .iter()
        .position(|c| c.name == names::NODE_RESOURCES_FIT)
    {
        Some(i) => i,
        None => {
            plugin_config.push(PluginConfig {
                name: names::NODE_RESOURCES_FIT.into(),
                args: None,
            });
            plugin_config.len() - 1
        }
    };
    let args = plugin_config[pos]
        .args
        .get_or_insert_with(|| serde_json::json!({}));
    if !args.is_object() {
        *args = serde_json::json!({});
    }
    if let Some(obj) = args.as_object_mut() {
        let list = obj
            .entry("ignoredResources")
            .or_insert_with(|| serde_json::json!([]));
        if !list.is_array() {
            *list = serde_json::json!([]);
        }
        if let Some(arr) = list.as_array_mut() {
            for r in IGNORED_GPU_RESOURCES {
                if !arr.iter().any(|v| v == r) {
                    arr.push(serde_json::json!(r));
                }
            }
        }
    }
}

/// Enables GpuShare at PreFilter, Filter (first, the most selective check) and Reserve; keeps
/// NodeResourcesFit and NodeAffinity as the other filters.
fn add_gpu_share(plugins: &mut Plugins) {
    plugins
        .pre_filter
        .enabled
        .push(Plugin::named(gpu::GPU_SHARE));
    plugins.filter.disabled = vec![Plugin::named("*")];
    plugins.filter.enabled = vec![
        Plugin::named(gpu::GPU_SHARE),
        Plugin::named(names::NODE_RESOURCES_FIT),
        Plugin::named(names::NODE_AFFINITY),
    ];
    plugins.reserve.enabled.push(Plugin::named(gpu::GPU_SHARE));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_paper_labels() {
        for p in Policy::ALL {
            assert_eq!(Policy::parse(p.name()), Ok(p));
        }
        assert_eq!(Policy::parse("DotProd"), Ok(Policy::DotProduct));
        assert_eq!(Policy::Fgd.paper_label(), "FGD");
        assert!(Policy::parse("nope").is_err());
    }

    #[test]
    fn node_resources_fit_leaves_gpus_to_gpu_share() {
        for p in [Policy::Fgd, Policy::Binpack] {
            let mut cfg = p.scheduler_config(42, &[]).expect("config");
            ignore_gpu_resources(&mut cfg.profiles[0].plugin_config);
            let fit: Vec<&PluginConfig> = cfg.profiles[0]
                .plugin_config
                .iter()
                .filter(|c| c.name == names::NODE_RESOURCES_FIT)
                .collect();
            assert_eq!(fit.len(), 1, "{p:?}");
            let args = fit[0].args.as_ref().expect("args");
            assert_eq!(
                args["ignoredResources"],
                serde_json::json!(["nvidia.com/gpu", "alibabacloud.com/gpu-milli"])
            );
            if p == Policy::Binpack {
                // The preset's scoring strategy is kept.
                assert_eq!(args["scoringStrategy"]["type"], "MostAllocated");
            }
        }
    }

    #[test]
    fn every_policy_builds_a_valid_scheduler() {
        for p in Policy::ALL {
            let cfg = p.scheduler_config(42, &[]).expect("config");
            let s = k8s_sched::Scheduler::new(cfg);
            assert!(s.is_ok(), "{p:?}: {:?}", s.err());
        }
    }
}
