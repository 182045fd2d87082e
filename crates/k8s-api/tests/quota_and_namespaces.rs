//! Namespace termination and `namespaces/finalize` (upstream
//! `pkg/registry/core/namespace/storage/storage.go`), the ResourceQuota admission plugin
//! (`staging/src/k8s.io/apiserver/pkg/admission/plugin/resourcequota/controller.go`) and the
//! LimitRanger plugin (`plugin/pkg/admission/limitranger/admission.go`), through the public API.

mod common;

use common::{meta, pod, q, server};
use k8s_types::apiserver::{ApiClient, ApiExt, DeleteOptions};
use k8s_types::core::{
    LimitRange, LimitRangeItem, Namespace, Pod, ResourceList, ResourceQuota, ResourceQuotaSpec,
};
use k8s_types::status::StatusReason;
use k8s_types::{Kind, Object};

fn namespace(name: &str) -> Namespace {
    Namespace {
        metadata: meta(name, None),
        ..Default::default()
    }
}

fn list(xs: &[(&str, &str)]) -> ResourceList {
    xs.iter().map(|(k, v)| (k.to_string(), q(v))).collect()
}

fn pod_in(ns: &str, name: &str, cpu: Option<&str>) -> Pod {
    let mut p = pod(name);
    p.metadata.namespace = Some(ns.into());
    if let Some(c) = cpu {
        p.spec.containers[0].resources.requests = list(&[("cpu", c)]).into();
        p.spec.containers[0].resources.limits = list(&[("cpu", c)]).into();
    }
    p
}

fn phase(ns: &Namespace) -> String {
    ns.status
        .as_ref()
        .and_then(|s| s.get("phase"))
        .and_then(|p| p.as_str())
        .unwrap_or("")
        .to_string()
}

#[test]
fn deleting_a_namespace_terminates_it_until_it_is_finalized() {
    let mut api = server();
    api.create_typed(namespace("team")).unwrap();
    api.set_tick(7);
    let deleted = api
        .delete(&Kind::Namespace, "", "team", DeleteOptions::default())
        .unwrap();
    let Object::Namespace(ns) = deleted else {
        panic!("not a namespace")
    };
    assert_eq!(phase(&ns), "Terminating");
    assert_eq!(
        ns.metadata.deletion_timestamp.as_deref(),
        Some("1970-01-01T00:00:07Z")
    );
    // New content is refused; a second delete answers the namespace unchanged.
    let err = api
        .create(Object::Pod(Box::new(pod_in("team", "p", None))))
        .unwrap_err();
    assert_eq!(err.reason, StatusReason::Forbidden);
    assert_eq!(
        err.message,
        "pods \"p\" is forbidden: unable to create new content in namespace team because it is being terminated"
    );
    api.delete(&Kind::Namespace, "", "team", DeleteOptions::default())
        .unwrap();
    let ns: Namespace = api.get_typed("", "team").unwrap();
    // Finalizing with the `kubernetes` token removed removes the namespace.
    let mut fin = ns.clone();
    fin.spec = Some(serde_json::json!({"finalizers": []}));
    api.finalize_namespace(&fin).unwrap();
    assert!(api
        .get_typed::<Namespace>("", "team")
        .unwrap_err()
        .is_not_found());
    // A namespace that is not being deleted keeps existing with no finalizers.
    api.create_typed(namespace("kept")).unwrap();
    let mut fin: Namespace = api.get_typed("", "kept").unwrap();
    fin.spec = Some(serde_json::json!({"finalizers": []}));
    api.finalize_namespace(&fin).unwrap();
    let kept: Namespace = api.get_typed("", "kept").unwrap();
    assert_eq!(kept.spec, Some(serde_json::json!({"finalizers": []})));
}

fn quota(api: &mut k8s_api::ApiServer, hard: &[(&str, &str)], used: &[(&str, &str)]) {
    let rq = ResourceQuota {
        metadata: meta("compute", Some("default")),
        spec: ResourceQuotaSpec {
            hard: list(hard),
            ..Default::default()
        },
        ..Default::default()
    };
    let mut rq: ResourceQuota = api.create_typed(rq).unwrap();
    // What the resource quota controller writes.
    rq.status.hard = list(hard);
    rq.status.used = list(used);
    api.update_status_typed(rq).unwrap();
}

#[test]
fn quota_admission_charges_then_refuses_with_upstreams_message() {
    let mut api = server();
    quota(
        &mut api,
        &[("pods", "2"), ("requests.cpu", "1")],
        &[("pods", "0"), ("requests.cpu", "0")],
    );
    api.create_typed(pod_in("default", "a", Some("600m")))
        .unwrap();
    let rq: ResourceQuota = api.get_typed("default", "compute").unwrap();
    assert_eq!(
        rq.status.used,
        list(&[("pods", "1"), ("requests.cpu", "600m")])
    );
    let err = api
        .create(Object::Pod(Box::new(pod_in("default", "b", Some("500m")))))
        .unwrap_err();
    assert_eq!(err.reason, StatusReason::Forbidden);
    assert_eq!(
        err.message,
        "pods \"b\" is forbidden: exceeded quota: compute, requested: requests.cpu=500m, used: requests.cpu=600m, limited: requests.cpu=1"
    );
    // A pod without a cpu request is refused before any usage is counted.
    let err = api
        .create(Object::Pod(Box::new(pod_in("default", "c", None))))
        .unwrap_err();
    assert_eq!(
        err.message,
        "pods \"c\" is forbidden: failed quota: compute: must specify requests.cpu for: app"
    );
    // Objects the quota does not track pass.
    api.create_typed(LimitRange {
        metadata: meta("empty", Some("default")),
        ..Default::default()
    })
    .unwrap();
}

#[test]
fn a_tracked_resource_without_usage_is_status_unknown() {
    let mut api = server();
    quota(
        &mut api,
        &[("pods", "2"), ("requests.memory", "1Gi")],
        &[("pods", "0")],
    );
    let mut p = pod_in("default", "a", None);
    p.spec.containers[0].resources.requests = list(&[("memory", "1Mi")]).into();
    let err = api.create(Object::Pod(Box::new(p))).unwrap_err();
    assert_eq!(
        err.message,
        "pods \"a\" is forbidden: status unknown for quota: compute, resources: requests.memory"
    );
}

#[test]
fn limit_ranger_defaults_then_validates() {
    let mut api = server();
    api.create_typed(LimitRange {
        metadata: meta("lr", Some("default")),
        spec: k8s_types::core::LimitRangeSpec {
            limits: vec![LimitRangeItem {
                type_: "Container".into(),
                max: list(&[("cpu", "1")]),
                default_request: list(&[("cpu", "100m")]),
                ..Default::default()
            }],
        },
        ..Default::default()
    })
    .unwrap();
    // The LimitRange's own defaulting made max the default limit.
    let lr: LimitRange = api.get_typed("default", "lr").unwrap();
    assert_eq!(lr.spec.limits[0].default, list(&[("cpu", "1")]));
    let p: Pod = api.create_typed(pod_in("default", "a", None)).unwrap();
    assert_eq!(
        p.spec.containers[0].resources.requests,
        list(&[("cpu", "100m")])
    );
    assert_eq!(p.spec.containers[0].resources.limits, list(&[("cpu", "1")]));
    assert_eq!(
        p.metadata.annotations["kubernetes.io/limit-ranger"],
        "LimitRanger plugin set: cpu request for container app; cpu limit for container app"
    );
    let err = api
        .create(Object::Pod(Box::new(pod_in("default", "b", Some("2")))))
        .unwrap_err();
    assert_eq!(
        err.message,
        "pods \"b\" is forbidden: maximum cpu usage per Container is 1, but limit is 2"
    );
}

#[test]
fn runtime_class_overhead_is_copied_and_charged_to_the_quota() {
    use k8s_types::node::{Overhead, RuntimeClass, Scheduling};
    let mut api = server();
    api.create_typed(RuntimeClass {
        metadata: meta("kata", None),
        handler: "kata".into(),
        overhead: Some(Overhead {
            pod_fixed: list(&[("cpu", "250m"), ("memory", "120Mi")]),
        }),
        scheduling: Some(Scheduling {
            node_selector: [("runtime".to_string(), "kata".to_string())].into(),
            tolerations: Vec::new(),
        }),
        ..Default::default()
    })
    .unwrap();
    quota(&mut api, &[("requests.cpu", "2")], &[("requests.cpu", "0")]);
    let mut p = pod_in("default", "a", Some("500m"));
    p.spec.runtime_class_name = Some("kata".into());
    let p: Pod = api.create_typed(p).unwrap();
    assert_eq!(
        p.spec.overhead,
        list(&[("cpu", "250m"), ("memory", "120Mi")])
    );
    assert_eq!(p.spec.node_selector["runtime"], "kata");
    // upstream PodUsageFunc counts PodRequests, overhead included: 500m + 250m.
    let rq: ResourceQuota = api.get_typed("default", "compute").unwrap();
    assert_eq!(rq.status.used, list(&[("requests.cpu", "750m")]));

    let mut unknown = pod_in("default", "b", Some("100m"));
    unknown.spec.runtime_class_name = Some("gvisor".into());
    let err = api.create(Object::Pod(Box::new(unknown))).unwrap_err();
    assert_eq!(
        err.message,
        "pods \"b\" is forbidden: pod rejected: RuntimeClass \"gvisor\" not found"
    );
    let mut bare = pod_in("default", "c", Some("100m"));
    bare.spec.overhead = list(&[("cpu", "1")]);
    let err = api.create(Object::Pod(Box::new(bare))).unwrap_err();
    assert_eq!(
        err.message,
        "pods \"c\" is forbidden: pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead"
    );
}
