//! The what-if answer as text, one screen: the verdict, the workload's pods (bind tick, node,
//! devices), what was preempted or evicted, why not and how many nodes more, and the max
//! replicas. The format is described in `docs/whatif.md`.

use std::fmt::Write as _;

use super::{Answer, Disrupted};
use crate::output::table;

fn or_dash(s: Option<&str>) -> String {
    s.map_or_else(|| "-".to_string(), str::to_string)
}

fn disrupted_table(rows: &[Disrupted]) -> String {
    let rows: Vec<Vec<String>> = rows
        .iter()
        .map(|d| {
            vec![
                format!("{}/{}", d.namespace, d.name),
                or_dash(d.owner.as_deref()),
                d.priority.to_string(),
                or_dash(d.node.as_deref()),
                format!("t={}", d.at),
                d.by.clone().unwrap_or_else(|| d.reason.clone()),
            ]
        })
        .collect();
    table(&["POD", "OWNER", "PRIORITY", "NODE", "AT", "BY"], &rows)
}

/// The answer as text.
pub fn render(a: &Answer) -> String {
    let mut o = String::new();
    let total = a.pods.len();
    let _ = writeln!(
        o,
        "# whatif {}: the cluster settled at t={}, the workload was added then, the run ended at t={}",
        a.cluster, a.added_at, a.ended_at
    );
    if !a.added_nodes.is_empty() {
        let _ = writeln!(o, "# nodes added: {}", a.added_nodes.join(", "));
    }
    let verdict = if a.fits { "yes" } else { "no" };
    let _ = writeln!(
        o,
        "fits: {verdict} ({} of {total} workload pods bound, {} pending)",
        a.bound, a.pending
    );
    o.push_str("\n## workload pods\n");
    let rows: Vec<Vec<String>> = a
        .pods
        .iter()
        .map(|p| {
            let devices: Vec<String> = p
                .devices
                .iter()
                .map(|(r, ids)| format!("{r}=[{}]", ids.join(",")))
                .collect();
            vec![
                format!("{}/{}", p.namespace, p.name),
                p.priority.to_string(),
                p.bound_at.map_or_else(|| "-".into(), |t| format!("t={t}")),
                or_dash(p.node.as_deref()),
                if devices.is_empty() {
                    "-".into()
                } else {
                    devices.join(" ")
                },
                p.status.clone(),
            ]
        })
        .collect();
    o.push_str(&table(
        &["POD", "PRIORITY", "BOUND", "NODE", "DEVICES", "STATUS"],
        &rows,
    ));
    let _ = writeln!(o, "\n## preempted: {}", a.preempted.len());
    if !a.preempted.is_empty() {
        o.push_str(&disrupted_table(&a.preempted));
    }
    let _ = writeln!(o, "\n## evicted: {}", a.evicted.len());
    if !a.evicted.is_empty() {
        o.push_str(&disrupted_table(&a.evicted));
    }
    if let Some(w) = &a.why {
        o.push_str("\n## why it does not fit\n");
        for l in &w.gang_lines {
            let _ = writeln!(o, "{l}");
        }
        if !w.reasons.is_empty() {
            let rows: Vec<Vec<String>> = w
                .reasons
                .iter()
                .map(|r| vec![r.pods.to_string(), r.reason.clone()])
                .collect();
            o.push_str(&table(&["PODS", "REASON"], &rows));
        }
        if let Some((pod, m)) = &w.first_pending {
            let _ = writeln!(o, "{pod}: {m}");
        }
    }
    if let Some(s) = &a.nodes_needed {
        o.push_str("\n## nodes needed\n");
        let probes: Vec<String> = s
            .probes
            .iter()
            .map(|p| format!("+{} {}", p.nodes, if p.fits { "fits" } else { "no" }))
            .collect();
        match (s.nodes, &s.like) {
            (Some(n), Some(like)) => {
                let _ = writeln!(
                    o,
                    "{n} more node{} like {like} ({}) make it fit",
                    if n == 1 { "" } else { "s" },
                    s.shape
                );
            }
            _ => {
                let _ = writeln!(o, "{}", s.note.clone().unwrap_or_default());
            }
        }
        if !probes.is_empty() {
            let _ = writeln!(
                o,
                "probes (each a full run; doubling, then bisection, at most {}): {}",
                s.max_nodes,
                probes.join(", ")
            );
        }
    }
    if let Some(m) = &a.max_replicas {
        o.push_str("\n## max replicas\n");
        o.push_str(&m.report());
    }
    o
}
