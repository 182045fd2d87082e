//! CronJob strategy (upstream `pkg/registry/batch/cronjob/strategy.go`): create resets the status
//! and sets `generation: 1`; update keeps the status and bumps `generation` on spec changes; a
//! `/status` update keeps the spec.

use k8s_types::batch::{CronJob, CronJobStatus};

/// Upstream `cronJobStrategy.PrepareForCreate`.
pub fn prepare_for_create(cj: &mut CronJob) {
    cj.status = CronJobStatus::default();
    cj.metadata.generation = Some(1);
}

/// Upstream `cronJobStrategy.PrepareForUpdate`.
pub fn prepare_for_update(new: &mut CronJob, old: &CronJob) {
    new.status.clone_from(&old.status);
    if new.spec != old.spec {
        new.metadata.generation = Some(old.metadata.generation.unwrap_or(0).saturating_add(1));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn create_resets_status_update_bumps_generation_on_spec_change() {
        let mut cj = CronJob::default();
        cj.status.last_schedule_time = Some("1970-01-01T00:01:00Z".into());
        prepare_for_create(&mut cj);
        assert_eq!(cj.status, CronJobStatus::default());
        assert_eq!(cj.metadata.generation, Some(1));
        let mut new = cj.clone();
        new.status.last_schedule_time = Some("x".into());
        prepare_for_update(&mut new, &cj);
        assert_eq!(new.metadata.generation, Some(1));
        assert_eq!(new.status.last_schedule_time, None);
        new.spec.suspend = Some(true);
        prepare_for_update(&mut new, &cj);
        assert_eq!(new.metadata.generation, Some(2));
    }
}
