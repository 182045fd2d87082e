//! The `batch/v1` API group: Job and CronJob (upstream `k8s.io/api/batch/v1`).

pub mod cron_job;
pub mod job;
pub mod schedule;

pub use cron_job::*;
pub use job::*;
