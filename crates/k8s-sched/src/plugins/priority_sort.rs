//! PrioritySort (QueueSort): higher `spec.priority` first, then the earlier queue timestamp
//! (upstream `pkg/scheduler/framework/plugins/queuesort/priority_sort.go`). For determinism k8s-mini
//! breaks remaining ties by the pod's resourceVersion when first seen (creation order), then
//! namespace/name.

use std::cmp::Ordering;
use std::sync::Arc;

use k8s_sched_framework::{Plugin, QueueSortPlugin, QueuedPodInfo};

use super::names;
use k8s_sched_framework::ConfigError;
use k8s_sched_framework::PluginArgs;

/// The PrioritySort plugin.
#[derive(Debug, Default)]
pub struct PrioritySort;

impl PrioritySort {
    /// Factory (no args).
    ///
    /// # Errors
    /// Never.
    pub fn factory(_: &PluginArgs<'_>) -> Result<Arc<dyn Plugin>, ConfigError> {
        Ok(Arc::new(PrioritySort))
    }
}

impl Plugin for PrioritySort {
    fn name(&self) -> &str {
        names::PRIORITY_SORT
    }
    fn as_queue_sort(&self) -> Option<&dyn QueueSortPlugin> {
        Some(self)
    }
}

/// The total order PrioritySort uses.
pub fn compare(a: &QueuedPodInfo, b: &QueuedPodInfo) -> Ordering {
    b.pod
        .priority()
        .cmp(&a.pod.priority())
        .then(a.timestamp.cmp(&b.timestamp))
        .then(a.sequence.cmp(&b.sequence))
        .then_with(|| a.pod.metadata.namespace().cmp(b.pod.metadata.namespace()))
        .then_with(|| a.pod.metadata.name.cmp(&b.pod.metadata.name))
}

impl QueueSortPlugin for PrioritySort {
    fn less(&self, a: &QueuedPodInfo, b: &QueuedPodInfo) -> bool {
        compare(a, b) == Ordering::Less
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_types::core::Pod;
    use k8s_types::object::Shared;

    fn q(name: &str, prio: i32, ts: u64, seq: i64) -> QueuedPodInfo {
        let mut p = Pod::default();
        p.metadata.name = name.into();
        p.spec.priority = Some(prio);
        QueuedPodInfo {
            pod: Shared::from_typed(p),
            timestamp: ts,
            attempts: 0,
            initial_attempt_timestamp: None,
            sequence: seq,
        }
    }

    #[test]
    fn higher_priority_then_earlier_then_sequence_then_name() {
        let s = PrioritySort;
        assert!(s.less(&q("b", 10, 5, 9), &q("a", 0, 0, 0)));
        assert!(s.less(&q("b", 0, 1, 9), &q("a", 0, 2, 0)));
        assert!(s.less(&q("b", 0, 1, 1), &q("a", 0, 1, 2)));
        assert!(s.less(&q("a", 0, 1, 1), &q("b", 0, 1, 1)));
        assert!(!s.less(&q("a", 0, 1, 1), &q("a", 0, 1, 1)));
    }
}
