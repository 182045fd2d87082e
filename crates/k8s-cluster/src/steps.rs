//! A Scenario's timed steps (`spec.steps`): decoding their inline manifests and running each one
//! as the kubectl command it is named after, through the apiserver like every other writer.

use k8s_types::apiserver::{ApiExt, DeleteOptions, PropagationPolicy};
use k8s_types::apps::{DaemonSet, Deployment, PodTemplateSpec, ReplicaSet, StatefulSet};
use k8s_types::batch::{CronJob, Job, CRONJOB_INSTANTIATE_ANNOTATION};
use k8s_types::core::Node;
use k8s_types::labels::LabelSelector;
use k8s_types::meta::{ObjectMeta, OwnerReference};
use k8s_types::object::{Kind, Object};

use crate::cluster::Cluster;
use crate::drain::Drain;
use crate::manifest::{self, ManifestError, Source};
use crate::scenario::{Scenario, Step};

/// A step with its inline manifests decoded.
pub(crate) struct ReadyStep {
    pub(crate) step: Step,
    pub(crate) apply: Vec<Object>,
}

pub(crate) fn decode_steps(
    scenario: &Scenario,
    source: &Source,
) -> Result<Vec<ReadyStep>, ManifestError> {
    let mut out = Vec::new();
    for (i, step) in scenario.spec.steps.iter().enumerate() {
        let n_actions = [
            step.apply.is_some(),
            step.delete.is_some(),
            step.scale.is_some(),
            step.set_image.is_some(),
            step.cordon.is_some(),
            step.uncordon.is_some(),
            step.device_health.is_some(),
            step.taint.is_some(),
            step.patch.is_some(),
            step.rollout_restart.is_some(),
            step.create_job_from_cron_job.is_some(),
            step.drain.is_some(),
            step.evict.is_some(),
            step.stop_kubelet.is_some(),
            step.start_kubelet.is_some(),
            step.partition.is_some(),
            step.heal.is_some(),
            step.restart_scheduler.is_some(),
            step.restart_controller_manager.is_some(),
            step.restart_control_plane.is_some(),
            step.power_off.is_some(),
            step.power_on.is_some(),
        ]
        .iter()
        .filter(|b| **b)
        .count();
        if n_actions != 1 {
            return Err(ManifestError {
                source_loc: source.clone(),
                path: format!("spec.steps[{i}]"),
                message: format!("a step needs exactly one action, found {n_actions}"),
            });
        }
        if let Some(si) = &step.set_image {
            let targets = usize::from(si.deployment.is_some())
                + usize::from(si.daemonset.is_some())
                + usize::from(si.statefulset.is_some());
            if targets != 1 {
                return Err(ManifestError {
                    source_loc: source.clone(),
                    path: format!("spec.steps[{i}].setImage"),
                    message: format!(
                        "setImage needs exactly one of deployment, daemonset and statefulset, found {targets}"
                    ),
                });
            }
        }
        if let Some(h) = &step.device_health {
            let message = match (h.healthy, h.xid) {
                (None, None) => Some("a deviceHealth step needs healthy or xid"),
                (Some(_), Some(_)) => {
                    Some("healthy and xid exclude each other (an XID decides the health)")
                }
                _ => None,
            };
            if let Some(message) = message {
                return Err(ManifestError {
                    source_loc: source.clone(),
                    path: format!("spec.steps[{i}].deviceHealth"),
                    message: message.into(),
                });
            }
        }
        if let Some(p) = step
            .delete
            .as_ref()
            .and_then(|d| d.propagation_policy.as_deref())
            .filter(|p| PropagationPolicy::parse(p).is_none())
        {
            return Err(ManifestError {
                source_loc: source.clone(),
                path: format!("spec.steps[{i}].delete.propagationPolicy"),
                message: format!("Unsupported value: {p:?}: supported values: \"Foreground\", \"Background\", \"Orphan\""),
            });
        }
        if let Some(p) = &step.patch {
            let bad = |field: &str, message: String| ManifestError {
                source_loc: source.clone(),
                path: format!("spec.steps[{i}].patch.{field}"),
                message,
            };
            if p.api_version.is_none() && kind_by_name(&p.kind).is_none() {
                return Err(bad(
                    "kind",
                    format!("unknown kind {:?} (a patch needs a simulated kind)", p.kind),
                ));
            }
            if !p.merge.is_mapping() {
                return Err(bad("merge", "a merge patch must be a map".into()));
            }
        }
        let apply = match &step.apply {
            Some(v) => {
                manifest::decode_inline(v.clone(), source, &format!("spec.steps[{i}].apply"))?
            }
            None => Vec::new(),
        };
        out.push(ReadyStep {
            step: step.clone(),
            apply,
        });
    }
    Ok(out)
}

/// Runs one step. A `drain` only starts here: it is pushed on `drains` and runs in
/// [`advance_drains`], from this tick on.
pub(crate) fn run_step(
    cluster: &mut Cluster,
    rs: &ReadyStep,
    drains: &mut Vec<Drain>,
) -> Result<String, String> {
    let step = &rs.step;
    if let Some(d) = &step.drain {
        drains.push(Drain::new(d.clone()));
        return Ok(format!("drain {}", d.node));
    }
    let ns = |n: &Option<String>| n.clone().unwrap_or_else(|| "default".to_string());
    if let Some(e) = &step.evict {
        // The `pods/eviction` subresource, as `kubectl drain` posts it for one pod; a 429 from a
        // PodDisruptionBudget fails the step (nothing retries it).
        let mut ev = k8s_types::policy::Eviction::default();
        ev.metadata.name.clone_from(&e.name);
        ev.metadata.namespace = Some(ns(&e.namespace).into());
        ev.delete_options.grace_period_seconds = e.grace_period_seconds;
        cluster.api().evict(&ev).map_err(|s| s.message)?;
        return Ok(format!("pod/{} evicted", e.name));
    }
    if step.apply.is_some() {
        let mut names = Vec::new();
        for obj in &rs.apply {
            names.push(format!(
                "{}/{}",
                obj.kind().name().to_ascii_lowercase(),
                obj.meta().name
            ));
            let mut obj = obj.clone();
            crate::load::check_custom_resource(cluster.api_ref(), &mut obj)?;
            cluster.apply(obj).map_err(|s| s.message)?;
        }
        return Ok(format!("apply {}", names.join(", ")));
    }
    if let Some(d) = &step.delete {
        let kind = step_kind(cluster, d.api_version.as_deref(), &d.kind)?;
        let namespace = if kind.namespaced() {
            ns(&d.namespace)
        } else {
            String::new()
        };
        let names: Vec<String> = match (&d.name, &d.selector) {
            (Some(n), _) => vec![n.clone()],
            (None, Some(sel)) => {
                let sel = LabelSelector::parse(sel)?;
                let ns_filter = kind.namespaced().then_some(namespace.as_str());
                let mut found: Vec<String> = cluster
                    .api_ref()
                    .list(&kind, ns_filter, Some(&sel))
                    .into_iter()
                    .filter(|o| o.meta().deletion_timestamp.is_none())
                    .map(|o| o.meta().name.clone())
                    .collect();
                found.truncate(d.count.unwrap_or(usize::MAX));
                found
            }
            (None, None) => return Err("delete needs a name or a selector".into()),
        };
        for name in &names {
            cluster
                .api()
                .delete(
                    &kind,
                    &namespace,
                    name,
                    DeleteOptions {
                        grace_period_seconds: d.grace_period_seconds,
                        propagation_policy: d
                            .propagation_policy
                            .as_deref()
                            .and_then(PropagationPolicy::parse),
                    },
                )
                .map_err(|s| s.message)?;
        }
        if names.is_empty() {
            return Ok(format!(
                "delete {}: nothing matched",
                kind.name().to_ascii_lowercase()
            ));
        }
        return Ok(format!(
            "delete {} {}",
            kind.name().to_ascii_lowercase(),
            names.join(", ")
        ));
    }
    if let Some(s) = &step.scale {
        let namespace = ns(&s.namespace);
        let api = cluster.api();
        match s.kind.as_deref().unwrap_or("Deployment") {
            "Deployment" => {
                let mut d: Deployment =
                    api.get_typed(&namespace, &s.name).map_err(|e| e.message)?;
                d.spec.replicas = Some(s.replicas);
                api.update_typed(d).map_err(|e| e.message)?;
            }
            "ReplicaSet" => {
                let mut r: ReplicaSet =
                    api.get_typed(&namespace, &s.name).map_err(|e| e.message)?;
                r.spec.replicas = Some(s.replicas);
                api.update_typed(r).map_err(|e| e.message)?;
            }
            "StatefulSet" => {
                let mut r: StatefulSet =
                    api.get_typed(&namespace, &s.name).map_err(|e| e.message)?;
                r.spec.replicas = Some(s.replicas);
                api.update_typed(r).map_err(|e| e.message)?;
            }
            other => return Err(format!("cannot scale kind {other:?}")),
        }
        return Ok(format!("scale {} to {}", s.name, s.replicas));
    }
    if let Some(si) = &step.set_image {
        let api = cluster.api();
        let namespace = ns(&si.namespace);
        let (resource, name) = match (&si.deployment, &si.daemonset, &si.statefulset) {
            (Some(d), _, _) => ("deployment", d),
            (None, Some(d), _) => ("daemonset", d),
            (None, None, Some(s)) => ("statefulset", s),
            (None, None, None) => {
                return Err("setImage names no deployment, daemonset or statefulset".into())
            }
        };
        let set = |t: &mut PodTemplateSpec| {
            let mut changed = 0;
            for c in &mut t.spec.containers {
                if si.container.as_ref().is_none_or(|n| n == &c.name) {
                    c.image = si.image.clone();
                    changed += 1;
                }
            }
            if changed == 0 {
                return Err(format!(
                    "unable to find container named {:?}",
                    si.container.clone().unwrap_or_default()
                ));
            }
            Ok(())
        };
        if resource == "deployment" {
            let mut d: Deployment = api.get_typed(&namespace, name).map_err(|e| e.message)?;
            set(&mut d.spec.template)?;
            api.update_typed(d).map_err(|e| e.message)?;
        } else if resource == "daemonset" {
            let mut d: DaemonSet = api.get_typed(&namespace, name).map_err(|e| e.message)?;
            set(&mut d.spec.template)?;
            api.update_typed(d).map_err(|e| e.message)?;
        } else {
            let mut s: StatefulSet = api.get_typed(&namespace, name).map_err(|e| e.message)?;
            set(&mut s.spec.template)?;
            api.update_typed(s).map_err(|e| e.message)?;
        }
        return Ok(format!("set image {resource}/{name} {}", si.image));
    }
    if let Some(c) = step.cordon.as_ref().or(step.uncordon.as_ref()) {
        let cordon = step.cordon.is_some();
        let api = cluster.api();
        let mut node: Node = api.get_typed("", &c.node).map_err(|e| e.message)?;
        node.spec.unschedulable = cordon;
        api.update_typed(node).map_err(|e| e.message)?;
        return Ok(format!(
            "{} {}",
            if cordon { "cordon" } else { "uncordon" },
            c.node
        ));
    }
    if let Some(t) = &step.taint {
        let now = cluster.now();
        let api = cluster.api();
        let mut node: Node = api.get_typed("", &t.node).map_err(|e| e.message)?;
        node.spec.taints.push(k8s_types::core::Taint {
            key: t.key.clone(),
            value: t.value.clone(),
            effect: t.effect.clone(),
            time_added: (t.effect == "NoExecute").then(|| k8s_types::meta::tick_timestamp(now)),
        });
        api.update_typed(node).map_err(|e| e.message)?;
        return Ok(format!(
            "taint node {} {}={}:{}",
            t.node, t.key, t.value, t.effect
        ));
    }
    if let Some(h) = &step.device_health {
        return device_health(cluster, h);
    }
    if let Some(n) = &step.power_off {
        cluster.power_off(&n.node)?;
        return Ok(format!("power off node {}", n.node));
    }
    if let Some(n) = &step.power_on {
        cluster.power_on(&n.node)?;
        return Ok(format!("power on node {}", n.node));
    }
    if step.restart_control_plane.is_some() {
        cluster.restart_control_plane()?;
        return Ok("restart kube-apiserver, kube-controller-manager and kube-scheduler".into());
    }
    if let Some(p) = &step.patch {
        return patch(cluster, p);
    }
    if let Some(n) = step.stop_kubelet.as_ref().or(step.partition.as_ref()) {
        cluster.stop_kubelet(&n.node)?;
        let what = if step.partition.is_some() {
            "partition node"
        } else {
            "stop kubelet on"
        };
        return Ok(format!("{what} {}", n.node));
    }
    if let Some(n) = step.start_kubelet.as_ref().or(step.heal.as_ref()) {
        cluster.start_kubelet(&n.node, step.start_kubelet.is_some())?;
        let what = if step.heal.is_some() {
            "heal node"
        } else {
            "start kubelet on"
        };
        return Ok(format!("{what} {}", n.node));
    }
    if step.restart_scheduler.is_some() {
        cluster.restart_scheduler()?;
        return Ok("restart kube-scheduler".into());
    }
    if step.restart_controller_manager.is_some() {
        cluster.restart_controller_manager();
        return Ok("restart kube-controller-manager".into());
    }
    if let Some(r) = &step.rollout_restart {
        return rollout_restart(cluster, &r.deployment, &ns(&r.namespace));
    }
    if let Some(c) = &step.create_job_from_cron_job {
        return create_job_from_cron_job(cluster, &c.name, &c.cron_job, &ns(&c.namespace));
    }
    Err("empty step".into())
}

/// `deviceHealth`: with `healthy`, the device plugin reports the device so; with `xid`, NVML
/// reports that XID error on the GPU and the NVIDIA device plugin decides
/// (`k8s_deviceplugin::health`): the step prints the plugin's log line. Pods holding the device
/// keep running (upstream kills nothing); the node's allocatable follows at the kubelet's sync.
fn device_health(
    cluster: &mut Cluster,
    h: &crate::scenario::DeviceHealthStep,
) -> Result<String, String> {
    let Some(xid) = h.xid else {
        let healthy = h.healthy.unwrap_or(false);
        cluster.set_device_health(&h.node, &h.device, healthy)?;
        let now = if healthy { "Healthy" } else { "Unhealthy" };
        return Ok(format!("device {} on {} is now {now}", h.device, h.node));
    };
    if cluster.device_healthy(&h.node, &h.device)?.is_none() {
        return Err(format!("node {:?} has no device {:?}", h.node, h.device));
    }
    if k8s_deviceplugin::health::xid_verdict(xid) == k8s_deviceplugin::health::XidVerdict::Unhealthy
    {
        cluster.set_device_health(&h.node, &h.device, false)?;
    }
    Ok(format!(
        "nvidia-device-plugin on {}: {}",
        h.node,
        k8s_deviceplugin::health::xid_log(xid, &h.device)
    ))
}

/// kubectl's name of an object: `<kind>.<group>/<name>`, or `<kind>/<name>` for the core group
/// (`deployment.apps/web`, `pod/web-1`).
fn kubectl_name(kind: &Kind, name: &str) -> String {
    let kind_name = kind.name().to_ascii_lowercase();
    match kind.group() {
        "" => format!("{kind_name}/{name}"),
        g => format!("{kind_name}.{g}/{name}"),
    }
}

/// RFC 7386 JSON merge patch: a map patch merges key by key (`null` removes the key, creating
/// maps where the target has none), anything else replaces the target.
pub(crate) fn merge_patch(target: &mut serde_json::Value, patch: &serde_json::Value) {
    let serde_json::Value::Object(p) = patch else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = serde_json::Value::Object(serde_json::Map::new());
    }
    if let serde_json::Value::Object(t) = target {
        for (k, v) in p {
            if v.is_null() {
                t.remove(k);
            } else {
                merge_patch(t.entry(k.clone()).or_insert(serde_json::Value::Null), v);
            }
        }
    }
}

/// `kubectl patch <kind> <name> --type merge -p <patch>`: the stored object, patched, decoded
/// again and written with an update (so defaulting, admission and validation apply, and the
/// status is kept by the kind's strategy). kubectl prints `<kind>.<group>/<name> patched`, or
/// `patched (no change)` when the patch changes nothing.
fn patch(cluster: &mut Cluster, p: &crate::scenario::PatchStep) -> Result<String, String> {
    let kind = step_kind(cluster, p.api_version.as_deref(), &p.kind)?;
    let namespace = if kind.namespaced() {
        p.namespace.clone().unwrap_or_else(|| "default".into())
    } else {
        String::new()
    };
    let current = cluster
        .api_ref()
        .get(&kind, &namespace, &p.name)
        .map_err(|e| e.message)?;
    let before = current.to_json();
    let mut after = before.clone();
    let patch_json = serde_json::to_value(&p.merge).map_err(|e| format!("invalid patch: {e}"))?;
    merge_patch(&mut after, &patch_json);
    let name = kubectl_name(&kind, &p.name);
    if after == before {
        return Ok(format!("{name} patched (no change)"));
    }
    let obj = manifest::decode_object_json(&kind, after)
        .map_err(|e| format!("unable to decode the patched {name}: {e}"))?;
    cluster.api().update(obj).map_err(|e| e.message)?;
    Ok(format!("{name} patched"))
}

/// kubectl's `kubectl.kubernetes.io/restartedAt` pod-template annotation.
pub(crate) const RESTARTED_AT_ANNOTATION: &str = "kubectl.kubernetes.io/restartedAt";

/// `kubectl rollout restart deployment/<name>` (kubectl `polymorphichelpers.defaultObjectRestarter`):
/// refuses a paused Deployment, else sets the pod template's `kubectl.kubernetes.io/restartedAt`
/// to the current time (RFC 3339 of the tick; kubectl uses the local clock), which makes a new
/// ReplicaSet and a rollout.
fn rollout_restart(cluster: &mut Cluster, name: &str, namespace: &str) -> Result<String, String> {
    let now = cluster.now();
    let api = cluster.api();
    let mut d: Deployment = api.get_typed(namespace, name).map_err(|e| e.message)?;
    if d.spec.paused {
        return Err("can't restart paused deployment (run rollout resume first)".into());
    }
    d.spec.template.metadata.annotations.insert(
        RESTARTED_AT_ANNOTATION.to_string(),
        k8s_types::meta::tick_timestamp(now),
    );
    api.update_typed(d).map_err(|e| e.message)?;
    Ok(format!("deployment.apps/{name} restarted"))
}

/// `kubectl create job <name> --from=cronjob/<cron_job>` (kubectl `createJobFromCronJob`): the
/// job template's labels, annotations plus `cronjob.kubernetes.io/instantiate: manual`, and
/// spec, owned by the CronJob as controller (without `blockOwnerDeletion`, as kubectl).
fn create_job_from_cron_job(
    cluster: &mut Cluster,
    name: &str,
    cron_job: &str,
    namespace: &str,
) -> Result<String, String> {
    let api = cluster.api();
    let cj: CronJob = api.get_typed(namespace, cron_job).map_err(|e| e.message)?;
    let mut annotations = std::collections::BTreeMap::new();
    annotations.insert(
        CRONJOB_INSTANTIATE_ANNOTATION.to_string(),
        "manual".to_string(),
    );
    for (k, v) in &cj.spec.job_template.metadata.annotations {
        annotations.insert(k.clone(), v.clone());
    }
    let job = Job {
        api_version: "batch/v1".into(),
        kind: "Job".into(),
        metadata: ObjectMeta {
            name: name.to_string(),
            namespace: Some(namespace.into()),
            annotations: annotations.into(),
            labels: cj.spec.job_template.metadata.labels.clone(),
            owner_references: vec![OwnerReference {
                api_version: "batch/v1".into(),
                kind: "CronJob".into(),
                name: cj.metadata.name.clone(),
                uid: cj.metadata.uid.clone().unwrap_or_default(),
                controller: Some(true),
                block_owner_deletion: None,
            }]
            .into(),
            ..Default::default()
        },
        spec: cj.spec.job_template.spec.clone(),
        status: Default::default(),
    };
    api.create_typed(job).map_err(|e| e.message)?;
    Ok(format!("job.batch/{name} created"))
}

/// Advances every drain in progress by one tick (after the tick's steps, before the
/// controllers): the lines kubectl would print, as `t=N drain <node>: <line>`, and the number of
/// drains that failed. Finished drains are dropped.
pub(crate) fn advance_drains(
    cluster: &mut Cluster,
    drains: &mut Vec<Drain>,
    rows: &mut Vec<String>,
) -> usize {
    let t = cluster.now();
    let mut failed = 0;
    drains.retain_mut(|d| {
        let adv = d.advance(cluster.api(), t);
        for line in adv.lines {
            rows.push(format!("t={t} drain {}: {line}", d.node()));
        }
        match adv.finished {
            None => true,
            Some(Ok(())) => false,
            Some(Err(e)) => {
                failed += 1;
                rows.push(format!("t={t} drain {} FAILED: {e}", d.node()));
                false
            }
        }
    });
    failed
}

fn kind_by_name(name: &str) -> Option<Kind> {
    Kind::ALL.into_iter().find(|k| k.name() == name)
}

/// The kind a `patch` or `delete` step names: by its name alone, or with `apiVersion` a typed
/// kind, CustomResourceDefinition, or a kind a stored CRD serves at that apiVersion.
fn step_kind(cluster: &Cluster, api_version: Option<&str>, kind: &str) -> Result<Kind, String> {
    use k8s_types::apiextensions::{self as ext, CustomResourceDefinition};
    let Some(av) = api_version else {
        return kind_by_name(kind).ok_or_else(|| format!("unknown kind {kind:?}"));
    };
    if let Some(k) = Kind::typed(av, kind) {
        return Ok(k);
    }
    if av == ext::API_VERSION && kind == ext::KIND {
        return Ok(ext::crd_kind());
    }
    cluster
        .api_ref()
        .list(&ext::crd_kind(), None, None)
        .iter()
        .filter_map(|o| CustomResourceDefinition::from_object(o)?.ok())
        .find_map(|crd| {
            let v = crd.served(av, kind)?;
            Some(crd.resource_kind(&v.name))
        })
        .ok_or_else(|| format!("no kind {kind:?} is served at apiVersion {av:?}"))
}
