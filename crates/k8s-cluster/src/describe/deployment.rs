//! `kubectl describe deployment`: upstream `staging/src/k8s.io/kubectl/pkg/describe/describe.go`
//! (v1.32, `DeploymentDescriber.Describe`, `describeDeployment`, `printReplicaSetsByLabels`) with
//! the ReplicaSets of `kubectl/pkg/util/deployment` `GetAllReplicaSetsInChunks`: the ReplicaSets
//! of the namespace whose controller is the Deployment (by uid), the new one being the oldest whose
//! template equals the Deployment's but for `pod-template-hash` (`FindNewReplicaSet`), every
//! other one old (`FindOldReplicaSets`' second list), in list order (by name).
//!
//! Defaults the apiserver would have stored (replicas 1, strategy `RollingUpdate` with 25 % / 25 %,
//! `minReadySeconds` 0) are printed when the manifest leaves them out, as the stored object has
//! them upstream.

use k8s_controllers::deployment::util;
use k8s_types::apiserver::{ApiClient, ApiExt};
use k8s_types::apps::{Deployment, IntOrString, ReplicaSet};
use k8s_types::core::Event;
use k8s_types::Tick;

use super::pod::describe_pod_template;
use super::{
    annotations_multiline, describe_events, labels_multiline, object_events, PrefixWriter,
};
use crate::printers::{label_selector_string, rfc1123z};

/// `IntOrString.String()`: the integer, or the string as it is.
pub(crate) fn int_or_string(v: Option<&IntOrString>) -> String {
    match v {
        Some(IntOrString::Int(i)) => i.to_string(),
        Some(IntOrString::String(s)) => s.clone(),
        None => "0".to_string(),
    }
}

/// `printReplicaSetsByLabels`: `name (status/spec replicas created)`, comma-separated, or
/// `<none>`.
fn replica_sets_by_labels(rss: &[ReplicaSet]) -> String {
    let list: Vec<String> = rss
        .iter()
        .map(|rs| {
            format!(
                "{} ({}/{} replicas created)",
                rs.metadata.name,
                rs.status.replicas,
                rs.spec.replicas.unwrap_or(1)
            )
        })
        .collect();
    if list.is_empty() {
        "<none>".to_string()
    } else {
        list.join(", ")
    }
}

/// The Deployment's old and new ReplicaSets (see the module docs).
pub fn deployment_replica_sets(
    api: &dyn ApiClient,
    d: &Deployment,
) -> (Vec<ReplicaSet>, Option<ReplicaSet>) {
    let uid = d.metadata.uid.as_deref().unwrap_or("");
    let owned: Vec<ReplicaSet> = api
        .list_typed::<ReplicaSet>(Some(d.metadata.namespace()), None)
        .into_iter()
        .filter(|rs| {
            rs.metadata
                .controller_ref()
                .is_some_and(|r| !uid.is_empty() && r.uid == uid)
        })
        .collect();
    (
        util::find_old_replica_sets(d, &owned),
        util::find_new_replica_set(d, &owned),
    )
}

/// The Deployment's Events (kind, namespace, name and uid).
pub fn deployment_events(api: &dyn ApiClient, d: &Deployment) -> Vec<Event> {
    object_events(
        api,
        "Deployment",
        d.metadata.namespace(),
        &d.metadata.name,
        &[d.metadata.uid.as_deref().unwrap_or("")],
    )
}

/// What `kubectl describe deployment` prints for `d`, with its ReplicaSets (see
/// [`deployment_replica_sets`]) and `events` (see [`deployment_events`]), the clock at `now`.
pub fn describe_deployment(
    d: &Deployment,
    old: &[ReplicaSet],
    new: Option<&ReplicaSet>,
    events: Vec<Event>,
    now: Tick,
) -> String {
    let mut w = PrefixWriter::new();
    w.write(0, &format!("Name:\t{}\n", d.metadata.name));
    w.write(0, &format!("Namespace:\t{}\n", d.metadata.namespace()));
    w.write(
        0,
        &format!(
            "CreationTimestamp:\t{}\n",
            d.metadata
                .creation_timestamp
                .as_deref()
                .map_or_else(|| "Mon, 01 Jan 0001 00:00:00 +0000".to_string(), rfc1123z)
        ),
    );
    labels_multiline(&mut w, "Labels", &d.metadata.labels);
    annotations_multiline(&mut w, "Annotations", &d.metadata.annotations);
    w.write(
        0,
        &format!(
            "Selector:\t{}\n",
            label_selector_string(d.spec.selector.as_ref()).unwrap_or_default()
        ),
    );
    let s = &d.status;
    w.write(
        0,
        &format!(
            "Replicas:\t{} desired | {} updated | {} total | {} available | {} unavailable\n",
            util::replicas(d),
            s.updated_replicas,
            s.replicas,
            s.available_replicas,
            s.unavailable_replicas
        ),
    );
    w.write(0, &format!("StrategyType:\t{}\n", util::strategy_type(d)));
    w.write(
        0,
        &format!("MinReadySeconds:\t{}\n", util::min_ready_seconds(d)),
    );
    if util::is_rolling_update(d) {
        let ru = util::rolling_update_params(d);
        w.write(
            0,
            &format!(
                "RollingUpdateStrategy:\t{} max unavailable, {} max surge\n",
                int_or_string(ru.max_unavailable.as_ref()),
                int_or_string(ru.max_surge.as_ref())
            ),
        );
    }
    describe_pod_template(&mut w, &d.spec.template);
    if !s.conditions.is_empty() {
        w.write(0, "Conditions:\n  Type\tStatus\tReason\n");
        w.write(1, "----\t------\t------\n");
        let field = |c: &serde_json::Value, k: &str| {
            c.get(k).and_then(|v| v.as_str()).unwrap_or("").to_string()
        };
        for c in &s.conditions {
            w.write(
                1,
                &format!(
                    "{} \t{}\t{}\n",
                    field(c, "type"),
                    field(c, "status"),
                    field(c, "reason")
                ),
            );
        }
    }
    if !old.is_empty() || new.is_some() {
        w.write(
            0,
            &format!("OldReplicaSets:\t{}\n", replica_sets_by_labels(old)),
        );
        let new: Vec<ReplicaSet> = new.cloned().into_iter().collect();
        w.write(
            0,
            &format!("NewReplicaSet:\t{}\n", replica_sets_by_labels(&new)),
        );
    }
    describe_events(&mut w, events, now);
    w.finish()
}
