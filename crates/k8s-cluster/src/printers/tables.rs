//! The rows of upstream's printers (`pkg/printers/internalversion/printers.go`, v1.32): one
//! column list ([`columns`]) and one cells function per kind ([`cells`]), shared by `k8s-mini get`
//! (rendered by [`Table::render`]) and `k8s-mini serve`'s `meta.k8s.io/v1` Tables. As upstream's
//! `TableConvertor`, the cells are generated wide (priority-1 columns included); the client hides
//! what `-o wide` does not ask for. See the module above for the clock.

use k8s_types::apiserver::ApiClient;
use k8s_types::apps::{ControllerRevision, Deployment, PodTemplateSpec, ReplicaSet};
use k8s_types::batch::Job;
use k8s_types::core::{Namespace, Node, Pod, Service};
use k8s_types::labels::LabelSelector;
use k8s_types::meta::{timestamp_tick, ObjectMeta};
use k8s_types::object::{Kind, Object};
use k8s_types::Tick;

use super::events::event_cells;
use super::{since, Cell, Column, Row, Table};
use crate::state::{human_duration, print_pod};

pub(super) const fn col(name: &'static str, priority: u8) -> Column {
    Column {
        name,
        type_: "string",
        format: "",
        priority,
    }
}

const fn int_col(name: &'static str) -> Column {
    Column {
        name,
        type_: "integer",
        format: "",
        priority: 0,
    }
}

/// Upstream's `{Name: "Name", Type: "string", Format: "name"}` column.
const fn name_col(priority: u8) -> Column {
    Column {
        name: "Name",
        type_: "string",
        format: "name",
        priority,
    }
}

const AGE: Column = col("Age", 0);
const CONTAINERS: Column = col("Containers", 1);
const IMAGES: Column = col("Images", 1);
const SELECTOR: Column = col("Selector", 1);

/// The column definitions of `kind`'s Table, in order, as upstream's `AddHandlers` declares them
/// (`podColumnDefinitions`, `nodeColumnDefinitions`, `deploymentColumnDefinitions`,
/// `replicaSetColumnDefinitions`, `jobColumnDefinitions`, `eventColumnDefinitions`,
/// `namespaceColumnDefinitions`, `serviceColumnDefinitions`, `controllerRevisionColumnDefinitions`);
/// every other kind gets the default table convertor's Name and
/// Created At (`k8s.io/apiserver/pkg/registry/rest/table.go`, `swaggerMetadataDescriptions`).
pub fn columns(kind: &Kind) -> Vec<Column> {
    match kind {
        Kind::Pod => vec![
            name_col(0),
            col("Ready", 0),
            col("Status", 0),
            col("Restarts", 0),
            AGE,
            col("IP", 1),
            col("Node", 1),
            col("Nominated Node", 1),
            col("Readiness Gates", 1),
        ],
        Kind::Node => vec![
            name_col(0),
            col("Status", 0),
            col("Roles", 0),
            AGE,
            col("Version", 0),
            col("Internal-IP", 1),
            col("External-IP", 1),
            col("OS-Image", 1),
            col("Kernel-Version", 1),
            col("Container-Runtime", 1),
        ],
        // Upstream declares Up-to-date and Available "string" though their cells are integers.
        Kind::Deployment => vec![
            name_col(0),
            col("Ready", 0),
            col("Up-to-date", 0),
            col("Available", 0),
            AGE,
            CONTAINERS,
            IMAGES,
            SELECTOR,
        ],
        Kind::ReplicaSet => vec![
            name_col(0),
            int_col("Desired"),
            int_col("Current"),
            int_col("Ready"),
            AGE,
            CONTAINERS,
            IMAGES,
            SELECTOR,
        ],
        Kind::Job => vec![
            name_col(0),
            col("Status", 0),
            col("Completions", 0),
            col("Duration", 0),
            AGE,
            CONTAINERS,
            IMAGES,
            SELECTOR,
        ],
        Kind::Event => vec![
            col("Last Seen", 0),
            col("Type", 0),
            col("Reason", 0),
            col("Object", 0),
            col("Subobject", 1),
            col("Source", 1),
            col("Message", 0),
            col("First Seen", 1),
            col("Count", 1),
            name_col(1),
        ],
        Kind::Namespace => vec![name_col(0), col("Status", 0), AGE],
        Kind::Service => vec![
            name_col(0),
            col("Type", 0),
            col("Cluster-IP", 0),
            col("External-IP", 0),
            col("Port(s)", 0),
            AGE,
            SELECTOR,
        ],
        Kind::ControllerRevision => {
            vec![name_col(0), col("Controller", 0), int_col("Revision"), AGE]
        }
        _ => vec![
            name_col(0),
            Column {
                name: "Created At",
                type_: "date",
                format: "",
                priority: 0,
            },
        ],
    }
}

/// The cells of one object's row, one per column of [`columns`] of its kind: `printPod`,
/// `printNode`, `printDeployment`, `printReplicaSet`, `printJob`, `printEvent`, `printNamespace`,
/// `printService`, `printControllerRevision`,
/// else the default convertor's name and `creationTimestamp` (RFC 3339).
pub fn cells(obj: &Object, now: Tick) -> Vec<Cell> {
    match obj {
        Object::Pod(p) => pod_cells(p, now),
        Object::Node(n) => node_cells(n, now),
        Object::Deployment(d) => deployment_cells(d, now),
        Object::ReplicaSet(r) => replicaset_cells(r, now),
        Object::Job(j) => job_cells(j, now),
        Object::Event(e) => event_cells(e, now),
        Object::Namespace(ns) => namespace_cells(ns, now),
        Object::Service(svc) => service_cells(svc, now),
        Object::ControllerRevision(cr) => controller_revision_cells(cr, now),
        other => {
            let m = other.meta();
            vec![
                m.name.as_str().into(),
                m.creation_timestamp
                    .as_deref()
                    .unwrap_or("0001-01-01T00:00:00Z")
                    .into(),
            ]
        }
    }
}

/// One object's [`Row`].
fn row(obj: &Object, now: Tick) -> Row {
    let meta = obj.meta();
    Row {
        namespace: meta.namespace().to_string(),
        name: meta.name.clone(),
        cells: cells(obj, now),
    }
}

/// `kubectl get <kind>`'s Table: the objects of `kind` in `namespace` (all with `None`), in list
/// order (namespace, then name, as the apiserver lists them).
pub fn list(api: &dyn ApiClient, kind: &Kind, namespace: Option<&str>, now: Tick) -> Table {
    Table {
        columns: columns(kind),
        rows: api
            .list(kind, namespace, None)
            .iter()
            .map(|o| row(o, now))
            .collect(),
    }
}

/// `printControllerRevision`: the controller as `formatResourceName` prints it with its kind
/// (`daemonset.apps/fluentd`: lower-case `Kind.group`, then the name), `<none>` without one.
fn controller_revision_cells(cr: &ControllerRevision, now: Tick) -> Vec<Cell> {
    let controller = cr
        .metadata
        .owner_references
        .iter()
        .find(|o| o.controller == Some(true))
        .map_or_else(
            || "<none>".to_string(),
            |o| {
                let group = o.api_version.rsplit_once('/').map_or("", |(g, _)| g);
                let kind = if group.is_empty() {
                    o.kind.clone()
                } else {
                    format!("{}.{group}", o.kind)
                };
                format!("{}/{}", kind.to_lowercase(), o.name)
            },
        );
    vec![
        cr.metadata.name.as_str().into(),
        controller.into(),
        Cell::Int(cr.revision),
        age(&cr.metadata, now),
    ]
}

fn age(meta: &ObjectMeta, now: Tick) -> Cell {
    since(meta.creation_timestamp.as_deref(), now).into()
}

fn or_none(s: Option<&str>) -> Cell {
    s.filter(|s| !s.is_empty()).unwrap_or("<none>").into()
}

pub(super) fn count(n: i32) -> Cell {
    Cell::Int(i64::from(n))
}

/// `layoutContainerCells`: the template's container names and images, comma-separated.
fn containers(t: &PodTemplateSpec) -> [Cell; 2] {
    let names: Vec<&str> = t.spec.containers.iter().map(|c| c.name.as_str()).collect();
    let images: Vec<&str> = t.spec.containers.iter().map(|c| c.image.as_str()).collect();
    [names.join(",").into(), images.join(",").into()]
}

/// `metav1.LabelSelectorAsSelector(s).String()`: the requirements sorted by key (`k=v`,
/// `k in (a,b)`, `k notin (a,b)`, `k`, `!k`; values sorted), empty for no selector or an empty
/// one; `None` where upstream's conversion fails (an operator it does not know).
pub fn label_selector_string(s: Option<&LabelSelector>) -> Option<String> {
    let Some(s) = s else {
        return Some(String::new());
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
            _ => return None,
        };
        reqs.push((r.key.clone(), text));
    }
    // Upstream sorts by key only; two requirements on one key keep a fixed order here (by text).
    reqs.sort();
    let out: Vec<String> = reqs.into_iter().map(|(_, t)| t).collect();
    Some(out.join(","))
}

/// `metav1.FormatLabelSelector`: [`label_selector_string`], `<none>` when empty, `<error>` when
/// the selector does not convert.
pub fn format_label_selector(s: Option<&LabelSelector>) -> String {
    match label_selector_string(s) {
        None => "<error>".into(),
        Some(t) if t.is_empty() => "<none>".into(),
        Some(t) => t,
    }
}

/// `labels.FormatLabels`: `k=v` pairs sorted by key, joined by `,`; `<none>` when empty.
pub fn format_labels(labels: &std::collections::BTreeMap<String, String>) -> String {
    if labels.is_empty() {
        return "<none>".into();
    }
    labels
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// `printService`: NAME, TYPE, CLUSTER-IP, EXTERNAL-IP (`getServiceExternalIP`), PORT(S)
/// (`makePortString`: `port[:nodePort]/protocol`, `,`-joined), AGE; wide: SELECTOR.
fn service_cells(svc: &Service, now: Tick) -> Vec<Cell> {
    let list = |key: &str| -> Vec<String> {
        svc.spec
            .rest
            .get(key)
            .and_then(serde_json::Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default()
    };
    let external_ips = list("externalIPs");
    let external = match svc.type_() {
        "ClusterIP" | "NodePort" if external_ips.is_empty() => "<none>".to_string(),
        "ClusterIP" | "NodePort" => external_ips.join(","),
        "LoadBalancer" => {
            let mut ips: Vec<String> = svc
                .status
                .get("loadBalancer")
                .and_then(|lb| lb.get("ingress"))
                .and_then(serde_json::Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(|i| {
                            ["ip", "hostname"]
                                .iter()
                                .find_map(|k| i.get(*k).and_then(|v| v.as_str()))
                                .filter(|s| !s.is_empty())
                                .map(String::from)
                        })
                        .collect()
                })
                .unwrap_or_default();
            ips.extend(external_ips);
            if ips.is_empty() {
                "<pending>".to_string()
            } else {
                ips.join(",")
            }
        }
        "ExternalName" => svc.spec.external_name.clone().unwrap_or_default(),
        _ => "<unknown>".to_string(),
    };
    let ports: Vec<String> = svc
        .spec
        .ports
        .iter()
        .map(|p| {
            let proto = p.protocol.as_deref().unwrap_or("");
            match p.node_port.filter(|n| *n != 0) {
                Some(n) => format!("{}:{n}/{proto}", p.port),
                None => format!("{}/{proto}", p.port),
            }
        })
        .collect();
    let ports = if ports.is_empty() {
        "<none>".to_string()
    } else {
        ports.join(",")
    };
    vec![
        svc.metadata.name.as_str().into(),
        svc.type_().into(),
        svc.spec.cluster_ip.as_deref().unwrap_or("").into(),
        external.into(),
        ports.into(),
        age(&svc.metadata, now),
        format_labels(&svc.spec.selector.clone().unwrap_or_default()).into(),
    ]
}

/// `printPod`: NAME, READY, STATUS, RESTARTS (with the age of the last restart), AGE; wide: IP,
/// NODE, NOMINATED NODE, READINESS GATES (`<none>`: the pod type here has no `readinessGates`).
fn pod_cells(p: &Pod, now: Tick) -> Vec<Cell> {
    let printed = print_pod(p);
    vec![
        p.metadata.name.as_str().into(),
        printed.ready_column().into(),
        printed.status.as_str().into(),
        printed.restarts_column(now).into(),
        age(&p.metadata, now),
        or_none(p.status.pod_ip.as_deref()),
        or_none(p.node_name()),
        or_none(p.status.nominated_node_name.as_deref()),
        "<none>".into(),
    ]
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

/// `printNode`: STATUS (`Ready` when the last Ready condition is True, `NotReady` when it is
/// anything else, `Unknown` without one; `,SchedulingDisabled` when cordoned), ROLES
/// (`findNodeRoles`: `node-role.kubernetes.io/<role>` and `kubernetes.io/role` labels, sorted,
/// `<none>`), AGE, VERSION (`nodeInfo.kubeletVersion`); wide: INTERNAL-IP, EXTERNAL-IP (the first
/// address of the type, `<none>`), OS-IMAGE, KERNEL-VERSION, CONTAINER-RUNTIME (`<unknown>` when
/// not reported).
fn node_cells(n: &Node, now: Tick) -> Vec<Cell> {
    // Upstream keys the conditions by type in a map: the last Ready condition wins.
    let mut status: Vec<&str> = match n.status.conditions.iter().rfind(|c| c.type_ == "Ready") {
        Some(c) if c.status == "True" => vec!["Ready"],
        Some(_) => vec!["NotReady"],
        None => vec!["Unknown"],
    };
    if n.spec.unschedulable {
        status.push("SchedulingDisabled");
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
    let unknown = |s: String| -> Cell {
        if s.is_empty() {
            "<unknown>".into()
        } else {
            s.into()
        }
    };
    vec![
        n.metadata.name.as_str().into(),
        status.join(",").into(),
        or_none(Some(&roles.join(","))),
        age(&n.metadata, now),
        node_info(n, "kubeletVersion").into(),
        address("InternalIP"),
        address("ExternalIP"),
        unknown(node_info(n, "osImage")),
        unknown(node_info(n, "kernelVersion")),
        unknown(node_info(n, "containerRuntimeVersion")),
    ]
}

/// `printDeployment`: READY (`readyReplicas/spec.replicas`), UP-TO-DATE, AVAILABLE (integers),
/// AGE; wide: CONTAINERS, IMAGES, SELECTOR (`selector.String()`: empty for none, `<invalid>`
/// when it does not convert).
fn deployment_cells(d: &Deployment, now: Tick) -> Vec<Cell> {
    let [names, images] = containers(&d.spec.template);
    vec![
        d.metadata.name.as_str().into(),
        format!(
            "{}/{}",
            d.status.ready_replicas,
            d.spec.replicas.unwrap_or(1)
        )
        .into(),
        count(d.status.updated_replicas),
        count(d.status.available_replicas),
        age(&d.metadata, now),
        names,
        images,
        label_selector_string(d.spec.selector.as_ref())
            .unwrap_or_else(|| "<invalid>".into())
            .into(),
    ]
}

/// `printReplicaSet`: DESIRED (`spec.replicas`), CURRENT (`status.replicas`), READY (integers),
/// AGE; wide: CONTAINERS, IMAGES, SELECTOR (`FormatLabelSelector`).
fn replicaset_cells(r: &ReplicaSet, now: Tick) -> Vec<Cell> {
    let [names, images] = containers(&r.spec.template);
    vec![
        r.metadata.name.as_str().into(),
        count(r.spec.replicas.unwrap_or(1)),
        count(r.status.replicas),
        count(r.status.ready_replicas),
        age(&r.metadata, now),
        names,
        images,
        format_label_selector(r.spec.selector.as_ref()).into(),
    ]
}

/// `printJob`: STATUS (the first of Complete, Failed, Terminating, Suspended, FailureTarget,
/// SuccessCriteriaMet that holds, else Running), COMPLETIONS (`succeeded/completions`,
/// `succeeded/1 of parallelism` without completions and parallelism > 1, else `succeeded/1`),
/// DURATION (completion - start, or now - start while running, empty before the start), AGE;
/// wide: CONTAINERS, IMAGES, SELECTOR (`FormatLabelSelector`).
fn job_cells(j: &Job, now: Tick) -> Vec<Cell> {
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
    vec![
        j.metadata.name.as_str().into(),
        status.into(),
        completions.into(),
        duration.into(),
        age(&j.metadata, now),
        names,
        images,
        format_label_selector(j.spec.selector.as_ref()).into(),
    ]
}

/// `printNamespace`: NAME, STATUS (`status.phase`), AGE.
fn namespace_cells(ns: &Namespace, now: Tick) -> Vec<Cell> {
    let phase = ns
        .status
        .as_ref()
        .and_then(|s| s.get("phase"))
        .and_then(|p| p.as_str())
        .unwrap_or("");
    vec![
        ns.metadata.name.as_str().into(),
        phase.into(),
        age(&ns.metadata, now),
    ]
}

#[cfg(test)]
mod tests {
    use super::super::events::event_interval;
    use super::*;
    use k8s_api::ApiServer;
    use k8s_store::MemStore;
    use k8s_types::apiserver::ApiClient;
    use k8s_types::apiserver::ApiExt;
    use k8s_types::batch::JobCondition;
    use k8s_types::core::Event;
    use k8s_types::core::{Container, Namespace, NodeCondition};
    use k8s_types::labels::LabelSelectorRequirement;
    use k8s_types::meta::tick_timestamp;
    use k8s_types::Object;

    fn meta(name: &str, ns: Option<&str>) -> ObjectMeta {
        ObjectMeta {
            name: name.into(),
            namespace: ns.map(Into::into),
            ..Default::default()
        }
    }

    fn api() -> ApiServer {
        let mut api = ApiServer::new(Box::new(MemStore::new()));
        api.create(Object::Namespace(Box::new(Namespace {
            metadata: meta("default", None),
            ..Default::default()
        })))
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
            api.create(Object::Job(Box::new(j))).expect("job");
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
        api.update_status(Object::Job(Box::new(done)))
            .expect("status");
        let mut running: Job = api.get_typed("default", "b-running").expect("b");
        running.status.succeeded = 1;
        running.status.start_time = Some(tick_timestamp(10));
        api.update_status(Object::Job(Box::new(running)))
            .expect("status");
        let t = list(&api, &Kind::Job, Some("default"), 100);
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
            api.create(Object::Node(Box::new(n))).expect("node");
        }
        let t = list(&api, &Kind::Node, None, 7);
        let cells: Vec<Vec<String>> = t
            .rows
            .iter()
            .map(|r| r.cells[..4].iter().map(Cell::to_string).collect())
            .collect();
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
            first_timestamp: Some(tick_timestamp(7).into()),
            last_timestamp: Some(tick_timestamp(20).into()),
            count: 2,
            ..Default::default()
        };
        assert_eq!(event_interval(&e, 30), "10s (x2 over 23s)");
        e.count = 1;
        assert_eq!(event_interval(&e, 30), "23s");
    }

    fn texts(cells: &[Cell]) -> Vec<String> {
        cells.iter().map(Cell::to_string).collect()
    }

    /// `printNode` keys conditions by type, so the last Ready condition decides, and anything but
    /// True (here Unknown, as the node lifecycle controller writes it) prints `NotReady`.
    #[test]
    fn node_status_follows_the_last_ready_condition() {
        let cond = |status: &str| NodeCondition {
            type_: "Ready".into(),
            status: status.into(),
            ..Default::default()
        };
        let mut n = Node {
            metadata: meta("n", None),
            ..Default::default()
        };
        n.status.conditions = vec![cond("True"), cond("Unknown")];
        assert_eq!(
            cells(&Object::Node(Box::new(n.clone())), 0)[1],
            "NotReady".into()
        );
        n.status.conditions = vec![cond("False"), cond("True")];
        n.spec.unschedulable = true;
        assert_eq!(
            cells(&Object::Node(Box::new(n)), 0)[1],
            "Ready,SchedulingDisabled".into()
        );
    }

    /// `printDeployment` and `printReplicaSet` write their counts as `int64` cells;
    /// the Deployment's selector is `selector.String()` (empty for none, `<invalid>` when it does
    /// not convert), the ReplicaSet's and Job's `FormatLabelSelector` (`<none>`, `<error>`).
    #[test]
    fn workload_counts_are_integers_and_selectors_as_upstream() {
        let mut d = Deployment {
            metadata: meta("web", Some("default")),
            ..Default::default()
        };
        d.spec.replicas = Some(3);
        d.status.ready_replicas = 2;
        d.status.updated_replicas = 3;
        d.status.available_replicas = 2;
        let c = cells(&Object::Deployment(Box::new(d.clone())), 0);
        assert_eq!(c[1..4], ["2/3".into(), Cell::Int(3), Cell::Int(2)]);
        assert_eq!(c[7], "".into());
        let bogus = LabelSelector {
            match_expressions: vec![LabelSelectorRequirement {
                key: "app".into(),
                operator: "Bogus".into(),
                values: vec![],
            }],
            ..Default::default()
        };
        d.spec.selector = Some(bogus.clone());
        assert_eq!(
            cells(&Object::Deployment(Box::new(d)), 0)[7],
            "<invalid>".into()
        );
        let mut r = ReplicaSet {
            metadata: meta("web-1", Some("default")),
            ..Default::default()
        };
        r.spec.replicas = Some(4);
        r.status.replicas = 4;
        r.status.ready_replicas = 1;
        let c = cells(&Object::ReplicaSet(Box::new(r)), 0);
        assert_eq!(c[1..4], [Cell::Int(4), Cell::Int(4), Cell::Int(1)]);
        assert_eq!(c[7], "<none>".into());
        assert_eq!(format_label_selector(Some(&bogus)), "<error>");
        assert_eq!(
            (
                columns(&Kind::Deployment)[2].type_,
                columns(&Kind::ReplicaSet)[2].type_
            ),
            ("string", "integer")
        );
    }

    /// `printEvent`: the source falls back to the reporting controller, an unset count prints 1
    /// (an integer), and the wide Name column is upstream's `Format: name` column.
    #[test]
    fn event_source_count_and_name_column() {
        let e = Event {
            metadata: meta("web.1", Some("default")),
            reporting_component: Some("default-scheduler".into()),
            first_timestamp: Some(tick_timestamp(10).into()),
            reason: "Scheduled".into(),
            message: " Successfully assigned default/web to node-1 ".into(),
            ..Default::default()
        };
        let c = cells(&Object::Event(Box::new(e)), 70);
        assert_eq!(
            texts(&c),
            [
                "60s",
                "",
                "Scheduled",
                "",
                "",
                "default-scheduler",
                "Successfully assigned default/web to node-1",
                "60s",
                "1",
                "web.1"
            ]
        );
        assert_eq!(c[8], Cell::Int(1));
        let name = columns(&Kind::Event)[9];
        assert_eq!((name.name, name.format, name.priority), ("Name", "name", 1));
    }

    /// `printNamespace` (NAME, STATUS, AGE) and the default convertor for kinds without a printer
    /// (NAME, CREATED AT as RFC 3339, a `date` column).
    #[test]
    fn namespace_and_default_convertor() {
        let mut m = meta("team-a", None);
        m.creation_timestamp = Some(tick_timestamp(5).into());
        let ns = Namespace {
            metadata: m.clone(),
            status: Some(serde_json::json!({"phase": "Active"})),
            ..Default::default()
        };
        assert_eq!(
            texts(&cells(&Object::Namespace(Box::new(ns)), 65)),
            ["team-a", "Active", "60s"]
        );
        let s = k8s_types::apps::StatefulSet {
            metadata: m,
            ..Default::default()
        };
        assert_eq!(
            texts(&cells(&Object::StatefulSet(Box::new(s)), 65)),
            ["team-a", "1970-01-01T00:00:05Z"]
        );
        let created = columns(&Kind::StatefulSet)[1];
        assert_eq!((created.name, created.type_), ("Created At", "date"));
    }
}
