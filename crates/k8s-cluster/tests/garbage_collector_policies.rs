//! `propagationPolicy` end to end (`kubectl delete --cascade=orphan|foreground`): the apiserver
//! puts the finalizer on the owner (upstream `deletionFinalizersForGarbageCollection`), the
//! garbage collector orphans the dependents or deletes them first (upstream `orphanDependents`,
//! `processDeletingDependentsItem`), and the owner goes when its finalizer does. Ticks worked out
//! by hand for `fixtures/cascade-policies.yaml`: both Deployments (2 replicas, pods with the
//! default 30 s grace period) are deleted at t=5.
//! - Orphan: in the same tick the collector removes `web`'s reference from its ReplicaSet and the
//!   finalizer; `web` is gone, its ReplicaSet and 2 pods keep running, ownerless.
//! - Foreground: t=5 the collector deletes `api`'s ReplicaSet in the foreground (it has pods);
//!   t=6 the ReplicaSet's pods are deleted (deletionTimestamp 6 + 30 = 36); t=36 the kubelet
//!   stops them and they go; then the ReplicaSet loses its finalizer and goes, then `api`.

use std::path::{Path, PathBuf};

use k8s_cluster::{run_file, OutputFormat, RunOptions};

/// (kind, name, finalizers, deletionTimestamp, owner names).
type Row = (String, String, Vec<String>, String, Vec<String>);

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/cascade-policies.yaml")
}

/// (kind, name, finalizers, deletionTimestamp, owner names) of the Deployments, ReplicaSets and
/// Pods after `ticks`.
fn state(ticks: u64) -> Vec<Row> {
    let out = run_file(
        &fixture(),
        &RunOptions {
            output: OutputFormat::Json,
            ticks: Some(ticks),
            ..Default::default()
        },
    )
    .expect("run");
    let list: serde_json::Value = serde_json::from_str(&out.stdout).expect("json");
    let strs = |v: &serde_json::Value| -> Vec<String> {
        v.as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|x| x.as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default()
    };
    list["items"]
        .as_array()
        .expect("items")
        .iter()
        .filter(|o| ["Deployment", "ReplicaSet", "Pod"].contains(&o["kind"].as_str().unwrap_or("")))
        .map(|o| {
            let m = &o["metadata"];
            let owners: Vec<String> = m["ownerReferences"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|r| r["name"].as_str().map(String::from))
                        .collect()
                })
                .unwrap_or_default();
            (
                o["kind"].as_str().unwrap_or("").to_string(),
                m["name"].as_str().unwrap_or("").to_string(),
                strs(&m["finalizers"]),
                m["deletionTimestamp"].as_str().unwrap_or("").to_string(),
                owners,
            )
        })
        .collect()
}

fn count(s: &[Row], kind: &str, prefix: &str) -> usize {
    s.iter()
        .filter(|(k, n, ..)| k == kind && n.starts_with(prefix))
        .count()
}

#[test]
fn orphan_keeps_the_dependents_without_their_owner() {
    let s = state(6);
    assert_eq!(count(&s, "Deployment", "web"), 0);
    let rs: Vec<_> = s
        .iter()
        .filter(|(k, n, ..)| k == "ReplicaSet" && n.starts_with("web-"))
        .collect();
    assert_eq!(rs.len(), 1);
    assert!(rs[0].4.is_empty(), "owner reference removed: {rs:?}");
    assert!(rs[0].3.is_empty(), "not deleted");
    let end = state(60);
    assert_eq!(count(&end, "ReplicaSet", "web-"), 1);
    assert_eq!(count(&end, "Pod", "web-"), 2);
}

#[test]
fn foreground_deletes_the_dependents_first_then_the_owner() {
    let s = state(6);
    let api: Vec<_> = s.iter().filter(|(_, n, ..)| n.starts_with("api")).collect();
    let find = |kind: &str| api.iter().find(|(k, ..)| k == kind).expect(kind);
    let (_, _, fin, del, _) = find("Deployment");
    assert_eq!(
        (fin.as_slice(), del.as_str()),
        (
            &["foregroundDeletion".to_string()][..],
            "1970-01-01T00:00:05Z"
        )
    );
    let (_, _, fin, del, _) = find("ReplicaSet");
    assert_eq!(
        (fin.as_slice(), del.as_str()),
        (
            &["foregroundDeletion".to_string()][..],
            "1970-01-01T00:00:05Z"
        )
    );
    assert_eq!(count(&s, "Pod", "api-"), 2);
    let s = state(20);
    assert!(s
        .iter()
        .filter(|(k, n, ..)| k == "Pod" && n.starts_with("api-"))
        .all(|(.., del, _)| del == "1970-01-01T00:00:36Z"));
    // The pods go after their grace period; the ReplicaSet, then the Deployment, one step each.
    let states: Vec<(u64, _)> = (30..=45).map(|t| (t, state(t))).collect();
    let gone_at = |kind: &str| {
        states
            .iter()
            .find(|(_, s)| count(s, kind, "api") == 0)
            .map(|(t, _)| *t)
            .expect(kind)
    };
    let (pods, rs, dep) = (gone_at("Pod"), gone_at("ReplicaSet"), gone_at("Deployment"));
    assert!(pods > 36, "{pods}");
    assert_eq!((rs, dep), (pods + 1, pods + 2));
}
