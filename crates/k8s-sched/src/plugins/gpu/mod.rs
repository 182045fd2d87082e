//! GPU sharing and the FGD paper's placement policies (Weng et al., "Beware of Fragmentation:
//! Scheduling GPU-Sharing Workloads with Fragmentation Gradient Descent", USENIX ATC '23), as
//! scheduler plugins. Facts (formulas, constants, tie rules) come from the paper and its public
//! simulator, hkust-adsl/kubernetes-scheduler-simulator; see `docs/trace-replay.md`.
//!
//! - [`share`]: `GpuShare` (PreFilter, Filter, Reserve): per-GPU fit of whole and fractional GPUs,
//!   and the GPU index recorded at binding.
//! - Score plugins, one per policy: [`random`] (`RandomScore`), [`dot_product`]
//!   (`DotProductScore`), [`gpu_clustering`] (`GpuClusteringScore`), [`gpu_packing`]
//!   (`GpuPackingScore`), [`best_fit`] (`BestFitScore`), [`fgd`] (`FGDScore`).
//! - Shared pieces: [`shape`] (pod and node as the policies see them), [`frag`] (the paper's
//!   fragmentation measure and target workload), [`names`].
//!
//! None of these is in the default profile: a KubeSchedulerConfiguration enables them, e.g.
//! `filter: {enabled: [{name: GpuShare}]}, reserve: {enabled: [{name: GpuShare}]},
//! score: {enabled: [{name: FGDScore}]}`.

pub mod best_fit;
pub mod dot_product;
pub mod fgd;
pub mod frag;
pub mod gpu_clustering;
pub mod gpu_packing;
pub mod names;
pub mod random;
pub mod shape;
pub mod share;

use k8s_sched_framework::PluginFactory;

/// The GPU plugins' registry entries (merged into the in-tree registry).
pub fn registry_entries() -> Vec<(&'static str, PluginFactory)> {
    vec![
        (names::GPU_SHARE, Box::new(share::GpuShare::factory)),
        (names::RANDOM_SCORE, Box::new(random::RandomScore::factory)),
        (
            names::DOT_PRODUCT_SCORE,
            Box::new(dot_product::DotProductScore::factory),
        ),
        (
            names::GPU_CLUSTERING_SCORE,
            Box::new(gpu_clustering::GpuClusteringScore::factory),
        ),
        (
            names::GPU_PACKING_SCORE,
            Box::new(gpu_packing::GpuPackingScore::factory),
        ),
        (
            names::BEST_FIT_SCORE,
            Box::new(best_fit::BestFitScore::factory),
        ),
        (names::FGD_SCORE, Box::new(fgd::Fgd::factory)),
    ]
}
