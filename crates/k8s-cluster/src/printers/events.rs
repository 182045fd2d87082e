//! The Event printers: `printEvent`'s row (server-side Tables and `k8s-mini get events`),
//! `formatEventSource`, and `kubectl events`' table with its folded intervals (upstream
//! `pkg/printers/internalversion/printers.go` and `staging/src/k8s.io/kubectl/pkg/cmd/events`,
//! v1.32).

use k8s_types::apiserver::{ApiClient, ApiExt};
use k8s_types::core::Event;
use k8s_types::meta::timestamp_tick;
use k8s_types::Tick;

use super::tables::{col, count};
use super::{since, Cell, Row, Table};

/// `formatEventSource`: `component, host`, the component falling back to
/// `reportingComponent` (`reportingController` in Go) as upstream's `firstNonEmpty`.
pub fn event_source(e: &Event) -> String {
    let component = if e.source.component.is_empty() {
        e.reporting_component.as_deref().unwrap_or("")
    } else {
        e.source.component.as_str()
    };
    if e.source.host.is_empty() {
        component.to_string()
    } else {
        format!("{component}, {}", e.source.host)
    }
}

/// `printEvent`: LAST SEEN (age of `lastTimestamp`, else of `firstTimestamp`), TYPE, REASON,
/// OBJECT (`kind/name`, kind lower-cased), MESSAGE (trimmed); wide adds SUBOBJECT, SOURCE, FIRST
/// SEEN, COUNT (an integer, 1 when unset), NAME, in upstream's column order.
pub(super) fn event_cells(e: &Event, now: Tick) -> Vec<Cell> {
    let first = since(e.first_timestamp.as_deref(), now);
    let last = match &e.last_timestamp {
        Some(t) => since(Some(t), now),
        None => first.clone(),
    };
    let o = &e.involved_object;
    let target = if o.name.is_empty() {
        o.kind.as_str().to_lowercase()
    } else {
        format!("{}/{}", o.kind.to_lowercase(), o.name)
    };
    vec![
        last.into(),
        e.type_.as_str().into(),
        e.reason.as_str().into(),
        target.into(),
        (*o.field_path).into(),
        event_source(e).into(),
        e.message.trim().into(),
        first.into(),
        count(if e.count == 0 { 1 } else { e.count }),
        e.metadata.name.as_str().into(),
    ]
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
        .map(|e| Row {
            namespace: e.metadata.namespace().to_string(),
            name: e.metadata.name.clone(),
            cells: vec![
                event_interval(e, now).into(),
                e.type_.as_str().into(),
                e.reason.as_str().into(),
                format!("{}/{}", e.involved_object.kind, e.involved_object.name).into(),
                e.message.trim().into(),
            ],
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
