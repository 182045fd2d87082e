//! The `pods/eviction` subresource (upstream `pkg/registry/core/pod/storage/eviction.go`
//! `EvictionREST.Create`, `canIgnorePDB`, `checkAndDecrement`, `getPodDisruptionBudgets`,
//! `addConditionAndDeletePod`):
//!
//! - a pod that is Succeeded, Failed, Pending or already being deleted is deleted without looking
//!   at budgets (it is no longer, or not yet, part of the healthy count);
//! - the budgets of the pod's namespace whose selector matches its labels are read (a missing or
//!   empty selector matches nothing); more than one is a 500: `This pod has more than one
//!   PodDisruptionBudget, which the eviction subresource does not support.`;
//! - a pod that is not Ready is let go without touching the budget when the budget's
//!   `unhealthyPodEvictionPolicy` is `AlwaysAllow`, or (`IfHealthyBudget`, the default) when
//!   `currentHealthy >= desiredHealthy > 0`;
//! - otherwise the budget must allow it: a status older than the spec
//!   (`observedGeneration < generation`) or `disruptionsAllowed == 0` is 429 TooManyRequests
//!   `Cannot evict pod as it would violate the pod's disruption budget.` with a `DisruptionBudget`
//!   cause; a negative count or more than 2,000 `disruptedPods` is 403; else `disruptionsAllowed`
//!   goes down by one (the `DisruptionAllowed` condition turns False at 0) and the pod is recorded
//!   in `disruptedPods` with the time, through the budget's `/status`;
//! - then the pod gets the `DisruptionTarget` condition (`EvictionByEvictionAPI`, `Eviction API:
//!   evicting`) and is deleted with the eviction's grace period (the pod's own when unset).
//!
//! Not modelled: dry run, delete preconditions (one request runs to completion before any
//! other, so the retry-on-conflict loops never loop).

use k8s_types::apiserver::ApiClient;
use k8s_types::core::{condition_status, phases, Pod, PodCondition};
use k8s_types::meta::{tick_timestamp, tick_timestamp_compact};
use k8s_types::object::Kind;
use k8s_types::policy::{
    update_disruption_allowed_condition, Eviction, PodDisruptionBudget, DISRUPTION_BUDGET_CAUSE,
};
use k8s_types::status::Status;
use k8s_types::{Object, Resource};

use crate::registry::request_namespace;
use crate::server::ApiServer;

/// Upstream `MaxDisruptedPodSize`.
pub const MAX_DISRUPTED_POD_SIZE: usize = 2000;
/// The 429 message.
pub const MSG_VIOLATES_BUDGET: &str =
    "Cannot evict pod as it would violate the pod's disruption budget.";
/// The 500 message when more than one budget covers the pod.
pub const MSG_MORE_THAN_ONE_PDB: &str =
    "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.";
/// Upstream `v1.DisruptionTarget`.
pub const CONDITION_DISRUPTION_TARGET: &str = "DisruptionTarget";
/// The `DisruptionTarget` reason the eviction subresource sets.
pub const REASON_EVICTION_BY_EVICTION_API: &str = "EvictionByEvictionAPI";
/// The `DisruptionTarget` message the eviction subresource sets.
pub const MSG_EVICTION_API: &str = "Eviction API: evicting";

/// Upstream `canIgnorePDB`.
fn can_ignore_pdb(pod: &Pod) -> bool {
    matches!(
        pod.phase(),
        phases::SUCCEEDED | phases::FAILED | phases::PENDING
    ) || pod.metadata.deletion_timestamp.is_some()
}

/// The 403 upstream answers for a budget in a state no eviction may use.
fn pdb_forbidden(name: &str, cause: &str) -> Status {
    Status::forbidden(format!(
        "poddisruptionbudget.policy \"{name}\" is forbidden: {cause}"
    ))
}

impl ApiServer {
    /// The eviction verb.
    pub(crate) fn evict_pod(&mut self, eviction: &Eviction) -> Result<(), Status> {
        let name = eviction.metadata.name.clone();
        if name.is_empty() {
            return Err(crate::verbs::name_required());
        }
        let ns = request_namespace(&Kind::Pod, eviction.metadata.namespace());
        let pod = self
            .get_object(&Kind::Pod, &ns, &name)
            .ok()
            .and_then(|o| Pod::from_object_ref(&o).cloned())
            .ok_or_else(|| Status::not_found(&Kind::Pod, &name))?;
        if !can_ignore_pdb(&pod) {
            let pdbs: Vec<PodDisruptionBudget> = self
                .list_objects(&Kind::PodDisruptionBudget, Some(&ns), None)
                .iter()
                .filter_map(|o| PodDisruptionBudget::from_object_ref(o))
                .filter(|p| p.covers_for_disruption(&ns, &pod.metadata.labels))
                .cloned()
                .collect();
            if pdbs.len() > 1 {
                return Err(Status::internal(MSG_MORE_THAN_ONE_PDB));
            }
            if let Some(pdb) = pdbs.into_iter().next() {
                let unhealthy_goes = !pod.is_ready()
                    && (pdb.always_allows_unhealthy()
                        || (pdb.status.current_healthy >= pdb.status.desired_healthy
                            && pdb.status.desired_healthy > 0));
                if !unhealthy_goes {
                    self.check_and_decrement(&name, pdb)?;
                }
            }
        }
        self.add_condition_and_delete(pod, eviction)
    }

    /// Upstream `checkAndDecrement`.
    fn check_and_decrement(
        &mut self,
        pod: &str,
        mut pdb: PodDisruptionBudget,
    ) -> Result<(), Status> {
        let pdb_name = pdb.metadata.name.clone();
        if pdb.status.observed_generation.unwrap_or(0) < pdb.metadata.generation.unwrap_or(0) {
            return Err(Status::too_many_requests(
                MSG_VIOLATES_BUDGET,
                DISRUPTION_BUDGET_CAUSE,
                format!("The disruption budget {pdb_name} is still being processed by the server."),
            ));
        }
        if pdb.status.disruptions_allowed < 0 {
            return Err(pdb_forbidden(
                &pdb_name,
                "pdb disruptions allowed is negative",
            ));
        }
        if pdb.status.disrupted_pods.len() > MAX_DISRUPTED_POD_SIZE {
            return Err(pdb_forbidden(
                &pdb_name,
                "DisruptedPods map too big - too many evictions not confirmed by PDB controller",
            ));
        }
        if pdb.status.disruptions_allowed == 0 {
            return Err(Status::too_many_requests(
                MSG_VIOLATES_BUDGET,
                DISRUPTION_BUDGET_CAUSE,
                format!(
                    "The disruption budget {pdb_name} needs {} healthy pods and has {} currently",
                    pdb.status.desired_healthy, pdb.status.current_healthy
                ),
            ));
        }
        pdb.status.disruptions_allowed -= 1;
        if pdb.status.disruptions_allowed == 0 {
            update_disruption_allowed_condition(&mut pdb, self.now);
        }
        pdb.status
            .disrupted_pods
            .insert(pod.to_string(), tick_timestamp(self.now));
        self.update_object_status(Object::PodDisruptionBudget(Box::new(pdb)))
            .map(|_| ())
    }

    /// Upstream `addConditionAndDeletePod`.
    fn add_condition_and_delete(
        &mut self,
        mut pod: Pod,
        eviction: &Eviction,
    ) -> Result<(), Status> {
        let (ns, name) = (
            pod.metadata.namespace().to_string(),
            pod.metadata.name.clone(),
        );
        let before = pod.status.clone();
        pod.set_condition(PodCondition {
            type_: CONDITION_DISRUPTION_TARGET.into(),
            status: condition_status::TRUE.into(),
            reason: Some(REASON_EVICTION_BY_EVICTION_API.into()),
            message: Some(MSG_EVICTION_API.into()),
            last_transition_time: Some(tick_timestamp_compact(self.now)),
        });
        if pod.status != before {
            self.update_object_status(Object::Pod(Box::new(pod)))?;
        }
        self.delete(&Kind::Pod, &ns, &name, eviction.delete_options)
            .map(|_| ())
    }
}
