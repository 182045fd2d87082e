//! One request without a socket, for the fuzz target `http_request` (`fuzz/fuzz_targets/`) and its
//! corpus replay on stable (`crates/k8s-mini/tests/fuzz_corpus.rs`). Not an API for anything else.
//!
//! The request goes through the HTTP layer's own decoding (`http::split_query` for the query
//! string, `http::header_text` for the headers, the `http` crate's method and request-target
//! parsers hyper uses) to the same [`Driver::handle`] the server runs, on one driver per thread
//! built over a tiny cluster ([`CLUSTER`]) with a paused clock. Unlike the server's request loop,
//! a panic is not caught here: it is what the fuzzer looks for.

use std::cell::RefCell;

use crate::serve::driver::{Answer, Driver};
use crate::serve::http;
use crate::serve::reply;
use crate::serve::rest::Request;
use crate::serve::Clock;

/// The cluster every fuzzed request runs against: one Node, one Deployment (whose two Pods appear
/// only when the clock moves: the clock is paused, and the step endpoint is not fuzzed).
pub const CLUSTER: &str = "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {capacity: {cpu: '8', memory: 16Gi, pods: '110'}}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: p1, namespace: default, labels: {app: web}}\nspec:\n  nodeName: n1\n  containers: [{name: app, image: app:v1}]\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: 2\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      containers: [{name: app, image: app:v1}]\n---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: web}\nspec:\n  minAvailable: 1\n  selector: {matchLabels: {app: web}}\n";

thread_local! {
    static DRIVER: RefCell<Option<Driver>> = const { RefCell::new(None) };
}

fn new_driver() -> Driver {
    // One directory per driver: the test threads of one process build their drivers at once, and a
    // shared one let a thread load the file while another was writing or removing it.
    static DRIVERS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = DRIVERS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir =
        std::env::temp_dir().join(format!("k8s-mini-serve-fuzzing-{}-{n}", std::process::id()));
    let path = dir.join("cluster.yaml");
    let session = std::fs::create_dir_all(&dir)
        .and_then(|()| std::fs::write(&path, CLUSTER))
        .map_err(|e| e.to_string())
        .and_then(|()| k8s_cluster::Session::load(&path).map_err(|e| e.to_string()));
    let _ = std::fs::remove_dir_all(&dir);
    match session {
        Ok(s) => Driver::new(s, Clock::Paused, None, "127.0.0.1:0".into()),
        Err(e) => panic!("the fuzzing cluster does not load: {e}"),
    }
}

fn with_driver<T>(f: impl FnOnce(&mut Driver) -> T) -> T {
    DRIVER.with(|d| {
        let mut d = d.borrow_mut();
        f(d.get_or_insert_with(new_driver))
    })
}

/// Whether `path` is the step endpoint (`POST /k8s-mini/v1/step?ticks=N`), split as the driver
/// splits paths (empty segments dropped).
fn is_step(path: &str) -> bool {
    let segs: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    segs == ["k8s-mini", "v1", "step"]
}

/// Answers one request as the server would and returns its status code; `None` for a request the
/// fuzzer leaves out: `POST /k8s-mini/v1/step`, which runs up to 100,000 ticks by design (a long
/// request is not a decoding fault; the driver tests cover it).
///
/// What hyper refuses before any handler runs is answered 400 here as there: a method that is not
/// an HTTP token, a request target that is not origin-form (`/path?query`), a header value with
/// control characters. A body over [`crate::serve::MAX_BODY_BYTES`] is answered 413. A watch
/// (`watch=true`) answers at once with its stream's receiver, which is dropped (the watch ends).
pub fn handle_raw(
    method: &[u8],
    path_and_query: &str,
    content_type: &[u8],
    accept: &[u8],
    body: &[u8],
) -> Option<u16> {
    let Ok(method) = axum::http::Method::from_bytes(method) else {
        return Some(400);
    };
    if !path_and_query.starts_with('/') {
        return Some(400);
    }
    let Ok(pq) = axum::http::uri::PathAndQuery::try_from(path_and_query) else {
        return Some(400);
    };
    let (Ok(ct), Ok(acc)) = (
        axum::http::HeaderValue::from_bytes(content_type),
        axum::http::HeaderValue::from_bytes(accept),
    ) else {
        return Some(400);
    };
    if body.len() > crate::serve::MAX_BODY_BYTES {
        return Some(reply::too_large(crate::serve::MAX_BODY_BYTES).code);
    }
    if method == axum::http::Method::POST && is_step(pq.path()) {
        return None;
    }
    let req = Request {
        method: method.as_str().to_string(),
        path: pq.path().to_string(),
        query: http::split_query(pq.query()),
        accept: http::header_text(Some(&acc)),
        content_type: http::header_text(Some(&ct)),
        body: body.to_vec(),
    };
    Some(with_driver(|d| match d.handle(&req) {
        Answer::Reply(r) => r.code,
        Answer::Watch { .. } => 200,
    }))
}

/// `GET /api/v1/nodes` on the same driver: its status and whether its body is JSON (a NodeList
/// holding the node `n1`, which no fuzzed request can remove without leaving a Node list that
/// still parses). Run after [`handle_raw`] to see that the store still answers.
pub fn nodes_list() -> (u16, Result<serde_json::Value, String>) {
    let req = Request {
        method: "GET".into(),
        path: "/api/v1/nodes".into(),
        accept: "application/json".into(),
        ..Default::default()
    };
    with_driver(|d| match d.handle(&req) {
        Answer::Reply(r) => (
            r.code,
            serde_json::from_slice(&r.body).map_err(|e| e.to_string()),
        ),
        Answer::Watch { .. } => (0, Err("a watch".into())),
    })
}
