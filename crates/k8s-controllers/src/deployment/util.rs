//! Pure helpers of the Deployment controller, after upstream
//! `pkg/controller/deployment/util/deployment_util.go`: fenceposts (maxSurge/maxUnavailable),
//! `NewRSNewReplicas`, revisions and the annotations the controller keeps on ReplicaSets,
//! proportional-scaling fractions, new/old ReplicaSet lookup, replica counts and the
//! Deployment conditions (`Available`, `Progressing`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use k8s_types::apps::{
    Deployment, DeploymentStatus, IntOrString, PodTemplateSpec, ReplicaSet,
    RollingUpdateDeployment, POD_TEMPLATE_HASH_LABEL, REVISION_ANNOTATION,
};
use k8s_types::meta::{tick_timestamp, timestamp_tick};
use k8s_types::Tick;

use crate::controller_utils::{cmp_by_creation_timestamp, rs_replicas};

/// Upstream `RevisionHistoryAnnotation`: earlier revisions a ReplicaSet served (after a rollback).
pub const REVISION_HISTORY_ANNOTATION: &str = "deployment.kubernetes.io/revision-history";
/// Upstream `DesiredReplicasAnnotation`: the Deployment's `spec.replicas` when the ReplicaSet was
/// last scaled; tells a scaling event apart from a rollout.
pub const DESIRED_REPLICAS_ANNOTATION: &str = "deployment.kubernetes.io/desired-replicas";
/// Upstream `MaxReplicasAnnotation`: `spec.replicas + maxSurge` when the ReplicaSet was last scaled;
/// the base of proportional scaling.
pub const MAX_REPLICAS_ANNOTATION: &str = "deployment.kubernetes.io/max-replicas";
/// `kubectl apply`'s annotation, never copied to ReplicaSets (upstream `v1.LastAppliedConfigAnnotation`).
pub const LAST_APPLIED_CONFIG_ANNOTATION: &str = "kubectl.kubernetes.io/last-applied-configuration";
/// Upstream `apps.DeprecatedRollbackTo`, never copied to ReplicaSets.
pub const DEPRECATED_ROLLBACK_TO_ANNOTATION: &str = "deprecated.deployment.rollback.to";
/// Upstream `maxRevHistoryLengthInChars` of the revision-history annotation.
pub const MAX_REV_HISTORY_LENGTH_IN_CHARS: usize = 2000;

/// `RollingUpdate` (upstream `apps.RollingUpdateDeploymentStrategyType`).
pub const ROLLING_UPDATE: &str = "RollingUpdate";
/// `Recreate` (upstream `apps.RecreateDeploymentStrategyType`).
pub const RECREATE: &str = "Recreate";

/// Deployment condition type `Available`.
pub const DEPLOYMENT_AVAILABLE: &str = "Available";
/// Deployment condition type `Progressing`.
pub const DEPLOYMENT_PROGRESSING: &str = "Progressing";
/// Deployment condition type `ReplicaFailure`.
pub const DEPLOYMENT_REPLICA_FAILURE: &str = "ReplicaFailure";

/// Progressing reason: the new ReplicaSet was scaled or its pods progressed.
pub const REPLICA_SET_UPDATED_REASON: &str = "ReplicaSetUpdated";
/// Progressing reason: creating the new ReplicaSet failed.
pub const FAILED_RS_CREATE_REASON: &str = "ReplicaSetCreateError";
/// Progressing reason: the controller created the new ReplicaSet.
pub const NEW_REPLICA_SET_REASON: &str = "NewReplicaSetCreated";
/// Progressing reason: the controller found (adopted) the new ReplicaSet.
pub const FOUND_NEW_RS_REASON: &str = "FoundNewReplicaSet";
/// Progressing reason: the rollout completed.
pub const NEW_RS_AVAILABLE_REASON: &str = "NewReplicaSetAvailable";
/// Progressing reason: no progress within `progressDeadlineSeconds`.
pub const TIMED_OUT_REASON: &str = "ProgressDeadlineExceeded";
/// Progressing reason: the Deployment is paused.
pub const PAUSED_DEPLOY_REASON: &str = "DeploymentPaused";
/// Progressing reason: the Deployment was resumed.
pub const RESUMED_DEPLOY_REASON: &str = "DeploymentResumed";
/// Available reason: at least `replicas - maxUnavailable` pods are available.
pub const MINIMUM_REPLICAS_AVAILABLE: &str = "MinimumReplicasAvailable";
/// Available reason: fewer than `replicas - maxUnavailable` pods are available.
pub const MINIMUM_REPLICAS_UNAVAILABLE: &str = "MinimumReplicasUnavailable";

/// `spec.progressDeadlineSeconds` meaning "no deadline" (upstream `math.MaxInt32`).
const NO_DEADLINE: i32 = i32::MAX;

/// Upstream defaults (apps/v1 `SetDefaults_Deployment`).
const DEFAULT_REVISION_HISTORY_LIMIT: i32 = 10;
const DEFAULT_PROGRESS_DEADLINE_SECONDS: i32 = 600;
const DEFAULT_SURGE_OR_UNAVAILABLE: &str = "25%";

/// `spec.replicas`, 1 when unset.
pub fn replicas(d: &Deployment) -> i32 {
    d.spec.replicas.unwrap_or(1)
}

/// `spec.minReadySeconds` (ticks), 0 when unset.
pub fn min_ready_seconds(d: &Deployment) -> i32 {
    d.spec.min_ready_seconds.unwrap_or(0)
}

/// `spec.revisionHistoryLimit`, 10 when unset (apps/v1 default).
pub fn revision_history_limit(d: &Deployment) -> i32 {
    d.spec
        .revision_history_limit
        .unwrap_or(DEFAULT_REVISION_HISTORY_LIMIT)
}

/// `spec.progressDeadlineSeconds` (ticks), 600 when unset (apps/v1 default).
pub fn progress_deadline_seconds(d: &Deployment) -> i32 {
    d.spec
        .progress_deadline_seconds
        .unwrap_or(DEFAULT_PROGRESS_DEADLINE_SECONDS)
}

/// The strategy type, `RollingUpdate` when unset (apps/v1 default).
pub fn strategy_type(d: &Deployment) -> &str {
    d.spec
        .strategy
        .as_ref()
        .and_then(|s| s.type_.as_deref())
        .unwrap_or(ROLLING_UPDATE)
}

/// Upstream `IsRollingUpdate`.
pub fn is_rolling_update(d: &Deployment) -> bool {
    strategy_type(d) == ROLLING_UPDATE
}

/// The rolling-update parameters with apps/v1 defaulting applied (a missing `maxSurge` or
/// `maxUnavailable` is `25%`), as the apiserver would have stored them.
pub fn rolling_update_params(d: &Deployment) -> RollingUpdateDeployment {
    let given = d
        .spec
        .strategy
        .as_ref()
        .and_then(|s| s.rolling_update.clone())
        .unwrap_or_default();
    let pct = || Some(IntOrString::String(DEFAULT_SURGE_OR_UNAVAILABLE.into()));
    RollingUpdateDeployment {
        max_unavailable: given.max_unavailable.or_else(pct),
        max_surge: given.max_surge.or_else(pct),
    }
}

/// Upstream `ResolveFenceposts`: `(maxSurge, maxUnavailable)` for `desired` pods; surge rounds up,
/// unavailable rounds down, a missing value is 0, and when both resolve to 0 unavailable becomes 1.
///
/// # Errors
/// The message of `intstr.GetScaledValueFromIntOrPercent` when a value is a string that is not a
/// percentage.
pub fn resolve_fenceposts(
    max_surge: Option<&IntOrString>,
    max_unavailable: Option<&IntOrString>,
    desired: i32,
) -> Result<(i32, i32), String> {
    let zero = IntOrString::Int(0);
    let surge = max_surge.unwrap_or(&zero).scaled_value(desired, true)?;
    let mut unavailable = max_unavailable
        .unwrap_or(&zero)
        .scaled_value(desired, false)?;
    if surge == 0 && unavailable == 0 {
        unavailable = 1;
    }
    Ok((surge, unavailable))
}

/// Upstream `MaxUnavailable`: 0 for Recreate or 0 replicas; else the resolved value capped at
/// `spec.replicas`. An invalid value counts as 0 (validation rejects it upstream).
pub fn max_unavailable(d: &Deployment) -> i32 {
    let replicas = replicas(d);
    if !is_rolling_update(d) || replicas == 0 {
        return 0;
    }
    let p = rolling_update_params(d);
    let (_, unavailable) =
        resolve_fenceposts(p.max_surge.as_ref(), p.max_unavailable.as_ref(), replicas)
            .unwrap_or((0, 0));
    unavailable.min(replicas)
}

/// Upstream `MaxSurge`: 0 for Recreate; else the resolved value (invalid counts as 0).
pub fn max_surge(d: &Deployment) -> i32 {
    if !is_rolling_update(d) {
        return 0;
    }
    let p = rolling_update_params(d);
    resolve_fenceposts(
        p.max_surge.as_ref(),
        p.max_unavailable.as_ref(),
        replicas(d),
    )
    .map(|(s, _)| s)
    .unwrap_or(0)
}

/// Upstream `NewRSNewReplicas`: the size the new ReplicaSet should have now. RollingUpdate: grow by
/// `replicas + maxSurge - sum(spec.replicas of all ReplicaSets)`, never past `replicas`; Recreate:
/// `replicas`. `all_replicas` is that sum (the new ReplicaSet included).
///
/// # Errors
/// An invalid `maxSurge`, or an unsupported strategy type (upstream: `deployment type %v isn't
/// supported`).
pub fn new_rs_new_replicas(
    d: &Deployment,
    all_replicas: i32,
    new_rs_replicas: i32,
) -> Result<i32, String> {
    match strategy_type(d) {
        ROLLING_UPDATE => {
            let p = rolling_update_params(d);
            let zero = IntOrString::Int(0);
            let surge = p
                .max_surge
                .as_ref()
                .unwrap_or(&zero)
                .scaled_value(replicas(d), true)?;
            let max_total = replicas(d) + surge;
            if all_replicas >= max_total {
                return Ok(new_rs_replicas);
            }
            let scale_up = (max_total - all_replicas).min(replicas(d) - new_rs_replicas);
            Ok(new_rs_replicas + scale_up)
        }
        RECREATE => Ok(replicas(d)),
        other => Err(format!("deployment type {other} isn't supported")),
    }
}

/// Upstream `Revision`: the revision annotation as a number; 0 when absent.
///
/// # Errors
/// When the annotation is not an integer.
pub fn revision(annotations: &BTreeMap<String, String>) -> Result<i64, String> {
    match annotations.get(REVISION_ANNOTATION) {
        None => Ok(0),
        Some(v) => v
            .parse::<i64>()
            .map_err(|e| format!("strconv.ParseInt: parsing {v:?}: {e}")),
    }
}

/// Upstream `MaxRevision`: the highest parseable revision among `rss` (0 when none).
pub fn max_revision(rss: &[ReplicaSet]) -> i64 {
    rss.iter()
        .filter_map(|rs| revision(&rs.metadata.annotations).ok())
        .max()
        .unwrap_or(0)
        .max(0)
}

/// Upstream `ReplicaSetsByRevision`: ascending revision; unparseable or equal revisions fall back
/// to creation time, then name.
pub fn cmp_by_revision(a: &ReplicaSet, b: &ReplicaSet) -> std::cmp::Ordering {
    match (
        revision(&a.metadata.annotations),
        revision(&b.metadata.annotations),
    ) {
        (Ok(x), Ok(y)) if x != y => x.cmp(&y),
        _ => cmp_by_creation_timestamp(a, b),
    }
}

fn skip_copy_annotation(key: &str) -> bool {
    matches!(
        key,
        LAST_APPLIED_CONFIG_ANNOTATION
            | REVISION_ANNOTATION
            | REVISION_HISTORY_ANNOTATION
            | DESIRED_REPLICAS_ANNOTATION
            | MAX_REPLICAS_ANNOTATION
            | DEPRECATED_ROLLBACK_TO_ANNOTATION
    )
}

/// Upstream `copyDeploymentAnnotationsToReplicaSet`: every Deployment annotation except the
/// controller's own and `kubectl apply`'s; true when the ReplicaSet changed.
fn copy_deployment_annotations(d: &Deployment, rs: &mut ReplicaSet) -> bool {
    let mut changed = false;
    for (k, v) in &d.metadata.annotations {
        if skip_copy_annotation(k) || rs.metadata.annotations.get(k) == Some(v) {
            continue;
        }
        rs.metadata.annotations.insert(k.clone(), v.clone());
        changed = true;
    }
    changed
}

/// Upstream `SetReplicasAnnotations`: desired-replicas and max-replicas; true when changed.
pub fn set_replicas_annotations(rs: &mut ReplicaSet, desired: i32, max: i32) -> bool {
    let mut updated = false;
    for (key, value) in [
        (DESIRED_REPLICAS_ANNOTATION, desired.to_string()),
        (MAX_REPLICAS_ANNOTATION, max.to_string()),
    ] {
        if rs.metadata.annotations.get(key) != Some(&value) {
            rs.metadata.annotations.insert(key.to_string(), value);
            updated = true;
        }
    }
    updated
}

/// Upstream `ReplicasAnnotationsNeedUpdate`.
pub fn replicas_annotations_need_update(rs: &ReplicaSet, desired: i32, max: i32) -> bool {
    rs.metadata.annotations.get(DESIRED_REPLICAS_ANNOTATION) != Some(&desired.to_string())
        || rs.metadata.annotations.get(MAX_REPLICAS_ANNOTATION) != Some(&max.to_string())
}

/// Upstream `SetNewReplicaSetAnnotations`: copies the Deployment's annotations, raises the
/// revision to `new_revision` when it is higher (keeping the old one in revision-history, at most
/// 2000 characters), and for a ReplicaSet about to be created sets desired/max-replicas. True when
/// the annotations changed.
pub fn set_new_replica_set_annotations(
    d: &Deployment,
    rs: &mut ReplicaSet,
    new_revision: i64,
    exists: bool,
) -> bool {
    let mut changed = copy_deployment_annotations(d, rs);
    let old_revision = rs.metadata.annotations.get(REVISION_ANNOTATION).cloned();
    let old_int = match old_revision.as_deref() {
        None | Some("") => 0,
        Some(v) => match v.parse::<i64>() {
            Ok(n) => n,
            Err(_) => return false,
        },
    };
    if old_int < new_revision {
        rs.metadata
            .annotations
            .insert(REVISION_ANNOTATION.into(), new_revision.to_string());
        changed = true;
        if let Some(old) = old_revision.filter(|o| !o.is_empty()) {
            let history = rs
                .metadata
                .annotations
                .get(REVISION_HISTORY_ANNOTATION)
                .cloned()
                .unwrap_or_default();
            if history.is_empty() {
                rs.metadata
                    .annotations
                    .insert(REVISION_HISTORY_ANNOTATION.into(), old);
            } else {
                let mut parts: Vec<&str> = history.split(',').collect();
                let mut total = history.len() + old.len() + 1;
                let mut start = 0;
                while total > MAX_REV_HISTORY_LENGTH_IN_CHARS && start < parts.len() {
                    total -= parts[start].len() + 1;
                    start += 1;
                }
                if total <= MAX_REV_HISTORY_LENGTH_IN_CHARS {
                    parts = parts.split_off(start);
                    parts.push(&old);
                    let joined = parts.join(",");
                    rs.metadata
                        .annotations
                        .insert(REVISION_HISTORY_ANNOTATION.into(), joined);
                }
            }
        }
    }
    if !exists && set_replicas_annotations(rs, replicas(d), replicas(d) + max_surge(d)) {
        changed = true;
    }
    changed
}

/// Upstream `SetDeploymentRevision`: true when the Deployment's revision annotation changed.
pub fn set_deployment_revision(d: &mut Deployment, revision: &str) -> bool {
    if d.metadata
        .annotations
        .get(REVISION_ANNOTATION)
        .map(String::as_str)
        == Some(revision)
    {
        return false;
    }
    d.metadata
        .annotations
        .insert(REVISION_ANNOTATION.into(), revision.to_string());
    true
}

/// Upstream `EqualIgnoreHash`: templates equal once the pod-template-hash label is dropped.
pub fn equal_ignore_hash(a: &PodTemplateSpec, b: &PodTemplateSpec) -> bool {
    let strip = |t: &PodTemplateSpec| {
        let mut c = t.clone();
        c.metadata.labels.remove(POD_TEMPLATE_HASH_LABEL);
        c
    };
    strip(a) == strip(b)
}

/// Upstream `FindNewReplicaSet`: the oldest ReplicaSet whose template equals the Deployment's.
pub fn find_new_replica_set(d: &Deployment, rss: &[ReplicaSet]) -> Option<ReplicaSet> {
    let mut sorted = rss.to_vec();
    sorted.sort_by(cmp_by_creation_timestamp);
    sorted
        .into_iter()
        .find(|rs| equal_ignore_hash(&rs.spec.template, &d.spec.template))
}

/// Upstream `FindOldReplicaSets` (its second result): every ReplicaSet except the new one.
pub fn find_old_replica_sets(d: &Deployment, rss: &[ReplicaSet]) -> Vec<ReplicaSet> {
    let new_uid = find_new_replica_set(d, rss).and_then(|n| n.metadata.uid);
    rss.iter()
        .filter(|rs| new_uid.is_none() || rs.metadata.uid != new_uid)
        .cloned()
        .collect()
}

/// Upstream `GetReplicaCountForReplicaSets`: sum of `spec.replicas`.
pub fn replica_count<'a>(rss: impl IntoIterator<Item = &'a ReplicaSet>) -> i32 {
    rss.into_iter().map(rs_replicas).sum()
}

/// Upstream `GetActualReplicaCountForReplicaSets`: sum of `status.replicas`.
pub fn actual_replica_count<'a>(rss: impl IntoIterator<Item = &'a ReplicaSet>) -> i32 {
    rss.into_iter().map(|rs| rs.status.replicas).sum()
}

/// Upstream `GetReadyReplicaCountForReplicaSets`: sum of `status.readyReplicas`.
pub fn ready_replica_count<'a>(rss: impl IntoIterator<Item = &'a ReplicaSet>) -> i32 {
    rss.into_iter().map(|rs| rs.status.ready_replicas).sum()
}

/// Upstream `GetAvailableReplicaCountForReplicaSets`: sum of `status.availableReplicas`.
pub fn available_replica_count<'a>(rss: impl IntoIterator<Item = &'a ReplicaSet>) -> i32 {
    rss.into_iter().map(|rs| rs.status.available_replicas).sum()
}

/// Upstream `GetDesiredReplicasAnnotation`.
pub fn desired_replicas_annotation(rs: &ReplicaSet) -> Option<i32> {
    rs.metadata
        .annotations
        .get(DESIRED_REPLICAS_ANNOTATION)
        .and_then(|v| v.parse().ok())
}

/// Upstream `FindActiveOrLatest`: the only active ReplicaSet; the newest one (new RS first) when
/// none is active; `None` when several are active.
pub fn find_active_or_latest(
    new_rs: Option<&ReplicaSet>,
    old_rss: &[ReplicaSet],
) -> Option<ReplicaSet> {
    if new_rs.is_none() && old_rss.is_empty() {
        return None;
    }
    let mut olds = old_rss.to_vec();
    olds.sort_by(|a, b| cmp_by_creation_timestamp(b, a));
    let all: Vec<ReplicaSet> = olds.iter().chain(new_rs).cloned().collect();
    let active: Vec<&ReplicaSet> = all.iter().filter(|rs| rs_replicas(rs) > 0).collect();
    match active.len() {
        0 => new_rs.cloned().or_else(|| olds.first().cloned()),
        1 => Some(active[0].clone()),
        _ => None,
    }
}

/// Upstream `IsSaturated`: the new ReplicaSet has all desired replicas, its desired-replicas
/// annotation agrees, and all are available.
pub fn is_saturated(d: &Deployment, rs: Option<&ReplicaSet>) -> bool {
    let Some(rs) = rs else { return false };
    let Some(desired) = desired_replicas_annotation(rs) else {
        return false;
    };
    rs_replicas(rs) == replicas(d)
        && desired == replicas(d)
        && rs.status.available_replicas == replicas(d)
}

/// Upstream `getReplicaSetFraction`: how many replicas `rs` gains (negative: loses) when the
/// Deployment's allowed size changes, from its max-replicas annotation (falling back to
/// `status.replicas` of the Deployment). Rounded half away from zero, as Go's `math.Round`.
fn replica_set_fraction(rs: &ReplicaSet, d: &Deployment) -> i32 {
    if replicas(d) == 0 {
        return -rs_replicas(rs);
    }
    let deployment_replicas = replicas(d) + max_surge(d);
    let annotated = rs
        .metadata
        .annotations
        .get(MAX_REPLICAS_ANNOTATION)
        .and_then(|v| v.parse::<i32>().ok())
        .unwrap_or(d.status.replicas);
    if annotated == 0 {
        return 0;
    }
    let new_size =
        f64::from(rs_replicas(rs)) * f64::from(deployment_replicas) / f64::from(annotated);
    new_size.round() as i32 - rs_replicas(rs)
}

/// Upstream `GetProportion`: the share of `to_add` (already `added` handed out) that `rs` gets,
/// never more than what is left.
pub fn get_proportion(rs: &ReplicaSet, d: &Deployment, to_add: i32, added: i32) -> i32 {
    if rs_replicas(rs) == 0 || to_add == 0 || to_add == added {
        return 0;
    }
    let fraction = replica_set_fraction(rs, d);
    let allowed = to_add - added;
    if to_add > 0 {
        fraction.min(allowed)
    } else {
        fraction.max(allowed)
    }
}

/// Upstream `DeploymentComplete`: all replicas updated, no extra ones, all available, and the
/// current generation observed.
pub fn deployment_complete(d: &Deployment, status: &DeploymentStatus) -> bool {
    let r = replicas(d);
    status.updated_replicas == r
        && status.replicas == r
        && status.available_replicas == r
        && status.observed_generation.unwrap_or(0) >= d.metadata.generation.unwrap_or(0)
}

/// Upstream `DeploymentProgressing`: more updated, fewer old, more ready or more available pods
/// than the Deployment's current status says.
pub fn deployment_progressing(d: &Deployment, new_status: &DeploymentStatus) -> bool {
    let old = &d.status;
    let old_old = old.replicas - old.updated_replicas;
    let new_old = new_status.replicas - new_status.updated_replicas;
    new_status.updated_replicas > old.updated_replicas
        || new_old < old_old
        || new_status.ready_replicas > old.ready_replicas
        || new_status.available_replicas > old.available_replicas
}

/// Upstream `HasProgressDeadline`: set and not `MaxInt32`.
pub fn has_progress_deadline(d: &Deployment) -> bool {
    progress_deadline_seconds(d) != NO_DEADLINE
}

/// Upstream `DeploymentTimedOut`: the Progressing condition (unless complete or already timed
/// out) was last updated more than `progressDeadlineSeconds` ticks before `now`.
pub fn deployment_timed_out(d: &Deployment, new_status: &DeploymentStatus, now: Tick) -> bool {
    if !has_progress_deadline(d) {
        return false;
    }
    let conds = conditions(new_status);
    let Some(c) = get_condition(&conds, DEPLOYMENT_PROGRESSING) else {
        return false;
    };
    if c.reason.as_deref() == Some(NEW_RS_AVAILABLE_REASON) {
        return false;
    }
    if c.reason.as_deref() == Some(TIMED_OUT_REASON) {
        return true;
    }
    // A missing time is Go's zero time: long before any tick.
    let from = c
        .last_update_time
        .as_deref()
        .and_then(timestamp_tick)
        .map(|t| t as i128)
        .unwrap_or(i128::MIN / 2);
    from + i128::from(progress_deadline_seconds(d)) < now as i128
}

/// Upstream `appsv1.DeploymentCondition`. k8s-mini's `DeploymentStatus.conditions` holds them as
/// JSON values; this is their typed form, serialized with upstream's field names.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeploymentCondition {
    /// `Available`, `Progressing` or `ReplicaFailure`.
    #[serde(rename = "type")]
    pub type_: String,
    /// `True`, `False`, `Unknown`.
    pub status: String,
    /// RFC 3339 rendering of the tick the condition was last updated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_update_time: Option<String>,
    /// RFC 3339 rendering of the tick the status last changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_transition_time: Option<String>,
    /// Machine-readable reason.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Human-readable message, worded as upstream.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// Upstream `NewDeploymentCondition`, stamped with tick `now`.
pub fn new_condition(
    type_: &str,
    status: &str,
    reason: &str,
    message: impl Into<String>,
    now: Tick,
) -> DeploymentCondition {
    let ts = tick_timestamp(now);
    DeploymentCondition {
        type_: type_.into(),
        status: status.into(),
        last_update_time: Some(ts.clone()),
        last_transition_time: Some(ts),
        reason: Some(reason.into()),
        message: Some(message.into()),
    }
}

/// The typed conditions of a status; entries that do not parse as a condition are skipped.
pub fn conditions(status: &DeploymentStatus) -> Vec<DeploymentCondition> {
    status
        .conditions
        .iter()
        .filter_map(|v| serde_json::from_value(v.clone()).ok())
        .collect()
}

/// Stores typed conditions back into a status.
pub fn store_conditions(status: &mut DeploymentStatus, conds: &[DeploymentCondition]) {
    status.conditions = conds
        .iter()
        .filter_map(|c| serde_json::to_value(c).ok())
        .collect();
}

/// Upstream `GetDeploymentCondition`.
pub fn get_condition<'a>(
    conds: &'a [DeploymentCondition],
    type_: &str,
) -> Option<&'a DeploymentCondition> {
    conds.iter().find(|c| c.type_ == type_)
}

/// Upstream `SetDeploymentCondition`: no change when status and reason are the same; keeps
/// `lastTransitionTime` when only the reason changes; the condition moves to the end.
pub fn set_condition(status: &mut DeploymentStatus, mut cond: DeploymentCondition) {
    let mut conds = conditions(status);
    if let Some(cur) = get_condition(&conds, &cond.type_) {
        if cur.status == cond.status && cur.reason == cond.reason {
            return;
        }
        if cur.status == cond.status {
            cond.last_transition_time = cur.last_transition_time.clone();
        }
    }
    conds.retain(|c| c.type_ != cond.type_);
    conds.push(cond);
    store_conditions(status, &conds);
}

/// Upstream `RemoveDeploymentCondition`.
pub fn remove_condition(status: &mut DeploymentStatus, type_: &str) {
    let mut conds = conditions(status);
    let before = conds.len();
    conds.retain(|c| c.type_ != type_);
    if conds.len() != before {
        store_conditions(status, &conds);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_types::apps::DeploymentStrategy;

    fn s(v: &str) -> IntOrString {
        IntOrString::String(v.into())
    }

    #[test]
    fn resolve_fenceposts_matches_upstream_table() {
        // Upstream deployment_util_test.go TestResolveFenceposts.
        type Case<'a> = (Option<&'a str>, Option<&'a str>, i32, Option<(i32, i32)>);
        let cases: [Case; 7] = [
            (Some("0%"), Some("0%"), 0, Some((0, 1))),
            (Some("39%"), Some("39%"), 10, Some((4, 3))),
            (Some("oops"), Some("39%"), 10, None),
            (Some("55%"), Some("urg"), 10, None),
            (None, Some("39%"), 10, Some((0, 3))),
            (Some("39%"), None, 10, Some((4, 0))),
            (None, None, 10, Some((0, 1))),
        ];
        for (surge, unavail, desired, want) in cases {
            let (ms, mu) = (surge.map(s), unavail.map(s));
            let got = resolve_fenceposts(ms.as_ref(), mu.as_ref(), desired);
            assert_eq!(got.ok(), want, "{surge:?} {unavail:?} {desired}");
        }
    }

    fn deployment(replicas: i32, surge: IntOrString, unavailable: IntOrString) -> Deployment {
        let mut d = Deployment::default();
        d.spec.replicas = Some(replicas);
        d.spec.strategy = Some(DeploymentStrategy {
            type_: Some(ROLLING_UPDATE.into()),
            rolling_update: Some(RollingUpdateDeployment {
                max_surge: Some(surge),
                max_unavailable: Some(unavailable),
            }),
        });
        d
    }

    #[test]
    fn new_rs_new_replicas_matches_upstream_tables() {
        // Upstream rolling_test.go TestDeploymentController_reconcileNewReplicaSet:
        // (deploymentReplicas, maxSurge, oldReplicas, newReplicas) -> expected new replicas.
        let cases = [
            (10, 0, 10, 0, 0),
            (10, 2, 10, 0, 2),
            (10, 2, 5, 0, 7),
            (10, 2, 10, 2, 2),
        ];
        for (dr, surge, old, new, want) in cases {
            let d = deployment(dr, IntOrString::Int(surge), IntOrString::Int(0));
            assert_eq!(new_rs_new_replicas(&d, old + new, new), Ok(want));
        }
        // Upstream deployment_util_test.go TestNewRSNewReplicas (other RS has 5 replicas).
        // Upstream passes only the other RS as allRSs, so the pod count is 5.
        let d = deployment(1, IntOrString::Int(1), IntOrString::Int(1));
        assert_eq!(new_rs_new_replicas(&d, 5, 5), Ok(5));
        let d = deployment(6, IntOrString::Int(10), IntOrString::Int(1));
        assert_eq!(new_rs_new_replicas(&d, 5, 2), Ok(6));
        let mut d = deployment(3, IntOrString::Int(1), IntOrString::Int(1));
        if let Some(st) = d.spec.strategy.as_mut() {
            st.type_ = Some(RECREATE.into());
        }
        assert_eq!(new_rs_new_replicas(&d, 5, 1), Ok(3));
    }

    #[test]
    fn max_unavailable_matches_upstream_table() {
        // Upstream deployment_util_test.go TestMaxUnavailable (maxSurge 1).
        let cases = [
            (10, IntOrString::Int(5), 5),
            (10, IntOrString::Int(10), 10),
            (5, IntOrString::Int(10), 5),
            (0, IntOrString::Int(10), 0),
            (10, s("50%"), 5),
            (10, s("100%"), 10),
            (5, s("100%"), 5),
        ];
        for (replicas, mu, want) in cases {
            let d = deployment(replicas, IntOrString::Int(1), mu.clone());
            assert_eq!(max_unavailable(&d), want, "{replicas} {mu:?}");
        }
        let mut d = Deployment::default();
        d.spec.strategy = Some(DeploymentStrategy {
            type_: Some(RECREATE.into()),
            rolling_update: None,
        });
        assert_eq!(max_unavailable(&d), 0);
    }

    #[test]
    fn defaults_are_25_percent() {
        let mut d = Deployment::default();
        d.spec.replicas = Some(10);
        assert_eq!((max_surge(&d), max_unavailable(&d)), (3, 2));
    }

    #[test]
    fn revision_history_keeps_old_revisions() {
        let d = Deployment::default();
        let mut rs = ReplicaSet::default();
        rs.metadata
            .annotations
            .insert(REVISION_ANNOTATION.into(), "1".into());
        assert!(set_new_replica_set_annotations(&d, &mut rs, 3, true));
        assert_eq!(rs.metadata.annotations[REVISION_ANNOTATION], "3");
        assert_eq!(rs.metadata.annotations[REVISION_HISTORY_ANNOTATION], "1");
        assert!(set_new_replica_set_annotations(&d, &mut rs, 5, true));
        assert_eq!(rs.metadata.annotations[REVISION_HISTORY_ANNOTATION], "1,3");
        assert!(!set_new_replica_set_annotations(&d, &mut rs, 4, true));
    }

    #[test]
    fn proportions_follow_max_replicas_annotation() {
        // Deployment scaled from 10 to 20 (maxSurge 0): an RS annotated max-replicas=10 with 4
        // replicas gets 4 * 20 / 10 - 4 = 4 more (computed by hand from getReplicaSetFraction).
        let d = deployment(20, IntOrString::Int(0), IntOrString::Int(1));
        let mut rs = ReplicaSet::default();
        rs.spec.replicas = Some(4);
        rs.metadata
            .annotations
            .insert(MAX_REPLICAS_ANNOTATION.into(), "10".into());
        assert_eq!(get_proportion(&rs, &d, 10, 0), 4);
        assert_eq!(get_proportion(&rs, &d, 10, 8), 2, "capped by what is left");
        assert_eq!(get_proportion(&rs, &d, 10, 10), 0);
    }

    fn status(replicas: i32, updated: i32, ready: i32, available: i32) -> DeploymentStatus {
        DeploymentStatus {
            replicas,
            updated_replicas: updated,
            ready_replicas: ready,
            available_replicas: available,
            ..Default::default()
        }
    }

    #[test]
    fn deployment_complete_matches_upstream_table() {
        // Upstream deployment_util_test.go TestDeploymentComplete:
        // (desired, current, updated, available, maxUnavailable, maxSurge) -> complete.
        let cases = [
            ((5, 5, 5, 4, 1, 0), false),
            ((5, 5, 5, 3, 1, 0), false),
            ((5, 5, 5, 5, 0, 0), true),
            ((5, 5, 4, 5, 0, 0), false),
            ((1, 2, 1, 1, 0, 1), false),
            ((1, 1, 1, 0, 1, 1), false),
        ];
        for ((desired, current, updated, available, mu, ms), want) in cases {
            let d = deployment(desired, IntOrString::Int(ms), IntOrString::Int(mu));
            let st = status(current, updated, 0, available);
            assert_eq!(
                deployment_complete(&d, &st),
                want,
                "{desired} {current} {updated} {available}"
            );
        }
    }

    #[test]
    fn deployment_progressing_matches_upstream_table() {
        // Upstream deployment_util_test.go TestDeploymentProgressing: (old status, new status).
        let cases = [
            ((10, 4, 4, 4), (10, 6, 4, 4), true),
            ((10, 4, 4, 4), (10, 4, 4, 4), false),
            ((10, 4, 6, 6), (8, 4, 6, 6), true),
            ((10, 7, 3, 3), (10, 6, 3, 3), false),
            ((10, 4, 7, 7), (8, 8, 5, 5), true),
            ((10, 10, 9, 8), (10, 10, 10, 8), true),
            ((10, 10, 10, 9), (10, 10, 10, 10), true),
        ];
        for (old, new, want) in cases {
            let d = Deployment {
                status: status(old.0, old.1, old.2, old.3),
                ..Default::default()
            };
            let st = status(new.0, new.1, new.2, new.3);
            assert_eq!(deployment_progressing(&d, &st), want, "{old:?} -> {new:?}");
        }
    }

    #[test]
    fn deployment_timed_out_matches_upstream_table() {
        // Upstream deployment_util_test.go TestDeploymentTimedOut, with 00:01:SS as tick 60 + SS:
        // deadline 10s, last update 00:01:09, now 00:01:20 -> 11s -> timed out; 00:01:11 -> 9s -> not.
        let with = |pds: Option<i32>, reason: &str, from: Tick| {
            let mut d = Deployment::default();
            d.spec.progress_deadline_seconds = pds;
            let mut c = new_condition(DEPLOYMENT_PROGRESSING, "True", reason, "", from);
            if reason.is_empty() {
                c.reason = None;
            }
            store_conditions(&mut d.status, &[c]);
            d
        };
        let d = with(Some(i32::MAX), "", 69);
        assert!(
            !deployment_timed_out(&d, &d.status, 80),
            "infinite deadline"
        );
        let d = with(Some(10), "", 69);
        assert!(deployment_timed_out(&d, &d.status, 80));
        let d = with(Some(10), "", 71);
        assert!(!deployment_timed_out(&d, &d.status, 80));
        let d = with(Some(10), NEW_RS_AVAILABLE_REASON, 0);
        assert!(!deployment_timed_out(&d, &d.status, 80), "complete rollout");
    }

    #[test]
    fn set_condition_keeps_transition_time_for_same_status() {
        let mut st = DeploymentStatus::default();
        set_condition(&mut st, new_condition("Progressing", "True", "A", "m", 5));
        set_condition(&mut st, new_condition("Progressing", "True", "B", "m", 9));
        let c = conditions(&st);
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].reason.as_deref(), Some("B"));
        assert_eq!(c[0].last_transition_time, Some(tick_timestamp(5)));
        assert_eq!(c[0].last_update_time, Some(tick_timestamp(9)));
    }
}
