//! What each fuzz target checks, on one input. Shared by the cargo-fuzz targets (`fuzz/fuzz_targets/`,
//! nightly) and by the corpus replay test `crates/k8s-mini/tests/fuzz_corpus.rs` (stable, in CI),
//! which includes this file by path: every function panics when the property fails, and must not
//! panic otherwise, on any bytes.

use std::collections::BTreeMap;
use std::path::Path;

use k8s_types::labels::LabelSelector;
use k8s_types::quantity::Quantity;

/// Quantity: parsing any text never panics; a parsed quantity prints in its canonical form, which
/// parses back to the same value and prints the same again (upstream `String()` round trip); the
/// accessors saturate instead of overflowing.
pub fn quantity(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(q) = Quantity::parse(text) else {
        return;
    };
    let printed = q.to_string();
    let again = Quantity::parse(&printed)
        .unwrap_or_else(|e| panic!("{text:?} printed as {printed:?}, which does not parse: {e}"));
    assert_eq!(
        again.nano_value(),
        q.nano_value(),
        "{text:?} printed as {printed:?} changes value"
    );
    // Upstream's canonical form is not always a fixpoint: `62.5Ki` (BinarySI, not a whole number
    // of Ki) prints as `64000`, which parses as DecimalSI and prints as `64k`
    // (`resource.Quantity.String`, `CanonicalizeBytes`). From the second print on it is stable.
    let second = again.to_string();
    let third = Quantity::parse(&second)
        .unwrap_or_else(|e| panic!("{text:?}: {second:?} does not parse: {e}"))
        .to_string();
    assert_eq!(third, second, "{text:?}: canonical form not stable");
    let _ = (q.value(), q.milli_value());
}

/// Manifests: any bytes given to the loader `run_file` uses (YAML streams of objects, `v1` Lists,
/// Scenarios, scheduler configurations) give documents or a `ManifestError` that renders, never a
/// panic.
pub fn manifest(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    match k8s_cluster::manifest::parse_stream("fuzz.yaml", &text) {
        Ok(m) => {
            for d in &m.docs {
                let _ = format!("{:?}", d.source);
            }
        }
        Err(e) => {
            let shown = e.to_string();
            assert!(
                shown.starts_with("fuzz.yaml:"),
                "error does not name the file: {shown}"
            );
        }
    }
}

/// `KubeSchedulerConfiguration::from_yaml` never panics, and a configuration it accepts builds a
/// scheduler or is refused with an error, never a panic.
pub fn scheduler_config(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    if let Ok(cfg) = k8s_sched::config::KubeSchedulerConfiguration::from_yaml(&text) {
        let _ = k8s_sched::Scheduler::new(cfg);
    }
}

/// The trace importer (Alibaba openb CSVs): the same bytes read as a node CSV and as a pod CSV give
/// rows or a `TraceError`, and every accepted row becomes a Node / Pod manifest without a panic.
pub fn trace_csv(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let path = Path::new("fuzz.csv");
    if let Ok(nodes) = k8s_cluster::trace::parse_nodes(path, &text) {
        for n in &nodes {
            let _ = n.to_node();
        }
    }
    if let Ok((pods, _warnings)) = k8s_cluster::trace::parse_pods(path, &text) {
        for p in &pods {
            let _ = p.to_pod();
        }
    }
}

/// Label selectors: the first line is a selector in kubectl's string form, the other lines `k=v`
/// labels. Parsing never panics; a parsed selector matches a label set exactly when each of its
/// requirements does, and an empty selector matches everything.
pub fn label_selector(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let mut lines = text.lines();
    let selector = lines.next().unwrap_or("");
    let labels: BTreeMap<String, String> = lines
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let Ok(sel) = LabelSelector::parse(selector) else {
        return;
    };
    let all = sel.match_expressions.iter().all(|r| r.matches(&labels));
    assert_eq!(sel.matches(&labels), all, "{selector:?} on {labels:?}");
    if sel.match_expressions.is_empty() {
        assert!(sel.matches(&labels), "an empty selector matches everything");
    }
}

/// The HTTP API's request decoding (`k8s-mini serve`): the input is `METHOD\nPATH?QUERY\n
/// CONTENT-TYPE\nACCEPT\nBODY` (missing lines are empty). One driver per process over
/// `k8s_mini::serve::fuzzing::CLUSTER` answers it as the server would: never a panic, a status in
/// 100..600 and never 5xx (the server's only 500s are a caught panic, a state dump that cannot
/// be written, and upstream's InternalError for an invalid Binding; 501 it does not answer), and afterwards the store still answers `GET /api/v1/nodes`
/// 200 with a NodeList in JSON.
pub fn http_request(data: &[u8]) {
    let mut parts = data.splitn(5, |b| *b == b'\n');
    let mut next = || parts.next().unwrap_or_default();
    let (method, path, content_type, accept, body) = (next(), next(), next(), next(), next());
    let path = String::from_utf8_lossy(path);
    let Some(code) =
        k8s_mini::serve::fuzzing::handle_raw(method, &path, content_type, accept, body)
    else {
        return;
    };
    // One 500 is upstream's own: a Binding that fails `ValidatePodBinding` (say `target.kind:
    // Nod,`) is returned by BindingREST.Create as `errs.ToAggregate()`, a plain error that the
    // apiserver answers as InternalError 500 (pkg/registry/core/pod/storage/storage.go).
    let binding = method == b"POST" && path.split('?').next().unwrap_or("").ends_with("/binding");
    assert!(
        (100..500).contains(&code) || (binding && code == 500),
        "{} {path:?} answers {code}",
        String::from_utf8_lossy(method)
    );
    let (code, list) = k8s_mini::serve::fuzzing::nodes_list();
    let list = list.unwrap_or_else(|e| panic!("GET /api/v1/nodes is not JSON: {e}"));
    assert_eq!(code, 200, "GET /api/v1/nodes answers {code}: {list}");
    assert_eq!(list["kind"], "NodeList", "GET /api/v1/nodes: {list}");
}
