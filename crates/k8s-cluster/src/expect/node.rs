//! The `node` check: a Node's `Ready` condition (status and reason) and its taints, as
//! `kubectl get node <name> -o jsonpath` would show them.

use k8s_types::apiserver::{ApiClient, ApiExt};
use k8s_types::core::Node;

use crate::scenario::NodeExpectation;

/// `None` when every given field holds, else the differences joined by `; `.
pub(super) fn check_node(api: &dyn ApiClient, n: &NodeExpectation) -> Option<String> {
    let node: Node = match api.get_typed("", &n.name) {
        Ok(node) => node,
        Err(e) => return Some(e.message),
    };
    let ready = node.status.conditions.iter().find(|c| c.type_ == "Ready");
    let mut problems = Vec::new();
    if let Some(want) = &n.ready {
        let got = ready.map_or("<none>", |c| c.status.as_str());
        if want != got {
            problems.push(format!("expected Ready {want}, got {got}"));
        }
    }
    if let Some(want) = &n.ready_reason {
        let got = ready.and_then(|c| c.reason.as_deref()).unwrap_or("<none>");
        if want != got {
            problems.push(format!("expected Ready reason {want}, got {got}"));
        }
    }
    if let Some(want) = &n.taints {
        let got: Vec<String> = node
            .spec
            .taints
            .iter()
            .map(|t| match (t.value.as_str(), &t.time_added) {
                ("", None) => format!("{}:{}", t.key, t.effect),
                ("", Some(at)) => format!("{}:{}@{at}", t.key, t.effect),
                (v, None) => format!("{}={v}:{}", t.key, t.effect),
                (v, Some(at)) => format!("{}={v}:{}@{at}", t.key, t.effect),
            })
            .collect();
        if *want != got {
            problems.push(format!("expected taints {want:?}, got {got:?}"));
        }
    }
    (!problems.is_empty()).then(|| problems.join("; "))
}
