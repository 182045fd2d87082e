//! Checking a Scenario's expectations against the cluster's state through the apiserver. Each check
//! returns a one-line description and, when it fails, what was expected and what was found.

use std::collections::BTreeMap;

use k8s_types::apiserver::{ApiClient, ApiExt};
use k8s_types::apps::{DaemonSet, Deployment};
use k8s_types::batch::Job;
use k8s_types::core::{ContainerState, ContainerStatus, Event, Node, Pod};
use k8s_types::labels::LabelSelector;
use k8s_types::policy::PodDisruptionBudget;
use k8s_types::resources::Resources;
use k8s_types::Quantity;

use crate::scenario::{ContainerExpectation, ContainerStateName, Expectation};
use crate::state::{allocated_by_node, holds_resources, kubectl_status, pod_devices};

/// The outcome of one check.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckResult {
    /// What was checked, e.g. `podsPerNode app=web`.
    pub what: String,
    /// `None` when it held; otherwise `expected ..., got ...`.
    pub failure: Option<String>,
}

fn ns(n: &Option<String>) -> &str {
    n.as_deref().unwrap_or("default")
}

fn selector(s: &str) -> Result<LabelSelector, String> {
    LabelSelector::parse(s).map_err(|e| format!("bad selector: {e}"))
}

/// [`check`] on a cluster: the state through its apiserver, and its `409 Conflict`s so far
/// (the `conflicts` check).
pub(crate) fn check_cluster(
    cluster: &crate::cluster::Cluster,
    e: &Expectation,
) -> Vec<CheckResult> {
    let mut out = check(cluster.api_ref(), e);
    if let Some(c) = &e.conflicts {
        out.push(conflicts::check_conflicts(cluster.conflicts(), c));
    }
    out
}

/// Evaluates one expectation now.
pub fn check(api: &dyn ApiClient, e: &Expectation) -> Vec<CheckResult> {
    let mut out = Vec::new();
    let mut push = |what: String, failure: Option<String>| out.push(CheckResult { what, failure });
    if let Some(p) = &e.pods_per_node {
        let what = format!("podsPerNode {}", display_sel(&p.selector));
        match selector(&p.selector) {
            Err(err) => push(what, Some(err)),
            Ok(sel) => {
                let mut got: BTreeMap<String, usize> =
                    p.counts.keys().map(|k| (k.clone(), 0)).collect();
                for pod in api.list_typed::<Pod>(None, Some(&sel)) {
                    if holds_resources(&pod) && !pod.is_terminating() {
                        if let Some(n) = pod.node_name() {
                            *got.entry(n.to_string()).or_insert(0) += 1;
                        }
                    }
                }
                let fail = (got != p.counts)
                    .then(|| format!("expected {}, got {}", map_str(&p.counts), map_str(&got)));
                push(what, fail);
            }
        }
    }
    if let Some(p) = &e.pod {
        let what = format!("pod {}/{}", ns(&p.namespace), p.name);
        match api.get_typed::<Pod>(ns(&p.namespace), &p.name) {
            Err(err) => push(what, Some(err.message)),
            Ok(pod) => {
                let mut problems = Vec::new();
                if let Some(want) = &p.node_name {
                    let got = pod.node_name().unwrap_or("");
                    if got != want {
                        problems.push(format!("expected nodeName {want:?}, got {got:?}"));
                    }
                }
                if let Some(want) = &p.phase {
                    if pod.phase() != want {
                        problems.push(format!("expected phase {want}, got {}", pod.phase()));
                    }
                }
                if let Some(want) = &p.devices {
                    let got = pod_devices(&pod);
                    if &got != want {
                        problems.push(format!("expected devices {want:?}, got {got:?}"));
                    }
                }
                let checks = StateChecks {
                    status: p.status.as_deref(),
                    ready: p.ready,
                    restart_count: p.restart_count,
                    container: p.container.as_deref(),
                    containers: p.containers.as_ref(),
                };
                problems.extend(state_mismatches(&pod, &checks).iter().map(|m| {
                    let subject = m
                        .subject
                        .as_ref()
                        .map_or(String::new(), |s| format!("{s}: "));
                    format!("{subject}expected {}, got {}", m.expected, m.got)
                }));
                push(what, (!problems.is_empty()).then(|| problems.join("; ")));
            }
        }
    }
    if let Some(p) = &e.pods {
        let what = format!("pods {}", display_sel(&p.selector));
        match selector(&p.selector) {
            Err(err) => push(what, Some(err)),
            Ok(sel) => {
                let pods: Vec<Pod> = api
                    .list_typed::<Pod>(p.namespace.as_deref(), Some(&sel))
                    .into_iter()
                    .filter(|pod| !pod.is_terminating())
                    .filter(|pod| {
                        p.node_name
                            .as_deref()
                            .is_none_or(|n| pod.node_name() == Some(n))
                    })
                    .collect();
                let mut problems = Vec::new();
                if let Some(want) = p.count {
                    if pods.len() != want {
                        problems.push(format!("expected {want} pods, got {}", pods.len()));
                    }
                }
                if let Some(max) = p.max_count {
                    if pods.len() > max {
                        problems.push(format!("expected at most {max} pods, got {}", pods.len()));
                    }
                }
                if let Some(min) = p.min_ready {
                    let ready = pods
                        .iter()
                        .filter(|p| p.phase() == "Running" && p.is_ready())
                        .count();
                    if ready < min {
                        problems.push(format!("expected at least {min} ready, got {ready}"));
                    }
                }
                if let Some(want) = p.scheduled {
                    let got = pods.iter().filter(|p| p.node_name().is_some()).count();
                    if got != want {
                        problems.push(format!("expected {want} scheduled, got {got}"));
                    }
                }
                if let Some(want) = &p.phase {
                    let bad: Vec<String> = pods
                        .iter()
                        .filter(|p| p.phase() != want)
                        .map(|p| format!("{}={}", p.metadata.name, p.phase()))
                        .collect();
                    if !bad.is_empty() {
                        problems.push(format!("expected phase {want}, got {}", bad.join(", ")));
                    }
                }
                if let Some(want) = &p.image {
                    let bad: Vec<String> = pods
                        .iter()
                        .flat_map(|p| {
                            p.spec
                                .containers
                                .iter()
                                .filter(|c| &c.image != want)
                                .map(move |c| format!("{}={}", p.metadata.name, c.image))
                        })
                        .collect();
                    if !bad.is_empty() {
                        problems.push(format!("expected image {want}, got {}", bad.join(", ")));
                    }
                }
                let checks = StateChecks {
                    status: p.status.as_deref(),
                    ready: p.ready,
                    restart_count: p.restart_count,
                    container: p.container.as_deref(),
                    containers: p.containers.as_ref(),
                };
                // Grouped by what was expected, naming each pod that differs (as `phase` does).
                let mut grouped: Vec<(Mismatch, Vec<String>)> = Vec::new();
                for pod in &pods {
                    for m in state_mismatches(pod, &checks) {
                        let got = format!("{}={}", pod.metadata.name, m.got);
                        match grouped
                            .iter_mut()
                            .find(|(g, _)| g.subject == m.subject && g.expected == m.expected)
                        {
                            Some((_, bad)) => bad.push(got),
                            None => grouped.push((m, vec![got])),
                        }
                    }
                }
                problems.extend(grouped.into_iter().map(|(m, bad)| {
                    let subject = m.subject.map_or(String::new(), |s| format!("{s}: "));
                    format!("{subject}expected {}, got {}", m.expected, bad.join(", "))
                }));
                push(what, (!problems.is_empty()).then(|| problems.join("; ")));
            }
        }
    }
    if let Some(m) = &e.node_allocated {
        let alloc = allocated_by_node(api);
        for (node, resources) in m {
            let got = alloc.get(node).cloned().unwrap_or_default();
            compare_resources(&mut push, "nodeAllocated", node, resources, &got);
        }
    }
    if let Some(m) = &e.node_free {
        let alloc = allocated_by_node(api);
        for (node, resources) in m {
            let mut free = match api.get_typed::<Node>("", node) {
                Ok(n) => Resources::from_list(&n.status.allocatable),
                Err(err) => {
                    push(format!("nodeFree {node}"), Some(err.message));
                    continue;
                }
            };
            free.sub(&alloc.get(node).cloned().unwrap_or_default());
            compare_resources(&mut push, "nodeFree", node, resources, &free);
        }
    }
    if let Some(g) = &e.pod_group {
        let what = format!("podGroup {}/{}", ns(&g.namespace), g.name);
        let got = api
            .list_typed::<Pod>(Some(ns(&g.namespace)), None)
            .iter()
            .filter(|p| {
                let name = Some(g.name.as_str());
                (p.pod_group() == name || p.scheduling_group_name() == name)
                    && p.node_name().is_some()
            })
            .count();
        push(
            what,
            (got != g.scheduled)
                .then(|| format!("expected {} members scheduled, got {got}", g.scheduled)),
        );
    }
    if let Some(d) = &e.deployment {
        let what = format!("deployment {}/{}", ns(&d.namespace), d.name);
        match api.get_typed::<Deployment>(ns(&d.namespace), &d.name) {
            Err(err) => push(what, Some(err.message)),
            Ok(dep) => {
                let s = &dep.status;
                let mut problems = Vec::new();
                let mut cmp = |field: &str, want: Option<i32>, got: i32| {
                    if let Some(w) = want {
                        if w != got {
                            problems.push(format!("expected {field} {w}, got {got}"));
                        }
                    }
                };
                cmp("replicas", d.replicas, s.replicas);
                cmp("updatedReplicas", d.updated_replicas, s.updated_replicas);
                cmp(
                    "availableReplicas",
                    d.available_replicas,
                    s.available_replicas,
                );
                if let Some(min) = d.min_available_replicas {
                    if s.available_replicas < min {
                        problems.push(format!(
                            "expected availableReplicas >= {min}, got {}",
                            s.available_replicas
                        ));
                    }
                }
                push(what, (!problems.is_empty()).then(|| problems.join("; ")));
            }
        }
    }
    if let Some(j) = &e.job {
        let what = format!("job {}/{}", ns(&j.namespace), j.name);
        match api.get_typed::<Job>(ns(&j.namespace), &j.name) {
            Err(err) => push(what, Some(err.message)),
            Ok(job) => push(what, check_job(j, &job)),
        }
    }
    if let Some(d) = &e.daemon_set {
        let what = format!("daemonset {}/{}", ns(&d.namespace), d.name);
        match api.get_typed::<DaemonSet>(ns(&d.namespace), &d.name) {
            Err(err) => push(what, Some(err.message)),
            Ok(ds) => push(what, check_daemon_set(d, &ds)),
        }
    }
    if let Some(c) = &e.cron_job {
        let what = format!("cronJob {}/{}", ns(&c.namespace), c.name);
        push(what, cron_job::check_cron_job(api, c));
    }
    if let Some(b) = &e.pod_disruption_budget {
        let what = format!("poddisruptionbudget {}/{}", ns(&b.namespace), b.name);
        match api.get_typed::<PodDisruptionBudget>(ns(&b.namespace), &b.name) {
            Err(err) => push(what, Some(err.message)),
            Ok(pdb) => push(what, check_pdb(b, &pdb)),
        }
    }
    if let Some(n) = &e.node {
        push(format!("node {}", n.name), node::check_node(api, n));
    }
    if let Some(q) = &e.resource_quota {
        let what = format!("resourcequota {}/{}", ns(&q.namespace), q.name);
        push(what, quota::check_resource_quota(api, q));
    }
    if let Some(n) = &e.namespace {
        push(
            format!("namespace {}", n.name),
            quota::check_namespace(api, n),
        );
    }
    if let Some(c) = &e.custom_resource {
        let what = format!("{} {}/{}", c.kind, ns(&c.namespace), c.name);
        push(what, custom_resource::check_custom_resource(api, c));
    }
    if let Some(c) = &e.resource_claim {
        let what = format!("resourceclaim {}/{}", ns(&c.namespace), c.name);
        push(what, resource_claim::check_resource_claim(api, c));
    }
    if let Some(s) = &e.service {
        let what = format!("service {}/{}", ns(&s.namespace), s.name);
        push(what, service::check_service(api, s));
    }
    if let Some(st) = &e.stateful_set {
        let what = format!("statefulset {}/{}", ns(&st.namespace), st.name);
        push(what, stateful_set::check_stateful_set(api, st));
    }
    if let Some(c) = &e.persistent_volume_claims {
        let what = format!("persistentvolumeclaims in {}", ns(&c.namespace));
        push(what, stateful_set::check_claims(api, c));
    }
    if let Some(ev) = &e.events {
        let what = format!("events reason={}", ev.reason);
        let n = api
            .list_typed::<Event>(None, None)
            .iter()
            .filter(|x| x.reason == ev.reason)
            .filter(|x| {
                ev.involved_object
                    .as_ref()
                    .is_none_or(|o| x.involved_object.name == *o)
            })
            .filter(|x| {
                ev.message_contains
                    .as_ref()
                    .is_none_or(|m| x.message.contains(m.as_str()))
            })
            // Occurrences: an Event the correlator aggregated counts `count` times, as the
            // `(xN over ...)` kubectl prints.
            .map(|x| usize::try_from(x.count.max(1)).unwrap_or(1))
            .sum::<usize>();
        let mut problems = Vec::new();
        if let Some(want) = ev.count {
            if n != want {
                problems.push(format!("expected {want} events, got {n}"));
            }
        }
        if let Some(min) = ev.min_count {
            if n < min {
                problems.push(format!("expected at least {min} events, got {n}"));
            }
        }
        push(what, (!problems.is_empty()).then(|| problems.join("; ")));
    }
    out
}

/// The checks on a pod's STATUS, readiness and container statuses that `pod` and `pods` share.
struct StateChecks<'a> {
    status: Option<&'a str>,
    ready: Option<bool>,
    restart_count: Option<i32>,
    container: Option<&'a str>,
    containers: Option<&'a BTreeMap<String, ContainerExpectation>>,
}

/// One expected value a pod does not have: `<subject>: expected <expected>, got <got>`.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Mismatch {
    /// `container <name>` for a container's field; `None` for the pod's own.
    subject: Option<String>,
    /// The field and its expected value, e.g. `status CrashLoopBackOff`.
    expected: String,
    /// The actual value.
    got: String,
}

/// How an absent value (a reason, an exit code of a container that is not terminated) prints.
const NONE: &str = "<none>";

/// The status of the container (init, sidecar or app) with this name.
fn container_status<'p>(pod: &'p Pod, name: &str) -> Option<&'p ContainerStatus> {
    pod.status
        .init_container_statuses
        .iter()
        .chain(&pod.status.container_statuses)
        .find(|c| c.name == name)
}

/// The set member of a container state and its details.
fn state_member(
    s: &ContainerState,
) -> Option<(ContainerStateName, &k8s_types::core::ContainerStateDetail)> {
    if let Some(d) = &s.waiting {
        Some((ContainerStateName::Waiting, &**d))
    } else if let Some(d) = &s.running {
        Some((ContainerStateName::Running, &**d))
    } else {
        s.terminated
            .as_deref()
            .map(|d| (ContainerStateName::Terminated, d))
    }
}

fn state_name(s: ContainerStateName) -> &'static str {
    match s {
        ContainerStateName::Waiting => "waiting",
        ContainerStateName::Running => "running",
        ContainerStateName::Terminated => "terminated",
    }
}

fn or_none<T: ToString>(v: Option<T>) -> String {
    v.map_or_else(|| NONE.to_string(), |v| v.to_string())
}

/// Records a mismatch when `want` and `got` differ; `container` names the container it is about.
fn differ(
    out: &mut Vec<Mismatch>,
    container: Option<&str>,
    field: &str,
    want: String,
    got: String,
) {
    if want != got {
        out.push(Mismatch {
            subject: container.map(|n| format!("container {n}")),
            expected: format!("{field} {want}"),
            got,
        });
    }
}

/// The status of a container, or a mismatch saying it has none.
fn find_container<'p>(
    out: &mut Vec<Mismatch>,
    pod: &'p Pod,
    name: &str,
) -> Option<&'p ContainerStatus> {
    let found = container_status(pod, name);
    if found.is_none() {
        out.push(Mismatch {
            subject: Some(format!("container {name}")),
            expected: "a status".to_string(),
            got: "none".to_string(),
        });
    }
    found
}

/// What of `checks` the pod does not show: its STATUS (kubectl's, [`kubectl_status`]), its `Ready`
/// condition, its restart count, and per container the state member, reason, exit code, restart
/// count, readiness and last termination.
fn state_mismatches(pod: &Pod, checks: &StateChecks<'_>) -> Vec<Mismatch> {
    let mut out = Vec::new();
    if let Some(want) = checks.status {
        differ(
            &mut out,
            None,
            "status",
            want.to_string(),
            kubectl_status(pod),
        );
    }
    if let Some(want) = checks.ready {
        differ(
            &mut out,
            None,
            "ready",
            want.to_string(),
            pod.is_ready().to_string(),
        );
    }
    match (checks.container, checks.restart_count) {
        (Some(name), want) => {
            if let (Some(c), Some(want)) = (find_container(&mut out, pod, name), want) {
                let got = c.restart_count.to_string();
                differ(&mut out, Some(name), "restartCount", want.to_string(), got);
            }
        }
        (None, Some(want)) => {
            let total: i64 = pod
                .status
                .init_container_statuses
                .iter()
                .chain(&pod.status.container_statuses)
                .map(|c| i64::from(c.restart_count))
                .sum();
            differ(
                &mut out,
                None,
                "restartCount",
                want.to_string(),
                total.to_string(),
            );
        }
        (None, None) => {}
    }
    for (name, want) in checks.containers.into_iter().flatten() {
        let Some(c) = find_container(&mut out, pod, name) else {
            continue;
        };
        let current = state_member(&c.state);
        let sub = Some(name.as_str());
        if let Some(s) = want.state {
            let got = or_none(current.map(|(s, _)| state_name(s)));
            differ(&mut out, sub, "state", state_name(s).to_string(), got);
        }
        if let Some(r) = &want.reason {
            let got = or_none(current.and_then(|(_, d)| d.reason.as_deref()));
            differ(&mut out, sub, "reason", r.clone(), got);
        }
        if let Some(code) = want.exit_code {
            // Upstream's exitCode is a plain int: 0 when a terminated state leaves it out.
            let got = or_none(
                c.state
                    .terminated
                    .as_ref()
                    .map(|t| t.exit_code.unwrap_or(0)),
            );
            differ(&mut out, sub, "exitCode", code.to_string(), got);
        }
        if let Some(n) = want.restart_count {
            let got = c.restart_count.to_string();
            differ(&mut out, sub, "restartCount", n.to_string(), got);
        }
        if let Some(r) = want.ready {
            differ(&mut out, sub, "ready", r.to_string(), c.ready.to_string());
        }
        if let Some(last) = &want.last_state {
            let t = c.last_state.terminated.as_ref();
            if let Some(r) = &last.reason {
                let got = or_none(t.and_then(|t| t.reason.as_deref()));
                differ(&mut out, sub, "lastState.reason", r.clone(), got);
            }
            if let Some(code) = last.exit_code {
                let got = or_none(t.map(|t| t.exit_code.unwrap_or(0)));
                differ(&mut out, sub, "lastState.exitCode", code.to_string(), got);
            }
        }
    }
    out
}

fn compare_resources(
    push: &mut impl FnMut(String, Option<String>),
    label: &str,
    node: &str,
    want: &BTreeMap<String, String>,
    got: &Resources,
) {
    for (res, q) in want {
        let what = format!("{label} {node} {res}");
        let want_amount = match Quantity::parse(q) {
            Ok(q) if res == "cpu" => q.milli_value(),
            Ok(q) => q.value(),
            Err(e) => {
                push(what, Some(e.to_string()));
                continue;
            }
        };
        let got_amount = got.get(res);
        push(
            what,
            (want_amount != got_amount).then(|| {
                format!(
                    "expected {}, got {}",
                    crate::state::format_amount(res, want_amount),
                    crate::state::format_amount(res, got_amount)
                )
            }),
        );
    }
}

fn display_sel(s: &str) -> String {
    if s.is_empty() {
        "(all)".into()
    } else {
        s.to_string()
    }
}

fn map_str(m: &BTreeMap<String, usize>) -> String {
    let parts: Vec<String> = m.iter().map(|(k, v)| format!("{k}: {v}")).collect();
    format!("{{{}}}", parts.join(", "))
}

/// The `daemonSet` check: the status counts named, and `minNumberAvailable`.
fn check_daemon_set(d: &crate::scenario::DaemonSetExpectation, ds: &DaemonSet) -> Option<String> {
    let s = &ds.status;
    let mut problems = Vec::new();
    for (field, want, got) in [
        (
            "desiredNumberScheduled",
            d.desired_number_scheduled,
            s.desired_number_scheduled,
        ),
        (
            "currentNumberScheduled",
            d.current_number_scheduled,
            s.current_number_scheduled,
        ),
        (
            "numberMisscheduled",
            d.number_misscheduled,
            s.number_misscheduled,
        ),
        ("numberReady", d.number_ready, s.number_ready),
        (
            "updatedNumberScheduled",
            d.updated_number_scheduled,
            s.updated_number_scheduled,
        ),
        ("numberAvailable", d.number_available, s.number_available),
        (
            "numberUnavailable",
            d.number_unavailable,
            s.number_unavailable,
        ),
    ] {
        if let Some(w) = want.filter(|w| *w != got) {
            problems.push(format!("expected {field} {w}, got {got}"));
        }
    }
    if let Some(min) = d.min_number_available.filter(|m| s.number_available < *m) {
        problems.push(format!(
            "expected numberAvailable >= {min}, got {}",
            s.number_available
        ));
    }
    (!problems.is_empty()).then(|| problems.join("; "))
}

/// The `podDisruptionBudget` check: the status counters and the condition's reason.
fn check_pdb(b: &crate::scenario::PdbExpectation, pdb: &PodDisruptionBudget) -> Option<String> {
    let s = &pdb.status;
    let mut problems = Vec::new();
    for (field, want, got) in [
        ("currentHealthy", b.current_healthy, s.current_healthy),
        ("desiredHealthy", b.desired_healthy, s.desired_healthy),
        ("expectedPods", b.expected_pods, s.expected_pods),
        (
            "disruptionsAllowed",
            b.disruptions_allowed,
            s.disruptions_allowed,
        ),
    ] {
        if want.is_some_and(|w| w != got) {
            problems.push(format!("expected {field} {}, got {got}", want.unwrap_or(0)));
        }
    }
    if let Some(want) = &b.reason {
        let got = pdb
            .disruption_allowed_condition()
            .map_or("<none>", |c| c.reason.as_str());
        if want != got {
            problems.push(format!(
                "expected DisruptionAllowed reason {want}, got {got}"
            ));
        }
    }
    (!problems.is_empty()).then(|| problems.join("; "))
}

/// The `job` check: counters, completed indexes and one True condition with its reason/message.
fn check_job(j: &crate::scenario::JobExpectation, job: &Job) -> Option<String> {
    let s = &job.status;
    let mut problems = Vec::new();
    let mut cmp = |field: &str, want: Option<i32>, got: i32| {
        if let Some(w) = want {
            if w != got {
                problems.push(format!("expected {field} {w}, got {got}"));
            }
        }
    };
    cmp("active", j.active, s.active);
    cmp("succeeded", j.succeeded, s.succeeded);
    cmp("failed", j.failed, s.failed);
    cmp("ready", j.ready, s.ready.unwrap_or(0));
    cmp("terminating", j.terminating, s.terminating.unwrap_or(0));
    if let Some(want) = &j.completed_indexes {
        if *want != s.completed_indexes {
            problems.push(format!(
                "expected completedIndexes {want:?}, got {:?}",
                s.completed_indexes
            ));
        }
    }
    let true_conditions = || {
        s.conditions
            .iter()
            .filter(|c| c.status == "True")
            .map(|c| c.type_.as_str())
            .collect::<Vec<_>>()
            .join(",")
    };
    match j.condition.as_deref() {
        None => {}
        Some("None") => {
            if let Some(t) = job.finished_type() {
                problems.push(format!("expected no Complete/Failed condition, got {t}"));
            }
        }
        Some(want) => match s
            .conditions
            .iter()
            .find(|c| c.type_ == want && c.status == "True")
        {
            None => problems.push(format!(
                "expected condition {want}=True, got [{}]",
                true_conditions()
            )),
            Some(c) => {
                let got_reason = c.reason.clone().unwrap_or_default();
                if let Some(r) = j.reason.as_ref().filter(|r| **r != got_reason) {
                    problems.push(format!("expected {want} reason {r}, got {got_reason:?}"));
                }
                let got_msg = c.message.clone().unwrap_or_default();
                if let Some(m) = j.message.as_ref().filter(|m| **m != got_msg) {
                    problems.push(format!("expected {want} message {m:?}, got {got_msg:?}"));
                }
            }
        },
    }
    if j.condition.is_none() && (j.reason.is_some() || j.message.is_some()) {
        problems.push(format!(
            "reason/message need a condition (True conditions: [{}])",
            true_conditions()
        ));
    }
    (!problems.is_empty()).then(|| problems.join("; "))
}

pub(crate) mod conflicts;
mod cron_job;
pub mod custom_resource;
mod node;
pub(crate) mod quota;
pub mod resource_claim;
pub mod service;
pub(crate) mod stateful_set;
#[cfg(test)]
mod tests;
