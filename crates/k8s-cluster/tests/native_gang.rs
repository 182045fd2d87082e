//! Native gang scheduling end to end (KEP-4671 with the v1.36 alpha gates): the Job controller's
//! Workload/PodGroup creation (KEP-5547, `EnableWorkloadWithJob`), the GangScheduling plugin's
//! PreEnqueue barrier and Permit, and the apiserver's v1alpha2 validation. Values worked out by
//! hand from upstream `pkg/controller/job/job_workload.go`, `gangscheduling.go` and
//! `pkg/apis/scheduling/validation/validation.go` (v1.36).

use std::collections::BTreeMap;

use k8s_cluster::{Cluster, ClusterConfig};
use k8s_types::apiserver::ApiExt;
use k8s_types::batch::Job;
use k8s_types::core::{Node, Pod};
use k8s_types::scheduling::v1alpha2::{PodGroup, Workload};
use k8s_types::Object;

fn cluster(gates: &[&str], cpu: &str) -> Cluster {
    // `!Gate` turns a gate off.
    let feature_gates: BTreeMap<String, bool> = gates
        .iter()
        .map(|g| match g.strip_prefix('!') {
            Some(off) => (off.to_string(), false),
            None => (g.to_string(), true),
        })
        .collect();
    let mut c = Cluster::new(ClusterConfig {
        feature_gates,
        ..Default::default()
    })
    .expect("cluster");
    let node: Node = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "node-1"},
        "status": {"capacity": {"cpu": cpu, "memory": "16Gi", "pods": "110"}}
    }))
    .expect("node");
    c.add_node(node).expect("add node");
    c
}

fn job(name: &str, parallelism: i32, completions: i32, mode: &str) -> Object {
    let j: Job = serde_json::from_value(serde_json::json!({
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "parallelism": parallelism, "completions": completions, "completionMode": mode,
            "template": {"spec": {
                "restartPolicy": "Never",
                "containers": [{"name": "w", "image": "busybox:1.36",
                                "resources": {"requests": {"cpu": "1"}}}]
            }}
        }
    }))
    .expect("job");
    Object::Job(Box::new(j))
}

fn pods(c: &mut Cluster) -> Vec<Pod> {
    c.api().list_typed::<Pod>(Some("default"), None)
}

const GANG_GATES: [&str; 3] = ["GenericWorkload", "GangScheduling", "EnableWorkloadWithJob"];

/// An Indexed Job with parallelism = completions = 3 on a 3-CPU node: one Workload (template
/// `train-pgt-0`, gang minCount 3 = parallelism, controllerRef the Job), one PodGroup named
/// `<workload>-train-pgt-0-<hash>` owned by the Job and the Workload, and three pods that name
/// it and are bound together in the Job's first tick.
#[test]
fn the_job_controller_creates_a_workload_and_pod_group_for_a_gang_candidate() {
    let mut c = cluster(&GANG_GATES, "3");
    c.apply(job("train", 3, 3, "Indexed")).expect("job");
    c.tick();
    let workloads = c.api().list_typed::<Workload>(Some("default"), None);
    assert_eq!(workloads.len(), 1);
    let w = &workloads[0];
    assert!(w.metadata.name.starts_with("train-"), "{}", w.metadata.name);
    assert_eq!(w.spec.pod_group_templates.len(), 1);
    assert_eq!(w.spec.pod_group_templates[0].name, "train-pgt-0");
    assert_eq!(
        w.spec.pod_group_templates[0]
            .scheduling_policy
            .gang
            .as_ref()
            .map(|g| g.min_count),
        Some(3)
    );
    assert_eq!(
        w.spec.controller_ref.as_ref().map(|r| r.name.as_str()),
        Some("train")
    );
    let groups = c.api().list_typed::<PodGroup>(Some("default"), None);
    assert_eq!(groups.len(), 1);
    let pg = &groups[0];
    assert_eq!(
        pg.metadata.name,
        k8s_controllers::job::compute_pod_group_name(&w.metadata.name, "train-pgt-0")
    );
    let owners: Vec<(&str, &str)> = pg
        .metadata
        .owner_references
        .iter()
        .map(|o| (o.kind.as_str(), o.name.as_str()))
        .collect();
    assert_eq!(
        owners,
        [("Job", "train"), ("Workload", w.metadata.name.as_str())]
    );
    let ps = pods(&mut c);
    assert_eq!(ps.len(), 3);
    for p in &ps {
        assert_eq!(p.scheduling_group_name(), Some(pg.metadata.name.as_str()));
        assert_eq!(p.node_name(), Some("node-1"), "{}", p.metadata.name);
    }
    // The scheduler's PodGroupScheduled condition, True since tick 0.
    let pg = c
        .api()
        .list_typed::<PodGroup>(Some("default"), None)
        .remove(0);
    let cond = &pg.status.conditions[0];
    assert_eq!(
        (
            cond.type_.as_str(),
            cond.status.as_str(),
            cond.reason.as_str()
        ),
        ("PodGroupScheduled", "True", "Scheduled")
    );
    assert_eq!(
        cond.last_transition_time.as_deref(),
        Some("1970-01-01T00:00:00Z")
    );
}

/// Without the gate, or for a Job that is no gang candidate (completions 4 != parallelism 2),
/// nothing is created and the pods have no scheduling group.
#[test]
fn no_workload_without_the_gate_or_for_other_jobs() {
    for (gates, j) in [
        (
            &["GenericWorkload", "GangScheduling"][..],
            job("a", 3, 3, "Indexed"),
        ),
        (&GANG_GATES[..], job("b", 2, 4, "Indexed")),
        (&GANG_GATES[..], job("c", 2, 2, "NonIndexed")),
    ] {
        let mut c = cluster(gates, "3");
        c.apply(j).expect("job");
        c.tick();
        assert!(c.api().list_typed::<Workload>(None, None).is_empty());
        assert!(c.api().list_typed::<PodGroup>(None, None).is_empty());
        let ps = pods(&mut c);
        assert!(!ps.is_empty());
        assert!(ps.iter().all(|p| p.spec.scheduling_group.is_none()));
    }
}

/// The same Job on a 2-CPU node: two members are reserved and wait at Permit, the third fits
/// nowhere; none is bound before the 5-minute timeout (tick 300), when the two waiting members
/// are rejected and their reservations rolled back.
#[test]
fn a_gang_that_cannot_fit_binds_nothing() {
    // v1.35's Permit-only path (k8s-mini's `PodGroupSchedulingCycle: false`); v1.36's PodGroup
    // cycle rejects the gang at once (tests/pod_group_cycle.rs).
    let mut c = cluster(
        &[
            "GenericWorkload",
            "GangScheduling",
            "EnableWorkloadWithJob",
            "!PodGroupSchedulingCycle",
        ],
        "2",
    );
    c.apply(job("train", 3, 3, "Indexed")).expect("job");
    while c.now() <= 301 {
        c.tick();
        assert!(
            pods(&mut c).iter().all(|p| p.node_name().is_none()),
            "tick {}",
            c.now()
        );
    }
    let timeouts = c
        .api()
        .list_typed::<k8s_types::core::Event>(Some("default"), None)
        .into_iter()
        .filter(|e| {
            e.message
                .contains("rejected due to timeout after waiting 5m0s at plugin GangScheduling")
        })
        .count();
    assert_eq!(timeouts, 2);
    // PodGroupScheduled False (Unschedulable) since tick 0, with the first failing member's
    // FailedScheduling message: train-0's timeout.
    let pg = c
        .api()
        .list_typed::<PodGroup>(Some("default"), None)
        .remove(0);
    let cond = &pg.status.conditions[0];
    assert_eq!(
        (cond.status.as_str(), cond.reason.as_str(), cond.message.as_str()),
        (
            "False",
            "Unschedulable",
            "0/1 nodes are available: 1 rejected due to timeout after waiting 5m0s at plugin GangScheduling."
        )
    );
    assert_eq!(
        cond.last_transition_time.as_deref(),
        Some("1970-01-01T00:00:00Z")
    );
}

/// The apiserver refuses a PodGroup with minCount 0 and a pod whose schedulingGroup changes,
/// with kube-apiserver's field errors.
#[test]
fn validation_answers_like_kube_apiserver() {
    let mut c = cluster(&[], "3");
    let pg: PodGroup = serde_json::from_value(serde_json::json!({
        "apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup",
        "metadata": {"name": "g", "namespace": "default"},
        "spec": {"schedulingPolicy": {"gang": {"minCount": 0}}}
    }))
    .expect("pg");
    let err = c
        .apply(Object::SchedulingPodGroup(Box::new(pg)))
        .expect_err("minCount 0");
    assert_eq!(err.code, 422);
    assert_eq!(
        err.message,
        "PodGroup.scheduling.k8s.io \"g\" is invalid: spec.schedulingPolicy.gang.minCount: Required value"
    );
    let pod: Pod = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "p", "namespace": "default"},
        "spec": {"schedulingGroup": {"podGroupName": "g"},
                 "containers": [{"name": "w", "image": "busybox:1.36"}]}
    }))
    .expect("pod");
    c.apply(Object::Pod(Box::new(pod))).expect("pod");
    let mut stored = c.api().get_typed::<Pod>("default", "p").expect("stored");
    stored.spec.scheduling_group = Some(k8s_types::core::PodSchedulingGroup {
        pod_group_name: Some("other".into()),
    });
    let err = c
        .api()
        .update(Object::Pod(Box::new(stored)))
        .expect_err("immutable");
    assert_eq!(err.code, 422);
    assert!(
        err.message
            .contains("spec: Forbidden: pod updates may not change fields other than"),
        "{}",
        err.message
    );
}
