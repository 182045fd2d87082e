//! The REST resources `serve` answers for: one row per kind k8s-mini types, with what discovery
//! lists about it (upstream `kubectl api-resources` of v1.32: names, short names, verbs,
//! categories, subresources) and the path parts that name it.

use k8s_types::object::Kind;

/// The verbs of a served resource (upstream's storage of these kinds has them all but
/// `deletecollection`, which `serve` does not offer).
pub(crate) const VERBS: &[&str] = &[
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

const STATUS: Subresource = Subresource {
    name: "status",
    group: "",
    version: "",
    kind: "",
    verbs: &["get", "patch", "update"],
};
const SCALE: Subresource = Subresource {
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

/// A served resource.
#[derive(Clone, Debug)]
pub(crate) struct ResourceInfo {
    pub(crate) kind: Kind,
    pub(crate) group: &'static str,
    pub(crate) version: &'static str,
    pub(crate) plural: &'static str,
    pub(crate) singular: &'static str,
    pub(crate) short_names: &'static [&'static str],
    pub(crate) categories: &'static [&'static str],
    pub(crate) subresources: &'static [Subresource],
}

impl ResourceInfo {
    /// `v1` or `apps/v1`.
    pub(crate) fn group_version(&self) -> String {
        if self.group.is_empty() {
            self.version.to_string()
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
    ResourceInfo {
        kind,
        group,
        version,
        plural,
        singular,
        short_names,
        categories,
        subresources,
    }
}

/// Every served resource, in discovery order (groups as kube-apiserver lists them: core first).
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
            Kind::PriorityClass,
            "scheduling.k8s.io",
            "priorityclasses",
            "priorityclass",
            &["pc"],
            &[],
            &[],
            "v1",
        ),
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

/// The groups other than the core one, in discovery order, each with its one version.
pub(crate) fn groups() -> Vec<(&'static str, &'static str)> {
    let mut out: Vec<(&str, &str)> = Vec::new();
    for info in all() {
        if !info.group.is_empty() && !out.iter().any(|(g, _)| *g == info.group) {
            out.push((info.group, info.version));
        }
    }
    out
}

/// The resource served at `group`/`version` under `plural`.
pub(crate) fn find(group: &str, version: &str, plural: &str) -> Option<ResourceInfo> {
    all()
        .into_iter()
        .find(|r| r.group == group && r.version == version && r.plural == plural)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_typed_kind_is_served_once_under_its_own_plural() {
        let all = all();
        for kind in Kind::TYPED {
            let found: Vec<_> = all.iter().filter(|r| r.kind == kind).collect();
            assert_eq!(found.len(), 1, "{kind:?}");
            assert_eq!(found[0].plural, kind.plural());
            assert_eq!(found[0].group_version(), kind.api_version());
        }
        assert_eq!(
            groups().first().copied(),
            Some(("apps", "v1")),
            "apps is the first named group"
        );
    }
}
