//! [`Object`]: one enum over every kind k8s-mini knows, the unit the store and the apiserver move
//! around; [`Kind`] names the kinds with their REST resource names; [`Resource`] links each typed
//! struct to its variant.

use serde::{Deserialize, Serialize};

use crate::apps::{ControllerRevision, DaemonSet, Deployment, ReplicaSet, StatefulSet};
use crate::batch::{CronJob, Job};
use crate::coordination::Lease;
use crate::core::{
    Event, LimitRange, Namespace, Node, PersistentVolumeClaim, Pod, ResourceQuota, Service,
};
use crate::discovery::EndpointSlice;
use crate::meta::ObjectMeta;
use crate::node::RuntimeClass;
use crate::policy::PodDisruptionBudget;
use crate::resource::{DeviceClass, ResourceClaim, ResourceClaimTemplate, ResourceSlice};
use crate::scheduling::v1alpha2::{PodGroup as SchedulingPodGroup, Workload};
use crate::scheduling::{PodGroup, PriorityClass};

/// The kinds k8s-mini stores. `Other` is any other kind, kept unstructured (e.g. a ConfigMap in a
/// `kubectl get -o yaml` dump).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    /// `v1` Namespace (cluster-scoped).
    Namespace,
    /// `v1` Node (cluster-scoped).
    Node,
    /// `v1` Pod.
    Pod,
    /// `apps/v1` ReplicaSet.
    ReplicaSet,
    /// `apps/v1` Deployment.
    Deployment,
    /// `batch/v1` Job.
    Job,
    /// `apps/v1` DaemonSet.
    DaemonSet,
    /// `batch/v1` CronJob.
    CronJob,
    /// `apps/v1` StatefulSet.
    StatefulSet,
    /// `v1` PersistentVolumeClaim.
    PersistentVolumeClaim,
    /// `apps/v1` ControllerRevision.
    ControllerRevision,
    /// `scheduling.k8s.io/v1` PriorityClass (cluster-scoped).
    PriorityClass,
    /// `v1` Event.
    Event,
    /// `scheduling.x-k8s.io/v1alpha1` PodGroup.
    PodGroup,
    /// `scheduling.k8s.io/v1alpha2` Workload.
    Workload,
    /// `scheduling.k8s.io/v1alpha2` PodGroup (native gang scheduling).
    SchedulingPodGroup,
    /// `policy/v1` PodDisruptionBudget.
    PodDisruptionBudget,
    /// `coordination.k8s.io/v1` Lease.
    Lease,
    /// `v1` Service.
    Service,
    /// `discovery.k8s.io/v1` EndpointSlice.
    EndpointSlice,
    /// `v1` ResourceQuota.
    ResourceQuota,
    /// `v1` LimitRange.
    LimitRange,
    /// `node.k8s.io/v1` RuntimeClass (cluster-scoped).
    RuntimeClass,
    /// `resource.k8s.io/v1` DeviceClass (cluster-scoped).
    DeviceClass,
    /// `resource.k8s.io/v1` ResourceSlice (cluster-scoped).
    ResourceSlice,
    /// `resource.k8s.io/v1` ResourceClaim.
    ResourceClaim,
    /// `resource.k8s.io/v1` ResourceClaimTemplate.
    ResourceClaimTemplate,
    /// Any other kind: (apiVersion, kind, namespaced).
    Other {
        /// apiVersion.
        api_version: String,
        /// Kind.
        kind: String,
        /// Whether objects of this kind live in a namespace.
        namespaced: bool,
    },
}

impl Kind {
    /// The typed kinds, in the order output lists them.
    pub const TYPED: [Kind; 20] = [
        Kind::Namespace,
        Kind::PriorityClass,
        Kind::RuntimeClass,
        Kind::Node,
        Kind::ResourceQuota,
        Kind::LimitRange,
        Kind::Deployment,
        Kind::ReplicaSet,
        Kind::DaemonSet,
        Kind::StatefulSet,
        Kind::PersistentVolumeClaim,
        Kind::CronJob,
        Kind::Job,
        Kind::PodGroup,
        Kind::PodDisruptionBudget,
        Kind::Lease,
        Kind::Service,
        Kind::EndpointSlice,
        Kind::Pod,
        Kind::Event,
    ];

    /// The typed kinds of alpha API versions (`scheduling.k8s.io/v1alpha2`), not in
    /// [`Kind::TYPED`].
    pub const ALPHA: [Kind; 2] = [Kind::Workload, Kind::SchedulingPodGroup];

    /// The workloads' history (`apps/v1` ControllerRevision, written by the DaemonSet and
    /// StatefulSet controllers), not in [`Kind::TYPED`] (so the garbage collector's queue keys of
    /// the older kinds keep their indexes).
    pub const HISTORY: [Kind; 1] = [Kind::ControllerRevision];

    /// Dynamic Resource Allocation's kinds (`resource.k8s.io/v1`, GA since v1.34), not in
    /// [`Kind::TYPED`] (so the garbage collector's queue keys of the older kinds keep their
    /// indexes).
    pub const RESOURCE: [Kind; 4] = [
        Kind::DeviceClass,
        Kind::ResourceSlice,
        Kind::ResourceClaimTemplate,
        Kind::ResourceClaim,
    ];

    /// Every typed kind, in the order output lists them: [`Kind::TYPED`] with the alpha kinds
    /// (`scheduling.k8s.io/v1alpha2` Workload and PodGroup) after the coscheduling PodGroup and
    /// [`Kind::HISTORY`] after PersistentVolumeClaim, and DRA's [`Kind::RESOURCE`] (DeviceClass
    /// after RuntimeClass, ResourceSlice after Node, ResourceClaimTemplate and ResourceClaim
    /// before Pod).
    /// `serve` answers for all of them (and for CRDs and their custom resources).
    pub const ALL: [Kind; 27] = [
        Kind::Namespace,
        Kind::PriorityClass,
        Kind::RuntimeClass,
        Kind::DeviceClass,
        Kind::Node,
        Kind::ResourceSlice,
        Kind::ResourceQuota,
        Kind::LimitRange,
        Kind::Deployment,
        Kind::ReplicaSet,
        Kind::DaemonSet,
        Kind::StatefulSet,
        Kind::PersistentVolumeClaim,
        Kind::ControllerRevision,
        Kind::CronJob,
        Kind::Job,
        Kind::PodGroup,
        Kind::Workload,
        Kind::SchedulingPodGroup,
        Kind::PodDisruptionBudget,
        Kind::Lease,
        Kind::Service,
        Kind::EndpointSlice,
        Kind::ResourceClaimTemplate,
        Kind::ResourceClaim,
        Kind::Pod,
        Kind::Event,
    ];

    /// The kind name, e.g. `Pod`.
    pub fn name(&self) -> &str {
        match self {
            Kind::Namespace => "Namespace",
            Kind::Node => "Node",
            Kind::Pod => "Pod",
            Kind::ReplicaSet => "ReplicaSet",
            Kind::Deployment => "Deployment",
            Kind::Job => "Job",
            Kind::DaemonSet => "DaemonSet",
            Kind::CronJob => "CronJob",
            Kind::StatefulSet => "StatefulSet",
            Kind::PersistentVolumeClaim => "PersistentVolumeClaim",
            Kind::ControllerRevision => "ControllerRevision",
            Kind::PriorityClass => "PriorityClass",
            Kind::Event => "Event",
            Kind::PodGroup | Kind::SchedulingPodGroup => "PodGroup",
            Kind::Workload => "Workload",
            Kind::PodDisruptionBudget => "PodDisruptionBudget",
            Kind::Lease => "Lease",
            Kind::Service => "Service",
            Kind::EndpointSlice => "EndpointSlice",
            Kind::ResourceQuota => "ResourceQuota",
            Kind::LimitRange => "LimitRange",
            Kind::RuntimeClass => "RuntimeClass",
            Kind::DeviceClass => "DeviceClass",
            Kind::ResourceSlice => "ResourceSlice",
            Kind::ResourceClaim => "ResourceClaim",
            Kind::ResourceClaimTemplate => "ResourceClaimTemplate",
            Kind::Other { kind, .. } => kind,
        }
    }

    /// The apiVersion written on objects of this kind.
    pub fn api_version(&self) -> &str {
        match self {
            Kind::Namespace
            | Kind::Node
            | Kind::Pod
            | Kind::Event
            | Kind::Service
            | Kind::PersistentVolumeClaim
            | Kind::ResourceQuota
            | Kind::LimitRange => "v1",
            Kind::ReplicaSet
            | Kind::Deployment
            | Kind::DaemonSet
            | Kind::StatefulSet
            | Kind::ControllerRevision => "apps/v1",
            Kind::Job | Kind::CronJob => "batch/v1",
            Kind::PriorityClass => "scheduling.k8s.io/v1",
            Kind::PodGroup => "scheduling.x-k8s.io/v1alpha1",
            Kind::Workload | Kind::SchedulingPodGroup => "scheduling.k8s.io/v1alpha2",
            Kind::PodDisruptionBudget => "policy/v1",
            Kind::Lease => "coordination.k8s.io/v1",
            Kind::EndpointSlice => "discovery.k8s.io/v1",
            Kind::RuntimeClass => "node.k8s.io/v1",
            Kind::DeviceClass
            | Kind::ResourceSlice
            | Kind::ResourceClaim
            | Kind::ResourceClaimTemplate => crate::resource::API_VERSION,
            Kind::Other { api_version, .. } => api_version,
        }
    }

    /// The REST resource (plural, lowercase), e.g. `pods`; used in store keys and error messages
    /// (`pods "web-0" not found`).
    pub fn plural(&self) -> String {
        if let Some(p) = self.builtin_plural() {
            return p.to_string();
        }
        let Kind::Other { kind, .. } = self else {
            return String::new();
        };
        let lower = kind.to_ascii_lowercase();
        if lower.ends_with('s') {
            format!("{lower}es")
        } else if let Some(stem) = lower.strip_suffix('y') {
            format!("{stem}ies")
        } else {
            format!("{lower}s")
        }
    }

    /// The plural of a typed kind, without allocating; `None` for [`Kind::Other`].
    fn builtin_plural(&self) -> Option<&'static str> {
        match self {
            Kind::Namespace => Some("namespaces"),
            Kind::Node => Some("nodes"),
            Kind::Pod => Some("pods"),
            Kind::ReplicaSet => Some("replicasets"),
            Kind::Deployment => Some("deployments"),
            Kind::Job => Some("jobs"),
            Kind::DaemonSet => Some("daemonsets"),
            Kind::CronJob => Some("cronjobs"),
            Kind::StatefulSet => Some("statefulsets"),
            Kind::PersistentVolumeClaim => Some("persistentvolumeclaims"),
            Kind::ControllerRevision => Some("controllerrevisions"),
            Kind::PriorityClass => Some("priorityclasses"),
            Kind::Event => Some("events"),
            Kind::PodGroup | Kind::SchedulingPodGroup => Some("podgroups"),
            Kind::Workload => Some("workloads"),
            Kind::PodDisruptionBudget => Some("poddisruptionbudgets"),
            Kind::Lease => Some("leases"),
            Kind::Service => Some("services"),
            Kind::EndpointSlice => Some("endpointslices"),
            Kind::ResourceQuota => Some("resourcequotas"),
            Kind::LimitRange => Some("limitranges"),
            Kind::RuntimeClass => Some("runtimeclasses"),
            Kind::DeviceClass => Some("deviceclasses"),
            Kind::ResourceSlice => Some("resourceslices"),
            Kind::ResourceClaim => Some("resourceclaims"),
            Kind::ResourceClaimTemplate => Some("resourceclaimtemplates"),
            Kind::Other { .. } => None,
        }
    }

    /// The API group for error messages (`deployments.apps "web" not found`); empty for core.
    pub fn group(&self) -> &str {
        self.api_version()
            .rsplit_once('/')
            .map(|(g, _)| g)
            .unwrap_or("")
    }

    /// `plural.group` or `plural` for the core group, as upstream error messages print it.
    pub fn qualified_resource(&self) -> String {
        match self.group() {
            "" => self.plural(),
            g => format!("{}.{}", self.plural(), g),
        }
    }

    /// Whether objects of this kind live in a namespace.
    pub fn namespaced(&self) -> bool {
        match self {
            Kind::Namespace
            | Kind::Node
            | Kind::PriorityClass
            | Kind::RuntimeClass
            | Kind::DeviceClass
            | Kind::ResourceSlice => false,
            Kind::Other { namespaced, .. } => *namespaced,
            _ => true,
        }
    }

    /// Resolves a typed kind from `apiVersion` + `kind`; `None` for kinds k8s-mini does not type.
    pub fn typed(api_version: &str, kind: &str) -> Option<Kind> {
        let k = match (api_version, kind) {
            ("v1", "Namespace") => Kind::Namespace,
            ("v1", "Node") => Kind::Node,
            ("v1", "Pod") => Kind::Pod,
            ("v1", "Event") | ("events.k8s.io/v1", "Event") => Kind::Event,
            ("apps/v1", "ReplicaSet") => Kind::ReplicaSet,
            ("apps/v1", "Deployment") => Kind::Deployment,
            ("batch/v1", "Job") => Kind::Job,
            ("apps/v1", "DaemonSet") => Kind::DaemonSet,
            ("batch/v1", "CronJob") => Kind::CronJob,
            ("apps/v1", "StatefulSet") => Kind::StatefulSet,
            ("v1", "PersistentVolumeClaim") => Kind::PersistentVolumeClaim,
            ("apps/v1", "ControllerRevision") => Kind::ControllerRevision,
            ("scheduling.k8s.io/v1", "PriorityClass") => Kind::PriorityClass,
            ("scheduling.x-k8s.io/v1alpha1", "PodGroup") => Kind::PodGroup,
            ("scheduling.k8s.io/v1alpha2", "Workload") => Kind::Workload,
            ("scheduling.k8s.io/v1alpha2", "PodGroup") => Kind::SchedulingPodGroup,
            ("policy/v1", "PodDisruptionBudget") => Kind::PodDisruptionBudget,
            ("coordination.k8s.io/v1", "Lease") => Kind::Lease,
            ("v1", "Service") => Kind::Service,
            ("discovery.k8s.io/v1", "EndpointSlice") => Kind::EndpointSlice,
            ("v1", "ResourceQuota") => Kind::ResourceQuota,
            ("v1", "LimitRange") => Kind::LimitRange,
            ("node.k8s.io/v1", "RuntimeClass") => Kind::RuntimeClass,
            ("resource.k8s.io/v1", "DeviceClass") => Kind::DeviceClass,
            ("resource.k8s.io/v1", "ResourceSlice") => Kind::ResourceSlice,
            ("resource.k8s.io/v1", "ResourceClaim") => Kind::ResourceClaim,
            ("resource.k8s.io/v1", "ResourceClaimTemplate") => Kind::ResourceClaimTemplate,
            _ => return None,
        };
        Some(k)
    }

    /// The store key prefix for this kind, etcd-registry style: `/registry/pods/`.
    pub fn key_prefix(&self) -> String {
        let mut key = String::with_capacity(64);
        self.push_key_prefix(&mut key);
        key
    }

    /// Appends [`Kind::key_prefix`] to `key`. Every write computes a key, so this builds it with
    /// `push_str` instead of `format!`.
    fn push_key_prefix(&self, key: &mut String) {
        key.push_str("/registry/");
        let grouped = match self {
            Kind::Workload
            | Kind::SchedulingPodGroup
            | Kind::DeviceClass
            | Kind::ResourceSlice
            | Kind::ResourceClaim
            | Kind::ResourceClaimTemplate => true,
            Kind::Other { .. } => !self.group().is_empty(),
            _ => false,
        };
        if grouped {
            key.push_str(self.group());
            key.push('/');
        }
        match self.builtin_plural() {
            Some(p) => key.push_str(p),
            None => key.push_str(&self.plural()),
        }
        key.push('/');
    }

    /// The store key of one object: `/registry/pods/default/web-0`, `/registry/nodes/node-a`.
    pub fn key(&self, namespace: &str, name: &str) -> String {
        let mut key = String::with_capacity(40 + namespace.len() + name.len());
        self.push_key_prefix(&mut key);
        if self.namespaced() {
            key.push_str(namespace);
            key.push('/');
        }
        key.push_str(name);
        key
    }
}

/// Built-in Kubernetes kinds that k8s-mini keeps in the store but does not simulate (name,
/// namespaced). A dump containing them loads with a warning.
pub const UNSIMULATED_BUILTIN_KINDS: &[(&str, bool)] = &[
    ("Endpoints", true),
    ("ConfigMap", true),
    ("Secret", true),
    ("ServiceAccount", true),
    ("PersistentVolume", false),
    ("StorageClass", false),
    ("Ingress", true),
    ("IngressClass", false),
    ("NetworkPolicy", true),
    ("Role", true),
    ("RoleBinding", true),
    ("ClusterRole", false),
    ("ClusterRoleBinding", false),
    ("HorizontalPodAutoscaler", true),
    ("PodTemplate", true),
    ("ReplicationController", true),
    ("CSIDriver", false),
    ("CSINode", false),
    ("MutatingWebhookConfiguration", false),
    ("ValidatingWebhookConfiguration", false),
    ("APIService", false),
    ("ComponentStatus", false),
    // The rest of v1.32's built-in kinds (`kubectl api-resources`), so that a whole-cluster dump
    // loads: storage, certificates, flow control, admission policies, discovery (DRA's kinds
    // are typed: `Kind::RESOURCE`).
    ("CSIStorageCapacity", true),
    ("VolumeAttachment", false),
    ("CertificateSigningRequest", false),
    ("FlowSchema", false),
    ("PriorityLevelConfiguration", false),
    ("ValidatingAdmissionPolicy", false),
    ("ValidatingAdmissionPolicyBinding", false),
    ("MutatingAdmissionPolicy", false),
    ("MutatingAdmissionPolicyBinding", false),
    ("IPAddress", false),
    ("ServiceCIDR", false),
    ("VolumeAttributesClass", false),
];

/// An object of a kind k8s-mini does not type: metadata is read, everything else is kept verbatim.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Unstructured {
    /// apiVersion.
    #[serde(default)]
    pub api_version: String,
    /// kind.
    #[serde(default)]
    pub kind: String,
    /// Metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// Every other top-level field (spec, status, data, ...), kept as given.
    #[serde(flatten)]
    pub rest: std::collections::BTreeMap<String, serde_json::Value>,
}

/// Any stored object.
///
/// Every stored object is an `Arc<Object>`, whose allocation is the size of the largest variant
/// whatever the kind. Every variant is boxed, so the enum is two words: each stored version of a
/// Pod costs a 32-byte `Arc` slot and its own box instead of a 736-byte slot sized for the largest
/// inline kind (an Event, 712 bytes, and the Pod's box besides), and moving an `Object` copies 16
/// bytes (`object_size` in this module's tests holds the bound).
#[derive(Clone, Debug, PartialEq)]
pub enum Object {
    /// A Namespace.
    Namespace(Box<Namespace>),
    /// A Node.
    Node(Box<Node>),
    /// A Pod.
    Pod(Box<Pod>),
    /// A ReplicaSet.
    ReplicaSet(Box<ReplicaSet>),
    /// A Deployment.
    Deployment(Box<Deployment>),
    /// A Job.
    Job(Box<Job>),
    /// A DaemonSet.
    DaemonSet(Box<DaemonSet>),
    /// A CronJob.
    CronJob(Box<CronJob>),
    /// A StatefulSet.
    StatefulSet(Box<StatefulSet>),
    /// A PersistentVolumeClaim.
    PersistentVolumeClaim(Box<PersistentVolumeClaim>),
    /// A ControllerRevision.
    ControllerRevision(Box<ControllerRevision>),
    /// A PriorityClass.
    PriorityClass(Box<PriorityClass>),
    /// An Event.
    Event(Box<Event>),
    /// A PodGroup.
    PodGroup(Box<PodGroup>),
    /// A `scheduling.k8s.io/v1alpha2` Workload.
    Workload(Box<Workload>),
    /// A `scheduling.k8s.io/v1alpha2` PodGroup.
    SchedulingPodGroup(Box<SchedulingPodGroup>),
    /// A PodDisruptionBudget.
    PodDisruptionBudget(Box<PodDisruptionBudget>),
    /// A Lease.
    Lease(Box<Lease>),
    /// A Service.
    Service(Box<Service>),
    /// An EndpointSlice.
    EndpointSlice(Box<EndpointSlice>),
    /// A ResourceQuota.
    ResourceQuota(Box<ResourceQuota>),
    /// A LimitRange.
    LimitRange(Box<LimitRange>),
    /// A RuntimeClass.
    RuntimeClass(Box<RuntimeClass>),
    /// A `resource.k8s.io/v1` DeviceClass.
    DeviceClass(Box<DeviceClass>),
    /// A `resource.k8s.io/v1` ResourceSlice.
    ResourceSlice(Box<ResourceSlice>),
    /// A `resource.k8s.io/v1` ResourceClaim.
    ResourceClaim(Box<ResourceClaim>),
    /// A `resource.k8s.io/v1` ResourceClaimTemplate.
    ResourceClaimTemplate(Box<ResourceClaimTemplate>),
    /// Anything else, with whether it is namespaced.
    Other(Box<Unstructured>, bool),
}

macro_rules! each_variant {
    ($self:expr, $o:ident => $e:expr) => {
        match $self {
            Object::Namespace($o) => $e,
            Object::Node($o) => $e,
            Object::Pod($o) => $e,
            Object::ReplicaSet($o) => $e,
            Object::Deployment($o) => $e,
            Object::Job($o) => $e,
            Object::DaemonSet($o) => $e,
            Object::CronJob($o) => $e,
            Object::StatefulSet($o) => $e,
            Object::PersistentVolumeClaim($o) => $e,
            Object::ControllerRevision($o) => $e,
            Object::PriorityClass($o) => $e,
            Object::Event($o) => $e,
            Object::PodGroup($o) => $e,
            Object::Workload($o) => $e,
            Object::SchedulingPodGroup($o) => $e,
            Object::PodDisruptionBudget($o) => $e,
            Object::Lease($o) => $e,
            Object::Service($o) => $e,
            Object::EndpointSlice($o) => $e,
            Object::ResourceQuota($o) => $e,
            Object::LimitRange($o) => $e,
            Object::RuntimeClass($o) => $e,
            Object::DeviceClass($o) => $e,
            Object::ResourceSlice($o) => $e,
            Object::ResourceClaim($o) => $e,
            Object::ResourceClaimTemplate($o) => $e,
            Object::Other($o, _) => $e,
        }
    };
}

impl Object {
    /// The object's metadata.
    pub fn meta(&self) -> &ObjectMeta {
        each_variant!(self, o => &o.metadata)
    }

    /// The object's metadata, mutably.
    pub fn meta_mut(&mut self) -> &mut ObjectMeta {
        each_variant!(self, o => &mut o.metadata)
    }

    /// The object's kind.
    pub fn kind(&self) -> Kind {
        match self {
            Object::Namespace(_) => Kind::Namespace,
            Object::Node(_) => Kind::Node,
            Object::Pod(_) => Kind::Pod,
            Object::ReplicaSet(_) => Kind::ReplicaSet,
            Object::Deployment(_) => Kind::Deployment,
            Object::Job(_) => Kind::Job,
            Object::DaemonSet(_) => Kind::DaemonSet,
            Object::CronJob(_) => Kind::CronJob,
            Object::StatefulSet(_) => Kind::StatefulSet,
            Object::PersistentVolumeClaim(_) => Kind::PersistentVolumeClaim,
            Object::ControllerRevision(_) => Kind::ControllerRevision,
            Object::PriorityClass(_) => Kind::PriorityClass,
            Object::Event(_) => Kind::Event,
            Object::PodGroup(_) => Kind::PodGroup,
            Object::Workload(_) => Kind::Workload,
            Object::SchedulingPodGroup(_) => Kind::SchedulingPodGroup,
            Object::PodDisruptionBudget(_) => Kind::PodDisruptionBudget,
            Object::Lease(_) => Kind::Lease,
            Object::Service(_) => Kind::Service,
            Object::EndpointSlice(_) => Kind::EndpointSlice,
            Object::ResourceQuota(_) => Kind::ResourceQuota,
            Object::LimitRange(_) => Kind::LimitRange,
            Object::RuntimeClass(_) => Kind::RuntimeClass,
            Object::DeviceClass(_) => Kind::DeviceClass,
            Object::ResourceSlice(_) => Kind::ResourceSlice,
            Object::ResourceClaim(_) => Kind::ResourceClaim,
            Object::ResourceClaimTemplate(_) => Kind::ResourceClaimTemplate,
            Object::Other(u, namespaced) => Kind::Other {
                api_version: u.api_version.clone(),
                kind: u.kind.clone(),
                namespaced: *namespaced,
            },
        }
    }

    /// The store key of this object.
    pub fn key(&self) -> String {
        let m = self.meta();
        self.kind().key(m.namespace(), &m.name)
    }

    /// Sets `apiVersion` and `kind` to this variant's (objects built in code often leave them empty).
    pub fn set_type_meta(&mut self) {
        let kind = self.kind();
        let (av, k) = (kind.api_version(), kind.name());
        // Written only when different: most objects arrive with their type meta set, and every
        // create goes through here.
        match self {
            Object::Other(..) => {}
            _ => each_variant!(self, o => {
                if o.api_version != av {
                    o.api_version = av.into();
                }
                if o.kind != k {
                    o.kind = k.into();
                }
            }),
        }
    }

    /// `namespace/name` (or `name` for cluster-scoped objects).
    pub fn display_name(&self) -> String {
        let m = self.meta();
        match m.namespace() {
            "" => m.name.clone(),
            ns => format!("{ns}/{}", m.name),
        }
    }

    /// The object as a JSON value, as `kubectl get -o json` prints it.
    pub fn to_json(&self) -> serde_json::Value {
        let v = each_variant!(self, o => serde_json::to_value(o));
        // Serializing these plain data types cannot fail (no non-string map keys, no custom errors).
        v.unwrap_or(serde_json::Value::Null)
    }
}

impl Serialize for Object {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        each_variant!(self, o => o.serialize(s))
    }
}

/// Links a typed API struct to its [`Object`] variant and [`Kind`].
pub trait Resource: Sized + Clone {
    /// The kind.
    const KIND: Kind;
    /// Wraps into an [`Object`].
    fn into_object(self) -> Object;
    /// Unwraps from an [`Object`] of the same kind.
    fn from_object(obj: Object) -> Option<Self>;
    /// Borrows from an [`Object`] of the same kind.
    fn from_object_ref(obj: &Object) -> Option<&Self>;
    /// Metadata.
    fn meta(&self) -> &ObjectMeta;
}

macro_rules! impl_resource {
    ($t:ident) => {
        impl_resource!($t, $t);
    };
    (boxed $t:ident) => {
        impl Resource for $t {
            const KIND: Kind = Kind::$t;
            fn into_object(self) -> Object {
                Object::$t(Box::new(self))
            }
            fn from_object(obj: Object) -> Option<Self> {
                match obj {
                    Object::$t(o) => Some(*o),
                    _ => None,
                }
            }
            fn from_object_ref(obj: &Object) -> Option<&Self> {
                match obj {
                    Object::$t(o) => Some(o),
                    _ => None,
                }
            }
            fn meta(&self) -> &ObjectMeta {
                &self.metadata
            }
        }
    };
    ($t:ident, $v:ident) => {
        impl Resource for $t {
            const KIND: Kind = Kind::$v;
            fn into_object(self) -> Object {
                Object::$v(self)
            }
            fn from_object(obj: Object) -> Option<Self> {
                match obj {
                    Object::$v(o) => Some(o),
                    _ => None,
                }
            }
            fn from_object_ref(obj: &Object) -> Option<&Self> {
                match obj {
                    Object::$v(o) => Some(o),
                    _ => None,
                }
            }
            fn meta(&self) -> &ObjectMeta {
                &self.metadata
            }
        }
    };
}

impl_resource!(boxed Namespace);
impl_resource!(boxed Node);
impl_resource!(boxed Pod);
impl_resource!(boxed ReplicaSet);
impl_resource!(boxed Deployment);
impl_resource!(boxed Job);
impl_resource!(boxed DaemonSet);
impl_resource!(boxed CronJob);
impl_resource!(boxed StatefulSet);
impl_resource!(boxed PersistentVolumeClaim);
impl_resource!(boxed ControllerRevision);
impl_resource!(boxed PriorityClass);
impl_resource!(boxed Event);
impl_resource!(boxed PodGroup);
impl_resource!(boxed Workload);
impl_resource!(boxed SchedulingPodGroup);
impl_resource!(boxed PodDisruptionBudget);
impl_resource!(boxed Lease);
impl_resource!(boxed Service);
impl_resource!(boxed EndpointSlice);
impl_resource!(boxed ResourceQuota);
impl_resource!(boxed LimitRange);
impl_resource!(boxed RuntimeClass);
impl_resource!(boxed DeviceClass);
impl_resource!(boxed ResourceSlice);
impl_resource!(boxed ResourceClaim);
impl_resource!(boxed ResourceClaimTemplate);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_follow_the_etcd_registry_layout() {
        assert_eq!(
            Kind::Pod.key("default", "web-0"),
            "/registry/pods/default/web-0"
        );
        assert_eq!(Kind::Node.key("", "node-a"), "/registry/nodes/node-a");
        assert_eq!(Kind::Deployment.qualified_resource(), "deployments.apps");
        assert_eq!(Kind::Pod.qualified_resource(), "pods");
        assert_eq!(
            Kind::Service.key("default", "web"),
            "/registry/services/default/web"
        );
        // Upstream stores EndpointSlices under their bare resource name.
        assert_eq!(
            Kind::EndpointSlice.key("default", "web-abcde"),
            "/registry/endpointslices/default/web-abcde"
        );
        assert_eq!(
            Kind::EndpointSlice.qualified_resource(),
            "endpointslices.discovery.k8s.io"
        );
        assert_eq!(
            Kind::typed("discovery.k8s.io/v1", "EndpointSlice"),
            Some(Kind::EndpointSlice)
        );
        let policy = Kind::Other {
            api_version: "networking.k8s.io/v1".into(),
            kind: "NetworkPolicy".into(),
            namespaced: true,
        };
        assert_eq!(policy.plural(), "networkpolicies");
        assert_eq!(
            policy.key("default", "deny"),
            "/registry/networking.k8s.io/networkpolicies/default/deny"
        );
        let config_map = Kind::Other {
            api_version: "v1".into(),
            kind: "ConfigMap".into(),
            namespaced: true,
        };
        assert_eq!(config_map.key_prefix(), "/registry/configmaps/");
        let class = Kind::Other {
            api_version: "storage.k8s.io/v1".into(),
            kind: "StorageClass".into(),
            namespaced: false,
        };
        assert_eq!(
            class.key("", "fast"),
            "/registry/storage.k8s.io/storageclasses/fast"
        );
        assert_eq!(
            Kind::DeviceClass.key("", "gpu"),
            "/registry/resource.k8s.io/deviceclasses/gpu"
        );
        // The two PodGroup kinds (coscheduling's and native gang scheduling's) never share a key.
        assert_eq!(
            Kind::PodGroup.key("default", "g"),
            "/registry/podgroups/default/g"
        );
        assert_eq!(
            Kind::SchedulingPodGroup.key("default", "g"),
            "/registry/scheduling.k8s.io/podgroups/default/g"
        );
        assert_eq!(
            Kind::typed("scheduling.k8s.io/v1alpha2", "Workload"),
            Some(Kind::Workload)
        );
        assert_eq!(
            Kind::SchedulingPodGroup.qualified_resource(),
            "podgroups.scheduling.k8s.io"
        );
    }

    #[test]
    fn object_size() {
        // Every variant is boxed, so the enum is two words (a tag and a pointer; `Other`'s flag
        // fits beside the tag) whatever the kind: an `Arc<Object>` slot in the store is 32 bytes,
        // not the 736 an inline Event made every stored object cost. Keeps a new inline variant
        // from growing every stored object again.
        assert_eq!(size_of::<Object>(), 2 * size_of::<usize>());
    }

    #[test]
    fn event_size() {
        // An Event is the most numerous object (four per pod): at 640 bytes it takes mimalloc's
        // 640-byte size class; at 664 bytes (before `finalizers` became a `ThinVec` and
        // `fieldPath` a boxed string) it took the 768-byte one, 128 bytes more per Event.
        assert!(size_of::<crate::core::event::Event>() <= 640);
    }

    #[test]
    fn set_type_meta_fills_api_version_and_kind() {
        let mut o = Pod::default().into_object();
        o.set_type_meta();
        let json = o.to_json();
        assert_eq!(json["apiVersion"], "v1");
        assert_eq!(json["kind"], "Pod");
    }
}

/// A typed view of a shared object: an `Arc<Object>` (as the store, watches and informers hand them
/// out) known to hold an `R`. Cloning it clones the `Arc`, never the object.
#[derive(Debug, PartialEq)]
pub struct Shared<R> {
    obj: std::sync::Arc<Object>,
    kind: std::marker::PhantomData<R>,
}

impl<R> Clone for Shared<R> {
    fn clone(&self) -> Self {
        Shared {
            obj: std::sync::Arc::clone(&self.obj),
            kind: std::marker::PhantomData,
        }
    }
}

impl<R: Resource> Shared<R> {
    /// The view, when `obj` holds an `R`.
    pub fn new(obj: std::sync::Arc<Object>) -> Option<Shared<R>> {
        R::from_object_ref(&obj)?;
        Some(Shared {
            obj,
            kind: std::marker::PhantomData,
        })
    }

    /// Wraps an owned `R`.
    pub fn from_typed(r: R) -> Shared<R> {
        Shared {
            obj: std::sync::Arc::new(r.into_object()),
            kind: std::marker::PhantomData,
        }
    }

    /// The shared object.
    pub fn object(&self) -> &std::sync::Arc<Object> {
        &self.obj
    }
}

impl<R> Shared<R> {
    /// True when both views share one object (`Arc::ptr_eq`).
    pub fn ptr_eq(a: &Shared<R>, b: &Shared<R>) -> bool {
        std::sync::Arc::ptr_eq(&a.obj, &b.obj)
    }
}

impl<R: Resource> From<R> for Shared<R> {
    fn from(r: R) -> Self {
        Shared::from_typed(r)
    }
}

impl<R: Resource + Default> Default for Shared<R> {
    fn default() -> Self {
        Shared::from_typed(R::default())
    }
}

impl<R: Resource + Serialize> Serialize for Shared<R> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        (**self).serialize(s)
    }
}

impl<R: Resource> std::ops::Deref for Shared<R> {
    type Target = R;
    fn deref(&self) -> &R {
        match R::from_object_ref(&self.obj) {
            Some(r) => r,
            // `Shared::new` checked the variant and the object is never mutated.
            None => unreachable!("Shared<R> holds an R"),
        }
    }
}
