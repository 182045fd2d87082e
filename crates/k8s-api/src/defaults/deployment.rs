//! Deployment defaults (upstream `pkg/apis/apps/v1/defaults.go` `SetDefaults_Deployment`):
//! `replicas: 1`, `strategy.type: RollingUpdate` with `maxUnavailable: 25%` and `maxSurge: 25%`,
//! `revisionHistoryLimit: 10`, `progressDeadlineSeconds: 600`, and the PodSpec defaults on the
//! template.

use k8s_types::apps::{Deployment, IntOrString, RollingUpdateDeployment};

use super::pod_spec::set_defaults_pod_spec;

/// Upstream default `revisionHistoryLimit`.
pub const DEFAULT_REVISION_HISTORY_LIMIT: i32 = 10;
/// Upstream default `progressDeadlineSeconds` (seconds = ticks).
pub const DEFAULT_PROGRESS_DEADLINE_SECONDS: i32 = 600;
/// Upstream default `maxUnavailable` and `maxSurge`.
pub const DEFAULT_MAX_UNAVAILABLE_AND_SURGE: &str = "25%";

/// Upstream `SetDefaults_Deployment`.
pub fn set_defaults_deployment(d: &mut Deployment) {
    if d.spec.replicas.is_none() {
        d.spec.replicas = Some(1);
    }
    let strategy = d.spec.strategy.get_or_insert_with(Default::default);
    if strategy.type_.as_deref().unwrap_or("").is_empty() {
        strategy.type_ = Some("RollingUpdate".to_string());
    }
    if strategy.type_.as_deref() == Some("RollingUpdate") {
        let ru = strategy
            .rolling_update
            .get_or_insert_with(RollingUpdateDeployment::default);
        if ru.max_unavailable.is_none() {
            ru.max_unavailable = Some(IntOrString::String(
                DEFAULT_MAX_UNAVAILABLE_AND_SURGE.into(),
            ));
        }
        if ru.max_surge.is_none() {
            ru.max_surge = Some(IntOrString::String(
                DEFAULT_MAX_UNAVAILABLE_AND_SURGE.into(),
            ));
        }
    }
    if d.spec.revision_history_limit.is_none() {
        d.spec.revision_history_limit = Some(DEFAULT_REVISION_HISTORY_LIMIT);
    }
    if d.spec.progress_deadline_seconds.is_none() {
        d.spec.progress_deadline_seconds = Some(DEFAULT_PROGRESS_DEADLINE_SECONDS);
    }
    set_defaults_pod_spec(&mut d.spec.template.spec);
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_types::apps::DeploymentStrategy;

    #[test]
    fn empty_deployment_gets_upstream_defaults() {
        // Upstream apps/v1 defaults_test.go TestSetDefaultDeployment: replicas 1, RollingUpdate
        // 25%/25%, revisionHistoryLimit 10, progressDeadlineSeconds 600.
        let mut d = Deployment::default();
        set_defaults_deployment(&mut d);
        assert_eq!(d.spec.replicas, Some(1));
        let s = d.spec.strategy.clone().unwrap();
        assert_eq!(s.type_.as_deref(), Some("RollingUpdate"));
        let ru = s.rolling_update.unwrap();
        assert_eq!(ru.max_unavailable, Some(IntOrString::String("25%".into())));
        assert_eq!(ru.max_surge, Some(IntOrString::String("25%".into())));
        assert_eq!(d.spec.revision_history_limit, Some(10));
        assert_eq!(d.spec.progress_deadline_seconds, Some(600));
        assert_eq!(
            d.spec.template.spec.restart_policy.as_deref(),
            Some("Always")
        );
    }

    #[test]
    fn recreate_gets_no_rolling_update() {
        let mut d = Deployment::default();
        d.spec.strategy = Some(DeploymentStrategy {
            type_: Some("Recreate".into()),
            rolling_update: None,
        });
        set_defaults_deployment(&mut d);
        assert!(d.spec.strategy.unwrap().rolling_update.is_none());
    }
}
