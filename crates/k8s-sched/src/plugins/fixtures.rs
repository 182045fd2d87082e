//! Test fixtures for the plugins that read the whole snapshot (PodTopologySpread,
//! InterPodAffinity, ImageLocality): pod and node builders shaped like upstream's
//! `pkg/scheduler/testing` wrappers (`st.MakePod().Label(..).SpreadConstraint(..)`,
//! `st.MakeNode().Label(..)`), a snapshot builder, a read-only in-memory apiserver and a
//! [`FakeHandle`] (tests only).

use k8s_types::object::Shared;
use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_sched_framework::{
    CycleState, Handle, NodeInfo, PodInfo, Status as FwStatus, WaitingPodInfo,
};
use k8s_types::apiserver::{ApiClient, DeleteOptions};
use k8s_types::core::{
    Affinity, Binding, Container, Node, NodeAffinity, NodeSelector, NodeSelectorRequirement,
    NodeSelectorTerm, Pod, PodAffinity, PodAffinityTerm, Taint, Toleration,
    TopologySpreadConstraint, WeightedPodAffinityTerm,
};
use k8s_types::labels::{LabelSelector, LabelSelectorRequirement};
use k8s_types::meta::OwnerReference;
use k8s_types::object::{Kind, Object};
use k8s_types::status::Status;
use k8s_types::store::WatchEvent;
use k8s_types::Tick;

/// A selector with one requirement.
pub fn req_selector(key: &str, op: &str, values: &[&str]) -> LabelSelector {
    LabelSelector {
        match_labels: BTreeMap::new(),
        match_expressions: vec![LabelSelectorRequirement {
            key: key.into(),
            operator: op.into(),
            values: values.iter().map(|v| v.to_string()).collect(),
        }],
    }
}

/// `st.MakeLabelSelector().Exists(key)`.
pub fn exists(key: &str) -> LabelSelector {
    req_selector(key, "Exists", &[])
}

/// String map from pairs.
pub fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// `st.MakePod()`: namespace `""` unless set, like upstream's wrapper.
#[derive(Clone, Debug, Default)]
pub struct PodBuilder(pub Pod);

/// Which affinity list a term goes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TermKind {
    /// requiredDuringSchedulingIgnoredDuringExecution.
    Required,
    /// preferredDuringSchedulingIgnoredDuringExecution with this weight.
    Preferred(i32),
}

impl PodBuilder {
    /// A pod named `name`.
    pub fn new(name: &str) -> PodBuilder {
        let mut p = Pod::default();
        p.metadata.name = name.into();
        p.spec.containers.push(Container {
            name: "c".into(),
            ..Default::default()
        });
        PodBuilder(p)
    }
    /// Sets the namespace.
    pub fn namespace(mut self, ns: &str) -> Self {
        self.0.metadata.namespace = Some(ns.into());
        self
    }
    /// Adds a label.
    pub fn label(mut self, k: &str, v: &str) -> Self {
        self.0.metadata.labels.insert(k.into(), v.into());
        self
    }
    /// Binds the pod to `node`.
    pub fn node(mut self, node: &str) -> Self {
        self.0.spec.node_name = Some(node.into());
        self
    }
    /// Marks the pod as being deleted.
    pub fn terminating(mut self) -> Self {
        self.0.metadata.deletion_timestamp = Some("1970-01-01T00:00:01Z".into());
        self
    }
    /// `SpreadConstraint(maxSkew, key, when, selector, minDomains, nodeAffinityPolicy,
    /// nodeTaintsPolicy, matchLabelKeys)`.
    #[allow(clippy::too_many_arguments)]
    pub fn spread(
        mut self,
        max_skew: i32,
        key: &str,
        when: &str,
        selector: Option<LabelSelector>,
        min_domains: Option<i32>,
        node_affinity_policy: Option<&str>,
        node_taints_policy: Option<&str>,
        match_label_keys: &[&str],
    ) -> Self {
        self.0
            .spec
            .topology_spread_constraints
            .push(TopologySpreadConstraint {
                max_skew,
                topology_key: key.into(),
                when_unsatisfiable: when.into(),
                label_selector: selector,
                min_domains,
                match_label_keys: match_label_keys.iter().map(|s| s.to_string()).collect(),
                node_affinity_policy: node_affinity_policy.map(str::to_string),
                node_taints_policy: node_taints_policy.map(str::to_string),
            });
        self
    }
    /// A spread constraint with only the common fields.
    pub fn simple_spread(self, max_skew: i32, key: &str, when: &str, sel: LabelSelector) -> Self {
        self.spread(max_skew, key, when, Some(sel), None, None, None, &[])
    }
    /// `NodeSelector(map)`.
    pub fn node_selector(mut self, pairs: &[(&str, &str)]) -> Self {
        self.0.spec.node_selector = map(pairs);
        self
    }
    /// `NodeAffinityIn(key, values)` / `NodeAffinityNotIn` (matchExpressions).
    pub fn node_affinity(mut self, key: &str, op: &str, values: &[&str]) -> Self {
        let term = NodeSelectorTerm {
            match_expressions: vec![NodeSelectorRequirement {
                key: key.into(),
                operator: op.into(),
                values: values.iter().map(|v| v.to_string()).collect(),
            }],
            match_fields: vec![],
        };
        let aff = self.0.spec.affinity.get_or_insert_with(Affinity::default);
        aff.node_affinity = Some(NodeAffinity {
            required_during_scheduling_ignored_during_execution: Some(NodeSelector {
                node_selector_terms: vec![term],
            }),
            preferred_during_scheduling_ignored_during_execution: vec![],
        });
        self
    }
    /// `Toleration(key)` (operator Exists, any effect).
    pub fn toleration(mut self, key: &str) -> Self {
        self.0.spec.tolerations.push(Toleration {
            key: key.into(),
            operator: "Exists".into(),
            ..Default::default()
        });
        self
    }
    /// A controller owner reference.
    pub fn owner(mut self, api_version: &str, kind: &str, name: &str) -> Self {
        self.0.metadata.owner_references.push(OwnerReference {
            api_version: api_version.into(),
            kind: kind.into(),
            name: name.into(),
            uid: format!("uid-{name}"),
            controller: Some(true),
            block_owner_deletion: None,
        });
        self
    }
    /// Adds a pod (anti-)affinity term.
    pub fn pod_affinity_term(mut self, anti: bool, kind: TermKind, term: PodAffinityTerm) -> Self {
        let aff = self.0.spec.affinity.get_or_insert_with(Affinity::default);
        let slot = if anti {
            &mut aff.pod_anti_affinity
        } else {
            &mut aff.pod_affinity
        };
        let pa = slot.get_or_insert_with(PodAffinity::default);
        match kind {
            TermKind::Required => pa
                .required_during_scheduling_ignored_during_execution
                .push(term),
            TermKind::Preferred(weight) => pa
                .preferred_during_scheduling_ignored_during_execution
                .push(WeightedPodAffinityTerm {
                    weight,
                    pod_affinity_term: term,
                }),
        }
        self
    }
    /// `PodAffinityIn(key, topologyKey, values, kind)` and friends: a term whose selector has one
    /// requirement.
    pub fn affinity(
        self,
        anti: bool,
        kind: TermKind,
        key: &str,
        op: &str,
        values: &[&str],
        topology_key: &str,
    ) -> Self {
        self.pod_affinity_term(
            anti,
            kind,
            PodAffinityTerm {
                label_selector: Some(req_selector(key, op, values)),
                topology_key: topology_key.into(),
                ..Default::default()
            },
        )
    }
    /// Sets the regular containers' images (one container each).
    pub fn images(mut self, images: &[&str]) -> Self {
        self.0.spec.containers = images
            .iter()
            .map(|i| Container {
                name: "c".into(),
                image: (*i).into(),
                ..Default::default()
            })
            .collect();
        self
    }
    /// Sets the init containers' images.
    pub fn init_images(mut self, images: &[&str]) -> Self {
        self.0.spec.init_containers = images
            .iter()
            .map(|i| Container {
                name: "i".into(),
                image: (*i).into(),
                ..Default::default()
            })
            .collect();
        self
    }
    /// The pod.
    pub fn obj(self) -> Pod {
        self.0
    }
}

/// `st.MakeNode()`.
#[derive(Clone, Debug, Default)]
pub struct NodeBuilder(pub Node);

impl NodeBuilder {
    /// A node named `name`.
    pub fn new(name: &str) -> NodeBuilder {
        let mut n = Node::default();
        n.metadata.name = name.into();
        NodeBuilder(n)
    }
    /// Adds a label.
    pub fn label(mut self, k: &str, v: &str) -> Self {
        self.0.metadata.labels.insert(k.into(), v.into());
        self
    }
    /// Adds labels.
    pub fn labels(mut self, pairs: &[(&str, &str)]) -> Self {
        self.0.metadata.labels.extend(map(pairs));
        self
    }
    /// Adds a taint.
    pub fn taint(mut self, key: &str, effect: &str) -> Self {
        self.0.spec.taints.push(Taint {
            key: key.into(),
            value: String::new(),
            effect: effect.into(),
            time_added: None,
        });
        self
    }
    /// Adds an image entry (`status.images[]`) with these names and size in bytes.
    pub fn image(mut self, names: &[&str], size_bytes: i64) -> Self {
        self.0.status.images.push(serde_json::json!({
            "names": names,
            "sizeBytes": size_bytes,
        }));
        self
    }
    /// The node.
    pub fn obj(self) -> Node {
        self.0
    }
}

/// NodeInfos for `nodes` (in the given order) with `pods` placed on their `nodeName`.
pub fn snapshot(nodes: &[Node], pods: &[Pod]) -> Vec<NodeInfo> {
    let mut infos: Vec<NodeInfo> = nodes
        .iter()
        .map(|n| NodeInfo::new(Arc::new(n.clone())))
        .collect();
    for (i, p) in pods.iter().enumerate() {
        let mut p = p.clone();
        if p.metadata.uid.is_none() {
            p.metadata.uid = Some(format!("pod-uid-{i}"));
        }
        if let Some(ni) = infos
            .iter_mut()
            .find(|ni| Some(ni.name()) == p.spec.node_name.as_deref())
        {
            ni.add_pod(PodInfo::new(Shared::from_typed(p)));
        }
    }
    infos
}

/// A read-only apiserver over a fixed list of objects (list and get only; writes fail).
#[derive(Clone, Debug, Default)]
pub struct FakeApi {
    /// The objects.
    pub objects: Vec<Object>,
}

impl ApiClient for FakeApi {
    fn now(&self) -> Tick {
        0
    }
    fn revision(&self) -> i64 {
        0
    }
    fn create(&mut self, _obj: Object) -> Result<Object, Status> {
        Err(Status::bad_request("read-only test apiserver"))
    }
    fn get(&self, kind: &Kind, namespace: &str, name: &str) -> Result<Object, Status> {
        self.objects
            .iter()
            .find(|o| {
                &o.kind() == kind && o.meta().namespace() == namespace && o.meta().name == name
            })
            .cloned()
            .ok_or_else(|| Status::not_found(kind, name))
    }
    fn list(
        &self,
        kind: &Kind,
        namespace: Option<&str>,
        selector: Option<&LabelSelector>,
    ) -> Vec<Object> {
        self.objects
            .iter()
            .filter(|o| &o.kind() == kind)
            .filter(|o| namespace.is_none_or(|ns| o.meta().namespace() == ns))
            .filter(|o| selector.is_none_or(|s| s.matches(&o.meta().labels)))
            .cloned()
            .collect()
    }
    fn update(&mut self, _obj: Object) -> Result<Object, Status> {
        Err(Status::bad_request("read-only test apiserver"))
    }
    fn update_status(&mut self, _obj: Object) -> Result<Object, Status> {
        Err(Status::bad_request("read-only test apiserver"))
    }
    fn delete(
        &mut self,
        _kind: &Kind,
        _namespace: &str,
        _name: &str,
        _options: DeleteOptions,
    ) -> Result<Object, Status> {
        Err(Status::bad_request("read-only test apiserver"))
    }
    fn bind(&mut self, _binding: &Binding) -> Result<Pod, Status> {
        Err(Status::bad_request("read-only test apiserver"))
    }
    fn watch(&self, _kind: &Kind, _after_revision: i64) -> Result<Vec<WatchEvent>, Status> {
        Ok(Vec::new())
    }
}

/// A [`Handle`] over a fixed snapshot and a [`FakeApi`].
#[derive(Debug, Default)]
pub struct FakeHandle {
    /// The snapshot.
    pub nodes: Vec<NodeInfo>,
    /// The apiserver.
    pub api: FakeApi,
    /// What `runtime::node_arrays::node_generations` finds through the handle (`None` by
    /// default): the generations per node, their block maxima and the layout.
    pub generations: Option<crate::runtime::node_arrays::TestGenerations>,
    /// What [`Handle::pods`] lists (empty unless a test sets it).
    pub all_pods: Vec<Shared<Pod>>,
}

impl FakeHandle {
    /// A handle over `nodes` with `pods` placed on them, and the apiserver `objects`.
    pub fn new(nodes: &[Node], pods: &[Pod], objects: Vec<Object>) -> FakeHandle {
        FakeHandle {
            nodes: snapshot(nodes, pods),
            api: FakeApi { objects },
            generations: None,
            all_pods: Vec::new(),
        }
    }

    /// The snapshot's node named `name`.
    pub fn node(&self, name: &str) -> &NodeInfo {
        self.nodes
            .iter()
            .find(|n| n.name() == name)
            .unwrap_or_else(|| panic!("node {name} not in the snapshot"))
    }
}

impl Handle for FakeHandle {
    fn now(&self) -> Tick {
        0
    }
    fn scheduler_name(&self) -> &str {
        "default-scheduler"
    }
    fn node_infos(&self) -> &[NodeInfo] {
        &self.nodes
    }
    fn scheduler_internal(&self) -> Option<&dyn std::any::Any> {
        self.generations.as_ref().map(|g| g as &dyn std::any::Any)
    }
    fn node_info(&self, name: &str) -> Option<&NodeInfo> {
        self.nodes.iter().find(|n| n.name() == name)
    }
    fn pods(&self) -> &[Shared<Pod>] {
        &self.all_pods
    }
    fn client(&self) -> &dyn ApiClient {
        &self.api
    }
    fn client_mut(&mut self) -> &mut dyn ApiClient {
        &mut self.api
    }
    fn record_event(&mut self, _involved: &Object, _type_: &str, _reason: &str, _message: &str) {}
    fn waiting_pods(&self) -> Vec<WaitingPodInfo> {
        Vec::new()
    }
    fn allow_waiting_pod(&mut self, _uid: &str, _plugin: &str) {}
    fn reject_waiting_pod(&mut self, _uid: &str, _plugin: &str, _message: &str) {}
    fn nominated_pods_for_node(&self, _node: &str) -> Vec<Shared<Pod>> {
        Vec::new()
    }
    fn run_filter_plugins_with_nominated_pods(
        &self,
        _state: &CycleState,
        _pod: &Pod,
        _node: &NodeInfo,
    ) -> FwStatus {
        FwStatus::success()
    }
    fn run_pre_filter_extension_add_pod(
        &self,
        _state: &mut CycleState,
        _pod: &Pod,
        _pod_to_add: &PodInfo,
        _node: &NodeInfo,
    ) -> FwStatus {
        FwStatus::success()
    }
    fn run_pre_filter_extension_remove_pod(
        &self,
        _state: &mut CycleState,
        _pod: &Pod,
        _pod_to_remove: &PodInfo,
        _node: &NodeInfo,
    ) -> FwStatus {
        FwStatus::success()
    }
}
