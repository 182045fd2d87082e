//! Building upstream `Status` errors the shared constructors in `k8s_types::status` do not cover
//! (upstream `k8s.io/apimachinery/pkg/api/errors/errors.go` `NewConflict` with a custom cause,
//! `NewForbidden`, `NewInternalError`) and mapping store failures to `Status` (upstream
//! `k8s.io/apiserver/pkg/storage/errors` `InterpretCreateError`/`InterpretUpdateError`).

use k8s_types::object::Kind;
use k8s_types::status::{Status, StatusReason};
use k8s_types::store::StoreError;

/// `Operation cannot be fulfilled on <resource> "<name>": <cause>` (409), e.g. resource
/// `pods/binding`.
pub fn conflict_with(resource: &str, name: &str, cause: &str) -> Status {
    let mut s = Status::bad_request(format!(
        "Operation cannot be fulfilled on {resource} \"{name}\": {cause}"
    ));
    s.reason = StatusReason::Conflict;
    s.code = StatusReason::Conflict.code();
    s
}

/// `<resource> "<name>" is forbidden: <cause>` (403); without a name,
/// `<resource> is forbidden: <cause>`.
pub fn forbidden(kind: &Kind, name: &str, cause: &str) -> Status {
    let resource = kind.qualified_resource();
    if name.is_empty() {
        Status::forbidden(format!("{resource} is forbidden: {cause}"))
    } else {
        Status::forbidden(format!("{resource} \"{name}\" is forbidden: {cause}"))
    }
}

/// `Internal error occurred: <cause>` (500).
pub fn internal(cause: &str) -> Status {
    Status::internal(format!("Internal error occurred: {cause}"))
}

/// Maps a store failure on object `name` of `kind` to the apiserver's answer.
pub fn from_store(err: StoreError, kind: &Kind, name: &str) -> Status {
    match err {
        StoreError::NotFound { .. } => Status::not_found(kind, name),
        StoreError::AlreadyExists { .. } => Status::already_exists(kind, name),
        StoreError::Conflict { .. } => Status::conflict(kind, name),
        StoreError::Compacted { requested, oldest } => Status::gone(requested, oldest),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_follow_apimachinery() {
        let c = conflict_with(
            "pods/binding",
            "web-0",
            "pod web-0 is already assigned to node \"a\"",
        );
        assert_eq!(c.code, 409);
        assert_eq!(
            c.message,
            "Operation cannot be fulfilled on pods/binding \"web-0\": pod web-0 is already assigned to node \"a\""
        );
        assert_eq!(
            forbidden(&Kind::Pod, "web", "x").message,
            "pods \"web\" is forbidden: x"
        );
        assert_eq!(
            from_store(
                StoreError::Compacted {
                    requested: 3,
                    oldest: 9
                },
                &Kind::Pod,
                ""
            )
            .message,
            "too old resource version: 3 (9)"
        );
    }
}
