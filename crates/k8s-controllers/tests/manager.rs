//! The controller-manager's contract (k8s-types `controller`): event handlers queue keys, each
//! due key is synced once per turn in key order, `Action::Requeue { after }` syncs it again
//! `after` ticks later, an error backs off with the rate limiter, a key with nothing to do is not
//! synced again, and the informers' resync hands every object to the handlers again.

use std::sync::{Arc, Mutex};

use k8s_controllers::{ControllerManager, SyncError};
use k8s_testing::FakeApi;
use k8s_types::apiserver::{ApiClient, ApiExt};
use k8s_types::controller::{Action, Controller};
use k8s_types::core::Pod;
use k8s_types::informer::{Delta, SharedInformerFactory};
use k8s_types::meta::ObjectMeta;
use k8s_types::status::Status;
use k8s_types::workqueue::WorkQueue;
use k8s_types::{Kind, Tick};

/// Records (tick, key) of every sync; `b` asks to be requeued after 3 ticks, `c` fails.
struct Recorder {
    log: Arc<Mutex<Vec<(Tick, String)>>>,
}

impl Controller for Recorder {
    fn name(&self) -> &str {
        "recorder"
    }

    fn informers(&self) -> Vec<Kind> {
        vec![Kind::Pod]
    }

    fn on_change(&mut self, change: &Delta, _: &SharedInformerFactory, queue: &mut WorkQueue) {
        queue.add(change.key.clone());
    }

    fn sync(
        &mut self,
        key: &str,
        _: &SharedInformerFactory,
        api: &mut dyn ApiClient,
    ) -> Result<Action, SyncError> {
        self.log
            .lock()
            .expect("log")
            .push((api.now(), key.to_string()));
        match key {
            "default/b" => Ok(Action::requeue(3)),
            "default/c" => Err(Status::internal("boom").into()),
            _ => Ok(Action::AwaitChange),
        }
    }
}

fn pod(name: &str) -> Pod {
    Pod {
        metadata: ObjectMeta {
            name: name.into(),
            namespace: Some("default".into()),
            ..Default::default()
        },
        ..Default::default()
    }
}

#[test]
fn keys_are_synced_in_order_and_actions_are_honoured() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let mut m = ControllerManager::with_controllers(vec![Box::new(Recorder {
        log: Arc::clone(&log),
    })]);
    m.set_resync_period(0);
    let mut api = FakeApi::at(0);
    for n in ["c", "b", "a"] {
        api.create_typed(pod(n)).expect("pod");
    }
    for t in 1..=10 {
        api.now = t;
        m.reconcile(&mut api);
    }
    let got = log.lock().expect("log").clone();
    let at = |key: &str| -> Vec<Tick> {
        got.iter()
            .filter(|(_, k)| k == key)
            .map(|(t, _)| *t)
            .collect()
    };
    // The first turn lists the pods: one sync each, in key order.
    assert_eq!(
        got.iter()
            .take(3)
            .map(|(_, k)| k.as_str())
            .collect::<Vec<_>>(),
        ["default/a", "default/b", "default/c"]
    );
    // Nothing changed afterwards: `a` is never synced again; `b` every 3 ticks.
    assert_eq!(at("default/a"), [1]);
    assert_eq!(at("default/b"), [1, 4, 7, 10]);
    // `c` fails: 5 ms * 2^n rounds up to one tick for the first eight retries (ticks 2..=9); the
    // ninth waits 1280 ms, two ticks (tick 11).
    assert_eq!(at("default/c"), (1..=9).collect::<Vec<_>>());
    assert!(m.next_due().is_some());
}

#[test]
fn a_resync_hands_every_object_to_the_handlers_again() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let mut m = ControllerManager::with_controllers(vec![Box::new(Recorder {
        log: Arc::clone(&log),
    })]);
    m.set_resync_period(5);
    let mut api = FakeApi::at(0);
    api.create_typed(pod("a")).expect("pod");
    for t in 1..=12 {
        api.now = t;
        m.reconcile(&mut api);
    }
    let ticks: Vec<Tick> = log.lock().expect("log").iter().map(|(t, _)| *t).collect();
    assert_eq!(ticks, [1, 6, 11]);
}

/// The node lifecycle monitor pass (every 5 s) can be told apart from the other work and moved
/// forward on its own period, for a driver that skips ticks in which the passes write nothing.
#[test]
fn the_node_monitor_pass_moves_forward_on_its_period() {
    let mut m = ControllerManager::new();
    let mut api = FakeApi::at(0);
    api.add(k8s_testing::node("n1", "4", "8Gi", &[]));
    m.reconcile(&mut api);
    // The first pass ran at t=0 and requeued itself 5 s later.
    assert_eq!(m.next_node_monitor(), Some(5));
    assert_eq!(m.next_due(), Some(5));
    assert_eq!(m.next_due_besides_node_monitor(), None);
    // Passes at 5, 10, 15, 20 are skipped; the next one is 25 (the first at 23 or later).
    m.fast_forward_node_monitor(23);
    assert_eq!(m.next_node_monitor(), Some(25));
    m.fast_forward_node_monitor(25);
    assert_eq!(m.next_node_monitor(), Some(25));
    m.fast_forward_node_monitor(12);
    assert_eq!(m.next_node_monitor(), Some(25));
    api.now = 25;
    m.reconcile(&mut api);
    assert_eq!(m.next_node_monitor(), Some(30));
}
