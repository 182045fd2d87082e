//! PodTopologySpread, InterPodAffinity and ImageLocality in the default profile, through the
//! public API only (a `Scheduler` over a fake apiserver): spreading across zones with
//! `maxSkew: 1`, required pod anti-affinity per hostname with upstream's FailedScheduling text,
//! image locality breaking a resource tie, and plugin args validated with field paths.

use std::collections::BTreeMap;

use k8s_sched::{KubeSchedulerConfiguration, Scheduler};
use k8s_testing::{node, pod, FakeApi};
use k8s_types::core::{Affinity, PodAffinity, PodAffinityTerm, TopologySpreadConstraint};
use k8s_types::labels::LabelSelector;

fn scheduler() -> Scheduler {
    Scheduler::new(KubeSchedulerConfiguration::default()).unwrap()
}

fn app(v: &str) -> LabelSelector {
    LabelSelector::from_labels([("app", v)])
}

#[test]
fn six_pods_spread_two_per_zone_with_max_skew_one() {
    let mut api = FakeApi::new();
    for (n, zone) in [
        ("a1", "zone-a"),
        ("a2", "zone-a"),
        ("b1", "zone-b"),
        ("b2", "zone-b"),
        ("c1", "zone-c"),
        ("c2", "zone-c"),
    ] {
        let mut nd = node(n, "4", "8Gi", &[]);
        nd.metadata
            .labels
            .insert("topology.kubernetes.io/zone".into(), zone.into());
        api.add(nd);
    }
    for i in 0..6 {
        let mut p = pod(&format!("web-{i}"), "100m", "128Mi", &[]);
        p.metadata.labels.insert("app".into(), "web".into());
        p.spec
            .topology_spread_constraints
            .push(TopologySpreadConstraint {
                max_skew: 1,
                topology_key: "topology.kubernetes.io/zone".into(),
                when_unsatisfiable: "DoNotSchedule".into(),
                label_selector: Some(app("web")),
                ..Default::default()
            });
        api.add(p);
    }
    let mut s = scheduler();
    s.schedule(&mut api);
    let placement = api.placement();
    let mut per_zone: BTreeMap<char, usize> = BTreeMap::new();
    for (n, count) in &placement {
        *per_zone.entry(n.chars().next().unwrap()).or_default() += count;
    }
    assert_eq!(per_zone, BTreeMap::from([('a', 2), ('b', 2), ('c', 2)]));
    // Within a zone the soft system-default hostname spreading is not in play (the pods have
    // their own constraints), but LeastAllocated spreads them: one pod per node.
    assert!(placement.values().all(|c| *c == 1), "{placement:?}");
}

#[test]
fn required_anti_affinity_keeps_one_pod_per_node() {
    let mut api = FakeApi::new();
    for n in ["a", "b", "c"] {
        api.add(node(n, "4", "8Gi", &[]));
    }
    for i in 0..4 {
        let mut p = pod(&format!("db-{i}"), "100m", "128Mi", &[]);
        p.metadata.labels.insert("app".into(), "db".into());
        p.spec.affinity = Some(Affinity {
            pod_anti_affinity: Some(PodAffinity {
                required_during_scheduling_ignored_during_execution: vec![PodAffinityTerm {
                    label_selector: Some(app("db")),
                    topology_key: "kubernetes.io/hostname".into(),
                    ..Default::default()
                }],
                ..Default::default()
            }),
            ..Default::default()
        });
        api.add(p);
    }
    let mut s = scheduler();
    s.schedule(&mut api);
    assert_eq!(
        api.placement(),
        BTreeMap::from([("a".into(), 1), ("b".into(), 1), ("c".into(), 1)])
    );
    let want = "0/3 nodes are available: 3 node(s) didn't match pod anti-affinity rules. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.";
    assert_eq!(
        api.pod_event_messages("db-3", "FailedScheduling"),
        vec![want]
    );
}

#[test]
fn image_locality_breaks_a_resource_tie() {
    let mut api = FakeApi::new();
    // Two equal nodes: without ImageLocality the tie goes to the node whose name sorts last (b).
    let mut a = node("a", "4", "8Gi", &[]);
    a.status.images.push(serde_json::json!({
        "names": ["registry.example/model-server:v1"],
        "sizeBytes": 500 * 1024 * 1024
    }));
    api.add(a);
    api.add(node("b", "4", "8Gi", &[]));
    let mut p = pod("server", "100m", "128Mi", &[]);
    p.spec.containers[0].image = "registry.example/model-server:v1".into();
    api.add(p);
    let mut s = scheduler();
    s.schedule(&mut api);
    // 500 MiB on 1 of 2 nodes: 100 * (250 - 23) / (1000 - 23) = 23 points on node a.
    assert_eq!(api.pod("server").node_name(), Some("a"));
}

#[test]
fn plugin_args_are_validated_with_field_paths() {
    let yaml = r#"
profiles:
- schedulerName: default-scheduler
  pluginConfig:
  - name: InterPodAffinity
    args:
      hardPodAffinityWeight: 1
  - name: PodTopologySpread
    args:
      defaultConstraints:
      - maxSkew: 1
        topologyKey: topology.kubernetes.io/zone
        whenUnsatisfiable: ScheduleAnyway
"#;
    let cfg = KubeSchedulerConfiguration::from_yaml(yaml).unwrap();
    assert_eq!(
        Scheduler::new(cfg).unwrap_err().to_string(),
        "profiles[0].pluginConfig[1].args.defaultingType: Invalid value: \"System\": when .defaultConstraints are not empty"
    );
    let ok = yaml.replace(
        "      defaultConstraints:",
        "      defaultingType: List\n      defaultConstraints:",
    );
    let cfg = KubeSchedulerConfiguration::from_yaml(&ok).unwrap();
    assert!(Scheduler::new(cfg).is_ok());
}
