//! The resource quota controller, after upstream
//! `pkg/controller/resourcequota/resource_quota_controller.go` (`syncResourceQuota`,
//! `replenishQuota`), `resource_quota_monitor.go` (which changes replenish) and
//! `k8s.io/apiserver/pkg/quota/v1/generic/evaluator.go` (`CalculateUsageStats`).
//!
//! A quota is synced when it is added or its spec changes, when something it counts is deleted in
//! its namespace or a pod there turns Succeeded/Failed (upstream's replenishment), and every 5
//! minutes (upstream `--resource-quota-sync-period`). A sync sets `status.hard` to `spec.hard`
//! and `status.used` to the usage of every resource of `spec.hard`: for the pod resources, the sum
//! of [`k8s_types::quota::pod_usage`] over the namespace's pods in the quota's scopes (0 when none);
//! for `count/<resource>.<group>` and the legacy `services`, `persistentvolumeclaims`,
//! `resourcequotas`, the number of such objects. The status is written only when it changes.
//!
//! Not counted: kinds k8s-mini does not type, and Events, Leases and EndpointSlices (their counts
//! stay 0); the time-based end of a deleted pod's charge (`QuotaV1Pod` after
//! `deletionTimestamp + grace`) is only seen at the next periodic sync or the pod's deletion.

use std::collections::BTreeSet;

use k8s_types::apiserver::ApiClient;
use k8s_types::controller::{Action, Controller, SyncError};
use k8s_types::core::{Pod, ResourceList, ResourceQuota, ResourceQuotaStatus};
use k8s_types::informer::{split_key, Delta, SharedInformerFactory};
use k8s_types::quota::{add, mask, matching_resources, pod_matches_scope, pod_usage, quota_v1_pod};
use k8s_types::workqueue::WorkQueue;
use k8s_types::{Kind, Object, Quantity, Resource, Tick};

/// The controller name upstream registers (`resourcequota-controller`).
pub const RESOURCE_QUOTA_CONTROLLER_NAME: &str = "resourcequota-controller";
/// Upstream `--resource-quota-sync-period` default: 5 minutes.
pub const RESOURCE_QUOTA_SYNC_PERIOD: Tick = 300;

/// The kinds whose objects are counted (every typed namespaced kind but Events, Leases and
/// EndpointSlices).
fn counted_kinds() -> Vec<Kind> {
    Kind::TYPED
        .iter()
        .filter(|k| k.namespaced() && !matches!(k, Kind::Event | Kind::Lease | Kind::EndpointSlice))
        .cloned()
        .collect()
}

/// kube-controller-manager's resource quota controller.
#[derive(Clone, Debug, Default)]
pub struct ResourceQuotaController;

impl ResourceQuotaController {
    /// A new controller.
    pub fn new() -> Self {
        ResourceQuotaController
    }
}

/// Upstream `CalculateUsage` + the masking of `syncResourceQuota`: the usage of `namespace` for
/// every resource of `hard`, for a quota with `scopes`, at `now`.
pub fn calculate_usage(
    informers: &SharedInformerFactory,
    namespace: &str,
    hard: &ResourceList,
    scopes: &[String],
    now: Tick,
) -> ResourceList {
    let zero = Quantity::zero();
    let mut used = ResourceList::new();
    for kind in counted_kinds() {
        let tracked = matching_resources(&kind, hard.keys());
        if tracked.is_empty() {
            continue;
        }
        for r in &tracked {
            used.insert(r.clone(), zero.clone());
        }
        let Some(inf) = informers.informer(&kind) else {
            continue;
        };
        if kind == Kind::Pod {
            for pod in inf.list_namespace::<Pod>(namespace) {
                if scopes.iter().all(|s| pod_matches_scope(pod, s)) {
                    used = add(&used, &mask(&pod_usage(pod, now), &tracked));
                }
            }
        } else if scopes.is_empty() {
            let n = inf
                .list()
                .filter(|o| o.meta().namespace() == namespace)
                .count();
            let count = Quantity::from_value(
                i64::try_from(n).unwrap_or(i64::MAX),
                k8s_types::quantity::Format::DecimalSI,
            );
            for r in &tracked {
                used.insert(r.clone(), count.clone());
            }
        }
    }
    let names: BTreeSet<String> = hard.keys().cloned().collect();
    mask(&used, &names)
}

impl Controller for ResourceQuotaController {
    fn name(&self) -> &str {
        RESOURCE_QUOTA_CONTROLLER_NAME
    }

    fn informers(&self) -> Vec<Kind> {
        let mut kinds = vec![Kind::ResourceQuota];
        kinds.extend(
            counted_kinds()
                .into_iter()
                .filter(|k| *k != Kind::ResourceQuota),
        );
        kinds
    }

    fn on_change(
        &mut self,
        change: &Delta,
        informers: &SharedInformerFactory,
        queue: &mut WorkQueue,
    ) {
        if change.kind == Kind::ResourceQuota {
            // addQuota / updateQuota: a new quota, or a spec that changed.
            let changed = match (change.old.as_deref(), change.new.as_deref()) {
                (_, None) => false,
                (Some(Object::ResourceQuota(o)), Some(Object::ResourceQuota(n))) => {
                    o.spec != n.spec || n.status.hard != n.spec.hard
                }
                _ => true,
            };
            if changed {
                queue.add(change.key.clone());
            }
            return;
        }
        // The quota monitor's replenishment: deletes, and pods that stop being charged.
        let replenish = match (change.old.as_deref(), change.new.as_deref()) {
            (Some(_), None) => true,
            (Some(Object::Pod(o)), Some(Object::Pod(n))) => {
                quota_v1_pod(o, 0) && !quota_v1_pod(n, 0)
            }
            _ => false,
        };
        if !replenish {
            return;
        }
        let (ns, _) = split_key(&change.key);
        let Some(quotas) = informers.informer(&Kind::ResourceQuota) else {
            return;
        };
        let keys: Vec<String> = quotas
            .list_namespace::<ResourceQuota>(ns)
            .filter(|q| !matching_resources(&change.kind, q.status.hard.keys()).is_empty())
            .map(|q| format!("{ns}/{}", q.metadata.name))
            .collect();
        for k in keys {
            queue.add(k);
        }
    }

    fn sync(
        &mut self,
        key: &str,
        informers: &SharedInformerFactory,
        api: &mut dyn ApiClient,
    ) -> Result<Action, SyncError> {
        let Some(rq) = informers
            .of(&Kind::ResourceQuota)
            .get_typed::<ResourceQuota>(key)
        else {
            return Ok(Action::AwaitChange);
        };
        let now = api.now();
        let mut used = calculate_usage(
            informers,
            rq.metadata.namespace(),
            &rq.spec.hard,
            &rq.spec.scopes,
            now,
        );
        // Upstream keeps past observations of resources it could not calculate.
        for (k, v) in &rq.status.used {
            if rq.spec.hard.contains_key(k) {
                used.entry(k.clone()).or_insert_with(|| v.clone());
            }
        }
        let status = ResourceQuotaStatus {
            hard: rq.spec.hard.clone(),
            used,
        };
        if status != rq.status {
            let mut updated = rq.clone();
            updated.status = status;
            match api.update_status(updated.into_object()) {
                Ok(_) => {}
                Err(e) if e.is_not_found() => return Ok(Action::AwaitChange),
                Err(e) => return Err(e.into()),
            }
        }
        Ok(Action::requeue(RESOURCE_QUOTA_SYNC_PERIOD))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_typed_namespaced_kinds_but_events_leases_and_slices_are_counted() {
        let kinds = counted_kinds();
        assert!(kinds.contains(&Kind::Pod));
        assert!(kinds.contains(&Kind::Deployment));
        assert!(!kinds.contains(&Kind::Event));
        assert!(!kinds.contains(&Kind::Node));
    }
}
