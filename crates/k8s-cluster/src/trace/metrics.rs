//! The paper's curves: after every pod of a replay the cluster's allocated milli-GPU, fragmented
//! milli-GPU and the arrived GPU request are recorded ([`Sample`]); [`discretize`] turns one run's
//! samples into one value per integer percent of arrived workload exactly as the FGD paper's
//! analysis does (hkust-adsl/kubernetes-scheduler-simulator
//! `experiments/analysis/merge_alloc_discrete_0920.py`): `arrive = round(arrived / capacity * 100)`
//! (round half to even, as Python's `round`), `value = round(x / capacity * 100, 2)`, and column `k`
//! is the mean of the samples with `arrive == k`, or with `|arrive - k| <= 1` when there is none,
//! rounded to 2 decimals. Fragmentation follows the paper's `merge_frag_discrete_0928.py` and
//! `merge_frag_ratio_discrete_0928.py`: the simulator logs each sample's fragmented milli-GPU and
//! its ratio to the idle milli-GPU (`ClusterGpuFragReport`, both printed with 2 decimals); column
//! `k` of the fragmentation is `round(mean(frag milli) / capacity * 100, 2)` (the mean of the raw
//! amounts, rounded once) and of the ratio `mean(round(100 * frag / idle, 2))` (not rounded
//! again). [`Summary`] gives median, min and max over seeds.

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
/// capacity `capacity_milli`, `None` where no sample is within 1 % (see [`discretize_points`]).
pub fn discretize(
    samples: &[Sample],
    capacity_milli: i64,
    max_pct: u32,
) -> Vec<Option<(f64, f64)>> {
    discretize_points(samples, capacity_milli, max_pct)
        .into_iter()
        .map(|p| p.map(|p| (p.alloc_pct, p.frag_pct)))
        .collect()
}

/// One column of a run's curves, as the paper's analysis scripts compute it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Point {
    /// Allocated milli-GPU, % of the GPU capacity (`analysis_allo_discrete`).
    pub alloc_pct: f64,
    /// Fragmented milli-GPU (the paper's measure), % of the GPU capacity
    /// (`analysis_frag_discrete`).
    pub frag_pct: f64,
    /// Fragmented milli-GPU, % of the idle milli-GPU (`analysis_frag_ratio_discrete`); 0 when
    /// nothing is idle.
    pub frag_ratio_pct: f64,
}

/// Per integer percent `0..=max_pct` of arrived workload, the paper's [`Point`]; `None` where no
/// sample is within 1 %.
pub fn discretize_points(
    samples: &[Sample],
    capacity_milli: i64,
    max_pct: u32,
) -> Vec<Option<Point>> {
    let cap = capacity_milli.max(1) as f64;
    // (arrived %, allocated % rounded, frag milli as logged, frag/idle % as logged)
    let pts: Vec<(i64, f64, f64, f64)> = samples
        .iter()
        .map(|s| {
            let arrive = (s.arrived_milli as f64 / cap * 100.0).round_ties_even() as i64;
            let idle = (capacity_milli - s.used_milli) as f64;
            let ratio = if idle > 0.0 {
                round2(100.0 * s.frag_milli / idle)
            } else {
                0.0
            };
            (
                arrive,
                round2(s.used_milli as f64 / cap * 100.0),
                round2(s.frag_milli),
                ratio,
            )
        })
        .collect();
    (0..=i64::from(max_pct))
        .map(|k| {
            let pick = |lo: i64, hi: i64| -> Option<Point> {
                let (mut n, mut a, mut f, mut r) = (0usize, 0.0, 0.0, 0.0);
                for (arr, alloc, frag, ratio) in &pts {
                    if *arr >= lo && *arr <= hi {
                        n += 1;
                        a += alloc;
                        f += frag;
                        r += ratio;
                    }
                }
                let n = n as f64;
                (n > 0.0).then(|| Point {
                    alloc_pct: round2(a / n),
                    frag_pct: round2(f / n / cap * 100.0),
                    frag_ratio_pct: r / n,
                })
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
    fn fragmentation_columns_follow_the_paper_scripts() {
        // Capacity 10 GPUs = 10000 milli. Two samples round to 1 % arrived:
        // frag 333 and 334 milli with 100 and 200 milli used.
        let s = |arr: i64, used: i64, frag: f64| Sample {
            arrived_milli: arr,
            used_milli: used,
            frag_milli: frag,
        };
        let d = discretize_points(&[s(100, 100, 333.0), s(140, 200, 334.0)], 10_000, 1);
        let p = d[1].expect("column 1");
        // mean(333, 334) = 333.5 milli = 3.335 % -> 3.33 or 3.34 by binary rounding; the paper
        // rounds the mean once: round(3.335, 2).
        assert_eq!(p.frag_pct, round2(333.5 / 10_000.0 * 100.0));
        // Ratios per sample: 333/9900 = 3.3636.. -> 3.36; 334/9800 = 3.4081.. -> 3.41; mean 3.385.
        assert!((p.frag_ratio_pct - 3.385).abs() < 1e-9);
        assert_eq!(p.alloc_pct, 1.5);
        // Nothing idle: ratio 0, not a division by zero.
        let d = discretize_points(&[s(10_000, 10_000, 0.0)], 10_000, 100);
        assert_eq!(d[100].map(|p| p.frag_ratio_pct), Some(0.0));
    }

    #[test]
    fn summary_median_of_even_count() {
        let s = Summary::of(&[4.0, 1.0, 3.0, 2.0]);
        assert_eq!((s.median, s.min, s.max, s.n), (2.5, 1.0, 4.0, 4));
        assert_eq!(report_points().len(), 27);
    }
}
