//! The comparison as text: one table of measures with a column per configuration, then the pods
//! placed differently (docs/compare.md). [`metrics`] and [`differences`] give the same rows to the
//! HTML page.

use std::fmt::Write as _;

use super::{Comparison, ConfigRun};
use crate::capacity::gpus;
use crate::output::table;

fn ticks(t: Option<u64>) -> String {
    t.map_or_else(|| "-".to_string(), |t| t.to_string())
}

fn share(a: i64, total: i64) -> String {
    if total > 0 {
        format!(
            "{}/{} ({}%)",
            gpus(a as f64),
            gpus(total as f64),
            i128::from(a) * 100 / i128::from(total)
        )
    } else {
        "-".to_string()
    }
}

/// The measures table: the header (`MEASURE` and the column names) and one row per measure.
pub fn metrics(c: &Comparison) -> (Vec<String>, Vec<Vec<String>>) {
    let mut header = vec!["MEASURE".to_string()];
    header.extend(c.runs.iter().map(|r| r.name.clone()));
    let row = |name: &str, f: &dyn Fn(&ConfigRun) -> String| {
        let mut v = vec![name.to_string()];
        v.extend(c.runs.iter().map(f));
        v
    };
    let rows = vec![
        row("run ended at tick", &|r| r.ended_at.to_string()),
        row("pods bound", &|r| r.pods_bound.to_string()),
        row("pods pending", &|r| r.pods_pending.to_string()),
        row("time to bind, median (ticks)", &|r| {
            ticks(r.time_to_bind.median)
        }),
        row("time to bind, p99 (ticks)", &|r| ticks(r.time_to_bind.p99)),
        row("preemptions", &|r| r.preemptions.to_string()),
        row("GPUs allocated", &|r| {
            share(r.gpu_milli_allocated, r.gpu_milli_total)
        }),
        row("GPUs fragmented (FGD)", &|r| gpus(r.gpu_milli_fragmented)),
        row("CPU allocation spread (std-dev)", &|r| {
            format!("{:.4}", r.cpu_spread)
        }),
        row("GPU allocation spread (std-dev)", &|r| {
            format!("{:.4}", r.gpu_spread)
        }),
    ];
    (header, rows)
}

/// The pods placed differently: the header (`POD` and the column names) and one row per pod.
pub fn differences(c: &Comparison) -> (Vec<String>, Vec<Vec<String>>) {
    let mut header = vec!["POD".to_string()];
    header.extend(c.runs.iter().map(|r| r.name.clone()));
    let rows = c
        .placed_differently
        .iter()
        .map(|d| {
            let mut v = vec![d.pod.clone()];
            v.extend(d.nodes.iter().cloned());
            v
        })
        .collect();
    (header, rows)
}

/// The comparison as text.
pub fn render(c: &Comparison) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "# compare {}: {} configurations, each an independent run of the same input",
        c.input,
        c.runs.len()
    );
    for r in &c.runs {
        let _ = writeln!(
            o,
            "{}: {}",
            r.name,
            r.scheduler_config
                .as_deref()
                .unwrap_or("the input's own scheduler configuration")
        );
    }
    let (h, rows) = metrics(c);
    let h: Vec<&str> = h.iter().map(String::as_str).collect();
    o.push('\n');
    o.push_str(&table(&h, &rows));
    let _ = writeln!(
        o,
        "\n## pods placed differently: {}",
        c.placed_differently.len()
    );
    if !c.placed_differently.is_empty() {
        let (h, rows) = differences(c);
        let h: Vec<&str> = h.iter().map(String::as_str).collect();
        o.push_str(&table(&h, &rows));
    }
    for r in c.runs.iter().filter(|r| !r.failed_steps.is_empty()) {
        let _ = writeln!(o, "\n## {}: failed steps", r.name);
        for s in &r.failed_steps {
            let _ = writeln!(o, "{s}");
        }
    }
    o
}
