//! The rows of upstream's printers (`pkg/printers/internalversion/printers.go`, v1.32), one
//! function per kind; see the module above for the clock and the layout.

use k8s_types::apiserver::{ApiClient, ApiExt};
use k8s_types::apps::{Deployment, PodTemplateSpec, ReplicaSet};
use k8s_types::batch::Job;
use k8s_types::core::{Event, Node, Pod};
use k8s_types::labels::LabelSelector;
use k8s_types::meta::{timestamp_tick, ObjectMeta};
use k8s_types::Tick;

use super::{since, Column, Row, Table};
use crate::state::{human_duration, print_pod};

const fn col(name: &'static str, priority: u8) -> Column {
    Column { name, priority }
}

fn row(meta: &ObjectMeta, cells: Vec<String>) -> Row {
    Row {
        namespace: meta.namespace().to_string(),
        name: meta.name.clone(),
        cells,
    }
}

fn age(meta: &ObjectMeta, now: Tick) -> String {
    since(meta.creation_timestamp.as_deref(), now)
}

fn or_none(s: Option<&str>) -> String {
    s.filter(|s| !s.is_empty()).unwrap_or("<none>").to_string()
}

/// `layoutContainerCells`: the template's container names and images, comma-separated.
fn containers(t: &PodTemplateSpec) -> [String; 2] {
    let names: Vec<&str> = t.spec.containers.iter().map(|c| c.name.as_str()).collect();
    let images: Vec<&str> = t.spec.containers.iter().map(|c| c.image.as_str()).collect();
    [names.join(","), images.join(",")]
}

/// `metav1.FormatLabelSelector`: the selector as `labels.Selector.String()` prints it (requirements
/// sorted by key: `k=v`, `k in (a,b)`, `k notin (a,b)`, `k`, `!k`), `<none>` when empty.
pub fn format_label_selector(s: Option<&LabelSelector>) -> String {
    let Some(s) = s else {
        return "<none>".into();
    };
    let mut reqs: Vec<(String, String)> = s
        .match_labels
        .iter()
        .map(|(k, v)| (k.clone(), format!("{k}={v}")))
        .collect();
    for r in &s.match_expressions {
        let mut values = r.values.clone();
        values.sort();
        let text = match r.operator.as_str() {
            "In" => format!("{} in ({})", r.key, values.join(",")),
            "NotIn" => format!("{} notin ({})", r.key, values.join(",")),
            "Exists" => r.key.clone(),
            "DoesNotExist" => format!("!{}", r.key),
            op => format!("{} {op} ({})", r.key, values.join(",")),
        };
        reqs.push((r.key.clone(), text));
    }
    reqs.sort();
    let out: Vec<String> = reqs.into_iter().map(|(_, t)| t).collect();
    if out.is_empty() {
        "<none>".into()
    } else {
        out.join(",")
    }
}

/// `kubectl get pods`: `printPod`'s NAME, READY, STATUS, RESTARTS (with the age of the last
/// restart), AGE; wide: IP, NODE, NOMINATED NODE, READINESS GATES (`<none>`: pods here have no
/// readiness gates).
pub fn pods(api: &dyn ApiClient, namespace: Option<&str>, now: Tick) -> Table {
    let rows = api
        .list_typed::<Pod>(namespace, None)
        .iter()
        .map(|p| {
            let printed = print_pod(p);
            row(
                &p.metadata,
                vec![
                    p.metadata.name.clone(),
                    printed.ready_column(),
                    printed.status.clone(),
                    printed.restarts_column(now),
                    age(&p.metadata, now),
                    or_none(p.status.pod_ip.as_deref()),
                    or_none(p.node_name()),
                    or_none(p.status.nominated_node_name.as_deref()),
                    "<none>".into(),
                ],
            )
        })
        .collect();
    Table {
        columns: vec![
            col("Name", 0),
            col("Ready", 0),
            col("Status", 0),
            col("Restarts", 0),
            col("Age", 0),
            col("IP", 1),
            col("Node", 1),
            col("Nominated Node", 1),
            col("Readiness Gates", 1),
        ],
        rows,
    }
}

fn node_info(n: &Node, key: &str) -> String {
    n.status
        .node_info
        .as_ref()
        .and_then(|i| i.get(key))
        .and_then(|v| v.as_str())
        .unwrap_or("")
        .to_string()
}

/// `kubectl get nodes`: `printNode`'s STATUS (`Ready`/`NotReady`/`Unknown`, `,SchedulingDisabled`
/// when cordoned), ROLES (`node-role.kubernetes.io/<role>` and `kubernetes.io/role` labels, sorted,
/// `<none>`), AGE, VERSION (`nodeInfo.kubeletVersion`); wide: INTERNAL-IP, EXTERNAL-IP,
/// OS-IMAGE, KERNEL-VERSION, CONTAINER-RUNTIME (`<unknown>` when not reported).
pub fn nodes(api: &dyn ApiClient, now: Tick) -> Table {
    let rows = api
        .list_typed::<Node>(None, None)
        .iter()
        .map(|n| {
            let mut status: Vec<String> = n
                .status
                .conditions
                .iter()
                .filter(|c| c.type_ == "Ready")
                .take(1)
                .map(|c| {
                    if c.status == "True" {
                        "Ready".to_string()
                    } else {
                        "NotReady".to_string()
                    }
                })
                .collect();
            if status.is_empty() {
                status.push("Unknown".into());
            }
            if n.spec.unschedulable {
                status.push("SchedulingDisabled".into());
            }
            let mut roles = std::collections::BTreeSet::new();
            for (k, v) in &n.metadata.labels {
                if let Some(role) = k.strip_prefix("node-role.kubernetes.io/") {
                    if !role.is_empty() {
                        roles.insert(role.to_string());
                    }
                } else if k == "kubernetes.io/role" && !v.is_empty() {
                    roles.insert(v.clone());
                }
            }
            let roles: Vec<String> = roles.into_iter().collect();
            let address = |t: &str| {
                or_none(
                    n.status
                        .addresses
                        .iter()
                        .find(|a| a.type_ == t)
                        .map(|a| a.address.as_str()),
                )
            };
            let unknown = |s: String| if s.is_empty() { "<unknown>".into() } else { s };
            row(
                &n.metadata,
                vec![
                    n.metadata.name.clone(),
                    status.join(","),
                    if roles.is_empty() {
                        "<none>".into()
                    } else {
                        roles.join(",")
                    },
                    age(&n.metadata, now),
                    node_info(n, "kubeletVersion"),
                    address("InternalIP"),
                    address("ExternalIP"),
                    unknown(node_info(n, "osImage")),
                    unknown(node_info(n, "kernelVersion")),
                    unknown(node_info(n, "containerRuntimeVersion")),
                ],
            )
        })
        .collect();
    Table {
        columns: vec![
            col("Name", 0),
            col("Status", 0),
            col("Roles", 0),
            col("Age", 0),
            col("Version", 0),
            col("Internal-IP", 1),
            col("External-IP", 1),
            col("OS-Image", 1),
            col("Kernel-Version", 1),
            col("Container-Runtime", 1),
        ],
        rows,
    }
}

/// `kubectl get deployments`: `printDeployment`'s READY (`readyReplicas/spec.replicas`),
/// UP-TO-DATE, AVAILABLE, AGE; wide: CONTAINERS, IMAGES, SELECTOR.
pub fn deployments(api: &dyn ApiClient, namespace: Option<&str>, now: Tick) -> Table {
    let rows = api
        .list_typed::<Deployment>(namespace, None)
        .iter()
        .map(|d| {
            let [names, images] = containers(&d.spec.template);
            row(
                &d.metadata,
                vec![
                    d.metadata.name.clone(),
                    format!(
                        "{}/{}",
                        d.status.ready_replicas,
                        d.spec.replicas.unwrap_or(1)
                    ),
                    d.status.updated_replicas.to_string(),
                    d.status.available_replicas.to_string(),
                    age(&d.metadata, now),
                    names,
                    images,
                    format_label_selector(d.spec.selector.as_ref()),
                ],
            )
        })
        .collect();
    Table {
        columns: vec![
            col("Name", 0),
            col("Ready", 0),
            col("Up-to-date", 0),
            col("Available", 0),
            col("Age", 0),
            col("Containers", 1),
            col("Images", 1),
            col("Selector", 1),
        ],
        rows,
    }
}

/// `kubectl get replicasets`: `printReplicaSet`'s DESIRED (`spec.replicas`), CURRENT
/// (`status.replicas`), READY, AGE; wide: CONTAINERS, IMAGES, SELECTOR.
pub fn replicasets(api: &dyn ApiClient, namespace: Option<&str>, now: Tick) -> Table {
    let rows = api
        .list_typed::<ReplicaSet>(namespace, None)
        .iter()
        .map(|r| {
            let [names, images] = containers(&r.spec.template);
            row(
                &r.metadata,
                vec![
                    r.metadata.name.clone(),
                    r.spec.replicas.unwrap_or(1).to_string(),
                    r.status.replicas.to_string(),
                    r.status.ready_replicas.to_string(),
                    age(&r.metadata, now),
                    names,
                    images,
                    format_label_selector(r.spec.selector.as_ref()),
                ],
            )
        })
        .collect();
    Table {
        columns: vec![
            col("Name", 0),
            col("Desired", 0),
            col("Current", 0),
            col("Ready", 0),
            col("Age", 0),
            col("Containers", 1),
            col("Images", 1),
            col("Selector", 1),
        ],
        rows,
    }
}

/// `kubectl get jobs`: `printJob`'s STATUS (the first of Complete, Failed, Terminating,
/// Suspended, FailureTarget, SuccessCriteriaMet that holds, else Running), COMPLETIONS
/// (`succeeded/completions`, `succeeded/1 of parallelism` without completions and parallelism > 1,
/// else `succeeded/1`), DURATION (completion - start, or now - start while running, empty before
/// the start), AGE; wide: CONTAINERS, IMAGES, SELECTOR.
pub fn jobs(api: &dyn ApiClient, namespace: Option<&str>, now: Tick) -> Table {
    let rows = api
        .list_typed::<Job>(namespace, None)
        .iter()
        .map(|j| {
            let has = |t: &str| {
                j.status
                    .conditions
                    .iter()
                    .any(|c| c.type_ == t && c.status == "True")
            };
            let status = if has("Complete") {
                "Complete"
            } else if has("Failed") {
                "Failed"
            } else if j.metadata.deletion_timestamp.is_some() {
                "Terminating"
            } else if has("Suspended") {
                "Suspended"
            } else if has("FailureTarget") {
                "FailureTarget"
            } else if has("SuccessCriteriaMet") {
                "SuccessCriteriaMet"
            } else {
                "Running"
            };
            let succeeded = j.status.succeeded;
            let completions = match (j.spec.completions, j.spec.parallelism.unwrap_or(0)) {
                (Some(c), _) => format!("{succeeded}/{c}"),
                (None, p) if p > 1 => format!("{succeeded}/1 of {p}"),
                (None, _) => format!("{succeeded}/1"),
            };
            let tick = |ts: &Option<String>| ts.as_deref().and_then(timestamp_tick);
            let duration = match (tick(&j.status.start_time), tick(&j.status.completion_time)) {
                (None, _) => String::new(),
                (Some(_), None) => since(j.status.start_time.as_deref(), now),
                (Some(s), Some(c)) => {
                    human_duration(i64::try_from(c).unwrap_or(0) - i64::try_from(s).unwrap_or(0))
                }
            };
            let [names, images] = containers(&j.spec.template);
            row(
                &j.metadata,
                vec![
                    j.metadata.name.clone(),
                    status.to_string(),
                    completions,
                    duration,
                    age(&j.metadata, now),
                    names,
                    images,
                    format_label_selector(j.spec.selector.as_ref()),
                ],
            )
        })
        .collect();
    Table {
        columns: vec![
            col("Name", 0),
            col("Status", 0),
            col("Completions", 0),
            col("Duration", 0),
            col("Age", 0),
            col("Containers", 1),
            col("Images", 1),
            col("Selector", 1),
        ],
        rows,
    }
}

/// `formatEventSource`: `component, host`.
pub fn event_source(e: &Event) -> String {
    if e.source.host.is_empty() {
        e.source.component.clone()
    } else {
        format!("{}, {}", e.source.component, e.source.host)
    }
}

/// `kubectl get events`: `printEvent`'s LAST SEEN (age of `lastTimestamp`, else of
/// `firstTimestamp`), TYPE, REASON, OBJECT (`kind/name`, kind lower-cased), MESSAGE; wide adds
/// SUBOBJECT, SOURCE, FIRST SEEN, COUNT, NAME. Rows in list order (namespace, then Event name,
/// which is `<object>.<hex>`, so one object's Events stay in the order they were written).
pub fn events(api: &dyn ApiClient, namespace: Option<&str>, now: Tick) -> Table {
    let rows = api
        .list_typed::<Event>(namespace, None)
        .iter()
        .map(|e| {
            let first = since(e.first_timestamp.as_deref(), now);
            let last = match &e.last_timestamp {
                Some(t) => since(Some(t), now),
                None => first.clone(),
            };
            let o = &e.involved_object;
            let target = if o.name.is_empty() {
                o.kind.to_lowercase()
            } else {
                format!("{}/{}", o.kind.to_lowercase(), o.name)
            };
            row(
                &e.metadata,
                vec![
                    last,
                    e.type_.clone(),
                    e.reason.clone(),
                    target,
                    o.field_path.clone(),
                    event_source(e),
                    e.message.trim().to_string(),
                    first,
                    e.count.max(1).to_string(),
                    e.metadata.name.clone(),
                ],
            )
        })
        .collect();
    Table {
        columns: vec![
            col("Last Seen", 0),
            col("Type", 0),
            col("Reason", 0),
            col("Object", 0),
            col("Subobject", 1),
            col("Source", 1),
            col("Message", 0),
            col("First Seen", 1),
            col("Count", 1),
            col("Name", 1),
        ],
        rows,
    }
}

/// `kubectl events`' interval (`getInterval`): the age of the first timestamp, or for an Event
/// seen more than once `<age of last> (x<count> over <age of first>)`.
pub fn event_interval(e: &Event, now: Tick) -> String {
    let first = since(e.first_timestamp.as_deref(), now);
    if e.count > 1 {
        format!(
            "{} (x{} over {first})",
            since(e.last_timestamp.as_deref(), now),
            e.count
        )
    } else {
        first
    }
}

/// `kubectl events`: LAST SEEN (with repeats folded: `40s (x3 over 2m)`), TYPE, REASON, OBJECT
/// (`Kind/name`, kind as written), MESSAGE, sorted by last timestamp as upstream sorts them
/// (`SortableEvents`); Events of the same second (tick) in the order they were last written
/// (`resourceVersion`), where upstream's order within a second is its sort's.
pub fn events_kubectl_events(api: &dyn ApiClient, namespace: Option<&str>, now: Tick) -> Table {
    let mut list = api.list_typed::<Event>(namespace, None);
    list.sort_by_key(|e| {
        (
            e.last_timestamp
                .as_deref()
                .or(e.first_timestamp.as_deref())
                .and_then(timestamp_tick),
            e.metadata.resource_version_number(),
        )
    });
    let rows = list
        .iter()
        .map(|e| {
            row(
                &e.metadata,
                vec![
                    event_interval(e, now),
                    e.type_.clone(),
                    e.reason.clone(),
                    format!("{}/{}", e.involved_object.kind, e.involved_object.name),
                    e.message.trim().to_string(),
                ],
            )
        })
        .collect();
    Table {
        columns: vec![
            col("Last Seen", 0),
            col("Type", 0),
            col("Reason", 0),
            col("Object", 0),
            col("Message", 0),
        ],
        rows,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_api::ApiServer;
    use k8s_store::MemStore;
    use k8s_types::apiserver::ApiClient;
    use k8s_types::batch::JobCondition;
    use k8s_types::core::{Container, Namespace, NodeCondition};
    use k8s_types::labels::LabelSelectorRequirement;
    use k8s_types::meta::tick_timestamp;
    use k8s_types::Object;

    fn meta(name: &str, ns: Option<&str>) -> ObjectMeta {
        ObjectMeta {
            name: name.into(),
            namespace: ns.map(str::to_string),
            ..Default::default()
        }
    }

    fn api() -> ApiServer {
        let mut api = ApiServer::new(Box::new(MemStore::new()));
        api.create(Object::Namespace(Namespace {
            metadata: meta("default", None),
            ..Default::default()
        }))
        .expect("namespace");
        api
    }

    fn job(name: &str, completions: Option<i32>, parallelism: Option<i32>) -> Job {
        let mut j = Job {
            metadata: meta(name, Some("default")),
            ..Default::default()
        };
        j.spec.completions = completions;
        j.spec.parallelism = parallelism;
        j.spec.template.spec.restart_policy = Some("Never".into());
        j.spec.template.spec.containers.push(Container {
            name: "work".into(),
            image: "busybox:1.36".into(),
            ..Default::default()
        });
        j
    }

    /// `printJob`'s rules: Complete with its duration (completion - start); `succeeded/1 of
    /// parallelism` without completions, running for now - start; nothing started: no duration.
    #[test]
    fn jobs_status_completions_and_duration() {
        let mut api = api();
        for j in [
            job("a-done", Some(3), Some(2)),
            job("b-running", None, Some(2)),
            job("c-new", None, None),
        ] {
            api.create(Object::Job(j)).expect("job");
        }
        let mut done: Job = api.get_typed("default", "a-done").expect("a");
        done.status.succeeded = 3;
        done.status.start_time = Some(tick_timestamp(0));
        done.status.completion_time = Some(tick_timestamp(24));
        done.status.conditions.push(JobCondition {
            type_: "Complete".into(),
            status: "True".into(),
            ..Default::default()
        });
        api.update_status(Object::Job(done)).expect("status");
        let mut running: Job = api.get_typed("default", "b-running").expect("b");
        running.status.succeeded = 1;
        running.status.start_time = Some(tick_timestamp(10));
        api.update_status(Object::Job(running)).expect("status");
        let t = jobs(&api, Some("default"), 100);
        assert_eq!(
            t.render(false, false),
            "\
NAME        STATUS     COMPLETIONS   DURATION   AGE
a-done      Complete   3/3           24s        100s
b-running   Running    1/1 of 2      90s        100s
c-new       Running    0/1                      100s
"
        );
    }

    /// `printNode`: the Ready condition, `SchedulingDisabled` when cordoned, `Unknown` without a
    /// Ready condition; roles from both role labels, sorted.
    #[test]
    fn nodes_status_and_roles() {
        let mut api = api();
        let mut a = Node {
            metadata: meta("a", None),
            ..Default::default()
        };
        a.metadata
            .labels
            .insert("node-role.kubernetes.io/worker".into(), String::new());
        a.metadata
            .labels
            .insert("kubernetes.io/role".into(), "gpu".into());
        a.spec.unschedulable = true;
        a.status.conditions.push(NodeCondition {
            type_: "Ready".into(),
            status: "True".into(),
            ..Default::default()
        });
        let b = Node {
            metadata: meta("b", None),
            ..Default::default()
        };
        for n in [a, b] {
            api.create(Object::Node(n)).expect("node");
        }
        let t = nodes(&api, 7);
        let cells: Vec<&[String]> = t.rows.iter().map(|r| &r.cells[..4]).collect();
        assert_eq!(
            cells[0],
            ["a", "Ready,SchedulingDisabled", "gpu,worker", "7s"]
        );
        assert_eq!(cells[1], ["b", "Unknown", "<none>", "7s"]);
    }

    /// `FormatLabelSelector`: requirements sorted by key, kubectl's operators; `<none>` for none.
    #[test]
    fn label_selectors_as_kubectl_prints_them() {
        let req = |key: &str, operator: &str, values: &[&str]| LabelSelectorRequirement {
            key: key.into(),
            operator: operator.into(),
            values: values.iter().map(|v| v.to_string()).collect(),
        };
        let s = LabelSelector {
            match_labels: [("app".to_string(), "web".to_string())].into(),
            match_expressions: vec![
                req("tier", "In", &["b", "a"]),
                req("canary", "DoesNotExist", &[]),
                req("zone", "NotIn", &["z1"]),
                req("gpu", "Exists", &[]),
            ],
        };
        assert_eq!(
            format_label_selector(Some(&s)),
            "app=web,!canary,gpu,tier in (a,b),zone notin (z1)"
        );
        assert_eq!(format_label_selector(None), "<none>");
    }

    /// `kubectl events`' interval: a repeated Event shows its last age and the age of the first.
    #[test]
    fn event_interval_folds_repeats() {
        let mut e = Event {
            first_timestamp: Some(tick_timestamp(7)),
            last_timestamp: Some(tick_timestamp(20)),
            count: 2,
            ..Default::default()
        };
        assert_eq!(event_interval(&e, 30), "10s (x2 over 23s)");
        e.count = 1;
        assert_eq!(event_interval(&e, 30), "23s");
    }
}
