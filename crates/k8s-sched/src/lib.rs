//! k8s-sched: kube-scheduler for k8s-mini, one scheduling pass per tick.
//!
//! Public API (what the tick loop calls):
//! - [`KubeSchedulerConfiguration`] (`kubescheduler.config.k8s.io/v1`, from YAML with
//!   [`KubeSchedulerConfiguration::from_yaml`], named presets with
//!   [`KubeSchedulerConfiguration::preset`]: `default`, `spread`, `binpack`, `balanced`);
//! - [`Scheduler::new`] / [`Scheduler::with_registry`] (out-of-tree plugins through a
//!   [`Registry`]), then [`Scheduler::schedule`] once per tick with the apiserver.
//!
//! ## Use it alone
//!
//! k8s-sched depends only on `k8s-types`. Without an apiserver, detached mode takes Nodes and
//! Pods directly ([`Scheduler::add_node`], [`Scheduler::schedule_one`]); out-of-tree plugins are
//! registered in a [`Registry`] and enabled by the configuration like in-tree ones;
//! [`Scheduler::set_explain`] records why each node was or was not chosen ([`explain`]).
//! `examples/schedule_pods.rs` (a custom Score plugin) and `examples/custom_filter_plugin.rs`
//! (a custom Filter plugin) are complete programs (`cargo run -p k8s-sched --example
//! schedule_pods`). In short:
//!
//! ```
//! use std::sync::Arc;
//! use k8s_sched::{KubeSchedulerConfiguration, Registry, Scheduler};
//! use k8s_types::core::{Container, Node, Pod};
//! use k8s_sched_framework::{CycleState, NodeInfo, Plugin, ScorePlugin, Status};
//! use k8s_types::Quantity;
//!
//! /// Scores 100 on nodes labelled disktype=ssd.
//! struct PreferSsd;
//! impl Plugin for PreferSsd {
//!     fn name(&self) -> &str { "PreferSsd" }
//!     fn as_score(&self) -> Option<&dyn ScorePlugin> { Some(self) }
//! }
//! impl ScorePlugin for PreferSsd {
//!     fn score(&self, _: &CycleState, _: &Pod, node: &NodeInfo) -> Result<i64, Status> {
//!         let ssd = node.node().metadata.labels.get("disktype").is_some_and(|v| v == "ssd");
//!         Ok(if ssd { 100 } else { 0 })
//!     }
//! }
//!
//! let mut registry = Registry::new();
//! registry.register("PreferSsd", Box::new(|_| Ok(Arc::new(PreferSsd) as Arc<dyn Plugin>)))?;
//! let config = KubeSchedulerConfiguration::from_yaml(
//!     "profiles:\n- plugins: {score: {enabled: [{name: PreferSsd, weight: 5}]}}\n",
//! )?;
//! let mut scheduler = Scheduler::with_registry(config, registry)?;
//!
//! for (name, ssd) in [("node-a", false), ("node-b", true)] {
//!     let mut n = Node::default();
//!     n.metadata.name = name.into();
//!     if ssd {
//!         n.metadata.labels.insert("disktype".into(), "ssd".into());
//!     }
//!     for (r, q) in [("cpu", "4"), ("memory", "8Gi"), ("pods", "110")] {
//!         n.status.allocatable.insert(r.into(), Quantity::parse(q).unwrap());
//!     }
//!     scheduler.add_node(n);
//! }
//! let mut pod = Pod::default();
//! pod.metadata.name = "web-0".into();
//! pod.metadata.namespace = Some("default".into());
//! pod.spec.containers.push(Container { name: "app".into(), image: "nginx".into(), ..Default::default() });
//! let result = scheduler.schedule_one(pod);
//! assert_eq!(result.decision.bound_node(), Some("node-b"));
//! # Ok::<(), k8s_sched::ConfigError>(())
//! ```
//!
//! Layout, mirroring upstream `pkg/scheduler`:
//! - [`config`]: configuration types, defaults (the default profile), validation, plugin args;
//! - [`registry`]: plugin name -> factory;
//! - [`runtime`]: the per-profile framework that runs plugins at each extension point;
//! - [`plugins`]: the in-tree plugins, one per file (the plugin traits themselves live in
//!   `k8s_sched_framework` so plugins can be written in other crates);
//! - [`cache`], [`queue`], `nominator`, `waiting`: the scheduler's state between ticks;
//!   `informer`: keeps the cache in step with the apiserver through watch events (these and the
//!   other crate-private modules are internals: a user of the crate needs [`Scheduler`]);
//! - `schedule_one`: one pod's scheduling and binding cycle; [`scheduler`]: the tick, and
//!   [`scheduler::detached`]: scheduling without an apiserver ([`Scheduler::schedule_one`]);
//! - [`perf_workloads`]: kube-scheduler's scheduler_perf shapes as data, for the benches
//!   (`docs/benchmarks.md`) and their tiny-size tests.
//! - [`explain`]: the optional per-pod record of Filter verdicts and scores (`--explain`).
//! - [`simulator`]: the scheduler driven one pod at a time over an in-memory node list, no queue
//!   or apiserver (the FGD paper's simulator protocol; what k8s-cluster's trace replay drives).
//!
//! Rules worth knowing (the deviations from upstream are deliberate and listed here):
//! - Nodes are evaluated in name order (rotating start index as upstream's
//!   `nextStartNodeIndex`); among equal top scores the node whose name sorts **last** wins
//!   (upstream: random), reproducing the blueprint's `max(key=(score, name))`.
//! - Each pending pod gets at most one attempt per tick, in PrioritySort order (priority, then
//!   queue timestamp, then first-seen revision, then namespace/name). Failed pods are retried after
//!   upstream's backoff (1, 2, 4, 8, 10 ticks) once a cluster event that one of the plugins that
//!   rejected them registered says so (queueing hints, `queueing_hints.rs`), or after 5 minutes.
//! - A FailedScheduling event is written when the message differs from the last one written for
//!   the pod (upstream writes one per attempt and the event recorder aggregates them); the
//!   `PodScheduled` condition is updated whenever it changes, as upstream.
//! - Binding is synchronous within the tick; pods held at Permit (gangs) stay assumed across
//!   ticks until allowed, rejected or timed out (checked at the start of each tick).
//! - The default profile is upstream's plus `Coscheduling` (gang scheduling with PodGroups);
//!   upstream default plugins not implemented yet are in [`plugins::NOT_YET_IMPLEMENTED`] and are
//!   skipped with a warning.

pub(crate) mod binding_annotations;
pub(crate) mod cache;
pub mod config;
pub(crate) mod detached_client;
pub mod explain;
pub(crate) mod informer;
pub(crate) mod nominator;
pub mod perf_workloads;
pub mod plugins;
pub(crate) mod podgroup_scheduled;
pub(crate) mod podgroup_status;
pub(crate) mod pods_to_activate;
pub(crate) mod queue;
pub(crate) mod queueing_hints;
pub(crate) mod runtime;
pub(crate) mod schedule_one;
pub mod scheduler;
pub(crate) mod scratch;
pub mod simulator;
pub(crate) mod topology_counts;
pub(crate) mod waiting;

pub use config::KubeSchedulerConfiguration;
pub use k8s_sched_framework::{ConfigError, ExtensionPoint, PluginArgs, PluginFactory, Registry};
pub use plugins::in_tree_registry;
pub use queue::{Backoff, PendingPod, QueueLocation};
pub use scheduler::detached::{Decision, ScheduleResult};
pub use scheduler::Scheduler;
