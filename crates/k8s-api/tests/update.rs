//! update and update_status through the public API (upstream `rest.BeforeUpdate`, pod strategy
//! `PrepareForUpdate`, `ValidatePodUpdate`, `GuaranteedUpdate`'s no-op rule).

mod common;

use common::{pod, server};
use k8s_types::apiserver::{ApiClient, ApiExt};
use k8s_types::core::Pod;
use k8s_types::cow_arc::CowArc;
use k8s_types::object::Kind;
use k8s_types::status::StatusReason;
use k8s_types::Object;

#[test]
fn stale_resource_version_is_a_conflict() {
    let mut api = server();
    let created: Pod = api.create_typed(pod("web")).unwrap();
    let mut first = created.clone();
    first.metadata.labels.insert("a".into(), "1".into());
    api.update_typed(first).unwrap();
    let mut stale = created;
    stale.metadata.labels.insert("b".into(), "2".into());
    let err = api
        .update(Object::Pod(Box::new(stale.clone())))
        .unwrap_err();
    assert_eq!(err.reason, StatusReason::Conflict);
    assert_eq!(
        err.message,
        "Operation cannot be fulfilled on pods \"web\": the object has been modified; please apply your changes to the latest version and try again"
    );
    // Without a resourceVersion the update is unconditional.
    stale.metadata.resource_version = None;
    let ok: Pod = api.update_typed(stale).unwrap();
    assert_eq!(ok.metadata.labels.get("b").map(String::as_str), Some("2"));
    assert!(!ok.metadata.labels.contains_key("a"));
}

#[test]
fn update_keeps_status_and_system_fields() {
    let mut api = server();
    let created: Pod = api.create_typed(pod("web")).unwrap();
    let mut running = created.clone();
    running.status.phase = Some("Running".into());
    api.update_status_typed(running).unwrap();

    let mut edit = created.clone();
    edit.metadata.resource_version = None;
    edit.metadata.uid = Some("forged".into());
    edit.metadata.creation_timestamp = None;
    edit.status.phase = Some("Failed".into());
    edit.metadata.labels.insert("tier".into(), "fe".into());
    api.set_tick(9);
    let updated: Pod = api.update_typed(edit).unwrap();
    assert_eq!(updated.status.phase.as_deref(), Some("Running"));
    assert_eq!(updated.metadata.uid, created.metadata.uid);
    assert_eq!(
        updated.metadata.creation_timestamp,
        created.metadata.creation_timestamp
    );
    // A metadata-only change does not bump generation.
    assert_eq!(updated.metadata.generation, Some(1));
    let mut image = updated.clone();
    image.spec.containers[0].image = "nginx:1.27".into();
    let bumped: Pod = api.update_typed(image).unwrap();
    assert_eq!(bumped.metadata.generation, Some(2));
}

#[test]
fn update_status_keeps_the_stored_spec() {
    let mut api = server();
    let created: Pod = api.create_typed(pod("web")).unwrap();
    let mut s = created.clone();
    s.status.phase = Some("Running".into());
    s.status.qos_class = None;
    s.spec.containers[0].image = "evil".into();
    s.metadata.labels.insert("x".into(), "y".into());
    s.metadata.owner_references.push(Default::default());
    s.metadata.generation = Some(7);
    let out: Pod = api.update_status_typed(s).unwrap();
    assert_eq!(out.status.phase.as_deref(), Some("Running"));
    // Upstream podStatusStrategy: spec and ownerReferences stay, labels may change, qosClass is
    // backfilled, generation is the stored one.
    assert_eq!(out.spec, created.spec);
    assert!(out.metadata.owner_references.is_empty());
    assert_eq!(out.metadata.labels["x"], "y");
    assert_eq!(out.status.qos_class.as_deref(), Some("BestEffort"));
    assert_eq!(out.metadata.generation, Some(1));
}

#[test]
fn update_status_stores_the_stored_spec_itself_not_a_copy() {
    // The new version shares the stored version's spec (one allocation for both), whether the
    // writer sent the stored spec back unchanged or a changed copy of it.
    let mut api = server();
    let created = api
        .create_shared(Object::Pod(Box::new(pod("web"))))
        .unwrap();
    let spec_of = |o: &Object| match o {
        Object::Pod(p) => p.spec.clone(),
        _ => unreachable!("a pod"),
    };
    let stored = spec_of(&created);
    let Object::Pod(mut s) = (*created).clone() else {
        unreachable!("a pod")
    };
    s.status.phase = Some("Pending".into());
    let first = api.update_status_shared(Object::Pod(s.clone())).unwrap();
    assert!(CowArc::ptr_eq(&spec_of(&first), &stored));
    s.metadata.resource_version = first.meta().resource_version.clone();
    s.status.phase = Some("Running".into());
    s.spec.containers[0].image = "evil".into();
    let second = api.update_status_shared(Object::Pod(s.clone())).unwrap();
    assert!(CowArc::ptr_eq(&spec_of(&second), &stored));
    assert_eq!(spec_of(&second).containers[0].image, "nginx");
    // An equal spec in an allocation of its own (a writer that deep-copied it) is not kept.
    s.metadata.resource_version = second.meta().resource_version.clone();
    s.spec = CowArc::new((*stored).clone());
    s.status.phase = Some("Succeeded".into());
    let third = api.update_status_shared(Object::Pod(s)).unwrap();
    assert!(CowArc::ptr_eq(&spec_of(&third), &stored));
}

#[test]
fn pods_with_equal_status_lists_are_stored_with_one_list() {
    // Two pods whose kubelet wrote equal conditions and container statuses (each in its own
    // allocation) are stored with one list of each; a pod whose Ready condition differs is not.
    use k8s_types::core::pod::{ContainerStatus, PodCondition};
    let mut api = server();
    let conditions = |ready: &str| {
        vec![
            PodCondition {
                type_: "Ready".into(),
                status: ready.into(),
                last_transition_time: Some("1970-01-01T00:00:01Z".into()),
                ..Default::default()
            },
            PodCondition {
                type_: "PodScheduled".into(),
                status: "True".into(),
                last_transition_time: Some("1970-01-01T00:00:00Z".into()),
                ..Default::default()
            },
        ]
    };
    let statuses = || {
        vec![ContainerStatus {
            name: "app".into(),
            image: "nginx".into(),
            ready: true,
            ..Default::default()
        }]
    };
    let mut stored = Vec::new();
    for (name, ready) in [("a", "True"), ("b", "True"), ("c", "False")] {
        let mut p: Pod = api.create_typed(pod(name)).unwrap();
        p.status.conditions = CowArc::new(conditions(ready));
        p.status.container_statuses = CowArc::new(statuses());
        let Object::Pod(s) = &*api.update_status_shared(Object::Pod(Box::new(p))).unwrap() else {
            unreachable!("a pod")
        };
        stored.push(s.status.clone());
    }
    assert!(CowArc::ptr_eq(&stored[0].conditions, &stored[1].conditions));
    assert!(!CowArc::ptr_eq(
        &stored[0].conditions,
        &stored[2].conditions
    ));
    assert!(CowArc::ptr_eq(
        &stored[0].container_statuses,
        &stored[2].container_statuses
    ));
    // Empty lists too: one allocation for every pod without init containers.
    assert!(CowArc::ptr_eq(
        &stored[0].init_container_statuses,
        &stored[2].init_container_statuses
    ));
    assert_eq!(*stored[1].conditions, conditions("True"));
    assert_eq!(*stored[2].conditions, conditions("False"));
    // The read answers the values written.
    let b: Pod = api.get_typed("default", "b").unwrap();
    assert_eq!(*b.status.container_statuses, statuses());
}

#[test]
fn deployment_status_update_may_set_annotations_but_not_labels() {
    use k8s_types::apps::Deployment;
    use k8s_types::labels::LabelSelector;
    let mut api = server();
    let mut d = Deployment::default();
    d.metadata.name = "web".into();
    d.spec.selector = Some(LabelSelector::from_labels([("app", "web")]));
    d.spec
        .template
        .metadata
        .labels
        .insert("app".into(), "web".into());
    d.spec.template.spec = pod("x").spec.into_inner();
    let created: Deployment = api.create_typed(d).unwrap();
    let mut s = created.clone();
    s.metadata
        .annotations
        .insert("deployment.kubernetes.io/revision".into(), "1".into());
    s.metadata.labels.insert("x".into(), "y".into());
    s.spec.replicas = Some(9);
    s.status.observed_generation = Some(1);
    let out: Deployment = api.update_status_typed(s).unwrap();
    assert_eq!(
        out.metadata.annotations["deployment.kubernetes.io/revision"],
        "1"
    );
    assert!(out.metadata.labels.is_empty());
    assert_eq!(out.spec, created.spec);
    assert_eq!(out.metadata.generation, Some(1));
    assert_eq!(out.status.observed_generation, Some(1));
}

#[test]
fn identical_update_is_not_written() {
    let mut api = server();
    let created: Pod = api.create_typed(pod("web")).unwrap();
    let rev = api.revision();
    let same: Pod = api.update_typed(created.clone()).unwrap();
    assert_eq!(api.revision(), rev);
    assert_eq!(
        same.metadata.resource_version,
        created.metadata.resource_version
    );
    let same_status: Pod = api.update_status_typed(created).unwrap();
    assert_eq!(api.revision(), rev);
    assert_eq!(same_status, same);
}

#[test]
fn node_name_cannot_be_changed_by_update() {
    let mut api = server();
    let created: Pod = api.create_typed(pod("web")).unwrap();
    let mut moved = created;
    moved.spec.node_name = Some("node-b".into());
    let err = api.update(Object::Pod(Box::new(moved))).unwrap_err();
    assert_eq!(err.reason, StatusReason::Invalid);
    assert_eq!(err.causes.len(), 1);
    assert_eq!(err.causes[0].field, "spec");
    assert_eq!(err.causes[0].reason, "FieldValueForbidden");
    assert_eq!(
        err.message,
        "Pod \"web\" is invalid: spec: Forbidden: pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)"
    );
}

#[test]
fn update_of_a_missing_object_is_not_found() {
    let mut api = server();
    let err = api.update(Object::Pod(Box::new(pod("ghost")))).unwrap_err();
    assert_eq!(err.message, "pods \"ghost\" not found");
    let err = api
        .update_status(Object::Pod(Box::new(pod("ghost"))))
        .unwrap_err();
    assert!(err.is_not_found());
    assert!(api
        .get(&Kind::Pod, "default", "ghost")
        .unwrap_err()
        .is_not_found());
}

#[test]
fn deployment_selector_is_immutable() {
    use k8s_types::apps::Deployment;
    use k8s_types::labels::LabelSelector;
    let mut api = server();
    let mut d = Deployment::default();
    d.metadata.name = "web".into();
    d.spec.selector = Some(LabelSelector::from_labels([("app", "web")]));
    d.spec
        .template
        .metadata
        .labels
        .insert("app".into(), "web".into());
    d.spec
        .template
        .metadata
        .labels
        .insert("v".into(), "2".into());
    d.spec.template.spec = pod("x").spec.into_inner();
    let created: Deployment = api.create_typed(d).unwrap();
    let mut changed = created.clone();
    changed.spec.selector = Some(LabelSelector::from_labels([("v", "2")]));
    let err = api
        .update(Object::Deployment(Box::new(changed)))
        .unwrap_err();
    assert_eq!(
        err.message,
        "Deployment.apps \"web\" is invalid: spec.selector: Invalid value: &LabelSelector{MatchLabels:map[string]string{v: 2,},MatchExpressions:[]LabelSelectorRequirement{},}: field is immutable"
    );
    let mut scaled = created;
    scaled.spec.replicas = Some(3);
    let out: Deployment = api.update_typed(scaled).unwrap();
    assert_eq!(out.metadata.generation, Some(2));
}
