//! The `drain` step: `kubectl drain` as `staging/src/k8s.io/kubectl/pkg/drain/` (`drain.go`
//! `GetPodsForDeletion`, `evictPods`, `waitForDelete`; `filters.go` `daemonSetFilter`,
//! `mirrorPodFilter`, `unreplicatedFilter`, `PodDeleteList.Warnings`/`errors`) and
//! `pkg/cmd/drain/drain.go` (`RunDrain`, `deleteOrEvictPodsSimple`) run it, spread over ticks.
//!
//! At the step's tick the node is cordoned (`node/<n> cordoned`) and its pods are filtered: a
//! mirror pod is skipped; a DaemonSet-managed pod is left with a warning under
//! `ignoreDaemonsets`, else it stops the drain; a pod that declares no controller is evicted with
//! a warning under `force`, else it stops the drain (`cannot delete Pods declare no controller
//! (use --force to override): ns/name`); a Succeeded or Failed pod is always evicted. Then every
//! pod is evicted through the `pods/eviction` subresource, as kubectl does with one goroutine per
//! pod: `evicting pod ns/name`, and on a 429 `error when evicting pods/"name" -n "ns" (will retry
//! after 5s): <message>` and another try 5 s later; a pod the apiserver let go is watched each
//! second until it is gone (`pod/name evicted`). When every pod is gone: `node/<n> drained`. With
//! `timeoutSeconds`, what is not done by then fails (`global timeout reached`) and the step fails
//! with kubectl's closing lines.
//!
//! Order: the goroutines of one tick run in the order kubectl lists the pods (namespace, then
//! name). Not modelled: local storage (`--delete-emptydir-data`: k8s-mini keeps no volumes),
//! the DaemonSet lookup of `daemonSetFilter` (a DaemonSet-owned pod is one whatever the owner),
//! `--disable-eviction`, `--pod-selector`, dry runs.

use k8s_types::apiserver::{ApiClient, ApiExt, DeleteOptions};
use k8s_types::core::{Node, Pod};
use k8s_types::meta::go_duration;
use k8s_types::policy::Eviction;
use k8s_types::Tick;

use crate::scenario::DrainStep;

/// kubectl's retry interval after a 429.
pub(crate) const RETRY_AFTER: Tick = 5;
/// Upstream `kubetypes.ConfigMirrorAnnotationKey`.
const MIRROR_ANNOTATION: &str = "kubernetes.io/config.mirror";

/// Where one pod's goroutine is.
#[derive(Clone, Debug, PartialEq, Eq)]
enum PodState {
    /// Eviction to be tried at this tick.
    Evict(Tick),
    /// Evicted; waiting for the pod (this uid) to be gone.
    Waiting(String),
    /// Gone, or nothing to do.
    Done,
    /// Failed with this error.
    Failed(String),
}

/// One `kubectl drain` in progress.
#[derive(Debug)]
pub(crate) struct Drain {
    step: DrainStep,
    started: Option<Tick>,
    /// (namespace, name) -> state, in kubectl's list order.
    pods: Vec<((String, String), PodState)>,
}

/// What a tick of a drain printed, and whether it ended (and how).
pub(crate) struct Advanced {
    pub(crate) lines: Vec<String>,
    /// `Some(Ok)` drained, `Some(Err)` failed, `None` still going.
    pub(crate) finished: Option<Result<(), String>>,
}

/// `utilerrors.NewAggregate(...).Error()`: one message as is, several as `[a, b]`.
fn aggregate(errs: &[String]) -> String {
    match errs {
        [one] => one.clone(),
        many => format!("[{}]", many.join(", ")),
    }
}

impl Drain {
    pub(crate) fn new(step: DrainStep) -> Drain {
        Drain {
            step,
            started: None,
            pods: Vec::new(),
        }
    }

    /// The node being drained.
    pub(crate) fn node(&self) -> &str {
        &self.step.node
    }

    /// Runs the drain's work due at tick `now`.
    pub(crate) fn advance(&mut self, api: &mut dyn ApiClient, now: Tick) -> Advanced {
        let mut lines = Vec::new();
        if self.started.is_none() {
            self.started = Some(now);
            if let Err(e) = self.start(api, &mut lines) {
                return Advanced {
                    lines,
                    finished: Some(Err(e)),
                };
            }
        }
        let deadline = self
            .step
            .timeout_seconds
            .map(|t| self.started.unwrap_or(now).saturating_add(t));
        let timeout = self
            .step
            .timeout_seconds
            .map(go_duration)
            .unwrap_or_default();
        for ((ns, name), state) in &mut self.pods {
            if deadline.is_some_and(|d| now >= d) {
                match state {
                    PodState::Evict(_) => {
                        *state = PodState::Failed(format!(
                            "error when evicting pods/{name:?} -n {ns:?}: global timeout reached: {timeout}"
                        ));
                    }
                    PodState::Waiting(_) => {
                        *state = PodState::Failed(format!(
                            "error when waiting for pod {name:?} in namespace {ns:?} to terminate: context deadline exceeded"
                        ));
                    }
                    PodState::Done | PodState::Failed(_) => {}
                }
                continue;
            }
            if let PodState::Evict(at) = *state {
                if at > now {
                    continue;
                }
                lines.push(format!("evicting pod {ns}/{name}"));
                let uid = api
                    .get_typed::<Pod>(ns, name)
                    .ok()
                    .and_then(|p| p.metadata.uid);
                let mut eviction = Eviction::default();
                eviction.metadata.name = name.clone();
                eviction.metadata.namespace = Some(ns.as_str().into());
                eviction.delete_options = DeleteOptions {
                    grace_period_seconds: self.step.grace_period_seconds.filter(|g| *g >= 0),
                    ..Default::default()
                };
                match api.evict(&eviction) {
                    Ok(()) => *state = PodState::Waiting(uid.unwrap_or_default()),
                    Err(e) if e.is_not_found() => *state = PodState::Done,
                    Err(e) if e.is_too_many_requests() => {
                        lines.push(format!(
                            "error when evicting pods/{name:?} -n {ns:?} (will retry after {RETRY_AFTER}s): {}",
                            e.message
                        ));
                        *state = PodState::Evict(now.saturating_add(RETRY_AFTER));
                    }
                    Err(e) => {
                        *state = PodState::Failed(format!(
                            "error when evicting pods/{name:?} -n {ns:?}: {}",
                            e.message
                        ));
                    }
                }
            }
            // waitForDelete polls at once, then every second.
            if let PodState::Waiting(uid) = &*state {
                let gone = match api.get_typed::<Pod>(ns, name) {
                    Ok(p) => p.metadata.uid.as_deref() != Some(uid.as_str()),
                    Err(_) => true,
                };
                if gone {
                    lines.push(format!("pod/{name} evicted"));
                    *state = PodState::Done;
                }
            }
        }
        let pending = self
            .pods
            .iter()
            .any(|(_, s)| matches!(s, PodState::Evict(_) | PodState::Waiting(_)));
        if pending {
            return Advanced {
                lines,
                finished: None,
            };
        }
        let errs: Vec<String> = self
            .pods
            .iter()
            .filter_map(|(_, s)| match s {
                PodState::Failed(e) => Some(e.clone()),
                _ => None,
            })
            .collect();
        if errs.is_empty() {
            lines.push(format!("node/{} drained", self.step.node));
            return Advanced {
                lines,
                finished: Some(Ok(())),
            };
        }
        let err = aggregate(&errs);
        let on_node: Vec<String> = api
            .list_pods_on_node(&self.step.node)
            .into_iter()
            .map(|p| format!("pod/{}", p.metadata.name))
            .collect();
        if !on_node.is_empty() {
            lines.push(format!(
                "There are pending pods in node {:?} when an error occurred: {err}",
                self.step.node
            ));
            lines.extend(on_node);
        }
        lines.push("There are pending nodes to be drained:".to_string());
        lines.push(format!(" {}", self.step.node));
        Advanced {
            lines,
            finished: Some(Err(format!("error: {err}"))),
        }
    }

    /// Cordon, then `GetPodsForDeletion`: the pods to evict, the warnings, or the errors that
    /// stop the drain.
    fn start(&mut self, api: &mut dyn ApiClient, lines: &mut Vec<String>) -> Result<(), String> {
        let node_name = self.step.node.clone();
        let mut node: Node = api
            .get_typed("", &node_name)
            .map_err(|e| format!("error: {}", e.message))?;
        if node.spec.unschedulable {
            lines.push(format!("node/{node_name} already cordoned"));
        } else {
            node.spec.unschedulable = true;
            api.update_typed(node)
                .map_err(|e| format!("error: {}", e.message))?;
            lines.push(format!("node/{node_name} cordoned"));
        }
        let mut warnings: std::collections::BTreeMap<&str, Vec<String>> = Default::default();
        let mut errors: std::collections::BTreeMap<&str, Vec<String>> = Default::default();
        for pod in api.list_pods_on_node(&node_name) {
            let id = format!("{}/{}", pod.metadata.namespace(), pod.metadata.name);
            let finished = pod.is_terminal();
            let cref = pod.metadata.controller_ref();
            // The filters in kubectl's order; the first that keeps a pod decides, else the last
            // one's verdict (its warning) stands.
            if cref.is_some_and(|r| r.kind == "DaemonSet") && !finished {
                if self.step.ignore_daemonsets {
                    warnings
                        .entry("ignoring DaemonSet-managed Pods")
                        .or_default()
                        .push(id);
                } else {
                    errors
                        .entry("DaemonSet-managed Pods (use --ignore-daemonsets to ignore)")
                        .or_default()
                        .push(id);
                }
                continue;
            }
            if pod.metadata.annotations.contains_key(MIRROR_ANNOTATION) {
                continue;
            }
            if cref.is_none() && !finished {
                if self.step.force {
                    warnings
                        .entry("deleting Pods that declare no controller")
                        .or_default()
                        .push(id);
                } else {
                    errors
                        .entry("Pods declare no controller (use --force to override)")
                        .or_default()
                        .push(id);
                    continue;
                }
            }
            self.pods.push((
                (
                    pod.metadata.namespace().to_string(),
                    pod.metadata.name.clone(),
                ),
                PodState::Evict(0),
            ));
        }
        if !errors.is_empty() {
            let errs: Vec<String> = errors
                .iter()
                .map(|(msg, pods)| format!("cannot delete {msg}: {}", pods.join(", ")))
                .collect();
            lines.push("There are pending nodes to be drained:".to_string());
            lines.push(format!(" {node_name}"));
            self.pods.clear();
            return Err(format!("error: {}", aggregate(&errs)));
        }
        if !warnings.is_empty() {
            let w: Vec<String> = warnings
                .iter()
                .map(|(msg, pods)| format!("{msg}: {}", pods.join(", ")))
                .collect();
            lines.push(format!("Warning: {}", w.join("; ")));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aggregate_prints_like_utilerrors() {
        assert_eq!(aggregate(&["a".into()]), "a");
        assert_eq!(aggregate(&["a".into(), "b".into()]), "[a, b]");
    }
}
