//! A node's machine losing power and booting again (the `powerOff` / `powerOn` scenario steps).
//!
//! Power off: every container process dies with the machine, and so does the kubelet with all it
//! held in memory (its pod records, restart back-off, event correlation cache, the IPs and devices
//! it handed out). Nothing reaches the apiserver: to the control plane the node just goes silent,
//! as with a stopped kubelet, and the node lifecycle controller marks it Unknown and taints it.
//!
//! Power on: the kubelet starts on the existing Node (`Starting`), sees a new boot ID and records
//! `Rebooted` (upstream `pkg/kubelet/nodestatus/setters.go` `MachineInfo`, reason
//! `events.NodeRebooted`, message `Node <name> has been rebooted, boot id: <id>`), renews its Lease,
//! posts Ready, and at its first sync admits every pod bound to it again. The runtime has none of
//! their containers: their status is rebuilt from the pod's last API status as upstream's
//! `convertToAPIContainerStatuses` (`pkg/kubelet/kubelet_pods.go`) does for containers the runtime
//! no longer reports:
//! - a container whose last status was `running` gets `lastState.terminated` with reason
//!   `ContainerStatusUnknown`, exit code 137, message `The container could not be located when the
//!   pod was deleted.  The container used to be Running`, and `restartCount + 1` (the pod was not
//!   deleted);
//! - any other container keeps its `restartCount` and `lastState`;
//! - a new sandbox (new pod IP) is created and the containers start again as after admission (init
//!   containers first: upstream reruns them with a new sandbox, `computePodActions`), except app
//!   containers that finished for good (`restartPolicy: Never`, or `OnFailure` after exit 0);
//! - with `restartPolicy: Never`, a pod that lost a running app container is not restarted: its
//!   phase is Failed (`getPhase`: a waiting container with a last termination counts as stopped,
//!   exit 137 is not success), and the status manager's `TerminatePod` turns every container not
//!   terminated into `terminated` / `ContainerStatusUnknown` / 137 / `The container could not be
//!   located when the pod was terminated`.
//!
//! Pods deleted while the node was off (taint eviction) are finished at once, nothing runs: their
//! terminal status is written first as the status manager's `TerminatePod` does (phase Failed,
//! every container not terminated turned `ContainerStatusUnknown`, the restart count not raised
//! since the pod was deleted), then the kubelet deletes them.

use k8s_types::apiserver::ApiClient;
use k8s_types::core::event::event_types;
use k8s_types::core::{ContainerStateDetail, ContainerStatus, Pod};
use k8s_types::events::EventRecorder;
use k8s_types::meta::timestamp_tick;
use k8s_types::{Shared, Tick};

use crate::backoff::Backoff;
use crate::kubelet::Kubelet;
use crate::node_status;
use crate::runtime::{
    ContainerState, PodPhase, Role, RuntimePod, Termination, EXIT_CODE_SIGKILL, REASON_COMPLETED,
    REASON_CONTAINER_STATUS_UNKNOWN, REASON_ERROR, REASON_OOM_KILLED,
};
use crate::sync_pod;

/// Event reason when the kubelet finds the machine booted again (upstream `events.NodeRebooted`).
pub const EVENT_REBOOTED: &str = "Rebooted";
/// `lastState.terminated.message` of a container that was running when the runtime lost it
/// (upstream `convertToAPIContainerStatuses`; the two spaces are upstream's).
pub const MESSAGE_LOST_WHILE_RUNNING: &str =
    "The container could not be located when the pod was deleted.  The container used to be Running";
/// `state.terminated.message` the status manager's `TerminatePod` gives a container with no
/// terminated status when its pod ends.
pub const MESSAGE_LOST_AT_TERMINATION: &str =
    "The container could not be located when the pod was terminated";

/// Upstream's `Rebooted` message.
pub fn rebooted_message(node: &str, boot_id: &str) -> String {
    format!("Node {node} has been rebooted, boot id: {boot_id}")
}

/// The boot ID of a node's `boot`-th boot (`/proc/sys/kernel/random/boot_id` upstream, a random
/// UUID): here a UUID-shaped value derived from the node name and the boot number, so a run is
/// reproducible.
pub fn boot_id(node: &str, boot: u64) -> String {
    // FNV-1a over the name, mixed with the boot number by SplitMix64.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in node.bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    let mut rng = k8s_types::rng::SplitMix64::new(h ^ boot);
    let (a, b) = (rng.next_u64(), rng.next_u64());
    format!(
        "{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}",
        a >> 32,
        (a >> 16) & 0xffff,
        a & 0x0fff,
        0x8000 | ((b >> 48) & 0x3fff),
        b & 0xffff_ffff_ffff
    )
}

fn unknown(message: &'static str) -> Termination {
    Termination {
        exit_code: EXIT_CODE_SIGKILL,
        reason: REASON_CONTAINER_STATUS_UNKNOWN,
        message: Some(message),
        started: 0,
        finished: 0,
    }
}

/// A termination as the API status recorded it (the reasons the runtime gives; any other reads as
/// `Completed` / `Error` by exit code).
fn recorded(d: &ContainerStateDetail) -> Termination {
    let exit_code = d.exit_code.unwrap_or(0);
    let reason = match d.reason.as_deref() {
        Some(REASON_OOM_KILLED) => REASON_OOM_KILLED,
        Some(REASON_CONTAINER_STATUS_UNKNOWN) => REASON_CONTAINER_STATUS_UNKNOWN,
        _ if exit_code == 0 => REASON_COMPLETED,
        _ => REASON_ERROR,
    };
    let message = match d.message.as_deref() {
        Some(MESSAGE_LOST_WHILE_RUNNING) => Some(MESSAGE_LOST_WHILE_RUNNING),
        Some(MESSAGE_LOST_AT_TERMINATION) => Some(MESSAGE_LOST_AT_TERMINATION),
        _ => None,
    };
    let tick =
        |t: &Option<k8s_types::CompactString>| t.as_deref().and_then(timestamp_tick).unwrap_or(0);
    Termination {
        exit_code,
        reason,
        message,
        started: tick(&d.started_at),
        finished: tick(&d.finished_at),
    }
}

fn old_status<'a>(pod: &'a Pod, role: Role, name: &str) -> Option<&'a ContainerStatus> {
    let list = match role {
        Role::App => &pod.status.container_statuses,
        _ => &pod.status.init_container_statuses,
    };
    list.iter().find(|s| s.name == name)
}

/// Whether the pod's last status has a running container (init, sidecar or app).
pub fn lost_running_containers(pod: &Pod) -> bool {
    pod.status
        .container_statuses
        .iter()
        .chain(&pod.status.init_container_statuses)
        .any(|s| s.state.running.is_some())
}

/// Whether a pod lost a running app container and may not restart it (`restartPolicy: Never`):
/// it fails instead of starting again.
pub fn fails_after_reboot(pod: &Pod) -> bool {
    pod.spec.restart_policy.as_deref() == Some("Never")
        && pod
            .status
            .container_statuses
            .iter()
            .any(|s| s.state.running.is_some())
}

/// Seeds a fresh record of a pod whose containers the runtime lost with its last API status (see
/// the module documentation).
pub(crate) fn carry_over(rec: &mut RuntimePod) {
    let pod = rec.pod.clone();
    let policy = pod.spec.restart_policy.as_deref().unwrap_or("Always");
    // Upstream counts the lost container as a restart only when the pod was not deleted.
    let restarted = i32::from(pod.metadata.deletion_timestamp.is_none());
    for c in &mut rec.containers {
        let Some(old) = old_status(&pod, c.role, &c.spec().name) else {
            continue;
        };
        c.restart_count = old.restart_count;
        c.last_termination = old.last_state.terminated.as_deref().map(recorded);
        if old.state.running.is_some() {
            c.restart_count = old.restart_count.saturating_add(restarted);
            c.last_termination = Some(unknown(MESSAGE_LOST_WHILE_RUNNING));
        } else if let Some(term) = old.state.terminated.as_deref().map(recorded) {
            let done = c.role == Role::App
                && (policy == "Never" || (policy == "OnFailure" && term.exit_code == 0));
            if done {
                c.state = ContainerState::Exited {
                    term,
                    restart_at: None,
                };
            }
        }
    }
}

impl Kubelet {
    /// The machine loses power (the `powerOff` step): every container dies and the kubelet's
    /// memory is gone; the IPs and devices it handed out are free again. Nothing is written: the
    /// caller stops calling the kubelet until [`Kubelet::power_on`].
    pub fn power_off(&mut self) {
        for key in self.runtime.keys() {
            self.forget(&key);
        }
        self.runtime = crate::runtime::Runtime::default();
        self.backoff = Backoff::default();
        self.events = EventRecorder::new(node_status::kubelet_source(&self.name));
        self.last_unschedulable = None;
        self.rebooted = false;
    }

    /// The machine boots again (the `powerOn` step): the kubelet starts (`Starting`), records
    /// `Rebooted` with the new boot ID, the device plugins start again with every device Healthy
    /// (upstream's plugin marks a device Unhealthy only on an XID it sees while it runs), the
    /// kubelet renews its Lease and posts its status at the next tick,
    /// and its next sync admits the node's pods again with their containers lost (see the module
    /// documentation).
    pub fn power_on(&mut self, api: &mut dyn ApiClient) {
        self.boots += 1;
        self.rebooted = true;
        // The device plugins start again too: every device is listed Healthy until a new error.
        self.devices.restart_plugins();
        self.devices_changed = true;
        self.restart(api);
        let id = boot_id(&self.name, self.boots);
        let message = rebooted_message(&self.name, &id);
        self.events.record(
            api,
            &node_status::node_ref(&self.name),
            event_types::WARNING,
            EVENT_REBOOTED,
            message,
        );
    }

    /// A `restartPolicy: Never` pod that lost a running app container (see
    /// [`fails_after_reboot`]), or a pod deleted while the machine was off: its status is written
    /// Failed, with every container not
    /// terminated turned `ContainerStatusUnknown` (upstream `TerminatePod`); it holds nothing.
    pub(crate) fn fail_after_reboot(
        &mut self,
        api: &mut dyn ApiClient,
        key: &str,
        shared: &Shared<Pod>,
        now: Tick,
    ) {
        let uid = shared.metadata.uid.clone().unwrap_or_default();
        let mut rec = RuntimePod::new(
            uid.clone(),
            shared.clone(),
            PodPhase::Terminated,
            None,
            &self.config.behaviors,
        );
        carry_over(&mut rec);
        for c in &mut rec.containers {
            if !matches!(c.state, ContainerState::Exited { .. }) && c.role != Role::Init {
                c.state = ContainerState::Exited {
                    term: unknown(MESSAGE_LOST_AT_TERMINATION),
                    restart_at: None,
                };
            } else if c.role == Role::Init && c.state == ContainerState::Pending {
                // Initialized before the power loss: the init containers stay completed.
                if let Some(t) = old_status(shared, c.role, &c.spec().name)
                    .and_then(|s| s.state.terminated.as_deref())
                    .map(recorded)
                {
                    c.state = ContainerState::Exited {
                        term: t,
                        restart_at: None,
                    };
                }
            }
        }
        rec.completed = true;
        let host_ip = self.host_ip().map(str::to_string);
        let pod_ip = shared.status.pod_ip.clone();
        let status_of = |p: &Pod| {
            sync_pod::generate_status(p, &rec, true, host_ip.as_deref(), pod_ip.as_deref(), now)
        };
        let ns = shared.metadata.namespace().to_string();
        let name = shared.metadata.name.clone();
        let written = sync_pod::write_status(api, &ns, &name, &uid, &status_of);
        if let Some(p) = written {
            rec.pod = p;
        }
        self.runtime.insert(key.to_string(), rec);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boot_ids_are_uuid_shaped_and_change_with_each_boot() {
        let a = boot_id("node-a", 1);
        assert_eq!(a.len(), 36);
        assert_eq!(a.as_bytes()[14], b'4');
        assert_ne!(a, boot_id("node-a", 2));
        assert_ne!(a, boot_id("node-b", 1));
        assert_eq!(a, boot_id("node-a", 1));
    }

    #[test]
    fn rebooted_message_is_upstreams() {
        assert_eq!(
            rebooted_message("n1", "x"),
            "Node n1 has been rebooted, boot id: x"
        );
    }
}
