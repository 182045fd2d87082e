//! Server-side printing: `Accept: application/json;as=Table;g=meta.k8s.io;v=v1` answers a
//! `meta.k8s.io/v1` Table with kubectl's columns (upstream
//! `pkg/printers/internalversion/printers.go` of v1.32: `podColumnDefinitions` / `printPod`,
//! `nodeColumnDefinitions` / `printNode`, `deploymentColumnDefinitions` / `printDeployment`,
//! `replicaSetColumnDefinitions` / `printReplicaSet`, `jobColumnDefinitions` / `printJob`,
//! `eventColumnDefinitions` / `printEvent`, `namespaceColumnDefinitions`), and for every other kind
//! the default convertor's Name and Created At (`k8s.io/apiserver/pkg/registry/rest/table.go`).
//! As upstream, the cells are generated wide (priority-1 columns included) and kubectl hides what
//! `-o wide` does not ask for; ages are read against the simulated clock.

use k8s_types::core::Pod;
use k8s_types::meta::timestamp_tick;
use k8s_types::object::{Kind, Object};
use k8s_types::Tick;
use serde_json::{json, Value};

/// Whether an Accept header asks for a Table.
pub(crate) fn wants_table(accept: &str) -> bool {
    accept.split(',').any(|part| {
        let params: Vec<&str> = part.split(';').map(str::trim).collect();
        params.contains(&"as=Table") && params.contains(&"g=meta.k8s.io")
    })
}

/// `includeObject` of a Table request: `None`, `Metadata` (the default) or `Object`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Include {
    None,
    Metadata,
    Object,
}

impl Include {
    /// Parses the query parameter.
    pub(crate) fn parse(v: Option<&str>) -> Result<Include, String> {
        match v {
            None | Some("" | "Metadata") => Ok(Include::Metadata),
            Some("None") => Ok(Include::None),
            Some("Object") => Ok(Include::Object),
            Some(other) => Err(format!(
                "includeObject: Unsupported value: {other:?}: supported values: \"None\", \"Metadata\", \"Object\""
            )),
        }
    }
}

type Col = (&'static str, &'static str, u8);

const NAME: Col = ("Name", "string", 0);
const AGE: Col = ("Age", "string", 0);
const CONTAINERS: Col = ("Containers", "string", 1);
const IMAGES: Col = ("Images", "string", 1);
const SELECTOR: Col = ("Selector", "string", 1);

fn columns(kind: &Kind) -> Vec<Col> {
    match kind {
        Kind::Pod => vec![
            NAME,
            ("Ready", "string", 0),
            ("Status", "string", 0),
            ("Restarts", "string", 0),
            AGE,
            ("IP", "string", 1),
            ("Node", "string", 1),
            ("Nominated Node", "string", 1),
            ("Readiness Gates", "string", 1),
        ],
        Kind::Node => vec![
            NAME,
            ("Status", "string", 0),
            ("Roles", "string", 0),
            AGE,
            ("Version", "string", 0),
            ("Internal-IP", "string", 1),
            ("External-IP", "string", 1),
            ("OS-Image", "string", 1),
            ("Kernel-Version", "string", 1),
            ("Container-Runtime", "string", 1),
        ],
        Kind::Deployment => vec![
            NAME,
            ("Ready", "string", 0),
            ("Up-to-date", "integer", 0),
            ("Available", "integer", 0),
            AGE,
            CONTAINERS,
            IMAGES,
            SELECTOR,
        ],
        Kind::ReplicaSet => vec![
            NAME,
            ("Desired", "integer", 0),
            ("Current", "integer", 0),
            ("Ready", "integer", 0),
            AGE,
            CONTAINERS,
            IMAGES,
            SELECTOR,
        ],
        Kind::Job => vec![
            NAME,
            ("Status", "string", 0),
            ("Completions", "string", 0),
            ("Duration", "string", 0),
            AGE,
            CONTAINERS,
            IMAGES,
            SELECTOR,
        ],
        Kind::Event => vec![
            ("Last Seen", "string", 0),
            ("Type", "string", 0),
            ("Reason", "string", 0),
            ("Object", "string", 0),
            ("Subobject", "string", 1),
            ("Source", "string", 1),
            ("Message", "string", 0),
            ("First Seen", "string", 1),
            ("Count", "string", 1),
            ("Name", "string", 1),
        ],
        Kind::Namespace => vec![NAME, ("Status", "string", 0), AGE],
        _ => vec![NAME, ("Created At", "date", 0)],
    }
}

fn column_definitions(kind: &Kind) -> Vec<Value> {
    columns(kind)
        .into_iter()
        .map(|(name, type_, priority)| {
            let format = if name == "Name" && *kind != Kind::Event {
                "name"
            } else {
                ""
            };
            json!({"name": name, "type": type_, "format": format, "description": "", "priority": priority})
        })
        .collect()
}

fn at<'a>(v: &'a Value, path: &[&str]) -> &'a Value {
    let mut cur = v;
    for p in path {
        cur = cur.get(p).unwrap_or(&Value::Null);
    }
    cur
}

fn text(v: &Value, path: &[&str]) -> String {
    match at(v, path) {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

fn int(v: &Value, path: &[&str]) -> i64 {
    at(v, path).as_i64().unwrap_or(0)
}

fn or_none(s: String) -> String {
    if s.is_empty() {
        "<none>".into()
    } else {
        s
    }
}

/// `translateTimestampSince`: `<unknown>` for an unset time, else the human age at `now`.
fn since(ts: &str, now: Tick) -> String {
    match timestamp_tick(ts) {
        Some(t) if !ts.is_empty() => {
            let age = i64::try_from(now).unwrap_or(i64::MAX) - i64::try_from(t).unwrap_or(0);
            k8s_cluster::human_duration(age)
        }
        _ => "<unknown>".into(),
    }
}

/// `metav1.FormatLabelSelector`: `k=v,k in (a,b)`, `<none>` for nothing, `<error>` never here.
pub(crate) fn label_selector(sel: &Value) -> String {
    let mut parts = Vec::new();
    if let Some(m) = sel.get("matchLabels").and_then(Value::as_object) {
        for (k, v) in m {
            parts.push(format!("{k}={}", v.as_str().unwrap_or_default()));
        }
    }
    for e in sel
        .get("matchExpressions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let key = text(e, &["key"]);
        let values: Vec<String> = e
            .get("values")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect();
        let s = match text(e, &["operator"]).as_str() {
            "In" => format!("{key} in ({})", values.join(",")),
            "NotIn" => format!("{key} notin ({})", values.join(",")),
            "Exists" => key,
            "DoesNotExist" => format!("!{key}"),
            op => format!("{key} {op} ({})", values.join(",")),
        };
        parts.push(s);
    }
    or_none(parts.join(","))
}

/// `layoutContainerCells`: container names and images, comma-joined.
fn containers(spec: &Value) -> (String, String) {
    let list = spec
        .get("containers")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let names: Vec<String> = list.iter().map(|c| text(c, &["name"])).collect();
    let images: Vec<String> = list.iter().map(|c| text(c, &["image"])).collect();
    (names.join(","), images.join(","))
}

fn condition_true(v: &Value, type_: &str) -> bool {
    at(v, &["status", "conditions"])
        .as_array()
        .into_iter()
        .flatten()
        .any(|c| text(c, &["type"]) == type_ && text(c, &["status"]) == "True")
}

fn pod_cells(pod: &Pod, v: &Value, now: Tick) -> Vec<Value> {
    let p = k8s_cluster::print_pod(pod);
    let gates = at(v, &["spec", "readinessGates"])
        .as_array()
        .cloned()
        .unwrap_or_default();
    let readiness = if gates.is_empty() {
        "<none>".to_string()
    } else {
        let ready = gates
            .iter()
            .filter(|g| condition_true(v, &text(g, &["conditionType"])))
            .count();
        format!("{ready}/{}", gates.len())
    };
    vec![
        json!(pod.metadata.name),
        json!(p.ready_column()),
        json!(p.status),
        json!(p.restarts_column(now)),
        json!(since(&text(v, &["metadata", "creationTimestamp"]), now)),
        json!(or_none(text(v, &["status", "podIP"]))),
        json!(or_none(text(v, &["spec", "nodeName"]))),
        json!(or_none(text(v, &["status", "nominatedNodeName"]))),
        json!(readiness),
    ]
}

fn node_cells(v: &Value, now: Tick) -> Vec<Value> {
    let ready = at(v, &["status", "conditions"])
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| text(c, &["type"]) == "Ready")
        .map(|c| text(c, &["status"]));
    let mut status = match ready.as_deref() {
        Some("True") => "Ready".to_string(),
        Some("False") => "NotReady".to_string(),
        _ => "Unknown".to_string(),
    };
    if at(v, &["spec", "unschedulable"]).as_bool() == Some(true) {
        status.push_str(",SchedulingDisabled");
    }
    // `findNodeRoles`: node-role.kubernetes.io/<role> labels and the kubernetes.io/role label.
    let mut roles = std::collections::BTreeSet::new();
    if let Some(labels) = at(v, &["metadata", "labels"]).as_object() {
        for (k, val) in labels {
            if let Some(role) = k.strip_prefix("node-role.kubernetes.io/") {
                if !role.is_empty() {
                    roles.insert(role.to_string());
                }
            } else if k == "kubernetes.io/role" {
                if let Some(r) = val.as_str().filter(|r| !r.is_empty()) {
                    roles.insert(r.to_string());
                }
            }
        }
    }
    let roles: Vec<String> = roles.into_iter().collect();
    let address = |t: &str| {
        at(v, &["status", "addresses"])
            .as_array()
            .into_iter()
            .flatten()
            .find(|a| text(a, &["type"]) == t)
            .map(|a| text(a, &["address"]))
            .unwrap_or_else(|| "<none>".into())
    };
    let info = |f: &str| {
        let s = text(v, &["status", "nodeInfo", f]);
        if s.is_empty() {
            "<unknown>".into()
        } else {
            s
        }
    };
    vec![
        json!(text(v, &["metadata", "name"])),
        json!(status),
        json!(or_none(roles.join(","))),
        json!(since(&text(v, &["metadata", "creationTimestamp"]), now)),
        json!(text(v, &["status", "nodeInfo", "kubeletVersion"])),
        json!(address("InternalIP")),
        json!(address("ExternalIP")),
        json!(info("osImage")),
        json!(info("kernelVersion")),
        json!(info("containerRuntimeVersion")),
    ]
}

fn workload_tail(v: &Value) -> [Value; 3] {
    let (names, images) = containers(at(v, &["spec", "template", "spec"]));
    [
        json!(names),
        json!(images),
        json!(label_selector(at(v, &["spec", "selector"]))),
    ]
}

fn job_cells(v: &Value, now: Tick) -> Vec<Value> {
    let status = if condition_true(v, "Complete") {
        "Complete"
    } else if condition_true(v, "Failed") {
        "Failed"
    } else if !at(v, &["metadata", "deletionTimestamp"]).is_null() {
        "Terminating"
    } else if condition_true(v, "Suspended") {
        "Suspended"
    } else if condition_true(v, "FailureTarget") {
        "FailureTarget"
    } else if condition_true(v, "SuccessCriteriaMet") {
        "SuccessCriteriaMet"
    } else {
        "Running"
    };
    let succeeded = int(v, &["status", "succeeded"]);
    let completions = if !at(v, &["spec", "completions"]).is_null() {
        format!("{succeeded}/{}", int(v, &["spec", "completions"]))
    } else if int(v, &["spec", "parallelism"]) > 1 {
        format!("{succeeded}/1 of {}", int(v, &["spec", "parallelism"]))
    } else {
        format!("{succeeded}/1")
    };
    let start = text(v, &["status", "startTime"]);
    let end = text(v, &["status", "completionTime"]);
    let duration = match (timestamp_tick(&start), timestamp_tick(&end)) {
        (None, _) => String::new(),
        (Some(_), None) => since(&start, now),
        (Some(s), Some(e)) => k8s_cluster::human_duration(
            i64::try_from(e).unwrap_or(0) - i64::try_from(s).unwrap_or(0),
        ),
    };
    let mut cells = vec![
        json!(text(v, &["metadata", "name"])),
        json!(status),
        json!(completions),
        json!(duration),
        json!(since(&text(v, &["metadata", "creationTimestamp"]), now)),
    ];
    cells.extend(workload_tail(v));
    cells
}

fn event_cells(v: &Value, now: Tick) -> Vec<Value> {
    let first_ts = text(v, &["firstTimestamp"]);
    let first = if first_ts.is_empty() {
        since(&text(v, &["eventTime"]), now)
    } else {
        since(&first_ts, now)
    };
    let last_ts = text(v, &["lastTimestamp"]);
    let last = if last_ts.is_empty() {
        first.clone()
    } else {
        since(&last_ts, now)
    };
    let count = match int(v, &["count"]) {
        0 => 1,
        n => n,
    };
    let kind = text(v, &["involvedObject", "kind"]).to_ascii_lowercase();
    let name = text(v, &["involvedObject", "name"]);
    let target = if name.is_empty() {
        kind
    } else {
        format!("{kind}/{name}")
    };
    let first_non_empty = |a: String, b: String| if a.is_empty() { b } else { a };
    let component = first_non_empty(
        text(v, &["source", "component"]),
        text(v, &["reportingComponent"]),
    );
    let instance = first_non_empty(
        text(v, &["source", "host"]),
        text(v, &["reportingInstance"]),
    );
    let source = if instance.is_empty() {
        component
    } else {
        format!("{component}, {instance}")
    };
    vec![
        json!(last),
        json!(text(v, &["type"])),
        json!(text(v, &["reason"])),
        json!(target),
        json!(text(v, &["involvedObject", "fieldPath"])),
        json!(source),
        json!(text(v, &["message"]).trim()),
        json!(first),
        json!(count),
        json!(text(v, &["metadata", "name"])),
    ]
}

/// The cells of one object's row.
pub(crate) fn cells(obj: &Object, now: Tick) -> Vec<Value> {
    let v = obj.to_json();
    let name = json!(obj.meta().name);
    let age = || json!(since(&text(&v, &["metadata", "creationTimestamp"]), now));
    match obj {
        Object::Pod(p) => pod_cells(p, &v, now),
        Object::Node(_) => node_cells(&v, now),
        Object::Deployment(_) => {
            let mut c = vec![
                name,
                json!(format!(
                    "{}/{}",
                    int(&v, &["status", "readyReplicas"]),
                    int(&v, &["spec", "replicas"])
                )),
                json!(int(&v, &["status", "updatedReplicas"])),
                json!(int(&v, &["status", "availableReplicas"])),
                age(),
            ];
            c.extend(workload_tail(&v));
            c
        }
        Object::ReplicaSet(_) => {
            let mut c = vec![
                name,
                json!(int(&v, &["spec", "replicas"])),
                json!(int(&v, &["status", "replicas"])),
                json!(int(&v, &["status", "readyReplicas"])),
                age(),
            ];
            c.extend(workload_tail(&v));
            c
        }
        Object::Job(_) => job_cells(&v, now),
        Object::Event(_) => event_cells(&v, now),
        Object::Namespace(_) => vec![name, json!(text(&v, &["status", "phase"])), age()],
        _ => vec![name, json!(text(&v, &["metadata", "creationTimestamp"]))],
    }
}

fn row_object(obj: &Object, include: Include) -> Option<Value> {
    match include {
        Include::None => None,
        Include::Object => {
            let mut o = obj.clone();
            o.set_type_meta();
            Some(o.to_json())
        }
        Include::Metadata => Some(json!({
            "kind": "PartialObjectMetadata",
            "apiVersion": "meta.k8s.io/v1",
            "metadata": serde_json::to_value(obj.meta()).unwrap_or(Value::Null),
        })),
    }
}

/// A Table of `objects` of `kind`; `headers` false leaves the column definitions out (the watch
/// events after the first, as upstream).
pub(crate) fn table(
    kind: &Kind,
    objects: &[&Object],
    now: Tick,
    include: Include,
    headers: bool,
    metadata: Value,
) -> Value {
    let rows: Vec<Value> = objects
        .iter()
        .map(|o| {
            let mut row = json!({"cells": cells(o, now)});
            if let Some(obj) = row_object(o, include) {
                row["object"] = obj;
            }
            row
        })
        .collect();
    let defs = if headers {
        Value::Array(column_definitions(kind))
    } else {
        Value::Array(Vec::new())
    };
    json!({"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": metadata, "columnDefinitions": defs, "rows": rows})
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(kind: &Kind, v: Value) -> Object {
        k8s_cluster::manifest::decode_object_json(kind, v).unwrap()
    }

    #[test]
    fn job_row_as_print_job_writes_it() {
        // completions 3, 2 succeeded, started at t=10, still running at t=100: Running, 2/3, 90s.
        let job = decode(
            &Kind::Job,
            json!({"apiVersion": "batch/v1", "kind": "Job",
                "metadata": {"name": "pi", "creationTimestamp": "1970-01-01T00:00:05Z"},
                "spec": {"completions": 3, "selector": {"matchLabels": {"job-name": "pi"}},
                    "template": {"spec": {"containers": [{"name": "pi", "image": "perl"}]}}},
                "status": {"succeeded": 2, "startTime": "1970-01-01T00:00:10Z"}}),
        );
        assert_eq!(
            cells(&job, 100),
            vec![
                json!("pi"),
                json!("Running"),
                json!("2/3"),
                json!("90s"),
                json!("95s"),
                json!("pi"),
                json!("perl"),
                json!("job-name=pi")
            ]
        );
    }

    #[test]
    fn node_row_reads_conditions_roles_and_cordon() {
        let node = decode(
            &Kind::Node,
            json!({"apiVersion": "v1", "kind": "Node",
                "metadata": {"name": "n1", "creationTimestamp": "1970-01-01T00:00:00Z",
                    "labels": {"node-role.kubernetes.io/control-plane": "", "kubernetes.io/role": "gpu"}},
                "spec": {"unschedulable": true},
                "status": {"conditions": [{"type": "Ready", "status": "True"}],
                    "addresses": [{"type": "InternalIP", "address": "10.0.0.1"}],
                    "nodeInfo": {"kubeletVersion": "v1.32.0"}}}),
        );
        let c = cells(&node, 7200);
        assert_eq!(c[1], json!("Ready,SchedulingDisabled"));
        assert_eq!(c[2], json!("control-plane,gpu"));
        assert_eq!(c[3], json!("120m"));
        assert_eq!(c[4], json!("v1.32.0"));
        assert_eq!(c[5], json!("10.0.0.1"));
        assert_eq!(c[6], json!("<none>"));
        assert_eq!(c[7], json!("<unknown>"));
    }

    #[test]
    fn table_accept_header_as_kubectl_sends_it() {
        assert!(wants_table("application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"));
        assert!(!wants_table("application/json"));
        assert_eq!(Include::parse(Some("Object")), Ok(Include::Object));
        assert!(Include::parse(Some("All")).is_err());
    }
}
