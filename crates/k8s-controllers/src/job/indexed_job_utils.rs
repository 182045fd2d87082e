//! Completion indexes (upstream `pkg/controller/job/indexed_job_utils.go`: `getCompletionIndex`,
//! index lists, `podGenerateNameWithIndex`, `addCompletionIndexEnvVariables`, and the
//! backoffLimitPerIndex failure counts).

use super::*;

/// Upstream `getCompletionIndex`: the completion index annotation as a nonnegative int.
pub fn completion_index(pod: &Pod) -> Option<usize> {
    let v = pod
        .metadata
        .annotations
        .get(JOB_COMPLETION_INDEX_ANNOTATION)?;
    v.parse::<usize>().ok()
}

/// Upstream `orderedIntervals.String`: `0-2,4`; two consecutive indexes print as `1,2`.
pub fn format_indexes(indexes: &BTreeSet<usize>) -> String {
    let mut intervals: Vec<(usize, usize)> = Vec::new();
    for &i in indexes {
        match intervals.last_mut() {
            Some((_, last)) if *last + 1 == i => *last = i,
            _ => intervals.push((i, i)),
        }
    }
    let mut out = String::new();
    for (first, last) in intervals {
        if !out.is_empty() {
            out.push(',');
        }
        out.push_str(&first.to_string());
        if last > first {
            out.push(if last == first + 1 { ',' } else { '-' });
            out.push_str(&last.to_string());
        }
    }
    out
}

/// Upstream `parseIndexesFromString`: the indexes below `completions` of `0-2,4`; malformed
/// parts are skipped.
pub fn parse_indexes(s: &str, completions: usize) -> BTreeSet<usize> {
    let mut out = BTreeSet::new();
    for part in s.split(',').filter(|p| !p.is_empty()) {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        let (Ok(a), Ok(b)) = (a.parse::<usize>(), b.parse::<usize>()) else {
            continue;
        };
        out.extend((a..=b).take_while(|i| *i < completions));
    }
    out
}

/// Upstream `podGenerateNameWithIndex`: `<job>-<index>-`, the job name cut so the prefix fits in
/// 58 characters.
pub fn pod_generate_name_with_index(job_name: &str, index: usize) -> String {
    let appendix = format!("-{index}-");
    let mut prefix = format!("{job_name}{appendix}");
    if prefix.len() > MAX_GENERATED_NAME_LENGTH {
        let keep = MAX_GENERATED_NAME_LENGTH.saturating_sub(appendix.len());
        prefix = format!("{}{appendix}", &job_name[..keep.min(job_name.len())]);
    }
    prefix
}

/// Upstream `parseInt32` of an index failure count annotation: 0 when absent or invalid.
pub(super) fn count_annotation(pod: &Pod, key: &str) -> i32 {
    pod.metadata
        .annotations
        .get(key)
        .and_then(|v| v.parse::<i64>().ok())
        .filter(|v| (0..=i64::from(i32::MAX)).contains(v))
        .map_or(0, |v| v as i32)
}

/// Upstream `getIndexFailureCount`.
pub(super) fn index_failure_count(pod: &Pod) -> i32 {
    count_annotation(pod, JOB_INDEX_FAILURE_COUNT_ANNOTATION)
}

/// Upstream `getIndexAbsoluteFailureCount`: counted plus ignored failures.
pub(super) fn index_absolute_failure_count(pod: &Pod) -> i32 {
    index_failure_count(pod) + count_annotation(pod, JOB_INDEX_IGNORED_FAILURE_COUNT_ANNOTATION)
}

/// Upstream `isIndexFailed`: the pod failed and either a FailIndex rule matched or it is a counted
/// failure whose index already had `backoffLimitPerIndex` failures.
pub(super) fn is_index_failed(job: &Job, pod: &Pod) -> bool {
    if !is_pod_failed(pod, job) {
        return false;
    }
    let counted = match &job.spec.pod_failure_policy {
        Some(policy) => {
            let (_, count, action) = match_pod_failure_policy(policy, pod);
            if action == Some(actions::FAIL_INDEX) {
                return true;
            }
            count
        }
        None => true,
    };
    counted && index_failure_count(pod) >= job.spec.backoff_limit_per_index.unwrap_or(0)
}

/// Upstream `getNewIndexFailureCounts`: the failure counts for the pod replacing `replaced`.
pub(super) fn new_index_failure_counts(job: &Job, replaced: Option<&Pod>) -> (i32, i32) {
    let Some(p) = replaced else {
        return (0, 0);
    };
    let (mut failures, mut ignored) = (
        index_failure_count(p),
        count_annotation(p, JOB_INDEX_IGNORED_FAILURE_COUNT_ANNOTATION),
    );
    let counted = job
        .spec
        .pod_failure_policy
        .as_ref()
        .is_none_or(|policy| match_pod_failure_policy(policy, p).1);
    if counted {
        failures += 1;
    } else {
        ignored += 1;
    }
    (failures, ignored)
}

/// Upstream `addCompletionIndexEnvVariable`: `JOB_COMPLETION_INDEX` from the completion index
/// label (PodIndexLabel on; the `fieldRef.apiVersion: v1` is the apiserver's default, written here).
pub(super) fn add_completion_index_env(env: &mut Vec<serde_json::Value>) {
    if env
        .iter()
        .any(|v| v.get("name").and_then(|n| n.as_str()) == Some(JOB_COMPLETION_INDEX_ENV))
    {
        return;
    }
    env.push(serde_json::json!({
        "name": JOB_COMPLETION_INDEX_ENV,
        "valueFrom": {"fieldRef": {
            "apiVersion": "v1",
            "fieldPath": format!("metadata.labels['{JOB_COMPLETION_INDEX_ANNOTATION}']"),
        }},
    }));
}
