//! Container-state expectations against pods whose status is written by hand (through the
//! `/status` subresource, as the kubelet writes it), the values worked out from kubectl's
//! `printPod` rules for `status`.
use super::*;
use k8s_api::ApiServer;
use k8s_store::MemStore;
use k8s_types::core::{Container, ContainerStateDetail, Namespace, PodCondition, PodStatus};
use k8s_types::meta::{tick_timestamp_compact, ObjectMeta};
use k8s_types::Object;

fn api() -> ApiServer {
    let mut api = ApiServer::new(Box::new(MemStore::new()));
    api.create(Object::Namespace(Box::new(Namespace {
        metadata: ObjectMeta {
            name: "default".into(),
            ..Default::default()
        },
        ..Default::default()
    })))
    .expect("namespace");
    api
}

fn container(name: &str) -> Container {
    Container {
        name: name.into(),
        image: format!("{name}:v1"),
        ..Default::default()
    }
}

/// Creates a pod with these init and app containers, then writes `status`.
fn add_pod(api: &mut ApiServer, name: &str, init: &[Container], app: &[&str], status: PodStatus) {
    let mut pod = Pod {
        metadata: ObjectMeta {
            name: name.into(),
            namespace: Some("default".into()),
            labels: [("app".to_string(), "web".to_string())].into(),
            ..Default::default()
        },
        ..Default::default()
    };
    pod.spec.init_containers = init.to_vec();
    pod.spec.containers = app.iter().map(|n| container(n)).collect();
    let Object::Pod(mut pod) = api.create(Object::Pod(Box::new(pod))).expect("create") else {
        panic!("not a pod");
    };
    pod.status = status;
    api.update_status(Object::Pod(pod)).expect("status");
}

fn state(member: &str, reason: &str, exit_code: Option<i32>) -> ContainerState {
    let d = ContainerStateDetail {
        reason: (!reason.is_empty()).then(|| reason.into()),
        exit_code,
        ..Default::default()
    };
    match member {
        "waiting" => ContainerState {
            waiting: Some(Box::new(d)),
            ..Default::default()
        },
        "running" => ContainerState {
            running: Some(Box::new(d)),
            ..Default::default()
        },
        _ => ContainerState {
            terminated: Some(Box::new(d)),
            ..Default::default()
        },
    }
}

fn status_of(name: &str, ready: bool, restarts: i32, state: ContainerState) -> ContainerStatus {
    ContainerStatus {
        name: name.into(),
        image: k8s_types::format_compact!("{name}:v1"),
        ready,
        restart_count: restarts,
        started: Some(state.running.is_some()),
        state,
        ..Default::default()
    }
}

fn ready_condition(ready: bool) -> PodCondition {
    PodCondition {
        type_: "Ready".into(),
        status: if ready { "True" } else { "False" }.into(),
        ..Default::default()
    }
}

/// `app` crash-looping after 3 restarts (last exit 1 at tick 40); `sidecar`-less.
fn crashloop() -> PodStatus {
    let mut app = status_of("app", false, 3, state("waiting", "CrashLoopBackOff", None));
    app.last_state = ContainerState {
        terminated: Some(Box::new(ContainerStateDetail {
            reason: Some("Error".into()),
            exit_code: Some(1),
            finished_at: Some(tick_timestamp_compact(40)),
            ..Default::default()
        })),
        ..Default::default()
    };
    PodStatus {
        phase: Some("Running".into()),
        conditions: vec![ready_condition(false)].into(),
        container_statuses: vec![app].into(),
        ..Default::default()
    }
}

fn expectation(yaml: &str) -> Expectation {
    serde_yaml::from_str(yaml).expect("expectation")
}

fn failure(api: &ApiServer, yaml: &str) -> Option<String> {
    let results = check(api, &expectation(yaml));
    assert_eq!(results.len(), 1, "{results:?}");
    results[0].failure.clone()
}

#[test]
fn a_crash_looping_pod_meets_its_container_expectations() {
    let mut api = api();
    add_pod(&mut api, "crash", &[], &["app"], crashloop());
    let yaml = "pod:\n  name: crash\n  status: CrashLoopBackOff\n  ready: false\n  restartCount: 3\n  containers:\n    app: {state: waiting, reason: CrashLoopBackOff, restartCount: 3, ready: false, lastState: {reason: Error, exitCode: 1}}\n";
    assert_eq!(failure(&api, yaml), None);
    let per_container = "pod: {name: crash, container: app, restartCount: 3}";
    assert_eq!(failure(&api, per_container), None);
}

#[test]
fn mismatches_name_the_container_the_field_and_both_values() {
    let mut api = api();
    add_pod(&mut api, "crash", &[], &["app"], crashloop());
    let yaml = "pod:\n  name: crash\n  status: Running\n  ready: true\n  restartCount: 2\n  containers:\n    app: {state: running, reason: Error, exitCode: 1, restartCount: 4, ready: true, lastState: {reason: OOMKilled, exitCode: 137}}\n    sidecar: {state: running}\n";
    assert_eq!(
        failure(&api, yaml).as_deref(),
        Some(
            "expected status Running, got CrashLoopBackOff; expected ready true, got false; \
             expected restartCount 2, got 3; container app: expected state running, got waiting; \
             container app: expected reason Error, got CrashLoopBackOff; \
             container app: expected exitCode 1, got <none>; \
             container app: expected restartCount 4, got 3; \
             container app: expected ready true, got false; \
             container app: expected lastState.reason OOMKilled, got Error; \
             container app: expected lastState.exitCode 137, got 1; \
             container sidecar: expected a status, got none"
        )
    );
    assert_eq!(
        failure(&api, "pod: {name: crash, container: web, restartCount: 0}").as_deref(),
        Some("container web: expected a status, got none")
    );
    assert_eq!(
        failure(&api, "pod: {name: crash, container: app, restartCount: 0}").as_deref(),
        Some("container app: expected restartCount 0, got 3")
    );
}

#[test]
fn init_containers_and_sidecars_are_found_by_name() {
    let mut api = api();
    let sidecar = Container {
        restart_policy: Some("Always".into()),
        ..container("proxy")
    };
    // The first init container failed twice and waits to restart; the sidecar has not started.
    let mut init_db = status_of("init-db", false, 2, state("terminated", "Error", Some(1)));
    init_db.last_state = state("terminated", "Error", Some(1));
    let status = PodStatus {
        phase: Some("Pending".into()),
        init_container_statuses: vec![
            init_db,
            status_of("proxy", false, 0, state("waiting", "PodInitializing", None)),
        ]
        .into(),
        container_statuses: vec![status_of(
            "app",
            false,
            0,
            state("waiting", "PodInitializing", None),
        )]
        .into(),
        ..Default::default()
    };
    add_pod(
        &mut api,
        "init",
        &[container("init-db"), sidecar],
        &["app"],
        status,
    );
    let yaml = "pod:\n  name: init\n  status: Init:Error\n  restartCount: 2\n  containers:\n    init-db: {state: terminated, reason: Error, exitCode: 1, restartCount: 2}\n    proxy: {state: waiting, reason: PodInitializing}\n    app: {state: waiting, ready: false}\n";
    assert_eq!(failure(&api, yaml), None);
    assert_eq!(
        failure(
            &api,
            "pod: {name: init, status: Init:0/2, container: init-db, restartCount: 1}"
        )
        .as_deref(),
        Some(
            "expected status Init:0/2, got Init:Error; \
             container init-db: expected restartCount 1, got 2"
        )
    );
}

#[test]
fn terminated_pods_show_oomkilled_and_completed() {
    let mut api = api();
    for (name, phase, reason, exit_code) in [
        ("oom", "Failed", "OOMKilled", 137),
        ("done", "Succeeded", "Completed", 0),
    ] {
        let app = status_of(
            "app",
            false,
            0,
            state("terminated", reason, Some(exit_code)),
        );
        let status = PodStatus {
            phase: Some(phase.into()),
            container_statuses: vec![app].into(),
            ..Default::default()
        };
        add_pod(&mut api, name, &[], &["app"], status);
    }
    let yaml = "pod: {name: oom, phase: Failed, status: OOMKilled, containers: {app: {state: terminated, reason: OOMKilled, exitCode: 137}}}";
    assert_eq!(failure(&api, yaml), None);
    let yaml = "pod: {name: done, status: Completed, ready: false, containers: {app: {exitCode: 0, reason: Completed}}}";
    assert_eq!(failure(&api, yaml), None);
}

#[test]
fn pods_selector_names_every_pod_that_differs() {
    let mut api = api();
    let running = PodStatus {
        phase: Some("Running".into()),
        conditions: vec![ready_condition(true)].into(),
        container_statuses: vec![status_of("app", true, 0, state("running", "", None))].into(),
        ..Default::default()
    };
    add_pod(&mut api, "web-a", &[], &["app"], running.clone());
    add_pod(&mut api, "web-b", &[], &["app"], crashloop());
    add_pod(&mut api, "web-c", &[], &["app"], crashloop());
    let yaml = "pods: {selector: app=web, count: 3, status: Running, ready: true, restartCount: 0, containers: {app: {state: running, ready: true}}}";
    assert_eq!(
        failure(&api, yaml).as_deref(),
        Some(
            "expected status Running, got web-b=CrashLoopBackOff, web-c=CrashLoopBackOff; \
             expected ready true, got web-b=false, web-c=false; \
             expected restartCount 0, got web-b=3, web-c=3; \
             container app: expected state running, got web-b=waiting, web-c=waiting; \
             container app: expected ready true, got web-b=false, web-c=false"
        )
    );
    let yaml = "pods: {selector: app=web, container: app, restartCount: 3}";
    assert_eq!(
        failure(&api, yaml).as_deref(),
        Some("container app: expected restartCount 3, got web-a=0")
    );
}

#[test]
fn malformed_container_expectations_are_parse_errors() {
    let e =
        serde_yaml::from_str::<Expectation>("pod: {name: p, containers: {app: {state: runing}}}")
            .expect_err("bad state");
    assert!(
        e.to_string().contains(
            "unknown variant `runing`, expected one of `waiting`, `running`, `terminated`"
        ),
        "{e}"
    );
    let e = serde_yaml::from_str::<Expectation>(
        "pods: {containers: {app: {lastState: {exitcode: 1}}}}",
    )
    .expect_err("typo");
    assert!(e.to_string().contains("unknown field `exitcode`"), "{e}");
}
