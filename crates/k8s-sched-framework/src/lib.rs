//! What a kube-scheduler plugin sees and implements.
//! k8s-sched-framework: the scheduler framework's plugin-facing API (upstream
//! `k8s.io/kube-scheduler/framework`). Mirrors `staging/src/k8s.io/kube-scheduler/framework/interface.go` (extension-point
//! interfaces, `Code`, `Status`), `cycle_state.go` (`CycleState`) and
//! `pkg/scheduler/framework/types.go` (`NodeInfo`, `PodInfo`, `Diagnosis`, `FitError`).
//!
//! This is the crate an out-of-tree plugin depends on (with k8s-types for the API objects): a plugin
//! written in another crate is an `Arc<dyn Plugin>` built by a [`PluginFactory`] and registered by
//! name in a [`Registry`], which k8s-sched merges with its in-tree plugins (upstream
//! `WithFrameworkOutOfTreeRegistry`). The scheduler's own hot-path machinery (per-node kernels and
//! gates, the cache's node arrays) is private to k8s-sched; everything here is object-safe. A plugin declares which
//! extension points it implements through the `as_*` accessors of [`Plugin`], the Rust counterpart of
//! upstream's interface type assertions.
//!
//! Modules:
//! - [`status`]: [`Code`] and the plugin [`Status`] (not apimachinery's `status::Status`).
//! - [`cycle_state`]: [`CycleState`], typed per-attempt storage keyed by string.
//! - [`node_info`]: [`NodeInfo`] and [`PodInfo`], the scheduler's per-node aggregate.
//! - [`diagnosis`]: [`NodeToStatus`], [`Diagnosis`] and [`FitError`] (the `0/3 nodes are available`
//!   message).
//! - [`interface`]: the plugin traits and the [`Handle`] plugins use to reach the framework.
//! - [`binding_cycle`]: the PreBind and PostBind extension points.
//! - [`events`]: cluster events and queueing hints ([`EnqueueExtensions`]).
//! - [`registry`]: [`Registry`], [`PluginFactory`] and [`PluginArgs`] (upstream
//!   `pkg/scheduler/framework/runtime/registry.go`); [`extension_point`]: [`ExtensionPoint`];
//!   [`error`]: [`ConfigError`], how a factory rejects its args.

pub mod binding_cycle;
pub mod cycle_state;
pub mod diagnosis;
pub mod error;
pub mod events;
pub mod extension_point;
pub mod interface;
pub mod node_info;
pub mod registry;
pub mod status;

pub use binding_cycle::{PostBindPlugin, PreBindPlugin};
pub use cycle_state::{CycleState, StateData};
pub use diagnosis::{Diagnosis, FitError, NodeToStatus};
pub use error::ConfigError;
pub use events::{
    ActionType, ClusterEvent, ClusterEventWithHint, EnqueueExtensions, EventObject, EventResource,
    QueueingHint,
};
pub use extension_point::ExtensionPoint;
pub use interface::{
    AsAny, BindPlugin, FilterPlugin, Handle, NodeScore, NominatingInfo, NominatingMode,
    PermitDecision, PermitPlugin, Plugin, PostFilterPlugin, PostFilterResult, PreEnqueuePlugin,
    PreFilterPlugin, PreFilterResult, PreScorePlugin, QueueSortPlugin, QueuedPodInfo,
    ReservePlugin, ScorePlugin, WaitingPodInfo,
};
pub use node_info::{HostPortInfo, NodeInfo, PodInfo};
pub use registry::{PluginArgs, PluginFactory, Registry};
pub use status::{Code, Status};

/// The highest score a Score plugin may return after NormalizeScore (upstream `MaxNodeScore`).
pub const MAX_NODE_SCORE: i64 = 100;

/// The lowest score a Score plugin may return after NormalizeScore (upstream `MinNodeScore`).
pub const MIN_NODE_SCORE: i64 = 0;

/// The cap on how long a Permit plugin may make a pod wait, in ticks (upstream `maxTimeout`,
/// 15 minutes, `pkg/scheduler/framework/runtime/framework.go`).
pub const MAX_PERMIT_TIMEOUT: k8s_types::Tick = 15 * 60;
