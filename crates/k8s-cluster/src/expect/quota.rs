//! The `resourceQuota` and `namespace` checks: a ResourceQuota's `status.hard`/`status.used`
//! (compared as quantities, as `kubectl describe quota` lists them), and a Namespace's phase,
//! deletion conditions, or absence.

use std::collections::BTreeMap;

use k8s_types::apiserver::{ApiClient, ApiExt};
use k8s_types::core::{Namespace, ResourceList, ResourceQuota};
use k8s_types::Quantity;
use serde::Deserialize;

/// `resourceQuota`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ResourceQuotaExpectation {
    /// Name.
    pub name: String,
    /// Namespace (default `default`).
    #[serde(default)]
    pub namespace: Option<String>,
    /// `status.hard`, every resource.
    #[serde(default)]
    pub hard: Option<BTreeMap<String, String>>,
    /// `status.used`, every resource.
    #[serde(default)]
    pub used: Option<BTreeMap<String, String>>,
}

/// `namespace`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NamespaceExpectation {
    /// Name.
    pub name: String,
    /// `false`: the namespace is gone (NotFound); `true`: it exists.
    #[serde(default)]
    pub exists: Option<bool>,
    /// `status.phase` (`Active`, `Terminating`).
    #[serde(default)]
    pub phase: Option<String>,
    /// Condition type -> `status` (`True`/`False`), e.g. `NamespaceContentRemaining: "True"`.
    #[serde(default)]
    pub conditions: Option<BTreeMap<String, String>>,
}

fn compare(what: &str, want: &BTreeMap<String, String>, got: &ResourceList) -> Option<String> {
    let mut parsed = ResourceList::new();
    for (k, v) in want {
        match Quantity::parse(v) {
            Ok(q) => {
                parsed.insert(k.clone(), q);
            }
            Err(e) => return Some(format!("{what}[{k}]: invalid quantity {v:?}: {e}")),
        }
    }
    (parsed != *got).then(|| {
        let show = |l: &ResourceList| {
            l.iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join(",")
        };
        format!("expected {what} {}, got {}", show(&parsed), show(got))
    })
}

/// `None` when every given field holds, else the differences joined by `; `.
pub(super) fn check_resource_quota(
    api: &dyn ApiClient,
    e: &ResourceQuotaExpectation,
) -> Option<String> {
    let ns = e.namespace.as_deref().unwrap_or("default");
    let rq: ResourceQuota = match api.get_typed(ns, &e.name) {
        Ok(q) => q,
        Err(err) => return Some(err.message),
    };
    let mut problems = Vec::new();
    if let Some(want) = &e.hard {
        problems.extend(compare("hard", want, &rq.status.hard));
    }
    if let Some(want) = &e.used {
        problems.extend(compare("used", want, &rq.status.used));
    }
    (!problems.is_empty()).then(|| problems.join("; "))
}

/// `None` when every given field holds, else the differences joined by `; `.
pub(super) fn check_namespace(api: &dyn ApiClient, e: &NamespaceExpectation) -> Option<String> {
    let got: Option<Namespace> = match api.get_typed("", &e.name) {
        Ok(n) => Some(n),
        Err(err) if err.is_not_found() => None,
        Err(err) => return Some(err.message),
    };
    let Some(ns) = got else {
        return match e.exists {
            Some(false) => None,
            _ => Some(format!("namespaces {:?} not found", e.name)),
        };
    };
    let mut problems = Vec::new();
    if e.exists == Some(false) {
        problems.push("expected the namespace to be gone, it exists".to_string());
    }
    let status = ns.status.unwrap_or_default();
    if let Some(want) = &e.phase {
        let got = status
            .get("phase")
            .and_then(|p| p.as_str())
            .unwrap_or("<none>");
        if want != got {
            problems.push(format!("expected phase {want}, got {got}"));
        }
    }
    if let Some(want) = &e.conditions {
        let conds = status
            .get("conditions")
            .and_then(|c| c.as_array())
            .cloned()
            .unwrap_or_default();
        for (type_, st) in want {
            let got = conds
                .iter()
                .find(|c| c.get("type").and_then(|t| t.as_str()) == Some(type_))
                .and_then(|c| c.get("status").and_then(|s| s.as_str()))
                .unwrap_or("<none>");
            if got != st {
                problems.push(format!("expected condition {type_} {st}, got {got}"));
            }
        }
    }
    (!problems.is_empty()).then(|| problems.join("; "))
}
