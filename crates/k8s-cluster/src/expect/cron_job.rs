//! The `cronJob` check: a CronJob's active list, last schedule and success times, and the Jobs
//! it controls (`kubectl get jobs` filtered by owner).

use k8s_types::apiserver::{ApiClient, ApiExt};
use k8s_types::batch::{CronJob, Job};

use crate::scenario::CronJobExpectation;

/// `None` when every given field holds, else the differences joined by `; `.
pub(super) fn check_cron_job(api: &dyn ApiClient, c: &CronJobExpectation) -> Option<String> {
    let namespace = c.namespace.as_deref().unwrap_or("default");
    let cj: CronJob = match api.get_typed(namespace, &c.name) {
        Ok(cj) => cj,
        Err(e) => return Some(e.message),
    };
    let mut problems = Vec::new();
    if let Some(want) = &c.active {
        let got: Vec<String> = cj
            .status
            .active
            .iter()
            .map(|r| r.name.to_string())
            .collect();
        if *want != got {
            problems.push(format!("expected active {want:?}, got {got:?}"));
        }
    }
    if let Some(want) = &c.jobs {
        let uid = cj.metadata.uid.clone().unwrap_or_default();
        let mut got: Vec<String> = api
            .list_typed::<Job>(Some(namespace), None)
            .into_iter()
            .filter(|j| j.metadata.controller_ref().is_some_and(|r| r.uid == uid))
            .filter(|j| j.metadata.deletion_timestamp.is_none())
            .map(|j| j.metadata.name)
            .collect();
        got.sort();
        if *want != got {
            problems.push(format!("expected jobs {want:?}, got {got:?}"));
        }
    }
    let mut time = |field: &str, want: &Option<String>, got: &Option<String>| {
        if let Some(w) = want {
            let g = got.clone().unwrap_or_default();
            if *w != g {
                problems.push(format!("expected {field} {w:?}, got {g:?}"));
            }
        }
    };
    time(
        "lastScheduleTime",
        &c.last_schedule_time,
        &cj.status.last_schedule_time,
    );
    time(
        "lastSuccessfulTime",
        &c.last_successful_time,
        &cj.status.last_successful_time,
    );
    (!problems.is_empty()).then(|| problems.join("; "))
}
