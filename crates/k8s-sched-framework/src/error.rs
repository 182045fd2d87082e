//! [`ConfigError`]: why a `KubeSchedulerConfiguration` or a plugin's args were rejected. Field
//! errors print like upstream `field.ErrorList` aggregates
//! (`k8s.io/apimachinery/pkg/util/validation/field`, `k8s.io/apimachinery/pkg/util/errors`).

use k8s_types::status::FieldError;

/// A rejected scheduler configuration.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// The YAML (or a plugin's args) could not be decoded; `path` is the field path, e.g.
    /// `profiles[0].pluginConfig[0].args.scoringStrategy.resources[0].weight`.
    #[error("{}", decode_message(.path, .message))]
    Decode {
        /// Field path (empty for a syntax error of the document).
        path: String,
        /// The decoder's message.
        message: String,
    },
    /// Validation failed: one or more field errors, printed as upstream aggregates them
    /// (`a: Invalid value: ...` or `[a: ..., b: ...]`).
    #[error("{}", field_errors_message(.0))]
    Invalid(Vec<FieldError>),
    /// The profile cannot be built (upstream framework construction errors, e.g. `only one queue
    /// sort plugin required for profile with scheduler name "x", but got 2`), prefixed with the
    /// profile path.
    #[error("{0}")]
    Framework(String),
}

fn decode_message(path: &str, message: &str) -> String {
    if path.is_empty() || path == "." {
        message.to_string()
    } else {
        format!("{path}: {message}")
    }
}

fn field_errors_message(errors: &[FieldError]) -> String {
    match errors {
        [one] => one.to_string(),
        many => format!(
            "[{}]",
            many.iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

impl ConfigError {
    /// `Invalid` from a non-empty list of field errors, `None` when the list is empty.
    pub fn from_field_errors(errors: Vec<FieldError>) -> Option<ConfigError> {
        if errors.is_empty() {
            None
        } else {
            Some(ConfigError::Invalid(errors))
        }
    }
}
