//! A Scenario's timed steps (`spec.steps`): decoding their inline manifests and running each one
//! as the kubectl command it is named after, through the apiserver like every other writer.

use k8s_types::apiserver::{ApiExt, DeleteOptions};
use k8s_types::apps::{Deployment, ReplicaSet};
use k8s_types::core::Node;
use k8s_types::labels::LabelSelector;
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
            step.drain.is_some(),
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
    if step.apply.is_some() {
        let mut names = Vec::new();
        for obj in &rs.apply {
            names.push(format!(
                "{}/{}",
                obj.kind().name().to_ascii_lowercase(),
                obj.meta().name
            ));
            cluster.apply(obj.clone()).map_err(|s| s.message)?;
        }
        return Ok(format!("apply {}", names.join(", ")));
    }
    if let Some(d) = &step.delete {
        let kind = kind_by_name(&d.kind).ok_or_else(|| format!("unknown kind {:?}", d.kind))?;
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
            other => return Err(format!("cannot scale kind {other:?}")),
        }
        return Ok(format!("scale {} to {}", s.name, s.replicas));
    }
    if let Some(si) = &step.set_image {
        let api = cluster.api();
        let mut d: Deployment = api
            .get_typed(&ns(&si.namespace), &si.deployment)
            .map_err(|e| e.message)?;
        let mut changed = 0;
        for c in &mut d.spec.template.spec.containers {
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
        api.update_typed(d).map_err(|e| e.message)?;
        return Ok(format!(
            "set image deployment/{} {}",
            si.deployment, si.image
        ));
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
        cluster.set_device_health(&h.node, &h.device, h.healthy)?;
        return Ok(format!(
            "device {} on {} is now {}",
            h.device,
            h.node,
            if h.healthy { "Healthy" } else { "Unhealthy" }
        ));
    }
    Err("empty step".into())
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
    Kind::TYPED.into_iter().find(|k| k.name() == name)
}
