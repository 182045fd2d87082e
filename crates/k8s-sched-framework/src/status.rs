//! The plugin result type: [`Code`] and [`Status`] (upstream
//! `staging/src/k8s.io/kube-scheduler/framework/interface.go` `Code`, `Status`). Named
//! `framework::Status` to keep it apart from apimachinery's `k8s_types::status::Status`.

use std::fmt;

/// The outcome class of a plugin call (upstream `framework.Code`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Code {
    /// The plugin ran correctly and found the pod schedulable. A nil upstream status is Success.
    #[default]
    Success,
    /// An internal error: the attempt is aborted and retried after backoff, with no preemption.
    Error,
    /// The pod does not fit now; preemption or a cluster change may fix it.
    Unschedulable,
    /// The pod does not fit and preemption cannot help on this node.
    UnschedulableAndUnresolvable,
    /// A Permit plugin asks the pod to wait.
    Wait,
    /// The plugin has nothing to do for this pod: PreFilter/PreScore skip the matching
    /// Filter/Score; Bind passes the pod to the next Bind plugin.
    Skip,
    /// The pod waits for an external event (e.g. a resource claim); rejected like Unschedulable.
    Pending,
}

impl Code {
    /// The upstream name, e.g. `UnschedulableAndUnresolvable`.
    pub fn as_str(self) -> &'static str {
        match self {
            Code::Success => "Success",
            Code::Error => "Error",
            Code::Unschedulable => "Unschedulable",
            Code::UnschedulableAndUnresolvable => "UnschedulableAndUnresolvable",
            Code::Wait => "Wait",
            Code::Skip => "Skip",
            Code::Pending => "Pending",
        }
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The result of a plugin call: a [`Code`], the human-readable reasons (each one becomes one
/// `<count> <reason>` entry of a FailedScheduling message) and the name of the plugin that produced
/// it (upstream `framework.Status`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Status {
    code: Code,
    reasons: Vec<String>,
    plugin: String,
}

impl Status {
    /// A status with a code and reasons (upstream `NewStatus`).
    pub fn new<I, S>(code: Code, reasons: I) -> Status
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Status {
            code,
            reasons: reasons.into_iter().map(Into::into).collect(),
            plugin: String::new(),
        }
    }

    /// Success without reasons; allocation-free.
    pub fn success() -> Status {
        Status::default()
    }

    /// A status with one reason.
    pub fn with_reason(code: Code, reason: impl Into<String>) -> Status {
        Status {
            code,
            reasons: vec![reason.into()],
            plugin: String::new(),
        }
    }

    /// `Unschedulable` with one reason.
    pub fn unschedulable(reason: impl Into<String>) -> Status {
        Status::with_reason(Code::Unschedulable, reason)
    }

    /// `UnschedulableAndUnresolvable` with one reason.
    pub fn unresolvable(reason: impl Into<String>) -> Status {
        Status::with_reason(Code::UnschedulableAndUnresolvable, reason)
    }

    /// `Error` with a message (upstream `AsStatus(err)`).
    pub fn error(message: impl Into<String>) -> Status {
        Status::with_reason(Code::Error, message)
    }

    /// `Skip` without reasons.
    pub fn skip() -> Status {
        Status::new(Code::Skip, std::iter::empty::<String>())
    }

    /// `Wait` without reasons.
    pub fn wait() -> Status {
        Status::new(Code::Wait, std::iter::empty::<String>())
    }

    /// The code.
    pub fn code(&self) -> Code {
        self.code
    }

    /// The reasons, in the order the plugin gave them.
    pub fn reasons(&self) -> &[String] {
        &self.reasons
    }

    /// The plugin that produced the status (empty when not set).
    pub fn plugin(&self) -> &str {
        &self.plugin
    }

    /// Records the producing plugin (upstream `WithPlugin`).
    pub fn with_plugin(mut self, plugin: impl Into<String>) -> Status {
        self.plugin = plugin.into();
        self
    }

    /// Records the producing plugin in place (upstream `SetPlugin`).
    pub fn set_plugin(&mut self, plugin: impl Into<String>) {
        self.plugin = plugin.into();
    }

    /// The reasons joined with `, ` (upstream `Message`).
    pub fn message(&self) -> String {
        self.reasons.join(", ")
    }

    /// True for Success.
    pub fn is_success(&self) -> bool {
        self.code == Code::Success
    }

    /// True for Skip.
    pub fn is_skip(&self) -> bool {
        self.code == Code::Skip
    }

    /// True for Wait.
    pub fn is_wait(&self) -> bool {
        self.code == Code::Wait
    }

    /// True for Unschedulable, UnschedulableAndUnresolvable and Pending (upstream `IsRejected`).
    pub fn is_rejected(&self) -> bool {
        matches!(
            self.code,
            Code::Unschedulable | Code::UnschedulableAndUnresolvable | Code::Pending
        )
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_joins_reasons_and_rejection_classes_follow_upstream() {
        let s = Status::new(
            Code::Unschedulable,
            ["Insufficient cpu", "Insufficient memory"],
        )
        .with_plugin("NodeResourcesFit");
        assert_eq!(s.message(), "Insufficient cpu, Insufficient memory");
        assert_eq!(s.plugin(), "NodeResourcesFit");
        assert!(s.is_rejected());
        assert!(Status::with_reason(Code::Pending, "x").is_rejected());
        assert!(!Status::error("boom").is_rejected());
        assert!(Status::success().is_success());
        assert_eq!(
            Code::UnschedulableAndUnresolvable.to_string(),
            "UnschedulableAndUnresolvable"
        );
    }
}
