//! Why a pod did not fit: [`NodeToStatus`] (the per-node Filter verdicts plus one status for the
//! nodes not listed), [`Diagnosis`] and [`FitError`], whose `Display` is the FailedScheduling
//! message (`0/3 nodes are available: 3 Insufficient cpu.`). Mirrors upstream
//! `pkg/scheduler/framework/types.go` (`NodeToStatus`, `Diagnosis`, `FitError.Error`).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use super::node_info::NodeInfo;
use super::status::{Code, Status};

/// Upstream `NoNodeAvailableMsg`: `0/%v nodes are available`.
pub const NO_NODE_AVAILABLE_MSG: &str = "nodes are available";

/// Per-node statuses plus the status of every node not listed (upstream `NodeToStatus`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeToStatus {
    statuses: BTreeMap<String, Status>,
    absent: Status,
}

impl Default for NodeToStatus {
    /// No nodes listed; absent nodes are `UnschedulableAndUnresolvable` without reasons (upstream
    /// `NewDefaultNodeToStatus`).
    fn default() -> NodeToStatus {
        NodeToStatus {
            statuses: BTreeMap::new(),
            absent: Status::new(Code::UnschedulableAndUnresolvable, Vec::<String>::new()),
        }
    }
}

impl NodeToStatus {
    /// The status of `node`: its own, else the absent-nodes status.
    pub fn get(&self, node: &str) -> &Status {
        self.statuses.get(node).unwrap_or(&self.absent)
    }

    /// Sets the status of one node.
    pub fn set(&mut self, node: impl Into<String>, status: Status) {
        self.statuses.insert(node.into(), status);
    }

    /// The status of nodes not listed.
    pub fn absent_nodes_status(&self) -> &Status {
        &self.absent
    }

    /// Sets the status of nodes not listed (upstream `SetAbsentNodesStatus`).
    pub fn set_absent_nodes_status(&mut self, status: Status) {
        self.absent = status;
    }

    /// Number of listed nodes.
    pub fn len(&self) -> usize {
        self.statuses.len()
    }

    /// True when no node is listed.
    pub fn is_empty(&self) -> bool {
        self.statuses.is_empty()
    }

    /// Listed nodes and their statuses, by node name.
    pub fn iter(&self) -> impl Iterator<Item = (&String, &Status)> {
        self.statuses.iter()
    }

    /// Names of the nodes in `nodes` whose status (own or absent) has `code` (upstream
    /// `NodesForStatusCode`), in the order of `nodes`.
    pub fn nodes_for_status_code<'a>(&self, nodes: &'a [NodeInfo], code: Code) -> Vec<&'a str> {
        nodes
            .iter()
            .filter(|n| self.get(n.name()).code() == code)
            .map(NodeInfo::name)
            .collect()
    }
}

/// Details of a scheduling failure (upstream `Diagnosis`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Diagnosis {
    /// Filter verdicts per node.
    pub node_to_status: NodeToStatus,
    /// Plugins that returned Unschedulable or UnschedulableAndUnresolvable.
    pub unschedulable_plugins: BTreeSet<String>,
    /// Plugins that returned Pending.
    pub pending_plugins: BTreeSet<String>,
    /// The message of a rejecting PreFilter plugin, if any.
    pub pre_filter_msg: String,
    /// The message of the PostFilter plugins, if any.
    pub post_filter_msg: String,
}

impl Diagnosis {
    /// Records a rejecting or pending plugin (upstream `AddPluginStatus`).
    pub fn add_plugin_status(&mut self, status: &Status) {
        if status.plugin().is_empty() {
            return;
        }
        if status.is_rejected() && !self.unschedulable_plugins.contains(status.plugin()) {
            self.unschedulable_plugins
                .insert(status.plugin().to_string());
        }
        if status.code() == Code::Pending && !self.pending_plugins.contains(status.plugin()) {
            self.pending_plugins.insert(status.plugin().to_string());
        }
    }
}

/// A pod fits no node (upstream `FitError`). `Display` renders upstream's message:
/// `0/<all> nodes are available: <PreFilterMsg>.` or `0/<all> nodes are available: <count> <reason>,
/// ... .` (the `<count> <reason>` strings sorted as strings), then ` <PostFilterMsg>`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FitError {
    /// Number of nodes in the snapshot.
    pub num_all_nodes: usize,
    /// The diagnosis.
    pub diagnosis: Diagnosis,
}

impl fmt::Display for FitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "0/{} {}:", self.num_all_nodes, NO_NODE_AVAILABLE_MSG)?;
        let d = &self.diagnosis;
        if !d.pre_filter_msg.is_empty() {
            write!(f, " {}.", d.pre_filter_msg)?;
        } else {
            let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
            for (_, status) in d.node_to_status.iter() {
                for r in status.reasons() {
                    *counts.entry(r.as_str()).or_insert(0) += 1;
                }
            }
            let listed = d.node_to_status.len();
            if listed < self.num_all_nodes {
                for r in d.node_to_status.absent_nodes_status().reasons() {
                    *counts.entry(r.as_str()).or_insert(0) += self.num_all_nodes - listed;
                }
            }
            let mut histogram: Vec<String> = counts
                .into_iter()
                .map(|(reason, n)| format!("{n} {reason}"))
                .collect();
            // Upstream sorts the formatted "<count> <reason>" strings (sort.Strings).
            histogram.sort();
            if !histogram.is_empty() {
                write!(f, " {}.", histogram.join(", "))?;
            }
        }
        if !d.post_filter_msg.is_empty() {
            write!(f, " {}", d.post_filter_msg)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_is_sorted_by_formatted_string() {
        let mut d = Diagnosis::default();
        for n in ["a", "b", "c"] {
            d.node_to_status.set(
                n,
                Status::unresolvable("node(s) had untolerated taint {dedicated: gpu}"),
            );
        }
        for n in ["d", "e"] {
            d.node_to_status
                .set(n, Status::unschedulable("Insufficient cpu"));
        }
        d.post_filter_msg =
            "preemption: 0/5 nodes are available: 5 Preemption is not helpful for scheduling."
                .into();
        let e = FitError {
            num_all_nodes: 5,
            diagnosis: d,
        };
        assert_eq!(
            e.to_string(),
            "0/5 nodes are available: 2 Insufficient cpu, 3 node(s) had untolerated taint {dedicated: gpu}. preemption: 0/5 nodes are available: 5 Preemption is not helpful for scheduling."
        );
    }

    #[test]
    fn absent_nodes_count_and_prefilter_message_wins() {
        let mut d = Diagnosis::default();
        d.node_to_status
            .set_absent_nodes_status(Status::unresolvable(
                "Preemption is not helpful for scheduling",
            ));
        assert_eq!(
            FitError {
                num_all_nodes: 3,
                diagnosis: d.clone()
            }
            .to_string(),
            "0/3 nodes are available: 3 Preemption is not helpful for scheduling."
        );
        d.pre_filter_msg = "pre-filter pod p cannot find enough sibling pods, current pods number: 2, minMember of group: 3".into();
        assert_eq!(
            FitError {
                num_all_nodes: 3,
                diagnosis: d
            }
            .to_string(),
            "0/3 nodes are available: pre-filter pod p cannot find enough sibling pods, current pods number: 2, minMember of group: 3."
        );
    }
}
