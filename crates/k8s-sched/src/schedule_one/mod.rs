//! One scheduling attempt of one pod (upstream `pkg/scheduler/schedule_one.go`: `scheduleOne`,
//! `schedulingCycle`, `bindingCycle`, `schedulePod`, `findNodesThatFitPod`,
//! `findNodesThatPassFilters`, `numFeasibleNodesToFind`, `prioritizeNodes`, `selectHost`,
//! `handleSchedulingFailure`), run synchronously within the tick. The binding cycle runs upstream's
//! steps in order (`bindingCycle`): Permit wait (across ticks, see [`process_waiting`]), PreBind,
//! Bind, PostBind; a PreBind or Bind failure (or a rejection while waiting) unreserves in reverse
//! order, forgets the assumed pod, reports the failure and offers the forget to the queue as an
//! `AssignedPodDelete` event (upstream `handleBindingCycleError`).
//!
//! Host selection tie-break (documented rule): among nodes with the highest total score the node
//! whose name sorts last wins (upstream picks uniformly at random among ties). This reproduces
//! the project blueprint's `max(key=(score, name))`.

use k8s_types::object::Shared;

use k8s_sched_framework::{
    Code, CycleState, Diagnosis, FitError, NodeInfo, NominatingInfo, NominatingMode, PodInfo,
    Status,
};
use k8s_types::apiserver::{ApiClient, ApiExt};
use k8s_types::core::event::event_types;
use k8s_types::core::{condition_status, pod_conditions, Pod, PodCondition};
use k8s_types::events::Involved;
use k8s_types::meta::tick_timestamp_compact;
use k8s_types::Tick;

use crate::cache::Cache;
use crate::explain::attempt as explain;
use crate::explain::{Explainer, Outcome};
use crate::nominator::Nominator;
use crate::pods_to_activate;
use crate::queue::{Rejection, SchedulingQueue};
use crate::queueing_hints::{EventObj, EventScope, ObservedEvent};
use crate::runtime::batch::ScoreScratch;
use crate::runtime::handle::CycleHandle;
use crate::runtime::{Framework, PermitOutcome};
use crate::scratch;
use crate::waiting::WaitingPods;

mod find_nodes;
use find_nodes::find_nodes_that_fit;
mod pod_group;
pub(crate) use pod_group::schedule_one_pod_group;

/// Event reason of a successful binding.
pub const EVENT_REASON_SCHEDULED: &str = "Scheduled";
/// Event reason of a failed attempt.
pub const EVENT_REASON_FAILED_SCHEDULING: &str = "FailedScheduling";
/// Condition reason for a pod that fits no node (upstream `v1.PodReasonUnschedulable`).
pub const REASON_UNSCHEDULABLE: &str = "Unschedulable";
/// Condition reason for an internal error (upstream `v1.PodReasonSchedulerError`).
pub const REASON_SCHEDULER_ERROR: &str = "SchedulerError";
/// Upstream `ErrNoNodesAvailable`.
pub const MSG_NO_NODES_AVAILABLE: &str = "no nodes available to schedule pods";
/// Upstream `minFeasibleNodesToFind`.
pub const MIN_FEASIBLE_NODES_TO_FIND: usize = 100;
/// Upstream `minFeasibleNodesPercentageToFind`.
pub const MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND: i64 = 5;
/// Upstream `validation.NoteLengthLimit` for event messages.
pub const NOTE_LENGTH_LIMIT: usize = 1024;

/// The mutable scheduler state one attempt works on.
pub(crate) struct Ctx<'a> {
    pub api: &'a mut dyn ApiClient,
    pub cache: &'a mut Cache,
    pub queue: &'a mut SchedulingQueue,
    pub waiting: &'a mut WaitingPods,
    pub nominator: &'a mut Nominator,
    pub next_start_node_index: &'a mut usize,
    pub global_percentage: i32,
    pub now: Tick,
    /// The `--explain` recorder, when a pod is explained.
    pub explain: Option<&'a mut Explainer>,
    /// Detached mode (no apiserver, see `Scheduler::schedule_one`): outcomes are logged here
    /// instead of being written as events and pod conditions.
    pub detached: Option<&'a mut AttemptLog>,
}

/// Outcomes of the attempts of detached mode, in order: the pod, and its node when bound or the
/// failure code and message.
pub(crate) type AttemptLog = Vec<(Shared<Pod>, Result<String, (Code, String)>)>;

impl Ctx<'_> {
    pub(crate) fn handle<'b>(&'b mut self, fwk: &'b Framework) -> CycleHandle<'b> {
        CycleHandle {
            fwk,
            api: &mut *self.api,
            cache: &*self.cache,
            waiting: &mut *self.waiting,
            nominator: &*self.nominator,
            now: self.now,
        }
    }
}

/// Why an attempt failed.
#[derive(Clone, Debug)]
pub(crate) struct Failure {
    code: Code,
    message: String,
    nominating: Option<NominatingInfo>,
    /// The PostFilter status, when Filter found no node (kept for `--explain`).
    post_filter: Option<Box<Status>>,
    /// The plugins that rejected the pod, for the queue's queueing hints (boxed: keeps the
    /// `Result` small).
    rejection: Box<Rejection>,
}

impl Failure {
    fn error(message: String) -> Failure {
        Failure {
            code: Code::Error,
            message,
            nominating: None,
            post_filter: None,
            rejection: Box::default(),
        }
    }

    /// A Reserve/Permit/binding rejection: a FitError over the one chosen node.
    fn on_node(node: &str, status: Status) -> Failure {
        if !status.is_rejected() {
            return Failure {
                code: status.code(),
                message: status.message(),
                nominating: Some(clear_nomination()),
                post_filter: None,
                rejection: Box::default(),
            };
        }
        let code = status.code();
        let mut diagnosis = Diagnosis::default();
        diagnosis.add_plugin_status(&status);
        diagnosis.node_to_status.set(node, status);
        let rejection = Box::new(Rejection {
            unschedulable_plugins: diagnosis.unschedulable_plugins.clone(),
            pending_plugins: diagnosis.pending_plugins.clone(),
        });
        Failure {
            code,
            rejection,
            message: FitError {
                num_all_nodes: 1,
                diagnosis,
            }
            .to_string(),
            nominating: Some(clear_nomination()),
            post_filter: None,
        }
    }
}

fn clear_nomination() -> NominatingInfo {
    NominatingInfo {
        nominated_node_name: String::new(),
        mode: NominatingMode::Override,
    }
}

/// Upstream `numFeasibleNodesToFind`.
pub fn num_feasible_nodes_to_find(percentage: i32, num_all_nodes: usize) -> usize {
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND {
        return num_all_nodes;
    }
    let mut pct = i64::from(percentage);
    if pct == 0 {
        pct = 50 - num_all_nodes as i64 / 125;
        if pct < MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND {
            pct = MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND;
        }
    }
    let n = (num_all_nodes as i64 * pct / 100) as usize;
    n.max(MIN_FEASIBLE_NODES_TO_FIND)
}

/// Upstream `truncateMessage`: at most 1024 bytes, ending in ` ...` when cut.
pub fn truncate_message(message: &str) -> String {
    if message.len() <= NOTE_LENGTH_LIMIT {
        return message.to_string();
    }
    let suffix = " ...";
    let mut end = NOTE_LENGTH_LIMIT - suffix.len();
    while !message.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}{suffix}", &message[..end])
}

/// Schedules one pod with profile `profile`: a scheduling cycle, then (unless a Permit plugin
/// holds it) the binding.
pub(crate) fn schedule_one(
    ctx: &mut Ctx<'_>,
    profiles: &[Framework],
    profile: usize,
    pod: Shared<Pod>,
) {
    let fwk = &profiles[profile];
    ctx.queue
        .record_attempt(&crate::cache::pod_key(&pod), ctx.now);
    let explaining = ctx.explain.as_deref().is_some_and(|x| x.wants(&pod));
    let mut observer = observe(ctx, fwk, &pod);
    let mut state = CycleState::new();
    pods_to_activate::init(&mut state);
    let result = schedule_pod(ctx, fwk, &mut state, &pod, observer.as_mut());
    record_observation(ctx, observer);
    let host = match result {
        Ok(h) => h,
        Err(f) => {
            handle_failure(ctx, fwk, &pod, f);
            return;
        }
    };
    if explaining {
        note(ctx, &pod, || Outcome::Selected { node: host.clone() });
    }
    // Assume, then Reserve.
    ctx.cache.assume(PodInfo::new(Shared::clone(&pod)), &host);
    let s = {
        let mut h = ctx.handle(fwk);
        fwk.run_reserve(&mut state, &pod, &host, &mut h)
    };
    if !s.is_success() {
        rollback(ctx, fwk, &mut state, &pod, &host);
        handle_failure(ctx, fwk, &pod, Failure::on_node(&host, s));
        return;
    }
    // Annotations a Reserve plugin asked for at binding (e.g. the GPU index GpuShare chose): the
    // assumed copy in the cache carries them from now on, so later pods of this tick see the
    // decision (the Binding sends them to the apiserver).
    if let Some(annotated) = crate::binding_annotations::annotated(&state, &pod) {
        ctx.cache.forget(&pod, &host);
        ctx.cache.assume(PodInfo::new(annotated), &host);
    }
    permit_then_bind(ctx, profiles, profile, &pod, host, state);
}

/// Permit, then (upstream `schedulingCycle`'s end and `bindingCycle`): a rejection unreserves and
/// reports; a wait parks the pod at Permit; an allowed pod binds (after the siblings its Permit
/// allowed). A successful scheduling cycle (allowed or waiting) first activates the pods plugins
/// asked for.
fn permit_then_bind(
    ctx: &mut Ctx<'_>,
    profiles: &[Framework],
    profile: usize,
    pod: &Shared<Pod>,
    host: String,
    mut state: CycleState,
) {
    let fwk = &profiles[profile];
    let outcome = {
        let mut h = ctx.handle(fwk);
        fwk.run_permit(&mut state, pod, &host, &mut h)
    };
    if !matches!(outcome, PermitOutcome::Reject(_)) {
        activate_requested(ctx, &mut state);
    }
    match outcome {
        PermitOutcome::Reject(s) => {
            rollback(ctx, fwk, &mut state, pod, &host);
            handle_failure(ctx, fwk, pod, Failure::on_node(&host, s));
        }
        PermitOutcome::Wait(waits) => {
            note(ctx, pod, || Outcome::Waiting {
                node: host.clone(),
                plugins: waits.clone(),
            });
            ctx.waiting
                .add(Shared::clone(pod), host, profile, waits, state, ctx.now);
        }
        PermitOutcome::Allow => {
            // Siblings this Permit allowed bind first, in the order they started waiting.
            process_waiting(ctx, profiles);
            binding_cycle(ctx, profiles, fwk, pod, &host, state);
        }
    }
}

/// The `--explain` observer of an attempt of `pod`, when it is explained (the only per-attempt
/// cost when nothing is explained is this Option check).
fn observe(ctx: &mut Ctx<'_>, fwk: &Framework, pod: &Pod) -> Option<explain::Observer> {
    if !ctx.explain.as_deref().is_some_and(|x| x.wants(pod)) {
        return None;
    }
    let attempt = ctx.explain.as_deref().map_or(1, |x| x.next_attempt(pod));
    let n = ctx.cache.num_nodes();
    let gang = (n > 0)
        .then(|| explain::gang_fit(&ctx.handle(fwk), pod))
        .flatten();
    Some(explain::Observer::start(
        pod,
        attempt,
        ctx.now,
        fwk.scheduler_name(),
        n,
        gang,
    ))
}

/// Stores the attempt `observer` watched in the `--explain` record.
fn record_observation(ctx: &mut Ctx<'_>, observer: Option<explain::Observer>) {
    if let Some(o) = observer {
        let e = o.finish(ctx.cache.node_infos());
        if let Some(x) = ctx.explain.as_deref_mut() {
            x.begin(e);
        }
    }
}

/// Appends an outcome of `pod` to the `--explain` record when it is the explained pod;
/// `outcome` is only built then.
fn note(ctx: &mut Ctx<'_>, pod: &Pod, outcome: impl FnOnce() -> Outcome) {
    if let Some(x) = ctx.explain.as_deref_mut() {
        if x.wants(pod) {
            x.record(pod, ctx.now, outcome());
        }
    }
}

/// Unreserve in reverse order, then forget the assumed pod.
fn rollback(ctx: &mut Ctx<'_>, fwk: &Framework, state: &mut CycleState, pod: &Pod, host: &str) {
    {
        let mut h = ctx.handle(fwk);
        fwk.run_unreserve(state, pod, host, &mut h);
    }
    ctx.cache.forget(pod, host);
}

/// Upstream `bindingCycle` after WaitOnPermit: PreBind, Bind, then PostBind; a failure goes to
/// [`binding_cycle_error`].
fn binding_cycle(
    ctx: &mut Ctx<'_>,
    profiles: &[Framework],
    fwk: &Framework,
    pod: &Shared<Pod>,
    host: &str,
    mut state: CycleState,
) {
    let s = {
        let mut h = ctx.handle(fwk);
        fwk.run_pre_bind(&mut state, pod, host, &mut h)
    };
    if !s.is_success() {
        binding_cycle_error(ctx, profiles, fwk, &mut state, pod, host, s);
        return;
    }
    let s = {
        let mut h = ctx.handle(fwk);
        fwk.run_bind(&mut state, pod, host, &mut h)
    };
    if !s.is_success() {
        binding_cycle_error(ctx, profiles, fwk, &mut state, pod, host, s);
        return;
    }
    ctx.queue.remove(&crate::cache::pod_key(pod));
    ctx.nominator.remove(pod);
    note(ctx, pod, || Outcome::Bound {
        node: host.to_string(),
    });
    if let Some(log) = ctx.detached.as_deref_mut() {
        log.push((Shared::clone(pod), Ok(host.to_string())));
    } else {
        fwk.record_event(
            &mut *ctx.api,
            Involved::of(&**pod),
            event_types::NORMAL,
            EVENT_REASON_SCHEDULED,
            format!(
                "Successfully assigned {}/{} to {}",
                pod.metadata.namespace(),
                pod.metadata.name,
                host
            ),
        );
    }
    let mut h = ctx.handle(fwk);
    fwk.run_post_bind(&mut state, pod, host, &mut h);
    // A successful binding cycle ends the same way (upstream `bindingCycle`).
    activate_requested(ctx, &mut state);
}

/// Upstream `SchedulingQueue.Activate` of the attempt's PodsToActivate, which it empties.
fn activate_requested(ctx: &mut Ctx<'_>, state: &mut CycleState) {
    if let Some(pods) = pods_to_activate::take(state) {
        ctx.queue.activate(&pods, ctx.now);
    }
}

/// Upstream `handleBindingCycleError`: Unreserve in reverse order, forget the assumed pod, report
/// the failure, then offer the forget to the other unschedulable pods as an `AssignedPodDelete`
/// event (the assumed pod held resources on `host`).
fn binding_cycle_error(
    ctx: &mut Ctx<'_>,
    profiles: &[Framework],
    fwk: &Framework,
    state: &mut CycleState,
    pod: &Shared<Pod>,
    host: &str,
    status: Status,
) {
    rollback(ctx, fwk, state, pod, host);
    let f = if status.is_skip() {
        Failure::error(format!("no bind plugin bound pod {:?}", pod.metadata.name))
    } else {
        Failure::on_node(host, status)
    };
    handle_failure(ctx, fwk, pod, f);
    let mut assumed = (**pod).clone();
    assumed.spec.node_name = Some(host.to_string());
    let ev = ObservedEvent {
        event: k8s_sched_framework::events::EVENT_ASSIGNED_POD_DELETE,
        old: Some(EventObj::Pod(Shared::from_typed(assumed))),
        new: None,
        scope: EventScope::All,
    };
    let own = pod.key();
    ctx.queue.move_on_event(
        &ev,
        |p| {
            if p.key() == own {
                return None;
            }
            profiles
                .iter()
                .find(|f| f.scheduler_name() == p.scheduler_name())
                .map(Framework::queueing_hints)
        },
        |_, _| true,
    );
}

/// Resolves pods held at Permit that were allowed or rejected: binds the allowed ones, rolls back
/// and reports the rejected ones (upstream binding goroutines after `WaitOnPermit`). Rejections
/// can cascade (Coscheduling's Unreserve rejects siblings); this runs until none is decided.
pub(crate) fn process_waiting(ctx: &mut Ctx<'_>, profiles: &[Framework]) {
    while let Some(wp) = ctx.waiting.take_next_decided() {
        let Some(fwk) = profiles.get(wp.profile) else {
            continue;
        };
        let decision = wp.decision.clone().unwrap_or_default();
        if decision.is_success() {
            binding_cycle(ctx, profiles, fwk, &wp.pod, &wp.node, wp.state);
        } else {
            let mut state = wp.state;
            binding_cycle_error(ctx, profiles, fwk, &mut state, &wp.pod, &wp.node, decision);
        }
    }
}

/// Upstream `schedulePod`: the chosen node, or why there is none.
fn schedule_pod(
    ctx: &mut Ctx<'_>,
    fwk: &Framework,
    state: &mut CycleState,
    pod: &Shared<Pod>,
    mut obs: Option<&mut explain::Observer>,
) -> Result<String, Failure> {
    let num_all_nodes = ctx.cache.num_nodes();
    if num_all_nodes == 0 {
        return Err(Failure::error(MSG_NO_NODES_AVAILABLE.to_string()));
    }
    let (feasible, diagnosis) = find_nodes_that_fit(ctx, fwk, state, pod, obs.as_deref_mut())?;
    if feasible.is_empty() {
        let mut fit = FitError {
            num_all_nodes,
            diagnosis,
        };
        let (result, status) = {
            let statuses = fit.diagnosis.node_to_status.clone();
            let mut h = ctx.handle(fwk);
            fwk.run_post_filter(state, pod, &statuses, &mut h)
        };
        if status.code() == Code::Error {
            tracing::error!(pod = %pod.key(), status = %status, "PostFilter plugins failed");
        }
        fit.diagnosis.post_filter_msg = status.message();
        let rejection = Box::new(Rejection {
            unschedulable_plugins: fit.diagnosis.unschedulable_plugins.clone(),
            pending_plugins: fit.diagnosis.pending_plugins.clone(),
        });
        return Err(Failure {
            rejection,
            code: Code::Unschedulable,
            message: fit.to_string(),
            nominating: result.and_then(|r| r.nominating_info),
            post_filter: Some(Box::new(status)),
        });
    }
    let nodes = ctx.cache.node_infos();
    if feasible.len() == 1 {
        let host = nodes[feasible[0]].name().to_string();
        if let Some(o) = obs {
            o.one_feasible(&host);
        }
        return Ok(host);
    }
    let mut refs: Vec<&NodeInfo> = scratch::take();
    refs.extend(feasible.iter().map(|i| &nodes[*i]));
    // The handle borrows the context field by field so `refs` can keep borrowing the cache.
    let handle = CycleHandle {
        fwk,
        api: &mut *ctx.api,
        cache: &*ctx.cache,
        waiting: &mut *ctx.waiting,
        nominator: &*ctx.nominator,
        now: ctx.now,
    };
    let s = fwk.run_pre_score(state, pod, &refs, &handle);
    if !s.is_success() {
        if let Some(o) = obs {
            o.pre_score_failed(&s);
        }
        return Err(Failure::error(s.message()));
    }
    if let Some(o) = obs {
        // `--explain`: every plugin's scores, then the same totals and choice.
        let per_plugin = fwk.run_score_explained(state, pod, &refs).map_err(|s| {
            o.score_failed(&s);
            Failure::error(s.message())
        })?;
        let totals = o.scored(&refs, &per_plugin);
        let best = feasible
            .iter()
            .zip(&totals)
            .max_by_key(|(idx, total)| (**total, **idx))
            .map_or(feasible[0], |(idx, _)| *idx);
        return Ok(nodes[best].name().to_string());
    }
    // select_host by index: the cache's node list is in name order, so among equal totals the
    // highest index is the name sorting last.
    let best = match fwk.fused_score(state, pod) {
        // The fused node pass (runtime/fused.rs): same totals and choice.
        Some(plan) => fwk
            .select_host_fused(&plan, state, pod, ctx.cache.node_arrays(), &refs, &feasible)
            .map_err(|s| Failure::error(s.message()))?,
        None => {
            let mut scores = ScoreScratch::pooled();
            fwk.score_batch(state, pod, &refs, &mut scores)
                .map_err(|s| Failure::error(s.message()))?;
            let best = feasible
                .iter()
                .zip(&scores.totals)
                .max_by_key(|(idx, total)| (**total, **idx))
                .map_or(feasible[0], |(idx, _)| *idx);
            scores.release();
            best
        }
    };
    scratch::give(refs);
    scratch::give(feasible);
    Ok(nodes[best].name().to_string())
}

/// Upstream `handleSchedulingFailure`: back to the queue with backoff; a `FailedScheduling`
/// Warning event (only when the message differs from the last one recorded for the pod, to avoid
/// one event per retry); the `PodScheduled=False` condition and the nomination, when they change.
fn handle_failure(ctx: &mut Ctx<'_>, fwk: &Framework, pod: &Shared<Pod>, f: Failure) {
    let key = pod.key();
    let rejected = matches!(
        f.code,
        Code::Unschedulable | Code::UnschedulableAndUnresolvable | Code::Pending
    );
    // Upstream keeps the rejector plugins only for a FitError; an error goes to backoff.
    let rejection = if rejected {
        (*f.rejection).clone()
    } else {
        Rejection::default()
    };
    ctx.queue
        .record_failure(&key, ctx.now, rejection, fwk.queueing_hints());
    note(ctx, pod, || {
        let reason = if rejected {
            REASON_UNSCHEDULABLE
        } else {
            REASON_SCHEDULER_ERROR
        };
        Outcome::failed(
            reason,
            &f.message,
            f.post_filter.as_deref(),
            f.nominating.as_ref(),
        )
    });
    if let Some(ni) = &f.nominating {
        if ni.mode == NominatingMode::Override {
            if ni.nominated_node_name.is_empty() {
                ctx.nominator.remove(pod);
            } else {
                ctx.nominator.add(pod, &ni.nominated_node_name);
            }
        }
    }
    if let Some(log) = ctx.detached.as_deref_mut() {
        log.push((
            Shared::clone(pod),
            Err((f.code, truncate_message(&f.message))),
        ));
        return;
    }
    let Ok(fresh) = ctx
        .api
        .get_typed::<Pod>(pod.metadata.namespace(), &pod.metadata.name)
    else {
        // Deleted meanwhile: nothing to report (upstream: "Pod doesn't exist in informer cache").
        return;
    };
    if !k8s_sched_framework::node_info::same_pod(&fresh, pod) || fresh.node_name().is_some() {
        return;
    }
    let reason = if rejected {
        REASON_UNSCHEDULABLE
    } else {
        REASON_SCHEDULER_ERROR
    };
    let msg = truncate_message(&f.message);
    let emit = match ctx.queue.last_message(&key) {
        Some(last) => last != msg,
        None => !fresh
            .condition(pod_conditions::POD_SCHEDULED)
            .is_some_and(|c| {
                c.status == condition_status::FALSE
                    && c.reason.as_deref() == Some(reason)
                    && c.message.as_deref() == Some(f.message.as_str())
            }),
    };
    if emit {
        fwk.record_event(
            &mut *ctx.api,
            Involved::of(&fresh),
            event_types::WARNING,
            EVENT_REASON_FAILED_SCHEDULING,
            msg.clone(),
        );
    }
    ctx.queue.set_last_message(&key, msg);
    let mut updated = fresh.clone();
    updated.set_condition(PodCondition {
        type_: pod_conditions::POD_SCHEDULED.into(),
        status: condition_status::FALSE.into(),
        reason: Some(reason.into()),
        message: Some(f.message.as_str().into()),
        last_transition_time: Some(tick_timestamp_compact(ctx.now)),
    });
    if let Some(ni) = &f.nominating {
        if ni.mode == NominatingMode::Override {
            updated.status.nominated_node_name = if ni.nominated_node_name.is_empty() {
                None
            } else {
                Some(ni.nominated_node_name.as_str().into())
            };
        }
    }
    if updated.status != fresh.status {
        if let Err(e) = ctx.api.update_status_typed(updated) {
            tracing::warn!(pod = %key, error = %e, "updating the pod's PodScheduled condition failed");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn feasible_nodes_to_find_follows_upstream() {
        assert_eq!(num_feasible_nodes_to_find(0, 10), 10);
        assert_eq!(num_feasible_nodes_to_find(0, 1000), 420);
        assert_eq!(num_feasible_nodes_to_find(0, 6000), 300);
        assert_eq!(num_feasible_nodes_to_find(10, 500), 100);
        assert_eq!(num_feasible_nodes_to_find(50, 1000), 500);
    }

    #[test]
    fn truncation_keeps_1024_bytes() {
        let long = "x".repeat(2000);
        let t = truncate_message(&long);
        assert_eq!(t.len(), 1024);
        assert!(t.ends_with(" ..."));
        assert_eq!(truncate_message("short"), "short");
    }
}
