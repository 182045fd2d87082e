//! `PodTopologySpreadArgs` with upstream's defaulting and validation (upstream
//! `staging/src/k8s.io/kube-scheduler/config/v1/types_pluginargs.go` `PodTopologySpreadArgs`,
//! `pkg/scheduler/apis/config/v1/defaults.go` `SetDefaults_PodTopologySpreadArgs`,
//! `pkg/scheduler/apis/config/validation/validation_pluginargs.go`
//! `ValidatePodTopologySpreadArgs`). Field paths in errors are relative to the args
//! (`defaultConstraints[0].maxSkew`); the caller prefixes `profiles[i].pluginConfig[j].args`.

use serde::{Deserialize, Serialize};

use k8s_types::core::TopologySpreadConstraint;
use k8s_types::labels::LabelSelector;
use k8s_types::status::FieldError;

use super::label_key::validate_label_name;

/// `defaultingType: System`: the plugin uses upstream's built-in default constraints.
pub const SYSTEM_DEFAULTING: &str = "System";
/// `defaultingType: List`: the plugin uses `defaultConstraints`.
pub const LIST_DEFAULTING: &str = "List";
/// `whenUnsatisfiable: DoNotSchedule` (hard constraint, a Filter).
pub const DO_NOT_SCHEDULE: &str = "DoNotSchedule";
/// `whenUnsatisfiable: ScheduleAnyway` (soft constraint, a Score).
pub const SCHEDULE_ANYWAY: &str = "ScheduleAnyway";

fn join(prefix: &str, field: &str) -> String {
    if prefix.is_empty() {
        field.to_string()
    } else {
        format!("{prefix}.{field}")
    }
}

/// One entry of `defaultConstraints`: upstream's `v1.TopologySpreadConstraint` with every field
/// optional, so a missing field reaches validation (as upstream, where it decodes to its zero
/// value) instead of failing to decode.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DefaultConstraint {
    /// Maximum permitted skew (> 0).
    #[serde(default)]
    pub max_skew: i32,
    /// Node label defining the domains.
    #[serde(default)]
    pub topology_key: String,
    /// `DoNotSchedule` or `ScheduleAnyway`.
    #[serde(default)]
    pub when_unsatisfiable: String,
    /// Must be unset: the selector is deduced for each pod (upstream `DefaultSelector`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label_selector: Option<LabelSelector>,
    /// Minimum number of eligible domains.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_domains: Option<i32>,
    /// Pod label keys merged into the selector.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub match_label_keys: Vec<String>,
    /// `Honor` (default) or `Ignore`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_affinity_policy: Option<String>,
    /// `Honor` or `Ignore` (default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_taints_policy: Option<String>,
}

impl DefaultConstraint {
    /// The constraint as the API type.
    pub fn to_constraint(&self) -> TopologySpreadConstraint {
        TopologySpreadConstraint {
            max_skew: self.max_skew,
            topology_key: self.topology_key.clone(),
            when_unsatisfiable: self.when_unsatisfiable.clone(),
            label_selector: self.label_selector.clone(),
            min_domains: self.min_domains,
            match_label_keys: self.match_label_keys.clone(),
            node_affinity_policy: self.node_affinity_policy.clone(),
            node_taints_policy: self.node_taints_policy.clone(),
        }
    }
}

/// Upstream `PodTopologySpreadArgs`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodTopologySpreadArgs {
    /// Constraints applied to pods without `topologySpreadConstraints` when `defaultingType` is
    /// `List`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub default_constraints: Vec<DefaultConstraint>,
    /// `System` (default: upstream's built-in constraints) or `List`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub defaulting_type: String,
}

impl PodTopologySpreadArgs {
    /// Upstream `SetDefaults_PodTopologySpreadArgs`: an empty `defaultingType` becomes `System`.
    pub fn defaulted(mut self) -> PodTopologySpreadArgs {
        if self.defaulting_type.is_empty() {
            self.defaulting_type = SYSTEM_DEFAULTING.to_string();
        }
        self
    }

    /// Upstream `ValidatePodTopologySpreadArgs` (on defaulted args), errors in upstream order.
    pub fn validate(&self, path: &str) -> Vec<FieldError> {
        let mut errs = Vec::new();
        let dt = join(path, "defaultingType");
        if self.defaulting_type != SYSTEM_DEFAULTING && self.defaulting_type != LIST_DEFAULTING {
            errs.push(FieldError::not_supported(
                &dt,
                &self.defaulting_type,
                &[SYSTEM_DEFAULTING, LIST_DEFAULTING],
            ));
        } else if self.defaulting_type == SYSTEM_DEFAULTING && !self.default_constraints.is_empty()
        {
            errs.push(FieldError::invalid(
                &dt,
                format!("\"{}\"", self.defaulting_type),
                "when .defaultConstraints are not empty",
            ));
        }
        let dc = join(path, "defaultConstraints");
        for (i, c) in self.default_constraints.iter().enumerate() {
            let p = format!("{dc}[{i}]");
            if c.max_skew <= 0 {
                errs.push(FieldError::invalid(
                    format!("{p}.maxSkew"),
                    c.max_skew.to_string(),
                    "not in valid range (0, inf)",
                ));
            }
            let tk = format!("{p}.topologyKey");
            if c.topology_key.is_empty() {
                errs.push(FieldError::required(&tk, "can not be empty"));
            } else {
                errs.extend(validate_label_name(&c.topology_key, &tk));
            }
            let wu = format!("{p}.whenUnsatisfiable");
            if c.when_unsatisfiable.is_empty() {
                errs.push(FieldError::required(&wu, "can not be empty"));
            } else if c.when_unsatisfiable != DO_NOT_SCHEDULE
                && c.when_unsatisfiable != SCHEDULE_ANYWAY
            {
                // Upstream lists the supported values sorted (sets.List).
                errs.push(FieldError::not_supported(
                    &wu,
                    &c.when_unsatisfiable,
                    &[DO_NOT_SCHEDULE, SCHEDULE_ANYWAY],
                ));
            }
            if c.label_selector.is_some() {
                errs.push(FieldError::forbidden(
                    format!("{p}.labelSelector"),
                    "constraint must not define a selector, as they deduced for each pod",
                ));
            }
            let repeated = self.default_constraints[..i].iter().any(|o| {
                o.topology_key == c.topology_key && o.when_unsatisfiable == c.when_unsatisfiable
            });
            if repeated {
                errs.push(FieldError::duplicate(
                    &p,
                    format!("{{{}, {}}}", c.topology_key, c.when_unsatisfiable),
                ));
            }
        }
        errs
    }

    /// The default constraints as API types.
    pub fn constraints(&self) -> Vec<TopologySpreadConstraint> {
        self.default_constraints
            .iter()
            .map(DefaultConstraint::to_constraint)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(skew: i32, key: &str, when: &str) -> DefaultConstraint {
        DefaultConstraint {
            max_skew: skew,
            topology_key: key.into(),
            when_unsatisfiable: when.into(),
            ..Default::default()
        }
    }

    fn errs(a: &PodTopologySpreadArgs) -> Vec<String> {
        a.validate("args").iter().map(ToString::to_string).collect()
    }

    #[test]
    fn defaulting_type_defaults_to_system() {
        let a = PodTopologySpreadArgs::default().defaulted();
        assert_eq!(a.defaulting_type, "System");
        assert!(a.validate("").is_empty());
    }

    #[test]
    fn validation_matches_upstream_cases() {
        // Upstream validation_pluginargs_test.go TestValidatePodTopologySpreadArgs.
        let valid = PodTopologySpreadArgs {
            default_constraints: vec![
                c(3, "kubernetes.io/hostname", "ScheduleAnyway"),
                c(5, "topology.kubernetes.io/zone", "DoNotSchedule"),
            ],
            defaulting_type: "List".into(),
        };
        assert!(valid.validate("args").is_empty());

        // "maxSkew less than zero"
        let a = PodTopologySpreadArgs {
            default_constraints: vec![c(-1, "node", "DoNotSchedule")],
            defaulting_type: "List".into(),
        };
        assert_eq!(
            errs(&a),
            vec!["args.defaultConstraints[0].maxSkew: Invalid value: -1: not in valid range (0, inf)"]
        );

        // "empty topology key" and "WhenUnsatisfiable is empty"
        let a = PodTopologySpreadArgs {
            default_constraints: vec![c(1, "", "")],
            defaulting_type: "List".into(),
        };
        assert_eq!(
            errs(&a),
            vec![
                "args.defaultConstraints[0].topologyKey: Required value: can not be empty",
                "args.defaultConstraints[0].whenUnsatisfiable: Required value: can not be empty",
            ]
        );

        // "WhenUnsatisfiable contains unsupported action"
        let a = PodTopologySpreadArgs {
            default_constraints: vec![c(1, "node", "none")],
            defaulting_type: "List".into(),
        };
        assert_eq!(
            errs(&a),
            vec!["args.defaultConstraints[0].whenUnsatisfiable: Unsupported value: \"none\": supported values: \"DoNotSchedule\", \"ScheduleAnyway\""]
        );

        // "duplicated constraints"
        let a = PodTopologySpreadArgs {
            default_constraints: vec![c(1, "node", "DoNotSchedule"), c(2, "node", "DoNotSchedule")],
            defaulting_type: "List".into(),
        };
        assert_eq!(
            errs(&a),
            vec!["args.defaultConstraints[1]: Duplicate value: {node, DoNotSchedule}"]
        );

        // "label selector present"
        let mut with_selector = c(1, "key", "DoNotSchedule");
        with_selector.label_selector = Some(LabelSelector::from_labels([("a", "b")]));
        let a = PodTopologySpreadArgs {
            default_constraints: vec![with_selector],
            defaulting_type: "List".into(),
        };
        assert_eq!(
            errs(&a),
            vec!["args.defaultConstraints[0].labelSelector: Forbidden: constraint must not define a selector, as they deduced for each pod"]
        );

        // "list default constraints, no constraints" is valid; "system default constraints, but
        // has constraints" is not; an unknown defaultingType is unsupported.
        let a = PodTopologySpreadArgs {
            default_constraints: vec![],
            defaulting_type: "List".into(),
        };
        assert!(a.validate("args").is_empty());
        let a = PodTopologySpreadArgs {
            default_constraints: vec![c(1, "key", "DoNotSchedule")],
            defaulting_type: "System".into(),
        };
        assert_eq!(
            errs(&a),
            vec!["args.defaultingType: Invalid value: \"System\": when .defaultConstraints are not empty"]
        );
        let a = PodTopologySpreadArgs {
            default_constraints: vec![],
            defaulting_type: "Other".into(),
        };
        assert_eq!(
            errs(&a),
            vec!["args.defaultingType: Unsupported value: \"Other\": supported values: \"System\", \"List\""]
        );
    }
}
