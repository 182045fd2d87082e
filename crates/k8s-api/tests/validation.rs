//! Validation through the public API: all field errors gathered, upstream paths and messages
//! (pkg/apis/core/validation, pkg/apis/apps/validation).

mod common;

use common::{meta, pod, q, server};
use k8s_types::apiserver::ApiClient;
use k8s_types::apps::{Deployment, IntOrString, PodTemplateSpec, RollingUpdateDeployment};
use k8s_types::labels::LabelSelector;
use k8s_types::status::StatusReason;
use k8s_types::{Object, Resource};

#[test]
fn negative_request_reports_the_issue_field_path() {
    let mut api = server();
    let mut p = pod("web");
    p.spec.containers[0]
        .resources
        .requests
        .insert("cpu".into(), q("-1"));
    let err = api.create(Object::Pod(Box::new(p))).unwrap_err();
    assert_eq!(err.reason, StatusReason::Invalid);
    assert_eq!(err.code, 422);
    assert_eq!(
        err.message,
        "Pod \"web\" is invalid: spec.containers[0].resources.requests[cpu]: Invalid value: \"-1\": must be greater than or equal to 0"
    );
    assert_eq!(err.causes.len(), 1);
    assert_eq!(err.causes[0].reason, "FieldValueInvalid");
    assert_eq!(
        err.causes[0].field,
        "spec.containers[0].resources.requests[cpu]"
    );
    assert_eq!(
        err.causes[0].message,
        "Invalid value: \"-1\": must be greater than or equal to 0"
    );
}

#[test]
fn every_error_is_gathered() {
    let mut api = server();
    let mut p = pod("Web_1");
    p.spec.containers[0].image.clear();
    p.spec.containers[0]
        .resources
        .requests
        .insert("cpu".into(), q("2"));
    p.spec.containers[0]
        .resources
        .limits
        .insert("cpu".into(), q("1"));
    p.spec.containers[0]
        .resources
        .limits
        .insert("nvidia.com/gpu".into(), q("500m"));
    let err = api.create(Object::Pod(Box::new(p))).unwrap_err();
    let fields: Vec<&str> = err.causes.iter().map(|c| c.field.as_str()).collect();
    assert_eq!(
        fields,
        vec![
            "metadata.name",
            "spec.containers[0].image",
            "spec.containers[0].resources.limits[nvidia.com/gpu]",
            "spec.containers[0].resources.requests",
            // The limit was copied to the request by defaulting, so it is checked twice.
            "spec.containers[0].resources.requests[nvidia.com/gpu]",
        ]
    );
    assert!(err.message.starts_with("Pod \"Web_1\" is invalid: [metadata.name: Invalid value: \"Web_1\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'), spec.containers[0].image: Required value, "));
    assert_eq!(
        err.causes[3].message,
        "Invalid value: \"2\": must be less than or equal to cpu limit of 1"
    );
    assert_eq!(
        err.causes[2].message,
        "Invalid value: 500m: must be an integer"
    );
}

fn deployment(selector: &[(&str, &str)], labels: &[(&str, &str)]) -> Deployment {
    let mut t = PodTemplateSpec::default();
    t.metadata.labels = labels
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    t.spec = pod("x").spec.into_inner();
    let mut d = Deployment {
        metadata: meta("web", None),
        ..Default::default()
    };
    d.spec.selector = Some(LabelSelector::from_labels(selector.iter().copied()));
    d.spec.template = t;
    d
}

#[test]
fn deployment_selector_must_match_template() {
    let mut api = server();
    let err = api
        .create(Object::Deployment(Box::new(deployment(
            &[("app", "web")],
            &[("app", "db")],
        ))))
        .unwrap_err();
    assert_eq!(
        err.message,
        "Deployment.apps \"web\" is invalid: spec.template.metadata.labels: Invalid value: map[string]string{\"app\":\"db\"}: `selector` does not match template `labels`"
    );
}

#[test]
fn deployment_rolling_update_may_not_be_all_zero() {
    let mut api = server();
    let mut d = deployment(&[("app", "web")], &[("app", "web")]);
    d.spec.replicas = Some(-1);
    d.spec.strategy = Some(k8s_types::apps::DeploymentStrategy {
        type_: Some("RollingUpdate".into()),
        rolling_update: Some(RollingUpdateDeployment {
            max_unavailable: Some(IntOrString::Int(0)),
            max_surge: Some(IntOrString::Int(0)),
        }),
    });
    let err = api.create(Object::Deployment(Box::new(d))).unwrap_err();
    let msgs: Vec<String> = err
        .causes
        .iter()
        .map(|c| format!("{}: {}", c.field, c.message))
        .collect();
    assert_eq!(
        msgs,
        vec![
            "spec.replicas: Invalid value: -1: must be greater than or equal to 0",
            "spec.strategy.rollingUpdate.maxUnavailable: Invalid value: 0: may not be 0 when `maxSurge` is 0",
        ]
    );
}

#[test]
fn valid_deployment_gets_apps_v1_defaults() {
    let mut api = server();
    let d = api
        .create(Object::Deployment(Box::new(deployment(
            &[("app", "web")],
            &[("app", "web")],
        ))))
        .unwrap();
    let d = Deployment::from_object(d).unwrap();
    assert_eq!(d.api_version, "apps/v1");
    assert_eq!(d.spec.replicas, Some(1));
    let ru = d.spec.strategy.unwrap().rolling_update.unwrap();
    assert_eq!(ru.max_surge, Some(IntOrString::String("25%".into())));
    assert_eq!(d.spec.revision_history_limit, Some(10));
    assert_eq!(d.spec.progress_deadline_seconds, Some(600));
    assert_eq!(d.metadata.generation, Some(1));
}
