//! The Job controller's Workload API integration, as Kubernetes v1.36 ships it behind the alpha
//! feature gate `EnableWorkloadWithJob` (off by default; KEP-5547, upstream
//! `pkg/controller/job/job_workload.go` of v1.36): for a new Job that is a gang candidate
//! (`completionMode: Indexed`, `parallelism > 1`, `completions == parallelism`, and no
//! `spec.template.spec.schedulingGroup` of its own), the controller creates a
//! `scheduling.k8s.io/v1alpha2` Workload (one template `<job>-pgt-0` with a gang policy of
//! `minCount = parallelism`, controller-owned by the Job, `spec.controllerRef` naming it), then a
//! PodGroup from that template (controller-owned by the Job, also owned by the Workload), and
//! creates the Job's pods with `spec.schedulingGroup.podGroupName` set to it.
//!
//! Discovery is by reference, not by name: the Workloads whose `spec.controllerRef` names the
//! Job (`batch`, `Job`, name), then the PodGroups whose `podGroupTemplateRef.workload` names that
//! Workload. One match controlled by the Job is used; a match not controlled by it, or more than
//! one, or a Workload with other than one template, falls back to default scheduling (no
//! `schedulingGroup`). A Job that has already started (pods, `startTime`, counted pods or a
//! `Suspended` condition) never gets new objects (upstream `isNewJob`). The Workload's creation is
//! recorded as the Job's Normal event `WorkloadCreated` (`Created Workload <w> for Job <j>`).
//!
//! Names: the Workload is `<job name>-<hash>` and the PodGroup `<workload>-<template>-<hash>`
//! (both cut to 253 characters as upstream), each hash FNV-32a printed in decimal and passed
//! through `rand.SafeEncodeString`. The PodGroup's hash is upstream's exactly (over the two
//! names); the Workload's hashes the text `(types.UID)<uid>` where upstream hashes a `spew` dump of
//! the Job's UID (not reproducible outside Go, as for `pod-template-hash`), so the names have
//! upstream's shape and are stable, not byte-equal to a real cluster's.

use std::sync::Arc;

use k8s_types::meta::{ObjectMeta, OwnerReference};
use k8s_types::scheduling::v1alpha2::{
    GangSchedulingPolicy, PodGroup, PodGroupSchedulingPolicy, PodGroupSpec, PodGroupTemplate,
    PodGroupTemplateReference, TypedLocalObjectReference, Workload,
    WorkloadPodGroupTemplateReference, WorkloadSpec, API_VERSION,
};

use super::*;
use crate::pod_template_hash::{fnv32a, safe_encode_string};

/// Upstream `features.EnableWorkloadWithJob` (alpha in v1.36, off by default).
pub const ENABLE_WORKLOAD_WITH_JOB: &str = "EnableWorkloadWithJob";
/// The Job's event when its Workload is created.
pub const WORKLOAD_CREATED_REASON: &str = "WorkloadCreated";
/// Upstream `validation.DNS1123SubdomainMaxLength`.
const DNS1123_SUBDOMAIN_MAX_LENGTH: usize = 253;

/// Upstream `jobutil.IsGangSchedulingCandidate` for a Job (without the feature gate).
pub fn is_gang_scheduling_candidate(job: &Job) -> bool {
    let (Some(p), Some(c)) = (job.spec.parallelism, job.spec.completions) else {
        return false;
    };
    p > 1 && c == p && job.is_indexed() && job.spec.template.spec.scheduling_group.is_none()
}

/// Upstream `computeWorkloadName`: `<job name, cut to fit>-<hash of the uid>`.
pub fn compute_workload_name(job: &Job) -> String {
    let uid = job.metadata.uid.as_deref().unwrap_or("");
    let hash = safe_encode_string(&fnv32a(format!("(types.UID){uid}").as_bytes()).to_string());
    let max = DNS1123_SUBDOMAIN_MAX_LENGTH - hash.len() - 1;
    let name = &job.metadata.name;
    let prefix = &name[..name.len().min(max)];
    format!("{prefix}-{hash}")
}

/// Upstream `computePodGroupName`: `<workload>-<template>-<hash>`, the two names cut so the
/// whole fits in 253 characters (each keeps up to half the room; a short one leaves the rest to
/// the other; the workload gets the odd character).
pub fn compute_pod_group_name(workload: &str, template: &str) -> String {
    let mut bytes = workload.as_bytes().to_vec();
    bytes.extend_from_slice(template.as_bytes());
    let hash = safe_encode_string(&fnv32a(&bytes).to_string());
    let room = DNS1123_SUBDOMAIN_MAX_LENGTH - hash.len() - 2;
    let (mut wl, mut tpl) = (workload, template);
    if wl.len() + tpl.len() > room {
        let half = room / 2;
        if wl.len() <= half {
            tpl = &tpl[..room - wl.len()];
        } else if tpl.len() <= half {
            wl = &wl[..room - tpl.len()];
        } else {
            wl = &wl[..room - half];
            tpl = &tpl[..half];
        }
    }
    format!("{wl}-{tpl}-{hash}")
}

/// Upstream `isNewJob`: no pods, no `startTime`, nothing counted, never suspended.
fn is_new_job(job: &Job, pods: &[&Pod]) -> bool {
    pods.is_empty()
        && job.status.start_time.is_none()
        && job.status.succeeded == 0
        && job.status.failed == 0
        && job.condition(job_conditions::SUSPENDED).is_none()
}

fn controlled_by_job(meta: &ObjectMeta, job: &Job) -> bool {
    crate::controller_utils::is_controlled_by(meta, &job.metadata)
}

impl JobController {
    /// Upstream `ensureWorkloadAndPodGroup`: the name of the PodGroup the Job's new pods join, or
    /// `None` to schedule them as usual. `shared` is the Job as read (before this sync set its
    /// `startTime`).
    pub(super) fn ensure_workload_and_pod_group(
        &mut self,
        api: &mut dyn ApiClient,
        informers: &SharedInformerFactory,
        shared: &Job,
        pods: &[&Pod],
    ) -> Result<Option<String>, Status> {
        if !self.workload_with_job || !is_gang_scheduling_candidate(shared) {
            return Ok(None);
        }
        let ns = shared.metadata.namespace();
        let workloads: Vec<&Workload> = informers
            .of(&Kind::Workload)
            .list_namespace::<Workload>(ns)
            .filter(|w| {
                w.spec.controller_ref.as_ref().is_some_and(|r| {
                    r.api_group == "batch" && r.kind == "Job" && r.name == shared.metadata.name
                })
            })
            .collect();
        let workload: Workload = match workloads.as_slice() {
            [] => {
                if !is_new_job(shared, pods) {
                    return Ok(None);
                }
                self.create_workload(api, shared)?
            }
            [w] if controlled_by_job(&w.metadata, shared) => {
                if w.spec.pod_group_templates.len() != 1 {
                    return Ok(None);
                }
                (*w).clone()
            }
            _ => return Ok(None),
        };
        let groups: Vec<&PodGroup> = informers
            .of(&Kind::SchedulingPodGroup)
            .list_namespace::<PodGroup>(ns)
            .filter(|g| {
                g.spec
                    .pod_group_template_ref
                    .as_ref()
                    .and_then(|r| r.workload.as_ref())
                    .is_some_and(|r| r.workload_name == workload.metadata.name)
            })
            .collect();
        match groups.as_slice() {
            [] => Ok(Some(self.create_pod_group(api, shared, &workload)?)),
            [g] if controlled_by_job(&g.metadata, shared) => Ok(Some(g.metadata.name.clone())),
            _ => Ok(None),
        }
    }

    /// Upstream `createWorkloadForJob`.
    fn create_workload(&mut self, api: &mut dyn ApiClient, job: &Job) -> Result<Workload, Status> {
        let name = compute_workload_name(job);
        let parallelism = job.spec.parallelism.unwrap_or(1);
        let workload = Workload {
            metadata: ObjectMeta {
                name: name.clone(),
                namespace: Some(job.metadata.namespace().into()),
                owner_references: vec![new_controller_ref(&job.metadata, &Kind::Job)].into(),
                ..Default::default()
            },
            spec: WorkloadSpec {
                controller_ref: Some(TypedLocalObjectReference {
                    api_group: "batch".into(),
                    kind: "Job".into(),
                    name: job.metadata.name.clone(),
                }),
                pod_group_templates: vec![PodGroupTemplate {
                    name: format!("{}-pgt-0", job.metadata.name),
                    scheduling_policy: PodGroupSchedulingPolicy {
                        gang: Some(GangSchedulingPolicy {
                            min_count: parallelism,
                        }),
                        basic: None,
                    },
                }],
            },
            ..Default::default()
        };
        let created: Arc<Object> = api.create_shared(Object::Workload(Box::new(workload)))?;
        let job_obj = job.clone().into_object();
        self.events.record(
            api,
            &job_obj,
            event_types::NORMAL,
            WORKLOAD_CREATED_REASON,
            format!("Created Workload {name} for Job {}", job.metadata.name),
        );
        Workload::from_object_ref(&created)
            .cloned()
            .ok_or_else(|| Status::internal("created object is not a Workload"))
    }

    /// Upstream `createPodGroupForWorkload`: the first template, copied.
    fn create_pod_group(
        &mut self,
        api: &mut dyn ApiClient,
        job: &Job,
        workload: &Workload,
    ) -> Result<String, Status> {
        let Some(template) = workload.spec.pod_group_templates.first() else {
            return Err(Status::internal(format!(
                "workload {}/{} has no PodGroupTemplates",
                workload.metadata.namespace(),
                workload.metadata.name
            )));
        };
        let name = compute_pod_group_name(&workload.metadata.name, &template.name);
        let pg = PodGroup {
            metadata: ObjectMeta {
                name: name.clone(),
                namespace: Some(job.metadata.namespace().into()),
                owner_references: vec![
                    new_controller_ref(&job.metadata, &Kind::Job),
                    OwnerReference {
                        api_version: API_VERSION.to_string(),
                        kind: "Workload".into(),
                        name: workload.metadata.name.clone(),
                        uid: workload.metadata.uid.clone().unwrap_or_default(),
                        controller: None,
                        block_owner_deletion: None,
                    },
                ]
                .into(),
                ..Default::default()
            },
            spec: PodGroupSpec {
                pod_group_template_ref: Some(PodGroupTemplateReference {
                    workload: Some(WorkloadPodGroupTemplateReference {
                        workload_name: workload.metadata.name.clone(),
                        pod_group_template_name: template.name.clone(),
                    }),
                }),
                scheduling_policy: template.scheduling_policy.clone(),
            },
            ..Default::default()
        };
        api.create_shared(Object::SchedulingPodGroup(Box::new(pg)))?;
        Ok(name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_types::batch::completion_modes;

    fn job(parallelism: Option<i32>, completions: Option<i32>, indexed: bool) -> Job {
        let mut j = Job::default();
        j.metadata.name = "train".into();
        j.metadata.uid = Some("uid-1".into());
        j.spec.parallelism = parallelism;
        j.spec.completions = completions;
        if indexed {
            j.spec.completion_mode = Some(completion_modes::INDEXED.into());
        }
        j
    }

    /// Upstream `TestIsGangSchedulingEligible`'s cases.
    #[test]
    fn gang_candidates_are_indexed_jobs_with_parallelism_equal_to_completions() {
        assert!(is_gang_scheduling_candidate(&job(Some(4), Some(4), true)));
        assert!(!is_gang_scheduling_candidate(&job(None, Some(4), true)));
        assert!(!is_gang_scheduling_candidate(&job(Some(1), Some(1), true)));
        assert!(!is_gang_scheduling_candidate(&job(Some(4), Some(4), false)));
        assert!(!is_gang_scheduling_candidate(&job(Some(4), None, true)));
        assert!(!is_gang_scheduling_candidate(&job(Some(4), Some(8), true)));
        let mut opted_out = job(Some(4), Some(4), true);
        opted_out.spec.template.spec.scheduling_group = Some(Default::default());
        assert!(!is_gang_scheduling_candidate(&opted_out));
    }

    /// The hash is `fnv32a` (checked against Go's `hash/fnv` vectors in pod_template_hash) of the
    /// two names concatenated; what is checked here is upstream's `computePodGroupName` shape and
    /// truncation rule: both long names share 253 - len(hash) - 2 characters, the workload taking
    /// the odd one; a short workload name is kept whole.
    #[test]
    fn pod_group_names_follow_upstream_truncation() {
        let h = safe_encode_string(&fnv32a(b"my-workloadmy-template").to_string());
        assert_eq!(
            compute_pod_group_name("my-workload", "my-template"),
            format!("my-workload-my-template-{h}")
        );
        // Both long: 253 - len(hash) - 2 characters shared, the workload taking the odd one.
        let (w, t) = ("w".repeat(200), "t".repeat(200));
        let name = compute_pod_group_name(&w, &t);
        let h = safe_encode_string(&fnv32a(format!("{w}{t}").as_bytes()).to_string());
        let room = 253 - h.len() - 2;
        assert_eq!(name.len(), 253);
        assert_eq!(
            name,
            format!(
                "{}-{}-{h}",
                "w".repeat(room - room / 2),
                "t".repeat(room / 2)
            )
        );
        // A short workload name is kept whole; a 250-character template gets the rest.
        let name = compute_pod_group_name("wl", &"t".repeat(250));
        assert!(name.starts_with("wl-ttt"));
        assert_eq!(name.len(), 253);
        // The workload name: the job's name and a hash of its uid, stable, distinct per uid.
        let a = compute_workload_name(&job(Some(2), Some(2), true));
        let mut other = job(Some(2), Some(2), true);
        other.metadata.uid = Some("uid-2".into());
        assert!(a.starts_with("train-"));
        assert_eq!(a, compute_workload_name(&job(Some(2), Some(2), true)));
        assert_ne!(a, compute_workload_name(&other));
    }
}
