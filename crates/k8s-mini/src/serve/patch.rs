//! The three patch types of a `PATCH` (upstream `k8s.io/apiserver/pkg/endpoints/handlers/patch.go`):
//! JSON merge patch (RFC 7386), JSON patch (RFC 6902) and strategic merge patch
//! (`k8s.io/apimachinery/pkg/util/strategicpatch`) for the built-in kinds k8s-mini types.

use serde_json::{Map, Value};

/// RFC 7386: a map merges key by key (`null` removes), anything else replaces.
pub(crate) fn merge_patch(target: &mut Value, patch: &Value) {
    let Value::Object(p) = patch else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = Value::Object(Map::new());
    }
    if let Value::Object(t) = target {
        for (k, v) in p {
            if v.is_null() {
                t.remove(k);
            } else {
                merge_patch(t.entry(k.clone()).or_insert(Value::Null), v);
            }
        }
    }
}

/// RFC 6901 pointer tokens (`~1` is `/`, `~0` is `~`).
fn tokens(pointer: &str) -> Result<Vec<String>, String> {
    if pointer.is_empty() {
        return Ok(Vec::new());
    }
    let rest = pointer
        .strip_prefix('/')
        .ok_or_else(|| format!("invalid JSON pointer {pointer:?}"))?;
    Ok(rest
        .split('/')
        .map(|t| t.replace("~1", "/").replace("~0", "~"))
        .collect())
}

fn index(token: &str, len: usize, allow_end: bool) -> Result<usize, String> {
    if allow_end && token == "-" {
        return Ok(len);
    }
    let i: usize = token
        .parse()
        .map_err(|_| format!("invalid array index {token:?}"))?;
    if i > len || (!allow_end && i == len) {
        return Err(format!("array index {i} out of bounds"));
    }
    Ok(i)
}

fn parent<'a>(doc: &'a mut Value, toks: &[String]) -> Result<&'a mut Value, String> {
    let mut cur = doc;
    for t in toks {
        cur = match cur {
            Value::Object(m) => m
                .get_mut(t)
                .ok_or_else(|| format!("path element {t:?} not found"))?,
            Value::Array(a) => {
                let i = index(t, a.len(), false)?;
                &mut a[i]
            }
            _ => return Err(format!("path element {t:?} is not in an object or array")),
        };
    }
    Ok(cur)
}

fn get(doc: &Value, pointer: &str) -> Result<Value, String> {
    doc.pointer(pointer)
        .cloned()
        .ok_or_else(|| format!("path {pointer:?} not found"))
}

fn add(doc: &mut Value, pointer: &str, value: Value) -> Result<(), String> {
    let toks = tokens(pointer)?;
    let Some((last, init)) = toks.split_last() else {
        *doc = value;
        return Ok(());
    };
    match parent(doc, init)? {
        Value::Object(m) => {
            m.insert(last.clone(), value);
        }
        Value::Array(a) => {
            let i = index(last, a.len(), true)?;
            a.insert(i, value);
        }
        _ => return Err(format!("cannot add at {pointer:?}")),
    }
    Ok(())
}

fn remove(doc: &mut Value, pointer: &str) -> Result<Value, String> {
    let toks = tokens(pointer)?;
    let (last, init) = toks
        .split_last()
        .ok_or_else(|| "cannot remove the whole document".to_string())?;
    match parent(doc, init)? {
        Value::Object(m) => m
            .remove(last)
            .ok_or_else(|| format!("path {pointer:?} not found")),
        Value::Array(a) => {
            let i = index(last, a.len(), false)?;
            Ok(a.remove(i))
        }
        _ => Err(format!("cannot remove at {pointer:?}")),
    }
}

/// RFC 6902 JSON patch: `add`, `remove`, `replace`, `move`, `copy`, `test`, applied in order; the
/// first failing operation fails the whole patch (the document is left as it was).
pub(crate) fn json_patch(doc: &mut Value, patch: &Value) -> Result<(), String> {
    let ops = patch
        .as_array()
        .ok_or_else(|| "a JSON patch is an array of operations".to_string())?;
    let mut work = doc.clone();
    for op in ops {
        let field = |k: &str| -> Result<&str, String> {
            op.get(k)
                .and_then(Value::as_str)
                .ok_or_else(|| format!("operation {op} has no {k:?}"))
        };
        let path = field("path")?;
        match field("op")? {
            "add" => add(
                &mut work,
                path,
                op.get("value").cloned().unwrap_or(Value::Null),
            )?,
            "remove" => {
                remove(&mut work, path)?;
            }
            "replace" => {
                remove(&mut work, path)?;
                add(
                    &mut work,
                    path,
                    op.get("value").cloned().unwrap_or(Value::Null),
                )?;
            }
            "move" => {
                let v = remove(&mut work, field("from")?)?;
                add(&mut work, path, v)?;
            }
            "copy" => {
                let v = get(&work, field("from")?)?;
                add(&mut work, path, v)?;
            }
            "test" => {
                let want = op.get("value").cloned().unwrap_or(Value::Null);
                if get(&work, path)? != want {
                    return Err(format!("testing value {path} failed"));
                }
            }
            other => return Err(format!("unexpected kind of operation {other:?}")),
        }
    }
    *doc = work;
    Ok(())
}

/// The merge key of a list field of the built-in kinds (the `patchMergeKey` tags of `k8s.io/api`),
/// `None` for lists that a patch replaces whole. `ports` is keyed by `containerPort` in a
/// container and by `port` in a Service, told apart by the elements.
fn merge_key(field: &str, sample: Option<&Value>) -> Option<&'static str> {
    Some(match field {
        "containers"
        | "initContainers"
        | "ephemeralContainers"
        | "env"
        | "volumes"
        | "imagePullSecrets"
        | "resourceClaims" => "name",
        "volumeMounts" => "mountPath",
        "volumeDevices" => "devicePath",
        "conditions" => "type",
        "ownerReferences" => "uid",
        "hostAliases" => "ip",
        "topologySpreadConstraints" => "topologyKey",
        "addresses" => "type",
        "ports" => {
            if sample.is_some_and(|v| v.get("containerPort").is_some()) {
                "containerPort"
            } else {
                "port"
            }
        }
        _ => return None,
    })
}

/// Lists of scalars merged as sets (`patchStrategy:"merge"` on a `[]string`).
fn is_primitive_set(field: &str) -> bool {
    field == "finalizers"
}

/// Strategic merge patch for the built-in kinds: maps merge (`null` deletes), lists with a merge key
/// merge element by element (`$patch: delete` removes one, `$patch: replace` a whole list or map),
/// `finalizers` merge as a set, other lists replace; `$retainKeys` keeps only the listed keys,
/// `$deleteFromPrimitiveList/<field>` removes values, `$setElementOrder/<field>` is accepted and
/// the merged order kept (upstream reorders by it; see docs/serve.md).
pub(crate) fn strategic_merge_patch(target: &mut Value, patch: &Value) -> Result<(), String> {
    let Value::Object(p) = patch else {
        *target = patch.clone();
        return Ok(());
    };
    if p.get("$patch").and_then(Value::as_str) == Some("replace") {
        let mut replaced = p.clone();
        replaced.remove("$patch");
        *target = Value::Object(replaced);
        return Ok(());
    }
    if !target.is_object() {
        *target = Value::Object(Map::new());
    }
    let Value::Object(t) = target else {
        return Ok(());
    };
    for (k, v) in p {
        if k == "$patch" || k == "$retainKeys" || k.starts_with("$setElementOrder/") {
            continue;
        }
        if let Some(field) = k.strip_prefix("$deleteFromPrimitiveList/") {
            if let (Some(Value::Array(list)), Some(del)) = (t.get_mut(field), v.as_array()) {
                list.retain(|x| !del.contains(x));
            }
            continue;
        }
        if v.is_null() {
            t.remove(k);
            continue;
        }
        match v {
            Value::Object(_) => {
                strategic_merge_patch(t.entry(k.clone()).or_insert(Value::Null), v)?;
            }
            Value::Array(items) => {
                let slot = t.entry(k.clone()).or_insert(Value::Array(Vec::new()));
                merge_list(k, slot, items)?;
            }
            _ => {
                t.insert(k.clone(), v.clone());
            }
        }
    }
    if let Some(Value::Array(keep)) = p.get("$retainKeys") {
        let keep: Vec<&str> = keep.iter().filter_map(Value::as_str).collect();
        t.retain(|k, _| keep.contains(&k.as_str()));
    }
    Ok(())
}

fn merge_list(field: &str, slot: &mut Value, items: &[Value]) -> Result<(), String> {
    if items
        .iter()
        .any(|i| i.get("$patch").and_then(Value::as_str) == Some("replace"))
    {
        *slot = Value::Array(
            items
                .iter()
                .filter(|i| i.get("$patch").is_none())
                .cloned()
                .collect(),
        );
        return Ok(());
    }
    if !slot.is_array() {
        *slot = Value::Array(Vec::new());
    }
    let Value::Array(current) = slot else {
        return Ok(());
    };
    if is_primitive_set(field) {
        for i in items {
            if !current.contains(i) {
                current.push(i.clone());
            }
        }
        return Ok(());
    }
    let Some(key) = merge_key(field, items.first().or(current.first())) else {
        *current = items.to_vec();
        return Ok(());
    };
    for item in items {
        let id = item
            .get(key)
            .ok_or_else(|| format!("map: {item} does not contain declared merge key: {key}"))?;
        let pos = current.iter().position(|c| c.get(key) == Some(id));
        let delete = item.get("$patch").and_then(Value::as_str) == Some("delete");
        match (pos, delete) {
            (Some(i), true) => {
                current.remove(i);
            }
            (None, true) => {}
            (Some(i), false) => strategic_merge_patch(&mut current[i], item)?,
            (None, false) => {
                let mut fresh = Value::Null;
                strategic_merge_patch(&mut fresh, item)?;
                current.push(fresh);
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn kubectl_set_image_patch_changes_one_container_by_name() {
        // What `kubectl set image deployment/web app=app:v2` sends.
        let mut d = json!({"spec": {"template": {"spec": {"containers": [
            {"name": "app", "image": "app:v1", "ports": [{"containerPort": 80}]},
            {"name": "side", "image": "side:v1"}
        ]}}}});
        let p = json!({"spec": {"template": {"spec": {"containers": [{"image": "app:v2", "name": "app"}]}}}});
        strategic_merge_patch(&mut d, &p).unwrap();
        assert_eq!(
            d["spec"]["template"]["spec"]["containers"],
            json!([
                {"name": "app", "image": "app:v2", "ports": [{"containerPort": 80}]},
                {"name": "side", "image": "side:v1"}
            ])
        );
    }

    #[test]
    fn strategic_directives_delete_replace_retain_and_primitive_sets() {
        let mut d = json!({"metadata": {"finalizers": ["a"]}, "spec": {"containers": [
            {"name": "a", "image": "x"}, {"name": "b", "image": "y"}],
            "tolerations": [{"key": "k"}],
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}}});
        let p = json!({"metadata": {"finalizers": ["b", "a"]}, "spec": {
            "containers": [{"name": "a", "$patch": "delete"}],
            "tolerations": [{"key": "z"}],
            "strategy": {"$retainKeys": ["type"], "type": "Recreate"}}});
        strategic_merge_patch(&mut d, &p).unwrap();
        assert_eq!(d["metadata"]["finalizers"], json!(["a", "b"]));
        assert_eq!(
            d["spec"]["containers"],
            json!([{"name": "b", "image": "y"}])
        );
        assert_eq!(d["spec"]["tolerations"], json!([{"key": "z"}]));
        assert_eq!(d["spec"]["strategy"], json!({"type": "Recreate"}));
        let missing_key = json!({"spec": {"containers": [{"image": "q"}]}});
        assert_eq!(
            strategic_merge_patch(&mut d, &missing_key).unwrap_err(),
            "map: {\"image\":\"q\"} does not contain declared merge key: name"
        );
    }

    #[test]
    fn json_patch_as_kubectl_rollout_undo_sends_it() {
        let mut d = json!({"metadata": {"annotations": {"a": "1"}}, "spec": {"template": {"x": 1}, "list": [1, 2]}});
        let p = json!([
            {"op": "replace", "path": "/spec/template", "value": {"x": 2}},
            {"op": "replace", "path": "/metadata/annotations", "value": {"b": "2"}},
            {"op": "add", "path": "/spec/list/-", "value": 3},
            {"op": "move", "from": "/spec/list/0", "path": "/spec/first"},
            {"op": "test", "path": "/spec/first", "value": 1}
        ]);
        json_patch(&mut d, &p).unwrap();
        assert_eq!(
            d,
            json!({"metadata": {"annotations": {"b": "2"}}, "spec": {"template": {"x": 2}, "list": [2, 3], "first": 1}})
        );
        let before = d.clone();
        let bad = json!([{"op": "replace", "path": "/spec/x~1y", "value": 1}]);
        assert!(json_patch(&mut d, &bad).is_err());
        assert_eq!(d, before, "a failed patch changes nothing");
    }

    #[test]
    fn merge_patch_null_removes() {
        let mut d = json!({"a": {"b": 1, "c": 2}, "l": [1]});
        merge_patch(&mut d, &json!({"a": {"b": null}, "l": [2]}));
        assert_eq!(d, json!({"a": {"c": 2}, "l": [2]}));
    }
}
