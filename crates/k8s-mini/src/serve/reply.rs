//! What a request gets back: a status code, a content type and a body; failures as apimachinery
//! `metav1.Status` objects (upstream `k8s.io/apimachinery/pkg/api/errors` and
//! `pkg/apis/meta/v1/types.go` `Status`, `StatusDetails`, `StatusCause`).

use k8s_types::status::{Status, StatusReason};
use serde_json::{json, Value};

/// `application/json`.
pub(crate) const JSON: &str = "application/json";

/// An HTTP answer.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Reply {
    pub(crate) code: u16,
    pub(crate) content_type: String,
    pub(crate) body: Vec<u8>,
}

impl Reply {
    /// A JSON body with a code.
    pub(crate) fn json(code: u16, v: &Value) -> Reply {
        Reply {
            code,
            content_type: JSON.to_string(),
            body: serde_json::to_vec(v).unwrap_or_default(),
        }
    }

    /// A JSON body with a content type of its own (aggregated discovery).
    pub(crate) fn typed_json(code: u16, content_type: &str, v: &Value) -> Reply {
        Reply {
            code,
            content_type: content_type.to_string(),
            body: serde_json::to_vec(v).unwrap_or_default(),
        }
    }
}

/// Who a failure is about: `details` of the Status (name, the API group, the resource).
#[derive(Clone, Debug, Default)]
pub(crate) struct Details {
    pub(crate) name: String,
    pub(crate) group: String,
    pub(crate) resource: String,
    /// The kind (`Pod`): upstream's `NewInvalid` names it in `details.kind` where the other
    /// errors name the resource (`pods`).
    pub(crate) kind: String,
}

/// The reason string upstream writes for a reason.
fn reason_str(r: StatusReason) -> &'static str {
    match r {
        StatusReason::NotFound => "NotFound",
        StatusReason::AlreadyExists => "AlreadyExists",
        StatusReason::Conflict => "Conflict",
        // The watch cache answers a compacted resourceVersion with `Expired` (upstream
        // `errors.NewResourceExpired`), the storage layer with `Gone`.
        StatusReason::Gone => "Expired",
        StatusReason::Invalid => "Invalid",
        StatusReason::BadRequest => "BadRequest",
        StatusReason::MethodNotAllowed => "MethodNotAllowed",
        StatusReason::Forbidden => "Forbidden",
        StatusReason::TooManyRequests => "TooManyRequests",
        StatusReason::InternalError => "InternalError",
    }
}

/// The `metav1.Status` JSON of a failure.
pub(crate) fn status_json(s: &Status, d: &Details) -> Value {
    let mut details = serde_json::Map::new();
    if !d.name.is_empty() {
        details.insert("name".into(), json!(d.name));
    }
    if !d.group.is_empty() {
        details.insert("group".into(), json!(d.group));
    }
    let kind = if s.reason == StatusReason::Invalid && !d.kind.is_empty() {
        &d.kind
    } else {
        &d.resource
    };
    if !kind.is_empty() {
        details.insert("kind".into(), json!(kind));
    }
    if !s.causes.is_empty() {
        let causes: Vec<Value> = s
            .causes
            .iter()
            .map(|c| {
                let mut m = serde_json::Map::new();
                m.insert("reason".into(), json!(c.reason));
                m.insert("message".into(), json!(c.message));
                if !c.field.is_empty() {
                    m.insert("field".into(), json!(c.field));
                }
                Value::Object(m)
            })
            .collect();
        details.insert("causes".into(), Value::Array(causes));
    }
    let mut out = json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": s.message,
        "reason": reason_str(s.reason),
        "code": s.code,
    });
    if !details.is_empty() {
        out["details"] = Value::Object(details);
    }
    out
}

/// A failure as an HTTP answer.
pub(crate) fn failure(s: &Status, d: &Details) -> Reply {
    Reply::json(s.code, &status_json(s, d))
}

/// A success Status (`{"status":"Success"}`), as a subresource create answers (binding,
/// eviction).
pub(crate) fn success(code: u16) -> Reply {
    Reply::json(
        code,
        &json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": code}),
    )
}

/// 404 for a path nothing serves: upstream's `the server could not find the requested resource`.
pub(crate) fn not_found_path() -> Reply {
    let s = Status {
        reason: StatusReason::NotFound,
        code: 404,
        message: "the server could not find the requested resource".into(),
        causes: Vec::new(),
    };
    failure(&s, &Details::default())
}

/// 400 Bad Request with a message.
pub(crate) fn bad_request(message: impl Into<String>) -> Reply {
    failure(&Status::bad_request(message), &Details::default())
}

/// 405 for a verb a path does not take (upstream: `the server does not allow this method on the
/// requested resource`).
pub(crate) fn method_not_allowed() -> Reply {
    let s = Status {
        reason: StatusReason::MethodNotAllowed,
        code: 405,
        message: "the server does not allow this method on the requested resource".into(),
        causes: Vec::new(),
    };
    failure(&s, &Details::default())
}

/// 415 for a body type not accepted (upstream: `the body of the request was in an unknown format
/// - accepted media types include: ...`).
pub(crate) fn unsupported_media_type(what: &str, accepted: &str) -> Reply {
    Reply::json(
        415,
        &json!({
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": format!("the body of the request was in an unknown format - accepted media types include: {accepted}"),
            "reason": "UnsupportedMediaType", "code": 415,
            "details": {"causes": [{"reason": "UnsupportedMediaType", "message": what}]},
        }),
    )
}

/// 413 for a body over the limit (upstream `errors.NewRequestEntityTooLargeError`).
pub(crate) fn too_large(limit: usize) -> Reply {
    Reply::json(
        413,
        &json!({
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": format!("Request entity too large: limit is {limit}"),
            "reason": "RequestEntityTooLarge", "code": 413,
        }),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_types::object::Kind;

    #[test]
    fn not_found_is_upstreams_status_object() {
        let s = Status::not_found(&Kind::Deployment, "web");
        let d = Details {
            name: "web".into(),
            group: "apps".into(),
            resource: "deployments".into(),
            kind: "Deployment".into(),
        };
        let v = status_json(&s, &d);
        assert_eq!(
            v,
            json!({
                "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                "message": "deployments.apps \"web\" not found", "reason": "NotFound",
                "details": {"name": "web", "group": "apps", "kind": "deployments"}, "code": 404
            })
        );
    }
}
