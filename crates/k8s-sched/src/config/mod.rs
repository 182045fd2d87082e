//! `KubeSchedulerConfiguration` (`kubescheduler.config.k8s.io/v1`), read from YAML as upstream
//! kube-scheduler reads `--config`: profiles with per-extension-point plugin sets, per-plugin args
//! and `percentageOfNodesToScore`. Mirrors upstream
//! `staging/src/k8s.io/kube-scheduler/config/v1/types.go`, `types_pluginargs.go`, and
//! `pkg/scheduler/apis/config/v1/defaults.go` / `default_plugins.go`. Unknown fields are ignored.
//!
//! Submodules: [`args`] (typed plugin args with their defaults and validation; PodTopologySpread's
//! and InterPodAffinity's in [`pod_topology_spread_args`] and [`inter_pod_affinity_args`]),
//! `default_plugins` (the default profile and upstream's merge of custom plugin sets),
//! `validation` (defaulting and validation of the whole configuration).

pub mod args;
pub(crate) mod default_plugins;
pub mod inter_pod_affinity_args;
pub(crate) mod label_key;
pub mod pod_topology_spread_args;
pub(crate) mod score_weights;
pub(crate) mod validation;

use serde::{Deserialize, Serialize};

use crate::plugins::names;
use k8s_sched_framework::{ConfigError, ExtensionPoint};

/// The GPU policies' target workload (FGDScore's and GpuShare's `typicalPods` args), defined
/// next to the fragmentation measure that reads it (`plugins/gpu/frag.rs`).
pub use crate::plugins::gpu::frag::{TypicalPod, TypicalPodArgs};
pub use args::{
    CoschedulingArgs, DefaultPreemptionArgs, NodeResourcesBalancedAllocationArgs,
    NodeResourcesFitArgs, RequestedToCapacityRatioParam, ResourceSpec, ScoringStrategy,
    UtilizationShapePoint,
};
pub use inter_pod_affinity_args::InterPodAffinityArgs;
pub use pod_topology_spread_args::{DefaultConstraint, PodTopologySpreadArgs};

/// `kubescheduler.config.k8s.io/v1`.
pub const API_VERSION: &str = "kubescheduler.config.k8s.io/v1";
/// `KubeSchedulerConfiguration`.
pub const KIND: &str = "KubeSchedulerConfiguration";
/// The scheduler name of the default profile (upstream `v1.DefaultSchedulerName`).
pub const DEFAULT_SCHEDULER_NAME: &str = k8s_types::core::DEFAULT_SCHEDULER_NAME;

/// Upstream `KubeSchedulerConfiguration` (the fields the simulation acts on).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct KubeSchedulerConfiguration {
    /// `kubescheduler.config.k8s.io/v1`.
    #[serde(default)]
    pub api_version: String,
    /// `KubeSchedulerConfiguration`.
    #[serde(default)]
    pub kind: String,
    /// Percentage (0-100) of nodes to find feasible before scoring; 0 or unset = upstream's
    /// adaptive default (50% minus 1% per 125 nodes, at least 5%, never fewer than 100 nodes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub percentage_of_nodes_to_score: Option<i32>,
    /// Upstream `parallelism` (default 16): validated (greater than 0) but without effect, as
    /// k8s-mini filters and scores on one thread.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parallelism: Option<i32>,
    /// Initial backoff of a pod that failed scheduling, in seconds (ticks); default 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod_initial_backoff_seconds: Option<i64>,
    /// Maximum backoff, in seconds (ticks); default 10.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod_max_backoff_seconds: Option<i64>,
    /// Scheduling profiles; one per schedulerName. Empty = one default profile.
    #[serde(default)]
    pub profiles: Vec<KubeSchedulerProfile>,
    /// k8s-mini's stand-in for kube-scheduler's `--feature-gates` flag (not a field of upstream's
    /// configuration file): gate name -> enabled. Read: `GenericWorkload` and `GangScheduling`
    /// (both alpha and off by default in v1.36); with both on, GangScheduling is a default
    /// plugin and gangs go through v1.36's PodGroup scheduling cycle; k8s-mini's
    /// `PodGroupSchedulingCycle: false` keeps v1.35's Permit-only path. Other names are ignored.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub feature_gates: std::collections::BTreeMap<String, bool>,
}

impl KubeSchedulerConfiguration {
    /// Both `GenericWorkload` and `GangScheduling` are enabled (upstream: `GangScheduling` depends
    /// on `GenericWorkload`; neither is on by default in v1.36).
    pub fn gang_scheduling_enabled(&self) -> bool {
        let on = |g: &str| self.feature_gates.get(g).copied().unwrap_or(false);
        on("GenericWorkload") && on("GangScheduling")
    }

    /// Gangs go through v1.36's PodGroup scheduling cycle (KEP-4671, upstream
    /// `schedule_one_podgroup.go`) whenever gang scheduling is enabled, as upstream v1.36 runs it
    /// whenever `GenericWorkload` is on (it has no gate of its own). k8s-mini's own gate
    /// `PodGroupSchedulingCycle: false` emulates v1.35's Permit-only path instead, to compare the
    /// two (docs/gangs.md, docs/fidelity.md GangScheduling).
    pub fn pod_group_cycle_enabled(&self) -> bool {
        self.gang_scheduling_enabled()
            && self
                .feature_gates
                .get(POD_GROUP_SCHEDULING_CYCLE)
                .copied()
                .unwrap_or(true)
    }
}

/// k8s-mini's switch for the PodGroup scheduling cycle, on unless set false (see
/// [`KubeSchedulerConfiguration::pod_group_cycle_enabled`]).
pub const POD_GROUP_SCHEDULING_CYCLE: &str = "PodGroupSchedulingCycle";

/// Upstream `KubeSchedulerProfile`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct KubeSchedulerProfile {
    /// Pods whose `spec.schedulerName` equals this are scheduled by this profile. Defaulted to
    /// `default-scheduler` when there is a single profile.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheduler_name: Option<String>,
    /// Overrides the global percentageOfNodesToScore for this profile.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub percentage_of_nodes_to_score: Option<i32>,
    /// Plugin sets merged into the default ones (enabled appended or replacing in place, disabled
    /// removed, `*` disables all defaults of that extension point).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plugins: Option<Plugins>,
    /// Per-plugin args.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub plugin_config: Vec<PluginConfig>,
}

/// Upstream `Plugins`: one [`PluginSet`] per extension point, plus `multiPoint`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Plugins {
    /// PreEnqueue.
    #[serde(default)]
    pub pre_enqueue: PluginSet,
    /// QueueSort.
    #[serde(default)]
    pub queue_sort: PluginSet,
    /// PreFilter.
    #[serde(default)]
    pub pre_filter: PluginSet,
    /// Filter.
    #[serde(default)]
    pub filter: PluginSet,
    /// PostFilter.
    #[serde(default)]
    pub post_filter: PluginSet,
    /// PreScore.
    #[serde(default)]
    pub pre_score: PluginSet,
    /// Score.
    #[serde(default)]
    pub score: PluginSet,
    /// Reserve.
    #[serde(default)]
    pub reserve: PluginSet,
    /// Permit.
    #[serde(default)]
    pub permit: PluginSet,
    /// PreBind.
    #[serde(default)]
    pub pre_bind: PluginSet,
    /// Bind.
    #[serde(default)]
    pub bind: PluginSet,
    /// PostBind.
    #[serde(default)]
    pub post_bind: PluginSet,
    /// Plugins enabled at every extension point they implement.
    #[serde(default)]
    pub multi_point: PluginSet,
}

impl Plugins {
    /// The plugin set of this extension point.
    pub fn set(&self, point: ExtensionPoint) -> &PluginSet {
        let p = self;
        match point {
            ExtensionPoint::PreEnqueue => &p.pre_enqueue,
            ExtensionPoint::QueueSort => &p.queue_sort,
            ExtensionPoint::PreFilter => &p.pre_filter,
            ExtensionPoint::Filter => &p.filter,
            ExtensionPoint::PostFilter => &p.post_filter,
            ExtensionPoint::PreScore => &p.pre_score,
            ExtensionPoint::Score => &p.score,
            ExtensionPoint::Reserve => &p.reserve,
            ExtensionPoint::Permit => &p.permit,
            ExtensionPoint::PreBind => &p.pre_bind,
            ExtensionPoint::Bind => &p.bind,
            ExtensionPoint::PostBind => &p.post_bind,
        }
    }
}

/// Upstream `PluginSet`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PluginSet {
    /// Plugins to enable, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub enabled: Vec<Plugin>,
    /// Default plugins to disable; `*` disables all defaults of the extension point.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub disabled: Vec<Plugin>,
}

/// Upstream config `Plugin`: a name and, for Score, a weight.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Plugin {
    /// Registry name.
    pub name: String,
    /// Score weight (unset or 0 = 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weight: Option<i32>,
}

impl Plugin {
    /// A plugin reference without weight.
    pub fn named(name: &str) -> Plugin {
        Plugin {
            name: name.to_string(),
            weight: None,
        }
    }

    /// A plugin reference with a score weight.
    pub fn weighted(name: &str, weight: i32) -> Plugin {
        Plugin {
            name: name.to_string(),
            weight: Some(weight),
        }
    }
}

/// Upstream `PluginConfig`: args for one plugin, kept as JSON until the plugin decodes them.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PluginConfig {
    /// Plugin name.
    pub name: String,
    /// Args, e.g. `NodeResourcesFitArgs`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub args: Option<serde_json::Value>,
}

impl Default for KubeSchedulerConfiguration {
    /// Upstream's default: one profile `default-scheduler` with the default plugins.
    fn default() -> KubeSchedulerConfiguration {
        KubeSchedulerConfiguration {
            api_version: API_VERSION.to_string(),
            kind: KIND.to_string(),
            percentage_of_nodes_to_score: None,
            parallelism: None,
            pod_initial_backoff_seconds: None,
            pod_max_backoff_seconds: None,
            profiles: vec![KubeSchedulerProfile {
                scheduler_name: Some(DEFAULT_SCHEDULER_NAME.to_string()),
                ..Default::default()
            }],
            feature_gates: std::collections::BTreeMap::new(),
        }
    }
}

impl KubeSchedulerConfiguration {
    /// Reads a configuration from YAML; unknown fields are ignored.
    ///
    /// # Errors
    /// [`ConfigError::Decode`] with the field path of the offending value.
    pub fn from_yaml(yaml: &str) -> Result<KubeSchedulerConfiguration, ConfigError> {
        let de = serde_yaml::Deserializer::from_str(yaml);
        serde_path_to_error::deserialize(de).map_err(|e| ConfigError::Decode {
            path: e.path().to_string(),
            message: e.inner().to_string(),
        })
    }

    /// A named preset, all on the single profile `default-scheduler`:
    /// - `default`: upstream's default profile (plus Coscheduling, see the crate docs);
    /// - `spread`: NodeResourcesFit scoring `LeastAllocated` (cpu:1, memory:1), upstream's default
    ///   strategy spelled out;
    /// - `binpack`: NodeResourcesFit scoring `MostAllocated` (cpu:1, memory:1);
    /// - `balanced`: NodeResourcesFit scoring disabled, so NodeResourcesBalancedAllocation is the
    ///   only resource-based score.
    ///
    /// `None` for any other name.
    pub fn preset(name: &str) -> Option<KubeSchedulerConfiguration> {
        let mut cfg = KubeSchedulerConfiguration::default();
        let profile = &mut cfg.profiles[0];
        match name {
            "default" => {}
            "spread" | "binpack" => {
                let strategy = if name == "spread" {
                    args::LEAST_ALLOCATED
                } else {
                    args::MOST_ALLOCATED
                };
                profile.plugin_config.push(PluginConfig {
                    name: names::NODE_RESOURCES_FIT.to_string(),
                    args: Some(serde_json::json!({
                        "scoringStrategy": {
                            "type": strategy,
                            "resources": [
                                {"name": "cpu", "weight": 1},
                                {"name": "memory", "weight": 1}
                            ]
                        }
                    })),
                });
            }
            "balanced" => {
                let mut plugins = Plugins::default();
                plugins
                    .score
                    .disabled
                    .push(Plugin::named(names::NODE_RESOURCES_FIT));
                profile.plugins = Some(plugins);
            }
            _ => return None,
        }
        Some(cfg)
    }

    /// The preset names [`KubeSchedulerConfiguration::preset`] knows.
    pub const PRESETS: [&'static str; 4] = ["default", "spread", "binpack", "balanced"];
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_upstream_yaml_ignoring_unknown_fields() {
        let yaml = r#"
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: /etc/kubernetes/scheduler.conf
percentageOfNodesToScore: 50
profiles:
- schedulerName: default-scheduler
  plugins:
    score:
      disabled:
      - name: '*'
      enabled:
      - name: NodeResourcesFit
        weight: 5
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: RequestedToCapacityRatio
        resources:
        - name: nvidia.com/gpu
          weight: 3
        requestedToCapacityRatio:
          shape:
          - utilization: 0
            score: 0
          - utilization: 100
            score: 10
"#;
        let cfg = KubeSchedulerConfiguration::from_yaml(yaml).unwrap();
        assert_eq!(cfg.percentage_of_nodes_to_score, Some(50));
        let p = &cfg.profiles[0];
        let plugins = p.plugins.as_ref().unwrap();
        assert_eq!(plugins.score.disabled[0].name, "*");
        assert_eq!(plugins.score.enabled[0].weight, Some(5));
        let args = p.plugin_config[0].args.as_ref().unwrap();
        assert_eq!(args["scoringStrategy"]["type"], "RequestedToCapacityRatio");
    }

    #[test]
    fn decode_errors_name_the_field_path() {
        let yaml = "profiles:\n- schedulerName: a\n  plugins:\n    score:\n      enabled:\n      - name: X\n        weight: heavy\n";
        let err = KubeSchedulerConfiguration::from_yaml(yaml).unwrap_err();
        let text = err.to_string();
        assert!(
            text.starts_with("profiles[0].plugins.score.enabled[0].weight: "),
            "{text}"
        );
    }

    #[test]
    fn presets_exist_and_unknown_is_none() {
        for name in KubeSchedulerConfiguration::PRESETS {
            assert!(KubeSchedulerConfiguration::preset(name).is_some(), "{name}");
        }
        assert!(KubeSchedulerConfiguration::preset("fastest").is_none());
        let d = KubeSchedulerConfiguration::default();
        assert_eq!(
            d.profiles[0].scheduler_name.as_deref(),
            Some("default-scheduler")
        );
    }
}
