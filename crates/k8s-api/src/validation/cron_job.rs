//! CronJob validation (upstream `pkg/apis/batch/validation/validation.go`:
//! `ValidateCronJobCreate`, `ValidateCronJobUpdate`, `validateCronJobSpec`,
//! `validateConcurrencyPolicy`, `validateScheduleFormat`, `validateTimeZone`,
//! `ValidateJobTemplateSpec`).

use k8s_types::batch::schedule::{load_location, Schedule};
use k8s_types::batch::{concurrency_policies, CronJob, CronJobSpec, JobTemplateSpec};
use k8s_types::status::{FieldError, FieldErrorType};

use super::gofmt::label_selector_string;
use super::job::validate_job_spec_selector;
use super::meta::{validate_object_meta, validate_object_meta_update};
use super::names::name_is_dns_subdomain;
use super::{child, invalid_str, nonnegative, ErrorList};

/// Upstream: a CronJob's name is at most `DNS1035LabelMaxLength - 11` = 52 characters, as the
/// controller appends `-<minutes since the epoch>` (11 characters) to name its Jobs.
pub const MAX_CRON_JOB_NAME_LENGTH: usize = 52;

/// Upstream `ValidateCronJobCreate`.
pub fn validate_cron_job_create(cj: &CronJob) -> ErrorList {
    let mut errs = validate_object_meta(&cj.metadata, true, name_is_dns_subdomain, "metadata");
    errs.extend(validate_cron_job_spec(&cj.spec, None, "spec"));
    if cj.metadata.name.len() > MAX_CRON_JOB_NAME_LENGTH {
        errs.push(invalid_str(
            "metadata.name",
            &cj.metadata.name,
            "must be no more than 52 characters",
        ));
    }
    errs
}

/// Upstream `ValidateCronJobUpdate` (no 52-character limit, so that older CronJobs stay editable).
pub fn validate_cron_job_update(new: &CronJob, old: &CronJob) -> ErrorList {
    let mut errs = validate_object_meta_update(&new.metadata, &old.metadata, "metadata");
    errs.extend(validate_cron_job_spec(&new.spec, Some(&old.spec), "spec"));
    errs
}

/// Upstream `validateCronJobSpec`.
fn validate_cron_job_spec(spec: &CronJobSpec, old: Option<&CronJobSpec>, path: &str) -> ErrorList {
    let mut errs = Vec::new();
    let sched_path = child(path, "schedule");
    if spec.schedule.is_empty() {
        errs.push(FieldError::required(&sched_path, ""));
    } else {
        let allow_tz = old.is_some_and(|o| o.schedule.contains("TZ"));
        errs.extend(validate_schedule_format(
            &spec.schedule,
            allow_tz,
            spec.time_zone.as_deref(),
            &sched_path,
        ));
    }
    if let Some(s) = spec.starting_deadline_seconds {
        errs.extend(nonnegative(&child(path, "startingDeadlineSeconds"), s));
    }
    if old.is_none_or(|o| o.time_zone != spec.time_zone) {
        errs.extend(validate_time_zone(
            spec.time_zone.as_deref(),
            &child(path, "timeZone"),
        ));
    }
    let cp_path = child(path, "concurrencyPolicy");
    match spec.concurrency_policy.as_str() {
        concurrency_policies::ALLOW
        | concurrency_policies::FORBID
        | concurrency_policies::REPLACE => {}
        "" => errs.push(FieldError::required(&cp_path, "")),
        other => errs.push(FieldError::not_supported(
            &cp_path,
            other,
            &[
                concurrency_policies::ALLOW,
                concurrency_policies::FORBID,
                concurrency_policies::REPLACE,
            ],
        )),
    }
    errs.extend(validate_job_template_spec(
        &spec.job_template,
        &child(path, "jobTemplate"),
    ));
    if let Some(n) = spec.successful_jobs_history_limit {
        errs.extend(nonnegative(
            &child(path, "successfulJobsHistoryLimit"),
            i64::from(n),
        ));
    }
    if let Some(n) = spec.failed_jobs_history_limit {
        errs.extend(nonnegative(
            &child(path, "failedJobsHistoryLimit"),
            i64::from(n),
        ));
    }
    errs
}

/// Upstream `validateScheduleFormat`: robfig's `ParseStandard` must accept it, and `TZ` /
/// `CRON_TZ` in the schedule are refused on create (kept on update only where they were).
fn validate_schedule_format(
    schedule: &str,
    allow_tz: bool,
    time_zone: Option<&str>,
    path: &str,
) -> ErrorList {
    let mut errs = Vec::new();
    if let Err(e) = Schedule::parse(schedule, None) {
        errs.push(invalid_str(path, schedule, e));
    }
    if schedule.contains("TZ") {
        if allow_tz && time_zone.is_some() {
            errs.push(invalid_str(
                path,
                schedule,
                "cannot use both timeZone field and TZ or CRON_TZ in schedule",
            ));
        } else if !allow_tz {
            errs.push(invalid_str(
                path,
                schedule,
                "cannot use TZ or CRON_TZ in schedule, use timeZone field instead",
            ));
        }
    }
    errs
}

/// Upstream `validTimeZoneCharacters`: `^[A-Za-z\.\-_0-9+]{1,14}$` per `/`-separated part.
fn valid_time_zone_part(part: &str) -> bool {
    (1..=14).contains(&part.len())
        && part
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'-' | b'_' | b'+'))
}

/// Upstream `validateTimeZone`.
fn validate_time_zone(tz: Option<&str>, path: &str) -> ErrorList {
    let Some(tz) = tz else {
        return Vec::new();
    };
    if tz.is_empty() {
        return vec![invalid_str(
            path,
            tz,
            "timeZone must be nil or non-empty string",
        )];
    }
    for part in tz.split('/') {
        if part == "." || part == ".." || part.starts_with('-') || !valid_time_zone_part(part) {
            return vec![invalid_str(path, tz, format!("unknown time zone {tz}"))];
        }
    }
    let mut errs = Vec::new();
    if tz.eq_ignore_ascii_case("Local") {
        errs.push(invalid_str(
            path,
            tz,
            "timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones",
        ));
    }
    if let Err(e) = load_location(Some(tz)) {
        errs.push(invalid_str(path, tz, e));
    }
    errs
}

/// Upstream `ValidateJobTemplateSpec`: the Job spec without a selector (one is generated for
/// each Job), which must not be set, nor `manualSelector: true`.
pub fn validate_job_template_spec(t: &JobTemplateSpec, path: &str) -> ErrorList {
    let spec_path = child(path, "spec");
    let mut errs = validate_job_spec_selector(&t.spec, &spec_path, false);
    if let Some(sel) = &t.spec.selector {
        errs.push(FieldError::invalid(
            child(&spec_path, "selector"),
            label_selector_string(sel),
            "`selector` will be auto-generated",
        ));
    }
    if t.spec.manual_selector == Some(true) {
        errs.push(FieldError {
            type_: FieldErrorType::NotSupported,
            field: child(&spec_path, "manualSelector"),
            bad_value: Some("true".into()),
            detail: "supported values: \"nil\", \"false\"".into(),
        });
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_types::core::Container;

    fn cron_job(name: &str, schedule: &str) -> CronJob {
        let mut cj = CronJob::default();
        cj.metadata.name = name.into();
        cj.metadata.namespace = Some("default".into());
        cj.spec.schedule = schedule.into();
        cj.spec.concurrency_policy = "Allow".into();
        let pod = &mut cj.spec.job_template.spec.template.spec;
        pod.restart_policy = Some("Never".into());
        pod.containers.push(Container {
            name: "c".into(),
            image: "busybox".into(),
            ..Default::default()
        });
        crate::defaults::pod_spec::set_defaults_pod_spec(pod);
        cj
    }

    fn messages(errs: &ErrorList) -> Vec<String> {
        errs.iter().map(|e| e.to_string()).collect()
    }

    #[test]
    fn valid_cron_job() {
        assert_eq!(
            messages(&validate_cron_job_create(&cron_job("hello", "*/1 * * * *"))),
            Vec::<String>::new()
        );
        let mut cj = cron_job("hello", "@hourly");
        cj.spec.time_zone = Some("Europe/Paris".into());
        assert!(validate_cron_job_create(&cj).is_empty());
    }

    #[test]
    fn invalid_fields_with_upstream_paths_and_messages() {
        let mut cj = cron_job(&"a".repeat(53), "61 * * * *");
        cj.spec.starting_deadline_seconds = Some(-1);
        cj.spec.concurrency_policy = "Sometimes".into();
        cj.spec.successful_jobs_history_limit = Some(-1);
        cj.spec.time_zone = Some("Mars/Olympus".into());
        cj.spec.job_template.spec.manual_selector = Some(true);
        let got = messages(&validate_cron_job_create(&cj));
        let want = [
            "spec.schedule: Invalid value: \"61 * * * *\": end of range (61) above maximum (59): 61",
            "spec.startingDeadlineSeconds: Invalid value: -1: must be greater than or equal to 0",
            "spec.timeZone: Invalid value: \"Mars/Olympus\": unknown time zone Mars/Olympus",
            "spec.concurrencyPolicy: Unsupported value: \"Sometimes\": supported values: \"Allow\", \"Forbid\", \"Replace\"",
            "spec.jobTemplate.spec.manualSelector: Unsupported value: true: supported values: \"nil\", \"false\"",
            "spec.successfulJobsHistoryLimit: Invalid value: -1: must be greater than or equal to 0",
        ];
        for w in want {
            assert!(got.iter().any(|g| g == w), "missing {w} in {got:#?}");
        }
        assert!(got
            .iter()
            .any(|g| g.contains("metadata.name")
                && g.ends_with("must be no more than 52 characters")));
    }

    #[test]
    fn tz_in_schedule_local_zone_and_restart_policy() {
        let cj = cron_job("a", "TZ=UTC * * * * *");
        assert!(messages(&validate_cron_job_create(&cj)).contains(
            &"spec.schedule: Invalid value: \"TZ=UTC * * * * *\": cannot use TZ or CRON_TZ in schedule, use timeZone field instead".to_string()
        ));
        let mut cj = cron_job("a", "* * * * *");
        cj.spec.time_zone = Some("Local".into());
        assert!(
            messages(&validate_cron_job_create(&cj))[0].contains("must be an explicit time zone")
        );
        let mut cj = cron_job("a", "* * * * *");
        cj.spec.job_template.spec.template.spec.restart_policy = Some("Always".into());
        assert!(messages(&validate_cron_job_create(&cj)).contains(
            &"spec.jobTemplate.spec.template.spec.restartPolicy: Unsupported value: \"Always\": supported values: \"OnFailure\", \"Never\"".to_string()
        ));
        let mut cj = cron_job("a", "");
        cj.spec.concurrency_policy = String::new();
        let got = messages(&validate_cron_job_create(&cj));
        assert!(
            got.contains(&"spec.schedule: Required value".to_string()),
            "{got:?}"
        );
        assert!(
            got.contains(&"spec.concurrencyPolicy: Required value".to_string()),
            "{got:?}"
        );
    }

    #[test]
    fn update_skips_name_length() {
        let old = cron_job(&"a".repeat(53), "* * * * *");
        let mut new = old.clone();
        new.spec.suspend = Some(true);
        assert!(validate_cron_job_update(&new, &old).is_empty());
    }
}
