//! Helpers shared by plugins: score normalization (upstream
//! `pkg/scheduler/framework/plugins/helper/normalize_score.go`), the piecewise-linear shape
//! function (`helper/shape_score.go`) and resource-name classes (upstream
//! `pkg/apis/core/v1/helper/helpers.go` `IsExtendedResourceName`, `IsScalarResourceName`).

use k8s_sched_framework::NodeScore;

/// Upstream `DefaultNormalizeScore`: scales scores to `[0, max_priority]` by the highest score;
/// with `reverse`, a higher raw score gives a lower result. All-zero scores stay 0, or become
/// `max_priority` when reversed.
pub fn default_normalize_score(max_priority: i64, reverse: bool, scores: &mut [NodeScore<'_>]) {
    let max_count = scores.iter().map(|s| s.score).max().unwrap_or(0).max(0);
    if max_count == 0 {
        if reverse {
            for s in scores.iter_mut() {
                s.score = max_priority;
            }
        }
        return;
    }
    for s in scores.iter_mut() {
        let mut score = max_priority * s.score / max_count;
        if reverse {
            score = max_priority - score;
        }
        s.score = score;
    }
}

/// Go's `int64(math.Round(x))`: `x` rounded half away from zero, as `x.round() as i64` gives it
/// (saturating at the `i64` bounds, 0 for NaN), without the call to the `round` routine (x86-64
/// has no rounding instruction before SSE4.1): truncation toward zero is one conversion, and
/// `x - trunc(x)` is exact, so comparing it with 0.5 decides the rounding exactly.
#[inline]
pub fn go_round(x: f64) -> i64 {
    let t = x as i64;
    let frac = x - t as f64;
    if frac >= 0.5 {
        t.saturating_add(1)
    } else if frac <= -0.5 {
        t.saturating_sub(1)
    } else {
        t
    }
}

/// Upstream `BuildBrokenLinearFunction`: piecewise-linear through `(utilization, score)` points
/// sorted by utilization; flat before the first and after the last point. Integer arithmetic.
pub fn broken_linear(shape: &[(i64, i64)], p: i64) -> i64 {
    for i in 0..shape.len() {
        if p <= shape[i].0 {
            if i == 0 {
                return shape[0].1;
            }
            let (u0, s0) = shape[i - 1];
            let (u1, s1) = shape[i];
            return s0 + (s1 - s0) * (p - u0) / (u1 - u0);
        }
    }
    shape.last().map(|s| s.1).unwrap_or(0)
}

/// Upstream `IsExtendedResourceName`: a domain-prefixed name outside `kubernetes.io/` that is not a
/// quota `requests.` name, e.g. `nvidia.com/gpu`.
pub fn is_extended_resource_name(name: &str) -> bool {
    if name.starts_with("requests.") {
        return false;
    }
    match name.split_once('/') {
        Some((domain, _)) => !(domain == "kubernetes.io" || domain.ends_with(".kubernetes.io")),
        None => false,
    }
}

/// Upstream `IsScalarResourceName`: extended, hugepages, prefixed native and attachable-volume
/// resources (everything the scheduler tracks in `ScalarResources`).
pub fn is_scalar_resource_name(name: &str) -> bool {
    is_extended_resource_name(name)
        || name.starts_with("hugepages-")
        || name.contains("kubernetes.io/")
        || name.starts_with("attachable-volumes-")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `go_round` equals `f64::round` (Go's `math.Round`) then the saturating conversion, on
    /// halves, their neighbours, the bounds, NaN and infinities, and on pseudo-random values of
    /// every magnitude.
    #[test]
    fn go_round_equals_round_then_convert() {
        let mut values = vec![
            0.0,
            -0.0,
            0.5,
            -0.5,
            1.5,
            2.5,
            -2.5,
            0.49999999999999994,
            -0.49999999999999994,
            4503599627370495.5,
            4503599627370497.0,
            9007199254740993.0,
            9.223372036854775e18,
            9.3e18,
            -9.3e18,
            f64::MAX,
            f64::MIN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            f64::MIN_POSITIVE,
        ];
        for i in 0..2000 {
            let h = f64::from(i) / 2.0;
            values.extend([
                h,
                -h,
                h.next_up(),
                h.next_down(),
                -h.next_up(),
                -h.next_down(),
            ]);
        }
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..200_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            values.push(f64::from_bits(state));
            let scale = f64::from(1u32 << (state % 31) as u32);
            values.push((state >> 11) as f64 / (1u64 << 53) as f64 * scale - scale / 2.0);
        }
        for x in values {
            assert_eq!(go_round(x), x.round() as i64, "{x:e}");
        }
    }

    #[test]
    fn broken_linear_matches_upstream_test_broken_linear_function() {
        // Upstream requested_to_capacity_ratio_test.go TestBrokenLinearFunction.
        let a = [(10, 1), (90, 9)];
        for (p, want) in [
            (-10, 1),
            (0, 1),
            (9, 1),
            (10, 1),
            (15, 1),
            (19, 1),
            (20, 2),
            (89, 8),
            (90, 9),
            (99, 9),
            (100, 9),
            (110, 9),
        ] {
            assert_eq!(broken_linear(&a, p), want, "p={p}");
        }
        let b = [(0, 2), (40, 10), (100, 0)];
        for (p, want) in [
            (-10, 2),
            (0, 2),
            (20, 6),
            (30, 8),
            (40, 10),
            (70, 5),
            (100, 0),
            (110, 0),
        ] {
            assert_eq!(broken_linear(&b, p), want, "p={p}");
        }
    }

    #[test]
    fn normalize_scales_and_reverses() {
        let mut s = [
            NodeScore {
                name: "a",
                score: 1,
            },
            NodeScore {
                name: "b",
                score: 2,
            },
            NodeScore {
                name: "c",
                score: 0,
            },
        ];
        default_normalize_score(100, true, &mut s);
        assert_eq!([s[0].score, s[1].score, s[2].score], [50, 0, 100]);
        let mut z = [NodeScore {
            name: "a",
            score: 0,
        }];
        default_normalize_score(100, true, &mut z);
        assert_eq!(z[0].score, 100);
        let mut z = [NodeScore {
            name: "a",
            score: 0,
        }];
        default_normalize_score(100, false, &mut z);
        assert_eq!(z[0].score, 0);
    }

    #[test]
    fn resource_name_classes() {
        assert!(is_extended_resource_name("nvidia.com/gpu"));
        assert!(!is_extended_resource_name("kubernetes.io/foo"));
        assert!(!is_extended_resource_name("cpu"));
        assert!(is_scalar_resource_name("hugepages-2Mi"));
        assert!(is_scalar_resource_name("nvidia.com/gpu"));
        assert!(!is_scalar_resource_name("pods"));
    }
}
