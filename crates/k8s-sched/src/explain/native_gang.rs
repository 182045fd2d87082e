//! `--explain <namespace>/<podgroup>` for a native gang: a `scheduling.k8s.io/v1alpha2` PodGroup
//! (KEP-4671, upstream `staging/src/k8s.io/api/scheduling/v1alpha2/types.go`) and the pods that
//! join it by `spec.schedulingGroup.podGroupName`. It prints the group's policy and its
//! `PodGroupScheduled` condition (written by kube-scheduler, reasons `Scheduled`,
//! `Unschedulable`), the members (existing, bound, waiting at Permit, pending), whether the
//! GangScheduling plugin's PreEnqueue barrier still holds them (upstream
//! `pkg/scheduler/framework/plugins/gangscheduling`: the PodGroup must exist and `minCount` pods
//! must exist before any member is attempted), then each member's last attempt.
//!
//! Unlike the coscheduling view ([`super::gang`]) there is no feasibility section: upstream's
//! GangScheduling plugin has no `minResources` check, and k8s-mini adds none to it (docs/gangs.md).
//! The format is described in `docs/explain.md`.

use std::fmt::Write as _;

use k8s_types::core::Pod;
use k8s_types::scheduling::v1alpha2::PodGroup;

use super::gang::{write_last_attempts, write_members};
use super::{Explanation, PodKey};
use crate::plugins::gang_scheduling::MSG_WAITING_FOR_MIN_COUNT;

/// How a PodGroup scheduling cycle ended (kube-scheduler v1.36, KEP-4671; upstream
/// `schedule_one_podgroup.go`'s feasible / requires-preemption / unschedulable results).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PodGroupCycleOutcome {
    /// At least `minCount` members placed without preemption: they went to binding together.
    Scheduled,
    /// At least `minCount` members placed, some only with victims gone: the victims were evicted
    /// and the members nominated, to be placed by a later cycle.
    WaitingForPreemption,
    /// Fewer than `minCount` members could be placed even with preemption: the whole group was
    /// rejected, nothing reserved, nobody evicted.
    Unschedulable,
}

/// The last PodGroup scheduling cycle of a gang, for `--explain <namespace>/<podgroup>`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PodGroupCycle {
    /// The tick of the cycle.
    pub tick: k8s_types::Tick,
    /// The gang's `minCount`.
    pub min_count: i32,
    /// Members bound or assumed before the cycle.
    pub already_scheduled: usize,
    /// Pending members evaluated in the cycle.
    pub members: usize,
    /// Members that fit without preemption.
    pub placed: usize,
    /// Members that fit only with victims gone (delayed preemption).
    pub placed_with_preemption: usize,
    /// Victims chosen for them (evicted only when the outcome is `WaitingForPreemption`).
    pub victims: usize,
    /// The outcome.
    pub outcome: PodGroupCycleOutcome,
    /// The group's status message (GangScheduling's PlacementFeasible, or upstream's
    /// `pod group is waiting for preemption to complete`); empty when scheduled.
    pub message: String,
    /// The first member that fit nowhere, with its reasons.
    pub first_blocking: Option<(String, String)>,
}

/// The condition type kube-scheduler writes on a native PodGroup.
const POD_GROUP_SCHEDULED: &str = "PodGroupScheduled";

/// Renders the gang view of the native PodGroup `pg` with its current `members` (any order;
/// printed by name) and the recorded attempts of its members.
pub fn render_scheduling_pod_group(
    key: &PodKey,
    pg: &PodGroup,
    members: &[Pod],
    explanations: &[Explanation],
    cycle: Option<&PodGroupCycle>,
) -> String {
    let mut o = String::new();
    let mut members: Vec<&Pod> = members
        .iter()
        .filter(|p| {
            p.scheduling_group_name() == Some(key.name.as_str())
                && p.metadata.namespace() == key.namespace
        })
        .collect();
    members.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
    let min_count = pg.spec.gang_min_count();
    let policy = match min_count {
        Some(n) => format!("gang minCount {n}"),
        None => "basic (no quorum)".to_string(),
    };
    let condition = pg
        .status
        .conditions
        .iter()
        .find(|c| c.type_ == POD_GROUP_SCHEDULED);
    let cond = match condition {
        Some(c) => format!("{POD_GROUP_SCHEDULED} {} ({})", c.status, c.reason),
        None => format!("{POD_GROUP_SCHEDULED} not set"),
    };
    let _ = writeln!(
        o,
        "podGroup {key} (scheduling.k8s.io/v1alpha2): {policy}, {cond}"
    );
    if let Some(w) = pg
        .spec
        .pod_group_template_ref
        .as_ref()
        .and_then(|r| r.workload.as_ref())
    {
        let _ = writeln!(
            o,
            "  template: workload {}, podGroupTemplate {}",
            w.workload_name, w.pod_group_template_name
        );
    }
    if let Some(msg) = condition
        .map(|c| c.message.as_str())
        .filter(|m| !m.is_empty())
    {
        let _ = writeln!(o, "  condition message: {msg}");
    }
    let live = write_members(&mut o, &members, explanations);
    if let Some(min) = min_count {
        let quorum = usize::try_from(min).unwrap_or(0);
        // The barrier counts the group's pods that are not terminal, as the plugin does.
        if live < quorum {
            let _ = writeln!(
                o,
                "  quorum: {} of {} pods exist; GangScheduling PreEnqueue holds every member ({MSG_WAITING_FOR_MIN_COUNT})",
                live, quorum
            );
        }
    }
    if let Some(c) = cycle {
        write_cycle(&mut o, c);
    }
    write_last_attempts(&mut o, &members, explanations);
    o
}

/// The `last PodGroup cycle` lines.
fn write_cycle(o: &mut String, c: &PodGroupCycle) {
    let scheduled = c.already_scheduled + c.placed + c.placed_with_preemption;
    let verdict = match c.outcome {
        PodGroupCycleOutcome::Scheduled => "scheduled, members bound together",
        PodGroupCycleOutcome::WaitingForPreemption => "waiting for preemption (victims evicted)",
        PodGroupCycleOutcome::Unschedulable => "unschedulable, whole group rejected",
    };
    let _ = writeln!(
        o,
        "  last PodGroup cycle (t={}): {verdict}; {scheduled} of minCount {} placeable ({} bound before, {} placed, {} only with preemption) of {} pending evaluated",
        c.tick, c.min_count, c.already_scheduled, c.placed, c.placed_with_preemption, c.members
    );
    let evicted = if c.outcome == PodGroupCycleOutcome::WaitingForPreemption {
        "evicted"
    } else {
        "not evicted"
    };
    if c.victims > 0 {
        let _ = writeln!(o, "    victims chosen: {} ({evicted})", c.victims);
    }
    if !c.message.is_empty() {
        let _ = writeln!(o, "    message: {}", c.message);
    }
    if let Some((pod, reasons)) = &c.first_blocking {
        let _ = writeln!(o, "    first blocking member: {pod}: {reasons}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(name: &str, group: &str, node: Option<&str>, phase: &str) -> Pod {
        let mut v = serde_json::json!({
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"schedulingGroup": {"podGroupName": group}, "containers": [{"name": "c"}]},
            "status": {"phase": phase}
        });
        if let Some(n) = node {
            v["spec"]["nodeName"] = n.into();
        }
        serde_json::from_value(v).unwrap()
    }

    fn group(min_count: Option<i32>) -> PodGroup {
        let policy = match min_count {
            Some(n) => serde_json::json!({"gang": {"minCount": n}}),
            None => serde_json::json!({"basic": {}}),
        };
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": "train", "namespace": "default"},
            "spec": {
                "podGroupTemplateRef": {"workload": {"workloadName": "w", "podGroupTemplateName": "workers"}},
                "schedulingPolicy": policy
            }
        }))
        .unwrap()
    }

    /// minCount 4 with three members, one of them Succeeded (terminal) and one bound: the
    /// barrier counts the 2 live pods (2 < 4), the terminal one is listed but not counted; a pod
    /// of another group and one in another namespace are not members.
    #[test]
    fn a_gang_short_of_pods_is_shown_behind_the_pre_enqueue_barrier() {
        let mut other_ns = pod("train-x", "train", None, "Pending");
        other_ns.metadata.namespace = Some("other".into());
        let members = vec![
            pod("train-1", "train", Some("n1"), "Running"),
            pod("train-0", "train", None, "Pending"),
            pod("train-2", "train", Some("n2"), "Succeeded"),
            pod("eval-0", "eval", None, "Pending"),
            other_ns,
        ];
        let out = render_scheduling_pod_group(
            &PodKey::new("default", "train"),
            &group(Some(4)),
            &members,
            &[],
            None,
        );
        assert_eq!(
            out,
            "podGroup default/train (scheduling.k8s.io/v1alpha2): gang minCount 4, PodGroupScheduled not set\n\
             \x20 template: workload w, podGroupTemplate workers\n\
             \x20 members: 2 exist (1 terminal not counted), 1 bound, 0 waiting at Permit, 1 pending\n\
             \x20 quorum: 2 of 4 pods exist; GangScheduling PreEnqueue holds every member (waiting for minCount pods from a gang to appear in scheduling queue)\n\
             \x20 last attempt of each member:\n\
             \x20   train-0  node -  no scheduling attempt\n\
             \x20   train-1  node n1  no scheduling attempt\n\
             \x20   train-2  node n2  no scheduling attempt\n"
        );
    }

    /// A basic group has no quorum line; the condition kube-scheduler wrote is shown with its
    /// message.
    #[test]
    fn a_basic_group_shows_its_condition_and_no_quorum() {
        let mut pg = group(None);
        pg.status.conditions = vec![serde_json::from_value(serde_json::json!({
            "type": "PodGroupScheduled", "status": "False", "reason": "Unschedulable",
            "message": "0/2 nodes are available: 2 Insufficient cpu."
        }))
        .unwrap()];
        let members = vec![pod("train-0", "train", None, "Pending")];
        let out =
            render_scheduling_pod_group(&PodKey::new("default", "train"), &pg, &members, &[], None);
        assert!(out.starts_with(
            "podGroup default/train (scheduling.k8s.io/v1alpha2): basic (no quorum), PodGroupScheduled False (Unschedulable)\n"
        ));
        assert!(out.contains("  condition message: 0/2 nodes are available: 2 Insufficient cpu.\n"));
        assert!(!out.contains("quorum:"));
    }

    /// The last PodGroup cycle of a 5-member gang on four nodes (scenarios/gang-group-cycle.yaml at
    /// t=2): 1 placed, 3 only with preemption (3 victims), 1 blocking: 4 of minCount 5, rejected,
    /// victims not evicted.
    #[test]
    fn the_last_pod_group_cycle_is_shown_with_its_counts_and_first_blocking_member() {
        let cycle = PodGroupCycle {
            tick: 2,
            min_count: 5,
            already_scheduled: 0,
            members: 5,
            placed: 1,
            placed_with_preemption: 3,
            victims: 3,
            outcome: PodGroupCycleOutcome::Unschedulable,
            message: "minCount (5) cannot be satisfied: 4 scheduled, 0 remaining".into(),
            first_blocking: Some((
                "train-4".into(),
                "0/4 nodes are available: 4 Insufficient nvidia.com/gpu.".into(),
            )),
        };
        let members = vec![pod("train-0", "train", None, "Pending")];
        let out = render_scheduling_pod_group(
            &PodKey::new("default", "train"),
            &group(Some(5)),
            &members,
            &[],
            Some(&cycle),
        );
        assert!(out.contains(
            "  last PodGroup cycle (t=2): unschedulable, whole group rejected; 4 of minCount 5 placeable (0 bound before, 1 placed, 3 only with preemption) of 5 pending evaluated\n\
             \x20   victims chosen: 3 (not evicted)\n\
             \x20   message: minCount (5) cannot be satisfied: 4 scheduled, 0 remaining\n\
             \x20   first blocking member: train-4: 0/4 nodes are available: 4 Insufficient nvidia.com/gpu.\n\
             \x20 last attempt of each member:\n"
        ), "{out}");
        let waiting = PodGroupCycle {
            outcome: PodGroupCycleOutcome::WaitingForPreemption,
            message: "pod group is waiting for preemption to complete".into(),
            first_blocking: None,
            ..cycle
        };
        let out = render_scheduling_pod_group(
            &PodKey::new("default", "train"),
            &group(Some(5)),
            &members,
            &[],
            Some(&waiting),
        );
        assert!(out.contains("waiting for preemption (victims evicted)"));
        assert!(out.contains("    victims chosen: 3 (evicted)\n"));
        assert!(!out.contains("first blocking member"));
    }
}
