//! `kubectl describe`: upstream `staging/src/k8s.io/kubectl/pkg/describe/describe.go` (v1.32), one
//! describer per file as upstream has one `Describer` per kind ([`pod`] `PodDescriber`, [`node`]
//! `NodeDescriber`, [`deployment`] `DeploymentDescriber`, [`replicaset`] `ReplicaSetDescriber`,
//! [`job`] `JobDescriber`, [`service`] `ServiceDescriber`);
//! here the pieces they share: the `PrefixWriter` (two spaces per level) over a `text/tabwriter`
//! (minimum width 0, padding 2) that `tabbedString` flushes at the end and `DescribeEvents` flushes
//! before the Events table, `printLabelsMultiline`, `printAnnotationsMultiline`, `DescribeEvents`
//! and the search for an object's Events (`searchEvents`).
//!
//! Times are the run's virtual clock: timestamps as `time.RFC1123Z` (`Thu, 01 Jan 1970 00:00:05
//! +0000`), ages (Event Age, a node's pods' Age) as `now` minus the timestamp.

use k8s_types::apiserver::{ApiClient, ApiExt};
use k8s_types::core::Event;
use k8s_types::Tick;

use crate::printers::{event_interval, tabwriter};

pub mod deployment;
pub mod job;
pub mod node;
pub mod pod;
pub mod replicaset;
pub mod service;

pub use deployment::describe_deployment;
pub use job::describe_job;
pub use node::describe_node;
pub use pod::{describe_pod, pod_events};
pub use replicaset::describe_replica_set;
pub use service::describe_service;

/// Upstream's `PrefixWriter`: each level indents two spaces; `flush` ends the tabwriter's blocks.
pub(crate) struct PrefixWriter {
    done: String,
    pending: String,
}

impl PrefixWriter {
    pub(crate) fn new() -> Self {
        PrefixWriter {
            done: String::new(),
            pending: String::new(),
        }
    }

    pub(crate) fn write(&mut self, level: usize, text: &str) {
        for _ in 0..level {
            self.pending.push_str("  ");
        }
        self.pending.push_str(text);
    }

    pub(crate) fn flush(&mut self) {
        self.done
            .push_str(&tabwriter::format(&std::mem::take(&mut self.pending), 0, 2));
    }

    pub(crate) fn finish(mut self) -> String {
        self.flush();
        self.done
    }
}

pub(crate) fn print_bool(b: bool) -> &'static str {
    if b {
        "True"
    } else {
        "False"
    }
}

/// `printLabelsMultiline` (also Node-Selectors): `title:\tk=v` then `\tk=v` per further key, sorted.
pub(crate) fn labels_multiline(
    w: &mut PrefixWriter,
    title: &str,
    labels: &std::collections::BTreeMap<String, String>,
) {
    w.write(0, &format!("{title}:\t"));
    if labels.is_empty() {
        w.write(0, "<none>\n");
        return;
    }
    for (i, (k, v)) in labels.iter().enumerate() {
        if i != 0 {
            w.write(0, "\t");
        }
        w.write(0, &format!("{k}={v}\n"));
    }
}

/// Upstream's `maxAnnotationLen`.
const MAX_ANNOTATION_LEN: usize = 140;

/// `printAnnotationsMultiline`: a value longer than 140 characters (with its key) or on several
/// lines goes on lines of its own, each cut at 138 characters plus `...`;
/// `kubectl.kubernetes.io/last-applied-configuration` is skipped.
pub(crate) fn annotations_multiline(
    w: &mut PrefixWriter,
    title: &str,
    annotations: &std::collections::BTreeMap<String, String>,
) {
    w.write(0, &format!("{title}:\t"));
    let keys: Vec<&String> = annotations
        .keys()
        .filter(|k| *k != "kubectl.kubernetes.io/last-applied-configuration")
        .collect();
    if keys.is_empty() {
        w.write(0, "<none>\n");
        return;
    }
    for (i, key) in keys.into_iter().enumerate() {
        if i != 0 {
            w.write(0, "\t");
        }
        let value = annotations[key]
            .strip_suffix('\n')
            .unwrap_or(&annotations[key]);
        if value.len() + key.len() + 2 > MAX_ANNOTATION_LEN || value.contains('\n') {
            w.write(0, &format!("{key}:\n"));
            for s in value.split('\n') {
                let short = match s.char_indices().nth(MAX_ANNOTATION_LEN - 2) {
                    Some((at, _)) => format!("{}...", &s[..at]),
                    None => s.to_string(),
                };
                w.write(0, &format!("\t  {short}\n"));
            }
        } else {
            w.write(0, &format!("{key}: {value}\n"));
        }
    }
}

/// `DescribeEvents`: `Events:\t<none>`, or (after a flush) the table sorted by last timestamp
/// (`SortableEvents`; within a second, in the order the Events were last written) with Type, Reason, Age (repeats as
/// `<last> (x<count> over <first>)`), From (`source.component`) and Message.
pub(crate) fn describe_events(w: &mut PrefixWriter, mut events: Vec<Event>, now: Tick) {
    if events.is_empty() {
        w.write(0, "Events:\t<none>\n");
        return;
    }
    w.flush();
    events.sort_by_key(|e| {
        (
            e.last_timestamp
                .as_deref()
                .and_then(k8s_types::meta::timestamp_tick),
            e.metadata.resource_version_number(),
        )
    });
    w.write(0, "Events:\n  Type\tReason\tAge\tFrom\tMessage\n");
    w.write(1, "----\t------\t----\t----\t-------\n");
    for e in &events {
        let from = if e.source.component.is_empty() {
            e.reporting_component.clone().unwrap_or_default()
        } else {
            e.source.component.clone()
        };
        w.write(
            1,
            &format!(
                "{}\t{}\t{}\t{from}\t{}\n",
                e.type_,
                e.reason,
                event_interval(e, now),
                e.message.trim()
            ),
        );
    }
}

/// The Events about one object, as `searchEvents`' field selector finds them: `kind`, namespace
/// (`""` for a cluster-scoped object) and name equal, and the uid equal to one of `uids` when the
/// Event names one (the node describer asks for the node's uid and its name: the kubelet reports
/// node Events with the node's name as uid).
pub fn object_events(
    api: &dyn ApiClient,
    kind: &str,
    namespace: &str,
    name: &str,
    uids: &[&str],
) -> Vec<Event> {
    let ns = (!namespace.is_empty()).then_some(namespace);
    api.list_typed::<Event>(ns, None)
        .into_iter()
        .filter(|e| {
            let o = &e.involved_object;
            o.kind == kind
                && o.name == name
                && o.namespace == namespace
                && (o.uid.is_empty() || uids.iter().any(|u| u.is_empty() || *u == o.uid))
        })
        .collect()
}
