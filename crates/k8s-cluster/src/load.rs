//! Loading a run's input into a cluster: the scheduler configuration and the Scenario from the
//! documents, the cluster built, the initial objects applied in dependency order (namespaces,
//! priority classes, nodes, workload controllers, the rest), owner references re-mapped to the new
//! uids, and the Scenario's steps decoded.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use k8s_sched::config::KubeSchedulerConfiguration;
use k8s_sched::explain::PodKey;
use k8s_types::apiextensions::{crd_kind, CustomResourceDefinition};
use k8s_types::apiserver::{ApiClient, ApiExt};
use k8s_types::core::Namespace;
use k8s_types::meta::ObjectMeta;
use k8s_types::object::{Kind, Object};

use crate::cluster::{Cluster, ClusterConfig, ClusterError};
use crate::manifest::{self, Document, ManifestError, Manifests, Source};
use crate::run::RunOptions;
use crate::scenario::Scenario;
use crate::steps::{decode_steps, ReadyStep};
use crate::yaml_position::Positions;

/// A loaded input, ready to run: the cluster with the initial objects applied, the Scenario and its
/// decoded steps, and what the output needs from loading.
pub(crate) struct Prepared {
    pub(crate) cluster: Cluster,
    pub(crate) scenario: Scenario,
    pub(crate) steps: Vec<ReadyStep>,
    pub(crate) other_kinds: BTreeSet<(String, String, bool)>,
    pub(crate) warnings: Vec<String>,
    /// The run loop's state when the snapshot the run resumes from was taken.
    pub(crate) resumed: Option<crate::snapshot::LoopState>,
}

pub(crate) fn prepare(
    manifests: Manifests,
    path: &Path,
    opts: &RunOptions,
) -> Result<Prepared, ManifestError> {
    let mut scheduler_config: Option<KubeSchedulerConfiguration> = None;
    let mut scheduler_config_source: Option<Source> = None;
    // The lines of the configuration's fields, for errors found when the scheduler is built.
    let mut scheduler_config_positions = None;
    let mut scenario: Option<(Scenario, Source)> = None;
    let mut objects: Vec<(Object, Source, Option<Positions>)> = Vec::new();
    for loaded in manifests.docs {
        match loaded.doc {
            Document::Object(o) => objects.push((*o, loaded.source, loaded.positions)),
            Document::SchedulerConfig(c) => {
                if scheduler_config.is_some() {
                    return Err(bad(
                        &loaded.source,
                        "only one KubeSchedulerConfiguration is allowed",
                    ));
                }
                scheduler_config = Some(*c);
                scheduler_config_source = Some(loaded.source);
                scheduler_config_positions = loaded.positions;
            }
            Document::Scenario(s) => {
                if scenario.is_some() {
                    return Err(bad(&loaded.source, "only one Scenario document is allowed"));
                }
                scenario = Some((*s, loaded.source));
            }
        }
    }
    if let Some(file) = &opts.scheduler_config {
        let m = manifest::load_file(file)?;
        let cfg = m.docs.into_iter().find_map(|d| match d.doc {
            Document::SchedulerConfig(c) => Some((*c, d.source, d.positions)),
            _ => None,
        });
        let (cfg, cfg_source, cfg_positions) = cfg.ok_or_else(|| {
            bad(
                &Source {
                    file: file.display().to_string(),
                    line: 1,
                },
                "no KubeSchedulerConfiguration document found",
            )
        })?;
        scheduler_config = Some(cfg);
        scheduler_config_source = Some(cfg_source);
        scheduler_config_positions = cfg_positions;
    }
    let (scenario, scenario_source) = scenario.unwrap_or_else(|| {
        (
            Scenario::default(),
            Source {
                file: path.display().to_string(),
                line: 1,
            },
        )
    });
    let config = ClusterConfig {
        scheduler: scheduler_config.unwrap_or_default(),
        kubelet: k8s_kubelet::KubeletConfig {
            startup_ticks: scenario.spec.kubelet.startup_ticks,
            behaviors: scenario
                .spec
                .behaviors
                .iter()
                .enumerate()
                .filter_map(|(i, r)| r.to_rule(&format!("spec.behaviors[{i}]")).ok())
                .collect(),
            ..Default::default()
        },
        feature_gates: scenario.spec.feature_gates.clone(),
        informer_lag: scenario.spec.informer_lag.unwrap_or_default().lag(),
    };
    if let Err((path, message)) = scenario.validate() {
        return Err(ManifestError {
            source_loc: scenario_source.clone(),
            path,
            message,
        });
    }
    let config_source = scheduler_config_source.unwrap_or_else(|| scenario_source.clone());
    let snapshot_in = opts.snapshot_in.clone().or_else(|| {
        let rel = scenario.spec.snapshot_in.as_deref()?;
        Some(path.parent().unwrap_or(Path::new(".")).join(rel))
    });
    if let Some(file) = snapshot_in {
        return resume(
            file,
            objects,
            manifests.warnings,
            scenario,
            &scenario_source,
            config,
            opts,
        );
    }
    let mut cluster = Cluster::new(config).map_err(|e| match e {
        ClusterError::SchedulerConfig(e) => manifest::scheduler_config_error(
            &config_source,
            scheduler_config_positions.as_ref(),
            &e,
        ),
        e => bad(&config_source, &e.to_string()),
    })?;
    if let Some(target) = &opts.explain {
        let key = PodKey::parse(target).map_err(|e| {
            let source = Source {
                file: "--explain".to_string(),
                line: 0,
            };
            bad(&source, &e.to_string())
        })?;
        cluster.set_explain(Some(key));
    }
    let mut other_kinds = BTreeSet::new();
    let mut warnings = manifests.warnings;
    if let Some(t) = &scenario.spec.trace {
        objects.extend(
            crate::trace::scenario_objects(t, path, &scenario_source, &mut warnings)?
                .into_iter()
                .map(|(o, s)| (o, s, None)),
        );
    }
    apply_initial(&mut cluster, objects, &mut other_kinds, &mut warnings)?;
    let steps = decode_steps(&scenario, &scenario_source)?;
    Ok(Prepared {
        cluster,
        scenario,
        steps,
        other_kinds,
        warnings,
        resumed: None,
    })
}

/// [`prepare`] for a run resumed from a snapshot: the cluster is the snapshot's, at its tick; the
/// input's objects are not applied (they were, at tick 0 of the run the snapshot comes from).
fn resume(
    file: std::path::PathBuf,
    objects: Vec<(Object, Source, Option<Positions>)>,
    mut warnings: Vec<String>,
    scenario: Scenario,
    scenario_source: &Source,
    config: ClusterConfig,
    opts: &RunOptions,
) -> Result<Prepared, ManifestError> {
    let read = crate::snapshot::read(&file)?;
    let tick = read.header.tick;
    let state = crate::snapshot::LoopState {
        quiet: read.header.quiet_ticks,
        last_active: read.header.last_change,
    };
    let other_kinds = read.other_kinds.clone();
    let mut cluster = crate::snapshot::resume(&file, read, config)?;
    if let Some(target) = &opts.explain {
        let source = Source {
            file: "--explain".to_string(),
            line: 0,
        };
        let key = PodKey::parse(target).map_err(|e| bad(&source, &e.to_string()))?;
        cluster.set_explain(Some(key));
    }
    if !objects.is_empty() {
        warnings.push(format!(
            "{} object(s) of the input are not applied: the run resumes from the snapshot {} at tick {tick}",
            objects.len(),
            file.display()
        ));
    }
    let steps = decode_steps(&scenario, scenario_source)?;
    Ok(Prepared {
        cluster,
        scenario,
        steps,
        other_kinds,
        warnings,
        resumed: Some(state),
    })
}

pub(crate) fn bad(source: &Source, message: &str) -> ManifestError {
    ManifestError {
        source_loc: source.clone(),
        path: String::new(),
        message: message.to_string(),
    }
}

/// Creation order of the initial objects: namespaces and CustomResourceDefinitions, priority
/// classes, runtime classes and device classes, nodes and ResourceSlices, workload controllers,
/// PodGroups, Workloads, ResourceClaimTemplates and ResourceClaims (before their pods, the order
/// KEP-4671 and KEP-4381 ask), then the rest (custom resources included), each group in file
/// order (as `kubectl apply` of ordered
/// files would need).
fn rank(o: &Object) -> u8 {
    match o {
        Object::Namespace(_) => 0,
        Object::Other(u, _) if CustomResourceDefinition::from_unstructured(u).is_some() => 0,
        Object::PriorityClass(_) | Object::RuntimeClass(_) | Object::DeviceClass(_) => 1,
        Object::Node(_) | Object::ResourceSlice(_) => 2,
        Object::Deployment(_) => 3,
        Object::ReplicaSet(_) | Object::DaemonSet(_) | Object::StatefulSet(_) => 4,
        Object::PodGroup(_)
        | Object::Workload(_)
        | Object::SchedulingPodGroup(_)
        | Object::ResourceClaimTemplate(_)
        | Object::ResourceClaim(_)
        | Object::CronJob(_) => 5,
        _ => 6,
    }
}

/// A warning for each pod (or pod template) that asks for a `schedulerName` no profile of the
/// scheduler serves: as upstream, nothing schedules it, and it stays Pending without an event.
fn unserved_scheduler_warnings(
    cluster: &Cluster,
    objects: &[(Object, Source, Option<Positions>)],
    warnings: &mut Vec<String>,
) {
    for (obj, source, _) in objects {
        let (what, verb, who, spec) = match obj {
            Object::Pod(p) => ("pod", "asks", "it stays", &*p.spec),
            Object::Deployment(d) => (
                "the pods of deployment",
                "ask",
                "they stay",
                &d.spec.template.spec,
            ),
            Object::ReplicaSet(r) => (
                "the pods of replicaset",
                "ask",
                "they stay",
                &r.spec.template.spec,
            ),
            Object::Job(j) => ("the pods of job", "ask", "they stay", &j.spec.template.spec),
            Object::DaemonSet(d) => (
                "the pods of daemonset",
                "ask",
                "they stay",
                &d.spec.template.spec,
            ),
            Object::StatefulSet(s) => (
                "the pods of statefulset",
                "ask",
                "they stay",
                &s.spec.template.spec,
            ),
            _ => continue,
        };
        let name = spec
            .scheduler_name
            .as_deref()
            .filter(|n| !n.is_empty())
            .unwrap_or(k8s_types::core::DEFAULT_SCHEDULER_NAME);
        if !cluster.scheduler().has_profile(name) {
            let meta = obj.meta();
            let ns = Some(meta.namespace())
                .filter(|n| !n.is_empty())
                .unwrap_or("default");
            warnings.push(format!(
                "{source}: {what} {}/{} {verb} for schedulerName {name:?}, which no scheduler profile serves: {who} Pending",
                ns,
                meta.name
            ));
        }
    }
}

/// Whether a loaded object is existing cluster state (it carries a `uid`, a `resourceVersion`, or,
/// for a Pod, a `status.phase`: what `kubectl get -o yaml` prints for every object of a running
/// cluster) rather than a new object to create.
pub(crate) fn is_existing(obj: &Object) -> bool {
    let meta = obj.meta();
    fn set<S: AsRef<str>>(v: &Option<S>) -> bool {
        v.as_ref().is_some_and(|s| !s.as_ref().is_empty())
    }
    set(&meta.uid)
        || set(&meta.resource_version)
        || matches!(obj, Object::Pod(p) if set(&p.status.phase))
}

/// What loading found out about the existing state it restored.
#[derive(Default)]
struct Restored {
    /// Restored pods naming a PriorityClass the input lacks: (class, "ns/name", priority).
    missing_classes: Vec<(String, String, Option<i32>)>,
    /// Restored Running pods asking for a device-plugin resource without the devices annotation.
    devices_unknown: Vec<String>,
}

/// Reason of the Event k8s-mini records at load on a pending pod whose `schedulerName` no profile
/// serves. Upstream has no such event: kube-scheduler only takes the pods of its profiles
/// (`pkg/scheduler/eventhandlers.go` `responsibleForPod`) and the others wait without a word.
pub const UNSERVED_SCHEDULER_REASON: &str = "SchedulerNameNotServed";
/// Component of that Event (k8s-mini's, not a Kubernetes component).
pub const LOAD_EVENT_SOURCE: &str = "k8s-mini";

/// One Warning Event per loaded pending pod whose `schedulerName` no profile serves (see
/// [`UNSERVED_SCHEDULER_REASON`]), so that `kubectl describe` and the event table show why it waits.
fn unserved_scheduler_events(cluster: &mut Cluster) {
    let pods: Vec<k8s_types::core::Pod> = cluster.api_ref().list_typed(None, None);
    let mut recorder = k8s_types::events::EventRecorder::new(k8s_types::core::event::EventSource {
        component: LOAD_EVENT_SOURCE.into(),
        host: Default::default(),
    });
    for p in pods {
        if p.node_name().is_some_and(|n| !n.is_empty()) || p.is_terminal() {
            continue;
        }
        let name = p
            .spec
            .scheduler_name
            .as_deref()
            .filter(|n| !n.is_empty())
            .unwrap_or(k8s_types::core::DEFAULT_SCHEDULER_NAME)
            .to_string();
        if cluster.scheduler().has_profile(&name) {
            continue;
        }
        recorder.record(
            cluster.api(),
            &Object::Pod(Box::new(p)),
            k8s_types::core::event::event_types::WARNING,
            UNSERVED_SCHEDULER_REASON,
            format!("no scheduler profile serves schedulerName {name:?}: the pod stays Pending (kube-scheduler ignores it without an event; this event is k8s-mini's)"),
        );
    }
}

fn apply_initial(
    cluster: &mut Cluster,
    mut objects: Vec<(Object, Source, Option<Positions>)>,
    other_kinds: &mut BTreeSet<(String, String, bool)>,
    warnings: &mut Vec<String>,
) -> Result<(), ManifestError> {
    objects.sort_by_key(|(o, _, _)| rank(o));
    unserved_scheduler_warnings(cluster, &objects, warnings);
    cluster.begin_tick();
    // As an etcd restore keeps its revision: every write from now on is newer than any
    // resourceVersion of the input, so no Event name or uid the apiserver derives from a revision
    // can repeat one the input holds (our own output reloaded).
    let max_resource_version = objects
        .iter()
        .filter_map(|(o, _, _)| o.meta().resource_version.as_deref()?.parse::<i64>().ok())
        .max()
        .unwrap_or(0);
    let revision = cluster.api_ref().revision();
    if max_resource_version > revision {
        cluster.skip_revisions(max_resource_version - revision);
    }
    // A dump's ownerReferences name the old uids. Existing state keeps its uid (an etcd restore);
    // a new object gets one from the apiserver, so map old -> new for those.
    let mut uid_map: BTreeMap<String, String> = BTreeMap::new();
    // Owner references whose owner was not loaded before the dependent: (uid, "Kind ns/name").
    let mut unresolved: BTreeMap<String, String> = BTreeMap::new();
    let mut restored = Restored::default();
    let mut restored_pods: Vec<(String, String)> = Vec::new();
    // Existing custom resources whose CRD the dump lacks: kept, not validated (one warning).
    let mut without_crd: Vec<String> = Vec::new();
    for (mut obj, source, positions) in objects {
        let existing = is_existing(&obj);
        if let Err(m) = check_custom_resource(cluster.api_ref(), &mut obj) {
            // A new custom resource without its CRD is refused as kubectl refuses it; one a dump
            // holds as existing state is kept, like any kind k8s-mini does not simulate.
            if !existing {
                return Err(bad(&source, &m));
            }
            let o = &obj;
            without_crd.push(format!("{} {}", o.kind().name(), o.meta().name));
        }
        let meta = obj.meta_mut();
        let old_uid = if existing {
            meta.uid.clone()
        } else {
            meta.uid.take()
        };
        meta.resource_version = None;
        let owner_ns = Some(meta.namespace())
            .filter(|n| !n.is_empty())
            .unwrap_or("default")
            .to_string();
        for owner in &mut meta.owner_references {
            if let Some(new) = uid_map.get(&owner.uid) {
                owner.uid = new.clone();
            } else {
                unresolved.insert(
                    owner.uid.clone(),
                    format!("{} {owner_ns}/{}", owner.kind, owner.name),
                );
            }
        }
        let kind = obj.kind();
        if let Kind::Other {
            api_version,
            kind,
            namespaced,
        } = &kind
        {
            other_kinds.insert((api_version.clone(), kind.clone(), *namespaced));
        }
        let ns = obj.meta().namespace().to_string();
        if kind.namespaced() && !ns.is_empty() && ns_missing(cluster.api_ref(), &ns) {
            warnings.push(format!(
                "{source}: namespace {ns:?} is not in the input; created it"
            ));
            let created = cluster.apply(Object::Namespace(Box::new(Namespace {
                metadata: ObjectMeta {
                    name: ns.clone(),
                    ..Default::default()
                },
                ..Default::default()
            })));
            created.map_err(|s| bad(&source, &s.message))?;
        }
        let (name, namespace) = (obj.meta().name.clone(), ns);
        if existing {
            if let Object::Pod(p) = &obj {
                restored_pods.push((namespace.clone(), name.clone()));
                note_restored_pod(cluster, p, &mut restored);
            }
            cluster
                .restore(obj)
                .map_err(|s| status_error(&source, positions.as_ref(), &s))?;
        } else {
            cluster
                .apply(obj)
                .map_err(|s| status_error(&source, positions.as_ref(), &s))?;
        }
        if let (Some(old), Ok(new)) = (old_uid, cluster.api_ref().get(&kind, &namespace, &name)) {
            if let Some(new_uid) = new.meta().uid.clone() {
                uid_map.insert(old, new_uid);
            }
        }
    }
    // Owners named by the input but not in it live outside it (a dump of pods without their
    // ReplicaSets): their dependents are kept, not garbage-collected at tick 0. Existing state keeps
    // its uids, so an owner listed after its dependents is found here too.
    if !without_crd.is_empty() {
        warnings.push(format!(
            "{} custom resource(s) of the input's existing state have no CustomResourceDefinition in the input; kept, not validated: {}",
            without_crd.len(),
            without_crd.join(", ")
        ));
    }
    unresolved.retain(|uid, _| !uid_map.contains_key(uid));
    let mut owners = BTreeSet::new();
    if !unresolved.is_empty() {
        let names: Vec<&str> = unresolved.values().map(String::as_str).collect();
        warnings.push(format!(
            "{} owner(s) named by ownerReferences are not in the input; their dependents are kept as if they lived outside it: {}",
            names.len(),
            names.join(", ")
        ));
        owners = unresolved.into_keys().collect();
    }
    let nodes = restored_warnings(cluster, &restored, &restored_pods, warnings);
    unserved_scheduler_events(cluster);
    if !owners.is_empty() || !nodes.is_empty() {
        cluster.set_external(owners, nodes);
    }
    Ok(())
}

/// Records what a restored pod needs said about it: its priority class (looked up now: classes are
/// loaded before pods) and its devices. The node is checked once everything is loaded.
fn note_restored_pod(cluster: &Cluster, p: &k8s_types::core::Pod, restored: &mut Restored) {
    if let Some(class) = p.spec.priority_class_name.as_deref() {
        let system = class.starts_with("system-");
        if !system
            && cluster
                .api_ref()
                .get_typed::<k8s_types::scheduling::PriorityClass>("", class)
                .is_err()
        {
            restored.missing_classes.push((
                class.to_string(),
                format!("{}/{}", p.metadata.namespace(), p.metadata.name),
                p.spec.priority,
            ));
        }
    }
    let running = p.phase() == k8s_types::core::phases::RUNNING;
    let wants_devices = p
        .spec
        .containers
        .iter()
        .chain(&p.spec.init_containers)
        .flat_map(|c| c.resources.limits.keys().chain(c.resources.requests.keys()))
        .any(|r| k8s_kubelet::admission::is_extended_resource_name(r));
    if running
        && wants_devices
        && !p
            .metadata
            .annotations
            .contains_key(k8s_types::core::ALLOCATED_DEVICES_ANNOTATION)
    {
        restored
            .devices_unknown
            .push(format!("{}/{}", p.metadata.namespace(), p.metadata.name));
    }
}

/// The warnings about restored pods (one per kind of problem, each naming every pod) and the nodes
/// the restored pods are bound to that the input lacks (they live outside it).
fn restored_warnings(
    cluster: &Cluster,
    restored: &Restored,
    restored_pods: &[(String, String)],
    warnings: &mut Vec<String>,
) -> BTreeSet<String> {
    let mut absent: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (ns, name) in restored_pods {
        let Ok(p) = cluster
            .api_ref()
            .get_typed::<k8s_types::core::Pod>(ns, name)
        else {
            continue;
        };
        if let Some(node) = p.node_name().filter(|n| !n.is_empty()) {
            if cluster
                .api_ref()
                .get_typed::<k8s_types::core::Node>("", node)
                .is_err()
            {
                absent
                    .entry(node.to_string())
                    .or_default()
                    .push(format!("{ns}/{name}"));
            }
        }
    }
    if !absent.is_empty() {
        let list: Vec<String> = absent
            .iter()
            .map(|(node, pods)| format!("{node} ({})", pods.join(", ")))
            .collect();
        let n: usize = absent.values().map(Vec::len).sum();
        warnings.push(format!(
            "{n} pod(s) are bound to node(s) not in the input; they are kept, bound, on no simulated node (not scheduled elsewhere, not collected): {}",
            list.join("; ")
        ));
    }
    if !restored.missing_classes.is_empty() {
        let list: Vec<String> = restored
            .missing_classes
            .iter()
            .map(|(class, pod, prio)| match prio {
                Some(v) => format!("{pod} ({class}, priority {v})"),
                None => format!("{pod} ({class}, no priority written: 0)"),
            })
            .collect();
        warnings.push(format!(
            "{} pod(s) name a PriorityClass not in the input; they keep the priority written in them: {}",
            list.len(),
            list.join(", ")
        ));
    }
    let off_node: BTreeSet<&String> = absent.values().flatten().collect();
    let devices_unknown: Vec<&str> = restored
        .devices_unknown
        .iter()
        .filter(|p| !off_node.contains(p))
        .map(String::as_str)
        .collect();
    if !devices_unknown.is_empty() {
        warnings.push(format!(
            "{} running pod(s) ask for device-plugin resources but do not record their device IDs (annotation {}); their kubelet allocates free devices to them at its first sync: {}",
            devices_unknown.len(),
            k8s_types::core::ALLOCATED_DEVICES_ANNOTATION,
            devices_unknown.join(", ")
        ));
    }
    absent.into_keys().collect()
}

fn ns_missing(api: &dyn ApiClient, ns: &str) -> bool {
    api.get_typed::<Namespace>("", ns).is_err()
}

/// An apiserver refusal as a [`ManifestError`]: one field error names its field (at its line,
/// when the document's positions were kept), several are the apiserver's whole message.
fn status_error(
    source: &Source,
    positions: Option<&Positions>,
    s: &k8s_types::status::Status,
) -> ManifestError {
    if s.causes.len() == 1 {
        let c = &s.causes[0];
        let line = positions.map_or(source.line, |p| p.line_of(&c.field));
        return ManifestError {
            source_loc: Source {
                file: source.file.clone(),
                line,
            },
            path: c.field.clone(),
            message: c.message.clone(),
        };
    }
    bad(source, &s.message)
}

/// A custom resource needs a CRD serving its group, version and kind (kubectl: `no matches for
/// kind "PyTorchJob" in version "kubeflow.org/v1"` / `ensure CRDs are installed first`); the CRD
/// also says whether it lives in a namespace. CRDs are created before everything else, so the
/// CRD may come anywhere in the input, as with `kubectl apply -f` of a directory run until it
/// succeeds. Other objects pass unchanged.
pub(crate) fn check_custom_resource(api: &dyn ApiClient, obj: &mut Object) -> Result<(), String> {
    if !manifest::is_custom_resource(obj) {
        return Ok(());
    }
    let Object::Other(u, namespaced) = obj else {
        return Ok(());
    };
    let crd = api
        .list_shared(&crd_kind(), None, None)
        .iter()
        .filter_map(|o| CustomResourceDefinition::from_object(o)?.ok())
        .find(|c| c.served(&u.api_version, &u.kind).is_some());
    match crd {
        Some(c) => {
            *namespaced = c.namespaced();
            Ok(())
        }
        None => Err(format!(
            "no matches for kind {:?} in version {:?}: ensure CRDs are installed first",
            u.kind, u.api_version
        )),
    }
}
