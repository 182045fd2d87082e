//! Replaying production GPU cluster traces: Alibaba's `cluster-trace-gpu-v2023` ("openb"),
//! released with Weng et al., "Beware of Fragmentation: Scheduling GPU-Sharing Workloads with
//! Fragmentation Gradient Descent", USENIX ATC '23. Cite the paper wherever the data is used.
//!
//! - `openb`: the node and pod CSVs as [`Trace`], and rows as ordinary Node / Pod manifests.
//! - `replay`: the paper's replay protocol on the scheduler framework (GPU nodes only, pods
//!   shuffled with a seed, workload inflated to 130 % of GPU capacity, one attempt per pod, no
//!   departures), one policy at a time.
//! - [`metrics`]: the paper's discretisation of allocation and fragmentation against arrived
//!   workload, and summaries over seeds.
//! - [`timeline`]: pods arriving at `creation_time` and leaving at `deletion_time` through the
//!   whole control plane, skipping idle time, with per-tick allocation and pending times.
//! - `policy`: the policy names and the KubeSchedulerConfiguration each one runs with.
//!
//! See `docs/trace-replay.md`.

pub mod metrics;
pub(crate) mod openb;
/// The importer on text (what `scenario_objects` reads from the files; the fuzz targets feed it bytes).
pub use openb::{parse_nodes, parse_pods};
pub(crate) mod policy;
pub(crate) mod replay;
pub mod timeline;

pub use openb::{Trace, TraceNode, TracePod};

use std::path::Path;

use k8s_types::object::Object;

use crate::manifest::{ManifestError, Source};
use crate::scenario::TraceSpec;

/// The Node and Pod objects of a scenario's `spec.trace` (paths relative to the scenario file).
/// Rows the importer accepts but flags (see `openb::read_pods_with_warnings`) add one line
/// each to `warnings`, prefixed with the file and line.
///
/// # Errors
/// A [`ManifestError`] at `spec.trace` when a file is missing or malformed.
pub fn scenario_objects(
    spec: &TraceSpec,
    scenario_file: &Path,
    source: &Source,
    warnings: &mut Vec<String>,
) -> Result<Vec<(Object, Source)>, ManifestError> {
    let base = scenario_file.parent().unwrap_or_else(|| Path::new("."));
    let err = |field: &str, message: String| ManifestError {
        source_loc: source.clone(),
        path: format!("spec.trace.{field}"),
        message,
    };
    let nodes_path = base.join(&spec.nodes);
    let pods_path = base.join(&spec.pods);
    let nodes = openb::read_nodes(&nodes_path).map_err(|e| err("nodes", e.to_string()))?;
    let (pods, flagged) =
        openb::read_pods_with_warnings(&pods_path).map_err(|e| err("pods", e.to_string()))?;
    warnings.extend(flagged);
    let at = |p: &Path| Source {
        file: p.display().to_string(),
        line: 0,
    };
    let mut out = Vec::new();
    for n in nodes.iter().take(spec.node_limit.unwrap_or(usize::MAX)) {
        out.push((Object::Node(Box::new(n.to_node())), at(&nodes_path)));
    }
    for p in pods.iter().take(spec.limit.unwrap_or(usize::MAX)) {
        out.push((Object::Pod(Box::new(p.to_pod())), at(&pods_path)));
    }
    Ok(out)
}
pub use policy::Policy;
pub use replay::{replay_paper, PaperOptions, Placement, Prepared, ReplayRun};

/// Why a trace could not be read or replayed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TraceError {
    /// A file could not be read.
    #[error("{path}: {message}")]
    Io {
        /// The path.
        path: String,
        /// The OS error.
        message: String,
    },
    /// A row or header is malformed.
    #[error("{file}:{line}: {message}")]
    Parse {
        /// The file.
        file: String,
        /// 1-based line.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// A cell of a row is malformed or out of range.
    #[error("{file}:{line}:{column}: {message}")]
    Cell {
        /// The file.
        file: String,
        /// 1-based line.
        line: usize,
        /// 1-based character column where the cell starts.
        column: usize,
        /// What is wrong.
        message: String,
    },
    /// An unknown policy name.
    #[error("unknown policy {0:?} (known: {known})", known = policy::Policy::NAMES.join(", "))]
    UnknownPolicy(String),
    /// The scheduler rejected the policy's configuration.
    #[error("scheduler configuration for {policy}: {message}")]
    Config {
        /// The policy.
        policy: String,
        /// The scheduler's error.
        message: String,
    },
    /// The trace has no GPU node.
    #[error("the node list has no GPU node")]
    NoGpuNodes,
}
