//! PriorityClass defaults (upstream `pkg/apis/scheduling/v1/defaults.go`
//! `SetDefaults_PriorityClass`): `preemptionPolicy: PreemptLowerPriority`.

use k8s_types::scheduling::PriorityClass;

/// Upstream `v1.PreemptLowerPriority`.
pub const PREEMPT_LOWER_PRIORITY: &str = "PreemptLowerPriority";

/// Upstream `SetDefaults_PriorityClass`.
pub fn set_defaults_priority_class(pc: &mut PriorityClass) {
    if pc.preemption_policy.is_none() {
        pc.preemption_policy = Some(PREEMPT_LOWER_PRIORITY.to_string());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn preemption_policy_defaults() {
        let mut pc = PriorityClass::default();
        set_defaults_priority_class(&mut pc);
        assert_eq!(
            pc.preemption_policy.as_deref(),
            Some("PreemptLowerPriority")
        );
    }
}
