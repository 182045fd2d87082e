//! The timeline replay (`cargo xtask replay --mode timeline`): the pods of an openb trace (Weng et
//! al., "Beware of Fragmentation: Scheduling GPU-Sharing Workloads with Fragmentation Gradient
//! Descent", USENIX ATC '23; Alibaba `cluster-trace-gpu-v2023`) arrive at their `creation_time` and
//! leave at their `deletion_time` through the whole control plane ([`Cluster`]: apiserver,
//! controllers, the scheduler's queue, kubelets with the NVIDIA and GPU-share device plugins), for
//! capacity planning. There is no upstream counterpart; the per-tick metrics follow the paper's
//! allocation measure (allocated milli-GPU of bound pods over the GPU capacity).
//!
//! - Time: tick `1 + (t - t0) / time_scale` for a trace time `t` in seconds, `t0` the earliest
//!   creation time (tick 0 registers the nodes). `time_scale` 1 keeps one tick = one second.
//! - At a tick, the driver first creates the pods arriving then (bare pods as [`TracePod::to_pod`],
//!   in trace file order), then deletes the pods leaving then (graceful delete through the
//!   apiserver, in file order; their containers exit on SIGTERM at once, so the kubelet removes
//!   them in the same tick), then runs [`Cluster::tick`].
//! - Idle time is skipped (`next_tick`): after a tick the driver runs the next tick only while
//!   something is in flight, else it jumps to the next tick at which anything could happen. Every
//!   skipped tick is one in which no component would have acted had it run, so per-pod outcomes
//!   equal those of running every tick (`tests/timeline.rs` checks this). While skipping, the
//!   kubelets' node Lease renewals (1,213 writes every 10 s) and periodic node status reports are
//!   accounted for, not written, in the ticks that run too, as long as every node is healthy
//!   ([`Cluster::account_lease_renewals`], [`Cluster::account_status_reports`]): the node
//!   lifecycle controller counts the renewals as seen, and no pod outcome depends on them.
//! - Input checks before the run: pod names are unique, every pod has both times and
//!   `deletion_time >= creation_time` (errors name the pod file and line); running every tick is
//!   refused beyond [`MAX_EVERY_TICK`] ticks. A create the apiserver rejects ends the replay with
//!   the apiserver's message.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use k8s_types::apiserver::DeleteOptions;
use k8s_types::core::Pod;
use k8s_types::gpushare::GPU_INDEX_ANNOTATION;
use k8s_types::object::{Kind, Object};
use k8s_types::store::WatchEventType;
use k8s_types::Tick;

use super::openb::{Trace, TracePod, NAMESPACE};
use super::policy::Policy;
use super::replay::Prepared;
use super::TraceError;
use crate::cluster::{Cluster, ClusterConfig};

/// The most ticks a replay that runs every tick (`skip_idle: false`) may span (10 million: about
/// 116 days at one tick per second); beyond it [`replay_timeline`] refuses with
/// [`TimelineError::TooManyTicks`].
pub const MAX_EVERY_TICK: u64 = 10_000_000;

/// Options of a timeline replay.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TimelineOptions {
    /// The placement policy (its `KubeSchedulerConfiguration`, as in paper mode).
    pub policy: Policy,
    /// Seed of the policy's random draws (`random`, GpuShare's `random` GPU selection).
    pub seed: u64,
    /// Trace seconds per tick (1: one tick = one second; larger values compress time).
    pub time_scale: u64,
    /// Use only the first this many GPU nodes of the node file.
    pub node_limit: Option<usize>,
    /// Use only the first this many pods of the pod file.
    pub pod_limit: Option<usize>,
    /// Skip idle ticks (false runs every tick: same per-pod outcomes, much slower).
    pub skip_idle: bool,
    /// Typical pods (FGD's target workload) cover this percentage of the pods (the paper: 95).
    pub popularity_threshold: u32,
    /// The pod file as shown in error messages (`<pod_file>:<line>: ...`); None: lines only.
    pub pod_file: Option<String>,
}

impl Default for TimelineOptions {
    fn default() -> TimelineOptions {
        TimelineOptions {
            policy: Policy::Fgd,
            seed: 42,
            time_scale: 1,
            node_limit: None,
            pod_limit: None,
            skip_idle: true,
            popularity_threshold: 95,
            pod_file: None,
        }
    }
}

/// The cluster's state after one processed tick.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TickSample {
    /// The tick.
    pub tick: Tick,
    /// Milli-GPU requested by the pods bound to a node (whole GPUs count 1000 each).
    pub gpu_milli_allocated: i64,
    /// Pods in phase Running.
    pub pods_running: usize,
    /// Pods not bound to a node yet.
    pub pods_pending: usize,
}

/// What happened to one trace pod.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PodOutcome {
    /// Pod name.
    pub name: String,
    /// Arrival tick.
    pub created: Tick,
    /// Departure tick (the driver deletes the pod then).
    pub deleted: Tick,
    /// Tick at which `spec.nodeName` was first seen set (the tick of the Binding).
    pub bound: Option<Tick>,
    /// The node.
    pub node: Option<String>,
    /// GPU indices (`alibabacloud.com/gpu-index`), empty without GPUs.
    pub gpus: String,
    /// Tick at which the pod was first seen Running.
    pub running: Option<Tick>,
    /// The trace's own pending time, `scheduled_time - creation_time` in seconds (None when the
    /// trace never scheduled the pod).
    pub trace_pending_seconds: Option<i64>,
    /// Milli-GPU requested.
    pub gpu_milli: i64,
}

impl PodOutcome {
    /// Pending time in ticks: bind tick minus arrival tick.
    pub fn pending_ticks(&self) -> Option<Tick> {
        self.bound.map(|b| b.saturating_sub(self.created))
    }

    /// Created and deleted in the same tick and never bound: the driver deleted the pod before
    /// the scheduler's first pass could see it (not a scheduling failure).
    pub fn gone_before_scheduling(&self) -> bool {
        self.bound.is_none() && self.deleted == self.created
    }
}

/// The result of a timeline replay.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TimelineRun {
    /// Policy.
    pub policy: Policy,
    /// Trace seconds per tick (the run's [`TimelineOptions::time_scale`]).
    pub time_scale: u64,
    /// GPU capacity of the cluster, milli-GPU.
    pub capacity_milli: i64,
    /// One sample per processed tick, in tick order (the state holds until the next sample).
    pub samples: Vec<TickSample>,
    /// Every trace pod, in trace file order.
    pub pods: Vec<PodOutcome>,
    /// Ticks actually run.
    pub ticks_processed: u64,
    /// The last tick run.
    pub last_tick: Tick,
}

/// Why a timeline replay cannot run.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TimelineError {
    /// The trace or policy was rejected.
    #[error(transparent)]
    Trace(#[from] TraceError),
    /// A pod row lacks the times the timeline needs.
    #[error("{at}pod {pod:?}: {problem}")]
    MissingTimes {
        /// `file:line: ` of the row (empty when unknown).
        at: String,
        /// The pod.
        pod: String,
        /// Which time is missing and why.
        problem: String,
    },
    /// `deletion_time` before `creation_time`.
    #[error("{at}pod {pod:?}: deletion_time {deletion} is before creation_time {creation}")]
    DeletedBeforeCreated {
        /// `file:line: ` of the row (empty when unknown).
        at: String,
        /// The pod.
        pod: String,
        /// Seconds.
        creation: i64,
        /// Seconds.
        deletion: i64,
    },
    /// Two pods with one name (the apiserver would refuse the second create with AlreadyExists).
    #[error("{at}pod {pod:?}: duplicate name ({first})")]
    DuplicateName {
        /// `file:line: ` of the second row (empty when unknown).
        at: String,
        /// The pod.
        pod: String,
        /// Where the first one is (`first on line N`).
        first: String,
    },
    /// The apiserver refused to create a trace pod (e.g. an invalid name).
    #[error("{at}pod {pod:?}: create failed: {message}")]
    CreateFailed {
        /// `file:line: ` of the row (empty when unknown).
        at: String,
        /// The pod.
        pod: String,
        /// The apiserver's message.
        message: String,
    },
    /// `time_scale` 0.
    #[error("time scale must be at least 1 second per tick")]
    ZeroTimeScale,
    /// A node limit of 0 left no node.
    #[error("node limit 0 removes every node (the trace has {available} GPU nodes)")]
    NoNodeLeft {
        /// GPU nodes in the trace.
        available: usize,
    },
    /// Running every tick would take too long.
    #[error("running every tick would take {ticks} ticks, more than {limit}: compress time (a larger time scale) or skip idle time")]
    TooManyTicks {
        /// Ticks the run would span.
        ticks: u64,
        /// [`MAX_EVERY_TICK`].
        limit: u64,
    },
    /// The cluster could not be built.
    #[error("cluster: {0}")]
    Cluster(String),
}

/// One trace pod on the timeline.
struct Arrival {
    trace: TracePod,
    created: Tick,
    deleted: Tick,
}

/// What the driver knows about a live pod (from the apiserver's watch).
#[derive(Clone, Copy, Debug, Default)]
struct Live {
    bound: bool,
    running: bool,
    terminating: bool,
    /// Failed or Succeeded (e.g. rejected by the kubelet): nothing more happens until deletion.
    terminal: bool,
}

/// Runs the timeline replay of `trace` (GPU nodes only, as in paper mode).
///
/// # Errors
/// [`TimelineError`]: no GPU node (or a node limit of 0), a duplicate pod name, a pod without
/// times or deleted before it is created, a zero time scale, more than [`MAX_EVERY_TICK`] ticks
/// without idle-time skipping, a scheduler configuration the scheduler rejects, a pod the
/// apiserver refuses to create.
pub fn replay_timeline(
    trace: &Trace,
    opts: &TimelineOptions,
) -> Result<TimelineRun, TimelineError> {
    if opts.time_scale == 0 {
        return Err(TimelineError::ZeroTimeScale);
    }
    let available = trace.gpu_nodes().len();
    if opts.node_limit == Some(0) && available > 0 {
        return Err(TimelineError::NoNodeLeft { available });
    }
    let nodes: Vec<_> = trace
        .gpu_nodes()
        .into_iter()
        .take(opts.node_limit.unwrap_or(usize::MAX))
        .cloned()
        .collect();
    if nodes.is_empty() {
        return Err(TraceError::NoGpuNodes.into());
    }
    let pods: Vec<&TracePod> = trace
        .pods
        .iter()
        .take(opts.pod_limit.unwrap_or(usize::MAX))
        .collect();
    let file = opts.pod_file.as_deref();
    let arrivals = timeline(&pods, opts.time_scale, file)?;
    let span = arrivals.iter().map(|a| a.deleted).max().unwrap_or(0) + 1;
    if !opts.skip_idle && span > MAX_EVERY_TICK {
        return Err(TimelineError::TooManyTicks {
            ticks: span,
            limit: MAX_EVERY_TICK,
        });
    }
    // FGD's target workload: the typical pods of the (whole) workload, as paper mode computes it.
    let typical = Prepared::typical_of(pods.iter().copied(), opts.popularity_threshold);
    let scheduler = opts.policy.scheduler_config(opts.seed, &typical)?;
    let scheduler_name = scheduler
        .profiles
        .first()
        .and_then(|p| p.scheduler_name.clone())
        .unwrap_or_default();
    let mut cluster = Cluster::new(ClusterConfig {
        scheduler,
        kubelet: k8s_kubelet::KubeletConfig {
            // A trace pod is gone at its deletion time: its containers exit on SIGTERM at once,
            // so the kubelet finishes the deletion in the tick it is asked for.
            behaviors: vec![k8s_kubelet::behavior::BehaviorRule {
                behavior: k8s_kubelet::behavior::ContainerBehavior {
                    stop: Some(k8s_kubelet::behavior::Stop::default()),
                    ..Default::default()
                },
                ..Default::default()
            }],
            ..Default::default()
        },
        feature_gates: Default::default(),
        informer_lag: Default::default(),
    })
    .map_err(|e| TimelineError::Cluster(e.to_string()))?;
    for n in &nodes {
        cluster
            .add_node(n.to_node())
            .map_err(|e| TimelineError::Cluster(e.to_string()))?;
    }
    let capacity_milli: i64 = nodes.iter().map(|n| n.gpus * 1000).sum();

    // Events by tick: (creations, deletions) as indices into `arrivals`.
    let mut events: BTreeMap<Tick, (Vec<usize>, Vec<usize>)> = BTreeMap::new();
    for (i, a) in arrivals.iter().enumerate() {
        events.entry(a.created).or_default().0.push(i);
        events.entry(a.deleted).or_default().1.push(i);
    }
    let index: BTreeMap<String, usize> = arrivals
        .iter()
        .enumerate()
        .map(|(i, a)| (a.trace.name.clone(), i))
        .collect();
    let mut outcomes: Vec<PodOutcome> = arrivals
        .iter()
        .map(|a| PodOutcome {
            name: a.trace.name.clone(),
            created: a.created,
            deleted: a.deleted,
            bound: None,
            node: None,
            gpus: String::new(),
            running: None,
            trace_pending_seconds: match (a.trace.scheduled_time, a.trace.creation_time) {
                (Some(s), Some(c)) => Some(s - c),
                _ => None,
            },
            gpu_milli: a.trace.gpu.total_milli(),
        })
        .collect();
    let mut live: BTreeMap<usize, Live> = BTreeMap::new();
    let mut samples = Vec::new();
    let mut processed = 0u64;
    let mut seen_revision = cluster.api_ref().revision();

    // Tick 0: the kubelets registered their nodes; let every component see them.
    cluster.tick();
    processed += 1;
    let mut last_tick: Tick;
    loop {
        let t = cluster.now();
        cluster.begin_tick();
        if let Some((create, delete)) = events.remove(&t) {
            for i in create {
                let mut pod = arrivals[i].trace.to_pod();
                pod.spec.scheduler_name = Some(scheduler_name.clone());
                // A pod the apiserver rejects (e.g. an invalid name) ends the replay.
                if let Err(e) = cluster.api().create(Object::Pod(Box::new(pod))) {
                    return Err(TimelineError::CreateFailed {
                        at: at(file, arrivals[i].trace.line),
                        pod: arrivals[i].trace.name.clone(),
                        message: e.message,
                    });
                }
            }
            for i in delete {
                let _ = cluster.api().delete(
                    &Kind::Pod,
                    NAMESPACE,
                    &arrivals[i].trace.name,
                    DeleteOptions::default(),
                );
            }
        }
        if opts.skip_idle {
            // The 1,213 kubelets' renewals and periodic status reports are noise to the replay:
            // accounted for, not written, while every node is healthy (see
            // `Cluster::account_lease_renewals`, `Cluster::account_status_reports`).
            cluster.account_lease_renewals(t + 1);
            cluster.account_status_reports(t + 1);
        }
        let before_tick = cluster.api_ref().revision();
        cluster.tick();
        processed += 1;
        last_tick = t;
        // Lease renewals alone change nothing the scheduler's queue reacts to.
        let changed_in_tick = cluster.api_ref().revision() - cluster.heartbeats() != before_tick;
        // Observe what the tick (and the driver's writes) did to the trace pods.
        if let Ok(evs) = cluster.api_ref().watch(&Kind::Pod, seen_revision) {
            for ev in evs {
                let Object::Pod(p) = &*ev.object else {
                    continue;
                };
                let Some(&i) = index.get(&p.metadata.name) else {
                    continue;
                };
                if ev.type_ == WatchEventType::Deleted {
                    live.remove(&i);
                    continue;
                }
                observe(&mut outcomes[i], live.entry(i).or_default(), p, t);
            }
        }
        seen_revision = cluster.api_ref().revision();
        let mut sample = TickSample {
            tick: t,
            gpu_milli_allocated: 0,
            pods_running: 0,
            pods_pending: 0,
        };
        for (i, l) in &live {
            if l.bound {
                sample.gpu_milli_allocated += outcomes[*i].gpu_milli;
            } else {
                sample.pods_pending += 1;
            }
            if l.running {
                sample.pods_running += 1;
            }
        }
        samples.push(sample);
        let next_event = events.keys().next().copied();
        if next_event.is_none() && live.is_empty() {
            break;
        }
        let next = if opts.skip_idle {
            next_tick(&cluster, t, &live, &arrivals, changed_in_tick, next_event)
        } else {
            t + 1
        };
        cluster.skip_to(next);
    }
    Ok(TimelineRun {
        policy: opts.policy,
        time_scale: opts.time_scale,
        capacity_milli,
        samples,
        pods: outcomes,
        ticks_processed: processed,
        last_tick,
    })
}

/// Records a pod's binding and start.
fn observe(out: &mut PodOutcome, live: &mut Live, pod: &Pod, t: Tick) {
    if let Some(node) = pod.node_name() {
        live.bound = true;
        if out.bound.is_none() {
            out.bound = Some(t);
            out.node = Some(node.to_string());
            out.gpus = pod
                .metadata
                .annotations
                .get(GPU_INDEX_ANNOTATION)
                .cloned()
                .unwrap_or_default();
        }
    }
    live.running = pod.status.phase.as_deref() == Some("Running");
    if live.running && out.running.is_none() {
        out.running = Some(t);
    }
    live.terminating = pod.is_terminating();
    live.terminal = pod.is_terminal();
}

/// The next tick at which any component could act, after tick `t` ran:
/// - `t + 1` while a pod is in flight: bound but not Running yet (the kubelet starts it),
///   terminating, or unbound without a failed attempt the scheduler's queue remembers;
/// - with unbound pods waiting after a failed attempt: `t + 1` when the tick wrote anything (the
///   scheduler sees a change at its next pass and may retry), each pod's end of backoff and its
///   5-minute flush (`podMaxInUnschedulablePodsDuration`);
/// - the next trace event.
///
/// Nothing else in the control plane acts on time alone here: controllers react to objects (no
/// taints, Deployments or finished pods in a trace replay), the kubelets' periodic node status
/// reports and node Lease renewals in skipped ticks are moved as if written, and the node lifecycle
/// controller counts the renewals as seen ([`Cluster::skip_to`]; so no live node goes Unknown). A
/// report only renews
/// heartbeat times, which the scheduler's queue does not count as a change (its informer compares
/// a Node's labels, taints, `unschedulable` and allocatable), so no component acts on it.
fn next_tick(
    cluster: &Cluster,
    t: Tick,
    live: &BTreeMap<usize, Live>,
    arrivals: &[Arrival],
    changed_in_tick: bool,
    next_event: Option<Tick>,
) -> Tick {
    let mut next = next_event.unwrap_or(Tick::MAX);
    let scheduler = cluster.scheduler();
    let mut waiting = false;
    for (i, l) in live {
        if l.terminating || (l.bound && !l.running && !l.terminal) {
            return t + 1;
        }
        if l.bound || l.terminal {
            continue;
        }
        let key = format!("{NAMESPACE}/{}", arrivals[*i].trace.name);
        let Some(retry) = scheduler.retry_ticks(&key) else {
            return t + 1;
        };
        waiting = true;
        for w in retry {
            if w > t {
                next = next.min(w);
            }
        }
    }
    if waiting && changed_in_tick {
        return t + 1;
    }
    next.max(t + 1)
}

/// `file:line: ` (or the part known; empty when neither is) for error messages.
fn at(file: Option<&str>, line: usize) -> String {
    let mut s = String::new();
    if let Some(f) = file {
        s.push_str(f);
        s.push(':');
    }
    if line > 0 {
        let _ = write!(s, "{}{line}:", if file.is_none() { "line " } else { "" });
    }
    if !s.is_empty() {
        s.push(' ');
    }
    s
}

/// Why a pod lacks a time: an empty cell, or no pod of the file has that time at all.
fn missing(pods: &[&TracePod], column: &str, has: fn(&TracePod) -> bool) -> String {
    if pods.iter().any(|p| has(p)) {
        format!("empty {column}: timeline mode needs creation_time and deletion_time on every pod")
    } else {
        format!("no {column}: no pod of the file has one (an empty column, or none as in the multigpu files); timeline mode needs creation_time and deletion_time")
    }
}

/// Arrival and departure ticks of every pod, after checking names and times (in file order; the
/// first bad row is reported).
fn timeline(
    pods: &[&TracePod],
    scale: u64,
    file: Option<&str>,
) -> Result<Vec<Arrival>, TimelineError> {
    let mut times = Vec::with_capacity(pods.len());
    let mut first: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    for (i, p) in pods.iter().enumerate() {
        let here = || at(file, p.line);
        if let Some(&(line, index)) = first.get(p.name.as_str()) {
            return Err(TimelineError::DuplicateName {
                at: here(),
                pod: p.name.clone(),
                first: if line > 0 {
                    format!("first on line {line}")
                } else {
                    format!("first is pod #{}", index + 1)
                },
            });
        }
        first.insert(p.name.as_str(), (p.line, i));
        let Some(c) = p.creation_time else {
            return Err(TimelineError::MissingTimes {
                at: here(),
                pod: p.name.clone(),
                problem: missing(pods, "creation_time", |p| p.creation_time.is_some()),
            });
        };
        let Some(d) = p.deletion_time else {
            return Err(TimelineError::MissingTimes {
                at: here(),
                pod: p.name.clone(),
                problem: missing(pods, "deletion_time", |p| p.deletion_time.is_some()),
            });
        };
        if d < c {
            return Err(TimelineError::DeletedBeforeCreated {
                at: here(),
                pod: p.name.clone(),
                creation: c,
                deletion: d,
            });
        }
        times.push((c, d));
    }
    let t0 = times.iter().map(|(c, _)| *c).min().unwrap_or(0);
    let tick = |s: i64| 1 + u64::try_from(s - t0).unwrap_or(0) / scale;
    Ok(pods
        .iter()
        .zip(times)
        .map(|(p, (c, d))| Arrival {
            trace: (*p).clone(),
            created: tick(c),
            deleted: tick(d),
        })
        .collect())
}
