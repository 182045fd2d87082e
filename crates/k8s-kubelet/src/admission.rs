//! Pod admission on the node (upstream `pkg/kubelet/lifecycle/predicate.go` `predicateAdmitHandler`
//! and `pkg/scheduler` `AdmissionCheck`): the kubelet re-checks, against the pods it has already
//! admitted, that a pod bound to it fits. The scheduler normally guarantees this; the re-check
//! catches pods bound by hand (`spec.nodeName`) and races.
//!
//! Checks, in upstream order, the first failure deciding the rejection:
//! 1. NodeResourcesFit: pod count, cpu, memory, ephemeral-storage, then every other requested
//!    resource in name order (upstream iterates a Go map). Extended resources the node does not
//!    advertise at all are dropped from the request first (`removeMissingExtendedResources`).
//! 2. NodeAffinity: `nodeSelector` and required node affinity.
//! 3. NodePorts: host ports already used by admitted pods.
//! 4. TaintToleration: only `NoExecute` taints.
//!
//! Not modelled: the OS label/field checks, sysctl and AppArmor handlers, eviction-manager pressure
//! admission, and critical-pod preemption on admission failure.

use std::collections::BTreeSet;

use k8s_types::core::{resource_names as rn, taints, Node, Pod, PodSpec, ResourceList};
use k8s_types::cow_arc::CowArc;
use k8s_types::resources::{pod_requests, Resources};

/// Reason prefix for an insufficient resource (upstream `InsufficientResourcePrefix`):
/// `OutOfcpu`, `OutOfmemory`, `OutOfpods`, `OutOfnvidia.com/gpu`.
pub const INSUFFICIENT_RESOURCE_PREFIX: &str = "OutOf";
/// Reason when the device manager cannot allocate (upstream `admission.ErrorReasonUnexpected`).
pub const UNEXPECTED_ADMISSION_ERROR: &str = "UnexpectedAdmissionError";
/// Prefix of the status message of a rejected pod (upstream `Kubelet.rejectPod`).
pub const POD_REJECTED_PREFIX: &str = "Pod was rejected: ";

/// Upstream `nodeaffinity.ErrReasonPod`.
pub const NODE_AFFINITY_REASON: &str = "node(s) didn't match Pod's node affinity/selector";
/// Upstream `nodeports.ErrReason`.
pub const NODE_PORTS_REASON: &str = "node(s) didn't have free ports for the requested pod ports";
/// Upstream `tainttoleration.ErrReasonNotMatch`.
pub const TAINT_TOLERATION_REASON: &str = "node(s) had taints that the pod didn't tolerate";

/// Why a pod was not admitted: the event reason / `status.reason`, and the message (the pod's
/// `status.message` is [`POD_REJECTED_PREFIX`] + this message).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rejection {
    /// e.g. `OutOfcpu`, `NodeAffinity`, `UnexpectedAdmissionError`.
    pub reason: String,
    /// e.g. `Node didn't have enough resource: cpu, requested: 1000, used: 1500, capacity: 2000`.
    pub message: String,
}

/// Upstream `lifecycle.InsufficientResourceError`: amounts in milli-CPU for cpu, bytes for memory
/// and ephemeral-storage, whole units otherwise.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InsufficientResource {
    /// Resource name.
    pub name: String,
    /// The pod's request.
    pub requested: i64,
    /// Sum of the requests of the pods already admitted.
    pub used: i64,
    /// The node's allocatable amount.
    pub capacity: i64,
}

impl std::fmt::Display for InsufficientResource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Node didn't have enough resource: {}, requested: {}, used: {}, capacity: {}",
            self.name, self.requested, self.used, self.capacity
        )
    }
}

impl InsufficientResource {
    /// The rejection: reason `OutOf<resource>`, message the error text.
    pub fn rejection(&self) -> Rejection {
        Rejection {
            reason: format!("{INSUFFICIENT_RESOURCE_PREFIX}{}", self.name),
            message: self.to_string(),
        }
    }
}

/// Upstream `PredicateFailureError`: reason is the plugin name, message
/// `Predicate <name> failed: <reason>`.
fn predicate_failure(name: &str, reason: &str) -> Rejection {
    Rejection {
        reason: name.to_string(),
        message: format!("Predicate {name} failed: {reason}"),
    }
}

/// Upstream `v1helper.IsExtendedResourceName`: a `domain/name` resource outside the
/// `kubernetes.io` namespace and not a quota `requests.` name.
pub fn is_extended_resource_name(name: &str) -> bool {
    name.contains('/') && !name.contains("kubernetes.io/") && !name.starts_with("requests.")
}

/// Upstream `noderesources.Fits` as the kubelet calls it: every insufficient resource, in check
/// order. `allocatable` is the node's allocatable list; `admitted` the pods already running here.
pub fn insufficient_resources(
    pod: &Pod,
    allocatable: &ResourceList,
    admitted: &[&Pod],
) -> Vec<InsufficientResource> {
    insufficient_resources_used(pod, allocatable, admitted.len(), &requests_of(admitted))
}

/// The summed requests of `pods` (what the kubelet's admission counts as used).
pub fn requests_of(pods: &[&Pod]) -> Resources {
    let mut used = Resources::default();
    for p in pods {
        used.add(&pod_requests(p));
    }
    used
}

/// [`insufficient_resources`] given the admitted pods' number and summed requests (`used`, as
/// [`requests_of`] adds them up), for a caller that keeps each pod's requests.
pub fn insufficient_resources_used(
    pod: &Pod,
    allocatable: &ResourceList,
    admitted: usize,
    used: &Resources,
) -> Vec<InsufficientResource> {
    let alloc = Resources::from_list(allocatable);
    let mut request = pod_requests(pod);
    request
        .scalar
        .retain(|name, _| !is_extended_resource_name(name) || allocatable.contains_key(name));
    let admitted_count = i64::try_from(admitted).unwrap_or(i64::MAX);
    let mut out = Vec::new();
    if admitted_count + 1 > alloc.pods {
        out.push(InsufficientResource {
            name: rn::PODS.into(),
            requested: 1,
            used: admitted_count,
            capacity: alloc.pods,
        });
    }
    if request.is_zero() {
        return out;
    }
    let mut check = |name: &str, req: i64, used: i64, cap: i64| {
        if req > 0 && req > cap.saturating_sub(used) {
            out.push(InsufficientResource {
                name: name.to_string(),
                requested: req,
                used,
                capacity: cap,
            });
        }
    };
    check(rn::CPU, request.milli_cpu, used.milli_cpu, alloc.milli_cpu);
    check(rn::MEMORY, request.memory, used.memory, alloc.memory);
    check(
        rn::EPHEMERAL_STORAGE,
        request.ephemeral_storage,
        used.ephemeral_storage,
        alloc.ephemeral_storage,
    );
    for (name, req) in &request.scalar {
        check(name, *req, used.get(name), alloc.get(name));
    }
    out
}

/// Upstream `GetRequiredNodeAffinity(pod).Match(node)`: `nodeSelector` labels all present, and
/// when required node affinity is set, one of its terms matches.
pub fn matches_node_affinity(pod: &Pod, node: &Node) -> bool {
    let labels = &node.metadata.labels;
    let selector_ok = pod
        .spec
        .node_selector
        .iter()
        .all(|(k, v)| labels.get(k) == Some(v));
    let affinity_ok = pod
        .spec
        .affinity
        .as_ref()
        .and_then(|a| a.node_affinity.as_ref())
        .and_then(|na| {
            na.required_during_scheduling_ignored_during_execution
                .as_ref()
        })
        .is_none_or(|sel| sel.matches(&node.metadata.name, labels));
    selector_ok && affinity_ok
}

/// Host ports a pod asks for: (protocol, host IP, port); protocol defaults to `TCP`, host IP to
/// `0.0.0.0` (upstream `nodeports` / `HostPortInfo`).
fn host_ports(pod: &Pod) -> Vec<(String, String, i32)> {
    pod.spec
        .containers
        .iter()
        .chain(&pod.spec.init_containers)
        .flat_map(|c| &c.ports)
        .filter_map(|p| {
            let port = p.host_port.filter(|hp| *hp > 0)?;
            let proto = p.protocol.clone().unwrap_or_else(|| "TCP".into());
            let ip = p
                .host_ip
                .clone()
                .filter(|s| !s.is_empty())
                .unwrap_or_else(|| "0.0.0.0".into());
            Some((proto, ip, port))
        })
        .collect()
}

/// Upstream `nodeports.Fits`: no wanted (protocol, port) is taken on an overlapping host IP
/// (`0.0.0.0` overlaps every IP).
pub fn host_ports_fit(pod: &Pod, admitted: &[&Pod]) -> bool {
    let wanted = host_ports(pod);
    // A pod without host ports fits whatever the others use (most pods).
    if wanted.is_empty() {
        return true;
    }
    let used: BTreeSet<(String, String, i32)> =
        admitted.iter().flat_map(|p| host_ports(p)).collect();
    wanted.iter().all(|(proto, ip, port)| {
        !used.iter().any(|(up, uip, uport)| {
            up == proto && uport == port && (ip == uip || ip == "0.0.0.0" || uip == "0.0.0.0")
        })
    })
}

/// The predicate admit handler: `Ok` or the first failure as a [`Rejection`].
///
/// # Errors
/// The rejection, worded as upstream.
pub fn admit(
    pod: &Pod,
    node: &Node,
    allocatable: &ResourceList,
    admitted: &[&Pod],
) -> Result<(), Rejection> {
    admit_used(pod, node, allocatable, admitted, &requests_of(admitted))
}

/// [`admit`] given the admitted pods' summed requests (`used`, as [`requests_of`] adds them up).
///
/// # Errors
/// As [`admit`].
pub fn admit_used(
    pod: &Pod,
    node: &Node,
    allocatable: &ResourceList,
    admitted: &[&Pod],
    used: &Resources,
) -> Result<(), Rejection> {
    if let Some(first) = insufficient_resources_used(pod, allocatable, admitted.len(), used).first()
    {
        return Err(first.rejection());
    }
    if !matches_node_affinity(pod, node) {
        return Err(predicate_failure("NodeAffinity", NODE_AFFINITY_REASON));
    }
    if !host_ports_fit(pod, admitted) {
        return Err(predicate_failure("NodePorts", NODE_PORTS_REASON));
    }
    if taints::find_untolerated(
        &node.spec.taints,
        &pod.spec.tolerations,
        &[taints::effects::NO_EXECUTE],
    )
    .is_some()
    {
        return Err(predicate_failure(
            "TaintToleration",
            TAINT_TOLERATION_REASON,
        ));
    }
    Ok(())
}

/// A pod's requests (`resources::pod_requests`, which reads only the spec) with the spec they were
/// computed from, shared: recomputed only when the record's pod has another spec. Derived state:
/// any two memos are equal, so a record's equality is its pod's and runtime's.
#[derive(Clone, Default)]
pub(crate) struct RequestsMemo(Option<(CowArc<PodSpec>, Resources)>);

impl PartialEq for RequestsMemo {
    fn eq(&self, _: &RequestsMemo) -> bool {
        true
    }
}

impl std::fmt::Debug for RequestsMemo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RequestsMemo")
    }
}

impl RequestsMemo {
    /// `pod_requests(pod)`, from the memo when `pod` has the spec it was computed from.
    pub(crate) fn of(&mut self, pod: &Pod) -> &Resources {
        let fresh = matches!(&self.0, Some((spec, _)) if CowArc::ptr_eq(spec, &pod.spec));
        if !fresh {
            self.0 = None;
        }
        let (_, requests) = self
            .0
            .get_or_insert_with(|| (pod.spec.clone(), pod_requests(pod)));
        requests
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_types::core::{Container, ContainerPort, ResourceRequirements, Taint};
    use k8s_types::Quantity;
    use k8s_types::Shared;

    use crate::runtime::{PodPhase, Runtime, RuntimePod};

    fn list(items: &[(&str, &str)]) -> ResourceList {
        items
            .iter()
            .map(|(k, v)| (k.to_string(), Quantity::parse(v).expect("valid quantity")))
            .collect()
    }

    fn pod(requests: &[(&str, &str)]) -> Pod {
        let mut p = Pod::default();
        p.spec.containers = vec![Container {
            name: "app".into(),
            resources: ResourceRequirements {
                requests: list(requests).into(),
                limits: Default::default(),
                claims: Vec::new(),
            },
            ..Default::default()
        }]
        .into();
        p
    }

    #[test]
    fn cpu_rejection_matches_upstream_text() {
        // Computed by hand: 2 CPUs allocatable, 1 + 0.5 CPU admitted, 1 more requested.
        let alloc = list(&[("cpu", "2"), ("memory", "4Gi"), ("pods", "110")]);
        let a = pod(&[("cpu", "1")]);
        let b = pod(&[("cpu", "500m")]);
        let new = pod(&[("cpu", "1")]);
        let r = admit(&new, &Node::default(), &alloc, &[&a, &b]).unwrap_err();
        assert_eq!(r.reason, "OutOfcpu");
        assert_eq!(
            r.message,
            "Node didn't have enough resource: cpu, requested: 1000, used: 1500, capacity: 2000"
        );
    }

    #[test]
    fn pods_are_checked_first_and_extended_resources_by_name() {
        let alloc = list(&[("cpu", "1"), ("pods", "1"), ("nvidia.com/gpu", "2")]);
        let a = pod(&[("nvidia.com/gpu", "2")]);
        let new = pod(&[("cpu", "2"), ("nvidia.com/gpu", "1")]);
        let all = insufficient_resources(&new, &alloc, &[&a]);
        let names: Vec<&str> = all.iter().map(|i| i.name.as_str()).collect();
        assert_eq!(names, vec!["pods", "cpu", "nvidia.com/gpu"]);
        assert_eq!(
            all[2].to_string(),
            "Node didn't have enough resource: nvidia.com/gpu, requested: 1, used: 2, capacity: 2"
        );
        assert_eq!(all[2].rejection().reason, "OutOfnvidia.com/gpu");
        assert_eq!(all[0].rejection().reason, "OutOfpods");
    }

    #[test]
    fn extended_resources_unknown_to_the_node_are_ignored() {
        let alloc = list(&[("cpu", "1"), ("pods", "110")]);
        let new = pod(&[("example.com/foo", "3"), ("hugepages-2Mi", "2Mi")]);
        let all = insufficient_resources(&new, &alloc, &[]);
        // hugepages is not an extended resource: it is checked (0 allocatable), foo is dropped.
        assert_eq!(all.len(), 1);
        assert_eq!(all[0].name, "hugepages-2Mi");
        assert!(is_extended_resource_name("nvidia.com/gpu"));
        assert!(!is_extended_resource_name("kubernetes.io/batch"));
        assert!(!is_extended_resource_name("cpu"));
    }

    #[test]
    fn affinity_ports_and_noexecute_taints() {
        let alloc = list(&[("cpu", "4"), ("pods", "110")]);
        let mut node = Node::default();
        node.metadata.name = "n1".into();
        node.metadata.labels.insert("zone".into(), "a".into());
        let mut p = pod(&[]);
        p.spec.node_selector.insert("zone".into(), "b".into());
        let r = admit(&p, &node, &alloc, &[]).unwrap_err();
        assert_eq!(r.reason, "NodeAffinity");
        assert_eq!(
            r.message,
            "Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector"
        );

        let mut web = pod(&[]);
        web.spec.containers[0].ports = vec![ContainerPort {
            container_port: 80,
            host_port: Some(8080),
            ..Default::default()
        }];
        let web2 = web.clone();
        let r = admit(&web2, &node, &alloc, &[&web]).unwrap_err();
        assert_eq!(r.reason, "NodePorts");

        node.spec.taints = vec![Taint {
            key: "dedicated".into(),
            value: "gpu".into(),
            effect: "NoExecute".into(),
            time_added: None,
        }];
        let r = admit(&pod(&[]), &node, &alloc, &[]).unwrap_err();
        assert_eq!(
            r.message,
            "Predicate TaintToleration failed: node(s) had taints that the pod didn't tolerate"
        );
        node.spec.taints[0].effect = "NoSchedule".into();
        assert!(admit(&pod(&[]), &node, &alloc, &[]).is_ok());
    }

    fn requesting(name: &str, cpu: &str, memory: &str) -> Pod {
        let mut p = Pod::default();
        p.metadata.name = name.into();
        p.spec.containers.push(Container {
            name: "c".into(),
            image: "app:v1".into(),
            resources: ResourceRequirements {
                requests: [
                    ("cpu".to_string(), Quantity::parse(cpu).expect("cpu")),
                    (
                        "memory".to_string(),
                        Quantity::parse(memory).expect("memory"),
                    ),
                ]
                .into_iter()
                .collect(),
                ..Default::default()
            },
            ..Default::default()
        });
        p
    }

    fn record(p: Pod, phase: PodPhase) -> RuntimePod {
        RuntimePod::new("uid".into(), Shared::from_typed(p), phase, None, &[])
    }

    /// The memoized sum is the sum of `pod_requests` over the active pods (250m + 500m and
    /// 1Gi + 2Gi; the terminated pod's 4 CPUs do not count), and follows a record whose pod
    /// got another spec (an in-place resize of `b` to 750m).
    #[test]
    fn active_requests_sum_the_active_pods_and_follow_a_new_spec() {
        let mut rt = Runtime::default();
        rt.insert(
            "ns/a".into(),
            record(
                requesting("a", "250m", "1Gi"),
                PodPhase::Running { started: 1 },
            ),
        );
        rt.insert(
            "ns/b".into(),
            record(
                requesting("b", "500m", "2Gi"),
                PodPhase::Creating { since: 2 },
            ),
        );
        rt.insert(
            "ns/c".into(),
            record(requesting("c", "4", "8Gi"), PodPhase::Terminated),
        );
        let used = rt.active_requests();
        assert_eq!((used.milli_cpu, used.memory), (750, 3 << 30));
        assert_eq!(used, requests_of(&rt.active_pods()));
        // Again from the memo: the same sum.
        assert_eq!(rt.active_requests(), used);
        let resized = requesting("b", "750m", "2Gi");
        rt.get_mut("ns/b").expect("b").pod = Shared::from_typed(resized);
        let used = rt.active_requests();
        assert_eq!((used.milli_cpu, used.memory), (1_000, 3 << 30));
    }
}
