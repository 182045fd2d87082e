//! The PodGroup scheduling cycle of kube-scheduler v1.36 (KEP-4671 "The Workload Scheduling
//! Cycle", "Queuing and Ordering", "Scheduling Algorithm", "Failure Handling", "Delayed
//! Preemption"; upstream `pkg/scheduler/schedule_one_podgroup.go`: `podGroupInfoForPod`,
//! `podGroupCycle`, `podGroupSchedulingDefaultAlgorithm`, `podGroupPodSchedulingAlgorithm`,
//! `submitPodGroupAlgorithmResult`; the kubernetes.io page "PodGroup Scheduling").
//!
//! When a member of a `gang` PodGroup is popped, every pending member of the group that passed
//! PreEnqueue is taken with it, ordered as upstream's `podGroupInfoForPod`: higher priority
//! first, then the earlier first attempt (a member never attempted counts as attempted now), then
//! (k8s-mini's tie-break) the queue's arrival sequence. On the one snapshot (the scheduler's
//! cache), each member in turn runs the ordinary algorithm (PreFilter, Filter, Score) and, if it
//! fits, is assumed and reserved on the chosen node, so the next member sees it there. After each
//! member, GangScheduling's PlacementFeasible counts the members scheduled (bound or assumed
//! before the cycle, plus those placed now) and those not yet evaluated.
//!
//! A member that fits no node runs PostFilter with *delayed preemption*: DefaultPreemption picks
//! the node and its victims but evicts nothing (see `DelayedVictims`); the cycle removes the
//! victims from the snapshot and assumes the member on the nominated node, so later members plan
//! with the victims gone. At the end:
//!
//! - fewer than `minCount` scheduled: the group is rejected at once. Every placement of the cycle
//!   is undone (Unreserve, forget), the victims stay, nobody is evicted. A placed member gets
//!   PlacementFeasible's message (`minCount (M) cannot be satisfied: S scheduled, R remaining`)
//!   and its nomination is cleared; a member that fit nowhere gets its own FitError. Both go back
//!   to the queue (placed members with no rejector plugin: backoff, as upstream's
//!   `errPodGroupUnschedulable`).
//! - `minCount` scheduled and some member needed preemption: the victims of every such member are
//!   evicted now (`prepareCandidate`), every placement is undone, each placed member is nominated
//!   to its node and goes back unschedulable (`pod group is waiting for preemption to complete`,
//!   or its own FitError when it needed the preemption) until the victims are gone; the next cycle
//!   places the group.
//! - `minCount` scheduled without preemption: the placed members go through Permit (GangScheduling
//!   allows: the quorum is assumed) and bind together; members that fit nowhere go back with
//!   their own FitError.
//!
//! Simplified (docs/fidelity.md): k8s-mini runs the cycle for `gang` groups only (upstream also
//! runs it for `basic` groups, without the quorum check, for batching), does not forbid new
//! preemptions in the retry that follows a preemption, does not sort members by pod signature,
//! and leaves a victim that waits at Permit (assumed, not bound) in the snapshot for the later
//! members.

use k8s_types::object::Shared;

use k8s_sched_framework::{Code, CycleState, NominatingInfo, NominatingMode, PodInfo, Status};
use k8s_types::core::Pod;

use super::{
    clear_nomination, handle_failure, note, observe, permit_then_bind, record_observation,
    rollback, schedule_pod, Ctx, Failure,
};
use crate::explain::{Outcome, PodGroupCycle, PodGroupCycleOutcome};
use crate::plugins::default_preemption::{
    prepare_candidate, Candidate, DelayedVictims, DELAYED_VICTIMS_KEY,
};
use crate::plugins::gang_scheduling::placement_feasible;
use crate::pods_to_activate;
use crate::queue::Rejection;
use crate::runtime::Framework;

/// Upstream's status message for a feasible group that waits for its victims to go.
pub const MSG_WAITING_FOR_PREEMPTION: &str = "pod group is waiting for preemption to complete";

/// One member's result in the cycle.
struct Member {
    pod: Shared<Pod>,
    state: CycleState,
    /// The node it is assumed on in this cycle.
    host: Option<String>,
    /// Victims chosen for it (delayed preemption): it is assumed on `host` with them gone.
    victims: Vec<Shared<Pod>>,
    /// Why it fit nowhere (or its preemption's FitError).
    failure: Option<Failure>,
}

/// Runs one PodGroup scheduling cycle for the gang `members` (already ordered, see the module
/// docs) of a PodGroup with `min_count`, with profile `profile`. `already_scheduled` counts the
/// group's members bound or assumed before the cycle.
pub(crate) fn schedule_one_pod_group(
    ctx: &mut Ctx<'_>,
    profiles: &[Framework],
    profile: usize,
    members: Vec<Shared<Pod>>,
    min_count: i32,
    already_scheduled: usize,
) -> PodGroupCycle {
    let fwk = &profiles[profile];
    let total = members.len();
    let mut results: Vec<Member> = Vec::with_capacity(total);
    // Victims taken out of the snapshot during the cycle, put back at its end.
    let mut removed: Vec<Shared<Pod>> = Vec::new();
    let mut status = Status::success();
    for (i, pod) in members.into_iter().enumerate() {
        ctx.queue
            .record_attempt(&crate::cache::pod_key(&pod), ctx.now);
        let mut state = CycleState::new();
        pods_to_activate::init(&mut state);
        state.write(DELAYED_VICTIMS_KEY, DelayedVictims::default());
        let mut observer = observe(ctx, fwk, &pod);
        let result = schedule_pod(ctx, fwk, &mut state, &pod, observer.as_mut());
        record_observation(ctx, observer);
        let mut m = match result {
            Ok(host) => Member {
                pod,
                state,
                host: Some(host),
                victims: Vec::new(),
                failure: None,
            },
            Err(f) => {
                let chosen = state
                    .read::<DelayedVictims>(DELAYED_VICTIMS_KEY)
                    .cloned()
                    .unwrap_or_default();
                if chosen.node.is_empty() || chosen.victims.is_empty() {
                    Member {
                        pod,
                        state,
                        host: None,
                        victims: Vec::new(),
                        failure: Some(f),
                    }
                } else {
                    // Upstream: a member that needs preemption is handled like a feasible one on
                    // its nominated node, with the victims removed in memory.
                    // A victim waiting at Permit (assumed, not bound) stays in the snapshot:
                    // k8s-mini's conservative simplification (later members do not count on its
                    // room).
                    for v in &chosen.victims {
                        let key = crate::cache::pod_key(v);
                        if ctx.cache.is_assumed(&key) {
                            continue;
                        }
                        if let Some(old) = ctx.cache.remove_pod(&key) {
                            removed.push(old);
                        }
                    }
                    Member {
                        pod,
                        state,
                        host: Some(chosen.node),
                        victims: chosen.victims,
                        failure: Some(f),
                    }
                }
            }
        };
        if let Some(host) = m.host.clone() {
            if let Err(f) = assume_and_reserve(ctx, fwk, &mut m, &host) {
                m.host = None;
                m.failure = Some(f);
            }
        }
        results.push(m);
        let placed = results.iter().filter(|m| m.host.is_some()).count();
        status = placement_feasible(min_count, already_scheduled + placed, total - (i + 1));
    }
    let placed = results.iter().filter(|m| m.host.is_some()).count();
    let preempting = results
        .iter()
        .filter(|m| m.host.is_some() && !m.victims.is_empty())
        .count();
    let victims: usize = results.iter().map(|m| m.victims.len()).sum();
    let first_blocking = results.iter().find(|m| m.host.is_none()).and_then(|m| {
        m.failure
            .as_ref()
            .map(|f| (m.pod.metadata.name.clone(), f.message.clone()))
    });
    let feasible = status.is_success() && placed > 0;
    let outcome = if !feasible {
        PodGroupCycleOutcome::Unschedulable
    } else if preempting > 0 {
        PodGroupCycleOutcome::WaitingForPreemption
    } else {
        PodGroupCycleOutcome::Scheduled
    };
    let record = PodGroupCycle {
        tick: ctx.now,
        min_count,
        already_scheduled,
        members: total,
        placed: placed - preempting,
        placed_with_preemption: preempting,
        victims,
        outcome,
        message: match outcome {
            PodGroupCycleOutcome::Scheduled => String::new(),
            PodGroupCycleOutcome::WaitingForPreemption => MSG_WAITING_FOR_PREEMPTION.to_string(),
            PodGroupCycleOutcome::Unschedulable => status.message(),
        },
        first_blocking,
    };
    match outcome {
        PodGroupCycleOutcome::Scheduled => bind_all(ctx, profiles, profile, results),
        PodGroupCycleOutcome::WaitingForPreemption => {
            undo(ctx, fwk, &mut results, removed);
            let rejection = results.iter().filter_map(|m| m.failure.as_ref()).fold(
                Rejection::default(),
                |mut acc, f| {
                    acc.unschedulable_plugins
                        .extend(f.rejection.unschedulable_plugins.iter().cloned());
                    acc.pending_plugins
                        .extend(f.rejection.pending_plugins.iter().cloned());
                    acc
                },
            );
            for m in &results {
                let (Some(host), false) = (&m.host, m.victims.is_empty()) else {
                    continue;
                };
                let c = Candidate {
                    name: host.clone(),
                    victims: m.victims.clone(),
                    num_pdb_violations: 0,
                };
                let mut h = ctx.handle(fwk);
                if let Err(s) = prepare_candidate(&c, &m.pod, &mut h) {
                    tracing::error!(pod = %m.pod.key(), status = %s, "delayed preemption failed");
                }
            }
            for m in results {
                let f = match (m.host, m.failure) {
                    (Some(host), Some(mut f)) => {
                        f.nominating = Some(nominate(&host));
                        f.rejection = Box::new(rejection.clone());
                        f
                    }
                    (Some(host), None) => Failure {
                        code: Code::Unschedulable,
                        message: MSG_WAITING_FOR_PREEMPTION.to_string(),
                        nominating: Some(nominate(&host)),
                        post_filter: None,
                        rejection: Box::new(rejection.clone()),
                    },
                    (None, Some(f)) => f,
                    (None, None) => continue,
                };
                handle_failure(ctx, fwk, &m.pod, f);
            }
        }
        PodGroupCycleOutcome::Unschedulable => {
            undo(ctx, fwk, &mut results, removed);
            let message = status.message();
            for m in results {
                let f = match (m.host, m.failure) {
                    (Some(_), _) => Failure {
                        code: Code::Unschedulable,
                        message: message.clone(),
                        nominating: Some(clear_nomination()),
                        post_filter: None,
                        rejection: Box::default(),
                    },
                    (None, Some(f)) => f,
                    (None, None) => continue,
                };
                handle_failure(ctx, fwk, &m.pod, f);
            }
        }
    }
    record
}

fn nominate(node: &str) -> NominatingInfo {
    NominatingInfo {
        nominated_node_name: node.to_string(),
        mode: NominatingMode::Override,
    }
}

/// Assume, then Reserve, as the pod-by-pod cycle does; the member leaves the nominator while it is
/// assumed (upstream `assume` deletes the nominated pod).
fn assume_and_reserve(
    ctx: &mut Ctx<'_>,
    fwk: &Framework,
    m: &mut Member,
    host: &str,
) -> Result<(), Failure> {
    ctx.cache.assume(PodInfo::new(Shared::clone(&m.pod)), host);
    ctx.nominator.remove(&m.pod);
    let s = {
        let mut h = ctx.handle(fwk);
        fwk.run_reserve(&mut m.state, &m.pod, host, &mut h)
    };
    if !s.is_success() {
        rollback(ctx, fwk, &mut m.state, &m.pod, host);
        return Err(Failure::on_node(host, s));
    }
    if let Some(annotated) = crate::binding_annotations::annotated(&m.state, &m.pod) {
        ctx.cache.forget(&m.pod, host);
        ctx.cache.assume(PodInfo::new(annotated), host);
    }
    Ok(())
}

/// Undoes every placement of the cycle (last first) and puts the victims back in the snapshot.
fn undo(ctx: &mut Ctx<'_>, fwk: &Framework, results: &mut [Member], removed: Vec<Shared<Pod>>) {
    for m in results.iter_mut().rev() {
        if let Some(host) = m.host.clone() {
            rollback(ctx, fwk, &mut m.state, &m.pod, &host);
        }
    }
    for v in removed {
        ctx.cache.upsert_pod(v);
    }
}

/// The group fits without preemption: each placed member runs Permit (GangScheduling allows: the
/// quorum is assumed) and binds, in cycle order; members that fit nowhere go back to the queue
/// with their own failure.
fn bind_all(ctx: &mut Ctx<'_>, profiles: &[Framework], profile: usize, results: Vec<Member>) {
    let fwk = &profiles[profile];
    for m in results {
        match m.host {
            Some(host) => {
                note(ctx, &m.pod, || Outcome::Selected { node: host.clone() });
                permit_then_bind(ctx, profiles, profile, &m.pod, host, m.state);
            }
            None => {
                if let Some(f) = m.failure {
                    handle_failure(ctx, fwk, &m.pod, f);
                }
            }
        }
    }
}
