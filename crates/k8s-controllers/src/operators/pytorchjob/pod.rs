//! What the operator creates for a PyTorchJob, as kubeflow/training-operator v1 does:
//!
//! - pods named `<job>-<replica type lowercased>-<index>` (`core/utils.go` `GenGeneralName`)
//!   with the operator's labels (`common/job_controller.go` `GenLabels`, `pkg/util/labels`),
//!   `training.kubeflow.org/job-role: master` on the master, the env of
//!   `controller.v1/pytorch/envvar.go` `setPodEnv` and `master.go`, the replica's restartPolicy
//!   (`core/pod.go` `SetRestartPolicy`: `ExitCode` -> `Never`) and, with gang scheduling on, the
//!   gang scheduler's name and the PodGroup label (`control/podgroup_control.go`
//!   `SchedulerPluginsControl.DecoratePodTemplateSpec`);
//! - a headless Service per pod, same name, selecting it by type and index, with the `pytorch`
//!   container's ports (`common/service.go` `CreateNewService`, `core.GetPortsFromJob`);
//! - a coscheduling PodGroup named after the job (`common/job.go` `ReconcileJobs`,
//!   `common/scheduling.go` `SyncPodGroup`): minMember = every replica (or
//!   `schedulingPolicy.minAvailable`), minResources = the requests of the first minMember pods
//!   (`common/util.go` `CalcPGMinResources`, replica types in name order: k8s-mini has no
//!   priority classes to sort by here), scheduleTimeoutSeconds from the scheduling policy.
//!
//! Not built: the `init-pytorch` init container that waits for the master's DNS name
//! (`initcontainer.go`; k8s-mini has no DNS), elastic training (`elastic.go`, HPA).

use std::collections::BTreeMap;

use serde_json::json;

use k8s_types::core::{Pod, ResourceList, Service, ServicePort, ServiceSpec};
use k8s_types::meta::{ObjectMeta, OwnerReference};
use k8s_types::scheduling::{PodGroup, PodGroupSpec};

use super::types::{
    PyTorchJob, ReplicaSpec, API_VERSION, DEFAULT_CONTAINER_NAME, KIND, MASTER, WORKER,
};

/// The controller's name (upstream `controllerName`), also the operator-name label's value.
pub const CONTROLLER_NAME: &str = "pytorchjob-controller";
/// Upstream `OperatorNameLabel`.
pub const OPERATOR_NAME_LABEL: &str = "training.kubeflow.org/operator-name";
/// Upstream `JobNameLabel`.
pub const JOB_NAME_LABEL: &str = "training.kubeflow.org/job-name";
/// Upstream `ReplicaTypeLabel`.
pub const REPLICA_TYPE_LABEL: &str = "training.kubeflow.org/replica-type";
/// Upstream `ReplicaIndexLabel`.
pub const REPLICA_INDEX_LABEL: &str = "training.kubeflow.org/replica-index";
/// Upstream `JobRoleLabel`.
pub const JOB_ROLE_LABEL: &str = "training.kubeflow.org/job-role";
/// scheduler-plugins `PodGroupLabel`.
pub const POD_GROUP_LABEL: &str = "scheduling.x-k8s.io/pod-group";

/// Upstream `GenGeneralName`: `<job>-<rtype lowercased>-<index>`.
pub fn replica_name(job: &str, rtype: &str, index: i32) -> String {
    format!("{job}-{}-{index}", rtype.to_ascii_lowercase()).replace('/', "-")
}

/// Upstream `GenLabels`: operator name and job name.
pub fn job_labels(job: &str) -> BTreeMap<String, String> {
    BTreeMap::from([
        (OPERATOR_NAME_LABEL.to_string(), CONTROLLER_NAME.to_string()),
        (JOB_NAME_LABEL.to_string(), job.replace('/', "-")),
    ])
}

/// The labels of one replica: [`job_labels`] plus type (lowercased) and index.
pub fn replica_labels(job: &str, rtype: &str, index: i32) -> BTreeMap<String, String> {
    let mut l = job_labels(job);
    l.insert(REPLICA_TYPE_LABEL.into(), rtype.to_ascii_lowercase());
    l.insert(REPLICA_INDEX_LABEL.into(), index.to_string());
    l
}

/// Upstream `FormatLabelSelector(GenLabelSelector(job, rtype))`: the replica type's selector as
/// `key=value` pairs in key order.
pub fn replica_selector(job: &str, rtype: &str) -> String {
    let mut l = job_labels(job);
    l.insert(REPLICA_TYPE_LABEL.into(), rtype.to_ascii_lowercase());
    l.iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// Upstream `GenOwnerReference`: the job as controller, blocking owner deletion.
pub fn owner_reference(job: &PyTorchJob) -> OwnerReference {
    OwnerReference {
        api_version: API_VERSION.to_string(),
        kind: KIND.to_string(),
        name: job.metadata.name.clone(),
        uid: job.metadata.uid.clone().unwrap_or_default(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }
}

/// The master's port (upstream `getPortFromPyTorchJob`): the `pytorchjob-port` of the master's
/// `pytorch` container.
///
/// # Errors
/// `port not found` when there is none (upstream's error, the pod is not created).
pub fn master_port(job: &PyTorchJob) -> Result<i32, String> {
    job.spec
        .pytorch_replica_specs
        .get(MASTER)
        .into_iter()
        .flat_map(|s| &s.template.spec.containers)
        .filter(|c| c.name == DEFAULT_CONTAINER_NAME)
        .flat_map(|c| &c.ports)
        .find(|p| p.name.as_deref() == Some(super::types::DEFAULT_PORT_NAME))
        .map(|p| p.container_port)
        .ok_or_else(|| "port not found".to_string())
}

/// Upstream `getNprocPerNodeInt`: the number in `nprocPerNode`, 1 for `auto` or anything else.
fn nproc_per_node(job: &PyTorchJob) -> i32 {
    job.spec
        .nproc_per_node
        .as_deref()
        .and_then(|n| n.parse().ok())
        .unwrap_or(1)
}

/// Upstream `setPodEnv`: the env appended to every container of replica `rtype` / `index`, in
/// upstream's order: `PYTHONUNBUFFERED=1`; with a master, `MASTER_PORT`, `PET_MASTER_PORT`,
/// `MASTER_ADDR`, `PET_MASTER_ADDR` (the master's pod name `<job>-master-0`), `WORLD_SIZE`
/// (replicas x nproc per node), `RANK` (the index, +1 for workers), `PET_NODE_RANK`;
/// `PET_NPROC_PER_NODE` when set; `PET_NNODES` (every replica) without an elastic policy.
///
/// # Errors
/// [`master_port`]'s.
pub fn pod_env(job: &PyTorchJob, rtype: &str, index: i32) -> Result<Vec<(String, String)>, String> {
    let mut env = vec![("PYTHONUNBUFFERED".to_string(), "1".to_string())];
    let total = job.total_replicas();
    if job.spec.pytorch_replica_specs.contains_key(MASTER) {
        let port = master_port(job)?.to_string();
        let addr = replica_name(&job.metadata.name, MASTER, 0);
        let rank = if rtype == WORKER { index + 1 } else { index };
        env.extend([
            ("MASTER_PORT".to_string(), port.clone()),
            ("PET_MASTER_PORT".to_string(), port),
            ("MASTER_ADDR".to_string(), addr.clone()),
            ("PET_MASTER_ADDR".to_string(), addr),
            (
                "WORLD_SIZE".to_string(),
                (total * nproc_per_node(job)).to_string(),
            ),
            ("RANK".to_string(), rank.to_string()),
            ("PET_NODE_RANK".to_string(), rank.to_string()),
        ]);
    }
    if let Some(n) = &job.spec.nproc_per_node {
        env.push(("PET_NPROC_PER_NODE".to_string(), n.clone()));
    }
    if job.spec.elastic_policy.is_none() {
        env.push(("PET_NNODES".to_string(), total.to_string()));
    }
    Ok(env)
}

/// Upstream `createNewPod` for replica `rtype` / `index` of `spec`: the template with the
/// replica's name, labels, env, restart policy and (with a gang scheduler) scheduler name and
/// PodGroup label, controlled by the job.
///
/// # Errors
/// [`pod_env`]'s.
pub fn new_pod(
    job: &PyTorchJob,
    rtype: &str,
    index: i32,
    spec: &ReplicaSpec,
    gang_scheduler: Option<&str>,
) -> Result<Pod, String> {
    let name = &job.metadata.name;
    let mut template = spec.template.clone();
    let mut labels = replica_labels(name, rtype, index);
    if is_master_role(job, rtype, index) {
        labels.insert(JOB_ROLE_LABEL.into(), "master".into());
    }
    template.metadata.labels.extend(labels);
    let env = pod_env(job, rtype, index)?;
    for c in &mut template.spec.containers {
        c.env
            .extend(env.iter().map(|(k, v)| json!({"name": k, "value": v})));
    }
    template.spec.restart_policy = Some(match spec.restart_policy() {
        "ExitCode" => "Never".to_string(),
        p => p.to_string(),
    });
    if let Some(scheduler) = gang_scheduler {
        if template
            .spec
            .scheduler_name
            .as_deref()
            .is_none_or(str::is_empty)
        {
            template.spec.scheduler_name = Some(scheduler.to_string());
        }
        template
            .metadata
            .labels
            .insert(POD_GROUP_LABEL.into(), name.clone());
    }
    Ok(Pod {
        metadata: ObjectMeta {
            name: replica_name(name, rtype, index),
            namespace: job.metadata.namespace.clone(),
            labels: template.metadata.labels,
            annotations: template.metadata.annotations,
            owner_references: vec![owner_reference(job)].into(),
            ..Default::default()
        },
        spec: template.spec.into(),
        ..Default::default()
    })
}

/// Upstream `IsMasterRole`: the Master replica, or worker 0 when there is no Master.
pub fn is_master_role(job: &PyTorchJob, rtype: &str, index: i32) -> bool {
    if job.spec.pytorch_replica_specs.contains_key(MASTER) {
        rtype == MASTER
    } else {
        rtype == WORKER && index == 0
    }
}

/// Upstream `CreateNewService`: a headless Service named like the pod, selecting it, with the
/// ports of the replica's `pytorch` container (by port name, in name order).
pub fn new_service(job: &PyTorchJob, rtype: &str, index: i32, spec: &ReplicaSpec) -> Service {
    let name = &job.metadata.name;
    let labels = replica_labels(name, rtype, index);
    let mut ports: BTreeMap<String, i32> = BTreeMap::new();
    for c in spec
        .template
        .spec
        .containers
        .iter()
        .filter(|c| c.name == DEFAULT_CONTAINER_NAME)
    {
        for p in &c.ports {
            ports.insert(p.name.clone().unwrap_or_default(), p.container_port);
        }
    }
    Service {
        metadata: ObjectMeta {
            name: replica_name(name, rtype, index),
            namespace: job.metadata.namespace.clone(),
            labels: labels.clone().into(),
            owner_references: vec![owner_reference(job)].into(),
            ..Default::default()
        },
        spec: ServiceSpec {
            cluster_ip: Some("None".to_string()),
            selector: Some(labels),
            ports: ports
                .into_iter()
                .map(|(n, port)| ServicePort {
                    name: Some(n),
                    port,
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        },
        ..Default::default()
    }
}

/// Upstream `SyncPodGroup`'s new PodGroup: the job's name, namespace and annotations, controlled
/// by the job, with [`pod_group_spec`].
pub fn new_pod_group(job: &PyTorchJob) -> PodGroup {
    PodGroup {
        metadata: ObjectMeta {
            name: job.metadata.name.clone(),
            namespace: job.metadata.namespace.clone(),
            annotations: job.metadata.annotations.clone(),
            owner_references: vec![owner_reference(job)].into(),
            ..Default::default()
        },
        spec: pod_group_spec(job),
        ..Default::default()
    }
}

/// The scheduler-plugins PodGroup spec of `ReconcileJobs`: minMember, minResources,
/// scheduleTimeoutSeconds.
pub fn pod_group_spec(job: &PyTorchJob) -> PodGroupSpec {
    let policy = job.spec.run_policy.scheduling_policy.as_ref();
    let min_member = policy
        .and_then(|p| p.min_available)
        .unwrap_or_else(|| job.total_replicas());
    PodGroupSpec {
        min_member,
        min_resources: Some(min_resources(job, min_member)),
        schedule_timeout_seconds: policy.and_then(|p| p.schedule_timeout_seconds),
    }
}

/// Upstream `CalcPGMinResources`: the containers' requests (a limit where no request is given,
/// `AddResourceList`) of the first `min_member` pods, replica types in name order.
pub fn min_resources(job: &PyTorchJob, min_member: i32) -> ResourceList {
    let mut out = ResourceList::new();
    let mut count = 0;
    for spec in job.spec.pytorch_replica_specs.values() {
        for _ in 0..spec.replicas() {
            if count >= min_member {
                return out;
            }
            count += 1;
            for c in &spec.template.spec.containers {
                let r = &c.resources;
                for (name, q) in &r.requests {
                    *out.entry(name.clone())
                        .or_insert_with(k8s_types::Quantity::zero) += q;
                }
                for (name, q) in &r.limits {
                    if !r.requests.contains_key(name) {
                        *out.entry(name.clone())
                            .or_insert_with(k8s_types::Quantity::zero) += q;
                    }
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_types::object::Object;

    /// A job of Master 1 + Worker `workers`, each pod requesting 8 CPUs and limiting 2 GPUs.
    fn job(workers: i32) -> PyTorchJob {
        let u: k8s_types::object::Unstructured = serde_json::from_value(json!({
            "apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob",
            "metadata": {"name": "mnist", "namespace": "default", "uid": "u1"},
            "spec": {"pytorchReplicaSpecs": {
                "master": {"template": {"spec": {"containers": [{"name": "pytorch", "image": "i",
                    "resources": {"requests": {"cpu": "8"}, "limits": {"nvidia.com/gpu": "2"}}}]}}},
                "Worker": {"replicas": workers, "template": {"spec": {"containers": [{"name": "pytorch",
                    "image": "i", "resources": {"requests": {"cpu": "8"}, "limits": {"nvidia.com/gpu": "2"}}}]}}}
            }}
        }))
        .unwrap();
        let mut j = PyTorchJob::from_object(&Object::Other(Box::new(u), true))
            .unwrap()
            .unwrap();
        j.set_defaults();
        j
    }

    fn pairs(v: &[(&str, &str)]) -> Vec<(String, String)> {
        v.iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    }

    /// envvar.go `setPodEnv` + master.go, worked out by hand for 1 master + 3 workers: world size
    /// 4 x nproc 1 (`auto`), worker 2's rank 2 + 1 = 3, the master's address its pod name.
    #[test]
    fn env_is_training_operators() {
        let j = job(3);
        // `master` was camel-cased by the defaults; the port was added to the pytorch container.
        assert_eq!(master_port(&j), Ok(23456));
        assert_eq!(
            pod_env(&j, WORKER, 2).unwrap(),
            pairs(&[
                ("PYTHONUNBUFFERED", "1"),
                ("MASTER_PORT", "23456"),
                ("PET_MASTER_PORT", "23456"),
                ("MASTER_ADDR", "mnist-master-0"),
                ("PET_MASTER_ADDR", "mnist-master-0"),
                ("WORLD_SIZE", "4"),
                ("RANK", "3"),
                ("PET_NODE_RANK", "3"),
                ("PET_NPROC_PER_NODE", "auto"),
                ("PET_NNODES", "4"),
            ])
        );
        let master = pod_env(&j, MASTER, 0).unwrap();
        assert!(master.contains(&("RANK".into(), "0".into())));
    }

    #[test]
    fn pods_services_and_the_pod_group_are_named_and_labelled_as_upstream() {
        let j = job(2);
        let spec = &j.spec.pytorch_replica_specs[WORKER];
        let p = new_pod(&j, WORKER, 1, spec, Some("default-scheduler")).unwrap();
        assert_eq!(p.metadata.name, "mnist-worker-1");
        assert_eq!(p.metadata.labels[REPLICA_TYPE_LABEL], "worker");
        assert_eq!(p.metadata.labels[REPLICA_INDEX_LABEL], "1");
        assert_eq!(p.metadata.labels[POD_GROUP_LABEL], "mnist");
        assert!(!p.metadata.labels.contains_key(JOB_ROLE_LABEL));
        assert_eq!(p.spec.restart_policy.as_deref(), Some("OnFailure"));
        assert_eq!(p.metadata.owner_references[0].kind, "PyTorchJob");
        let s = new_service(&j, MASTER, 0, &j.spec.pytorch_replica_specs[MASTER]);
        assert_eq!(s.metadata.name, "mnist-master-0");
        assert_eq!(s.spec.cluster_ip.as_deref(), Some("None"));
        assert_eq!(s.spec.ports[0].name.as_deref(), Some("pytorchjob-port"));
        assert_eq!(s.spec.ports[0].port, 23456);
        assert_eq!(
            replica_selector("mnist", MASTER),
            "training.kubeflow.org/job-name=mnist,training.kubeflow.org/operator-name=pytorchjob-controller,training.kubeflow.org/replica-type=master"
        );
        // minMember 1 + 2 = 3; minResources 3 x 8 CPUs, and the GPUs from the limits (no request).
        let pg = pod_group_spec(&j);
        assert_eq!(pg.min_member, 3);
        let r = pg.min_resources.unwrap();
        assert_eq!(r["cpu"].to_string(), "24");
        assert_eq!(r["nvidia.com/gpu"].to_string(), "6");
    }
}
