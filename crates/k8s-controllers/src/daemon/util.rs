//! Helpers of the daemon set controller, after upstream `pkg/controller/daemon/util/
//! daemonset_util.go` (`AddOrUpdateDaemonPodTolerations`, `CreatePodTemplate`, `AllowsSurge`,
//! `SurgeCount`, `UnavailableCount`, `IsPodUpdated`, `ReplaceDaemonSetPodNodeNameNodeAffinity`,
//! `GetTargetNodeName`), `pkg/apis/core/v1/helper` `AddOrUpdateTolerationInPodSpec` and the
//! placement rules of `daemon_controller.go` (`NodeShouldRunDaemonPod`, `predicates`, `NewPod`).

use std::cmp::Ordering;

use k8s_types::apps::{
    DaemonSet, IntOrString, PodTemplateSpec, CONTROLLER_REVISION_HASH_LABEL,
    ROLLING_UPDATE_DAEMON_SET_STRATEGY,
};
use k8s_types::core::affinity::{
    Affinity, NodeAffinity, NodeSelector, NodeSelectorRequirement, NodeSelectorTerm,
};
use k8s_types::core::taints::{effects, find_untolerated, Toleration};
use k8s_types::core::{Node, Pod, PodSpec};

/// Upstream `v1.TaintNodeNotReady`.
pub const TAINT_NODE_NOT_READY: &str = "node.kubernetes.io/not-ready";
/// Upstream `v1.TaintNodeUnreachable`.
pub const TAINT_NODE_UNREACHABLE: &str = "node.kubernetes.io/unreachable";
/// Upstream `v1.TaintNodeDiskPressure`.
pub const TAINT_NODE_DISK_PRESSURE: &str = "node.kubernetes.io/disk-pressure";
/// Upstream `v1.TaintNodeMemoryPressure`.
pub const TAINT_NODE_MEMORY_PRESSURE: &str = "node.kubernetes.io/memory-pressure";
/// Upstream `v1.TaintNodePIDPressure`.
pub const TAINT_NODE_PID_PRESSURE: &str = "node.kubernetes.io/pid-pressure";
/// Upstream `v1.TaintNodeUnschedulable`.
pub const TAINT_NODE_UNSCHEDULABLE: &str = "node.kubernetes.io/unschedulable";
/// Upstream `v1.TaintNodeNetworkUnavailable`.
pub const TAINT_NODE_NETWORK_UNAVAILABLE: &str = "node.kubernetes.io/network-unavailable";
/// Upstream `metav1.ObjectNameField`: the field a `matchFields` requirement may name.
pub const OBJECT_NAME_FIELD: &str = "metadata.name";

/// Upstream `Toleration.MatchToleration`: same key, operator, value and effect (an empty operator
/// is `Equal`); `tolerationSeconds` is not compared.
fn match_toleration(a: &Toleration, b: &Toleration) -> bool {
    let op = |t: &Toleration| {
        if t.operator.is_empty() {
            "Equal".to_string()
        } else {
            t.operator.clone()
        }
    };
    a.key == b.key && a.effect == b.effect && op(a) == op(b) && a.value == b.value
}

/// Upstream `AddOrUpdateTolerationInPodSpec`: a toleration matching `t` is replaced by it (kept
/// in place), otherwise `t` is appended.
pub fn add_or_update_toleration(spec: &mut PodSpec, t: Toleration) {
    if let Some(existing) = spec
        .tolerations
        .iter_mut()
        .find(|e| match_toleration(e, &t))
    {
        *existing = t;
    } else {
        spec.tolerations.push(t);
    }
}

fn exists(key: &str, effect: &str) -> Toleration {
    Toleration {
        key: key.to_string(),
        operator: "Exists".to_string(),
        value: String::new(),
        effect: effect.to_string(),
        toleration_seconds: None,
    }
}

/// Upstream `AddOrUpdateDaemonPodTolerations`: not-ready and unreachable `NoExecute` without
/// `tolerationSeconds` (the pods survive taint-based eviction), disk-, memory- and pid-pressure
/// and unschedulable `NoSchedule`, and network-unavailable `NoSchedule` for host-network pods.
pub fn add_or_update_daemon_pod_tolerations(spec: &mut PodSpec) {
    add_or_update_toleration(spec, exists(TAINT_NODE_NOT_READY, effects::NO_EXECUTE));
    add_or_update_toleration(spec, exists(TAINT_NODE_UNREACHABLE, effects::NO_EXECUTE));
    for key in [
        TAINT_NODE_DISK_PRESSURE,
        TAINT_NODE_MEMORY_PRESSURE,
        TAINT_NODE_PID_PRESSURE,
        TAINT_NODE_UNSCHEDULABLE,
    ] {
        add_or_update_toleration(spec, exists(key, effects::NO_SCHEDULE));
    }
    if spec.host_network == Some(true) {
        add_or_update_toleration(
            spec,
            exists(TAINT_NODE_NETWORK_UNAVAILABLE, effects::NO_SCHEDULE),
        );
    }
}

/// Upstream `CreatePodTemplate`: the template with the daemon tolerations and the
/// `controller-revision-hash` label (the deprecated template-generation label is not written).
pub fn create_pod_template(template: &PodTemplateSpec, hash: &str) -> PodTemplateSpec {
    let mut t = template.clone();
    add_or_update_daemon_pod_tolerations(&mut t.spec);
    if !hash.is_empty() {
        t.metadata
            .labels
            .insert(CONTROLLER_REVISION_HASH_LABEL.to_string(), hash.to_string());
    }
    t
}

/// Upstream `ReplaceDaemonSetPodNodeNameNodeAffinity`: the required node affinity becomes the
/// single term `matchFields: metadata.name In [node]`; preferred terms and pod (anti-)affinity
/// are kept.
pub fn replace_node_name_node_affinity(affinity: Option<Affinity>, node: &str) -> Affinity {
    let selector = NodeSelector {
        node_selector_terms: vec![NodeSelectorTerm {
            match_expressions: Vec::new(),
            match_fields: vec![NodeSelectorRequirement {
                key: OBJECT_NAME_FIELD.to_string(),
                operator: "In".to_string(),
                values: vec![node.to_string()],
            }],
        }],
    };
    let mut a = affinity.unwrap_or_default();
    let na = a.node_affinity.get_or_insert_with(NodeAffinity::default);
    na.required_during_scheduling_ignored_during_execution = Some(selector);
    a
}

/// Upstream `GetTargetNodeName`: `spec.nodeName`, else the value of the first
/// `matchFields metadata.name In [x]` requirement of the required node affinity (exactly one
/// value); `None` when there is neither.
pub fn target_node_name(pod: &Pod) -> Option<String> {
    if let Some(n) = pod.node_name() {
        return Some(n.to_string());
    }
    let terms = &pod
        .spec
        .affinity
        .as_ref()?
        .node_affinity
        .as_ref()?
        .required_during_scheduling_ignored_during_execution
        .as_ref()?
        .node_selector_terms;
    for term in terms {
        for r in &term.match_fields {
            if r.key == OBJECT_NAME_FIELD && r.operator == "In" {
                return match r.values.as_slice() {
                    [one] => Some(one.clone()),
                    _ => None,
                };
            }
        }
    }
    None
}

/// The update strategy type, `RollingUpdate` when unset (the apps/v1 default).
pub fn strategy_type(ds: &DaemonSet) -> &str {
    ds.spec
        .update_strategy
        .as_ref()
        .and_then(|s| s.type_.as_deref())
        .unwrap_or(ROLLING_UPDATE_DAEMON_SET_STRATEGY)
}

fn rolling_value(ds: &DaemonSet, surge: bool, total: i32) -> i32 {
    if strategy_type(ds) != ROLLING_UPDATE_DAEMON_SET_STRATEGY {
        return 0;
    }
    let Some(ru) = ds
        .spec
        .update_strategy
        .as_ref()
        .and_then(|s| s.rolling_update.as_ref())
    else {
        return 0;
    };
    let v = if surge {
        ru.max_surge.as_ref()
    } else {
        ru.max_unavailable.as_ref()
    };
    // Validation admits only ints and percents; an unreadable value counts as 0.
    v.map(|v: &IntOrString| v.scaled_value(total, true).unwrap_or(0))
        .unwrap_or(0)
}

/// Upstream `SurgeCount`: `maxSurge` scaled to `total` (rounded up) for RollingUpdate, else 0.
pub fn surge_count(ds: &DaemonSet, total: i32) -> i32 {
    rolling_value(ds, true, total)
}

/// Upstream `UnavailableCount`: `maxUnavailable` scaled to `total` (rounded up), else 0.
pub fn unavailable_count(ds: &DaemonSet, total: i32) -> i32 {
    rolling_value(ds, false, total)
}

/// Upstream `AllowsSurge`: `SurgeCount(ds, 1) > 0`.
pub fn allows_surge(ds: &DaemonSet) -> bool {
    surge_count(ds, 1) > 0
}

/// Upstream `IsPodUpdated` (hash part): the pod's `controller-revision-hash` is `hash`.
pub fn is_pod_updated(pod: &Pod, hash: &str) -> bool {
    !hash.is_empty()
        && pod
            .metadata
            .labels
            .get(CONTROLLER_REVISION_HASH_LABEL)
            .is_some_and(|h| h == hash)
}

/// Upstream `podByCreationTimestampAndPhase`: scheduled pods first, then older, then by name.
pub fn cmp_by_creation_and_phase(a: &Pod, b: &Pod) -> Ordering {
    let (sa, sb) = (a.node_name().is_some(), b.node_name().is_some());
    sb.cmp(&sa)
        .then_with(|| {
            crate::controller_utils::creation_tick(&a.metadata)
                .cmp(&crate::controller_utils::creation_tick(&b.metadata))
        })
        .then_with(|| a.metadata.name.cmp(&b.metadata.name))
}

/// Upstream `nodeaffinity.GetRequiredNodeAffinity(pod).Match(node)`: the nodeSelector's labels
/// and the required node affinity terms.
fn fits_node_affinity(spec: &PodSpec, node: &Node) -> bool {
    let labels = &node.metadata.labels;
    if !spec
        .node_selector
        .iter()
        .all(|(k, v)| labels.get(k) == Some(v))
    {
        return false;
    }
    match spec
        .affinity
        .as_ref()
        .and_then(|a| a.node_affinity.as_ref())
        .and_then(|na| {
            na.required_during_scheduling_ignored_during_execution
                .as_ref()
        }) {
        Some(sel) => sel.matches(&node.metadata.name, labels),
        None => true,
    }
}

/// The placement checks of one DaemonSet: upstream `NewPod` (the template's spec with the daemon
/// tolerations) built once, then [`DaemonPlacement::should_run`] per node.
#[derive(Clone, Debug)]
pub struct DaemonPlacement {
    spec: PodSpec,
}

impl DaemonPlacement {
    /// The pod the DaemonSet would run (upstream `NewPod` without the node name).
    pub fn new(ds: &DaemonSet) -> Self {
        let mut spec = ds.spec.template.spec.clone();
        add_or_update_daemon_pod_tolerations(&mut spec);
        DaemonPlacement { spec }
    }

    /// Upstream `NodeShouldRunDaemonPod`: `(shouldRun, shouldContinueRunning)`. A node fails
    /// both when the template's `nodeName` names another node or its nodeSelector / required
    /// node affinity does not match; an untolerated `NoSchedule` or `NoExecute` taint fails
    /// `shouldRun`, and only an untolerated `NoExecute` taint fails `shouldContinueRunning` (a
    /// pod already there stays on a node newly tainted `NoSchedule`). Tolerations include the
    /// daemon defaults.
    pub fn should_run(&self, node: &Node) -> (bool, bool) {
        let spec = &self.spec;
        let node_name = spec.node_name.as_deref().unwrap_or("");
        if !(node_name.is_empty() || node_name == node.metadata.name) {
            return (false, false);
        }
        if !fits_node_affinity(spec, node) {
            return (false, false);
        }
        let taints = &node.spec.taints;
        let schedule_effects = [effects::NO_EXECUTE, effects::NO_SCHEDULE];
        if find_untolerated(taints, &spec.tolerations, &schedule_effects).is_some() {
            let execute = find_untolerated(taints, &spec.tolerations, &[effects::NO_EXECUTE]);
            return (false, execute.is_none());
        }
        (true, true)
    }
}

/// [`DaemonPlacement::should_run`] for one node.
pub fn node_should_run_daemon_pod(node: &Node, ds: &DaemonSet) -> (bool, bool) {
    DaemonPlacement::new(ds).should_run(node)
}

/// `(shouldRun, shouldContinueRunning)` of every node, by name (node-name order).
pub type NodeVerdicts = std::collections::BTreeMap<String, (bool, bool)>;

/// [`DaemonPlacement::should_run`] over `nodes`.
pub fn node_verdicts<'a>(
    ds: &DaemonSet,
    nodes: impl IntoIterator<Item = &'a Node>,
) -> NodeVerdicts {
    let placement = DaemonPlacement::new(ds);
    nodes
        .into_iter()
        .map(|n| (n.metadata.name.clone(), placement.should_run(n)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_types::core::taints::Taint;

    fn node(name: &str, labels: &[(&str, &str)], taints: &[(&str, &str)]) -> Node {
        let mut n = Node::default();
        n.metadata.name = name.into();
        n.metadata.labels = labels
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        n.spec.taints = taints
            .iter()
            .map(|(k, e)| Taint {
                key: k.to_string(),
                value: String::new(),
                effect: e.to_string(),
                time_added: None,
            })
            .collect();
        n
    }

    #[test]
    fn default_tolerations_as_upstream() {
        // Upstream TestAddOrUpdateDaemonPodTolerations: 6 tolerations, 7 with hostNetwork; an
        // own not-ready NoExecute toleration with tolerationSeconds is replaced in place.
        let mut spec = PodSpec::default();
        spec.tolerations.push(Toleration {
            key: TAINT_NODE_NOT_READY.into(),
            operator: "Exists".into(),
            effect: "NoExecute".into(),
            toleration_seconds: Some(300),
            ..Default::default()
        });
        add_or_update_daemon_pod_tolerations(&mut spec);
        let keys: Vec<(&str, &str, Option<i64>)> = spec
            .tolerations
            .iter()
            .map(|t| (t.key.as_str(), t.effect.as_str(), t.toleration_seconds))
            .collect();
        assert_eq!(
            keys,
            vec![
                (TAINT_NODE_NOT_READY, "NoExecute", None),
                (TAINT_NODE_UNREACHABLE, "NoExecute", None),
                (TAINT_NODE_DISK_PRESSURE, "NoSchedule", None),
                (TAINT_NODE_MEMORY_PRESSURE, "NoSchedule", None),
                (TAINT_NODE_PID_PRESSURE, "NoSchedule", None),
                (TAINT_NODE_UNSCHEDULABLE, "NoSchedule", None),
            ]
        );
        spec.host_network = Some(true);
        add_or_update_daemon_pod_tolerations(&mut spec);
        assert_eq!(spec.tolerations.len(), 7);
        assert_eq!(spec.tolerations[6].key, TAINT_NODE_NETWORK_UNAVAILABLE);
    }

    #[test]
    fn placement_follows_selector_affinity_and_taints() {
        let mut ds = DaemonSet::default();
        ds.spec.template.spec.node_selector = [("pool".to_string(), "gpu".to_string())].into();
        let gpu = node("a", &[("pool", "gpu")], &[]);
        assert_eq!(node_should_run_daemon_pod(&gpu, &ds), (true, true));
        let cpu = node("b", &[("pool", "cpu")], &[]);
        assert_eq!(node_should_run_daemon_pod(&cpu, &ds), (false, false));
        // NoSchedule: not started, but a pod already there keeps running.
        let ns = node("c", &[("pool", "gpu")], &[("dedicated", "NoSchedule")]);
        assert_eq!(node_should_run_daemon_pod(&ns, &ds), (false, true));
        // NoExecute: neither.
        let ne = node("d", &[("pool", "gpu")], &[("dedicated", "NoExecute")]);
        assert_eq!(node_should_run_daemon_pod(&ne, &ds), (false, false));
        // The default tolerations cover cordoned, not-ready and pressured nodes.
        let cordoned = node(
            "e",
            &[("pool", "gpu")],
            &[
                (TAINT_NODE_UNSCHEDULABLE, "NoSchedule"),
                (TAINT_NODE_NOT_READY, "NoExecute"),
                (TAINT_NODE_MEMORY_PRESSURE, "NoSchedule"),
            ],
        );
        assert_eq!(node_should_run_daemon_pod(&cordoned, &ds), (true, true));
        // network-unavailable is tolerated only by host-network pods.
        let net = node(
            "f",
            &[("pool", "gpu")],
            &[(TAINT_NODE_NETWORK_UNAVAILABLE, "NoSchedule")],
        );
        assert_eq!(node_should_run_daemon_pod(&net, &ds), (false, true));
        ds.spec.template.spec.host_network = Some(true);
        assert_eq!(node_should_run_daemon_pod(&net, &ds), (true, true));
        // A template nodeName pins the DaemonSet to that node.
        ds.spec.template.spec.node_name = Some("a".into());
        assert_eq!(node_should_run_daemon_pod(&net, &ds), (false, false));
        assert_eq!(node_should_run_daemon_pod(&gpu, &ds), (true, true));
    }

    #[test]
    fn node_name_affinity_replaces_required_terms_only() {
        let mut a = Affinity::default();
        let na = a.node_affinity.get_or_insert_with(NodeAffinity::default);
        na.required_during_scheduling_ignored_during_execution = Some(NodeSelector {
            node_selector_terms: vec![NodeSelectorTerm {
                match_expressions: vec![NodeSelectorRequirement {
                    key: "zone".into(),
                    operator: "In".into(),
                    values: vec!["a".into()],
                }],
                match_fields: Vec::new(),
            }],
        });
        let out = replace_node_name_node_affinity(Some(a), "node-2");
        let terms = &out
            .node_affinity
            .as_ref()
            .unwrap()
            .required_during_scheduling_ignored_during_execution
            .as_ref()
            .unwrap()
            .node_selector_terms;
        assert_eq!(terms.len(), 1);
        assert!(terms[0].match_expressions.is_empty());
        assert_eq!(terms[0].match_fields[0].key, "metadata.name");
        assert_eq!(terms[0].match_fields[0].values, vec!["node-2".to_string()]);
        let mut p = Pod::default();
        p.spec.affinity = Some(out);
        assert_eq!(target_node_name(&p).as_deref(), Some("node-2"));
        p.spec.node_name = Some("node-3".into());
        assert_eq!(target_node_name(&p).as_deref(), Some("node-3"));
    }

    #[test]
    fn surge_and_unavailable_round_up() {
        let mut ds = DaemonSet::default();
        ds.spec.update_strategy = Some(k8s_types::apps::DaemonSetUpdateStrategy {
            type_: Some("RollingUpdate".into()),
            rolling_update: Some(k8s_types::apps::RollingUpdateDaemonSet {
                max_unavailable: Some(IntOrString::String("25%".into())),
                max_surge: Some(IntOrString::String("10%".into())),
            }),
        });
        // ceil(25% of 5) = 2, ceil(10% of 5) = 1.
        assert_eq!(unavailable_count(&ds, 5), 2);
        assert_eq!(surge_count(&ds, 5), 1);
        assert!(allows_surge(&ds));
        ds.spec.update_strategy.as_mut().unwrap().type_ = Some("OnDelete".into());
        assert_eq!(surge_count(&ds, 5), 0);
        assert!(!allows_surge(&ds));
    }
}
