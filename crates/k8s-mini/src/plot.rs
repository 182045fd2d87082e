//! The replay plot: unallocated GPU % against arrived GPU workload, one line per policy (the median
//! over seeds) with the seed range as a shaded band, drawn with `plotters` (SVG backend only) like
//! the FGD paper's Fig. 7.

use plotters::prelude::*;

use k8s_cluster::trace::metrics::Summary;
use k8s_cluster::trace::Policy;

use crate::replay::ByPolicy;

const COLORS: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

/// The SVG document.
///
/// # Errors
/// A drawing error, as text.
pub fn unalloc_svg(policies: &[Policy], by: &ByPolicy, workload: &str) -> Result<String, String> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (900, 560)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        // Zoom on the interesting part: the y range covers the curves from 70 % arrived on.
        let mut ymax: f64 = 5.0;
        for v in by.values() {
            for vals in v.iter().skip(70) {
                let s = Summary::of(vals);
                if s.n > 0 {
                    ymax = ymax.max(s.max);
                }
            }
        }
        let ymax = (ymax * 1.1).min(100.0);
        let mut chart = ChartBuilder::on(&root)
            .caption(
                format!(
                    "Unallocated GPU vs arrived workload — {workload} (median, band = seed range)"
                ),
                ("sans-serif", 18),
            )
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(50)
            .build_cartesian_2d(70f64..130f64, 0f64..ymax)
            .map_err(|e| e.to_string())?;
        chart
            .configure_mesh()
            .x_desc("arrived GPU workload (% of GPU capacity)")
            .y_desc("unallocated GPU (%)")
            .draw()
            .map_err(|e| e.to_string())?;
        for (i, p) in policies.iter().enumerate() {
            let Some(v) = by.get(p) else { continue };
            let color = COLORS[i % COLORS.len()];
            let pts: Vec<(f64, Summary)> = v
                .iter()
                .enumerate()
                .skip(70)
                .map(|(k, vals)| (k as f64, Summary::of(vals)))
                .filter(|(_, s)| s.n > 0)
                .collect();
            let mut band: Vec<(f64, f64)> = pts.iter().map(|(k, s)| (*k, s.max)).collect();
            band.extend(pts.iter().rev().map(|(k, s)| (*k, s.min)));
            chart
                .draw_series(std::iter::once(Polygon::new(band, color.mix(0.2).filled())))
                .map_err(|e| e.to_string())?;
            chart
                .draw_series(LineSeries::new(
                    pts.iter().map(|(k, s)| (*k, s.median)),
                    color.stroke_width(2),
                ))
                .map_err(|e| e.to_string())?
                .label(p.paper_label())
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
                });
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperRight)
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .draw()
            .map_err(|e| e.to_string())?;
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(svg)
}
