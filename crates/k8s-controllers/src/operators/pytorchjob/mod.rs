//! A PyTorchJob operator, after kubeflow/training-operator v1 (`pkg/controller.v1/pytorch/
//! pytorchjob_controller.go` `Reconcile`, `pkg/controller.v1/common/job.go` `ReconcileJobs`,
//! `pod.go` `ReconcilePods`, `service.go` `ReconcileServices`), with gang scheduling through
//! scheduler-plugins' coscheduling PodGroup (training-operator's `--gang-scheduler-name`).
//!
//! Written as an out-of-tree operator is: on the [`Controller`] contract of `k8s-types` only (no
//! other part of this crate is used), reading the custom resource untyped
//! ([`types::PyTorchJob::from_object`]) from a shared informer, and registered by whoever builds
//! the controller manager (`ControllerManager::register`, `Cluster::register_controller`). Its
//! CRD is `kubeflow.org_pytorchjobs.yaml` next to this file ([`CRD_YAML`]).
//!
//! One reconcile of a job (the informer holds it, it is not being deleted):
//! 1. defaults in memory (`SetDefaults_PyTorchJob`); the `Created` condition when missing
//!    (upstream's create-event handler `onOwnerCreateFunc`);
//! 2. a finished job (Succeeded or Failed): its pods and services are kept (cleanPodPolicy
//!    `None`, the default) or deleted (`All`; `Running`: the running and pending ones), its
//!    PodGroup deleted (events `JobTerminated`, `SuccessfulDeletePodGroup`), a succeeded job's
//!    active counts moved to succeeded; nothing else;
//! 3. the PodGroup created or brought to the spec ([`pod::pod_group_spec`]);
//! 4. per replica type, in name order, per index: a missing pod is created
//!    (`SuccessfulCreatePod`), a pod past the replicas deleted, a `Failed` pod whose replica
//!    restarts (`OnFailure`, `Always`, `ExitCode` with an exit code >= 128) deleted to be
//!    re-created (`PyTorchJobRestarting`), a terminated `pytorch` container reported
//!    (`ExitedWithCode`); the pods counted into `replicaStatuses`;
//! 5. per replica and index, a missing headless Service is created (`SuccessfulCreateService`);
//! 6. the conditions from the counts ([`status::update_job_status`]), written with
//!    `update_status` when they changed.
//!
//! Not simulated: suspend, backoffLimit and activeDeadlineSeconds of the run policy, TTL after
//! finished, elastic training, the init container waiting for the master's DNS name, the
//! validating webhook, expectations (k8s-mini's informers see a write at the operator's next turn,
//! and a pod is created only for an index with no pod).

pub mod pod;
pub mod status;
pub mod types;

use std::collections::BTreeMap;

use k8s_types::apiserver::{ApiClient, DeleteOptions};
use k8s_types::controller::{Action, Controller, SyncError};
use k8s_types::core::{Pod, Service};
use k8s_types::events::EventRecorder;
use k8s_types::informer::{split_key, Delta, SharedInformerFactory};
use k8s_types::object::{Kind, Object, Resource};
use k8s_types::scheduling::PodGroup;
use k8s_types::workqueue::WorkQueue;

use pod::{
    new_pod, new_pod_group, new_service, pod_group_spec, replica_selector, CONTROLLER_NAME,
    REPLICA_INDEX_LABEL, REPLICA_TYPE_LABEL,
};
use status::{count_pod, is_finished, is_succeeded, reason, update_job_conditions};
use types::{is_pytorchjob_kind, pytorchjob_kind, PyTorchJob, DEFAULT_CONTAINER_NAME};

/// The PyTorchJob CRD (`kubeflow.org/v1`, namespaced, `pytorchjobs`), from
/// kubeflow/training-operator v1 `manifests/base/crds/kubeflow.org_pytorchjobs.yaml`, its schema
/// reduced to the fields this operator reads (see the file's header).
pub const CRD_YAML: &str = include_str!("kubeflow.org_pytorchjobs.yaml");

/// The default-scheduler name: k8s-mini's default profile runs Coscheduling, so it is the gang
/// scheduler unless another is configured.
pub const DEFAULT_GANG_SCHEDULER: &str = "default-scheduler";

/// The PyTorchJob operator.
#[derive(Debug)]
pub struct PyTorchJobController {
    gang_scheduler: Option<String>,
    recorder: EventRecorder,
}

impl Default for PyTorchJobController {
    fn default() -> Self {
        Self::new()
    }
}

impl PyTorchJobController {
    /// The operator with gang scheduling on, through [`DEFAULT_GANG_SCHEDULER`].
    pub fn new() -> Self {
        Self::with_gang_scheduler(Some(DEFAULT_GANG_SCHEDULER))
    }

    /// The operator with `--gang-scheduler-name` set to `name` (PodGroups are created and pods
    /// without a schedulerName get this one), or gang scheduling off with `None`.
    pub fn with_gang_scheduler(name: Option<&str>) -> Self {
        PyTorchJobController {
            gang_scheduler: name.map(str::to_string),
            recorder: EventRecorder::for_component(CONTROLLER_NAME),
        }
    }

    fn event(
        &mut self,
        api: &mut dyn ApiClient,
        job: &Object,
        type_: &str,
        reason: &str,
        msg: String,
    ) {
        self.recorder.record(api, job, type_, reason, msg);
    }
}

/// The key of the PyTorchJob controlling `obj`, if any.
fn owner_key(obj: &Object) -> Option<String> {
    let r = obj.meta().controller_ref()?;
    (r.kind == types::KIND && r.api_version == types::API_VERSION)
        .then(|| format!("{}/{}", obj.meta().namespace(), r.name))
}

/// What a write error means for the sync: a conflict or a vanished object is for the next turn.
fn tolerate(r: Result<(), k8s_types::status::Status>) -> Result<(), SyncError> {
    match r {
        Err(e) if !(e.is_already_exists() || e.is_not_found()) => Err(e.into()),
        _ => Ok(()),
    }
}

impl Controller for PyTorchJobController {
    fn name(&self) -> &str {
        CONTROLLER_NAME
    }

    fn informers(&self) -> Vec<Kind> {
        vec![pytorchjob_kind(), Kind::Pod, Kind::Service, Kind::PodGroup]
    }

    fn on_change(&mut self, change: &Delta, _: &SharedInformerFactory, queue: &mut WorkQueue) {
        if is_pytorchjob_kind(&change.kind) {
            queue.add(change.key.clone());
            return;
        }
        // A pod, service or PodGroup of a job (upstream `OnDependentCreateFunc` and friends).
        for o in change.old.iter().chain(change.new.iter()) {
            if let Some(key) = owner_key(o) {
                queue.add(key);
            }
        }
    }

    fn sync(
        &mut self,
        key: &str,
        informers: &SharedInformerFactory,
        api: &mut dyn ApiClient,
    ) -> Result<Action, SyncError> {
        let Some(obj) = informers.of(&pytorchjob_kind()).get(key).cloned() else {
            return Ok(Action::AwaitChange);
        };
        let mut job = match PyTorchJob::from_object(&obj) {
            Some(Ok(j)) => j,
            Some(Err(e)) => return Err(SyncError::Invalid(e)),
            None => return Ok(Action::AwaitChange),
        };
        if job.metadata.deletion_timestamp.is_some() {
            return Ok(Action::AwaitChange);
        }
        job.set_defaults();
        let now = api.now();
        let name = job.metadata.name.clone();
        let (ns, _) = split_key(key);
        let ns = ns.to_string();
        let mut st = job.status.clone();
        if !st.conditions.iter().any(|c| c.type_ == status::CREATED) {
            let msg = format!("PyTorchJob {name} is created.");
            update_job_conditions(
                &mut st,
                status::CREATED,
                "True",
                &reason(status::CREATED),
                &msg,
                now,
            );
        }
        let uid = job.metadata.uid.clone().unwrap_or_default();
        let pods: Vec<Pod> = informers
            .of(&Kind::Pod)
            .controlled_by(&uid)
            .into_iter()
            .filter_map(|o| Pod::from_object_ref(o).cloned())
            .collect();
        let services: Vec<Service> = informers
            .of(&Kind::Service)
            .controlled_by(&uid)
            .into_iter()
            .filter_map(|o| Service::from_object_ref(o).cloned())
            .collect();
        let pg_key = format!("{ns}/{name}");
        let pod_group = informers
            .of(&Kind::PodGroup)
            .get_typed::<PodGroup>(&pg_key)
            .cloned();

        if is_finished(&st) {
            self.clean_up(api, &obj, &job, &st, &pods, pod_group.is_some())?;
            if is_succeeded(&st) {
                for rs in st.replica_statuses.values_mut() {
                    rs.succeeded += rs.active;
                    rs.active = 0;
                }
            }
            return self.write_status(api, &obj, &job, st);
        }

        if self.gang_scheduler.is_some() {
            let spec = pod_group_spec(&job);
            match &pod_group {
                None => tolerate(api.create(new_pod_group(&job).into_object()).map(|_| ()))?,
                Some(pg) if pg.spec != spec => {
                    let mut pg = pg.clone();
                    pg.spec = spec;
                    tolerate(api.update(pg.into_object()).map(|_| ()))?;
                }
                Some(_) => {}
            }
        }

        let specs = job.spec.pytorch_replica_specs.clone();
        for (rtype, spec) in &specs {
            let rt = rtype.to_ascii_lowercase();
            st.replica_statuses.insert(
                rtype.clone(),
                types::ReplicaStatus {
                    selector: replica_selector(&name, rtype),
                    ..Default::default()
                },
            );
            let mut by_index: BTreeMap<i32, Vec<&Pod>> = BTreeMap::new();
            for p in pods
                .iter()
                .filter(|p| p.metadata.labels.get(REPLICA_TYPE_LABEL) == Some(&rt))
            {
                if let Some(i) = p
                    .metadata
                    .labels
                    .get(REPLICA_INDEX_LABEL)
                    .and_then(|i| i.parse().ok())
                {
                    by_index.entry(i).or_default().push(p);
                }
            }
            let last = by_index.keys().next_back().copied().unwrap_or(-1);
            for index in 0..spec.replicas().max(last + 1) {
                match by_index.get(&index).and_then(|s| s.first()) {
                    None if index < spec.replicas() => {
                        self.create_pod(api, &obj, &job, rtype, index, spec)?;
                    }
                    None => {}
                    Some(p) => {
                        self.check_pod(api, &obj, &job, &mut st, rtype, index, spec, p)?;
                        count_pod(&mut st, rtype, p);
                    }
                }
            }
            for index in 0..spec.replicas() {
                let svc = pod::replica_name(&name, rtype, index);
                if !services.iter().any(|s| s.metadata.name == svc) {
                    match api.create(new_service(&job, rtype, index, spec).into_object()) {
                        Ok(_) => self.event(
                            api,
                            &obj,
                            "Normal",
                            "SuccessfulCreateService",
                            format!("Created service: {svc}"),
                        ),
                        Err(e) if e.is_already_exists() => {}
                        Err(e) => {
                            let msg = format!("Error creating: {}", e.message);
                            self.event(api, &obj, "Warning", "FailedCreateService", msg);
                            return Err(e.into());
                        }
                    }
                }
            }
        }
        for (type_, reason, msg) in status::update_job_status(&job, &mut st, now) {
            self.event(api, &obj, type_, &reason, msg);
        }
        self.write_status(api, &obj, &job, st)
    }
}

impl PyTorchJobController {
    /// Upstream `createNewPod` + `CreatePodsWithControllerRef`.
    fn create_pod(
        &mut self,
        api: &mut dyn ApiClient,
        obj: &Object,
        job: &PyTorchJob,
        rtype: &str,
        index: i32,
        spec: &types::ReplicaSpec,
    ) -> Result<(), SyncError> {
        let pod = new_pod(job, rtype, index, spec, self.gang_scheduler.as_deref())
            .map_err(SyncError::Invalid)?;
        if spec.template.spec.restart_policy.is_some() {
            self.event(
                api,
                obj,
                "Warning",
                "SetPodTemplateRestartPolicy",
                "Restart policy in pod template will be overwritten by restart policy in replica spec"
                    .into(),
            );
        }
        let pod_name = pod.metadata.name.clone();
        match api.create(pod.into_object()) {
            Ok(_) => {
                self.event(
                    api,
                    obj,
                    "Normal",
                    "SuccessfulCreatePod",
                    format!("Created pod: {pod_name}"),
                );
                Ok(())
            }
            Err(e) if e.is_already_exists() => Ok(()),
            Err(e) => {
                let msg = format!("Error creating: {}", e.message);
                self.event(api, obj, "Warning", "FailedCreatePod", msg);
                Err(e.into())
            }
        }
    }

    /// One existing pod of `ReconcilePods`: out of range, exited, failed and restartable.
    #[allow(clippy::too_many_arguments)]
    fn check_pod(
        &mut self,
        api: &mut dyn ApiClient,
        obj: &Object,
        job: &PyTorchJob,
        st: &mut types::JobStatus,
        rtype: &str,
        index: i32,
        spec: &types::ReplicaSpec,
        p: &Pod,
    ) -> Result<(), SyncError> {
        let ns = p.metadata.namespace().to_string();
        if index >= spec.replicas() {
            self.delete_pod(api, obj, &ns, &p.metadata.name)?;
        }
        let mut exit_code = 0xbeef;
        for cs in &p.status.container_statuses {
            if let (DEFAULT_CONTAINER_NAME, Some(t)) = (cs.name.as_str(), &cs.state.terminated) {
                exit_code = t.exit_code.unwrap_or(0);
                let msg = format!("Pod: {ns}.{} exited with code {exit_code}", p.metadata.name);
                self.event(api, obj, "Normal", "ExitedWithCode", msg);
            }
        }
        if p.status.phase.as_deref() == Some("Failed") {
            let policy = spec.restart_policy();
            let retryable = exit_code >= 128;
            if matches!(policy, "OnFailure" | "Always") || (policy == "ExitCode" && retryable) {
                self.delete_pod(api, obj, &ns, &p.metadata.name)?;
                let msg = format!(
                    "job {} is restarting because {rtype} replica(s) failed.",
                    job.metadata.name
                );
                self.event(
                    api,
                    obj,
                    "Warning",
                    &reason(status::RESTARTING),
                    msg.clone(),
                );
                update_job_conditions(
                    st,
                    status::RESTARTING,
                    "True",
                    &reason(status::RESTARTING),
                    &msg,
                    api.now(),
                );
            } else if policy == "ExitCode" {
                let msg = format!(
                    "job {:?} is failing because {rtype:?} replica(s) failed.",
                    job.metadata.name
                );
                self.event(api, obj, "Warning", &reason(status::FAILED), msg.clone());
                update_job_conditions(
                    st,
                    status::FAILED,
                    "True",
                    &reason(status::FAILED),
                    &msg,
                    api.now(),
                );
            }
        }
        Ok(())
    }

    /// Upstream `PodControl.DeletePod` with its events.
    fn delete_pod(
        &mut self,
        api: &mut dyn ApiClient,
        obj: &Object,
        ns: &str,
        name: &str,
    ) -> Result<(), SyncError> {
        match api.delete(&Kind::Pod, ns, name, DeleteOptions::default()) {
            Ok(_) => {
                self.event(
                    api,
                    obj,
                    "Normal",
                    "SuccessfulDeletePod",
                    format!("Deleted pod: {name}"),
                );
                Ok(())
            }
            Err(e) if e.is_not_found() => Ok(()),
            Err(e) => {
                let msg = format!("Error deleting: {}", e.message);
                self.event(api, obj, "Warning", "FailedDeletePod", msg);
                Err(e.into())
            }
        }
    }

    /// Upstream `CleanUpResources` for a finished job: `DeletePodsAndServices` by the
    /// cleanPodPolicy and the PodGroup's deletion. Upstream records `JobTerminated` and
    /// `SuccessfulDeletePodGroup` at every reconcile of a finished job; k8s-mini records them
    /// when a PodGroup is actually deleted (docs/fidelity.md).
    fn clean_up(
        &mut self,
        api: &mut dyn ApiClient,
        obj: &Object,
        job: &PyTorchJob,
        st: &types::JobStatus,
        pods: &[Pod],
        has_pod_group: bool,
    ) -> Result<(), SyncError> {
        let policy = job
            .spec
            .run_policy
            .clean_pod_policy
            .as_deref()
            .unwrap_or("None");
        if policy != "None" {
            for p in pods {
                let phase = p.status.phase.as_deref().unwrap_or("Pending");
                if is_finished(st)
                    && policy == "Running"
                    && phase != "Running"
                    && phase != "Pending"
                {
                    continue;
                }
                let ns = p.metadata.namespace().to_string();
                self.delete_pod(api, obj, &ns, &p.metadata.name)?;
                tolerate(
                    api.delete(
                        &Kind::Service,
                        &ns,
                        &p.metadata.name,
                        DeleteOptions::default(),
                    )
                    .map(|_| ()),
                )?;
            }
        }
        if self.gang_scheduler.is_some() && has_pod_group {
            let name = &job.metadata.name;
            self.event(
                api,
                obj,
                "Normal",
                "JobTerminated",
                "Job has been terminated. Deleting PodGroup".into(),
            );
            let ns = job.metadata.namespace().to_string();
            match api.delete(&Kind::PodGroup, &ns, name, DeleteOptions::default()) {
                Ok(_) => self.event(
                    api,
                    obj,
                    "Normal",
                    "SuccessfulDeletePodGroup",
                    format!("Deleted PodGroup: {name}"),
                ),
                Err(e) if e.is_not_found() => {}
                Err(e) => {
                    let msg = format!("Error deleting: {}", e.message);
                    self.event(api, obj, "Warning", "FailedDeletePodGroup", msg);
                    return Err(e.into());
                }
            }
        }
        Ok(())
    }

    /// Upstream `UpdateJobStatusInApiServer`: the status subresource, when it changed.
    fn write_status(
        &mut self,
        api: &mut dyn ApiClient,
        obj: &Object,
        job: &PyTorchJob,
        st: types::JobStatus,
    ) -> Result<Action, SyncError> {
        if st == job.status {
            return Ok(Action::AwaitChange);
        }
        let Object::Other(u, namespaced) = obj else {
            return Ok(Action::AwaitChange);
        };
        let mut u = u.clone();
        let value = serde_json::to_value(&st).map_err(|e| SyncError::Invalid(e.to_string()))?;
        u.rest.insert("status".into(), value);
        match api.update_status(Object::Other(u, *namespaced)) {
            Ok(_) => Ok(Action::AwaitChange),
            Err(e) if e.is_not_found() => Ok(Action::AwaitChange),
            Err(e) => Err(e.into()),
        }
    }
}
