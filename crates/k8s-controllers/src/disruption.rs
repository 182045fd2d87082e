//! The disruption controller, after upstream `pkg/controller/disruption/disruption.go`
//! (`trySync`, `getPodsForPdb`, `getExpectedPodCount`, `getExpectedScale` and the finders
//! `getPodReplicaSet` / `getPodDeployment` / `getScaleController`, `countHealthyPods`,
//! `buildDisruptedPodMap`, `updatePdbStatus`, `failSafe`) and
//! `k8s.io/component-helpers/apps/poddisruptionbudget/helpers.go`: it keeps each
//! PodDisruptionBudget's status.
//!
//! - The budget's pods are the pods of its namespace its selector matches (an empty selector
//!   matches all of them, a missing one none).
//! - `maxUnavailable` (int or percent) and a percent `minAvailable` count the pods' controllers'
//!   scale: the sum of `spec.replicas` over the distinct controllers (a ReplicaSet owned by a
//!   Deployment counts the Deployment's replicas); percentages are rounded up
//!   (`GetScaledValueFromIntOrPercent(..., true)`). `desiredHealthy` is `expected - maxUnavailable`
//!   (at least 0) or the scaled `minAvailable`. An integer `minAvailable` is `desiredHealthy` as
//!   is, with `expectedPods` the number of matching pods. Pods without a controller are left out
//!   of the scale with an `UnmanagedPods` warning; a controller k8s-mini cannot scale is an error
//!   (`jobs.batch does not implement the scale subresource`, `found no controllers for pod "x"`).
//! - `currentHealthy` counts the Ready pods that are neither being deleted nor in `disruptedPods`
//!   for less than `DeletionTimeout` (2 minutes); `disruptionsAllowed` is
//!   `currentHealthy - desiredHealthy`, 0 when negative or when no pod is expected.
//! - `disruptedPods` (written by the eviction subresource) keeps the pods not yet seen deleted for
//!   up to 2 minutes; a pod still there after that gets a `NotDeleted` warning and leaves the map.
//!   The budget is requeued for the earliest such expiry.
//! - The `DisruptionAllowed` condition is `True`/`SufficientPods` or `False`/`InsufficientPods`;
//!   the status is written only when something changed (or the condition is stale), with
//!   `observedGeneration` the budget's generation.
//! - A failure (other than a conflict, which is retried) goes through `failSafe`:
//!   `disruptionsAllowed: 0` and `DisruptionAllowed=False` with reason `SyncFailed` and the error,
//!   after a `CalculateExpectedPodCountFailed` warning.
//!
//! Not modelled: the stale `DisruptionTarget` condition clean-up (`syncStalePodDisruption`),
//! StatefulSets and ReplicationControllers as scale sources (k8s-mini does not simulate them:
//! their pods are "found no controllers"), and the informer resync.

use std::collections::BTreeMap;

use k8s_types::apiserver::{ApiClient, ApiExt};
use k8s_types::apps::{Deployment, ReplicaSet};
use k8s_types::controller::{Action, Controller, SyncError};
use k8s_types::core::event::event_types;
use k8s_types::core::Pod;
use k8s_types::events::EventRecorder;
use k8s_types::informer::{Delta, SharedInformerFactory};
use k8s_types::meta::timestamp_tick;
use k8s_types::policy::{
    conditions_are_up_to_date, set_status_condition, update_disruption_allowed_condition,
    PdbCondition, PodDisruptionBudget, PodDisruptionBudgetStatus, DISRUPTION_ALLOWED_CONDITION,
    SYNC_FAILED_REASON,
};
use k8s_types::workqueue::WorkQueue;
use k8s_types::{Kind, Object, Tick};

/// The controller name as kube-controller-manager registers it.
pub const DISRUPTION_CONTROLLER_NAME: &str = "disruption-controller";
/// The event source component upstream's disruption controller records as.
pub const DISRUPTION_EVENT_COMPONENT: &str = "controllermanager";
/// Upstream `DeletionTimeout`: how long an evicted pod may stay in `disruptedPods` (2 minutes).
pub const DELETION_TIMEOUT: Tick = 120;

/// Why the expected count could not be computed (upstream's error texts).
#[derive(Debug)]
struct ScaleError(String);

/// kube-controller-manager's disruption controller (PodDisruptionBudget status).
#[derive(Debug)]
pub struct DisruptionController {
    events: EventRecorder,
}

impl Default for DisruptionController {
    fn default() -> Self {
        Self::new()
    }
}

impl DisruptionController {
    /// A new controller.
    pub fn new() -> Self {
        DisruptionController {
            events: EventRecorder::for_component(DISRUPTION_EVENT_COMPONENT),
        }
    }
}

/// Upstream `getPodsForPdb`: the pods of the budget's namespace its selector matches (an empty
/// selector matches every pod, a missing one none), in name order.
pub fn pods_for_pdb<'a>(
    pdb: &PodDisruptionBudget,
    informers: &'a SharedInformerFactory,
) -> Vec<&'a Pod> {
    let Some(sel) = &pdb.spec.selector else {
        return Vec::new();
    };
    informers
        .of(&Kind::Pod)
        .list_namespace::<Pod>(pdb.metadata.namespace())
        .filter(|p| sel.matches(&p.metadata.labels))
        .collect()
}

/// Upstream `getExpectedScale` with the finders k8s-mini can answer: the sum of the scale of the
/// distinct controllers of `pods`, and the names of the pods without a controller.
fn expected_scale(
    pods: &[&Pod],
    informers: &SharedInformerFactory,
) -> Result<(i32, Vec<String>), ScaleError> {
    let mut scale: BTreeMap<String, i32> = BTreeMap::new();
    let mut unmanaged = Vec::new();
    for pod in pods {
        let Some(cref) = pod.metadata.controller_ref() else {
            unmanaged.push(pod.metadata.name.clone());
            continue;
        };
        if scale.contains_key(&cref.uid) {
            continue;
        }
        let ns = pod.metadata.namespace();
        let found = match cref.kind.as_str() {
            "ReplicaSet" => informers
                .resolve_controller_ref(&Kind::ReplicaSet, ns, cref)
                .and_then(|k| informers.of(&Kind::ReplicaSet).get_typed::<ReplicaSet>(&k))
                .map(|rs| {
                    // getPodDeployment first: a ReplicaSet a live Deployment controls counts the
                    // Deployment's replicas; otherwise the ReplicaSet's own.
                    let deployment = rs.metadata.controller_ref().and_then(|dref| {
                        informers
                            .resolve_controller_ref(&Kind::Deployment, ns, dref)
                            .and_then(|k| {
                                informers.of(&Kind::Deployment).get_typed::<Deployment>(&k)
                            })
                    });
                    match deployment {
                        Some(d) => (
                            d.metadata.uid.clone().unwrap_or_default(),
                            d.spec.replicas.unwrap_or(1),
                        ),
                        None => (
                            rs.metadata.uid.clone().unwrap_or_default(),
                            rs.spec.replicas.unwrap_or(1),
                        ),
                    }
                }),
            "Job" => {
                return Err(ScaleError(
                    "jobs.batch does not implement the scale subresource".to_string(),
                ))
            }
            _ => None,
        };
        match found {
            Some((uid, replicas)) => {
                scale.insert(uid, replicas);
            }
            None => {
                return Err(ScaleError(format!(
                    "found no controllers for pod {:?}",
                    pod.metadata.name
                )))
            }
        }
    }
    Ok((scale.values().sum(), unmanaged))
}

/// Upstream `getExpectedPodCount`: `(expectedCount, desiredHealthy, unmanagedPods)`.
fn expected_pod_count(
    pdb: &PodDisruptionBudget,
    pods: &[&Pod],
    informers: &SharedInformerFactory,
) -> Result<(i32, i32, Vec<String>), ScaleError> {
    if let Some(max) = &pdb.spec.max_unavailable {
        let (expected, unmanaged) = expected_scale(pods, informers)?;
        let max = max.scaled_value(expected, true).map_err(ScaleError)?;
        return Ok((expected, (expected - max).max(0), unmanaged));
    }
    match &pdb.spec.min_available {
        Some(k8s_types::apps::IntOrString::Int(n)) => Ok((pods.len() as i32, *n, Vec::new())),
        Some(min) => {
            let (expected, unmanaged) = expected_scale(pods, informers)?;
            let min = min.scaled_value(expected, true).map_err(ScaleError)?;
            Ok((expected, min, unmanaged))
        }
        None => Ok((0, 0, Vec::new())),
    }
}

/// Upstream `countHealthyPods`.
fn count_healthy(pods: &[&Pod], disrupted: &BTreeMap<String, String>, now: Tick) -> i32 {
    pods.iter()
        .filter(|p| p.metadata.deletion_timestamp.is_none())
        .filter(|p| {
            disrupted
                .get(&p.metadata.name)
                .and_then(|t| timestamp_tick(t))
                .is_none_or(|t| t.saturating_add(DELETION_TIMEOUT) <= now)
        })
        .filter(|p| p.is_ready())
        .count() as i32
}

impl DisruptionController {
    /// Upstream `buildDisruptedPodMap`: the entries still pending, and the earliest expiry.
    fn build_disrupted_pod_map(
        &mut self,
        pods: &[&Pod],
        pdb: &PodDisruptionBudget,
        now: Tick,
        api: &mut dyn ApiClient,
    ) -> (BTreeMap<String, String>, Option<Tick>) {
        let mut result = BTreeMap::new();
        let mut recheck: Option<Tick> = None;
        if pdb.status.disrupted_pods.is_empty() {
            return (result, recheck);
        }
        for pod in pods {
            if pod.metadata.deletion_timestamp.is_some() {
                continue;
            }
            let Some(at) = pdb.status.disrupted_pods.get(&pod.metadata.name) else {
                continue;
            };
            let expected = timestamp_tick(at)
                .unwrap_or(0)
                .saturating_add(DELETION_TIMEOUT);
            if expected < now {
                self.events.record(
                    api,
                    &Object::Pod(Box::new((*pod).clone())),
                    event_types::WARNING,
                    "NotDeleted",
                    format!(
                        "Pod was expected by PDB {}/{} to be deleted but it wasn't",
                        pdb.metadata.namespace(),
                        pdb.metadata.name
                    ),
                );
            } else {
                recheck = Some(recheck.map_or(expected, |r| r.min(expected)));
                result.insert(pod.metadata.name.clone(), at.clone());
            }
        }
        (result, recheck)
    }

    /// Upstream `trySync` (plus `updatePdbStatus`).
    fn try_sync(
        &mut self,
        pdb: &PodDisruptionBudget,
        informers: &SharedInformerFactory,
        api: &mut dyn ApiClient,
    ) -> Result<Action, SyncError> {
        let now = api.now();
        let obj = Object::PodDisruptionBudget(Box::new(pdb.clone()));
        let pods = pods_for_pdb(pdb, informers);
        if pods.is_empty() {
            self.events.record(
                api,
                &obj,
                event_types::NORMAL,
                "NoPods",
                "No matching pods found",
            );
        }
        let (expected, desired, unmanaged) = match expected_pod_count(pdb, &pods, informers) {
            Ok(v) => v,
            Err(ScaleError(e)) => {
                self.events.record(
                    api,
                    &obj,
                    event_types::WARNING,
                    "CalculateExpectedPodCountFailed",
                    format!("Failed to calculate the number of expected pods: {e}"),
                );
                return Err(SyncError::Invalid(e));
            }
        };
        if !unmanaged.is_empty() {
            let selector = pdb
                .spec
                .selector
                .as_ref()
                .map(k8s_types::labels::LabelSelector::go_string)
                .unwrap_or_default();
            self.events.record(
                api,
                &obj,
                event_types::WARNING,
                "UnmanagedPods",
                format!(
                    "Pods selected by this PodDisruptionBudget (selector: {selector}) were found to be unmanaged. As a result, the status of the PDB cannot be calculated correctly, which may result in undefined behavior. To account for these pods please set \".spec.minAvailable\" field of the PDB to an integer value."
                ),
            );
        }
        let (disrupted, recheck) = self.build_disrupted_pod_map(&pods, pdb, now, api);
        let healthy = count_healthy(&pods, &disrupted, now);
        let mut allowed = healthy - desired;
        if expected <= 0 || allowed <= 0 {
            allowed = 0;
        }
        let s = &pdb.status;
        let unchanged = s.current_healthy == healthy
            && s.desired_healthy == desired
            && s.expected_pods == expected
            && s.disruptions_allowed == allowed
            && s.disrupted_pods == disrupted
            && s.observed_generation == pdb.metadata.generation
            && conditions_are_up_to_date(pdb);
        if !unchanged {
            let mut new = pdb.clone();
            new.status = PodDisruptionBudgetStatus {
                observed_generation: pdb.metadata.generation,
                disrupted_pods: disrupted,
                disruptions_allowed: allowed,
                current_healthy: healthy,
                desired_healthy: desired,
                expected_pods: expected,
                conditions: pdb.status.conditions.clone(),
            };
            update_disruption_allowed_condition(&mut new, now);
            api.update_status_typed(new)?;
        }
        Ok(match recheck {
            Some(at) => Action::requeue(at.saturating_sub(now).max(1)),
            None => Action::AwaitChange,
        })
    }

    /// Upstream `failSafe`.
    fn fail_safe(
        &mut self,
        pdb: &PodDisruptionBudget,
        err: &SyncError,
        api: &mut dyn ApiClient,
    ) -> Result<Action, SyncError> {
        let mut new = pdb.clone();
        new.status.disruptions_allowed = 0;
        let observed = new.status.observed_generation;
        set_status_condition(
            &mut new.status.conditions,
            PdbCondition {
                type_: DISRUPTION_ALLOWED_CONDITION.to_string(),
                status: "False".to_string(),
                observed_generation: observed,
                last_transition_time: None,
                reason: SYNC_FAILED_REASON.to_string(),
                message: err.to_string(),
            },
            api.now(),
        );
        if new.status != pdb.status {
            api.update_status_typed(new)?;
        }
        Ok(Action::AwaitChange)
    }
}

impl Controller for DisruptionController {
    fn name(&self) -> &str {
        DISRUPTION_CONTROLLER_NAME
    }

    fn informers(&self) -> Vec<Kind> {
        vec![
            Kind::PodDisruptionBudget,
            Kind::Pod,
            Kind::ReplicaSet,
            Kind::Deployment,
        ]
    }

    fn on_change(
        &mut self,
        change: &Delta,
        informers: &SharedInformerFactory,
        queue: &mut WorkQueue,
    ) {
        match change.kind {
            // addPdb / updatePdb / removePdb.
            Kind::PodDisruptionBudget => queue.add(change.key.clone()),
            // addPod / updatePod / deletePod: the budgets covering the pod before or after.
            Kind::Pod => {
                for obj in [&change.old, &change.new].into_iter().flatten() {
                    let meta = obj.meta();
                    for key in informers.selecting::<PodDisruptionBudget>(
                        &Kind::PodDisruptionBudget,
                        meta.namespace(),
                        &meta.labels,
                        |p| p.spec.selector.as_ref(),
                    ) {
                        queue.add(key);
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
        let Some(pdb) = informers
            .of(&Kind::PodDisruptionBudget)
            .get_typed::<PodDisruptionBudget>(key)
            .cloned()
        else {
            return Ok(Action::AwaitChange);
        };
        match self.try_sync(&pdb, informers, api) {
            Ok(a) => Ok(a),
            Err(SyncError::Api(s)) if s.is_conflict() => Err(SyncError::Api(s)),
            Err(e) => self.fail_safe(&pdb, &e, api),
        }
    }
}
