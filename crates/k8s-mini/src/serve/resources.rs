//! The REST resources `serve` answers for: one row per kind k8s-mini types, with what discovery
//! lists about it (upstream `kubectl api-resources` of v1.32: names, short names, verbs,
//! categories, subresources) and the path parts that name it.

use k8s_types::object::Kind;

use crate::serve::custom::{self, PrinterColumn};

/// The verbs of a served resource, as upstream's storage has them (`kubectl api-resources -o
/// wide`).
const VERBS: &[&str] = &[
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
];

/// Namespaces' verbs: no `deletecollection` (upstream's namespace storage does not offer it).
const NAMESPACE_VERBS: &[&str] = &[
    "create", "delete", "get", "list", "patch", "update", "watch",
];

/// One subresource: its name, the group/version/kind of its body, its verbs.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Subresource {
    pub(crate) name: &'static str,
    pub(crate) group: &'static str,
    pub(crate) version: &'static str,
    pub(crate) kind: &'static str,
    pub(crate) verbs: &'static [&'static str],
}

pub(crate) const STATUS: Subresource = Subresource {
    name: "status",
    group: "",
    version: "",
    kind: "",
    verbs: &["get", "patch", "update"],
};
pub(crate) const SCALE: Subresource = Subresource {
    name: "scale",
    group: "autoscaling",
    version: "v1",
    kind: "Scale",
    verbs: &["get", "patch", "update"],
};
const BINDING: Subresource = Subresource {
    name: "binding",
    group: "",
    version: "v1",
    kind: "Binding",
    verbs: &["create"],
};
const EVICTION: Subresource = Subresource {
    name: "eviction",
    group: "policy",
    version: "v1",
    kind: "Eviction",
    verbs: &["create"],
};

/// A served resource: a built-in kind (static names) or a custom resource (names from its CRD,
/// [`crate::serve::custom`]).
#[derive(Clone, Debug)]
pub(crate) struct ResourceInfo {
    pub(crate) kind: Kind,
    pub(crate) group: String,
    pub(crate) version: String,
    pub(crate) plural: String,
    pub(crate) singular: String,
    pub(crate) short_names: Vec<String>,
    pub(crate) categories: Vec<String>,
    pub(crate) subresources: Vec<Subresource>,
    /// The Table's columns after Name when they come from `additionalPrinterColumns` (custom
    /// resources, and the alpha kinds' Name + Age); empty: the built-in printers of the kind.
    pub(crate) columns: Vec<PrinterColumn>,
    /// A custom resource (no Go type: no strategic merge patch).
    pub(crate) custom: bool,
    /// A custom resource's `scale` subresource paths (built-in kinds: `None`, the fixed
    /// `spec.replicas` / `status.replicas` / `spec.selector`).
    pub(crate) scale: Option<k8s_types::apiextensions::ScaleSubresource>,
}

impl ResourceInfo {
    /// The verbs discovery lists for this resource.
    pub(crate) fn verbs(&self) -> &'static [&'static str] {
        if self.kind == Kind::Namespace {
            NAMESPACE_VERBS
        } else {
            VERBS
        }
    }

    /// `v1` or `apps/v1`.
    pub(crate) fn group_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// The subresource named `name`.
    pub(crate) fn subresource(&self, name: &str) -> Option<&Subresource> {
        self.subresources.iter().find(|s| s.name == name)
    }
}

#[allow(clippy::too_many_arguments)]
fn r(
    kind: Kind,
    group: &'static str,
    plural: &'static str,
    singular: &'static str,
    short_names: &'static [&'static str],
    categories: &'static [&'static str],
    subresources: &'static [Subresource],
    version: &'static str,
) -> ResourceInfo {
    let owned = |v: &[&str]| v.iter().map(|s| (*s).to_string()).collect();
    ResourceInfo {
        kind,
        group: group.into(),
        version: version.into(),
        plural: plural.into(),
        singular: singular.into(),
        short_names: owned(short_names),
        categories: owned(categories),
        subresources: subresources.to_vec(),
        columns: Vec::new(),
        custom: false,
        scale: None,
    }
}

/// `scheduling.k8s.io/v1alpha2` Workload and PodGroup print Name and Age (the columns their
/// Table is specified with in the issue; upstream's printers register no columns of their own
/// for them in the sources k8s-mini follows, so this is the CRD-style default).
fn alpha(mut info: ResourceInfo) -> ResourceInfo {
    info.columns = vec![PrinterColumn::age()];
    info
}

/// Every built-in served resource, in discovery order (groups as kube-apiserver lists them: core first).
pub(crate) fn all() -> Vec<ResourceInfo> {
    const ALL: &[&str] = &["all"];
    vec![
        r(Kind::Event, "", "events", "event", &["ev"], &[], &[], "v1"),
        r(
            Kind::LimitRange,
            "",
            "limitranges",
            "limitrange",
            &["limits"],
            &[],
            &[],
            "v1",
        ),
        r(
            Kind::Namespace,
            "",
            "namespaces",
            "namespace",
            &["ns"],
            &[],
            &[STATUS],
            "v1",
        ),
        r(
            Kind::Node,
            "",
            "nodes",
            "node",
            &["no"],
            &[],
            &[STATUS],
            "v1",
        ),
        r(
            Kind::PersistentVolumeClaim,
            "",
            "persistentvolumeclaims",
            "persistentvolumeclaim",
            &["pvc"],
            &[],
            &[STATUS],
            "v1",
        ),
        r(
            Kind::Pod,
            "",
            "pods",
            "pod",
            &["po"],
            ALL,
            &[BINDING, EVICTION, STATUS],
            "v1",
        ),
        r(
            Kind::ResourceQuota,
            "",
            "resourcequotas",
            "resourcequota",
            &["quota"],
            &[],
            &[STATUS],
            "v1",
        ),
        r(
            Kind::Service,
            "",
            "services",
            "service",
            &["svc"],
            ALL,
            &[STATUS],
            "v1",
        ),
        r(
            Kind::ControllerRevision,
            "apps",
            "controllerrevisions",
            "controllerrevision",
            &[],
            &[],
            &[],
            "v1",
        ),
        r(
            Kind::DaemonSet,
            "apps",
            "daemonsets",
            "daemonset",
            &["ds"],
            ALL,
            &[STATUS],
            "v1",
        ),
        r(
            Kind::Deployment,
            "apps",
            "deployments",
            "deployment",
            &["deploy"],
            ALL,
            &[SCALE, STATUS],
            "v1",
        ),
        r(
            Kind::ReplicaSet,
            "apps",
            "replicasets",
            "replicaset",
            &["rs"],
            ALL,
            &[SCALE, STATUS],
            "v1",
        ),
        r(
            Kind::StatefulSet,
            "apps",
            "statefulsets",
            "statefulset",
            &["sts"],
            ALL,
            &[SCALE, STATUS],
            "v1",
        ),
        r(
            Kind::CronJob,
            "batch",
            "cronjobs",
            "cronjob",
            &["cj"],
            ALL,
            &[STATUS],
            "v1",
        ),
        r(Kind::Job, "batch", "jobs", "job", &[], ALL, &[STATUS], "v1"),
        r(
            Kind::Lease,
            "coordination.k8s.io",
            "leases",
            "lease",
            &[],
            &[],
            &[],
            "v1",
        ),
        r(
            Kind::EndpointSlice,
            "discovery.k8s.io",
            "endpointslices",
            "endpointslice",
            &[],
            &[],
            &[],
            "v1",
        ),
        r(
            Kind::RuntimeClass,
            "node.k8s.io",
            "runtimeclasses",
            "runtimeclass",
            &[],
            &[],
            &[],
            "v1",
        ),
        r(
            Kind::PodDisruptionBudget,
            "policy",
            "poddisruptionbudgets",
            "poddisruptionbudget",
            &["pdb"],
            &[],
            &[STATUS],
            "v1",
        ),
        r(
            k8s_types::apiextensions::crd_kind(),
            "apiextensions.k8s.io",
            "customresourcedefinitions",
            "customresourcedefinition",
            &["crd", "crds"],
            &["api-extensions"],
            &[STATUS],
            "v1",
        ),
        r(
            Kind::DeviceClass,
            "resource.k8s.io",
            "deviceclasses",
            "deviceclass",
            &[],
            &[],
            &[],
            "v1",
        ),
        r(
            Kind::ResourceClaim,
            "resource.k8s.io",
            "resourceclaims",
            "resourceclaim",
            &[],
            &[],
            &[STATUS],
            "v1",
        ),
        r(
            Kind::ResourceClaimTemplate,
            "resource.k8s.io",
            "resourceclaimtemplates",
            "resourceclaimtemplate",
            &[],
            &[],
            &[],
            "v1",
        ),
        r(
            Kind::ResourceSlice,
            "resource.k8s.io",
            "resourceslices",
            "resourceslice",
            &[],
            &[],
            &[],
            "v1",
        ),
        r(
            Kind::PriorityClass,
            "scheduling.k8s.io",
            "priorityclasses",
            "priorityclass",
            &["pc"],
            &[],
            &[],
            "v1",
        ),
        alpha(r(
            Kind::Workload,
            "scheduling.k8s.io",
            "workloads",
            "workload",
            &[],
            &[],
            &[],
            "v1alpha2",
        )),
        alpha(r(
            Kind::SchedulingPodGroup,
            "scheduling.k8s.io",
            "podgroups",
            "podgroup",
            &[],
            &[],
            &[STATUS],
            "v1alpha2",
        )),
        r(
            Kind::PodGroup,
            "scheduling.x-k8s.io",
            "podgroups",
            "podgroup",
            &["pg", "pgs"],
            &[],
            &[STATUS],
            "v1alpha1",
        ),
    ]
}

/// The groups other than the core one among `rs`, in discovery order (first appearance), each
/// with its versions, preferred first (kube-aware order, [`custom::version_priority`]).
pub(crate) fn groups(rs: &[ResourceInfo]) -> Vec<(String, Vec<String>)> {
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    for info in rs.iter().filter(|r| !r.group.is_empty()) {
        match out.iter_mut().find(|(g, _)| *g == info.group) {
            Some((_, vs)) => {
                if !vs.contains(&info.version) {
                    vs.push(info.version.clone());
                }
            }
            None => out.push((info.group.clone(), vec![info.version.clone()])),
        }
    }
    for (_, vs) in &mut out {
        vs.sort_by_key(|v| custom::version_priority(v));
    }
    out
}

/// The resource of `rs` served at `group`/`version` under `plural`.
pub(crate) fn find(
    rs: &[ResourceInfo],
    group: &str,
    version: &str,
    plural: &str,
) -> Option<ResourceInfo> {
    rs.iter()
        .find(|r| r.group == group && r.version == version && r.plural == plural)
        .cloned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_typed_kind_is_served_once_under_its_own_plural() {
        let all = all();
        for kind in Kind::TYPED
            .into_iter()
            .chain(Kind::ALPHA)
            .chain(Kind::HISTORY)
            .chain(Kind::RESOURCE)
        {
            let found: Vec<_> = all.iter().filter(|r| r.kind == kind).collect();
            assert_eq!(found.len(), 1, "{kind:?}");
            assert_eq!(found[0].plural, kind.plural());
            assert_eq!(found[0].group_version(), kind.api_version());
        }
        let groups = groups(&all);
        assert_eq!(groups[0], ("apps".to_string(), vec!["v1".to_string()]));
        // GA before alpha: v1 (PriorityClass) is the preferred version.
        let scheduling = groups.iter().find(|(g, _)| g == "scheduling.k8s.io");
        assert_eq!(scheduling.unwrap().1, ["v1", "v1alpha2"]);
        let crd = find(
            &all,
            "apiextensions.k8s.io",
            "v1",
            "customresourcedefinitions",
        );
        assert_eq!(crd.unwrap().kind, k8s_types::apiextensions::crd_kind());
    }
}
