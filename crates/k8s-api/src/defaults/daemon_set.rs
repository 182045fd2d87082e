//! DaemonSet defaults (upstream `pkg/apis/apps/v1/defaults.go` `SetDefaults_DaemonSet`):
//! `updateStrategy.type: RollingUpdate` with `maxUnavailable: 1` and `maxSurge: 0`,
//! `revisionHistoryLimit: 10`, and the PodSpec defaults on the template.

use k8s_types::apps::{
    DaemonSet, IntOrString, RollingUpdateDaemonSet, ROLLING_UPDATE_DAEMON_SET_STRATEGY,
};

use super::deployment::DEFAULT_REVISION_HISTORY_LIMIT;
use super::pod_spec::set_defaults_pod_spec;

/// Upstream `SetDefaults_DaemonSet`.
pub fn set_defaults_daemon_set(ds: &mut DaemonSet) {
    let strategy = ds.spec.update_strategy.get_or_insert_with(Default::default);
    if strategy.type_.as_deref().unwrap_or("").is_empty() {
        strategy.type_ = Some(ROLLING_UPDATE_DAEMON_SET_STRATEGY.to_string());
    }
    if strategy.type_.as_deref() == Some(ROLLING_UPDATE_DAEMON_SET_STRATEGY) {
        let ru = strategy
            .rolling_update
            .get_or_insert_with(RollingUpdateDaemonSet::default);
        if ru.max_unavailable.is_none() {
            ru.max_unavailable = Some(IntOrString::Int(1));
        }
        if ru.max_surge.is_none() {
            ru.max_surge = Some(IntOrString::Int(0));
        }
    }
    if ds.spec.revision_history_limit.is_none() {
        ds.spec.revision_history_limit = Some(DEFAULT_REVISION_HISTORY_LIMIT);
    }
    set_defaults_pod_spec(&mut ds.spec.template.spec);
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_types::apps::DaemonSetUpdateStrategy;

    #[test]
    fn empty_daemon_set_gets_upstream_defaults() {
        // Upstream apps/v1 defaults_test.go TestSetDefaultDaemonSetSpec: RollingUpdate with
        // maxUnavailable 1, maxSurge 0, revisionHistoryLimit 10.
        let mut ds = DaemonSet::default();
        set_defaults_daemon_set(&mut ds);
        let s = ds.spec.update_strategy.clone().unwrap();
        assert_eq!(s.type_.as_deref(), Some("RollingUpdate"));
        let ru = s.rolling_update.unwrap();
        assert_eq!(ru.max_unavailable, Some(IntOrString::Int(1)));
        assert_eq!(ru.max_surge, Some(IntOrString::Int(0)));
        assert_eq!(ds.spec.revision_history_limit, Some(10));
        assert_eq!(
            ds.spec.template.spec.restart_policy.as_deref(),
            Some("Always")
        );
    }

    #[test]
    fn on_delete_gets_no_rolling_update() {
        let mut ds = DaemonSet::default();
        ds.spec.update_strategy = Some(DaemonSetUpdateStrategy {
            type_: Some("OnDelete".into()),
            rolling_update: None,
        });
        set_defaults_daemon_set(&mut ds);
        assert!(ds.spec.update_strategy.unwrap().rolling_update.is_none());
    }
}
