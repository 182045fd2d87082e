//! What `syncPod` reports about a pod: the API status the kubelet generates (upstream
//! `pkg/kubelet/kubelet_pods.go` `generateAPIPodStatus`, `pkg/kubelet/status/generate.go`, and the
//! status manager's `mergePodStatus`), the container events it records
//! (`pkg/kubelet/kuberuntime/kuberuntime_container.go`, `pkg/kubelet/images/image_manager.go`), and
//! the writes through the apiserver (status manager `syncPod`: re-read, write, retry on conflict).
//!
//! Conditions the kubelet owns are regenerated on every write, in upstream order
//! (PodReadyToStartContainers, Initialized, Ready, ContainersReady, PodScheduled); conditions owned
//! by others (e.g. DisruptionTarget) are kept first. A condition's `lastTransitionTime` is kept while
//! its status is unchanged. `containerStatuses` list the app containers sorted by name (upstream
//! `SortedContainerStatuses`); init container statuses are not modelled.

use k8s_types::apiserver::{ApiClient, ApiExt};
use k8s_types::core::event::event_types;
use k8s_types::core::{
    condition_status, phases, pod_conditions, ContainerState, ContainerStateDetail,
    ContainerStatus, HostIP, Pod, PodCondition, PodIP, PodStatus,
};
use k8s_types::events::{EventRecorder, Involved};
use k8s_types::meta::{go_duration, tick_timestamp_compact};
use k8s_types::object::{Kind, Object};
use k8s_types::{format_compact, CompactString, Shared, Tick};

use crate::admission::{Rejection, POD_REJECTED_PREFIX};
use crate::runtime::{
    format_pod, ContainerRecord, ContainerState as RunState, Role, RuntimePod, Termination,
};

/// Upstream `PodReadyToStartContainers` condition (beta, on by default since v1.29).
pub const POD_READY_TO_START_CONTAINERS: &str = "PodReadyToStartContainers";
/// Waiting reason while the sandbox and containers are being created.
pub const CONTAINER_CREATING: &str = "ContainerCreating";
/// Waiting reason of app containers while init containers run.
pub const POD_INITIALIZING: &str = "PodInitializing";
/// Ready/ContainersReady (and Initialized True) reason of a Succeeded pod (upstream
/// `status.PodCompleted`).
pub const POD_COMPLETED: &str = "PodCompleted";
/// Ready/ContainersReady reason of a Failed pod (upstream `status.PodFailed`).
pub const POD_FAILED: &str = "PodFailed";
/// Ready/ContainersReady False reason.
pub const CONTAINERS_NOT_READY: &str = "ContainersNotReady";
/// Initialized False reason.
pub const CONTAINERS_NOT_INITIALIZED: &str = "ContainersNotInitialized";

/// Event reason for an image that needs no pull (upstream `events.PulledImage`).
pub const EVENT_PULLED: &str = "Pulled";
/// Event reason after a container is created (upstream `events.CreatedContainer`).
pub const EVENT_CREATED: &str = "Created";
/// Event reason after a container starts (upstream `events.StartedContainer`).
pub const EVENT_STARTED: &str = "Started";
/// Event reason when a container is stopped (upstream `events.KillingContainer`).
pub const EVENT_KILLING: &str = "Killing";
/// Event reason when a pull starts (upstream `events.PullingImage`).
pub const EVENT_PULLING: &str = "Pulling";
/// Event reason of pull and start failures (upstream `events.FailedToPullImage`,
/// `events.FailedToCreateContainer`...: all `Failed`).
pub const EVENT_FAILED: &str = "Failed";
/// Event reason of a container or image back-off (upstream `events.BackOffStartContainer`,
/// `events.BackOffPullImage`).
pub const EVENT_BACK_OFF: &str = "BackOff";
/// Event reason of a failed probe (upstream `events.ContainerUnhealthy`).
pub const EVENT_UNHEALTHY: &str = "Unhealthy";
/// Event reason of an absent image with pull policy Never (upstream `events.ErrImageNeverPullPolicy`).
pub const EVENT_ERR_IMAGE_NEVER_PULL: &str = "ErrImageNeverPull";

/// `Container image "<image>" already present on machine` (upstream `EnsureImageExists`).
pub fn pulled_message(image: &str) -> String {
    format!("Container image \"{image}\" already present on machine")
}

/// `Created container: <name>` (upstream `startContainer`, wording since v1.32).
pub fn created_message(name: &str) -> String {
    format!("Created container: {name}")
}

/// `Started container <name>` (upstream `startContainer`).
pub fn started_message(name: &str) -> String {
    format!("Started container {name}")
}

/// `Stopping container <name>` (upstream `killContainer`).
pub fn killing_message(name: &str) -> String {
    format!("Stopping container {name}")
}

/// `containers with unready status: [a b]`, `containers with incomplete status: [init]`: the
/// names as Go's `%s` prints a string slice.
fn containers_message(status: &str, names: &[String]) -> CompactString {
    format_compact!("containers with {status} status: [{}]", names.join(" "))
}

/// True for the condition types the kubelet owns (upstream `kubetypes.PodConditionByKubelet`).
pub fn condition_owned_by_kubelet(type_: &str) -> bool {
    matches!(
        type_,
        pod_conditions::POD_SCHEDULED
            | pod_conditions::READY
            | pod_conditions::INITIALIZED
            | pod_conditions::CONTAINERS_READY
            | POD_READY_TO_START_CONTAINERS
    )
}

/// A false condition's reason, and its message built on demand.
type ReasonMessage<'a> = (&'a str, &'a dyn Fn() -> CompactString);

/// A condition; a false one carries `reason_message`'s reason and message (the message is built
/// only then: most status writes have every condition true).
fn condition(type_: &str, ok: bool, reason_message: Option<ReasonMessage<'_>>) -> PodCondition {
    let (reason, message) = match reason_message {
        Some((r, m)) if !ok => (Some(r.into()), Some(m())),
        _ => (None, None),
    };
    PodCondition {
        type_: type_.into(),
        status: if ok {
            condition_status::TRUE
        } else {
            condition_status::FALSE
        }
        .into(),
        reason,
        message,
        last_transition_time: None,
    }
}

/// A condition with a reason and no message (the terminal-phase forms).
fn condition_reason(type_: &str, ok: bool, reason: &str) -> PodCondition {
    let mut c = condition(type_, ok, None);
    c.reason = Some(reason.into());
    c
}

/// Old conditions owned by others first, then `fresh` with `lastTransitionTime` kept from the old
/// condition of the same type and status, else `now` (status manager `updateLastTransitionTime` +
/// `mergePodStatus`).
fn merge_conditions(
    old: &[PodCondition],
    fresh: Vec<PodCondition>,
    now: &str,
) -> Vec<PodCondition> {
    let kept = old.iter().filter(|c| !condition_owned_by_kubelet(&c.type_));
    // Sized once: the list is stored with every status version.
    let mut out = Vec::with_capacity(kept.clone().count() + fresh.len());
    out.extend(kept.cloned());
    for mut c in fresh {
        c.last_transition_time = match old.iter().find(|o| o.type_ == c.type_) {
            Some(o) if o.status == c.status && o.last_transition_time.is_some() => {
                o.last_transition_time.clone()
            }
            _ => Some(now.into()),
        };
        out.push(c);
    }
    out
}

/// A terminated state; a `ContainerStatusUnknown` one has no times (upstream sets none).
fn detail_terminated(t: &Termination) -> ContainerStateDetail {
    let timed = t.reason != crate::runtime::REASON_CONTAINER_STATUS_UNKNOWN;
    ContainerStateDetail {
        reason: Some(t.reason.into()),
        message: t.message.map(Into::into),
        exit_code: Some(t.exit_code),
        started_at: timed.then(|| tick_timestamp_compact(t.started)),
        finished_at: timed.then(|| tick_timestamp_compact(t.finished)),
        ..Default::default()
    }
}

fn waiting(reason: &str, message: Option<CompactString>) -> ContainerState {
    ContainerState {
        waiting: Some(Box::new(ContainerStateDetail {
            reason: Some(reason.into()),
            message,
            ..Default::default()
        })),
        ..Default::default()
    }
}

/// One container's API status (upstream `convertToAPIContainerStatuses`): containers not created
/// yet wait with `ContainerCreating` (`PodInitializing` when the pod has init containers); a
/// container in back-off waits with `CrashLoopBackOff` and upstream's message; `lastState` holds
/// the previous attempt's termination.
pub fn container_status(
    pod: &Pod,
    c: &ContainerRecord,
    has_init_containers: bool,
) -> ContainerStatus {
    let default_reason = if has_init_containers {
        POD_INITIALIZING
    } else {
        CONTAINER_CREATING
    };
    let mut last = c.last_termination.as_ref();
    let state = match &c.state {
        RunState::Pending | RunState::Pulling { .. } | RunState::Created { .. } => {
            waiting(default_reason, None)
        }
        RunState::PullBackOff {
            reason, message, ..
        } => waiting(reason, Some(message.as_str().into())),
        RunState::NeverPull { message } => waiting(
            crate::runtime::REASON_ERR_IMAGE_NEVER_PULL,
            Some(message.as_str().into()),
        ),
        RunState::Running { plan, .. } => ContainerState {
            running: Some(Box::new(ContainerStateDetail {
                started_at: Some(tick_timestamp_compact(plan.started)),
                ..Default::default()
            })),
            ..Default::default()
        },
        RunState::Stopping { started, .. } => ContainerState {
            running: Some(Box::new(ContainerStateDetail {
                started_at: Some(tick_timestamp_compact(*started)),
                ..Default::default()
            })),
            ..Default::default()
        },
        RunState::Exited {
            term,
            restart_at: Some(at),
        } => {
            last = Some(term);
            waiting(
                crate::runtime::REASON_CRASH_LOOP_BACK_OFF,
                Some(format_compact!(
                    "back-off {} restarting failed container={} pod={}",
                    go_duration(at.saturating_sub(term.finished)),
                    c.spec().name,
                    format_pod(pod)
                )),
            )
        }
        RunState::Exited {
            term,
            restart_at: None,
        } => ContainerState {
            terminated: Some(Box::new(detail_terminated(term))),
            ..Default::default()
        },
    };
    ContainerStatus {
        name: c.spec().name.as_str().into(),
        image: c.spec().image.as_str().into(),
        ready: c.ready(),
        restart_count: c.restart_count,
        started: Some(c.started()),
        state,
        last_state: last
            .map(|t| ContainerState {
                terminated: Some(Box::new(detail_terminated(t))),
                ..Default::default()
            })
            .unwrap_or_default(),
    }
}

/// Upstream `getPhase` (`pkg/kubelet/kubelet_pods.go`) over the API container statuses.
pub fn get_phase(
    pod: &Pod,
    init: &[ContainerStatus],
    app: &[ContainerStatus],
    terminal: bool,
) -> &'static str {
    let policy = pod.spec.restart_policy.as_deref().unwrap_or("Always");
    let (mut pending_init, mut pending_sidecars, mut failed_init) = (0, 0, 0);
    let (mut running, mut waiting_n, mut stopped, mut succeeded) = (0, 0, 0, 0);
    for (spec, st) in pod.spec.init_containers.iter().zip(init) {
        let last_exit = st.last_state.terminated.as_ref().and_then(|t| t.exit_code);
        if spec.is_sidecar() {
            if st.state.running.is_some() {
                if st.started != Some(true) {
                    pending_sidecars += 1;
                }
                running += 1;
            } else if st.state.waiting.is_some() {
                if st.last_state.terminated.is_none() {
                    pending_sidecars += 1;
                }
                waiting_n += 1;
            }
            continue;
        }
        if st.state.running.is_some() {
            pending_init += 1;
        } else if let Some(t) = &st.state.terminated {
            if t.exit_code != Some(0) {
                failed_init += 1;
            }
        } else if let Some(code) = last_exit {
            if code != 0 {
                failed_init += 1;
            }
        } else {
            pending_init += 1;
        }
    }
    let mut app_started = false;
    for st in app {
        if st.state.running.is_some() {
            running += 1;
            app_started = true;
        } else if let Some(t) = &st.state.terminated {
            stopped += 1;
            app_started = true;
            if t.exit_code == Some(0) {
                succeeded += 1;
            }
        } else if st.last_state.terminated.is_some() {
            stopped += 1;
            app_started = true;
        } else {
            waiting_n += 1;
        }
    }
    if failed_init > 0 && policy == "Never" {
        return phases::FAILED;
    }
    // Upstream `HasAnyRegularContainerStarted`: init containers that run again in a new sandbox
    // (after a power loss) do not send a pod whose app containers ran back to Pending.
    let regular_started = app
        .iter()
        .any(|st| st.state.running.is_some() || st.state.terminated.is_some());
    if (pending_init > 0 && !regular_started)
        || (pending_sidecars > 0 && !app_started)
        || waiting_n > 0
    {
        return phases::PENDING;
    }
    if running > 0 {
        return phases::RUNNING;
    }
    if stopped > 0 {
        if terminal {
            return if stopped == succeeded {
                phases::SUCCEEDED
            } else {
                phases::FAILED
            };
        }
        if policy == "Always" {
            return phases::RUNNING;
        }
        if stopped == succeeded {
            return phases::SUCCEEDED;
        }
        if policy == "Never" {
            return phases::FAILED;
        }
        return phases::RUNNING;
    }
    phases::PENDING
}

/// The status of an admitted pod from the runtime's record (upstream `generateAPIPodStatus`,
/// `status/generate.go`): container statuses, the phase from [`get_phase`], and the kubelet's
/// conditions. `terminal` says every container has stopped for good (the pod completed, failed or
/// finished its deletion). `host_ip` is the node's InternalIP, `pod_ip` the sandbox IP.
pub fn generate_status(
    pod: &Pod,
    rec: &RuntimePod,
    terminal: bool,
    host_ip: Option<&str>,
    pod_ip: Option<&str>,
    now: Tick,
) -> PodStatus {
    let ts = tick_timestamp_compact(now);
    let old = &pod.status;
    let has_init = !pod.spec.init_containers.is_empty();
    let mut init_statuses = Vec::new();
    let mut app_statuses = Vec::new();
    for c in &rec.containers {
        let st = container_status(pod, c, has_init);
        if c.role == Role::App {
            app_statuses.push(st);
        } else {
            init_statuses.push(st);
        }
    }
    let phase = get_phase(pod, &init_statuses, &app_statuses, terminal);
    // Initialized (upstream `GeneratePodInitializedCondition`).
    let incomplete: Vec<String> = pod
        .spec
        .init_containers
        .iter()
        .zip(&init_statuses)
        .filter(|(spec, st)| {
            if spec.is_sidecar() {
                st.started != Some(true)
            } else {
                st.state
                    .terminated
                    .as_ref()
                    .is_none_or(|t| t.exit_code != Some(0))
            }
        })
        .map(|(spec, _)| spec.name.clone())
        .collect();
    let any_app_started = app_statuses.iter().any(|s| {
        s.started == Some(true) || s.state.terminated.is_some() || s.last_state.terminated.is_some()
    });
    let initialized = if phase == phases::SUCCEEDED {
        condition_reason(pod_conditions::INITIALIZED, true, POD_COMPLETED)
    } else {
        condition(
            pod_conditions::INITIALIZED,
            any_app_started || incomplete.is_empty(),
            Some((CONTAINERS_NOT_INITIALIZED, &|| {
                containers_message("incomplete", &incomplete)
            })),
        )
    };
    // ContainersReady and Ready: sidecars first, then app containers.
    let unready: Vec<String> = pod
        .spec
        .init_containers
        .iter()
        .zip(&init_statuses)
        .filter(|(spec, _)| spec.is_sidecar())
        .map(|(_, st)| st)
        .chain(&app_statuses)
        .filter(|st| !st.ready)
        .map(|st| st.name.to_string())
        .collect();
    let ready_conditions = |type_: &str| match phase {
        phases::SUCCEEDED => condition_reason(type_, false, POD_COMPLETED),
        phases::FAILED if terminal => condition_reason(type_, false, POD_FAILED),
        _ => condition(
            type_,
            unready.is_empty(),
            Some((CONTAINERS_NOT_READY, &|| {
                containers_message("unready", &unready)
            })),
        ),
    };
    let fresh = vec![
        condition(POD_READY_TO_START_CONTAINERS, !terminal, None),
        initialized,
        ready_conditions(pod_conditions::READY),
        ready_conditions(pod_conditions::CONTAINERS_READY),
        condition(pod_conditions::POD_SCHEDULED, true, None),
    ];
    app_statuses.sort_by(|a, b| a.name.cmp(&b.name));
    PodStatus {
        phase: Some(phase.into()),
        conditions: merge_conditions(&old.conditions, fresh, &ts).into(),
        nominated_node_name: old.nominated_node_name.clone(),
        host_ip: host_ip.map(Into::into),
        // Upstream `generateAPIPodStatus`: `hostIPs` and `podIPs` list the same addresses (one
        // family here).
        host_ips: host_ip
            .map(|ip| vec![HostIP { ip: ip.into() }])
            .unwrap_or_default(),
        pod_ip: pod_ip.map(Into::into),
        pod_ips: pod_ip
            .map(|ip| vec![PodIP { ip: ip.into() }])
            .unwrap_or_default(),
        start_time: old.start_time.clone().or_else(|| Some(ts.clone())),
        container_statuses: app_statuses.into(),
        init_container_statuses: init_statuses.into(),
        reason: None,
        message: None,
        qos_class: old.qos_class.clone(),
        // Written by the ResourceClaim controller, never by the kubelet: kept.
        resource_claim_statuses: old.resource_claim_statuses.clone(),
    }
}

/// The status of a pod rejected at admission (upstream `Kubelet.rejectPod`): phase Failed, the
/// rejection's reason, message `Pod was rejected: <message>`, the QoS class kept, a start time;
/// kubelet-owned conditions are dropped (the status manager's merge keeps only others' conditions).
pub fn rejected_status(pod: &Pod, rejection: &Rejection, now: Tick) -> PodStatus {
    let (old, msg) = (&pod.status, &rejection.message);
    let started = old.start_time.clone();
    PodStatus {
        phase: Some(phases::FAILED.into()),
        conditions: old
            .conditions
            .iter()
            .filter(|c| !condition_owned_by_kubelet(&c.type_))
            .cloned()
            .collect(),
        reason: Some(rejection.reason.as_str().into()),
        message: Some(format_compact!("{POD_REJECTED_PREFIX}{msg}")),
        start_time: started.or_else(|| Some(tick_timestamp_compact(now))),
        qos_class: old.qos_class.clone(),
        resource_claim_statuses: old.resource_claim_statuses.clone(),
        ..Default::default()
    }
}

fn same_pod(pod: &Pod, uid: &str) -> bool {
    pod.metadata.uid.as_deref().unwrap_or("") == uid
}

/// Writes `status(pod)` through `/status`, re-reading the pod first and retrying once on a
/// conflict. Returns the stored pod; `None` when the pod is gone, replaced (other uid) or the write
/// failed.
pub fn write_status(
    api: &mut dyn ApiClient,
    namespace: &str,
    name: &str,
    uid: &str,
    status: &dyn Fn(&Pod) -> PodStatus,
) -> Option<Shared<Pod>> {
    for _ in 0..2 {
        // Read shared; the written pod copies the stored one but its status, which is new.
        let stored = Shared::<Pod>::new(api.get_shared(&Kind::Pod, namespace, name).ok()?)?;
        if !same_pod(&stored, uid) {
            return None;
        }
        let pod = Pod {
            api_version: stored.api_version.clone(),
            kind: stored.kind.clone(),
            metadata: stored.metadata.clone(),
            spec: stored.spec.clone(),
            status: status(&stored),
        };
        drop(stored);
        match api.update_status_shared(Object::Pod(Box::new(pod))) {
            Ok(p) => return Shared::new(p),
            Err(e) if e.is_conflict() => continue,
            Err(e) => {
                tracing::debug!(pod = %format!("{namespace}/{name}"), error = %e, "pod status update failed");
                return None;
            }
        }
    }
    None
}

/// Sets one annotation (re-reading the pod first, retrying once on a conflict). Returns the stored
/// pod; `None` when the pod is gone, replaced, or the write failed.
pub fn write_annotation(
    api: &mut dyn ApiClient,
    namespace: &str,
    name: &str,
    uid: &str,
    key: &str,
    value: &str,
) -> Option<Pod> {
    for _ in 0..2 {
        let mut pod: Pod = api.get_typed(namespace, name).ok()?;
        if !same_pod(&pod, uid) {
            return None;
        }
        if pod.metadata.annotations.get(key).map(String::as_str) == Some(value) {
            return Some(pod);
        }
        pod.metadata.annotations.insert(key.into(), value.into());
        match api.update_typed(pod) {
            Ok(p) => return Some(p),
            Err(e) if e.is_conflict() => continue,
            Err(e) => {
                tracing::debug!(pod = %format!("{namespace}/{name}"), error = %e, "pod annotation update failed");
                return None;
            }
        }
    }
    None
}

/// Records a kubelet event about a pod through the kubelet's recorder.
pub fn record_pod_event(
    api: &mut dyn ApiClient,
    events: &mut EventRecorder,
    pod: &Pod,
    type_: &str,
    reason: &str,
    message: String,
) {
    events.record(api, Involved::of(pod), type_, reason, message);
}

/// `Pulled` + `Created` for one container.
pub fn record_pulled_created(
    api: &mut dyn ApiClient,
    events: &mut EventRecorder,
    pod: &Pod,
    name: &str,
    image: &str,
) {
    record_pod_event(
        api,
        events,
        pod,
        event_types::NORMAL,
        EVENT_PULLED,
        pulled_message(image),
    );
    record_pod_event(
        api,
        events,
        pod,
        event_types::NORMAL,
        EVENT_CREATED,
        created_message(name),
    );
}

/// `Started` for one container.
pub fn record_started(api: &mut dyn ApiClient, events: &mut EventRecorder, pod: &Pod, name: &str) {
    record_pod_event(
        api,
        events,
        pod,
        event_types::NORMAL,
        EVENT_STARTED,
        started_message(name),
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::PodPhase;
    use k8s_types::core::Container;

    fn pod() -> Pod {
        let mut p = Pod::default();
        p.spec.containers = vec![
            Container {
                name: "web".into(),
                image: "nginx:1.27".into(),
                ..Default::default()
            },
            Container {
                name: "app".into(),
                image: "busybox".into(),
                ..Default::default()
            },
        ]
        .into();
        p.status.qos_class = Some("BestEffort".into());
        p.status.conditions = vec![
            PodCondition {
                type_: "DisruptionTarget".into(),
                status: "True".into(),
                ..Default::default()
            },
            PodCondition {
                type_: "PodScheduled".into(),
                status: "True".into(),
                last_transition_time: Some("1970-01-01T00:00:01Z".into()),
                ..Default::default()
            },
        ]
        .into();
        p
    }

    fn record(p: &Pod, phase: PodPhase) -> RuntimePod {
        RuntimePod::new(
            "uid-1".into(),
            Shared::from_typed(p.clone()),
            phase,
            Some("10.244.1.2".into()),
            &[],
        )
    }

    fn run_all(rec: &mut RuntimePod, started: Tick) {
        for c in &mut rec.containers {
            let plan = crate::prober::plan(c.spec(), &c.behavior, 0, started, "10.244.1.2");
            c.state = RunState::Running {
                plan,
                reported: 0,
                started: true,
                ready: true,
            };
        }
    }

    #[test]
    fn creating_status_matches_upstream_shape() {
        let p = pod();
        let rec = record(&p, PodPhase::Creating { since: 3 });
        let s = generate_status(&p, &rec, false, Some("10.0.0.5"), Some("10.244.1.2"), 3);
        assert_eq!(s.phase.as_deref(), Some("Pending"));
        let types: Vec<&str> = s.conditions.iter().map(|c| c.type_.as_str()).collect();
        assert_eq!(
            types,
            vec![
                "DisruptionTarget",
                "PodReadyToStartContainers",
                "Initialized",
                "Ready",
                "ContainersReady",
                "PodScheduled"
            ]
        );
        let ready = &s.conditions[3];
        assert_eq!(ready.status, "False");
        assert_eq!(ready.reason.as_deref(), Some("ContainersNotReady"));
        assert_eq!(
            ready.message.as_deref(),
            Some("containers with unready status: [web app]")
        );
        // The scheduler's PodScheduled keeps its transition time.
        assert_eq!(
            s.conditions[5].last_transition_time.as_deref(),
            Some("1970-01-01T00:00:01Z")
        );
        assert_eq!(
            s.conditions[2].last_transition_time.as_deref(),
            Some("1970-01-01T00:00:03Z")
        );
        // Sorted by name.
        assert_eq!(s.container_statuses[0].name, "app");
        assert_eq!(
            s.container_statuses[1]
                .state
                .waiting
                .as_ref()
                .and_then(|w| w.reason.as_deref()),
            Some("ContainerCreating")
        );
        assert_eq!(s.container_statuses[1].started, Some(false));
        assert_eq!(s.start_time.as_deref(), Some("1970-01-01T00:00:03Z"));
        assert_eq!(s.qos_class.as_deref(), Some("BestEffort"));
        assert_eq!(s.pod_ip.as_deref(), Some("10.244.1.2"));
        // Upstream writes the plural fields too, first entry equal to the singular one.
        assert_eq!(
            s.pod_ips,
            vec![PodIP {
                ip: "10.244.1.2".into()
            }]
        );
        assert_eq!(
            s.host_ips,
            vec![HostIP {
                ip: "10.0.0.5".into()
            }]
        );
    }

    #[test]
    fn running_status_keeps_start_time_and_moves_transitions() {
        let mut p = pod();
        let mut rec = record(&p, PodPhase::Creating { since: 3 });
        p.status = generate_status(&p, &rec, false, None, None, 3);
        run_all(&mut rec, 4);
        let s = generate_status(&p, &rec, false, None, None, 4);
        assert_eq!(s.phase.as_deref(), Some("Running"));
        assert_eq!(s.start_time.as_deref(), Some("1970-01-01T00:00:03Z"));
        let ready = s
            .conditions
            .iter()
            .find(|c| c.type_ == "Ready")
            .expect("Ready");
        assert_eq!(ready.status, "True");
        assert_eq!(ready.reason, None);
        assert_eq!(
            ready.last_transition_time.as_deref(),
            Some("1970-01-01T00:00:04Z")
        );
        let init = s
            .conditions
            .iter()
            .find(|c| c.type_ == "Initialized")
            .expect("Initialized");
        assert_eq!(
            init.last_transition_time.as_deref(),
            Some("1970-01-01T00:00:03Z")
        );
        let web = &s.container_statuses[1];
        assert!(web.ready);
        assert_eq!(
            web.state
                .running
                .as_ref()
                .and_then(|r| r.started_at.as_deref()),
            Some("1970-01-01T00:00:04Z")
        );
    }

    #[test]
    fn init_containers_hold_initialized_and_waiting_reason() {
        let mut p = pod();
        p.spec.init_containers = vec![Container {
            name: "migrate".into(),
            ..Default::default()
        }];
        let rec = record(&p, PodPhase::Creating { since: 0 });
        let s = generate_status(&p, &rec, false, None, None, 0);
        let init = s
            .conditions
            .iter()
            .find(|c| c.type_ == "Initialized")
            .expect("Initialized");
        assert_eq!(init.status, "False");
        assert_eq!(init.reason.as_deref(), Some("ContainersNotInitialized"));
        assert_eq!(
            init.message.as_deref(),
            Some("containers with incomplete status: [migrate]")
        );
        assert_eq!(
            s.container_statuses[0]
                .state
                .waiting
                .as_ref()
                .and_then(|w| w.reason.as_deref()),
            Some("PodInitializing")
        );
        assert_eq!(s.init_container_statuses[0].name, "migrate");
    }

    /// A container in back-off: phase Running (restartPolicy Always), waiting `CrashLoopBackOff`
    /// with upstream's message, `lastState.terminated` the failed attempt.
    #[test]
    fn crash_loop_back_off_status() {
        let mut p = pod();
        p.metadata.name = "web".into();
        p.metadata.namespace = Some("default".into());
        p.metadata.uid = Some("uid-1".into());
        p.spec.containers.truncate(1);
        let mut rec = record(&p, PodPhase::Running { started: 1 });
        rec.containers[0].restart_count = 1;
        rec.containers[0].state = RunState::Exited {
            term: Termination::exit(11, 14, 1),
            restart_at: Some(24),
        };
        let s = generate_status(&p, &rec, false, None, None, 14);
        assert_eq!(s.phase.as_deref(), Some("Running"));
        let c = &s.container_statuses[0];
        let w = c.state.waiting.as_ref().expect("waiting");
        assert_eq!(w.reason.as_deref(), Some("CrashLoopBackOff"));
        assert_eq!(
            w.message.as_deref(),
            Some("back-off 10s restarting failed container=web pod=web_default(uid-1)")
        );
        let last = c.last_state.terminated.as_ref().expect("lastState");
        assert_eq!(
            (
                last.exit_code,
                last.reason.as_deref(),
                last.finished_at.as_deref()
            ),
            (Some(1), Some("Error"), Some("1970-01-01T00:00:14Z"))
        );
        assert_eq!(c.restart_count, 1);
        assert!(!c.ready);
    }

    /// Upstream `getPhase`: Never/OnFailure pods whose containers are done are Succeeded or Failed;
    /// OnFailure with a failure still restarting is Running; a failed init container under Never
    /// fails the pod.
    #[test]
    fn phases_follow_get_phase() {
        let mut p = pod();
        p.spec.containers.truncate(1);
        let done = |code: i32| RunState::Exited {
            term: Termination::exit(1, 5, code),
            restart_at: None,
        };
        for (policy, code, terminal, want) in [
            ("Never", 0, false, "Succeeded"),
            ("Never", 1, false, "Failed"),
            ("OnFailure", 0, false, "Succeeded"),
            ("Always", 0, false, "Running"),
            ("Always", 0, true, "Succeeded"),
            ("Always", 137, true, "Failed"),
        ] {
            p.spec.restart_policy = Some(policy.into());
            let mut rec = record(&p, PodPhase::Running { started: 1 });
            rec.containers[0].state = done(code);
            let s = generate_status(&p, &rec, terminal, None, None, 5);
            assert_eq!(s.phase.as_deref(), Some(want), "{policy} exit {code}");
        }
        p.spec.restart_policy = Some("Never".into());
        p.spec.init_containers = vec![Container {
            name: "init".into(),
            ..Default::default()
        }];
        let mut rec = record(&p, PodPhase::Running { started: 1 });
        rec.containers[0].state = done(2);
        let s = generate_status(&p, &rec, true, None, None, 5);
        assert_eq!(s.phase.as_deref(), Some("Failed"));
        let ready = s.conditions.iter().find(|c| c.type_ == "Ready").unwrap();
        assert_eq!(ready.reason.as_deref(), Some("PodFailed"));
    }

    #[test]
    fn rejected_status_is_failed_with_prefixed_message() {
        let r = Rejection {
            reason: "OutOfcpu".into(),
            message:
                "Node didn't have enough resource: cpu, requested: 1000, used: 1500, capacity: 2000"
                    .into(),
        };
        let s = rejected_status(&pod(), &r, 7);
        assert_eq!(s.phase.as_deref(), Some("Failed"));
        assert_eq!(s.reason.as_deref(), Some("OutOfcpu"));
        assert_eq!(
            s.message.as_deref(),
            Some("Pod was rejected: Node didn't have enough resource: cpu, requested: 1000, used: 1500, capacity: 2000")
        );
        assert_eq!(s.conditions.len(), 1);
        assert_eq!(s.conditions[0].type_, "DisruptionTarget");
        assert_eq!(s.qos_class.as_deref(), Some("BestEffort"));
        assert!(s.container_statuses.is_empty());
    }

    #[test]
    fn event_texts_are_upstream() {
        assert_eq!(
            pulled_message("nginx:1.27"),
            "Container image \"nginx:1.27\" already present on machine"
        );
        assert_eq!(created_message("app"), "Created container: app");
        assert_eq!(started_message("app"), "Started container app");
        assert_eq!(killing_message("app"), "Stopping container app");
    }
}
