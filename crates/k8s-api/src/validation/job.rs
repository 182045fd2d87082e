//! Job validation (upstream `pkg/apis/batch/validation/validation.go`: `ValidateJob`,
//! `validateGeneratedSelector`, `validateJobSpec`, `validatePodFailurePolicy`,
//! `ValidateJobUpdate`, `ValidateJobStatusUpdate`), for the fields k8s-mini models. Upstream's
//! options for new objects apply (`RequirePrefixedLabels`: the `batch.kubernetes.io/` labels are
//! required too).

use k8s_types::batch::{
    completion_modes, pod_failure_policy_actions as actions, pod_replacement_policies, Job,
    JobSpec, CONTROLLER_UID_LABEL, JOB_NAME_LABEL, LEGACY_CONTROLLER_UID_LABEL,
    LEGACY_JOB_NAME_LABEL,
};
use k8s_types::core::condition_status;
use k8s_types::labels::LabelSelector;
use k8s_types::status::{FieldError, FieldErrorType};

use super::gofmt::{go_string_map, label_selector_string};
use super::labels::{selector_converts, validate_label_selector};
use super::meta::{validate_object_meta, validate_object_meta_update};
use super::names::{is_dns1123_label, is_qualified_name, name_is_dns_subdomain};
use super::template::{validate_pod_template_spec, SELECTOR_MISMATCH_MSG};
use super::{child, index, key, nonnegative, ErrorList, FIELD_IMMUTABLE_ERROR_MSG};

/// Upstream `maxParallelismForIndexedJob`.
pub const MAX_PARALLELISM_FOR_INDEXED_JOB: i32 = 100_000;
/// Upstream `maxPodFailurePolicyRules`.
pub const MAX_POD_FAILURE_POLICY_RULES: usize = 20;
/// Upstream `maxPodFailurePolicyOnExitCodesValues`.
pub const MAX_POD_FAILURE_POLICY_ON_EXIT_CODES_VALUES: usize = 255;
/// Upstream `maxPodFailurePolicyOnPodConditionsPatterns`.
pub const MAX_POD_FAILURE_POLICY_ON_POD_CONDITIONS_PATTERNS: usize = 20;

/// `Invalid value: <detail>` without a value (upstream `field.Invalid(p, field.OmitValueType{}, d)`).
fn invalid_omit(path: impl Into<String>, detail: &str) -> FieldError {
    FieldError {
        type_: FieldErrorType::Invalid,
        field: path.into(),
        bad_value: None,
        detail: detail.to_string(),
    }
}

/// Upstream `ValidateJob`.
pub fn validate_job(job: &Job) -> ErrorList {
    let mut errs = validate_object_meta(&job.metadata, true, name_is_dns_subdomain, "metadata");
    errs.extend(validate_generated_selector(job));
    errs.extend(validate_job_spec(&job.spec, "spec"));
    if job.is_indexed() {
        if let Some(c) = job.spec.completions.filter(|c| *c > 0) {
            // The controller names an Indexed Job's pods' hostname `<job>-<index>`.
            let max_hostname = format!("{}-{}", job.metadata.name, c - 1);
            if !is_dns1123_label(&max_hostname).is_empty() {
                errs.push(FieldError::invalid(
                    "metadata.name",
                    format!("\"{}\"", job.metadata.name),
                    format!("will not able to create pod with invalid DNS label: {max_hostname}"),
                ));
            }
        }
    }
    errs
}

/// Upstream `ValidateHasLabel` at `spec.template.metadata`.
fn validate_has_label(job: &Job, label: &str, expected: &str) -> ErrorList {
    let labels = &job.spec.template.metadata.labels;
    let path = key("spec.template.metadata.labels", label);
    match labels.get(label) {
        None => vec![FieldError::required(path, expected)],
        Some(v) if v != expected => vec![FieldError::invalid(
            path,
            go_string_map(labels),
            format!("must be '{expected}'"),
        )],
        Some(_) => Vec::new(),
    }
}

/// Upstream `validateGeneratedSelector` (with `RequirePrefixedLabels`): unless `manualSelector`,
/// the template carries the four generated labels with the Job's name and uid, and the selector
/// is the generated one.
fn validate_generated_selector(job: &Job) -> ErrorList {
    let mut errs = Vec::new();
    if job.spec.manual_selector == Some(true) || job.spec.template.metadata.labels.is_empty() {
        return errs;
    }
    let Some(selector) = &job.spec.selector else {
        return errs;
    };
    let uid = job.metadata.uid.clone().unwrap_or_default();
    if uid.is_empty() {
        errs.push(FieldError::required("metadata.uid", ""));
    }
    let name = &job.metadata.name;
    errs.extend(validate_has_label(job, LEGACY_CONTROLLER_UID_LABEL, &uid));
    errs.extend(validate_has_label(job, LEGACY_JOB_NAME_LABEL, name));
    errs.extend(validate_has_label(job, CONTROLLER_UID_LABEL, &uid));
    errs.extend(validate_has_label(job, JOB_NAME_LABEL, name));
    let expected = LabelSelector {
        match_labels: [(CONTROLLER_UID_LABEL.to_string(), uid)]
            .into_iter()
            .collect(),
        match_expressions: Vec::new(),
    };
    if *selector != expected {
        errs.push(FieldError::invalid(
            "spec.selector",
            label_selector_string(selector),
            "`selector` not auto-generated",
        ));
    }
    errs
}

/// Upstream `validateJobSpec`, at `path` (`spec`).
pub fn validate_job_spec(spec: &JobSpec, path: &str) -> ErrorList {
    validate_job_spec_selector(spec, path, true)
}

/// Upstream `validateJobSpec` (`require_selector: false`, for a CronJob's job template, whose
/// selector is generated when the Job is created) and `ValidateJobSpec` (`true`).
pub fn validate_job_spec_selector(spec: &JobSpec, path: &str, require_selector: bool) -> ErrorList {
    let mut errs = Vec::new();
    let opt = |errs: &mut ErrorList, name: &str, v: Option<i64>| {
        if let Some(v) = v {
            errs.extend(nonnegative(&child(path, name), v));
        }
    };
    opt(&mut errs, "parallelism", spec.parallelism.map(i64::from));
    opt(&mut errs, "completions", spec.completions.map(i64::from));
    opt(
        &mut errs,
        "activeDeadlineSeconds",
        spec.active_deadline_seconds,
    );
    opt(&mut errs, "backoffLimit", spec.backoff_limit.map(i64::from));
    opt(
        &mut errs,
        "ttlSecondsAfterFinished",
        spec.ttl_seconds_after_finished.map(i64::from),
    );
    opt(
        &mut errs,
        "backoffLimitPerIndex",
        spec.backoff_limit_per_index.map(i64::from),
    );
    opt(
        &mut errs,
        "maxFailedIndexes",
        spec.max_failed_indexes.map(i64::from),
    );
    if spec.max_failed_indexes.is_some() && spec.backoff_limit_per_index.is_none() {
        errs.push(FieldError::required(
            child(path, "backoffLimitPerIndex"),
            "when maxFailedIndexes is specified",
        ));
    }
    let indexed = spec.completion_mode.as_deref() == Some(completion_modes::INDEXED);
    if let Some(mode) = spec.completion_mode.as_deref() {
        if mode != completion_modes::NON_INDEXED && !indexed {
            errs.push(FieldError::not_supported(
                child(path, "completionMode"),
                mode,
                &[completion_modes::NON_INDEXED, completion_modes::INDEXED],
            ));
        }
        if indexed {
            if spec.completions.is_none() {
                errs.push(FieldError::required(
                    child(path, "completions"),
                    format!("when completion mode is {}", completion_modes::INDEXED),
                ));
            }
            if let Some(p) = spec
                .parallelism
                .filter(|p| *p > MAX_PARALLELISM_FOR_INDEXED_JOB)
            {
                errs.push(FieldError::invalid(
                    child(path, "parallelism"),
                    p.to_string(),
                    format!(
                        "must be less than or equal to {MAX_PARALLELISM_FOR_INDEXED_JOB} when completion mode is {}",
                        completion_modes::INDEXED
                    ),
                ));
            }
        }
    }
    if spec.backoff_limit_per_index.is_some() && !indexed {
        errs.push(FieldError::required(
            child(path, "completionMode"),
            format!(
                "when backoffLimitPerIndex is specified, completionMode must be {:?}",
                completion_modes::INDEXED
            ),
        ));
    }
    errs.extend(validate_pod_failure_policy(
        spec,
        &child(path, "podFailurePolicy"),
    ));
    errs.extend(validate_success_policy(spec, &child(path, "successPolicy")));
    if let Some(p) = spec.pod_replacement_policy.as_deref() {
        let supported: &[&str] = if spec.pod_failure_policy.is_some() {
            &[pod_replacement_policies::FAILED]
        } else {
            &[
                pod_replacement_policies::FAILED,
                pod_replacement_policies::TERMINATING_OR_FAILED,
            ]
        };
        if !supported.contains(&p) {
            errs.push(FieldError::not_supported(
                child(path, "podReplacementPolicy"),
                p,
                supported,
            ));
        }
    }
    let sel_path = child(path, "selector");
    match &spec.selector {
        None if require_selector => errs.push(FieldError::required(&sel_path, "")),
        Some(sel) if require_selector => errs.extend(validate_label_selector(sel, &sel_path)),
        _ => {}
    }
    if let Some(sel) = spec
        .selector
        .as_ref()
        .filter(|s| require_selector && selector_converts(s))
    {
        if !sel.matches(&spec.template.metadata.labels) {
            errs.push(FieldError::invalid(
                child(path, "template.metadata.labels"),
                go_string_map(&spec.template.metadata.labels),
                SELECTOR_MISMATCH_MSG,
            ));
        }
    }
    let template_path = child(path, "template");
    errs.extend(validate_pod_template_spec(&spec.template, &template_path));
    let rp = spec.template.spec.restart_policy.as_deref().unwrap_or("");
    let rp_path = child(&template_path, "spec.restartPolicy");
    if rp != "OnFailure" && rp != "Never" {
        errs.push(FieldError::not_supported(
            rp_path,
            rp,
            &["OnFailure", "Never"],
        ));
    } else if spec.pod_failure_policy.is_some() && rp != "Never" {
        errs.push(FieldError::invalid(
            rp_path,
            format!("\"{rp}\""),
            "only \"Never\" is supported when podFailurePolicy is specified",
        ));
    }
    errs
}

/// Upstream `maxSuccessPolicyRule`.
pub const MAX_SUCCESS_POLICY_RULES: usize = 20;

/// Upstream `validateSuccessPolicy` (the Indexed requirement prints no value; `succeededIndexes`
/// syntax errors are worded after upstream's `parseIndexesFromString` errors).
fn validate_success_policy(spec: &JobSpec, path: &str) -> ErrorList {
    let mut errs = Vec::new();
    let Some(policy) = &spec.success_policy else {
        return errs;
    };
    let rules_path = child(path, "rules");
    if policy.rules.is_empty() {
        errs.push(FieldError::required(
            &rules_path,
            "at least one rules must be specified when the successPolicy is specified",
        ));
    }
    if policy.rules.len() > MAX_SUCCESS_POLICY_RULES {
        errs.push(FieldError {
            type_: FieldErrorType::Invalid,
            field: rules_path.clone(),
            bad_value: Some(policy.rules.len().to_string()),
            detail: format!("must have at most {MAX_SUCCESS_POLICY_RULES} items"),
        });
    }
    if spec.completion_mode.as_deref() != Some(completion_modes::INDEXED) {
        errs.push(invalid_omit(path, "requires indexed completion mode"));
    }
    let completions = spec.completions.unwrap_or(0);
    for (i, rule) in policy.rules.iter().enumerate() {
        let rule_path = index(&rules_path, i);
        if rule.succeeded_count.is_none() && rule.succeeded_indexes.is_none() {
            errs.push(FieldError::required(
                &rule_path,
                "at least one of succeededCount or succeededIndexes must be specified",
            ));
        }
        let mut total_indexes: Option<i64> = None;
        if let Some(s) = &rule.succeeded_indexes {
            match parse_index_list(s, completions) {
                Ok(n) => total_indexes = Some(n),
                Err(m) => errs.push(FieldError::invalid(
                    child(&rule_path, "succeededIndexes"),
                    format!("\"{s}\""),
                    format!("error parsing succeededIndexes: {m}"),
                )),
            }
        }
        if let Some(c) = rule.succeeded_count {
            let cp = child(&rule_path, "succeededCount");
            errs.extend(nonnegative(&cp, i64::from(c)));
            if spec.completions.is_some_and(|n| c > n) {
                errs.push(FieldError::invalid(
                    &cp,
                    c.to_string(),
                    format!(
                        "must be less than or equal to {completions} (the number of specified completions)"
                    ),
                ));
            }
            if let Some(t) = total_indexes.filter(|t| i64::from(c) > *t) {
                errs.push(FieldError::invalid(
                    &cp,
                    c.to_string(),
                    format!(
                        "must be less than or equal to {t} (the number of indexes in the specified succeededIndexes field)"
                    ),
                ));
            }
        }
    }
    errs
}

/// The number of indexes of a `0-2,5` list whose intervals are ordered and below `completions`.
fn parse_index_list(s: &str, completions: i32) -> Result<i64, String> {
    let mut total = 0i64;
    let mut last: Option<i64> = None;
    for part in s.split(',') {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        let parse = |v: &str| {
            v.parse::<i64>()
                .map_err(|_| format!("cannot convert string to integer for index: {v:?}"))
        };
        let (a, b) = (parse(a)?, parse(b)?);
        if a > b {
            return Err(format!(
                "first index is greater than the last index: {a} > {b}"
            ));
        }
        if b >= i64::from(completions) {
            return Err(format!("too large index: {b:?}"));
        }
        if last.is_some_and(|l| a <= l) {
            return Err(format!("overlapping indexes: {a}"));
        }
        last = Some(b);
        total += b - a + 1;
    }
    Ok(total)
}

/// Upstream `validatePodFailurePolicy` and its rule checks.
fn validate_pod_failure_policy(spec: &JobSpec, path: &str) -> ErrorList {
    let mut errs = Vec::new();
    let Some(policy) = &spec.pod_failure_policy else {
        return errs;
    };
    let rules_path = child(path, "rules");
    if policy.rules.len() > MAX_POD_FAILURE_POLICY_RULES {
        errs.push(FieldError {
            type_: FieldErrorType::Invalid,
            field: rules_path.clone(),
            bad_value: Some(policy.rules.len().to_string()),
            detail: format!("must have at most {MAX_POD_FAILURE_POLICY_RULES} items"),
        });
    }
    let container_names: Vec<&str> = spec
        .template
        .spec
        .containers
        .iter()
        .chain(&spec.template.spec.init_containers)
        .map(|c| c.name.as_str())
        .collect();
    let supported = [
        actions::COUNT,
        actions::FAIL_INDEX,
        actions::FAIL_JOB,
        actions::IGNORE,
    ];
    for (i, rule) in policy.rules.iter().enumerate() {
        let rule_path = index(&rules_path, i);
        let action_path = child(&rule_path, "action");
        if !supported.contains(&rule.action.as_str()) {
            errs.push(FieldError::not_supported(
                &action_path,
                &rule.action,
                &supported,
            ));
        } else if rule.action == actions::FAIL_INDEX && spec.backoff_limit_per_index.is_none() {
            errs.push(FieldError::forbidden(
                &action_path,
                "requires the backoffLimitPerIndex to be set",
            ));
        }
        match (&rule.on_exit_codes, rule.on_pod_conditions.is_empty()) {
            (Some(_), false) => errs.push(invalid_omit(
                &rule_path,
                "specifying both OnExitCodes and OnPodConditions is not supported",
            )),
            (None, true) => errs.push(invalid_omit(
                &rule_path,
                "specifying one of OnExitCodes and OnPodConditions is required",
            )),
            _ => {}
        }
        if let Some(req) = &rule.on_exit_codes {
            let req_path = child(&rule_path, "onExitCodes");
            if let Some(name) = &req.container_name {
                if !container_names.contains(&name.as_str()) {
                    errs.push(FieldError::invalid(
                        child(&req_path, "containerName"),
                        format!("\"{name}\""),
                        "must be one of the container or initContainer names in the pod template",
                    ));
                }
            }
            if req.operator != "In" && req.operator != "NotIn" {
                errs.push(FieldError::not_supported(
                    child(&req_path, "operator"),
                    &req.operator,
                    &["In", "NotIn"],
                ));
            }
            let values_path = child(&req_path, "values");
            if req.values.is_empty() {
                errs.push(FieldError::required(
                    &values_path,
                    "at least one value is required",
                ));
            } else if req.values.len() > MAX_POD_FAILURE_POLICY_ON_EXIT_CODES_VALUES {
                errs.push(FieldError {
                    type_: FieldErrorType::Invalid,
                    field: values_path.clone(),
                    bad_value: Some(req.values.len().to_string()),
                    detail: format!(
                        "must have at most {MAX_POD_FAILURE_POLICY_ON_EXIT_CODES_VALUES} items"
                    ),
                });
            }
            let mut prev: Option<i32> = None;
            for (j, v) in req.values.iter().enumerate() {
                let vp = index(&values_path, j);
                if req.operator == "In" && *v == 0 {
                    errs.push(FieldError::invalid(
                        &vp,
                        "0",
                        "must not be 0 for the In operator",
                    ));
                }
                match prev {
                    Some(p) if p == *v => errs.push(FieldError::duplicate(&vp, v.to_string())),
                    Some(p) if p > *v => {
                        errs.push(FieldError::invalid(&vp, v.to_string(), "must be ordered"));
                    }
                    _ => {}
                }
                prev = Some(*v);
            }
        }
        let conds_path = child(&rule_path, "onPodConditions");
        if rule.on_pod_conditions.len() > MAX_POD_FAILURE_POLICY_ON_POD_CONDITIONS_PATTERNS {
            errs.push(FieldError {
                type_: FieldErrorType::Invalid,
                field: conds_path.clone(),
                bad_value: Some(rule.on_pod_conditions.len().to_string()),
                detail: format!(
                    "must have at most {MAX_POD_FAILURE_POLICY_ON_POD_CONDITIONS_PATTERNS} items"
                ),
            });
        }
        for (j, pattern) in rule.on_pod_conditions.iter().enumerate() {
            let pp = index(&conds_path, j);
            let statuses = [
                condition_status::TRUE,
                condition_status::FALSE,
                condition_status::UNKNOWN,
            ];
            if !statuses.contains(&pattern.status.as_str()) {
                errs.push(FieldError::not_supported(
                    child(&pp, "status"),
                    &pattern.status,
                    &statuses,
                ));
            }
            for m in is_qualified_name(&pattern.type_) {
                errs.push(FieldError::invalid(
                    child(&pp, "type"),
                    format!("\"{}\"", pattern.type_),
                    m,
                ));
            }
        }
    }
    errs
}

/// Upstream `ValidateJobUpdate` / `ValidateJobSpecUpdate` for the modelled fields: the spec is
/// validated again; `selector`, `template` (unless the Job is suspended), `completionMode`,
/// `podFailurePolicy` and `backoffLimitPerIndex` are immutable; `completions` may change only
/// together with `parallelism` to the same value on an Indexed Job (elastic Indexed Jobs).
pub fn validate_job_update(new: &Job, old: &Job) -> ErrorList {
    let mut errs = validate_object_meta_update(&new.metadata, &old.metadata, "metadata");
    errs.extend(validate_job_spec(&new.spec, "spec"));
    let (n, o) = (&new.spec, &old.spec);
    let immutable = |errs: &mut ErrorList, path: &str, changed: bool, value: String| {
        if changed {
            errs.push(FieldError::invalid(path, value, FIELD_IMMUTABLE_ERROR_MSG));
        }
    };
    immutable(
        &mut errs,
        "spec.selector",
        n.selector != o.selector,
        n.selector
            .as_ref()
            .map(label_selector_string)
            .unwrap_or_else(|| "null".into()),
    );
    let elastic = new.is_indexed() && n.completions == n.parallelism;
    if n.completions != o.completions && !elastic {
        errs.push(FieldError::invalid(
            "spec.completions",
            n.completions
                .map(|c| c.to_string())
                .unwrap_or_else(|| "null".into()),
            FIELD_IMMUTABLE_ERROR_MSG,
        ));
    }
    if n.template != o.template && !old.is_suspended() {
        errs.push(FieldError::invalid(
            "spec.template",
            "core.PodTemplateSpec{...}",
            FIELD_IMMUTABLE_ERROR_MSG,
        ));
    }
    immutable(
        &mut errs,
        "spec.completionMode",
        n.completion_mode != o.completion_mode,
        format!("\"{}\"", n.completion_mode.clone().unwrap_or_default()),
    );
    immutable(
        &mut errs,
        "spec.podFailurePolicy",
        n.pod_failure_policy != o.pod_failure_policy,
        "batch.PodFailurePolicy{...}".into(),
    );
    immutable(
        &mut errs,
        "spec.backoffLimitPerIndex",
        n.backoff_limit_per_index != o.backoff_limit_per_index,
        n.backoff_limit_per_index
            .map(|c| c.to_string())
            .unwrap_or_else(|| "null".into()),
    );
    errs
}

/// Upstream `ValidateJobStatusUpdate` for the counters: `active`, `succeeded`, `failed` and
/// `terminating` / `ready` are nonnegative.
pub fn validate_job_status_update(new: &Job, old: &Job) -> ErrorList {
    let mut errs = validate_object_meta_update(&new.metadata, &old.metadata, "metadata");
    let s = &new.status;
    errs.extend(nonnegative("status.active", i64::from(s.active)));
    errs.extend(nonnegative("status.succeeded", i64::from(s.succeeded)));
    errs.extend(nonnegative("status.failed", i64::from(s.failed)));
    if let Some(r) = s.ready {
        errs.extend(nonnegative("status.ready", i64::from(r)));
    }
    if let Some(t) = s.terminating {
        errs.extend(nonnegative("status.terminating", i64::from(t)));
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_types::core::Container;

    fn valid_job() -> Job {
        let mut job = Job::default();
        job.metadata.name = "pi".into();
        job.metadata.namespace = Some("default".into());
        job.metadata.uid = Some("u-1".into());
        job.spec.parallelism = Some(1);
        job.spec.completions = Some(1);
        job.spec.backoff_limit = Some(6);
        job.spec.template.spec.restart_policy = Some("Never".into());
        job.spec.template.spec.containers = vec![Container {
            name: "pi".into(),
            image: "perl".into(),
            image_pull_policy: Some("IfNotPresent".into()),
            ..Default::default()
        }]
        .into();
        crate::defaults::job::set_defaults_job(&mut job);
        crate::registry::job::generate_selector(&mut job);
        job
    }

    fn messages(errs: &ErrorList) -> Vec<String> {
        errs.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn a_valid_job_passes() {
        let job = valid_job();
        assert_eq!(messages(&validate_job(&job)), Vec::<String>::new());
    }

    #[test]
    fn restart_policy_always_is_rejected() {
        // The error `kubectl create` prints for a Job whose template omits restartPolicy (the
        // PodSpec default is Always).
        let mut job = valid_job();
        job.spec.template.spec.restart_policy = Some("Always".into());
        assert_eq!(
            messages(&validate_job(&job)),
            vec![
                "spec.template.spec.restartPolicy: Unsupported value: \"Always\": supported values: \"OnFailure\", \"Never\""
            ]
        );
    }

    #[test]
    fn indexed_needs_completions_and_negative_fields_are_rejected() {
        let mut job = valid_job();
        job.spec.completion_mode = Some("Indexed".into());
        job.spec.completions = None;
        job.spec.backoff_limit = Some(-1);
        assert_eq!(
            messages(&validate_job(&job)),
            vec![
                "spec.backoffLimit: Invalid value: -1: must be greater than or equal to 0",
                "spec.completions: Required value: when completion mode is Indexed",
            ]
        );
    }

    #[test]
    fn pod_failure_policy_rules() {
        let mut job = valid_job();
        job.spec.pod_failure_policy = Some(k8s_types::batch::PodFailurePolicy {
            rules: vec![k8s_types::batch::PodFailurePolicyRule {
                action: "FailJob".into(),
                on_exit_codes: Some(k8s_types::batch::PodFailurePolicyOnExitCodesRequirement {
                    container_name: None,
                    operator: "In".into(),
                    values: vec![0, 3, 2],
                }),
                on_pod_conditions: Vec::new(),
            }],
        });
        job.spec.pod_replacement_policy = Some("Failed".into());
        job.spec.template.spec.restart_policy = Some("OnFailure".into());
        assert_eq!(
            messages(&validate_job(&job)),
            vec![
                "spec.podFailurePolicy.rules[0].onExitCodes.values[0]: Invalid value: 0: must not be 0 for the In operator",
                "spec.podFailurePolicy.rules[0].onExitCodes.values[2]: Invalid value: 2: must be ordered",
                "spec.template.spec.restartPolicy: Invalid value: \"OnFailure\": only \"Never\" is supported when podFailurePolicy is specified",
            ]
        );
    }

    #[test]
    fn success_policy_rules() {
        let mut job = valid_job();
        job.spec.success_policy = Some(Box::new(k8s_types::batch::SuccessPolicy {
            rules: vec![
                k8s_types::batch::SuccessPolicyRule::default(),
                k8s_types::batch::SuccessPolicyRule {
                    succeeded_indexes: Some("0".into()),
                    succeeded_count: Some(2),
                },
            ],
        }));
        assert_eq!(
            messages(&validate_job(&job)),
            vec![
                "spec.successPolicy: Invalid value: requires indexed completion mode",
                "spec.successPolicy.rules[0]: Required value: at least one of succeededCount or succeededIndexes must be specified",
                "spec.successPolicy.rules[1].succeededCount: Invalid value: 2: must be less than or equal to 1 (the number of specified completions)",
                "spec.successPolicy.rules[1].succeededCount: Invalid value: 2: must be less than or equal to 1 (the number of indexes in the specified succeededIndexes field)",
            ]
        );
    }

    #[test]
    fn a_wrong_generated_label_is_rejected() {
        let mut job = valid_job();
        job.spec
            .template
            .metadata
            .labels
            .insert("job-name".into(), "other".into());
        let errs = messages(&validate_job(&job));
        assert_eq!(errs.len(), 1, "{errs:?}");
        assert!(
            errs[0].starts_with(
                "spec.template.metadata.labels[job-name]: Invalid value: map[string]string{"
            ) && errs[0].ends_with(": must be 'pi'"),
            "{errs:?}"
        );
    }
}
