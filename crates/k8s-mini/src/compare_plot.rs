//! `compare`'s pictures: per configuration, GPU allocated and CPU requested (% of the cluster's
//! capacity at that tick) against the tick, drawn with `plotters` (SVG backend only) as steps (the
//! state holds from one sample to the next); and one self-contained HTML page with the tables and
//! every SVG inline (no script, no stylesheet or font fetched).

use std::fmt::Write as _;

use plotters::prelude::*;

use k8s_cluster::compare::{difference_rows, metrics, Comparison, ConfigRun, Sample};

const GPU: RGBColor = RGBColor(214, 39, 40);
const CPU: RGBColor = RGBColor(31, 119, 180);

/// A line to draw: its legend, colour and points.
type Series = (&'static str, RGBColor, Vec<(f64, f64)>);

fn pct(a: i64, total: i64) -> f64 {
    if total > 0 {
        100.0 * a as f64 / total as f64
    } else {
        0.0
    }
}

/// The step line of `value` over the samples, held to `end`.
fn steps(samples: &[Sample], end: u64, value: impl Fn(&Sample) -> f64) -> Vec<(f64, f64)> {
    let mut pts = Vec::new();
    for (i, s) in samples.iter().enumerate() {
        let v = value(s);
        let until = samples.get(i + 1).map_or(end.max(s.tick), |n| n.tick);
        pts.push((s.tick as f64, v));
        pts.push((until as f64, v));
    }
    pts
}

/// The SVG document of one configuration's run.
///
/// # Errors
/// A drawing error, as text.
pub fn alloc_svg(r: &ConfigRun) -> Result<String, String> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (800, 420)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let xmax = (r.ended_at.max(1)) as f64;
        let mut chart = ChartBuilder::on(&root)
            .caption(
                format!("Allocation over time — {}", r.name),
                ("sans-serif", 18),
            )
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(50)
            .build_cartesian_2d(0f64..xmax, 0f64..105f64)
            .map_err(|e| e.to_string())?;
        chart
            .configure_mesh()
            .x_desc("tick")
            .y_desc("allocated (% of capacity)")
            .draw()
            .map_err(|e| e.to_string())?;
        let has_gpu = r.samples.iter().any(|s| s.gpu_milli_total > 0);
        let mut series: Vec<Series> = Vec::new();
        if has_gpu {
            series.push((
                "GPU allocated",
                GPU,
                steps(&r.samples, r.ended_at, |s| {
                    pct(s.gpu_milli_allocated, s.gpu_milli_total)
                }),
            ));
        }
        series.push((
            "CPU requested",
            CPU,
            steps(&r.samples, r.ended_at, |s| {
                pct(s.cpu_milli_requested, s.cpu_milli_allocatable)
            }),
        ));
        for (label, color, pts) in series {
            chart
                .draw_series(LineSeries::new(pts, color.stroke_width(2)))
                .map_err(|e| e.to_string())?
                .label(label)
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
                });
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::LowerRight)
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .draw()
            .map_err(|e| e.to_string())?;
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(svg)
}

/// `s` with HTML's special characters escaped.
fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}

fn html_table(o: &mut String, header: &[String], rows: &[Vec<String>]) {
    o.push_str("<table>\n<tr>");
    for h in header {
        let _ = write!(o, "<th>{}</th>", esc(h));
    }
    o.push_str("</tr>\n");
    for r in rows {
        o.push_str("<tr>");
        for c in r {
            let _ = write!(o, "<td>{}</td>", esc(c));
        }
        o.push_str("</tr>\n");
    }
    o.push_str("</table>\n");
}

/// The HTML page: the measures, the pods placed differently, each configuration's SVG.
///
/// # Errors
/// A drawing error, as text.
pub fn html(c: &Comparison) -> Result<String, String> {
    let mut o = String::new();
    let title = format!("k8s-mini compare — {}", c.input);
    let _ = write!(
        o,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{}</title>\n\
<style>body{{font-family:sans-serif;margin:2em}}table{{border-collapse:collapse;margin:1em 0}}\
th,td{{border:1px solid #999;padding:0.3em 0.6em;text-align:left}}th{{background:#eee}}</style>\n\
</head>\n<body>\n<h1>{}</h1>\n",
        esc(&title),
        esc(&title)
    );
    o.push_str("<ul>\n");
    for r in &c.runs {
        let _ = writeln!(
            o,
            "<li><b>{}</b>: {}</li>",
            esc(&r.name),
            esc(r
                .scheduler_config
                .as_deref()
                .unwrap_or("the input's own scheduler configuration"))
        );
    }
    o.push_str("</ul>\n<h2>Measures</h2>\n");
    let (h, rows) = metrics(c);
    html_table(&mut o, &h, &rows);
    let _ = writeln!(
        o,
        "<h2>Pods placed differently: {}</h2>",
        c.placed_differently.len()
    );
    if !c.placed_differently.is_empty() {
        let (h, rows) = difference_rows(c);
        html_table(&mut o, &h, &rows);
    }
    o.push_str("<h2>Allocation over time</h2>\n");
    for r in &c.runs {
        let _ = writeln!(o, "<h3>{}</h3>", esc(&r.name));
        o.push_str(&alloc_svg(r)?);
        o.push('\n');
    }
    o.push_str("</body>\n</html>\n");
    Ok(o)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Samples at ticks 0 (0 %) and 5 (50 %), the run ending at 9: the line holds 0 from 0 to 5,
    /// then 50 from 5 to 9.
    #[test]
    fn steps_hold_each_sample_until_the_next() {
        let s = |tick, a| Sample {
            tick,
            gpu_milli_allocated: a,
            gpu_milli_total: 2000,
            ..Sample::default()
        };
        let pts = steps(&[s(0, 0), s(5, 1000)], 9, |x| {
            pct(x.gpu_milli_allocated, x.gpu_milli_total)
        });
        assert_eq!(pts, [(0.0, 0.0), (5.0, 0.0), (5.0, 50.0), (9.0, 50.0)]);
    }

    #[test]
    fn html_escapes_text() {
        assert_eq!(esc("<a & \"b\">"), "&lt;a &amp; &quot;b&quot;&gt;");
    }
}
