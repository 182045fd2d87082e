//! `k8s_mini::serve::fuzzing`, the entry of the fuzz target `http_request`: what hyper refuses is 400
//! before the driver; the rest is the driver's answer, on one cluster per thread.

use k8s_mini::serve::fuzzing::{handle_raw, nodes_list};

const JSON: &[u8] = b"application/json";

#[test]
fn requests_reach_the_driver_with_the_query_decoded() {
    // The seeded Pod, then a list whose label selector arrives percent-encoded.
    let get = handle_raw(b"GET", "/api/v1/namespaces/default/pods/p1", b"", JSON, b"");
    assert_eq!(get, Some(200));
    let bad_selector = handle_raw(
        b"GET",
        "/api/v1/pods?labelSelector=app%20in%20(web",
        b"",
        JSON,
        b"",
    );
    assert_eq!(bad_selector, Some(400));
    let pod = br#"{"metadata":{"name":"p2"},"spec":{"containers":[{"name":"c","image":"i"}]}}"#;
    let created = handle_raw(b"POST", "/api/v1/namespaces/default/pods", JSON, JSON, pod);
    assert_eq!(created, Some(201));
    let again = handle_raw(b"POST", "/api/v1/namespaces/default/pods", JSON, JSON, pod);
    assert_eq!(again, Some(409), "AlreadyExists");
    let bad_json = handle_raw(b"POST", "/api/v1/namespaces", JSON, JSON, b"{\"metadata\":");
    assert_eq!(bad_json, Some(400));
    let watch = handle_raw(
        b"GET",
        "/api/v1/pods?watch=true&timeoutSeconds=1",
        b"",
        JSON,
        b"",
    );
    assert_eq!(watch, Some(200), "a watch answers at once");
    let (code, list) = nodes_list();
    assert_eq!(code, 200);
    let list = list.unwrap();
    assert_eq!(list["kind"], "NodeList");
    assert_eq!(list["items"][0]["metadata"]["name"], "n1");
}

#[test]
fn what_hyper_refuses_is_400_and_the_step_endpoint_is_left_out() {
    assert_eq!(handle_raw(b"G T", "/version", b"", b"", b""), Some(400));
    assert_eq!(handle_raw(b"GET", "version", b"", b"", b""), Some(400));
    assert_eq!(handle_raw(b"GET", "/ver sion", b"", b"", b""), Some(400));
    assert_eq!(handle_raw(b"GET", "/version", b"a\rb", b"", b""), Some(400));
    assert_eq!(handle_raw(b"GET", "/version", b"", b"", b""), Some(200));
    assert_eq!(
        handle_raw(b"POST", "//k8s-mini/v1/step?ticks=9", b"", b"", b""),
        None
    );
    assert_eq!(
        handle_raw(b"GET", "/k8s-mini/v1/step", b"", b"", b""),
        Some(405)
    );
}

/// The fuzzer's first finding, which is upstream's behaviour: a Binding whose target fails
/// `ValidatePodBinding` (`kind: "Nod,"`) is answered InternalError 500 by kube-apiserver
/// (BindingREST.Create returns `errs.ToAggregate()`, a plain error), here too; a valid one for a
/// pod that does not exist is 404; the store keeps answering.
#[test]
fn an_invalid_binding_is_upstreams_500_and_a_missing_pod_404() {
    let path = "/api/v1/namespaces/default/pods/p1/binding";
    let invalid = br#"{"apiVersion":"v1","kind":"Binding","metadata":{"name":"p1"},"target":{"kind":"Nod,","name":"n1"}}"#;
    assert_eq!(handle_raw(b"POST", path, JSON, JSON, invalid), Some(500));
    let missing = br#"{"apiVersion":"v1","kind":"Binding","metadata":{"name":"nope"},"target":{"kind":"Node","name":"n1"}}"#;
    let missing_path = "/api/v1/namespaces/default/pods/nope/binding";
    assert_eq!(
        handle_raw(b"POST", missing_path, JSON, JSON, missing),
        Some(404)
    );
    assert_eq!(nodes_list().0, 200);
}
