//! PodsToActivate: the pods a plugin asks the scheduler to move to activeQ at the end of a
//! successful scheduling cycle and again at the end of a successful binding cycle (upstream
//! `PodsToActivate` and `PodsToActivateKey` in `pkg/scheduler/framework/types.go` /
//! `cycle_state.go`, consumed by `schedulingCycle` and `bindingCycle` in
//! `pkg/scheduler/schedule_one.go` through `SchedulingQueue.Activate`).
//!
//! The scheduler writes an empty [`PodsToActivate`] under [`PODS_TO_ACTIVATE_KEY`] into every
//! attempt's [`CycleState`] before PreFilter, as upstream does, so a plugin (in this crate or
//! another) finds it with `state.read_mut::<PodsToActivate>(PODS_TO_ACTIVATE_KEY)` and inserts
//! pods by `namespace/name`. Order (determinism): the map is a `BTreeMap`, so the queue visits
//! the pods in `namespace/name` order (upstream ranges over a Go map).

use k8s_types::object::Shared;
use std::collections::BTreeMap;

use k8s_sched_framework::CycleState;
use k8s_types::core::Pod;

/// Upstream `PodsToActivateKey`: the reserved cycle-state key.
pub const PODS_TO_ACTIVATE_KEY: &str = "kubernetes.io/pods-to-activate";

/// Upstream `PodsToActivate`: pods to move to activeQ, by `namespace/name`.
#[derive(Clone, Debug, Default)]
pub struct PodsToActivate {
    /// The pods, keyed by `namespace/name` (upstream `Map`).
    pub map: BTreeMap<String, Shared<Pod>>,
}

impl PodsToActivate {
    /// Adds `pods` to the state's PodsToActivate, keyed by `namespace/name`; does nothing when the
    /// state has none (upstream plugins only write when `state.Read(PodsToActivateKey)`
    /// succeeds).
    pub fn add(state: &mut CycleState, pods: impl IntoIterator<Item = Shared<Pod>>) {
        if let Some(s) = state.read_mut::<PodsToActivate>(PODS_TO_ACTIVATE_KEY) {
            for p in pods {
                s.map.insert(p.key(), p);
            }
        }
    }
}

/// Writes an empty PodsToActivate into a fresh attempt's state (upstream `scheduleOne`).
pub(crate) fn init(state: &mut CycleState) {
    state.write(PODS_TO_ACTIVATE_KEY, PodsToActivate::default());
}

/// Takes the pods queued for activation out of the state, leaving the entry empty (upstream
/// clears the map after the scheduling cycle's `Activate`). `None` when there are none.
pub(crate) fn take(state: &mut CycleState) -> Option<BTreeMap<String, Shared<Pod>>> {
    let s = state.read_mut::<PodsToActivate>(PODS_TO_ACTIVATE_KEY)?;
    if s.map.is_empty() {
        return None;
    }
    Some(std::mem::take(&mut s.map))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(ns: &str, name: &str) -> Shared<Pod> {
        let mut p = Pod::default();
        p.metadata.name = name.into();
        p.metadata.namespace = Some(ns.into());
        Shared::from_typed(p)
    }

    #[test]
    fn add_needs_the_reserved_entry_and_take_empties_it() {
        let mut state = CycleState::new();
        PodsToActivate::add(&mut state, [pod("default", "a")]);
        assert!(take(&mut state).is_none());
        init(&mut state);
        PodsToActivate::add(&mut state, [pod("b-ns", "x"), pod("a-ns", "y")]);
        let keys: Vec<String> = take(&mut state)
            .map(|m| m.into_keys().collect())
            .unwrap_or_default();
        assert_eq!(keys, vec!["a-ns/y".to_string(), "b-ns/x".to_string()]);
        assert!(take(&mut state).is_none());
        assert!(state.read::<PodsToActivate>(PODS_TO_ACTIVATE_KEY).is_some());
    }
}
