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
    ContainerStatus, Pod, PodCondition, PodStatus,
};
use k8s_types::events::EventRecorder;
use k8s_types::meta::tick_timestamp;
use k8s_types::object::Object;
use k8s_types::{Shared, Tick};

use crate::admission::{Rejection, POD_REJECTED_PREFIX};

/// Upstream `PodReadyToStartContainers` condition (beta, on by default since v1.29).
pub const POD_READY_TO_START_CONTAINERS: &str = "PodReadyToStartContainers";
/// Waiting reason while the sandbox and containers are being created.
pub const CONTAINER_CREATING: &str = "ContainerCreating";
/// Waiting reason of app containers while init containers run.
pub const POD_INITIALIZING: &str = "PodInitializing";
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

/// Go's `%s` of a string slice: `[a b]`.
fn go_list(names: &[String]) -> String {
    format!("[{}]", names.join(" "))
}

/// `containers with unready status: [a b]`.
pub fn unready_message(names: &[String]) -> String {
    format!("containers with unready status: {}", go_list(names))
}

/// `containers with incomplete status: [init]`.
pub fn incomplete_message(names: &[String]) -> String {
    format!("containers with incomplete status: {}", go_list(names))
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

/// Where the containers are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ContainersState {
    /// Created, not started (`ContainerCreating`, or `PodInitializing` with init containers).
    Creating,
    /// Running since the tick.
    Running(Tick),
}

fn condition(type_: &str, ok: bool, reason_message: Option<(&str, String)>) -> PodCondition {
    let (reason, message) = match reason_message {
        Some((r, m)) if !ok => (Some(r.to_string()), Some(m)),
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

/// Old conditions owned by others first, then `fresh` with `lastTransitionTime` kept from the old
/// condition of the same type and status, else `now` (status manager `updateLastTransitionTime` +
/// `mergePodStatus`).
fn merge_conditions(
    old: &[PodCondition],
    fresh: Vec<PodCondition>,
    now: &str,
) -> Vec<PodCondition> {
    let mut out: Vec<PodCondition> = old
        .iter()
        .filter(|c| !condition_owned_by_kubelet(&c.type_))
        .cloned()
        .collect();
    for mut c in fresh {
        c.last_transition_time = match old.iter().find(|o| o.type_ == c.type_) {
            Some(o) if o.status == c.status && o.last_transition_time.is_some() => {
                o.last_transition_time.clone()
            }
            _ => Some(now.to_string()),
        };
        out.push(c);
    }
    out
}

/// The status of an admitted pod: phase Pending while containers are created, Running once they
/// run. `host_ip` is the node's InternalIP, `pod_ip` the sandbox IP (the node IP for host-network
/// pods, none when the node has no podCIDR).
pub fn generate_status(
    pod: &Pod,
    state: ContainersState,
    host_ip: Option<&str>,
    pod_ip: Option<&str>,
    now: Tick,
) -> PodStatus {
    let ts = tick_timestamp(now);
    let old = &pod.status;
    let running = matches!(state, ContainersState::Running(_));
    let init_names: Vec<String> = pod
        .spec
        .init_containers
        .iter()
        .map(|c| c.name.clone())
        .collect();
    // Readiness covers sidecars (restartable init containers) first, then app containers.
    let ready_names: Vec<String> = pod
        .spec
        .init_containers
        .iter()
        .filter(|c| c.restart_policy.as_deref() == Some("Always"))
        .chain(&pod.spec.containers)
        .map(|c| c.name.clone())
        .collect();
    let initialized = running || init_names.is_empty();
    let fresh = vec![
        condition(POD_READY_TO_START_CONTAINERS, true, None),
        condition(
            pod_conditions::INITIALIZED,
            initialized,
            Some((CONTAINERS_NOT_INITIALIZED, incomplete_message(&init_names))),
        ),
        condition(
            pod_conditions::READY,
            running,
            Some((CONTAINERS_NOT_READY, unready_message(&ready_names))),
        ),
        condition(
            pod_conditions::CONTAINERS_READY,
            running,
            Some((CONTAINERS_NOT_READY, unready_message(&ready_names))),
        ),
        condition(pod_conditions::POD_SCHEDULED, true, None),
    ];
    let waiting_reason = if init_names.is_empty() {
        CONTAINER_CREATING
    } else {
        POD_INITIALIZING
    };
    let mut container_statuses: Vec<ContainerStatus> = pod
        .spec
        .containers
        .iter()
        .map(|c| {
            let state = match state {
                ContainersState::Creating => ContainerState {
                    waiting: Some(ContainerStateDetail {
                        reason: Some(waiting_reason.into()),
                        ..Default::default()
                    }),
                    ..Default::default()
                },
                ContainersState::Running(started) => ContainerState {
                    running: Some(ContainerStateDetail {
                        started_at: Some(tick_timestamp(started)),
                        ..Default::default()
                    }),
                    ..Default::default()
                },
            };
            ContainerStatus {
                name: c.name.clone(),
                image: c.image.clone(),
                ready: running,
                restart_count: 0,
                started: Some(running),
                state,
                last_state: ContainerState::default(),
            }
        })
        .collect();
    container_statuses.sort_by(|a, b| a.name.cmp(&b.name));
    PodStatus {
        phase: Some(
            if running {
                phases::RUNNING
            } else {
                phases::PENDING
            }
            .into(),
        ),
        conditions: merge_conditions(&old.conditions, fresh, &ts),
        nominated_node_name: old.nominated_node_name.clone(),
        host_ip: host_ip.map(str::to_string),
        pod_ip: pod_ip.map(str::to_string),
        start_time: old.start_time.clone().or_else(|| Some(ts.clone())),
        container_statuses,
        init_container_statuses: Vec::new(),
        reason: None,
        message: None,
        qos_class: old.qos_class.clone(),
    }
}

/// The status of a pod rejected at admission (upstream `Kubelet.rejectPod`): phase Failed, the
/// rejection's reason, message `Pod was rejected: <message>`, the QoS class kept, a start time;
/// kubelet-owned conditions are dropped (the status manager's merge keeps only others' conditions).
pub fn rejected_status(pod: &Pod, rejection: &Rejection, now: Tick) -> PodStatus {
    let old = &pod.status;
    PodStatus {
        phase: Some(phases::FAILED.into()),
        conditions: old
            .conditions
            .iter()
            .filter(|c| !condition_owned_by_kubelet(&c.type_))
            .cloned()
            .collect(),
        reason: Some(rejection.reason.clone()),
        message: Some(format!("{POD_REJECTED_PREFIX}{}", rejection.message)),
        start_time: old.start_time.clone().or_else(|| Some(tick_timestamp(now))),
        qos_class: old.qos_class.clone(),
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
        let mut pod: Pod = api.get_typed(namespace, name).ok()?;
        if !same_pod(&pod, uid) {
            return None;
        }
        pod.status = status(&pod);
        match api.update_status_shared(Object::Pod(pod)) {
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
    let obj = Object::Pod(pod.clone());
    events.record(api, &obj, type_, reason, message);
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
        ];
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
        ];
        p
    }

    #[test]
    fn creating_status_matches_upstream_shape() {
        let s = generate_status(
            &pod(),
            ContainersState::Creating,
            Some("10.0.0.5"),
            Some("10.244.1.2"),
            3,
        );
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
    }

    #[test]
    fn running_status_keeps_start_time_and_moves_transitions() {
        let mut p = pod();
        p.status = generate_status(&p, ContainersState::Creating, None, None, 3);
        let s = generate_status(&p, ContainersState::Running(4), None, None, 4);
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
        let s = generate_status(&p, ContainersState::Creating, None, None, 0);
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
