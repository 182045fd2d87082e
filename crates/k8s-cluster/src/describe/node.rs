//! `kubectl describe node`: upstream `staging/src/k8s.io/kubectl/pkg/describe/describe.go` (v1.32,
//! `NodeDescriber.Describe`, `describeNode`, `describeNodeLease`, `describeNodeResource`,
//! `getPodsTotalRequestsAndLimits`, `findNodeRoles`, `printNodeTaintsMultiline`) with the pod
//! requests and limits of `kubectl/pkg/util/resource` `PodRequestsAndLimits`.
//!
//! - The pods are the node's non-terminated pods of every namespace (`spec.nodeName` the node,
//!   phase neither Succeeded nor Failed), in the apiserver's list order (namespace, then name).
//! - Percentages are upstream's: `float64(used) / float64(allocatable) * 100` truncated by
//!   `int64()`, against `status.allocatable` (`status.capacity` when a node has none). A per-pod
//!   percentage against zero allocatable is what Go's `int64(NaN or ±Inf)` gives on amd64
//!   (`-9223372036854775808`); the totals print 0 % there, as upstream guards them.
//! - Extended resources (`nvidia.com/gpu`, ...) are the allocatable names that are neither
//!   standard container resources nor `pods` nor hugepages; they print without percentages.
//! - Sums keep the format of the first quantity added (`resource.Quantity.Add`): `500m` + `500m`
//!   prints `1`, `128Mi` + `128Mi` prints `256Mi`; a resource no pod names prints `0`.
//! - In-place pod resize is not simulated: requests are the spec's (upstream takes the larger of
//!   spec and `containerStatuses[].resources` while a resize is pending).

use std::collections::BTreeSet;

use k8s_types::apiserver::{ApiClient, ApiExt};
use k8s_types::coordination::{Lease, NODE_LEASE_NAMESPACE};
use k8s_types::core::{Container, Event, Node, Pod, ResourceList, Taint};
use k8s_types::{Quantity, Tick};

use super::{
    annotations_multiline, describe_events, labels_multiline, object_events, PrefixWriter,
};
use crate::printers::{rfc1123z, since};

/// Upstream `LabelNodeRolePrefix`.
const LABEL_NODE_ROLE_PREFIX: &str = "node-role.kubernetes.io/";
/// Upstream `NodeLabelRole`.
const NODE_LABEL_ROLE: &str = "kubernetes.io/role";

/// What Go prints for a zero `metav1.Time` in `time.RFC1123Z`.
const ZERO_TIME: &str = "Mon, 01 Jan 0001 00:00:00 +0000";

/// `time.RFC1123Z` of a `metav1.MicroTime` (`1970-01-01T00:00:10.000000Z`, a Lease's times):
/// the fraction of a second is dropped, as the layout has none.
fn micro_rfc1123z(ts: &str) -> String {
    match (ts.get(..19), ts.get(19..20)) {
        (Some(secs), Some(".")) if ts.ends_with('Z') => rfc1123z(&format!("{secs}Z")),
        _ => rfc1123z(ts),
    }
}

/// `time.RFC1123Z` of an optional timestamp (Go's zero time when unset).
fn time_or_zero(ts: Option<&str>) -> String {
    ts.map_or_else(|| ZERO_TIME.to_string(), rfc1123z)
}

/// `findNodeRoles`: `node-role.kubernetes.io/<role>` keys and `kubernetes.io/role=<role>`, sorted
/// and deduplicated.
pub fn node_roles(node: &Node) -> Vec<String> {
    let mut roles = BTreeSet::new();
    for (k, v) in &node.metadata.labels {
        if let Some(role) = k.strip_prefix(LABEL_NODE_ROLE_PREFIX) {
            if !role.is_empty() {
                roles.insert(role.to_string());
            }
        } else if k == NODE_LABEL_ROLE && !v.is_empty() {
            roles.insert(v.clone());
        }
    }
    roles.into_iter().collect()
}

/// `Taint.ToString`: `key=value:Effect`, or `key:Effect` without a value.
fn taint_string(t: &Taint) -> String {
    if t.value.is_empty() {
        format!("{}:{}", t.key, t.effect)
    } else {
        format!("{}={}:{}", t.key, t.value, t.effect)
    }
}

/// `printNodeTaintsMultiline`: sorted by `effect,key`.
fn taints_multiline(w: &mut PrefixWriter, taints: &[Taint]) {
    w.write(0, "Taints:\t");
    if taints.is_empty() {
        w.write(0, "<none>\n");
        return;
    }
    let mut sorted: Vec<&Taint> = taints.iter().collect();
    sorted.sort_by_key(|t| format!("{},{}", t.effect, t.key));
    for (i, t) in sorted.into_iter().enumerate() {
        if i != 0 {
            w.write(0, "\t");
        }
        w.write(0, &format!("{}\n", taint_string(t)));
    }
}

/// `addResourceList`: adds each quantity into `list` (`Quantity.Add`).
fn add_list(list: &mut ResourceList, new: &ResourceList) {
    for (name, q) in new {
        match list.get_mut(name) {
            Some(v) => v.add(q),
            None => {
                list.insert(name.clone(), q.clone());
            }
        }
    }
}

/// `maxResourceList`: the larger quantity of each name.
fn max_list(list: &mut ResourceList, new: &ResourceList) {
    for (name, q) in new {
        match list.get(name) {
            Some(v) if q <= v => {}
            _ => {
                list.insert(name.clone(), q.clone());
            }
        }
    }
}

/// `podRequests` / `podLimits` of `kubectl/pkg/util/resource`: containers summed; each init
/// container's amount (plus the restartable ones before it) against that sum, the larger kept;
/// sidecars (`restartPolicy: Always`) added to the sum; overhead added to every request and to
/// each non-zero limit.
fn pod_amounts(pod: &Pod, of: fn(&Container) -> &ResourceList, limits: bool) -> ResourceList {
    let mut sum = ResourceList::new();
    for c in &pod.spec.containers {
        add_list(&mut sum, of(c));
    }
    let mut sidecars = ResourceList::new();
    let mut init = ResourceList::new();
    for c in &pod.spec.init_containers {
        let amounts = if c.is_sidecar() {
            add_list(&mut sum, of(c));
            add_list(&mut sidecars, of(c));
            sidecars.clone()
        } else {
            let mut tmp = ResourceList::new();
            add_list(&mut tmp, of(c));
            add_list(&mut tmp, &sidecars);
            tmp
        };
        max_list(&mut init, &amounts);
    }
    max_list(&mut sum, &init);
    for (name, q) in &pod.spec.overhead {
        if !limits {
            add_list(&mut sum, &ResourceList::from([(name.clone(), q.clone())]));
        } else if let Some(v) = sum.get_mut(name).filter(|v| !v.is_zero()) {
            v.add(q);
        }
    }
    sum
}

/// `PodRequestsAndLimits`: the pod's requests and limits.
pub fn pod_requests_and_limits(pod: &Pod) -> (ResourceList, ResourceList) {
    (
        pod_amounts(pod, |c| &c.resources.requests, false),
        pod_amounts(pod, |c| &c.resources.limits, true),
    )
}

/// Go's `int64(float64(used) / float64(total) * 100)`: truncation toward zero; NaN and ±Inf (a
/// zero `total`) give what amd64's conversion gives, `i64::MIN`.
fn percent(used: i64, total: i64) -> i64 {
    #[allow(clippy::cast_precision_loss)]
    let f = used as f64 / total as f64 * 100.0;
    if (-9.223_372_036_854_776e18..9.223_372_036_854_776e18).contains(&f) {
        #[allow(clippy::cast_possible_truncation)]
        let v = f as i64;
        v
    } else {
        i64::MIN
    }
}

/// A quantity by name, zero when absent (Go's zero `Quantity` from a map miss prints `0`).
fn q<'a>(list: &'a ResourceList, name: &str, zero: &'a Quantity) -> &'a Quantity {
    list.get(name).unwrap_or(zero)
}

/// `IsStandardContainerResourceName`: cpu, memory, ephemeral-storage and `hugepages-*`.
fn is_standard_container_resource(name: &str) -> bool {
    matches!(name, "cpu" | "memory" | "ephemeral-storage") || name.starts_with("hugepages-")
}

/// `describeNodeResource`: the Non-terminated Pods table and Allocated resources.
fn describe_node_resource(w: &mut PrefixWriter, pods: &[Pod], node: &Node, now: Tick) {
    w.write(
        0,
        &format!("Non-terminated Pods:\t({} in total)\n", pods.len()),
    );
    w.write(
        1,
        "Namespace\tName\t\tCPU Requests\tCPU Limits\tMemory Requests\tMemory Limits\tAge\n",
    );
    w.write(
        1,
        "---------\t----\t\t------------\t----------\t---------------\t-------------\t---\n",
    );
    let allocatable = if node.status.allocatable.is_empty() {
        &node.status.capacity
    } else {
        &node.status.allocatable
    };
    let zero = Quantity::zero();
    let alloc_cpu = q(allocatable, "cpu", &zero).milli_value();
    let alloc_mem = q(allocatable, "memory", &zero).value();
    let mut reqs = ResourceList::new();
    let mut limits = ResourceList::new();
    for pod in pods {
        let (req, limit) = pod_requests_and_limits(pod);
        let (cr, cl) = (q(&req, "cpu", &zero), q(&limit, "cpu", &zero));
        let (mr, ml) = (q(&req, "memory", &zero), q(&limit, "memory", &zero));
        w.write(
            1,
            &format!(
                "{}\t{}\t\t{cr} ({}%)\t{cl} ({}%)\t{mr} ({}%)\t{ml} ({}%)\t{}\n",
                pod.metadata.namespace(),
                pod.metadata.name,
                percent(cr.milli_value(), alloc_cpu),
                percent(cl.milli_value(), alloc_cpu),
                percent(mr.value(), alloc_mem),
                percent(ml.value(), alloc_mem),
                since(pod.metadata.creation_timestamp.as_deref(), now),
            ),
        );
        add_list(&mut reqs, &req);
        add_list(&mut limits, &limit);
    }
    w.write(
        0,
        "Allocated resources:\n  (Total limits may be over 100 percent, i.e., overcommitted.)\n",
    );
    w.write(1, "Resource\tRequests\tLimits\n");
    w.write(1, "--------\t--------\t------\n");
    // cpu in milli-units, the others in units, as upstream's MilliValue() / Value().
    for name in ["cpu", "memory", "ephemeral-storage"] {
        let value = |x: &Quantity| {
            if name == "cpu" {
                x.milli_value()
            } else {
                x.value()
            }
        };
        let total = value(q(allocatable, name, &zero));
        let (r, l) = (q(&reqs, name, &zero), q(&limits, name, &zero));
        let (pr, pl) = if total == 0 {
            (0, 0)
        } else {
            (percent(value(r), total), percent(value(l), total))
        };
        w.write(1, &format!("{name}\t{r} ({pr}%)\t{l} ({pl}%)\n"));
    }
    let hugepages = allocatable.keys().filter(|k| k.starts_with("hugepages-"));
    for name in hugepages {
        let total = q(allocatable, name, &zero).value();
        let (r, l) = (q(&reqs, name, &zero), q(&limits, name, &zero));
        let (pr, pl) = if total == 0 {
            (0, 0)
        } else {
            (percent(r.value(), total), percent(l.value(), total))
        };
        w.write(1, &format!("{name}\t{r} ({pr}%)\t{l} ({pl}%)\n"));
    }
    let extended = allocatable
        .keys()
        .filter(|k| !is_standard_container_resource(k) && k.as_str() != "pods");
    for name in extended {
        w.write(
            1,
            &format!(
                "{name}\t{}\t{}\n",
                q(&reqs, name, &zero),
                q(&limits, name, &zero)
            ),
        );
    }
}

/// `describeNodeLease`: the node's Lease in `kube-node-lease`, or the error of getting it.
fn describe_node_lease(w: &mut PrefixWriter, name: &str, lease: Option<&Lease>) {
    let Some(lease) = lease else {
        w.write(
            0,
            &format!(
                "Lease:\tFailed to get lease: leases.coordination.k8s.io \"{name}\" not found\n"
            ),
        );
        return;
    };
    w.write(0, "Lease:\n");
    let or_unset = |v: Option<String>| v.unwrap_or_else(|| "<unset>".to_string());
    w.write(
        1,
        &format!(
            "HolderIdentity:\t{}\n",
            or_unset(lease.spec.holder_identity.clone())
        ),
    );
    w.write(
        1,
        &format!(
            "AcquireTime:\t{}\n",
            or_unset(lease.spec.acquire_time.as_deref().map(micro_rfc1123z))
        ),
    );
    w.write(
        1,
        &format!(
            "RenewTime:\t{}\n",
            or_unset(lease.spec.renew_time.as_deref().map(micro_rfc1123z))
        ),
    );
}

/// The node's non-terminated pods (`spec.nodeName=<node>`, phase not Succeeded nor Failed), every
/// namespace, in list order.
pub fn node_pods(api: &dyn ApiClient, node: &str) -> Vec<Pod> {
    api.list_typed::<Pod>(None, None)
        .into_iter()
        .filter(|p| p.node_name() == Some(node))
        .filter(|p| !matches!(p.status.phase.as_deref(), Some("Succeeded" | "Failed")))
        .collect()
}

/// The node's Events, as `NodeDescriber` searches them: about the Node with its uid, then about
/// the Node with its name as uid (the kubelet's), the two lists concatenated.
pub fn node_events(api: &dyn ApiClient, node: &Node) -> Vec<Event> {
    let uid = node.metadata.uid.as_deref().unwrap_or("");
    let name = node.metadata.name.as_str();
    let mut events = object_events(api, "Node", "", name, &[uid]);
    if uid != name {
        let by_name = object_events(api, "Node", "", name, &[name]);
        events.extend(
            by_name
                .into_iter()
                .filter(|e| !e.involved_object.uid.is_empty()),
        );
    }
    events
}

/// What `kubectl describe node` prints for `node`, with its non-terminated `pods` (see
/// [`node_pods`]), its `lease` and `events` (see [`node_events`]), the clock at `now`.
pub fn describe_node(
    node: &Node,
    pods: &[Pod],
    lease: Option<&Lease>,
    events: Vec<Event>,
    now: Tick,
) -> String {
    let mut w = PrefixWriter::new();
    w.write(0, &format!("Name:\t{}\n", node.metadata.name));
    let roles = node_roles(node);
    let roles = if roles.is_empty() {
        "<none>".to_string()
    } else {
        roles.join(",")
    };
    w.write(0, &format!("Roles:\t{roles}\n"));
    labels_multiline(&mut w, "Labels", &node.metadata.labels);
    annotations_multiline(&mut w, "Annotations", &node.metadata.annotations);
    w.write(
        0,
        &format!(
            "CreationTimestamp:\t{}\n",
            time_or_zero(node.metadata.creation_timestamp.as_deref())
        ),
    );
    taints_multiline(&mut w, &node.spec.taints);
    w.write(0, &format!("Unschedulable:\t{}\n", node.spec.unschedulable));
    describe_node_lease(&mut w, &node.metadata.name, lease);
    if !node.status.conditions.is_empty() {
        w.write(
            0,
            "Conditions:\n  Type\tStatus\tLastHeartbeatTime\tLastTransitionTime\tReason\tMessage\n",
        );
        w.write(
            1,
            "----\t------\t-----------------\t------------------\t------\t-------\n",
        );
        for c in &node.status.conditions {
            w.write(
                1,
                &format!(
                    "{} \t{} \t{} \t{} \t{} \t{}\n",
                    c.type_,
                    c.status,
                    time_or_zero(c.last_heartbeat_time.as_deref()),
                    time_or_zero(c.last_transition_time.as_deref()),
                    c.reason.as_deref().unwrap_or(""),
                    c.message.as_deref().unwrap_or("")
                ),
            );
        }
    }
    w.write(0, "Addresses:\n");
    for a in &node.status.addresses {
        w.write(1, &format!("{}:\t{}\n", a.type_, a.address));
    }
    for (title, list) in [
        ("Capacity", &node.status.capacity),
        ("Allocatable", &node.status.allocatable),
    ] {
        if !list.is_empty() {
            w.write(0, &format!("{title}:\n"));
            for (name, value) in list {
                w.write(0, &format!("  {name}:\t{value}\n"));
            }
        }
    }
    w.write(0, "System Info:\n");
    let info = |k: &str| {
        node.status
            .node_info
            .as_ref()
            .and_then(|i| i.get(k))
            .and_then(|v| v.as_str())
            .unwrap_or("")
            .to_string()
    };
    for (label, key) in [
        ("Machine ID", "machineID"),
        ("System UUID", "systemUUID"),
        ("Boot ID", "bootID"),
        ("Kernel Version", "kernelVersion"),
        ("OS Image", "osImage"),
        ("Operating System", "operatingSystem"),
        ("Architecture", "architecture"),
        ("Container Runtime Version", "containerRuntimeVersion"),
        ("Kubelet Version", "kubeletVersion"),
        ("Kube-Proxy Version", "kubeProxyVersion"),
    ] {
        w.write(0, &format!("  {label}:\t{}\n", info(key)));
    }
    if let Some(cidr) = node.spec.pod_cidr.as_deref().filter(|c| !c.is_empty()) {
        w.write(0, &format!("PodCIDR:\t{cidr}\n"));
    }
    if !node.spec.pod_cidrs.is_empty() {
        w.write(
            0,
            &format!("PodCIDRs:\t{}\n", node.spec.pod_cidrs.join(",")),
        );
    }
    if let Some(p) = node.spec.provider_id.as_deref().filter(|p| !p.is_empty()) {
        w.write(0, &format!("ProviderID:\t{p}\n"));
    }
    describe_node_resource(&mut w, pods, node, now);
    describe_events(&mut w, events, now);
    w.finish()
}

/// The node's Lease (`kube-node-lease/<node>`), if any.
pub fn node_lease(api: &dyn ApiClient, node: &str) -> Option<Lease> {
    api.get_typed::<Lease>(NODE_LEASE_NAMESPACE, node).ok()
}
