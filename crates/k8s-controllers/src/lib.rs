//! k8s-controllers: kube-controller-manager for k8s-mini (upstream `pkg/controller/`).
//!
//! - [`ControllerManager`]: one set of shared informers for every controller, and per controller a
//!   work queue fed by its event handlers and drained by its sync handler, one turn per tick, in
//!   order (node lifecycle, taint eviction, pod GC, Deployment, ReplicaSet, DaemonSet, StatefulSet, PV binder, CronJob, Job,
//!   TTL-after-finished, disruption, EndpointSlice, garbage collector by default).
//! - [`expectations`]: upstream's `ControllerExpectations` (creations and deletions in flight).
//! - [`DeploymentController`] (`pkg/controller/deployment`): new/old ReplicaSets per pod template,
//!   RollingUpdate and Recreate rollouts, scaling, revision history, status and conditions.
//! - [`ReplicaSetController`] (`pkg/controller/replicaset`): keeps `spec.replicas` pods, adopting
//!   orphans, creating from the template and deleting the surplus by upstream's ranking.
//! - [`DaemonSetsController`] (`pkg/controller/daemon`): one pod per eligible node (nodeSelector,
//!   required node affinity, taints against the daemon tolerations), pinned by node affinity and
//!   bound by the scheduler; RollingUpdate (maxUnavailable, maxSurge) and OnDelete; status counts.
//! - [`StatefulSetController`] (`pkg/controller/statefulset`): pods `<set>-<ordinal>` with a
//!   stable hostname and subdomain, their PersistentVolumeClaims first, OrderedReady and Parallel
//!   pod management, scale-down from the highest ordinal, RollingUpdate with a partition and
//!   OnDelete; [`PersistentVolumeBinderController`] (`pkg/controller/volume/persistentvolume`,
//!   minimal) binds every claim at once.
//! - [`history`] (`pkg/controller/history`): the ControllerRevisions of StatefulSets and
//!   DaemonSets (names, numbers, creation with name collisions, renumbering, truncation).
//! - [`JobController`] (`pkg/controller/job`): batch/v1 Jobs (NonIndexed and Indexed completions,
//!   pod-failure back-off, backoffLimit, backoffLimitPerIndex, podFailurePolicy, successPolicy,
//!   activeDeadlineSeconds, suspend),
//!   finalizer-tracked pod counting and upstream's interim and final conditions;
//!   [`TtlAfterFinishedController`] (`pkg/controller/ttlafterfinished`) deletes finished Jobs after
//!   `ttlSecondsAfterFinished`.
//! - [`CronJobController`] (`pkg/controller/cronjob`, v2): Jobs on a cron schedule on the virtual
//!   clock, concurrency policies, starting deadline, suspend, history limits.
//! - [`DisruptionController`] (`pkg/controller/disruption`): PodDisruptionBudget status
//!   (expected, current and desired healthy pods, disruptions allowed, `DisruptionAllowed`).
//! - [`EndpointSliceController`] (`pkg/controller/endpointslice`): EndpointSlices of the ready,
//!   serving and terminating pod IPs and ports each Service selects.
//! - [`GarbageCollector`] (`pkg/controller/garbagecollector`): background cascading deletion of
//!   objects whose owners are gone.
//! - [`PodGarbageCollector`] (`pkg/controller/podgc`) and [`TaintEvictionController`]
//!   (`pkg/controller/tainteviction`).
//! - [`NodeLifecycleController`] (`pkg/controller/nodelifecycle`): node health from Leases and
//!   status heartbeats, Ready Unknown past the grace period, the unreachable / not-ready taints.
//! - [`ResourceClaimController`] (`pkg/controller/resourceclaim`): DRA claims from a pod's
//!   ResourceClaimTemplates, `status.resourceClaimStatuses`, and the end of a claim's
//!   reservation and allocation when its pods are done.
//!
//! Every controller implements [`k8s_types::controller::Controller`] (informers, event handler,
//! sync handler; "Writing a controller" in docs/architecture.md), reads from the shared informers
//! and writes to the cluster only through [`k8s_types::apiserver::ApiClient`]. Time is the apiserver's tick (one tick = one second
//! wherever upstream speaks in seconds: `minReadySeconds`, `progressDeadlineSeconds`).

pub mod controller_ref_manager;
pub mod controller_utils;
pub mod cronjob;
pub mod daemon;
pub mod deployment;
pub mod disruption;
pub mod endpointslice;
pub mod expectations;
pub mod garbage_collector;
pub mod history;
pub mod job;
pub mod manager;
pub mod namespace;
pub mod node_lifecycle;
pub mod operators;
pub mod pod_gc;
pub mod pod_template_hash;
pub mod replica_set;
pub mod resource_claim;
pub mod resource_quota;
pub mod statefulset;
pub mod taint_eviction;
pub mod ttl_after_finished;
pub mod volume_binder;

pub use cronjob::CronJobController;
pub use daemon::DaemonSetsController;
pub use deployment::DeploymentController;
pub use disruption::DisruptionController;
pub use endpointslice::EndpointSliceController;
pub use garbage_collector::GarbageCollector;
pub use job::JobController;
pub use manager::ControllerManager;
pub use namespace::NamespaceController;
pub use node_lifecycle::NodeLifecycleController;
pub use pod_gc::PodGarbageCollector;
pub use replica_set::ReplicaSetController;
pub use resource_claim::ResourceClaimController;
pub use resource_quota::ResourceQuotaController;
pub use statefulset::StatefulSetController;
pub use taint_eviction::TaintEvictionController;
pub use ttl_after_finished::TtlAfterFinishedController;
pub use volume_binder::PersistentVolumeBinderController;

pub use k8s_types::controller::SyncError;
