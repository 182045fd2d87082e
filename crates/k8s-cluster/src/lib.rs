//! k8s-cluster: the whole k8s-mini control plane wired into one deterministic tick loop, and the
//! scenario runner behind `cargo xtask scenario`.
//!
//! - [`cluster::Cluster`]: apiserver + store, controller-manager, scheduler, one kubelet (with its
//!   device plugins) per node; [`Cluster::tick`] runs controllers -> scheduler -> kubelets.
//! - [`manifest`]: reading real Kubernetes YAML with file/line/field-path errors.
//! - `yaml_position`: the line of a field path in a YAML document (for errors found after decoding).
//! - `scenario`: the `Scenario` document (ticks, timed steps, expectations).
//! - `load`: an input into a cluster (initial objects, the Scenario and its steps);
//! - `run`: a scenario file end to end (or manifests read from several inputs), and the state a run
//!   leaves ([`RunState`], for `k8s-mini get` and `describe`); `output`: the run's text tables and
//!   the `v1` List dump;
//! - [`printers`]: `kubectl get`'s tables (upstream's server-side printers); [`describe`]:
//!   `kubectl describe` for pods, nodes, deployments, replicasets and jobs;
//!   `output_services`: the Services and EndpointSlices tables (only when there are any).
//! - [`capacity`]: the capacity view per node pool (GPUs total / allocated / free / fragmented,
//!   CPU, memory, pending pods per reason); [`whatif`]: `k8s-mini whatif`, a workload added to a
//!   cluster and the answer (fits, where, when, what is preempted, how many nodes more);
//!   [`compare`]: `k8s-mini compare`, the same input under several scheduler configurations.
//! - [`Session`]: a scenario's cluster driven tick by tick from outside (`serve`).
//! - [`snapshot`]: the whole store and the clock written to a file (`--snapshot-out`) and a run
//!   resumed from one (`--snapshot-in`).
//!
//! This crate, `k8s-mini` (the command line) and `xtask` are the only ones that name concrete
//! sibling crates.

pub mod capacity;
pub(crate) mod cluster;
pub mod compare;
pub mod describe;
pub(crate) mod drain;
pub(crate) mod expect;
pub(crate) mod load;
pub mod manifest;
pub(crate) mod node_devices;
pub(crate) mod output;
pub(crate) mod output_conflicts;
pub(crate) mod output_json;
pub(crate) mod output_services;
pub mod printers;
pub(crate) mod run;
pub(crate) mod scenario;
pub(crate) mod session;
pub mod snapshot;
pub(crate) mod state;
pub(crate) mod steps;
pub mod trace;
pub mod whatif;
pub(crate) mod yaml_position;

pub use cluster::{Cluster, ClusterConfig};
pub use run::{
    run_file, run_file_to, run_manifests_to, run_to_state, OutputFormat, RunOptions, RunOutcome,
    RunState,
};
pub use session::Session;
pub use state::{human_duration, print_pod, PodPrint};
