//! ReplicaSet defaults (upstream `pkg/apis/apps/v1/defaults.go` `SetDefaults_ReplicaSet`):
//! `replicas: 1` and the PodSpec defaults on the template.

use k8s_types::apps::ReplicaSet;

use super::pod_spec::set_defaults_pod_spec;

/// Upstream `SetDefaults_ReplicaSet`.
pub fn set_defaults_replica_set(rs: &mut ReplicaSet) {
    if rs.spec.replicas.is_none() {
        rs.spec.replicas = Some(1);
    }
    set_defaults_pod_spec(&mut rs.spec.template.spec);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replicas_default_to_one() {
        let mut rs = ReplicaSet::default();
        set_defaults_replica_set(&mut rs);
        assert_eq!(rs.spec.replicas, Some(1));
        assert_eq!(
            rs.spec.template.spec.termination_grace_period_seconds,
            Some(30)
        );
    }
}
