//! Loading a run's input into a cluster: the scheduler configuration and the Scenario from the
//! documents, the cluster built, the initial objects applied in dependency order (namespaces,
//! priority classes, nodes, workload controllers, the rest), owner references re-mapped to the new
//! uids, and the Scenario's steps decoded.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use k8s_sched::config::KubeSchedulerConfiguration;
use k8s_sched::explain::PodKey;
use k8s_types::apiserver::{ApiClient, ApiExt};
use k8s_types::core::Namespace;
use k8s_types::meta::ObjectMeta;
use k8s_types::object::{Kind, Object};

use crate::cluster::{Cluster, ClusterConfig, ClusterError};
use crate::manifest::{self, Document, ManifestError, Manifests, Source};
use crate::run::RunOptions;
use crate::scenario::Scenario;
use crate::steps::{decode_steps, ReadyStep};

/// A loaded input, ready to run: the cluster with the initial objects applied, the Scenario and its
/// decoded steps, and what the output needs from loading.
pub(crate) struct Prepared {
    pub(crate) cluster: Cluster,
    pub(crate) scenario: Scenario,
    pub(crate) steps: Vec<ReadyStep>,
    pub(crate) other_kinds: BTreeSet<(String, String, bool)>,
    pub(crate) warnings: Vec<String>,
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
    let mut objects: Vec<(Object, Source)> = Vec::new();
    for loaded in manifests.docs {
        match loaded.doc {
            Document::Object(o) => objects.push((*o, loaded.source)),
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
    };
    if let Err((path, message)) = scenario.validate() {
        return Err(ManifestError {
            source_loc: scenario_source.clone(),
            path,
            message,
        });
    }
    let config_source = scheduler_config_source.unwrap_or_else(|| scenario_source.clone());
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
        objects.extend(crate::trace::scenario_objects(
            t,
            path,
            &scenario_source,
            &mut warnings,
        )?);
    }
    apply_initial(&mut cluster, objects, &mut other_kinds, &mut warnings)?;
    let steps = decode_steps(&scenario, &scenario_source)?;
    Ok(Prepared {
        cluster,
        scenario,
        steps,
        other_kinds,
        warnings,
    })
}

pub(crate) fn bad(source: &Source, message: &str) -> ManifestError {
    ManifestError {
        source_loc: source.clone(),
        path: String::new(),
        message: message.to_string(),
    }
}

/// Creation order of the initial objects: namespaces, priority classes and runtime classes, nodes,
/// workload controllers, PodGroups and Workloads (before their pods, the order KEP-4671 asks), then the rest, each group in file order (as `kubectl apply` of ordered
/// files would need).
fn rank(o: &Object) -> u8 {
    match o {
        Object::Namespace(_) => 0,
        Object::PriorityClass(_) | Object::RuntimeClass(_) => 1,
        Object::Node(_) => 2,
        Object::Deployment(_) => 3,
        Object::ReplicaSet(_) | Object::DaemonSet(_) | Object::StatefulSet(_) => 4,
        Object::PodGroup(_)
        | Object::Workload(_)
        | Object::SchedulingPodGroup(_)
        | Object::CronJob(_) => 5,
        _ => 6,
    }
}

/// A warning for each pod (or pod template) that asks for a `schedulerName` no profile of the
/// scheduler serves: as upstream, nothing schedules it, and it stays Pending without an event.
fn unserved_scheduler_warnings(
    cluster: &Cluster,
    objects: &[(Object, Source)],
    warnings: &mut Vec<String>,
) {
    for (obj, source) in objects {
        let (what, verb, who, spec) = match obj {
            Object::Pod(p) => ("pod", "asks", "it stays", &p.spec),
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

fn apply_initial(
    cluster: &mut Cluster,
    mut objects: Vec<(Object, Source)>,
    other_kinds: &mut BTreeSet<(String, String, bool)>,
    warnings: &mut Vec<String>,
) -> Result<(), ManifestError> {
    objects.sort_by_key(|(o, _)| rank(o));
    unserved_scheduler_warnings(cluster, &objects, warnings);
    cluster.begin_tick();
    // A dump's ownerReferences name the old uids; the apiserver assigns new ones, so map old -> new.
    let mut uid_map: BTreeMap<String, String> = BTreeMap::new();
    // Owner references whose owner was not loaded before the dependent: (uid, "Kind ns/name").
    let mut unresolved: BTreeMap<String, String> = BTreeMap::new();
    for (mut obj, source) in objects {
        let meta = obj.meta_mut();
        let old_uid = meta.uid.take();
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
            let created = cluster.apply(Object::Namespace(Namespace {
                metadata: ObjectMeta {
                    name: ns.clone(),
                    ..Default::default()
                },
                ..Default::default()
            }));
            created.map_err(|s| bad(&source, &s.message))?;
        }
        let (name, namespace) = (obj.meta().name.clone(), ns);
        cluster.apply(obj).map_err(|s| status_error(&source, &s))?;
        if let (Some(old), Ok(new)) = (old_uid, cluster.api_ref().get(&kind, &namespace, &name)) {
            if let Some(new_uid) = new.meta().uid.clone() {
                uid_map.insert(old, new_uid);
            }
        }
    }
    // Owners named by the input but not in it live outside it (a dump of pods without their
    // ReplicaSets): their dependents are kept, not garbage-collected at tick 0.
    unresolved.retain(|uid, _| !uid_map.contains_key(uid));
    if !unresolved.is_empty() {
        let names: Vec<&str> = unresolved.values().map(String::as_str).collect();
        warnings.push(format!(
            "{} owner(s) named by ownerReferences are not in the input; their dependents are kept as if they lived outside it: {}",
            names.len(),
            names.join(", ")
        ));
        cluster.set_external_owners(unresolved.into_keys().collect());
    }
    Ok(())
}

fn ns_missing(api: &dyn ApiClient, ns: &str) -> bool {
    api.get_typed::<Namespace>("", ns).is_err()
}

fn status_error(source: &Source, s: &k8s_types::status::Status) -> ManifestError {
    if s.causes.len() == 1 {
        let c = &s.causes[0];
        return ManifestError {
            source_loc: source.clone(),
            path: c.field.clone(),
            message: c.message.clone(),
        };
    }
    bad(source, &s.message)
}
