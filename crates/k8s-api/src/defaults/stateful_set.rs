//! StatefulSet defaults (upstream `pkg/apis/apps/v1/defaults.go` `SetDefaults_StatefulSet`):
//! `podManagementPolicy: OrderedReady`, `updateStrategy.type: RollingUpdate` with `partition: 0`,
//! `replicas: 1`, `revisionHistoryLimit: 10`, `persistentVolumeClaimRetentionPolicy` Retain /
//! Retain (StatefulSetAutoDeletePVC, beta and on in v1.32), the template labels as the
//! selector when none is given is a v1beta1 rule and not applied (apps/v1 requires it), and
//! the PodSpec defaults on the template. The claim templates get `volumeMode: Filesystem`
//! (upstream `SetDefaults_PersistentVolumeClaimSpec`).

use k8s_types::apps::{
    RollingUpdateStatefulSetStrategy, StatefulSet, StatefulSetPersistentVolumeClaimRetentionPolicy,
    ORDERED_READY_POD_MANAGEMENT, RETAIN_PVC_RETENTION, ROLLING_UPDATE_STATEFUL_SET_STRATEGY,
};

use super::deployment::DEFAULT_REVISION_HISTORY_LIMIT;
use super::persistent_volume_claim::set_defaults_persistent_volume_claim_spec;
use super::pod_spec::set_defaults_pod_spec;

/// Upstream `SetDefaults_StatefulSet`.
pub fn set_defaults_stateful_set(ss: &mut StatefulSet) {
    let spec = &mut ss.spec;
    if spec
        .pod_management_policy
        .as_deref()
        .unwrap_or("")
        .is_empty()
    {
        spec.pod_management_policy = Some(ORDERED_READY_POD_MANAGEMENT.to_string());
    }
    let strategy = spec.update_strategy.get_or_insert_with(Default::default);
    if strategy.type_.as_deref().unwrap_or("").is_empty() {
        strategy.type_ = Some(ROLLING_UPDATE_STATEFUL_SET_STRATEGY.to_string());
    }
    if strategy.type_.as_deref() == Some(ROLLING_UPDATE_STATEFUL_SET_STRATEGY) {
        let ru = strategy
            .rolling_update
            .get_or_insert_with(RollingUpdateStatefulSetStrategy::default);
        if ru.partition.is_none() {
            ru.partition = Some(0);
        }
    }
    let policy = spec
        .persistent_volume_claim_retention_policy
        .get_or_insert_with(StatefulSetPersistentVolumeClaimRetentionPolicy::default);
    for p in [&mut policy.when_deleted, &mut policy.when_scaled] {
        if p.as_deref().unwrap_or("").is_empty() {
            *p = Some(RETAIN_PVC_RETENTION.to_string());
        }
    }
    if spec.replicas.is_none() {
        spec.replicas = Some(1);
    }
    if spec.revision_history_limit.is_none() {
        spec.revision_history_limit = Some(DEFAULT_REVISION_HISTORY_LIMIT);
    }
    for claim in &mut spec.volume_claim_templates {
        set_defaults_persistent_volume_claim_spec(&mut claim.spec);
    }
    set_defaults_pod_spec(&mut spec.template.spec);
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_types::apps::StatefulSetUpdateStrategy;

    #[test]
    fn empty_stateful_set_gets_upstream_defaults() {
        // Upstream apps/v1 defaults_test.go TestSetDefaultStatefulSet: OrderedReady,
        // RollingUpdate partition 0, replicas 1, revisionHistoryLimit 10, Retain / Retain.
        let mut ss = StatefulSet::default();
        set_defaults_stateful_set(&mut ss);
        assert_eq!(
            ss.spec.pod_management_policy.as_deref(),
            Some("OrderedReady")
        );
        let s = ss.spec.update_strategy.clone().unwrap();
        assert_eq!(s.type_.as_deref(), Some("RollingUpdate"));
        assert_eq!(s.rolling_update.unwrap().partition, Some(0));
        assert_eq!(ss.spec.replicas, Some(1));
        assert_eq!(ss.spec.revision_history_limit, Some(10));
        let p = ss.spec.persistent_volume_claim_retention_policy.unwrap();
        assert_eq!(p.when_deleted.as_deref(), Some("Retain"));
        assert_eq!(p.when_scaled.as_deref(), Some("Retain"));
        assert_eq!(
            ss.spec.template.spec.restart_policy.as_deref(),
            Some("Always")
        );
    }

    #[test]
    fn on_delete_gets_no_partition_and_given_values_stay() {
        let mut ss = StatefulSet::default();
        ss.spec.update_strategy = Some(StatefulSetUpdateStrategy {
            type_: Some("OnDelete".into()),
            rolling_update: None,
        });
        ss.spec.pod_management_policy = Some("Parallel".into());
        ss.spec.replicas = Some(0);
        set_defaults_stateful_set(&mut ss);
        assert!(ss.spec.update_strategy.unwrap().rolling_update.is_none());
        assert_eq!(ss.spec.pod_management_policy.as_deref(), Some("Parallel"));
        assert_eq!(ss.spec.replicas, Some(0));
    }
}
