//! Scheduler configuration through the public API: YAML profiles, validation errors with field
//! paths, not-yet-implemented plugins, multiple profiles, and an out-of-tree plugin registered
//! from this crate (proof that the framework traits are object-safe and usable from outside).

use std::sync::Arc;

use k8s_sched::config::Plugin as PluginRef;
use k8s_sched::{ConfigError, KubeSchedulerConfiguration, PluginArgs, Registry, Scheduler};
use k8s_sched_framework::{CycleState, FilterPlugin, NodeInfo, Plugin, Status};
use k8s_testing::{node, pod, FakeApi};
use k8s_types::core::Pod;

#[test]
fn unsupported_scoring_strategy_names_the_field_path() {
    let yaml = r#"
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: Foo
"#;
    let cfg = KubeSchedulerConfiguration::from_yaml(yaml).unwrap();
    let err = Scheduler::new(cfg).unwrap_err();
    assert_eq!(
        err.to_string(),
        "profiles[0].pluginConfig[0].args.scoringStrategy.type: Unsupported value: \"Foo\": supported values: \"LeastAllocated\", \"MostAllocated\", \"RequestedToCapacityRatio\""
    );
}

#[test]
fn bad_arg_types_name_the_field_path() {
    let yaml = r#"
profiles:
- pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
        resources:
        - name: cpu
          weight: heavy
"#;
    let cfg = KubeSchedulerConfiguration::from_yaml(yaml).unwrap();
    match Scheduler::new(cfg).unwrap_err() {
        ConfigError::Decode { path, .. } => assert_eq!(
            path,
            "profiles[0].pluginConfig[0].args.scoringStrategy.resources[0].weight"
        ),
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn unknown_plugins_are_rejected_and_unimplemented_ones_skipped() {
    let mut cfg = KubeSchedulerConfiguration::default();
    let mut plugins = k8s_sched::config::Plugins::default();
    plugins
        .filter
        .enabled
        .push(PluginRef::named("NoSuchPlugin"));
    cfg.profiles[0].plugins = Some(plugins);
    assert_eq!(
        Scheduler::new(cfg).unwrap_err().to_string(),
        "profiles[0].plugins.filter.enabled[0].name: FilterPlugin \"NoSuchPlugin\" does not exist"
    );

    let mut cfg = KubeSchedulerConfiguration::default();
    let mut plugins = k8s_sched::config::Plugins::default();
    plugins
        .score
        .enabled
        .push(PluginRef::weighted("ImageLocality", 5));
    cfg.profiles[0].plugins = Some(plugins);
    let s = Scheduler::new(cfg).unwrap();
    let fwk = s.profile("default-scheduler").unwrap();
    // Upstream default weights; a plugin also enabled at Score comes first (upstream
    // expandMultiPointPlugins) with its Score weight; unimplemented plugins are absent.
    assert_eq!(
        fwk.score_weights(),
        vec![
            ("ImageLocality".to_string(), 5),
            ("TaintToleration".to_string(), 3),
            ("NodeAffinity".to_string(), 2),
            ("NodeResourcesFit".to_string(), 1),
            ("PodTopologySpread".to_string(), 2),
            ("InterPodAffinity".to_string(), 2),
            // v1.35's prioritized-list Score (default weight 1).
            ("DynamicResources".to_string(), 1),
            ("NodeResourcesBalancedAllocation".to_string(), 1),
        ]
    );
    assert!(k8s_sched::plugins::NOT_YET_IMPLEMENTED.contains(&"VolumeBinding"));
}

#[test]
fn default_profile_extension_points() {
    let s = Scheduler::new(KubeSchedulerConfiguration::default()).unwrap();
    let fwk = s.profile("default-scheduler").unwrap();
    use k8s_sched::ExtensionPoint as E;
    assert_eq!(fwk.plugin_names(E::QueueSort), vec!["PrioritySort"]);
    assert_eq!(
        fwk.plugin_names(E::Filter),
        vec![
            "NodeUnschedulable",
            "NodeName",
            "TaintToleration",
            "NodeAffinity",
            "NodePorts",
            "NodeResourcesFit",
            "PodTopologySpread",
            "InterPodAffinity",
            // v1.34+: DynamicResources before DefaultPreemption (getDefaultPlugins).
            "DynamicResources"
        ]
    );
    assert_eq!(
        fwk.plugin_names(E::PostFilter),
        vec!["DefaultPreemption", "Coscheduling"]
    );
    assert_eq!(fwk.plugin_names(E::Permit), vec!["Coscheduling"]);
    assert_eq!(fwk.plugin_names(E::Bind), vec!["DefaultBinder"]);
    assert_eq!(fwk.plugin_names(E::PreBind), vec!["DynamicResources"]);
}

#[test]
fn balanced_preset_disables_fit_scoring_only() {
    let s = Scheduler::new(KubeSchedulerConfiguration::preset("balanced").unwrap()).unwrap();
    let fwk = s.profile("default-scheduler").unwrap();
    use k8s_sched::ExtensionPoint as E;
    assert!(!fwk
        .plugin_names(E::Score)
        .contains(&"NodeResourcesFit".to_string()));
    assert!(fwk
        .plugin_names(E::Filter)
        .contains(&"NodeResourcesFit".to_string()));
    assert!(fwk
        .plugin_names(E::Score)
        .contains(&"NodeResourcesBalancedAllocation".to_string()));
}

#[test]
fn second_profile_schedules_only_its_pods() {
    let yaml = r#"
profiles:
- schedulerName: default-scheduler
- schedulerName: packer
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
"#;
    let cfg = KubeSchedulerConfiguration::from_yaml(yaml).unwrap();
    let mut s = Scheduler::new(cfg).unwrap();
    let mut api = FakeApi::new();
    api.add(node("a", "4", "8Gi", &[]));
    api.add(node("b", "4", "8Gi", &[]));
    let mut seed = pod("seed", "1", "1Gi", &[]);
    seed.spec.node_name = Some("a".into());
    api.add(seed);
    let mut packed = pod("packed", "500m", "512Mi", &[]);
    packed.spec.scheduler_name = Some("packer".into());
    api.add(packed);
    let mut other = pod("other", "500m", "512Mi", &[]);
    other.spec.scheduler_name = Some("someone-else".into());
    api.add(other);
    s.schedule(&mut api);
    assert_eq!(api.pod("packed").node_name(), Some("a"));
    assert_eq!(api.pod("other").node_name(), None);
    let ev = api
        .events()
        .into_iter()
        .find(|e| e.reason == "Scheduled")
        .unwrap();
    assert_eq!(ev.source.component, "packer");
}

/// An out-of-tree Filter plugin: only nodes labelled `tier=gold`.
struct GoldOnly;

impl Plugin for GoldOnly {
    fn name(&self) -> &str {
        "GoldOnly"
    }
    fn as_filter(&self) -> Option<&dyn FilterPlugin> {
        Some(self)
    }
}

impl FilterPlugin for GoldOnly {
    fn filter(&self, _state: &CycleState, _pod: &Pod, node: &NodeInfo) -> Status {
        if node.node().metadata.labels.get("tier").map(String::as_str) == Some("gold") {
            Status::success()
        } else {
            Status::unresolvable("node(s) are not gold")
        }
    }
}

#[test]
fn out_of_tree_plugin_is_registered_and_enabled_by_name() {
    let mut registry = Registry::new();
    registry
        .register(
            "GoldOnly",
            Box::new(
                |_: &PluginArgs<'_>| -> Result<Arc<dyn Plugin>, ConfigError> {
                    Ok(Arc::new(GoldOnly))
                },
            ),
        )
        .unwrap();
    let mut cfg = KubeSchedulerConfiguration::default();
    let mut plugins = k8s_sched::config::Plugins::default();
    plugins
        .multi_point
        .enabled
        .push(PluginRef::named("GoldOnly"));
    cfg.profiles[0].plugins = Some(plugins);
    let mut s = Scheduler::with_registry(cfg, registry).unwrap();

    let mut api = FakeApi::new();
    let mut gold = node("z-gold", "1", "1Gi", &[]);
    gold.metadata.labels.insert("tier".into(), "gold".into());
    api.add(node("a-plain", "8", "16Gi", &[]));
    api.add(gold);
    api.add(pod("p", "500m", "256Mi", &[]));
    api.add(pod("q", "800m", "256Mi", &[]));
    s.schedule(&mut api);
    assert_eq!(api.pod("p").node_name(), Some("z-gold"));
    assert_eq!(
        api.pod_event_messages("q", "FailedScheduling"),
        vec!["0/2 nodes are available: 1 Insufficient cpu, 1 node(s) are not gold. preemption: 0/2 nodes are available: 1 No preemption victims found for incoming pod, 1 Preemption is not helpful for scheduling."]
    );

    // A name clash with an in-tree plugin is refused.
    let mut clash = Registry::new();
    clash
        .register(
            "NodeName",
            Box::new(
                |_: &PluginArgs<'_>| -> Result<Arc<dyn Plugin>, ConfigError> {
                    Ok(Arc::new(GoldOnly))
                },
            ),
        )
        .unwrap();
    assert_eq!(
        Scheduler::with_registry(KubeSchedulerConfiguration::default(), clash)
            .unwrap_err()
            .to_string(),
        "a plugin named NodeName already exists"
    );
}

/// `podInitialBackoffSeconds` / `podMaxBackoffSeconds` from a KubeSchedulerConfiguration reach
/// the scheduling queue (upstream `NewSchedulingQueue(WithPodInitialBackoffDuration, ...)`);
/// unset, upstream's 1 s and 10 s.
#[test]
fn backoff_durations_come_from_the_configuration() {
    let yaml = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\npodInitialBackoffSeconds: 2\npodMaxBackoffSeconds: 4\n";
    let cfg = KubeSchedulerConfiguration::from_yaml(yaml).expect("parses");
    let s = Scheduler::new(cfg).expect("valid");
    let b = s.pod_backoff();
    assert_eq!((b.initial, b.max), (2, 4));
    let s = Scheduler::new(KubeSchedulerConfiguration::default()).expect("valid");
    let b = s.pod_backoff();
    assert_eq!((b.initial, b.max), (1, 10));
}

/// Upstream `validatePluginConfig` reports every pluginConfig entry's errors together, in
/// pluginConfig order: DefaultPreemption's two zero minimums and InterPodAffinity's weight.
#[test]
fn every_plugin_args_error_is_reported_together() {
    let yaml = concat!(
        "apiVersion: kubescheduler.config.k8s.io/v1\n",
        "kind: KubeSchedulerConfiguration\n",
        "profiles:\n",
        "- schedulerName: default-scheduler\n",
        "  pluginConfig:\n",
        "  - name: DefaultPreemption\n",
        "    args: {minCandidateNodesPercentage: 0, minCandidateNodesAbsolute: 0}\n",
        "  - name: InterPodAffinity\n",
        "    args: {hardPodAffinityWeight: 101}\n",
    );
    let cfg = KubeSchedulerConfiguration::from_yaml(yaml).expect("parses");
    let err = match Scheduler::new(cfg) {
        Ok(_) => panic!("the configuration is rejected"),
        Err(e) => e.to_string(),
    };
    assert_eq!(
        err,
        "[profiles[0].pluginConfig[0].args.minCandidateNodesPercentage: Invalid value: 0: cannot be zero at the same time as minCandidateNodesAbsolute, profiles[0].pluginConfig[0].args.minCandidateNodesAbsolute: Invalid value: 0: cannot be zero at the same time as minCandidateNodesPercentage, profiles[0].pluginConfig[1].args.hardPodAffinityWeight: Invalid value: 101: not in valid range [0, 100]]"
    );
}

/// Upstream's framework reports the first unknown plugin in its extension-point order (Filter
/// before Score, whatever the file's order), then multiPoint names as the first extension point
/// they expand into: `<interface> "<name>" does not exist`.
#[test]
fn unknown_plugins_are_reported_in_upstreams_order() {
    let err = |yaml: &str| match Scheduler::new(
        KubeSchedulerConfiguration::from_yaml(yaml).expect("parses"),
    ) {
        Ok(_) => panic!("rejected"),
        Err(e) => e.to_string(),
    };
    let head = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- schedulerName: default-scheduler\n  plugins:\n";
    assert_eq!(
        err(&format!(
            "{head}    score:\n      enabled: [{{name: NopeScore}}]\n    filter:\n      enabled: [{{name: NopeFilter}}]\n"
        )),
        "profiles[0].plugins.filter.enabled[0].name: FilterPlugin \"NopeFilter\" does not exist"
    );
    assert_eq!(
        err(&format!(
            "{head}    multiPoint:\n      enabled: [{{name: Nope}}]\n"
        )),
        "profiles[0].plugins.multiPoint.enabled[0].name: PreFilterPlugin \"Nope\" does not exist"
    );
}
