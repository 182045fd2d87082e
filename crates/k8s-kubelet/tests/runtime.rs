//! The simulated runtime's pod records on their own (k8s-kubelet `runtime`): the order in which a
//! deleted pod's containers stop.
use std::collections::{BTreeMap, BTreeSet};

use k8s_kubelet::backoff::Backoff;
use k8s_kubelet::runtime::{ContainerState, NodeContext, PodPhase, RuntimePod};
use k8s_types::core::{Container, Pod};
use k8s_types::{Shared, Tick};

fn container(name: &str, sidecar: bool) -> Container {
    Container {
        name: name.into(),
        image: "img:1".into(),
        restart_policy: sidecar.then(|| "Always".to_string()),
        ..Default::default()
    }
}

fn pod(behavior: &str) -> Pod {
    let mut p = Pod::default();
    p.metadata.name = "p".into();
    p.metadata.namespace = Some("default".into());
    p.metadata.uid = Some("u1".into());
    p.spec.termination_grace_period_seconds = Some(30);
    p.spec.init_containers = vec![container("proxy", true)];
    p.spec.containers = vec![container("app", false)].into();
    p.metadata.annotations.insert(
        k8s_kubelet::behavior::BEHAVIOR_ANNOTATION.into(),
        behavior.into(),
    );
    p
}

fn run_until(rec: &mut RuntimePod, node: &mut NodeContext<'_>, to: Tick) -> Vec<(Tick, String)> {
    let mut log = Vec::new();
    for t in 0..=to {
        let mut out = Vec::new();
        rec.step(t, node, &mut out);
        log.extend(
            out.into_iter()
                .map(|e| (t, format!("{} {}", e.reason, e.message))),
        );
    }
    log
}

/// Upstream order on deletion: app containers are stopped first; a sidecar gets SIGTERM only
/// once they have exited, and is killed (137) when the grace period ends.
#[test]
fn deletion_stops_app_containers_then_sidecars() {
    let p = pod("containers: {app: {stop: {seconds: 2}}}");
    let mut rec = RuntimePod::new(
        "u1".into(),
        Shared::from_typed(p),
        PodPhase::Creating { since: 0 },
        None,
        &[],
    );
    let (mut images, mut pulled, mut backoff) =
        (BTreeSet::new(), BTreeMap::new(), Backoff::default());
    let mut node = NodeContext {
        images: &mut images,
        pulled: &mut pulled,
        backoff: &mut backoff,
        startup_ticks: 1,
    };
    let log = run_until(&mut rec, &mut node, 9);
    let started: Vec<&(Tick, String)> = log
        .iter()
        .filter(|(_, e)| e.starts_with("Started"))
        .collect();
    assert_eq!(
        started,
        vec![
            &(1, "Started Started container proxy".to_string()),
            &(1, "Started Started container app".to_string())
        ]
    );
    let mut out = Vec::new();
    rec.begin_termination(10, 40, &mut out);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].message, "Stopping container app");
    let mut log = Vec::new();
    for t in 10..=40 {
        let mut out = Vec::new();
        rec.step(t, &mut node, &mut out);
        log.extend(out.into_iter().map(|e| (t, e.message)));
    }
    assert_eq!(log, vec![(12, "Stopping container proxy".to_string())]);
    assert!(rec.all_stopped());
    let exits: Vec<(i32, Tick)> = rec
        .containers
        .iter()
        .map(|c| match &c.state {
            ContainerState::Exited { term, .. } => (term.exit_code, term.finished),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(exits, vec![(137, 40), (0, 12)]);
}
