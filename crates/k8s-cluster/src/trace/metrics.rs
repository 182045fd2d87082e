//! The paper's curves: after every pod of a replay the cluster's allocated milli-GPU, fragmented
//! milli-GPU and the arrived GPU request are recorded ([`Sample`]); [`discretize`] turns one run's
//! samples into one value per integer percent of arrived workload exactly as the FGD paper's
//! analysis does (hkust-adsl/kubernetes-scheduler-simulator
//! `experiments/analysis/merge_alloc_discrete_0920.py`): `arrive = round(arrived / capacity * 100)`
//! (round half to even, as Python's `round`), `value = round(x / capacity * 100, 2)`, and column `k`
//! is the mean of the samples with `arrive == k`, or with `|arrive - k| <= 1` when there is none,
//! rounded to 2 decimals. [`Summary`] gives median, min and max over seeds.

/// One sample, taken after each pod (and once before the first).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Sample {
    /// Sum of the GPU requests of the pods tried so far, milli-GPU.
    pub arrived_milli: i64,
    /// Allocated milli-GPU in the cluster.
    pub used_milli: i64,
    /// The cluster's fragmentation (the paper's measure), milli-GPU.
    pub frag_milli: f64,
}

/// Arrived workload percentages reported: 0, 5, ..., 130.
pub fn report_points() -> Vec<u32> {
    (0..=130).step_by(5).collect()
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round_ties_even() / 100.0
}

/// Per integer percent `0..=max_pct` of arrived workload: (allocated %, fragmented %) of the GPU
/// capacity `capacity_milli`, `None` where no sample is within 1 %.
pub fn discretize(
    samples: &[Sample],
    capacity_milli: i64,
    max_pct: u32,
) -> Vec<Option<(f64, f64)>> {
    let cap = capacity_milli.max(1) as f64;
    let pts: Vec<(i64, f64, f64)> = samples
        .iter()
        .map(|s| {
            let arrive = (s.arrived_milli as f64 / cap * 100.0).round_ties_even() as i64;
            (
                arrive,
                round2(s.used_milli as f64 / cap * 100.0),
                round2(s.frag_milli / cap * 100.0),
            )
        })
        .collect();
    (0..=i64::from(max_pct))
        .map(|k| {
            let pick = |lo: i64, hi: i64| -> Option<(f64, f64)> {
                let (mut n, mut a, mut f) = (0usize, 0.0, 0.0);
                for (arr, alloc, frag) in &pts {
                    if *arr >= lo && *arr <= hi {
                        n += 1;
                        a += alloc;
                        f += frag;
                    }
                }
                (n > 0).then(|| (round2(a / n as f64), round2(f / n as f64)))
            };
            pick(k, k).or_else(|| pick(k - 1, k + 1))
        })
        .collect()
}

/// Median (mean of the two middle values for an even count), min and max.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Summary {
    /// Median.
    pub median: f64,
    /// Minimum.
    pub min: f64,
    /// Maximum.
    pub max: f64,
    /// Number of values.
    pub n: usize,
}

impl Summary {
    /// The summary of `values` (all zero when empty). NaNs sort last.
    pub fn of(values: &[f64]) -> Summary {
        if values.is_empty() {
            return Summary::default();
        }
        let mut v = values.to_vec();
        v.sort_by(f64::total_cmp);
        let n = v.len();
        let median = if n % 2 == 1 {
            v[n / 2]
        } else {
            (v[n / 2 - 1] + v[n / 2]) / 2.0
        };
        Summary {
            median,
            min: v[0],
            max: v[n - 1],
            n,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn discretisation_averages_samples_per_percent() {
        // Capacity 10 GPUs = 10000 milli; 1 % = 100 milli.
        let s = |arr: i64, used: i64| Sample {
            arrived_milli: arr,
            used_milli: used,
            frag_milli: 0.0,
        };
        let samples = [s(0, 0), s(100, 100), s(140, 100), s(400, 300)];
        let d = discretize(&samples, 10_000, 6);
        assert_eq!(d[0], Some((0.0, 0.0)));
        // 100 and 140 milli both round to 1 %: mean of 1.00 and 1.00.
        assert_eq!(d[1], Some((1.0, 0.0)));
        // Nothing rounds to 2 %: samples at 1 % and 3 % are within 1.
        assert_eq!(d[2], Some((1.0, 0.0)));
        assert_eq!(d[4], Some((3.0, 0.0)));
        assert_eq!(d[6], None);
        // 150 milli = 1.5 % rounds half to even: 2.
        let d = discretize(&[s(150, 150)], 10_000, 2);
        assert_eq!(d[2], Some((1.5, 0.0)));
    }

    #[test]
    fn summary_median_of_even_count() {
        let s = Summary::of(&[4.0, 1.0, 3.0, 2.0]);
        assert_eq!((s.median, s.min, s.max, s.n), (2.5, 1.0, 4.0, 4));
        assert_eq!(report_points().len(), 27);
    }
}
