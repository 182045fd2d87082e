//! What a simulated container does. k8s-mini runs no processes, so a container's life is declared:
//! how long its image takes to pull (or that it cannot be pulled), when the process answers its
//! probes, how long each attempt runs and with which exit code, when liveness starts failing, its
//! memory use over time, and how it reacts to SIGTERM. With nothing declared a container starts and
//! runs forever, and takes its whole grace period to stop (it ignores SIGTERM).
//!
//! Two places declare it (the user-facing shape is in `docs/scenario-format.md`):
//! - the annotation [`BEHAVIOR_ANNOTATION`] on a Pod or a pod template, a YAML (or JSON) map
//!   `containers: {<name>: <ContainerBehavior>}`, so Deployments, Jobs and dumps carry it;
//! - Scenario-level [`BehaviorRule`]s selecting pods by namespace and label selector, and
//!   optionally one container name.
//!
//! A container's annotation entry wins over the rules; among rules the first that matches wins.

use std::collections::BTreeMap;
use std::sync::{Arc, LazyLock};

use serde::Deserialize;

use k8s_types::core::Pod;
use k8s_types::labels::LabelSelector;
use k8s_types::Quantity;

/// The annotation that declares what a pod's containers do.
pub const BEHAVIOR_ANNOTATION: &str = "sim.k8s-mini.io/behavior";

/// The annotation's value: one entry per container name (init containers included).
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PodBehavior {
    /// Per container name.
    #[serde(default)]
    pub containers: BTreeMap<String, ContainerBehavior>,
}

/// What one container does. Every field is optional; times are in seconds (ticks).
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ContainerBehavior {
    /// Time to pull the image when the kubelet pulls it (policy `Always`, or an image the node does
    /// not list in `status.images` and has not pulled before). Without it (and without
    /// `pullError`) images count as already present on every node.
    #[serde(default)]
    pub pull_seconds: Option<u64>,
    /// The image cannot be pulled: every pull fails after `pullSeconds` with this message
    /// (`ErrImagePull`, then `ImagePullBackOff`).
    #[serde(default)]
    pub pull_error: Option<String>,
    /// The image's size, reported in the `Pulled` event and the node's `status.images`.
    #[serde(default)]
    pub image_size_bytes: Option<u64>,
    /// Seconds from the process's start until it answers probes (readiness, startup and liveness
    /// fail before). Default 0.
    #[serde(default)]
    pub ready_after_seconds: Option<u64>,
    /// One entry per attempt (attempt n uses entry n, the last entry repeats): how long the process
    /// runs and its exit code. An entry without `seconds` runs until stopped. Default: runs forever.
    #[serde(default)]
    pub runs: Vec<Run>,
    /// Seconds from each start after which the liveness (and startup) probe fails.
    #[serde(default)]
    pub liveness_fails_after_seconds: Option<u64>,
    /// Memory in use from some seconds after each start: steps, in time order. Above the
    /// container's `limits.memory` the container is OOM-killed (exit code 137, reason OOMKilled).
    #[serde(default)]
    pub memory: Vec<MemoryStep>,
    /// Time an exec/httpGet `preStop` hook takes (a `sleep` hook takes its own seconds). Default 0.
    #[serde(default)]
    pub pre_stop_seconds: Option<u64>,
    /// How the process reacts to SIGTERM: exits after `seconds` with `exitCode`. Without it the
    /// process ignores SIGTERM and is killed (SIGKILL, exit code 137) when the grace period ends.
    #[serde(default)]
    pub stop: Option<Stop>,
}

/// One attempt of a container.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Run {
    /// Seconds the process runs before it exits; absent: until stopped.
    #[serde(default)]
    pub seconds: Option<u64>,
    /// Exit code (0 to 255). Default 0.
    #[serde(default)]
    pub exit_code: u8,
}

/// Memory in use from `afterSeconds` after a start.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MemoryStep {
    /// Seconds after the start.
    #[serde(default)]
    pub after_seconds: u64,
    /// Memory in use, a quantity such as `600Mi`.
    pub bytes: Quantity,
}

/// SIGTERM handling.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Stop {
    /// Seconds from SIGTERM to exit.
    #[serde(default)]
    pub seconds: u64,
    /// Exit code (0 to 255). Default 0.
    #[serde(default)]
    pub exit_code: u8,
}

/// A Scenario-level rule: pods of `namespace` (any when absent) matching `selector` (every pod when
/// absent), container `container` (every container when absent), do `behavior`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BehaviorRule {
    /// Namespace, or every namespace.
    pub namespace: Option<String>,
    /// Label selector, or every pod.
    pub selector: Option<LabelSelector>,
    /// Container name, or every container.
    pub container: Option<String>,
    /// What the selected containers do.
    pub behavior: ContainerBehavior,
}

impl BehaviorRule {
    fn matches(&self, pod: &Pod, container: &str) -> bool {
        self.namespace
            .as_deref()
            .is_none_or(|ns| ns == pod.metadata.namespace())
            && self
                .selector
                .as_ref()
                .is_none_or(|s| s.matches(&pod.metadata.labels))
            && self.container.as_deref().is_none_or(|c| c == container)
    }
}

impl ContainerBehavior {
    /// The attempt's run (`attempt` counts from 0; the last entry repeats).
    pub fn run(&self, attempt: u32) -> Run {
        let i = usize::try_from(attempt).unwrap_or(usize::MAX);
        self.runs
            .get(i)
            .or_else(|| self.runs.last())
            .cloned()
            .unwrap_or_default()
    }

    /// True when image pulls are modelled for this container.
    pub fn models_pulls(&self) -> bool {
        self.pull_seconds.is_some() || self.pull_error.is_some()
    }
}

/// Parses an annotation value and checks it against the pod's containers. Errors carry a field
/// path relative to the annotation (e.g. `containers.app.runs[0].exitCode: ...`).
///
/// # Errors
/// A message naming the field path: bad YAML, an unknown field, a wrong type, a container the pod
/// does not have, memory steps out of time order or negative.
pub fn parse_annotation(value: &str, container_names: &[&str]) -> Result<PodBehavior, String> {
    let de = serde_yaml::Deserializer::from_str(value);
    let parsed: PodBehavior = serde_path_to_error::deserialize(de).map_err(|e| {
        let path = e.path().to_string();
        let mut inner = e.into_inner().to_string();
        // serde_yaml's message repeats part of the path and ends with the position in the
        // annotation's text; the caller names the annotation's own line.
        if let Some(at) = inner.rfind(" at line ") {
            inner.truncate(at);
        }
        if let Some((prefix, rest)) = inner.split_once(": ") {
            if path.starts_with(prefix) {
                inner = rest.to_string();
            }
        }
        if path == "." || path.is_empty() {
            inner
        } else {
            format!("{path}: {inner}")
        }
    })?;
    for (name, b) in &parsed.containers {
        if !container_names.contains(&name.as_str()) {
            return Err(format!(
                "containers.{name}: Not found: the pod has no container {name:?}"
            ));
        }
        validate(b).map_err(|e| format!("containers.{name}.{e}"))?;
    }
    Ok(parsed)
}

/// Checks one container behavior (used for annotations and Scenario rules alike).
///
/// # Errors
/// `<field>: <problem>`.
pub fn validate(b: &ContainerBehavior) -> Result<(), String> {
    let mut last = None;
    for (i, m) in b.memory.iter().enumerate() {
        if m.bytes.is_negative() {
            return Err(format!(
                "memory[{i}].bytes: Invalid value: {:?}: must be greater than or equal to 0",
                m.bytes.to_string()
            ));
        }
        if last.is_some_and(|l| m.after_seconds < l) {
            return Err(format!(
                "memory[{i}].afterSeconds: Invalid value: {}: steps must be in time order",
                m.after_seconds
            ));
        }
        last = Some(m.after_seconds);
    }
    Ok(())
}

/// Resolves what each container of `pod` does: its annotation entry, else the first matching rule,
/// else the default. An annotation that does not parse is ignored here (manifests are checked when
/// loaded; see `parse_annotation`).
pub fn resolve(pod: &Pod, rules: &[BehaviorRule], container: &str) -> Arc<ContainerBehavior> {
    if let Some(v) = pod.metadata.annotations.get(BEHAVIOR_ANNOTATION) {
        let names: Vec<&str> = pod
            .spec
            .init_containers
            .iter()
            .chain(&pod.spec.containers)
            .map(|c| c.name.as_str())
            .collect();
        match parse_annotation(v, &names) {
            Ok(mut b) => {
                if let Some(found) = b.containers.remove(container) {
                    return Arc::new(found);
                }
            }
            Err(e) => {
                tracing::warn!(pod = %pod.key(), error = %e, "ignoring {BEHAVIOR_ANNOTATION}");
            }
        }
    }
    rules
        .iter()
        .find(|r| r.matches(pod, container))
        .map_or_else(default_behavior, |r| Arc::new(r.behavior.clone()))
}

/// The behaviour of a container no rule or annotation describes, one allocation for all.
fn default_behavior() -> Arc<ContainerBehavior> {
    static DEFAULT: LazyLock<Arc<ContainerBehavior>> = LazyLock::new(Default::default);
    Arc::clone(&DEFAULT)
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_types::core::Container;

    fn pod(annotation: Option<&str>) -> Pod {
        let mut p = Pod::default();
        p.metadata.name = "web".into();
        p.metadata.labels.insert("app".into(), "web".into());
        p.spec.containers = vec![
            Container {
                name: "app".into(),
                ..Default::default()
            },
            Container {
                name: "log".into(),
                ..Default::default()
            },
        ]
        .into();
        if let Some(a) = annotation {
            p.metadata
                .annotations
                .insert(BEHAVIOR_ANNOTATION.into(), a.into());
        }
        p
    }

    #[test]
    fn runs_repeat_the_last_attempt() {
        let b: PodBehavior = serde_yaml::from_str(
            "containers: {app: {runs: [{seconds: 3, exitCode: 1}, {seconds: 5, exitCode: 2}]}}",
        )
        .unwrap();
        let app = &b.containers["app"];
        assert_eq!(
            app.run(0),
            Run {
                seconds: Some(3),
                exit_code: 1
            }
        );
        assert_eq!(
            app.run(1),
            Run {
                seconds: Some(5),
                exit_code: 2
            }
        );
        assert_eq!(
            app.run(7),
            Run {
                seconds: Some(5),
                exit_code: 2
            }
        );
        assert_eq!(ContainerBehavior::default().run(0), Run::default());
    }

    #[test]
    fn bad_annotations_name_the_field_path() {
        let names = ["app", "log"];
        let e =
            parse_annotation("containers: {app: {runs: [{exitCode: 300}]}}", &names).unwrap_err();
        assert!(e.starts_with("containers.app.runs[0].exitCode: "), "{e}");
        let e = parse_annotation("containers: {app: {runz: []}}", &names).unwrap_err();
        assert!(
            e.starts_with("containers.app.runz: unknown field `runz`, expected one of"),
            "{e}"
        );
        let e = parse_annotation("containers: {db: {}}", &names).unwrap_err();
        assert_eq!(
            e,
            "containers.db: Not found: the pod has no container \"db\""
        );
        let e = parse_annotation(
            "containers: {app: {memory: [{afterSeconds: 10, bytes: 1Gi}, {afterSeconds: 5, bytes: 2Gi}]}}",
            &names,
        )
        .unwrap_err();
        assert_eq!(
            e,
            "containers.app.memory[1].afterSeconds: Invalid value: 5: steps must be in time order"
        );
        let e =
            parse_annotation("containers: {app: {memory: [{bytes: 1.5.5}]}}", &names).unwrap_err();
        assert!(e.starts_with("containers.app.memory[0].bytes: "), "{e}");
    }

    #[test]
    fn annotation_wins_over_rules_and_first_rule_wins() {
        let rules = vec![
            BehaviorRule {
                selector: Some(LabelSelector::parse("app=web").unwrap()),
                container: Some("app".into()),
                behavior: ContainerBehavior {
                    ready_after_seconds: Some(7),
                    ..Default::default()
                },
                ..Default::default()
            },
            BehaviorRule {
                behavior: ContainerBehavior {
                    ready_after_seconds: Some(9),
                    ..Default::default()
                },
                ..Default::default()
            },
        ];
        let p = pod(None);
        assert_eq!(resolve(&p, &rules, "app").ready_after_seconds, Some(7));
        assert_eq!(resolve(&p, &rules, "log").ready_after_seconds, Some(9));
        let p = pod(Some(
            "{\"containers\": {\"app\": {\"readyAfterSeconds\": 3}}}",
        ));
        assert_eq!(resolve(&p, &rules, "app").ready_after_seconds, Some(3));
        assert_eq!(resolve(&p, &rules, "log").ready_after_seconds, Some(9));
        assert_eq!(resolve(&p, &[], "log"), ContainerBehavior::default().into());
        // Containers no rule describes share one default behaviour.
        let other = Pod::default();
        assert!(Arc::ptr_eq(
            &resolve(&p, &[], "log"),
            &resolve(&other, &rules[..1], "app")
        ));
    }
}
