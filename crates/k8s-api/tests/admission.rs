//! Admission through the public API: the Priority plugin (upstream
//! `plugin/pkg/admission/priority/admission.go`) and custom plugins added to the chain.

mod common;

use common::{meta, pod, server};
use k8s_types::admission::{MutatingAdmission, Operation, ValidatingAdmission};
use k8s_types::apiserver::{ApiClient, ApiExt};
use k8s_types::core::Pod;
use k8s_types::scheduling::PriorityClass;
use k8s_types::status::{Status, StatusReason};
use k8s_types::store::ObjectStore;
use k8s_types::Object;

fn class(name: &str, value: i32, global_default: bool, policy: Option<&str>) -> PriorityClass {
    PriorityClass {
        metadata: meta(name, None),
        value,
        global_default,
        preemption_policy: policy.map(String::from),
        ..Default::default()
    }
}

fn with_class(name: &str) -> Pod {
    let mut p = pod(&format!("p-{name}"));
    p.spec.priority_class_name = Some(name.into());
    p
}

#[test]
fn priority_class_name_resolves_value_and_preemption_policy() {
    let mut api = server();
    api.create(Object::PriorityClass(Box::new(class(
        "batch",
        1000,
        false,
        Some("Never"),
    ))))
    .unwrap();
    let p: Pod = api.create_typed(with_class("batch")).unwrap();
    assert_eq!(p.spec.priority, Some(1000));
    assert_eq!(p.spec.preemption_policy.as_deref(), Some("Never"));

    // Built-in system classes resolve without an object.
    let p: Pod = api
        .create_typed(with_class("system-node-critical"))
        .unwrap();
    assert_eq!(p.spec.priority, Some(2_000_001_000));
    let p: Pod = api
        .create_typed(with_class("system-cluster-critical"))
        .unwrap();
    assert_eq!(p.spec.priority, Some(2_000_000_000));
    assert_eq!(
        p.spec.preemption_policy.as_deref(),
        Some("PreemptLowerPriority")
    );
}

#[test]
fn unknown_class_is_forbidden() {
    let mut api = server();
    let err = api
        .create(Object::Pod(Box::new(with_class("gold"))))
        .unwrap_err();
    assert_eq!(err.reason, StatusReason::Forbidden);
    assert_eq!(err.code, 403);
    assert_eq!(
        err.message,
        "pods \"p-gold\" is forbidden: no PriorityClass with name gold was found"
    );
    // Before name generation, the generateName is the name in the message.
    let mut g = with_class("gold");
    g.metadata.name.clear();
    g.metadata.generate_name = Some("job-".into());
    let err = api.create(Object::Pod(Box::new(g))).unwrap_err();
    assert_eq!(
        err.message,
        "pods \"job-\" is forbidden: no PriorityClass with name gold was found"
    );
}

#[test]
fn global_default_applies_and_is_unique() {
    let mut api = server();
    api.create(Object::PriorityClass(Box::new(class(
        "normal", 100, true, None,
    ))))
    .unwrap();
    let p: Pod = api.create_typed(pod("web")).unwrap();
    assert_eq!(p.spec.priority, Some(100));
    assert_eq!(p.spec.priority_class_name.as_deref(), Some("normal"));
    assert_eq!(
        p.spec.preemption_policy.as_deref(),
        Some("PreemptLowerPriority")
    );
    let err = api
        .create(Object::PriorityClass(Box::new(class(
            "other", 5, true, None,
        ))))
        .unwrap_err();
    assert_eq!(
        err.message,
        "priorityclasses.scheduling.k8s.io \"other\" is forbidden: PriorityClass normal is already marked as default. Only one default can exist"
    );
}

#[test]
fn a_given_priority_must_agree_with_the_class() {
    let mut api = server();
    let mut p = pod("web");
    p.spec.priority = Some(5);
    let err = api.create(Object::Pod(Box::new(p))).unwrap_err();
    assert_eq!(
        err.message,
        "pods \"web\" is forbidden: the integer value of priority (5) must not be provided in pod spec; priority admission controller computed 0 from the given PriorityClass name"
    );
}

#[test]
fn user_classes_above_one_billion_are_invalid() {
    let mut api = server();
    let err = api
        .create(Object::PriorityClass(Box::new(class(
            "huge",
            1_000_000_001,
            false,
            None,
        ))))
        .unwrap_err();
    assert_eq!(
        err.message,
        "PriorityClass.scheduling.k8s.io \"huge\" is invalid: value: Forbidden: maximum allowed value of a user defined priority is 1000000000"
    );
}

struct DenyLabel;

impl ValidatingAdmission for DenyLabel {
    fn name(&self) -> &str {
        "DenyLabel"
    }
    fn validate(
        &self,
        operation: Operation,
        obj: &Object,
        _old: Option<&Object>,
        _store: &dyn ObjectStore,
    ) -> Result<(), Status> {
        if operation == Operation::Create && obj.meta().labels.contains_key("forbidden") {
            return Err(Status::forbidden("label \"forbidden\" is not allowed"));
        }
        Ok(())
    }
}

struct AddTeam;

impl MutatingAdmission for AddTeam {
    fn name(&self) -> &str {
        "AddTeam"
    }
    fn admit(
        &self,
        _operation: Operation,
        obj: &mut Object,
        _old: Option<&Object>,
        store: &dyn ObjectStore,
    ) -> Result<(), Status> {
        let n = store.revision();
        obj.meta_mut()
            .labels
            .insert("team".into(), format!("rev{n}"));
        Ok(())
    }
}

#[test]
fn custom_plugins_run_in_the_chain() {
    let mut api = server();
    api.add_mutating(Box::new(AddTeam));
    api.add_validating(Box::new(DenyLabel));
    assert_eq!(
        api.admission().mutating_names(),
        vec![
            "LimitRanger",
            "Priority",
            "DefaultTolerationSeconds",
            "RuntimeClass",
            "AddTeam"
        ]
    );
    assert_eq!(
        api.admission().validating_names(),
        vec![
            "NamespaceLifecycle",
            "LimitRanger",
            "Priority",
            "RuntimeClass",
            "DenyLabel",
            "ResourceQuota"
        ]
    );
    let p: Pod = api.create_typed(pod("web")).unwrap();
    assert_eq!(p.metadata.labels["team"], "rev2");
    let mut bad = pod("bad");
    bad.metadata.labels.insert("forbidden".into(), "1".into());
    let err = api.create(Object::Pod(Box::new(bad))).unwrap_err();
    assert_eq!(err.message, "label \"forbidden\" is not allowed");
    assert!(api
        .get(&k8s_types::object::Kind::Pod, "default", "bad")
        .is_err());
}
