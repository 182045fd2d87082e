//! StatefulSet and PersistentVolumeClaim validation (upstream
//! `pkg/apis/apps/validation/validation.go` `ValidateStatefulSet`, `ValidateStatefulSetSpec`,
//! `ValidatePersistentVolumeClaimRetentionPolicy`, `ValidateStatefulSetUpdate`,
//! `ValidateStatefulSetStatus`; `pkg/apis/core/validation/validation.go`
//! `ValidatePersistentVolumeClaim`, `ValidatePersistentVolumeClaimSpec`).

use k8s_types::apps::{
    StatefulSet, StatefulSetSpec, StatefulSetStatus, DELETE_PVC_RETENTION,
    ON_DELETE_STATEFUL_SET_STRATEGY, ORDERED_READY_POD_MANAGEMENT, PARALLEL_POD_MANAGEMENT,
    RETAIN_PVC_RETENTION, ROLLING_UPDATE_STATEFUL_SET_STRATEGY,
};
use k8s_types::core::{PersistentVolumeClaim, PersistentVolumeClaimSpec};
use k8s_types::status::FieldError;

use super::gofmt::{go_string_map, label_selector_string, quote};
use super::labels::{selector_converts, validate_label_selector};
use super::meta::{validate_object_meta, validate_object_meta_update};
use super::names::{is_dns1123_subdomain, name_is_dns_subdomain};
use super::template::{validate_pod_template_spec, SELECTOR_MISMATCH_MSG};
use super::{child, nonnegative, ErrorList};

/// Upstream message for an empty StatefulSet selector.
pub const EMPTY_STATEFUL_SET_SELECTOR_MSG: &str = "empty selector is invalid for statefulset";
/// Upstream `ValidateStatefulSetUpdate`'s message for a change of any other spec field.
pub const FORBIDDEN_UPDATE_MSG: &str = "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden";
/// Upstream `ValidatePersistentVolumeClaimSpec`'s message for no access mode.
pub const ACCESS_MODE_REQUIRED_MSG: &str = "at least 1 access mode is required";
/// Upstream `supportedAccessModes`.
pub const SUPPORTED_ACCESS_MODES: [&str; 4] = [
    "ReadOnlyMany",
    "ReadWriteMany",
    "ReadWriteOnce",
    "ReadWriteOncePod",
];

/// Upstream `ValidatePersistentVolumeClaimSpec` (access modes and the storage request).
pub fn validate_persistent_volume_claim_spec(
    spec: &PersistentVolumeClaimSpec,
    path: &str,
) -> ErrorList {
    let mut errs = Vec::new();
    let modes = child(path, "accessModes");
    if spec.access_modes.is_empty() {
        errs.push(FieldError::required(&modes, ACCESS_MODE_REQUIRED_MSG));
    }
    for m in &spec.access_modes {
        if !SUPPORTED_ACCESS_MODES.contains(&m.as_str()) {
            errs.push(FieldError::not_supported(
                &modes,
                m,
                &SUPPORTED_ACCESS_MODES,
            ));
        }
    }
    let storage = format!("{}[storage]", child(&child(path, "resources"), "requests"));
    match spec.resources.requests.get("storage") {
        None => errs.push(FieldError::required(storage, "")),
        Some(q) if q.is_zero() || q.is_negative() => errs.push(FieldError::invalid(
            storage,
            quote(&q.to_string()),
            "must be greater than zero",
        )),
        Some(_) => {}
    }
    errs
}

/// Upstream `ValidatePersistentVolumeClaim`.
pub fn validate_persistent_volume_claim(pvc: &PersistentVolumeClaim) -> ErrorList {
    let mut errs = validate_object_meta(&pvc.metadata, true, name_is_dns_subdomain, "metadata");
    errs.extend(validate_persistent_volume_claim_spec(&pvc.spec, "spec"));
    errs
}

/// Upstream `ValidatePersistentVolumeClaimUpdate`, reduced to what k8s-mini keeps: the spec is
/// immutable once bound except for the storage request.
pub fn validate_persistent_volume_claim_update(
    new: &PersistentVolumeClaim,
    old: &PersistentVolumeClaim,
) -> ErrorList {
    let mut errs = validate_object_meta_update(&new.metadata, &old.metadata, "metadata");
    errs.extend(validate_persistent_volume_claim_spec(&new.spec, "spec"));
    let mut n = new.spec.clone();
    n.resources
        .requests
        .clone_from(&old.spec.resources.requests);
    if old.spec.volume_name.is_none() {
        n.volume_name.clone_from(&old.spec.volume_name);
    }
    if n != old.spec {
        errs.push(FieldError::forbidden(
            "spec",
            "spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims",
        ));
    }
    errs
}

fn validate_retention(spec: &StatefulSetSpec, path: &str) -> ErrorList {
    let Some(p) = &spec.persistent_volume_claim_retention_policy else {
        return Vec::new();
    };
    let mut errs = Vec::new();
    for (name, v) in [
        ("whenDeleted", &p.when_deleted),
        ("whenScaled", &p.when_scaled),
    ] {
        let v = v.as_deref().unwrap_or("");
        if v != RETAIN_PVC_RETENTION && v != DELETE_PVC_RETENTION {
            errs.push(FieldError::not_supported(
                child(path, name),
                v,
                &[RETAIN_PVC_RETENTION, DELETE_PVC_RETENTION],
            ));
        }
    }
    errs
}

/// Upstream `ValidateStatefulSetSpec`, at `spec`.
pub fn validate_stateful_set_spec(spec: &StatefulSetSpec, path: &str) -> ErrorList {
    let mut errs = Vec::new();
    let pmp = spec.pod_management_policy.as_deref().unwrap_or("");
    match pmp {
        "" => errs.push(FieldError::required(child(path, "podManagementPolicy"), "")),
        ORDERED_READY_POD_MANAGEMENT | PARALLEL_POD_MANAGEMENT => {}
        other => errs.push(FieldError::invalid(
            child(path, "podManagementPolicy"),
            quote(other),
            "must be 'OrderedReady' or 'Parallel'",
        )),
    }
    let us_path = child(path, "updateStrategy");
    let strategy = spec.update_strategy.clone().unwrap_or_default();
    match strategy.type_.as_deref().unwrap_or("") {
        "" => errs.push(FieldError::required(&us_path, "")),
        ON_DELETE_STATEFUL_SET_STRATEGY => {
            if strategy.rolling_update.is_some() {
                errs.push(FieldError::invalid(
                    child(&us_path, "rollingUpdate"),
                    "{...}",
                    "only allowed for updateStrategy 'RollingUpdate'",
                ));
            }
        }
        ROLLING_UPDATE_STATEFUL_SET_STRATEGY => {
            if let Some(ru) = &strategy.rolling_update {
                let ru_path = child(&us_path, "rollingUpdate");
                errs.extend(nonnegative(
                    &child(&ru_path, "partition"),
                    i64::from(ru.partition.unwrap_or(0)),
                ));
                if let Some(mu) = &ru.max_unavailable {
                    let mu_path = child(&ru_path, "maxUnavailable");
                    errs.extend(super::template::validate_positive_int_or_percent(
                        mu, &mu_path,
                    ));
                    errs.extend(super::template::is_not_more_than_100_percent(mu, &mu_path));
                }
            }
        }
        other => errs.push(FieldError::invalid(
            &us_path,
            quote(other),
            "must be 'RollingUpdate' or 'OnDelete'",
        )),
    }
    errs.extend(validate_retention(
        spec,
        &child(path, "persistentVolumeClaimRetentionPolicy"),
    ));
    errs.extend(nonnegative(
        &child(path, "replicas"),
        i64::from(spec.replicas.unwrap_or(1)),
    ));
    errs.extend(nonnegative(
        &child(path, "minReadySeconds"),
        i64::from(spec.min_ready_seconds.unwrap_or(0)),
    ));
    if let Some(o) = &spec.ordinals {
        errs.extend(nonnegative(
            &child(&child(path, "ordinals"), "start"),
            i64::from(o.start),
        ));
    }
    let sel_path = child(path, "selector");
    let template_path = child(path, "template");
    match &spec.selector {
        None => errs.push(FieldError::required(&sel_path, "")),
        Some(sel) => {
            errs.extend(validate_label_selector(sel, &sel_path));
            if sel.is_empty() {
                errs.push(FieldError::invalid(
                    &sel_path,
                    label_selector_string(sel),
                    EMPTY_STATEFUL_SET_SELECTOR_MSG,
                ));
            } else if selector_converts(sel) && !sel.matches(&spec.template.metadata.labels) {
                errs.push(FieldError::invalid(
                    child(&child(&template_path, "metadata"), "labels"),
                    go_string_map(&spec.template.metadata.labels),
                    SELECTOR_MISMATCH_MSG,
                ));
            }
        }
    }
    errs.extend(validate_pod_template_spec(&spec.template, &template_path));
    let rp = spec.template.spec.restart_policy.as_deref().unwrap_or("");
    if rp != "Always" {
        errs.push(FieldError::not_supported(
            child(&child(&template_path, "spec"), "restartPolicy"),
            rp,
            &["Always"],
        ));
    }
    let vct = child(path, "volumeClaimTemplates");
    for (i, claim) in spec.volume_claim_templates.iter().enumerate() {
        let at = format!("{vct}[{i}]");
        let name_path = child(&child(&at, "metadata"), "name");
        if claim.metadata.name.is_empty() {
            errs.push(FieldError::required(
                &name_path,
                "name or generateName is required",
            ));
        } else {
            for msg in is_dns1123_subdomain(&claim.metadata.name) {
                errs.push(FieldError::invalid(
                    &name_path,
                    quote(&claim.metadata.name),
                    msg,
                ));
            }
        }
        errs.extend(validate_persistent_volume_claim_spec(
            &claim.spec,
            &child(&at, "spec"),
        ));
    }
    errs
}

/// Upstream `ValidateStatefulSet` (names are DNS subdomains: `ValidateStatefulSetName`).
pub fn validate_stateful_set(ss: &StatefulSet) -> ErrorList {
    let mut errs = validate_object_meta(&ss.metadata, true, name_is_dns_subdomain, "metadata");
    errs.extend(validate_stateful_set_spec(&ss.spec, "spec"));
    errs
}

/// Upstream `ValidateStatefulSetUpdate`: only replicas, ordinals, template, updateStrategy,
/// revisionHistoryLimit, persistentVolumeClaimRetentionPolicy and minReadySeconds may change.
pub fn validate_stateful_set_update(new: &StatefulSet, old: &StatefulSet) -> ErrorList {
    let mut errs = validate_object_meta_update(&new.metadata, &old.metadata, "metadata");
    errs.extend(validate_stateful_set_spec(&new.spec, "spec"));
    let mut n = new.spec.clone();
    n.replicas = old.spec.replicas;
    n.ordinals.clone_from(&old.spec.ordinals);
    n.template.clone_from(&old.spec.template);
    n.update_strategy.clone_from(&old.spec.update_strategy);
    n.revision_history_limit = old.spec.revision_history_limit;
    n.persistent_volume_claim_retention_policy
        .clone_from(&old.spec.persistent_volume_claim_retention_policy);
    n.min_ready_seconds = old.spec.min_ready_seconds;
    if n != old.spec {
        errs.push(FieldError::forbidden("spec", FORBIDDEN_UPDATE_MSG));
    }
    errs
}

/// Upstream `ValidateStatefulSetStatus`.
pub fn validate_stateful_set_status(s: &StatefulSetStatus, path: &str) -> ErrorList {
    let mut errs = Vec::new();
    for (field, v) in [
        ("replicas", s.replicas),
        ("readyReplicas", s.ready_replicas),
        ("currentReplicas", s.current_replicas),
        ("updatedReplicas", s.updated_replicas),
        ("availableReplicas", s.available_replicas),
    ] {
        errs.extend(nonnegative(&child(path, field), i64::from(v)));
    }
    if let Some(g) = s.observed_generation {
        errs.extend(nonnegative(&child(path, "observedGeneration"), g));
    }
    if let Some(c) = s.collision_count {
        errs.extend(nonnegative(&child(path, "collisionCount"), i64::from(c)));
    }
    let msg = "cannot be greater than status.replicas";
    for (field, v) in [
        ("readyReplicas", s.ready_replicas),
        ("currentReplicas", s.current_replicas),
        ("updatedReplicas", s.updated_replicas),
    ] {
        if v > s.replicas {
            errs.push(FieldError::invalid(child(path, field), v.to_string(), msg));
        }
    }
    if s.available_replicas > s.ready_replicas {
        errs.push(FieldError::invalid(
            child(path, "availableReplicas"),
            s.available_replicas.to_string(),
            "cannot be greater than status.readyReplicas",
        ));
    }
    errs
}

/// Upstream `ValidateStatefulSetStatusUpdate`: the status, and collisionCount never decremented.
pub fn validate_stateful_set_status_update(new: &StatefulSet, old: &StatefulSet) -> ErrorList {
    let mut errs = validate_stateful_set_status(&new.status, "status");
    errs.extend(validate_object_meta_update(
        &new.metadata,
        &old.metadata,
        "metadata",
    ));
    if new.status.collision_count.unwrap_or(0) < old.status.collision_count.unwrap_or(0) {
        errs.push(FieldError::invalid(
            "status.collisionCount",
            new.status.collision_count.unwrap_or(0).to_string(),
            "cannot be decremented",
        ));
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::defaults::stateful_set::set_defaults_stateful_set;
    use k8s_types::core::Container;
    use k8s_types::labels::LabelSelector;

    fn ss() -> StatefulSet {
        let mut ss = StatefulSet::default();
        ss.metadata.name = "web".into();
        ss.metadata.namespace = Some("default".into());
        ss.spec.service_name = "nginx".into();
        ss.spec.selector = Some(LabelSelector::from_labels([("app", "nginx")]));
        ss.spec.template.metadata.labels = [("app".to_string(), "nginx".to_string())].into();
        ss.spec.template.spec.containers = vec![Container {
            name: "nginx".into(),
            image: "nginx:1".into(),
            ..Default::default()
        }]
        .into();
        let mut claim = PersistentVolumeClaim::default();
        claim.metadata.name = "www".into();
        claim.spec.access_modes = vec!["ReadWriteOnce".into()];
        claim
            .spec
            .resources
            .requests
            .insert("storage".into(), k8s_types::Quantity::parse("1Gi").unwrap());
        ss.spec.volume_claim_templates = vec![claim];
        set_defaults_stateful_set(&mut ss);
        ss.spec.template.spec.containers[0].image_pull_policy = Some("IfNotPresent".into());
        ss
    }

    fn messages(errs: &ErrorList) -> Vec<String> {
        errs.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn defaulted_stateful_set_is_valid() {
        assert_eq!(
            messages(&validate_stateful_set(&ss())),
            Vec::<String>::new()
        );
    }

    #[test]
    fn upstream_messages_for_policy_strategy_selector_and_claims() {
        let mut s = ss();
        s.spec.pod_management_policy = Some("Random".into());
        s.spec.update_strategy.as_mut().unwrap().type_ = Some("Sometimes".into());
        s.spec.selector = None;
        s.spec.volume_claim_templates[0].spec.access_modes.clear();
        s.spec.volume_claim_templates[0]
            .spec
            .resources
            .requests
            .clear();
        s.spec
            .persistent_volume_claim_retention_policy
            .as_mut()
            .unwrap()
            .when_scaled = Some("Keep".into());
        assert_eq!(
            messages(&validate_stateful_set(&s)),
            vec![
                "spec.podManagementPolicy: Invalid value: \"Random\": must be 'OrderedReady' or 'Parallel'",
                "spec.updateStrategy: Invalid value: \"Sometimes\": must be 'RollingUpdate' or 'OnDelete'",
                "spec.persistentVolumeClaimRetentionPolicy.whenScaled: Unsupported value: \"Keep\": supported values: \"Retain\", \"Delete\"",
                "spec.selector: Required value",
                "spec.volumeClaimTemplates[0].spec.accessModes: Required value: at least 1 access mode is required",
                "spec.volumeClaimTemplates[0].spec.resources.requests[storage]: Required value",
            ]
        );
    }

    #[test]
    fn selector_mismatch_and_negative_partition() {
        let mut s = ss();
        s.spec.template.metadata.labels = [("app".to_string(), "other".to_string())].into();
        s.spec
            .update_strategy
            .as_mut()
            .unwrap()
            .rolling_update
            .as_mut()
            .unwrap()
            .partition = Some(-1);
        let m = messages(&validate_stateful_set(&s));
        assert!(m.contains(&"spec.updateStrategy.rollingUpdate.partition: Invalid value: -1: must be greater than or equal to 0".to_string()), "{m:?}");
        assert!(m.iter().any(|e| e.starts_with("spec.template.metadata.labels: Invalid value: map[string]string{\"app\":\"other\"}: `selector` does not match template `labels`")), "{m:?}");
    }

    #[test]
    fn only_some_spec_fields_may_change() {
        let old = ss();
        let mut new = old.clone();
        new.spec.replicas = Some(5);
        new.spec.template.spec.containers[0].image = "nginx:2".into();
        assert_eq!(
            messages(&validate_stateful_set_update(&new, &old)),
            Vec::<String>::new()
        );
        new.spec.service_name = "other".into();
        assert_eq!(
            messages(&validate_stateful_set_update(&new, &old)),
            vec![format!("spec: Forbidden: {FORBIDDEN_UPDATE_MSG}")]
        );
    }
}
