//! `kubectl describe replicaset`: upstream `staging/src/k8s.io/kubectl/pkg/describe/describe.go`
//! (v1.32, `ReplicaSetDescriber.Describe`, `describeReplicaSet`, `getPodStatusForController`,
//! `printController`). The Pods Status counts the pods that match the selector and whose
//! controller is the ReplicaSet (by uid), by phase (Pending counts as Waiting). The ReplicaSet type
//! here has no `status.conditions` (the replica set controller's `ReplicaFailure` is not
//! simulated), so no Conditions table is printed.

use k8s_types::apiserver::{ApiClient, ApiExt};
use k8s_types::apps::ReplicaSet;
use k8s_types::core::{Event, Pod};
use k8s_types::Tick;

use super::pod::describe_pod_template;
use super::{
    annotations_multiline, describe_events, labels_multiline, object_events, PrefixWriter,
};
use crate::printers::format_label_selector;

/// Pods of a controller by phase: Running, Waiting (Pending), Succeeded, Failed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PodPhases {
    pub running: usize,
    pub waiting: usize,
    pub succeeded: usize,
    pub failed: usize,
}

/// `getPodStatusForController`: the pods of `namespace` matching `selector` whose controller has
/// `uid`, counted by phase.
pub fn pod_phases_for_controller(
    api: &dyn ApiClient,
    namespace: &str,
    selector: Option<&k8s_types::labels::LabelSelector>,
    uid: &str,
) -> PodPhases {
    let mut out = PodPhases::default();
    let Some(selector) = selector else {
        return out;
    };
    for pod in api.list_typed::<Pod>(Some(namespace), None) {
        if !selector.matches(&pod.metadata.labels) {
            continue;
        }
        if pod.metadata.controller_ref().is_none_or(|r| r.uid != uid) {
            continue;
        }
        match pod.status.phase.as_deref() {
            Some("Running") => out.running += 1,
            Some("Pending") => out.waiting += 1,
            Some("Succeeded") => out.succeeded += 1,
            Some("Failed") => out.failed += 1,
            _ => {}
        }
    }
    out
}

/// The ReplicaSet's Events (kind, namespace, name and uid).
pub fn replica_set_events(api: &dyn ApiClient, rs: &ReplicaSet) -> Vec<Event> {
    object_events(
        api,
        "ReplicaSet",
        rs.metadata.namespace(),
        &rs.metadata.name,
        &[rs.metadata.uid.as_deref().unwrap_or("")],
    )
}

/// What `kubectl describe replicaset` prints for `rs`, with its pods' `phases` (see
/// [`pod_phases_for_controller`]) and `events` (see [`replica_set_events`]), the clock at `now`.
pub fn describe_replica_set(
    rs: &ReplicaSet,
    phases: PodPhases,
    events: Vec<Event>,
    now: Tick,
) -> String {
    let mut w = PrefixWriter::new();
    w.write(0, &format!("Name:\t{}\n", rs.metadata.name));
    w.write(0, &format!("Namespace:\t{}\n", rs.metadata.namespace()));
    w.write(
        0,
        &format!(
            "Selector:\t{}\n",
            format_label_selector(rs.spec.selector.as_ref())
        ),
    );
    labels_multiline(&mut w, "Labels", &rs.metadata.labels);
    annotations_multiline(&mut w, "Annotations", &rs.metadata.annotations);
    if let Some(c) = rs.metadata.controller_ref() {
        w.write(0, &format!("Controlled By:\t{}/{}\n", c.kind, c.name));
    }
    w.write(
        0,
        &format!(
            "Replicas:\t{} current / {} desired\n",
            rs.status.replicas,
            rs.spec.replicas.unwrap_or(1)
        ),
    );
    w.write(
        0,
        &format!(
            "Pods Status:\t{} Running / {} Waiting / {} Succeeded / {} Failed\n",
            phases.running, phases.waiting, phases.succeeded, phases.failed
        ),
    );
    describe_pod_template(&mut w, &rs.spec.template);
    describe_events(&mut w, events, now);
    w.finish()
}
