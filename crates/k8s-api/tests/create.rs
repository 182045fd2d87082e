//! The create verb through the public API: defaulting, system fields, namespaces, generated names,
//! uniqueness (values from upstream `pkg/registry/core/pod/strategy.go`, `pkg/apis/core/v1/
//! defaults.go`, `plugin/pkg/admission/namespace/lifecycle`).

mod common;

use common::{meta, node, pod, q, server};
use k8s_api::ApiServer;
use k8s_types::apiserver::{ApiClient, ApiExt};
use k8s_types::core::{Namespace, Pod, PodSchedulingGate};
use k8s_types::meta::tick_timestamp;
use k8s_types::object::Kind;
use k8s_types::status::StatusReason;
use k8s_types::Object;
use serde_json::json;

#[test]
fn pod_create_fills_system_fields_and_defaults() {
    let mut api = server();
    api.set_tick(42);
    let mut p = pod("web");
    p.spec.containers[0]
        .resources
        .limits
        .insert("cpu".into(), q("1"));
    p.spec.containers[0]
        .resources
        .limits
        .insert("memory".into(), q("1Gi"));
    let created: Pod = api.create_typed(p).unwrap();
    assert_eq!(created.api_version, "v1");
    assert_eq!(created.kind, "Pod");
    assert_eq!(created.metadata.namespace.as_deref(), Some("default"));
    assert_eq!(
        created.metadata.creation_timestamp,
        Some(tick_timestamp(42).into())
    );
    assert_eq!(
        created.metadata.creation_timestamp.as_deref(),
        Some("1970-01-01T00:00:42Z")
    );
    assert_eq!(created.metadata.generation, Some(1));
    // Two namespaces were created first: this is the third write.
    assert_eq!(created.metadata.resource_version.as_deref(), Some("3"));
    let uid = created.metadata.uid.clone().unwrap();
    assert_eq!(uid.len(), 36);
    // Defaults (SetDefaults_PodSpec, SetDefaults_Pod) and PrepareForCreate.
    assert_eq!(created.spec.restart_policy.as_deref(), Some("Always"));
    assert_eq!(created.spec.termination_grace_period_seconds, Some(30));
    assert_eq!(
        created.spec.scheduler_name.as_deref(),
        Some("default-scheduler")
    );
    let req = &created.spec.containers[0].resources.requests;
    assert_eq!(req["cpu"], q("1"));
    assert_eq!(req["memory"], q("1Gi"));
    assert_eq!(created.status.phase.as_deref(), Some("Pending"));
    assert_eq!(created.status.qos_class.as_deref(), Some("Guaranteed"));
    // Priority admission: no class, no global default -> 0 / PreemptLowerPriority.
    assert_eq!(created.spec.priority, Some(0));
    assert_eq!(
        created.spec.preemption_policy.as_deref(),
        Some("PreemptLowerPriority")
    );
    // get returns what was stored.
    let got: Pod = api.get_typed("default", "web").unwrap();
    assert_eq!(got, created);
}

#[test]
fn create_resets_pod_status_and_gates_scheduling() {
    let mut api = server();
    let mut p = pod("gated");
    p.status.phase = Some("Running".into());
    p.spec.scheduling_gates = vec![PodSchedulingGate {
        name: "example.com/wait".into(),
    }];
    let created: Pod = api.create_typed(p).unwrap();
    assert_eq!(created.status.phase.as_deref(), Some("Pending"));
    assert_eq!(created.status.qos_class.as_deref(), Some("BestEffort"));
    let c = created.condition("PodScheduled").unwrap();
    assert_eq!(c.status, "False");
    assert_eq!(c.reason.as_deref(), Some("SchedulingGated"));
    assert_eq!(
        c.message.as_deref(),
        Some("Scheduling is blocked due to non-empty scheduling gates")
    );
}

#[test]
fn duplicate_names_are_already_exists() {
    let mut api = server();
    api.create(Object::Pod(Box::new(pod("web")))).unwrap();
    let err = api.create(Object::Pod(Box::new(pod("web")))).unwrap_err();
    assert_eq!(err.reason, StatusReason::AlreadyExists);
    assert_eq!(err.code, 409);
    assert_eq!(err.message, "pods \"web\" already exists");
}

#[test]
fn namespaces_must_exist_and_not_be_terminating() {
    let mut api = server();
    let mut p = pod("web");
    p.metadata.namespace = Some("prod".into());
    let err = api.create(Object::Pod(Box::new(p.clone()))).unwrap_err();
    assert_eq!(err.reason, StatusReason::NotFound);
    assert_eq!(err.message, "namespaces \"prod\" not found");

    let ns: Namespace = api
        .create_typed(Namespace {
            metadata: meta("prod", None),
            ..Default::default()
        })
        .unwrap();
    // A new namespace is Active, labelled with its name, and has the kubernetes finalizer.
    assert_eq!(ns.status, Some(json!({"phase": "Active"})));
    assert_eq!(ns.spec, Some(json!({"finalizers": ["kubernetes"]})));
    assert_eq!(ns.metadata.labels["kubernetes.io/metadata.name"], "prod");
    api.create(Object::Pod(Box::new(p.clone()))).unwrap();

    let mut terminating = ns.clone();
    terminating.status = Some(json!({"phase": "Terminating"}));
    api.update_status(Object::Namespace(Box::new(terminating)))
        .unwrap();
    p.metadata.name = "web-2".into();
    let err = api.create(Object::Pod(Box::new(p))).unwrap_err();
    assert_eq!(err.reason, StatusReason::Forbidden);
    assert_eq!(
        err.message,
        "pods \"web-2\" is forbidden: unable to create new content in namespace prod because it is being terminated"
    );
}

#[test]
fn cluster_scoped_objects_lose_their_namespace() {
    let mut api = server();
    let mut n = node("node-a");
    n.metadata.namespace = Some("default".into());
    let created = api.create(Object::Node(Box::new(n))).unwrap();
    assert_eq!(created.meta().namespace, None);
    assert!(api.get(&Kind::Node, "", "node-a").is_ok());
    // Nodes have no generation upstream.
    assert_eq!(created.meta().generation, None);
}

fn generated_names(api: &mut ApiServer) -> Vec<String> {
    (0..3)
        .map(|_| {
            let mut p = pod("");
            p.metadata.generate_name = Some("web-".into());
            api.create(Object::Pod(Box::new(p)))
                .unwrap()
                .meta()
                .name
                .clone()
        })
        .collect()
}

#[test]
fn generate_name_and_uid_are_deterministic() {
    let (mut a, mut b) = (server(), server());
    let names_a = generated_names(&mut a);
    let names_b = generated_names(&mut b);
    assert_eq!(names_a, names_b);
    for n in &names_a {
        assert!(n.starts_with("web-"));
        assert_eq!(n.len(), 9);
        assert!(n[4..]
            .bytes()
            .all(|c| b"bcdfghjklmnpqrstvwxz2456789".contains(&c)));
    }
    assert_ne!(names_a[0], names_a[1]);
    let uid_a = a
        .get(&Kind::Pod, "default", &names_a[2])
        .unwrap()
        .meta()
        .uid
        .clone();
    let uid_b = b
        .get(&Kind::Pod, "default", &names_b[2])
        .unwrap()
        .meta()
        .uid
        .clone();
    assert_eq!(uid_a, uid_b);
}

#[test]
fn missing_name_is_invalid() {
    let mut api = server();
    let err = api.create(Object::Pod(Box::new(pod("")))).unwrap_err();
    assert_eq!(err.reason, StatusReason::Invalid);
    assert_eq!(
        err.message,
        "Pod \"\" is invalid: metadata.name: Required value: name or generateName is required"
    );
}

#[test]
fn pods_created_with_equal_specs_share_one_stored_spec() {
    // Each create defaults and admits its own copy of the spec (the default tolerations are
    // added to each); equal results are stored as one spec, a different image is not, and a
    // later write to one pod's spec copies it.
    use k8s_types::cow_arc::CowArc;
    let mut api = server();
    let spec_of = |o: &Object| match o {
        Object::Pod(p) => p.spec.clone(),
        _ => unreachable!("a pod"),
    };
    let mut other = pod("c");
    other.spec.containers[0].image = "busybox".into();
    let specs: Vec<_> = [pod("a"), pod("b"), other]
        .into_iter()
        .map(|p| spec_of(&api.create_shared(Object::Pod(Box::new(p))).unwrap()))
        .collect();
    assert!(CowArc::ptr_eq(&specs[0], &specs[1]));
    assert!(!CowArc::ptr_eq(&specs[0], &specs[2]));
    assert_eq!(specs[0].tolerations.len(), 2);
    assert_eq!(specs[2].containers[0].image, "busybox");
    // Binding `a` gives it a spec of its own; `b` keeps the shared one, unbound.
    api.bind(&k8s_types::core::Binding::new("default", "a", "n1"))
        .unwrap();
    let a: Pod = api.get_typed("default", "a").unwrap();
    let b = spec_of(&api.get_shared(&Kind::Pod, "default", "b").unwrap());
    assert_eq!(a.spec.node_name.as_deref(), Some("n1"));
    // The bound copy still shares the tolerations (and containers) it did not change.
    assert!(CowArc::ptr_eq(&a.spec.tolerations, &specs[0].tolerations));
    assert!(CowArc::ptr_eq(&a.spec.containers, &specs[0].containers));
    assert!(CowArc::ptr_eq(&b, &specs[1]));
    assert_eq!(b.node_name, None);
}

#[test]
fn objects_created_with_equal_owner_references_share_one_list() {
    // A controller gives each pod its own copy of the same controller reference; they are stored
    // as one list (also across kinds), and a different owner is not.
    use k8s_types::cow_arc::CowArc;
    use k8s_types::meta::OwnerReference;
    let mut api = server();
    let mut owned = |name: &str, owner: &str| {
        let mut p = pod(name);
        p.metadata.owner_references = vec![OwnerReference {
            api_version: "apps/v1".into(),
            kind: "ReplicaSet".into(),
            name: owner.into(),
            uid: format!("{owner}-uid"),
            controller: Some(true),
            block_owner_deletion: Some(true),
        }]
        .into();
        let created = api.create_shared(Object::Pod(Box::new(p))).unwrap();
        created.meta().owner_references.clone()
    };
    let a = owned("a", "web");
    let b = owned("b", "web");
    let c = owned("c", "db");
    assert!(CowArc::ptr_eq(&a, &b));
    assert!(!CowArc::ptr_eq(&a, &c));
    assert_eq!(c[0].name, "db");
    // A status write keeps the stored list.
    let Object::Pod(mut p) = (*api.get_shared(&Kind::Pod, "default", "a").unwrap()).clone() else {
        unreachable!("a pod")
    };
    p.status.phase = Some("Pending".into());
    let written = api.update_status_shared(Object::Pod(p)).unwrap();
    assert!(CowArc::ptr_eq(&written.meta().owner_references, &a));
}
