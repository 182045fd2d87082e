//! `kubectl describe job`: upstream `staging/src/k8s.io/kubectl/pkg/describe/describe.go` (v1.32,
//! `JobDescriber.Describe`, `describeJob`, `capIndexesListOrNone`). The fields are printed as the
//! apiserver stored them (its defaulting, `k8s-api` `defaults/job.rs`, sets parallelism,
//! completions, backoffLimit, completionMode and suspend); the Duration is
//! `completionTime - startTime` as `duration.HumanDuration`.

use k8s_types::apiserver::ApiClient;
use k8s_types::batch::Job;
use k8s_types::core::Event;
use k8s_types::meta::timestamp_tick;
use k8s_types::Tick;

use super::pod::describe_pod_template;
use super::{
    annotations_multiline, describe_events, labels_multiline, object_events, PrefixWriter,
};
use crate::printers::{label_selector_string, rfc1123z};
use crate::state::human_duration;

/// `capIndexesListOrNone`: `<none>`, or the list cut at the first comma at or after `soft_limit`
/// characters, followed by `...`.
fn cap_indexes(indexes: &str, soft_limit: usize) -> String {
    if indexes.is_empty() {
        return "<none>".to_string();
    }
    match indexes
        .char_indices()
        .find(|(i, c)| *i >= soft_limit && *c == ',')
    {
        Some((i, _)) => format!("{}...", &indexes[..=i]),
        None => indexes.to_string(),
    }
}

/// The Job's Events (kind, namespace, name and uid).
pub fn job_events(api: &dyn ApiClient, job: &Job) -> Vec<Event> {
    object_events(
        api,
        "Job",
        job.metadata.namespace(),
        &job.metadata.name,
        &[job.metadata.uid.as_deref().unwrap_or("")],
    )
}

/// What `kubectl describe job` prints for `job` with its `events` (see [`job_events`]), the clock
/// at `now`.
pub fn describe_job(job: &Job, events: Vec<Event>, now: Tick) -> String {
    let mut w = PrefixWriter::new();
    let spec = &job.spec;
    let status = &job.status;
    w.write(0, &format!("Name:\t{}\n", job.metadata.name));
    w.write(0, &format!("Namespace:\t{}\n", job.metadata.namespace()));
    match label_selector_string(spec.selector.as_ref()) {
        Some(s) => w.write(0, &format!("Selector:\t{s}\n")),
        None => {
            // `LabelSelectorAsSelector`'s error: the first operator it does not know.
            let op = spec
                .selector
                .iter()
                .flat_map(|s| &s.match_expressions)
                .map(|r| r.operator.as_str())
                .find(|o| !k8s_types::labels::SELECTOR_OPERATORS.contains(o))
                .unwrap_or("");
            w.write(
                0,
                &format!(
                    "Selector:\tFailed to get selector: \"{op}\" is not a valid label selector operator\n"
                ),
            );
        }
    }
    labels_multiline(&mut w, "Labels", &job.metadata.labels);
    annotations_multiline(&mut w, "Annotations", &job.metadata.annotations);
    if let Some(c) = job.metadata.controller_ref() {
        w.write(0, &format!("Controlled By:\t{}/{}\n", c.kind, c.name));
    }
    if let Some(p) = spec.parallelism {
        w.write(0, &format!("Parallelism:\t{p}\n"));
    }
    match spec.completions {
        Some(c) => w.write(0, &format!("Completions:\t{c}\n")),
        None => w.write(0, "Completions:\t<unset>\n"),
    }
    if let Some(m) = &spec.completion_mode {
        w.write(0, &format!("Completion Mode:\t{m}\n"));
    }
    if let Some(s) = spec.suspend {
        w.write(0, &format!("Suspend:\t{s}\n"));
    }
    if let Some(b) = spec.backoff_limit {
        w.write(0, &format!("Backoff Limit:\t{b}\n"));
    }
    if let Some(t) = spec.ttl_seconds_after_finished {
        w.write(0, &format!("TTL Seconds After Finished:\t{t}\n"));
    }
    if let Some(s) = &status.start_time {
        w.write(0, &format!("Start Time:\t{}\n", rfc1123z(s)));
    }
    if let Some(c) = &status.completion_time {
        w.write(0, &format!("Completed At:\t{}\n", rfc1123z(c)));
    }
    let tick = |t: &Option<String>| t.as_deref().and_then(timestamp_tick);
    if let (Some(start), Some(end)) = (tick(&status.start_time), tick(&status.completion_time)) {
        let secs = i64::try_from(end).unwrap_or(i64::MAX) - i64::try_from(start).unwrap_or(0);
        w.write(0, &format!("Duration:\t{}\n", human_duration(secs)));
    }
    if let Some(a) = spec.active_deadline_seconds {
        w.write(0, &format!("Active Deadline Seconds:\t{a}s\n"));
    }
    match status.ready {
        None => w.write(
            0,
            &format!(
                "Pods Statuses:\t{} Active / {} Succeeded / {} Failed\n",
                status.active, status.succeeded, status.failed
            ),
        ),
        Some(ready) => w.write(
            0,
            &format!(
                "Pods Statuses:\t{} Active ({ready} Ready) / {} Succeeded / {} Failed\n",
                status.active, status.succeeded, status.failed
            ),
        ),
    }
    if spec.completion_mode.as_deref() == Some("Indexed") {
        w.write(
            0,
            &format!(
                "Completed Indexes:\t{}\n",
                cap_indexes(&status.completed_indexes, 50)
            ),
        );
    }
    describe_pod_template(&mut w, &spec.template);
    describe_events(&mut w, events, now);
    w.finish()
}
