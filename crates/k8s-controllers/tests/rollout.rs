//! The blueprint scenario through the public API only: a Deployment converges, rolls out a new
//! image within maxSurge/maxUnavailable at every tick, and self-heals a deleted pod.

mod common;

use common::{image, owner, set_image, FakeCluster};
use k8s_controllers::deployment::util::{DESIRED_REPLICAS_ANNOTATION, MAX_REPLICAS_ANNOTATION};
use k8s_controllers::pod_template_hash::compute_hash;
use k8s_testing::{deployment, rolling, FakeApi};
use k8s_types::apiserver::{ApiClient, ApiExt, DeleteOptions};
use k8s_types::apps::{IntOrString, POD_TEMPLATE_HASH_LABEL, REVISION_ANNOTATION};
use k8s_types::Kind;

fn rs_replicas(api: &FakeApi, name: &str) -> i32 {
    api.replica_sets()
        .into_iter()
        .find(|r| r.metadata.name == name)
        .and_then(|r| r.spec.replicas)
        .unwrap_or(-1)
}

#[test]
fn rolling_update_surges_one_pod_at_a_time_and_self_heals() {
    let mut c = FakeCluster::new();
    let d = deployment(
        "web",
        3,
        "app:v1",
        rolling(IntOrString::Int(1), IntOrString::Int(0)),
    );
    let v1_hash = compute_hash(&d.spec.template, None);
    c.api.create_typed(d).expect("create deployment");

    // Tick 1: ReplicaSet created at 3 (maxSurge only bounds the total), 3 pods created and bound;
    // tick 2: the kubelet makes them Ready.
    c.step();
    let v1_rs = format!("web-{v1_hash}");
    assert_eq!(rs_replicas(&c.api, &v1_rs), 3);
    assert_eq!(c.active_pods().len(), 3);
    c.step();
    c.step();
    let pods = c.available_pods();
    assert_eq!(pods.len(), 3);
    assert!(pods
        .iter()
        .all(|p| owner(p) == v1_rs && image(p) == "app:v1"));
    assert!(pods
        .iter()
        .all(|p| p.metadata.labels.get(POD_TEMPLATE_HASH_LABEL) == Some(&v1_hash)));
    let rs = &c.api.replica_sets()[0];
    assert_eq!(rs.metadata.annotations[REVISION_ANNOTATION], "1");
    assert_eq!(rs.metadata.annotations[DESIRED_REPLICAS_ANNOTATION], "3");
    assert_eq!(rs.metadata.annotations[MAX_REPLICAS_ANNOTATION], "4");
    assert_eq!(
        c.api.event_messages("ScalingReplicaSet"),
        [format!("Scaled up replica set {v1_rs} from 0 to 3")]
    );
    // The Deployment controller reads ReplicaSet status written in the previous tick, so its own
    // status catches up one tick after the ReplicaSet's.
    c.step();
    let st = c.api.deployment("web").status;
    assert_eq!(
        (
            st.replicas,
            st.updated_replicas,
            st.ready_replicas,
            st.available_replicas
        ),
        (3, 3, 3, 3)
    );

    // Roll out app:v2.
    set_image(&mut c.api, "web", "app:v2");
    let v2_hash = compute_hash(&c.api.deployment("web").spec.template, None);
    let v2_rs = format!("web-{v2_hash}");
    assert_ne!(v1_hash, v2_hash);
    let mut max_active = 0;
    let mut done = false;
    for _ in 0..40 {
        c.step();
        let active = c.active_pods().len();
        let available = c.available_pods().len();
        max_active = max_active.max(active);
        assert!(
            available >= 3,
            "tick {}: only {available} available",
            c.api.now
        );
        assert!(active <= 4, "tick {}: {active} pods", c.api.now);
        let all = c.api.pods();
        if all.len() == 3 && all.iter().all(|p| image(p) == "app:v2" && p.is_ready()) {
            done = true;
            break;
        }
    }
    assert!(done, "rollout did not finish");
    assert_eq!(max_active, 4, "the rollout surges by exactly one pod");
    let pods = c.api.pods();
    assert!(pods.iter().all(|p| owner(p) == v2_rs));
    assert_eq!(rs_replicas(&c.api, &v1_rs), 0, "old ReplicaSet kept at 0");
    assert_eq!(rs_replicas(&c.api, &v2_rs), 3);
    let d = c.api.deployment("web");
    assert_eq!(d.metadata.annotations[REVISION_ANNOTATION], "2");
    let scaling = c.api.event_messages("ScalingReplicaSet");
    assert_eq!(
        scaling[1..],
        [
            format!("Scaled up replica set {v2_rs} from 0 to 1"),
            format!("Scaled down replica set {v1_rs} from 3 to 2"),
            format!("Scaled up replica set {v2_rs} from 1 to 2"),
            format!("Scaled down replica set {v1_rs} from 2 to 1"),
            format!("Scaled up replica set {v2_rs} from 2 to 3"),
            format!("Scaled down replica set {v1_rs} from 1 to 0"),
        ]
    );
    // Status catches up one tick later (the ReplicaSet controller runs after the Deployment one).
    c.step();
    c.step();
    let st = c.api.deployment("web").status;
    assert_eq!(
        (
            st.replicas,
            st.updated_replicas,
            st.ready_replicas,
            st.available_replicas,
            st.unavailable_replicas,
            st.observed_generation
        ),
        (3, 3, 3, 3, 0, Some(2))
    );

    // Self-healing: delete one v2 pod; the next tick a replacement is created.
    let victim = c.api.pods()[0].metadata.name.clone();
    c.api
        .delete(&Kind::Pod, "default", &victim, DeleteOptions::default())
        .expect("delete pod");
    let created_before = c.api.event_messages("SuccessfulCreate").len();
    c.step();
    let active = c.active_pods();
    assert_eq!(active.len(), 3);
    assert!(active.iter().all(|p| p.metadata.name != victim));
    let created = c.api.event_messages("SuccessfulCreate");
    assert_eq!(created.len(), created_before + 1);
    let replacement = active
        .iter()
        .find(|p| !p.is_ready())
        .map(|p| p.metadata.name.clone())
        .expect("replacement pod");
    assert_eq!(created.last(), Some(&format!("Created pod: {replacement}")));
    c.step();
    let ready = c.available_pods();
    assert_eq!(ready.len(), 3);
    assert!(ready
        .iter()
        .all(|p| p.status.phase.as_deref() == Some("Running")));
    assert!(ready
        .iter()
        .all(|p| owner(p) == v2_rs && image(p) == "app:v2"));
}

#[test]
fn default_strategy_with_ten_replicas_stays_within_13_pods_and_8_available() {
    let mut c = FakeCluster::new();
    // No strategy given: apps/v1 defaults to RollingUpdate 25%/25% (surge 3, unavailable 2).
    c.api
        .create_typed(deployment("api", 10, "app:v1", None))
        .expect("create");
    for _ in 0..4 {
        c.step();
    }
    assert_eq!(c.available_pods().len(), 10);

    set_image(&mut c.api, "api", "app:v2");
    let (mut max_active, mut min_available) = (0, usize::MAX);
    let mut done = false;
    for _ in 0..60 {
        c.step();
        let active = c.active_pods().len();
        let available = c.available_pods().len();
        max_active = max_active.max(active);
        min_available = min_available.min(available);
        assert!(active <= 13, "tick {}: {active} pods", c.api.now);
        assert!(available >= 8, "tick {}: {available} available", c.api.now);
        let all = c.api.pods();
        if all.len() == 10 && all.iter().all(|p| image(p) == "app:v2" && p.is_ready()) {
            done = true;
            break;
        }
    }
    assert!(done, "rollout did not finish");
    // The first step surges to 13 and scales old down to 8: both bounds are reached.
    assert_eq!((max_active, min_available), (13, 8));
}

#[test]
fn scaling_without_template_change_scales_the_replica_set() {
    let mut c = FakeCluster::new();
    c.api
        .create_typed(deployment("web", 3, "app:v1", None))
        .expect("create");
    c.step();
    c.step();
    let mut d = c.api.deployment("web");
    d.spec.replicas = Some(5);
    c.api.update_typed(d).expect("scale");
    c.step();
    let rs = c.api.replica_sets();
    assert_eq!(rs.len(), 1, "no new ReplicaSet for a scale");
    assert_eq!(rs[0].spec.replicas, Some(5));
    assert_eq!(rs[0].metadata.annotations[DESIRED_REPLICAS_ANNOTATION], "5");
    let name = rs[0].metadata.name.clone();
    assert_eq!(
        c.api.event_messages("ScalingReplicaSet").last(),
        Some(&format!("Scaled up replica set {name} from 3 to 5"))
    );
    assert_eq!(c.active_pods().len(), 5);
}

#[test]
fn recreate_removes_old_pods_before_creating_new_ones() {
    let mut c = FakeCluster::new();
    let strategy = Some(k8s_types::apps::DeploymentStrategy {
        type_: Some("Recreate".into()),
        rolling_update: None,
    });
    c.api
        .create_typed(deployment("batch", 2, "app:v1", strategy))
        .expect("create");
    c.step();
    c.step();
    assert_eq!(c.available_pods().len(), 2);
    set_image(&mut c.api, "batch", "app:v2");
    let mut saw_gap = false;
    for _ in 0..10 {
        c.step();
        let pods = c.api.pods();
        let (v1, v2) = (
            pods.iter().filter(|p| image(p) == "app:v1").count(),
            pods.iter().filter(|p| image(p) == "app:v2").count(),
        );
        assert!(v1 == 0 || v2 == 0, "old and new pods never coexist");
        saw_gap |= pods.is_empty();
    }
    assert!(saw_gap, "Recreate goes through zero pods");
    let pods = c.available_pods();
    assert_eq!(pods.len(), 2);
    assert!(pods.iter().all(|p| image(p) == "app:v2"));
}

#[test]
fn old_replica_sets_beyond_revision_history_limit_are_deleted() {
    let mut c = FakeCluster::new();
    let mut d = deployment("web", 1, "app:v1", None);
    d.spec.revision_history_limit = Some(1);
    c.api.create_typed(d).expect("create");
    for image in ["app:v2", "app:v3"] {
        for _ in 0..3 {
            c.step();
        }
        set_image(&mut c.api, "web", image);
    }
    for _ in 0..10 {
        c.step();
    }
    let rss = c.api.replica_sets();
    let revisions: Vec<_> = rss
        .iter()
        .map(|r| r.metadata.annotations[REVISION_ANNOTATION].as_str())
        .collect();
    // revision 1 (oldest, at 0 replicas) was deleted; revision 2 is the one kept; 3 is current.
    let mut sorted = revisions.clone();
    sorted.sort();
    assert_eq!(sorted, ["2", "3"]);
}
