//! Score plugin weights of a profile (upstream `getScoreWeights` in
//! `pkg/scheduler/framework/runtime/framework.go`, called by `NewFramework` with
//! `Score.Enabled` followed by `MultiPoint.Enabled`).
//!
//! Upstream semantics, reproduced exactly:
//! - Only plugins that implement Score count; the first occurrence of a name wins (an explicit
//!   `score.enabled` weight overrides the MultiPoint one).
//! - A weight of 0 (or unset) becomes 1.
//! - Negative weights are not rejected by validation (`ValidateKubeSchedulerConfiguration` has
//!   no rule for plugin weights; only extenders need a positive weight). They are used as
//!   they are: a negative weight subtracts `weight * score` from a node's total.
//! - The overflow guard compares `weight * MaxNodeScore` with `MaxTotalScore - total` in Go's
//!   wrapping `int64` arithmetic. Once the running total is negative that difference wraps to a
//!   large negative number, so the next Score plugin in the list fails the guard: a profile
//!   whose running total of `weight * 100` goes below 0 before a later Score plugin is rejected
//!   with `total score of Score plugins could overflow`; a negative weight that keeps the
//!   running total at or above 0, or that belongs to the last Score plugin, is accepted.

use std::collections::BTreeMap;

use k8s_sched_framework::MAX_NODE_SCORE;

use super::Plugin;

/// Upstream `MaxTotalScore` (`math.MaxInt64`).
pub const MAX_TOTAL_SCORE: i64 = i64::MAX;

/// Upstream error of `getScoreWeights` (no field path: upstream reports it from `NewFramework`).
pub const MSG_SCORE_OVERFLOW: &str = "total score of Score plugins could overflow";

/// Upstream `getScoreWeights`: the weight of every Score plugin of `plugins` (the profile's
/// `score.enabled` then `multiPoint.enabled`, after defaulting), where `is_score` tells which
/// names implement Score.
///
/// # Errors
/// [`MSG_SCORE_OVERFLOW`] when the guard fails (see the module docs).
pub fn score_weights<'a>(
    plugins: impl IntoIterator<Item = &'a Plugin>,
    is_score: impl Fn(&str) -> bool,
) -> Result<BTreeMap<String, i64>, &'static str> {
    let mut weights: BTreeMap<String, i64> = BTreeMap::new();
    let mut total: i64 = 0;
    for p in plugins {
        if !is_score(&p.name) || weights.contains_key(&p.name) {
            continue;
        }
        let w = match p.weight {
            Some(w) if w != 0 => i64::from(w),
            _ => 1,
        };
        weights.insert(p.name.clone(), w);
        // Go int64 arithmetic wraps; `w * 100` itself cannot overflow (w is an int32).
        if w * MAX_NODE_SCORE > MAX_TOTAL_SCORE.wrapping_sub(total) {
            return Err(MSG_SCORE_OVERFLOW);
        }
        total = total.wrapping_add(w * MAX_NODE_SCORE);
    }
    Ok(weights)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(_: &str) -> bool {
        true
    }

    #[test]
    fn zero_or_unset_is_one_and_score_enabled_wins() {
        let list = [
            Plugin::weighted("A", 0),
            Plugin::named("B"),
            Plugin::weighted("A", 7),
            Plugin::weighted("C", 4),
        ];
        let w = score_weights(&list, all).unwrap();
        assert_eq!(
            w.into_iter().collect::<Vec<_>>(),
            vec![("A".into(), 1), ("B".into(), 1), ("C".into(), 4)]
        );
    }

    /// Running totals (weight * 100): 500, 400, 500 -> never negative -> accepted.
    #[test]
    fn negative_weight_keeping_the_total_non_negative_is_accepted() {
        let list = [
            Plugin::weighted("A", 5),
            Plugin::weighted("B", -1),
            Plugin::weighted("C", 1),
        ];
        let w = score_weights(&list, all).unwrap();
        assert_eq!(w.get("B"), Some(&-1));
    }

    /// The last Score plugin may take the total below 0: nothing is checked after it.
    #[test]
    fn negative_weight_on_the_last_score_plugin_is_accepted() {
        let list = [Plugin::weighted("A", 1), Plugin::weighted("B", -3)];
        assert_eq!(score_weights(&list, all).unwrap().get("B"), Some(&-3));
    }

    /// Running total -100 after A; for B, MaxInt64 - (-100) wraps to MinInt64 + 99 and
    /// 100 > MinInt64 + 99: upstream's error. Plugins that are not Score do not count.
    #[test]
    fn negative_running_total_before_a_later_score_plugin_overflows() {
        let list = [
            Plugin::weighted("A", -1),
            Plugin::named("NotScore"),
            Plugin::weighted("B", 1),
        ];
        assert_eq!(score_weights(&list, all), Err(MSG_SCORE_OVERFLOW));
        let only_a = |n: &str| n == "A";
        assert!(score_weights(&list, only_a).is_ok());
    }

    /// The largest weights cannot reach MaxInt64 in practice (int32 weights, max node score 100).
    #[test]
    fn int32_max_weights_do_not_overflow() {
        let list = [
            Plugin::weighted("A", i32::MAX),
            Plugin::weighted("B", i32::MAX),
        ];
        assert_eq!(
            score_weights(&list, all).unwrap().get("B"),
            Some(&i64::from(i32::MAX))
        );
    }
}
