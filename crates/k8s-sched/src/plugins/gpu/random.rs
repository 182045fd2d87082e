//! RandomScore (PreScore, Score): one feasible node, drawn uniformly with a seeded generator, gets
//! the maximum score and every other node 0 (the FGD paper's *Random* baseline; simulator
//! `pkg/simulator/plugin/random_score.go`). Args: `seed` (default 0).

use std::sync::{Arc, Mutex};

use k8s_sched_framework::{
    CycleState, NodeInfo, Plugin, PreScorePlugin, ScorePlugin, Status, MAX_NODE_SCORE,
    MIN_NODE_SCORE,
};
use k8s_types::core::Pod;
use k8s_types::rng::SplitMix64;
use serde::Deserialize;

use super::names;
use k8s_sched_framework::ConfigError;
use k8s_sched_framework::PluginArgs;

/// CycleState key of the drawn node.
pub const PRE_SCORE_STATE_KEY: &str = "PreScoreRandomScore";

/// `pluginConfig` args of RandomScore.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RandomScoreArgs {
    /// Seed of the generator.
    #[serde(default)]
    pub seed: u64,
}

/// The node drawn for this attempt: its name, and its position among the PreScore nodes.
#[derive(Clone, Debug)]
pub struct Drawn(pub String, pub usize, pub usize);

/// The RandomScore plugin.
#[derive(Debug)]
pub struct RandomScore {
    rng: Mutex<SplitMix64>,
}

impl RandomScore {
    /// A plugin seeded with `seed`.
    pub fn new(seed: u64) -> RandomScore {
        RandomScore {
            rng: Mutex::new(SplitMix64::new(seed)),
        }
    }

    /// Factory.
    ///
    /// # Errors
    /// Undecodable args.
    pub fn factory(args: &PluginArgs<'_>) -> Result<Arc<dyn Plugin>, ConfigError> {
        let a: RandomScoreArgs = args.decode()?;
        Ok(Arc::new(RandomScore::new(a.seed)))
    }
}

impl Plugin for RandomScore {
    fn name(&self) -> &str {
        names::RANDOM_SCORE
    }
    fn as_pre_score(&self) -> Option<&dyn PreScorePlugin> {
        Some(self)
    }
    fn as_score(&self) -> Option<&dyn ScorePlugin> {
        Some(self)
    }
}

impl PreScorePlugin for RandomScore {
    fn pre_score(&self, state: &mut CycleState, _pod: &Pod, nodes: &[&NodeInfo]) -> Status {
        if nodes.is_empty() {
            return Status::skip();
        }
        let i = match self.rng.lock() {
            Ok(mut r) => r.below(nodes.len()),
            Err(_) => 0,
        };
        state.write(
            PRE_SCORE_STATE_KEY,
            Drawn(nodes[i].name().to_string(), i, nodes.len()),
        );
        Status::success()
    }
}

impl ScorePlugin for RandomScore {
    fn score_nodes(
        &self,
        state: &CycleState,
        _pod: &Pod,
        nodes: &[&NodeInfo],
        scores: &mut [i64],
    ) -> Result<(), Status> {
        let Some(d) = state.read::<Drawn>(PRE_SCORE_STATE_KEY) else {
            return Err(Status::error(format!(
                "reading {PRE_SCORE_STATE_KEY:?} from cycleState: not found"
            )));
        };
        // The same node list as PreScore (the scheduler passes it): one name check.
        if nodes.len() == d.2 && nodes.get(d.1).is_some_and(|n| n.name() == d.0) {
            scores.fill(MIN_NODE_SCORE);
            scores[d.1] = MAX_NODE_SCORE;
            return Ok(());
        }
        for (n, out) in nodes.iter().zip(scores.iter_mut()) {
            *out = if d.0 == n.name() {
                MAX_NODE_SCORE
            } else {
                MIN_NODE_SCORE
            };
        }
        Ok(())
    }

    fn score(&self, state: &CycleState, _pod: &Pod, node: &NodeInfo) -> Result<i64, Status> {
        match state.read::<Drawn>(PRE_SCORE_STATE_KEY) {
            Some(d) if d.0 == node.name() => Ok(MAX_NODE_SCORE),
            Some(_) => Ok(MIN_NODE_SCORE),
            None => Err(Status::error(format!(
                "reading {PRE_SCORE_STATE_KEY:?} from cycleState: not found"
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugins::testutil;

    #[test]
    fn exactly_one_node_gets_the_maximum() {
        let nodes: Vec<NodeInfo> = (0..5)
            .map(|i| testutil::node(&format!("n{i}"), "8", "8Gi", &[], &[]))
            .collect();
        let refs: Vec<&NodeInfo> = nodes.iter().collect();
        let p = RandomScore::new(42);
        let pod = testutil::pod(&[("cpu", "1", "memory", "1Gi")]);
        let mut drawn = Vec::new();
        for _ in 0..10 {
            let mut st = CycleState::new();
            assert!(p.pre_score(&mut st, &pod, &refs).is_success());
            let scores: Vec<i64> = refs
                .iter()
                .map(|n| p.score(&st, &pod, n).expect("drawn"))
                .collect();
            assert_eq!(scores.iter().filter(|s| **s == 100).count(), 1);
            assert_eq!(scores.iter().filter(|s| **s == 0).count(), 4);
            drawn.push(scores.iter().position(|s| *s == 100));
        }
        // Same seed, same draws.
        let q = RandomScore::new(42);
        for d in drawn {
            let mut st = CycleState::new();
            q.pre_score(&mut st, &pod, &refs);
            let s: Vec<i64> = refs
                .iter()
                .map(|n| q.score(&st, &pod, n).unwrap_or(0))
                .collect();
            assert_eq!(s.iter().position(|x| *x == 100), d);
        }
    }
}
