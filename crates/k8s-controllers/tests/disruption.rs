//! The disruption controller (upstream `pkg/controller/disruption/disruption.go`) over a fake
//! cluster: PodDisruptionBudget status from the pods and their controllers' scale.

mod common;

use common::FakeCluster;
use k8s_testing::{deployment, node};
use k8s_types::apiserver::ApiExt;
use k8s_types::apps::IntOrString;
use k8s_types::batch::Job;
use k8s_types::core::Pod;
use k8s_types::labels::LabelSelector;
use k8s_types::meta::{tick_timestamp, OwnerReference};
use k8s_types::policy::PodDisruptionBudget;

fn pdb(min: Option<IntOrString>, max: Option<IntOrString>) -> PodDisruptionBudget {
    let mut p = PodDisruptionBudget::default();
    p.metadata.name = "web-pdb".into();
    p.metadata.namespace = Some("default".into());
    p.spec.min_available = min;
    p.spec.max_unavailable = max;
    p.spec.selector = Some(LabelSelector::from_labels([("app", "web")]));
    p
}

fn status(c: &FakeCluster) -> PodDisruptionBudget {
    c.api.get_typed("default", "web-pdb").unwrap()
}

/// (expectedPods, desiredHealthy, currentHealthy, disruptionsAllowed).
fn counts(p: &PodDisruptionBudget) -> (i32, i32, i32, i32) {
    let s = &p.status;
    (
        s.expected_pods,
        s.desired_healthy,
        s.current_healthy,
        s.disruptions_allowed,
    )
}

/// A cluster with the fake kubelet's node (pod GC deletes pods bound to a missing node).
fn cluster() -> FakeCluster {
    let mut c = FakeCluster::new();
    c.api
        .create_typed(node("node-a", "100", "100Gi", &[]))
        .unwrap();
    c
}

fn ready_cluster(spec: PodDisruptionBudget) -> FakeCluster {
    let mut c = cluster();
    c.api
        .create_typed(deployment("web", 3, "app:v1", None))
        .unwrap();
    c.api.create_typed(spec).unwrap();
    for _ in 0..4 {
        c.step();
    }
    c
}

#[test]
fn min_available_int_counts_matching_pods() {
    let c = ready_cluster(pdb(Some(IntOrString::Int(2)), None));
    let p = status(&c);
    assert_eq!(counts(&p), (3, 2, 3, 1));
    assert_eq!(p.status.observed_generation, Some(1));
    let cond = p.disruption_allowed_condition().unwrap();
    assert_eq!(
        (cond.status.as_str(), cond.reason.as_str()),
        ("True", "SufficientPods")
    );
    assert_eq!(cond.observed_generation, Some(1));
}

#[test]
fn percentages_scale_the_deployment_rounding_up() {
    // maxUnavailable 34% of 3 = ceil(1.02) = 2: desiredHealthy 1, 2 disruptions allowed.
    let c = ready_cluster(pdb(None, Some(IntOrString::String("34%".into()))));
    assert_eq!(counts(&status(&c)), (3, 1, 3, 2));
    // minAvailable 50% of 3 = ceil(1.5) = 2.
    let c = ready_cluster(pdb(Some(IntOrString::String("50%".into())), None));
    assert_eq!(counts(&status(&c)), (3, 2, 3, 1));
    // Scaling the Deployment to 5 changes the expected count before the new pods are Ready.
    let mut c = c;
    let mut d = c.api.deployment("web");
    d.spec.replicas = Some(5);
    c.api.update_typed(d).unwrap();
    c.step();
    // 50% of 5 = ceil(2.5) = 3 desired; the two new pods are bound but not Ready yet.
    assert_eq!(counts(&status(&c)), (5, 3, 3, 0));
    let cond = status(&c).disruption_allowed_condition().unwrap().clone();
    assert_eq!(
        (cond.status.as_str(), cond.reason.as_str()),
        ("False", "InsufficientPods")
    );
    c.step();
    c.step();
    assert_eq!(counts(&status(&c)), (5, 3, 5, 2));
}

#[test]
fn disrupted_pods_stop_counting_until_the_deletion_timeout() {
    let mut c = ready_cluster(pdb(Some(IntOrString::Int(2)), None));
    let victim = c.api.pods()[0].metadata.name.clone();
    let now = c.api.now;
    let mut p = status(&c);
    p.status
        .disrupted_pods
        .insert(victim.clone(), tick_timestamp(now));
    p.status.disruptions_allowed = 0;
    c.api.update_status_typed(p).unwrap();
    c.step();
    // The evicted-but-not-deleted pod is not healthy for 2 minutes.
    assert_eq!(counts(&status(&c)), (3, 2, 2, 0));
    assert_eq!(status(&c).status.disrupted_pods.len(), 1);
    // It never goes away: after DeletionTimeout the entry is dropped with a NotDeleted warning.
    while c.api.now < now + 121 {
        c.step();
    }
    assert!(status(&c).status.disrupted_pods.is_empty());
    assert_eq!(counts(&status(&c)), (3, 2, 3, 1));
    assert_eq!(
        c.api.pod_event_messages(&victim, "NotDeleted"),
        vec!["Pod was expected by PDB default/web-pdb to be deleted but it wasn't".to_string()]
    );
}

#[test]
fn unscalable_controllers_fail_safe_and_unmanaged_pods_warn() {
    let mut c = cluster();
    let job: Job = c
        .api
        .create_typed(Job {
            metadata: k8s_types::meta::ObjectMeta {
                name: "batch".into(),
                namespace: Some("default".into()),
                ..Default::default()
            },
            ..Default::default()
        })
        .unwrap();
    let mut pod = Pod::default();
    pod.metadata.name = "web-job".into();
    pod.metadata.namespace = Some("default".into());
    pod.metadata.labels.insert("app".into(), "web".into());
    pod.metadata.owner_references.push(OwnerReference {
        api_version: "batch/v1".into(),
        kind: "Job".into(),
        name: "batch".into(),
        uid: job.metadata.uid.clone().unwrap(),
        controller: Some(true),
        ..Default::default()
    });
    c.api.create_typed(pod).unwrap();
    c.api
        .create_typed(pdb(None, Some(IntOrString::Int(1))))
        .unwrap();
    c.step();
    let p = status(&c);
    assert_eq!(p.status.disruptions_allowed, 0);
    let cond = p.disruption_allowed_condition().unwrap();
    assert_eq!(
        (
            cond.status.as_str(),
            cond.reason.as_str(),
            cond.message.as_str()
        ),
        (
            "False",
            "SyncFailed",
            "jobs.batch does not implement the scale subresource"
        )
    );
    assert_eq!(
        c.api.event_messages("CalculateExpectedPodCountFailed"),
        vec!["Failed to calculate the number of expected pods: jobs.batch does not implement the scale subresource".to_string()]
    );

    // An unmanaged pod: left out of the scale, with upstream's warning.
    let mut c = ready_cluster(pdb(None, Some(IntOrString::Int(1))));
    let mut pod = Pod::default();
    pod.metadata.name = "web-bare".into();
    pod.metadata.namespace = Some("default".into());
    pod.metadata.labels.insert("app".into(), "web".into());
    c.api.create_typed(pod).unwrap();
    c.step();
    c.step();
    c.step();
    // Expected 3 (the Deployment), desired 2, and 4 Ready pods: 2 disruptions.
    assert_eq!(counts(&status(&c)), (3, 2, 4, 2));
    let msgs = c.api.event_messages("UnmanagedPods");
    assert!(msgs[0].starts_with("Pods selected by this PodDisruptionBudget (selector: &LabelSelector{MatchLabels:map[string]string{app: web,},MatchExpressions:[]LabelSelectorRequirement{},}) were found to be unmanaged."), "{msgs:?}");
}
