//! Read-side helpers over the apiserver shared by expectations and output: pods per node, allocated
//! and free resources per node, allocated device IDs, and the READY, STATUS and RESTARTS columns of
//! `kubectl get pods` (upstream kubectl's `printPod`).

use std::collections::BTreeMap;

use k8s_types::apiserver::{ApiClient, ApiExt};
use k8s_types::core::{
    condition_status, phases, pod_conditions, Container, ContainerStateDetail, ContainerStatus,
    Node, Pod, ALLOCATED_DEVICES_ANNOTATION,
};
use k8s_types::meta::timestamp_tick;
use k8s_types::resources::{pod_requests, Resources};
use k8s_types::Tick;

/// Pods that hold node resources: bound and not terminal (pods being deleted still hold them until
/// gone, as in the scheduler's cache).
pub fn holds_resources(pod: &Pod) -> bool {
    pod.node_name().is_some() && !pod.is_terminal()
}

/// Sum of the effective requests of the pods holding resources on each node, plus pod counts.
pub fn allocated_by_node(api: &dyn ApiClient) -> BTreeMap<String, Resources> {
    let mut out: BTreeMap<String, Resources> = BTreeMap::new();
    for node in api.list_typed::<Node>(None, None) {
        out.insert(node.metadata.name.clone(), Resources::default());
    }
    for pod in api.list_typed::<Pod>(None, None) {
        if !holds_resources(&pod) {
            continue;
        }
        let Some(node) = pod.node_name() else {
            continue;
        };
        let entry = out.entry(node.to_string()).or_default();
        let mut r = pod_requests(&pod);
        r.pods = 1;
        entry.add(&r);
    }
    out
}

/// Device IDs per resource recorded on the pod by the kubelet's device manager
/// (annotation `k8s-mini.io/allocated-devices: nvidia.com/gpu=0,1`).
pub fn pod_devices(pod: &Pod) -> BTreeMap<String, Vec<String>> {
    let mut out = BTreeMap::new();
    if let Some(v) = pod.metadata.annotations.get(ALLOCATED_DEVICES_ANNOTATION) {
        for part in v.split(';').filter(|p| !p.is_empty()) {
            if let Some((res, ids)) = part.split_once('=') {
                out.insert(
                    res.to_string(),
                    ids.split(',')
                        .filter(|s| !s.is_empty())
                        .map(str::to_string)
                        .collect(),
                );
            }
        }
    }
    out
}

/// The `status.reason` the node lifecycle controller gives the pods of an unreachable node; kubectl
/// prints such a pod, once it is being deleted, as `Unknown` (upstream
/// `pkg/util/node.NodeUnreachablePodReason`).
pub const NODE_UNREACHABLE_POD_REASON: &str = "NodeLost";

/// The reason of the `PodScheduled` condition of a pod held by scheduling gates (upstream
/// `v1.PodReasonSchedulingGated`).
const POD_REASON_SCHEDULING_GATED: &str = "SchedulingGated";

/// READY, STATUS and RESTARTS of one row of `kubectl get pods`, as upstream kubectl's `printPod`
/// computes them (kubernetes/kubernetes `pkg/printers/internalversion/printers.go`, `printPod`,
/// v1.32), before the age of the last restart is rendered against a clock
/// ([`PodPrint::restarts_column`]). Built by [`print_pod`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PodPrint {
    /// Ready containers: app containers that are ready and running, plus sidecars (restartable init
    /// containers) that are started and ready.
    pub ready: usize,
    /// App containers plus sidecars in the spec.
    pub total: usize,
    /// The STATUS column.
    pub status: String,
    /// The restarts counted: while the pod initializes, those of the init containers looked at so
    /// far; afterwards those of the sidecars and the app containers.
    pub restarts: i64,
    /// The latest `lastState.terminated.finishedAt` among the containers counted, as a tick.
    pub last_restart: Option<Tick>,
}

impl PodPrint {
    /// The READY column: `ready/total`.
    pub fn ready_column(&self) -> String {
        format!("{}/{}", self.ready, self.total)
    }

    /// The RESTARTS column at tick `now`: `N`, or `N (<age> ago)` when something restarted and a
    /// last restart time is known, the age being `duration.HumanDuration(now - finishedAt)` (upstream
    /// `printPod` with `translateTimestampSince`).
    pub fn restarts_column(&self, now: Tick) -> String {
        match self.last_restart {
            Some(last) if self.restarts != 0 => {
                let age = i64::try_from(now)
                    .unwrap_or(i64::MAX)
                    .saturating_sub(i64::try_from(last).unwrap_or(i64::MAX));
                format!("{} ({} ago)", self.restarts, human_duration(age))
            }
            _ => self.restarts.to_string(),
        }
    }
}

/// `Some(text)` for a set, non-empty string (Go's `len(s) > 0` on a field that is `""` when unset).
fn nonempty<S: AsRef<str>>(s: &Option<S>) -> Option<&str> {
    s.as_ref().map(AsRef::as_ref).filter(|s| !s.is_empty())
}

/// The tick of a container's `lastState.terminated.finishedAt`, if set (and written by
/// [`tick_timestamp`](k8s_types::meta::tick_timestamp)).
fn last_finished(c: &ContainerStatus) -> Option<Tick> {
    c.last_state
        .terminated
        .as_ref()
        .and_then(|t| t.finished_at.as_deref())
        .and_then(timestamp_tick)
}

/// Keeps the later of two times (upstream `if lastRestartDate.Before(&terminatedDate)`).
fn keep_later(acc: &mut Option<Tick>, t: Option<Tick>) {
    if let Some(t) = t {
        if acc.is_none_or(|a| a < t) {
            *acc = Some(t);
        }
    }
}

/// `ExitCode:N`, or `Signal:N` when the runtime reported a signal: the status of a terminated
/// container without a reason (upstream `printPod`).
fn exit_reason(t: &ContainerStateDetail) -> String {
    match t.signal.unwrap_or(0) {
        0 => format!("ExitCode:{}", t.exit_code.unwrap_or(0)),
        signal => format!("Signal:{signal}"),
    }
}

/// READY, STATUS and the restarts of a pod, as kubectl's `printPod` (upstream
/// `pkg/printers/internalversion/printers.go`, v1.32) computes them:
///
/// - STATUS starts as `status.reason`, else the phase; a `PodScheduled` condition with reason
///   `SchedulingGated` makes it `SchedulingGated`.
/// - Init container statuses are walked in order: one terminated with exit code 0 is done; a sidecar
///   (`restartPolicy: Always`) that has started is done (and counted in READY when ready); the first
///   other one decides the STATUS and stops the walk: `Init:<reason>` / `Init:Signal:N` /
///   `Init:ExitCode:N` when terminated, `Init:<waiting reason>` when waiting with a reason other than
///   `PodInitializing`, else `Init:<index>/<number of init containers>`.
/// - Unless an init container decided it (and the `Initialized` condition is not `True`), the app
///   container statuses are walked from the last to the first, each overriding the STATUS with its
///   waiting reason, its terminated reason, or `Signal:N` / `ExitCode:N`; a container that is ready and
///   running counts in READY. A resulting `Completed` while some container still runs becomes
///   `Running` when the pod's `Ready` condition is `True`, else `NotReady`.
/// - A pod with a `deletionTimestamp` shows `Unknown` when its reason is `NodeLost`, else
///   `Terminating` unless its phase is `Succeeded` or `Failed`.
/// - Restarts: the init containers' `restartCount` up to where the walk stopped; once the app
///   containers are looked at, only the sidecars' plus the app containers'. The last restart is the
///   latest `lastState.terminated.finishedAt` among the same containers.
pub fn print_pod(pod: &Pod) -> PodPrint {
    let phase = pod.status.phase.as_deref().unwrap_or("");
    let mut status = nonempty(&pod.status.reason).unwrap_or(phase).to_string();
    if pod.status.conditions.iter().any(|c| {
        c.type_ == pod_conditions::POD_SCHEDULED
            && c.reason.as_deref() == Some(POD_REASON_SCHEDULING_GATED)
    }) {
        status = POD_REASON_SCHEDULING_GATED.to_string();
    }
    let is_sidecar = |name: &str| {
        pod.spec
            .init_containers
            .iter()
            .find(|c| c.name == name)
            .is_some_and(Container::is_sidecar)
    };
    let total = pod.spec.containers.len()
        + pod
            .spec
            .init_containers
            .iter()
            .filter(|c| c.is_sidecar())
            .count();
    let mut ready = 0;
    let mut restarts = 0i64;
    let mut last_restart = None;
    let mut sidecar_restarts = 0i64;
    let mut sidecar_last_restart = None;

    let mut initializing = false;
    for (i, c) in pod.status.init_container_statuses.iter().enumerate() {
        restarts += i64::from(c.restart_count);
        keep_later(&mut last_restart, last_finished(c));
        let sidecar = is_sidecar(&c.name);
        if sidecar {
            sidecar_restarts += i64::from(c.restart_count);
            keep_later(&mut sidecar_last_restart, last_finished(c));
        }
        if c.state
            .terminated
            .as_ref()
            .is_some_and(|t| t.exit_code.unwrap_or(0) == 0)
        {
            continue;
        }
        if sidecar && c.started == Some(true) {
            if c.ready {
                ready += 1;
            }
            continue;
        }
        let waiting = c
            .state
            .waiting
            .as_ref()
            .and_then(|w| nonempty(&w.reason))
            .filter(|r| *r != "PodInitializing");
        status = match (&c.state.terminated, waiting) {
            (Some(t), _) => match nonempty(&t.reason) {
                Some(reason) => format!("Init:{reason}"),
                None => format!("Init:{}", exit_reason(t)),
            },
            (None, Some(reason)) => format!("Init:{reason}"),
            (None, None) => format!("Init:{i}/{}", pod.spec.init_containers.len()),
        };
        initializing = true;
        break;
    }

    let initialized = pod
        .condition(pod_conditions::INITIALIZED)
        .is_some_and(|c| c.status == condition_status::TRUE);
    if !initializing || initialized {
        restarts = sidecar_restarts;
        last_restart = sidecar_last_restart;
        let mut has_running = false;
        for c in pod.status.container_statuses.iter().rev() {
            restarts += i64::from(c.restart_count);
            keep_later(&mut last_restart, last_finished(c));
            if let Some(reason) = c.state.waiting.as_ref().and_then(|w| nonempty(&w.reason)) {
                status = reason.to_string();
            } else if let Some(t) = &c.state.terminated {
                status = match nonempty(&t.reason) {
                    Some(reason) => reason.to_string(),
                    None => exit_reason(t),
                };
            } else if c.ready && c.state.running.is_some() {
                has_running = true;
                ready += 1;
            }
        }
        if status == "Completed" && has_running {
            status = if pod.is_ready() {
                "Running"
            } else {
                "NotReady"
            }
            .to_string();
        }
    }

    if pod.metadata.deletion_timestamp.is_some() {
        if pod.status.reason.as_deref() == Some(NODE_UNREACHABLE_POD_REASON) {
            status = "Unknown".to_string();
        } else if !matches!(phase, phases::SUCCEEDED | phases::FAILED) {
            status = "Terminating".to_string();
        }
    }

    PodPrint {
        ready,
        total,
        status,
        restarts,
        last_restart,
    }
}

/// The STATUS column of `kubectl get pods` (see [`print_pod`]).
pub fn kubectl_status(pod: &Pod) -> String {
    print_pod(pod).status
}

/// A duration of whole seconds as kubectl prints ages: ~2-3 significant figures (`70s`, `3m10s`,
/// `70m`, `2d1h`, `367d`, `2y1d`; `0s` for -1, `<invalid>` below that). Upstream
/// `k8s.io/apimachinery/pkg/util/duration.HumanDuration` (a tick is a second, so no fractions).
pub fn human_duration(seconds: i64) -> String {
    if seconds < -1 {
        return "<invalid>".to_string();
    }
    if seconds < 0 {
        return "0s".to_string();
    }
    if seconds < 60 * 2 {
        return format!("{seconds}s");
    }
    let minutes = seconds / 60;
    if minutes < 10 {
        let s = seconds % 60;
        return if s == 0 {
            format!("{minutes}m")
        } else {
            format!("{minutes}m{s}s")
        };
    }
    if minutes < 60 * 3 {
        return format!("{minutes}m");
    }
    let hours = seconds / 3600;
    if hours < 8 {
        let m = minutes % 60;
        return if m == 0 {
            format!("{hours}h")
        } else {
            format!("{hours}h{m}m")
        };
    }
    if hours < 48 {
        return format!("{hours}h");
    }
    if hours < 24 * 8 {
        let h = hours % 24;
        return if h == 0 {
            format!("{}d", hours / 24)
        } else {
            format!("{}d{h}h", hours / 24)
        };
    }
    if hours < 24 * 365 * 2 {
        return format!("{}d", hours / 24);
    }
    if hours < 24 * 365 * 8 {
        let dy = (hours / 24) % 365;
        return if dy == 0 {
            format!("{}y", hours / 24 / 365)
        } else {
            format!("{}y{dy}d", hours / 24 / 365)
        };
    }
    format!("{}y", hours / 24 / 365)
}

/// A resource amount in kubectl's units: cpu in milli-CPU (`1500m`, or whole cores), memory in Mi/Gi
/// when exact, anything else as an integer.
pub fn format_amount(resource: &str, amount: i64) -> String {
    match resource {
        "cpu" => {
            if amount % 1000 == 0 {
                format!("{}", amount / 1000)
            } else {
                format!("{amount}m")
            }
        }
        "memory" | "ephemeral-storage" => {
            const GI: i64 = 1 << 30;
            const MI: i64 = 1 << 20;
            const KI: i64 = 1 << 10;
            if amount != 0 && amount % GI == 0 {
                format!("{}Gi", amount / GI)
            } else if amount != 0 && amount % MI == 0 {
                format!("{}Mi", amount / MI)
            } else if amount != 0 && amount % KI == 0 {
                format!("{}Ki", amount / KI)
            } else {
                amount.to_string()
            }
        }
        _ => amount.to_string(),
    }
}

#[cfg(test)]
mod tests {
    //! `printPod` cases ported from upstream `pkg/printers/internalversion/printers_test.go`
    //! (`TestPrintPod`, `TestPrintPodWithRestartableInitContainer`, `TestPrintNonTerminatedPod`,
    //! `TestPrintPodConditions`, `TestPrintPodList`, `TestTranslateTimestampSince`) and
    //! `HumanDuration` cases from apimachinery `pkg/util/duration/duration_test.go`, with upstream's
    //! expected strings. Upstream's `time.Now().Add(-10 * time.Second)` is `NOW - 10` here.
    use super::*;
    use k8s_types::core::{ContainerState, PodCondition};
    use k8s_types::meta::tick_timestamp;

    const NOW: Tick = 1_000_000_000;

    fn detail(reason: &str) -> ContainerStateDetail {
        ContainerStateDetail {
            reason: (!reason.is_empty()).then(|| reason.into()),
            ..Default::default()
        }
    }

    fn running() -> ContainerState {
        ContainerState {
            running: Some(Box::default()),
            ..Default::default()
        }
    }

    fn waiting(reason: &str) -> ContainerState {
        ContainerState {
            waiting: Some(Box::new(detail(reason))),
            ..Default::default()
        }
    }

    fn terminated(reason: &str, exit_code: i32) -> ContainerState {
        ContainerState {
            terminated: Some(Box::new(ContainerStateDetail {
                exit_code: Some(exit_code),
                ..detail(reason)
            })),
            ..Default::default()
        }
    }

    /// `LastTerminationState: {Terminated: {FinishedAt: now - ago}}`.
    fn finished(ago: Tick) -> ContainerState {
        ContainerState {
            terminated: Some(Box::new(ContainerStateDetail {
                finished_at: Some(k8s_types::meta::tick_timestamp_compact(NOW - ago)),
                ..Default::default()
            })),
            ..Default::default()
        }
    }

    fn cs(ready: bool, restart_count: i32, state: ContainerState) -> ContainerStatus {
        ContainerStatus {
            ready,
            restart_count,
            state,
            ..Default::default()
        }
    }

    fn with_last(mut c: ContainerStatus, ago: Tick) -> ContainerStatus {
        c.last_state = finished(ago);
        c
    }

    fn named(name: &str, started: Option<bool>, c: ContainerStatus) -> ContainerStatus {
        ContainerStatus {
            name: name.into(),
            started,
            ..c
        }
    }

    fn pod(containers: usize, init: usize, phase: &str) -> Pod {
        let mut p = Pod::default();
        p.spec.containers = vec![Container::default(); containers].into();
        p.spec.init_containers = vec![Container::default(); init];
        p.status.phase = Some(phase.into());
        p
    }

    fn sidecar(name: &str) -> Container {
        Container {
            name: name.to_string(),
            restart_policy: Some("Always".to_string()),
            ..Default::default()
        }
    }

    fn condition(type_: &str, status: &str) -> PodCondition {
        PodCondition {
            type_: type_.into(),
            status: status.into(),
            ..Default::default()
        }
    }

    /// READY, STATUS, RESTARTS at `NOW`.
    fn cells(p: &Pod) -> (String, String, String) {
        let printed = print_pod(p);
        (
            printed.ready_column(),
            printed.status.clone(),
            printed.restarts_column(NOW),
        )
    }

    fn expect(p: &Pod, ready: &str, status: &str, restarts: &str) {
        assert_eq!(
            cells(p),
            (ready.to_string(), status.to_string(), restarts.to_string()),
            "{p:#?}"
        );
    }

    #[test]
    fn upstream_test_print_pod() {
        // test1: name, num of containers, restarts, container ready status.
        let mut p = pod(2, 0, "podPhase");
        p.status.container_statuses =
            vec![cs(true, 3, running()), cs(false, 3, Default::default())].into();
        expect(&p, "1/2", "podPhase", "6");
        // test2: container error overwrites pod phase.
        p.status.container_statuses = vec![
            cs(true, 3, running()),
            cs(false, 3, waiting("ContainerWaitingReason")),
        ]
        .into();
        expect(&p, "1/2", "ContainerWaitingReason", "6");
        // test3: Terminated state, the first container overwrites the rest.
        p.status.container_statuses = vec![
            cs(false, 3, waiting("ContainerWaitingReason")),
            cs(false, 3, terminated("ContainerTerminatedReason", 0)),
        ]
        .into();
        expect(&p, "0/2", "ContainerWaitingReason", "6");
        // test4: ready is not enough for reporting running.
        p.status.container_statuses =
            vec![cs(true, 3, running()), cs(true, 3, Default::default())].into();
        expect(&p, "1/2", "podPhase", "6");
        // test5: the pod's reason.
        p.status.reason = Some("podReason".into());
        expect(&p, "1/2", "podReason", "6");

        // test6: one running, one completed, without and with the Ready condition.
        let mut p = pod(2, 0, "Running");
        p.status.container_statuses = vec![
            cs(true, 3, terminated("Completed", 0)),
            cs(true, 3, running()),
        ]
        .into();
        expect(&p, "1/2", "NotReady", "6");
        p.status.conditions = vec![condition("Ready", "True")].into();
        expect(&p, "1/2", "Running", "6");

        // test7: 1 init container restarting and 1 container not running.
        let mut p = pod(1, 1, "podPhase");
        p.status.init_container_statuses = vec![with_last(cs(false, 3, running()), 10)].into();
        p.status.container_statuses = vec![cs(false, 0, waiting(""))].into();
        expect(&p, "0/1", "Init:0/1", "3 (10s ago)");

        // test8: 2 init containers, one restarting and the other not running.
        let mut p = pod(1, 2, "podPhase");
        p.status.init_container_statuses = vec![
            with_last(cs(false, 3, running()), 10),
            cs(false, 0, waiting("")),
        ]
        .into();
        p.status.container_statuses = vec![cs(false, 0, waiting(""))].into();
        expect(&p, "0/1", "Init:0/2", "3 (10s ago)");
        // test9: one completed without restarts, the other restarting.
        p.status.init_container_statuses = vec![
            cs(false, 0, terminated("", 0)),
            with_last(cs(false, 3, running()), 10),
        ]
        .into();
        expect(&p, "0/1", "Init:1/2", "3 (10s ago)");
        // test10: one completed with restarts, the other restarting.
        p.status.init_container_statuses = vec![
            with_last(cs(false, 2, terminated("", 0)), 120),
            with_last(cs(false, 3, running()), 10),
        ]
        .into();
        expect(&p, "0/1", "Init:1/2", "5 (10s ago)");

        // test11: 1 init container completed with restarts and one container restarting.
        let mut p = pod(1, 1, "Running");
        p.status.init_container_statuses =
            vec![with_last(cs(false, 2, terminated("", 0)), 120)].into();
        p.status.container_statuses = vec![with_last(cs(false, 4, running()), 20)].into();
        expect(&p, "0/1", "Running", "4 (20s ago)");

        // test12: 1 container that restarted 5d ago.
        let mut p = pod(1, 0, "Running");
        p.status.container_statuses = vec![with_last(cs(true, 3, running()), 5 * 86_400)].into();
        expect(&p, "1/1", "Running", "3 (5d ago)");
        // test13: one never restarted, the other restarted 10d ago.
        let mut p = pod(2, 0, "Running");
        p.status.container_statuses = vec![
            cs(true, 0, running()),
            with_last(cs(true, 3, running()), 10 * 86_400),
        ]
        .into();
        expect(&p, "2/2", "Running", "3 (10d ago)");
        // test14: one restarted 5d ago and the other 20d ago.
        p.status.container_statuses = vec![
            with_last(cs(true, 6, running()), 5 * 86_400),
            with_last(cs(true, 3, running()), 20 * 86_400),
        ]
        .into();
        expect(&p, "2/2", "Running", "9 (5d ago)");

        // test15: PodScheduled condition with reason SchedulingGated.
        let mut p = pod(2, 0, "podPhase");
        p.status.conditions = vec![PodCondition {
            reason: Some("SchedulingGated".into()),
            ..condition("PodScheduled", "False")
        }]
        .into();
        expect(&p, "0/2", "SchedulingGated", "0");

        // test16 / test17: succeeded and failed pods.
        let mut p = pod(1, 0, "Succeeded");
        p.status.container_statuses = vec![cs(false, 0, terminated("Completed", 0))].into();
        expect(&p, "0/1", "Completed", "0");
        let mut failed = pod(1, 0, "Failed");
        failed.status.container_statuses = vec![cs(false, 0, terminated("Error", 1))].into();
        expect(&failed, "0/1", "Error", "0");
        // test18: succeeded with deletion: a terminal pod is not Terminating.
        p.metadata.deletion_timestamp = Some(tick_timestamp(NOW - 10).into());
        expect(&p, "0/1", "Completed", "0");
        // test19: running with deletion.
        let mut p = pod(1, 0, "Running");
        p.metadata.deletion_timestamp = Some(tick_timestamp(NOW - 10).into());
        p.status.container_statuses = vec![cs(false, 0, running())].into();
        expect(&p, "0/1", "Terminating", "0");
        // test20: pending with deletion.
        let mut p = pod(1, 0, "Pending");
        p.metadata.deletion_timestamp = Some(tick_timestamp(NOW - 10).into());
        expect(&p, "0/1", "Terminating", "0");
    }

    #[test]
    fn upstream_test_print_pod_with_restartable_init_container() {
        let base = |phase: &str, initialized: &str| {
            let mut p = pod(1, 0, phase);
            p.spec.init_containers =
                vec![sidecar("restartable-init-1"), sidecar("restartable-init-2")];
            p.status.conditions = vec![condition("Initialized", initialized)].into();
            p
        };
        // The first sidecar running but not started.
        let mut p = base("Pending", "False");
        p.status.init_container_statuses = vec![
            named(
                "restartable-init-1",
                Some(false),
                with_last(cs(false, 3, running()), 10),
            ),
            named("restartable-init-2", Some(false), cs(false, 0, waiting(""))),
        ]
        .into();
        p.status.container_statuses = vec![cs(false, 0, waiting(""))].into();
        expect(&p, "0/3", "Init:0/2", "3 (10s ago)");
        // The first started, the second running but not started.
        p.status.init_container_statuses[0].started = Some(true);
        p.status.init_container_statuses[1] =
            named("restartable-init-2", Some(false), cs(false, 0, running()));
        expect(&p, "0/3", "Init:1/2", "3 (10s ago)");

        // Both sidecars started and 1 container running.
        let mut p = base("Running", "True");
        p.status.init_container_statuses = vec![
            named(
                "restartable-init-1",
                Some(true),
                with_last(cs(false, 3, running()), 10),
            ),
            named("restartable-init-2", Some(true), cs(false, 0, running())),
        ]
        .into();
        p.status.container_statuses = vec![with_last(cs(true, 4, running()), 20)].into();
        expect(&p, "1/3", "Running", "7 (10s ago)");

        // Both sidecars terminated with a non-zero code and the container completed.
        let mut p = base("Succeeded", "True");
        p.status.init_container_statuses = vec![
            named(
                "restartable-init-1",
                Some(false),
                with_last(cs(false, 3, terminated("Error", 137)), 10),
            ),
            named(
                "restartable-init-2",
                Some(false),
                cs(false, 0, terminated("Error", 137)),
            ),
        ]
        .into();
        p.status.container_statuses =
            vec![with_last(cs(false, 4, terminated("Completed", 0)), 20)].into();
        expect(&p, "0/3", "Completed", "7 (10s ago)");

        // Statuses for init containers and containers the spec does not have.
        let mut p = pod(0, 0, "Running");
        p.spec.init_containers = vec![
            Container {
                name: "init1".into(),
                image: "initimage".into(),
                ..Default::default()
            },
            Container {
                image: "sidecarimage".into(),
                ..sidecar("sidecar1")
            },
        ];
        p.spec.containers = vec![Container {
            name: "container1".into(),
            image: "containerimage".into(),
            ..Default::default()
        }]
        .into();
        let bare = |name: &str| ContainerStatus {
            name: name.into(),
            ..Default::default()
        };
        p.status.init_container_statuses =
            vec![bare("initinvalid"), bare("init1"), bare("sidecar1")].into();
        p.status.container_statuses = vec![bare("containerinvalid"), bare("container1")].into();
        expect(&p, "0/2", "Init:0/2", "0");
    }

    #[test]
    fn upstream_test_print_non_terminated_pod_and_conditions() {
        // TestPrintNonTerminatedPod (and TestPrintPodConditions, the same pods): the phase shows.
        for (phase, want) in [
            ("Running", "Running"),
            ("Pending", "Pending"),
            ("Unknown", "Unknown"),
            ("Succeeded", "Succeeded"),
            ("Failed", "Failed"),
        ] {
            let mut p = pod(2, 0, phase);
            p.status.container_statuses =
                vec![cs(true, 3, running()), cs(false, 3, Default::default())].into();
            expect(&p, "1/2", want, "6");
        }
    }

    #[test]
    fn upstream_test_print_pod_list() {
        let mut a = pod(2, 0, "podPhase");
        a.status.container_statuses = vec![cs(true, 3, running()), cs(true, 3, running())].into();
        let mut b = pod(1, 0, "podPhase");
        b.status.container_statuses = vec![cs(true, 1, running())].into();
        expect(&a, "2/2", "podPhase", "6");
        expect(&b, "1/1", "podPhase", "1");
    }

    /// Cases upstream's tests do not have, worked out by hand from `printPod`.
    #[test]
    fn terminated_and_waiting_reasons_of_init_and_app_containers() {
        // Init containers: terminated without a reason (exit code, then signal), with a reason, and
        // waiting with a reason; PodInitializing is not an Init: reason.
        let mut p = pod(1, 2, "Pending");
        p.status.init_container_statuses =
            vec![cs(false, 0, terminated("", 2)), cs(false, 0, waiting(""))].into();
        expect(&p, "0/1", "Init:ExitCode:2", "0");
        p.status.init_container_statuses[0]
            .state
            .terminated
            .as_mut()
            .expect("terminated")
            .signal = Some(9);
        expect(&p, "0/1", "Init:Signal:9", "0");
        p.status.init_container_statuses[0] = with_last(cs(false, 2, terminated("Error", 1)), 30);
        expect(&p, "0/1", "Init:Error", "2 (30s ago)");
        p.status.init_container_statuses[0] =
            with_last(cs(false, 3, waiting("CrashLoopBackOff")), 7);
        expect(&p, "0/1", "Init:CrashLoopBackOff", "3 (7s ago)");
        p.status.init_container_statuses[0] = cs(false, 0, waiting("PodInitializing"));
        expect(&p, "0/1", "Init:0/2", "0");
        // The app container's restarts are not counted while an init container decides.
        p.status.init_container_statuses[0] = cs(false, 0, terminated("Completed", 0));
        p.status.container_statuses = vec![cs(false, 5, waiting("PodInitializing"))].into();
        expect(&p, "0/1", "Init:1/2", "0");
        // Both init containers done: the app container decides.
        p.status.init_container_statuses[1] = cs(false, 0, terminated("Completed", 0));
        expect(&p, "0/1", "PodInitializing", "5");

        // App containers, last to first: the first one's reason wins.
        let mut p = pod(2, 0, "Running");
        p.status.container_statuses = vec![
            with_last(cs(false, 4, waiting("CrashLoopBackOff")), 125),
            cs(true, 0, running()),
        ]
        .into();
        expect(&p, "1/2", "CrashLoopBackOff", "4 (2m5s ago)");
        p.status.container_statuses[0] = with_last(cs(false, 1, terminated("OOMKilled", 137)), 3);
        expect(&p, "1/2", "OOMKilled", "1 (3s ago)");
        p.status.container_statuses[0] = cs(false, 0, terminated("", 143));
        expect(&p, "1/2", "ExitCode:143", "0");
        p.status.container_statuses[0]
            .state
            .terminated
            .as_mut()
            .expect("terminated")
            .signal = Some(15);
        expect(&p, "1/2", "Signal:15", "0");
    }

    #[test]
    fn deleted_pods_show_terminating_or_unknown_for_node_lost() {
        let mut p = pod(1, 0, "Running");
        p.status.container_statuses = vec![cs(true, 0, running())].into();
        p.status.conditions = vec![condition("Ready", "True")].into();
        expect(&p, "1/1", "Running", "0");
        p.metadata.deletion_timestamp = Some(tick_timestamp(NOW).into());
        expect(&p, "1/1", "Terminating", "0");
        p.status.reason = Some("NodeLost".into());
        expect(&p, "1/1", "Unknown", "0");
        // NodeLost without deletion: the reason itself.
        p.metadata.deletion_timestamp = None;
        expect(&p, "1/1", "NodeLost", "0");
        // A failed pod being deleted keeps its status.
        let mut p = pod(1, 0, "Failed");
        p.status.reason = Some("Evicted".into());
        p.metadata.deletion_timestamp = Some(tick_timestamp(NOW).into());
        expect(&p, "0/1", "Evicted", "0");
    }

    #[test]
    fn restarts_without_a_known_finish_time_show_the_count_only() {
        let mut p = pod(1, 0, "Running");
        p.status.container_statuses = vec![cs(true, 2, running())].into();
        expect(&p, "1/1", "Running", "2");
        // Tick 0 is a real time (1970-01-01T00:00:00Z), unlike Go's zero time.
        p.status.container_statuses[0].last_state = ContainerState {
            terminated: Some(Box::new(ContainerStateDetail {
                finished_at: Some(k8s_types::meta::tick_timestamp_compact(0)),
                ..Default::default()
            })),
            ..Default::default()
        };
        assert_eq!(print_pod(&p).last_restart, Some(0));
        assert_eq!(print_pod(&p).restarts_column(190), "2 (3m10s ago)");
        // A finish time in the future (clock skew): 1 s is "0s", more is "<invalid>".
        assert_eq!(print_pod(&p).restarts_column(0), "2 (0s ago)");
        p.status.container_statuses[0].last_state = finished(0);
        assert_eq!(print_pod(&p).restarts_column(NOW - 1), "2 (0s ago)");
        assert_eq!(print_pod(&p).restarts_column(NOW - 2), "2 (<invalid> ago)");
    }

    #[test]
    fn upstream_translate_timestamp_since() {
        // TestTranslateTimestampSince ("a while from now" is 2.1 s ahead, "almost now" 1.9 s).
        for (seconds, want) in [
            (-2, "<invalid>"),
            (-1, "0s"),
            (0, "0s"),
            (30, "30s"),
            (300, "5m"),
            (6000, "100m"),
            (2 * 86_400, "2d"),
            (90 * 86_400, "90d"),
            (10 * 365 * 86_400, "10y"),
        ] {
            assert_eq!(human_duration(seconds), want, "{seconds}");
        }
    }

    #[test]
    fn upstream_human_duration() {
        const M: i64 = 60;
        const H: i64 = 3600;
        const D: i64 = 86_400;
        const Y: i64 = 365 * D;
        // TestHumanDuration.
        for (seconds, want) in [
            (1, "1s"),
            (70, "70s"),
            (190, "3m10s"),
            (70 * M, "70m"),
            (47 * H, "47h"),
            (49 * H, "2d1h"),
            ((8 * 24 + 2) * H, "8d"),
            (367 * D, "367d"),
            (2 * Y + 25 * H, "2y1d"),
            (8 * Y + 2 * H, "8y"),
        ] {
            assert_eq!(human_duration(seconds), want, "{seconds}");
        }
        // TestHumanDurationBoundaries, the whole-second rows (`x - 1ms` becomes `x - 1s`, which
        // truncates to the same answer).
        for (seconds, want) in [
            (-2, "<invalid>"),
            (0, "0s"),
            (2 * M - 1, "119s"),
            (2 * M, "2m"),
            (2 * M + 1, "2m1s"),
            (10 * M - 1, "9m59s"),
            (10 * M, "10m"),
            (10 * M + 1, "10m"),
            (3 * H - 1, "179m"),
            (3 * H, "3h"),
            (3 * H + M, "3h1m"),
            (8 * H - 1, "7h59m"),
            (8 * H, "8h"),
            (8 * H + 59 * M, "8h"),
            (2 * D - 1, "47h"),
            (2 * D, "2d"),
            (2 * D + H, "2d1h"),
            (8 * D - 1, "7d23h"),
            (8 * D, "8d"),
            (8 * D + 23 * H, "8d"),
            (2 * Y - 1, "729d"),
            (2 * Y, "2y"),
            (2 * Y + 23 * H, "2y"),
            (2 * Y + 23 * H + 59 * M, "2y"),
            (2 * Y + D - 1, "2y"),
            (2 * Y + D, "2y1d"),
            (3 * Y, "3y"),
            (4 * Y, "4y"),
            (5 * Y, "5y"),
            (6 * Y, "6y"),
            (7 * Y, "7y"),
            (8 * Y - 1, "7y364d"),
            (8 * Y, "8y"),
            (8 * Y + 364 * D, "8y"),
            (9 * Y, "9y"),
        ] {
            assert_eq!(human_duration(seconds), want, "{seconds}");
        }
    }
}
