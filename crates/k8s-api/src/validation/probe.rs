//! Probes, lifecycle hooks and `imagePullPolicy` of a container (upstream
//! `pkg/apis/core/validation/validation.go`: `validateProbe`, `validateHandler`, `validateLifecycle`,
//! `validateSleepAction`, `validatePullPolicy`, and the per-probe rules of `validateContainers` /
//! `validateInitContainers`).

use k8s_types::core::{Container, LifecycleHandler, Probe};
use k8s_types::status::FieldError;

use super::{child, nonnegative, ErrorList};

/// Supported `imagePullPolicy` values, in upstream's order.
pub const PULL_POLICIES: [&str; 3] = ["Always", "IfNotPresent", "Never"];

/// Upstream's message for a lifecycle hook or probe on a plain init container.
pub const INIT_CONTAINER_FORBIDDEN: &str =
    "may not be set for init containers without restartPolicy=Always";

/// Upstream `validateHandler`: exactly one action.
fn validate_handler(count: usize, path: &str) -> ErrorList {
    match count {
        0 => vec![FieldError::required(path, "must specify a handler type")],
        1 => Vec::new(),
        _ => vec![FieldError::forbidden(
            path,
            "may not specify more than 1 handler type",
        )],
    }
}

fn probe_handlers(p: &Probe) -> usize {
    [
        p.exec.is_some(),
        p.http_get.is_some(),
        p.tcp_socket.is_some(),
        p.grpc.is_some(),
    ]
    .into_iter()
    .filter(|b| *b)
    .count()
}

fn hook_handlers(h: &LifecycleHandler) -> usize {
    [
        h.exec.is_some(),
        h.http_get.is_some(),
        h.tcp_socket.is_some(),
        h.sleep.is_some(),
    ]
    .into_iter()
    .filter(|b| *b)
    .count()
}

/// Upstream `validateProbe`: one handler, non-negative timings, a positive probe-level grace period.
pub fn validate_probe(probe: &Probe, path: &str) -> ErrorList {
    let mut errs = validate_handler(probe_handlers(probe), path);
    for (name, v) in [
        ("initialDelaySeconds", probe.initial_delay_seconds),
        ("timeoutSeconds", probe.timeout_seconds),
        ("periodSeconds", probe.period_seconds),
        ("successThreshold", probe.success_threshold),
        ("failureThreshold", probe.failure_threshold),
    ] {
        errs.extend(nonnegative(&child(path, name), i64::from(v.unwrap_or(0))));
    }
    if let Some(g) = probe.termination_grace_period_seconds.filter(|g| *g <= 0) {
        errs.push(FieldError::invalid(
            child(path, "terminationGracePeriodSeconds"),
            g.to_string(),
            "must be greater than 0",
        ));
    }
    errs
}

/// Upstream `validateLifecycle` + `validateSleepAction`: each hook has one action; a sleep lasts
/// more than 0 and less than the pod's grace period.
pub fn validate_hook(hook: &LifecycleHandler, grace: Option<i64>, path: &str) -> ErrorList {
    let mut errs = validate_handler(hook_handlers(hook), path);
    if let Some(sleep) = &hook.sleep {
        let limit = grace.unwrap_or(i64::MAX);
        if sleep.seconds <= 0 || sleep.seconds > limit {
            errs.push(FieldError::invalid(
                child(&child(path, "sleep"), "seconds"),
                sleep.seconds.to_string(),
                format!(
                    "must be greater than 0 and less than terminationGracePeriodSeconds ({})",
                    grace.unwrap_or(0)
                ),
            ));
        }
    }
    errs
}

/// Upstream `validatePullPolicy`.
pub fn validate_pull_policy(policy: Option<&str>, path: &str) -> ErrorList {
    match policy.unwrap_or("") {
        "Always" | "IfNotPresent" | "Never" => Vec::new(),
        "" => vec![FieldError::required(path, "")],
        other => vec![FieldError::not_supported(path, other, &PULL_POLICIES)],
    }
}

/// Probes and hooks of one container at `path`. `plain_init` is an init container without
/// `restartPolicy: Always` (no probes, no hooks); `grace` is the pod's grace period.
pub fn validate_container_probes(
    c: &Container,
    plain_init: bool,
    grace: Option<i64>,
    path: &str,
) -> ErrorList {
    let mut errs = super::at_path_if_invalid(
        |p| validate_pull_policy(c.image_pull_policy.as_deref(), p),
        || child(path, "imagePullPolicy"),
    );
    if plain_init {
        for (name, set) in [
            ("lifecycle", c.lifecycle.is_some()),
            ("livenessProbe", c.liveness_probe.is_some()),
            ("readinessProbe", c.readiness_probe.is_some()),
            ("startupProbe", c.startup_probe.is_some()),
        ] {
            if set {
                errs.push(FieldError::forbidden(
                    child(path, name),
                    INIT_CONTAINER_FORBIDDEN,
                ));
            }
        }
        return errs;
    }
    if let Some(lc) = &c.lifecycle {
        let lp = child(path, "lifecycle");
        if let Some(h) = &lc.post_start {
            errs.extend(validate_hook(h, grace, &child(&lp, "postStart")));
        }
        if let Some(h) = &lc.pre_stop {
            errs.extend(validate_hook(h, grace, &child(&lp, "preStop")));
        }
    }
    if let Some(p) = &c.liveness_probe {
        let pp = child(path, "livenessProbe");
        errs.extend(validate_probe(p, &pp));
        errs.extend(success_must_be_one(p, &pp));
    }
    if let Some(p) = &c.readiness_probe {
        let pp = child(path, "readinessProbe");
        errs.extend(validate_probe(p, &pp));
        if let Some(g) = p.termination_grace_period_seconds {
            errs.push(FieldError::invalid(
                child(&pp, "terminationGracePeriodSeconds"),
                g.to_string(),
                "must not be set for readinessProbes",
            ));
        }
    }
    if let Some(p) = &c.startup_probe {
        let pp = child(path, "startupProbe");
        errs.extend(validate_probe(p, &pp));
        errs.extend(success_must_be_one(p, &pp));
    }
    errs
}

fn success_must_be_one(p: &Probe, path: &str) -> ErrorList {
    match p.success_threshold {
        Some(1) => Vec::new(),
        other => vec![FieldError::invalid(
            child(path, "successThreshold"),
            other.unwrap_or(0).to_string(),
            "must be 1",
        )],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_types::core::SleepAction;

    fn probe() -> Probe {
        Probe {
            http_get: Some(serde_json::json!({"path": "/healthz", "port": 8080})),
            timeout_seconds: Some(1),
            period_seconds: Some(10),
            success_threshold: Some(1),
            failure_threshold: Some(3),
            ..Default::default()
        }
    }

    #[test]
    fn probe_rules_follow_upstream() {
        assert!(validate_probe(&probe(), "p").is_empty());
        let none = Probe::default();
        let e = validate_probe(&none, "spec.containers[0].livenessProbe");
        assert_eq!(
            e[0].to_string(),
            "spec.containers[0].livenessProbe: Required value: must specify a handler type"
        );
        let mut two = probe();
        two.exec = Some(serde_json::json!({"command": ["true"]}));
        two.period_seconds = Some(-1);
        let e = validate_probe(&two, "p");
        assert_eq!(
            e[0].to_string(),
            "p: Forbidden: may not specify more than 1 handler type"
        );
        assert_eq!(
            e[1].to_string(),
            "p.periodSeconds: Invalid value: -1: must be greater than or equal to 0"
        );
    }

    #[test]
    fn liveness_success_threshold_and_init_containers() {
        let mut c = Container {
            name: "a".into(),
            image: "x".into(),
            image_pull_policy: Some("IfNotPresent".into()),
            ..Default::default()
        };
        let mut p = probe();
        p.success_threshold = Some(2);
        c.liveness_probe = Some(Box::new(p.clone()));
        c.readiness_probe = Some(Box::new(p));
        let e = validate_container_probes(&c, false, Some(30), "c");
        assert_eq!(e.len(), 1);
        assert_eq!(
            e[0].to_string(),
            "c.livenessProbe.successThreshold: Invalid value: 2: must be 1"
        );
        let e = validate_container_probes(&c, true, Some(30), "c");
        assert_eq!(
            e.iter().map(ToString::to_string).collect::<Vec<_>>(),
            vec![
                "c.livenessProbe: Forbidden: may not be set for init containers without restartPolicy=Always",
                "c.readinessProbe: Forbidden: may not be set for init containers without restartPolicy=Always",
            ]
        );
    }

    #[test]
    fn pull_policy_and_sleep_hook() {
        let e = validate_pull_policy(Some("Sometimes"), "c.imagePullPolicy");
        assert_eq!(
            e[0].to_string(),
            "c.imagePullPolicy: Unsupported value: \"Sometimes\": supported values: \"Always\", \"IfNotPresent\", \"Never\""
        );
        let hook = LifecycleHandler {
            sleep: Some(SleepAction { seconds: 40 }),
            ..Default::default()
        };
        let e = validate_hook(&hook, Some(30), "c.lifecycle.preStop");
        assert_eq!(
            e[0].to_string(),
            "c.lifecycle.preStop.sleep.seconds: Invalid value: 40: must be greater than 0 and less than terminationGracePeriodSeconds (30)"
        );
    }
}
