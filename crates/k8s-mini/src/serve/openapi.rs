//! The least of `/openapi/v3` that kubectl needs to trust the server with validation: the index
//! of group-versions, and for each a document whose PATCH operations name their kind
//! (`x-kubernetes-group-version-kind`) and take the `fieldValidation` query parameter (what
//! kubectl's `QueryParamVerifierV3` looks for before it sends `fieldValidation=Strict` instead of
//! validating against a downloaded schema). No schemas: kubectl then builds strategic merge patches
//! from its built-in types, as it does for a server without OpenAPI. `/openapi/v2` is not served.

use serde_json::{json, Map, Value};

use crate::serve::reply::{self, Reply};
use crate::serve::resources::{self, ResourceInfo};

fn prefix(group: &str, version: &str) -> String {
    if group.is_empty() {
        format!("api/{version}")
    } else {
        format!("apis/{group}/{version}")
    }
}

/// `GET /openapi/v3`: the group-version index.
pub(crate) fn index(all: &[ResourceInfo]) -> Reply {
    let mut paths = Map::new();
    paths.insert(
        "api/v1".into(),
        json!({"serverRelativeURL": "/openapi/v3/api/v1"}),
    );
    for (g, v) in resources::groups(all)
        .into_iter()
        .flat_map(|(g, vs)| vs.into_iter().map(move |v| (g.clone(), v)))
    {
        let p = prefix(&g, &v);
        paths.insert(
            p.clone(),
            json!({"serverRelativeURL": format!("/openapi/v3/{p}")}),
        );
    }
    Reply::json(200, &json!({"paths": paths}))
}

/// `GET /openapi/v3/<api/v1 | apis/g/v>`.
pub(crate) fn group_version(all: &[ResourceInfo], group: &str, version: &str) -> Reply {
    let rs: Vec<_> = all
        .iter()
        .filter(|r| r.group == group && r.version == version)
        .collect();
    if rs.is_empty() {
        return reply::not_found_path();
    }
    let mut paths = Map::new();
    for r in rs {
        let base = prefix(group, version);
        let path = if r.kind.namespaced() {
            format!("/{base}/namespaces/{{namespace}}/{}/{{name}}", r.plural)
        } else {
            format!("/{base}/{}/{{name}}", r.plural)
        };
        let op = json!({
            "x-kubernetes-group-version-kind": {"group": group, "version": version, "kind": r.kind.name()},
            "parameters": [{"name": "fieldValidation", "in": "query", "schema": {"type": "string", "uniqueItems": true}}],
            "responses": {"200": {"description": "OK"}},
        });
        paths.insert(path, json!({"patch": op}));
    }
    Reply::json(
        200,
        &json!({"openapi": "3.0.0", "info": {"title": "Kubernetes", "version": crate::serve::discovery::GIT_VERSION}, "paths": Value::Object(paths)}),
    )
}
