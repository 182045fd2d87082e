//! Fragmentation beside the FGD paper's (Weng et al., USENIX ATC '23): reads the simulator's
//! published per-seed curves (hkust-adsl/kubernetes-scheduler-simulator
//! `experiments/analysis/expected_results/analysis_frag_discrete.csv`, fragmented GPU as % of the
//! GPU capacity, and `analysis_frag_ratio_discrete.csv`, fragmented GPU as % of the idle GPU;
//! columns `workload,sc_policy,tune,seed,0..130`) and writes `frag.csv` / `frag.md`: per policy
//! and arrived %, our median [min, max] over seeds beside the paper's.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use k8s_cluster::trace::metrics::Summary;
use k8s_cluster::trace::Policy;

use super::published;

/// Published per-seed values: (policy, arrived %) -> one value per seed.
pub type Published = BTreeMap<(Policy, u32), Vec<f64>>;

/// Reads the rows of `workload` (the pod file's name without `.csv`) from a published
/// `analysis_frag*_discrete.csv`, keeping the policies in `policies`; an empty map when the file
/// has no such row. The `sc_policy` labels (`01-Random` .. `06-FGD`) are read without their `NN-`
/// prefix.
///
/// # Errors
/// The file is missing, unreadable, empty, header-only or ragged, lacks the `workload` or
/// `sc_policy` column, or a compared row (this workload, one of `policies`) has a cell that is not
/// a finite number (`file:line:column`).
pub fn load(path: &Path, workload: &str, policies: &[Policy]) -> Result<Published, String> {
    let t = published::read(path)?;
    let (w, p) = (t.col("workload")?, t.col("sc_policy")?);
    // Only the numeric headers are arrived percents (`tune`, `seed`, `total_gpus` are not).
    let pct: Vec<(usize, u32)> = t
        .header()
        .iter()
        .enumerate()
        .filter_map(|(i, h)| h.parse::<u32>().ok().map(|k| (i, k)))
        .filter(|(i, _)| *i != w && *i != p)
        .collect();
    // The published files have one column per arrived percent 0..=130; a missing one means a cut
    // or different file.
    if let Some(k) = (0..=130u32).find(|k| !pct.iter().any(|(_, x)| x == k)) {
        return Err(format!(
            "{}:1: missing column \"{k}\" (expected one column per arrived percent 0..130)",
            t.file
        ));
    }
    let mut out = Published::new();
    for row in t.rows() {
        if row.get(w) != workload {
            continue;
        }
        let label = row.get(p);
        let name = label.split_once('-').map_or(label, |(_, n)| n);
        let Ok(policy) = Policy::parse(name) else {
            continue;
        };
        if !policies.contains(&policy) {
            continue;
        }
        for (i, k) in &pct {
            let v = row.number(*i, &k.to_string())?;
            out.entry((policy, *k)).or_default().push(v);
        }
    }
    Ok(out)
}

/// Ours: (policy, arrived %) -> (fragmented % of capacity, fragmented % of idle) per seed.
pub type Ours = BTreeMap<(Policy, u32), Vec<(f64, f64)>>;

fn cell(s: &Summary) -> String {
    if s.n == 0 {
        "-".into()
    } else {
        format!("{:.2} [{:.2}, {:.2}]", s.median, s.min, s.max)
    }
}

fn num(s: &Summary, f: fn(&Summary) -> f64) -> String {
    if s.n == 0 {
        String::new()
    } else {
        format!("{:.3}", f(s))
    }
}

/// `frag.csv` (every arrived %) and `frag.md` (every 10 %): ours beside the paper's, for the
/// fragmentation (% of capacity) and its ratio to the idle GPU.
pub fn report(
    policies: &[Policy],
    ours: &Ours,
    frag: Option<&Published>,
    ratio: Option<&Published>,
) -> (String, String) {
    let mut csv = String::from(
        "policy,arrived_gpu_pct,n_seeds,frag_median,frag_min,frag_max,paper_frag_median,paper_frag_min,paper_frag_max,frag_ratio_median,frag_ratio_min,frag_ratio_max,paper_frag_ratio_median,paper_frag_ratio_min,paper_frag_ratio_max\n",
    );
    let summaries = |p: Policy, k: u32| {
        let v = ours.get(&(p, k)).cloned().unwrap_or_default();
        let f: Vec<f64> = v.iter().map(|x| x.0).collect();
        let r: Vec<f64> = v.iter().map(|x| x.1).collect();
        let pub_of = |x: Option<&Published>| {
            Summary::of(&x.and_then(|m| m.get(&(p, k)).cloned()).unwrap_or_default())
        };
        (
            Summary::of(&f),
            pub_of(frag),
            Summary::of(&r),
            pub_of(ratio),
        )
    };
    for p in policies {
        for k in 0..=130u32 {
            let (f, pf, r, pr) = summaries(*p, k);
            if f.n == 0 && pf.n == 0 {
                continue;
            }
            let mut row = format!("{},{k},{}", p.name(), f.n);
            for s in [&f, &pf, &r, &pr] {
                for g in [
                    |s: &Summary| s.median,
                    |s: &Summary| s.min,
                    |s: &Summary| s.max,
                ] {
                    row.push(',');
                    row.push_str(&num(s, g));
                }
            }
            let _ = writeln!(csv, "{row}");
        }
    }
    let mut md = String::new();
    for (title, pick) in [
        ("fragmented GPU % of capacity (the paper's measure)", 0usize),
        ("fragmented GPU % of idle GPU", 1usize),
    ] {
        let _ = writeln!(
            md,
            "\n## {title} by arrived GPU workload: ours median [min, max] over seeds / paper's\n"
        );
        let mut header = String::from("| arrived % |");
        let mut rule = String::from("|---:|");
        for p in policies {
            let _ = write!(header, " {} |", p.paper_label());
            rule.push_str("---|");
        }
        let _ = writeln!(md, "{header}\n{rule}");
        for k in (0..=130u32).step_by(10) {
            let mut row = format!("| {k} |");
            for p in policies {
                let (f, pf, r, pr) = summaries(*p, k);
                let (o, q) = if pick == 0 { (f, pf) } else { (r, pr) };
                let _ = write!(row, " {}", cell(&o));
                if q.n > 0 {
                    let _ = write!(row, " / {}", cell(&q));
                }
                row.push_str(" |");
            }
            let _ = writeln!(md, "{row}");
        }
    }
    (csv, md)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn published_rows_are_read_by_workload_and_policy() {
        let dir = std::env::temp_dir().join(format!("xtask-frag-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let p = dir.join("frag.csv");
        // Rows give percents 0 and 1; 2..=130 are padded with 0.
        let file = |rows: &[&str]| {
            let pct: Vec<String> = (0..=130).map(|k: u32| k.to_string()).collect();
            let mut s = format!("workload,sc_policy,tune,seed,{}\n", pct.join(","));
            for r in rows {
                s.push_str(r);
                s.push_str(&",0".repeat(129));
                s.push('\n');
            }
            s
        };
        std::fs::write(
            &p,
            file(&[
                "w,06-FGD,1.3,42,13.88,13.71",
                "w,06-FGD,1.3,43,13.9,13.8",
                "x,06-FGD,1.3,42,1,2",
                "w,03-GpuClustering,1.3,42,5,6",
            ]),
        )
        .expect("write");
        let got = load(&p, "w", &[Policy::Fgd, Policy::GpuClustering]).expect("rows");
        assert_eq!(got[&(Policy::Fgd, 0)], vec![13.88, 13.9]);
        assert_eq!(got[&(Policy::Fgd, 1)], vec![13.71, 13.8]);
        assert_eq!(got[&(Policy::GpuClustering, 1)], vec![6.0]);
        // Percent 42 is the padded column, not the `seed` column's 42 and 43.
        assert_eq!(got[&(Policy::Fgd, 42)], vec![0.0, 0.0]);
        assert_eq!(load(&p, "none", &[Policy::Fgd]), Ok(Published::new()));
        // A bad cell in a compared row is an error with its place; in other rows it is not read.
        std::fs::write(
            &p,
            file(&["w,06-FGD,1.3,42,13.88,oops", "w,01-Random,1.3,42,x,y"]),
        )
        .expect("write");
        assert_eq!(
            load(&p, "w", &[Policy::Fgd]),
            Err(format!(
                "{}:2:23: column 1: expected a finite number, got \"oops\"",
                p.display()
            ))
        );
        assert_eq!(
            load(&p, "w", &[Policy::GpuClustering]),
            Ok(Published::new())
        );
        assert!(load(&p, "w", &[Policy::Random]).is_err());
        // A file cut after the column of 5 % is not the published format.
        std::fs::write(
            &p,
            "workload,sc_policy,tune,seed,0,1,2,3,4,5\nw,06-FGD,1.3,42,1,2,3,4,5,6\n",
        )
        .expect("write");
        assert_eq!(
            load(&p, "w", &[Policy::Fgd]),
            Err(format!(
                "{}:1: missing column \"6\" (expected one column per arrived percent 0..130)",
                p.display()
            ))
        );
        let mut ours = Ours::new();
        ours.insert((Policy::Fgd, 0), vec![(13.0, 14.0), (15.0, 16.0)]);
        let (csv, md) = report(&[Policy::Fgd], &ours, Some(&got), None);
        assert!(csv.contains(
            "\nfgd,0,2,14.000,13.000,15.000,13.890,13.880,13.900,15.000,14.000,16.000,,,\n"
        ));
        assert!(md.contains("| 0 | 14.00 [13.00, 15.00] / 13.89 [13.88, 13.90] |"));
    }
}
