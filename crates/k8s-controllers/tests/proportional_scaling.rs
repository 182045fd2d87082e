//! Scaling a Deployment in the middle of a rollout spreads the change over its active ReplicaSets
//! in proportion to their size (upstream `sync.go` `scale`, `GetProportion`).

use k8s_controllers::controller_utils::new_controller_ref;
use k8s_controllers::deployment::util::{DESIRED_REPLICAS_ANNOTATION, MAX_REPLICAS_ANNOTATION};
use k8s_controllers::DeploymentController;
use k8s_testing::{deployment, rolling, FakeApi};
use k8s_types::apiserver::ApiExt;
use k8s_types::apps::{
    Deployment, IntOrString, ReplicaSet, ReplicaSetSpec, POD_TEMPLATE_HASH_LABEL,
    REVISION_ANNOTATION,
};
use k8s_types::controller::Controller;
use k8s_types::informer::SharedInformerFactory;
use k8s_types::meta::ObjectMeta;
use k8s_types::Kind;

fn owned_rs(d: &Deployment, name: &str, image: &str, replicas: i32, revision: &str) -> ReplicaSet {
    let mut template = d.spec.template.clone();
    template.spec.containers[0].image = image.into();
    template
        .metadata
        .labels
        .insert(POD_TEMPLATE_HASH_LABEL.into(), name.into());
    let mut selector = d.spec.selector.clone().unwrap_or_default();
    selector
        .match_labels
        .insert(POD_TEMPLATE_HASH_LABEL.into(), name.into());
    ReplicaSet {
        metadata: ObjectMeta {
            name: format!("web-{name}"),
            namespace: Some("default".into()),
            labels: template.metadata.labels.clone(),
            owner_references: vec![new_controller_ref(&d.metadata, &Kind::Deployment)].into(),
            annotations: [
                (REVISION_ANNOTATION.to_string(), revision.to_string()),
                (DESIRED_REPLICAS_ANNOTATION.to_string(), "10".to_string()),
                (MAX_REPLICAS_ANNOTATION.to_string(), "13".to_string()),
            ]
            .into(),
            ..Default::default()
        },
        spec: ReplicaSetSpec {
            replicas: Some(replicas),
            selector: Some(selector),
            template,
            ..Default::default()
        },
        ..Default::default()
    }
}

#[test]
fn scaling_mid_rollout_is_proportional() {
    let mut api = FakeApi::at(0);
    // 10 replicas, 25%/25%: a rollout to app:v2 has the old RS at 8 and the new at 5 (13 = 10 + 3).
    let d = deployment(
        "web",
        10,
        "app:v2",
        rolling(
            IntOrString::String("25%".into()),
            IntOrString::String("25%".into()),
        ),
    );
    let d = api.create_typed(d).expect("deployment");
    api.create_typed(owned_rs(&d, "old", "app:v1", 8, "1"))
        .expect("old rs");
    api.now = 1;
    api.create_typed(owned_rs(&d, "new", "app:v2", 5, "2"))
        .expect("new rs");

    // Scale to 20: allowed = 20 + 5 (25% of 20) = 25, so 12 more replicas. By hand, from
    // getReplicaSetFraction: old gets round(8 * 25 / 13) - 8 = 7, new round(5 * 25 / 13) - 5 = 5.
    let mut d: Deployment = api.get_typed("default", "web").expect("d");
    d.spec.replicas = Some(20);
    api.update_typed(d).expect("scale");
    api.now = 2;
    let d: Deployment = api.get_typed("default", "web").expect("d");
    let mut informers = SharedInformerFactory::new();
    for kind in DeploymentController::new().informers() {
        informers.start(kind);
    }
    informers.sync(&api);
    DeploymentController::new()
        .sync_deployment(&mut api, &informers, &d)
        .expect("sync");

    let sizes: Vec<(String, Option<i32>, String)> = api
        .replica_sets()
        .into_iter()
        .map(|r| {
            (
                r.metadata.name.clone(),
                r.spec.replicas,
                r.metadata.annotations[MAX_REPLICAS_ANNOTATION].clone(),
            )
        })
        .collect();
    assert_eq!(
        sizes,
        [
            ("web-new".to_string(), Some(10), "25".to_string()),
            ("web-old".to_string(), Some(15), "25".to_string())
        ]
    );
    // Largest first (the old ReplicaSet), as upstream's ReplicaSetsBySizeNewer orders them.
    assert_eq!(
        api.event_messages("ScalingReplicaSet"),
        [
            "Scaled up replica set web-old from 8 to 15",
            "Scaled up replica set web-new from 5 to 10"
        ]
    );
}
