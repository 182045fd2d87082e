//! ImageLocality (PreScore, Score): favours nodes that already have the pod's container images
//! (regular and init containers), from `node.status.images`. Each image present on the node adds
//! its size scaled by its spread (`size * nodes with the image / all nodes`, the "node heating"
//! guard); the sum is clamped to `[23 MiB, 1000 MiB * containers]` and mapped linearly to 0..100.
//! No NormalizeScore. Mirrors upstream
//! `pkg/scheduler/framework/plugins/imagelocality/image_locality.go` and the image-state summary
//! of `pkg/scheduler/backend/cache/cache.go` (`addNodeImageStates`).
//!
//! Upstream keeps the per-image node counts in the scheduler cache and has no PreScore; k8s-mini
//! reads them in PreScore from the scheduler's image index (`Handle::image_summary`, kept by the
//! cache like upstream's `imageStates`), so the cost per pod is its number of images. When nodes
//! report different sizes for the same image name, the size of the first node in name order is
//! used (upstream: of the node the cache saw first).

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_sched_framework::{
    CycleState, Handle, NodeInfo, Plugin, PreScorePlugin, ScorePlugin, Status, MAX_NODE_SCORE,
};
use k8s_types::core::Pod;

use super::names;
use crate::runtime::kernel::{NodeKernels, NodeScoreKernel};
use k8s_sched_framework::ConfigError;
use k8s_sched_framework::PluginArgs;

/// One MiB in bytes (upstream `mb`).
pub const MB: i64 = 1024 * 1024;
/// Upstream `minThreshold`: 23 MiB, in bytes.
pub const MIN_THRESHOLD: i64 = 23 * MB;
/// Upstream `maxContainerThreshold`: 1000 MiB per container, in bytes.
pub const MAX_CONTAINER_THRESHOLD: i64 = 1000 * MB;
/// CycleState key of the PreScore state.
pub const PRE_SCORE_STATE_KEY: &str = "PreScoreImageLocality";
/// Upstream `parsers.DefaultImageTag`.
pub const DEFAULT_IMAGE_TAG: &str = "latest";

/// Cluster-wide state of one image (upstream `ImageStateSummary`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ImageStateSummary {
    /// Size in bytes.
    pub size: i64,
    /// Number of nodes that have the image.
    pub num_nodes: usize,
}

/// What PreScore computed: the pod's images and the node count.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PreScoreState {
    /// Number of nodes in the snapshot.
    pub total_num_nodes: usize,
    /// Normalized image name -> summary, for the pod's images present on some node.
    pub images: BTreeMap<String, ImageStateSummary>,
}

/// The ImageLocality plugin.
#[derive(Debug, Default)]
pub struct ImageLocality;

impl ImageLocality {
    /// Factory (no args).
    ///
    /// # Errors
    /// Never.
    pub fn factory(_: &PluginArgs<'_>) -> Result<Arc<dyn Plugin>, ConfigError> {
        Ok(Arc::new(ImageLocality))
    }
}

/// Upstream `normalizedImageName`: appends `:latest` when the name has no tag.
pub fn normalized_image_name(name: &str) -> String {
    let colon = name.rfind(':').map_or(-1, |i| i as i64);
    let slash = name.rfind('/').map_or(-1, |i| i as i64);
    if colon <= slash {
        format!("{name}:{DEFAULT_IMAGE_TAG}")
    } else {
        name.to_string()
    }
}

/// Normalized images of the pod's init containers then regular containers (duplicates kept,
/// as upstream sums them per container).
fn pod_images(pod: &Pod) -> impl Iterator<Item = String> + '_ {
    pod.spec
        .init_containers
        .iter()
        .chain(pod.spec.containers.iter())
        .map(|c| normalized_image_name(&c.image))
}

/// Upstream `scaledImageScore`: `size * numNodes / totalNumNodes` in floating point, truncated.
pub fn scaled_image_score(state: &ImageStateSummary, total_num_nodes: usize) -> i64 {
    let spread = state.num_nodes as f64 / total_num_nodes as f64;
    (state.size as f64 * spread) as i64
}

/// Upstream `calculatePriority`: `100 * (clamp(sum) - min) / (max - min)` with
/// `max = 1000 MiB * containers`.
pub fn calculate_priority(sum_scores: i64, num_containers: usize) -> i64 {
    let max_threshold = MAX_CONTAINER_THRESHOLD * num_containers as i64;
    if max_threshold <= MIN_THRESHOLD {
        return 0;
    }
    let clamped = sum_scores.clamp(MIN_THRESHOLD, max_threshold);
    MAX_NODE_SCORE * (clamped - MIN_THRESHOLD) / (max_threshold - MIN_THRESHOLD)
}

/// Counts, over `nodes`, the nodes having each of the pod's images.
fn compute(pod: &Pod, nodes: &[&NodeInfo]) -> PreScoreState {
    let mut images: BTreeMap<String, ImageStateSummary> = BTreeMap::new();
    let any_images = nodes.iter().any(|n| !n.node().status.images.is_empty());
    if any_images {
        for name in pod_images(pod) {
            if images.contains_key(&name) {
                continue;
            }
            let mut summary = ImageStateSummary::default();
            for n in nodes {
                if let Some(size) = n.image_sizes().get(&name) {
                    if summary.num_nodes == 0 {
                        summary.size = *size;
                    }
                    summary.num_nodes += 1;
                }
            }
            if summary.num_nodes > 0 {
                images.insert(name, summary);
            }
        }
    }
    PreScoreState {
        total_num_nodes: nodes.len(),
        images,
    }
}

/// [`compute`] over the whole snapshot from the scheduler's image index
/// ([`Handle::image_summary`], upstream's cache `imageStates`): O(the pod's images) instead of
/// O(nodes).
fn compute_from_handle(pod: &Pod, handle: &dyn Handle) -> PreScoreState {
    let mut images: BTreeMap<String, ImageStateSummary> = BTreeMap::new();
    for name in pod_images(pod) {
        if images.contains_key(&name) {
            continue;
        }
        if let Some((size, num_nodes)) = handle.image_summary(&name) {
            images.insert(name, ImageStateSummary { size, num_nodes });
        }
    }
    PreScoreState {
        total_num_nodes: handle.node_infos().len(),
        images,
    }
}

impl Plugin for ImageLocality {
    fn name(&self) -> &str {
        names::IMAGE_LOCALITY
    }
    fn as_pre_score(&self) -> Option<&dyn PreScorePlugin> {
        Some(self)
    }
    fn as_score(&self) -> Option<&dyn ScorePlugin> {
        Some(self)
    }
}

impl PreScorePlugin for ImageLocality {
    /// Without a handle the filtered nodes stand for the whole snapshot.
    fn pre_score(&self, state: &mut CycleState, pod: &Pod, nodes: &[&NodeInfo]) -> Status {
        state.write(PRE_SCORE_STATE_KEY, compute(pod, nodes));
        Status::success()
    }

    fn pre_score_with_handle(
        &self,
        state: &mut CycleState,
        pod: &Pod,
        _nodes: &[&NodeInfo],
        handle: &dyn Handle,
    ) -> Status {
        state.write(PRE_SCORE_STATE_KEY, compute_from_handle(pod, handle));
        Status::success()
    }
}

impl ScorePlugin for ImageLocality {
    fn score(&self, state: &CycleState, pod: &Pod, node: &NodeInfo) -> Result<i64, Status> {
        let Some(s) = state.read::<PreScoreState>(PRE_SCORE_STATE_KEY) else {
            return Err(Status::error(format!(
                "reading {PRE_SCORE_STATE_KEY:?} from cycleState: not found"
            )));
        };
        let num_containers = pod.spec.init_containers.len() + pod.spec.containers.len();
        let mut sum = 0i64;
        if !s.images.is_empty() {
            let on_node = node.image_sizes();
            for name in pod_images(pod) {
                if !on_node.contains_key(&name) {
                    continue;
                }
                if let Some(summary) = s.images.get(&name) {
                    sum += scaled_image_score(summary, s.total_num_nodes);
                }
            }
        }
        Ok(calculate_priority(sum, num_containers))
    }

    fn score_nodes(
        &self,
        state: &CycleState,
        pod: &Pod,
        nodes: &[&NodeInfo],
        scores: &mut [i64],
    ) -> Result<(), Status> {
        let Some(s) = state.read::<PreScoreState>(PRE_SCORE_STATE_KEY) else {
            return Err(Status::error(format!(
                "reading {PRE_SCORE_STATE_KEY:?} from cycleState: not found"
            )));
        };
        if s.images.is_empty() {
            // No node has any of the pod's images: every node scores what an empty sum gives.
            let num_containers = pod.spec.init_containers.len() + pod.spec.containers.len();
            scores.fill(calculate_priority(0, num_containers));
            return Ok(());
        }
        for (node, out) in nodes.iter().zip(scores.iter_mut()) {
            *out = self.score(state, pod, node)?;
        }
        Ok(())
    }
}

impl NodeKernels for ImageLocality {
    /// When no node has any of the pod's images, every node scores what an empty sum gives (no
    /// NormalizeScore).
    fn score_kernel(&self, state: &CycleState, pod: &Pod) -> Option<NodeScoreKernel> {
        let s = state.read::<PreScoreState>(PRE_SCORE_STATE_KEY)?;
        if !s.images.is_empty() {
            return None;
        }
        let num_containers = pod.spec.init_containers.len() + pod.spec.containers.len();
        Some(NodeScoreKernel::Constant {
            score: calculate_priority(0, num_containers),
            unless_flags: 0,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugins::fixtures::{FakeHandle, NodeBuilder, PodBuilder};
    use k8s_types::core::Node;

    fn node_403002000(name: &str) -> Node {
        NodeBuilder::new(name)
            .image(
                &["gcr.io/40:latest", "gcr.io/40:v1", "gcr.io/40:v1"],
                40 * MB,
            )
            .image(&["gcr.io/300:latest", "gcr.io/300:v1"], 300 * MB)
            .image(&["gcr.io/2000:latest"], 2000 * MB)
            .obj()
    }
    fn node_25010(name: &str) -> Node {
        NodeBuilder::new(name)
            .image(&["gcr.io/250:latest"], 250 * MB)
            .image(&["gcr.io/10:latest", "gcr.io/10:v1"], 10 * MB)
            .obj()
    }
    fn node_60040900(name: &str) -> Node {
        NodeBuilder::new(name)
            .image(&["gcr.io/600:latest"], 600 * MB)
            .image(&["gcr.io/40:latest"], 40 * MB)
            .image(&["gcr.io/900:latest"], 900 * MB)
            .obj()
    }
    fn node_300600900(name: &str) -> Node {
        NodeBuilder::new(name)
            .image(&["gcr.io/300:latest"], 300 * MB)
            .image(&["gcr.io/600:latest"], 600 * MB)
            .image(&["gcr.io/900:latest"], 900 * MB)
            .obj()
    }
    fn node_400030(name: &str) -> Node {
        NodeBuilder::new(name)
            .image(&["gcr.io/4000:latest"], 4000 * MB)
            .image(&["gcr.io/30:latest"], 30 * MB)
            .obj()
    }
    fn node_203040(name: &str) -> Node {
        NodeBuilder::new(name)
            .image(&["gcr.io/20:latest"], 20 * MB)
            .image(&["gcr.io/30:latest"], 30 * MB)
            .image(&["gcr.io/40:latest"], 40 * MB)
            .obj()
    }

    #[test]
    fn scores_match_upstream_test_image_locality_priority() {
        // Upstream image_locality_test.go TestImageLocalityPriority (with init containers and
        // the per-container max threshold).
        let cases: Vec<(&str, Pod, Vec<Node>, Vec<i64>)> = vec![
            (
                "two images spread on two nodes, prefer the larger image one",
                PodBuilder::new("p").images(&["gcr.io/40", "gcr.io/250"]).obj(),
                vec![node_403002000("node1"), node_25010("node2")],
                vec![0, 5],
            ),
            (
                "two images on one node, prefer this node",
                PodBuilder::new("p").images(&["gcr.io/40", "gcr.io/300"]).obj(),
                vec![node_403002000("node1"), node_25010("node2")],
                vec![7, 0],
            ),
            (
                "if exceed limit, use limit",
                PodBuilder::new("p").images(&["gcr.io/10", "gcr.io/4000"]).obj(),
                vec![node_400030("node1"), node_25010("node2")],
                vec![100, 0],
            ),
            (
                "if exceed limit, use limit (with node which has no images present)",
                PodBuilder::new("p").images(&["gcr.io/10", "gcr.io/4000"]).obj(),
                vec![
                    node_400030("node1"),
                    node_25010("node2"),
                    NodeBuilder::new("node3").obj(),
                ],
                vec![66, 0, 0],
            ),
            (
                "pod with multiple large images, node2 is preferred",
                PodBuilder::new("p")
                    .images(&["gcr.io/300", "gcr.io/600", "gcr.io/900"])
                    .obj(),
                vec![
                    node_60040900("node1"),
                    node_300600900("node2"),
                    NodeBuilder::new("node3").obj(),
                ],
                vec![32, 36, 0],
            ),
            (
                "pod with multiple small images",
                PodBuilder::new("p").images(&["gcr.io/30", "gcr.io/40"]).obj(),
                vec![node_203040("node1"), node_400030("node2")],
                vec![1, 0],
            ),
            (
                "include InitContainers: two images spread on two nodes, prefer the larger image one",
                PodBuilder::new("p")
                    .images(&["gcr.io/30"])
                    .init_images(&["gcr.io/300"])
                    .obj(),
                vec![node_403002000("node1"), node_203040("node2")],
                vec![6, 0],
            ),
        ];
        for (name, pod, nodes, want) in cases {
            let h = FakeHandle::new(&nodes, &[], vec![]);
            let refs: Vec<&NodeInfo> = h.nodes.iter().collect();
            let mut state = CycleState::new();
            assert!(ImageLocality
                .pre_score_with_handle(&mut state, &pod, &refs, &h)
                .is_success());
            let got: Vec<i64> = refs
                .iter()
                .map(|n| ImageLocality.score(&state, &pod, n).expect("score"))
                .collect();
            assert_eq!(got, want, "{name}");
        }
    }

    #[test]
    fn normalized_image_name_matches_upstream() {
        // Upstream TestNormalizedImageName.
        assert_eq!(normalized_image_name("root"), "root:latest");
        assert_eq!(
            normalized_image_name("gcr.io:5000/root"),
            "gcr.io:5000/root:latest"
        );
        assert_eq!(normalized_image_name("root:tag"), "root:tag");
        let digest = "root@sha256:4813494d137e1631bba301d5acab6e7bb7aa74ce1185d456565ef51d737677b2";
        assert_eq!(normalized_image_name(digest), digest);
    }

    #[test]
    fn priority_is_clamped_to_the_thresholds() {
        assert_eq!(calculate_priority(0, 1), 0);
        assert_eq!(calculate_priority(MIN_THRESHOLD, 1), 0);
        assert_eq!(calculate_priority(2000 * MB, 1), 100);
        // 100 * (500 - 23) / (1000 - 23) = 48.8 -> 48.
        assert_eq!(calculate_priority(500 * MB, 1), 48);
        assert_eq!(calculate_priority(500 * MB, 0), 0);
    }
}
