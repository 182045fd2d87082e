//! Dynamic Resource Allocation end to end (upstream `pkg/controller/resourceclaim`,
//! `pkg/scheduler/framework/plugins/dynamicresources`, KEP-4381): the NVIDIA DRA driver's
//! ResourceSlice, a claim generated from a template and owned by its pod, allocation and
//! reservation at PreBind, a shared claim, and the end of reservation and allocation when pods go.

use k8s_cluster::{Cluster, ClusterConfig};
use k8s_types::apiserver::{ApiExt, DeleteOptions};
use k8s_types::core::{Node, Pod};
use k8s_types::resource::{ResourceClaim, ResourceSlice};
use k8s_types::{Kind, Object};

fn obj(v: serde_json::Value) -> Object {
    let kind = v["kind"].as_str().unwrap().to_string();
    match kind.as_str() {
        "Pod" => Object::Pod(serde_json::from_value(v).unwrap()),
        "DeviceClass" => Object::DeviceClass(serde_json::from_value(v).unwrap()),
        "ResourceClaim" => Object::ResourceClaim(serde_json::from_value(v).unwrap()),
        "ResourceClaimTemplate" => {
            Object::ResourceClaimTemplate(serde_json::from_value(v).unwrap())
        }
        other => panic!("{other}"),
    }
}

fn cluster() -> Cluster {
    let mut c = Cluster::new(ClusterConfig::default()).expect("cluster");
    let node: Node = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "h100-a", "labels": {
            "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3", "nvidia.com/gpu.count": "2",
            "nvidia.com/dra-kubelet-plugin": "true"}},
        "status": {"capacity": {"cpu": "8", "memory": "64Gi", "pods": "110"}}
    }))
    .unwrap();
    c.add_node(node).expect("node");
    c.apply(obj(serde_json::json!({
        "apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
        "metadata": {"name": "gpu.nvidia.com"},
        "spec": {"selectors": [{"cel": {"expression": "device.driver == 'gpu.nvidia.com'"}}]}
    })))
    .unwrap();
    c
}

fn pod(name: &str, claim: serde_json::Value) -> Object {
    obj(serde_json::json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"resourceClaims": [claim],
                 "containers": [{"name": "c", "image": "i", "resources": {"claims": [{"name": "gpu"}]}}]}
    }))
}

fn claims(c: &mut Cluster) -> Vec<ResourceClaim> {
    c.api().list_typed::<ResourceClaim>(Some("default"), None)
}

#[test]
fn the_dra_driver_publishes_the_nodes_gpus_and_the_device_plugin_does_not() {
    let mut c = cluster();
    let slices = c.api().list_typed::<ResourceSlice>(None, None);
    assert_eq!(slices.len(), 1);
    assert_eq!(slices[0].spec.pool.name, "h100-a");
    assert_eq!(slices[0].spec.devices.len(), 2);
    c.tick();
    let node: Node = c.api().get_typed("", "h100-a").unwrap();
    assert!(!node.status.allocatable.contains_key("nvidia.com/gpu"));
}

#[test]
fn a_template_claim_is_made_for_the_pod_allocated_at_prebind_and_removed_with_the_pod() {
    let mut c = cluster();
    c.apply(obj(serde_json::json!({
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
        "metadata": {"name": "one-gpu", "namespace": "default"},
        "spec": {"metadata": {"labels": {"team": "ml"}},
                 "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}}]}}}
    })))
    .unwrap();
    c.apply(pod(
        "train",
        serde_json::json!({"name": "gpu", "resourceClaimTemplateName": "one-gpu"}),
    ))
    .unwrap();
    c.tick();
    let all = claims(&mut c);
    assert_eq!(all.len(), 1);
    let claim = &all[0];
    // generateName `<pod>-<claim>-` plus 5 characters.
    assert!(
        claim.metadata.name.starts_with("train-gpu-"),
        "{}",
        claim.metadata.name
    );
    assert_eq!(claim.metadata.name.len(), "train-gpu-".len() + 5);
    assert_eq!(claim.metadata.labels["team"], "ml");
    assert_eq!(
        claim.metadata.annotations["resource.kubernetes.io/pod-claim-name"],
        "gpu"
    );
    let owner = &claim.metadata.owner_references[0];
    assert_eq!(
        (owner.kind.as_str(), owner.name.as_str(), owner.controller),
        ("Pod", "train", Some(true))
    );
    let p: Pod = c.api().get_typed("default", "train").unwrap();
    assert_eq!(
        p.status.resource_claim_statuses[0]
            .resource_claim_name
            .as_deref(),
        Some(claim.metadata.name.as_str())
    );
    // Bound in the same tick: the controllers run before the scheduler.
    assert_eq!(p.spec.node_name.as_deref(), Some("h100-a"));
    let results = &claim.status.allocation.as_ref().unwrap().devices.results;
    assert_eq!(
        (results[0].pool.as_str(), results[0].device.as_str()),
        ("h100-a", "gpu-0")
    );
    assert_eq!(claim.status.reserved_for[0].name, "train");
    assert_eq!(
        claim.metadata.finalizers,
        ["resource.kubernetes.io/delete-protection"]
    );
    // Deleted at once: the controller drops the reservation and allocation, then the claim.
    c.api()
        .delete(
            &Kind::Pod,
            "default",
            "train",
            DeleteOptions {
                grace_period_seconds: Some(0),
                ..Default::default()
            },
        )
        .unwrap();
    for _ in 0..3 {
        c.tick();
    }
    assert!(claims(&mut c).is_empty(), "{:?}", claims(&mut c));
}

#[test]
fn a_shared_claim_keeps_its_allocation_until_its_last_pod_is_gone() {
    let mut c = cluster();
    c.apply(obj(serde_json::json!({
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
        "metadata": {"name": "shared", "namespace": "default"},
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com", "count": 2}}]}}
    })))
    .unwrap();
    for name in ["a", "b"] {
        c.apply(pod(
            name,
            serde_json::json!({"name": "gpu", "resourceClaimName": "shared"}),
        ))
        .unwrap();
    }
    c.tick();
    let claim = &claims(&mut c)[0];
    let names: Vec<&str> = claim
        .status
        .reserved_for
        .iter()
        .map(|r| r.name.as_str())
        .collect();
    assert_eq!(names, ["a", "b"]);
    assert_eq!(
        claim
            .status
            .allocation
            .as_ref()
            .unwrap()
            .devices
            .results
            .len(),
        2
    );
    let del = DeleteOptions {
        grace_period_seconds: Some(0),
        ..Default::default()
    };
    c.api().delete(&Kind::Pod, "default", "a", del).unwrap();
    c.tick();
    let claim = &claims(&mut c)[0];
    let names: Vec<&str> = claim
        .status
        .reserved_for
        .iter()
        .map(|r| r.name.as_str())
        .collect();
    assert_eq!(names, ["b"]);
    assert!(claim.status.allocation.is_some());
    c.api().delete(&Kind::Pod, "default", "b", del).unwrap();
    c.tick();
    let claim = &claims(&mut c)[0];
    assert!(claim.status.reserved_for.is_empty());
    assert!(claim.status.allocation.is_none());
    assert!(claim.metadata.finalizers.is_empty());
}
