//! `--explain <namespace>/<podgroup>`: why a gang is pending, in one place. The PodGroup's quorum
//! and status (scheduler-plugins `apis/scheduling/v1alpha1` `PodGroupSpec`/`PodGroupStatus`), its
//! members (existing, bound, waiting at Permit, pending), the gang feasibility of the latest member
//! attempt ([`GangFit`]: what the members still to place need against what the nodes could give
//! with every lower-priority pod gone, and how many nodes are missing), then each member's last
//! attempt (the `FailedScheduling` message upstream puts in the event and the `PodScheduled`
//! condition). The format is described in `docs/explain.md`.

use std::fmt::Write as _;

use k8s_types::core::Pod;
use k8s_types::scheduling::PodGroup;

use super::{Explanation, Outcome, PodKey};
use crate::plugins::coscheduling_fit::{show, GangFit};

/// The last recorded attempt of `pod`.
fn last_attempt<'a>(pod: &Pod, explanations: &'a [Explanation]) -> Option<&'a Explanation> {
    explanations.iter().rev().find(|e| e.pod.matches(pod))
}

/// What the member's last attempt ended with, as one cell.
fn last_outcome(pod: &Pod, explanations: &[Explanation]) -> String {
    let Some(e) = last_attempt(pod, explanations) else {
        return "no scheduling attempt".to_string();
    };
    let Some(ev) = e.outcomes.last() else {
        return format!("t={} attempt {}: no outcome recorded", e.tick, e.attempt);
    };
    match &ev.outcome {
        Outcome::Selected { node } => format!("t={} selected {node}", ev.tick),
        Outcome::Waiting { node, .. } => format!("t={} waiting at Permit on {node}", ev.tick),
        Outcome::Bound { node } => format!("t={} Bound: {node}", ev.tick),
        Outcome::Failed {
            reason,
            message,
            post_filter,
        } => {
            let nominated = post_filter
                .as_ref()
                .and_then(|p| p.nominated_node_name.as_deref())
                .filter(|n| !n.is_empty());
            match nominated {
                Some(n) => format!(
                    "t={} FailedScheduling ({reason}), nominated {n} after preemption: {message}",
                    ev.tick
                ),
                None => format!("t={} FailedScheduling ({reason}): {message}", ev.tick),
            }
        }
    }
}

fn is_waiting(pod: &Pod, explanations: &[Explanation]) -> bool {
    pod.node_name().is_none()
        && last_attempt(pod, explanations)
            .and_then(|e| e.outcomes.last())
            .is_some_and(|ev| matches!(ev.outcome, Outcome::Waiting { .. }))
}

/// The feasibility lines of one assessment (`who`: the member attempt that made it), as the
/// PodGroup section prints them; `k8s-mini whatif` prints the same lines.
pub fn fit_lines(o: &mut String, fit: &GangFit, who: &Explanation) {
    let _ = writeln!(
        o,
        "  feasibility at t={} (attempt {} of {}, priority {}): {} placed, {} to place for minMember {}",
        who.tick, who.attempt, who.pod.name, fit.priority, fit.placed, fit.need, fit.min_member
    );
    if fit.can_preempt {
        let _ = writeln!(
            o,
            "    fit now: at most {}; with the {} lower-priority pod{} gone: at most {} ({} of {} nodes admit a member)",
            fit.fit_now,
            fit.evictable_pods,
            if fit.evictable_pods == 1 { "" } else { "s" },
            fit.fit_with_preemption,
            fit.admitting_nodes,
            fit.nodes
        );
    } else {
        let _ = writeln!(
            o,
            "    fit now: at most {} (preemptionPolicy Never: nothing is evictable; {} of {} nodes admit a member)",
            fit.fit_now, fit.admitting_nodes, fit.nodes
        );
    }
    let _ = writeln!(o, "    node shortfall: {}", fit.node_shortfall());
    if fit.gaps.is_empty() {
        let _ = writeln!(o, "    resource shortfall: none");
    }
    for g in &fit.gaps {
        let _ = writeln!(
            o,
            "    resource shortfall: {} need {}, available {} ({} missing)",
            g.resource,
            show(&g.resource, g.need),
            show(&g.resource, g.available),
            show(&g.resource, g.missing())
        );
    }
    let verdict = if fit.feasible() {
        "may reach its quorum (the check is a necessary condition; Filter decides)"
    } else if fit.can_preempt {
        "cannot reach its quorum even with preemption: Coscheduling PreFilter rejects its members, nothing is preempted"
    } else {
        "cannot reach its quorum with the free resources (preemption not allowed)"
    };
    let _ = writeln!(o, "    verdict: {verdict}");
}

/// Renders the gang view of `pg` with its current `members` (any order; printed by name) and the
/// recorded attempts of its members.
pub fn render_pod_group(
    key: &PodKey,
    pg: &PodGroup,
    members: &[Pod],
    explanations: &[Explanation],
) -> String {
    let mut o = String::new();
    let mut members: Vec<&Pod> = members.iter().filter(|p| key.matches_group(p)).collect();
    members.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
    let st = &pg.status;
    let _ = writeln!(
        o,
        "podGroup {key}: minMember {}, phase {}, scheduled {}, running {}, succeeded {}, failed {}",
        pg.spec.min_member,
        st.phase.as_deref().unwrap_or("<none>"),
        st.scheduled,
        st.running,
        st.succeeded,
        st.failed
    );
    match &pg.spec.min_resources {
        Some(r) if !r.is_empty() => {
            let parts: Vec<String> = r.iter().map(|(k, v)| format!("{k}={v}")).collect();
            let _ = writeln!(o, "  minResources: {}", parts.join(", "));
        }
        _ => {}
    }
    let live = write_members(&mut o, &members, explanations);
    let quorum = usize::try_from(pg.spec.min_member).unwrap_or(0);
    if live < quorum {
        let _ = writeln!(
            o,
            "  quorum: {} of {} members exist, Coscheduling PreFilter waits for {} more",
            live,
            quorum,
            quorum - live
        );
    }
    let latest = explanations
        .iter()
        .rev()
        .find(|e| e.gang.is_some() && key.matches_group_key(&e.pod, &members));
    match latest.and_then(|e| e.gang.as_ref().map(|g| (e, g))) {
        Some((e, fit)) => fit_lines(&mut o, fit, e),
        None => {
            let _ = writeln!(o, "  feasibility: no member attempt recorded");
        }
    }
    write_last_attempts(&mut o, &members, explanations);
    o
}

/// The `members:` line of a gang view (coscheduling or native); returns how many members are not
/// terminal.
pub(super) fn write_members(
    o: &mut String,
    members: &[&Pod],
    explanations: &[Explanation],
) -> usize {
    let live: Vec<&&Pod> = members.iter().filter(|p| !p.is_terminal()).collect();
    let bound = live.iter().filter(|p| p.node_name().is_some()).count();
    let waiting = live.iter().filter(|p| is_waiting(p, explanations)).count();
    let _ = writeln!(
        o,
        "  members: {} exist ({} terminal not counted), {} bound, {} waiting at Permit, {} pending",
        live.len(),
        members.len() - live.len(),
        bound,
        waiting,
        live.len() - bound - waiting
    );
    live.len()
}

/// The `last attempt of each member:` lines of a gang view, by member name.
pub(super) fn write_last_attempts(o: &mut String, members: &[&Pod], explanations: &[Explanation]) {
    let _ = writeln!(o, "  last attempt of each member:");
    for p in members {
        let node = p.node_name().unwrap_or("-");
        let _ = writeln!(
            o,
            "    {}  node {node}  {}",
            p.metadata.name,
            last_outcome(p, explanations)
        );
    }
}

impl PodKey {
    /// True when the explained pod `pod` is one of `members`.
    fn matches_group_key(&self, pod: &PodKey, members: &[&Pod]) -> bool {
        pod.namespace == self.namespace && members.iter().any(|m| pod.matches(m))
    }
}
