//! The `customResource` check: a custom resource's conditions and fields, as `kubectl get
//! <kind> <name> -o jsonpath` would show them (e.g. a PyTorchJob's `Succeeded` condition and its
//! `status.replicaStatuses`).

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use k8s_types::apiserver::ApiClient;
use k8s_types::object::Kind;

/// `customResource`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CustomResourceExpectation {
    /// apiVersion (`group/version`), e.g. `kubeflow.org/v1`.
    pub api_version: String,
    /// Kind, e.g. `PyTorchJob`.
    pub kind: String,
    /// Name.
    pub name: String,
    /// Namespace (default `default`; ignored for a cluster-scoped kind).
    #[serde(default)]
    pub namespace: Option<String>,
    /// A `status.conditions` type whose status must be `True`.
    #[serde(default)]
    pub condition: Option<String>,
    /// That condition's reason.
    #[serde(default)]
    pub reason: Option<String>,
    /// That condition's message.
    #[serde(default)]
    pub message: Option<String>,
    /// Field path (`status.replicaStatuses.Master.succeeded`, `spec.list[0].name`) -> value (any
    /// YAML value, compared as JSON; `null` for an absent field).
    #[serde(default)]
    pub fields: BTreeMap<String, Value>,
}

/// The value at a dotted path with `[i]` indexes (`a.b[0].c`), `Null` when absent.
fn at_path<'a>(v: &'a Value, path: &str) -> &'a Value {
    let mut cur = v;
    for part in path.split('.') {
        let (key, indexes) = match part.find('[') {
            Some(i) => (&part[..i], &part[i..]),
            None => (part, ""),
        };
        if !key.is_empty() {
            cur = cur.get(key).unwrap_or(&Value::Null);
        }
        for idx in indexes
            .split(['[', ']'])
            .filter(|s| !s.is_empty())
            .filter_map(|s| s.parse::<usize>().ok())
        {
            cur = cur.get(idx).unwrap_or(&Value::Null);
        }
    }
    cur
}

/// `None` when every given field holds, else the differences joined by `; `.
pub(super) fn check_custom_resource(
    api: &dyn ApiClient,
    c: &CustomResourceExpectation,
) -> Option<String> {
    let ns = c.namespace.as_deref().unwrap_or("default");
    let kind = |namespaced| Kind::Other {
        api_version: c.api_version.clone(),
        kind: c.kind.clone(),
        namespaced,
    };
    let obj = match api
        .get_shared(&kind(true), ns, &c.name)
        .or_else(|_| api.get_shared(&kind(false), "", &c.name))
    {
        Ok(o) => o,
        Err(e) => return Some(e.message),
    };
    let v = obj.to_json();
    let mut problems = Vec::new();
    let conditions = at_path(&v, "status.conditions")
        .as_array()
        .cloned()
        .unwrap_or_default();
    let true_types = || {
        conditions
            .iter()
            .filter(|x| x["status"] == "True")
            .filter_map(|x| x["type"].as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    if let Some(want) = &c.condition {
        match conditions
            .iter()
            .find(|x| x["type"] == want.as_str() && x["status"] == "True")
        {
            None => problems.push(format!(
                "expected condition {want}=True, got [{}]",
                true_types()
            )),
            Some(cond) => {
                for (field, expected) in [("reason", &c.reason), ("message", &c.message)] {
                    let got = cond[field].as_str().unwrap_or_default();
                    if let Some(e) = expected.as_ref().filter(|e| e.as_str() != got) {
                        problems.push(format!("expected {want} {field} {e:?}, got {got:?}"));
                    }
                }
            }
        }
    } else if c.reason.is_some() || c.message.is_some() {
        problems.push("reason/message need a condition".to_string());
    }
    for (path, want) in &c.fields {
        let got = at_path(&v, path);
        if got != want {
            problems.push(format!("expected {path} {want}, got {got}"));
        }
    }
    (!problems.is_empty()).then(|| problems.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_walk_maps_and_lists() {
        let v = serde_json::json!({"status": {"conditions": [{"type": "Created"}, {"type": "Running"}],
            "replicaStatuses": {"Master": {"succeeded": 1}}}});
        assert_eq!(at_path(&v, "status.conditions[1].type"), "Running");
        assert_eq!(at_path(&v, "status.replicaStatuses.Master.succeeded"), 1);
        assert_eq!(at_path(&v, "status.replicaStatuses.Worker"), &Value::Null);
    }
}
