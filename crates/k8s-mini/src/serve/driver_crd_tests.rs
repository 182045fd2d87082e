//! The driver answering for the kinds added after the first `serve`: CustomResourceDefinitions,
//! their custom resources (scenarios/pytorchjob-operator.yaml's PyTorchJob CRD) and the
//! `scheduling.k8s.io/v1alpha2` Workload and PodGroup (scenarios/native-gang.yaml).

use serde_json::{json, Value};

use super::{Answer, Driver};
use crate::serve::rest::Request;
use crate::serve::Clock;

const TABLE: &str = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json";
const AGGREGATED: &str = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";

fn driver(scenario: &str) -> Driver {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios")
        .join(scenario);
    let session = k8s_cluster::Session::load(&path).unwrap();
    Driver::new(session, Clock::Paused, None, "127.0.0.1:0".into())
}

fn call(
    d: &mut Driver,
    method: &str,
    path: &str,
    accept: &str,
    ct: &str,
    body: &str,
) -> (u16, Value) {
    let req = Request {
        method: method.into(),
        path: path.into(),
        query: Vec::new(),
        accept: accept.into(),
        content_type: ct.into(),
        body: body.as_bytes().to_vec(),
    };
    match d.handle(&req) {
        Answer::Reply(r) => (
            r.code,
            serde_json::from_slice(&r.body).unwrap_or(Value::Null),
        ),
        Answer::Watch { .. } => panic!("a watch"),
    }
}

fn get(d: &mut Driver, path: &str) -> (u16, Value) {
    call(d, "GET", path, "application/json", "", "")
}

const VERBS: [&str; 8] = [
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
];

#[test]
fn a_stored_crd_is_discovered_with_its_names_and_scope() {
    let mut d = driver("pytorchjob-operator.yaml");
    // The CRD's own resource, cluster-scoped (upstream `kubectl api-resources`: crd,crds,
    // category api-extensions).
    let (code, v) = get(&mut d, "/apis/apiextensions.k8s.io/v1");
    assert_eq!(code, 200);
    assert_eq!(
        v["resources"][0],
        json!({"name": "customresourcedefinitions", "singularName": "customresourcedefinition",
            "namespaced": false, "kind": "CustomResourceDefinition", "verbs": VERBS,
            "shortNames": ["crd", "crds"], "categories": ["api-extensions"]})
    );
    // The custom resource, from spec.names and spec.scope of pytorchjobs.kubeflow.org.
    let (code, v) = get(&mut d, "/apis/kubeflow.org/v1");
    assert_eq!(code, 200);
    assert_eq!(
        v,
        json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": "kubeflow.org/v1",
            "resources": [{"name": "pytorchjobs", "singularName": "pytorchjob", "namespaced": true,
                "kind": "PyTorchJob", "verbs": VERBS},
                // The CRD version's `subresources: {status: {}, scale: {...}}`.
                {"name": "pytorchjobs/status", "singularName": "", "namespaced": true,
                "kind": "PyTorchJob", "verbs": ["get", "patch", "update"]},
                {"name": "pytorchjobs/scale", "singularName": "", "namespaced": true,
                "group": "autoscaling", "version": "v1", "kind": "Scale",
                "verbs": ["get", "patch", "update"]}]})
    );
    let (_, g) = get(&mut d, "/apis/kubeflow.org");
    assert_eq!(
        g,
        json!({"kind": "APIGroup", "apiVersion": "v1", "name": "kubeflow.org",
            "versions": [{"groupVersion": "kubeflow.org/v1", "version": "v1"}],
            "preferredVersion": {"groupVersion": "kubeflow.org/v1", "version": "v1"}})
    );
    let (_, all) = call(&mut d, "GET", "/apis", AGGREGATED, "", "");
    let item = all["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["metadata"]["name"] == "kubeflow.org")
        .unwrap();
    assert_eq!(
        item["versions"][0]["resources"][0],
        json!({"resource": "pytorchjobs", "responseKind": {"group": "kubeflow.org", "version": "v1",
            "kind": "PyTorchJob"}, "scope": "Namespaced", "singularResource": "pytorchjob",
            "verbs": VERBS, "subresources": [
                {"subresource": "status", "responseKind": {"group": "kubeflow.org",
                    "version": "v1", "kind": "PyTorchJob"}, "verbs": ["get", "patch", "update"]},
                {"subresource": "scale", "responseKind": {"group": "autoscaling",
                    "version": "v1", "kind": "Scale"}, "verbs": ["get", "patch", "update"]}]})
    );
    assert_eq!(get(&mut d, "/apis/kubeflow.org/v2").0, 404);
    assert_eq!(get(&mut d, "/apis/kubeflow.org/v1/tfjobs").0, 404);
}

#[test]
fn custom_resources_print_their_additional_printer_columns() {
    let mut d = driver("pytorchjob-operator.yaml");
    let (_, step) = call(&mut d, "POST", "/k8s-mini/v1/step", "", "", "");
    assert_eq!(step["tick"], 1);
    let (code, t) = call(
        &mut d,
        "GET",
        "/apis/kubeflow.org/v1/pytorchjobs",
        TABLE,
        "",
        "",
    );
    assert_eq!(code, 200);
    // Name, then the CRD's columns: State (`.status.conditions[-1:].type`) and Age (date).
    let names: Vec<&str> = t["columnDefinitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["Name", "State", "Age"]);
    assert_eq!(t["columnDefinitions"][2]["type"], "date");
    // One step runs the tick at t=0 (the clock then reads t=1): the operator has marked mnist
    // Created only (the scenario expects Running from the tick at t=2); created at t=0: 1s.
    assert_eq!(t["rows"][0]["cells"], json!(["mnist", "Created", "1s"]));
    // Two more ticks: the tick at t=2 (the scenario's `from: 2` Running) has run; read at t=3.
    call(&mut d, "POST", "/k8s-mini/v1/step", "", "", "");
    call(&mut d, "POST", "/k8s-mini/v1/step", "", "", "");
    let (_, t) = call(
        &mut d,
        "GET",
        "/apis/kubeflow.org/v1/namespaces/default/pytorchjobs/mnist",
        TABLE,
        "",
        "",
    );
    assert_eq!(t["rows"][0]["cells"], json!(["mnist", "Running", "3s"]));
    // `kubectl get crd`: the default convertor's Name and Created At.
    let (_, t) = call(
        &mut d,
        "GET",
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
        TABLE,
        "",
        "",
    );
    assert_eq!(
        t["rows"][0]["cells"],
        json!(["pytorchjobs.kubeflow.org", "1970-01-01T00:00:00Z"])
    );
}

#[test]
fn custom_resources_are_created_patched_and_deleted_with_upstreams_answers() {
    let mut d = driver("pytorchjob-operator.yaml");
    let jobs = "/apis/kubeflow.org/v1/namespaces/default/pytorchjobs";
    let body = r#"{"apiVersion":"kubeflow.org/v1","kind":"PyTorchJob","metadata":{"name":"tiny"},
        "spec":{"pytorchReplicaSpecs":{"Master":{"replicas":1,"template":{"spec":{"containers":[
        {"name":"pytorch","image":"pytorch:2"}]}}}}}}"#;
    let (code, created) = call(
        &mut d,
        "POST",
        jobs,
        "application/json",
        "application/json",
        body,
    );
    assert_eq!(code, 201, "{created}");
    assert_eq!(created["kind"], "PyTorchJob");
    assert_eq!(created["metadata"]["namespace"], "default");
    let (code, s) = call(
        &mut d,
        "POST",
        jobs,
        "application/json",
        "application/json",
        body,
    );
    assert_eq!(code, 409);
    assert_eq!(s["reason"], "AlreadyExists");
    assert_eq!(
        s["message"],
        "pytorchjobs.kubeflow.org \"tiny\" already exists"
    );
    assert_eq!(
        s["details"],
        // Upstream `NewAlreadyExists` puts the resource in `details.kind`.
        json!({"name": "tiny", "group": "kubeflow.org", "kind": "pytorchjobs"})
    );
    let (_, list) = get(&mut d, jobs);
    assert_eq!(list["kind"], "PyTorchJobList");
    assert_eq!(list["apiVersion"], "kubeflow.org/v1");
    let names: Vec<&str> = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["metadata"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["mnist", "tiny"]);
    // A custom resource has no Go type: no strategic merge patch (415), merge patch works.
    let tiny = format!("{jobs}/tiny");
    let (code, s) = call(
        &mut d,
        "PATCH",
        &tiny,
        "",
        "application/strategic-merge-patch+json",
        "{}",
    );
    assert_eq!(
        (code, s["reason"].as_str()),
        (415, Some("UnsupportedMediaType"))
    );
    let (code, p) = call(
        &mut d,
        "PATCH",
        &tiny,
        "",
        "application/merge-patch+json",
        r#"{"metadata":{"labels":{"team":"a"}}}"#,
    );
    assert_eq!(
        (code, p["metadata"]["labels"]["team"].as_str()),
        (200, Some("a"))
    );
    let (code, _) = call(&mut d, "DELETE", &tiny, "", "", "");
    assert_eq!(code, 200);
    let (code, s) = get(&mut d, &tiny);
    assert_eq!(code, 404);
    assert_eq!(s["message"], "pytorchjobs.kubeflow.org \"tiny\" not found");
}

#[test]
fn a_crd_created_over_http_is_served_by_the_next_request() {
    let mut d = driver("pytorchjob-operator.yaml");
    assert_eq!(get(&mut d, "/apis/stable.example.com/v1").0, 404);
    let crd = r#"{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
        "metadata":{"name":"crontabs.stable.example.com"},
        "spec":{"group":"stable.example.com","scope":"Cluster",
          "names":{"plural":"crontabs","kind":"CronTab","shortNames":["ct"]},
          "versions":[{"name":"v1beta1","served":true,"storage":false,"schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}},
                      {"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}]}}"#;
    let (code, c) = call(
        &mut d,
        "POST",
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
        "application/json",
        "application/json",
        crd,
    );
    assert_eq!(code, 201, "{c}");
    // Versions in kube-aware order: v1 (GA) is preferred over v1beta1.
    let (_, g) = get(&mut d, "/apis/stable.example.com");
    assert_eq!(g["versions"][0]["version"], "v1");
    assert_eq!(g["versions"][1]["version"], "v1beta1");
    assert_eq!(g["preferredVersion"]["version"], "v1");
    let (_, rl) = get(&mut d, "/apis/stable.example.com/v1");
    assert_eq!(
        rl["resources"][0],
        json!({"name": "crontabs", "singularName": "crontab", "namespaced": false,
            "kind": "CronTab", "verbs": VERBS, "shortNames": ["ct"]})
    );
    // Cluster-scoped: no namespaced path.
    assert_eq!(
        get(
            &mut d,
            "/apis/stable.example.com/v1/namespaces/default/crontabs"
        )
        .0,
        404
    );
    let (code, _) = call(
        &mut d,
        "POST",
        "/apis/stable.example.com/v1/crontabs",
        "application/json",
        "application/json",
        r#"{"metadata":{"name":"nightly"},"spec":{"cronSpec":"0 0 * * *"}}"#,
    );
    assert_eq!(code, 201);
    // No printer columns: Name and Age.
    let (_, t) = call(
        &mut d,
        "GET",
        "/apis/stable.example.com/v1/crontabs",
        TABLE,
        "",
        "",
    );
    assert_eq!(t["rows"][0]["cells"], json!(["nightly", "0s"]));
}

#[test]
fn native_workloads_and_podgroups_are_served_at_v1alpha2() {
    let mut d = driver("native-gang.yaml");
    let (_, rl) = get(&mut d, "/apis/scheduling.k8s.io/v1alpha2");
    let names: Vec<&str> = rl["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["workloads", "podgroups", "podgroups/status"]);
    let (_, g) = get(&mut d, "/apis/scheduling.k8s.io");
    assert_eq!(g["preferredVersion"]["version"], "v1");
    assert_eq!(g["versions"][1]["version"], "v1alpha2");
    let (_, w) = get(
        &mut d,
        "/apis/scheduling.k8s.io/v1alpha2/namespaces/default/workloads/training",
    );
    assert_eq!(w["kind"], "Workload");
    assert_eq!(w["spec"]["podGroupTemplates"][0]["name"], "workers");
    let (_, t) = call(
        &mut d,
        "GET",
        "/apis/scheduling.k8s.io/v1alpha2/podgroups",
        TABLE,
        "",
        "",
    );
    let names: Vec<&str> = t["columnDefinitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["Name", "Age"]);
    assert_eq!(t["rows"][0]["cells"][1], "0s");
    // The coscheduling PodGroup of scheduling.x-k8s.io is another resource.
    let (_, x) = get(&mut d, "/apis/scheduling.x-k8s.io/v1alpha1/podgroups");
    assert_eq!(x["kind"], "PodGroupList");
    assert_eq!(x["apiVersion"], "scheduling.x-k8s.io/v1alpha1");
    let (code, _) = call(
        &mut d,
        "POST",
        "/apis/scheduling.k8s.io/v1alpha2/namespaces/default/workloads",
        "application/json",
        "application/json",
        r#"{"metadata":{"name":"eval"},"spec":{"podGroupTemplates":[{"name":"w","schedulingPolicy":{"gang":{"minCount":2}}}]}}"#,
    );
    assert_eq!(code, 201);
    let (code, _) = call(
        &mut d,
        "DELETE",
        "/apis/scheduling.k8s.io/v1alpha2/namespaces/default/workloads/eval",
        "",
        "",
        "",
    );
    assert_eq!(code, 200);
    let (code, s) = get(
        &mut d,
        "/apis/scheduling.k8s.io/v1alpha2/namespaces/default/workloads/eval",
    );
    assert_eq!(code, 404);
    assert_eq!(
        s["message"],
        "workloads.scheduling.k8s.io \"eval\" not found"
    );
}

#[test]
fn a_watch_of_custom_resources_sees_the_operator_change_them() {
    let mut d = driver("pytorchjob-operator.yaml");
    let req = Request {
        method: "GET".into(),
        path: "/apis/kubeflow.org/v1/namespaces/default/pytorchjobs".into(),
        query: vec![("watch".into(), "true".into())],
        accept: TABLE.into(),
        ..Request::default()
    };
    let Answer::Watch { mut rx, .. } = d.handle(&req) else {
        panic!("not a watch")
    };
    let event = |line: Vec<u8>| -> Value { serde_json::from_slice(&line).unwrap() };
    // The current state first: mnist, before any tick (no status yet), as a one-row Table.
    let added = event(rx.try_recv().unwrap());
    assert_eq!(added["type"], "ADDED");
    assert_eq!(
        added["object"]["rows"][0]["cells"],
        json!(["mnist", null, "0s"])
    );
    assert!(rx.try_recv().is_err());
    // The tick at t=0: the operator marks it Created (one MODIFIED per write it makes).
    call(&mut d, "POST", "/k8s-mini/v1/step", "", "", "");
    let mut states = Vec::new();
    while let Ok(line) = rx.try_recv() {
        let e = event(line);
        assert_eq!(e["type"], "MODIFIED");
        // Column definitions only in the first Table of the stream.
        assert_eq!(e["object"]["columnDefinitions"], json!([]));
        states.push(e["object"]["rows"][0]["cells"][1].clone());
    }
    assert_eq!(states.last(), Some(&json!("Created")), "{states:?}");
}
