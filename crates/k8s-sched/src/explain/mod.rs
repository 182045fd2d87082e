//! `--explain`: a structured record of every scheduling attempt of one chosen pod (the PreFilter
//! result, each node's Filter verdict, each Score plugin's raw / normalized / weighted score, the
//! totals, the chosen node or the FailedScheduling message with the PostFilter result, and what
//! happened at Reserve, Permit and binding). kube-scheduler has no such recorder; the facts it
//! shows are the values upstream `pkg/scheduler/schedule_one.go` (`schedulePod`,
//! `findNodesThatFitPod`, `prioritizeNodes`, `selectHost`) and
//! `pkg/scheduler/framework/runtime/framework.go` compute and mostly log at high verbosity.
//!
//! Cost: the recorder is an `Option` in the [`Scheduler`](crate::Scheduler); when it is `None`
//! (the default) each attempt pays one `Option` check. When it is set, the real attempts of the
//! explained pod carry an observer (`attempt::Observer`) that the scheduling cycle calls at each
//! step, and take the per-node Filter path and the per-plugin Score path so that every verdict and
//! score is recorded (the fused and batched paths give the same feasible nodes, totals and choice
//! by construction); nothing is run twice. The attempt's outcome is then appended.
//! [`Explanation::predicted`] is the node the recorded scores rank first, which is the node the
//! scheduler selects.
//!
//! Layout: this file holds the types and the recorder; `attempt` records an [`Explanation`];
//! [`render`](mod@render) prints it as deterministic text (the format is described in `docs/explain.md`);
//! [`gang`] prints the view of a whole coscheduling PodGroup (`--explain <namespace>/<podgroup>`),
//! [`native_gang`] that of a native (`scheduling.k8s.io/v1alpha2`) PodGroup.

pub(crate) mod attempt;
pub mod gang;
pub mod native_gang;
pub mod render;

use std::collections::BTreeMap;
use std::fmt;

use serde::Serialize;

use k8s_sched_framework::{Code, NominatingInfo, NominatingMode, Status};
use k8s_types::core::Pod;
use k8s_types::Tick;

use crate::plugins::coscheduling_fit::GangFit;

pub use gang::render_pod_group;
pub use native_gang::{render_scheduling_pod_group, PodGroupCycle, PodGroupCycleOutcome};
pub use render::render;

/// The pod to explain: `namespace/name`.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct PodKey {
    /// `metadata.namespace`.
    pub namespace: String,
    /// `metadata.name`.
    pub name: String,
}

/// A `--explain` argument that is not `<namespace>/<name>` (or `<name>`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "invalid pod {0:?} to explain: want <namespace>/<name> (or <name> in namespace \"default\")"
)]
pub struct PodKeyError(pub String);

impl PodKey {
    /// A key from its parts.
    pub fn new(namespace: impl Into<String>, name: impl Into<String>) -> PodKey {
        PodKey {
            namespace: namespace.into(),
            name: name.into(),
        }
    }

    /// Parses `namespace/name`; a bare `name` means namespace `default` (as kubectl).
    ///
    /// # Errors
    /// [`PodKeyError`] for an empty part or more than one `/`.
    pub fn parse(s: &str) -> Result<PodKey, PodKeyError> {
        let bad = || PodKeyError(s.to_string());
        let (ns, name) = match s.split_once('/') {
            Some((ns, name)) => (ns, name),
            None => ("default", s),
        };
        if ns.is_empty() || name.is_empty() || name.contains('/') {
            return Err(bad());
        }
        Ok(PodKey::new(ns, name))
    }

    /// True when `pod` is this pod (namespace and name; no allocation).
    pub fn matches(&self, pod: &Pod) -> bool {
        pod.metadata.name == self.name && pod.metadata.namespace() == self.namespace
    }

    /// True when `pod` is a member of the PodGroup this key names, in the same namespace: the
    /// coscheduling group of label `scheduling.x-k8s.io/pod-group`, or the native
    /// (`scheduling.k8s.io/v1alpha2`) group of `spec.schedulingGroup.podGroupName`.
    pub fn matches_group(&self, pod: &Pod) -> bool {
        let name = Some(self.name.as_str());
        (pod.pod_group() == name || pod.scheduling_group_name() == name)
            && pod.metadata.namespace() == self.namespace
    }
}

impl fmt::Display for PodKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.namespace, self.name)
    }
}

/// A plugin status as shown in an explanation: code, plugin and reasons.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StatusView {
    /// Upstream code name, e.g. `Unschedulable`.
    pub code: String,
    /// The plugin that returned it (empty when the framework produced it).
    pub plugin: String,
    /// The reasons, in the plugin's order.
    pub reasons: Vec<String>,
}

impl From<&Status> for StatusView {
    fn from(s: &Status) -> StatusView {
        StatusView {
            code: s.code().as_str().to_string(),
            plugin: s.plugin().to_string(),
            reasons: s.reasons().to_vec(),
        }
    }
}

impl fmt::Display for StatusView {
    /// `Plugin: reason, reason`, with the code in brackets unless it is `Unschedulable` (e.g.
    /// `NodeResourcesFit: Insufficient cpu`, `NodeAffinity: node(s) didn't match Pod's node
    /// affinity/selector [UnschedulableAndUnresolvable]`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.plugin.is_empty() {
            write!(f, "{}: ", self.plugin)?;
        }
        f.write_str(&self.reasons.join(", "))?;
        if self.code != Code::Unschedulable.as_str() {
            write!(f, " [{}]", self.code)?;
        }
        Ok(())
    }
}

/// What PreFilter decided.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PreFilterExplanation {
    /// The merged status; `None` is Success.
    pub status: Option<StatusView>,
    /// The merged `PreFilterResult`: the only nodes the pod may go to, sorted; `None` = all.
    pub node_names: Option<Vec<String>>,
    /// The plugins that restricted the nodes, in plugin order.
    pub restricted_by: Vec<String>,
    /// Filter plugins skipped in this attempt because their PreFilter returned Skip, sorted.
    pub skipped_filter_plugins: Vec<String>,
}

/// One node's Filter verdict.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase", tag = "verdict", content = "detail")]
pub enum NodeVerdict {
    /// Every Filter plugin passed: the node is feasible.
    Success,
    /// A Filter plugin rejected the node (or failed).
    Rejected(StatusView),
    /// Not in the PreFilter plugins' node set, so not filtered (upstream gives such nodes the
    /// "absent nodes" status `node(s) didn't satisfy plugin(s) [...]`).
    NotInPreFilterResult,
    /// Not evaluated: enough feasible nodes were found first (`percentageOfNodesToScore`,
    /// upstream `numFeasibleNodesToFind`).
    SkippedByPercentageOfNodesToScore,
    /// Not evaluated for another reason (PreFilter rejected the pod, the nominated node fits,
    /// a Filter plugin failed with an error earlier).
    NotEvaluated(String),
}

/// A node and its verdict.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeFilter {
    /// Node name.
    pub node: String,
    /// The verdict.
    pub verdict: NodeVerdict,
}

/// The pod's `status.nominatedNodeName`, which upstream evaluates before all other nodes
/// (`evaluateNominatedNode`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NominatedNode {
    /// Node name.
    pub node: String,
    /// Its Filter verdict (with the higher-or-equal-priority nominated pods counted).
    pub verdict: NodeVerdict,
}

/// How the Filter pass walked the nodes (upstream `findNodesThatPassFilters`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FilterWindow {
    /// Nodes that could be filtered (all, or the PreFilterResult's).
    pub candidates: usize,
    /// The effective `percentageOfNodesToScore` (profile, else global; 0 = adaptive).
    pub percentage_of_nodes_to_score: i32,
    /// Upstream `numFeasibleNodesToFind`: the search stops after this many feasible nodes.
    pub num_feasible_nodes_to_find: usize,
    /// The rotating start index into the candidates (upstream `nextStartNodeIndex`).
    pub start_index: usize,
    /// Nodes actually filtered.
    pub evaluated: usize,
}

/// One Score plugin's numbers for one node.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PluginScore {
    /// The plugin.
    pub plugin: String,
    /// `Score` before NormalizeScore.
    pub raw: i64,
    /// After NormalizeScore, `[0, 100]`.
    pub normalized: i64,
    /// The profile's weight.
    pub weight: i64,
    /// `normalized * weight`.
    pub weighted: i64,
    /// True when its PreScore returned Skip (all numbers 0).
    pub skipped: bool,
}

/// A feasible node's scores.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeScores {
    /// Node name.
    pub node: String,
    /// Per Score plugin, in profile order.
    pub plugins: Vec<PluginScore>,
    /// Sum of the weighted scores.
    pub total: i64,
}

/// The PostFilter plugins' result (e.g. DefaultPreemption).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PostFilterView {
    /// The combined status (Success: a later attempt may fit, e.g. after preemption).
    pub status: StatusView,
    /// The nomination written to `status.nominatedNodeName`: `None` leaves it as it is,
    /// `Some("")` clears it.
    pub nominated_node_name: Option<String>,
}

/// What happened to the pod after the Filter/Score decision.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase", tag = "type")]
pub enum Outcome {
    /// `schedulePod` selected this node (Reserve, Permit and binding follow).
    Selected {
        /// Node name.
        node: String,
    },
    /// Permit plugins hold the pod, assumed on the node, until allowed or the timeout.
    Waiting {
        /// Node name.
        node: String,
        /// Plugin -> timeout in ticks.
        plugins: BTreeMap<String, Tick>,
    },
    /// Bound (the `Scheduled` event).
    Bound {
        /// Node name.
        node: String,
    },
    /// The attempt failed (the `FailedScheduling` event and `PodScheduled=False`).
    Failed {
        /// The condition reason: `Unschedulable` or `SchedulerError`.
        reason: String,
        /// The full FailedScheduling message.
        message: String,
        /// The PostFilter result, when Filter found no node.
        post_filter: Option<PostFilterView>,
    },
}

impl Outcome {
    /// A failed attempt as `handle_failure` reports it.
    pub(crate) fn failed(
        reason: &str,
        message: &str,
        post_filter: Option<&Status>,
        nominating: Option<&NominatingInfo>,
    ) -> Outcome {
        Outcome::Failed {
            reason: reason.to_string(),
            message: message.to_string(),
            post_filter: post_filter.map(|s| PostFilterView {
                status: StatusView::from(s),
                nominated_node_name: nominating
                    .filter(|n| n.mode == NominatingMode::Override)
                    .map(|n| n.nominated_node_name.clone()),
            }),
        }
    }
}

/// An outcome with the tick it happened at.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OutcomeEvent {
    /// The tick.
    pub tick: Tick,
    /// What happened.
    pub outcome: Outcome,
}

/// One scheduling attempt of the explained pod.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Explanation {
    /// The pod.
    pub pod: PodKey,
    /// 1 for the pod's first attempt since explaining started.
    pub attempt: u32,
    /// The tick of the attempt.
    pub tick: Tick,
    /// The profile's `schedulerName`.
    pub profile: String,
    /// Nodes in the snapshot.
    pub num_nodes: usize,
    /// PreFilter.
    pub pre_filter: PreFilterExplanation,
    /// The nominated node, when the pod has one.
    pub nominated_node: Option<NominatedNode>,
    /// How Filter walked the candidates (absent when no node was filtered that way).
    pub window: Option<FilterWindow>,
    /// Every node of the snapshot, in name order, with its verdict.
    pub nodes: Vec<NodeFilter>,
    /// A failing PreScore status, if any.
    pub pre_score: Option<StatusView>,
    /// Why Score did not run although Filter found nodes (one feasible node, an error).
    pub score_note: Option<String>,
    /// The scored nodes, by total descending, then by the tie-break rule (name descending: among
    /// equal totals the name that sorts last wins).
    pub scores: Vec<NodeScores>,
    /// The node this explanation ranks first (`None` when none is feasible).
    pub predicted: Option<String>,
    /// What the scheduler then did, in order (selection, Permit wait, binding or failure).
    pub outcomes: Vec<OutcomeEvent>,
    /// For a member of an existing PodGroup: the gang's feasibility on this attempt's snapshot
    /// ([`coscheduling_fit::assess`](crate::plugins::coscheduling_fit::assess)).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gang: Option<GangFit>,
}

/// The recorder the [`Scheduler`](crate::Scheduler) holds while a pod is explained.
#[derive(Clone, Debug)]
pub struct Explainer {
    target: PodKey,
    attempts: Vec<Explanation>,
}

impl Explainer {
    /// A recorder for `target` with no attempts yet.
    pub fn new(target: PodKey) -> Explainer {
        Explainer {
            target,
            attempts: Vec::new(),
        }
    }

    /// The explained pod.
    pub fn target(&self) -> &PodKey {
        &self.target
    }

    /// The attempts so far, oldest first.
    pub fn explanations(&self) -> &[Explanation] {
        &self.attempts
    }

    /// True when `pod` is the explained pod or a member of the explained PodGroup (a key names
    /// either; the run decides which to print, see `render_pod_group`).
    pub fn wants(&self, pod: &Pod) -> bool {
        self.target.matches(pod) || self.target.matches_group(pod)
    }

    /// The number `pod`'s next attempt gets (each pod counts its own attempts).
    pub(crate) fn next_attempt(&self, pod: &Pod) -> u32 {
        let n = self.attempts.iter().filter(|e| e.pod.matches(pod)).count();
        u32::try_from(n).map_or(u32::MAX, |n| n.saturating_add(1))
    }

    /// Stores a new attempt.
    pub(crate) fn begin(&mut self, e: Explanation) {
        self.attempts.push(e);
    }

    /// Appends an outcome of `pod` to its latest attempt (ignored for other pods).
    pub(crate) fn record(&mut self, pod: &Pod, tick: Tick, outcome: Outcome) {
        if !self.wants(pod) {
            return;
        }
        if let Some(last) = self.attempts.iter_mut().rev().find(|e| e.pod.matches(pod)) {
            last.outcomes.push(OutcomeEvent { tick, outcome });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pod_keys_parse_like_kubectl() {
        assert_eq!(
            PodKey::parse("default/web-0"),
            Ok(PodKey::new("default", "web-0"))
        );
        assert_eq!(PodKey::parse("web-0"), Ok(PodKey::new("default", "web-0")));
        assert!(PodKey::parse("a/b/c").is_err());
        assert!(PodKey::parse("/b").is_err());
        assert!(PodKey::parse("a/").is_err());
        assert_eq!(PodKey::new("ns", "p").to_string(), "ns/p");
    }

    #[test]
    fn status_view_shows_plugin_reasons_and_unusual_codes() {
        let s = Status::unschedulable("Insufficient cpu").with_plugin("NodeResourcesFit");
        assert_eq!(
            StatusView::from(&s).to_string(),
            "NodeResourcesFit: Insufficient cpu"
        );
        let s = Status::unresolvable("node(s) didn't match Pod's node affinity/selector")
            .with_plugin("NodeAffinity");
        assert_eq!(
            StatusView::from(&s).to_string(),
            "NodeAffinity: node(s) didn't match Pod's node affinity/selector [UnschedulableAndUnresolvable]"
        );
    }
}
