//! Names of the GPU-sharing plugins, as registered in the in-tree registry. The score plugins keep
//! the FGD paper simulator's plugin names (hkust-adsl/kubernetes-scheduler-simulator
//! `pkg/type/const.go`); the filter/reserve plugin is that simulator's `Open-Gpu-Share`, renamed to a
//! Kubernetes-style name.

/// Per-GPU fit of whole and shared GPUs (PreFilter, Filter, Reserve).
pub const GPU_SHARE: &str = "GpuShare";
/// A uniformly random feasible node (PreScore, Score).
pub const RANDOM_SCORE: &str = "RandomScore";
/// Tetris' dot product of free and requested (CPU, GPU).
pub const DOT_PRODUCT_SCORE: &str = "DotProductScore";
/// Keep pods with the same GPU request together.
pub const GPU_CLUSTERING_SCORE: &str = "GpuClusteringScore";
/// Prefer partly used GPUs, then partly used nodes.
pub const GPU_PACKING_SCORE: &str = "GpuPackingScore";
/// Least free (CPU, GPU) after placement.
pub const BEST_FIT_SCORE: &str = "BestFitScore";
/// Fragmentation Gradient Descent.
pub const FGD_SCORE: &str = "FGDScore";
