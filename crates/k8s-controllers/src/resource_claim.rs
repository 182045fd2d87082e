//! The ResourceClaim controller, after upstream `pkg/controller/resourceclaim/controller.go`
//! (`syncPod`, `handleClaim`, `syncClaim`; KEP-4381), registered as `resourceclaim-controller`:
//!
//! - For a pod that is not done, each `spec.resourceClaims[]` entry with a
//!   `resourceClaimTemplateName` and no entry in `status.resourceClaimStatuses` gets a claim made
//!   from the template: generateName `<pod>-<claim>-` (both parts cut in proportion when longer
//!   than 57 characters, as upstream), annotation `resource.kubernetes.io/pod-claim-name`, the
//!   template's labels and annotations, the pod as controlling owner (so the garbage collector
//!   deletes it with the pod), the template's spec; the pod's status then records the claim's
//!   name. A claim already made for the pod (owned by it, same annotation) is reused, as upstream
//!   `findPodResourceClaim` does after a failed status write. A missing template: the pod is
//!   looked at again when the template appears.
//! - For a claim, the `reservedFor` entries whose pod is gone (or has another uid) or done
//!   (`Succeeded`, `Failed`, or deleted and no longer running) are removed; a claim reserved for
//!   nobody is deallocated (`status.allocation` cleared, finalizer
//!   `resource.kubernetes.io/delete-protection` removed), and a claim generated for a pod that is
//!   done is deleted (upstream deletes it too rather than wait for the pod's deletion).
//!
//! The generated names get their suffix from the apiserver's deterministic generateName, so a run
//! gives the same names every time.

use k8s_types::apiserver::{ApiClient, ApiExt, DeleteOptions};
use k8s_types::controller::{Action, Controller, SyncError};
use k8s_types::core::{Pod, PodResourceClaimStatus};
use k8s_types::informer::{Delta, SharedInformerFactory};
use k8s_types::meta::{ObjectMeta, OwnerReference};
use k8s_types::resource::{
    ResourceClaim, ResourceClaimTemplate, API_VERSION, FINALIZER, POD_RESOURCE_CLAIM_ANNOTATION,
};
use k8s_types::workqueue::WorkQueue;
use k8s_types::{Kind, Object, Resource};

/// The controller name (upstream `names.ResourceClaimController`).
pub const RESOURCE_CLAIM_CONTROLLER_NAME: &str = "resourceclaim-controller";

const POD_PREFIX: &str = "pod:";
const CLAIM_PREFIX: &str = "claim:";

/// kube-controller-manager's ResourceClaim controller.
#[derive(Clone, Debug, Default)]
pub struct ResourceClaimController;

impl ResourceClaimController {
    /// A new controller.
    pub fn new() -> Self {
        ResourceClaimController
    }
}

/// Upstream `isPodDone`: terminal, or deleted and not bound to run anymore (no node).
pub fn is_pod_done(pod: &Pod) -> bool {
    pod.is_terminal() || (pod.metadata.deletion_timestamp.is_some() && pod.spec.node_name.is_none())
}

/// Upstream's generateName for a template's claim: `<pod>-<claim>-`, both parts shortened in
/// proportion to their lengths when the base is longer than 57 characters (63 minus the hyphen
/// and the 5-character suffix).
pub fn claim_generate_name(pod: &str, claim: &str) -> String {
    const MAX_BASE_LEN: usize = 57;
    let full = format!("{pod}-{claim}-");
    if full.len() <= MAX_BASE_LEN {
        return full;
    }
    let total = full.len();
    let p = pod.len() * MAX_BASE_LEN / total;
    let c = claim.len() * MAX_BASE_LEN / total;
    format!("{}-{}-", &pod[..p], &claim[..c])
}

fn owned_by(meta: &ObjectMeta, uid: &str) -> bool {
    meta.owner_references
        .iter()
        .any(|r| r.controller == Some(true) && r.uid == uid)
}

impl ResourceClaimController {
    fn sync_pod(
        &self,
        key: &str,
        informers: &SharedInformerFactory,
        api: &mut dyn ApiClient,
    ) -> Result<Action, SyncError> {
        let Some(pod) = informers.of(&Kind::Pod).get_typed::<Pod>(key) else {
            return Ok(Action::AwaitChange);
        };
        if is_pod_done(pod) || pod.metadata.deletion_timestamp.is_some() {
            return Ok(Action::AwaitChange);
        }
        let ns = pod.metadata.namespace().to_string();
        let uid = pod.metadata.uid.clone().unwrap_or_default();
        let mut statuses = pod.status.resource_claim_statuses.clone();
        let mut changed = false;
        for pc in &pod.spec.resource_claims {
            let Some(template_name) = &pc.resource_claim_template_name else {
                continue;
            };
            if statuses.iter().any(|s| s.name == pc.name) {
                continue;
            }
            // findPodResourceClaim: a claim made earlier for this pod and entry.
            let existing = informers
                .of(&Kind::ResourceClaim)
                .list_namespace::<ResourceClaim>(&ns)
                .find(|c| {
                    owned_by(&c.metadata, &uid)
                        && c.metadata.annotations.get(POD_RESOURCE_CLAIM_ANNOTATION)
                            == Some(&pc.name)
                })
                .map(|c| c.metadata.name.clone());
            let name = match existing {
                Some(n) => n,
                None => {
                    let template: ResourceClaimTemplate = match api.get_typed(&ns, template_name) {
                        Ok(t) => t,
                        // Upstream: `resource claim template "<name>": ...`; the pod is synced
                        // again when the template appears.
                        Err(e) if e.is_not_found() => continue,
                        Err(e) => return Err(e.into()),
                    };
                    let mut meta = ObjectMeta {
                        generate_name: Some(
                            claim_generate_name(&pod.metadata.name, &pc.name).into(),
                        ),
                        namespace: Some(ns.as_str().into()),
                        labels: template.spec.metadata.labels.clone(),
                        annotations: template.spec.metadata.annotations.clone(),
                        owner_references: vec![OwnerReference {
                            api_version: "v1".into(),
                            kind: "Pod".into(),
                            name: pod.metadata.name.clone(),
                            uid: uid.clone(),
                            controller: Some(true),
                            block_owner_deletion: Some(true),
                        }]
                        .into(),
                        ..ObjectMeta::default()
                    };
                    meta.annotations
                        .insert(POD_RESOURCE_CLAIM_ANNOTATION.into(), pc.name.clone());
                    let claim = ResourceClaim {
                        api_version: API_VERSION.into(),
                        kind: "ResourceClaim".into(),
                        metadata: meta,
                        spec: template.spec.spec.clone(),
                        status: Default::default(),
                    };
                    let created = api.create(Object::ResourceClaim(Box::new(claim)))?;
                    created.meta().name.clone()
                }
            };
            statuses.push(PodResourceClaimStatus {
                name: pc.name.clone(),
                resource_claim_name: Some(name),
            });
            changed = true;
        }
        if changed {
            let mut fresh: Pod = api.get_typed(&ns, &pod.metadata.name)?;
            if fresh.metadata.uid.as_deref() != Some(uid.as_str()) {
                return Ok(Action::AwaitChange);
            }
            fresh.status.resource_claim_statuses = statuses;
            api.update_status(Object::Pod(Box::new(fresh)))?;
        }
        Ok(Action::AwaitChange)
    }

    fn sync_claim(
        &self,
        key: &str,
        informers: &SharedInformerFactory,
        api: &mut dyn ApiClient,
    ) -> Result<Action, SyncError> {
        let Some(claim) = informers
            .of(&Kind::ResourceClaim)
            .get_typed::<ResourceClaim>(key)
        else {
            return Ok(Action::AwaitChange);
        };
        let ns = claim.metadata.namespace().to_string();
        let pods = informers.of(&Kind::Pod);
        let valid: Vec<_> = claim
            .status
            .reserved_for
            .iter()
            .filter(|r| {
                r.resource != "pods"
                    || pods
                        .get_typed::<Pod>(&format!("{ns}/{}", r.name))
                        .is_some_and(|p| {
                            p.metadata.uid.as_deref() == Some(r.uid.as_str()) && !is_pod_done(p)
                        })
            })
            .cloned()
            .collect();
        // A claim generated for a pod that is done (or gone) goes away.
        let owner = claim
            .metadata
            .owner_references
            .iter()
            .find(|r| r.controller == Some(true) && r.kind == "Pod");
        if valid.is_empty() && claim.metadata.deletion_timestamp.is_none() {
            if let Some(o) = owner {
                let pod = pods.get_typed::<Pod>(&format!("{ns}/{}", o.name));
                let gone = pod.is_none_or(|p| p.metadata.uid.as_deref() != Some(o.uid.as_str()));
                if gone || pod.is_some_and(is_pod_done) {
                    self.deallocate(claim, Vec::new(), api)?;
                    return match api.delete(
                        &Kind::ResourceClaim,
                        &ns,
                        &claim.metadata.name,
                        DeleteOptions::default(),
                    ) {
                        Ok(_) => Ok(Action::AwaitChange),
                        Err(e) if e.is_not_found() => Ok(Action::AwaitChange),
                        Err(e) => Err(e.into()),
                    };
                }
            }
        }
        if valid.len() != claim.status.reserved_for.len()
            || (valid.is_empty() && claim.status.allocation.is_some())
            || (valid.is_empty() && claim.metadata.deletion_timestamp.is_some())
        {
            self.deallocate(claim, valid, api)?;
        }
        Ok(Action::AwaitChange)
    }

    /// Writes `reservedFor = valid`; with no consumer left the allocation is cleared and the
    /// finalizer removed (upstream: `claim.Status.Allocation = nil`, then the finalizer).
    fn deallocate(
        &self,
        claim: &ResourceClaim,
        valid: Vec<k8s_types::resource::ResourceClaimConsumerReference>,
        api: &mut dyn ApiClient,
    ) -> Result<(), SyncError> {
        let mut fresh: ResourceClaim =
            match api.get_typed(claim.metadata.namespace(), &claim.metadata.name) {
                Ok(c) => c,
                Err(e) if e.is_not_found() => return Ok(()),
                Err(e) => return Err(e.into()),
            };
        let empty = valid.is_empty();
        fresh.status.reserved_for = valid;
        if empty {
            fresh.status.allocation = None;
            fresh.status.devices.clear();
            fresh.metadata.finalizers.retain(|f| f != FINALIZER);
        }
        if fresh.status != claim.status || fresh.metadata.finalizers != claim.metadata.finalizers {
            api.update_status(Object::ResourceClaim(Box::new(fresh)))?;
        }
        Ok(())
    }
}

impl Controller for ResourceClaimController {
    fn name(&self) -> &str {
        RESOURCE_CLAIM_CONTROLLER_NAME
    }

    fn informers(&self) -> Vec<Kind> {
        vec![Kind::Pod, Kind::ResourceClaim, Kind::ResourceClaimTemplate]
    }

    fn on_change(
        &mut self,
        change: &Delta,
        informers: &SharedInformerFactory,
        queue: &mut WorkQueue,
    ) {
        match &change.kind {
            Kind::Pod => {
                let pod = <Pod as Resource>::from_object_ref(change.object());
                let Some(pod) = pod.filter(|p| !p.spec.resource_claims.is_empty()) else {
                    return;
                };
                queue.add(format!("{POD_PREFIX}{}", change.key));
                // Its claims, whose reservation may end with it (upstream enqueues the claims
                // of a pod that is done or deleted).
                let ns = pod.metadata.namespace();
                for pc in &pod.spec.resource_claims {
                    if let Ok(Some(name)) = pod.resource_claim_name(pc) {
                        queue.add(format!("{CLAIM_PREFIX}{ns}/{name}"));
                    }
                }
            }
            Kind::ResourceClaim => queue.add(format!("{CLAIM_PREFIX}{}", change.key)),
            Kind::ResourceClaimTemplate if !change.is_delete() => {
                // Pods waiting for this template.
                let t = change.object().meta();
                let ns = t.namespace();
                for p in informers.of(&Kind::Pod).list_namespace::<Pod>(ns) {
                    let waits = p.spec.resource_claims.iter().any(|c| {
                        c.resource_claim_template_name.as_deref() == Some(t.name.as_str())
                    });
                    if waits {
                        queue.add(format!("{POD_PREFIX}{ns}/{}", p.metadata.name));
                    }
                }
            }
            _ => {}
        }
    }

    fn sync(
        &mut self,
        key: &str,
        informers: &SharedInformerFactory,
        api: &mut dyn ApiClient,
    ) -> Result<Action, SyncError> {
        if let Some(k) = key.strip_prefix(POD_PREFIX) {
            self.sync_pod(k, informers, api)
        } else if let Some(k) = key.strip_prefix(CLAIM_PREFIX) {
            self.sync_claim(k, informers, api)
        } else {
            Ok(Action::AwaitChange)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generate_names_are_cut_in_proportion() {
        assert_eq!(claim_generate_name("train-0", "gpu"), "train-0-gpu-");
        // 40 + 1 + 30 + 1 = 72 > 57: the pod part keeps 40*57/72 = 31 characters, the claim
        // part 30*57/72 = 23 (integer division, as upstream).
        let pod = "p".repeat(40);
        let claim = "c".repeat(30);
        let g = claim_generate_name(&pod, &claim);
        assert_eq!(g, format!("{}-{}-", "p".repeat(31), "c".repeat(23)));
        assert!(g.len() <= 57);
    }
}
