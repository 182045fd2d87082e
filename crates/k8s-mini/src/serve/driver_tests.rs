//! The driver answering requests directly (no HTTP): pagination, Status errors of the write
//! paths, the scale subresource, stepping.

use serde_json::Value;

use super::{Answer, Driver};
use crate::serve::rest::Request;
use crate::serve::Clock;

const INPUT: &str = "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {capacity: {cpu: '8', memory: 16Gi}}\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: 2\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      containers: [{name: app, image: app:v1}]\n";

fn driver(name: &str) -> Driver {
    let dir = std::env::temp_dir().join(format!(
        "k8s-mini-serve-driver-{name}-{}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("in.yaml");
    std::fs::write(&path, INPUT).unwrap();
    let session = k8s_cluster::Session::load(&path).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    Driver::new(session, Clock::Paused, None, "127.0.0.1:0".into())
}

fn call(
    d: &mut Driver,
    method: &str,
    path: &str,
    query: &[(&str, &str)],
    ct: &str,
    body: &str,
) -> (u16, Value) {
    let req = Request {
        method: method.into(),
        path: path.into(),
        query: query
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        accept: "application/json".into(),
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

#[test]
fn limit_and_continue_page_through_a_list() {
    let mut d = driver("page");
    let (code, first) = call(
        &mut d,
        "GET",
        "/api/v1/namespaces",
        &[("limit", "2")],
        "",
        "",
    );
    assert_eq!(code, 200);
    let names: Vec<&str> = first["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["metadata"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["default", "kube-node-lease"]);
    assert_eq!(first["metadata"]["remainingItemCount"], 1);
    let token = first["metadata"]["continue"].as_str().unwrap().to_string();
    let (_, second) = call(
        &mut d,
        "GET",
        "/api/v1/namespaces",
        &[("limit", "2"), ("continue", &token)],
        "",
        "",
    );
    assert_eq!(second["items"][0]["metadata"]["name"], "kube-system");
    assert_eq!(second["items"].as_array().unwrap().len(), 1);
    assert!(second["metadata"].get("continue").is_none());
    let (code, bad) = call(
        &mut d,
        "GET",
        "/api/v1/namespaces",
        &[("continue", "zz")],
        "",
        "",
    );
    assert_eq!((code, bad["reason"].as_str()), (400, Some("BadRequest")));
}

#[test]
fn write_paths_answer_upstreams_status_errors() {
    let mut d = driver("errors");
    let web = "/apis/apps/v1/namespaces/default/deployments/web";
    let (code, s) = call(
        &mut d,
        "PATCH",
        web,
        &[],
        "application/apply-patch+yaml",
        "{}",
    );
    assert_eq!(
        (code, s["reason"].as_str()),
        (415, Some("UnsupportedMediaType"))
    );
    let (code, s) = call(
        &mut d,
        "PATCH",
        web,
        &[],
        "application/json-patch+json",
        r#"[{"op":"test","path":"/spec/replicas","value":3}]"#,
    );
    assert_eq!(code, 422);
    assert_eq!(s["message"], "testing value /spec/replicas failed");
    let (code, s) = call(
        &mut d,
        "DELETE",
        web,
        &[],
        "",
        r#"{"propagationPolicy":"Sideways"}"#,
    );
    assert_eq!(code, 400, "{s}");
    assert_eq!(
        s["message"],
        "propagationPolicy: Unsupported value: \"Sideways\": supported values: \"Foreground\", \"Background\", \"Orphan\""
    );
    let (code, s) = call(
        &mut d,
        "DELETE",
        web,
        &[],
        "",
        r#"{"preconditions":{"uid":"nope"}}"#,
    );
    assert_eq!((code, s["reason"].as_str()), (409, Some("Conflict")));
    assert!(s["message"]
        .as_str()
        .unwrap()
        .starts_with("Precondition failed: UID in precondition: nope, UID in object meta: "));
    let (code, s) = call(
        &mut d,
        "POST",
        "/apis/apps/v1/namespaces/default/deployments",
        &[],
        "application/json",
        r#"{"apiVersion":"v1","kind":"Deployment","metadata":{"name":"x"}}"#,
    );
    assert_eq!(code, 400);
    assert_eq!(
        s["message"],
        "the API version in the data (v1) does not match the expected API version (apps/v1)"
    );
    let (code, s) = call(
        &mut d,
        "POST",
        "/api/v1/namespaces/other/pods",
        &[],
        "application/json",
        r#"{"metadata":{"name":"p","namespace":"default"},"spec":{"containers":[{"name":"c","image":"i"}]}}"#,
    );
    assert_eq!(code, 400);
    assert_eq!(
        s["message"],
        "the namespace of the provided object does not match the namespace sent on the request"
    );
    assert_eq!(call(&mut d, "GET", "/api/v1/nope", &[], "", "").0, 404);
    assert_eq!(call(&mut d, "POST", "/version", &[], "", "").0, 405);
    // deletecollection: not on namespaces (upstream), not across namespaces.
    for path in ["/api/v1/namespaces", "/api/v1/pods"] {
        assert_eq!(call(&mut d, "DELETE", path, &[], "", "").0, 405, "{path}");
    }
    // Nothing above changed the Deployment.
    let (_, dep) = call(&mut d, "GET", web, &[], "", "");
    assert_eq!(dep["spec"]["replicas"], 2);
    assert_eq!(
        dep["metadata"]["resourceVersion"],
        call(&mut d, "GET", web, &[], "", "").1["metadata"]["resourceVersion"]
    );
}

#[test]
fn scale_subresource_reads_and_writes_replicas() {
    let mut d = driver("scale");
    let scale = "/apis/apps/v1/namespaces/default/deployments/web/scale";
    let (_, s) = call(&mut d, "GET", scale, &[], "", "");
    assert_eq!(s["kind"], "Scale");
    assert_eq!(s["apiVersion"], "autoscaling/v1");
    assert_eq!(s["spec"]["replicas"], 2);
    assert_eq!(s["status"]["selector"], "app=web");
    // What `kubectl scale --replicas=5` sends.
    let (code, s) = call(
        &mut d,
        "PATCH",
        scale,
        &[],
        "application/merge-patch+json",
        r#"{"spec":{"replicas":5}}"#,
    );
    assert_eq!((code, s["spec"]["replicas"].as_i64()), (200, Some(5)));
    let (_, step) = call(
        &mut d,
        "POST",
        "/k8s-mini/v1/step",
        &[("ticks", "3")],
        "",
        "",
    );
    assert_eq!(step["tick"], 3);
    let (_, s) = call(&mut d, "GET", scale, &[], "", "");
    assert_eq!(
        (
            s["spec"]["replicas"].as_i64(),
            s["status"]["replicas"].as_i64()
        ),
        (Some(5), Some(5))
    );
    let (code, _) = call(
        &mut d,
        "POST",
        "/k8s-mini/v1/step",
        &[("ticks", "100001")],
        "",
        "",
    );
    assert_eq!(code, 400);
}
