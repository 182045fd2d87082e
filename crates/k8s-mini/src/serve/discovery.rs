//! Discovery: `/version`, `/api`, `/api/v1`, `/apis`, `/apis/<group>`, `/apis/<group>/<version>`
//! (upstream `k8s.io/apiserver/pkg/endpoints/discovery`), and aggregated discovery (KEP-3352,
//! `apidiscovery.k8s.io/v2` `APIGroupDiscoveryList`, which kubectl v1.32 asks for first on `/api`
//! and `/apis`).

use serde_json::{json, Value};

use crate::serve::reply::{self, Reply};
use crate::serve::resources::{self, ResourceInfo};

/// The Kubernetes version `serve` reports (the release k8s-mini follows).
pub(crate) const GIT_VERSION: &str = "v1.32.0-k8s-mini";

/// The content type of an aggregated discovery answer.
const AGGREGATED: &str = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";

/// Whether the Accept header asks for `apidiscovery.k8s.io/v2` aggregated discovery.
pub(crate) fn wants_aggregated(accept: &str) -> bool {
    accept.split(',').any(|part| {
        let params: Vec<&str> = part.split(';').map(str::trim).collect();
        params.contains(&"g=apidiscovery.k8s.io")
            && params.contains(&"v=v2")
            && params.contains(&"as=APIGroupDiscoveryList")
    })
}

/// `GET /version` (upstream `version.Info`).
pub(crate) fn version() -> Reply {
    Reply::json(
        200,
        &json!({
            "major": "1", "minor": "32", "gitVersion": GIT_VERSION,
            "gitCommit": "", "gitTreeState": "clean", "buildDate": "1970-01-01T00:00:00Z",
            "goVersion": "", "compiler": "rustc", "platform": "linux/amd64",
        }),
    )
}

fn resource_entries(r: &ResourceInfo) -> Vec<Value> {
    let mut out = Vec::new();
    let mut main = json!({
        "name": r.plural, "singularName": r.singular, "namespaced": r.kind.namespaced(),
        "kind": r.kind.name(), "verbs": r.verbs(),
    });
    if !r.short_names.is_empty() {
        main["shortNames"] = json!(r.short_names);
    }
    if !r.categories.is_empty() {
        main["categories"] = json!(r.categories);
    }
    out.push(main);
    for s in &r.subresources {
        let mut e = json!({
            "name": format!("{}/{}", r.plural, s.name), "singularName": "",
            "namespaced": r.kind.namespaced(),
            "kind": if s.kind.is_empty() { r.kind.name() } else { s.kind },
            "verbs": s.verbs,
        });
        if !s.kind.is_empty() {
            e["group"] = json!(s.group);
            e["version"] = json!(s.version);
        }
        out.push(e);
    }
    out
}

/// `GET /api/v1`, `GET /apis/<group>/<version>`: the `APIResourceList`.
pub(crate) fn resource_list(all: &[ResourceInfo], group: &str, version: &str) -> Reply {
    let rs: Vec<&ResourceInfo> = all
        .iter()
        .filter(|r| r.group == group && r.version == version)
        .collect();
    if rs.is_empty() {
        return reply::not_found_path();
    }
    let gv = rs[0].group_version();
    let entries: Vec<Value> = rs.iter().flat_map(|r| resource_entries(r)).collect();
    Reply::json(
        200,
        &json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": entries}),
    )
}

fn group_json(name: &str, versions: &[String]) -> Value {
    let gvs: Vec<Value> = versions
        .iter()
        .map(|v| json!({"groupVersion": format!("{name}/{v}"), "version": v}))
        .collect();
    let preferred = gvs.first().cloned().unwrap_or(Value::Null);
    json!({"name": name, "versions": gvs, "preferredVersion": preferred})
}

/// `GET /api`: `APIVersions` (legacy) or the core group's aggregated discovery.
pub(crate) fn api(all: &[ResourceInfo], accept: &str, server_address: &str) -> Reply {
    if wants_aggregated(accept) {
        let core: Vec<ResourceInfo> = all.iter().filter(|r| r.group.is_empty()).cloned().collect();
        let item = json!({
            "metadata": {"creationTimestamp": null},
            "versions": [{"version": "v1", "resources": aggregated_resources(&core), "freshness": "Current"}],
        });
        return aggregated_list(vec![item]);
    }
    Reply::json(
        200,
        &json!({
            "kind": "APIVersions", "versions": ["v1"],
            "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}],
        }),
    )
}

/// `GET /apis`: `APIGroupList` (legacy) or every named group's aggregated discovery.
pub(crate) fn apis(all: &[ResourceInfo], accept: &str) -> Reply {
    if wants_aggregated(accept) {
        let items = resources::groups(all)
            .into_iter()
            .map(|(g, vs)| {
                let versions: Vec<Value> = vs
                    .iter()
                    .map(|v| {
                        let rs: Vec<ResourceInfo> = all
                            .iter()
                            .filter(|r| r.group == g && r.version == *v)
                            .cloned()
                            .collect();
                        json!({"version": v, "resources": aggregated_resources(&rs), "freshness": "Current"})
                    })
                    .collect();
                json!({"metadata": {"name": g, "creationTimestamp": null}, "versions": versions})
            })
            .collect();
        return aggregated_list(items);
    }
    let groups: Vec<Value> = resources::groups(all)
        .into_iter()
        .map(|(g, vs)| group_json(&g, &vs))
        .collect();
    Reply::json(
        200,
        &json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}),
    )
}

/// `GET /apis/<group>`: the `APIGroup`.
pub(crate) fn group(all: &[ResourceInfo], name: &str) -> Reply {
    match resources::groups(all).into_iter().find(|(g, _)| *g == name) {
        Some((g, vs)) => {
            let mut body = group_json(&g, &vs);
            body["kind"] = json!("APIGroup");
            body["apiVersion"] = json!("v1");
            Reply::json(200, &body)
        }
        None => reply::not_found_path(),
    }
}

fn aggregated_list(items: Vec<Value>) -> Reply {
    Reply::typed_json(
        200,
        AGGREGATED,
        &json!({"kind": "APIGroupDiscoveryList", "apiVersion": "apidiscovery.k8s.io/v2", "metadata": {}, "items": items}),
    )
}

fn aggregated_resources(rs: &[ResourceInfo]) -> Vec<Value> {
    rs.iter()
        .map(|r| {
            let scope = if r.kind.namespaced() {
                "Namespaced"
            } else {
                "Cluster"
            };
            let mut e = json!({
                "resource": r.plural,
                "responseKind": {"group": r.group, "version": r.version, "kind": r.kind.name()},
                "scope": scope, "singularResource": r.singular, "verbs": r.verbs(),
            });
            if !r.short_names.is_empty() {
                e["shortNames"] = json!(r.short_names);
            }
            if !r.categories.is_empty() {
                e["categories"] = json!(r.categories);
            }
            if !r.subresources.is_empty() {
                let subs: Vec<Value> = r
                    .subresources
                    .iter()
                    .map(|s| {
                        let (g, v, k) = if s.kind.is_empty() {
                            (r.group.as_str(), r.version.as_str(), r.kind.name())
                        } else {
                            (s.group, s.version, s.kind)
                        };
                        json!({"subresource": s.name, "responseKind": {"group": g, "version": v, "kind": k}, "verbs": s.verbs})
                    })
                    .collect();
                e["subresources"] = json!(subs);
            }
            e
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(r: &Reply) -> Value {
        serde_json::from_slice(&r.body).unwrap()
    }

    #[test]
    fn kubectl_v1_32_accept_header_gets_aggregated_discovery() {
        let accept = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json";
        assert!(wants_aggregated(accept));
        assert!(!wants_aggregated("application/json, */*"));
        let r = apis(&resources::all(), accept);
        assert_eq!(r.content_type, AGGREGATED);
        let v = body(&r);
        assert_eq!(v["items"][0]["metadata"]["name"], "apps");
        // apps/v1 as upstream lists it: controllerrevisions, daemonsets, deployments, ...
        let resources = &v["items"][0]["versions"][0]["resources"];
        assert_eq!(resources[0]["resource"], "controllerrevisions");
        let deploy = &resources[2];
        assert_eq!(deploy["resource"], "deployments");
        assert_eq!(deploy["shortNames"], json!(["deploy"]));
        assert_eq!(deploy["subresources"][0]["responseKind"]["kind"], "Scale");
    }

    #[test]
    fn pods_list_the_policy_v1_eviction_subresource() {
        let all = resources::all();
        let v = body(&resource_list(&all, "", "v1"));
        let eviction = v["resources"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["name"] == "pods/eviction")
            .unwrap();
        assert_eq!(eviction["group"], "policy");
        assert_eq!(eviction["version"], "v1");
        assert_eq!(eviction["kind"], "Eviction");
        assert_eq!(resource_list(&all, "nope", "v1").code, 404);
    }
}
