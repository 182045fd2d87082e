//! `PodSpec` defaults, applied to Pods and to pod templates alike (upstream
//! `pkg/apis/core/v1/defaults.go` `SetDefaults_PodSpec`, `SetDefaults_ContainerPort`):
//! `restartPolicy: Always`, `terminationGracePeriodSeconds: 30` (seconds = ticks),
//! `schedulerName: default-scheduler`, and `protocol: TCP` on every container port.
//! (`dnsPolicy`, `securityContext` and `enableServiceLinks` are not modelled.)

use k8s_types::core::{Container, PodSpec, DEFAULT_SCHEDULER_NAME};

/// Upstream `v1.DefaultTerminationGracePeriodSeconds` (seconds; one tick each).
pub const DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS: i64 = 30;
/// Upstream `v1.RestartPolicyAlways`.
pub const DEFAULT_RESTART_POLICY: &str = "Always";
/// Upstream `v1.ProtocolTCP`.
pub const DEFAULT_PROTOCOL: &str = "TCP";

fn default_ports(containers: &mut [Container]) {
    for c in containers {
        for p in &mut c.ports {
            if p.protocol.as_deref().unwrap_or("").is_empty() {
                p.protocol = Some(DEFAULT_PROTOCOL.to_string());
            }
        }
    }
}

/// Upstream `SetDefaults_PodSpec` plus the container-port defaults.
pub fn set_defaults_pod_spec(spec: &mut PodSpec) {
    if spec.restart_policy.as_deref().unwrap_or("").is_empty() {
        spec.restart_policy = Some(DEFAULT_RESTART_POLICY.to_string());
    }
    if spec.termination_grace_period_seconds.is_none() {
        spec.termination_grace_period_seconds = Some(DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS);
    }
    if spec.scheduler_name.as_deref().unwrap_or("").is_empty() {
        spec.scheduler_name = Some(DEFAULT_SCHEDULER_NAME.to_string());
    }
    default_ports(&mut spec.containers);
    default_ports(&mut spec.init_containers);
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_types::core::ContainerPort;

    #[test]
    fn pod_spec_defaults_match_upstream() {
        let mut spec = PodSpec {
            containers: vec![Container {
                ports: vec![ContainerPort {
                    container_port: 80,
                    ..Default::default()
                }],
                ..Default::default()
            }],
            ..Default::default()
        };
        set_defaults_pod_spec(&mut spec);
        assert_eq!(spec.restart_policy.as_deref(), Some("Always"));
        assert_eq!(spec.termination_grace_period_seconds, Some(30));
        assert_eq!(spec.scheduler_name.as_deref(), Some("default-scheduler"));
        assert_eq!(spec.containers[0].ports[0].protocol.as_deref(), Some("TCP"));
    }
}
