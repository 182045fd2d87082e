//! apiextensions-apiserver, the part of kube-apiserver that serves CustomResourceDefinitions and
//! their custom resources (upstream `staging/src/k8s.io/apiextensions-apiserver`):
//!
//! - a CRD (`apiextensions.k8s.io/v1`, stored untyped) is defaulted, validated and given the
//!   status of an established CRD ([`crd`]);
//! - a custom resource of a served group/version/kind is resolved to its CRD
//!   ([`resolve`]): its scope comes from the CRD, its fields are pruned and defaulted from the
//!   version's structural schema ([`structural`]) before admission, and it is validated against
//!   that schema ([`schema`]) with its metadata (`NameIsDNSSubdomain`, upstream
//!   `customresource/strategy.go` `Validate`); `metadata.generation` starts at 1 and grows when
//!   anything but metadata and status changes (`PrepareForUpdate`);
//! - an object of an API group some CRD defines, but of a kind or version none serves, is
//!   refused with upstream's 404 (`the server could not find the requested resource`).
//!
//! Objects of groups no CRD defines are kept untyped as before (built-in kinds k8s-mini does not
//! simulate); the manifest loader is what refuses a custom resource without its CRD.

pub mod crd;
pub mod schema;
pub mod structural;

use serde_json::Value;

use k8s_types::apiextensions::{
    crd_kind, CustomResourceDefinition, CustomResourceDefinitionVersion, JsonSchemaProps,
};
use k8s_types::object::Unstructured;
use k8s_types::status::{Status, StatusReason};
use k8s_types::store::ObjectStore;
use k8s_types::Object;

use crate::validation::meta::validate_object_meta;
use crate::validation::names::name_is_dns_subdomain;
use crate::validation::ErrorList;

/// What serves an untyped object.
pub enum Served {
    /// Not a custom resource of a CRD's group (a built-in kind kept untyped, or a CRD itself).
    NotCustom,
    /// A custom resource: its CRD and the root schema of its version (if the CRD has one).
    Custom(Box<CustomResourceDefinition>, Option<Box<JsonSchemaProps>>),
}

/// The CRDs in the store, in name order (CRDs that do not decode are skipped).
pub fn crds(store: &dyn ObjectStore) -> Vec<CustomResourceDefinition> {
    store
        .list(&crd_kind().key_prefix())
        .into_iter()
        .filter_map(|o| CustomResourceDefinition::from_object(o)?.ok())
        .collect()
}

/// Upstream's answer for a path no API serves.
pub fn no_such_resource() -> Status {
    Status {
        reason: StatusReason::NotFound,
        code: 404,
        message: "the server could not find the requested resource".to_string(),
        causes: Vec::new(),
    }
}

/// Resolves an untyped object to the CRD serving its apiVersion and kind.
///
/// # Errors
/// [`no_such_resource`] when a CRD defines the object's group but none serves its version and
/// kind.
pub fn resolve(store: &dyn ObjectStore, u: &Unstructured) -> Result<Served, Status> {
    let Some((group, _)) = u.api_version.rsplit_once('/') else {
        return Ok(Served::NotCustom);
    };
    if u.api_version == k8s_types::apiextensions::API_VERSION {
        return Ok(Served::NotCustom);
    }
    let all = crds(store);
    if !all.iter().any(|c| c.spec.group == group) {
        return Ok(Served::NotCustom);
    }
    let found = all.into_iter().find_map(|c| {
        let v = c.served(&u.api_version, &u.kind)?;
        let schema = v
            .schema
            .as_ref()
            .and_then(|s| s.open_apiv3_schema.clone())
            .map(Box::new);
        Some((c.clone(), schema))
    });
    match found {
        Some((c, schema)) => Ok(Served::Custom(Box::new(c), schema)),
        None => Err(no_such_resource()),
    }
}

/// The object's fields other than metadata, as one JSON object (what the schema describes).
fn body(u: &Unstructured) -> Value {
    Value::Object(u.rest.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
}

fn set_body(u: &mut Unstructured, v: Value) {
    if let Value::Object(map) = v {
        u.rest = map.into_iter().collect();
    }
}

/// Decoding a custom resource (upstream's CR codec): its scope from the CRD, then pruning and
/// defaulting by its version's schema. Returns the schema to validate with.
///
/// # Errors
/// [`no_such_resource`] (see [`resolve`]).
pub fn decode_custom_resource(
    store: &dyn ObjectStore,
    obj: &mut Object,
) -> Result<Option<Box<JsonSchemaProps>>, Status> {
    let Object::Other(u, namespaced) = obj else {
        return Ok(None);
    };
    if CustomResourceDefinition::from_unstructured(u).is_some() {
        crd::default_crd(u);
        return Ok(None);
    }
    let Served::Custom(crd, schema) = resolve(store, u)? else {
        return Ok(None);
    };
    *namespaced = crd.namespaced();
    if !*namespaced {
        u.metadata.namespace = None;
    }
    if let Some(s) = &schema {
        let mut v = body(u);
        structural::prune(&mut v, s, true);
        structural::default(&mut v, s);
        set_body(u, v);
    }
    Ok(Some(schema.unwrap_or_default()))
}

/// Validation of a custom resource (upstream `customResourceStrategy.Validate`): metadata with
/// `NameIsDNSSubdomain`, then the schema.
pub fn validate_custom_resource(
    u: &Unstructured,
    namespaced: bool,
    s: &JsonSchemaProps,
) -> ErrorList {
    let mut errs = validate_object_meta(&u.metadata, namespaced, name_is_dns_subdomain, "metadata");
    let mut v = body(u);
    if let Value::Object(map) = &mut v {
        map.insert("apiVersion".into(), Value::String(u.api_version.clone()));
        map.insert("kind".into(), Value::String(u.kind.clone()));
        map.insert(
            "metadata".into(),
            serde_json::to_value(&u.metadata).unwrap_or(Value::Null),
        );
    }
    schema::validate(&v, s, "", &mut errs);
    errs
}

/// Whether the CRD serving `u` gives its version the `status` subresource. Upstream's custom
/// resource strategy then drops `status` on create (`PrepareForCreate`) and keeps the stored
/// `status` on an update of the main resource (`PrepareForUpdate`); only `/status` writes it.
pub fn has_status_subresource(store: &dyn ObjectStore, u: &Unstructured) -> bool {
    crds(store).iter().any(|c| {
        c.served(&u.api_version, &u.kind)
            .is_some_and(CustomResourceDefinitionVersion::has_status_subresource)
    })
}

/// `metadata.generation` of a custom resource on update (upstream `customResourceStrategy.
/// PrepareForUpdate`): one more when anything but metadata and status changed.
pub fn next_generation(new: &Unstructured, old: &Unstructured) -> Option<i64> {
    let strip = |u: &Unstructured| {
        let mut r = u.rest.clone();
        r.remove("status");
        r
    };
    let g = old.metadata.generation.unwrap_or(1);
    Some(if strip(new) != strip(old) { g + 1 } else { g })
}
