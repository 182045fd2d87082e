//! apimachinery `Status` errors, as kube-apiserver answers them (upstream
//! `k8s.io/apimachinery/pkg/api/errors/errors.go`, `pkg/apis/meta/v1/types.go` `StatusReason`).

use serde::{Deserialize, Serialize};

use crate::object::Kind;

/// Upstream `metav1.StatusReason` values k8s-mini produces, with their HTTP codes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum StatusReason {
    /// 404.
    NotFound,
    /// 409: create of an existing name.
    AlreadyExists,
    /// 409: stale resourceVersion on update.
    Conflict,
    /// 410: watch from a compacted revision.
    Gone,
    /// 422: validation failed; see the causes.
    Invalid,
    /// 400.
    BadRequest,
    /// 405.
    MethodNotAllowed,
    /// 403: rejected by admission.
    Forbidden,
    /// 429: e.g. an eviction a PodDisruptionBudget does not allow now.
    TooManyRequests,
    /// 500.
    InternalError,
}

impl StatusReason {
    /// The HTTP status code upstream returns for this reason.
    pub fn code(self) -> u16 {
        match self {
            StatusReason::NotFound => 404,
            StatusReason::AlreadyExists | StatusReason::Conflict => 409,
            StatusReason::Gone => 410,
            StatusReason::Invalid => 422,
            StatusReason::BadRequest => 400,
            StatusReason::MethodNotAllowed => 405,
            StatusReason::Forbidden => 403,
            StatusReason::TooManyRequests => 429,
            StatusReason::InternalError => 500,
        }
    }
}

/// One field error (upstream `metav1.StatusCause` built from `field.Error`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StatusCause {
    /// `FieldValueRequired`, `FieldValueInvalid`, `FieldValueNotSupported`, `FieldValueDuplicate`,
    /// `FieldValueForbidden`.
    pub reason: String,
    /// e.g. `Invalid value: "1.5.5": ...`.
    pub message: String,
    /// Field path, e.g. `spec.containers[0].resources.requests.cpu`.
    pub field: String,
}

/// Upstream `metav1.Status` for a failure.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[error("{message}")]
pub struct Status {
    /// Machine-readable reason.
    pub reason: StatusReason,
    /// HTTP code.
    pub code: u16,
    /// Human-readable message, worded as upstream.
    pub message: String,
    /// Field errors (for Invalid).
    pub causes: Vec<StatusCause>,
}

impl Status {
    fn new(reason: StatusReason, message: String) -> Status {
        Status {
            reason,
            code: reason.code(),
            message,
            causes: Vec::new(),
        }
    }

    /// `pods "web-0" not found`.
    pub fn not_found(kind: &Kind, name: &str) -> Status {
        Status::new(
            StatusReason::NotFound,
            format!("{} \"{}\" not found", kind.qualified_resource(), name),
        )
    }

    /// `pods "web-0" already exists`.
    pub fn already_exists(kind: &Kind, name: &str) -> Status {
        Status::new(
            StatusReason::AlreadyExists,
            format!("{} \"{}\" already exists", kind.qualified_resource(), name),
        )
    }

    /// `Operation cannot be fulfilled on pods "web-0": the object has been modified; please apply
    /// your changes to the latest version and try again`.
    pub fn conflict(kind: &Kind, name: &str) -> Status {
        Status::new(
            StatusReason::Conflict,
            format!(
                "Operation cannot be fulfilled on {} \"{}\": the object has been modified; please apply your changes to the latest version and try again",
                kind.qualified_resource(),
                name
            ),
        )
    }

    /// `Pod "web-0" is invalid: [field: message, ...]` (`Deployment.apps "web" ...` for a named API
    /// group, as upstream `errors.NewInvalid` prints the qualified kind), with one cause per field error.
    pub fn invalid(kind: &Kind, name: &str, errors: Vec<FieldError>) -> Status {
        let joined = if errors.len() == 1 {
            errors[0].to_string()
        } else {
            format!(
                "[{}]",
                errors
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        let mut s = Status::new(
            StatusReason::Invalid,
            format!(
                "{} \"{}\" is invalid: {}",
                qualified_kind(kind),
                name,
                joined
            ),
        );
        s.causes = errors
            .into_iter()
            .map(|e| StatusCause {
                reason: e.type_.reason().to_string(),
                message: e.detail_message(),
                field: e.field,
            })
            .collect();
        s
    }

    /// 410 Gone: `too old resource version: 5 (12)`.
    pub fn gone(requested: i64, oldest: i64) -> Status {
        Status::new(
            StatusReason::Gone,
            format!("too old resource version: {requested} ({oldest})"),
        )
    }

    /// 400 Bad Request with a message.
    pub fn bad_request(message: impl Into<String>) -> Status {
        Status::new(StatusReason::BadRequest, message.into())
    }

    /// 403 Forbidden (admission rejection).
    pub fn forbidden(message: impl Into<String>) -> Status {
        Status::new(StatusReason::Forbidden, message.into())
    }

    /// 429 Too Many Requests with one cause (upstream `errors.NewTooManyRequests` plus a
    /// `StatusCause` of type `cause_type`, as the eviction subresource answers).
    pub fn too_many_requests(
        message: impl Into<String>,
        cause_type: &str,
        cause_message: impl Into<String>,
    ) -> Status {
        let mut s = Status::new(StatusReason::TooManyRequests, message.into());
        s.causes.push(StatusCause {
            reason: cause_type.to_string(),
            message: cause_message.into(),
            field: String::new(),
        });
        s
    }

    /// 405: `create is not supported on resources of kind "pods/eviction"` (upstream
    /// `errors.NewMethodNotSupported`).
    pub fn method_not_supported(resource: &str, action: &str) -> Status {
        Status::new(
            StatusReason::MethodNotAllowed,
            format!("{action} is not supported on resources of kind {resource:?}"),
        )
    }

    /// True for TooManyRequests (upstream `errors.IsTooManyRequests`).
    pub fn is_too_many_requests(&self) -> bool {
        self.reason == StatusReason::TooManyRequests
    }

    /// 500 Internal Error.
    pub fn internal(message: impl Into<String>) -> Status {
        Status::new(StatusReason::InternalError, message.into())
    }

    /// True for NotFound.
    pub fn is_not_found(&self) -> bool {
        self.reason == StatusReason::NotFound
    }

    /// True for Conflict.
    pub fn is_conflict(&self) -> bool {
        self.reason == StatusReason::Conflict
    }

    /// True for AlreadyExists.
    pub fn is_already_exists(&self) -> bool {
        self.reason == StatusReason::AlreadyExists
    }

    /// True for Invalid.
    pub fn is_invalid(&self) -> bool {
        self.reason == StatusReason::Invalid
    }
}

fn qualified_kind(kind: &Kind) -> String {
    match kind.group() {
        "" => kind.name().to_string(),
        g => format!("{}.{g}", kind.name()),
    }
}

/// Upstream `field.ErrorType`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldErrorType {
    /// `Required value`.
    Required,
    /// `Invalid value`.
    Invalid,
    /// `Unsupported value`.
    NotSupported,
    /// `Duplicate value`.
    Duplicate,
    /// `Forbidden`.
    Forbidden,
    /// `Not found`.
    NotFound,
}

impl FieldErrorType {
    /// The StatusCause reason, e.g. `FieldValueRequired`.
    pub fn reason(self) -> &'static str {
        match self {
            FieldErrorType::Required => "FieldValueRequired",
            FieldErrorType::Invalid => "FieldValueInvalid",
            FieldErrorType::NotSupported => "FieldValueNotSupported",
            FieldErrorType::Duplicate => "FieldValueDuplicate",
            FieldErrorType::Forbidden => "FieldValueForbidden",
            FieldErrorType::NotFound => "FieldValueNotFound",
        }
    }

    fn text(self) -> &'static str {
        match self {
            FieldErrorType::Required => "Required value",
            FieldErrorType::Invalid => "Invalid value",
            FieldErrorType::NotSupported => "Unsupported value",
            FieldErrorType::Duplicate => "Duplicate value",
            FieldErrorType::Forbidden => "Forbidden",
            FieldErrorType::NotFound => "Not found",
        }
    }
}

/// One validation error at a field path (upstream `field.Error`); printed as upstream:
/// `spec.replicas: Invalid value: -1: must be greater than or equal to 0`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldError {
    /// The error type.
    pub type_: FieldErrorType,
    /// Field path, e.g. `metadata.name`.
    pub field: String,
    /// The offending value as upstream prints it (strings quoted), if any.
    pub bad_value: Option<String>,
    /// Detail text.
    pub detail: String,
}

impl FieldError {
    /// `Required value: <detail>`.
    pub fn required(field: impl Into<String>, detail: impl Into<String>) -> FieldError {
        FieldError {
            type_: FieldErrorType::Required,
            field: field.into(),
            bad_value: None,
            detail: detail.into(),
        }
    }

    /// `Invalid value: <value>: <detail>`; `value` is printed as given (quote strings yourself).
    pub fn invalid(
        field: impl Into<String>,
        value: impl Into<String>,
        detail: impl Into<String>,
    ) -> FieldError {
        FieldError {
            type_: FieldErrorType::Invalid,
            field: field.into(),
            bad_value: Some(value.into()),
            detail: detail.into(),
        }
    }

    /// `Unsupported value: <value>: supported values: ...`.
    pub fn not_supported(field: impl Into<String>, value: &str, supported: &[&str]) -> FieldError {
        let list = supported
            .iter()
            .map(|s| format!("\"{s}\""))
            .collect::<Vec<_>>()
            .join(", ");
        FieldError {
            type_: FieldErrorType::NotSupported,
            field: field.into(),
            bad_value: Some(format!("\"{value}\"")),
            detail: format!("supported values: {list}"),
        }
    }

    /// `Duplicate value: <value>`.
    pub fn duplicate(field: impl Into<String>, value: impl Into<String>) -> FieldError {
        FieldError {
            type_: FieldErrorType::Duplicate,
            field: field.into(),
            bad_value: Some(value.into()),
            detail: String::new(),
        }
    }

    /// `Forbidden: <detail>`.
    pub fn forbidden(field: impl Into<String>, detail: impl Into<String>) -> FieldError {
        FieldError {
            type_: FieldErrorType::Forbidden,
            field: field.into(),
            bad_value: None,
            detail: detail.into(),
        }
    }

    /// `Not found: <value>: <detail>` (upstream `field.NotFound`, with the detail some callers
    /// add, e.g. `validateResourceClaimNames`).
    pub fn not_found(
        field: impl Into<String>,
        value: impl Into<String>,
        detail: impl Into<String>,
    ) -> FieldError {
        FieldError {
            type_: FieldErrorType::NotFound,
            field: field.into(),
            bad_value: Some(value.into()),
            detail: detail.into(),
        }
    }

    /// The message without the field path (upstream `field.Error.ErrorBody`).
    pub fn detail_message(&self) -> String {
        let mut s = self.type_.text().to_string();
        if let Some(v) = &self.bad_value {
            s.push_str(": ");
            s.push_str(v);
        }
        if !self.detail.is_empty() {
            s.push_str(": ");
            s.push_str(&self.detail);
        }
        s
    }
}

impl std::fmt::Display for FieldError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.field, self.detail_message())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_match_apimachinery() {
        assert_eq!(
            Status::not_found(&Kind::Pod, "web-0").message,
            "pods \"web-0\" not found"
        );
        assert_eq!(
            Status::already_exists(&Kind::Deployment, "web").message,
            "deployments.apps \"web\" already exists"
        );
        assert_eq!(Status::conflict(&Kind::Pod, "a").code, 409);
        let s = Status::invalid(
            &Kind::Deployment,
            "web",
            vec![FieldError::invalid(
                "spec.replicas",
                "-1",
                "must be greater than or equal to 0",
            )],
        );
        assert_eq!(
            s.message,
            "Deployment.apps \"web\" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0"
        );
        assert_eq!(s.code, 422);
        assert_eq!(s.causes[0].reason, "FieldValueInvalid");
        assert_eq!(s.causes[0].field, "spec.replicas");
    }
}
