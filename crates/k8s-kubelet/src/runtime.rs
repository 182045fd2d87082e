//! The simulated container runtime and the kubelet's record of each pod it runs: what the CRI
//! runtime (containerd), the PLEG's pod cache and the kuberuntime manager hold and decide upstream
//! (`pkg/kubelet/container`, `pkg/kubelet/kuberuntime/kuberuntime_manager.go` `computePodActions`
//! and `SyncPod`, `kuberuntime_container.go` `startContainer` / `killContainer`,
//! `pkg/kubelet/images/image_manager.go` `EnsureImageExists`).
//!
//! A pod's sandbox is created (with its IP) when the pod is admitted and is ready `startup_ticks`
//! later. Each container then goes through [`ContainerState`]s on the virtual clock, as its declared
//! behavior ([`crate::behavior`]) and probes ([`crate::prober`]) say:
//! - init containers run one after another, each to exit 0; a native sidecar (an init container
//!   with `restartPolicy: Always`, KEP-753) lets the next one start once it has *started*, and keeps
//!   running; app containers start together once every init container is done;
//! - starting a container pulls its image when a pull is modelled (`Pulling`, `Pulled`, or
//!   `ErrImagePull` and `ImagePullBackOff` with back-off), then `Created` and `Started`; the first
//!   containers of a pod are created at admission and start when the sandbox is ready;
//! - an attempt ends by exiting, by an OOM kill, or by a failed liveness/startup probe (a graceful
//!   kill); the container restarts as the restart policy says (`Always`, `OnFailure`, `Never`;
//!   sidecars always), immediately the first time and then after upstream's back-off
//!   ([`crate::backoff`]) while `CrashLoopBackOff`;
//! - when every app container is done for good, running sidecars are stopped and the pod is
//!   terminal; a pod being deleted stops its app containers, then its sidecars, each running its
//!   preStop hook, getting SIGTERM and exiting as declared or at the grace period's end (SIGKILL).

use std::collections::{BTreeMap, BTreeSet};

use k8s_types::core::event::event_types;
use k8s_types::core::{Container, Pod};
use k8s_types::meta::go_duration;
use k8s_types::resources::Resources;
use k8s_types::{Shared, Tick};

use crate::admission::RequestsMemo;
use crate::backoff::Backoff;
use crate::behavior::BehaviorRule;
use crate::prober::{self, End, ProbeType};

pub use crate::container::{
    ContainerRecord, ContainerState, PodEvent, Role, Termination, EXIT_CODE_SIGKILL,
    REASON_COMPLETED, REASON_CONTAINER_STATUS_UNKNOWN, REASON_CRASH_LOOP_BACK_OFF, REASON_ERROR,
    REASON_ERR_IMAGE_NEVER_PULL, REASON_ERR_IMAGE_PULL, REASON_IMAGE_PULL_BACK_OFF,
    REASON_OOM_KILLED,
};

/// Where a pod is in its life on this node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PodPhase {
    /// Admitted; the sandbox is being created (`ContainerCreating`) until `since + startup_ticks`.
    Creating {
        /// The tick the pod was admitted.
        since: Tick,
    },
    /// The sandbox is ready; containers follow their own states.
    Running {
        /// The tick the sandbox became ready.
        started: Tick,
    },
    /// Being deleted: containers are stopped; everything is killed at `deadline`.
    Terminating {
        /// The end of the grace period.
        deadline: Tick,
    },
    /// Rejected at admission (phase Failed); holds nothing.
    Rejected,
    /// Terminal (every container stopped for good); holds nothing.
    Terminated,
}

impl PodPhase {
    /// True while the pod holds node resources (upstream "active" pods).
    pub fn is_active(self) -> bool {
        matches!(
            self,
            PodPhase::Creating { .. } | PodPhase::Running { .. } | PodPhase::Terminating { .. }
        )
    }
}

/// What a pod's containers need from the node while they step.
pub struct NodeContext<'a> {
    /// Images on the node (`status.images` names plus pulls done here).
    pub images: &'a mut BTreeSet<String>,
    /// Images pulled here, with their sizes.
    pub pulled: &'a mut BTreeMap<String, u64>,
    /// Restart back-off per `<pod uid>/<container>`, image back-off per `<pod uid>/image/<name>`.
    pub backoff: &'a mut Backoff,
    /// Ticks from admission to a ready sandbox.
    pub startup_ticks: u64,
}

/// One pod as the kubelet knows it.
#[derive(Clone, Debug, PartialEq)]
pub struct RuntimePod {
    /// `metadata.uid` when first seen (a new pod with the same name is a different pod).
    pub uid: String,
    /// The pod as last listed, shared with the apiserver.
    pub pod: Shared<Pod>,
    /// Lifecycle state.
    pub phase: PodPhase,
    /// The sandbox IP, when the pod got one from the pod CIDR.
    pub pod_ip: Option<String>,
    /// Init containers in spec order, then app containers in spec order.
    pub containers: Vec<ContainerRecord>,
    /// The pod reached a terminal state by itself (completion or a failed init container).
    pub completed: bool,
    /// The pod's requests as admission last summed them.
    requests: RequestsMemo,
}

/// Upstream `format.Pod`: `name_namespace(uid)`.
pub fn format_pod(pod: &Pod) -> String {
    format!(
        "{}_{}({})",
        pod.metadata.name,
        pod.metadata.namespace(),
        pod.metadata.uid.as_deref().unwrap_or("")
    )
}

fn ev(type_: &'static str, reason: &'static str, message: String) -> PodEvent {
    PodEvent {
        type_,
        reason,
        message,
    }
}

impl RuntimePod {
    /// A record for a pod the kubelet admits now (or finds already in a state that holds
    /// nothing, `phase` Rejected / Terminated): one [`ContainerRecord`] per container with its
    /// resolved behavior.
    pub fn new(
        uid: String,
        pod: Shared<Pod>,
        phase: PodPhase,
        pod_ip: Option<String>,
        rules: &[BehaviorRule],
    ) -> RuntimePod {
        let spec = &pod.spec;
        let init = spec.init_containers.iter().enumerate().map(|(i, c)| {
            let role = if c.is_sidecar() {
                Role::Sidecar
            } else {
                Role::Init
            };
            (i, c, role)
        });
        let apps = spec.containers.iter().enumerate();
        let containers = init
            .chain(apps.map(|(i, c)| (i, c, Role::App)))
            .map(|(i, c, role)| {
                let behavior = crate::behavior::resolve(&pod, rules, &c.name);
                ContainerRecord::new(spec.clone(), i, role, behavior)
            })
            .collect();
        RuntimePod {
            uid,
            pod,
            phase,
            pod_ip,
            containers,
            completed: false,
            requests: RequestsMemo::default(),
        }
    }

    /// Takes over a pod found already running (a dump, or upstream after a kubelet restart): init
    /// containers count as completed and the others as running since their recorded
    /// `startedAt` (else `now`), with their recorded restart counts; nothing is recorded.
    pub fn adopt(&mut self, now: Tick) {
        let statuses: Vec<&k8s_types::core::ContainerStatus> = self
            .pod
            .status
            .init_container_statuses
            .iter()
            .chain(&self.pod.status.container_statuses)
            .collect();
        let pod_ip = self.pod_ip.clone().unwrap_or_default();
        for c in &mut self.containers {
            let st = statuses.iter().find(|s| s.name == c.spec().name);
            c.restart_count = st.map_or(0, |s| s.restart_count);
            if c.role == Role::Init {
                c.state = ContainerState::Exited {
                    term: Termination {
                        exit_code: 0,
                        reason: REASON_COMPLETED,
                        message: None,
                        started: now,
                        finished: now,
                    },
                    restart_at: None,
                };
                continue;
            }
            let started = st
                .and_then(|s| s.state.running.as_ref())
                .and_then(|r| r.started_at.as_deref())
                .and_then(k8s_types::meta::timestamp_tick)
                .filter(|t| *t <= now)
                .unwrap_or(now);
            let attempt = u32::try_from(c.restart_count).unwrap_or(0);
            let plan = prober::plan(c.spec(), &c.behavior, attempt, started, &pod_ip);
            c.state = ContainerState::Running {
                started: plan.startup_ok.is_some_and(|t| t <= now),
                ready: plan.ready.is_some_and(|t| t <= now),
                reported: plan.failures.count_until(now),
                plan,
            };
        }
    }

    /// Containers in the order the kubelet stops them on deletion (upstream
    /// `killContainersWithSyncResult`: app containers, then sidecars in reverse order).
    pub fn stop_order(&self) -> Vec<&Container> {
        let apps = self.containers.iter().filter(|c| c.role == Role::App);
        let sidecars = self
            .containers
            .iter()
            .filter(|c| c.role == Role::Sidecar)
            .rev();
        apps.chain(sidecars).map(|c| c.spec()).collect()
    }

    /// The tick of the pod's next change on its own (a container due, the sandbox turning
    /// ready, the grace period ending).
    pub fn next_due(&self) -> Option<Tick> {
        let own = match self.phase {
            PodPhase::Terminating { deadline } => Some(deadline),
            _ => None,
        };
        if !self.phase.is_active() {
            return None;
        }
        self.containers
            .iter()
            .filter_map(ContainerRecord::next_due)
            .chain(own)
            .min()
    }

    fn restart_policy(&self) -> &str {
        self.pod.spec.restart_policy.as_deref().unwrap_or("Always")
    }

    fn grace(&self) -> u64 {
        self.pod
            .spec
            .termination_grace_period_seconds
            .and_then(|g| u64::try_from(g).ok())
            .unwrap_or(30)
    }

    fn sandbox_ready_at(&self, startup_ticks: u64) -> Tick {
        match self.phase {
            PodPhase::Creating { since } => since.saturating_add(startup_ticks),
            _ => 0,
        }
    }

    /// Starts container `i` at `t` (upstream `startContainer` after `EnsureImageExists`).
    fn start(&mut self, i: usize, t: Tick, node: &mut NodeContext<'_>, out: &mut Vec<PodEvent>) {
        let sandbox = self.sandbox_ready_at(node.startup_ticks);
        let c = &self.containers[i];
        let image = c.spec().image.clone();
        let policy = c
            .spec()
            .image_pull_policy
            .as_deref()
            .unwrap_or("IfNotPresent");
        let present = !c.behavior.models_pulls() || node.images.contains(&image);
        let pull = c.behavior.models_pulls() && (policy == "Always" || !present);
        if !present && policy == "Never" {
            let message =
                format!("Container image \"{image}\" is not present with pull policy of Never");
            out.push(ev(
                event_types::WARNING,
                crate::sync_pod::EVENT_ERR_IMAGE_NEVER_PULL,
                message.clone(),
            ));
            out.push(ev(
                event_types::WARNING,
                crate::sync_pod::EVENT_FAILED,
                format!("Error: {REASON_ERR_IMAGE_NEVER_PULL}"),
            ));
            self.containers[i].state = ContainerState::NeverPull { message };
            return;
        }
        if pull {
            out.push(ev(
                event_types::NORMAL,
                crate::sync_pod::EVENT_PULLING,
                format!("Pulling image \"{image}\""),
            ));
            let secs = c.behavior.pull_seconds.unwrap_or(0);
            self.containers[i].state = ContainerState::Pulling {
                since: t,
                until: t.saturating_add(secs),
            };
            if secs == 0 {
                self.finish_pull(i, t, node, out);
            }
            return;
        }
        out.push(ev(
            event_types::NORMAL,
            crate::sync_pod::EVENT_PULLED,
            crate::sync_pod::pulled_message(&image),
        ));
        self.create(i, t, sandbox, out);
    }

    fn create(&mut self, i: usize, t: Tick, sandbox: Tick, out: &mut Vec<PodEvent>) {
        let name = self.containers[i].spec().name.clone();
        out.push(ev(
            event_types::NORMAL,
            crate::sync_pod::EVENT_CREATED,
            crate::sync_pod::created_message(&name),
        ));
        let start_at = t.max(sandbox);
        self.containers[i].state = ContainerState::Created { start_at };
        if start_at <= t {
            self.run(i, t, out);
        }
    }

    fn run(&mut self, i: usize, t: Tick, out: &mut Vec<PodEvent>) {
        let pod_ip = self.pod_ip.clone().unwrap_or_default();
        let c = &self.containers[i];
        let attempt = u32::try_from(c.restart_count).unwrap_or(u32::MAX);
        let plan = prober::plan(c.spec(), &c.behavior, attempt, t, &pod_ip);
        // A container lost with its runtime (`crate::power`) leaves no last state once a new one
        // runs: upstream's lastState comes from the runtime's previous container.
        let lost =
            c.last_termination.as_ref().map(|l| l.reason) == Some(REASON_CONTAINER_STATUS_UNKNOWN);
        if lost {
            self.containers[i].last_termination = None;
        }
        let c = &self.containers[i];
        out.push(ev(
            event_types::NORMAL,
            crate::sync_pod::EVENT_STARTED,
            crate::sync_pod::started_message(&c.spec().name),
        ));
        self.containers[i].state = ContainerState::Running {
            plan,
            reported: 0,
            started: false,
            ready: false,
        };
    }

    fn finish_pull(
        &mut self,
        i: usize,
        t: Tick,
        node: &mut NodeContext<'_>,
        out: &mut Vec<PodEvent>,
    ) {
        let sandbox = self.sandbox_ready_at(node.startup_ticks);
        let c = &self.containers[i];
        let image = c.spec().image.clone();
        let since = match c.state {
            ContainerState::Pulling { since, .. } => since,
            _ => t,
        };
        let key = format!("{}/image/{}", self.uid, c.spec().name);
        if let Some(err) = c.behavior.pull_error.clone() {
            node.backoff.next(&key, t, t);
            let until = t.saturating_add(node.backoff.get(&key));
            out.push(ev(
                event_types::WARNING,
                crate::sync_pod::EVENT_FAILED,
                format!("Failed to pull image \"{image}\": {err}"),
            ));
            out.push(ev(
                event_types::WARNING,
                crate::sync_pod::EVENT_FAILED,
                format!("Error: {REASON_ERR_IMAGE_PULL}"),
            ));
            self.containers[i].state = ContainerState::PullBackOff {
                reason: REASON_ERR_IMAGE_PULL,
                message: err,
                backoff_at: t.saturating_add(1).min(until),
                until,
            };
            return;
        }
        let took = go_duration(t - since);
        out.push(ev(
            event_types::NORMAL,
            crate::sync_pod::EVENT_PULLED,
            format!(
                "Successfully pulled image \"{image}\" in {took} ({took} including waiting). Image size: {} bytes.",
                c.behavior.image_size_bytes.unwrap_or(0)
            ),
        ));
        node.pulled
            .insert(image.clone(), c.behavior.image_size_bytes.unwrap_or(0));
        node.images.insert(image);
        self.create(i, t, sandbox, out);
    }

    /// The container exited (or was killed) at `t` with `code`: record the termination and decide
    /// on a restart (upstream `computePodActions` + `doBackOff`).
    fn exited(
        &mut self,
        i: usize,
        term: Termination,
        probe_kill: bool,
        node: &mut NodeContext<'_>,
        out: &mut Vec<PodEvent>,
    ) {
        let (t, code) = (term.finished, term.exit_code);
        let policy = self.restart_policy().to_string();
        let terminating = matches!(self.phase, PodPhase::Terminating { .. }) || self.completed;
        let c = &self.containers[i];
        let restart = !terminating
            && match c.role {
                Role::Sidecar => true,
                Role::Init => code != 0 && policy != "Never",
                Role::App => match policy.as_str() {
                    "Always" => true,
                    "OnFailure" => code != 0 || probe_kill,
                    _ => false,
                },
            };
        let key = format!("{}/{}", self.uid, c.spec().name);
        let restart_at = if restart {
            if node.backoff.in_backoff_since(&key, t, t) {
                let at = node.backoff.until(&key, t);
                out.push(ev(
                    event_types::WARNING,
                    crate::sync_pod::EVENT_BACK_OFF,
                    format!(
                        "Back-off restarting failed container {} in pod {}",
                        c.spec().name,
                        format_pod(&self.pod)
                    ),
                ));
                Some(at)
            } else {
                Some(t)
            }
        } else {
            None
        };
        self.containers[i].state = ContainerState::Exited { term, restart_at };
    }

    /// Begins stopping container `i` at `t` (upstream `killContainer`: the `Killing` event, the
    /// preStop hook, SIGTERM; SIGKILL at `deadline`).
    fn stop(
        &mut self,
        i: usize,
        t: Tick,
        deadline: Tick,
        message: String,
        restartable: bool,
        out: &mut Vec<PodEvent>,
    ) {
        let c = &self.containers[i];
        let (started, ready) = match &c.state {
            ContainerState::Running { plan, ready, .. } => (plan.started, *ready),
            _ => return,
        };
        out.push(ev(
            event_types::NORMAL,
            crate::sync_pod::EVENT_KILLING,
            message,
        ));
        let hook = c
            .spec()
            .lifecycle
            .as_ref()
            .and_then(|l| l.pre_stop.as_ref())
            .map_or(0, |h| match &h.sleep {
                Some(s) => u64::try_from(s.seconds).unwrap_or(0),
                None => c.behavior.pre_stop_seconds.unwrap_or(0),
            });
        let graceful = c.behavior.stop.as_ref().map(|s| {
            (
                t.saturating_add(hook).saturating_add(s.seconds),
                i32::from(s.exit_code),
            )
        });
        let (exit_at, exit_code) = match graceful {
            Some((at, code)) if at < deadline => (at, code),
            _ => (deadline.max(t), EXIT_CODE_SIGKILL),
        };
        self.containers[i].state = ContainerState::Stopping {
            started,
            exit_at,
            exit_code,
            restartable,
            ready,
        };
    }

    /// Applies the earliest due change of container `i` at `t`.
    fn advance_container(
        &mut self,
        i: usize,
        t: Tick,
        node: &mut NodeContext<'_>,
        out: &mut Vec<PodEvent>,
    ) {
        let state = self.containers[i].state.clone();
        match state {
            ContainerState::Pending | ContainerState::NeverPull { .. } => {}
            ContainerState::Pulling { .. } => self.finish_pull(i, t, node, out),
            ContainerState::PullBackOff {
                reason,
                backoff_at,
                until,
                ..
            } => {
                if reason == REASON_ERR_IMAGE_PULL && t >= backoff_at && t < until {
                    let image = self.containers[i].spec().image.clone();
                    out.push(ev(
                        event_types::NORMAL,
                        crate::sync_pod::EVENT_BACK_OFF,
                        format!("Back-off pulling image \"{image}\""),
                    ));
                    out.push(ev(
                        event_types::WARNING,
                        crate::sync_pod::EVENT_FAILED,
                        format!("Error: {REASON_IMAGE_PULL_BACK_OFF}"),
                    ));
                    self.containers[i].state = ContainerState::PullBackOff {
                        reason: REASON_IMAGE_PULL_BACK_OFF,
                        message: format!("Back-off pulling image \"{image}\""),
                        backoff_at,
                        until,
                    };
                } else {
                    self.start(i, t, node, out);
                }
            }
            ContainerState::Created { .. } => self.run(i, t, out),
            ContainerState::Running {
                plan,
                mut reported,
                mut started,
                mut ready,
            } => {
                let name = self.containers[i].spec().name.clone();
                while let Some(f) = plan.failures.get(reported).filter(|f| f.at <= t) {
                    out.push(ev(
                        event_types::WARNING,
                        crate::sync_pod::EVENT_UNHEALTHY,
                        if f.errored {
                            // Upstream prober.probe: "%s probe errored and resulted in %s state: %s".
                            format!(
                                "{} probe errored and resulted in unknown state: {}",
                                f.probe.as_str(),
                                f.output
                            )
                        } else {
                            format!("{} probe failed: {}", f.probe.as_str(), f.output)
                        },
                    ));
                    reported += 1;
                }
                started |= plan.startup_ok.is_some_and(|s| s <= t);
                ready |= plan.ready.is_some_and(|r| r <= t);
                match plan.end.clone().filter(|(e, _)| *e <= t) {
                    Some((at, End::Exit(code))) => {
                        let term = Termination::exit(plan.started, at, i32::from(code));
                        self.exited(i, term, false, node, out);
                    }
                    Some((at, End::OomKilled)) => {
                        let term = Termination {
                            exit_code: EXIT_CODE_SIGKILL,
                            reason: REASON_OOM_KILLED,
                            message: None,
                            started: plan.started,
                            finished: at,
                        };
                        self.exited(i, term, false, node, out);
                    }
                    Some((at, End::ProbeKill(probe))) => {
                        let which = match probe {
                            ProbeType::Startup => "startup",
                            _ => "liveness",
                        };
                        let spec = self.containers[i].spec();
                        let killer = match probe {
                            ProbeType::Startup => spec.startup_probe.as_ref(),
                            _ => spec.liveness_probe.as_ref(),
                        };
                        let grace = killer
                            .and_then(|p| p.termination_grace_period_seconds)
                            .and_then(|g| u64::try_from(g).ok())
                            .unwrap_or_else(|| self.grace());
                        self.containers[i].state = ContainerState::Running {
                            plan,
                            reported,
                            started,
                            ready: false,
                        };
                        let msg =
                            format!("Container {name} failed {which} probe, will be restarted");
                        self.stop(i, at, at.saturating_add(grace), msg, true, out);
                    }
                    None => {
                        self.containers[i].state = ContainerState::Running {
                            plan,
                            reported,
                            started,
                            ready,
                        };
                    }
                }
            }
            ContainerState::Stopping {
                started,
                exit_at,
                exit_code,
                restartable,
                ..
            } => {
                let term = Termination::exit(started, exit_at, exit_code);
                self.exited(i, term, restartable, node, out);
                if !restartable {
                    if let ContainerState::Exited { restart_at, .. } = &mut self.containers[i].state
                    {
                        *restart_at = None;
                    }
                }
            }
            ContainerState::Exited { term, restart_at } => {
                if let Some(at) = restart_at {
                    let key = format!("{}/{}", self.uid, self.containers[i].spec().name);
                    node.backoff.next(&key, term.finished, at);
                    let c = &mut self.containers[i];
                    c.restart_count += 1;
                    c.last_termination = Some(term);
                    self.start(i, at, node, out);
                }
            }
        }
    }

    /// Starts what may start now (upstream `computePodActions`): the next init container, or every
    /// app container once the init containers are done; stops sidecars once the pod is done; fails
    /// the pod when an init container failed under `restartPolicy: Never`.
    fn compute_actions(&mut self, t: Tick, node: &mut NodeContext<'_>, out: &mut Vec<PodEvent>) {
        if !matches!(
            self.phase,
            PodPhase::Creating { .. } | PodPhase::Running { .. }
        ) {
            return;
        }
        if self.completed {
            self.stop_sidecars(t, t.saturating_add(self.grace()), out);
            return;
        }
        let mut inits_done = true;
        for i in 0..self.containers.len() {
            let c = &self.containers[i];
            match c.role {
                Role::App => break,
                Role::Sidecar => {
                    if c.state == ContainerState::Pending {
                        self.start(i, t, node, out);
                    }
                    if !self.containers[i].started() {
                        inits_done = false;
                        break;
                    }
                }
                Role::Init => {
                    if c.state == ContainerState::Pending {
                        self.start(i, t, node, out);
                    }
                    match &self.containers[i].state {
                        ContainerState::Exited {
                            term,
                            restart_at: None,
                        } if term.exit_code == 0 => {}
                        ContainerState::Exited {
                            restart_at: None, ..
                        } => {
                            // restartPolicy Never: the pod fails.
                            self.completed = true;
                            self.stop_sidecars(t, t.saturating_add(self.grace()), out);
                            return;
                        }
                        _ => {
                            inits_done = false;
                            break;
                        }
                    }
                }
            }
        }
        if !inits_done {
            return;
        }
        for i in 0..self.containers.len() {
            if self.containers[i].role == Role::App
                && self.containers[i].state == ContainerState::Pending
            {
                self.start(i, t, node, out);
            }
        }
        let apps_done = self
            .containers
            .iter()
            .filter(|c| c.role == Role::App)
            .all(ContainerRecord::is_done);
        if apps_done {
            self.completed = true;
            self.stop_sidecars(t, t.saturating_add(self.grace()), out);
        }
    }

    /// Stops running sidecars in reverse order, once no app container runs.
    fn stop_sidecars(&mut self, t: Tick, deadline: Tick, out: &mut Vec<PodEvent>) {
        if self
            .containers
            .iter()
            .any(|c| c.role == Role::App && c.is_running())
        {
            return;
        }
        for i in (0..self.containers.len()).rev() {
            let c = &self.containers[i];
            if c.role == Role::Sidecar && matches!(c.state, ContainerState::Running { .. }) {
                let msg = crate::sync_pod::killing_message(&c.spec().name);
                self.stop(i, t, deadline, msg, false, out);
            }
        }
    }

    /// Starts the pod's deletion at `t` with the grace period ending at `deadline` (upstream
    /// `syncTerminatingPod`): app containers are stopped now, sidecars once the app containers
    /// have exited; pending restarts are cancelled.
    pub fn begin_termination(&mut self, t: Tick, deadline: Tick, out: &mut Vec<PodEvent>) {
        if !self.phase.is_active() || matches!(self.phase, PodPhase::Terminating { .. }) {
            return;
        }
        self.phase = PodPhase::Terminating { deadline };
        for c in &mut self.containers {
            if let ContainerState::Exited { restart_at, .. } = &mut c.state {
                *restart_at = None;
            }
            if matches!(c.state, ContainerState::Created { .. }) {
                // Created, never started: removed with a `Killing` event like a running one.
                out.push(ev(
                    event_types::NORMAL,
                    crate::sync_pod::EVENT_KILLING,
                    crate::sync_pod::killing_message(&c.spec().name),
                ));
            }
            if matches!(
                c.state,
                ContainerState::Pulling { .. }
                    | ContainerState::PullBackOff { .. }
                    | ContainerState::NeverPull { .. }
                    | ContainerState::Created { .. }
            ) {
                c.state = ContainerState::Pending;
            }
        }
        for i in 0..self.containers.len() {
            if self.containers[i].role == Role::App {
                let msg = crate::sync_pod::killing_message(&self.containers[i].spec().name);
                self.stop(i, t, deadline, msg, false, out);
            }
        }
        self.stop_sidecars(t, deadline, out);
    }

    /// Whether [`RuntimePod::step`] at `now` would find nothing to do: the sandbox is not due to
    /// become ready, the pod is not terminating, no container has anything due at or before `now`
    /// and none waits to be created.
    pub fn is_idle(&self, now: Tick, startup_ticks: u64) -> bool {
        let sandbox_due = matches!(self.phase, PodPhase::Creating { since } if now >= since.saturating_add(startup_ticks));
        !sandbox_due
            && !matches!(self.phase, PodPhase::Terminating { .. })
            && self.next_due().is_none_or(|t| t > now)
            && !self
                .containers
                .iter()
                .any(|c| c.state == ContainerState::Pending)
    }

    /// Everything due at or before `now`, in time order (ties: container order), then what may
    /// start. Returns true when anything changed.
    pub fn step(&mut self, now: Tick, node: &mut NodeContext<'_>, out: &mut Vec<PodEvent>) -> bool {
        // Fast path: a pod whose containers all run undisturbed has nothing to do.
        if self.is_idle(now, node.startup_ticks) || !self.phase.is_active() {
            return false;
        }
        let before: Vec<_> = self
            .containers
            .iter()
            .map(ContainerRecord::progress)
            .collect();
        let phase_before = self.phase;
        if let PodPhase::Creating { since } = self.phase {
            let ready = since.saturating_add(node.startup_ticks);
            if now >= ready {
                // Containers created at admission start with the sandbox.
                for i in 0..self.containers.len() {
                    if matches!(self.containers[i].state, ContainerState::Created { start_at } if start_at <= ready)
                    {
                        self.run(i, ready, out);
                    }
                }
                self.phase = PodPhase::Running { started: ready };
            }
        }
        self.compute_actions(now, node, out);
        for _ in 0..10_000 {
            let due = self
                .containers
                .iter()
                .enumerate()
                .filter_map(|(i, c)| c.next_due().map(|t| (t, i)))
                .filter(|(t, _)| *t <= now)
                .min();
            let Some((t, i)) = due else { break };
            self.advance_container(i, t, node, out);
            if let PodPhase::Terminating { deadline } = self.phase {
                self.stop_sidecars(t, deadline, out);
            } else {
                self.compute_actions(t, node, out);
            }
        }
        if let PodPhase::Terminating { deadline } = self.phase {
            if now >= deadline {
                // Grace period over: anything still running is killed.
                for c in &mut self.containers {
                    if let ContainerState::Running { plan, .. } = &c.state {
                        c.state = ContainerState::Exited {
                            term: Termination {
                                exit_code: EXIT_CODE_SIGKILL,
                                reason: REASON_ERROR,
                                message: None,
                                started: plan.started,
                                finished: deadline,
                            },
                            restart_at: None,
                        };
                    }
                }
            }
        }
        let changed = self.containers.len() != before.len()
            || self
                .containers
                .iter()
                .zip(&before)
                .any(|(c, b)| !c.unchanged_since(b));
        changed || self.phase != phase_before
    }

    /// True when every container has stopped for good (the pod can be made terminal / removed).
    pub fn all_stopped(&self) -> bool {
        self.containers.iter().all(|c| match &c.state {
            ContainerState::Pending => true,
            ContainerState::Exited { restart_at, .. } => restart_at.is_none(),
            _ => false,
        })
    }
}

/// Every pod the kubelet knows, by `namespace/name`. Each record is boxed: a map node holds 11
/// entries, most of them empty slots, and a slot of a 24-byte key and a pointer costs less than
/// one holding the whole record (heaptrack, 5,000 nodes / 150,000 pods: 358 bytes of map nodes
/// per pod with records inline).
#[derive(Clone, Debug, Default)]
pub struct Runtime {
    pods: BTreeMap<String, Box<RuntimePod>>,
}

impl Runtime {
    /// The pod under `key`.
    pub fn get(&self, key: &str) -> Option<&RuntimePod> {
        self.pods.get(key).map(|p| &**p)
    }

    /// The pod under `key`, mutably.
    pub fn get_mut(&mut self, key: &str) -> Option<&mut RuntimePod> {
        self.pods.get_mut(key).map(|p| &mut **p)
    }

    /// Records a pod (replacing any record under the same key).
    pub fn insert(&mut self, key: String, pod: RuntimePod) {
        self.pods.insert(key, Box::new(pod));
    }

    /// Forgets a pod, returning its record.
    pub fn remove(&mut self, key: &str) -> Option<RuntimePod> {
        self.pods.remove(key).map(|p| *p)
    }

    /// The earliest tick at which some pod changes on its own.
    pub fn next_due(&self) -> Option<Tick> {
        self.pods.values().filter_map(|p| p.next_due()).min()
    }

    /// Every known key, in order.
    pub fn keys(&self) -> Vec<String> {
        self.pods.keys().cloned().collect()
    }

    /// Every known key with its record, in key order.
    pub fn iter(&self) -> impl Iterator<Item = (&String, &RuntimePod)> {
        self.pods.iter().map(|(k, p)| (k, &**p))
    }

    /// The summed requests of the pods holding node resources (what upstream's admission adds
    /// up from `GetActivePods`), each pod's taken from its record's memo while its spec is the
    /// same.
    pub fn active_requests(&mut self) -> Resources {
        let mut used = Resources::default();
        for rec in self.pods.values_mut().filter(|p| p.phase.is_active()) {
            used.add(rec.requests.of(&rec.pod));
        }
        used
    }

    /// Pods holding node resources, in key order (upstream `GetActivePods`).
    pub fn active_pods(&self) -> Vec<&Pod> {
        self.pods
            .values()
            .filter(|p| p.phase.is_active())
            .map(|p| &*p.pod)
            .collect()
    }
}
