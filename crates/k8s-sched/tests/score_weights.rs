//! Score weights of a KubeSchedulerConfiguration as upstream treats them (validation.go has no
//! rule for plugin weights; framework.go `getScoreWeights` turns 0 into 1 and guards the total
//! with Go's wrapping int64 arithmetic, so a negative weight is accepted unless the running
//! total of `weight * 100` goes below 0 before a later Score plugin).

use k8s_sched::{KubeSchedulerConfiguration, Scheduler};

fn weights(yaml: &str) -> Result<Vec<(String, i64)>, String> {
    let cfg = KubeSchedulerConfiguration::from_yaml(yaml).map_err(|e| e.to_string())?;
    let s = Scheduler::new(cfg).map_err(|e| e.to_string())?;
    Ok(s.profile("default-scheduler")
        .map(|f| f.score_weights())
        .unwrap_or_default())
}

/// score.enabled = TaintToleration 3, NodeAffinity 2, NodeResourcesFit -4: running totals
/// 300, 500, 100, then the default MultiPoint Score plugins (VolumeBinding 1 -> 200,
/// PodTopologySpread 2 -> 400, InterPodAffinity 2 -> 600, DynamicResources 1 -> 700,
/// NodeResourcesBalancedAllocation 1 -> 800, ImageLocality 1 -> 900): never negative,
/// accepted, -4 used as is; weight 0 -> 1.
#[test]
fn negative_weight_is_accepted_while_the_running_total_stays_non_negative() {
    let yaml = r#"
profiles:
- schedulerName: default-scheduler
  plugins:
    score:
      enabled:
      - {name: TaintToleration, weight: 3}
      - {name: NodeAffinity, weight: 2}
      - {name: NodeResourcesFit, weight: -4}
      - {name: ImageLocality, weight: 0}
"#;
    let mut w = weights(yaml).unwrap();
    w.sort();
    assert_eq!(
        w,
        vec![
            ("DynamicResources".to_string(), 1),
            ("ImageLocality".to_string(), 1),
            ("InterPodAffinity".to_string(), 2),
            ("NodeAffinity".to_string(), 2),
            ("NodeResourcesBalancedAllocation".to_string(), 1),
            ("NodeResourcesFit".to_string(), -4),
            ("PodTopologySpread".to_string(), 2),
            ("TaintToleration".to_string(), 3),
        ]
    );
}

/// score.enabled = ImageLocality -1: running total -100, then TaintToleration (the first
/// default MultiPoint Score plugin): MaxInt64 - (-100) wraps to MinInt64 + 99 < 300, upstream's
/// "total score of Score plugins could overflow".
#[test]
fn negative_running_total_before_another_score_plugin_is_rejected_as_upstream() {
    let yaml = r#"
profiles:
- schedulerName: default-scheduler
  plugins:
    score:
      enabled:
      - {name: ImageLocality, weight: -1}
"#;
    assert_eq!(
        weights(yaml).unwrap_err(),
        "profiles[0]: total score of Score plugins could overflow"
    );
}
