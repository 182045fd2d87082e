//! Rendering: event lines as `kubectl get events` shows them, tables like `kubectl get pods -o wide`
//! and the "Allocated resources" of `kubectl describe node`, and the final state as a `v1` `List`.

use std::collections::BTreeSet;

use k8s_types::apiserver::{ApiClient, ApiExt};
use k8s_types::core::{Event, Node, Pod};
use k8s_types::meta::timestamp_tick;
use k8s_types::object::Kind;
use k8s_types::resources::Resources;
use k8s_types::Tick;

use crate::output_json::SortedPretty;
use crate::state::{allocated_by_node, format_amount, human_duration, pod_devices, print_pod};

/// Formats rows as left-aligned columns separated by two spaces (trailing spaces trimmed).
pub fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = header.iter().map(|h| h.len()).collect();
    for row in rows {
        for (i, cell) in row.iter().enumerate() {
            if i < widths.len() {
                widths[i] = widths[i].max(cell.chars().count());
            }
        }
    }
    let mut out = String::new();
    let all = std::iter::once(header.iter().map(|s| s.to_string()).collect::<Vec<_>>())
        .chain(rows.iter().cloned());
    for row in all {
        let mut line = String::new();
        for (i, cell) in row.iter().enumerate() {
            if i + 1 < row.len() {
                line.push_str(&format!("{:<w$}  ", cell, w = widths[i]));
            } else {
                line.push_str(cell);
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// The OBJECT column of `kubectl get events`: `pod/web-0`.
pub fn object_ref(e: &Event) -> String {
    format!(
        "{}/{}",
        e.involved_object.kind.to_ascii_lowercase(),
        e.involved_object.name
    )
}

/// One event row for one occurrence: tick, type, reason, object, message. The tick is the
/// occurrence's (`lastTimestamp`); an Event counted more than once (upstream's `EventCorrelator`)
/// gets `kubectl get events`' LAST SEEN suffix with the span since `firstTimestamp` in ticks,
/// e.g. `40 (x3 over 20s)` (kubectl `printOneEvent`: `<last> (x<count> over <first>)`).
pub fn event_row(e: &Event) -> Vec<String> {
    let tick_of = |ts: &Option<k8s_types::CompactString>| ts.as_deref().and_then(timestamp_tick);
    let first = tick_of(&e.first_timestamp);
    let last = tick_of(&e.last_timestamp).or(first);
    let mut tick = last.map_or_else(|| "?".to_string(), |t| t.to_string());
    if e.count > 1 {
        let over = match (first, last) {
            (Some(f), Some(l)) => format!("{}s", l.saturating_sub(f)),
            _ => "?".to_string(),
        };
        tick.push_str(&format!(" (x{} over {over})", e.count));
    }
    vec![
        tick,
        e.type_.to_string(),
        e.reason.to_string(),
        object_ref(e),
        e.message.to_string(),
    ]
}

/// Header of the event table.
pub const EVENT_HEADER: [&str; 5] = ["TICK", "TYPE", "REASON", "OBJECT", "MESSAGE"];

/// `kubectl get pods -A -o wide`, plus the device IDs the kubelet allocated. READY, STATUS and
/// RESTARTS are kubectl's `printPod` ([`print_pod`]); `now` (the end of the run) is the clock of AGE
/// and of the age of the last restart in RESTARTS (`3 (2m10s ago)`); both are printed with
/// kubectl's `duration.HumanDuration` (`translateTimestampSince`: `2m5s`, `70m`, `2d1h`).
pub fn pods_table(api: &dyn ApiClient, now: Tick) -> String {
    let rows: Vec<Vec<String>> = api
        .list_typed::<Pod>(None, None)
        .iter()
        .map(|p| {
            let age = p
                .metadata
                .creation_timestamp
                .as_deref()
                .and_then(timestamp_tick)
                .map_or_else(
                    || "<unknown>".into(),
                    |c| human_duration(i64::try_from(now.saturating_sub(c)).unwrap_or(i64::MAX)),
                );
            let devices: Vec<String> = pod_devices(p)
                .into_iter()
                .map(|(r, ids)| format!("{r}=[{}]", ids.join(",")))
                .collect();
            let printed = print_pod(p);
            vec![
                p.metadata.namespace().to_string(),
                p.metadata.name.clone(),
                printed.ready_column(),
                printed.status.clone(),
                printed.restarts_column(now),
                age,
                p.status.pod_ip.as_deref().unwrap_or("<none>").to_string(),
                p.node_name().unwrap_or("<none>").to_string(),
                p.status
                    .nominated_node_name
                    .as_deref()
                    .unwrap_or("<none>")
                    .to_string(),
                if devices.is_empty() {
                    "<none>".into()
                } else {
                    devices.join(" ")
                },
            ]
        })
        .collect();
    table(
        &[
            "NAMESPACE",
            "NAME",
            "READY",
            "STATUS",
            "RESTARTS",
            "AGE",
            "IP",
            "NODE",
            "NOMINATED NODE",
            "DEVICES",
        ],
        &rows,
    )
}

/// Per node and resource: requests allocated (with the percentage of allocatable, as
/// `kubectl describe node` prints it), allocatable and free.
pub fn nodes_table(api: &dyn ApiClient) -> String {
    let alloc = allocated_by_node(api);
    let mut rows = Vec::new();
    for node in api.list_typed::<Node>(None, None) {
        let allocatable = Resources::from_list(&node.status.allocatable);
        let used = alloc.get(&node.metadata.name).cloned().unwrap_or_default();
        let mut names: BTreeSet<String> = ["cpu", "memory", "pods"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        names.extend(allocatable.scalar.keys().cloned());
        names.extend(used.scalar.keys().cloned());
        let status = if node.is_ready() { "Ready" } else { "NotReady" };
        let status = if node.spec.unschedulable {
            format!("{status},SchedulingDisabled")
        } else {
            status.to_string()
        };
        for (i, res) in names.iter().enumerate() {
            let (a, u) = (allocatable.get(res), used.get(res));
            let pct = if a > 0 {
                format!(" ({}%)", i128::from(u) * 100 / i128::from(a))
            } else {
                String::new()
            };
            rows.push(vec![
                if i == 0 {
                    node.metadata.name.clone()
                } else {
                    String::new()
                },
                if i == 0 {
                    status.clone()
                } else {
                    String::new()
                },
                res.clone(),
                format!("{}{pct}", format_amount(res, u)),
                format_amount(res, a),
                format_amount(res, a.saturating_sub(u)),
            ]);
        }
    }
    table(
        &[
            "NODE",
            "STATUS",
            "RESOURCE",
            "REQUESTS",
            "ALLOCATABLE",
            "FREE",
        ],
        &rows,
    )
}

/// Every object but node Leases as a `v1` `List` (kinds in [`Kind::ALL`] order, then other kinds by key; objects
/// in key order within a kind), as `kubectl get -o json` prints a list. Serializing it writes one
/// object at a time (each converted to JSON on its own, keys sorted as `kubectl` prints them), so a
/// `List` of the whole cluster is streamed to the writer, never built in memory.
pub struct ListView<'a> {
    api: &'a dyn ApiClient,
    other_kinds: &'a BTreeSet<(String, String, bool)>,
    /// Node Leases too (a snapshot holds the whole store).
    leases: bool,
    /// The run's `409 Conflict`s (`crate::output_conflicts::json`), a `conflicts` field.
    conflicts: Option<serde_json::Value>,
}

impl<'a> ListView<'a> {
    /// The List of everything `api` holds (typed kinds and `other_kinds`).
    pub fn new(api: &'a dyn ApiClient, other_kinds: &'a BTreeSet<(String, String, bool)>) -> Self {
        ListView {
            api,
            other_kinds,
            leases: false,
            conflicts: None,
        }
    }

    /// The List with a `conflicts` field (when `Some`).
    pub fn with_conflicts(mut self, conflicts: Option<serde_json::Value>) -> Self {
        self.conflicts = conflicts;
        self
    }

    /// The List of every object `api` holds, node Leases included (a snapshot).
    pub fn whole(
        api: &'a dyn ApiClient,
        other_kinds: &'a BTreeSet<(String, String, bool)>,
    ) -> Self {
        ListView {
            api,
            other_kinds,
            leases: true,
            conflicts: None,
        }
    }

    fn kinds(&self) -> impl Iterator<Item = Kind> + '_ {
        // Node Leases are left out, as `kubectl get all` leaves them out: a heartbeat per node
        // would bury what the scenario describes (docs/fidelity.md).
        let leases = self.leases;
        let typed = Kind::ALL
            .into_iter()
            .filter(move |k| leases || *k != Kind::Lease);
        typed.chain(
            self.other_kinds
                .iter()
                .map(|(api_version, kind, namespaced)| Kind::Other {
                    api_version: api_version.clone(),
                    kind: kind.clone(),
                    namespaced: *namespaced,
                }),
        )
    }
}

impl ListView<'_> {
    /// Writes the List as pretty JSON, byte for byte what `serde_json::to_writer_pretty` writes
    /// for it (the `Serialize` below, each object a sorted `serde_json::Value`), but each object
    /// is written straight from its typed fields by [`SortedPretty`], which puts the keys in the
    /// same sorted order without building the `Value`; the bytes go to `out` every 64 KiB. No
    /// newline after the closing brace. When the machine has a second core, a second thread
    /// writes every other run of [`JSON_PART`] objects into its own buffer, and the buffers go to
    /// `out` in the List's order: the same bytes, in about half the wall time of the items.
    ///
    /// # Errors
    /// The writer's error.
    pub fn write_json(&self, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        let two = std::thread::available_parallelism().is_ok_and(|n| n.get() > 1);
        self.write_json_threads(out, two)
    }

    /// [`ListView::write_json`], with the second thread or without.
    fn write_json_threads(&self, out: &mut dyn std::io::Write, two: bool) -> std::io::Result<()> {
        const FLUSH_AT: usize = 1 << 16;
        let mut w = SortedPretty::default();
        let mut other = SortedPretty::default();
        w.buf.extend_from_slice(b"{\n  \"apiVersion\": \"v1\",\n");
        if let Some(c) = &self.conflicts {
            w.buf.extend_from_slice(b"  \"conflicts\": ");
            w.write(c, 1)?;
            w.buf.extend_from_slice(b",\n");
        }
        w.buf.extend_from_slice(b"  \"items\": [");
        let mut first = true;
        for kind in self.kinds() {
            let objects = self.api.list_shared(&kind, None, None);
            let mut rest = objects.as_slice();
            while !rest.is_empty() {
                if two && rest.len() > JSON_PART {
                    let (mine, tail) = rest.split_at(JSON_PART);
                    let (theirs, tail) = tail.split_at(JSON_PART.min(tail.len()));
                    rest = tail;
                    let (a, b) = std::thread::scope(|s| {
                        let helper = s.spawn(|| write_items(&mut other, theirs, false));
                        let a = write_items(&mut w, mine, first);
                        let b = helper
                            .join()
                            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
                        (a, b)
                    });
                    a?;
                    b?;
                    first = false;
                    out.write_all(&w.buf)?;
                    out.write_all(&other.buf)?;
                    w.buf.clear();
                    other.buf.clear();
                    continue;
                }
                let (o, tail) = rest.split_at(1);
                rest = tail;
                write_items(&mut w, o, first)?;
                first = false;
                if w.buf.len() >= FLUSH_AT {
                    out.write_all(&w.buf)?;
                    w.buf.clear();
                }
            }
        }
        let end: &[u8] = if first { b"],\n" } else { b"\n  ],\n" };
        w.buf.extend_from_slice(end);
        w.buf.extend_from_slice(
            b"  \"kind\": \"List\",\n  \"metadata\": {\n    \"resourceVersion\": ",
        );
        w.write(&self.api.revision().to_string(), 2)?;
        w.buf.extend_from_slice(b"\n  }\n}");
        out.write_all(&w.buf)
    }
}

/// Objects one thread writes at a time when [`ListView::write_json`] uses two.
const JSON_PART: usize = 512;

/// Appends `objects` to `w`'s buffer as items of the List, each after its separator (none but
/// the line break before the List's first item, `first`).
fn write_items(
    w: &mut SortedPretty,
    objects: &[std::sync::Arc<k8s_types::Object>],
    mut first: bool,
) -> Result<(), serde_json::Error> {
    for o in objects {
        let sep: &[u8] = if first { b"\n    " } else { b",\n    " };
        w.buf.extend_from_slice(sep);
        first = false;
        w.write(&**o, 2)?;
    }
    Ok(())
}

/// The `items` of a [`ListView`].
struct Items<'a>(&'a ListView<'a>);

impl serde::Serialize for Items<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let mut seq = s.serialize_seq(None)?;
        for kind in self.0.kinds() {
            for o in self.0.api.list_shared(&kind, None, None) {
                seq.serialize_element(&o.to_json())?;
            }
        }
        seq.end()
    }
}

impl serde::Serialize for ListView<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        // Keys in sorted order, as a `serde_json::Value` map prints them.
        let mut map = s.serialize_map(Some(4 + usize::from(self.conflicts.is_some())))?;
        map.serialize_entry("apiVersion", "v1")?;
        if let Some(c) = &self.conflicts {
            map.serialize_entry("conflicts", c)?;
        }
        map.serialize_entry("items", &Items(self))?;
        map.serialize_entry("kind", "List")?;
        map.serialize_entry(
            "metadata",
            &serde_json::json!({"resourceVersion": self.api.revision().to_string()}),
        )?;
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_api::ApiServer;
    use k8s_store::MemStore;
    use k8s_types::core::{Namespace, Pod};
    use k8s_types::meta::ObjectMeta;
    use k8s_types::Object;

    fn create_namespace(api: &mut ApiServer, name: &str) {
        api.create(Object::Namespace(Box::new(Namespace {
            metadata: ObjectMeta {
                name: name.into(),
                ..Default::default()
            },
            ..Default::default()
        })))
        .expect("namespace");
    }

    /// A pod of one `app:v1` container named `c`, with `labels`.
    fn create_pod(api: &mut ApiServer, ns: &str, name: &str, labels: &[(&str, &str)]) {
        let mut pod = Pod {
            metadata: ObjectMeta {
                name: name.into(),
                namespace: Some(ns.into()),
                ..Default::default()
            },
            ..Default::default()
        };
        for (k, v) in labels {
            pod.metadata.labels.insert(k.to_string(), v.to_string());
        }
        pod.spec.containers.push(k8s_types::core::Container {
            name: "c".into(),
            image: "app:v1".into(),
            ..Default::default()
        });
        api.create(Object::Pod(Box::new(pod))).expect("pod");
    }

    /// The streamed List is byte for byte what serializing it as one JSON value printed before
    /// (`serde_json::to_string_pretty` / `serde_yaml::to_string` of the whole List).
    #[test]
    fn streamed_list_equals_the_whole_value() {
        let mut api = ApiServer::new(Box::new(MemStore::new()));
        create_namespace(&mut api, "default");
        for name in ["b", "a"] {
            create_pod(&mut api, "default", name, &[]);
        }
        let other = BTreeSet::new();
        let view = ListView::new(&api, &other);
        let value = serde_json::to_value(&view).expect("value");
        let items = value["items"].as_array().expect("items");
        assert_eq!(items.len(), 3);
        assert_eq!(items[1]["metadata"]["name"], "a");
        assert_eq!(value["metadata"]["resourceVersion"], "3");
        let mut json = Vec::new();
        serde_json::to_writer_pretty(&mut json, &view).expect("json");
        assert_eq!(
            String::from_utf8(json).expect("utf8"),
            serde_json::to_string_pretty(&value).expect("json")
        );
        let mut yaml = Vec::new();
        serde_yaml::to_writer(&mut yaml, &view).expect("yaml");
        assert_eq!(
            String::from_utf8(yaml).expect("utf8"),
            serde_yaml::to_string(&value).expect("yaml")
        );
        // `--output json`'s writer, straight from the typed objects.
        let mut direct = Vec::new();
        view.write_json(&mut direct).expect("direct");
        assert_eq!(
            String::from_utf8(direct).expect("utf8"),
            serde_json::to_string_pretty(&value).expect("json")
        );
    }

    /// With a second thread writing every other run of `JSON_PART` objects, `write_json` prints
    /// the bytes one thread prints and the `Value` path prints: for a kind of one run and a few
    /// objects more (the second thread's run is short), and one of two runs and a few more.
    #[test]
    fn write_json_with_two_threads_prints_the_same_bytes() {
        let mut api = ApiServer::new(Box::new(MemStore::new()));
        for i in 0..JSON_PART + 5 {
            create_namespace(&mut api, &format!("ns-{i:04}"));
        }
        for i in 0..(2 * JSON_PART + 7) {
            let app = format!("a{}", i % 3);
            create_pod(&mut api, "ns-0001", &format!("p-{i:05}"), &[("app", &app)]);
        }
        let other = BTreeSet::new();
        let view = ListView::new(&api, &other);
        let (mut one, mut two) = (Vec::new(), Vec::new());
        view.write_json_threads(&mut one, false)
            .expect("one thread");
        view.write_json_threads(&mut two, true)
            .expect("two threads");
        let value = serde_json::to_value(&view).expect("value");
        assert_eq!(
            value["items"].as_array().map(Vec::len),
            Some(JSON_PART + 5 + 2 * JSON_PART + 7)
        );
        let want = serde_json::to_string_pretty(&value).expect("json");
        assert_eq!(String::from_utf8(one).expect("utf8"), want);
        assert_eq!(String::from_utf8(two).expect("utf8"), want);
    }

    /// `write_json` with a `conflicts` field and without items prints what the `Value` path
    /// prints (`"items": []`, the conflicts' keys sorted).
    #[test]
    fn write_json_of_an_empty_list_with_conflicts() {
        let api = ApiServer::new(Box::new(MemStore::new()));
        let other = BTreeSet::new();
        let conflicts =
            serde_json::json!({"total": 2, "byComponent": [{"kind": "Pod", "count": 2}]});
        let view = ListView::new(&api, &other).with_conflicts(Some(conflicts));
        let mut direct = Vec::new();
        view.write_json(&mut direct).expect("direct");
        let value = serde_json::to_value(&view).expect("value");
        assert_eq!(value["items"], serde_json::json!([]));
        assert_eq!(
            String::from_utf8(direct).expect("utf8"),
            serde_json::to_string_pretty(&value).expect("json")
        );
    }

    /// READY, STATUS and RESTARTS come from `print_pod`; RESTARTS' age is measured from the run's
    /// `now`, the clock of AGE too.
    #[test]
    fn pods_table_prints_kubectl_status_and_restart_age() {
        use k8s_types::core::{ContainerState, ContainerStateDetail, ContainerStatus};
        use k8s_types::meta::tick_timestamp_compact;
        let mut api = ApiServer::new(Box::new(MemStore::new()));
        create_namespace(&mut api, "default");
        let mut pod = Pod {
            metadata: ObjectMeta {
                name: "crash".into(),
                namespace: Some("default".into()),
                ..Default::default()
            },
            ..Default::default()
        };
        pod.spec.containers.push(k8s_types::core::Container {
            name: "app".into(),
            image: "app:v1".into(),
            ..Default::default()
        });
        let Object::Pod(mut pod) = api.create(Object::Pod(Box::new(pod))).expect("pod") else {
            panic!("not a pod");
        };
        let detail = |reason: &str| ContainerStateDetail {
            reason: Some(reason.into()),
            ..Default::default()
        };
        pod.status.container_statuses = vec![ContainerStatus {
            name: "app".into(),
            restart_count: 4,
            state: ContainerState {
                waiting: Some(Box::new(detail("CrashLoopBackOff"))),
                ..Default::default()
            },
            last_state: ContainerState {
                terminated: Some(Box::new(ContainerStateDetail {
                    exit_code: Some(1),
                    finished_at: Some(tick_timestamp_compact(75)),
                    ..detail("Error")
                })),
                ..Default::default()
            },
            ..Default::default()
        }]
        .into();
        api.update_status(Object::Pod(pod)).expect("status");
        let table = pods_table(&api, 200);
        let row = table.lines().nth(1).expect("a row");
        assert!(
            row.starts_with("default    crash  0/1    CrashLoopBackOff  4 (2m5s ago)  3m20s  "),
            "{table}"
        );
    }
}
