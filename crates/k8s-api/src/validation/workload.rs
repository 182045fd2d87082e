//! `scheduling.k8s.io/v1alpha2` Workload and PodGroup validation (upstream
//! `pkg/apis/scheduling/validation/validation.go`, v1.36: `ValidateWorkload`,
//! `ValidateWorkloadUpdate`, `ValidatePodGroup`, `ValidatePodGroupUpdate`), and the pod's
//! `spec.schedulingGroup`. Names of templates and references are DNS labels (`k8s-short-name`);
//! object names DNS subdomains. A zero `minCount` is `Required` (declarative validation reads 0 as
//! unset), a negative one `must be greater than zero`. Simplification: more than 8 templates is
//! reported as `Invalid ... must have at most 8 items` (upstream: `Too many: 9: must have at most 8
//! items`; k8s-mini's field errors have no TooMany type).

use k8s_types::core::PodSchedulingGroup;
use k8s_types::scheduling::v1alpha2::{
    PodGroup, PodGroupSchedulingPolicy, PodGroupTemplateReference, TypedLocalObjectReference,
    Workload, WORKLOAD_MAX_POD_GROUP_TEMPLATES,
};
use k8s_types::status::FieldError;

use super::meta::{validate_object_meta, validate_object_meta_update};
use super::names::{
    is_dns1123_label, is_dns1123_subdomain, name_is_dns_subdomain, name_is_path_segment,
};
use super::{
    child, index, invalid_each, ErrorList, FIELD_IMMUTABLE_ERROR_MSG, IS_NOT_POSITIVE_ERROR_MSG,
};

/// A required DNS-label name (`Required value` when empty).
fn short_name(path: &str, value: &str) -> ErrorList {
    if value.is_empty() {
        return vec![FieldError::required(path, "")];
    }
    invalid_each(path, value, is_dns1123_label(value))
}

/// Upstream `validatePodGroupSchedulingPolicy`: exactly one of `basic`, `gang`.
fn validate_policy(p: &PodGroupSchedulingPolicy, path: &str) -> ErrorList {
    match (&p.basic, &p.gang) {
        (None, None) => vec![FieldError::invalid(
            path,
            "\"\"",
            "must specify one of: `basic`, `gang`",
        )],
        (Some(_), Some(_)) => vec![FieldError::invalid(
            path,
            "{`basic`, `gang`}",
            "exactly one of `basic`, `gang` is required, but multiple fields are set",
        )],
        (Some(_), None) => Vec::new(),
        (None, Some(g)) => {
            let path = child(&child(path, "gang"), "minCount");
            if g.min_count == 0 {
                vec![FieldError::required(path, "")]
            } else if g.min_count < 0 {
                vec![FieldError::invalid(
                    path,
                    g.min_count.to_string(),
                    IS_NOT_POSITIVE_ERROR_MSG,
                )]
            } else {
                Vec::new()
            }
        }
    }
}

fn validate_controller_ref(r: &TypedLocalObjectReference, path: &str) -> ErrorList {
    let mut errs = Vec::new();
    if !r.api_group.is_empty() {
        errs.extend(invalid_each(
            &child(path, "apiGroup"),
            &r.api_group,
            is_dns1123_subdomain(&r.api_group),
        ));
    }
    for (field, value) in [("kind", &r.kind), ("name", &r.name)] {
        let p = child(path, field);
        if value.is_empty() {
            errs.push(FieldError::required(p, ""));
        } else {
            errs.extend(invalid_each(&p, value, name_is_path_segment(value, false)));
        }
    }
    errs
}

fn validate_templates(w: &Workload, check_items: bool) -> ErrorList {
    let path = "spec.podGroupTemplates";
    let templates = &w.spec.pod_group_templates;
    if templates.is_empty() {
        return vec![FieldError::required(path, "must have at least one item")];
    }
    if templates.len() > WORKLOAD_MAX_POD_GROUP_TEMPLATES {
        return vec![FieldError::invalid(
            path,
            templates.len().to_string(),
            format!("must have at most {WORKLOAD_MAX_POD_GROUP_TEMPLATES} items"),
        )];
    }
    let mut errs = Vec::new();
    if !check_items {
        return errs;
    }
    let mut seen = std::collections::BTreeSet::new();
    for (i, t) in templates.iter().enumerate() {
        let p = index(path, i);
        errs.extend(short_name(&child(&p, "name"), &t.name));
        if !seen.insert(t.name.as_str()) {
            errs.push(FieldError::duplicate(
                p.clone(),
                super::gofmt::quote(&t.name),
            ));
        }
        errs.extend(validate_policy(
            &t.scheduling_policy,
            &child(&p, "schedulingPolicy"),
        ));
    }
    errs
}

/// Upstream `ValidateWorkload`.
pub fn validate_workload(w: &Workload) -> ErrorList {
    let mut errs = validate_object_meta(&w.metadata, true, name_is_dns_subdomain, "metadata");
    if let Some(r) = &w.spec.controller_ref {
        errs.extend(validate_controller_ref(r, "spec.controllerRef"));
    }
    errs.extend(validate_templates(w, true));
    errs
}

/// Upstream `ValidateWorkloadUpdate`: `controllerRef` (once set) and `podGroupTemplates` are
/// immutable.
pub fn validate_workload_update(new: &Workload, old: &Workload) -> ErrorList {
    let mut errs = validate_object_meta_update(&new.metadata, &old.metadata, "metadata");
    match (&old.spec.controller_ref, &new.spec.controller_ref) {
        (Some(o), n) if n.as_ref() != Some(o) => errs.push(immutable("spec.controllerRef")),
        (None, Some(n)) => errs.extend(validate_controller_ref(n, "spec.controllerRef")),
        _ => {}
    }
    if new.spec.pod_group_templates != old.spec.pod_group_templates {
        errs.push(immutable("spec.podGroupTemplates"));
    }
    errs.extend(validate_templates(new, false));
    errs
}

/// `Invalid value: ...: field is immutable`, the value printed as upstream's object dump is not:
/// k8s-mini prints `{...}` in its place.
fn immutable(path: &str) -> FieldError {
    FieldError::invalid(path, "{...}", FIELD_IMMUTABLE_ERROR_MSG)
}

fn validate_template_ref(r: &PodGroupTemplateReference, path: &str) -> ErrorList {
    let Some(w) = &r.workload else {
        return vec![FieldError::required(child(path, "workload"), "")];
    };
    let p = child(path, "workload");
    let mut errs = short_name(&child(&p, "workloadName"), &w.workload_name);
    errs.extend(short_name(
        &child(&p, "podGroupTemplateName"),
        &w.pod_group_template_name,
    ));
    errs
}

/// Upstream `ValidatePodGroup`.
pub fn validate_pod_group(pg: &PodGroup) -> ErrorList {
    let mut errs = validate_object_meta(&pg.metadata, true, name_is_dns_subdomain, "metadata");
    if let Some(r) = &pg.spec.pod_group_template_ref {
        errs.extend(validate_template_ref(r, "spec.podGroupTemplateRef"));
    }
    errs.extend(validate_policy(
        &pg.spec.scheduling_policy,
        "spec.schedulingPolicy",
    ));
    errs
}

/// Upstream `ValidatePodGroupUpdate`: `podGroupTemplateRef` and `schedulingPolicy` are immutable.
pub fn validate_pod_group_update(new: &PodGroup, old: &PodGroup) -> ErrorList {
    let mut errs = validate_object_meta_update(&new.metadata, &old.metadata, "metadata");
    if new.spec.pod_group_template_ref != old.spec.pod_group_template_ref {
        errs.push(immutable("spec.podGroupTemplateRef"));
    }
    if new.spec.scheduling_policy != old.spec.scheduling_policy {
        errs.push(immutable("spec.schedulingPolicy"));
    }
    errs
}

/// A pod's `spec.schedulingGroup`: `podGroupName` is required and a DNS label (its change after
/// creation is refused by the pod update's spec check, as upstream).
pub fn validate_scheduling_group(g: &PodSchedulingGroup, path: &str) -> ErrorList {
    short_name(
        &child(path, "podGroupName"),
        g.pod_group_name.as_deref().unwrap_or(""),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_types::scheduling::v1alpha2::{
        BasicSchedulingPolicy, GangSchedulingPolicy, PodGroupTemplate,
        WorkloadPodGroupTemplateReference,
    };

    fn msgs(errs: ErrorList) -> Vec<String> {
        errs.iter().map(ToString::to_string).collect()
    }

    fn gang(n: i32) -> PodGroupSchedulingPolicy {
        PodGroupSchedulingPolicy {
            gang: Some(GangSchedulingPolicy { min_count: n }),
            basic: None,
        }
    }

    fn workload(templates: Vec<PodGroupTemplate>) -> Workload {
        let mut w = Workload::default();
        w.metadata.name = "training".into();
        w.metadata.namespace = Some("default".into());
        w.spec.pod_group_templates = templates;
        w
    }

    fn template(name: &str, p: PodGroupSchedulingPolicy) -> PodGroupTemplate {
        PodGroupTemplate {
            name: name.into(),
            scheduling_policy: p,
        }
    }

    #[test]
    fn workload_templates_follow_upstream_rules() {
        assert!(validate_workload(&workload(vec![template("workers", gang(4))])).is_empty());
        assert_eq!(
            msgs(validate_workload(&workload(vec![]))),
            ["spec.podGroupTemplates: Required value: must have at least one item"]
        );
        let both = PodGroupSchedulingPolicy {
            basic: Some(BasicSchedulingPolicy {}),
            gang: Some(GangSchedulingPolicy { min_count: 2 }),
        };
        assert_eq!(
            msgs(validate_workload(&workload(vec![
                template("a", gang(0)),
                template("a", gang(-3)),
                template("B_", both),
                template("d", PodGroupSchedulingPolicy::default()),
            ]))),
            [
                "spec.podGroupTemplates[0].schedulingPolicy.gang.minCount: Required value",
                "spec.podGroupTemplates[1]: Duplicate value: \"a\"",
                "spec.podGroupTemplates[1].schedulingPolicy.gang.minCount: Invalid value: -3: must be greater than zero",
                "spec.podGroupTemplates[2].name: Invalid value: \"B_\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
                "spec.podGroupTemplates[2].schedulingPolicy: Invalid value: {`basic`, `gang`}: exactly one of `basic`, `gang` is required, but multiple fields are set",
                "spec.podGroupTemplates[3].schedulingPolicy: Invalid value: \"\": must specify one of: `basic`, `gang`",
            ]
        );
        // Nine templates: one over WorkloadMaxPodGroupTemplates (8).
        let nine = (0..9)
            .map(|i| template(&format!("t{i}"), gang(1)))
            .collect();
        assert_eq!(
            msgs(validate_workload(&workload(nine))),
            ["spec.podGroupTemplates: Invalid value: 9: must have at most 8 items"]
        );
    }

    #[test]
    fn workload_templates_and_pod_group_policy_are_immutable() {
        let old = workload(vec![template("workers", gang(4))]);
        let mut new = old.clone();
        new.spec.pod_group_templates[0].scheduling_policy = gang(2);
        assert_eq!(
            msgs(validate_workload_update(&new, &old)),
            ["spec.podGroupTemplates: Invalid value: {...}: field is immutable"]
        );

        let mut pg = PodGroup::default();
        pg.metadata.name = "training-workers-0".into();
        pg.metadata.namespace = Some("default".into());
        pg.spec.scheduling_policy = gang(4);
        pg.spec.pod_group_template_ref = Some(PodGroupTemplateReference {
            workload: Some(WorkloadPodGroupTemplateReference {
                workload_name: "training".into(),
                pod_group_template_name: "workers".into(),
            }),
        });
        assert!(validate_pod_group(&pg).is_empty());
        let mut changed = pg.clone();
        changed.spec.scheduling_policy = gang(3);
        changed.spec.pod_group_template_ref = None;
        assert_eq!(
            msgs(validate_pod_group_update(&changed, &pg)),
            [
                "spec.podGroupTemplateRef: Invalid value: {...}: field is immutable",
                "spec.schedulingPolicy: Invalid value: {...}: field is immutable",
            ]
        );
        let mut bad_ref = pg.clone();
        bad_ref.spec.pod_group_template_ref = Some(PodGroupTemplateReference {
            workload: Some(WorkloadPodGroupTemplateReference::default()),
        });
        assert_eq!(
            msgs(validate_pod_group(&bad_ref)),
            [
                "spec.podGroupTemplateRef.workload.workloadName: Required value",
                "spec.podGroupTemplateRef.workload.podGroupTemplateName: Required value",
            ]
        );
    }
}
