//! The `scale` subresource's `autoscaling/v1` Scale (upstream `pkg/registry/apps/deployment/
//! storage` `ScaleREST` for the built-in kinds; `apiextensions-apiserver/pkg/registry/
//! customresource` `ScaleREST` for custom resources): the built-in kinds read `spec.replicas`,
//! `status.replicas` and `spec.selector`; a custom resource reads the paths its CRD version's
//! `subresources.scale` names (`specReplicasPath`, `statusReplicasPath`, and `labelSelectorPath`,
//! whose value is a selector string). Writing a Scale sets the replicas at the spec path.

use k8s_types::labels::LabelSelector;
use k8s_types::object::Object;
use serde_json::{json, Value};

use crate::serve::custom;
use crate::serve::rest::Target;

/// The keys of a simple JSON path (`.spec.replicas`), for the write.
fn keys(path: &str) -> Vec<&str> {
    path.trim_start_matches('.')
        .split('.')
        .filter(|k| !k.is_empty())
        .collect()
}

/// The value at a CRD's JSON path (the printer columns' evaluator), `null` when absent.
fn at<'a>(v: &'a Value, path: &str) -> &'a Value {
    custom::eval(v, path).unwrap_or(&Value::Null)
}

/// The Scale of `obj` as its resource `t` defines it.
pub(crate) fn scale_json(t: &Target, obj: &Object) -> Value {
    let v = obj.to_json();
    let m = obj.meta();
    let (spec, status, selector) = match &t.info.scale {
        Some(sc) => (
            at(&v, &sc.spec_replicas_path).as_i64().unwrap_or(0),
            at(&v, &sc.status_replicas_path).as_i64().unwrap_or(0),
            sc.label_selector_path
                .as_deref()
                .and_then(|p| at(&v, p).as_str())
                .unwrap_or("")
                .to_string(),
        ),
        None => {
            let selector =
                serde_json::from_value::<LabelSelector>(v["spec"]["selector"].clone()).ok();
            (
                v["spec"]["replicas"].as_i64().unwrap_or(0),
                v["status"]["replicas"].as_i64().unwrap_or(0),
                k8s_cluster::printers::label_selector_string(selector.as_ref()).unwrap_or_default(),
            )
        }
    };
    json!({
        "kind": "Scale", "apiVersion": "autoscaling/v1",
        "metadata": {"name": m.name, "namespace": m.namespace, "uid": m.uid,
            "resourceVersion": m.resource_version, "creationTimestamp": m.creation_timestamp},
        "spec": {"replicas": spec},
        "status": {"replicas": status, "selector": selector},
    })
}

/// `v` (the object's JSON) with its spec replicas set to `replicas`, creating the path's objects
/// that are missing (as upstream's `unstructured.SetNestedField`).
pub(crate) fn set_replicas(t: &Target, v: &mut Value, replicas: i64) {
    let path = t
        .info
        .scale
        .as_ref()
        .map_or(".spec.replicas", |s| s.spec_replicas_path.as_str());
    let ks = keys(path);
    let Some((last, parents)) = ks.split_last() else {
        return;
    };
    let mut cur = v;
    for k in parents {
        if !cur[*k].is_object() {
            cur[*k] = json!({});
        }
        cur = &mut cur[*k];
    }
    cur[*last] = json!(replicas);
}
