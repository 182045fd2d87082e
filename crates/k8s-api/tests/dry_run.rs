//! `dryRun=All` (upstream `staging/src/k8s.io/apiserver/pkg/registry/generic/registry/dryrun.go`,
//! KEP-576): the whole write pipeline runs, the answer is what the write would return, and the
//! store (its revision, its objects, its watchers) does not change.

mod common;

use common::{meta, pod, q, server};
use k8s_types::apiserver::{ApiClient, ApiExt, DeleteOptions};
use k8s_types::core::{Binding, Pod, ResourceList, ResourceQuota, ResourceQuotaSpec};
use k8s_types::status::StatusReason;
use k8s_types::{Kind, Object};

fn list(xs: &[(&str, &str)]) -> ResourceList {
    xs.iter().map(|(k, v)| (k.to_string(), q(v))).collect()
}

#[test]
fn a_dry_run_create_answers_the_defaulted_object_without_storing_it() {
    let mut api = server();
    let rev = api.revision();
    let mut p = pod("");
    p.metadata.generate_name = Some("web-".into());
    let created = api
        .dry_run(|a| a.create(Object::Pod(Box::new(p.clone()))))
        .unwrap();
    // Defaulted and named as a real create would be, but not stored: no resourceVersion
    // (KEP-576 "ResourceVersion will also be left empty on creation").
    let Object::Pod(created) = created else {
        panic!("not a pod")
    };
    assert!(created.metadata.name.starts_with("web-"));
    assert_eq!(created.metadata.resource_version, None);
    assert!(created.metadata.uid.is_some());
    assert_eq!(created.spec.restart_policy.as_deref(), Some("Always"));
    assert_eq!(api.revision(), rev);
    assert!(api
        .get(&Kind::Pod, "default", &created.metadata.name)
        .is_err());
    assert!(api.watch(&Kind::Pod, rev).unwrap().is_empty());
    // The real create of the same request gets the same name, now stored.
    let real = api.create(Object::Pod(Box::new(p))).unwrap();
    assert_eq!(real.meta().name, created.metadata.name);
    assert_eq!(api.revision(), rev + 1);
    assert!(!api.is_dry_run());
}

#[test]
fn a_dry_run_create_of_an_existing_or_invalid_object_fails_as_the_real_one() {
    let mut api = server();
    api.create_typed(pod("a")).unwrap();
    let err = api
        .dry_run(|a| a.create(Object::Pod(Box::new(pod("a")))))
        .unwrap_err();
    assert_eq!(err.reason, StatusReason::AlreadyExists);
    assert_eq!(err.message, "pods \"a\" already exists");
    let mut bad = pod("b");
    bad.spec.containers[0].image = String::new();
    let err = api
        .dry_run(|a| a.create(Object::Pod(Box::new(bad))))
        .unwrap_err();
    assert_eq!(err.reason, StatusReason::Invalid);
    assert_eq!(
        err.message,
        "Pod \"b\" is invalid: spec.containers[0].image: Required value"
    );
}

#[test]
fn a_dry_run_update_keeps_the_stored_resource_version_and_object() {
    let mut api = server();
    let stored: Pod = api.create_typed(pod("a")).unwrap();
    let rev = api.revision();
    let mut changed = stored.clone();
    changed.metadata.labels.insert("tier".into(), "web".into());
    let answered = api
        .dry_run(|a| a.update(Object::Pod(Box::new(changed.clone()))))
        .unwrap();
    assert_eq!(
        answered.meta().labels.get("tier").map(String::as_str),
        Some("web")
    );
    assert_eq!(
        answered.meta().resource_version,
        stored.metadata.resource_version
    );
    assert_eq!(api.revision(), rev);
    let now: Pod = api.get_typed("default", "a").unwrap();
    assert!(now.metadata.labels.is_empty());
    // A stale resourceVersion conflicts as the real update would.
    changed.metadata.resource_version = Some("1".into());
    let err = api
        .dry_run(|a| a.update(Object::Pod(Box::new(changed))))
        .unwrap_err();
    assert_eq!(err.reason, StatusReason::Conflict);
}

#[test]
fn a_dry_run_delete_answers_the_stored_object_and_removes_nothing() {
    let mut api = server();
    api.create_typed(pod("a")).unwrap();
    // A bound pod is deleted gracefully: the dry run neither marks nor removes it.
    api.bind(&Binding::new("default", "a", "n1")).unwrap();
    let rev = api.revision();
    let answered = api
        .dry_run(|a| a.delete(&Kind::Pod, "default", "a", DeleteOptions::default()))
        .unwrap();
    assert_eq!(answered.meta().name, "a");
    assert_eq!(api.revision(), rev);
    let now: Pod = api.get_typed("default", "a").unwrap();
    assert_eq!(now.metadata.deletion_timestamp, None);
    let err = api
        .dry_run(|a| a.delete(&Kind::Pod, "default", "nope", DeleteOptions::default()))
        .unwrap_err();
    assert_eq!(err.reason, StatusReason::NotFound);
}

#[test]
fn a_dry_run_create_is_checked_against_the_quota_but_not_charged() {
    let mut api = server();
    let mut rq: ResourceQuota = api
        .create_typed(ResourceQuota {
            metadata: meta("compute", Some("default")),
            spec: ResourceQuotaSpec {
                hard: list(&[("pods", "1")]),
                ..Default::default()
            },
            ..Default::default()
        })
        .unwrap();
    rq.status.hard = list(&[("pods", "1")]);
    rq.status.used = list(&[("pods", "0")]);
    api.update_status_typed(rq).unwrap();
    // Twice: the first dry run charged nothing, so the second fits too.
    for _ in 0..2 {
        api.dry_run(|a| a.create(Object::Pod(Box::new(pod("a")))))
            .unwrap();
    }
    let rq: ResourceQuota = api.get_typed("default", "compute").unwrap();
    assert_eq!(rq.status.used, list(&[("pods", "0")]));
    api.create_typed(pod("a")).unwrap();
    // Now the quota is full: a dry run is refused as the real create would be.
    let err = api
        .dry_run(|a| a.create(Object::Pod(Box::new(pod("b")))))
        .unwrap_err();
    assert_eq!(err.reason, StatusReason::Forbidden);
    assert_eq!(
        err.message,
        "pods \"b\" is forbidden: exceeded quota: compute, requested: pods=1, used: pods=1, limited: pods=1"
    );
}
