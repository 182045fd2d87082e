//! Job strategy (upstream `pkg/registry/batch/job/strategy.go`): create resets the status, sets
//! `generation: 1` and, unless `manualSelector`, generates the selector and the template labels
//! (`generateSelector`); update keeps the status and bumps `generation` on spec changes.

use k8s_types::batch::{
    Job, JobStatus, CONTROLLER_UID_LABEL, JOB_NAME_LABEL, LEGACY_CONTROLLER_UID_LABEL,
    LEGACY_JOB_NAME_LABEL,
};
use k8s_types::labels::LabelSelector;

/// Upstream `jobStrategy.PrepareForCreate`, plus `generateSelector`, which upstream runs at the
/// start of `jobStrategy.Validate` (after `BeforeCreate` has set the uid): here it runs once the
/// uid is set, before validation, which is the same order. Upstream then re-applies
/// `SetDefaults_Job` whenever the stored object is decoded, which copies the generated template
/// labels to a Job created without labels; k8s-mini does that copy here.
pub fn prepare_for_create(job: &mut Job) {
    job.status = JobStatus::default();
    job.metadata.generation = Some(1);
    if job.spec.manual_selector != Some(true) {
        generate_selector(job);
    }
    if job.metadata.labels.is_empty() && !job.spec.template.metadata.labels.is_empty() {
        job.metadata.labels = job.spec.template.metadata.labels.clone();
    }
}

/// Upstream `generateSelector`: the template gets `job-name` / `batch.kubernetes.io/job-name` =
/// name and `controller-uid` / `batch.kubernetes.io/controller-uid` = uid unless already set (a
/// conflicting value is rejected by validation); the selector gets
/// `matchLabels[batch.kubernetes.io/controller-uid] = uid`.
pub fn generate_selector(job: &mut Job) {
    let name = job.metadata.name.clone();
    let uid = job.metadata.uid.clone().unwrap_or_default();
    let labels = &mut job.spec.template.metadata.labels;
    for key in [LEGACY_JOB_NAME_LABEL, JOB_NAME_LABEL] {
        labels
            .entry(key.to_string())
            .or_insert_with(|| name.clone());
    }
    for key in [LEGACY_CONTROLLER_UID_LABEL, CONTROLLER_UID_LABEL] {
        labels.entry(key.to_string()).or_insert_with(|| uid.clone());
    }
    let selector = job.spec.selector.get_or_insert_with(LabelSelector::default);
    selector
        .match_labels
        .entry(CONTROLLER_UID_LABEL.to_string())
        .or_insert(uid);
}

/// Upstream `jobStrategy.PrepareForUpdate`.
pub fn prepare_for_update(new: &mut Job, old: &Job) {
    new.status.clone_from(&old.status);
    if new.spec != old.spec {
        new.metadata.generation = Some(old.metadata.generation.unwrap_or(0).saturating_add(1));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_selector_and_labels() {
        let mut job = Job::default();
        job.metadata.name = "pi".into();
        job.metadata.uid = Some("u-1".into());
        prepare_for_create(&mut job);
        let labels = &job.spec.template.metadata.labels;
        assert_eq!(labels.get("job-name").map(String::as_str), Some("pi"));
        assert_eq!(
            labels
                .get("batch.kubernetes.io/job-name")
                .map(String::as_str),
            Some("pi")
        );
        assert_eq!(
            labels.get("controller-uid").map(String::as_str),
            Some("u-1")
        );
        assert_eq!(
            labels
                .get("batch.kubernetes.io/controller-uid")
                .map(String::as_str),
            Some("u-1")
        );
        let sel = job.spec.selector.clone().unwrap_or_default();
        assert_eq!(sel.match_labels.len(), 1);
        assert_eq!(
            sel.match_labels
                .get("batch.kubernetes.io/controller-uid")
                .map(String::as_str),
            Some("u-1")
        );
        assert_eq!(job.metadata.labels, job.spec.template.metadata.labels);
        assert_eq!(job.metadata.generation, Some(1));
    }
}
