//! The `Scenario` document (`apiVersion: sim.k8s-mini.io/v1alpha1`, `kind: Scenario`): how long to run,
//! timed steps (apply, delete, scale, set image, cordon/uncordon) and expectations. Its shape is
//! documented for users in `docs/scenario-format.md`. Unknown fields are errors here (this is
//! k8s-mini's own kind, so a typo in an expectation must not pass silently).

use std::collections::BTreeMap;

use serde::Deserialize;

use k8s_types::meta::ObjectMeta;

/// The scenario document.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Scenario {
    /// `sim.k8s-mini.io/v1alpha1`.
    #[serde(default)]
    pub api_version: String,
    /// `Scenario`.
    #[serde(default)]
    pub kind: String,
    /// Name (shown in the output header).
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// What to do.
    #[serde(default)]
    pub spec: ScenarioSpec,
}

/// `Scenario.spec`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ScenarioSpec {
    /// One line shown by `cargo xtask scenario --list` and in the output header.
    #[serde(default)]
    pub description: String,
    /// Run exactly this many ticks (ticks 0..ticks-1). Without it the run goes until nothing changes
    /// (after the last step), at most [`crate::run::MAX_TICKS`].
    #[serde(default)]
    pub ticks: Option<u64>,
    /// Kubelet settings for every node.
    #[serde(default)]
    pub kubelet: KubeletSettings,
    /// Nodes and pods imported from a GPU cluster trace (Alibaba openb CSVs), created with the
    /// initial objects.
    #[serde(default)]
    pub trace: Option<TraceSpec>,
    /// What containers do (run time, exit codes, probes' answers, memory, SIGTERM handling), by
    /// pod selector; a pod's `sim.k8s-mini.io/behavior` annotation wins over these.
    #[serde(default)]
    pub behaviors: Vec<BehaviorRuleSpec>,
    /// Start from this snapshot (a file `--snapshot-out` wrote; relative to the scenario file)
    /// instead of applying the input's objects: the run resumes at the snapshot's tick
    /// (`--snapshot-in` overrides it; see `crate::snapshot`).
    #[serde(default)]
    pub snapshot_in: Option<String>,
    /// Timed steps, applied at the start of their tick (before the controllers run).
    #[serde(default)]
    pub steps: Vec<Step>,
    /// Expectations, checked at the end of their tick (or at the end of the run).
    #[serde(default)]
    pub expect: Vec<Expectation>,
    /// Feature gates of every component (kind's cluster `featureGates`): gate name -> enabled.
    #[serde(default)]
    pub feature_gates: std::collections::BTreeMap<String, bool>,
    /// How many ticks late the components' informers deliver watch events (optimistic
    /// concurrency made visible: writes built from stale caches meet `409 Conflict`).
    #[serde(default)]
    pub informer_lag: Option<InformerLagSpec>,
}

/// `spec.informerLag`: `ticks` for every component with an informer, or per component
/// (`controllerManager`, `scheduler`; a component's own value wins over `ticks`).
#[derive(Clone, Copy, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct InformerLagSpec {
    /// Lag of every component (default 0).
    #[serde(default)]
    pub ticks: Option<u64>,
    /// kube-controller-manager's shared informers.
    #[serde(default)]
    pub controller_manager: Option<u64>,
    /// kube-scheduler's informers.
    #[serde(default)]
    pub scheduler: Option<u64>,
}

impl InformerLagSpec {
    /// The lag of each component.
    pub fn lag(&self) -> crate::cluster::InformerLag {
        let all = self.ticks.unwrap_or(0);
        crate::cluster::InformerLag {
            controller_manager: self.controller_manager.unwrap_or(all),
            scheduler: self.scheduler.unwrap_or(all),
        }
    }
}

/// `spec.trace`: a node CSV and a pod CSV (paths relative to the scenario file), optionally only the
/// first rows. See `docs/trace-replay.md`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TraceSpec {
    /// Node CSV (`sn,cpu_milli,memory_mib,gpu,model`).
    pub nodes: String,
    /// Pod CSV (`name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,...`).
    pub pods: String,
    /// Only the first this many nodes (file order).
    #[serde(default)]
    pub node_limit: Option<usize>,
    /// Only the first this many pods (file order).
    #[serde(default)]
    pub limit: Option<usize>,
}

/// `spec.behaviors[]`: the pods of `namespace` (every namespace when absent) matching `selector`
/// (every pod when absent), container `container` (every container when absent), do `behavior`.
/// The first rule that matches a container wins.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BehaviorRuleSpec {
    /// Namespace.
    #[serde(default)]
    pub namespace: Option<String>,
    /// Label selector (kubectl form, e.g. `app=web`).
    #[serde(default)]
    pub selector: Option<String>,
    /// Container name.
    #[serde(default)]
    pub container: Option<String>,
    /// What the container does (the fields of the annotation's per-container entry).
    #[serde(default)]
    pub behavior: k8s_kubelet::behavior::ContainerBehavior,
}

impl BehaviorRuleSpec {
    /// The kubelet's rule.
    ///
    /// # Errors
    /// `(field path, message)` for a bad selector or behavior.
    pub fn to_rule(
        &self,
        path: &str,
    ) -> Result<k8s_kubelet::behavior::BehaviorRule, (String, String)> {
        let selector = match &self.selector {
            Some(s) => Some(
                k8s_types::labels::LabelSelector::parse(s)
                    .map_err(|e| (format!("{path}.selector"), e))?,
            ),
            None => None,
        };
        k8s_kubelet::behavior::validate(&self.behavior).map_err(|e| match e.split_once(": ") {
            Some((f, m)) => (format!("{path}.behavior.{f}"), m.to_string()),
            None => (format!("{path}.behavior"), e),
        })?;
        Ok(k8s_kubelet::behavior::BehaviorRule {
            namespace: self.namespace.clone(),
            selector,
            container: self.container.clone(),
            behavior: self.behavior.clone(),
        })
    }
}

/// Kubelet settings.
#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct KubeletSettings {
    /// Ticks from ContainerCreating to Running (default 1).
    #[serde(default = "one")]
    pub startup_ticks: u64,
}

fn one() -> u64 {
    1
}

impl Default for KubeletSettings {
    fn default() -> Self {
        KubeletSettings { startup_ticks: 1 }
    }
}

/// The largest tick count (and step or expectation tick) a run accepts: 2^31 - 1, about 68 years of
/// one-second ticks (docs/scenario-format.md "Limits"). Timestamps stay four-digit years, and a quiet
/// cluster gets there at once because the run skips the ticks in which nothing can happen.
pub const TICK_LIMIT: u64 = i32::MAX as u64;

/// One timed step: `at` plus exactly one action.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Step {
    /// The tick at whose start the step runs.
    #[serde(default)]
    pub at: u64,
    /// Create objects (a manifest, or a `kind: List`).
    #[serde(default)]
    pub apply: Option<serde_yaml::Value>,
    /// Delete objects.
    #[serde(default)]
    pub delete: Option<DeleteStep>,
    /// Set `spec.replicas` of a Deployment or ReplicaSet.
    #[serde(default)]
    pub scale: Option<ScaleStep>,
    /// `kubectl set image`.
    #[serde(default)]
    pub set_image: Option<SetImageStep>,
    /// `kubectl cordon <node>`.
    #[serde(default)]
    pub cordon: Option<NodeStep>,
    /// `kubectl uncordon <node>`.
    #[serde(default)]
    pub uncordon: Option<NodeStep>,
    /// `kubectl taint nodes <node> key=value:effect`.
    #[serde(default)]
    pub taint: Option<TaintStep>,
    /// Mark a device of a node's device plugin unhealthy (`healthy: false`) or healthy again.
    #[serde(default)]
    pub device_health: Option<DeviceHealthStep>,
    /// `kubectl patch <kind> <name> --type merge -p <patch>`.
    #[serde(default)]
    pub patch: Option<PatchStep>,
    /// `kubectl rollout restart deployment/<name>`.
    #[serde(default)]
    pub rollout_restart: Option<RolloutRestartStep>,
    /// `kubectl create job <name> --from=cronjob/<cronJob>`.
    #[serde(default)]
    pub create_job_from_cron_job: Option<CreateJobFromCronJobStep>,
    /// `kubectl drain <node>`: cordon, then evict the node's pods (spans ticks).
    #[serde(default)]
    pub drain: Option<DrainStep>,
    /// One `pods/eviction` of a pod (what `kubectl drain` posts per pod; `serve --record` writes it).
    #[serde(default)]
    pub evict: Option<EvictStep>,
    /// Stop a node's kubelet (`systemctl stop kubelet`): no Lease renewal, no status, no pod
    /// sync; the containers keep running.
    #[serde(default)]
    pub stop_kubelet: Option<NodeStep>,
    /// Start a stopped kubelet again.
    #[serde(default)]
    pub start_kubelet: Option<NodeStep>,
    /// Cut a node off from the control plane: what the apiserver sees is the same as
    /// `stopKubelet` (nothing from the node), and the containers keep running.
    #[serde(default)]
    pub partition: Option<NodeStep>,
    /// End a node's partition.
    #[serde(default)]
    pub heal: Option<NodeStep>,
    /// Crash and restart kube-scheduler (it rebuilds from the apiserver by list + watch).
    #[serde(default)]
    pub restart_scheduler: Option<EmptyStep>,
    /// Crash and restart kube-controller-manager (it rebuilds from the apiserver by list + watch).
    #[serde(default)]
    pub restart_controller_manager: Option<EmptyStep>,
    /// Restart kube-apiserver (its watch cache), kube-controller-manager and kube-scheduler.
    #[serde(default)]
    pub restart_control_plane: Option<EmptyStep>,
    /// Cut a node's power: its containers and kubelet die, nothing comes from the node.
    #[serde(default)]
    pub power_off: Option<NodeStep>,
    /// Boot a powered-off node: the kubelet starts and runs the node's pods again.
    #[serde(default)]
    pub power_on: Option<NodeStep>,
}

/// `evict`: a `policy/v1` Eviction of one pod (the `pods/eviction` subresource).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EvictStep {
    /// Namespace (default `default`).
    #[serde(default)]
    pub namespace: Option<String>,
    /// Pod name.
    pub name: String,
    /// `deleteOptions.gracePeriodSeconds` (default: the pod's).
    #[serde(default)]
    pub grace_period_seconds: Option<i64>,
}

/// A step action without arguments (`restartScheduler: {}`).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EmptyStep {}

/// `patch`: a JSON merge patch (RFC 7386, `kubectl patch --type merge`) on any typed object.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PatchStep {
    /// Kind, e.g. `Deployment`, `CronJob`, `Pod`.
    pub kind: String,
    /// apiVersion, for a kind its name alone does not name: `scheduling.k8s.io/v1alpha2` (the
    /// native PodGroup), a CustomResourceDefinition's or a custom resource's (resolved against
    /// the stored CRDs when the step runs). `k8s-mini serve --record` writes it for those.
    #[serde(default)]
    pub api_version: Option<String>,
    /// Namespace (default `default`; ignored for cluster-scoped kinds).
    #[serde(default)]
    pub namespace: Option<String>,
    /// Object name.
    pub name: String,
    /// The merge patch: maps merge key by key, `null` removes a key, anything else replaces.
    pub merge: serde_yaml::Value,
}

/// `rolloutRestart`: `kubectl rollout restart deployment/<deployment>`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RolloutRestartStep {
    /// Deployment name.
    pub deployment: String,
    /// Namespace (default `default`).
    #[serde(default)]
    pub namespace: Option<String>,
}

/// `createJobFromCronJob`: `kubectl create job <name> --from=cronjob/<cronJob>`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreateJobFromCronJobStep {
    /// The new Job's name.
    pub name: String,
    /// The CronJob whose job template is used.
    pub cron_job: String,
    /// Namespace (default `default`).
    #[serde(default)]
    pub namespace: Option<String>,
}

/// `drain`: `kubectl drain <node> [--ignore-daemonsets] [--delete-emptydir-data] [--force]
/// [--timeout=<timeoutSeconds>s] [--grace-period=<gracePeriodSeconds>]`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DrainStep {
    /// Node name.
    pub node: String,
    /// `--ignore-daemonsets`: leave DaemonSet-managed pods (without it they stop the drain).
    #[serde(default)]
    pub ignore_daemonsets: bool,
    /// `--delete-emptydir-data` (accepted; k8s-mini keeps no volumes, so no pod has local storage).
    #[serde(default)]
    pub delete_emptydir_data: bool,
    /// `--force`: also evict pods that declare no controller.
    #[serde(default)]
    pub force: bool,
    /// `--timeout`: give up after this many seconds (default: wait for ever).
    #[serde(default)]
    pub timeout_seconds: Option<u64>,
    /// `--grace-period`: the evicted pods' grace period (default: each pod's own).
    #[serde(default)]
    pub grace_period_seconds: Option<i64>,
}

/// `delete`: by name, or every object of the kind matching a label selector (at most `count`, in
/// name order).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DeleteStep {
    /// Kind, e.g. `Pod`, `Deployment`, `Node`.
    pub kind: String,
    /// apiVersion, as [`PatchStep::api_version`].
    #[serde(default)]
    pub api_version: Option<String>,
    /// Namespace (default `default`).
    #[serde(default)]
    pub namespace: Option<String>,
    /// Object name.
    #[serde(default)]
    pub name: Option<String>,
    /// Label selector (kubectl form, e.g. `app=web`).
    #[serde(default)]
    pub selector: Option<String>,
    /// With a selector: delete at most this many.
    #[serde(default)]
    pub count: Option<usize>,
    /// `kubectl delete --grace-period`: overrides the pods' `terminationGracePeriodSeconds` (0
    /// removes them at once, without waiting for their containers to stop).
    #[serde(default)]
    pub grace_period_seconds: Option<i64>,
    /// `kubectl delete --cascade=orphan|background|foreground`: `Orphan`, `Background` (kubectl's
    /// default) or `Foreground`.
    #[serde(default)]
    pub propagation_policy: Option<String>,
}

/// `scale`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ScaleStep {
    /// `Deployment` (default), `ReplicaSet` or `StatefulSet`.
    #[serde(default)]
    pub kind: Option<String>,
    /// Namespace (default `default`).
    #[serde(default)]
    pub namespace: Option<String>,
    /// Name.
    pub name: String,
    /// New replica count.
    pub replicas: i32,
}

/// `setImage`: `kubectl set image deployment/<name> <container>=<image>` (or `daemonset/<name>`,
/// `statefulset/<name>`); exactly one of `deployment`, `daemonset` and `statefulset`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SetImageStep {
    /// Deployment name.
    #[serde(default)]
    pub deployment: Option<String>,
    /// DaemonSet name.
    #[serde(default)]
    pub daemonset: Option<String>,
    /// StatefulSet name.
    #[serde(default)]
    pub statefulset: Option<String>,
    /// Namespace (default `default`).
    #[serde(default)]
    pub namespace: Option<String>,
    /// Container name; when absent every container gets the image.
    #[serde(default)]
    pub container: Option<String>,
    /// New image.
    pub image: String,
}

/// `cordon` / `uncordon`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeStep {
    /// Node name.
    pub node: String,
}

/// `taint`: adds a taint to a node (`timeAdded` is set for NoExecute taints, as upstream).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TaintStep {
    /// Node name.
    pub node: String,
    /// Taint key.
    pub key: String,
    /// Taint value.
    #[serde(default)]
    pub value: String,
    /// `NoSchedule`, `PreferNoSchedule` or `NoExecute`.
    pub effect: String,
}

/// `deviceHealth`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DeviceHealthStep {
    /// Node name.
    pub node: String,
    /// Device ID (e.g. `0`).
    pub device: String,
    /// New health (without `xid`).
    #[serde(default)]
    pub healthy: Option<bool>,
    /// An XID error NVML reports on the GPU: the device plugin marks it unhealthy unless it is
    /// one of the application XIDs it ignores (13, 31, 43, 45, 68, 109).
    #[serde(default)]
    pub xid: Option<u64>,
}

/// One expectation: optional `at` (end of that tick; default: end of the run), or `from`/`to` (held at
/// the end of every tick in the range), plus exactly one check.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Expectation {
    /// Check at the end of this tick.
    #[serde(default)]
    pub at: Option<u64>,
    /// Check at the end of every tick from this one...
    #[serde(default)]
    pub from: Option<u64>,
    /// ...to this one (inclusive; default: the last tick).
    #[serde(default)]
    pub to: Option<u64>,
    /// Pods per node.
    #[serde(default)]
    pub pods_per_node: Option<PodsPerNode>,
    /// One pod's placement, phase, devices, STATUS, readiness and containers.
    #[serde(default)]
    pub pod: Option<PodExpectation>,
    /// A set of pods by selector.
    #[serde(default)]
    pub pods: Option<PodsExpectation>,
    /// Requests allocated on nodes: node -> resource -> quantity.
    #[serde(default)]
    pub node_allocated: Option<BTreeMap<String, BTreeMap<String, String>>>,
    /// Allocatable minus allocated on nodes: node -> resource -> quantity.
    #[serde(default)]
    pub node_free: Option<BTreeMap<String, BTreeMap<String, String>>>,
    /// A PodGroup's members bound.
    #[serde(default)]
    pub pod_group: Option<PodGroupExpectation>,
    /// A Deployment's status.
    #[serde(default)]
    pub deployment: Option<DeploymentExpectation>,
    /// A Job's status.
    #[serde(default)]
    pub job: Option<JobExpectation>,
    /// A DaemonSet's status counts.
    #[serde(default)]
    pub daemon_set: Option<DaemonSetExpectation>,
    /// A CronJob's status and Jobs.
    #[serde(default)]
    pub cron_job: Option<CronJobExpectation>,
    /// A PodDisruptionBudget's status.
    #[serde(default)]
    pub pod_disruption_budget: Option<PdbExpectation>,
    /// A Node's Ready condition and taints.
    #[serde(default)]
    pub node: Option<NodeExpectation>,
    /// A Service's ClusterIP and the addresses its EndpointSlices list.
    #[serde(default)]
    pub service: Option<crate::expect::service::ServiceExpectation>,
    /// A StatefulSet's status.
    #[serde(default)]
    pub stateful_set: Option<crate::expect::stateful_set::StatefulSetExpectation>,
    /// The PersistentVolumeClaims of a namespace.
    #[serde(default)]
    pub persistent_volume_claims: Option<crate::expect::stateful_set::ClaimsExpectation>,
    /// Events by reason.
    #[serde(default)]
    pub events: Option<EventsExpectation>,
    /// A ResourceQuota's status.
    #[serde(default)]
    pub resource_quota: Option<crate::expect::quota::ResourceQuotaExpectation>,
    /// A Namespace's phase and conditions, or its absence.
    #[serde(default)]
    pub namespace: Option<crate::expect::quota::NamespaceExpectation>,
    /// A custom resource's conditions and fields.
    #[serde(default)]
    pub custom_resource: Option<crate::expect::custom_resource::CustomResourceExpectation>,
    /// How many `409 Conflict`s the components were answered so far.
    #[serde(default)]
    pub conflicts: Option<crate::expect::conflicts::ConflictsExpectation>,
    /// A DRA ResourceClaim's allocation and reservations.
    #[serde(default)]
    pub resource_claim: Option<crate::expect::resource_claim::ResourceClaimExpectation>,
}

/// `podsPerNode`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PodsPerNode {
    /// Label selector (kubectl form); empty = all pods.
    #[serde(default)]
    pub selector: String,
    /// Node -> number of (non-terminal) pods bound there.
    pub counts: BTreeMap<String, usize>,
}

/// `pod`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PodExpectation {
    /// Name.
    pub name: String,
    /// Namespace (default `default`).
    #[serde(default)]
    pub namespace: Option<String>,
    /// Expected `spec.nodeName` (empty string: unbound).
    #[serde(default)]
    pub node_name: Option<String>,
    /// Expected phase.
    #[serde(default)]
    pub phase: Option<String>,
    /// Expected device IDs per resource, e.g. `{nvidia.com/gpu: ["0"]}`.
    #[serde(default)]
    pub devices: Option<BTreeMap<String, Vec<String>>>,
    /// Expected STATUS column of `kubectl get pods`, e.g. `CrashLoopBackOff`, `Init:0/2`.
    #[serde(default)]
    pub status: Option<String>,
    /// Expected `Ready` condition (`true`: its status is `True`).
    #[serde(default)]
    pub ready: Option<bool>,
    /// Expected `restartCount`: the sum over all containers (init, sidecar and app), or that of
    /// `container`.
    #[serde(default)]
    pub restart_count: Option<i32>,
    /// The container (init or app) `restartCount` is about; alone, it asserts the container has a
    /// status.
    #[serde(default)]
    pub container: Option<String>,
    /// Container name -> expected state, reason, exit code, restart count, readiness, last state.
    #[serde(default)]
    pub containers: Option<BTreeMap<String, ContainerExpectation>>,
}

/// `pods`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PodsExpectation {
    /// Label selector (kubectl form).
    #[serde(default)]
    pub selector: String,
    /// Namespace (default: all).
    #[serde(default)]
    pub namespace: Option<String>,
    /// Only pods bound to this node.
    #[serde(default)]
    pub node_name: Option<String>,
    /// Number of matching pods (not being deleted).
    #[serde(default)]
    pub count: Option<usize>,
    /// Minimum number of matching pods that are Running and Ready.
    #[serde(default)]
    pub min_ready: Option<usize>,
    /// Maximum number of matching pods (not being deleted).
    #[serde(default)]
    pub max_count: Option<usize>,
    /// Every matching pod has this phase.
    #[serde(default)]
    pub phase: Option<String>,
    /// Every matching pod's containers run this image.
    #[serde(default)]
    pub image: Option<String>,
    /// Number of matching pods that are bound to a node.
    #[serde(default)]
    pub scheduled: Option<usize>,
    /// Every matching pod shows this STATUS in `kubectl get pods`.
    #[serde(default)]
    pub status: Option<String>,
    /// Every matching pod's `Ready` condition is `True` (`true`) or not (`false`).
    #[serde(default)]
    pub ready: Option<bool>,
    /// Every matching pod has this `restartCount` (summed over its containers, or that of
    /// `container`).
    #[serde(default)]
    pub restart_count: Option<i32>,
    /// The container `restartCount` is about.
    #[serde(default)]
    pub container: Option<String>,
    /// Container name -> what every matching pod's container of that name shows.
    #[serde(default)]
    pub containers: Option<BTreeMap<String, ContainerExpectation>>,
}

/// One container of `pod.containers` / `pods.containers`: its status (`status.containerStatuses` or
/// `status.initContainerStatuses`). Every field is optional.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ContainerExpectation {
    /// Which member of `state` is set.
    #[serde(default)]
    pub state: Option<ContainerStateName>,
    /// The reason of the current state (e.g. `CrashLoopBackOff`, `Completed`, `OOMKilled`).
    #[serde(default)]
    pub reason: Option<String>,
    /// `state.terminated.exitCode`.
    #[serde(default)]
    pub exit_code: Option<i32>,
    /// `restartCount`.
    #[serde(default)]
    pub restart_count: Option<i32>,
    /// `ready`.
    #[serde(default)]
    pub ready: Option<bool>,
    /// `lastState` (the previous attempt's termination).
    #[serde(default)]
    pub last_state: Option<LastStateExpectation>,
}

/// A container state member: `waiting`, `running` or `terminated`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ContainerStateName {
    /// `state.waiting`.
    Waiting,
    /// `state.running`.
    Running,
    /// `state.terminated`.
    Terminated,
}

/// `lastState` of a container expectation.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LastStateExpectation {
    /// `lastState.terminated.reason` (e.g. `Error`, `OOMKilled`).
    #[serde(default)]
    pub reason: Option<String>,
    /// `lastState.terminated.exitCode`.
    #[serde(default)]
    pub exit_code: Option<i32>,
}

/// `podGroup`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PodGroupExpectation {
    /// PodGroup name.
    pub name: String,
    /// Namespace (default `default`).
    #[serde(default)]
    pub namespace: Option<String>,
    /// Members bound to a node.
    pub scheduled: usize,
}

/// `deployment`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DeploymentExpectation {
    /// Name.
    pub name: String,
    /// Namespace (default `default`).
    #[serde(default)]
    pub namespace: Option<String>,
    /// status.replicas.
    #[serde(default)]
    pub replicas: Option<i32>,
    /// status.updatedReplicas.
    #[serde(default)]
    pub updated_replicas: Option<i32>,
    /// status.availableReplicas.
    #[serde(default)]
    pub available_replicas: Option<i32>,
    /// Minimum status.availableReplicas.
    #[serde(default)]
    pub min_available_replicas: Option<i32>,
}

/// `daemonSet`: a DaemonSet's status counts.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DaemonSetExpectation {
    /// Name.
    pub name: String,
    /// Namespace (default `default`).
    #[serde(default)]
    pub namespace: Option<String>,
    /// status.desiredNumberScheduled.
    #[serde(default)]
    pub desired_number_scheduled: Option<i32>,
    /// status.currentNumberScheduled.
    #[serde(default)]
    pub current_number_scheduled: Option<i32>,
    /// status.numberMisscheduled.
    #[serde(default)]
    pub number_misscheduled: Option<i32>,
    /// status.numberReady.
    #[serde(default)]
    pub number_ready: Option<i32>,
    /// status.updatedNumberScheduled.
    #[serde(default)]
    pub updated_number_scheduled: Option<i32>,
    /// status.numberAvailable.
    #[serde(default)]
    pub number_available: Option<i32>,
    /// status.numberUnavailable.
    #[serde(default)]
    pub number_unavailable: Option<i32>,
    /// Minimum status.numberAvailable (an invariant over `from`..`to`).
    #[serde(default)]
    pub min_number_available: Option<i32>,
}

/// `job`: a Job's status counters and conditions.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct JobExpectation {
    /// Name.
    pub name: String,
    /// Namespace (default `default`).
    #[serde(default)]
    pub namespace: Option<String>,
    /// status.active.
    #[serde(default)]
    pub active: Option<i32>,
    /// status.succeeded.
    #[serde(default)]
    pub succeeded: Option<i32>,
    /// status.failed.
    #[serde(default)]
    pub failed: Option<i32>,
    /// status.ready.
    #[serde(default)]
    pub ready: Option<i32>,
    /// status.terminating.
    #[serde(default)]
    pub terminating: Option<i32>,
    /// status.completedIndexes (`""` when none).
    #[serde(default)]
    pub completed_indexes: Option<String>,
    /// The type of a condition that must be True (`Complete`, `Failed`, `FailureTarget`,
    /// `SuccessCriteriaMet`, `Suspended`); `None` as a string means no Complete/Failed condition.
    #[serde(default)]
    pub condition: Option<String>,
    /// That condition's reason.
    #[serde(default)]
    pub reason: Option<String>,
    /// That condition's message.
    #[serde(default)]
    pub message: Option<String>,
}

/// `podDisruptionBudget`: the disruption controller's status fields and the `DisruptionAllowed`
/// condition.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PdbExpectation {
    /// Name.
    pub name: String,
    /// Namespace (default `default`).
    #[serde(default)]
    pub namespace: Option<String>,
    /// status.currentHealthy.
    #[serde(default)]
    pub current_healthy: Option<i32>,
    /// status.desiredHealthy.
    #[serde(default)]
    pub desired_healthy: Option<i32>,
    /// status.expectedPods.
    #[serde(default)]
    pub expected_pods: Option<i32>,
    /// status.disruptionsAllowed.
    #[serde(default)]
    pub disruptions_allowed: Option<i32>,
    /// The reason of the `DisruptionAllowed` condition (`SufficientPods`, `InsufficientPods`,
    /// `SyncFailed`).
    #[serde(default)]
    pub reason: Option<String>,
}

/// `events`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EventsExpectation {
    /// Event reason, e.g. `FailedScheduling`.
    pub reason: String,
    /// Only events about this object name.
    #[serde(default)]
    pub involved_object: Option<String>,
    /// Only events whose message contains this text.
    #[serde(default)]
    pub message_contains: Option<String>,
    /// Exact number of matching events.
    #[serde(default)]
    pub count: Option<usize>,
    /// Minimum number of matching events.
    #[serde(default)]
    pub min_count: Option<usize>,
}

/// `cronJob`: a CronJob's status and the Jobs it controls.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CronJobExpectation {
    /// Name.
    pub name: String,
    /// Namespace (default `default`).
    #[serde(default)]
    pub namespace: Option<String>,
    /// Names in `status.active`, in order.
    #[serde(default)]
    pub active: Option<Vec<String>>,
    /// Names of the Jobs whose controller is the CronJob, in name order.
    #[serde(default)]
    pub jobs: Option<Vec<String>>,
    /// `status.lastScheduleTime` (RFC 3339; `""` when unset).
    #[serde(default)]
    pub last_schedule_time: Option<String>,
    /// `status.lastSuccessfulTime` (RFC 3339; `""` when unset).
    #[serde(default)]
    pub last_successful_time: Option<String>,
}

impl Expectation {
    /// The number of checks this expectation names (it must be exactly one).
    pub fn n_checks(&self) -> usize {
        [
            self.pods_per_node.is_some(),
            self.pod.is_some(),
            self.pods.is_some(),
            self.node_allocated.is_some(),
            self.node_free.is_some(),
            self.pod_group.is_some(),
            self.deployment.is_some(),
            self.job.is_some(),
            self.daemon_set.is_some(),
            self.cron_job.is_some(),
            self.pod_disruption_budget.is_some(),
            self.node.is_some(),
            self.service.is_some(),
            self.stateful_set.is_some(),
            self.persistent_volume_claims.is_some(),
            self.events.is_some(),
            self.resource_quota.is_some(),
            self.namespace.is_some(),
            self.custom_resource.is_some(),
            self.conflicts.is_some(),
            self.resource_claim.is_some(),
        ]
        .iter()
        .filter(|b| **b)
        .count()
    }
}

impl Scenario {
    /// Checks what serde cannot: one check per expectation, `at` not combined with `from`/`to`, and
    /// `from <= to`. Returns the field path and the message of the first problem.
    ///
    /// # Errors
    /// `(path, message)` of the first problem found.
    pub fn validate(&self) -> Result<(), (String, String)> {
        let too_late = |path: String, t: u64| {
            (
                path,
                format!("Invalid value: {t}: must be at most {TICK_LIMIT} (the tick limit)"),
            )
        };
        if let Some(t) = self.spec.ticks.filter(|&t| t > TICK_LIMIT) {
            return Err(too_late("spec.ticks".into(), t));
        }
        if let Some(lag) = &self.spec.informer_lag {
            for (field, t) in [
                ("ticks", lag.ticks),
                ("controllerManager", lag.controller_manager),
                ("scheduler", lag.scheduler),
            ] {
                if let Some(t) = t.filter(|&t| t > TICK_LIMIT) {
                    return Err(too_late(format!("spec.informerLag.{field}"), t));
                }
            }
        }
        for (i, s) in self.spec.steps.iter().enumerate() {
            if s.at > TICK_LIMIT {
                return Err(too_late(format!("spec.steps[{i}].at"), s.at));
            }
        }
        for (i, e) in self.spec.expect.iter().enumerate() {
            for (field, t) in [("at", e.at), ("from", e.from), ("to", e.to)] {
                if let Some(t) = t.filter(|&t| t > TICK_LIMIT) {
                    return Err(too_late(format!("spec.expect[{i}].{field}"), t));
                }
            }
        }
        for (i, r) in self.spec.behaviors.iter().enumerate() {
            r.to_rule(&format!("spec.behaviors[{i}]"))?;
        }
        for (i, e) in self.spec.expect.iter().enumerate() {
            let path = format!("spec.expect[{i}]");
            let n = e.n_checks();
            if n != 1 {
                return Err((
                    path,
                    format!("an expectation needs exactly one check, found {n}"),
                ));
            }
            if e.at.is_some() && (e.from.is_some() || e.to.is_some()) {
                return Err((path, "use either `at` or `from`/`to`, not both".into()));
            }
            if e.to.is_some() && e.from.is_none() {
                return Err((format!("{path}.to"), "`to` needs `from`".into()));
            }
            if let (Some(from), Some(to)) = (e.from, e.to) {
                if from > to {
                    return Err((
                        format!("{path}.to"),
                        format!(
                            "Invalid value: {to}: must be greater than or equal to from ({from})"
                        ),
                    ));
                }
            }
        }
        Ok(())
    }
}

/// `node`: a Node's `Ready` condition and taints.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NodeExpectation {
    /// Node name.
    pub name: String,
    /// The `Ready` condition's status: `True`, `False` or `Unknown`.
    #[serde(default)]
    pub ready: Option<String>,
    /// The `Ready` condition's reason (`KubeletReady`, `NodeStatusUnknown`).
    #[serde(default)]
    pub ready_reason: Option<String>,
    /// Every taint, in order, as `key[=value]:Effect`, followed by `@<timeAdded>` when it has one
    /// (`node.kubernetes.io/unreachable:NoExecute@1970-01-01T00:00:50Z`).
    #[serde(default)]
    pub taints: Option<Vec<String>>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Scenario, String> {
        serde_yaml::from_str::<Scenario>(text).map_err(|e| e.to_string())
    }

    #[test]
    fn typos_in_expectations_are_errors() {
        let e = parse("spec:\n  expect:\n  - pod: {name: p, phse: Failed}\n").unwrap_err();
        assert!(e.contains("unknown field `phse`"), "{e}");
        let e = parse("spec:\n  expect:\n  - frobnicate: {count: 1}\n").unwrap_err();
        assert!(e.contains("unknown field `frobnicate`"), "{e}");
    }

    #[test]
    fn validate_rejects_zero_or_two_checks_and_reversed_ranges() {
        let two = parse("spec:\n  expect:\n  - {pod: {name: p}, pods: {count: 1}}\n").unwrap();
        assert_eq!(
            two.validate(),
            Err((
                "spec.expect[0]".to_string(),
                "an expectation needs exactly one check, found 2".to_string()
            ))
        );
        let rev = parse("spec:\n  expect:\n  - {from: 10, to: 2, pods: {count: 1}}\n").unwrap();
        assert_eq!(rev.validate().unwrap_err().0, "spec.expect[0].to");
        let ok = parse("spec:\n  expect:\n  - {from: 2, to: 10, pods: {count: 1}}\n").unwrap();
        assert_eq!(ok.validate(), Ok(()));
    }
}
