//! `PodSpec` defaults, applied to Pods and to pod templates alike (upstream
//! `pkg/apis/core/v1/defaults.go` `SetDefaults_PodSpec`, `SetDefaults_ContainerPort`):
//! `restartPolicy: Always`, `terminationGracePeriodSeconds: 30` (seconds = ticks),
//! `schedulerName: default-scheduler`, `protocol: TCP` on every container port, each container's
//! `imagePullPolicy` (`SetDefaults_Container`) and each probe's timings (`SetDefaults_Probe`).
//! (`dnsPolicy`, `securityContext` and `enableServiceLinks` are not modelled.)

use k8s_types::core::{Container, PodSpec, Probe, DEFAULT_SCHEDULER_NAME};
use k8s_types::cow_arc::CowArc;

/// Upstream `v1.DefaultTerminationGracePeriodSeconds` (seconds; one tick each).
pub const DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS: i64 = 30;
/// Upstream `v1.RestartPolicyAlways`.
pub const DEFAULT_RESTART_POLICY: &str = "Always";
/// Upstream `v1.ProtocolTCP`.
pub const DEFAULT_PROTOCOL: &str = "TCP";

/// Upstream `SetDefaults_HTTPGetAction`: `path: /` and `scheme: HTTP` when empty (every httpGet
/// action: probes and lifecycle hooks).
pub fn set_defaults_http_get(action: &mut Option<serde_json::Value>) {
    let Some(serde_json::Value::Object(m)) = action else {
        return;
    };
    for (field, default) in [("path", "/"), ("scheme", "HTTP")] {
        let empty = match m.get(field) {
            None | Some(serde_json::Value::Null) => true,
            Some(serde_json::Value::String(v)) => v.is_empty(),
            Some(_) => false,
        };
        if empty {
            m.insert(field.to_string(), serde_json::Value::from(default));
        }
    }
}

/// Upstream `SetDefaults_Probe`: timeout 1 s, period 10 s, success threshold 1, failure threshold 3;
/// its httpGet action as [`set_defaults_http_get`].
pub fn set_defaults_probe(p: &mut Probe) {
    set_defaults_http_get(&mut p.http_get);
    for (field, default) in [
        (&mut p.timeout_seconds, 1),
        (&mut p.period_seconds, 10),
        (&mut p.success_threshold, 1),
        (&mut p.failure_threshold, 3),
    ] {
        if field.unwrap_or(0) == 0 {
            *field = Some(default);
        }
    }
}

/// Upstream `SetDefaults_Container`'s pull policy: `Always` when the image's tag is `latest` (an
/// image with neither tag nor digest has tag `latest`, `parsers.ParseImageName`), else
/// `IfNotPresent`.
pub fn default_pull_policy(image: &str) -> &'static str {
    let (name, digest) = match image.split_once('@') {
        Some((n, _)) => (n, true),
        None => (image, false),
    };
    let last = name.rsplit('/').next().unwrap_or(name);
    let tag = match last.rsplit_once(':') {
        Some((_, t)) => t,
        None if digest => "",
        None => "latest",
    };
    if tag == "latest" {
        "Always"
    } else {
        "IfNotPresent"
    }
}

fn default_containers(containers: &mut [Container]) {
    for c in containers.iter_mut() {
        if c.image_pull_policy.as_deref().unwrap_or("").is_empty() {
            c.image_pull_policy = Some(default_pull_policy(&c.image).to_string());
        }
        for p in [
            &mut c.liveness_probe,
            &mut c.readiness_probe,
            &mut c.startup_probe,
        ]
        .into_iter()
        .flatten()
        {
            set_defaults_probe(p);
        }
        if let Some(l) = &mut c.lifecycle {
            for h in [&mut l.post_start, &mut l.pre_stop].into_iter().flatten() {
                set_defaults_http_get(&mut h.http_get);
            }
        }
    }
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
    CowArc::write_if_changed(&mut spec.containers, |cs| default_containers(cs));
    default_containers(&mut spec.init_containers);
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
            }]
            .into(),
            ..Default::default()
        };
        set_defaults_pod_spec(&mut spec);
        assert_eq!(spec.restart_policy.as_deref(), Some("Always"));
        assert_eq!(spec.termination_grace_period_seconds, Some(30));
        assert_eq!(spec.scheduler_name.as_deref(), Some("default-scheduler"));
        assert_eq!(spec.containers[0].ports[0].protocol.as_deref(), Some("TCP"));
        assert_eq!(
            spec.containers[0].image_pull_policy.as_deref(),
            Some("Always")
        );
    }

    #[test]
    fn pull_policy_and_probe_defaults_match_upstream() {
        assert_eq!(default_pull_policy("nginx"), "Always");
        assert_eq!(default_pull_policy("nginx:latest"), "Always");
        assert_eq!(default_pull_policy("nginx:1.27"), "IfNotPresent");
        assert_eq!(default_pull_policy("registry:5000/team/app"), "Always");
        assert_eq!(
            default_pull_policy("registry:5000/team/app:v2"),
            "IfNotPresent"
        );
        assert_eq!(default_pull_policy("app@sha256:abcd"), "IfNotPresent");
        let mut p = Probe {
            period_seconds: Some(5),
            ..Default::default()
        };
        set_defaults_probe(&mut p);
        assert_eq!(
            (
                p.timeout_seconds,
                p.period_seconds,
                p.success_threshold,
                p.failure_threshold
            ),
            (Some(1), Some(5), Some(1), Some(3))
        );
        assert_eq!(p.initial_delay_seconds, None);
        // SetDefaults_HTTPGetAction: empty path and scheme filled, set ones kept.
        let mut p = Probe {
            http_get: Some(serde_json::json!({"port": 8080})),
            ..Default::default()
        };
        set_defaults_probe(&mut p);
        assert_eq!(
            p.http_get,
            Some(serde_json::json!({"port": 8080, "path": "/", "scheme": "HTTP"}))
        );
        let mut kept =
            Some(serde_json::json!({"port": 443, "path": "/healthz", "scheme": "HTTPS"}));
        set_defaults_http_get(&mut kept);
        assert_eq!(
            kept,
            Some(serde_json::json!({"port": 443, "path": "/healthz", "scheme": "HTTPS"}))
        );
    }
}
