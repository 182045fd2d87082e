//! The passes of a tick over every kubelet (upstream: each node's kubelet runs its own loops; here
//! the cluster turns them in node-name order): the node Lease heartbeat before the controllers,
//! the pod sync after the scheduler, and the accounting of Lease renewals and periodic status
//! reports a driver does not write ([`Cluster::account_lease_renewals`],
//! [`Cluster::account_status_reports`], [`Cluster::skip_to`]).
//!
//! On 1,213 nodes most kubelets have nothing to do in most ticks, and each pass still visited
//! every one of them. [`KubeletDue`] keeps lower bounds of the tick at which some kubelet next has
//! work of each kind, so a pass that would find none skips the visits (and the sync pass visits
//! only the kubelets a write concerns). Each bound is recomputed by a pass that visits every
//! kubelet, lowered by each kubelet sync, and reset to "unknown" (0) by anything else that changes
//! a kubelet (a node added, a kubelet stopped, started, powered off or on, a device's health, a
//! fast-forward); the clocks only move forward otherwise, which keeps a lower bound valid.

use std::collections::BTreeSet;

use k8s_kubelet::Kubelet;
use k8s_types::conflict::CountingClient;
use k8s_types::Tick;

use super::{Cluster, KUBELET_COMPONENT};

/// Lower bounds of the next tick at which some kubelet has work; 0 means unknown (the next pass
/// visits every kubelet and recomputes it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct KubeletDue {
    /// No running kubelet's Lease renewal is due before this tick
    /// ([`Kubelet::next_lease_renewal`]; a kubelet not registered yet has none).
    lease: Tick,
    /// No kubelet's periodic node status report is due before this tick
    /// ([`Kubelet::next_status_report`]; a kubelet without one counts as due at 0).
    status: Tick,
    /// No running kubelet has a pod timer, a pending registration or a device change before this
    /// tick ([`Kubelet::next_wakeup`]).
    pods: Tick,
}

impl KubeletDue {
    /// Whether a kubelet that no write touched may have to sync at `now`
    /// ([`Kubelet::sync_if_needed`]: a pod timer, registration, a device change or a status report).
    fn sync_due(&self, now: Tick) -> bool {
        now >= self.pods.min(self.status)
    }

    /// Lowers the bounds to what a kubelet that just synced at `now` needs.
    fn note_sync(&mut self, kubelet: &Kubelet, now: Tick) {
        self.pods = self.pods.min(pods_due(kubelet));
        self.status = self.status.min(status_due(kubelet));
        if let Some(t) = kubelet.next_lease_renewal(now) {
            self.lease = self.lease.min(t);
        }
    }
}

fn pods_due(kubelet: &Kubelet) -> Tick {
    kubelet.next_wakeup(0).unwrap_or(Tick::MAX)
}

fn status_due(kubelet: &Kubelet) -> Tick {
    kubelet.next_status_report().unwrap_or(0)
}

impl Cluster {
    /// Forgets the bounds: something changed a kubelet outside the passes.
    pub(super) fn kubelets_changed(&mut self) {
        self.kubelet_due = KubeletDue::default();
    }

    /// Node Lease heartbeats of the running kubelets, in node-name order; counts the renewals
    /// written in [`Cluster::heartbeats`]. Skipped when no renewal is due.
    pub(super) fn heartbeat_pass(&mut self) {
        self.heartbeats = 0;
        let now = self.tick;
        if now < self.kubelet_due.lease {
            return;
        }
        let mut next = Tick::MAX;
        for (name, kubelet) in &mut self.kubelets {
            if self.stopped.contains(name) {
                continue;
            }
            let mut api =
                CountingClient::new(&mut self.api, KUBELET_COMPONENT, &mut self.conflicts);
            if kubelet.heartbeat(&mut api) {
                self.heartbeats += 1;
            }
            if let Some(t) = kubelet.next_lease_renewal(now) {
                next = next.min(t);
            }
        }
        self.kubelet_due.lease = next;
    }

    /// The pod sync of the running kubelets, in node-name order ([`Kubelet::sync_if_needed`]):
    /// `touched` names the nodes a write since the previous pass concerns (`None`: every node).
    /// When no kubelet has work of its own before the next tick, only the touched ones are
    /// visited: the others would find nothing to do.
    pub(super) fn sync_pass(&mut self, touched: Option<BTreeSet<String>>) {
        let now = self.tick;
        if let Some(names) = touched
            .as_ref()
            .filter(|_| self.restarted.is_empty() && !self.kubelet_due.sync_due(now))
        {
            for name in names {
                if self.stopped.contains(name) {
                    continue;
                }
                let Some(kubelet) = self.kubelets.get_mut(name) else {
                    continue;
                };
                let mut api =
                    CountingClient::new(&mut self.api, KUBELET_COMPONENT, &mut self.conflicts);
                if kubelet.sync_if_needed(&mut api, true) {
                    self.kubelet_due.note_sync(kubelet, now);
                }
            }
            return;
        }
        let mut due = self.kubelet_due;
        due.pods = Tick::MAX;
        due.status = Tick::MAX;
        for (name, kubelet) in &mut self.kubelets {
            if !self.stopped.contains(name) {
                let hit = self.restarted.remove(name)
                    || touched.as_ref().is_none_or(|t| t.contains(name.as_str()));
                let mut api =
                    CountingClient::new(&mut self.api, KUBELET_COMPONENT, &mut self.conflicts);
                if kubelet.sync_if_needed(&mut api, hit) {
                    due.note_sync(kubelet, now);
                }
                due.pods = due.pods.min(pods_due(kubelet));
            }
            due.status = due.status.min(status_due(kubelet));
        }
        self.kubelet_due = due;
    }

    /// Advances the clock to `tick` without running any component in the ticks in between (a
    /// driver that knows nothing would happen in them, see `trace::timeline`). Each kubelet's
    /// periodic node status report clock moves as if the reports due in between had been written on
    /// time ([`Kubelet::fast_forward`]); while the node lifecycle controller's passes write nothing
    /// ([`Cluster::node_monitor_idle`]) the Lease renewals due in between are accounted for
    /// ([`Cluster::account_lease_renewals`]) and the controller's next pass is the first one at
    /// `tick` or later on its period. Does nothing when `tick` is not ahead of [`Cluster::now`].
    pub fn skip_to(&mut self, tick: Tick) {
        if tick <= self.tick {
            return;
        }
        if self.account_lease_renewals(tick) {
            self.controllers.fast_forward_node_monitor(tick);
        }
        self.move_status_clocks(tick, true);
        self.tick = tick;
    }

    /// Accounts for the node Lease renewals due before `to` without writing them, while the node
    /// lifecycle controller's passes write nothing ([`Cluster::node_monitor_idle`]; returns
    /// whether it did): each running kubelet's renewal clock moves as if they had been written
    /// ([`Kubelet::fast_forward_lease`]; the stored Lease keeps the `renewTime` of its last written
    /// renewal), and the controller counts them as seen by the passes that would have observed
    /// them ([`k8s_controllers::ControllerManager::observe_node_heartbeats`]), so no live node goes
    /// Unknown. For a driver to whom the renewals are periodic noise (the timeline replay calls
    /// it before each tick it runs, with `to` one past it).
    pub fn account_lease_renewals(&mut self, to: Tick) -> bool {
        if !self.node_monitor_idle_cached() {
            return false;
        }
        if to <= self.kubelet_due.lease {
            // No renewal is due before `to`: every clock stays, nothing is heard.
            return true;
        }
        let now = self.tick;
        let mut heard = Vec::new();
        let mut next = Tick::MAX;
        for (name, kubelet) in &mut self.kubelets {
            if self.stopped.contains(name) {
                continue;
            }
            if let Some(last) = kubelet.fast_forward_lease(to) {
                heard.push((name.as_str(), last));
            }
            if let Some(t) = kubelet.next_lease_renewal(now) {
                next = next.min(t);
            }
        }
        self.controllers.observe_node_heartbeats(&heard);
        self.kubelet_due.lease = next;
        true
    }

    /// Accounts for the kubelets' periodic node status reports due before `to` without writing
    /// them ([`Kubelet::fast_forward`]: a report that would only move heartbeat times; a status
    /// that changed is still written at the kubelet's next sync), while the node lifecycle
    /// controller's passes write nothing ([`Cluster::node_monitor_idle`]; returns whether it did).
    /// The Nodes' `lastHeartbeatTime`s lag; the node's health rests on its Lease renewals
    /// ([`Cluster::account_lease_renewals`]). For the same driver, before each tick it runs.
    pub fn account_status_reports(&mut self, to: Tick) -> bool {
        if !self.node_monitor_idle_cached() {
            return false;
        }
        self.move_status_clocks(to, false);
        true
    }

    /// [`Kubelet::fast_forward`] to `to` for every kubelet (`stopped_too`) or every running one,
    /// unless no report is due before `to` (then it would change nothing).
    fn move_status_clocks(&mut self, to: Tick, stopped_too: bool) {
        if to <= self.kubelet_due.status {
            return;
        }
        let mut next = Tick::MAX;
        for (name, kubelet) in &mut self.kubelets {
            if stopped_too || !self.stopped.contains(name) {
                kubelet.fast_forward(to);
            }
            next = next.min(status_due(kubelet));
        }
        self.kubelet_due.status = next;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::ClusterConfig;
    use crate::manifest::{parse_stream, Document};
    use k8s_types::apiserver::ApiExt;

    fn two_nodes() -> Cluster {
        let mut c = Cluster::new(ClusterConfig::default()).expect("cluster");
        c.begin_tick();
        for name in ["node-a", "node-b"] {
            let text = format!(
                "apiVersion: v1\nkind: Node\nmetadata: {{name: {name}}}\nstatus:\n  capacity: \
                 {{cpu: \"4\", memory: 32Gi, pods: \"110\", nvidia.com/gpu: \"2\"}}\n"
            );
            for d in parse_stream("test", &text).expect("parse").docs {
                if let Document::Object(o) = d.doc {
                    c.apply(*o).expect("apply");
                }
            }
        }
        c
    }

    fn due(lease: Tick, status: Tick, pods: Tick) -> KubeletDue {
        KubeletDue {
            lease,
            status,
            pods,
        }
    }

    #[test]
    fn passes_keep_when_the_next_kubelet_work_is_due() {
        let mut c = two_nodes();
        // Registered at tick 0: nothing known yet.
        assert_eq!(c.kubelet_due, KubeletDue::default());
        c.tick();
        // Tick 0 renewed both Leases (next at 10) and posted both statuses (next report at 300);
        // no pod has a timer.
        assert_eq!(c.heartbeats(), 2);
        assert_eq!(c.kubelet_due, due(10, 300, Tick::MAX));
        for _ in 1..10 {
            c.tick();
            assert_eq!(c.heartbeats(), 0);
        }
        c.tick();
        assert_eq!(c.heartbeats(), 2, "tick 10 renews both Leases");
        assert_eq!(c.kubelet_due, due(20, 300, Tick::MAX));
        // A device health change is a kubelet change: everything is visited again.
        c.set_device_health("node-b", "1", false).expect("device");
        assert_eq!(c.kubelet_due, KubeletDue::default());
        c.tick();
        assert_eq!(c.kubelet_due.pods, Tick::MAX, "node-b synced its devices");
        // Skipping to 1,000 accounts for the renewals at 20..990 and the reports at 300..900.
        c.skip_to(1000);
        assert_eq!(c.kubelet_due, due(1000, 1200, Tick::MAX));
        c.tick();
        assert_eq!(c.heartbeats(), 2, "tick 1,000 renews both Leases");
        assert_eq!(c.kubelet_due.lease, 1010);
    }

    #[test]
    fn the_sync_pass_visits_only_touched_kubelets_while_none_is_due() {
        let mut c = two_nodes();
        c.tick();
        // A pod bound to node-b: only node-b's kubelet is visited, and it starts the pod.
        let pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default}\nspec:\n  \
                   nodeName: node-b\n  containers:\n  - {name: c, image: a}\n";
        c.begin_tick();
        for d in parse_stream("test", pod).expect("parse").docs {
            if let Document::Object(o) = d.doc {
                c.apply(*o).expect("apply");
            }
        }
        assert!(!c.kubelet_due.sync_due(1));
        c.tick();
        let stored: k8s_types::core::Pod = c.api_ref().get_typed("default", "p").expect("pod");
        assert_eq!(stored.status.phase.as_deref(), Some("Pending"));
        // The container starts a tick later (node-b's pod timer is due then).
        assert_eq!(c.kubelet_due.pods, 2);
        c.tick();
        let stored: k8s_types::core::Pod = c.api_ref().get_typed("default", "p").expect("pod");
        assert_eq!(stored.status.phase.as_deref(), Some("Running"));
    }
}
