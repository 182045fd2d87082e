//! The `statefulSet` check (a StatefulSet's status counts and whether its rollout is complete)
//! and the `persistentVolumeClaims` check (the claims of a namespace, `kubectl get pvc`).

use serde::Deserialize;

use k8s_types::apiserver::{ApiClient, ApiExt};
use k8s_types::apps::StatefulSet;
use k8s_types::core::PersistentVolumeClaim;

/// `statefulSet`: a StatefulSet's status.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StatefulSetExpectation {
    /// Name.
    pub name: String,
    /// Namespace (default `default`).
    #[serde(default)]
    pub namespace: Option<String>,
    /// status.replicas.
    #[serde(default)]
    pub replicas: Option<i32>,
    /// status.readyReplicas.
    #[serde(default)]
    pub ready_replicas: Option<i32>,
    /// status.currentReplicas.
    #[serde(default)]
    pub current_replicas: Option<i32>,
    /// status.updatedReplicas.
    #[serde(default)]
    pub updated_replicas: Option<i32>,
    /// status.availableReplicas.
    #[serde(default)]
    pub available_replicas: Option<i32>,
    /// Whether status.currentRevision equals status.updateRevision (the rollout is complete).
    #[serde(default)]
    pub revisions_equal: Option<bool>,
    /// Minimum status.readyReplicas (an invariant over `from`..`to`).
    #[serde(default)]
    pub min_ready_replicas: Option<i32>,
}

/// `persistentVolumeClaims`: the claims of a namespace (not being deleted), by name.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ClaimsExpectation {
    /// Namespace (default `default`).
    #[serde(default)]
    pub namespace: Option<String>,
    /// The claims' names, in name order.
    #[serde(default)]
    pub names: Option<Vec<String>>,
    /// The phase every listed claim has (`Pending`, `Bound`).
    #[serde(default)]
    pub phase: Option<String>,
}

/// `None` when every given field holds, else the differences joined by `; `.
pub(super) fn check_stateful_set(
    api: &dyn ApiClient,
    e: &StatefulSetExpectation,
) -> Option<String> {
    let namespace = e.namespace.as_deref().unwrap_or("default");
    let set: StatefulSet = match api.get_typed(namespace, &e.name) {
        Ok(s) => s,
        Err(err) => return Some(err.message),
    };
    let s = &set.status;
    let mut problems = Vec::new();
    for (field, want, got) in [
        ("replicas", e.replicas, s.replicas),
        ("readyReplicas", e.ready_replicas, s.ready_replicas),
        ("currentReplicas", e.current_replicas, s.current_replicas),
        ("updatedReplicas", e.updated_replicas, s.updated_replicas),
        (
            "availableReplicas",
            e.available_replicas,
            s.available_replicas,
        ),
    ] {
        if let Some(w) = want.filter(|w| *w != got) {
            problems.push(format!("expected {field} {w}, got {got}"));
        }
    }
    if let Some(w) = e.revisions_equal {
        let got = s.current_revision == s.update_revision;
        if w != got {
            problems.push(format!(
                "expected currentRevision {} updateRevision, got {} and {}",
                if w { "==" } else { "!=" },
                s.current_revision,
                s.update_revision
            ));
        }
    }
    if let Some(min) = e.min_ready_replicas.filter(|m| s.ready_replicas < *m) {
        problems.push(format!(
            "expected readyReplicas >= {min}, got {}",
            s.ready_replicas
        ));
    }
    (!problems.is_empty()).then(|| problems.join("; "))
}

/// `None` when the claims match, else the differences joined by `; `.
pub(super) fn check_claims(api: &dyn ApiClient, e: &ClaimsExpectation) -> Option<String> {
    let namespace = e.namespace.as_deref().unwrap_or("default");
    let mut claims: Vec<PersistentVolumeClaim> = api
        .list_typed::<PersistentVolumeClaim>(Some(namespace), None)
        .into_iter()
        .filter(|c| c.metadata.deletion_timestamp.is_none())
        .collect();
    claims.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
    let mut problems = Vec::new();
    if let Some(want) = &e.names {
        let got: Vec<&str> = claims.iter().map(|c| c.metadata.name.as_str()).collect();
        if *want != got {
            problems.push(format!("expected claims {want:?}, got {got:?}"));
        }
    }
    if let Some(phase) = &e.phase {
        let off: Vec<String> = claims
            .iter()
            .filter(|c| c.status.phase.as_deref() != Some(phase.as_str()))
            .map(|c| {
                format!(
                    "{}={}",
                    c.metadata.name,
                    c.status.phase.as_deref().unwrap_or("")
                )
            })
            .collect();
        if !off.is_empty() {
            problems.push(format!("expected phase {phase}, got {}", off.join(", ")));
        }
    }
    (!problems.is_empty()).then(|| problems.join("; "))
}
