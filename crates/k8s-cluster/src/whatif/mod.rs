//! `k8s-mini whatif`: a workload added to a cluster, and the answer in one place.
//!
//! 1. **The cluster settles.** The cluster input (a dump or a scenario) is run as `k8s-mini
//!    scenario` runs it, to its end (its `spec.ticks`, else until nothing changes): tick `T0`.
//! 2. **The workload arrives at `T0`.** A second run of the same input gets, at the start of tick
//!    `T0` (a Scenario `apply` / `scale` step there, before the components run): the `--add-nodes`
//!    nodes, the `--scale` changes, then the `--add` objects (namespaces and PriorityClasses first,
//!    then the others in file order). New objects go through admission like any other write. The
//!    run goes on for `--ticks` more ticks ([`DEFAULT_TICKS`]: 300, kube-scheduler's
//!    `podMaxInUnschedulablePodsDuration` of 5 minutes, so every pod that can bind without a
//!    further change to the cluster has been retried). The same input with those steps in a
//!    Scenario and `ticks: T0 + N` gives the same run under `k8s-mini scenario`.
//! 3. **The workload** is every object added and everything they own, transitively
//!    (`ownerReferences`: a Deployment's ReplicaSets and their Pods), plus what `--scale` names;
//!    with `--add-nodes` alone, the pods pending at `T0`. It **fits** when every one of its pods
//!    that is not finished is bound, and every Deployment, ReplicaSet or StatefulSet of it has at
//!    least `spec.replicas` bound pods.
//! 4. **What it cost**: the pods preempted (`Preempted` events after `T0`) or evicted (`Evicted`,
//!    `TaintManagerEviction`), with owner, priority and node as they were at `T0`.
//! 5. **Why not** ([`Why`]): the pending workload pods counted per node-level reason (the
//!    `FailedScheduling` message, as the capacity view counts them), the first one's full message,
//!    and for a gang (a PodGroup among the `--add` objects) its feasibility as `--explain` of the
//!    PodGroup prints it (quorum, what is placed, fit now / with preemption, resource shortfall).
//! 6. **How many more nodes** ([`search`]): nodes like `--like` (default: the most common shape
//!    among the nodes that could hold a pending workload pod if they were empty) are added at `T0`
//!    in a fresh run per probe: 1, 2, 4, ... up to `--max-nodes`, then bisection between the last
//!    count that failed and the first that fit.
//! 7. **Max replicas** ([`replicas`]): kubernetes-sigs/cluster-capacity's question, on the cluster
//!    as the what-if run left it.

mod render;
pub mod replicas;
pub mod search;
mod workload;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use k8s_types::apiserver::{ApiClient, ApiExt};
use k8s_types::core::{Node, Pod};
use k8s_types::object::{Kind, Object};
use k8s_types::Tick;
use serde::Serialize;

use crate::capacity::{is_pending, PendingReason};
use crate::cluster::Cluster;
use crate::load::prepare;
use crate::manifest::{Document, ManifestError, Manifests, Source};
use crate::run::{drive, OutputFormat, Plan, RunOptions};
use crate::scenario::{ScaleStep, Step};
use crate::steps::ReadyStep;

pub use render::render;
use workload::{disruptions, ns_or_default, pod_row, workload_pods};

/// Ticks the what-if run goes on after the workload arrives, by default.
pub const DEFAULT_TICKS: u64 = 300;
/// The most nodes the search adds, by default.
pub const DEFAULT_MAX_NODES: usize = 64;

/// `--scale KIND/NAME=N`: `spec.replicas` of a Deployment, ReplicaSet or StatefulSet set at `T0`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Scale {
    /// `Deployment`, `ReplicaSet` or `StatefulSet`.
    pub kind: String,
    /// Namespace.
    pub namespace: String,
    /// Name.
    pub name: String,
    /// The new `spec.replicas`.
    pub replicas: i32,
}

impl Scale {
    /// Parses `KIND/NAME=N` (kinds as kubectl names them: `deployment`, `deploy`, `replicaset`,
    /// `rs`, `statefulset`, `sts`, plurals too).
    ///
    /// # Errors
    /// A message naming what is wrong.
    pub fn parse(s: &str, namespace: &str) -> Result<Scale, String> {
        let (what, n) = s
            .split_once('=')
            .ok_or_else(|| format!("--scale {s:?}: want KIND/NAME=REPLICAS"))?;
        let (kind, name) = what
            .split_once('/')
            .ok_or_else(|| format!("--scale {s:?}: want KIND/NAME=REPLICAS"))?;
        let kind = match kind.to_ascii_lowercase().as_str() {
            "deployment" | "deployments" | "deploy" => "Deployment",
            "replicaset" | "replicasets" | "rs" => "ReplicaSet",
            "statefulset" | "statefulsets" | "sts" => "StatefulSet",
            other => {
                return Err(format!(
                    "--scale {s:?}: cannot scale {other:?} (deployment, replicaset or statefulset)"
                ))
            }
        };
        let replicas: i32 = n
            .parse()
            .ok()
            .filter(|r| *r >= 0)
            .ok_or_else(|| format!("--scale {s:?}: replicas {n:?} is not a number >= 0"))?;
        if name.is_empty() {
            return Err(format!("--scale {s:?}: the name is empty"));
        }
        Ok(Scale {
            kind: kind.to_string(),
            namespace: namespace.to_string(),
            name: name.to_string(),
            replicas,
        })
    }
}

/// What to add, and the questions to answer.
#[derive(Clone, Debug, Default)]
pub struct Request {
    /// The cluster: a dump or a scenario (its documents), and the path naming it.
    pub cluster: Manifests,
    /// See `cluster`.
    pub cluster_path: PathBuf,
    /// The workload's documents (objects only).
    pub add: Manifests,
    /// Nodes to add with the workload, like `like`.
    pub add_nodes: usize,
    /// The node shape to add (`--like`), for `add_nodes` and the search.
    pub like: Option<String>,
    /// `--scale KIND/NAME=N`.
    pub scale: Vec<Scale>,
    /// Ticks after the workload arrives.
    pub ticks: u64,
    /// Most nodes the search adds; 0 turns the search off.
    pub max_nodes: usize,
    /// `--max-replicas`: the pod whose replicas are counted.
    pub max_replicas: Option<Pod>,
    /// cluster-capacity's `--max-limit` (0: none).
    pub max_limit: usize,
    /// A `KubeSchedulerConfiguration` file.
    pub scheduler_config: Option<PathBuf>,
}

/// One pod of the workload at the end of the what-if run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkloadPod {
    /// Namespace.
    pub namespace: String,
    /// Name.
    pub name: String,
    /// The controller owning it, `Kind/name`.
    pub owner: Option<String>,
    /// `spec.priority`.
    pub priority: i32,
    /// The PodGroup it belongs to.
    pub pod_group: Option<String>,
    /// The tick it was bound (its `PodScheduled` condition turned True).
    pub bound_at: Option<Tick>,
    /// `spec.nodeName`.
    pub node: Option<String>,
    /// Devices the kubelet allocated, per resource.
    pub devices: BTreeMap<String, Vec<String>>,
    /// The STATUS column of `kubectl get pods`.
    pub status: String,
    /// For a pending pod: its `PodScheduled` message.
    pub message: Option<String>,
}

/// A pod preempted or evicted after the workload arrived.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Disrupted {
    /// Namespace.
    pub namespace: String,
    /// Name.
    pub name: String,
    /// Its controller at `T0`, `Kind/name`.
    pub owner: Option<String>,
    /// Its priority.
    pub priority: i32,
    /// The node it ran on.
    pub node: Option<String>,
    /// The tick of the event.
    pub at: Tick,
    /// The event reason (`Preempted`, `Evicted`, `TaintManagerEviction`).
    pub reason: String,
    /// The event message (`Preempted by pod <uid> on node <node>`).
    pub message: String,
    /// For a preemption: the preemptor, `namespace/name`, when it is a pod of the run.
    pub by: Option<String>,
}

/// Why the workload does not fit.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Why {
    /// Pending workload pods per node-level reason.
    pub reasons: Vec<PendingReason>,
    /// The first pending workload pod (by namespace and name) and its `PodScheduled` message.
    pub first_pending: Option<(String, String)>,
    /// A gang: the PodGroup's feasibility on its latest member attempt (the `--explain` data).
    pub gang: Option<serde_json::Value>,
    /// The same as `--explain` prints it.
    pub gang_lines: Vec<String>,
}

/// The answer.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Answer {
    /// The cluster input.
    pub cluster: String,
    /// The tick the workload arrived (the cluster's run ended there).
    pub added_at: Tick,
    /// The tick the what-if run ended.
    pub ended_at: Tick,
    /// Whether the workload fits.
    pub fits: bool,
    /// Workload pods bound.
    pub bound: usize,
    /// Workload pods pending.
    pub pending: usize,
    /// Nodes added with the workload (`--add-nodes`).
    pub added_nodes: Vec<String>,
    /// The workload's pods, by namespace and name.
    pub pods: Vec<WorkloadPod>,
    /// Pods preempted, in event order.
    pub preempted: Vec<Disrupted>,
    /// Pods evicted, in event order.
    pub evicted: Vec<Disrupted>,
    /// When it does not fit: why.
    pub why: Option<Why>,
    /// When it does not fit: how many nodes more would make it fit.
    pub nodes_needed: Option<search::NodeSearch>,
    /// `--max-replicas`: cluster-capacity's answer.
    pub max_replicas: Option<replicas::MaxReplicas>,
    /// Warnings from loading the cluster (also on standard error).
    pub warnings: Vec<String>,
}

fn bad_at(file: &str, line: usize, message: String) -> ManifestError {
    ManifestError {
        source_loc: Source {
            file: file.to_string(),
            line,
        },
        path: String::new(),
        message,
    }
}

/// The `--add` objects, namespaces and PriorityClasses first (stable otherwise).
fn workload_objects(add: &Manifests) -> Result<Vec<(Object, Source)>, ManifestError> {
    let mut out = Vec::new();
    for d in &add.docs {
        match &d.doc {
            Document::Object(o) => out.push(((**o).clone(), d.source.clone())),
            _ => {
                return Err(bad_at(
                    &d.source.file,
                    d.source.line,
                    "a workload to add holds Kubernetes objects only (no Scenario, no KubeSchedulerConfiguration)".into(),
                ))
            }
        }
    }
    out.sort_by_key(|(o, _)| match o.kind() {
        Kind::Namespace => 0,
        Kind::PriorityClass => 1,
        _ => 2,
    });
    Ok(out)
}

/// The settled cluster: `T0`, and the pods as they were then.
pub(crate) struct Base {
    pub(crate) t0: Tick,
    pub(crate) pods: BTreeMap<(String, String), Pod>,
    pub(crate) nodes: Vec<Node>,
    pub(crate) warnings: Vec<String>,
}

fn run_opts(req: &Request, ticks: Option<u64>, explain: Option<String>) -> RunOptions {
    RunOptions {
        ticks,
        scheduler_config: req.scheduler_config.clone(),
        output: OutputFormat::Json,
        explain,
        every_tick: false,
        snapshot_out: None,
        snapshot_out_at_tick: None,
        snapshot_in: None,
        exit_after: false,
    }
}

fn settle(req: &Request) -> Result<Base, ManifestError> {
    let opts = run_opts(req, None, None);
    let p = prepare(req.cluster.clone(), &req.cluster_path, &opts)?;
    let driven = drive(
        p.cluster,
        Plan {
            scenario: &p.scenario,
            steps: &p.steps,
            other_kinds: &p.other_kinds,
            resumed: p.resumed,
            observe: None,
        },
        &opts,
        None,
    );
    let api = driven.cluster.api_ref();
    let pods = api
        .list_typed::<Pod>(None, None)
        .into_iter()
        .map(|p| {
            (
                (p.metadata.namespace().to_string(), p.metadata.name.clone()),
                p,
            )
        })
        .collect();
    Ok(Base {
        t0: driven.cluster.now(),
        pods,
        nodes: api.list_typed(None, None),
        warnings: p.warnings,
    })
}

/// One what-if run: the cluster, then at `T0` the `nodes`, the scale steps and the workload.
pub(crate) fn what_if_run(
    req: &Request,
    base: &Base,
    nodes: &[Node],
    workload: &[(Object, Source)],
    explain: Option<String>,
) -> Result<Cluster, ManifestError> {
    let opts = run_opts(req, Some(base.t0.saturating_add(req.ticks)), explain);
    let p = prepare(req.cluster.clone(), &req.cluster_path, &opts)?;
    let mut steps = p.steps;
    let at = base.t0;
    let apply_step = |objects: Vec<Object>| ReadyStep {
        step: Step {
            at,
            apply: Some(serde_yaml::Value::Null),
            ..Step::default()
        },
        apply: objects,
    };
    // Where each of our steps came from, for an error: (file, line).
    let base_steps = steps.iter().filter(|s| s.step.at == at).count();
    let mut sources: Vec<(String, usize)> = Vec::new();
    if !nodes.is_empty() {
        steps.push(apply_step(
            nodes
                .iter()
                .cloned()
                .map(k8s_types::Resource::into_object)
                .collect(),
        ));
        sources.push(("--add-nodes".into(), 0));
    }
    for s in &req.scale {
        steps.push(ReadyStep {
            step: Step {
                at,
                scale: Some(ScaleStep {
                    kind: Some(s.kind.clone()),
                    namespace: Some(s.namespace.clone()),
                    name: s.name.clone(),
                    replicas: s.replicas,
                }),
                ..Step::default()
            },
            apply: Vec::new(),
        });
        sources.push(("--scale".into(), 0));
    }
    // One step per object, so that a refusal names the object's file and line.
    for (o, source) in workload {
        steps.push(apply_step(vec![o.clone()]));
        sources.push((source.file.clone(), source.line));
    }
    let driven = drive(
        p.cluster,
        Plan {
            scenario: &p.scenario,
            steps: &steps,
            other_kinds: &p.other_kinds,
            resumed: p.resumed,
            observe: None,
        },
        &opts,
        None,
    );
    let mine = format!("t={at} step");
    let failed = driven
        .step_rows
        .iter()
        .filter(|r| r.starts_with(&mine))
        .skip(base_steps)
        .zip(&sources)
        .find_map(|(r, src)| {
            r.strip_prefix(&format!("{mine} FAILED: "))
                .map(|m| (m, src))
        });
    if let Some((message, (file, line))) = failed {
        return Err(bad_at(
            file,
            *line,
            format!("adding the workload at t={at} failed: {message}"),
        ));
    }
    Ok(driven.cluster)
}

/// What one run says: fits, and the workload's pods.
pub(crate) struct Outcome {
    pub(crate) fits: bool,
    pub(crate) pods: Vec<Pod>,
    pub(crate) short: BTreeMap<String, (String, i32)>,
}

pub(crate) fn outcome(
    api: &dyn ApiClient,
    req: &Request,
    workload: &[(Object, Source)],
    base: &Base,
) -> Outcome {
    let (pods, short) = workload_pods(api, req, workload, base);
    let pending = pods.iter().filter(|p| is_pending(p)).count();
    // With `--add-nodes` alone the workload is what was pending at T0, possibly nothing.
    let only_nodes = workload.is_empty() && req.scale.is_empty();
    Outcome {
        fits: (!pods.is_empty() || only_nodes) && pending == 0 && short.is_empty(),
        pods,
        short,
    }
}

/// The PodGroup among the workload objects, `namespace/name`, if any.
fn gang_key(workload: &[(Object, Source)]) -> Option<String> {
    workload.iter().find_map(|(o, _)| match o {
        Object::PodGroup(pg) => Some(format!(
            "{}/{}",
            ns_or_default(&pg.metadata),
            pg.metadata.name
        )),
        _ => None,
    })
}

fn why(cluster: &Cluster, out: &Outcome, gang: Option<&str>) -> Why {
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    let mut first = None;
    for p in out.pods.iter().filter(|p| is_pending(p)) {
        let reasons = crate::capacity::pending_reasons(p);
        for r in reasons.into_iter().collect::<BTreeSet<_>>() {
            *counts.entry(r).or_insert(0) += 1;
        }
        if first.is_none() {
            let m = pod_row(p)
                .message
                .unwrap_or_else(|| "no scheduling attempt yet".into());
            first = Some((format!("{}/{}", p.metadata.namespace(), p.metadata.name), m));
        }
    }
    for (what, missing) in out.short.values() {
        *counts
            .entry(format!("{what}: {missing} replica(s) not bound"))
            .or_insert(0) += 1;
    }
    let mut reasons: Vec<PendingReason> = counts
        .into_iter()
        .map(|(reason, pods)| PendingReason { reason, pods })
        .collect();
    reasons.sort_by(|a, b| b.pods.cmp(&a.pods).then(a.reason.cmp(&b.reason)));
    let mut w = Why {
        reasons,
        first_pending: first,
        ..Why::default()
    };
    if gang.is_some() {
        if let Some(e) = cluster
            .explanations()
            .iter()
            .rev()
            .find(|e| e.gang.is_some())
        {
            if let Some(fit) = &e.gang {
                w.gang = serde_json::to_value(fit).ok();
                let mut text = String::new();
                k8s_sched::explain::gang::fit_lines(&mut text, fit, e);
                w.gang_lines = text.lines().map(|l| l.trim_start().to_string()).collect();
            }
        }
    }
    w
}

/// Answers `req`.
///
/// # Errors
/// Bad input: the cluster or workload does not load, a workload object is refused when added (its
/// file and the apiserver's message), `--like` names no node, `--scale` names nothing.
pub fn what_if(req: &Request) -> Result<Answer, ManifestError> {
    let workload = workload_objects(&req.add)?;
    let base = settle(req)?;
    let like = match &req.like {
        Some(n) => Some(
            base.nodes
                .iter()
                .find(|x| x.metadata.name == *n)
                .cloned()
                .ok_or_else(|| bad_at("--like", 0, format!("node {n:?} is not in the cluster")))?,
        ),
        None => None,
    };
    if req.add_nodes > 0 && like.is_none() {
        return Err(bad_at(
            "--add-nodes",
            0,
            "give the shape of the nodes to add with --like NODE".into(),
        ));
    }
    if workload.is_empty() && req.scale.is_empty() && req.add_nodes == 0 {
        return Err(bad_at(
            "--add",
            0,
            "nothing to add: give --add FILE, --scale KIND/NAME=N or --add-nodes N --like NODE"
                .into(),
        ));
    }
    let added: Vec<Node> = like
        .as_ref()
        .map(|l| {
            (1..=req.add_nodes)
                .map(|i| search::clone_node(l, i))
                .collect()
        })
        .unwrap_or_default();
    let gang = gang_key(&workload);
    let cluster = what_if_run(req, &base, &added, &workload, gang.clone())?;
    let api = cluster.api_ref();
    let out = outcome(api, req, &workload, &base);
    let (preempted, evicted) = disruptions(api, &base);
    let rows: Vec<WorkloadPod> = out.pods.iter().map(pod_row).collect();
    let bound = out.pods.iter().filter(|p| p.node_name().is_some()).count();
    let pending = out.pods.iter().filter(|p| is_pending(p)).count();
    let mut answer = Answer {
        cluster: req.cluster_path.display().to_string(),
        added_at: base.t0,
        ended_at: cluster.now(),
        fits: out.fits,
        bound,
        pending,
        added_nodes: added.iter().map(|n| n.metadata.name.clone()).collect(),
        pods: rows,
        preempted,
        evicted,
        warnings: base.warnings.clone(),
        ..Answer::default()
    };
    if !out.fits {
        answer.why = Some(why(&cluster, &out, gang.as_deref()));
        if req.max_nodes > 0 {
            answer.nodes_needed = Some(search::nodes_needed(
                req,
                &base,
                &workload,
                &out,
                like.as_ref(),
                &added,
            )?);
        }
    }
    if let Some(pod) = &req.max_replicas {
        let mut cluster = cluster;
        answer.max_replicas = Some(replicas::max_replicas(&mut cluster, pod, req.max_limit));
    }
    Ok(answer)
}
