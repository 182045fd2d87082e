//! How many more nodes make the workload fit: searched, each probe a real run.
//!
//! - **The shape.** `--like NODE`, else the most common *shape* among the nodes that could hold
//!   the first pending workload pod if they were empty (its nodeSelector and required node
//!   affinity match the node's labels, it tolerates the node's NoSchedule and NoExecute taints, the
//!   node is not cordoned, and each of its requests is at most the node's allocatable). A shape is
//!   the node's allocatable, its labels but `kubernetes.io/hostname`, and its taints; among equally
//!   common shapes the one whose first node sorts first by name; the node copied is the first node
//!   of that shape by name.
//! - **A new node** is a copy of it named `<node>-whatif-<i>`: the same labels (hostname set to
//!   the new name), taints (the node lifecycle's `node.kubernetes.io/` taints left out), capacity
//!   and allocatable, not cordoned; it joins at `T0` with the workload, as `--add-nodes` does.
//! - **The search.** `k = 1, 2, 4, ...` more nodes, one fresh run each, until one fits or `k`
//!   reaches `--max-nodes` (that count is probed last); then bisection between the largest count
//!   that did not fit and the smallest that did. The answer is the smallest count found to fit,
//!   assuming more nodes never hurt (every probe is listed, so a non-monotonic case shows).

use k8s_kubelet::admission::matches_node_affinity;
use k8s_types::core::{Node, Pod};
use k8s_types::object::Object;
use k8s_types::resources::{pod_requests, Resources};
use serde::Serialize;

use super::{outcome, what_if_run, Base, Outcome, Request};
use crate::capacity::is_pending;
use crate::manifest::{ManifestError, Source};
use crate::state::format_amount;

/// One probe: `nodes` more nodes, and whether the workload fit.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Probe {
    /// Nodes added.
    pub nodes: usize,
    /// Whether the workload fit.
    pub fits: bool,
}

/// The search's answer.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeSearch {
    /// The node copied.
    pub like: Option<String>,
    /// Its shape: allocatable resources.
    pub shape: String,
    /// The smallest number of such nodes found to make the workload fit.
    pub nodes: Option<usize>,
    /// The most nodes tried.
    pub max_nodes: usize,
    /// Every probe, in the order run.
    pub probes: Vec<Probe>,
    /// Why there is no answer, when there is none.
    pub note: Option<String>,
}

/// A copy of `like` named `<like>-whatif-<i>` (see the module docs).
pub fn clone_node(like: &Node, i: usize) -> Node {
    let name = format!("{}-whatif-{i}", like.metadata.name);
    let mut n = Node::default();
    n.metadata.name = name.clone();
    n.metadata.labels = like.metadata.labels.clone();
    if let Some(h) = n.metadata.labels.get_mut("kubernetes.io/hostname") {
        *h = name;
    }
    n.spec.taints = like
        .spec
        .taints
        .iter()
        .filter(|t| !t.key.starts_with("node.kubernetes.io/"))
        .cloned()
        .collect();
    n.status.capacity = like.status.capacity.clone();
    n.status.allocatable = like.status.allocatable.clone();
    n
}

/// The node's allocatable as `cpu=8, memory=32Gi, nvidia.com/gpu=8, pods=110`.
pub fn shape_text(n: &Node) -> String {
    let r = Resources::from_list(&n.status.allocatable);
    let mut parts = vec![
        format!("cpu={}", format_amount("cpu", r.milli_cpu)),
        format!("memory={}", format_amount("memory", r.memory)),
    ];
    for (k, v) in &r.scalar {
        parts.push(format!("{k}={v}"));
    }
    if r.pods > 0 {
        parts.push(format!("pods={}", r.pods));
    }
    parts.join(", ")
}

fn shape_key(n: &Node) -> String {
    let mut labels = n.metadata.labels.clone();
    labels.remove("kubernetes.io/hostname");
    let taints: Vec<String> = n
        .spec
        .taints
        .iter()
        .filter(|t| !t.key.starts_with("node.kubernetes.io/"))
        .map(|t| format!("{}={}:{}", t.key, t.value, t.effect))
        .collect();
    format!("{}|{labels:?}|{taints:?}", shape_text(n))
}

/// Whether `pod` could run on `node` if the node were empty (see the module docs).
pub fn could_hold(node: &Node, pod: &Pod) -> bool {
    if node.spec.unschedulable || !matches_node_affinity(pod, node) {
        return false;
    }
    let untolerated = node.spec.taints.iter().any(|t| {
        (t.effect == "NoSchedule" || t.effect == "NoExecute")
            && !pod.spec.tolerations.iter().any(|tol| tol.tolerates(t))
    });
    if untolerated {
        return false;
    }
    let want = pod_requests(pod);
    let have = Resources::from_list(&node.status.allocatable);
    want.milli_cpu <= have.milli_cpu
        && want.memory <= have.memory
        && want.scalar.iter().all(|(k, v)| *v <= have.get(k))
}

/// The default node to copy: see the module docs.
pub fn default_like(nodes: &[Node], pod: &Pod) -> Option<Node> {
    let mut nodes: Vec<&Node> = nodes.iter().filter(|n| could_hold(n, pod)).collect();
    nodes.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
    // (count, first node's position) per shape.
    let mut shapes: Vec<(String, usize, usize)> = Vec::new();
    for (i, n) in nodes.iter().enumerate() {
        let k = shape_key(n);
        match shapes.iter_mut().find(|s| s.0 == k) {
            Some(s) => s.1 += 1,
            None => shapes.push((k, 1, i)),
        }
    }
    shapes.sort_by(|a, b| b.1.cmp(&a.1).then(a.2.cmp(&b.2)));
    shapes.first().map(|s| nodes[s.2].clone())
}

/// The search (see the module docs). `added`: the `--add-nodes` nodes, kept in every probe.
///
/// # Errors
/// As the what-if run.
pub(crate) fn nodes_needed(
    req: &Request,
    base: &Base,
    workload: &[(Object, Source)],
    out: &Outcome,
    like: Option<&Node>,
    added: &[Node],
) -> Result<NodeSearch, ManifestError> {
    let max = req.max_nodes;
    let pod = out
        .pods
        .iter()
        .find(|p| is_pending(p))
        .or_else(|| out.pods.first());
    let like = match (like, pod) {
        (Some(l), _) => Some(l.clone()),
        (None, Some(p)) => default_like(&base.nodes, p),
        (None, None) => None,
    };
    let Some(like) = like else {
        return Ok(NodeSearch {
            max_nodes: max,
            note: Some(
                "no node of the cluster could hold a pending workload pod even if empty: give the shape to add with --like NODE"
                    .into(),
            ),
            ..NodeSearch::default()
        });
    };
    let mut s = NodeSearch {
        like: Some(like.metadata.name.clone()),
        shape: shape_text(&like),
        max_nodes: max,
        ..NodeSearch::default()
    };
    let probe = |k: usize, s: &mut NodeSearch| -> Result<bool, ManifestError> {
        let mut nodes = added.to_vec();
        nodes.extend((1..=k).map(|i| clone_node(&like, added.len() + i)));
        let c = what_if_run(req, base, &nodes, workload, None)?;
        let fits = outcome(c.api_ref(), req, workload, base).fits;
        s.probes.push(Probe { nodes: k, fits });
        Ok(fits)
    };
    let (mut lo, mut hi) = (0usize, None);
    let mut k = 1usize;
    while k <= max {
        if probe(k, &mut s)? {
            hi = Some(k);
            break;
        }
        lo = k;
        if k == max {
            break;
        }
        k = (k * 2).min(max);
    }
    let Some(mut hi) = hi else {
        s.note = Some(format!(
            "the workload does not fit even with {max} more nodes like {} (--max-nodes)",
            like.metadata.name
        ));
        return Ok(s);
    };
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if probe(mid, &mut s)? {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    s.nodes = Some(hi);
    Ok(s)
}
