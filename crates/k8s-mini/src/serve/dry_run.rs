//! `dryRun` on write requests (upstream KEP-576; the handlers validate it with
//! `ValidateCreateOptions` / `ValidateUpdateOptions` / `ValidatePatchOptions` /
//! `ValidateDeleteOptions` of `k8s.io/apimachinery/pkg/apis/meta/v1/validation`): `dryRun=All`
//! runs the request through the whole apiserver and answers as the write would, storing nothing
//! (see `k8s_api::dry_run`); any other value is refused with upstream's 422.

use k8s_cluster::Session;
use k8s_types::apiserver::ApiClient;
use serde_json::json;

use crate::serve::reply::Reply;
use crate::serve::rest::Request;

/// Upstream `metav1.DryRunAll`.
const DRY_RUN_ALL: &str = "All";

/// Every `dryRun` value of the request, in order: the query's, then a delete's body
/// (`DeleteOptions.dryRun`, which kubectl sends there) or an eviction's
/// (`deleteOptions.dryRun`).
fn values(req: &Request) -> Vec<String> {
    let mut vals: Vec<String> = req
        .query
        .iter()
        .filter(|(k, _)| k == "dryRun")
        .map(|(_, v)| v.clone())
        .collect();
    if req.method == "DELETE" || req.path.ends_with("/eviction") {
        if let Ok(body) = serde_json::from_slice::<serde_json::Value>(&req.body) {
            let options = if req.method == "DELETE" {
                &body
            } else {
                &body["deleteOptions"]
            };
            if let Some(list) = options["dryRun"].as_array() {
                vals.extend(list.iter().map(|v| match v.as_str() {
                    Some(s) => s.to_string(),
                    None => v.to_string(),
                }));
            }
        }
    }
    vals
}

/// Whether the request is a dry run (its `dryRun` values were checked by [`check`]).
pub(crate) fn is_dry_run(req: &Request) -> bool {
    !values(req).is_empty()
}

/// Upstream `ValidateDryRun`: every value must be `All`. The error is the options' `Invalid`
/// (`CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: []string{"x"}:
/// supported values: "All"`, the value printed as Go's `%#v` of the list).
pub(crate) fn check(req: &Request) -> Result<(), Reply> {
    let vals = values(req);
    if vals.iter().all(|v| v == DRY_RUN_ALL) {
        return Ok(());
    }
    let options = match req.method.as_str() {
        "POST" => "CreateOptions",
        "PUT" => "UpdateOptions",
        "PATCH" => "PatchOptions",
        _ => "DeleteOptions",
    };
    let listed = vals
        .iter()
        .map(|v| format!("{v:?}"))
        .collect::<Vec<_>>()
        .join(", ");
    let detail =
        format!("Unsupported value: []string{{{listed}}}: supported values: \"{DRY_RUN_ALL}\"");
    Err(Reply::json(
        422,
        &json!({
            "kind": "Status", "apiVersion": "v1", "metadata": {},
            "status": "Failure",
            "message": format!("{options}.meta.k8s.io \"\" is invalid: dryRun: {detail}"),
            "reason": "Invalid",
            "details": {"group": "meta.k8s.io", "kind": options,
                "causes": [{"reason": "FieldValueNotSupported", "message": detail, "field": "dryRun"}]},
            "code": 422,
        }),
    ))
}

/// Runs a write of the request on the apiserver: as a dry run when the request asks for one.
pub(crate) fn write<R>(
    s: &mut Session,
    req: &Request,
    f: impl FnOnce(&mut dyn ApiClient) -> R,
) -> R {
    if is_dry_run(req) {
        s.dry_run(f)
    } else {
        f(s.api())
    }
}
