//! Field selectors (`?fieldSelector=spec.nodeName=node-1,status.phase!=Failed`): the fields
//! upstream's registries let a list select on (`metadata.name` and `metadata.namespace` for every
//! kind, plus each kind's `GetAttrs`/`ToSelectableFields`: pods in
//! `pkg/registry/core/pod/strategy.go`, events in `pkg/registry/core/event/strategy.go`, nodes,
//! namespaces, jobs, replicasets); any other field is `field label not supported`.

use k8s_types::object::{Kind, Object};
use serde_json::Value;

/// One requirement: field, wanted value, equal or not.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Requirement {
    field: String,
    value: String,
    equal: bool,
}

/// A parsed field selector (every requirement must hold).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct FieldSelector(Vec<Requirement>);

/// The JSON path a selectable field reads, for a kind; `None` when the kind does not offer it.
fn path(kind: &Kind, field: &str) -> Option<Vec<&'static str>> {
    let p: &[&str] = match (kind, field) {
        (_, "metadata.name") => &["metadata", "name"],
        (_, "metadata.namespace") => &["metadata", "namespace"],
        (Kind::Pod, "spec.nodeName") => &["spec", "nodeName"],
        (Kind::Pod, "spec.restartPolicy") => &["spec", "restartPolicy"],
        (Kind::Pod, "spec.schedulerName") => &["spec", "schedulerName"],
        (Kind::Pod, "spec.serviceAccountName") => &["spec", "serviceAccountName"],
        (Kind::Pod, "spec.hostNetwork") => &["spec", "hostNetwork"],
        (Kind::Pod, "status.phase") => &["status", "phase"],
        (Kind::Pod, "status.podIP") => &["status", "podIP"],
        (Kind::Pod, "status.nominatedNodeName") => &["status", "nominatedNodeName"],
        (Kind::Node, "spec.unschedulable") => &["spec", "unschedulable"],
        (Kind::Namespace, "status.phase") => &["status", "phase"],
        (Kind::Job, "status.successful") => &["status", "succeeded"],
        (Kind::ReplicaSet, "status.replicas") => &["status", "replicas"],
        (Kind::Event, "involvedObject.kind") => &["involvedObject", "kind"],
        (Kind::Event, "involvedObject.namespace") => &["involvedObject", "namespace"],
        (Kind::Event, "involvedObject.name") => &["involvedObject", "name"],
        (Kind::Event, "involvedObject.uid") => &["involvedObject", "uid"],
        (Kind::Event, "involvedObject.apiVersion") => &["involvedObject", "apiVersion"],
        (Kind::Event, "involvedObject.resourceVersion") => &["involvedObject", "resourceVersion"],
        (Kind::Event, "involvedObject.fieldPath") => &["involvedObject", "fieldPath"],
        (Kind::Event, "reason") => &["reason"],
        (Kind::Event, "reportingComponent") => &["reportingComponent"],
        (Kind::Event, "source") => &["source", "component"],
        (Kind::Event, "type") => &["type"],
        _ => return None,
    };
    Some(p.to_vec())
}

impl FieldSelector {
    /// Parses `a=b,c!=d` (`==` is `=`) and checks every field is selectable on `kind`.
    ///
    /// # Errors
    /// The message kube-apiserver answers with 400.
    pub(crate) fn parse(kind: &Kind, s: &str) -> Result<FieldSelector, String> {
        let mut out = Vec::new();
        for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (field, value, equal) = if let Some((f, v)) = part.split_once("!=") {
                (f, v, false)
            } else if let Some((f, v)) = part.split_once("==") {
                (f, v, true)
            } else if let Some((f, v)) = part.split_once('=') {
                (f, v, true)
            } else {
                return Err(format!(
                    "invalid selector: '{s}'; can't understand '{part}'"
                ));
            };
            let field = field.trim();
            if path(kind, field).is_none() {
                return Err(format!("field label not supported: {field}"));
            }
            out.push(Requirement {
                field: field.to_string(),
                value: value.trim().to_string(),
                equal,
            });
        }
        Ok(FieldSelector(out))
    }

    /// Whether `obj` satisfies every requirement. A field that is unset reads as `""` (`false`
    /// for booleans, `0` for counts, as upstream's selectable fields print Go zero values).
    pub(crate) fn matches(&self, obj: &Object) -> bool {
        if self.0.is_empty() {
            return true;
        }
        let kind = obj.kind();
        let v = obj.to_json();
        self.0.iter().all(|r| {
            let Some(p) = path(&kind, &r.field) else {
                return false;
            };
            let mut cur = &v;
            for k in &p {
                cur = cur.get(k).unwrap_or(&Value::Null);
            }
            let got = match cur {
                Value::String(s) => s.clone(),
                Value::Bool(b) => b.to_string(),
                Value::Number(n) => n.to_string(),
                Value::Null => match r.field.as_str() {
                    "spec.hostNetwork" | "spec.unschedulable" => "false".into(),
                    "status.successful" | "status.replicas" => "0".into(),
                    _ => String::new(),
                },
                other => other.to_string(),
            };
            (got == r.value) == r.equal
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pod(node: Option<&str>, phase: &str) -> Object {
        let mut v = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "i"}]}, "status": {"phase": phase}});
        if let Some(n) = node {
            v["spec"]["nodeName"] = json!(n);
        }
        k8s_cluster::manifest::decode_object_json(&Kind::Pod, v).unwrap()
    }

    #[test]
    fn pod_fields_kubectl_drain_and_describe_use() {
        let sel = FieldSelector::parse(
            &Kind::Pod,
            "spec.nodeName=node-1,status.phase!=Succeeded,status.phase!=Failed",
        )
        .unwrap();
        assert!(sel.matches(&pod(Some("node-1"), "Running")));
        assert!(!sel.matches(&pod(Some("node-2"), "Running")));
        assert!(!sel.matches(&pod(Some("node-1"), "Succeeded")));
        let unbound = FieldSelector::parse(&Kind::Pod, "spec.nodeName=").unwrap();
        assert!(unbound.matches(&pod(None, "Pending")));
        assert_eq!(
            FieldSelector::parse(&Kind::Pod, "spec.image=x").unwrap_err(),
            "field label not supported: spec.image"
        );
        assert_eq!(
            FieldSelector::parse(&Kind::Deployment, "spec.nodeName=x").unwrap_err(),
            "field label not supported: spec.nodeName"
        );
    }
}
