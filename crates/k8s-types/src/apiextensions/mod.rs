//! `apiextensions.k8s.io/v1` CustomResourceDefinition (upstream
//! `staging/src/k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1/types.go` and
//! `types_jsonschema.go`): the part of the type the apiserver reads to serve, prune, default and
//! validate custom resources.
//!
//! A CRD is stored as an untyped object ([`crate::object::Object::Other`], cluster-scoped, key
//! `/registry/apiextensions.k8s.io/customresourcedefinitions/<name>` as upstream's etcd layout):
//! [`CustomResourceDefinition::from_unstructured`] reads this typed view of it when needed.
//! Fields k8s-mini does not act on (conversion, subresources, printer columns, CEL rules) are
//! accepted and kept in the stored object, not in this view.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::meta::ObjectMeta;
use crate::object::{Kind, Object, Unstructured};

/// `apiextensions.k8s.io/v1`.
pub const API_VERSION: &str = "apiextensions.k8s.io/v1";
/// `CustomResourceDefinition`.
pub const KIND: &str = "CustomResourceDefinition";

/// The [`Kind`] CRDs are stored as (cluster-scoped).
pub fn crd_kind() -> Kind {
    Kind::Other {
        api_version: API_VERSION.to_string(),
        kind: KIND.to_string(),
        namespaced: false,
    }
}

/// Upstream `CustomResourceDefinition` (the fields the apiserver acts on).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CustomResourceDefinition {
    /// Metadata; the name must be `<spec.names.plural>.<spec.group>`.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// The spec.
    #[serde(default)]
    pub spec: CustomResourceDefinitionSpec,
}

/// Upstream `CustomResourceDefinitionSpec`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CustomResourceDefinitionSpec {
    /// API group, e.g. `kubeflow.org`.
    #[serde(default)]
    pub group: String,
    /// Names.
    #[serde(default)]
    pub names: CustomResourceDefinitionNames,
    /// `Namespaced` or `Cluster`.
    #[serde(default)]
    pub scope: String,
    /// Versions served.
    #[serde(default)]
    pub versions: Vec<CustomResourceDefinitionVersion>,
}

/// Upstream `CustomResourceDefinitionNames`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CustomResourceDefinitionNames {
    /// Plural resource name, e.g. `pytorchjobs`.
    #[serde(default)]
    pub plural: String,
    /// Singular name.
    #[serde(default)]
    pub singular: String,
    /// Kind, e.g. `PyTorchJob`.
    #[serde(default)]
    pub kind: String,
    /// List kind (defaults to `<kind>List`).
    #[serde(default)]
    pub list_kind: String,
    /// Short names.
    #[serde(default)]
    pub short_names: Vec<String>,
}

/// Upstream `CustomResourceDefinitionVersion`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CustomResourceDefinitionVersion {
    /// Version name, e.g. `v1`.
    #[serde(default)]
    pub name: String,
    /// Whether the version is served by the REST API.
    #[serde(default)]
    pub served: bool,
    /// Whether objects are stored in this version (exactly one version is).
    #[serde(default)]
    pub storage: bool,
    /// The validation schema.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<CustomResourceValidation>,
    /// Subresources (`status`, `scale`), kept as given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subresources: Option<serde_json::Value>,
}

/// Upstream `CustomResourceSubresourceScale`: where the replicas and the selector live in a custom
/// resource (JSON paths like `.spec.replicas`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ScaleSubresource {
    /// `specReplicasPath`.
    pub spec_replicas_path: String,
    /// `statusReplicasPath`.
    pub status_replicas_path: String,
    /// `labelSelectorPath` (optional).
    pub label_selector_path: Option<String>,
}

impl CustomResourceDefinitionVersion {
    /// Whether the version has the `status` subresource (`subresources.status: {}`).
    pub fn has_status_subresource(&self) -> bool {
        self.subresources
            .as_ref()
            .is_some_and(|s| s.get("status").is_some_and(|v| !v.is_null()))
    }

    /// The version's `scale` subresource, if it declares one with its two replica paths.
    pub fn scale_subresource(&self) -> Option<ScaleSubresource> {
        let scale = self.subresources.as_ref()?.get("scale")?;
        let path = |k: &str| scale.get(k).and_then(|v| v.as_str()).map(str::to_string);
        Some(ScaleSubresource {
            spec_replicas_path: path("specReplicasPath")?,
            status_replicas_path: path("statusReplicasPath")?,
            label_selector_path: path("labelSelectorPath"),
        })
    }
}

/// Upstream `CustomResourceValidation`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CustomResourceValidation {
    /// The structural OpenAPI v3 schema of the whole object.
    #[serde(rename = "openAPIV3Schema", default)]
    pub open_apiv3_schema: Option<JsonSchemaProps>,
}

/// Upstream `JSONSchemaProps`: the keywords of a structural schema that k8s-mini applies (type,
/// properties, required, enum, minimum/maximum with their exclusive flags, items,
/// additionalProperties, default, nullable, `x-kubernetes-preserve-unknown-fields`,
/// `x-kubernetes-int-or-string`, `x-kubernetes-embedded-resource`). Other keywords (pattern,
/// format, length and item counts, oneOf/anyOf, CEL rules, ...) are accepted and not applied
/// (docs/fidelity.md).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct JsonSchemaProps {
    /// `object`, `array`, `string`, `integer`, `number`, `boolean`.
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub type_: Option<String>,
    /// The fields of an object.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub properties: BTreeMap<String, JsonSchemaProps>,
    /// The fields an object must have.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub required: Vec<String>,
    /// The allowed values.
    #[serde(rename = "enum", default, skip_serializing_if = "Option::is_none")]
    pub enum_: Option<Vec<serde_json::Value>>,
    /// Inclusive (or, with `exclusiveMinimum`, exclusive) lower bound.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub minimum: Option<f64>,
    /// Inclusive (or, with `exclusiveMaximum`, exclusive) upper bound.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub maximum: Option<f64>,
    /// Whether `minimum` is exclusive.
    #[serde(default)]
    pub exclusive_minimum: bool,
    /// Whether `maximum` is exclusive.
    #[serde(default)]
    pub exclusive_maximum: bool,
    /// The schema of an array's items.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub items: Option<Box<JsonSchemaProps>>,
    /// The schema of a map's values (an object without `properties`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub additional_properties: Option<Box<JsonSchemaPropsOrBool>>,
    /// The value the apiserver sets when the field is absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<serde_json::Value>,
    /// Whether `null` is a valid value.
    #[serde(default)]
    pub nullable: bool,
    /// Keeps fields the schema does not name (no pruning below this node).
    #[serde(
        rename = "x-kubernetes-preserve-unknown-fields",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub x_preserve_unknown_fields: Option<bool>,
    /// An integer or a string.
    #[serde(rename = "x-kubernetes-int-or-string", default)]
    pub x_int_or_string: bool,
    /// An embedded object (apiVersion, kind, metadata kept).
    #[serde(rename = "x-kubernetes-embedded-resource", default)]
    pub x_embedded_resource: bool,
}

/// Upstream `JSONSchemaPropsOrBool` (for `additionalProperties`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum JsonSchemaPropsOrBool {
    /// `true` (anything) or `false` (nothing).
    Bool(bool),
    /// A schema for every value.
    Schema(JsonSchemaProps),
}

impl JsonSchemaProps {
    /// Whether unknown fields are kept below this node.
    pub fn preserves_unknown_fields(&self) -> bool {
        self.x_preserve_unknown_fields == Some(true)
    }

    /// The schema of a map's values, when `additionalProperties` is a schema.
    pub fn additional_schema(&self) -> Option<&JsonSchemaProps> {
        match self.additional_properties.as_deref() {
            Some(JsonSchemaPropsOrBool::Schema(s)) => Some(s),
            _ => None,
        }
    }
}

impl CustomResourceDefinition {
    /// Reads a stored CRD; `None` for any other object, `Some(Err)` for a CRD whose spec does not
    /// decode (message of the decoder).
    pub fn from_object(obj: &Object) -> Option<Result<CustomResourceDefinition, String>> {
        match obj {
            Object::Other(u, _) => CustomResourceDefinition::from_unstructured(u),
            _ => None,
        }
    }

    /// [`CustomResourceDefinition::from_object`] of an untyped object.
    pub fn from_unstructured(u: &Unstructured) -> Option<Result<CustomResourceDefinition, String>> {
        if u.api_version != API_VERSION || u.kind != KIND {
            return None;
        }
        let spec = u.rest.get("spec").cloned().unwrap_or_default();
        let spec = if spec.is_null() {
            Ok(CustomResourceDefinitionSpec::default())
        } else {
            serde_json::from_value(spec).map_err(|e| e.to_string())
        };
        Some(spec.map(|spec| CustomResourceDefinition {
            metadata: u.metadata.clone(),
            spec,
        }))
    }

    /// Whether its custom resources live in namespaces (`scope: Namespaced`).
    pub fn namespaced(&self) -> bool {
        self.spec.scope != "Cluster"
    }

    /// The served version named by `api_version` (`<group>/<version>`) for `kind`, if this CRD
    /// defines it.
    pub fn served(
        &self,
        api_version: &str,
        kind: &str,
    ) -> Option<&CustomResourceDefinitionVersion> {
        let (group, version) = api_version.rsplit_once('/')?;
        if group != self.spec.group || kind != self.spec.names.kind {
            return None;
        }
        self.spec
            .versions
            .iter()
            .find(|v| v.name == version && v.served)
    }

    /// The [`Kind`] its custom resources of `version` are stored as.
    pub fn resource_kind(&self, version: &str) -> Kind {
        Kind::Other {
            api_version: format!("{}/{version}", self.spec.group),
            kind: self.spec.names.kind.clone(),
            namespaced: self.namespaced(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_crd_from_its_stored_form() {
        let u: Unstructured = serde_json::from_value(serde_json::json!({
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": "crontabs.stable.example.com"},
            "spec": {
                "group": "stable.example.com",
                "scope": "Namespaced",
                "names": {"plural": "crontabs", "kind": "CronTab"},
                "versions": [{"name": "v1", "served": true, "storage": true, "schema": {
                    "openAPIV3Schema": {"type": "object", "properties": {"spec": {
                        "type": "object",
                        "properties": {"replicas": {"type": "integer", "minimum": 0, "default": 1}},
                        "x-kubernetes-preserve-unknown-fields": true
                    }}}
                }}]
            }
        }))
        .unwrap();
        let crd = CustomResourceDefinition::from_unstructured(&u)
            .unwrap()
            .unwrap();
        assert!(crd.namespaced());
        let v = crd.served("stable.example.com/v1", "CronTab").unwrap();
        let root = v
            .schema
            .as_ref()
            .unwrap()
            .open_apiv3_schema
            .as_ref()
            .unwrap();
        let spec = &root.properties["spec"];
        assert!(spec.preserves_unknown_fields());
        assert_eq!(spec.properties["replicas"].minimum, Some(0.0));
        assert_eq!(
            spec.properties["replicas"].default,
            Some(serde_json::json!(1))
        );
        assert!(crd.served("stable.example.com/v2", "CronTab").is_none());
        assert!(crd.served("other.example.com/v1", "CronTab").is_none());
        assert_eq!(
            crd.resource_kind("v1").key("default", "a"),
            "/registry/stable.example.com/crontabs/default/a"
        );
    }
}
