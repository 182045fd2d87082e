//! Validation of a custom resource against its CRD's structural schema, with kube-openapi's
//! messages (`k8s.io/kube-openapi/pkg/validation/validate`: `type.go`, `object_validator.go`,
//! `slice_validator.go`, `values.go`; the texts of `pkg/validation/errors/schema.go`) turned into
//! field errors as apiextensions-apiserver does (`pkg/apiserver/validation/validation.go`
//! `kubeOpenAPIResultToFieldErrors`):
//!
//! - a wrong type: `TypeInvalid` (printed `Invalid value`), the value being the JSON type name of
//!   what was given: `spec.replicas: Invalid value: "string": spec.replicas in body must be of type
//!   integer: "string"`;
//! - a missing required field: `spec.x: Required value`;
//! - a value outside `enum`: `NotSupported`: `spec.p: Unsupported value: "Sometimes": supported
//!   values: "Always", "Never"`;
//! - a bound: `Invalid`: `spec.replicas: Invalid value: -1: spec.replicas in body should be
//!   greater than or equal to 0` (`less than or equal to`, `greater than`, `less than`).
//!
//! Paths are kube-openapi's: properties joined with `.`, items as `[i]`, map values by key
//! (`spec.pytorchReplicaSpecs.Master.replicas`). Errors come in a deterministic order: at each
//! object, the `required` list in its order, then the properties in key order (upstream walks a Go
//! map, in no fixed order). A value of the wrong type is not checked further.

use serde_json::Value;

use k8s_types::apiextensions::JsonSchemaProps;
use k8s_types::status::{FieldError, FieldErrorType};

use crate::validation::gofmt::quote;
use crate::validation::ErrorList;

/// The JSON type name kube-openapi gives a decoded value (`schemaInfoForType`).
fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_f64() => "number",
        Value::Number(_) => "integer",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Go's `%v` of a float64 bound or value: integral values without a fraction (`0`, `10`), others
/// in the shortest form (`1.5`).
pub fn go_float(f: f64) -> String {
    if f.fract() == 0.0 && f.abs() < 1e21 {
        format!("{}", f as i64)
    } else {
        format!("{f}")
    }
}

/// How `field.Error` prints a decoded JSON value: strings quoted, numbers and bools as they are.
fn go_value(v: &Value) -> String {
    match v {
        Value::String(s) => quote(s),
        Value::Number(n) => match n.as_f64() {
            Some(f) if n.is_f64() => go_float(f),
            _ => n.to_string(),
        },
        other => other.to_string(),
    }
}

/// Whether `v` has the schema's type (kube-openapi `typeValidator`: an integral float is an
/// integer, an integer is a number; `x-kubernetes-int-or-string` allows both).
fn type_matches(s: &JsonSchemaProps, v: &Value) -> Result<(), String> {
    let given = type_name(v);
    if s.x_int_or_string {
        return match v {
            Value::String(_) => Ok(()),
            Value::Number(n) if n.is_i64() || n.is_u64() => Ok(()),
            Value::Number(n) if n.as_f64().is_some_and(|f| f.fract() == 0.0) => Ok(()),
            _ => Err("integer,string".to_string()),
        };
    }
    let Some(want) = s.type_.as_deref().filter(|t| !t.is_empty()) else {
        return Ok(());
    };
    let ok = match (want, v) {
        (_, Value::Null) => s.nullable,
        ("integer", Value::Number(n)) => {
            !n.is_f64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
        }
        ("number", Value::Number(_)) => true,
        (w, _) => w == given,
    };
    if ok {
        Ok(())
    } else {
        Err(want.to_string())
    }
}

/// Validates `value` at `path` (empty for the root) against `schema`.
pub fn validate(value: &Value, schema: &JsonSchemaProps, path: &str, errs: &mut ErrorList) {
    if let Err(want) = type_matches(schema, value) {
        let given = type_name(value);
        errs.push(FieldError {
            type_: FieldErrorType::Invalid,
            field: path.to_string(),
            bad_value: Some(quote(given)),
            detail: format!("{path} in body must be of type {want}: {}", quote(given)),
        });
        return;
    }
    if value.is_null() {
        return;
    }
    if let Some(allowed) = &schema.enum_ {
        if !allowed.iter().any(|a| a == value) {
            let supported: Vec<String> = allowed
                .iter()
                .map(|a| match a {
                    Value::String(s) => quote(s),
                    other => quote(&other.to_string()),
                })
                .collect();
            errs.push(FieldError {
                type_: FieldErrorType::NotSupported,
                field: path.to_string(),
                bad_value: Some(go_value(value)),
                detail: format!("supported values: {}", supported.join(", ")),
            });
        }
    }
    if let Value::Number(n) = value {
        if let Some(f) = n.as_f64() {
            bounds(schema, f, value, path, errs);
        }
    }
    match value {
        Value::Object(map) => {
            for r in &schema.required {
                if !map.contains_key(r) {
                    errs.push(FieldError::required(child(path, r), ""));
                }
            }
            for (k, v) in map {
                if let Some(p) = schema.properties.get(k) {
                    validate(v, p, &child(path, k), errs);
                } else if let Some(a) = schema.additional_schema() {
                    validate(v, a, &child(path, k), errs);
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = &schema.items {
                for (i, item) in items.iter().enumerate() {
                    validate(item, item_schema, &format!("{path}[{i}]"), errs);
                }
            }
        }
        _ => {}
    }
}

/// `minimum` / `maximum` (kube-openapi `values.go` `MinimumNativeType`, `MaximumNativeType`).
fn bounds(s: &JsonSchemaProps, f: f64, value: &Value, path: &str, errs: &mut ErrorList) {
    if let Some(min) = s.minimum {
        let (bad, word) = if s.exclusive_minimum {
            (f <= min, "greater than")
        } else {
            (f < min, "greater than or equal to")
        };
        if bad {
            errs.push(FieldError::invalid(
                path,
                go_value(value),
                format!("{path} in body should be {word} {}", go_float(min)),
            ));
        }
    }
    if let Some(max) = s.maximum {
        let (bad, word) = if s.exclusive_maximum {
            (f >= max, "less than")
        } else {
            (f > max, "less than or equal to")
        };
        if bad {
            errs.push(FieldError::invalid(
                path,
                go_value(value),
                format!("{path} in body should be {word} {}", go_float(max)),
            ));
        }
    }
}

/// `path.name` (the root has no leading dot).
pub fn child(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_string()
    } else {
        format!("{path}.{name}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema(v: Value) -> JsonSchemaProps {
        serde_json::from_value(v).unwrap()
    }

    fn errors(value: Value, s: &JsonSchemaProps) -> Vec<String> {
        let mut errs = Vec::new();
        validate(&value, s, "", &mut errs);
        errs.iter().map(ToString::to_string).collect()
    }

    /// The messages of kube-openapi's `errors/schema.go` (typeFailWithData, requiredFail as
    /// `field.Required`, enumFail as `field.NotSupported`, minIncFail / maxExcFail as
    /// `field.Invalid`), on a CronTab-like schema written by hand.
    #[test]
    fn messages_are_apiextensions_apiservers() {
        let s = schema(json!({
            "type": "object",
            "properties": {"spec": {
                "type": "object",
                "required": ["image", "cronSpec"],
                "properties": {
                    "replicas": {"type": "integer", "minimum": 0, "maximum": 10, "exclusiveMaximum": true},
                    "policy": {"type": "string", "enum": ["Always", "Never"]},
                    "image": {"type": "string"},
                    "cronSpec": {"type": "string"},
                    "ratio": {"type": "number", "minimum": 0.5},
                    "ports": {"type": "array", "items": {"type": "integer"}},
                    "replicaSpecs": {"type": "object", "additionalProperties": {
                        "type": "object", "properties": {"replicas": {"type": "integer"}}}}
                }
            }}
        }));
        assert_eq!(
            errors(
                json!({"spec": {"replicas": "three", "image": "i", "cronSpec": "c"}}),
                &s
            ),
            vec![
                r#"spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string""#
            ]
        );
        assert_eq!(
            errors(json!({"spec": {"replicas": -1, "policy": "Sometimes"}}), &s),
            vec![
                "spec.image: Required value",
                "spec.cronSpec: Required value",
                r#"spec.policy: Unsupported value: "Sometimes": supported values: "Always", "Never""#,
                "spec.replicas: Invalid value: -1: spec.replicas in body should be greater than or equal to 0",
            ]
        );
        assert_eq!(
            errors(json!({"spec": {"image": "i", "cronSpec": "c", "replicas": 10, "ratio": 0.25,
                "ports": [80, "http"], "replicaSpecs": {"Master": {"replicas": 1.5}}}}), &s),
            vec![
                r#"spec.ports[1]: Invalid value: "string": spec.ports[1] in body must be of type integer: "string""#,
                "spec.ratio: Invalid value: 0.25: spec.ratio in body should be greater than or equal to 0.5",
                r#"spec.replicaSpecs.Master.replicas: Invalid value: "number": spec.replicaSpecs.Master.replicas in body must be of type integer: "number""#,
                "spec.replicas: Invalid value: 10: spec.replicas in body should be less than 10",
            ]
        );
        // An integral float is an integer; an integer is a number.
        assert!(errors(
            json!({"spec": {"image": "i", "cronSpec": "c", "replicas": 2.0, "ratio": 1}}),
            &s
        )
        .is_empty());
        // A whole object of the wrong type is one error.
        assert_eq!(
            errors(json!({"spec": [1]}), &s),
            vec![r#"spec: Invalid value: "array": spec in body must be of type object: "array""#]
        );
    }
}
