//! Rendering: event lines as `kubectl get events` shows them, tables like `kubectl get pods -o wide`
//! and the "Allocated resources" of `kubectl describe node`, and the final state as a `v1` `List`.

use std::collections::BTreeSet;

use k8s_types::apiserver::{ApiClient, ApiExt};
use k8s_types::core::{Event, Node, Pod};
use k8s_types::meta::timestamp_tick;
use k8s_types::object::{Kind, Object};
use k8s_types::resources::Resources;
use k8s_types::Tick;

use crate::state::{allocated_by_node, format_amount, kubectl_ready, kubectl_status, pod_devices};

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
    let tick_of = |ts: &Option<String>| ts.as_deref().and_then(timestamp_tick);
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
        e.type_.clone(),
        e.reason.clone(),
        object_ref(e),
        e.message.clone(),
    ]
}

/// Header of the event table.
pub const EVENT_HEADER: [&str; 5] = ["TICK", "TYPE", "REASON", "OBJECT", "MESSAGE"];

/// `kubectl get pods -A -o wide`, plus the device IDs the kubelet allocated.
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
                .map_or_else(|| "?".into(), |c| format!("{}s", now.saturating_sub(c)));
            let devices: Vec<String> = pod_devices(p)
                .into_iter()
                .map(|(r, ids)| format!("{r}=[{}]", ids.join(",")))
                .collect();
            let restarts: i32 = p
                .status
                .container_statuses
                .iter()
                .map(|c| c.restart_count)
                .sum();
            vec![
                p.metadata.namespace().to_string(),
                p.metadata.name.clone(),
                kubectl_ready(p),
                kubectl_status(p),
                restarts.to_string(),
                age,
                p.status.pod_ip.clone().unwrap_or_else(|| "<none>".into()),
                p.node_name().unwrap_or("<none>").to_string(),
                p.status
                    .nominated_node_name
                    .clone()
                    .unwrap_or_else(|| "<none>".into()),
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

/// Every object as a `v1` `List` (kinds in [`Kind::TYPED`] order, then other kinds by key; objects
/// in key order within a kind), as `kubectl get -o json` prints a list.
pub fn list_json(
    api: &dyn ApiClient,
    other_kinds: &BTreeSet<(String, String, bool)>,
) -> serde_json::Value {
    let mut items: Vec<serde_json::Value> = Vec::new();
    let mut push_all = |objs: Vec<Object>| {
        for o in objs {
            items.push(o.to_json());
        }
    };
    for kind in Kind::TYPED {
        push_all(api.list(&kind, None, None));
    }
    for (api_version, kind, namespaced) in other_kinds {
        push_all(api.list(
            &Kind::Other {
                api_version: api_version.clone(),
                kind: kind.clone(),
                namespaced: *namespaced,
            },
            None,
            None,
        ));
    }
    serde_json::json!({
        "apiVersion": "v1",
        "kind": "List",
        "metadata": {"resourceVersion": api.revision().to_string()},
        "items": items,
    })
}
