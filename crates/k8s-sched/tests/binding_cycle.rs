//! The binding cycle's PreBind and PostBind extension points through the public API, with
//! out-of-tree plugins registered from this crate: a PreBind rejection unreserves, forgets the
//! assumed pod and retries it (upstream `bindingCycle` / `handleBindingCycleError`), PostBind
//! sees the bound pod, and `KubeSchedulerConfiguration` enables and disables both points.

use std::sync::{Arc, Mutex};

use k8s_sched::ExtensionPoint as E;
use k8s_sched::{ConfigError, KubeSchedulerConfiguration, PluginArgs, Registry, Scheduler};
use k8s_sched_framework::{
    ActionType, ClusterEventWithHint, CycleState, EnqueueExtensions, EventResource, Handle, Plugin,
    PostBindPlugin, PreBindPlugin, ReservePlugin, Status,
};
use k8s_testing::{node, pod, FakeApi};
use k8s_types::core::Pod;

/// What the plugins saw, in order.
type Log = Arc<Mutex<Vec<String>>>;

/// Reserve/Unreserve plus a PreBind that rejects while `reject` is set (like a volume that is
/// not provisioned yet). Registers Node Add for queueing hints.
struct VolumeGate {
    log: Log,
    reject: Arc<Mutex<bool>>,
}

impl Plugin for VolumeGate {
    fn name(&self) -> &str {
        "VolumeGate"
    }
    fn as_reserve(&self) -> Option<&dyn ReservePlugin> {
        Some(self)
    }
    fn as_pre_bind(&self) -> Option<&dyn PreBindPlugin> {
        Some(self)
    }
    fn as_enqueue_extensions(&self) -> Option<&dyn EnqueueExtensions> {
        Some(self)
    }
}

impl ReservePlugin for VolumeGate {
    fn reserve(&self, _: &mut CycleState, pod: &Pod, node: &str, _: &mut dyn Handle) -> Status {
        self.log
            .lock()
            .unwrap()
            .push(format!("reserve {} {node}", pod.metadata.name));
        Status::success()
    }
    fn unreserve(&self, _: &mut CycleState, pod: &Pod, node: &str, _: &mut dyn Handle) {
        self.log
            .lock()
            .unwrap()
            .push(format!("unreserve {} {node}", pod.metadata.name));
    }
}

impl PreBindPlugin for VolumeGate {
    fn pre_bind(&self, _: &mut CycleState, pod: &Pod, node: &str, _: &mut dyn Handle) -> Status {
        self.log
            .lock()
            .unwrap()
            .push(format!("prebind {} {node}", pod.metadata.name));
        if *self.reject.lock().unwrap() {
            Status::unschedulable("volume not ready")
        } else {
            Status::success()
        }
    }
}

impl EnqueueExtensions for VolumeGate {
    fn events_to_register(&self) -> Vec<ClusterEventWithHint> {
        vec![ClusterEventWithHint::without_hint(
            EventResource::Node,
            ActionType::ADD,
        )]
    }
}

/// A PostBind plugin that records the pods it is told about, with their node in the cache.
struct BindRecorder {
    log: Log,
}

impl Plugin for BindRecorder {
    fn name(&self) -> &str {
        "BindRecorder"
    }
    fn as_post_bind(&self) -> Option<&dyn PostBindPlugin> {
        Some(self)
    }
}

impl PostBindPlugin for BindRecorder {
    fn post_bind(&self, _: &mut CycleState, pod: &Pod, node: &str, h: &mut dyn Handle) {
        let bound = h
            .client()
            .get(&k8s_types::object::Kind::Pod, "default", &pod.metadata.name)
            .ok()
            .and_then(|o| match o {
                k8s_types::object::Object::Pod(p) => p.spec.node_name.clone(),
                _ => None,
            });
        self.log.lock().unwrap().push(format!(
            "postbind {} {node} (apiserver nodeName {})",
            pod.metadata.name,
            bound.unwrap_or_default()
        ));
    }
}

fn registry(log: &Log, reject: &Arc<Mutex<bool>>) -> Registry {
    let mut r = Registry::new();
    let (l, rj) = (Arc::clone(log), Arc::clone(reject));
    r.register(
        "VolumeGate",
        Box::new(move |_: &PluginArgs<'_>| {
            Ok(Arc::new(VolumeGate {
                log: Arc::clone(&l),
                reject: Arc::clone(&rj),
            }) as Arc<dyn Plugin>)
        }),
    )
    .unwrap();
    let l = Arc::clone(log);
    r.register(
        "BindRecorder",
        Box::new(move |_: &PluginArgs<'_>| {
            Ok(Arc::new(BindRecorder {
                log: Arc::clone(&l),
            }) as Arc<dyn Plugin>)
        }),
    )
    .unwrap();
    r
}

const CONFIG: &str = "
profiles:
- plugins:
    reserve: {enabled: [{name: VolumeGate}]}
    preBind: {enabled: [{name: VolumeGate}]}
    postBind: {enabled: [{name: BindRecorder}]}
";

#[test]
fn prebind_rejection_unreserves_forgets_and_retries() {
    let log: Log = Arc::default();
    let reject = Arc::new(Mutex::new(true));
    let cfg = KubeSchedulerConfiguration::from_yaml(CONFIG).unwrap();
    let mut s = Scheduler::with_registry(cfg, registry(&log, &reject)).unwrap();
    let mut api = FakeApi::new();
    api.add(node("n1", "4", "8Gi", &[]));
    api.add(pod("web", "1", "1Gi", &[]));

    s.schedule(&mut api);
    // Not bound; Unreserve ran after the PreBind rejection; the assumed pod was forgotten.
    assert_eq!(api.pod("web").node_name(), None);
    assert_eq!(
        *log.lock().unwrap(),
        vec!["reserve web n1", "prebind web n1", "unreserve web n1"]
    );
    assert_eq!(s.cache().node_info("n1").unwrap().pod_count(), 0);
    // Reported as a FitError on the chosen node, like upstream's PreBind rejection.
    assert_eq!(
        api.pod_event_messages("web", "FailedScheduling"),
        vec!["0/1 nodes are available: 1 volume not ready."]
    );
    let entry = s.pending_pod("default/web", api.now).unwrap();
    assert_eq!(
        entry.unschedulable_plugins.iter().collect::<Vec<_>>(),
        vec!["VolumeGate"]
    );

    // VolumeGate registered Node Add only: no retry without one, even after the backoff.
    *reject.lock().unwrap() = false;
    api.now += 2;
    s.schedule(&mut api);
    assert_eq!(api.pod("web").node_name(), None);
    assert_eq!(s.pending_pod("default/web", api.now).unwrap().attempts, 1);

    // A node is added: retried, PreBind passes, bound, and PostBind sees the bound pod.
    api.add(node("n2", "4", "8Gi", &[]));
    api.now += 1;
    s.schedule(&mut api);
    let node = api.pod("web").node_name().map(str::to_string).unwrap();
    assert_eq!(
        log.lock().unwrap()[3..],
        [
            format!("reserve web {node}"),
            format!("prebind web {node}"),
            format!("postbind web {node} (apiserver nodeName {node})"),
        ]
    );
    assert_eq!(
        api.pod_event_messages("web", "Scheduled"),
        vec![format!("Successfully assigned default/web to {node}")]
    );
}

#[test]
fn prebind_error_is_reported_as_upstream_words_it() {
    struct Broken;
    impl Plugin for Broken {
        fn name(&self) -> &str {
            "Broken"
        }
        fn as_pre_bind(&self) -> Option<&dyn PreBindPlugin> {
            Some(self)
        }
    }
    impl PreBindPlugin for Broken {
        fn pre_bind(&self, _: &mut CycleState, _: &Pod, _: &str, _: &mut dyn Handle) -> Status {
            Status::error("disk attach timed out")
        }
    }
    let mut r = Registry::new();
    r.register(
        "Broken",
        Box::new(|_: &PluginArgs<'_>| Ok(Arc::new(Broken) as Arc<dyn Plugin>)),
    )
    .unwrap();
    let cfg = KubeSchedulerConfiguration::from_yaml(
        "profiles:\n- plugins: {preBind: {enabled: [{name: Broken}]}}\n",
    )
    .unwrap();
    let mut s = Scheduler::with_registry(cfg, r).unwrap();
    let mut api = FakeApi::new();
    api.add(node("n1", "4", "8Gi", &[]));
    api.add(pod("web", "1", "1Gi", &[]));
    s.schedule(&mut api);
    assert_eq!(api.pod("web").node_name(), None);
    assert_eq!(
        api.pod_event_messages("web", "FailedScheduling"),
        vec!["running PreBind plugin \"Broken\": disk attach timed out"]
    );
    let c = api.pod("web");
    let cond = c.condition("PodScheduled").unwrap();
    assert_eq!(cond.reason.as_deref(), Some("SchedulerError"));
    // An error has no rejector plugins: retried after its backoff alone.
    api.now += 1;
    s.schedule(&mut api);
    assert_eq!(s.pending_pod("default/web", api.now).unwrap().attempts, 2);
}

#[test]
fn configuration_enables_and_disables_prebind_and_postbind() {
    let log: Log = Arc::default();
    let reject = Arc::new(Mutex::new(false));
    let s = Scheduler::with_registry(
        KubeSchedulerConfiguration::from_yaml(CONFIG).unwrap(),
        registry(&log, &reject),
    )
    .unwrap();
    let fwk = &s.profiles()[0];
    assert_eq!(
        fwk.plugin_names(E::PreBind),
        vec!["DynamicResources", "VolumeGate"]
    );
    assert_eq!(fwk.plugin_names(E::PostBind), vec!["BindRecorder"]);
    // The default profile's only PreBind plugin is DynamicResources (upstream's are
    // VolumeBinding, not built, and DynamicResources; DefaultBinder is Bind only).
    let d = Scheduler::new(KubeSchedulerConfiguration::default()).unwrap();
    assert_eq!(
        d.profiles()[0].plugin_names(E::PreBind),
        ["DynamicResources"]
    );
    assert!(d.profiles()[0].plugin_names(E::PostBind).is_empty());
    assert_eq!(d.profiles()[0].plugin_names(E::Bind), vec!["DefaultBinder"]);

    // MultiPoint enables a plugin at every point it implements; `disabled: ["*"]` turns one off.
    let yaml = "
profiles:
- plugins:
    multiPoint: {enabled: [{name: VolumeGate}, {name: BindRecorder}]}
    postBind: {disabled: [{name: '*'}]}
";
    let s = Scheduler::with_registry(
        KubeSchedulerConfiguration::from_yaml(yaml).unwrap(),
        registry(&log, &reject),
    )
    .unwrap();
    let fwk = &s.profiles()[0];
    assert_eq!(
        fwk.plugin_names(E::PreBind),
        vec!["DynamicResources", "VolumeGate"]
    );
    assert_eq!(
        fwk.plugin_names(E::Reserve),
        vec!["DynamicResources", "Coscheduling", "VolumeGate"]
    );
    assert!(fwk.plugin_names(E::PostBind).is_empty());
    let yaml = "
profiles:
- plugins:
    multiPoint: {enabled: [{name: VolumeGate}]}
    preBind: {disabled: [{name: VolumeGate}]}
";
    let s = Scheduler::with_registry(
        KubeSchedulerConfiguration::from_yaml(yaml).unwrap(),
        registry(&log, &reject),
    )
    .unwrap();
    assert_eq!(
        s.profiles()[0].plugin_names(E::PreBind),
        ["DynamicResources"]
    );

    // A plugin enabled at a point it does not implement is rejected as upstream does.
    let yaml = "profiles:\n- plugins: {postBind: {enabled: [{name: VolumeGate}]}}\n";
    let err = Scheduler::with_registry(
        KubeSchedulerConfiguration::from_yaml(yaml).unwrap(),
        registry(&log, &reject),
    )
    .unwrap_err();
    match err {
        ConfigError::Framework(msg) => assert_eq!(
            msg,
            "profiles[0]: plugin \"VolumeGate\" does not extend PostBindPlugin plugin"
        ),
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn registry_describes_extension_points_and_events() {
    let log: Log = Arc::default();
    let reject = Arc::new(Mutex::new(false));
    let r = registry(&log, &reject);
    let (points, events) = r.describe("VolumeGate").unwrap();
    assert_eq!(points, vec![E::Reserve, E::PreBind]);
    assert_eq!(
        events,
        vec![ClusterEventWithHint::without_hint(
            EventResource::Node,
            ActionType::ADD
        )]
    );
    let (points, events) = r.describe("BindRecorder").unwrap();
    assert_eq!(points, vec![E::PostBind]);
    // No EnqueueExtensions: registered for every event.
    assert_eq!(events, ClusterEventWithHint::unroll_wildcard_resource());
    let (points, _) = k8s_sched::in_tree_registry()
        .describe("DefaultBinder")
        .unwrap();
    assert_eq!(points, vec![E::Bind]);
}
