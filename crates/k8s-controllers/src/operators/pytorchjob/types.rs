//! The `kubeflow.org/v1` PyTorchJob API as the operator reads it (kubeflow/training-operator v1
//! `pkg/apis/kubeflow.org/v1/pytorch_types.go`, `common_types.go`) and its defaulting
//! (`pytorch_defaults.go` `SetDefaults_PyTorchJob`, applied in memory at every reconcile as
//! upstream's `r.Scheme.Default(pytorchjob)`).
//!
//! The object itself is stored untyped (a custom resource); [`PyTorchJob::from_object`] reads
//! this view of it.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use k8s_types::apps::PodTemplateSpec;
use k8s_types::core::ContainerPort;
use k8s_types::meta::ObjectMeta;
use k8s_types::object::{Kind, Object};

/// `kubeflow.org/v1`.
pub const API_VERSION: &str = "kubeflow.org/v1";
/// `PyTorchJob`.
pub const KIND: &str = "PyTorchJob";
/// Upstream `PyTorchJobDefaultContainerName`.
pub const DEFAULT_CONTAINER_NAME: &str = "pytorch";
/// Upstream `PyTorchJobDefaultPortName`.
pub const DEFAULT_PORT_NAME: &str = "pytorchjob-port";
/// Upstream `PyTorchJobDefaultPort`.
pub const DEFAULT_PORT: i32 = 23456;
/// Upstream `PyTorchJobDefaultRestartPolicy` (`RestartPolicyOnFailure`).
pub const DEFAULT_RESTART_POLICY: &str = "OnFailure";
/// Upstream `DefaultNprocPerNode`.
pub const DEFAULT_NPROC_PER_NODE: &str = "auto";
/// Upstream `PyTorchJobReplicaTypeMaster`.
pub const MASTER: &str = "Master";
/// Upstream `PyTorchJobReplicaTypeWorker`.
pub const WORKER: &str = "Worker";

/// `kind == pytorchjob_kind()` without building one (asked for every change the operator sees).
pub fn is_pytorchjob_kind(kind: &Kind) -> bool {
    matches!(
        kind,
        Kind::Other { api_version, kind, namespaced: true } if api_version == API_VERSION && kind == KIND
    )
}

/// The [`Kind`] PyTorchJobs are stored as.
pub fn pytorchjob_kind() -> Kind {
    Kind::Other {
        api_version: API_VERSION.to_string(),
        kind: KIND.to_string(),
        namespaced: true,
    }
}

/// A PyTorchJob: metadata, spec and status.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PyTorchJob {
    /// Metadata.
    pub metadata: ObjectMeta,
    /// Spec.
    pub spec: PyTorchJobSpec,
    /// Status.
    pub status: JobStatus,
}

/// Upstream `PyTorchJobSpec` (elasticPolicy is read as present or not; elastic training is not
/// simulated).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PyTorchJobSpec {
    /// Run policy.
    #[serde(default)]
    pub run_policy: RunPolicy,
    /// `Master` and `Worker` replica specs.
    #[serde(default)]
    pub pytorch_replica_specs: BTreeMap<String, ReplicaSpec>,
    /// `--nproc-per-node` (`auto` by default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nproc_per_node: Option<String>,
    /// Elastic policy, kept as given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elastic_policy: Option<serde_json::Value>,
}

/// Upstream `RunPolicy`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunPolicy {
    /// `None` (default), `Running` or `All`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clean_pod_policy: Option<String>,
    /// Gang-scheduling policy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheduling_policy: Option<SchedulingPolicy>,
}

/// Upstream `SchedulingPolicy`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SchedulingPolicy {
    /// The gang's minMember (default: every replica).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_available: Option<i32>,
    /// The PodGroup's scheduleTimeoutSeconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schedule_timeout_seconds: Option<i32>,
}

/// Upstream `ReplicaSpec`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReplicaSpec {
    /// Number of pods (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
    /// `Always`, `OnFailure` (default), `Never` or `ExitCode`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restart_policy: Option<String>,
    /// The pod template.
    #[serde(default)]
    pub template: PodTemplateSpec,
}

impl ReplicaSpec {
    /// `replicas` (after defaulting, at least set).
    pub fn replicas(&self) -> i32 {
        self.replicas.unwrap_or(1)
    }

    /// `restartPolicy` (after defaulting, set).
    pub fn restart_policy(&self) -> &str {
        self.restart_policy
            .as_deref()
            .unwrap_or(DEFAULT_RESTART_POLICY)
    }
}

/// Upstream `JobStatus`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct JobStatus {
    /// Conditions, in the order they were first set.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<JobCondition>,
    /// Per replica type: active, succeeded, failed pods.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub replica_statuses: BTreeMap<String, ReplicaStatus>,
    /// When the operator first reconciled the job.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_time: Option<String>,
    /// When it finished.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completion_time: Option<String>,
}

/// Upstream `JobCondition`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct JobCondition {
    /// `Created`, `Running`, `Restarting`, `Succeeded`, `Failed`.
    #[serde(rename = "type")]
    pub type_: String,
    /// `True` or `False`.
    pub status: String,
    /// e.g. `PyTorchJobRunning`.
    #[serde(default)]
    pub reason: String,
    /// e.g. `PyTorchJob train is running.`.
    #[serde(default)]
    pub message: String,
    /// Last update.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_update_time: Option<String>,
    /// Last change of `status`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_transition_time: Option<String>,
}

/// Upstream `ReplicaStatus`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReplicaStatus {
    /// Running pods.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub active: i32,
    /// Succeeded pods.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub succeeded: i32,
    /// Failed pods.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub failed: i32,
    /// The replica type's pods (`FormatLabelSelector` of the operator's labels).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub selector: String,
}

fn is_zero(v: &i32) -> bool {
    *v == 0
}

impl PyTorchJob {
    /// Reads a stored PyTorchJob; `None` for another object, `Some(Err)` when its spec or status
    /// does not decode.
    pub fn from_object(obj: &Object) -> Option<Result<PyTorchJob, String>> {
        let Object::Other(u, _) = obj else {
            return None;
        };
        if u.api_version != API_VERSION || u.kind != KIND {
            return None;
        }
        let field = |name: &str| u.rest.get(name).cloned().unwrap_or(serde_json::Value::Null);
        let decode = || -> Result<PyTorchJob, String> {
            let spec = match field("spec") {
                serde_json::Value::Null => PyTorchJobSpec::default(),
                v => serde_json::from_value(v).map_err(|e| format!("spec: {e}"))?,
            };
            let status = match field("status") {
                serde_json::Value::Null => JobStatus::default(),
                v => serde_json::from_value(v).map_err(|e| format!("status: {e}"))?,
            };
            Ok(PyTorchJob {
                metadata: u.metadata.clone(),
                spec,
                status,
            })
        };
        Some(decode())
    }

    /// Upstream `SetDefaults_PyTorchJob`: cleanPodPolicy `None`, replica type names in camel
    /// case (`master` -> `Master`), replicas 1, restartPolicy `OnFailure`, the `pytorchjob-port`
    /// 23456 on the `pytorch` container (the first container when none has that name: upstream
    /// `getDefaultContainerIndex`), nprocPerNode `auto` (without an elastic policy).
    pub fn set_defaults(&mut self) {
        let rp = &mut self.spec.run_policy;
        rp.clean_pod_policy
            .get_or_insert_with(|| "None".to_string());
        let specs = std::mem::take(&mut self.spec.pytorch_replica_specs);
        for (name, mut spec) in specs {
            let name = match name.to_ascii_lowercase().as_str() {
                "master" => MASTER.to_string(),
                "worker" => WORKER.to_string(),
                _ => name,
            };
            spec.replicas.get_or_insert(1);
            spec.restart_policy
                .get_or_insert_with(|| DEFAULT_RESTART_POLICY.to_string());
            set_default_port(&mut spec.template);
            self.spec.pytorch_replica_specs.insert(name, spec);
        }
        if self.spec.elastic_policy.is_none() && self.spec.nproc_per_node.is_none() {
            self.spec.nproc_per_node = Some(DEFAULT_NPROC_PER_NODE.to_string());
        }
    }

    /// Every replica, summed (upstream `getTotalReplicas`).
    pub fn total_replicas(&self) -> i32 {
        self.spec
            .pytorch_replica_specs
            .values()
            .map(ReplicaSpec::replicas)
            .sum()
    }
}

/// Upstream `setPyTorchDefaultPort`.
fn set_default_port(template: &mut PodTemplateSpec) {
    let containers = &mut template.spec.containers;
    let index = containers
        .iter()
        .position(|c| c.name == DEFAULT_CONTAINER_NAME)
        .unwrap_or(0);
    let Some(c) = containers.get_mut(index) else {
        return;
    };
    if !c
        .ports
        .iter()
        .any(|p| p.name.as_deref() == Some(DEFAULT_PORT_NAME))
    {
        c.ports.push(ContainerPort {
            name: Some(DEFAULT_PORT_NAME.to_string()),
            container_port: DEFAULT_PORT,
            ..Default::default()
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The check without a built Kind answers as the comparison with one.
    #[test]
    fn is_pytorchjob_kind_is_equality_with_the_kind() {
        let other = |api_version: &str, kind: &str, namespaced: bool| Kind::Other {
            api_version: api_version.into(),
            kind: kind.into(),
            namespaced,
        };
        for k in [
            pytorchjob_kind(),
            other(API_VERSION, KIND, false),
            other("kubeflow.org/v2", KIND, true),
            other(API_VERSION, "TFJob", true),
            Kind::Pod,
            Kind::Service,
        ] {
            assert_eq!(is_pytorchjob_kind(&k), k == pytorchjob_kind(), "{k:?}");
        }
        assert!(is_pytorchjob_kind(&pytorchjob_kind()));
    }
}
