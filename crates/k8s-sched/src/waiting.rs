//! Pods held at Permit ([`WaitingPods`]): assumed on their node, waiting for every Permit plugin
//! that said Wait to allow them, for one to reject them, or for a plugin's timeout. Mirrors
//! upstream `pkg/scheduler/framework/runtime/waiting_pods_map.go`; timeouts are checked at the
//! start of each tick (one tick = one second).

use k8s_types::object::Shared;
use std::collections::BTreeMap;

use k8s_sched_framework::{CycleState, Status, WaitingPodInfo};
use k8s_types::core::Pod;
use k8s_types::meta::go_duration;
use k8s_types::Tick;

/// The identity used for waiting pods: the UID, or `namespace/name` for pods without one.
pub fn pod_key(pod: &Pod) -> String {
    match pod.metadata.uid.as_deref() {
        Some(uid) if !uid.is_empty() => uid.to_string(),
        _ => pod.key(),
    }
}

/// A pod held at Permit.
#[derive(Debug)]
pub struct WaitingPod {
    /// The pod.
    pub pod: Shared<Pod>,
    /// The node it is assumed on.
    pub node: String,
    /// The profile that scheduled it.
    pub profile: usize,
    /// Plugins that asked to wait: plugin -> (timeout in ticks, deadline tick).
    pub pending: BTreeMap<String, (Tick, Tick)>,
    /// `None` while waiting; `Some(success)` once allowed; `Some(rejection)` once rejected.
    pub decision: Option<Status>,
    /// The cycle state of its scheduling attempt (used by Unreserve and Bind).
    pub state: CycleState,
    /// Order in which pods started waiting.
    pub seq: u64,
}

/// Every waiting pod, by [`pod_key`].
#[derive(Debug, Default)]
pub struct WaitingPods {
    pods: BTreeMap<String, WaitingPod>,
    next_seq: u64,
}

impl WaitingPods {
    /// Starts holding `pod` on `node` for the plugins in `waits` (plugin -> timeout in ticks).
    pub(crate) fn add(
        &mut self,
        pod: Shared<Pod>,
        node: String,
        profile: usize,
        waits: BTreeMap<String, Tick>,
        state: CycleState,
        now: Tick,
    ) {
        let seq = self.next_seq;
        self.next_seq += 1;
        let pending = waits.into_iter().map(|(p, t)| (p, (t, now + t))).collect();
        self.pods.insert(
            pod_key(&pod),
            WaitingPod {
                pod,
                node,
                profile,
                pending,
                decision: None,
                state,
                seq,
            },
        );
    }

    /// True when the pod with this key is held.
    pub fn contains(&self, key: &str) -> bool {
        self.pods.contains_key(key)
    }

    /// True when no pod is held.
    pub fn is_empty(&self) -> bool {
        self.pods.is_empty()
    }

    /// Held pods, in the order they started waiting.
    pub fn iter(&self) -> impl Iterator<Item = &WaitingPod> {
        let mut v: Vec<&WaitingPod> = self.pods.values().collect();
        v.sort_by_key(|w| w.seq);
        v.into_iter()
    }

    /// Undecided held pods as plugins see them, in waiting order.
    pub fn infos(&self) -> Vec<WaitingPodInfo> {
        self.iter()
            .filter(|w| w.decision.is_none())
            .map(|w| WaitingPodInfo {
                pod: Shared::clone(&w.pod),
                node_name: w.node.clone(),
                pending_plugins: w.pending.keys().cloned().collect(),
            })
            .collect()
    }

    /// Upstream `WaitingPod.Allow`: `plugin` no longer holds the pod; once none does, it is allowed.
    pub(crate) fn allow(&mut self, key: &str, plugin: &str) {
        if let Some(w) = self.pods.get_mut(key) {
            if w.decision.is_some() {
                return;
            }
            w.pending.remove(plugin);
            if w.pending.is_empty() {
                w.decision = Some(Status::success());
            }
        }
    }

    /// Upstream `WaitingPod.Reject`: the first decision wins.
    pub(crate) fn reject(&mut self, key: &str, plugin: &str, message: &str) {
        if let Some(w) = self.pods.get_mut(key) {
            if w.decision.is_none() {
                w.decision = Some(Status::unschedulable(message).with_plugin(plugin));
            }
        }
    }

    /// Rejects every undecided pod whose wait at some plugin has run out (upstream timer message
    /// `rejected due to timeout after waiting <d> at plugin <p>`).
    pub(crate) fn expire(&mut self, now: Tick) {
        let mut expired = Vec::new();
        for (k, w) in &self.pods {
            if w.decision.is_some() {
                continue;
            }
            if let Some((plugin, (timeout, _))) =
                w.pending.iter().find(|(_, (_, deadline))| now >= *deadline)
            {
                expired.push((k.clone(), plugin.clone(), *timeout));
            }
        }
        for (k, plugin, timeout) in expired {
            let msg = format!(
                "rejected due to timeout after waiting {} at plugin {plugin}",
                go_duration(timeout)
            );
            self.reject(&k, &plugin, &msg);
        }
    }

    /// Removes and returns the decided pod that started waiting first.
    pub(crate) fn take_next_decided(&mut self) -> Option<WaitingPod> {
        let key = self
            .pods
            .iter()
            .filter(|(_, w)| w.decision.is_some())
            .min_by_key(|(_, w)| w.seq)
            .map(|(k, _)| k.clone())?;
        self.pods.remove(&key)
    }

    /// Removes a pod without a decision (it was bound or deleted elsewhere).
    pub(crate) fn remove(&mut self, key: &str) -> Option<WaitingPod> {
        self.pods.remove(key)
    }

    /// Keys of every held pod.
    pub(crate) fn keys(&self) -> Vec<String> {
        self.pods.keys().cloned().collect()
    }

    /// A held pod by key.
    pub fn get(&self, key: &str) -> Option<&WaitingPod> {
        self.pods.get(key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_duration_formats_like_time_duration() {
        assert_eq!(go_duration(10), "10s");
        assert_eq!(go_duration(60), "1m0s");
        assert_eq!(go_duration(90), "1m30s");
        assert_eq!(go_duration(3600), "1h0m0s");
        assert_eq!(go_duration(0), "0s");
    }

    #[test]
    fn allow_needs_every_plugin_and_first_decision_wins() {
        let mut w = WaitingPods::default();
        let mut pod = Pod::default();
        pod.metadata.uid = Some("u1".into());
        let waits: BTreeMap<String, Tick> = [("A".to_string(), 5), ("B".to_string(), 10)].into();
        w.add(
            Shared::from_typed(pod),
            "n".into(),
            0,
            waits,
            CycleState::new(),
            100,
        );
        w.allow("u1", "A");
        assert!(w.get("u1").unwrap().decision.is_none());
        w.expire(104);
        assert!(w.get("u1").unwrap().decision.is_none());
        w.expire(110);
        let d = w.get("u1").unwrap().decision.clone().unwrap();
        assert_eq!(
            d.message(),
            "rejected due to timeout after waiting 10s at plugin B"
        );
        w.allow("u1", "B");
        assert!(!w.get("u1").unwrap().decision.as_ref().unwrap().is_success());
        assert!(w.take_next_decided().is_some());
        assert!(w.is_empty());
    }
}
