//! Detached mode: scheduling without an apiserver, for library users and benchmarks. The caller
//! feeds nodes, pods and PodGroups as an informer would ([`Scheduler::add_node`],
//! [`Scheduler::add_pod`], [`Scheduler::add_pod_group`], ...), and the objects plugins read from
//! the apiserver ([`Scheduler::add_object`]: e.g. the ReplicaSets and Services PodTopologySpread's
//! default constraints read), and schedules one pod at a time with
//! [`Scheduler::schedule_one`], which runs upstream's scheduling and binding cycle (`scheduleOne`)
//! with the same plugins, against the same incrementally updated cache and snapshot as
//! [`Scheduler::schedule`]. Writes plugins make (binding, preemption victims) go to an in-process
//! `DetachedClient` (`detached_client.rs`) and come back into the cache as change events. No events or pod status
//! conditions are written; the result carries what a `FailedScheduling` event would say.
//!
//! Do not mix modes on one scheduler: the first [`Scheduler::schedule`] relists from its
//! apiserver and replaces the cache.

use k8s_types::object::Shared;
use std::sync::Arc;

use k8s_sched_framework::Code;
use k8s_types::core::{Node, Pod};
use k8s_types::object::Object;
use k8s_types::scheduling::PodGroup;
use k8s_types::Tick;

use super::Scheduler;
use crate::detached_client::{Change, DetachedClient};
use crate::schedule_one::{process_waiting, schedule_one, AttemptLog, Ctx};

/// What happened to one pod in [`Scheduler::schedule_one`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Bound to `node` (it now counts on the node in the cache).
    Bound {
        /// The node.
        node: String,
    },
    /// Reserved on `node` and held at Permit (a gang member waiting for its siblings); it binds
    /// or is rejected in a later call.
    Waiting {
        /// The node.
        node: String,
    },
    /// No node fits (or a Reserve/Permit/Bind plugin rejected the pod): the message a
    /// `FailedScheduling` event would carry, e.g. `0/3 nodes are available: 3 Insufficient cpu.
    /// preemption: ...`.
    Unschedulable {
        /// The message.
        message: String,
    },
    /// An internal error (upstream `SchedulerError`), or the pod cannot be scheduled by this
    /// scheduler (no profile for its `schedulerName`, already bound, gated by PreEnqueue).
    Error {
        /// The message.
        message: String,
    },
}

impl Decision {
    /// The node of a bound pod.
    pub fn bound_node(&self) -> Option<&str> {
        match self {
            Decision::Bound { node } => Some(node),
            _ => None,
        }
    }
}

/// The result of [`Scheduler::schedule_one`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScheduleResult {
    /// The pod's `namespace/name`.
    pub pod: String,
    /// What happened to it.
    pub decision: Decision,
    /// Other pods decided during the call, in order: gang members held at Permit that were bound
    /// once this pod completed their group, or rejected (`namespace/name`, decision).
    pub others: Vec<(String, Decision)>,
}

fn decision_of(outcome: Result<String, (Code, String)>) -> Decision {
    match outcome {
        Ok(node) => Decision::Bound { node },
        Err((Code::Error, message)) => Decision::Error { message },
        Err((_, message)) => Decision::Unschedulable { message },
    }
}

impl Scheduler {
    /// Adds or replaces a node (detached mode; upstream `addNodeToCache` / `updateNodeInCache`).
    pub fn add_node(&mut self, node: Node) {
        self.cache.upsert_node(Arc::new(node));
    }

    /// Removes a node by name; its pods stay known and return with a node of the same name.
    /// False when the node is unknown.
    pub fn remove_node(&mut self, name: &str) -> bool {
        self.cache.remove_node(name).is_some()
    }

    /// Adds or replaces a pod (detached mode; upstream `addPod` / `updatePod`): a pod with
    /// `spec.nodeName` counts on that node; a pending pod is only known (gang members must be
    /// known for their group's quorum) until [`Scheduler::schedule_one`] schedules it.
    pub fn add_pod(&mut self, pod: impl Into<Shared<Pod>>) {
        self.detached.put_pod(pod.into());
    }

    /// Removes a pod by namespace and name (a bound pod frees its node). False when unknown.
    pub fn remove_pod(&mut self, namespace: &str, name: &str) -> bool {
        self.detached.remove_pod(&format!("{namespace}/{name}"))
    }

    /// Adds or replaces a PodGroup (detached mode).
    pub fn add_pod_group(&mut self, pg: PodGroup) {
        self.detached.put_pod_group(Arc::new(pg));
    }

    /// Adds or replaces an object plugins read through the apiserver (detached mode), e.g. the
    /// ReplicaSet that controls pods or a Service selecting them, from which PodTopologySpread
    /// deduces the selector of its default constraints (upstream `helper.DefaultSelector`).
    /// Pods, PodGroups and Nodes go where [`Scheduler::add_pod`], [`Scheduler::add_pod_group`]
    /// and [`Scheduler::add_node`] put them.
    pub fn add_object(&mut self, obj: Object) {
        match obj {
            Object::Pod(p) => self.add_pod(*p),
            Object::PodGroup(g) => self.add_pod_group(*g),
            Object::Node(n) => self.add_node(*n),
            other => self.detached.put_object(other),
        }
    }

    /// Sets the detached clock, in ticks (one tick = one second): Permit timeouts of waiting pods
    /// and pod start times count from it.
    pub fn set_now(&mut self, now: Tick) {
        self.detached.now = now;
    }

    /// Turns the fused node pass of every profile on or off (on by default; see
    /// [`Framework::set_fused_node_pass`](crate::runtime::Framework::set_fused_node_pass)).
    /// Results are the same either way; off, every plugin runs through the generic path.
    pub fn set_fused_node_pass(&mut self, on: bool) {
        for p in &mut self.profiles {
            p.set_fused_node_pass(on);
        }
    }

    /// The node `pod` is nominated to after a preemption (upstream `status.nominatedNodeName`,
    /// which detached mode does not write into the pod).
    pub fn nominated_node(&self, pod: &Pod) -> Option<&str> {
        self.nominator.nominated_node(pod)
    }

    /// True when `pod` is nominated to a node (see [`Scheduler::nominated_node`]).
    pub fn is_nominated(&self, pod: &Pod) -> bool {
        self.nominated_node(pod).is_some()
    }

    /// Applies the changes the detached client queued (the detached informer): the pods and
    /// PodGroups added or removed since the last call reach the cache now (and so
    /// [`Scheduler::cache`]). [`Scheduler::schedule_one`] does this first anyway; calling it
    /// after loading a cluster keeps that one-time work out of the first attempt (the
    /// benchmarks do, as upstream's scheduler_perf creates the initial pods before measuring).
    /// Detached mode has no queue waiting for cluster events, so the changes go straight to the
    /// cache, without the informer's `ChangeTracker` bookkeeping (which only records what
    /// changed).
    pub fn apply_detached_changes(&mut self) {
        if !self.detached.has_changes() {
            self.cache.finish_batch();
            return;
        }
        for c in self.detached.drain_changes() {
            match c {
                Change::Pod(p) => {
                    self.cache.upsert_pod(p);
                }
                Change::PodDeleted(k) => {
                    self.cache.remove_pod(&k);
                }
                Change::PodGroup(g) => {
                    self.cache.upsert_pod_group(g);
                }
                Change::PodGroupDeleted(k) => {
                    self.cache.remove_pod_group(&k);
                }
            }
        }
        self.cache.finish_batch();
    }

    /// Schedules one pod without an apiserver (detached mode): the pod becomes known if it was
    /// not, then one scheduling cycle runs (PreFilter, Filter over the nodes upstream's
    /// `percentageOfNodesToScore` asks for, from the rotating start index, PreScore, Score,
    /// Reserve, Permit) followed by the binding cycle. Waiting pods whose Permit timed out by
    /// [`Scheduler::set_now`] are rejected first.
    pub fn schedule_one(&mut self, pod: impl Into<Shared<Pod>>) -> ScheduleResult {
        let pod: Shared<Pod> = pod.into();
        let key = crate::cache::pod_key(&pod);
        if !self
            .detached
            .pod(&key)
            .is_some_and(|stored| Shared::ptr_eq(stored, &pod))
        {
            self.detached.put_pod(Shared::clone(&pod));
        }
        self.apply_detached_changes();
        let now = self.detached.now;
        self.waiting.expire(now);
        let mut log: AttemptLog = Vec::new();
        let early = if let Some(node) = pod.node_name() {
            Some(format!("pod is already assigned to node {node:?}"))
        } else if let Some(&pi) = self.by_name.get(pod.scheduler_name()) {
            let s = {
                let fwk = &self.profiles[pi];
                let handle = crate::runtime::handle::CycleHandle {
                    fwk,
                    api: &mut self.detached,
                    cache: &self.cache,
                    waiting: &mut self.waiting,
                    nominator: &self.nominator,
                    now,
                };
                fwk.run_pre_enqueue(&pod, &handle)
            };
            if s.is_success() {
                self.run_detached(pi, Shared::clone(&pod), &mut log);
                None
            } else {
                Some(s.message())
            }
        } else {
            Some(format!(
                "no profile for schedulerName {:?}",
                pod.scheduler_name()
            ))
        };
        self.apply_detached_changes();
        let mut decision = early.map(|message| Decision::Error { message });
        let mut others = Vec::new();
        for (p, outcome) in log {
            let d = decision_of(outcome);
            if decision.is_none() && Shared::ptr_eq(&p, &pod) {
                decision = Some(d);
            } else {
                others.push((p.key(), d));
            }
        }
        let decision =
            decision.unwrap_or_else(|| match self.waiting.get(&crate::waiting::pod_key(&pod)) {
                Some(w) => Decision::Waiting {
                    node: w.node.clone(),
                },
                None => Decision::Error {
                    message: "the attempt ended without a decision".to_string(),
                },
            });
        ScheduleResult {
            pod: key,
            decision,
            others,
        }
    }

    fn run_detached(&mut self, profile: usize, pod: Shared<Pod>, log: &mut AttemptLog) {
        let Scheduler {
            profiles,
            percentage_of_nodes_to_score,
            cache,
            queue,
            waiting,
            nominator,
            next_start_node_index,
            detached,
            explain,
            ..
        } = self;
        let now = detached.now;
        let api: &mut DetachedClient = detached;
        let mut ctx = Ctx {
            api,
            cache,
            queue,
            waiting,
            nominator,
            next_start_node_index,
            global_percentage: *percentage_of_nodes_to_score,
            now,
            explain: explain.as_mut(),
            detached: Some(log),
        };
        process_waiting(&mut ctx, profiles);
        schedule_one(&mut ctx, profiles, profile, pod);
    }
}
