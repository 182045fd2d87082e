//! `--max-replicas POD_FILE`: how many copies of a pod the cluster can still take, as
//! kubernetes-sigs/cluster-capacity answers it (`pkg/simulator/...` `simulator.go`: create a copy,
//! let the scheduler place it, create the next; stop at the first copy whose `PodScheduled`
//! condition turns False with reason `Unschedulable`, the stop reason being `<reason>: <message>`;
//! or, with `--max-limit N`, after N copies: `LimitReached: Maximum number of pods simulated: N`).
//! The report reads as its `prettyPrint`: `The cluster can schedule N instance(s) of the pod
//! NAME.` then `Termination reason: ...`.
//!
//! Here the copies join the cluster the what-if run left (workload included), named
//! `<name>-<i>` from 1, in batches of [`BATCH`] per tick rather than one at a time: the copies are
//! identical, so once one fails every later one fails on the same snapshot, and the count of bound
//! copies before the first failure is the one-at-a-time count. A copy the apiserver refuses
//! (quota, admission) stops the count with `FailedCreate: <message>` (k8s-mini's wording; the
//! copies cluster-capacity creates bypass admission). Without `--max-limit` the count stops at
//! [`HARD_LIMIT`] copies, reported as `LimitReached` with that number.

use std::collections::BTreeMap;

use k8s_types::apiserver::ApiExt;
use k8s_types::core::Pod;
use k8s_types::object::Object;
use serde::Serialize;

use crate::cluster::Cluster;

/// Copies created per tick.
pub const BATCH: usize = 64;
/// The most copies counted without `--max-limit`.
pub const HARD_LIMIT: usize = 10_000;
/// Ticks without a decision on a copy before the count stops (`Timeout`).
const MAX_IDLE_TICKS: usize = 30;

/// cluster-capacity's answer.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MaxReplicas {
    /// The pod copied, `namespace/name`.
    pub pod: String,
    /// Copies bound.
    pub replicas: usize,
    /// `Unschedulable`, `LimitReached`, `FailedCreate` or `Timeout` (cluster-capacity's
    /// `failType`).
    pub fail_type: String,
    /// The rest of the stop reason (`failMessage`).
    pub fail_message: String,
    /// Copies per node.
    pub replicas_on_nodes: BTreeMap<String, usize>,
}

impl MaxReplicas {
    /// The report as cluster-capacity prints it.
    pub fn report(&self) -> String {
        let name = self.pod.split('/').next_back().unwrap_or(&self.pod);
        format!(
            "The cluster can schedule {} instance(s) of the pod {name}.\n\nTermination reason: {}: {}\n",
            self.replicas, self.fail_type, self.fail_message
        )
    }
}

fn copy(template: &Pod, i: usize) -> Pod {
    let mut p = Pod::default();
    p.metadata.name = format!("{}-{i}", template.metadata.name);
    p.metadata.namespace = template.metadata.namespace.clone();
    p.metadata.labels = template.metadata.labels.clone();
    p.metadata.annotations = template.metadata.annotations.clone();
    p.spec = template.spec.clone();
    p.spec.node_name = None;
    p
}

/// Counts the copies of `template` that `cluster` takes (see the module docs).
pub fn max_replicas(cluster: &mut Cluster, template: &Pod, max_limit: usize) -> MaxReplicas {
    let ns = match template.metadata.namespace() {
        "" => "default".to_string(),
        ns => ns.to_string(),
    };
    let limit = if max_limit > 0 { max_limit } else { HARD_LIMIT };
    let mut out = MaxReplicas {
        pod: format!("{ns}/{}", template.metadata.name),
        ..MaxReplicas::default()
    };
    let mut created = 0usize;
    let mut decided = 0usize;
    let mut idle = 0usize;
    let stop = |out: &mut MaxReplicas, t: &str, m: String| {
        out.fail_type = t.to_string();
        out.fail_message = m;
    };
    loop {
        if decided == created {
            if created >= limit {
                stop(
                    &mut out,
                    "LimitReached",
                    format!("Maximum number of pods simulated: {limit}"),
                );
                break;
            }
            let n = BATCH.min(limit - created);
            let mut refused = None;
            for _ in 0..n {
                let p = copy(template, created + 1);
                match cluster.api().create(Object::Pod(Box::new(p))) {
                    Ok(_) => created += 1,
                    Err(s) => {
                        refused = Some(s.message);
                        break;
                    }
                }
            }
            if let Some(m) = refused.filter(|_| decided == created) {
                stop(&mut out, "FailedCreate", m);
                break;
            }
        }
        cluster.begin_tick();
        cluster.tick();
        let before = decided;
        let mut failed = None;
        while decided < created {
            let name = format!("{}-{}", template.metadata.name, decided + 1);
            let Ok(p) = cluster.api_ref().get_typed::<Pod>(&ns, &name) else {
                failed = Some(("FailedCreate", format!("pod {ns}/{name} is gone")));
                break;
            };
            if let Some(node) = p.node_name() {
                out.replicas += 1;
                *out.replicas_on_nodes.entry(node.to_string()).or_insert(0) += 1;
                decided += 1;
                continue;
            }
            let unschedulable = p.status.conditions.iter().find(|c| {
                c.type_ == "PodScheduled"
                    && c.status == "False"
                    && c.reason.as_deref() == Some("Unschedulable")
            });
            if let Some(c) = unschedulable {
                failed = Some((
                    "Unschedulable",
                    c.message.as_deref().unwrap_or_default().to_string(),
                ));
            }
            break;
        }
        if let Some((t, m)) = failed {
            stop(&mut out, t, m);
            break;
        }
        idle = if decided == before { idle + 1 } else { 0 };
        if idle > MAX_IDLE_TICKS {
            stop(
                &mut out,
                "Timeout",
                format!("no copy was bound or refused in {MAX_IDLE_TICKS} ticks"),
            );
            break;
        }
    }
    out
}
