//! Checking a Scenario's expectations against the cluster's state through the apiserver. Each check
//! returns a one-line description and, when it fails, what was expected and what was found.

use std::collections::BTreeMap;

use k8s_types::apiserver::{ApiClient, ApiExt};
use k8s_types::apps::Deployment;
use k8s_types::core::{Event, Node, Pod};
use k8s_types::labels::LabelSelector;
use k8s_types::resources::Resources;
use k8s_types::Quantity;

use crate::scenario::Expectation;
use crate::state::{allocated_by_node, holds_resources, pod_devices};

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
            .filter(|p| p.pod_group() == Some(g.name.as_str()) && p.node_name().is_some())
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
    if let Some(ev) = &e.events {
        let what = format!("events reason={}", ev.reason);
        let n = api
            .list_typed::<Event>(None, None)
            .iter()
            .filter(|x| x.reason == ev.reason)
            .filter(|x| {
                ev.involved_object
                    .as_ref()
                    .is_none_or(|o| &x.involved_object.name == o)
            })
            .filter(|x| {
                ev.message_contains
                    .as_ref()
                    .is_none_or(|m| x.message.contains(m.as_str()))
            })
            .count();
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
