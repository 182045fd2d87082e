//! The text form of [`Explanation`]s, as printed under `## explain <namespace>/<pod>` by
//! `cargo xtask scenario <name> --explain <namespace>/<pod>`. Deterministic: only the recorded
//! values, in a fixed order, with columns padded to the widest cell. The format is described in
//! `docs/explain.md`.

use std::fmt::Write as _;

use super::{Explanation, NodeVerdict, Outcome, PodKey, PostFilterView};

/// What is printed when the pod had no scheduling attempt.
pub const MSG_NO_ATTEMPT: &str = "no scheduling attempt of this pod (it never was pending, was not attempted, or does not exist)";

/// Renders every attempt of `pod`, oldest first, separated by blank lines.
pub fn render(pod: &PodKey, explanations: &[Explanation]) -> String {
    // The recorder also keeps the attempts of members of a PodGroup of the same name.
    let mine: Vec<&Explanation> = explanations.iter().filter(|e| &e.pod == pod).collect();
    if mine.is_empty() {
        return format!("{pod}: {MSG_NO_ATTEMPT}\n");
    }
    let mut out = String::new();
    for (i, e) in mine.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(&e.to_string());
    }
    out
}

/// A node's verdict as one cell.
pub fn verdict_text(v: &NodeVerdict) -> String {
    match v {
        NodeVerdict::Success => "Success".to_string(),
        NodeVerdict::Rejected(s) => s.to_string(),
        NodeVerdict::NotInPreFilterResult => "not filtered: not in the PreFilterResult".to_string(),
        NodeVerdict::SkippedByPercentageOfNodesToScore => {
            "not filtered: skipped by percentageOfNodesToScore".to_string()
        }
        NodeVerdict::NotEvaluated(r) => format!("not filtered: {r}"),
    }
}

/// Left-aligned text columns, right-aligned numeric ones, two spaces apart, each line indented.
fn table(indent: &str, rows: &[Vec<String>], numeric: &[bool]) -> String {
    let cols = rows.iter().map(Vec::len).max().unwrap_or(0);
    let mut widths = vec![0usize; cols];
    for r in rows {
        for (i, c) in r.iter().enumerate() {
            widths[i] = widths[i].max(c.chars().count());
        }
    }
    let mut out = String::new();
    for r in rows {
        let mut line = String::from(indent);
        for (i, c) in r.iter().enumerate() {
            if i > 0 {
                line.push_str("  ");
            }
            let pad = widths[i].saturating_sub(c.chars().count());
            if numeric.get(i).copied().unwrap_or(false) {
                line.push_str(&" ".repeat(pad));
                line.push_str(c);
            } else {
                line.push_str(c);
                if i + 1 < r.len() {
                    line.push_str(&" ".repeat(pad));
                }
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

fn post_filter_text(p: &PostFilterView) -> String {
    let s = &p.status;
    let status = if s.code == "Success" {
        if s.plugin.is_empty() {
            "Success".to_string()
        } else {
            format!("{}: Success", s.plugin)
        }
    } else if s.plugin.is_empty() && s.reasons.is_empty() {
        "no PostFilter plugin made the pod schedulable".to_string()
    } else {
        s.to_string()
    };
    let nomination = match p.nominated_node_name.as_deref() {
        None => "nominatedNodeName unchanged".to_string(),
        Some("") => "nominatedNodeName cleared".to_string(),
        Some(n) => format!("nominatedNodeName: {n}"),
    };
    format!("{status}; {nomination}")
}

impl std::fmt::Display for Explanation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut o = String::new();
        let _ = writeln!(
            o,
            "attempt {} at t={}, profile {}, {} node{}",
            self.attempt,
            self.tick,
            self.profile,
            self.num_nodes,
            if self.num_nodes == 1 { "" } else { "s" }
        );
        // PreFilter.
        let pf = &self.pre_filter;
        let mut line = match &pf.status {
            Some(s) => format!("  PreFilter: {s}"),
            None => "  PreFilter: Success".to_string(),
        };
        match &pf.node_names {
            None if pf.status.is_none() => line.push_str(" (all nodes)"),
            None => {}
            Some(names) => {
                let _ = write!(
                    line,
                    "; nodes restricted to [{}] by {}",
                    names.join(", "),
                    pf.restricted_by.join(", ")
                );
            }
        }
        // After a rejecting PreFilter no Filter runs at all: the skip list would only confuse.
        if pf.status.is_none() && !pf.skipped_filter_plugins.is_empty() {
            let _ = write!(
                line,
                "; Filter skipped for {}",
                pf.skipped_filter_plugins.join(", ")
            );
        }
        o.push_str(&line);
        o.push('\n');
        if let Some(nn) = &self.nominated_node {
            let _ = writeln!(
                o,
                "  nominated node {} (status.nominatedNodeName, filtered first): {}",
                nn.node,
                verdict_text(&nn.verdict)
            );
        }
        // Filter.
        if !self.nodes.is_empty() {
            match &self.window {
                Some(w) => {
                    let _ = writeln!(
                        o,
                        "  Filter: {} of {} candidate nodes evaluated, from index {}, stopping at {} feasible (percentageOfNodesToScore {})",
                        w.evaluated,
                        w.candidates,
                        w.start_index,
                        w.num_feasible_nodes_to_find,
                        w.percentage_of_nodes_to_score
                    );
                }
                None => o.push_str("  Filter:\n"),
            }
            let mut rows = vec![vec!["NODE".to_string(), "VERDICT".to_string()]];
            rows.extend(
                self.nodes
                    .iter()
                    .map(|n| vec![n.node.clone(), verdict_text(&n.verdict)]),
            );
            o.push_str(&table("    ", &rows, &[false, false]));
        }
        // PreScore / Score.
        if let Some(s) = &self.pre_score {
            let _ = writeln!(o, "  PreScore: {s}");
        }
        if let Some(note) = &self.score_note {
            let _ = writeln!(o, "  Score: {note}");
        }
        if !self.scores.is_empty() {
            let _ = writeln!(
                o,
                "  Score: {} feasible nodes, highest total first (equal totals: the name sorting last first, it wins)",
                self.scores.len()
            );
            let mut rows = vec![
                ["NODE", "PLUGIN", "RAW", "NORMALIZED", "WEIGHT", "WEIGHTED"]
                    .map(String::from)
                    .to_vec(),
            ];
            for n in &self.scores {
                for p in &n.plugins {
                    let (raw, norm) = if p.skipped {
                        ("skip".to_string(), "skip".to_string())
                    } else {
                        (p.raw.to_string(), p.normalized.to_string())
                    };
                    rows.push(vec![
                        n.node.clone(),
                        p.plugin.clone(),
                        raw,
                        norm,
                        p.weight.to_string(),
                        p.weighted.to_string(),
                    ]);
                }
                rows.push(vec![
                    n.node.clone(),
                    "total".to_string(),
                    String::new(),
                    String::new(),
                    String::new(),
                    n.total.to_string(),
                ]);
            }
            o.push_str(&table(
                "    ",
                &rows,
                &[false, false, true, true, true, true],
            ));
        }
        // Outcomes.
        let mut selected: Option<&str> = None;
        for ev in &self.outcomes {
            match &ev.outcome {
                Outcome::Selected { node } => {
                    selected = Some(node);
                    let _ = writeln!(o, "  selected: {node}");
                }
                Outcome::Waiting { node, plugins } => {
                    let who: Vec<String> = plugins
                        .iter()
                        .map(|(p, t)| format!("{p} for up to {t} ticks"))
                        .collect();
                    let _ = writeln!(
                        o,
                        "  t={} Permit: waiting on {node} ({})",
                        ev.tick,
                        who.join(", ")
                    );
                }
                Outcome::Bound { node } => {
                    let _ = writeln!(o, "  t={} Bound: {node}", ev.tick);
                }
                Outcome::Failed {
                    reason,
                    message,
                    post_filter,
                } => {
                    let _ = writeln!(o, "  t={} FailedScheduling ({reason}): {message}", ev.tick);
                    if let Some(p) = post_filter {
                        let _ = writeln!(o, "    PostFilter: {}", post_filter_text(p));
                    }
                }
            }
        }
        if let (Some(sel), Some(pred)) = (selected, self.predicted.as_deref()) {
            if sel != pred {
                let _ = writeln!(
                    o,
                    "  warning: this explanation ranks {pred} first but the scheduler selected {sel}"
                );
            }
        }
        f.write_str(&o)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_pad_text_left_and_numbers_right() {
        let rows = vec![
            vec!["A".to_string(), "N".to_string()],
            vec!["long".to_string(), "5".to_string()],
            vec!["x".to_string(), "100".to_string()],
        ];
        assert_eq!(
            table("  ", &rows, &[false, true]),
            "  A       N\n  long    5\n  x     100\n"
        );
    }
}
