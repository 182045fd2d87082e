//! What the simulated runtime knows about one container (upstream `pkg/kubelet/container`:
//! `ContainerStatus`, `ContainerState`, the runtime's terminated reasons, and the waiting reasons
//! of `kuberuntime` and the image manager): its role in the pod, its declared behavior, its state
//! on the virtual clock, its restarts and the previous attempt's termination. How a pod's
//! containers move from state to state is [`crate::runtime`].

use std::sync::Arc;

use k8s_types::core::{Container, PodSpec};
use k8s_types::cow_arc::CowArc;
use k8s_types::Tick;

use crate::behavior::ContainerBehavior;
use crate::prober::Plan;
/// Exit code of a container killed with SIGKILL (128 + 9), as the runtime reports it.
pub const EXIT_CODE_SIGKILL: i32 = 137;
/// Terminated reason of a container that exited 0 (upstream runtime `Completed`).
pub const REASON_COMPLETED: &str = "Completed";
/// Terminated reason of a container that exited non-zero (upstream runtime `Error`).
pub const REASON_ERROR: &str = "Error";
/// Terminated reason of a container killed for memory (upstream runtime `OOMKilled`).
pub const REASON_OOM_KILLED: &str = "OOMKilled";
/// Terminated reason of a container the runtime no longer has (upstream
/// `kubecontainer.ContainerReasonStatusUnknown`, `pkg/kubelet/kubelet_pods.go`
/// `convertToAPIContainerStatuses` and the status manager's `TerminatePod`): its termination has
/// no exit time, only this reason, a message and exit code 137.
pub const REASON_CONTAINER_STATUS_UNKNOWN: &str = "ContainerStatusUnknown";
/// Waiting reason during back-off (upstream `kubecontainer.ErrCrashLoopBackOff`).
pub const REASON_CRASH_LOOP_BACK_OFF: &str = "CrashLoopBackOff";
/// Waiting reason after a failed pull (upstream `images.ErrImagePull`).
pub const REASON_ERR_IMAGE_PULL: &str = "ErrImagePull";
/// Waiting reason while a pull backs off (upstream `images.ErrImagePullBackOff`).
pub const REASON_IMAGE_PULL_BACK_OFF: &str = "ImagePullBackOff";
/// Waiting reason for an absent image with policy Never (upstream `images.ErrImageNeverPull`).
pub const REASON_ERR_IMAGE_NEVER_PULL: &str = "ErrImageNeverPull";

/// Which list a container is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// An init container that runs to completion.
    Init,
    /// An init container with `restartPolicy: Always`.
    Sidecar,
    /// An app container.
    App,
}

/// How an attempt ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Termination {
    /// Exit code.
    pub exit_code: i32,
    /// `Completed`, `Error`, `OOMKilled` or `ContainerStatusUnknown`.
    pub reason: &'static str,
    /// The runtime's message (only `ContainerStatusUnknown` terminations have one).
    pub message: Option<&'static str>,
    /// Start of the attempt.
    pub started: Tick,
    /// Exit.
    pub finished: Tick,
}

impl Termination {
    /// An exit with `code`: reason `Completed` for 0, else `Error`.
    pub fn exit(started: Tick, finished: Tick, code: i32) -> Termination {
        Termination {
            exit_code: code,
            reason: if code == 0 {
                REASON_COMPLETED
            } else {
                REASON_ERROR
            },
            message: None,
            started,
            finished,
        }
    }
}

/// One container's state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ContainerState {
    /// Not its turn yet (or never started).
    Pending,
    /// Pulling its image until the tick.
    Pulling {
        /// Start of the pull.
        since: Tick,
        /// End of the pull.
        until: Tick,
    },
    /// The pull failed; `reason` is `ErrImagePull` until the back-off is recorded, then
    /// `ImagePullBackOff`; the next pull starts at `until`.
    PullBackOff {
        /// Waiting reason.
        reason: &'static str,
        /// Waiting message.
        message: String,
        /// When the reason turns to ImagePullBackOff.
        backoff_at: Tick,
        /// Next pull.
        until: Tick,
    },
    /// The image is absent and the pull policy is Never: waits forever.
    NeverPull {
        /// Waiting message.
        message: String,
    },
    /// Created; starts at the tick.
    Created {
        /// Start.
        start_at: Tick,
    },
    /// Running this attempt.
    Running {
        /// What the attempt does.
        plan: Plan,
        /// Probe failures already reported.
        reported: usize,
        /// `started` as last reported.
        started: bool,
        /// `ready` as last reported.
        ready: bool,
    },
    /// Being stopped; exits at `exit_at`.
    Stopping {
        /// The attempt's start.
        started: Tick,
        /// Exit.
        exit_at: Tick,
        /// Exit code at `exit_at`.
        exit_code: i32,
        /// Restart afterwards (a probe kill) as the restart policy says.
        restartable: bool,
        /// Readiness while it stops (kept from before the kill: a terminating pod keeps serving,
        /// KEP-1672; false after a probe kill).
        ready: bool,
    },
    /// Exited; restarts at `restart_at` (back-off when later than the exit), or never.
    Exited {
        /// The ended attempt.
        term: Termination,
        /// Next start.
        restart_at: Option<Tick>,
    },
}

/// One container as the runtime knows it.
#[derive(Clone, Debug, PartialEq)]
pub struct ContainerRecord {
    /// The pod's spec at admission, shared with the pod's stored versions while it is unchanged
    /// (a copy of each container's spec cost about 1.4 KB per pod); see [`ContainerRecord::spec`].
    pod_spec: CowArc<PodSpec>,
    /// The container's position in `initContainers` (init and sidecar) or `containers` (app).
    index: usize,
    /// Init, sidecar or app.
    pub role: Role,
    /// What it does (shared: every container that no rule or annotation describes has the same
    /// default, and a record is kept per container of every pod on the node).
    pub behavior: Arc<ContainerBehavior>,
    /// Current state.
    pub state: ContainerState,
    /// Restarts so far.
    pub restart_count: i32,
    /// The previous attempt's end.
    pub last_termination: Option<Termination>,
}

/// What [`crate::runtime::RuntimePod::step`] can change of a container: its state, restarts and
/// last termination (the spec, role and behaviour are fixed at admission).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ContainerProgress {
    state: ContainerState,
    restart_count: i32,
    last_termination: Option<Termination>,
}

impl ContainerRecord {
    /// A record of the container at `index` of `pod_spec`'s `initContainers` (roles init and
    /// sidecar) or `containers` (role app), not started yet. `index` must be in range for the
    /// role's list ([`ContainerRecord::spec`] indexes it).
    pub(crate) fn new(
        pod_spec: CowArc<PodSpec>,
        index: usize,
        role: Role,
        behavior: Arc<ContainerBehavior>,
    ) -> ContainerRecord {
        ContainerRecord {
            pod_spec,
            index,
            role,
            behavior,
            state: ContainerState::Pending,
            restart_count: 0,
            last_termination: None,
        }
    }

    /// The container's spec, as admitted.
    pub fn spec(&self) -> &Container {
        match self.role {
            Role::App => &self.pod_spec.containers[self.index],
            Role::Init | Role::Sidecar => &self.pod_spec.init_containers[self.index],
        }
    }

    /// A copy of the fields a step can change, to tell whether it changed any (cheaper than a
    /// copy of the whole record, spec included).
    pub(crate) fn progress(&self) -> ContainerProgress {
        ContainerProgress {
            state: self.state.clone(),
            restart_count: self.restart_count,
            last_termination: self.last_termination.clone(),
        }
    }

    /// True when the state, restarts and last termination are those of `before`.
    pub(crate) fn unchanged_since(&self, before: &ContainerProgress) -> bool {
        self.state == before.state
            && self.restart_count == before.restart_count
            && self.last_termination == before.last_termination
    }

    /// True when the container runs now (Running or Stopping).
    pub fn is_running(&self) -> bool {
        matches!(
            self.state,
            ContainerState::Running { .. } | ContainerState::Stopping { .. }
        )
    }

    /// True when the container will not run again by itself.
    pub(crate) fn is_done(&self) -> bool {
        match &self.state {
            ContainerState::Exited { restart_at, .. } => restart_at.is_none(),
            _ => false,
        }
    }

    /// `started` now (upstream `ContainerStatus.Started`).
    pub fn started(&self) -> bool {
        match &self.state {
            ContainerState::Running { started, .. } => *started,
            ContainerState::Stopping { .. } => true,
            _ => false,
        }
    }

    /// `ready` now.
    pub fn ready(&self) -> bool {
        match &self.state {
            ContainerState::Running { ready, .. } | ContainerState::Stopping { ready, .. } => {
                *ready
            }
            _ => false,
        }
    }

    /// The tick of this container's next change on its own.
    pub(crate) fn next_due(&self) -> Option<Tick> {
        match &self.state {
            ContainerState::Pending | ContainerState::NeverPull { .. } => None,
            ContainerState::Pulling { until, .. } => Some(*until),
            ContainerState::PullBackOff {
                reason,
                backoff_at,
                until,
                ..
            } => Some(if *reason == REASON_ERR_IMAGE_PULL {
                *backoff_at
            } else {
                *until
            }),
            ContainerState::Created { start_at } => Some(*start_at),
            ContainerState::Running {
                plan,
                reported,
                started,
                ready,
            } => [
                plan.end.as_ref().map(|(t, _)| *t),
                plan.failures.get(*reported).map(|f| f.at),
                plan.startup_ok.filter(|_| !started),
                plan.ready.filter(|_| !ready),
            ]
            .into_iter()
            .flatten()
            .min(),
            ContainerState::Stopping { exit_at, .. } => Some(*exit_at),
            ContainerState::Exited { restart_at, .. } => *restart_at,
        }
    }
}

/// An event the runtime asks the kubelet to record about the pod.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PodEvent {
    /// `Normal` or `Warning`.
    pub type_: &'static str,
    /// Reason.
    pub reason: &'static str,
    /// Message.
    pub message: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::{PodPhase, RuntimePod};
    use k8s_types::core::Pod;
    use k8s_types::object::Shared;

    #[test]
    fn records_read_their_specs_from_the_admitted_pod_without_copies() {
        let mut pod = Pod::default();
        for (name, sidecar) in [("init", false), ("proxy", true)] {
            pod.spec.init_containers.push(Container {
                name: name.into(),
                restart_policy: sidecar.then(|| "Always".into()),
                ..Default::default()
            });
        }
        pod.spec.containers.push(Container {
            name: "app".into(),
            ..Default::default()
        });
        let shared = Shared::from_typed(pod);
        let rec = RuntimePod::new(
            "u".into(),
            shared.clone(),
            PodPhase::Creating { since: 0 },
            None,
            &[],
        );
        let got: Vec<(&str, Role)> = rec
            .containers
            .iter()
            .map(|c| (c.spec().name.as_str(), c.role))
            .collect();
        assert_eq!(
            got,
            [
                ("init", Role::Init),
                ("proxy", Role::Sidecar),
                ("app", Role::App)
            ]
        );
        // Each record points into the pod's own spec.
        assert!(std::ptr::eq(
            rec.containers[1].spec(),
            &shared.spec.init_containers[1]
        ));
        assert!(std::ptr::eq(
            rec.containers[2].spec(),
            &shared.spec.containers[0]
        ));
    }
}
