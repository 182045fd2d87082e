//! Typed plugin args with upstream's defaulting and validation: `NodeResourcesFitArgs`,
//! `NodeResourcesBalancedAllocationArgs`, `DefaultPreemptionArgs` (upstream
//! `staging/src/k8s.io/kube-scheduler/config/v1/types_pluginargs.go`,
//! `pkg/scheduler/apis/config/v1/defaults.go`, `pkg/scheduler/apis/config/validation/
//! validation_pluginargs.go`) and `CoschedulingArgs` (kubernetes-sigs/scheduler-plugins
//! `apis/config/v1/types.go`, `defaults.go`). Field paths in errors are relative to the args
//! (`scoringStrategy.type`); the caller prefixes `profiles[i].pluginConfig[j].args`.

use serde::{Deserialize, Serialize};

use k8s_types::status::FieldError;

/// `LeastAllocated` scoring strategy.
pub const LEAST_ALLOCATED: &str = "LeastAllocated";
/// `MostAllocated` scoring strategy.
pub const MOST_ALLOCATED: &str = "MostAllocated";
/// `RequestedToCapacityRatio` scoring strategy.
pub const REQUESTED_TO_CAPACITY_RATIO: &str = "RequestedToCapacityRatio";
/// Supported strategies, sorted as upstream lists them in `Unsupported value` errors.
pub const SCORING_STRATEGY_TYPES: [&str; 3] =
    [LEAST_ALLOCATED, MOST_ALLOCATED, REQUESTED_TO_CAPACITY_RATIO];
/// Upstream `config.MaxCustomPriorityScore`: shape scores are 0..10, scaled to 0..100.
pub const MAX_CUSTOM_PRIORITY_SCORE: i64 = 10;
/// Upstream `config.MaxWeight` for resource weights.
pub const MAX_RESOURCE_WEIGHT: i64 = 100;

fn join(prefix: &str, field: &str) -> String {
    if prefix.is_empty() {
        field.to_string()
    } else {
        format!("{prefix}.{field}")
    }
}

/// A resource and its weight in resource-based scoring (upstream `ResourceSpec`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResourceSpec {
    /// Resource name, e.g. `cpu`, `memory`, `nvidia.com/gpu`.
    pub name: String,
    /// Weight (1-100; 0 defaults to 1).
    #[serde(default)]
    pub weight: i64,
}

impl ResourceSpec {
    /// `{name, weight}`.
    pub fn new(name: &str, weight: i64) -> ResourceSpec {
        ResourceSpec {
            name: name.to_string(),
            weight,
        }
    }
}

/// Upstream default resources for scoring: cpu and memory, weight 1 each.
pub fn default_resources() -> Vec<ResourceSpec> {
    vec![ResourceSpec::new("cpu", 1), ResourceSpec::new("memory", 1)]
}

/// A point of the RequestedToCapacityRatio shape (upstream `UtilizationShapePoint`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct UtilizationShapePoint {
    /// Utilization in percent, 0-100.
    #[serde(default)]
    pub utilization: i32,
    /// Score, 0-10 (scaled by 10 to the 0-100 node score range).
    #[serde(default)]
    pub score: i32,
}

/// Upstream `RequestedToCapacityRatioParam`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RequestedToCapacityRatioParam {
    /// Points of the piecewise-linear scoring function, by increasing utilization.
    #[serde(default)]
    pub shape: Vec<UtilizationShapePoint>,
}

/// Upstream `ScoringStrategy`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ScoringStrategy {
    /// `LeastAllocated` (default), `MostAllocated` or `RequestedToCapacityRatio`.
    #[serde(default, rename = "type")]
    pub type_: String,
    /// Resources and weights; empty = cpu:1, memory:1.
    #[serde(default)]
    pub resources: Vec<ResourceSpec>,
    /// Shape for `RequestedToCapacityRatio`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requested_to_capacity_ratio: Option<RequestedToCapacityRatioParam>,
}

/// Upstream `NodeResourcesFitArgs`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeResourcesFitArgs {
    /// Extended resources the Filter ignores.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ignored_resources: Vec<String>,
    /// Extended resource groups (the part before `/`) the Filter ignores.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ignored_resource_groups: Vec<String>,
    /// Scoring strategy; unset = LeastAllocated on cpu:1, memory:1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scoring_strategy: Option<ScoringStrategy>,
}

impl NodeResourcesFitArgs {
    /// Upstream `SetDefaults_NodeResourcesFitArgs`: strategy LeastAllocated, resources cpu:1 and
    /// memory:1 when empty, weight 0 -> 1.
    pub fn defaulted(mut self) -> NodeResourcesFitArgs {
        let s = self
            .scoring_strategy
            .get_or_insert_with(|| ScoringStrategy {
                type_: LEAST_ALLOCATED.to_string(),
                resources: default_resources(),
                requested_to_capacity_ratio: None,
            });
        if s.type_.is_empty() {
            s.type_ = LEAST_ALLOCATED.to_string();
        }
        if s.resources.is_empty() {
            s.resources = default_resources();
        }
        for r in &mut s.resources {
            if r.weight == 0 {
                r.weight = 1;
            }
        }
        self
    }

    /// Upstream `ValidateNodeResourcesFitArgs` (on defaulted args).
    pub fn validate(&self, path: &str) -> Vec<FieldError> {
        let mut errs = Vec::new();
        let Some(s) = &self.scoring_strategy else {
            return errs;
        };
        let sp = join(path, "scoringStrategy");
        if !SCORING_STRATEGY_TYPES.contains(&s.type_.as_str()) {
            errs.push(FieldError::not_supported(
                join(&sp, "type"),
                &s.type_,
                &SCORING_STRATEGY_TYPES,
            ));
        }
        errs.extend(validate_resources(&s.resources, &join(&sp, "resources")));
        if s.type_ == REQUESTED_TO_CAPACITY_RATIO {
            let shape = s
                .requested_to_capacity_ratio
                .as_ref()
                .map(|r| r.shape.as_slice())
                .unwrap_or(&[]);
            errs.extend(validate_function_shape(
                shape,
                &join(&join(&sp, "requestedToCapacityRatio"), "shape"),
            ));
        }
        errs
    }
}

fn validate_resources(resources: &[ResourceSpec], path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for (i, r) in resources.iter().enumerate() {
        if r.weight <= 0 || r.weight > MAX_RESOURCE_WEIGHT {
            errs.push(FieldError::invalid(
                format!("{path}[{i}].weight"),
                r.weight.to_string(),
                format!("resource weight of {} not in valid range (0, 100]", r.name),
            ));
        }
    }
    errs
}

fn validate_function_shape(shape: &[UtilizationShapePoint], path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if shape.is_empty() {
        errs.push(FieldError::required(
            path,
            "at least one point must be specified",
        ));
        return errs;
    }
    for i in 1..shape.len() {
        if shape[i - 1].utilization >= shape[i].utilization {
            errs.push(FieldError::invalid(
                format!("{path}[{i}].utilization"),
                shape[i].utilization.to_string(),
                "utilization values must be sorted in increasing order",
            ));
            break;
        }
    }
    for (i, p) in shape.iter().enumerate() {
        if !(0..=100).contains(&p.utilization) {
            errs.push(FieldError::invalid(
                format!("{path}[{i}].utilization"),
                p.utilization.to_string(),
                "not in valid range [0, 100]",
            ));
        }
        if !(0..=MAX_CUSTOM_PRIORITY_SCORE as i32).contains(&p.score) {
            errs.push(FieldError::invalid(
                format!("{path}[{i}].score"),
                p.score.to_string(),
                "not in valid range [0, 10]",
            ));
        }
    }
    errs
}

/// Upstream `NodeResourcesBalancedAllocationArgs`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeResourcesBalancedAllocationArgs {
    /// Resources to balance; empty = cpu and memory. Weights must be 1.
    #[serde(default)]
    pub resources: Vec<ResourceSpec>,
}

impl NodeResourcesBalancedAllocationArgs {
    /// Upstream `SetDefaults_NodeResourcesBalancedAllocationArgs`.
    pub fn defaulted(mut self) -> NodeResourcesBalancedAllocationArgs {
        if self.resources.is_empty() {
            self.resources = default_resources();
        }
        for r in &mut self.resources {
            if r.weight == 0 {
                r.weight = 1;
            }
        }
        self
    }

    /// Upstream `ValidateNodeResourcesBalancedAllocationArgs`.
    pub fn validate(&self, path: &str) -> Vec<FieldError> {
        let mut errs = Vec::new();
        let mut seen = std::collections::BTreeSet::new();
        for (i, r) in self.resources.iter().enumerate() {
            let p = format!("{}[{i}]", join(path, "resources"));
            if !seen.insert(r.name.as_str()) {
                errs.push(FieldError::duplicate(
                    format!("{p}.name"),
                    format!("\"{}\"", r.name),
                ));
            }
            if r.weight != 1 {
                errs.push(FieldError::invalid(
                    format!("{p}.weight"),
                    r.weight.to_string(),
                    "must be 1",
                ));
            }
        }
        errs
    }
}

/// Upstream `DefaultPreemptionArgs`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DefaultPreemptionArgs {
    /// Minimum share of nodes, in percent, evaluated as preemption candidates (default 10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_candidate_nodes_percentage: Option<i32>,
    /// Minimum number of candidate nodes (default 100).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_candidate_nodes_absolute: Option<i32>,
}

impl DefaultPreemptionArgs {
    /// Upstream defaults: 10% and 100 nodes.
    pub fn defaulted(mut self) -> DefaultPreemptionArgs {
        self.min_candidate_nodes_percentage.get_or_insert(10);
        self.min_candidate_nodes_absolute.get_or_insert(100);
        self
    }

    /// Upstream `ValidateDefaultPreemptionArgs`.
    pub fn validate(&self, path: &str) -> Vec<FieldError> {
        let mut errs = Vec::new();
        let pct = self.min_candidate_nodes_percentage.unwrap_or(10);
        let abs = self.min_candidate_nodes_absolute.unwrap_or(100);
        let pp = join(path, "minCandidateNodesPercentage");
        let ap = join(path, "minCandidateNodesAbsolute");
        if !(0..=100).contains(&pct) {
            errs.push(FieldError::invalid(
                &pp,
                pct.to_string(),
                "not in valid range [0, 100]",
            ));
        }
        if abs < 0 {
            errs.push(FieldError::invalid(
                &ap,
                abs.to_string(),
                "not in valid range [0, inf)",
            ));
        }
        if pct == 0 && abs == 0 {
            errs.push(FieldError::invalid(
                &pp,
                "0",
                "cannot be zero at the same time as minCandidateNodesAbsolute",
            ));
            errs.push(FieldError::invalid(
                &ap,
                "0",
                "cannot be zero at the same time as minCandidateNodesPercentage",
            ));
        }
        errs
    }
}

/// scheduler-plugins `CoschedulingArgs`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CoschedulingArgs {
    /// How long a gang member waits at Permit for its siblings, in seconds = ticks (default 60);
    /// a PodGroup's `scheduleTimeoutSeconds` overrides it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permit_waiting_time_seconds: Option<i64>,
    /// How long a rejected PodGroup is refused at PreFilter, in seconds = ticks (default 0 = off).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod_group_backoff_seconds: Option<i64>,
}

impl CoschedulingArgs {
    /// scheduler-plugins defaults: 60 s permit wait, no PodGroup backoff.
    pub fn defaulted(mut self) -> CoschedulingArgs {
        self.permit_waiting_time_seconds.get_or_insert(60);
        self.pod_group_backoff_seconds.get_or_insert(0);
        self
    }

    /// Both durations must be non-negative.
    pub fn validate(&self, path: &str) -> Vec<FieldError> {
        let mut errs = Vec::new();
        for (field, v) in [
            ("permitWaitingTimeSeconds", self.permit_waiting_time_seconds),
            ("podGroupBackoffSeconds", self.pod_group_backoff_seconds),
        ] {
            if let Some(v) = v {
                if v < 0 {
                    errs.push(FieldError::invalid(
                        join(path, field),
                        v.to_string(),
                        "must be greater than or equal to 0",
                    ));
                }
            }
        }
        errs
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fit_args_default_and_validate_as_upstream() {
        let a = NodeResourcesFitArgs::default().defaulted();
        let s = a.scoring_strategy.as_ref().unwrap();
        assert_eq!(s.type_, LEAST_ALLOCATED);
        assert_eq!(s.resources, default_resources());
        assert!(a.validate("").is_empty());

        let bad = NodeResourcesFitArgs {
            scoring_strategy: Some(ScoringStrategy {
                type_: "Foo".into(),
                resources: vec![
                    ResourceSpec::new("memory", -1),
                    ResourceSpec::new("cpu", 101),
                ],
                requested_to_capacity_ratio: None,
            }),
            ..Default::default()
        };
        let errs: Vec<String> = bad
            .validate("args")
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            errs,
            vec![
                "args.scoringStrategy.type: Unsupported value: \"Foo\": supported values: \"LeastAllocated\", \"MostAllocated\", \"RequestedToCapacityRatio\"",
                "args.scoringStrategy.resources[0].weight: Invalid value: -1: resource weight of memory not in valid range (0, 100]",
                "args.scoringStrategy.resources[1].weight: Invalid value: 101: resource weight of cpu not in valid range (0, 100]",
            ]
        );
    }

    #[test]
    fn shape_validation_follows_upstream() {
        let a = NodeResourcesFitArgs {
            scoring_strategy: Some(ScoringStrategy {
                type_: REQUESTED_TO_CAPACITY_RATIO.into(),
                resources: default_resources(),
                requested_to_capacity_ratio: Some(RequestedToCapacityRatioParam {
                    shape: vec![
                        UtilizationShapePoint {
                            utilization: 50,
                            score: 1,
                        },
                        UtilizationShapePoint {
                            utilization: 10,
                            score: 11,
                        },
                    ],
                }),
            }),
            ..Default::default()
        };
        let errs: Vec<String> = a.validate("").iter().map(ToString::to_string).collect();
        assert_eq!(
            errs,
            vec![
                "scoringStrategy.requestedToCapacityRatio.shape[1].utilization: Invalid value: 10: utilization values must be sorted in increasing order",
                "scoringStrategy.requestedToCapacityRatio.shape[1].score: Invalid value: 11: not in valid range [0, 10]",
            ]
        );
    }

    #[test]
    fn balanced_allocation_weights_must_be_one() {
        let a = NodeResourcesBalancedAllocationArgs {
            resources: vec![ResourceSpec::new("cpu", 2), ResourceSpec::new("cpu", 1)],
        };
        let errs: Vec<String> = a.validate("").iter().map(ToString::to_string).collect();
        assert_eq!(
            errs,
            vec![
                "resources[0].weight: Invalid value: 2: must be 1",
                "resources[1].name: Duplicate value: \"cpu\"",
            ]
        );
    }
}
