//! `v1` Pod (upstream `k8s.io/api/core/v1` `Pod`, `PodSpec`, `Container`, `PodStatus`).

use std::collections::BTreeMap;

use compact_str::CompactString;
use serde::{Deserialize, Serialize};

use super::{
    Affinity, ContainerResourceClaim, PodResourceClaim, PodResourceClaimStatus, ResourceList,
    Toleration, TopologySpreadConstraint,
};
use crate::cow_arc::{CowArc, ResourceMap};
use crate::meta::ObjectMeta;

/// Upstream `corev1.Pod`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Pod {
    /// `v1`.
    #[serde(default)]
    pub api_version: String,
    /// `Pod`.
    #[serde(default)]
    pub kind: String,
    /// Metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// Desired state, shared between versions until one changes it (a status write stores a
    /// new version with the same spec; see [`CowArc`]).
    #[serde(default)]
    pub spec: CowArc<PodSpec>,
    /// Observed state, written by the scheduler (conditions, nominatedNodeName) and the kubelet.
    #[serde(default)]
    pub status: PodStatus,
}

/// Upstream `corev1.PodSpec` (the fields k8s-mini acts on; unknown fields are ignored).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodSpec {
    /// App containers, shared by the copies of a spec that do not change them (every pod of a
    /// template, and each pod's versions before and after its bind: see [`CowArc`]).
    #[serde(default)]
    pub containers: CowArc<Vec<Container>>,
    /// Init containers; those with `restartPolicy: Always` are sidecars.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub init_containers: Vec<Container>,
    /// The node the pod is bound to; set by the scheduler's Binding (or by the user to skip scheduling).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_name: Option<String>,
    /// Required node labels.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub node_selector: BTreeMap<String, String>,
    /// Node and pod (anti-)affinity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub affinity: Option<Affinity>,
    /// Tolerations; shared by the copies of a spec that do not change them (a pod's spec before
    /// and after its bind).
    #[serde(default, skip_serializing_if = "CowArc::is_empty_list")]
    pub tolerations: CowArc<Vec<Toleration>>,
    /// Topology spread constraints.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub topology_spread_constraints: Vec<TopologySpreadConstraint>,
    /// Resolved by the Priority admission plugin from `priorityClassName`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<i32>,
    /// Name of a PriorityClass.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority_class_name: Option<String>,
    /// `PreemptLowerPriority` (default) or `Never`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preemption_policy: Option<String>,
    /// Scheduler profile; defaulted to `default-scheduler`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheduler_name: Option<String>,
    /// The RuntimeClass (`node.k8s.io/v1`) whose overhead and scheduling the RuntimeClass
    /// admission plugin applies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runtime_class_name: Option<String>,
    /// `Always` (default), `OnFailure` or `Never`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restart_policy: Option<String>,
    /// Grace period in seconds (ticks); defaulted to 30.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub termination_grace_period_seconds: Option<i64>,
    /// Pod overhead (RuntimeClass), added to the effective request.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub overhead: ResourceList,
    /// Host network mode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_network: Option<bool>,
    /// Service account (kept, not acted on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_account_name: Option<String>,
    /// The pod's hostname (upstream `hostname`; an Indexed Job's pods get `<job>-<index>`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hostname: Option<String>,
    /// The pod's subdomain (a StatefulSet's pods get its `serviceName`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subdomain: Option<String>,
    /// Volumes (upstream `corev1.Volume`): the name and, for a claim, its
    /// `persistentVolumeClaim`; any other source is kept as given, not acted on.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub volumes: Vec<Volume>,
    /// Scheduling gates: the pod is not scheduled while any remains.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scheduling_gates: Vec<PodSchedulingGate>,
    /// The native PodGroup (`scheduling.k8s.io/v1alpha2`) the pod belongs to; immutable (upstream
    /// `PodSpec.SchedulingGroup`, v1.36, feature gate `GenericWorkload`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheduling_group: Option<PodSchedulingGroup>,
    /// The ResourceClaims (`resource.k8s.io/v1`) the pod uses, by a name its containers refer to
    /// (upstream `PodSpec.ResourceClaims`, DRA, GA in v1.34); immutable.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resource_claims: Vec<PodResourceClaim>,
}

/// Upstream `corev1.PodSchedulingGroup` (v1.36): the runtime scheduling group a pod belongs to.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodSchedulingGroup {
    /// The name of the `scheduling.k8s.io/v1alpha2` PodGroup in the pod's namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod_group_name: Option<String>,
}

/// Upstream `corev1.Volume`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Volume {
    /// The volume's name (what `volumeMounts` refer to).
    pub name: String,
    /// A PersistentVolumeClaim source.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub persistent_volume_claim: Option<PersistentVolumeClaimVolumeSource>,
    /// Any other source (emptyDir, configMap, ...), kept as given.
    #[serde(flatten)]
    pub other: std::collections::BTreeMap<String, serde_json::Value>,
}

/// Upstream `corev1.PersistentVolumeClaimVolumeSource`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PersistentVolumeClaimVolumeSource {
    /// The claim's name, in the pod's namespace.
    pub claim_name: String,
    /// Mount read-only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only: Option<bool>,
}

/// Upstream `corev1.PodSchedulingGate`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PodSchedulingGate {
    /// Gate name.
    pub name: String,
}

/// Upstream `corev1.Container` (the fields k8s-mini acts on, plus command/args/env kept as given).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Container {
    /// Container name (DNS-1123 label).
    #[serde(default)]
    pub name: String,
    /// Image reference.
    #[serde(default)]
    pub image: String,
    /// Entrypoint (kept, not run).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub command: Vec<String>,
    /// Arguments (kept, not run).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// Environment (kept as given).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub env: Vec<serde_json::Value>,
    /// Requests and limits.
    #[serde(default)]
    pub resources: ResourceRequirements,
    /// Ports; `hostPort` matters to the NodePorts filter.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ports: Vec<ContainerPort>,
    /// For init containers only: `Always` makes a sidecar.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restart_policy: Option<String>,
    /// `Always`, `IfNotPresent` or `Never`; defaulted by the apiserver (`Always` for a `:latest` or
    /// untagged image, else `IfNotPresent`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_pull_policy: Option<String>,
    /// Restarts the container when it fails.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub liveness_probe: Option<Box<Probe>>,
    /// Decides the container's (and so the pod's) readiness.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub readiness_probe: Option<Box<Probe>>,
    /// Holds liveness and readiness probes back until it succeeds once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub startup_probe: Option<Box<Probe>>,
    /// postStart / preStop hooks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lifecycle: Option<Box<Lifecycle>>,
}

impl Container {
    /// True for an init container with `restartPolicy: Always` (a native sidecar, KEP-753).
    pub fn is_sidecar(&self) -> bool {
        self.restart_policy.as_deref() == Some("Always")
    }
}

/// Upstream `corev1.Probe`: one handler plus timing (boxed in [`Container`], so that a container
/// without probes stays small). The handler is kept as written (k8s-mini
/// runs no process; what the probe answers is declared, see `docs/scenario-format.md`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Probe {
    /// `exec: {command: [...]}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exec: Option<serde_json::Value>,
    /// `httpGet: {path, port, scheme}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http_get: Option<serde_json::Value>,
    /// `tcpSocket: {port}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tcp_socket: Option<serde_json::Value>,
    /// `grpc: {port, service}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grpc: Option<serde_json::Value>,
    /// Seconds after the container started before probes are initiated (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initial_delay_seconds: Option<i32>,
    /// Seconds after which the probe times out (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_seconds: Option<i32>,
    /// How often to probe (default 10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub period_seconds: Option<i32>,
    /// Consecutive successes to count as success after a failure (default 1; must be 1 for
    /// liveness and startup).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub success_threshold: Option<i32>,
    /// Consecutive failures to count as failure (default 3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_threshold: Option<i32>,
    /// Probe-level grace period for a liveness/startup kill (overrides the pod's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub termination_grace_period_seconds: Option<i64>,
}

/// Upstream `corev1.Lifecycle`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Lifecycle {
    /// Runs right after the container is created.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub post_start: Option<LifecycleHandler>,
    /// Runs before the container is sent SIGTERM.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pre_stop: Option<LifecycleHandler>,
}

/// Upstream `corev1.LifecycleHandler`: exactly one action.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LifecycleHandler {
    /// `exec: {command: [...]}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exec: Option<serde_json::Value>,
    /// `httpGet: {...}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http_get: Option<serde_json::Value>,
    /// `tcpSocket: {...}` (deprecated upstream, kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tcp_socket: Option<serde_json::Value>,
    /// `sleep: {seconds: N}` (KEP-3960): the hook takes exactly N seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sleep: Option<SleepAction>,
}

/// Upstream `corev1.SleepAction`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SleepAction {
    /// Seconds to sleep.
    pub seconds: i64,
}

/// Upstream `corev1.ResourceRequirements`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ResourceRequirements {
    /// Requests (what the scheduler reserves).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub requests: ResourceMap,
    /// Limits; for extended resources a limit without a request defaults the request.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub limits: ResourceMap,
    /// The pod's `spec.resourceClaims` this container uses, by name (upstream
    /// `ResourceRequirements.Claims`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub claims: Vec<ContainerResourceClaim>,
}

/// Upstream `corev1.ContainerPort`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContainerPort {
    /// Port name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Port in the container.
    pub container_port: i32,
    /// Port on the host; 0 or absent means none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_port: Option<i32>,
    /// Host IP to bind (`hostIP`).
    #[serde(default, rename = "hostIP", skip_serializing_if = "Option::is_none")]
    pub host_ip: Option<String>,
    /// `TCP` (default), `UDP` or `SCTP`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol: Option<String>,
}

/// Upstream `PodIP`: one IP of a pod.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PodIP {
    /// The address.
    #[serde(default)]
    pub ip: CompactString,
}

/// Upstream `HostIP`: one IP of the pod's node.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostIP {
    /// The address.
    #[serde(default)]
    pub ip: CompactString,
}

/// Upstream `corev1.PodStatus`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodStatus {
    /// `Pending`, `Running`, `Succeeded`, `Failed` or `Unknown`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<CompactString>,
    /// PodScheduled, Initialized, ContainersReady, Ready. Shared by the versions and pods that
    /// have equal ones (see [`crate::cow_arc::RecentValues`]).
    #[serde(default, skip_serializing_if = "CowArc::is_empty_list")]
    pub conditions: CowArc<Vec<PodCondition>>,
    /// Set by preemption on the preemptor.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nominated_node_name: Option<CompactString>,
    /// The node's IP (`hostIP`).
    #[serde(default, rename = "hostIP", skip_serializing_if = "Option::is_none")]
    pub host_ip: Option<CompactString>,
    /// The node's IPs (`hostIPs`, upstream `[]HostIP`; the kubelet writes the InternalIP, the
    /// first entry always equals `hostIP`).
    #[serde(default, rename = "hostIPs", skip_serializing_if = "Vec::is_empty")]
    pub host_ips: Vec<HostIP>,
    /// The pod's IP (`podIP`), from the node's podCIDR.
    #[serde(default, rename = "podIP", skip_serializing_if = "Option::is_none")]
    pub pod_ip: Option<CompactString>,
    /// The pod's IPs (`podIPs`, upstream `[]PodIP`: one per IP family; single-stack here, the
    /// first entry always equals `podIP`).
    #[serde(default, rename = "podIPs", skip_serializing_if = "Vec::is_empty")]
    pub pod_ips: Vec<PodIP>,
    /// RFC 3339 time the kubelet accepted the pod.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_time: Option<CompactString>,
    /// One per init container (sidecars included), in spec order; shared as `conditions` are.
    #[serde(default, skip_serializing_if = "CowArc::is_empty_list")]
    pub init_container_statuses: CowArc<Vec<ContainerStatus>>,
    /// One per container; shared as `conditions` are.
    #[serde(default, skip_serializing_if = "CowArc::is_empty_list")]
    pub container_statuses: CowArc<Vec<ContainerStatus>>,
    /// Why the pod is in this state (e.g. `Preempting`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<CompactString>,
    /// Human-readable message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<CompactString>,
    /// `Guaranteed`, `Burstable` or `BestEffort`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub qos_class: Option<CompactString>,
    /// The name of the ResourceClaim generated for each of the pod's template-based claims,
    /// written by the ResourceClaim controller (upstream `PodStatus.ResourceClaimStatuses`).
    #[serde(default, skip_serializing_if = "CowArc::is_empty_list")]
    pub resource_claim_statuses: CowArc<Vec<PodResourceClaimStatus>>,
}

/// Upstream `corev1.PodCondition`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodCondition {
    /// Condition type.
    #[serde(rename = "type")]
    pub type_: CompactString,
    /// `True`, `False`, `Unknown`.
    pub status: CompactString,
    /// Machine-readable reason (e.g. `Unschedulable`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<CompactString>,
    /// Human-readable message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<CompactString>,
    /// RFC 3339.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_transition_time: Option<CompactString>,
}

/// Upstream `corev1.ContainerStatus` (state reduced to the three upstream variants).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContainerStatus {
    /// Container name.
    pub name: CompactString,
    /// Image running.
    #[serde(default)]
    pub image: CompactString,
    /// Readiness.
    #[serde(default)]
    pub ready: bool,
    /// Restarts so far.
    #[serde(default)]
    pub restart_count: i32,
    /// Whether the container has started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started: Option<bool>,
    /// Current state.
    #[serde(default)]
    pub state: ContainerState,
    /// The previous attempt's termination (upstream `lastState`), empty before the first restart.
    #[serde(default, skip_serializing_if = "ContainerState::is_empty")]
    pub last_state: ContainerState,
}

/// Upstream `corev1.ContainerState`: exactly one member is set (boxed: a pod's statuses are copied
/// with every write, and most members are unset).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContainerState {
    /// Waiting, with a reason such as `ContainerCreating`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waiting: Option<Box<ContainerStateDetail>>,
    /// Running since `startedAt`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub running: Option<Box<ContainerStateDetail>>,
    /// Terminated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub terminated: Option<Box<ContainerStateDetail>>,
}

impl ContainerState {
    /// True when no member is set.
    pub fn is_empty(&self) -> bool {
        self.waiting.is_none() && self.running.is_none() && self.terminated.is_none()
    }
}

/// The details of a container state (a union of upstream's three state structs).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContainerStateDetail {
    /// Reason, e.g. `ContainerCreating`, `Completed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<CompactString>,
    /// Message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<CompactString>,
    /// RFC 3339.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<CompactString>,
    /// Exit code, for terminated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// Signal, for terminated (set when the runtime reports one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<i32>,
    /// RFC 3339, for terminated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<CompactString>,
}

/// Pod phases.
pub mod phases {
    /// Accepted, not all containers running.
    pub const PENDING: &str = "Pending";
    /// Bound and at least one container running.
    pub const RUNNING: &str = "Running";
    /// All containers exited 0.
    pub const SUCCEEDED: &str = "Succeeded";
    /// A container failed.
    pub const FAILED: &str = "Failed";
}

/// Pod condition types.
pub mod pod_conditions {
    /// The scheduler's verdict.
    pub const POD_SCHEDULED: &str = "PodScheduled";
    /// Init containers done.
    pub const INITIALIZED: &str = "Initialized";
    /// All containers ready.
    pub const CONTAINERS_READY: &str = "ContainersReady";
    /// Ready to serve.
    pub const READY: &str = "Ready";
}

/// The annotation where the kubelet's device manager records which device IDs each extended resource
/// of the pod got, e.g. `nvidia.com/gpu=0,1` (upstream exposes this through the kubelet PodResources
/// API rather than on the object; k8s-mini puts it on the pod so the output shows it).
pub const ALLOCATED_DEVICES_ANNOTATION: &str = "k8s-mini.io/allocated-devices";

/// The pod label naming a coscheduling PodGroup (kubernetes-sigs/scheduler-plugins coscheduling).
pub const POD_GROUP_LABEL: &str = "scheduling.x-k8s.io/pod-group";

/// The default scheduler name (upstream `corev1.DefaultSchedulerName`).
pub const DEFAULT_SCHEDULER_NAME: &str = "default-scheduler";

impl Pod {
    /// Namespace/name, e.g. `default/web-0`.
    pub fn key(&self) -> String {
        crate::informer::namespaced_key(self.metadata.namespace(), &self.metadata.name)
    }

    /// `spec.priority`, 0 when unset (upstream `corev1helpers.PodPriority`).
    pub fn priority(&self) -> i32 {
        self.spec.priority.unwrap_or(0)
    }

    /// The node the pod is bound to, if any.
    pub fn node_name(&self) -> Option<&str> {
        self.spec.node_name.as_deref().filter(|n| !n.is_empty())
    }

    /// The phase, `Pending` when unset.
    pub fn phase(&self) -> &str {
        self.status.phase.as_deref().unwrap_or(phases::PENDING)
    }

    /// True for Succeeded and Failed pods, which no longer hold node resources.
    pub fn is_terminal(&self) -> bool {
        matches!(self.phase(), phases::SUCCEEDED | phases::FAILED)
    }

    /// True when deletion has started.
    pub fn is_terminating(&self) -> bool {
        self.metadata.deletion_timestamp.is_some()
    }

    /// The condition of the given type.
    pub fn condition(&self, type_: &str) -> Option<&PodCondition> {
        self.status.conditions.iter().find(|c| c.type_ == type_)
    }

    /// True when the `Ready` condition is `True` (upstream `podutil.IsPodReady`).
    pub fn is_ready(&self) -> bool {
        self.condition(pod_conditions::READY)
            .is_some_and(|c| c.status == super::condition_status::TRUE)
    }

    /// Sets (or replaces) a condition; keeps `lastTransitionTime` when the status did not change.
    pub fn set_condition(&mut self, cond: PodCondition) {
        match self
            .status
            .conditions
            .iter_mut()
            .find(|c| c.type_ == cond.type_)
        {
            Some(existing) => {
                let keep_time = existing.status == cond.status;
                let old_time = existing.last_transition_time.take();
                *existing = cond;
                if keep_time {
                    existing.last_transition_time = old_time;
                }
            }
            None => self.status.conditions.push(cond),
        }
    }

    /// The scheduler profile the pod asks for.
    pub fn scheduler_name(&self) -> &str {
        self.spec
            .scheduler_name
            .as_deref()
            .unwrap_or(DEFAULT_SCHEDULER_NAME)
    }

    /// The native PodGroup this pod belongs to (`spec.schedulingGroup.podGroupName`).
    pub fn scheduling_group_name(&self) -> Option<&str> {
        self.spec
            .scheduling_group
            .as_ref()
            .and_then(|g| g.pod_group_name.as_deref())
    }

    /// The coscheduling PodGroup this pod belongs to (label `scheduling.x-k8s.io/pod-group`).
    pub fn pod_group(&self) -> Option<&str> {
        self.metadata
            .labels
            .get(POD_GROUP_LABEL)
            .map(String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ip_fields_use_upstream_json_names() {
        let yaml = "status: {hostIP: 10.0.0.1, podIP: 10.244.1.2}\nspec:\n  containers:\n  - name: c\n    ports: [{containerPort: 80, hostPort: 8080, hostIP: 127.0.0.1}]\n";
        let pod: Pod = serde_yaml::from_str(yaml).unwrap();
        assert_eq!(pod.status.host_ip.as_deref(), Some("10.0.0.1"));
        assert_eq!(pod.status.pod_ip.as_deref(), Some("10.244.1.2"));
        assert_eq!(
            pod.spec.containers[0].ports[0].host_ip.as_deref(),
            Some("127.0.0.1")
        );
        let json = serde_json::to_value(&pod).unwrap();
        assert_eq!(json["status"]["podIP"], "10.244.1.2");
        assert_eq!(json["status"]["hostIP"], "10.0.0.1");
    }
}
