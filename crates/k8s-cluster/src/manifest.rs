//! Reading Kubernetes YAML: a multi-document stream of ordinary manifests (`kind: List` flattened, as
//! `kubectl get -o yaml` prints it), plus at most one `KubeSchedulerConfiguration` and one `Scenario`.
//! Every error names the file, the line of the document and the field path, like
//! `scenarios/x.yaml:14: spec.containers[0].resources.requests.cpu: invalid quantity "1.5.5": ...`.
//! A scheduler configuration rejected after decoding (validation, unknown plugins, bad plugin args)
//! points at the line of the field it names too ([`scheduler_config_error`], via
//! `yaml_position`).

use std::path::Path;

use serde::de::DeserializeOwned;

use k8s_sched::config::KubeSchedulerConfiguration;
use k8s_sched::ConfigError;
use k8s_types::apiextensions;
use k8s_types::meta::TypeMeta;
use k8s_types::object::{Kind, Object, Unstructured, UNSIMULATED_BUILTIN_KINDS};

use crate::scenario::Scenario;
use crate::yaml_position::Positions;

/// apiVersion of k8s-mini's own `Scenario` document.
pub const SCENARIO_API_VERSION: &str = "sim.k8s-mini.io/v1alpha1";
/// apiVersion of kube-scheduler's configuration.
pub const SCHEDULER_CONFIG_API_VERSION: &str = "kubescheduler.config.k8s.io/v1";

/// Where a document came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Source {
    /// The file as the user named it.
    pub file: String,
    /// 1-based line where the document (or its `kind: List` item's list) starts, or, in an error, of
    /// the field the error names when it is known; 0 when the error is about the whole file (e.g. it
    /// cannot be read).
    pub line: usize,
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.line == 0 {
            write!(f, "{}", self.file)
        } else {
            write!(f, "{}:{}", self.file, self.line)
        }
    }
}

/// A bad-input error: file, line, field path and what is wrong. The CLI exits 2 on it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{source_loc}: {}{message}", path_prefix(.path))]
pub struct ManifestError {
    /// File and line.
    pub source_loc: Source,
    /// Field path inside the document (`spec.containers[0].image`), empty when not known.
    pub path: String,
    /// What is wrong.
    pub message: String,
}

fn path_prefix(path: &str) -> String {
    if path.is_empty() || path == "." {
        String::new()
    } else {
        format!("{path}: ")
    }
}

/// One decoded document.
#[derive(Clone, Debug)]
pub enum Document {
    /// An API object to create.
    Object(Box<Object>),
    /// A scheduler configuration.
    SchedulerConfig(Box<KubeSchedulerConfiguration>),
    /// The scenario document.
    Scenario(Box<Scenario>),
}

/// A decoded document with where it came from.
#[derive(Clone, Debug)]
pub struct Loaded {
    /// The document.
    pub doc: Document,
    /// Its source.
    pub source: Source,
    /// The lines of the document's fields, kept for a [`Document::SchedulerConfig`] and a custom
    /// resource only (whose errors are found after decoding: see [`scheduler_config_error`], and
    /// the apiserver's schema validation); `None` otherwise.
    pub positions: Option<Positions>,
}

/// Everything read from a stream: documents and warnings (e.g. kinds kept but not simulated).
#[derive(Clone, Debug, Default)]
pub struct Manifests {
    /// Documents in file order.
    pub docs: Vec<Loaded>,
    /// Warnings, one line each, already prefixed with file and line.
    pub warnings: Vec<String>,
}

/// The largest input file k8s-mini reads: 64 MiB (docs/scenario-format.md "Limits"). A dump of a
/// 5,000-node cluster with 150,000 pods is about half of it in YAML; anything larger is refused
/// before it is read.
pub const MAX_FILE_BYTES: u64 = 64 << 20;

/// The most objects one input may hold, counting each document and each item of a `kind: List`:
/// 200,000 (upstream's tested scale is 5,000 nodes and 150,000 pods).
pub const MAX_OBJECTS: usize = 200_000;

/// Reads a YAML file.
///
/// # Errors
/// A [`ManifestError`] for an unreadable file, one larger than [`MAX_FILE_BYTES`], or any bad
/// document.
pub fn load_file(path: &Path) -> Result<Manifests, ManifestError> {
    let name = path.display().to_string();
    let err = |message: String| ManifestError {
        source_loc: Source {
            file: name.clone(),
            line: 0,
        },
        path: String::new(),
        message,
    };
    let size = std::fs::metadata(path)
        .map_err(|e| err(format!("cannot read file: {e}")))?
        .len();
    if size > MAX_FILE_BYTES {
        return Err(err(format!(
            "the file is {size} bytes, more than the limit of {MAX_FILE_BYTES} bytes (64 MiB)"
        )));
    }
    let text = std::fs::read_to_string(path).map_err(|e| err(format!("cannot read file: {e}")))?;
    parse_stream(&name, &text)
}

/// Splits a YAML stream into documents: `(first line number, text)`. Lines are kept (the separator
/// line is blanked) so that positions inside a document stay valid.
fn split_documents(text: &str) -> Vec<(usize, String)> {
    let mut docs = Vec::new();
    let mut current = String::new();
    let mut start = 1;
    for (idx, line) in text.lines().enumerate() {
        let is_sep =
            line.starts_with("---") && line[3..].chars().next().is_none_or(char::is_whitespace);
        let is_end = line == "..." || line.starts_with("... ");
        if is_sep || is_end {
            docs.push((start, std::mem::take(&mut current)));
            start = idx + 1;
            if is_sep {
                // Keep content after `--- ` on the same line, blank the marker itself.
                current.push_str("   ");
                current.push_str(&line[3..]);
            }
            current.push('\n');
            continue;
        }
        current.push_str(line);
        current.push('\n');
    }
    docs.push((start, current));
    docs.into_iter()
        .filter(|(_, d)| first_content_line(d).is_some())
        .collect()
}

/// 0-based index of the first line of `doc` that is neither blank nor a comment.
fn first_content_line(doc: &str) -> Option<usize> {
    doc.lines().position(|l| {
        let t = l.trim();
        !t.is_empty() && !t.starts_with('#')
    })
}

/// Reads a YAML stream (`name` is used in messages).
///
/// # Errors
/// The first bad document, as a [`ManifestError`].
pub fn parse_stream(name: &str, text: &str) -> Result<Manifests, ManifestError> {
    let mut out = Manifests::default();
    let mut unsimulated: Vec<(Source, String)> = Vec::new();
    for (start, doc) in split_documents(text) {
        let at = |line: usize| Source {
            file: name.to_string(),
            line,
        };
        // Errors about the whole document point at its first line of content (e.g. `apiVersion:`).
        let head = start + first_content_line(&doc).unwrap_or(0);
        let value: serde_yaml::Value = serde_yaml::from_str(&doc).map_err(|e| ManifestError {
            source_loc: at(e.location().map_or(head, |l| start + l.line() - 1)),
            path: String::new(),
            message: format!("invalid YAML: {}", strip_location(&e.to_string())),
        })?;
        if value.is_null() {
            continue;
        }
        let type_meta: TypeMeta =
            serde_yaml::from_value(value.clone()).map_err(|e| ManifestError {
                source_loc: at(start),
                path: String::new(),
                message: format!(
                    "not a Kubernetes object: {}",
                    strip_location(&e.to_string())
                ),
            })?;
        if type_meta.kind == "List" {
            let items = value
                .get("items")
                .and_then(|v| v.as_sequence())
                .cloned()
                .unwrap_or_default();
            if out.docs.len() + items.len() > MAX_OBJECTS {
                return Err(ManifestError {
                    source_loc: at(head),
                    path: "items".into(),
                    message: format!(
                        "{} items: more than {MAX_OBJECTS} objects in one input (the limit)",
                        items.len()
                    ),
                });
            }
            for (i, item) in items.into_iter().enumerate() {
                let item_type: TypeMeta = serde_yaml::from_value(item.clone()).unwrap_or_default();
                let decoded = decode_value(&item_type, item).map_err(|mut e| {
                    e.path = if e.path.is_empty() {
                        format!("items[{i}]")
                    } else {
                        format!("items[{i}].{}", e.path)
                    };
                    e
                });
                let positions = || {
                    Positions::parse(&doc, start).and_then(|p| p.subtree(&format!("items[{i}]")))
                };
                push(&mut out, &mut unsimulated, decoded, at(head), positions)?;
            }
            continue;
        }
        let decoded = decode_text(&type_meta, &doc, start);
        push(&mut out, &mut unsimulated, decoded, at(head), || {
            Positions::parse(&doc, start)
        })?;
    }
    out.warnings.extend(unsimulated_warning(&unsimulated));
    Ok(out)
}

/// The warning about the objects of a stream kept in the store but not simulated: the document's
/// own when there is one, else one warning at the first of them naming every kind in file order
/// (with a count when a kind has several objects), so that a dump with hundreds of ConfigMaps
/// says it once.
fn unsimulated_warning(items: &[(Source, String)]) -> Option<String> {
    let (first, only) = items.first()?;
    if items.len() == 1 {
        return Some(format!("{first}: {only}"));
    }
    let mut kinds: Vec<(String, usize)> = Vec::new();
    for (_, w) in items {
        let label = match w.split_once(" is kept in the store") {
            Some((kind, rest)) if rest.starts_with(';') => {
                format!("{kind} (the scheduler reads its selector)")
            }
            Some((kind, _)) => kind.to_string(),
            None => w.clone(),
        };
        match kinds.iter_mut().find(|(k, _)| *k == label) {
            Some((_, n)) => *n += 1,
            None => kinds.push((label, 1)),
        }
    }
    let list: Vec<String> = kinds
        .iter()
        .map(|(k, n)| {
            if *n > 1 {
                format!("{k} (x{n})")
            } else {
                k.clone()
            }
        })
        .collect();
    Some(format!(
        "{first}: {} objects are kept in the store but not simulated by k8s-mini: {}",
        items.len(),
        list.join(", ")
    ))
}

fn push(
    out: &mut Manifests,
    unsimulated: &mut Vec<(Source, String)>,
    decoded: Result<Decoded, PartialError>,
    source: Source,
    positions: impl FnOnce() -> Option<Positions>,
) -> Result<(), ManifestError> {
    if out.docs.len() >= MAX_OBJECTS {
        return Err(ManifestError {
            source_loc: source,
            path: String::new(),
            message: format!("more than {MAX_OBJECTS} objects in one input (the limit)"),
        });
    }
    match decoded {
        Ok(Decoded { doc, warning }) => {
            if let Document::Object(obj) = &doc {
                if let Err((path, message)) = check_behavior(obj) {
                    let line_path = path.replace('[', ".").replace(']', "");
                    let line = positions()
                        .map_or(source.line, |p| p.line_of(&behavior_line_path(&line_path)));
                    return Err(ManifestError {
                        source_loc: Source { line, ..source },
                        path,
                        message,
                    });
                }
            }
            if let Some(w) = warning {
                unsimulated.push((source.clone(), w));
            }
            let positions = match &doc {
                Document::SchedulerConfig(_) => positions(),
                Document::Object(o) if is_custom_resource(o) => positions(),
                _ => None,
            };
            out.docs.push(Loaded {
                doc,
                source,
                positions,
            });
            Ok(())
        }
        Err(e) => Err(ManifestError {
            source_loc: Source {
                line: e.line.unwrap_or(source.line),
                ..source
            },
            path: e.path,
            message: e.message,
        }),
    }
}

/// The annotation's key as a position path (`metadata.annotations.sim.k8s-mini.io/behavior`): the
/// part of a behavior error's path that exists in the YAML document.
fn behavior_line_path(path: &str) -> String {
    let key = k8s_kubelet::behavior::BEHAVIOR_ANNOTATION;
    match path.find(key) {
        Some(at) => path[..at + key.len()].to_string(),
        None => path.to_string(),
    }
}

/// Checks the `sim.k8s-mini.io/behavior` annotation of a Pod or of a Deployment's / ReplicaSet's / Job's / DaemonSet's / StatefulSet's / CronJob's
/// pod template against its containers (`docs/scenario-format.md`). The error's path runs from the
/// object's root into the annotation's value, e.g.
/// `metadata.annotations[sim.k8s-mini.io/behavior].containers.app.runs[0].exitCode`.
fn check_behavior(obj: &Object) -> Result<(), (String, String)> {
    let (prefix, meta, spec) = match obj {
        Object::Pod(p) => ("", &p.metadata, &*p.spec),
        Object::Deployment(d) => (
            "spec.template.",
            &d.spec.template.metadata,
            &d.spec.template.spec,
        ),
        Object::ReplicaSet(r) => (
            "spec.template.",
            &r.spec.template.metadata,
            &r.spec.template.spec,
        ),
        Object::Job(j) => (
            "spec.template.",
            &j.spec.template.metadata,
            &j.spec.template.spec,
        ),
        Object::DaemonSet(d) => (
            "spec.template.",
            &d.spec.template.metadata,
            &d.spec.template.spec,
        ),
        Object::StatefulSet(s) => (
            "spec.template.",
            &s.spec.template.metadata,
            &s.spec.template.spec,
        ),
        Object::CronJob(cj) => (
            "spec.jobTemplate.spec.template.",
            &cj.spec.job_template.spec.template.metadata,
            &cj.spec.job_template.spec.template.spec,
        ),
        _ => return Ok(()),
    };
    let key = k8s_kubelet::behavior::BEHAVIOR_ANNOTATION;
    let Some(value) = meta.annotations.get(key) else {
        return Ok(());
    };
    let names: Vec<&str> = spec
        .init_containers
        .iter()
        .chain(&spec.containers)
        .map(|c| c.name.as_str())
        .collect();
    k8s_kubelet::behavior::parse_annotation(value, &names)
        .map(|_| ())
        .map_err(|e| {
            let (field, message) = match e.split_once(": ") {
                Some((f, m)) if f.starts_with("containers") => (format!(".{f}"), m.to_string()),
                _ => (String::new(), e),
            };
            (
                format!("{prefix}metadata.annotations[{key}]{field}"),
                message,
            )
        })
}

struct Decoded {
    doc: Document,
    warning: Option<String>,
}

struct PartialError {
    line: Option<usize>,
    path: String,
    message: String,
}

/// Removes every ` at line N column M` that serde_yaml puts in its messages: those numbers are
/// relative to the document, and the error already carries the line in the file.
fn strip_location(msg: &str) -> String {
    let mut out = String::with_capacity(msg.len());
    let mut rest = msg;
    while let Some(i) = rest.find(" at line ") {
        out.push_str(&rest[..i]);
        let tail = &rest[i + " at line ".len()..];
        let digits = tail.chars().take_while(char::is_ascii_digit).count();
        let after_line = &tail[digits..];
        let skip = match after_line.strip_prefix(" column ") {
            Some(col) => {
                let col_digits = col.chars().take_while(char::is_ascii_digit).count();
                digits + " column ".len() + col_digits
            }
            None => digits,
        };
        if digits == 0 {
            out.push_str(" at line ");
            rest = tail;
            continue;
        }
        rest = &tail[skip..];
    }
    out.push_str(rest);
    out
}

/// A `KubeSchedulerConfiguration` rejected by the scheduler (validation, unknown plugin names, bad
/// plugin args, an invalid profile), as a [`ManifestError`] at the line of the field the error names:
/// `scenario.yaml:14: profiles[0].plugins.score.enabled[1].name: Invalid value: "Nope": ...`. The
/// scheduler's message is kept as it is, its field path moved to [`ManifestError::path`]. `positions`
/// are the document's ([`Loaded::positions`]); a field the document leaves out points at its deepest
/// parent that is there. Without positions, or for an error that names no field, the error is at
/// `source` (the document's first line). When several field errors are aggregated
/// (`[a: ..., b: ...]`), the line is the first one's and the message the whole aggregate.
pub fn scheduler_config_error(
    source: &Source,
    positions: Option<&Positions>,
    err: &ConfigError,
) -> ManifestError {
    let (field, path, message) = match err {
        ConfigError::Decode { path, message } => (path.clone(), path.clone(), message.clone()),
        ConfigError::Invalid(errors) => match errors.as_slice() {
            [one] => (one.field.clone(), one.field.clone(), one.detail_message()),
            many => (
                many.first().map(|e| e.field.clone()).unwrap_or_default(),
                String::new(),
                err.to_string(),
            ),
        },
        // Framework errors are `<path>: <message>` (k8s-sched runtime) or have no path.
        ConfigError::Framework(text) => match text.split_once(": ") {
            Some((p, rest)) if is_field_path(p) => (p.to_string(), p.to_string(), rest.to_string()),
            _ => (String::new(), String::new(), text.clone()),
        },
    };
    let line = match positions {
        Some(p) if !field.is_empty() => p.line_of(&field),
        _ => source.line,
    };
    ManifestError {
        source_loc: Source {
            file: source.file.clone(),
            line,
        },
        path,
        message,
    }
}

/// Whether `s` looks like a field path (`profiles[0].pluginConfig[1].args`), not like prose.
fn is_field_path(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '[' | ']' | '_' | '-' | '/'))
}

/// What a `(apiVersion, kind)` pair is.
enum Target {
    Typed(Kind),
    SchedulerConfig,
    Scenario,
    /// Kept unstructured, with whether it is namespaced and a warning, if any.
    Unstructured(bool, Option<String>),
}

fn classify(tm: &TypeMeta) -> Result<Target, PartialError> {
    let err = |path: &str, message: String| PartialError {
        line: None,
        path: path.to_string(),
        message,
    };
    if tm.kind.is_empty() {
        return Err(err(
            "kind",
            "Required value: every document needs a kind".into(),
        ));
    }
    if tm.api_version.is_empty() {
        return Err(err(
            "apiVersion",
            "Required value: every document needs an apiVersion".into(),
        ));
    }
    if let Some(kind) = Kind::typed(&tm.api_version, &tm.kind) {
        return Ok(Target::Typed(kind));
    }
    match (tm.api_version.as_str(), tm.kind.as_str()) {
        (SCHEDULER_CONFIG_API_VERSION, "KubeSchedulerConfiguration") => {
            return Ok(Target::SchedulerConfig)
        }
        (SCENARIO_API_VERSION, "Scenario") => return Ok(Target::Scenario),
        // Served by the apiserver's apiextensions part (k8s-api `apiextensions`).
        (apiextensions::API_VERSION, apiextensions::KIND) => {
            return Ok(Target::Unstructured(false, None))
        }
        _ => {}
    }
    let group = tm.api_version.rsplit_once('/').map_or("", |(g, _)| g);
    let builtin_group = group.is_empty() || !group.contains('.') || group.ends_with(".k8s.io");
    if let Some((_, namespaced)) = UNSIMULATED_BUILTIN_KINDS
        .iter()
        .find(|(k, _)| *k == tm.kind)
        .filter(|_| builtin_group)
    {
        // The scheduler reads these kinds' selectors (PodTopologySpread's default constraints,
        // upstream `helper.DefaultSelector`): say so rather than "not simulated".
        let read_by_scheduler = matches!(
            (tm.api_version.as_str(), tm.kind.as_str()),
            ("v1", "ReplicationController") | ("apps/v1", "StatefulSet")
        );
        let warning = if read_by_scheduler {
            format!(
                "{} {} is kept in the store; the scheduler reads its selector (PodTopologySpread's default spreading), nothing else of it is simulated by k8s-mini",
                tm.api_version, tm.kind
            )
        } else {
            format!(
                "{} {} is kept in the store but not simulated by k8s-mini",
                tm.api_version, tm.kind
            )
        };
        return Ok(Target::Unstructured(*namespaced, Some(warning)));
    }
    if builtin_group && !group.ends_with("x-k8s.io") {
        return Err(err(
            "",
            format!(
                "no matches for kind \"{}\" in version \"{}\"",
                tm.kind, tm.api_version
            ),
        ));
    }
    // A custom resource: its CRD (in the same input) gives its scope and schema; loading refuses
    // it without one (`load::check_custom_resource`).
    Ok(Target::Unstructured(true, None))
}

/// Whether `obj` is a custom resource (an untyped object of a non-built-in API group).
pub fn is_custom_resource(obj: &Object) -> bool {
    matches!(obj, Object::Other(u, _) if !is_builtin_api_version(&u.api_version))
}

/// Whether `api_version` names a built-in API group (core, `apps`, `*.k8s.io`, ...), as opposed
/// to a custom resource's group (`kubeflow.org`, `*.x-k8s.io`).
pub fn is_builtin_api_version(api_version: &str) -> bool {
    let group = api_version.rsplit_once('/').map_or("", |(g, _)| g);
    (group.is_empty() || !group.contains('.') || group.ends_with(".k8s.io"))
        && !group.ends_with("x-k8s.io")
}

/// The text or value a document is decoded from.
enum Input<'a> {
    /// A document's text and its first line in the file.
    Text(&'a str, usize),
    /// An item of a `kind: List` (positions are not known inside it).
    Value(serde_yaml::Value),
}

fn decode<T: DeserializeOwned>(input: &Input<'_>) -> Result<T, PartialError> {
    let conv = |e: serde_path_to_error::Error<serde_yaml::Error>, start: Option<usize>| {
        let line = start.and_then(|s| e.inner().location().map(|l| s + l.line() - 1));
        let path = e.path().to_string();
        let message = strip_location(&e.inner().to_string());
        // serde_yaml already prefixes some messages with the path; keep it once.
        let message = match message.strip_prefix(&format!("{path}: ")) {
            Some(rest) => rest.to_string(),
            None => message,
        };
        PartialError {
            line,
            path,
            message,
        }
    };
    match input {
        Input::Text(doc, start) => {
            serde_path_to_error::deserialize(serde_yaml::Deserializer::from_str(doc))
                .map_err(|e| conv(e, Some(*start)))
        }
        Input::Value(v) => serde_path_to_error::deserialize(v.clone()).map_err(|e| conv(e, None)),
    }
}

fn decode_text(tm: &TypeMeta, doc: &str, start: usize) -> Result<Decoded, PartialError> {
    decode_input(tm, &Input::Text(doc, start))
}

fn decode_value(tm: &TypeMeta, value: serde_yaml::Value) -> Result<Decoded, PartialError> {
    decode_input(tm, &Input::Value(value))
}

fn decode_input(tm: &TypeMeta, input: &Input<'_>) -> Result<Decoded, PartialError> {
    let target = classify(tm)?;
    let doc = match &target {
        Target::Typed(kind) => Document::Object(Box::new(decode_typed(kind, input)?)),
        Target::SchedulerConfig => Document::SchedulerConfig(Box::new(decode(input)?)),
        Target::Scenario => Document::Scenario(Box::new(decode(input)?)),
        Target::Unstructured(namespaced, _) => Document::Object(Box::new(Object::Other(
            Box::new(decode::<Unstructured>(input)?),
            *namespaced,
        ))),
    };
    let warning = match target {
        Target::Unstructured(_, w) => w,
        _ => None,
    };
    Ok(Decoded { doc, warning })
}

fn decode_typed(kind: &Kind, input: &Input<'_>) -> Result<Object, PartialError> {
    Ok(match kind {
        Kind::Namespace => Object::Namespace(decode(input)?),
        Kind::Node => Object::Node(decode(input)?),
        Kind::Pod => Object::Pod(decode(input)?),
        Kind::ReplicaSet => Object::ReplicaSet(decode(input)?),
        Kind::Deployment => Object::Deployment(decode(input)?),
        Kind::Job => Object::Job(decode(input)?),
        Kind::DaemonSet => Object::DaemonSet(decode(input)?),
        Kind::CronJob => Object::CronJob(decode(input)?),
        Kind::StatefulSet => Object::StatefulSet(decode(input)?),
        Kind::PersistentVolumeClaim => Object::PersistentVolumeClaim(decode(input)?),
        Kind::ControllerRevision => Object::ControllerRevision(decode(input)?),
        Kind::PriorityClass => Object::PriorityClass(decode(input)?),
        Kind::Event => Object::Event(decode(input)?),
        Kind::PodGroup => Object::PodGroup(decode(input)?),
        Kind::Workload => Object::Workload(decode(input)?),
        Kind::SchedulingPodGroup => Object::SchedulingPodGroup(decode(input)?),
        Kind::PodDisruptionBudget => Object::PodDisruptionBudget(decode(input)?),
        Kind::Lease => Object::Lease(decode(input)?),
        Kind::Service => Object::Service(decode(input)?),
        Kind::EndpointSlice => Object::EndpointSlice(decode(input)?),
        Kind::ResourceQuota => Object::ResourceQuota(decode(input)?),
        Kind::LimitRange => Object::LimitRange(decode(input)?),
        Kind::RuntimeClass => Object::RuntimeClass(decode(input)?),
        Kind::DeviceClass => Object::DeviceClass(decode(input)?),
        Kind::ResourceSlice => Object::ResourceSlice(decode(input)?),
        Kind::ResourceClaim => Object::ResourceClaim(decode(input)?),
        Kind::ResourceClaimTemplate => Object::ResourceClaimTemplate(decode(input)?),
        Kind::Other { namespaced, .. } => Object::Other(decode(input)?, *namespaced),
    })
}

/// Decodes an object of `kind` from JSON (a `patch` step's patched object, a `serve` request body). The error is
/// `<field path>: <message>`.
pub fn decode_object_json(kind: &Kind, value: serde_json::Value) -> Result<Object, String> {
    let value: serde_yaml::Value = serde_yaml::to_value(value).map_err(|e| e.to_string())?;
    decode_typed(kind, &Input::Value(value)).map_err(|e| {
        if e.path.is_empty() {
            e.message
        } else {
            format!("{}: {}", e.path, e.message)
        }
    })
}

/// Decodes an inline manifest (e.g. a Scenario step's `apply`) found in the document at `source`;
/// `path` is the manifest's own path in that document, used as the prefix of field paths.
///
/// # Errors
/// A [`ManifestError`] naming `path.<field>`.
pub fn decode_inline(
    value: serde_yaml::Value,
    source: &Source,
    path: &str,
) -> Result<Vec<Object>, ManifestError> {
    let mk = |p: String, message: String| ManifestError {
        source_loc: source.clone(),
        path: p,
        message,
    };
    let tm: TypeMeta = serde_yaml::from_value(value.clone())
        .map_err(|e| mk(path.to_string(), strip_location(&e.to_string())))?;
    let items = if tm.kind == "List" {
        value
            .get("items")
            .and_then(|v| v.as_sequence())
            .cloned()
            .unwrap_or_default()
    } else {
        vec![value]
    };
    let mut out = Vec::new();
    for item in items {
        let item_tm: TypeMeta = serde_yaml::from_value(item.clone()).unwrap_or_default();
        let decoded = decode_value(&item_tm, item).map_err(|e| {
            let p = if e.path.is_empty() {
                path.to_string()
            } else {
                format!("{path}.{}", e.path)
            };
            mk(p, e.message)
        })?;
        match decoded.doc {
            Document::Object(o) => out.push(*o),
            _ => {
                return Err(mk(
                    path.to_string(),
                    "only API objects can be applied by a step".into(),
                ))
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> String {
        parse_stream("t.yaml", text).unwrap_err().to_string()
    }

    #[test]
    fn invalid_quantity_names_file_line_and_field_path() {
        let text = "apiVersion: v1\nkind: Node\nmetadata: {name: n}\n---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: c\n    image: i\n    resources:\n      requests:\n        cpu: 1.5.5\n";
        let e = err(text);
        assert!(
            e.starts_with(
                "t.yaml:15: spec.containers[0].resources.requests.cpu: invalid quantity \"1.5.5\""
            ),
            "{e}"
        );
    }

    #[test]
    fn lists_are_flattened_and_unknown_builtin_kinds_rejected() {
        let text = "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Pod\n  metadata: {name: a}\n- apiVersion: v1\n  kind: ReplicationController\n  metadata: {name: s}\n";
        let m = parse_stream("d.yaml", text).unwrap();
        assert_eq!(m.docs.len(), 2);
        assert_eq!(m.warnings.len(), 1);
        assert_eq!(
            m.warnings[0],
            "d.yaml:1: v1 ReplicationController is kept in the store; the scheduler reads its selector (PodTopologySpread's default spreading), nothing else of it is simulated by k8s-mini"
        );
        let e = err("apiVersion: v1\nkind: Pdo\nmetadata: {name: a}\n");
        assert_eq!(e, "t.yaml:1: no matches for kind \"Pdo\" in version \"v1\"");
        let e = err("apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Pod\n  metadata: {name: a}\n  spec: {containers: [{name: c, resources: {limits: {cpu: x}}}]}\n");
        assert!(e.starts_with("t.yaml:1: items[0].spec.containers[0].resources.limits.cpu: invalid quantity \"x\""), "{e}");
    }

    /// A whole-cluster dump holds kinds from every built-in group (v1.32 `kubectl api-resources`):
    /// they load, kept with a warning, cluster-scoped where upstream has them so.
    #[test]
    fn every_builtin_kind_of_a_dump_loads() {
        let text = "apiVersion: storage.k8s.io/v1\nkind: VolumeAttachment\nmetadata: {name: csi-1}\n---\napiVersion: flowcontrol.apiserver.k8s.io/v1\nkind: FlowSchema\nmetadata: {name: exempt}\n---\napiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\nmetadata: {name: p}\n---\napiVersion: certificates.k8s.io/v1\nkind: CertificateSigningRequest\nmetadata: {name: csr-1}\n";
        let m = parse_stream("d.yaml", text).unwrap();
        assert_eq!(m.docs.len(), 4);
        // One warning for the stream, at the first such document, naming every kind.
        assert_eq!(
            m.warnings,
            vec![
                "d.yaml:1: 4 objects are kept in the store but not simulated by k8s-mini: storage.k8s.io/v1 VolumeAttachment, flowcontrol.apiserver.k8s.io/v1 FlowSchema, admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy, certificates.k8s.io/v1 CertificateSigningRequest",
            ]
        );
        let m2 = parse_stream("d.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\napiVersion: v1\nkind: ReplicationController\nmetadata: {name: r}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n").unwrap();
        assert_eq!(
            m2.warnings,
            vec!["d.yaml:1: 3 objects are kept in the store but not simulated by k8s-mini: v1 ConfigMap (x2), v1 ReplicationController (the scheduler reads its selector)"]
        );
        let Document::Object(obj) = &m.docs[0].doc else {
            panic!("not an object")
        };
        let Object::Other(u, namespaced) = &**obj else {
            panic!("not unstructured")
        };
        assert_eq!((u.kind.as_str(), *namespaced), ("VolumeAttachment", false));
    }

    #[test]
    fn bad_yaml_and_missing_kind_are_errors() {
        let e = err("a: [1, 2\n");
        assert!(e.starts_with("t.yaml:"), "{e}");
        assert!(e.contains("invalid YAML"), "{e}");
        let e = err("---\n# comment\n---\nmetadata: {name: a}\n");
        assert_eq!(
            e,
            "t.yaml:4: kind: Required value: every document needs a kind"
        );
        assert_eq!(
            strip_location("did not find expected ',' at line 5 column 5, while parsing a flow sequence at line 3 column 15"),
            "did not find expected ',', while parsing a flow sequence"
        );
    }

    #[test]
    fn documents_keep_their_line_numbers() {
        let text = "# header\n---\napiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n---\napiVersion: v1\nkind: Namespace\nmetadata: {name: b}\n";
        let m = parse_stream("n.yaml", text).unwrap();
        let lines: Vec<usize> = m.docs.iter().map(|d| d.source.line).collect();
        assert_eq!(lines, vec![3, 7]);
    }
}
