//! DynamicResources' Score for prioritized lists (upstream `dynamicresources.go` `Score`,
//! `computeScore`, `NormalizeScore`; kubernetes/kubernetes PR 134711, KEP-4816 "scoring", in
//! v1.35): on each node that passed Filter, every `firstAvailable` request of the claims
//! allocated there adds `8 - i` (`FirstAvailableDeviceRequestMaxSize` minus the index of the
//! sub-request the allocator took), and the scores are normalized by `DefaultNormalizeScore`
//! (max 100, not reversed): the node that satisfies the best-ranked sub-requests wins this
//! plugin's part (weight 1, the default profile's).
//!
//! PreScore is k8s-mini's shortcut: a pod with no claim to allocate that uses `firstAvailable`
//! skips the plugin's Score (upstream scores 0 on every node, which normalizes to 0: the same
//! totals).

use k8s_sched_framework::{CycleState, NodeInfo, NodeScore, PreScorePlugin, ScorePlugin, Status};
use k8s_types::core::Pod;
use k8s_types::resource::FIRST_AVAILABLE_DEVICE_REQUEST_MAX_SIZE;

use super::{DynamicResources, StateData, STATE_KEY};
use crate::plugins::helper::default_normalize_score;

/// The most a node can get from Score before normalization (upstream `MaxNodeScore`).
const MAX_NODE_SCORE: i64 = 100;

impl PreScorePlugin for DynamicResources {
    fn pre_score(&self, state: &mut CycleState, _pod: &Pod, _nodes: &[&NodeInfo]) -> Status {
        let prioritized = state.read::<StateData>(STATE_KEY).is_some_and(|s| {
            s.to_allocate.iter().any(|&i| {
                s.claims[i]
                    .spec
                    .devices
                    .requests
                    .iter()
                    .any(|r| !r.first_available.is_empty())
            })
        });
        if prioritized {
            Status::success()
        } else {
            Status::skip()
        }
    }
}

impl ScorePlugin for DynamicResources {
    fn score(&self, state: &CycleState, _pod: &Pod, node: &NodeInfo) -> Result<i64, Status> {
        let Some(s) = state.read::<StateData>(STATE_KEY) else {
            return Ok(0);
        };
        let allocations = s
            .node_allocations
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let Some(results) = allocations.get(&node.node().metadata.name) else {
            return Ok(0);
        };
        let mut score = 0i64;
        for (&ci, result) in s.to_allocate.iter().zip(results) {
            let claim = &s.claims[ci];
            for r in &claim.spec.devices.requests {
                for (i, sub) in r.first_available.iter().enumerate() {
                    // `<request>/<subrequest>`, compared without building it (per node).
                    let took =
                        |d: &str| d.split_once('/') == Some((r.name.as_str(), sub.name.as_str()));
                    if result.devices.results.iter().any(|d| took(&d.request)) {
                        score +=
                            i64::try_from(FIRST_AVAILABLE_DEVICE_REQUEST_MAX_SIZE - i).unwrap_or(0);
                    }
                }
            }
        }
        Ok(score)
    }

    fn normalize_score(
        &self,
        _state: &CycleState,
        _pod: &Pod,
        scores: &mut [NodeScore<'_>],
    ) -> Status {
        default_normalize_score(MAX_NODE_SCORE, false, scores);
        Status::success()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};
    use std::sync::{Arc, Mutex};

    use k8s_types::core::Node;
    use k8s_types::resource::{
        AllocationResult, DeviceRequest, DeviceRequestAllocationResult, DeviceSubRequest,
        ResourceClaim,
    };

    use super::*;

    fn result(requests: &[&str]) -> AllocationResult {
        let mut a = AllocationResult::default();
        a.devices.results = requests
            .iter()
            .map(|r| DeviceRequestAllocationResult {
                request: r.to_string(),
                ..Default::default()
            })
            .collect();
        a
    }

    /// Request `gpu` lists h100, a100, l4 (indices 0, 1, 2); request `nic` is `exactly`.
    /// Node n-h100 took `gpu/h100`: 8 - 0 = 8; n-a100 took `gpu/a100`: 8 - 1 = 7; n-l4 took
    /// `gpu/l4`: 6; a node Filter did not keep: 0. DefaultNormalizeScore(100): 8 -> 100,
    /// 7 -> 87 (700 / 8, truncated), 6 -> 75, 0 -> 0.
    #[test]
    fn nodes_score_by_the_rank_of_the_sub_request_they_satisfy() {
        let sub = |n: &str| DeviceSubRequest {
            name: n.into(),
            ..Default::default()
        };
        let mut claim = ResourceClaim::default();
        claim.spec.devices.requests = vec![
            DeviceRequest {
                name: "gpu".into(),
                first_available: vec![sub("h100"), sub("a100"), sub("l4")],
                ..Default::default()
            },
            DeviceRequest {
                name: "nic".into(),
                exactly: Some(Default::default()),
                ..Default::default()
            },
        ];
        let allocations: BTreeMap<String, Vec<AllocationResult>> = [
            ("n-h100".to_string(), vec![result(&["gpu/h100", "nic"])]),
            ("n-a100".to_string(), vec![result(&["gpu/a100", "nic"])]),
            ("n-l4".to_string(), vec![result(&["gpu/l4", "nic"])]),
        ]
        .into();
        let mut state = CycleState::new();
        state.write(
            STATE_KEY,
            StateData {
                claims: vec![claim],
                to_allocate: vec![0],
                available_on: vec![None],
                allocator: None,
                in_flight_devices: BTreeSet::new(),
                node_allocations: Arc::new(Mutex::new(allocations)),
                reserved: Vec::new(),
            },
        );
        let pl = DynamicResources::default();
        let pod = Pod::default();
        assert!(pl.pre_score(&mut state, &pod, &[]).is_success());
        let names = ["n-h100", "n-a100", "n-l4", "n-other"];
        let raw: Vec<i64> = names
            .iter()
            .map(|n| {
                let mut node = Node::default();
                node.metadata.name = n.to_string();
                pl.score(&state, &pod, &NodeInfo::new(Arc::new(node)))
                    .unwrap()
            })
            .collect();
        assert_eq!(raw, [8, 7, 6, 0]);
        let mut scores: Vec<NodeScore<'_>> = names
            .iter()
            .zip(&raw)
            .map(|(name, &score)| NodeScore { name, score })
            .collect();
        assert!(pl.normalize_score(&state, &pod, &mut scores).is_success());
        let normalized: Vec<i64> = scores.iter().map(|s| s.score).collect();
        assert_eq!(normalized, [100, 87, 75, 0]);
        // A pod whose claims use no firstAvailable skips Score.
        let mut plain = CycleState::new();
        assert!(!pl.pre_score(&mut plain, &pod, &[]).is_success());
    }
}
