//! Fast-forward over idle ticks: after a tick that wrote nothing, a driver (the scenario run) may
//! jump to the next tick at which something can happen, with the output of running every tick.
//!
//! Two kinds of future work:
//! - **wake-ups** ([`Cluster::next_wakeup`]): a controller's requeue or backoff (CronJob
//!   schedules, Job deadlines, TTL-after-finished, PodGC quarantine, PDB and taint-eviction
//!   timers), the scheduler's next possible attempt, a kubelet's next pod timer (probes, back-off,
//!   grace periods, run times) or pending registration. The run stops at each.
//! - **periodic work** that changes nothing but its own timestamps on an idle cluster: each running
//!   kubelet's node Lease renewal (every 10 s, `renewTime`) and node status report (every 300 s,
//!   the conditions' `lastHeartbeatTime`), the node lifecycle controller's monitor pass (every 5 s,
//!   reads only while every node is healthy, see
//!   [`k8s_controllers::node_lifecycle::monitor_pass_is_idle`]) and the informers' resyncs (12 h).
//!
//! [`Cluster::skip_idle`] batches the periodic work before the last report period
//! (300 ticks) ahead of the wake-up: each skipped write advances the store's revision by one, in
//! the order a tick would make them, so every later `resourceVersion` is the one of running every
//! tick; the last Lease renewal of each node before the batch end is written for real at its own
//! tick, so the node lifecycle controller's next pass sees a live Lease. The last report period
//! then runs every tick with periodic work in it (and skips only the ticks without), so at the
//! wake-up every Lease, Node and the monitor's probe timestamps are what running every tick gives.

use k8s_controllers::node_lifecycle::monitor_pass_is_idle;
use k8s_kubelet::node_lease::RENEW_INTERVAL_TICKS;
use k8s_kubelet::node_status::NODE_STATUS_REPORT_FREQUENCY_TICKS;
use k8s_kubelet::Kubelet;
use k8s_types::apiserver::ApiClient;
use k8s_types::core::Node;
use k8s_types::object::{Kind, Resource};
use k8s_types::Tick;

use super::Cluster;

impl Cluster {
    /// Kubelets that run (not stopped nor cut off), in node-name order.
    fn running_kubelets(&self) -> impl Iterator<Item = (&String, &Kubelet)> {
        self.kubelets
            .iter()
            .filter(|(name, _)| !self.stopped.contains(*name))
    }

    /// Whether the node lifecycle controller's monitor passes write nothing while nothing else
    /// changes: true when every Node passes [`monitor_pass_is_idle`], a Node counting as renewing
    /// when its kubelet runs.
    pub fn node_monitor_idle(&self) -> bool {
        self.api
            .list_shared(&Kind::Node, None, None)
            .iter()
            .filter_map(|o| Node::from_object_ref(o))
            .all(|n| {
                let name = &n.metadata.name;
                let renewing = self.kubelets.contains_key(name) && !self.stopped.contains(name);
                monitor_pass_is_idle(n, renewing)
            })
    }

    /// [`Cluster::node_monitor_idle`], answered from the last computation while no Node was
    /// written and no kubelet was added, stopped or started since (the Node writes are read from
    /// the watch the kubelet pass reads anyway): a driver asks it after every tick it runs.
    pub(crate) fn node_monitor_idle_cached(&mut self) -> bool {
        self.read_touched();
        if let Some(idle) = self.monitor_idle {
            return idle;
        }
        let idle = self.node_monitor_idle();
        self.monitor_idle = Some(idle);
        idle
    }

    /// The earliest tick, from now on, at which some component may act when nothing changes in
    /// between (ask after a tick that wrote nothing, so every component has seen every write): a
    /// controller's requeue or backoff ([`k8s_controllers::ControllerManager::next_due`], the
    /// node lifecycle monitor pass left out while [`Cluster::node_monitor_idle`]), the scheduler's
    /// next possible attempt ([`k8s_sched::Scheduler::next_wakeup`]: backoff, the 5-minute flush,
    /// Permit timeouts), a running kubelet's next pod wake-up or pending registration or device
    /// change. The periodic work (Lease renewals, node status reports, idle monitor passes,
    /// informer resyncs) is left out: see [`Cluster::skip_idle`]. `None`: nothing ever happens
    /// again unless a driver writes.
    pub fn next_wakeup(&self) -> Option<Tick> {
        let now = self.tick;
        let controllers = if self.node_monitor_idle() {
            self.controllers.next_due_besides_node_monitor()
        } else {
            self.controllers.next_due()
        };
        [
            controllers,
            self.scheduler.next_wakeup(now),
            self.next_lagged_delivery(),
        ]
        .into_iter()
        .chain(self.running_kubelets().map(|(_, k)| k.next_wakeup(now)))
        .flatten()
        .map(|t| t.max(now))
        .min()
    }

    /// The earliest tick, from now on, with periodic work: a running kubelet's Lease renewal or
    /// node status report, an informer resync, and the monitor pass when `monitor` (it is a
    /// wake-up otherwise).
    fn next_periodic(&self, monitor: bool) -> Option<Tick> {
        let now = self.tick;
        let kubelets = self.running_kubelets().flat_map(|(_, k)| {
            [k.next_lease_renewal(now), k.next_status_report()]
                .into_iter()
                .flatten()
        });
        let monitor = if monitor {
            self.controllers.next_node_monitor()
        } else {
            None
        };
        kubelets
            .chain(monitor)
            .chain(self.controllers.next_resync())
            .min()
    }

    /// Jumps toward `to` over ticks in which nothing but periodic work can happen
    /// ([`Cluster::next_wakeup`] must be `to` or later), with the same result as running them.
    /// Up to one report period before `to` the periodic work is batched ([`Cluster::batch`]);
    /// from there the clock stops at each tick with periodic work, which the driver runs as an
    /// ordinary tick. Returns the tick reached (the current one when periodic work is due now).
    pub fn skip_idle(&mut self, to: Tick) -> Tick {
        let now = self.tick;
        if to <= now {
            return now;
        }
        let monitor = self.node_monitor_idle();
        let batch_end = to
            .saturating_sub(NODE_STATUS_REPORT_FREQUENCY_TICKS)
            .max(now);
        if batch_end > now && self.next_periodic(monitor).is_some_and(|t| t > now) {
            self.batch(batch_end, monitor);
            // Informer resyncs likewise: within one resync period before `to` each controller has
            // at most one, which runs; the earlier ones are skipped.
            self.controllers.fast_forward_resyncs(to);
        }
        let target = self.next_periodic(monitor).map_or(to, |t| t.min(to));
        if target > self.tick {
            self.tick = target;
            // The apiserver's clock shows the last tick run, as after an ordinary tick.
            self.api.set_tick(target - 1);
        }
        self.tick
    }

    /// Accounts for the periodic work in `[now, end)` without running those ticks, leaving the
    /// store and every component as running them would, but for the Nodes' status heartbeats
    /// (rewritten by the next report, which falls before the driver's wake-up) and the monitor's
    /// probe timestamps (moved by the next Lease renewals it sees). Lease renewals and node status
    /// reports each advance the store's revision by one, in tick order (in a tick the Lease
    /// renewals come first, then the status reports, each in node-name order); the last renewal
    /// of each node, in the last renewal period before `end`, is written for real at its tick.
    /// The monitor's next pass moves to its first one at `end` or later when `monitor`. Nothing
    /// happens when the store cannot skip revisions.
    fn batch(&mut self, end: Tick, monitor: bool) {
        let now = self.tick;
        if !self.api.store_mut().skip_revisions(0) {
            return;
        }
        let renew_from = end.saturating_sub(RENEW_INTERVAL_TICKS).max(now);
        let counted: u64 = self
            .running_kubelets()
            .map(|(_, k)| {
                k.renewals_before(renew_from)
                    .saturating_add(k.reports_before(renew_from))
            })
            .sum();
        self.api
            .store_mut()
            .skip_revisions(i64::try_from(counted).unwrap_or(i64::MAX));
        for (name, kubelet) in &mut self.kubelets {
            if !self.stopped.contains(name) {
                kubelet.fast_forward_lease(renew_from);
                kubelet.fast_forward(renew_from);
            }
        }
        for t in renew_from..end {
            self.api.set_tick(t);
            let mut reports = 0i64;
            for (name, kubelet) in &mut self.kubelets {
                if self.stopped.contains(name) {
                    continue;
                }
                if kubelet.next_lease_renewal(t) == Some(t) {
                    kubelet.heartbeat(&mut self.api);
                }
                if kubelet.next_status_report() == Some(t) {
                    reports += 1;
                    kubelet.fast_forward(t + 1);
                }
            }
            self.api.store_mut().skip_revisions(reports);
            // What a lagging informer may see of this tick, as if it had run.
            self.record_tick_end(t);
        }
        if monitor {
            self.controllers.fast_forward_node_monitor(end);
        }
        self.kubelets_changed();
        self.tick = end;
    }
}
