//! The timeline plot: allocated GPU (% of the cluster's GPU capacity) against trace time (days
//! since the first arrival: tick `t` is `(t - 1) × time_scale` seconds), one line per policy in
//! `--policy` order, drawn with `plotters` (SVG backend only). The state
//! between two processed ticks is constant, so each sample holds until the next one; the time axis
//! is cut into [`BINS`] intervals and each is drawn at the highest allocation it saw, so a 149-day
//! run stays a small file and no peak is lost.

use plotters::prelude::*;

use k8s_cluster::trace::timeline::TimelineRun;

const COLORS: [RGBColor; 6] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
];

/// Intervals of the time axis.
const BINS: usize = 1000;

/// Per interval of `[0, end]`, the highest allocated milli-GPU in it (the state carried into an
/// interval counts).
fn binned_max(run: &TimelineRun, end: u64) -> Vec<i64> {
    let width = (end / BINS as u64).max(1);
    let mut out = vec![0i64; BINS];
    let mut current = 0i64;
    let mut i = 0usize;
    let samples = &run.samples;
    for (b, slot) in out.iter_mut().enumerate() {
        let hi = (b as u64 + 1) * width;
        let mut m = current;
        while i < samples.len() && samples[i].tick < hi {
            current = samples[i].gpu_milli_allocated;
            m = m.max(current);
            i += 1;
        }
        *slot = m;
    }
    out
}

/// Seconds per day.
const DAY: f64 = 86_400.0;

/// Trace time of a (fractional) tick, in days since the first arrival (tick 1).
fn days(tick: f64, time_scale: u64) -> f64 {
    (tick - 1.0).max(0.0) * time_scale as f64 / DAY
}

/// The x axis label: trace days and the time scale.
fn x_desc(time_scale: u64) -> String {
    format!("trace time (days since the first arrival; 1 tick = {time_scale} s)")
}

/// The SVG document.
///
/// # Errors
/// A drawing error, as text.
pub fn alloc_svg(runs: &[&TimelineRun], workload: &str) -> Result<String, String> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (900, 480)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let scale = runs.first().map_or(1, |r| r.time_scale);
        let xmax = runs
            .iter()
            .map(|r| days(r.last_tick as f64, r.time_scale))
            .fold(0.0, f64::max)
            .max(1e-3);
        let mut ymax: f64 = 0.1;
        for r in runs {
            for s in &r.samples {
                if r.capacity_milli > 0 {
                    ymax = ymax.max(100.0 * s.gpu_milli_allocated as f64 / r.capacity_milli as f64);
                }
            }
        }
        let mut chart = ChartBuilder::on(&root)
            .caption(
                format!(
                    "GPU allocation over time — {workload} (timeline replay, 1 tick = {scale} s)"
                ),
                ("sans-serif", 18),
            )
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(60)
            .build_cartesian_2d(0f64..xmax, 0f64..ymax * 1.1)
            .map_err(|e| e.to_string())?;
        chart
            .configure_mesh()
            .x_desc(x_desc(scale))
            .y_desc("allocated GPU (% of capacity)")
            .draw()
            .map_err(|e| e.to_string())?;
        for (i, r) in runs.iter().enumerate() {
            let color = COLORS[i % COLORS.len()];
            let cap = r.capacity_milli.max(1) as f64;
            let end = runs.iter().map(|r| r.last_tick).max().unwrap_or(0);
            let width = (end / BINS as u64).max(1) as f64;
            let pts: Vec<(f64, f64)> = binned_max(r, end)
                .into_iter()
                .enumerate()
                .map(|(b, m)| {
                    (
                        days((b as f64 + 0.5) * width, r.time_scale),
                        100.0 * m as f64 / cap,
                    )
                })
                .collect();
            chart
                .draw_series(LineSeries::new(pts, color.stroke_width(1)))
                .map_err(|e| e.to_string())?
                .label(r.policy.paper_label())
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
                });
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .draw()
            .map_err(|e| e.to_string())?;
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(svg)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 1200 s per tick: tick 73 is 72 × 1200 s = 86,400 s = 1 day after the first arrival
    /// (tick 1); one tick per second: tick 86,401.
    #[test]
    fn x_axis_is_trace_days() {
        assert_eq!(days(73.0, 1200), 1.0);
        assert_eq!(days(86_401.0, 1), 1.0);
        assert_eq!(days(0.0, 1200), 0.0);
        assert_eq!(
            x_desc(1200),
            "trace time (days since the first arrival; 1 tick = 1200 s)"
        );
    }
}
