//! The `batch/v1` API group: Job (upstream `k8s.io/api/batch/v1`).

pub mod job;

pub use job::*;
