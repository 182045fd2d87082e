//! Pure helpers of the StatefulSet controller, after upstream
//! `pkg/controller/statefulset/stateful_set_utils.go`: ordinals and names
//! (`getParentNameAndOrdinal`, `getPodName`, `getPersistentVolumeClaimName`), pod identity
//! (`updateIdentity`, `identityMatches`), storage (`getPersistentVolumeClaims`,
//! `updateStorage`, `storageMatches`), health (`isRunningAndReady`, `isRunningAndAvailable`,
//! `isHealthy`), revisions (`getPodRevision`, `newVersionedStatefulSetPod`) and the claim
//! retention owner references (`updateClaimOwnerRefForSetAndPod`).

use std::collections::BTreeMap;

use k8s_types::apps::{
    PodTemplateSpec, StatefulSet, CONTROLLER_REVISION_HASH_LABEL, DELETE_PVC_RETENTION,
    ORDERED_READY_POD_MANAGEMENT, POD_INDEX_LABEL, ROLLING_UPDATE_STATEFUL_SET_STRATEGY,
    STATEFUL_SET_POD_NAME_LABEL,
};
use k8s_types::core::{
    phases, PersistentVolumeClaim, PersistentVolumeClaimVolumeSource, Pod, Volume,
};
use k8s_types::meta::{ObjectMeta, OwnerReference};
use k8s_types::{Kind, Tick};

use crate::controller_utils::{is_pod_available, new_controller_ref, pod_from_template};

/// Upstream `getParentNameAndOrdinal` (regexp `(.*)-([0-9]+)$`): the parent's name and the
/// ordinal, or `None` when the name does not end in `-<digits>` (or the number overflows).
pub fn parent_name_and_ordinal(pod_name: &str) -> Option<(&str, i32)> {
    let (parent, ord) = pod_name.rsplit_once('-')?;
    if ord.is_empty() || !ord.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((parent, ord.parse().ok()?))
}

/// Upstream `getOrdinal`: -1 for a pod whose name has none.
pub fn ordinal(pod: &Pod) -> i32 {
    parent_name_and_ordinal(&pod.metadata.name).map_or(-1, |(_, o)| o)
}

/// Upstream `isMemberOf`: the pod's parent name is the set's.
pub fn is_member_of(set: &StatefulSet, pod: &Pod) -> bool {
    parent_name_and_ordinal(&pod.metadata.name).is_some_and(|(p, _)| p == set.metadata.name)
}

/// Upstream `getPodName`: `<set>-<ordinal>`.
pub fn pod_name(set: &StatefulSet, ordinal: i32) -> String {
    format!("{}-{ordinal}", set.metadata.name)
}

/// Upstream `getPersistentVolumeClaimName`: `<claim template>-<set>-<ordinal>`.
pub fn claim_name(set: &StatefulSet, template: &PersistentVolumeClaim, ordinal: i32) -> String {
    format!("{}-{}-{ordinal}", template.metadata.name, set.metadata.name)
}

/// `spec.replicas` (1 when unset, the apps/v1 default).
pub fn replicas(set: &StatefulSet) -> i32 {
    set.spec.replicas.unwrap_or(1)
}

/// Upstream `getStartOrdinal`: `spec.ordinals.start`, 0 when unset.
pub fn start_ordinal(set: &StatefulSet) -> i32 {
    set.spec.ordinals.as_ref().map_or(0, |o| o.start)
}

/// Upstream `podInOrdinalRange`: `start <= ordinal < start + replicas`.
pub fn in_ordinal_range(set: &StatefulSet, ordinal: i32) -> bool {
    let start = start_ordinal(set);
    ordinal >= start && ordinal < start.saturating_add(replicas(set))
}

/// Upstream `allowsBurst`: every policy but OrderedReady (the default) creates and deletes in
/// parallel.
pub fn allows_burst(set: &StatefulSet) -> bool {
    set.spec
        .pod_management_policy
        .as_deref()
        .unwrap_or(ORDERED_READY_POD_MANAGEMENT)
        != ORDERED_READY_POD_MANAGEMENT
}

/// The update strategy's type (RollingUpdate when unset).
pub fn strategy_type(set: &StatefulSet) -> &str {
    set.spec
        .update_strategy
        .as_ref()
        .and_then(|s| s.type_.as_deref())
        .unwrap_or(ROLLING_UPDATE_STATEFUL_SET_STRATEGY)
}

/// `rollingUpdate.partition` under RollingUpdate (0 when unset); `None` for OnDelete.
pub fn partition(set: &StatefulSet) -> Option<i32> {
    if strategy_type(set) != ROLLING_UPDATE_STATEFUL_SET_STRATEGY {
        return None;
    }
    Some(
        set.spec
            .update_strategy
            .as_ref()
            .and_then(|s| s.rolling_update.as_ref())
            .and_then(|r| r.partition)
            .unwrap_or(0),
    )
}

/// Upstream `isCreated`: the pod has a phase.
pub fn is_created(pod: &Pod) -> bool {
    !pod.phase().is_empty()
}

/// Upstream `isRunningAndReady`: Running with `Ready=True`.
pub fn is_running_and_ready(pod: &Pod) -> bool {
    pod.phase() == phases::RUNNING && pod.is_ready()
}

/// Upstream `isRunningAndAvailable`: Running and available for `minReadySeconds`.
pub fn is_running_and_available(pod: &Pod, min_ready_seconds: i32, now: Tick) -> bool {
    pod.phase() == phases::RUNNING && is_pod_available(pod, min_ready_seconds, now)
}

/// Upstream `isHealthy`: running and ready, and not being deleted.
pub fn is_healthy(pod: &Pod) -> bool {
    is_running_and_ready(pod) && !pod.is_terminating()
}

/// Upstream `getPodRevision`: the `controller-revision-hash` label.
pub fn pod_revision(pod: &Pod) -> &str {
    pod.metadata
        .labels
        .get(CONTROLLER_REVISION_HASH_LABEL)
        .map_or("", String::as_str)
}

/// Upstream `getPersistentVolumeClaims`: one claim per template, named by
/// [`claim_name`], in the set's namespace, with the template's labels plus the selector's
/// `matchLabels`; in template-name order.
pub fn claims_for(set: &StatefulSet, ordinal: i32) -> BTreeMap<String, PersistentVolumeClaim> {
    let mut out = BTreeMap::new();
    for t in &set.spec.volume_claim_templates {
        let mut claim = t.clone();
        claim.api_version = "v1".into();
        claim.kind = "PersistentVolumeClaim".into();
        claim.metadata = ObjectMeta {
            name: claim_name(set, t, ordinal),
            namespace: set.metadata.namespace.clone(),
            labels: t.metadata.labels.clone(),
            annotations: t.metadata.annotations.clone(),
            ..Default::default()
        };
        if let Some(sel) = &set.spec.selector {
            for (k, v) in &sel.match_labels {
                claim.metadata.labels.insert(k.clone(), v.clone());
            }
        }
        claim.status = Default::default();
        out.insert(t.metadata.name.clone(), claim);
    }
    out
}

/// Upstream `updateStorage`: a `persistentVolumeClaim` volume per claim template (template-name
/// order), then the template's other volumes.
pub fn update_storage(set: &StatefulSet, pod: &mut Pod, ordinal: i32) {
    let claims = claims_for(set, ordinal);
    let mut volumes: Vec<Volume> = claims
        .iter()
        .map(|(name, claim)| Volume {
            name: name.clone(),
            persistent_volume_claim: Some(PersistentVolumeClaimVolumeSource {
                claim_name: claim.metadata.name.clone(),
                read_only: None,
            }),
            other: BTreeMap::new(),
        })
        .collect();
    volumes.extend(
        pod.spec
            .volumes
            .iter()
            .filter(|v| !claims.contains_key(&v.name))
            .cloned(),
    );
    pod.spec.volumes = volumes;
}

/// Upstream `storageMatches`: every claim template's volume names its claim.
pub fn storage_matches(set: &StatefulSet, pod: &Pod) -> bool {
    let ord = ordinal(pod);
    if ord < 0 {
        return false;
    }
    claims_for(set, ord).iter().all(|(name, claim)| {
        pod.spec.volumes.iter().any(|v| {
            v.name == *name
                && v.persistent_volume_claim
                    .as_ref()
                    .is_some_and(|c| c.claim_name == claim.metadata.name)
        })
    })
}

/// Upstream `updateIdentity`: name, namespace, `hostname` = the pod's name, `subdomain` =
/// `serviceName`, and the pod-name and pod-index labels.
pub fn update_identity(set: &StatefulSet, pod: &mut Pod, ordinal: i32) {
    let name = pod_name(set, ordinal);
    pod.metadata.name.clone_from(&name);
    pod.metadata.generate_name = None;
    pod.metadata.namespace.clone_from(&set.metadata.namespace);
    pod.spec.hostname = Some(name.clone());
    pod.spec.subdomain = Some(set.spec.service_name.clone()).filter(|s| !s.is_empty());
    pod.metadata
        .labels
        .insert(STATEFUL_SET_POD_NAME_LABEL.to_string(), name);
    pod.metadata
        .labels
        .insert(POD_INDEX_LABEL.to_string(), ordinal.to_string());
}

/// Upstream `identityMatches`: name, namespace, the pod-name label, hostname and subdomain.
pub fn identity_matches(set: &StatefulSet, pod: &Pod) -> bool {
    let Some((parent, ord)) = parent_name_and_ordinal(&pod.metadata.name) else {
        return false;
    };
    let subdomain = Some(set.spec.service_name.clone()).filter(|s| !s.is_empty());
    parent == set.metadata.name
        && ord >= 0
        && pod.metadata.namespace == set.metadata.namespace
        && pod.metadata.labels.get(STATEFUL_SET_POD_NAME_LABEL) == Some(&pod.metadata.name)
        && pod.metadata.labels.get(POD_INDEX_LABEL) == Some(&ord.to_string())
        && pod.spec.hostname.as_deref() == Some(pod.metadata.name.as_str())
        && pod.spec.subdomain == subdomain
}

/// Upstream `newStatefulSetPod` + `newVersionedStatefulSetPod`: the pod of `ordinal` from
/// `template`, labelled with `revision`, with its identity and storage.
pub fn new_stateful_set_pod(
    set: &StatefulSet,
    template: &PodTemplateSpec,
    revision: &str,
    ordinal: i32,
) -> Pod {
    let cref = new_controller_ref(&set.metadata, &Kind::StatefulSet);
    let mut pod = pod_from_template(template, &set.metadata, cref);
    update_identity(set, &mut pod, ordinal);
    update_storage(set, &mut pod, ordinal);
    pod.metadata.labels.insert(
        CONTROLLER_REVISION_HASH_LABEL.to_string(),
        revision.to_string(),
    );
    pod
}

/// Upstream `newVersionedStatefulSetPod`'s choice: under RollingUpdate, an ordinal below the
/// partition gets the current revision; every other pod the update revision.
pub fn uses_current_revision(set: &StatefulSet, ordinal: i32) -> bool {
    partition(set).is_some_and(|p| ordinal < p)
}

/// The retention policy's (`whenDeleted`, `whenScaled`) are `Delete`.
pub fn retention_deletes(set: &StatefulSet) -> (bool, bool) {
    let p = set.spec.persistent_volume_claim_retention_policy.as_ref();
    let is_delete = |v: Option<&String>| v.is_some_and(|s| s == DELETE_PVC_RETENTION);
    (
        is_delete(p.and_then(|p| p.when_deleted.as_ref())),
        is_delete(p.and_then(|p| p.when_scaled.as_ref())),
    )
}

/// A plain (non-controller) owner reference, as upstream's `setOwnerRef` writes on claims.
pub fn owner_ref(meta: &ObjectMeta, kind: &Kind) -> OwnerReference {
    OwnerReference {
        api_version: kind.api_version().to_string(),
        kind: kind.name().to_string(),
        name: meta.name.clone(),
        uid: meta.uid.clone().unwrap_or_default(),
        controller: None,
        block_owner_deletion: None,
    }
}

/// Upstream `updateClaimOwnerRefForSetAndPod`: the owner references a claim of `ordinal`
/// should carry: the set when `whenDeleted: Delete`; the pod when `whenScaled: Delete` and the
/// ordinal is condemned (outside the ordinal range). Other owners are kept.
pub fn claim_owner_refs(
    set: &StatefulSet,
    claim: &PersistentVolumeClaim,
    pod: Option<&Pod>,
    ordinal: i32,
) -> Vec<OwnerReference> {
    let (when_deleted, when_scaled) = retention_deletes(set);
    let set_uid = set.metadata.uid.as_deref().unwrap_or("");
    let pod_uid = pod.and_then(|p| p.metadata.uid.as_deref()).unwrap_or("");
    let mut refs: Vec<OwnerReference> = claim
        .metadata
        .owner_references
        .iter()
        .filter(|r| r.uid != set_uid && (pod_uid.is_empty() || r.uid != pod_uid))
        .cloned()
        .collect();
    if when_deleted {
        refs.push(owner_ref(&set.metadata, &Kind::StatefulSet));
    }
    if let Some(p) = pod.filter(|_| when_scaled && !in_ordinal_range(set, ordinal)) {
        refs.push(owner_ref(&p.metadata, &Kind::Pod));
    }
    refs
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_types::apps::StatefulSetPersistentVolumeClaimRetentionPolicy;

    fn set() -> StatefulSet {
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": "web", "namespace": "default", "uid": "u-web"},
            "spec": {
                "replicas": 2,
                "serviceName": "nginx",
                "selector": {"matchLabels": {"app": "nginx"}},
                "template": {"metadata": {"labels": {"app": "nginx"}},
                    "spec": {"containers": [{"name": "c", "image": "nginx:1"}],
                             "volumes": [{"name": "cache", "emptyDir": {}}]}},
                "volumeClaimTemplates": [
                    {"metadata": {"name": "www"}, "spec": {"accessModes": ["ReadWriteOnce"]}},
                    {"metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"]}}
                ]
            }
        }))
        .expect("set")
    }

    #[test]
    fn names_and_ordinals_as_upstream() {
        assert_eq!(parent_name_and_ordinal("web-0"), Some(("web", 0)));
        assert_eq!(parent_name_and_ordinal("my-web-12"), Some(("my-web", 12)));
        assert_eq!(parent_name_and_ordinal("web"), None);
        assert_eq!(parent_name_and_ordinal("web-x1"), None);
        assert_eq!(parent_name_and_ordinal("web-"), None);
        let s = set();
        assert_eq!(pod_name(&s, 3), "web-3");
        assert_eq!(
            claim_name(&s, &s.spec.volume_claim_templates[0], 1),
            "www-web-1"
        );
        assert!(in_ordinal_range(&s, 1));
        assert!(!in_ordinal_range(&s, 2));
    }

    #[test]
    fn new_pod_has_identity_storage_and_revision() {
        let s = set();
        let p = new_stateful_set_pod(&s, &s.spec.template, "web-abc", 1);
        assert_eq!(p.metadata.name, "web-1");
        assert_eq!(p.metadata.generate_name, None);
        assert_eq!(p.spec.hostname.as_deref(), Some("web-1"));
        assert_eq!(p.spec.subdomain.as_deref(), Some("nginx"));
        assert_eq!(
            p.metadata.labels["statefulset.kubernetes.io/pod-name"],
            "web-1"
        );
        assert_eq!(p.metadata.labels["apps.kubernetes.io/pod-index"], "1");
        assert_eq!(p.metadata.labels["controller-revision-hash"], "web-abc");
        let vols: Vec<(String, Option<String>)> = p
            .spec
            .volumes
            .iter()
            .map(|v| {
                (
                    v.name.clone(),
                    v.persistent_volume_claim
                        .as_ref()
                        .map(|c| c.claim_name.clone()),
                )
            })
            .collect();
        assert_eq!(
            vols,
            vec![
                ("data".to_string(), Some("data-web-1".to_string())),
                ("www".to_string(), Some("www-web-1".to_string())),
                ("cache".to_string(), None),
            ]
        );
        assert!(identity_matches(&s, &p));
        assert!(storage_matches(&s, &p));
        let mut other = p.clone();
        other.spec.subdomain = None;
        assert!(!identity_matches(&s, &other));
    }

    #[test]
    fn claims_carry_selector_labels_and_retention_owners() {
        let mut s = set();
        let claims = claims_for(&s, 0);
        assert_eq!(claims["www"].metadata.name, "www-web-0");
        assert_eq!(claims["www"].metadata.labels["app"], "nginx");
        assert!(claim_owner_refs(&s, &claims["www"], None, 0).is_empty());
        s.spec.persistent_volume_claim_retention_policy =
            Some(StatefulSetPersistentVolumeClaimRetentionPolicy {
                when_deleted: Some("Delete".into()),
                when_scaled: Some("Delete".into()),
            });
        let mut pod = new_stateful_set_pod(&s, &s.spec.template, "r", 5);
        pod.metadata.uid = Some("u-pod".into());
        // Ordinal 0 is in range: only the set owns the claim.
        let refs = claim_owner_refs(&s, &claims["www"], Some(&pod), 0);
        assert_eq!(refs.len(), 1);
        assert_eq!(
            (refs[0].kind.as_str(), refs[0].uid.as_str()),
            ("StatefulSet", "u-web")
        );
        // Ordinal 5 is condemned (replicas 2): the pod owns it too.
        let refs = claim_owner_refs(&s, &claims["www"], Some(&pod), 5);
        assert_eq!(
            refs.iter().map(|r| r.kind.as_str()).collect::<Vec<_>>(),
            vec!["StatefulSet", "Pod"]
        );
    }

    #[test]
    fn partition_picks_the_revision() {
        let mut s = set();
        s.spec.update_strategy = Some(
            serde_json::from_value(serde_json::json!(
            {"type": "RollingUpdate", "rollingUpdate": {"partition": 1}}))
            .expect("s"),
        );
        assert!(uses_current_revision(&s, 0));
        assert!(!uses_current_revision(&s, 1));
        s.spec.update_strategy = Some(
            serde_json::from_value(serde_json::json!(
            {"type": "OnDelete"}))
            .expect("s"),
        );
        assert!(!uses_current_revision(&s, 0));
        assert_eq!(partition(&s), None);
    }
}
