//! k8s-sched used alone: Nodes and Pods built in memory and scheduled by kube-scheduler's default
//! profile plus an out-of-tree Score plugin (`PreferNodeLabel`, defined here) that is registered
//! through `Registry::register` and enabled, with a weight and args, by a
//! `KubeSchedulerConfiguration` profile (upstream: an out-of-tree plugin registered with
//! `app.WithPlugin` and enabled in the scheduler's config file). Depends only on `k8s-types` and
//! `k8s-sched` (plus serde's derive for the plugin args).
//!
//! No apiserver: the scheduler's detached mode takes the objects directly
//! (`Scheduler::add_node`, `Scheduler::schedule_one`) and runs upstream's scheduling and binding
//! cycle against the same cache as the tick loop. To run it against an apiserver instead, give
//! [`Scheduler::schedule`] any `k8s_types::apiserver::ApiClient`.
//!
//! Run with `cargo run -p k8s-sched --example schedule_pods`. It asserts the placements, and
//! `cargo test -p k8s-sched` runs it too (`test = true` in Cargo.toml):
//! - node-a and node-b both have 2 CPU and 8Gi; only node-b has `disktype=ssd`;
//! - web-0 and web-1 (800m CPU each) go to node-b: PreferNodeLabel adds 100 x weight 5 = 500 to
//!   node-b's total, more than the default plugins can take back (NodeResourcesFit and
//!   NodeResourcesBalancedAllocation have weight 1 and score at most 100 each);
//! - web-2 no longer fits on node-b (3 x 800m > 2000m: `NodeResourcesFit: Insufficient cpu`)
//!   and goes to node-a.

use std::sync::Arc;

use k8s_sched::explain::PodKey;
use k8s_sched::{ConfigError, KubeSchedulerConfiguration, PluginArgs, Registry, Scheduler};
use k8s_sched_framework::{CycleState, NodeInfo, Plugin, ScorePlugin, Status, MAX_NODE_SCORE};
use k8s_types::core::{Container, Node, Pod, ResourceList};
use k8s_types::Quantity;

/// Name under which the plugin is registered and enabled.
const PREFER_NODE_LABEL: &str = "PreferNodeLabel";

/// `pluginConfig` args of PreferNodeLabel.
#[derive(Clone, Debug, Default, serde::Deserialize)]
struct PreferNodeLabelArgs {
    /// The label key nodes should have.
    key: String,
    /// The value it should have.
    value: String,
}

/// A Score plugin: 100 on nodes labelled `key=value`, 0 elsewhere (no NormalizeScore needed).
struct PreferNodeLabel {
    args: PreferNodeLabelArgs,
}

impl Plugin for PreferNodeLabel {
    fn name(&self) -> &str {
        PREFER_NODE_LABEL
    }
    fn as_score(&self) -> Option<&dyn ScorePlugin> {
        Some(self)
    }
}

impl ScorePlugin for PreferNodeLabel {
    fn score(&self, _state: &CycleState, _pod: &Pod, node: &NodeInfo) -> Result<i64, Status> {
        let labels = &node.node().metadata.labels;
        let has = labels
            .get(&self.args.key)
            .is_some_and(|v| *v == self.args.value);
        Ok(if has { MAX_NODE_SCORE } else { 0 })
    }
}

/// The plugin's factory: decodes its `pluginConfig` args (errors carry the field path).
fn prefer_node_label(a: &PluginArgs<'_>) -> Result<Arc<dyn Plugin>, ConfigError> {
    let args: PreferNodeLabelArgs = a.decode()?;
    Ok(Arc::new(PreferNodeLabel { args }))
}

/// The default profile plus PreferNodeLabel at Score with weight 5.
const CONFIG: &str = r#"
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    score:
      enabled:
      - name: PreferNodeLabel
        weight: 5
  pluginConfig:
  - name: PreferNodeLabel
    args: {key: disktype, value: ssd}
"#;

fn resources(list: &[(&str, &str)]) -> ResourceList {
    let mut r = ResourceList::new();
    for (name, value) in list {
        let q = Quantity::parse(value).expect("constant quantities are valid");
        r.insert((*name).to_string(), q);
    }
    r
}

fn node(name: &str, labels: &[(&str, &str)]) -> Node {
    let mut n = Node::default();
    n.metadata.name = name.into();
    for (k, v) in labels {
        n.metadata.labels.insert((*k).into(), (*v).into());
    }
    n.status.capacity = resources(&[("cpu", "2"), ("memory", "8Gi"), ("pods", "110")]);
    n.status.allocatable = n.status.capacity.clone();
    n
}

fn pod(name: &str, cpu: &str, memory: &str) -> Pod {
    let mut p = Pod::default();
    p.metadata.name = name.into();
    p.metadata.namespace = Some("default".into());
    p.metadata.uid = Some(format!("uid-{name}"));
    let mut c = Container {
        name: "app".into(),
        image: "nginx:1.27".into(),
        ..Default::default()
    };
    c.resources.requests = resources(&[("cpu", cpu), ("memory", memory)]).into();
    p.spec.containers.push(c);
    p
}

fn main() {
    let mut registry = Registry::new();
    registry
        .register(PREFER_NODE_LABEL, Box::new(prefer_node_label))
        .expect("a fresh registry has no PreferNodeLabel yet");
    let config = KubeSchedulerConfiguration::from_yaml(CONFIG).expect("valid configuration");
    let mut scheduler = Scheduler::with_registry(config, registry).expect("valid profile");
    // Keep the Filter and Score details of web-1 (PreferNodeLabel's 500 shows in its table).
    scheduler.set_explain(Some(PodKey::new("default", "web-1")));

    scheduler.add_node(node("node-a", &[]));
    scheduler.add_node(node("node-b", &[("disktype", "ssd")]));
    let mut placements = Vec::new();
    for i in 0..3 {
        let result = scheduler.schedule_one(pod(&format!("web-{i}"), "800m", "1Gi"));
        println!("{} -> {:?}", result.pod, result.decision);
        let node = result.decision.bound_node().unwrap_or("<not bound>");
        placements.push((result.pod.clone(), node.to_string()));
    }
    println!();
    print!(
        "{}",
        k8s_sched::explain::render(&PodKey::new("default", "web-1"), scheduler.explanations())
    );

    let want: Vec<(String, String)> = [
        ("default/web-0", "node-b"),
        ("default/web-1", "node-b"),
        ("default/web-2", "node-a"),
    ]
    .iter()
    .map(|(p, n)| (p.to_string(), n.to_string()))
    .collect();
    assert_eq!(placements, want);
}

/// `cargo test -p k8s-sched` builds this example as a test (`test = true` in Cargo.toml) and runs
/// `main`, so its assertions are checked with the rest of the crate.
#[cfg(test)]
mod tests {
    #[test]
    fn placements_hold() {
        super::main();
    }
}
