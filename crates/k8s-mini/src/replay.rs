//! `cargo xtask replay`: replays a GPU cluster trace (Alibaba `cluster-trace-gpu-v2023`, released
//! with Weng et al., "Beware of Fragmentation: Scheduling GPU-Sharing Workloads with Fragmentation
//! Gradient Descent", USENIX ATC '23) under several policies and seeds with the paper's protocol,
//! and writes `curves.csv`, `summary.csv`, `summary.md`, `unalloc.svg`, `frag.csv` and `frag.md`
//! (fragmentation beside the paper's published curves) into `--out`.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use k8s_cluster::trace::metrics::{discretize_points, report_points, Summary};
use k8s_cluster::trace::{replay_paper, PaperOptions, Policy, Prepared, ReplayRun, Trace};

use crate::plot;

mod frag;
mod published;

/// Arguments of `cargo xtask replay`.
#[derive(clap::Args)]
pub struct ReplayArgs {
    /// Node CSV (`sn,cpu_milli,memory_mib,gpu,model`).
    #[arg(
        long,
        value_name = "CSV",
        default_value = "data/alibaba-gpu-v2023/openb_node_list_gpu_node.csv"
    )]
    nodes: PathBuf,
    /// Pod CSV (`name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,...`).
    #[arg(
        long,
        value_name = "CSV",
        default_value = "data/alibaba-gpu-v2023/openb_pod_list_default.csv"
    )]
    pods: PathBuf,
    /// Policies (repeat or comma-separate): random, dot_product, gpu_clustering, gpu_packing,
    /// best_fit, fgd, binpack, spread, balanced, default, or `paper` for the first six.
    #[arg(long = "policy", value_delimiter = ',', default_value = "paper")]
    policies: Vec<String>,
    /// Seeds: `42..51` (inclusive), `42`, or `1,2,3` [default: 42..51]. Timeline mode uses the
    /// first one only.
    #[arg(long)]
    seeds: Option<String>,
    /// `paper` (the FGD protocol) or `timeline` (pods arrive at creation_time and leave at
    /// deletion_time through the whole control plane; one run per policy, the first seed).
    #[arg(long, default_value = "paper")]
    mode: String,
    /// Timeline mode: trace seconds per tick (1 = real time; larger compresses time).
    #[arg(long, default_value_t = 1)]
    time_scale: u64,
    /// Timeline mode: use only the first N GPU nodes.
    #[arg(long)]
    node_limit: Option<usize>,
    /// Timeline mode: run every tick instead of skipping idle time (same results, slower).
    #[arg(long)]
    no_skip: bool,
    /// Output directory.
    #[arg(long, default_value = "target/replay")]
    out: PathBuf,
    /// Published results to compare with (`derived_unalloc_gpu_summary.csv`); the row's workload is
    /// the pod file's name without `.csv` [default:
    /// data/alibaba-gpu-v2023/derived_unalloc_gpu_summary.csv, skipped when absent].
    #[arg(long, value_name = "CSV")]
    expected: Option<PathBuf>,
    /// The paper's published fragmentation curves, per seed (`analysis_frag_discrete.csv`:
    /// fragmented GPU % of capacity), compared in `frag.csv` / `frag.md` [default:
    /// data/alibaba-gpu-v2023/analysis_frag_discrete.csv, skipped when absent].
    #[arg(long, value_name = "CSV")]
    expected_frag: Option<PathBuf>,
    /// The paper's published fragmentation ratios, per seed (`analysis_frag_ratio_discrete.csv`:
    /// fragmented GPU % of idle GPU) [default:
    /// data/alibaba-gpu-v2023/analysis_frag_ratio_discrete.csv, skipped when absent].
    #[arg(long, value_name = "CSV")]
    expected_frag_ratio: Option<PathBuf>,
    /// Paper mode: inflate the GPU request to this multiple of the capacity [default: 1.3].
    #[arg(long)]
    inflation: Option<f64>,
    /// Replay only the first N arrivals of each run (timeline mode: the first N pods of the file).
    #[arg(long)]
    limit: Option<usize>,
    /// Worker threads (default: the machine's cores).
    #[arg(long)]
    threads: Option<usize>,
    /// No progress bar.
    #[arg(long)]
    quiet: bool,
}

/// Bundled published unallocated-GPU summary (`--expected`).
const DEFAULT_EXPECTED: &str = "data/alibaba-gpu-v2023/derived_unalloc_gpu_summary.csv";
/// Bundled published fragmentation curves (`--expected-frag`).
const DEFAULT_EXPECTED_FRAG: &str = "data/alibaba-gpu-v2023/analysis_frag_discrete.csv";
/// Bundled published fragmentation ratios (`--expected-frag-ratio`).
const DEFAULT_EXPECTED_FRAG_RATIO: &str = "data/alibaba-gpu-v2023/analysis_frag_ratio_discrete.csv";

/// The most seeds one replay command runs.
const MAX_SEEDS: u64 = 10_000;
/// `--seeds` when not given.
const DEFAULT_SEEDS: &str = "42..51";
/// The seeds the paper's published unallocated-GPU summary is over (`derived_unalloc_gpu_summary.csv`:
/// `n_seeds` 10, seeds 42..51, data/alibaba-gpu-v2023/SOURCE.md): its medians and ranges are numbers
/// for that set of runs only.
const PAPER_SEEDS: std::ops::RangeInclusive<u64> = 42..=51;
/// `--inflation` when not given (the paper's 130 % of GPU capacity).
const DEFAULT_INFLATION: f64 = 1.3;

/// Warnings for what timeline mode is given but does not use: `--inflation` (paper mode's
/// protocol), and every seed of `--seeds` after the first (`seeds`: the parsed `--seeds` when it was
/// given).
fn timeline_ignored_flags(inflation: Option<f64>, seeds: Option<&[u64]>) -> Vec<String> {
    let mut out = Vec::new();
    if inflation.is_some() {
        out.push("--inflation is ignored in timeline mode".to_string());
    }
    if let Some([first, _, ..]) = seeds {
        out.push(format!(
            "only the first seed ({first}) is used in timeline mode"
        ));
    }
    out
}

fn parse_seeds(s: &str) -> Result<Vec<u64>, String> {
    let bad = || format!("bad --seeds {s:?}: expected A..B, A or A,B,C");
    if let Some((a, b)) = s.split_once("..") {
        let a: u64 = a.trim().parse().map_err(|_| bad())?;
        let b: u64 = b
            .trim()
            .trim_start_matches('=')
            .parse()
            .map_err(|_| bad())?;
        if b < a {
            return Err(bad());
        }
        if b - a >= MAX_SEEDS {
            return Err(format!("bad --seeds {s:?}: at most {MAX_SEEDS} seeds"));
        }
        return Ok((a..=b).collect());
    }
    let mut out: Vec<u64> = Vec::new();
    for x in s.split(',') {
        let seed = x.trim().parse().map_err(|_| bad())?;
        // Each seed runs once: a repeated seed is dropped, the first occurrence keeps its place.
        if !out.contains(&seed) {
            out.push(seed);
        }
    }
    Ok(out)
}

fn parse_policies(names: &[String]) -> Result<Vec<Policy>, String> {
    let mut out = Vec::new();
    for n in names {
        let add: Vec<Policy> = if n == "paper" {
            Policy::PAPER.to_vec()
        } else {
            vec![Policy::parse(n).map_err(|e| e.to_string())?]
        };
        // Each policy runs once: a repeat is dropped, the first occurrence keeps its place.
        for p in add {
            if !out.contains(&p) {
                out.push(p);
            }
        }
    }
    Ok(out)
}

/// Published (median, min, max) of the unallocated GPU % per (policy label, arrived %).
type Expected = BTreeMap<(String, u32), (f64, f64, f64)>;

/// Reads the rows of `workload` for `policies` from a published `derived_unalloc_gpu_summary.csv`;
/// an empty map when the file has no such row.
///
/// # Errors
/// The file is missing, unreadable, empty, header-only or ragged, lacks a column, or a compared
/// row (this workload, one of `policies`) has a malformed cell (`file:line:column`).
fn load_expected(path: &Path, workload: &str, policies: &[Policy]) -> Result<Expected, String> {
    let t = published::read(path)?;
    let (w, p, a, med, lo, hi) = (
        t.col("workload")?,
        t.col("policy")?,
        t.col("arrived_gpu_pct")?,
        t.col("unalloc_gpu_pct_median")?,
        t.col("unalloc_gpu_pct_min")?,
        t.col("unalloc_gpu_pct_max")?,
    );
    let mut out = Expected::new();
    for row in t.rows() {
        let pol = row.get(p);
        if row.get(w) != workload || !policies.iter().any(|x| x.paper_label() == pol) {
            continue;
        }
        out.insert(
            (pol.to_string(), row.percent(a, "arrived_gpu_pct")?),
            (
                row.number(med, "unalloc_gpu_pct_median")?,
                row.number(lo, "unalloc_gpu_pct_min")?,
                row.number(hi, "unalloc_gpu_pct_max")?,
            ),
        );
    }
    Ok(out)
}

/// Where published results come from: the path the user passed, else the bundled default, which
/// is optional (`Ok(None)` with a note when absent). Anything else that cannot be read is an error.
fn published_path(given: Option<&Path>, default: &str, flag: &str) -> Option<PathBuf> {
    match given {
        Some(p) => {
            let r = resolve(p);
            // Errors name the path as the user gave it when it exists nowhere.
            Some(if r.exists() { r } else { p.to_path_buf() })
        }
        None => {
            let p = resolve(Path::new(default));
            if p.exists() {
                Some(p)
            } else {
                outln!(
                    "note: {} not found: no comparison with published results made (pass {flag} <CSV>)",
                    p.display()
                );
                None
            }
        }
    }
}

/// One run's curve: per integer percent 0..=130, (unallocated %, fragmented % of capacity,
/// fragmented % of idle).
struct Curve {
    policy: Policy,
    seed: u64,
    points: Vec<Option<(f64, f64, f64)>>,
    pods_tried: usize,
    pods_placed: usize,
    elapsed: Duration,
}

fn curve(run: &ReplayRun, elapsed: Duration) -> Curve {
    Curve {
        policy: run.policy,
        seed: run.seed,
        points: discretize_points(&run.samples, run.capacity_milli, 130)
            .into_iter()
            .map(|p| p.map(|p| (100.0 - p.alloc_pct, p.frag_pct, p.frag_ratio_pct)))
            .collect(),
        pods_tried: run.pods_tried,
        pods_placed: run.pods_placed,
        elapsed,
    }
}

fn resolve(p: &Path) -> PathBuf {
    if p.is_absolute() || p.exists() {
        return p.to_path_buf();
    }
    // Relative paths are taken from the workspace root (this crate is crates/k8s-mini) when not
    // found from the current directory.
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .and_then(Path::parent)
        .map_or_else(|| p.to_path_buf(), |root| root.join(p))
}

/// Runs the subcommand.
pub fn run(args: ReplayArgs) -> ExitCode {
    match run_inner(args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

fn run_inner(args: ReplayArgs) -> Result<ExitCode, String> {
    if args.mode != "paper" && args.mode != "timeline" {
        return Err(format!(
            "unknown --mode {:?}: expected `paper` (the FGD paper's protocol) or `timeline`",
            args.mode
        ));
    }
    let seeds = parse_seeds(args.seeds.as_deref().unwrap_or(DEFAULT_SEEDS))?;
    let policies = parse_policies(&args.policies)?;
    let (nodes, pods) = (resolve(&args.nodes), resolve(&args.pods));
    for p in [&nodes, &pods] {
        if !p.exists() {
            let hint = if p.to_string_lossy().contains("shared") {
                " (the full trace lives in ../shared/data/alibaba-gpu-v2023/: is it there?)"
            } else {
                ""
            };
            return Err(format!("{} does not exist{hint}", p.display()));
        }
    }
    if args.mode == "timeline" {
        if args.time_scale == 0 {
            return Err("bad --time-scale 0: must be at least 1 (trace seconds per tick)".into());
        }
        let given_seeds = args.seeds.is_some().then_some(seeds.as_slice());
        for w in timeline_ignored_flags(args.inflation, given_seeds) {
            eprintln!("warning: {w}");
        }
        crate::timeline::run(&crate::timeline::TimelineArgs {
            nodes,
            pods,
            policies,
            seed: seeds.first().copied().unwrap_or(42),
            out: args.out,
            limit: args.limit,
            node_limit: args.node_limit,
            time_scale: args.time_scale,
            no_skip: args.no_skip,
            threads: args
                .threads
                .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())),
            quiet: args.quiet,
        })?;
        return Ok(ExitCode::SUCCESS);
    }
    let inflation = args.inflation.unwrap_or(DEFAULT_INFLATION);
    if !inflation.is_finite() || inflation <= 0.0 || inflation > 100.0 {
        return Err(format!(
            "bad --inflation {inflation}: must be a number greater than 0 and at most 100"
        ));
    }
    let t0 = Instant::now();
    let trace = Trace::load(&nodes, &pods).map_err(|e| e.to_string())?;
    for w in &trace.warnings {
        eprintln!("warning: {w}");
    }
    let opts = PaperOptions {
        inflation,
        max_arrivals: args.limit,
        ..PaperOptions::default()
    };
    let prep = Prepared::new(&trace, &opts).map_err(|e| e.to_string())?;
    let load_time = t0.elapsed();
    let workload = pods
        .file_stem()
        .map(|s| s.to_string_lossy().to_string())
        .unwrap_or_default();
    outln!(
        "# replay {workload}: {} GPU nodes, {} GPUs, {} pods, {} typical pod shapes; {} policies x {} seeds (loaded in {:.0} ms)",
        prep.num_nodes(),
        prep.capacity_milli() / 1000,
        trace.pods.len(),
        prep.typical().len(),
        policies.len(),
        seeds.len(),
        load_time.as_secs_f64() * 1000.0
    );
    let expected = published_path(args.expected.as_deref(), DEFAULT_EXPECTED, "--expected")
        .map(|p| load_expected(&p, &workload, &policies))
        .transpose()?;
    let load_frag = |given: Option<&PathBuf>, default: &str, flag: &str| {
        published_path(given.map(PathBuf::as_path), default, flag)
            .map(|p| frag::load(&p, &workload, &policies))
            .transpose()
    };
    let expected_frag = load_frag(
        args.expected_frag.as_ref(),
        DEFAULT_EXPECTED_FRAG,
        "--expected-frag",
    )?;
    let expected_frag_ratio = load_frag(
        args.expected_frag_ratio.as_ref(),
        DEFAULT_EXPECTED_FRAG_RATIO,
        "--expected-frag-ratio",
    )?;
    let jobs: Vec<(Policy, u64)> = policies
        .iter()
        .flat_map(|p| seeds.iter().map(move |s| (*p, *s)))
        .collect();
    let threads = args
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .clamp(1, jobs.len().max(1));
    let bar = if args.quiet {
        indicatif::ProgressBar::hidden()
    } else {
        let b = indicatif::ProgressBar::new(jobs.len() as u64);
        b.set_style(
            indicatif::ProgressStyle::with_template(
                "{bar:40} {pos}/{len} runs, {elapsed_precise} ({msg})",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        b
    };
    let next = Mutex::new(0usize);
    let results: Mutex<Vec<Result<Curve, String>>> = Mutex::new(Vec::new());
    let t1 = Instant::now();
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let i = {
                    let Ok(mut n) = next.lock() else { return };
                    let i = *n;
                    *n += 1;
                    i
                };
                let Some((policy, seed)) = jobs.get(i).copied() else {
                    return;
                };
                let t = Instant::now();
                let r = replay_paper(&prep, policy, seed, &opts)
                    .map(|run| curve(&run, t.elapsed()))
                    .map_err(|e| e.to_string());
                bar.set_message(format!("{} seed {seed}", policy.name()));
                bar.inc(1);
                if let Ok(mut v) = results.lock() {
                    v.push(r);
                }
            });
        }
    });
    bar.finish_and_clear();
    let wall = t1.elapsed();
    let mut curves: Vec<Curve> = Vec::new();
    for r in results.into_inner().unwrap_or_default() {
        curves.push(r?);
    }
    curves.sort_by_key(|c| (c.policy, c.seed));
    std::fs::create_dir_all(&args.out).map_err(|e| format!("{}: {e}", args.out.display()))?;
    let write = |name: &str, body: &str| -> Result<(), String> {
        let p = args.out.join(name);
        std::fs::write(&p, body).map_err(|e| format!("{}: {e}", p.display()))
    };
    write("curves.csv", &curves_csv(&curves))?;
    let (csv, md, ok) = summary(&policies, &curves, expected.as_ref(), &workload);
    write("summary.csv", &csv)?;
    write("summary.md", &md)?;
    let svg = plot::unalloc_svg(&policies, &curves_by_policy(&curves), &workload)?;
    write("unalloc.svg", &svg)?;
    out!("{md}");
    let mut ours = frag::Ours::new();
    for c in &curves {
        for (k, p) in c.points.iter().enumerate() {
            if let Some((_, f, r)) = p {
                ours.entry((c.policy, k as u32)).or_default().push((*f, *r));
            }
        }
    }
    let (fcsv, fmd) = frag::report(
        &policies,
        &ours,
        expected_frag.as_ref().filter(|m| !m.is_empty()),
        expected_frag_ratio.as_ref().filter(|m| !m.is_empty()),
    );
    write("frag.csv", &fcsv)?;
    write("frag.md", &fmd)?;
    out!("{fmd}");
    for (flag, m) in [
        ("--expected-frag", &expected_frag),
        ("--expected-frag-ratio", &expected_frag_ratio),
    ] {
        if m.as_ref().is_some_and(|m| m.is_empty()) {
            outln!("{flag}: no published results for workload {workload} and the policies run");
        }
    }
    let per_run: Vec<f64> = curves.iter().map(|c| c.elapsed.as_secs_f64()).collect();
    let rs = Summary::of(&per_run);
    outln!(
        "\n{} runs in {:.2} s wall on {threads} threads; one run: median {:.3} s (min {:.3}, max {:.3}); pods per run {}..{}",
        curves.len(),
        wall.as_secs_f64(),
        rs.median,
        rs.min,
        rs.max,
        curves.iter().map(|c| c.pods_tried).min().unwrap_or(0),
        curves.iter().map(|c| c.pods_tried).max().unwrap_or(0),
    );
    outln!(
        "wrote {}/{{curves.csv,summary.csv,summary.md,unalloc.svg,frag.csv,frag.md}}",
        args.out.display()
    );
    Ok(match ok {
        Some(false) => ExitCode::from(1),
        _ => ExitCode::SUCCESS,
    })
}

fn curves_csv(curves: &[Curve]) -> String {
    let mut s = String::from(
        "policy,seed,arrived_gpu_pct,unalloc_gpu_pct,frag_gpu_pct,pods_tried,pods_placed,frag_idle_pct\n",
    );
    for c in curves {
        for (k, p) in c.points.iter().enumerate() {
            if let Some((u, f, r)) = p {
                let _ = writeln!(
                    s,
                    "{},{},{k},{u:.2},{f:.2},{},{},{r:.4}",
                    c.policy.name(),
                    c.seed,
                    c.pods_tried,
                    c.pods_placed
                );
            }
        }
    }
    s
}

/// Per policy, per integer percent: the values over seeds.
pub type ByPolicy = BTreeMap<Policy, Vec<Vec<f64>>>;

fn curves_by_policy(curves: &[Curve]) -> ByPolicy {
    let mut out: ByPolicy = BTreeMap::new();
    for c in curves {
        let e = out.entry(c.policy).or_insert_with(|| vec![Vec::new(); 131]);
        for (k, p) in c.points.iter().enumerate() {
            if let Some((u, _, _)) = p {
                e[k].push(*u);
            }
        }
    }
    out
}

/// summary.csv, summary.md, and whether every compared policy's median at 100 % lies in the
/// published range (`None` when nothing was compared: no published results for `workload`, no
/// run reached 100 % arrived where a published value exists, or the runs' seeds are not the
/// paper's [`PAPER_SEEDS`]: the paper has a number for the median over those ten runs only, so a
/// run of other seeds, `--seeds 42` included, is shown next to it but not judged by it).
fn summary(
    policies: &[Policy],
    curves: &[Curve],
    expected: Option<&Expected>,
    workload: &str,
) -> (String, String, Option<bool>) {
    let by = curves_by_policy(curves);
    // Every policy ran exactly the paper's seeds (curves come one per policy and seed).
    let paper_seeds: Vec<u64> = PAPER_SEEDS.collect();
    let same_seeds = policies.iter().all(|p| {
        let mut seeds: Vec<u64> = curves
            .iter()
            .filter(|c| c.policy == *p)
            .map(|c| c.seed)
            .collect();
        seeds.sort_unstable();
        seeds == paper_seeds
    });
    let mut csv = String::from(
        "policy,arrived_gpu_pct,n_seeds,unalloc_median,unalloc_min,unalloc_max,paper_median,paper_min,paper_max,within_paper_range\n",
    );
    let mut md = String::new();
    let _ = writeln!(
        md,
        "\n## unallocated GPU % by arrived GPU workload (median over seeds, [min, max]); paper in parentheses\n"
    );
    let mut header = String::from("| arrived % |");
    let mut rule = String::from("|---:|");
    for p in policies {
        let _ = write!(header, " {} |", p.paper_label());
        rule.push_str("---|");
    }
    let _ = writeln!(md, "{header}\n{rule}");
    let mut all_ok = true;
    // Policies with a published value at 100 %: compared, or not reached by our runs.
    let (mut compared, mut not_reached, mut unpublished) = (Vec::new(), Vec::new(), Vec::new());
    for k in report_points() {
        let mut row = format!("| {k} |");
        for p in policies {
            let vals = by.get(p).map(|v| v[k as usize].clone()).unwrap_or_default();
            let s = Summary::of(&vals);
            let paper = expected.and_then(|e| e.get(&(p.paper_label().to_string(), k)).copied());
            let within = if s.n == 0 || !same_seeds {
                None
            } else {
                paper.map(|(_, lo, hi)| s.median >= lo - 1e-9 && s.median <= hi + 1e-9)
            };
            if k == 100 {
                match (paper, within) {
                    (Some(_), Some(w)) => {
                        all_ok &= w;
                        compared.push(p.paper_label());
                    }
                    (Some(_), None) => not_reached.push(p.paper_label()),
                    (None, _) if s.n > 0 => unpublished.push(p.paper_label()),
                    (None, _) => {}
                }
            }
            let _ = writeln!(
                csv,
                "{},{k},{},{:.3},{:.2},{:.2},{},{},{},{}",
                p.name(),
                s.n,
                s.median,
                s.min,
                s.max,
                paper.map_or(String::new(), |x| format!("{:.3}", x.0)),
                paper.map_or(String::new(), |x| format!("{:.2}", x.1)),
                paper.map_or(String::new(), |x| format!("{:.2}", x.2)),
                within.map_or(String::new(), |w| w.to_string()),
            );
            if s.n == 0 {
                row.push_str(" - |");
            } else {
                let _ = write!(row, " {:.2} [{:.2}, {:.2}]", s.median, s.min, s.max);
                if let Some((m, lo, hi)) = paper {
                    let mark = if within == Some(false) { " ✗" } else { "" };
                    let _ = write!(row, " ({m:.2} [{lo:.2}, {hi:.2}]){mark}");
                }
                row.push_str(" |");
            }
        }
        let _ = writeln!(md, "{row}");
    }
    // Ranking at 100 %.
    let mut at100: Vec<(f64, Policy)> = policies
        .iter()
        .filter_map(|p| {
            let v = by.get(p)?[100].clone();
            (!v.is_empty()).then(|| (Summary::of(&v).median, *p))
        })
        .collect();
    at100.sort_by(|a, b| a.0.total_cmp(&b.0));
    let order: Vec<String> = at100
        .iter()
        .map(|(m, p)| format!("{} {m:.2}", p.paper_label()))
        .collect();
    if order.is_empty() {
        let _ = writeln!(
            md,
            "\nranking at 100 %: no point at 100 % arrived (no run reached it)"
        );
    } else {
        let _ = writeln!(
            md,
            "\nranking at 100 % (lowest unallocated first): {}",
            order.join(" < ")
        );
    }
    let verdict = match expected {
        None => None,
        Some(e) if e.is_empty() => {
            let _ = writeln!(
                md,
                "no published results for workload {workload} and the policies run: no verdict"
            );
            None
        }
        Some(_) if !same_seeds => {
            let _ = writeln!(
                md,
                "no verdict: the paper's numbers are medians and ranges over its {} seeds {}..{}; the seeds run here are another set, so they are shown beside it, not compared (the default --seeds {DEFAULT_SEEDS} compares)",
                paper_seeds.len(),
                PAPER_SEEDS.start(),
                PAPER_SEEDS.end()
            );
            None
        }
        Some(_) if compared.is_empty() => {
            let _ = writeln!(
                md,
                "no point at 100 % arrived with a published value to compare: no verdict"
            );
            None
        }
        Some(_) => {
            let _ = writeln!(
                md,
                "every policy's median at 100 % within the published seed range: {}",
                if all_ok { "yes" } else { "NO" }
            );
            Some(all_ok)
        }
    };
    if verdict.is_some() && !not_reached.is_empty() {
        let _ = writeln!(
            md,
            "not compared (no point at 100 % arrived): {}",
            not_reached.join(", ")
        );
    }
    if expected.is_some_and(|e| !e.is_empty()) && !unpublished.is_empty() {
        let _ = writeln!(
            md,
            "not compared (no published value at 100 %): {}",
            unpublished.join(", ")
        );
    }
    (csv, md, verdict)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeds_and_policies_parse() {
        assert_eq!(parse_seeds("42..51").map(|v| v.len()), Ok(10));
        assert_eq!(parse_seeds("1,3"), Ok(vec![1, 3]));
        assert!(parse_seeds("x").is_err());
        assert_eq!(
            parse_seeds("0..18446744073709551615"),
            Err("bad --seeds \"0..18446744073709551615\": at most 10000 seeds".to_string())
        );
        assert_eq!(parse_policies(&["paper".into()]).map(|v| v.len()), Ok(6));
        assert_eq!(
            parse_policies(&["fgd".into(), "binpack".into()]),
            Ok(vec![Policy::Fgd, Policy::Binpack])
        );
    }

    #[test]
    fn repeated_policies_and_seeds_run_once_in_first_order() {
        assert_eq!(
            parse_policies(&["fgd".into(), "best_fit".into(), "fgd".into()]),
            Ok(vec![Policy::Fgd, Policy::BestFit])
        );
        // `paper` then one of its six: still six, FGD last as in Policy::PAPER.
        let v = parse_policies(&["paper".into(), "random".into()]).unwrap_or_default();
        assert_eq!(v, Policy::PAPER.to_vec());
        assert_eq!(parse_seeds("42,42"), Ok(vec![42]));
        assert_eq!(parse_seeds("43,42,43,44,42"), Ok(vec![43, 42, 44]));
    }

    #[test]
    fn timeline_mode_says_which_flags_it_ignores() {
        // Nothing given: the default seeds and inflation are no reason to warn.
        assert!(timeline_ignored_flags(None, None).is_empty());
        // One seed given: it is used.
        assert!(timeline_ignored_flags(None, Some(&[7])).is_empty());
        assert_eq!(
            timeline_ignored_flags(Some(1.3), Some(&[42, 43, 44])),
            vec![
                "--inflation is ignored in timeline mode".to_string(),
                "only the first seed (42) is used in timeline mode".to_string(),
            ]
        );
        let seeds = parse_seeds("43,42").unwrap_or_default();
        assert_eq!(
            timeline_ignored_flags(None, Some(&seeds)),
            vec!["only the first seed (43) is used in timeline mode".to_string()]
        );
    }

    fn curve_at(policy: Policy, seed: u64, points: &[(usize, f64)]) -> Curve {
        let mut v = vec![None; 131];
        for (k, u) in points {
            v[*k] = Some((*u, 0.0, 0.0));
        }
        Curve {
            policy,
            seed,
            points: v,
            pods_tried: 0,
            pods_placed: 0,
            elapsed: Duration::ZERO,
        }
    }

    fn published(rows: &[(&str, u32, f64, f64, f64)]) -> Expected {
        rows.iter()
            .map(|(p, k, m, lo, hi)| ((p.to_string(), *k), (*m, *lo, *hi)))
            .collect()
    }

    /// One curve per paper seed (42..51), all with `points`.
    fn paper_curves(policy: Policy, points: &[(usize, f64)]) -> Vec<Curve> {
        PAPER_SEEDS
            .map(|seed| curve_at(policy, seed, points))
            .collect()
    }

    #[test]
    fn verdict_only_when_something_was_compared() {
        let e = published(&[("FGD", 0, 99.75, 99.72, 99.79), ("FGD", 100, 5.0, 4.0, 6.0)]);
        // Only 0 % arrived (e.g. --limit 0): no verdict, and it says why.
        let c = paper_curves(Policy::Fgd, &[(0, 99.75)]);
        let (_, md, ok) = summary(&[Policy::Fgd], &c, Some(&e), "w");
        assert_eq!(ok, None);
        assert!(!md.contains("within the published seed range"));
        assert!(md.contains("no point at 100 % arrived with a published value to compare"));
        assert!(md.contains("ranking at 100 %: no point at 100 % arrived"));
        // A workload without published rows.
        let c = paper_curves(Policy::Fgd, &[(0, 99.75), (100, 5.5)]);
        let (_, md, ok) = summary(&[Policy::Fgd], &c, Some(&Expected::new()), "w");
        assert_eq!(ok, None);
        assert!(md.contains("no published results for workload w and the policies run"));
        assert!(!md.contains("within the published seed range"));
        // 5.5 lies in [4, 6]; 6.5 does not.
        let (_, md, ok) = summary(&[Policy::Fgd], &c, Some(&e), "w");
        assert_eq!(ok, Some(true));
        assert!(md.contains("within the published seed range: yes"));
        let mut c = paper_curves(Policy::Fgd, &[(100, 6.5)]);
        c.extend(paper_curves(Policy::Binpack, &[(100, 1.0)]));
        let (_, md, ok) = summary(&[Policy::Fgd, Policy::Binpack], &c, Some(&e), "w");
        assert_eq!(ok, Some(false));
        assert!(md.contains("within the published seed range: NO"));
        assert!(md.contains(&format!(
            "not compared (no published value at 100 %): {}",
            Policy::Binpack.paper_label()
        )));
    }

    /// `--seeds 42` (or any set but 42..51): the paper has no number for that run, so the median
    /// is shown beside the paper's but there is no verdict, even when it lies outside the range.
    #[test]
    fn other_seeds_than_the_papers_get_no_verdict() {
        let e = published(&[("FGD", 100, 5.0, 4.0, 6.0)]);
        for seeds in [vec![42], vec![43, 44], (42..=50).collect::<Vec<u64>>()] {
            let c: Vec<Curve> = seeds
                .iter()
                .map(|s| curve_at(Policy::Fgd, *s, &[(100, 9.0)]))
                .collect();
            let (csv, md, ok) = summary(&[Policy::Fgd], &c, Some(&e), "w");
            assert_eq!(ok, None, "{seeds:?}");
            assert!(md.contains("no verdict: the paper's numbers are medians and ranges over its 10 seeds 42..51"), "{md}");
            assert!(
                md.contains("9.00 [9.00, 9.00] (5.00 [4.00, 6.00]) |"),
                "{md}"
            );
            assert!(!md.contains('✗'), "{md}");
            // The CSV keeps the paper's numbers and leaves within_paper_range empty.
            assert!(csv.contains("fgd,100,"), "{csv}");
            assert!(
                csv.lines()
                    .any(|l| l.starts_with("fgd,100,") && l.ends_with(",5.000,4.00,6.00,")),
                "{csv}"
            );
        }
    }

    #[test]
    fn unreadable_or_malformed_published_results_are_errors() {
        let dir = std::env::temp_dir().join(format!("xtask-expected-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let p = dir.join("summary.csv");
        let header = "workload,policy,arrived_gpu_pct,n_seeds,unalloc_gpu_pct_mean,unalloc_gpu_pct_std,unalloc_gpu_pct_median,unalloc_gpu_pct_min,unalloc_gpu_pct_max,alloc_gpu_pct_median\n";
        std::fs::write(
            &p,
            format!("{header}w,FGD,100,10,5,0.1,5.0,4.0,6.0,95\nw,BestFit,100,10,5,0.1,x,4.0,6.0,95\nv,FGD,100,10,5,0.1,y,4.0,6.0,95\n"),
        )
        .expect("write");
        assert_eq!(
            load_expected(&p, "w", &[Policy::Fgd]),
            Ok(published(&[("FGD", 100, 5.0, 4.0, 6.0)]))
        );
        // The bad median of the BestFit row is reported where it is once BestFit is compared.
        assert_eq!(
            load_expected(&p, "w", &[Policy::Fgd, Policy::BestFit]),
            Err(format!(
                "{}:3:24: column unalloc_gpu_pct_median: expected a finite number, got \"x\"",
                p.display()
            ))
        );
        assert!(load_expected(&dir, "w", &[Policy::Fgd]).is_err());
        assert!(load_expected(&dir.join("missing.csv"), "w", &[Policy::Fgd]).is_err());
        std::fs::write(&p, header).expect("write");
        assert_eq!(
            load_expected(&p, "w", &[Policy::Fgd]),
            Err(format!("{}: no data rows (only a header)", p.display()))
        );
        // A user-given path is used as given; an absent default is skipped.
        assert_eq!(
            published_path(
                Some(&dir.join("missing.csv")),
                DEFAULT_EXPECTED,
                "--expected"
            ),
            Some(dir.join("missing.csv"))
        );
        assert_eq!(
            published_path(None, "no/such/default.csv", "--expected"),
            None
        );
    }
}
