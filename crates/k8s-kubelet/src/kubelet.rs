//! [`Kubelet`]: one node's agent, driven one tick at a time (upstream `pkg/kubelet/kubelet.go`:
//! `syncLoop`/`syncLoopIteration`, `HandlePodAdditions`, `canAdmitPod`, `rejectPod`, `syncPod`,
//! `syncTerminatingPod`, `HandlePodCleanups`; the PLEG is folded into the same pass because the
//! simulated runtime changes only when the kubelet acts).
//!
//! Each [`Kubelet::sync`]:
//! 1. node status: the setters run over the stored Node; it is written when it changed (e.g. a GPU
//!    turned unhealthy, so allocatable dropped) or every [`NODE_STATUS_REPORT_FREQUENCY_TICKS`];
//! 2. pods bound to the node (`spec.nodeName`) are listed through the apiserver; pods the kubelet
//!    knew that are gone (or replaced by a new pod of the same name) release their devices and IP;
//! 3. pods being deleted (`deletionTimestamp`) get `Killing` per running container (app containers
//!    first, sidecars once they have exited); each runs its preStop hook, gets SIGTERM and exits as
//!    declared or is killed when the grace period ends; when all have stopped the kubelet writes the
//!    terminal status, releases the devices and IP and deletes the pod with grace period 0;
//! 4. known pods advance ([`crate::runtime`]): containers start, exit, restart after back-off,
//!    fail probes and get OOM-killed on the virtual clock, the status is written when it changes;
//!    a known pod that another component made terminal has its containers stopped;
//! 5. new pods are admitted in creation-time order (ties by namespace/name), as upstream
//!    `HandlePodAdditions` sorts by creation time: first the device manager allocates devices
//!    (upstream's resource allocator admit handler runs before the predicate handler), then the
//!    predicate re-check; a failure rejects the pod (phase Failed). An admitted pod gets its pod IP,
//!    the allocated-devices annotation, status Pending/ContainerCreating and `Pulled`/`Created`
//!    events for the containers that start first (init containers run one after another).
//!
//! A Node deleted from the apiserver is not registered again (upstream re-registers only when the
//! kubelet restarts); its pods keep being served.
//!
//! A pod found already Running when the kubelet first sees it (a `kubectl get -o yaml` dump) is
//! adopted: admitted again like upstream after a kubelet restart, keeping its pod IP and, when free,
//! the devices its annotation records, with no new events or status.

use std::collections::{BTreeMap, BTreeSet};

use k8s_types::apiserver::{ApiClient, ApiExt, DeleteOptions};
use k8s_types::core::event::event_types;
use k8s_types::core::{Node, NodeAddress, Pod, ResourceList, ALLOCATED_DEVICES_ANNOTATION};
use k8s_types::deviceplugin::{ContainerAllocateResponse, DevicePlugin};
use k8s_types::events::EventRecorder;
use k8s_types::informer::{cmp_namespaced, split_key};
use k8s_types::meta::timestamp_tick;
use k8s_types::object::{Kind, Object, Resource};
use k8s_types::status::Status;
use k8s_types::{Format, Quantity, Shared, Tick};

use crate::admission::{self, Rejection, UNEXPECTED_ADMISSION_ERROR};
use crate::backoff::Backoff;
use crate::behavior::BehaviorRule;
use crate::device_manager::DeviceManager;
use crate::node_lease::NodeLease;
use crate::node_status::{self, NODE_STATUS_REPORT_FREQUENCY_TICKS};
use crate::pod_ip::PodIpAllocator;
use crate::runtime::{NodeContext, PodEvent, PodPhase, Runtime, RuntimePod};
use crate::sync_pod;

/// Event reason when the node is cordoned (upstream `events.NodeNotSchedulable`).
pub const NODE_NOT_SCHEDULABLE: &str = "NodeNotSchedulable";
/// Event reason when the node is uncordoned (upstream `events.NodeSchedulable`).
pub const NODE_SCHEDULABLE: &str = "NodeSchedulable";

/// Kubelet settings.
#[derive(Clone, Debug, PartialEq)]
pub struct KubeletConfig {
    /// Ticks from ContainerCreating to Running (image "pull" + container start); 0 starts the
    /// containers in the sync that admits the pod. Default 1.
    pub startup_ticks: u64,
    /// Pods the node accepts when the manifest has no `pods` capacity (upstream `--max-pods`,
    /// default 110).
    pub max_pods: i64,
    /// What containers do, by pod selector (the Scenario's `spec.behaviors`); a pod's
    /// [`crate::behavior::BEHAVIOR_ANNOTATION`] wins over these.
    pub behaviors: Vec<BehaviorRule>,
}

impl Default for KubeletConfig {
    fn default() -> Self {
        KubeletConfig {
            startup_ticks: 1,
            max_pods: 110,
            behaviors: Vec::new(),
        }
    }
}

/// One node's kubelet.
#[derive(Debug)]
pub struct Kubelet {
    pub(crate) name: String,
    pub(crate) manifest: Node,
    pub(crate) config: KubeletConfig,
    pub(crate) devices: DeviceManager,
    pub(crate) ipam: Option<PodIpAllocator>,
    pub(crate) runtime: Runtime,
    pub(crate) addresses: Vec<NodeAddress>,
    pub(crate) registered: bool,
    /// The node lease heartbeat.
    pub(crate) lease: NodeLease,
    pub(crate) last_status_report: Option<Tick>,
    /// The last node status computation that found nothing to write (see
    /// [`node_status::StatusMemo`]).
    pub(crate) status_memo: Option<node_status::StatusMemo>,
    /// `spec.unschedulable` as last seen (upstream kubelet's `lastNodeUnschedulable`).
    pub(crate) last_unschedulable: Option<bool>,
    /// A device changed health since the last full sync.
    pub(crate) devices_changed: bool,
    /// The kubelet's event recorder, source `kubelet` on this node (upstream: the kubelet's own
    /// broadcaster and recorder).
    pub(crate) events: EventRecorder,
    /// Images on the node: the manifest's `status.images` names, plus what the kubelet pulled.
    pub(crate) images: BTreeSet<String>,
    /// Images the kubelet pulled, with their sizes (reported in `status.images`).
    pub(crate) pulled: BTreeMap<String, u64>,
    /// Container restart and image pull back-off (upstream `kl.backOff` and the image manager's).
    pub(crate) backoff: Backoff,
    /// The machine booted again since the last full sync ([`Kubelet::power_on`]): the pods found
    /// at that sync lost their containers (see [`crate::power`]).
    pub(crate) rebooted: bool,
    /// Boots of the machine after the first (the boot ID changes with each).
    pub(crate) boots: u64,
}

fn pod_uid(pod: &Pod) -> String {
    pod.metadata.uid.clone().unwrap_or_default()
}

/// Parses `nvidia.com/gpu=0,1;example.com/x=a` back into device IDs per resource.
fn parse_devices_annotation(pod: &Pod) -> BTreeMap<String, Vec<String>> {
    let mut out = BTreeMap::new();
    if let Some(v) = pod.metadata.annotations.get(ALLOCATED_DEVICES_ANNOTATION) {
        for part in v.split(';') {
            if let Some((res, ids)) = part.split_once('=') {
                let ids: Vec<String> = ids
                    .split(',')
                    .filter(|s| !s.is_empty())
                    .flat_map(crate::device_manager::expand_ids)
                    .collect();
                out.insert(res.to_string(), ids);
            }
        }
    }
    out
}

impl Kubelet {
    /// A kubelet for the machine described by `node` (the user's Node manifest: name, labels,
    /// taints, `spec.podCIDR`, `status.capacity`/`allocatable`, addresses), with its device plugins.
    /// Resources served by a plugin are taken from the plugin, never from the manifest. Without a
    /// valid `spec.podCIDR` (or `spec.podCIDRs[0]`) pods get no IP.
    pub fn new(
        node: Node,
        device_plugins: Vec<Box<dyn DevicePlugin>>,
        config: KubeletConfig,
    ) -> Kubelet {
        let name = node.metadata.name.clone();
        let addresses = node_status::node_addresses(&node);
        let events = EventRecorder::new(node_status::kubelet_source(&name));
        let images = node
            .status
            .images
            .iter()
            .filter_map(|i| i.get("names").and_then(|n| n.as_array()))
            .flatten()
            .filter_map(|n| n.as_str().map(str::to_string))
            .collect();
        let mut kubelet = Kubelet {
            name,
            manifest: node,
            config,
            devices: DeviceManager::new(device_plugins),
            ipam: None,
            runtime: Runtime::default(),
            addresses,
            registered: false,
            lease: NodeLease::default(),
            last_status_report: None,
            status_memo: None,
            last_unschedulable: None,
            devices_changed: false,
            events,
            images,
            pulled: BTreeMap::new(),
            backoff: Backoff::default(),
            rebooted: false,
            boots: 0,
        };
        let cidr = kubelet
            .manifest
            .spec
            .pod_cidr
            .clone()
            .or_else(|| kubelet.manifest.spec.pod_cidrs.first().cloned());
        kubelet.set_pod_cidr(cidr.as_deref());
        kubelet
    }

    fn set_pod_cidr(&mut self, cidr: Option<&str>) {
        self.ipam = match cidr.map(PodIpAllocator::parse) {
            Some(Ok(a)) => Some(a),
            Some(Err(e)) => {
                tracing::warn!(node = %self.name, error = %e, "ignoring podCIDR");
                None
            }
            None => None,
        };
    }

    /// The node's name.
    pub fn node_name(&self) -> &str {
        &self.name
    }

    /// The configuration.
    pub fn config(&self) -> &KubeletConfig {
        &self.config
    }

    /// The node's InternalIP (the pods' `hostIP`), else its first address.
    pub fn host_ip(&self) -> Option<&str> {
        self.addresses
            .iter()
            .find(|a| a.type_ == "InternalIP")
            .or_else(|| self.addresses.first())
            .map(|a| a.address.as_str())
    }

    /// Capacity and allocatable the kubelet reports right now: the machine's from the manifest plus
    /// every device plugin's devices (capacity) and healthy devices (allocatable).
    pub fn resources(&self) -> (ResourceList, ResourceList) {
        let (cap, alloc) = node_status::machine_resources(
            &self.manifest,
            &self.devices.resource_names(),
            self.config.max_pods,
        );
        node_status::with_device_plugins(cap, alloc, &self.devices.capacity())
    }

    /// Marks a device healthy or unhealthy in the plugin that lists it (a GPU fault or repair); the
    /// node's allocatable follows at the next [`Kubelet::sync`]. Pods holding the device keep it.
    /// Returns false when no plugin lists the device.
    pub fn set_device_health(&mut self, device_id: &str, healthy: bool) -> bool {
        let found = self.devices.set_health(device_id, healthy);
        self.devices_changed |= found;
        found
    }

    /// Whether a device of one of the node's device plugins is healthy (`None`: no such device).
    pub fn device_healthy(&self, device_id: &str) -> Option<bool> {
        self.devices.is_healthy(device_id)
    }

    /// Device IDs per resource the device manager gave a pod (empty when none).
    pub fn pod_devices(&self, namespace: &str, name: &str) -> BTreeMap<String, Vec<String>> {
        self.devices
            .pod_resource_devices(&format!("{namespace}/{name}"))
    }

    /// What the device plugins answered to `Allocate` for one container, per resource (upstream
    /// `GetDeviceRunContainerOptions`: envs such as `NVIDIA_VISIBLE_DEVICES`, device nodes).
    pub fn device_run_container_options(
        &self,
        namespace: &str,
        name: &str,
        container: &str,
    ) -> Option<&BTreeMap<String, ContainerAllocateResponse>> {
        self.devices
            .pod_devices(&format!("{namespace}/{name}"))
            .and_then(|pd| pd.get(container))
            .map(|cd| &cd.responses)
    }

    /// The pod IP the kubelet assigned to a pod it runs.
    pub fn pod_ip(&self, namespace: &str, name: &str) -> Option<&str> {
        self.runtime
            .get(&format!("{namespace}/{name}"))
            .and_then(|p| p.pod_ip.as_deref())
    }

    pub(crate) fn record_node_event(
        &mut self,
        api: &mut dyn ApiClient,
        reason: &str,
        message: String,
    ) {
        self.events.record(
            api,
            &node_status::node_ref(&self.name),
            event_types::NORMAL,
            reason,
            message,
        );
    }

    /// Registers the Node (upstream `registerWithAPIServer` + the first `setNodeStatus`): creates it
    /// with the registration metadata and spec (see [`node_status::initial_node`]) and the status the
    /// setters compute; when it already exists, merges labels/annotations/spec into it and writes the
    /// status. Records `Starting`, the node status events (`NodeHasSufficientMemory`,
    /// `NodeHasNoDiskPressure`, `NodeHasSufficientPID`, and `NodeReady` when an existing Node was not
    /// Ready) and `NodeAllocatableEnforced`.
    ///
    /// # Errors
    /// The apiserver's `Status` when the Node cannot be created, read or updated (e.g. Invalid).
    pub fn register(&mut self, api: &mut dyn ApiClient) -> Result<(), Status> {
        let now = api.now();
        let initial = node_status::initial_node(&self.manifest, &self.devices.feature_labels());
        let (cap, alloc) = self.resources();
        let mut node = initial.clone();
        let status_events =
            node_status::set_node_status(&mut node.status, &cap, &alloc, &self.addresses, now);
        let status_events = match api.create(Object::Node(Box::new(node.clone()))) {
            Ok(created) => {
                let stored = Node::from_object(created);
                if let Some(mut stored) = stored {
                    if !node_status::same_ignoring_heartbeats(&stored.status, &node.status) {
                        stored.status = node.status.clone();
                        api.update_status(Object::Node(Box::new(stored)))?;
                    }
                }
                status_events
            }
            Err(e) if e.is_already_exists() => {
                self.register_existing(api, &initial, &cap, &alloc, now)?
            }
            Err(e) => return Err(e),
        };
        self.registered = true;
        self.last_status_report = Some(now);
        self.record_node_event(
            api,
            node_status::EVENT_STARTING,
            node_status::STARTING_MESSAGE.into(),
        );
        for ev in status_events {
            self.record_node_event(
                api,
                ev,
                node_status::node_status_event_message(&self.name, ev),
            );
        }
        self.record_node_event(
            api,
            node_status::EVENT_NODE_ALLOCATABLE_ENFORCED,
            node_status::NODE_ALLOCATABLE_ENFORCED_MESSAGE.into(),
        );
        Ok(())
    }

    fn register_existing(
        &mut self,
        api: &mut dyn ApiClient,
        initial: &Node,
        cap: &ResourceList,
        alloc: &ResourceList,
        now: Tick,
    ) -> Result<Vec<&'static str>, Status> {
        let mut attempt = 0;
        let stored = loop {
            let existing: Node = api.get_typed("", &self.name)?;
            let merged = node_status::merge_registration(&existing, initial);
            if merged.metadata == existing.metadata && merged.spec == existing.spec {
                break existing;
            }
            match api.update_typed(merged) {
                Ok(n) => break n,
                Err(e) if e.is_conflict() && attempt == 0 => attempt += 1,
                Err(e) => return Err(e),
            }
        };
        if self.ipam.is_none() {
            let cidr = stored.spec.pod_cidr.clone();
            self.set_pod_cidr(cidr.as_deref());
        }
        let mut node = stored;
        let events =
            node_status::set_node_status(&mut node.status, cap, alloc, &self.addresses, now);
        api.update_status_typed(node)?;
        Ok(events)
    }

    /// [`Kubelet::sync`] unless nothing can have changed for this node: `touched` false says no
    /// write since this kubelet's previous sync concerns its Node or a pod bound to it (the caller
    /// watches the apiserver once for every kubelet, as upstream's informers only wake a kubelet's
    /// sync loop for its own objects). Then, with no pod waiting to start, no device health change
    /// and no periodic status report due, a full sync would write nothing and is skipped. Returns
    /// whether the full sync ran.
    pub fn sync_if_needed(&mut self, api: &mut dyn ApiClient, touched: bool) -> bool {
        let now = api.now();
        let quiet = !touched
            && self.registered
            && !self.devices_changed
            && self.runtime.next_due().is_none_or(|t| now < t)
            && self.next_status_report().is_some_and(|t| now < t);
        if !quiet {
            self.sync(api);
        }
        !quiet
    }

    /// Renews the node Lease when due (every 10 s, see [`crate::node_lease`]), once registered.
    /// Returns whether it wrote.
    pub fn heartbeat(&mut self, api: &mut dyn ApiClient) -> bool {
        if !self.registered {
            return false;
        }
        let now = api.now();
        self.lease
            .renew_if_due(api, &self.name, now)
            .inspect_err(|e| tracing::debug!(node = %self.name, error = %e, "lease renewal failed"))
            .unwrap_or(false)
    }

    /// The kubelet reaches the apiserver again after a partition: it renews its Lease and posts its
    /// status at the next tick, and its next [`Kubelet::sync`] reconciles its pods.
    pub fn reconnect(&mut self) {
        self.lease.reset();
        self.last_status_report = None;
    }

    /// A stopped kubelet starts again (upstream kubelet startup on an existing Node): it records
    /// `Starting`, renews its Lease and posts its status at the next [`Kubelet::sync`] (Ready turns
    /// True again, with `NodeReady`), and that sync reconciles its pods with the apiserver (pods
    /// deleted meanwhile are killed). The containers kept running while it was stopped.
    pub fn restart(&mut self, api: &mut dyn ApiClient) {
        self.reconnect();
        self.record_node_event(
            api,
            node_status::EVENT_STARTING,
            node_status::STARTING_MESSAGE.into(),
        );
    }

    /// The kubelet of a cluster restored from a snapshot taken when the clock read `now`: its Node is
    /// in the store already, so it is registered without writing; its clocks are rebuilt from what
    /// it last wrote, as if it had kept running: the Lease renewal from the Lease's `renewTime`, the
    /// periodic status report from the Ready condition's `lastHeartbeatTime`, each moved past the
    /// periods that fell due before `now` ([`Kubelet::fast_forward`]: a driver that skipped idle
    /// ticks did not write them), and the pod CIDR from the stored Node. Its pods are adopted at
    /// the next [`Kubelet::sync`] (see the module documentation). Not rebuilt: container restart
    /// back-off and the pod runtime's clocks (a container's remaining run time restarts from `now`).
    pub fn resume(&mut self, api: &dyn ApiClient, now: Tick) {
        self.registered = true;
        let stored: Option<Node> = api.get_typed("", &self.name).ok();
        if let Some(node) = &stored {
            let cidr = node.spec.pod_cidr.clone();
            if cidr.is_some() {
                self.set_pod_cidr(cidr.as_deref());
            }
            self.last_status_report = node
                .status
                .conditions
                .iter()
                .find(|c| c.type_ == "Ready")
                .and_then(|c| c.last_heartbeat_time.as_deref())
                .and_then(timestamp_tick);
            self.last_unschedulable = Some(node.spec.unschedulable);
        }
        let lease: Option<k8s_types::coordination::Lease> = api
            .get_typed(k8s_types::coordination::NODE_LEASE_NAMESPACE, &self.name)
            .ok();
        let renewed = lease
            .and_then(|l| l.spec.renew_time)
            .and_then(|t| k8s_types::coordination::micro_time_tick(&t));
        self.lease.resume(renewed);
        self.fast_forward(now);
        self.lease.fast_forward(now);
    }

    /// One tick of the kubelet (see the module documentation for the order of work).
    pub fn sync(&mut self, api: &mut dyn ApiClient) {
        self.devices_changed = false;
        let now = api.now();
        let mut stored = api.get_shared(&Kind::Node, "", &self.name).ok();
        if self.registered && self.sync_node_status(api, stored.clone(), now) {
            stored = api.get_shared(&Kind::Node, "", &self.name).ok();
        }
        // The node as admission sees it (upstream `getNodeAnyWay`): the stored Node (shared), else
        // the one the kubelet would register.
        let node_view = match stored.as_deref().and_then(Node::from_object_ref) {
            Some(n) => std::borrow::Cow::Borrowed(n),
            None => {
                let mut n =
                    node_status::initial_node(&self.manifest, &self.devices.feature_labels());
                n.status.allocatable = self.resources().1;
                std::borrow::Cow::Owned(n)
            }
        };

        // The node's pods, shared with the apiserver (the `spec.nodeName` index; nothing copied),
        // in the order of their keys (`namespace/name`, the runtime's order).
        let mut pods = api.list_pods_on_node_shared(&self.name);
        fn parts(p: &Pod) -> (&str, &str) {
            (p.metadata.namespace(), &p.metadata.name)
        }
        if !pods.is_sorted_by(|a, b| cmp_namespaced(parts(a), parts(b)).is_le()) {
            pods.sort_by(|a, b| cmp_namespaced(parts(a), parts(b)));
        }
        // Pods deleted at once, or replaced by a new pod of the same name: both lists in key
        // order, walked together.
        let mut gone: Vec<String> = Vec::new();
        let mut next = 0;
        for (key, rec) in self.runtime.iter() {
            let wanted = split_key(key);
            while next < pods.len() && cmp_namespaced(parts(&pods[next]), wanted).is_lt() {
                next += 1;
            }
            let same = pods.get(next).is_some_and(|p| {
                cmp_namespaced(parts(p), wanted).is_eq()
                    && p.metadata.uid.as_deref().unwrap_or_default() == rec.uid
            });
            if !same {
                gone.push(key.clone());
            }
        }
        for key in gone {
            self.forget(&key);
        }

        let mut additions: Vec<&Shared<Pod>> = Vec::new();
        let mut key = String::new();
        for pod in &pods {
            key.clear();
            key.push_str(pod.metadata.namespace());
            key.push('/');
            key.push_str(&pod.metadata.name);
            if self.follow_unchanged(&key, pod, now) {
                continue;
            }
            if pod.is_terminating() {
                // A Running pod being deleted that this kubelet does not know: adopted from a
                // snapshot, unless the machine just booted (its containers are lost, see
                // `crate::power`: the terminal status is written instead).
                if !self.rebooted
                    && self.runtime.get(&key).is_none()
                    && pod.phase() == k8s_types::core::phases::RUNNING
                {
                    self.adopt_terminating(api, pod, &node_view, now);
                }
                self.terminate(api, &key, pod, now);
            } else if self.runtime.get(&key).is_some() {
                self.advance(api, &key, pod, now);
            } else {
                additions.push(pod);
            }
        }
        additions.sort_by_key(|p| {
            (
                p.metadata
                    .creation_timestamp
                    .as_deref()
                    .and_then(timestamp_tick)
                    .unwrap_or(0),
                p.key(),
            )
        });
        for pod in additions {
            self.add_pod(api, pod, &node_view, now);
        }
        self.rebooted = false;
    }

    /// The earliest tick at which one of this kubelet's pods changes on its own (a container
    /// starts, exits, restarts after back-off, a probe fails, a grace period ends).
    pub fn next_pod_wakeup(&self) -> Option<Tick> {
        self.runtime.next_due()
    }

    /// The tick at which the next periodic node status report is due (upstream
    /// `nodeStatusReportFrequency`, [`NODE_STATUS_REPORT_FREQUENCY_TICKS`] after the last write);
    /// `None` before registration.
    pub fn next_status_report(&self) -> Option<Tick> {
        self.last_status_report
            .map(|t| t.saturating_add(NODE_STATUS_REPORT_FREQUENCY_TICKS))
    }

    /// The earliest tick at which this kubelet acts on its own, periodic node status reports aside
    /// ([`Kubelet::next_status_report`]): now (`now`) before registration or after a device health
    /// change, else its pods' next wake-up ([`Kubelet::next_pod_wakeup`]).
    pub fn next_wakeup(&self, now: Tick) -> Option<Tick> {
        if !self.registered || self.devices_changed {
            return Some(now);
        }
        self.next_pod_wakeup()
    }

    /// The tick of the next node Lease renewal ([`crate::node_lease`], every 10 s; `now` when
    /// none was written yet); `None` before registration.
    pub fn next_lease_renewal(&self, now: Tick) -> Option<Tick> {
        self.registered.then(|| self.lease.next_due(now))
    }

    /// How many Lease renewals fall due before `to` ([`Kubelet::fast_forward_lease`] moves the
    /// renewal clock past exactly these).
    pub fn renewals_before(&self, to: Tick) -> u64 {
        if self.registered {
            self.lease.renewals_before(to)
        } else {
            0
        }
    }

    /// Moves the Lease renewal clock as if every renewal due before `to` had been written on time
    /// (for a driver that skips idle ticks and accounts for them, see `Cluster::skip_idle`).
    /// Returns the tick of the last renewal accounted for, when there was one.
    pub fn fast_forward_lease(&mut self, to: Tick) -> Option<Tick> {
        self.lease.fast_forward(to)
    }

    /// How many periodic node status reports fall due before `to` ([`Kubelet::fast_forward`]
    /// moves the clock past exactly these).
    pub fn reports_before(&self, to: Tick) -> u64 {
        match self.last_status_report {
            Some(last) if to > last => (to - last - 1) / NODE_STATUS_REPORT_FREQUENCY_TICKS,
            _ => 0,
        }
    }

    /// Moves the periodic report clock forward as if every report due before `to` had been
    /// written on time (at `last + k * NODE_STATUS_REPORT_FREQUENCY_TICKS`): for a driver that skips
    /// idle ticks (no [`Kubelet::sync`] runs in them), so the next report falls on the same tick as
    /// when every tick runs. Nothing is written; reports due at `to` or later are untouched.
    pub fn fast_forward(&mut self, to: Tick) {
        if let Some(last) = self.last_status_report {
            if to > last {
                let periods = (to - last - 1) / NODE_STATUS_REPORT_FREQUENCY_TICKS;
                self.last_status_report = Some(last + periods * NODE_STATUS_REPORT_FREQUENCY_TICKS);
            }
        }
    }

    /// Releases everything a known pod holds and forgets it.
    pub(crate) fn forget(&mut self, key: &str) {
        if let Some(rec) = self.runtime.remove(key) {
            if let (Some(ip), Some(ipam)) = (rec.pod_ip.as_deref(), self.ipam.as_mut()) {
                ipam.release(ip);
            }
        }
        self.devices.free_pod(key);
    }

    /// Stops a pod's containers at once (one `Killing` event each, in upstream stop order): for a
    /// pod another component made terminal.
    fn kill_containers(&mut self, api: &mut dyn ApiClient, rec: &RuntimePod, pod: &Pod) {
        for c in rec.stop_order() {
            sync_pod::record_pod_event(
                api,
                &mut self.events,
                pod,
                event_types::NORMAL,
                sync_pod::EVENT_KILLING,
                sync_pod::killing_message(&c.name),
            );
        }
    }

    /// Steps a pod's containers to `now`, writes its status when anything changed, and records the
    /// events of the step (after the status, as upstream's sync writes status before its events
    /// reach the apiserver). Returns whether every container has stopped for good.
    fn step_pod(&mut self, api: &mut dyn ApiClient, key: &str, now: Tick) -> bool {
        let mut events: Vec<PodEvent> = Vec::new();
        let Some(rec) = self.runtime.get_mut(key) else {
            return true;
        };
        let mut node = NodeContext {
            images: &mut self.images,
            pulled: &mut self.pulled,
            backoff: &mut self.backoff,
            startup_ticks: self.config.startup_ticks,
        };
        let changed = rec.step(now, &mut node, &mut events);
        let done = rec.all_stopped()
            && (rec.completed || matches!(rec.phase, PodPhase::Terminating { .. }));
        let finished = done && rec.completed && !matches!(rec.phase, PodPhase::Terminating { .. });
        if !changed && events.is_empty() && !finished {
            // A steady pod (most of a node's pods at most syncs): no status to write, no event to
            // record, nothing to release, so the record is not copied.
            return done;
        }
        let rec = rec.clone();
        let host_ip = self.host_ip().map(str::to_string);
        let pod_ip = self.status_pod_ip(&rec);
        let mut pod = rec.pod.clone();
        if changed {
            let written = sync_pod::write_status(
                api,
                rec.pod.metadata.namespace(),
                &rec.pod.metadata.name,
                &rec.uid,
                &|p: &Pod| {
                    sync_pod::generate_status(
                        p,
                        &rec,
                        done,
                        host_ip.as_deref(),
                        pod_ip.as_deref(),
                        now,
                    )
                },
            );
            if let Some(w) = written {
                pod = w;
            }
        }
        for e in events {
            sync_pod::record_pod_event(api, &mut self.events, &pod, e.type_, e.reason, e.message);
        }
        if finished {
            // Terminal: what it held is released; the record stays so it is not admitted again.
            self.forget(key);
            let mut stopped = rec;
            stopped.phase = PodPhase::Terminated;
            stopped.pod_ip = None;
            stopped.pod = pod;
            self.runtime.insert(key.to_string(), stopped);
        }
        done
    }

    /// A pod with a deletionTimestamp (upstream `syncTerminatingPod`): its containers are stopped
    /// (preStop hook, SIGTERM, SIGKILL when `deletionTimestamp` passes); once all have stopped the
    /// kubelet writes the terminal status, releases what the pod held and finishes the deletion
    /// (grace period 0). A pod that does not run here is removed at once.
    fn terminate(&mut self, api: &mut dyn ApiClient, key: &str, pod: &Shared<Pod>, now: Tick) {
        let active = self.runtime.get(key).is_some_and(|r| r.phase.is_active());
        if active {
            let deadline = pod
                .metadata
                .deletion_timestamp
                .as_deref()
                .and_then(timestamp_tick)
                .unwrap_or(now);
            let mut events = Vec::new();
            if let Some(rec) = self.runtime.get_mut(key) {
                rec.pod = pod.clone();
                rec.begin_termination(now, deadline, &mut events);
            }
            for e in events {
                sync_pod::record_pod_event(
                    api,
                    &mut self.events,
                    pod,
                    e.type_,
                    e.reason,
                    e.message,
                );
            }
            if !self.step_pod(api, key, now) {
                return;
            }
        } else if self.rebooted && crate::power::lost_running_containers(pod) {
            // Deleted while the machine was off: the terminal status first (see `crate::power`).
            self.fail_after_reboot(api, key, pod, now);
        }
        self.forget(key);
        let opts = DeleteOptions {
            grace_period_seconds: Some(0),
            ..Default::default()
        };
        if let Err(e) = api.delete(
            &Kind::Pod,
            pod.metadata.namespace(),
            &pod.metadata.name,
            opts,
        ) {
            if !e.is_not_found() {
                tracing::debug!(pod = %key, error = %e, "pod delete failed");
            }
        }
    }

    /// A Running pod first seen while it is being deleted (a snapshot taken during its grace
    /// period): adopted like any running pod, then put back in the termination that began at
    /// `deletionTimestamp - deletionGracePeriodSeconds`, without the `Killing` events it already
    /// had, so that it stops when the uninterrupted run would stop it.
    fn adopt_terminating(
        &mut self,
        api: &mut dyn ApiClient,
        pod: &Shared<Pod>,
        node: &Node,
        now: Tick,
    ) {
        let key = pod.key();
        self.add_pod(api, pod, node, now);
        let deadline = pod
            .metadata
            .deletion_timestamp
            .as_deref()
            .and_then(timestamp_tick)
            .unwrap_or(now);
        let grace = pod
            .metadata
            .deletion_grace_period_seconds
            .and_then(|g| u64::try_from(g).ok())
            .unwrap_or(0);
        let began = deadline.saturating_sub(grace).min(now);
        if let Some(rec) = self.runtime.get_mut(&key) {
            rec.pod = pod.clone();
            let mut already_recorded = Vec::new();
            rec.begin_termination(began, deadline, &mut already_recorded);
        }
    }

    /// A known pod that the sync would only follow (its record takes the pod as listed), changing
    /// nothing else; returns false, changing nothing, when the pod needs the full
    /// [`Kubelet::terminate`] or [`Kubelet::advance`]. Being deleted: its containers are stopping
    /// with nothing due at `now` (each one's exit and the grace period's end are later), so the
    /// step finds nothing to do and the pod is not removed yet. Otherwise: a stopped record, or a
    /// running one whose containers have nothing due (the step's idle case,
    /// [`RuntimePod::is_idle`]) and that has not finished, of a pod no other component made
    /// terminal. Most pods of a node are steady at most of its syncs.
    fn follow_unchanged(&mut self, key: &str, pod: &Shared<Pod>, now: Tick) -> bool {
        let startup_ticks = self.config.startup_ticks;
        let Some(rec) = self.runtime.get_mut(key) else {
            return false;
        };
        let follow = if pod.is_terminating() {
            matches!(rec.phase, PodPhase::Terminating { .. })
                && rec.next_due().is_none_or(|t| t > now)
                && !rec.all_stopped()
        } else {
            !rec.phase.is_active()
                || (!pod.is_terminal()
                    && rec.is_idle(now, startup_ticks)
                    && !(rec.all_stopped() && rec.completed))
        };
        if follow && !Shared::ptr_eq(&rec.pod, pod) {
            rec.pod = pod.clone();
        }
        follow
    }

    /// A known pod: step its containers; stop them if another component made the pod terminal.
    fn advance(&mut self, api: &mut dyn ApiClient, key: &str, pod: &Shared<Pod>, now: Tick) {
        // The record follows the pod as listed (sharing it), so no older copy is kept alive.
        let Some(rec) = self.runtime.get_mut(key) else {
            return;
        };
        rec.pod = pod.clone();
        if !rec.phase.is_active() {
            return;
        }
        if pod.is_terminal() {
            let rec = rec.clone();
            self.kill_containers(api, &rec, pod);
            self.forget(key);
            let mut stopped = rec;
            stopped.phase = PodPhase::Terminated;
            stopped.pod_ip = None;
            self.runtime.insert(key.to_string(), stopped);
            return;
        }
        self.step_pod(api, key, now);
    }

    /// The IP to report: the node's for host-network pods, else the sandbox IP.
    fn status_pod_ip(&self, rec: &RuntimePod) -> Option<String> {
        if rec.pod.spec.host_network == Some(true) {
            self.host_ip().map(str::to_string)
        } else {
            rec.pod_ip.clone()
        }
    }

    /// Upstream `rejectPod`: a Warning event with the reason and message, then status Failed.
    fn reject(
        &mut self,
        api: &mut dyn ApiClient,
        key: &str,
        shared: &Shared<Pod>,
        rejection: Rejection,
        now: Tick,
    ) {
        let pod: &Pod = shared;
        sync_pod::record_pod_event(
            api,
            &mut self.events,
            pod,
            event_types::WARNING,
            &rejection.reason,
            rejection.message.clone(),
        );
        let uid = pod_uid(pod);
        sync_pod::write_status(
            api,
            pod.metadata.namespace(),
            &pod.metadata.name,
            &uid,
            &|p: &Pod| sync_pod::rejected_status(p, &rejection, now),
        );
        let rec = RuntimePod::new(uid, shared.clone(), PodPhase::Rejected, None, &[]);
        self.runtime.insert(key.to_string(), rec);
    }

    /// Node allocatable as the predicate sees it (upstream `sanitizeNodeAllocatable`): never below
    /// the devices already handed out, when the pod holds devices.
    fn admission_allocatable(&self, node: &Node, key: &str) -> ResourceList {
        let mut alloc = node.status.allocatable.clone();
        if self.devices.pod_devices(key).is_some() {
            for res in self.devices.resource_names() {
                let held = i64::try_from(self.devices.allocated_count(&res)).unwrap_or(i64::MAX);
                let have = alloc.get(&res).map_or(-1, Quantity::value);
                if have < held {
                    alloc.insert(res, Quantity::from_value(held, Format::DecimalSI));
                }
            }
        }
        alloc
    }

    /// Upstream `HandlePodAdditions` for one pod: admit (devices, then predicates) or reject; on
    /// admission create the sandbox and containers.
    fn add_pod(&mut self, api: &mut dyn ApiClient, shared: &Shared<Pod>, node: &Node, now: Tick) {
        let pod: &Pod = shared;
        let key = pod.key();
        let uid = pod_uid(pod);
        if pod.is_terminal() {
            let rec = RuntimePod::new(uid, shared.clone(), PodPhase::Terminated, None, &[]);
            self.runtime.insert(key, rec);
            return;
        }
        if self.rebooted && crate::power::fails_after_reboot(pod) {
            self.fail_after_reboot(api, &key, shared, now);
            return;
        }
        // After a power loss nothing runs any more: the pod starts again (see `crate::power`).
        let adopting = !self.rebooted && pod.phase() == k8s_types::core::phases::RUNNING;
        let prefer = if adopting || self.rebooted {
            parse_devices_annotation(pod)
        } else {
            BTreeMap::new()
        };
        if let Err(e) = self.devices.allocate_pod(&key, pod, &prefer) {
            let rejection = Rejection {
                reason: UNEXPECTED_ADMISSION_ERROR.into(),
                message: format!("Allocate failed due to {e}, which is unexpected"),
            };
            self.reject(api, &key, shared, rejection, now);
            return;
        }
        let allocatable = self.admission_allocatable(node, &key);
        let used = self.runtime.active_requests();
        let active: Vec<&Pod> = self.runtime.active_pods();
        if let Err(rejection) = admission::admit_used(pod, node, &allocatable, &active, &used) {
            self.devices.free_pod(&key);
            self.reject(api, &key, shared, rejection, now);
            return;
        }
        // DRA: the pod's claims must be allocated and reserved for it (crate::dra).
        let prepared = if pod.spec.resource_claims.is_empty() {
            None
        } else {
            match crate::dra::prepare_resources(api, pod) {
                Ok(p) => Some(p),
                Err(e) => {
                    self.devices.free_pod(&key);
                    self.events.record(
                        api,
                        &Object::Pod(Box::new(pod.clone())),
                        event_types::WARNING,
                        "FailedPrepareDynamicResources",
                        format!("Failed to prepare dynamic resources: {e}"),
                    );
                    return;
                }
            }
        };

        // Sandbox: the pod IP.
        let pod_ip = if pod.spec.host_network == Some(true) {
            None
        } else {
            match self.ipam.as_mut() {
                // An adopted pod keeps its IP; one outside the pool stays unmanaged.
                Some(ipam) if adopting => pod
                    .status
                    .pod_ip
                    .as_deref()
                    .filter(|ip| ipam.reserve(ip))
                    .map(str::to_string),
                Some(ipam) => ipam.allocate().map(|ip| ip.to_string()),
                None => None,
            }
        };
        let phase = if adopting {
            PodPhase::Running { started: now }
        } else {
            PodPhase::Creating { since: now }
        };
        let mut rec = RuntimePod::new(
            uid.clone(),
            shared.clone(),
            phase,
            pod_ip,
            &self.config.behaviors,
        );
        if adopting {
            rec.adopt(now);
        }
        if self.rebooted {
            crate::power::carry_over(&mut rec);
        }
        self.runtime.insert(key.clone(), rec);

        let ns = pod.metadata.namespace().to_string();
        let name = pod.metadata.name.clone();
        let dra = prepared.map(|p| p.annotation()).filter(|v| !v.is_empty());
        let value = match (self.devices.annotation_value(&key), dra) {
            (Some(a), Some(b)) => Some(format!("{a};{b}")),
            (a, b) => a.or(b),
        };
        if let Some(value) = value {
            sync_pod::write_annotation(api, &ns, &name, &uid, ALLOCATED_DEVICES_ANNOTATION, &value);
        }
        if adopting {
            return;
        }
        // The sandbox exists; the first containers are created now and start when it is ready.
        self.step_pod(api, &key, now);
    }
}
