//! `matchLabelKeys` / `mismatchLabelKeys` of pod (anti-)affinity terms through the public API:
//! merged into the term's `labelSelector` when the pod is created, then validated, as upstream's
//! pod strategy (`pkg/registry/core/pod/strategy.go` `mutatePodAffinity`) and
//! `validateMatchLabelKeysAndMismatchLabelKeys` (`pkg/apis/core/validation`) do.

mod common;

use std::collections::BTreeMap;

use common::{pod, server};
use k8s_types::apiserver::ApiClient;
use k8s_types::core::{Affinity, PodAffinity, PodAffinityTerm, WeightedPodAffinityTerm};
use k8s_types::labels::{LabelSelector, LabelSelectorRequirement};
use k8s_types::status::StatusReason;
use k8s_types::{Kind, Object};

fn selector(key: &str, value: &str) -> Option<LabelSelector> {
    Some(LabelSelector {
        match_labels: BTreeMap::from([(key.to_string(), value.to_string())]),
        ..Default::default()
    })
}

fn term(
    sel: Option<LabelSelector>,
    match_keys: &[&str],
    mismatch_keys: &[&str],
) -> PodAffinityTerm {
    PodAffinityTerm {
        label_selector: sel,
        topology_key: "topology.kubernetes.io/zone".into(),
        match_label_keys: match_keys.iter().map(|k| k.to_string()).collect(),
        mismatch_label_keys: mismatch_keys.iter().map(|k| k.to_string()).collect(),
        ..Default::default()
    }
}

fn req(key: &str, op: &str, value: &str) -> LabelSelectorRequirement {
    LabelSelectorRequirement {
        key: key.into(),
        operator: op.into(),
        values: vec![value.into()],
    }
}

#[test]
fn label_keys_are_merged_into_every_term_at_create() {
    let mut api = server();
    let mut p = pod("web-v2");
    p.metadata.labels = BTreeMap::from([
        ("app".to_string(), "web".to_string()),
        ("ver".to_string(), "v2".to_string()),
        ("tenant".to_string(), "a".to_string()),
    ])
    .into();
    p.spec.affinity = Some(Affinity {
        pod_affinity: Some(PodAffinity {
            // `missing` is not a label of the pod: ignored.
            required_during_scheduling_ignored_during_execution: vec![term(
                selector("app", "web"),
                &["ver", "missing"],
                &[],
            )],
            ..Default::default()
        }),
        pod_anti_affinity: Some(PodAffinity {
            preferred_during_scheduling_ignored_during_execution: vec![WeightedPodAffinityTerm {
                weight: 10,
                pod_affinity_term: term(selector("app", "web"), &["ver"], &["tenant"]),
            }],
            ..Default::default()
        }),
        ..Default::default()
    });
    api.create(Object::Pod(Box::new(p))).expect("created");
    let Object::Pod(got) = api.get(&Kind::Pod, "default", "web-v2").expect("get") else {
        panic!("the pod is stored");
    };
    let a = got.spec.affinity.clone().expect("affinity");
    let required = &a
        .pod_affinity
        .expect("podAffinity")
        .required_during_scheduling_ignored_during_execution[0];
    let sel = required.label_selector.as_ref().expect("selector");
    assert_eq!(sel.match_expressions, vec![req("ver", "In", "v2")]);
    // The keys stay in the spec, as upstream keeps them.
    assert_eq!(required.match_label_keys, vec!["ver", "missing"]);
    let preferred = &a
        .pod_anti_affinity
        .expect("podAntiAffinity")
        .preferred_during_scheduling_ignored_during_execution[0];
    let sel = preferred
        .pod_affinity_term
        .label_selector
        .as_ref()
        .expect("selector");
    assert_eq!(
        sel.match_expressions,
        vec![req("ver", "In", "v2"), req("tenant", "NotIn", "a")]
    );
}

fn create_error(t: PodAffinityTerm) -> Vec<(String, String)> {
    let mut api = server();
    let mut p = pod("p");
    p.metadata.labels = BTreeMap::from([("ver".to_string(), "v1".to_string())]).into();
    p.spec.affinity = Some(Affinity {
        pod_affinity: Some(PodAffinity {
            required_during_scheduling_ignored_during_execution: vec![t],
            ..Default::default()
        }),
        ..Default::default()
    });
    let err = api.create(Object::Pod(Box::new(p))).expect_err("rejected");
    assert_eq!(err.reason, StatusReason::Invalid);
    err.causes
        .iter()
        .map(|c| (c.field.clone(), c.message.clone()))
        .collect()
}

const TERM: &str = "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]";

#[test]
fn label_keys_need_a_selector() {
    assert_eq!(
        create_error(term(None, &["ver"], &[])),
        vec![(
            format!("{TERM}.matchLabelKeys"),
            "Forbidden: must not be specified when labelSelector is not set".to_string()
        )]
    );
}

#[test]
fn a_match_label_key_already_in_the_selector_is_rejected_at_upstreams_path() {
    // The selector has `ver` already; the merge appends `ver In (v1)`, which validation finds
    // twice. Upstream reports it at the term's path indexed by the key's position.
    assert_eq!(
        create_error(term(selector("ver", "v1"), &["ver"], &[])),
        vec![(
            format!("{TERM}[0]"),
            "Invalid value: \"ver\": exists in both matchLabelKeys and labelSelector".to_string()
        )]
    );
}

#[test]
fn a_key_in_both_lists_is_rejected() {
    // The merge appends `ver In (v1)` then `ver NotIn (v1)`: upstream's selector check sees `ver`
    // twice (the second time at matchLabelKeys position 1), then the two lists share `ver`.
    assert_eq!(
        create_error(term(selector("app", "web"), &["x", "ver"], &["ver"])),
        vec![
            (
                format!("{TERM}[1]"),
                "Invalid value: \"ver\": exists in both matchLabelKeys and labelSelector"
                    .to_string()
            ),
            (
                format!("{TERM}.matchLabelKeys[1]"),
                "Invalid value: \"ver\": exists in both matchLabelKeys and mismatchLabelKeys"
                    .to_string()
            )
        ]
    );
}
