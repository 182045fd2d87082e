//! What the apiserver does to a custom resource's fields before validation, as
//! apiextensions-apiserver's codec does on every decode (`pkg/apiserver/schema/pruning/algorithm.go`
//! `Prune`, `pkg/apiserver/schema/defaulting/algorithm.go` `Default` and
//! `PruneNonNullableNullsWithoutDefaults`):
//!
//! 1. **Pruning**: a field the schema does not specify is dropped, unless a node on its way has
//!    `x-kubernetes-preserve-unknown-fields: true`; an `additionalProperties` schema covers every
//!    key of a map; `apiVersion`, `kind` and `metadata` are kept at the root (the object itself
//!    carries them) and in an `x-kubernetes-embedded-resource`.
//! 2. **Defaulting**: a property that is absent (or `null` where the schema is not nullable) gets
//!    a copy of its `default`, then the walk goes on into it, so defaults nested inside a defaulted
//!    value apply too.
//! 3. A `null` left in a non-nullable property without a default is dropped.

use serde_json::{Map, Value};

use k8s_types::apiextensions::JsonSchemaProps;

/// Drops the fields `schema` does not specify (upstream `Prune`; `root`: the object's top level,
/// whose `apiVersion`, `kind` and `metadata` stay).
pub fn prune(value: &mut Value, schema: &JsonSchemaProps, root: bool) {
    match value {
        Value::Object(map) => prune_object(map, schema, root || schema.x_embedded_resource),
        Value::Array(items) => {
            if let Some(item_schema) = &schema.items {
                for item in items {
                    prune(item, item_schema, false);
                }
            }
        }
        _ => {}
    }
}

fn prune_object(map: &mut Map<String, Value>, schema: &JsonSchemaProps, keep_type_meta: bool) {
    let preserve = schema.preserves_unknown_fields();
    let additional = schema.additional_schema();
    let additional_any = matches!(
        schema.additional_properties.as_deref(),
        Some(k8s_types::apiextensions::JsonSchemaPropsOrBool::Bool(true))
    );
    map.retain(|k, _| {
        (keep_type_meta && matches!(k.as_str(), "apiVersion" | "kind" | "metadata"))
            || schema.properties.contains_key(k)
            || additional.is_some()
            || additional_any
            || preserve
    });
    for (k, v) in map.iter_mut() {
        if keep_type_meta && k == "metadata" {
            continue;
        }
        if let Some(p) = schema.properties.get(k) {
            prune(v, p, false);
        } else if let Some(a) = additional {
            prune(v, a, false);
        }
    }
}

/// Applies the schema's defaults (upstream `Default`) and then drops the `null`s no default
/// replaced in non-nullable properties (`PruneNonNullableNullsWithoutDefaults`).
pub fn default(value: &mut Value, schema: &JsonSchemaProps) {
    match value {
        Value::Object(map) => {
            for (k, p) in &schema.properties {
                let Some(d) = &p.default else { continue };
                let missing = match map.get(k) {
                    None => true,
                    Some(Value::Null) => !p.nullable,
                    Some(_) => false,
                };
                if missing {
                    map.insert(k.clone(), d.clone());
                }
            }
            map.retain(|k, v| {
                !(v.is_null()
                    && schema
                        .properties
                        .get(k)
                        .or(schema.additional_schema())
                        .is_some_and(|p| !p.nullable && p.default.is_none()))
            });
            for (k, v) in map.iter_mut() {
                if let Some(p) = schema.properties.get(k) {
                    default(v, p);
                } else if let Some(a) = schema.additional_schema() {
                    default(v, a);
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = &schema.items {
                for item in items.iter_mut() {
                    if item.is_null() && !item_schema.nullable {
                        if let Some(d) = &item_schema.default {
                            *item = d.clone();
                        }
                    }
                    default(item, item_schema);
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema(v: Value) -> JsonSchemaProps {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn unknown_fields_are_pruned_unless_preserved() {
        let s = schema(json!({"type": "object", "properties": {
            "spec": {"type": "object", "properties": {
                "replicas": {"type": "integer"},
                "template": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                "specs": {"type": "object", "additionalProperties": {
                    "type": "object", "properties": {"replicas": {"type": "integer"}}}}
            }}
        }}));
        let mut v = json!({
            "apiVersion": "x.io/v1", "kind": "X", "metadata": {"name": "a", "extra": 1},
            "spec": {"replicas": 1, "typo": true,
                "template": {"anything": {"goes": 1}},
                "specs": {"Master": {"replicas": 1, "unknown": "x"}}},
            "other": 2
        });
        prune(&mut v, &s, true);
        assert_eq!(
            v,
            json!({
                "apiVersion": "x.io/v1", "kind": "X", "metadata": {"name": "a", "extra": 1},
                "spec": {"replicas": 1,
                    "template": {"anything": {"goes": 1}},
                    "specs": {"Master": {"replicas": 1}}}
            })
        );
    }

    /// Defaults fill absent and null fields, then the walk continues inside the filled value;
    /// a null without a default is dropped, a nullable null stays.
    #[test]
    fn defaults_apply_top_down() {
        let s = schema(json!({"type": "object", "properties": {
            "spec": {"type": "object", "default": {}, "properties": {
                "replicas": {"type": "integer", "default": 1},
                "restartPolicy": {"type": "string", "default": "OnFailure"},
                "image": {"type": "string"},
                "note": {"type": "string", "nullable": true},
                "ports": {"type": "array", "items": {"type": "object", "properties": {
                    "port": {"type": "integer", "default": 23456}}}}
            }}
        }}));
        let mut v = json!({});
        default(&mut v, &s);
        assert_eq!(
            v,
            json!({"spec": {"replicas": 1, "restartPolicy": "OnFailure"}})
        );
        let mut v = json!({"spec": {"replicas": null, "image": null, "note": null,
            "restartPolicy": "Never", "ports": [{}, {"port": 80}]}});
        default(&mut v, &s);
        assert_eq!(
            v,
            json!({"spec": {"replicas": 1, "note": null, "restartPolicy": "Never",
                "ports": [{"port": 23456}, {"port": 80}]}})
        );
    }
}
