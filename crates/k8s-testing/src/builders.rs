//! Builders for the objects tests make most.

use std::collections::BTreeMap;

use k8s_types::apps::{
    Deployment, DeploymentSpec, DeploymentStrategy, IntOrString, PodTemplateSpec,
    RollingUpdateDeployment,
};
use k8s_types::core::{Container, Node, Pod, PodSpec, ResourceList};
use k8s_types::labels::LabelSelector;
use k8s_types::meta::ObjectMeta;
use k8s_types::scheduling::PodGroup;
use k8s_types::Quantity;

/// A quantity from its text (panics on a malformed one: test input).
pub fn q(s: &str) -> Quantity {
    Quantity::parse(s).unwrap_or_else(|e| panic!("quantity {s:?}: {e}"))
}

/// A node with allocatable cpu, memory, pods=110 and extra resources.
pub fn node(name: &str, cpu: &str, memory: &str, extra: &[(&str, &str)]) -> Node {
    let mut n = Node::default();
    n.metadata.name = name.into();
    n.metadata
        .labels
        .insert("kubernetes.io/hostname".into(), name.into());
    let mut a = ResourceList::new();
    a.insert("cpu".into(), q(cpu));
    a.insert("memory".into(), q(memory));
    a.insert("pods".into(), q("110"));
    for (k, v) in extra {
        a.insert((*k).into(), q(v));
    }
    n.status.capacity = a.clone();
    n.status.allocatable = a;
    n
}

/// A pending pod with one container requesting cpu and memory (and extra resources).
pub fn pod(name: &str, cpu: &str, memory: &str, extra: &[(&str, &str)]) -> Pod {
    let mut p = Pod::default();
    p.metadata.name = name.into();
    p.metadata.namespace = Some("default".into());
    let mut r = ResourceList::new();
    r.insert("cpu".into(), q(cpu));
    r.insert("memory".into(), q(memory));
    for (k, v) in extra {
        r.insert((*k).into(), q(v));
    }
    p.spec.containers.push(Container {
        name: "main".into(),
        image: "busybox".into(),
        ..Default::default()
    });
    p.spec.containers[0].resources.requests = r.clone().into();
    p.spec.containers[0].resources.limits = r.into();
    p
}

/// A pod of a PodGroup.
pub fn gang_pod(name: &str, group: &str, cpu: &str) -> Pod {
    let mut p = pod(name, cpu, "128Mi", &[]);
    p.metadata
        .labels
        .insert(k8s_types::core::POD_GROUP_LABEL.into(), group.into());
    p
}

/// A PodGroup.
pub fn pod_group(name: &str, min_member: i32) -> PodGroup {
    let mut pg = PodGroup::default();
    pg.metadata.name = name.into();
    pg.metadata.namespace = Some("default".into());
    pg.spec.min_member = min_member;
    pg
}

/// A Deployment `name` with `app=<name>` labels, one container `app` running `image`.
pub fn deployment(
    name: &str,
    replicas: i32,
    image: &str,
    strategy: Option<DeploymentStrategy>,
) -> Deployment {
    let labels: BTreeMap<String, String> = [("app".to_string(), name.to_string())].into();
    Deployment {
        metadata: ObjectMeta {
            name: name.into(),
            namespace: Some("default".into()),
            ..Default::default()
        },
        spec: DeploymentSpec {
            replicas: Some(replicas),
            selector: Some(LabelSelector::from_labels(labels.clone())),
            template: PodTemplateSpec {
                metadata: ObjectMeta {
                    labels: labels.into(),
                    ..Default::default()
                },
                spec: PodSpec {
                    containers: vec![Container {
                        name: "app".into(),
                        image: image.into(),
                        ..Default::default()
                    }]
                    .into(),
                    ..Default::default()
                },
            },
            strategy,
            ..Default::default()
        },
        ..Default::default()
    }
}

/// `RollingUpdate` with the given maxSurge / maxUnavailable.
pub fn rolling(max_surge: IntOrString, max_unavailable: IntOrString) -> Option<DeploymentStrategy> {
    Some(DeploymentStrategy {
        type_: Some("RollingUpdate".into()),
        rolling_update: Some(RollingUpdateDeployment {
            max_surge: Some(max_surge),
            max_unavailable: Some(max_unavailable),
        }),
    })
}
