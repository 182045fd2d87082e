//! An out-of-tree Filter plugin with k8s-sched used alone: `NodeMaintenance` rejects nodes
//! labelled `example.com/maintenance=true`, with its own reason, which then appears in the
//! upstream-format `FailedScheduling` message (`0/N nodes are available: ...`). Registered through
//! `Registry::register` and enabled at the `filter` extension point of the default profile by a
//! `KubeSchedulerConfiguration`; scheduled in detached mode (no apiserver). Depends only on
//! `k8s-types` and `k8s-sched`.
//!
//! Run with `cargo run -p k8s-sched --example custom_filter_plugin`; `cargo test -p k8s-sched`
//! runs it too. Two nodes: node-a (2 CPU) and node-b (4 CPU, under maintenance):
//! - small (500m) fits node-a and is bound there;
//! - big (2 CPU) fits no node: node-a lacks CPU while small runs (NodeResourcesFit,
//!   Unschedulable: preemption could help, but small has the same priority, so DefaultPreemption
//!   finds no victim), node-b is under maintenance (NodeMaintenance, UnschedulableAndUnresolvable:
//!   preemption is not helpful there). The message follows upstream's FitError and
//!   DefaultPreemption formats, reasons sorted as strings.

use std::sync::Arc;

use k8s_sched::{Decision, KubeSchedulerConfiguration, Registry, Scheduler};
use k8s_sched_framework::{CycleState, FilterPlugin, NodeInfo, Plugin, Status};
use k8s_types::core::{Container, Node, Pod, ResourceList};
use k8s_types::Quantity;

/// Name under which the plugin is registered and enabled.
const NODE_MAINTENANCE: &str = "NodeMaintenance";
/// The node label that marks a node under maintenance.
const MAINTENANCE_LABEL: &str = "example.com/maintenance";
/// The plugin's Filter reason (one `<count> <reason>` entry of FailedScheduling messages).
const REASON_UNDER_MAINTENANCE: &str = "node(s) were under maintenance";

/// A Filter plugin: nodes labelled `example.com/maintenance=true` do not fit any pod.
struct NodeMaintenance;

impl Plugin for NodeMaintenance {
    fn name(&self) -> &str {
        NODE_MAINTENANCE
    }
    fn as_filter(&self) -> Option<&dyn FilterPlugin> {
        Some(self)
    }
}

impl FilterPlugin for NodeMaintenance {
    fn filter(&self, _state: &CycleState, _pod: &Pod, node: &NodeInfo) -> Status {
        let labels = &node.node().metadata.labels;
        if labels.get(MAINTENANCE_LABEL).is_some_and(|v| v == "true") {
            // Waiting or preempting does not help: the node is out until the label goes.
            return Status::unresolvable(REASON_UNDER_MAINTENANCE);
        }
        Status::success()
    }
}

/// The default profile plus NodeMaintenance at Filter.
const CONFIG: &str = r#"
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    filter:
      enabled:
      - name: NodeMaintenance
"#;

fn resources(list: &[(&str, &str)]) -> ResourceList {
    let mut r = ResourceList::new();
    for (name, value) in list {
        let q = Quantity::parse(value).expect("constant quantities are valid");
        r.insert((*name).to_string(), q);
    }
    r
}

fn node(name: &str, cpu: &str, labels: &[(&str, &str)]) -> Node {
    let mut n = Node::default();
    n.metadata.name = name.into();
    for (k, v) in labels {
        n.metadata.labels.insert((*k).into(), (*v).into());
    }
    n.status.capacity = resources(&[("cpu", cpu), ("memory", "8Gi"), ("pods", "110")]);
    n.status.allocatable = n.status.capacity.clone();
    n
}

fn pod(name: &str, cpu: &str) -> Pod {
    let mut p = Pod::default();
    p.metadata.name = name.into();
    p.metadata.namespace = Some("default".into());
    p.metadata.uid = Some(format!("uid-{name}"));
    let mut c = Container {
        name: "app".into(),
        image: "busybox".into(),
        ..Default::default()
    };
    c.resources.requests = resources(&[("cpu", cpu), ("memory", "256Mi")]).into();
    p.spec.containers.push(c);
    p
}

fn main() {
    let mut registry = Registry::new();
    registry
        .register(
            NODE_MAINTENANCE,
            Box::new(|_args| Ok(Arc::new(NodeMaintenance) as Arc<dyn Plugin>)),
        )
        .expect("a fresh registry has no NodeMaintenance yet");
    let config = KubeSchedulerConfiguration::from_yaml(CONFIG).expect("valid configuration");
    let mut scheduler = Scheduler::with_registry(config, registry).expect("valid profile");

    scheduler.add_node(node("node-a", "2", &[]));
    scheduler.add_node(node("node-b", "4", &[(MAINTENANCE_LABEL, "true")]));

    let small = scheduler.schedule_one(pod("small", "500m"));
    println!("{} -> {:?}", small.pod, small.decision);
    let big = scheduler.schedule_one(pod("big", "2"));
    println!("{} -> {:?}", big.pod, big.decision);

    assert_eq!(small.decision.bound_node(), Some("node-a"));
    assert_eq!(
        big.decision,
        Decision::Unschedulable {
            message: "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) were under maintenance. \
                      preemption: 0/2 nodes are available: 1 No preemption victims found for incoming pod, \
                      1 Preemption is not helpful for scheduling."
                .to_string()
        }
    );
}

/// `cargo test -p k8s-sched` builds this example as a test (`test = true` in Cargo.toml) and runs
/// `main`, so its assertions are checked with the rest of the crate.
#[cfg(test)]
mod tests {
    #[test]
    fn outcomes_hold() {
        super::main();
    }
}
