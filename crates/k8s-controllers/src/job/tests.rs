use super::*;
use k8s_types::batch::{PodFailurePolicyOnExitCodesRequirement, PodFailurePolicyRule};
use k8s_types::core::{ContainerState, ContainerStateDetail, ContainerStatus};

#[test]
fn backoff_doubles_from_ten_seconds_up_to_six_minutes() {
    // Upstream TestGetRemainingTime: 1 failure -> 10s, 2 -> 20s, ... capped at 6 min.
    let rec = |n: i32| BackoffRecord {
        failures_after_last_success: n,
        last_failure_time: Some(100),
    };
    assert_eq!(rec(1).remaining(100), 10);
    assert_eq!(rec(1).remaining(101), 9);
    assert_eq!(rec(1).remaining(110), 0);
    assert_eq!(rec(2).remaining(100), 20);
    assert_eq!(rec(3).remaining(100), 40);
    assert_eq!(rec(6).remaining(100), 320);
    assert_eq!(rec(7).remaining(100), 360);
    assert_eq!(rec(20).remaining(100), 360);
    assert_eq!(BackoffRecord::default().remaining(100), 0);
}

#[test]
fn backoff_record_resets_on_success() {
    // Upstream TestNewBackoffRecord: failures after the last success only.
    let r = BackoffRecord::default().updated(&[], &[5, 7]);
    assert_eq!(r.failures_after_last_success, 2);
    assert_eq!(r.last_failure_time, Some(7));
    let r = r.updated(&[10], &[9, 12, 15]);
    assert_eq!(r.failures_after_last_success, 2);
    assert_eq!(r.last_failure_time, Some(15));
    let r = r.updated(&[20], &[]);
    assert_eq!(r, BackoffRecord::default());
}

#[test]
fn indexes_print_as_upstream_intervals() {
    let s: BTreeSet<usize> = [0, 1, 2, 4, 6, 7].into_iter().collect();
    assert_eq!(format_indexes(&s), "0-2,4,6,7");
    assert_eq!(
        parse_indexes("0-2,4,6,7", 7),
        [0, 1, 2, 4, 6].into_iter().collect()
    );
    assert_eq!(format_indexes(&BTreeSet::new()), "");
}

#[test]
fn success_policy_rules_match_as_upstream() {
    // Upstream TestMatchSuccessPolicy cases: indexes only, count only, both.
    let set = |v: &[usize]| v.iter().copied().collect::<BTreeSet<usize>>();
    let policy = |indexes: Option<&str>, count: Option<i32>| SuccessPolicy {
        rules: vec![k8s_types::batch::SuccessPolicyRule {
            succeeded_indexes: indexes.map(String::from),
            succeeded_count: count,
        }],
    };
    let m = |p: &SuccessPolicy, s: &[usize]| match_success_policy(Some(p), 10, &set(s));
    assert_eq!(m(&policy(Some("0-2"), None), &[0, 1]), None);
    assert_eq!(
        m(&policy(Some("0-2"), None), &[0, 1, 2, 7]),
        Some("Matched rules at index 0".to_string())
    );
    assert_eq!(m(&policy(None, Some(3)), &[4, 8]), None);
    assert_eq!(
        m(&policy(None, Some(3)), &[4, 8, 9]),
        Some("Matched rules at index 0".to_string())
    );
    assert_eq!(m(&policy(Some("5-9"), Some(2)), &[0, 1, 5]), None);
    assert_eq!(
        m(&policy(Some("5-9"), Some(2)), &[0, 5, 9]),
        Some("Matched rules at index 0".to_string())
    );
    assert_eq!(m(&policy(Some("0"), None), &[]), None);
    let two = SuccessPolicy {
        rules: vec![
            k8s_types::batch::SuccessPolicyRule {
                succeeded_indexes: Some("3".into()),
                succeeded_count: None,
            },
            k8s_types::batch::SuccessPolicyRule {
                succeeded_indexes: None,
                succeeded_count: Some(1),
            },
        ],
    };
    assert_eq!(m(&two, &[1]), Some("Matched rules at index 1".to_string()));
}

#[test]
fn indexed_generate_name() {
    assert_eq!(pod_generate_name_with_index("pi", 3), "pi-3-");
    let long = "a".repeat(60);
    let n = pod_generate_name_with_index(&long, 12);
    assert_eq!(n.len(), 58);
    assert!(n.ends_with("a-12-"));
}

fn failed_pod(exit: i32) -> Pod {
    let mut p = Pod::default();
    p.metadata.name = "pi-0-abcde".into();
    p.metadata.namespace = Some("default".into());
    p.status.phase = Some("Failed".into());
    p.status.container_statuses = vec![ContainerStatus {
        name: "main".into(),
        state: ContainerState {
            terminated: Some(Box::new(ContainerStateDetail {
                exit_code: Some(exit),
                ..Default::default()
            })),
            ..Default::default()
        },
        ..Default::default()
    }]
    .into();
    p
}

#[test]
fn pod_failure_policy_matches_exit_codes_in_order() {
    let policy = PodFailurePolicy {
        rules: vec![
            PodFailurePolicyRule {
                action: "FailJob".into(),
                on_exit_codes: Some(PodFailurePolicyOnExitCodesRequirement {
                    container_name: Some("main".into()),
                    operator: "In".into(),
                    values: vec![42],
                }),
                on_pod_conditions: Vec::new(),
            },
            PodFailurePolicyRule {
                action: "Ignore".into(),
                on_exit_codes: Some(PodFailurePolicyOnExitCodesRequirement {
                    container_name: None,
                    operator: "NotIn".into(),
                    values: vec![1],
                }),
                on_pod_conditions: Vec::new(),
            },
        ],
    };
    // Upstream's message format (TestMatchPodFailurePolicy).
    assert_eq!(
        match_pod_failure_policy(&policy, &failed_pod(42)),
        (
            Some("Container main for pod default/pi-0-abcde failed with exit code 42 matching FailJob rule at index 0".into()),
            true,
            Some("FailJob")
        )
    );
    assert_eq!(
        match_pod_failure_policy(&policy, &failed_pod(3)),
        (None, false, Some("Ignore"))
    );
    assert_eq!(
        match_pod_failure_policy(&policy, &failed_pod(1)),
        (None, true, None)
    );
}
