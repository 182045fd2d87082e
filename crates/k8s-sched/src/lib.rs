//! k8s-sched: kube-scheduler for k8s-mini, one scheduling pass per tick.
//!
//! Public API (what the tick loop calls):
//! - [`KubeSchedulerConfiguration`] (`kubescheduler.config.k8s.io/v1`, from YAML with
//!   [`KubeSchedulerConfiguration::from_yaml`], named presets with
//!   [`KubeSchedulerConfiguration::preset`]: `default`, `spread`, `binpack`, `balanced`);
//! - [`Scheduler::new`] / [`Scheduler::with_registry`] (out-of-tree plugins through a
//!   [`Registry`]), then [`Scheduler::schedule`] once per tick with the apiserver.
//!
//! Layout, mirroring upstream `pkg/scheduler`:
//! - [`config`]: configuration types, defaults (the default profile), validation, plugin args;
//! - [`registry`]: plugin name -> factory;
//! - [`runtime`]: the per-profile framework that runs plugins at each extension point;
//! - [`plugins`]: the in-tree plugins, one per file (the plugin traits themselves live in
//!   `k8s_types::framework` so plugins can be written in other crates);
//! - [`cache`], [`queue`], [`nominator`], [`waiting`]: the scheduler's state between ticks;
//! - [`schedule_one`]: one pod's scheduling and binding cycle; [`scheduler`]: the tick.
//!
//! Rules worth knowing (the deviations from upstream are deliberate and listed here):
//! - Nodes are evaluated in name order (rotating start index as upstream's
//!   `nextStartNodeIndex`); among equal top scores the node whose name sorts **last** wins
//!   (upstream: random), reproducing the blueprint's `max(key=(score, name))`.
//! - Each pending pod gets at most one attempt per tick, in PrioritySort order (priority, then
//!   queue timestamp, then first-seen revision, then namespace/name). Failed pods are retried after
//!   upstream's backoff (1, 2, 4, 8, 10 ticks) once the cluster changed, or after 5 minutes.
//! - A FailedScheduling event is written when the message differs from the last one written for
//!   the pod (upstream writes one per attempt and the event recorder aggregates them); the
//!   `PodScheduled` condition is updated whenever it changes, as upstream.
//! - Binding is synchronous within the tick; pods held at Permit (gangs) stay assumed across
//!   ticks until allowed, rejected or timed out (checked at the start of each tick).
//! - The default profile is upstream's plus `Coscheduling` (gang scheduling with PodGroups);
//!   upstream default plugins not implemented yet are in [`plugins::NOT_YET_IMPLEMENTED`] and are
//!   skipped with a warning.

pub mod cache;
pub mod config;
pub mod error;
pub mod nominator;
pub mod plugins;
pub mod podgroup_status;
pub mod queue;
pub mod registry;
pub mod runtime;
pub mod schedule_one;
pub mod scheduler;
pub mod waiting;

pub use config::KubeSchedulerConfiguration;
pub use error::ConfigError;
pub use registry::{PluginArgs, PluginFactory, Registry};
pub use scheduler::Scheduler;
