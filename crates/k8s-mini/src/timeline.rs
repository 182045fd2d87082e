//! `cargo xtask replay --mode timeline`: the openb trace (Weng et al., "Beware of Fragmentation:
//! Scheduling GPU-Sharing Workloads with Fragmentation Gradient Descent", USENIX ATC '23) replayed
//! through the whole control plane, pods arriving at `creation_time` and leaving at
//! `deletion_time` (`k8s_cluster::trace::timeline`), one run per policy. Writes
//! `timeline-ticks.csv`, `timeline-pods.csv`, `timeline-summary.csv` / `.md` and
//! `timeline-alloc.svg` into `--out`.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use k8s_cluster::trace::metrics::Summary;
use k8s_cluster::trace::timeline::{replay_timeline, TimelineError, TimelineOptions, TimelineRun};
use k8s_cluster::trace::{Policy, Trace};

use crate::timeline_plot;

/// What `replay` passes on in timeline mode.
pub struct TimelineArgs {
    /// Node CSV.
    pub nodes: PathBuf,
    /// Pod CSV.
    pub pods: PathBuf,
    /// Policies, one run each.
    pub policies: Vec<Policy>,
    /// The seed of the random draws (the first of `--seeds`).
    pub seed: u64,
    /// Output directory.
    pub out: PathBuf,
    /// Only the first N pods.
    pub limit: Option<usize>,
    /// Only the first N GPU nodes.
    pub node_limit: Option<usize>,
    /// Trace seconds per tick.
    pub time_scale: u64,
    /// Run every tick instead of skipping idle time.
    pub no_skip: bool,
    /// Worker threads.
    pub threads: usize,
    /// No progress bar.
    pub quiet: bool,
}

/// One policy's run and its wall time.
struct Done {
    run: TimelineRun,
    elapsed: Duration,
}

/// The policies in `--policy` order, each once (its first occurrence).
fn dedupe(policies: &[Policy]) -> Vec<Policy> {
    let mut out: Vec<Policy> = Vec::with_capacity(policies.len());
    for p in policies {
        if !out.contains(p) {
            out.push(*p);
        }
    }
    out
}

/// A replay error in the command line's words.
fn message(e: TimelineError, args: &TimelineArgs) -> String {
    match e {
        TimelineError::NoNodeLeft { available } => format!(
            "bad --node-limit 0: it removes every node (the trace has {available} GPU nodes); use at least 1"
        ),
        TimelineError::TooManyTicks { ticks, limit } => format!(
            "--no-skip: the trace spans {ticks} ticks at --time-scale {}, more than the {limit} allowed when running every tick: pass a larger --time-scale or drop --no-skip (skipping idle time gives the same per-pod outcomes)",
            args.time_scale
        ),
        e => e.to_string(),
    }
}

/// Runs the timeline replays and writes the outputs.
///
/// # Errors
/// A message (bad trace, write failure).
pub fn run(args: &TimelineArgs) -> Result<(), String> {
    let t0 = Instant::now();
    let policies = dedupe(&args.policies);
    let trace = Trace::load(&args.nodes, &args.pods).map_err(|e| e.to_string())?;
    for w in &trace.warnings {
        eprintln!("warning: {w}");
    }
    let workload = args
        .pods
        .file_stem()
        .map(|s| s.to_string_lossy().to_string())
        .unwrap_or_default();
    outln!(
        "# timeline replay {workload}: {} nodes, {} pods, policies {}, seed {}, {} s per tick{} (loaded in {:.0} ms)",
        args.node_limit.map_or(trace.gpu_nodes().len(), |n| n.min(trace.gpu_nodes().len())),
        args.limit.map_or(trace.pods.len(), |n| n.min(trace.pods.len())),
        policies.iter().map(|p| p.name()).collect::<Vec<_>>().join(","),
        args.seed,
        args.time_scale,
        if args.no_skip { ", every tick" } else { "" },
        t0.elapsed().as_secs_f64() * 1000.0
    );
    let bar = if args.quiet {
        indicatif::ProgressBar::hidden()
    } else {
        let b = indicatif::ProgressBar::new(policies.len() as u64);
        b.set_style(
            indicatif::ProgressStyle::with_template(
                "{bar:40} {pos}/{len} policies, {elapsed_precise} ({msg})",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        b
    };
    let next = Mutex::new(0usize);
    let results: Mutex<Vec<(usize, Result<Done, String>)>> = Mutex::new(Vec::new());
    let wall = Instant::now();
    let threads = args.threads.clamp(1, policies.len().max(1));
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let i = {
                    let Ok(mut n) = next.lock() else { return };
                    let i = *n;
                    *n += 1;
                    i
                };
                let Some(policy) = policies.get(i).copied() else {
                    return;
                };
                let opts = TimelineOptions {
                    policy,
                    seed: args.seed,
                    time_scale: args.time_scale,
                    node_limit: args.node_limit,
                    pod_limit: args.limit,
                    skip_idle: !args.no_skip,
                    pod_file: Some(args.pods.display().to_string()),
                    ..TimelineOptions::default()
                };
                let t = Instant::now();
                let r = replay_timeline(&trace, &opts)
                    .map(|run| Done {
                        run,
                        elapsed: t.elapsed(),
                    })
                    .map_err(|e| message(e, args));
                bar.set_message(policy.name().to_string());
                bar.inc(1);
                if let Ok(mut v) = results.lock() {
                    v.push((i, r));
                }
            });
        }
    });
    bar.finish_and_clear();
    let wall = wall.elapsed();
    // In --policy order; the first failing policy's error.
    let mut results = results.into_inner().unwrap_or_default();
    results.sort_by_key(|(i, _)| *i);
    let mut done: Vec<Done> = Vec::new();
    for (_, r) in results {
        done.push(r?);
    }
    std::fs::create_dir_all(&args.out).map_err(|e| format!("{}: {e}", args.out.display()))?;
    let write = |name: &str, body: &str| -> Result<(), String> {
        let p = args.out.join(name);
        std::fs::write(&p, body).map_err(|e| format!("{}: {e}", p.display()))
    };
    write("timeline-ticks.csv", &ticks_csv(&done))?;
    write("timeline-pods.csv", &pods_csv(&done))?;
    let (csv, md) = summary(&done, &workload);
    write("timeline-summary.csv", &csv)?;
    write("timeline-summary.md", &md)?;
    let runs: Vec<&TimelineRun> = done.iter().map(|d| &d.run).collect();
    write(
        "timeline-alloc.svg",
        &timeline_plot::alloc_svg(&runs, &workload)?,
    )?;
    out!("{md}");
    for d in &done {
        outln!(
            "{}: {:.2} s, {} ticks run of {} ({} skipped)",
            d.run.policy.name(),
            d.elapsed.as_secs_f64(),
            d.run.ticks_processed,
            d.run.last_tick + 1,
            (d.run.last_tick + 1).saturating_sub(d.run.ticks_processed)
        );
    }
    outln!(
        "{} runs in {:.2} s wall on {threads} threads",
        done.len(),
        wall.as_secs_f64()
    );
    outln!(
        "wrote {}/{{timeline-ticks.csv,timeline-pods.csv,timeline-summary.csv,timeline-summary.md,timeline-alloc.svg}}",
        args.out.display()
    );
    Ok(())
}

fn pct(milli: i64, capacity: i64) -> f64 {
    if capacity == 0 {
        0.0
    } else {
        100.0 * milli as f64 / capacity as f64
    }
}

fn ticks_csv(done: &[Done]) -> String {
    let mut s = String::from(
        "policy,tick,gpu_milli_allocated,gpu_allocated_pct,pods_running,pods_pending\n",
    );
    for d in done {
        for x in &d.run.samples {
            let _ = writeln!(
                s,
                "{},{},{},{:.4},{},{}",
                d.run.policy.name(),
                x.tick,
                x.gpu_milli_allocated,
                pct(x.gpu_milli_allocated, d.run.capacity_milli),
                x.pods_running,
                x.pods_pending
            );
        }
    }
    s
}

fn opt<T: std::fmt::Display>(v: Option<T>) -> String {
    v.map_or(String::new(), |x| x.to_string())
}

fn pods_csv(done: &[Done]) -> String {
    let mut s = String::from(
        "policy,pod,created_tick,deleted_tick,bound_tick,running_tick,node,gpu_index,gpu_milli,pending_ticks,trace_pending_seconds\n",
    );
    for d in done {
        for p in &d.run.pods {
            let _ = writeln!(
                s,
                "{},{},{},{},{},{},{},{},{},{},{}",
                d.run.policy.name(),
                p.name,
                p.created,
                p.deleted,
                opt(p.bound),
                opt(p.running),
                p.node.as_deref().unwrap_or(""),
                p.gpus,
                p.gpu_milli,
                opt(p.pending_ticks()),
                opt(p.trace_pending_seconds),
            );
        }
    }
    s
}

/// p-th percentile (nearest rank) of sorted values.
fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// (mean, median, p99, max) of values.
fn stats(mut v: Vec<f64>) -> (f64, f64, f64, f64) {
    v.sort_by(f64::total_cmp);
    let s = Summary::of(&v);
    let mean = if v.is_empty() {
        0.0
    } else {
        v.iter().sum::<f64>() / v.len() as f64
    };
    (mean, s.median, percentile(&v, 99.0), s.max)
}

fn summary(done: &[Done], workload: &str) -> (String, String) {
    let mut csv = String::from(
        "policy,pods,bound,never_bound,gone_before_scheduling,pending_mean,pending_median,pending_p99,pending_max,trace_pods_scheduled,trace_pending_mean,trace_pending_median,trace_pending_p99,trace_pending_max,peak_gpu_milli,peak_gpu_pct,peak_tick,peak_pods_pending,ticks_total,ticks_run,seconds\n",
    );
    let scale = done.first().map_or(1, |d| d.run.time_scale);
    let unit = if scale == 1 {
        "ticks = seconds".to_string()
    } else {
        format!("seconds = ticks × {scale}, 1 tick = {scale} s of the trace")
    };
    let mut md = format!(
        "\n## timeline replay of {workload}: pending time ({unit}) and GPU allocation\n\n\
| policy | pods | bound | never bound | gone before scheduling | pending mean / median / p99 / max (s) | trace's own pending mean / median / p99 / max (s) | peak GPU allocated | peak pending pods | ticks run / total | time |\n\
|---|---:|---:|---:|---:|---|---|---|---:|---|---:|\n"
    );
    for d in done {
        let r = &d.run;
        let pend: Vec<f64> = r
            .pods
            .iter()
            .filter_map(|p| p.pending_ticks().map(|x| x as f64 * r.time_scale as f64))
            .collect();
        let bound = pend.len();
        let gone = r.pods.iter().filter(|p| p.gone_before_scheduling()).count();
        let never = r.pods.len() - bound - gone;
        let trace: Vec<f64> = r
            .pods
            .iter()
            .filter_map(|p| p.trace_pending_seconds.map(|x| x as f64))
            .collect();
        let n_trace = trace.len();
        let (m, med, p99, max) = stats(pend);
        let (tm, tmed, tp99, tmax) = stats(trace);
        let peak = r
            .samples
            .iter()
            .max_by_key(|s| (s.gpu_milli_allocated, std::cmp::Reverse(s.tick)))
            .copied();
        let peak_pending = r.samples.iter().map(|s| s.pods_pending).max().unwrap_or(0);
        let (pm, pt) = peak.map_or((0, 0), |s| (s.gpu_milli_allocated, s.tick));
        let total = r.last_tick + 1;
        let _ = writeln!(
            csv,
            "{},{},{bound},{never},{gone},{m:.3},{med:.1},{p99:.1},{max:.0},{n_trace},{tm:.3},{tmed:.1},{tp99:.1},{tmax:.0},{pm},{:.3},{pt},{peak_pending},{total},{},{:.3}",
            r.policy.name(),
            r.pods.len(),
            pct(pm, r.capacity_milli),
            r.ticks_processed,
            d.elapsed.as_secs_f64()
        );
        let _ = writeln!(
            md,
            "| {} | {} | {bound} | {never} | {gone} | {m:.2} / {med:.0} / {p99:.0} / {max:.0} | {tm:.2} / {tmed:.0} / {tp99:.0} / {tmax:.0} ({n_trace} pods) | {:.2} GPUs = {:.3} % at tick {pt} | {peak_pending} | {} / {total} | {:.1} s |",
            r.policy.name(),
            r.pods.len(),
            pm as f64 / 1000.0,
            pct(pm, r.capacity_milli),
            r.ticks_processed,
            d.elapsed.as_secs_f64()
        );
    }
    (csv, md)
}

#[cfg(test)]
mod tests {
    use super::*;

    use k8s_cluster::trace::timeline::PodOutcome;

    fn fixtures() -> std::path::PathBuf {
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../k8s-cluster/tests/fixtures/timeline")
    }

    fn args(policies: Vec<Policy>, out: &str) -> TimelineArgs {
        TimelineArgs {
            nodes: fixtures().join("nodes.csv"),
            pods: fixtures().join("pods.csv"),
            policies,
            seed: 42,
            out: std::env::temp_dir().join(format!("xtask-{out}-{}", std::process::id())),
            limit: None,
            node_limit: None,
            time_scale: 1,
            no_skip: false,
            threads: 2,
            quiet: true,
        }
    }

    #[test]
    fn policies_run_once_each_in_policy_order() {
        assert_eq!(
            dedupe(&[Policy::Fgd, Policy::BestFit, Policy::Fgd]),
            vec![Policy::Fgd, Policy::BestFit]
        );
        let a = args(vec![Policy::Fgd, Policy::BestFit, Policy::Fgd], "order");
        assert_eq!(run(&a), Ok(()));
        let md = std::fs::read_to_string(a.out.join("timeline-summary.md")).unwrap_or_default();
        let rows: Vec<&str> = md
            .lines()
            .filter_map(|l| l.strip_prefix("| ")?.split(' ').next())
            .filter(|p| *p != "policy")
            .collect();
        assert_eq!(rows, vec!["fgd", "best_fit"]);
        let svg = std::fs::read_to_string(a.out.join("timeline-alloc.svg")).unwrap_or_default();
        let (fgd, best_fit) = (svg.find("\nFGD\n"), svg.find("\nBestFit\n"));
        assert!(
            fgd.is_some() && best_fit.is_some() && fgd < best_fit,
            "{svg}"
        );
        let _ = std::fs::remove_dir_all(&a.out);
    }

    #[test]
    fn flag_errors_name_the_flag() {
        let mut a = args(vec![Policy::Fgd], "flags");
        a.node_limit = Some(0);
        assert_eq!(
            run(&a),
            Err("bad --node-limit 0: it removes every node (the trace has 2 GPU nodes); use at least 1".to_string())
        );
        a.node_limit = None;
        a.pods = fixtures().join("longlife.csv");
        a.no_skip = true;
        assert_eq!(
            run(&a),
            Err("--no-skip: the trace spans 9223372036854775809 ticks at --time-scale 1, more than the 10000000 allowed when running every tick: pass a larger --time-scale or drop --no-skip (skipping idle time gives the same per-pod outcomes)".to_string())
        );
    }

    fn pod(name: &str, created: u64, deleted: u64, bound: Option<u64>) -> PodOutcome {
        PodOutcome {
            name: name.into(),
            created,
            deleted,
            bound,
            node: bound.map(|_| "n1".to_string()),
            gpus: String::new(),
            running: None,
            trace_pending_seconds: None,
            gpu_milli: 0,
        }
    }

    /// At 1200 s per tick: `a` waits 2 ticks = 2400 s, `b` binds at once, `c` is created and
    /// deleted in tick 5 (gone before scheduling), `d` lives 5..9 unbound (never bound).
    #[test]
    fn summary_reports_seconds_and_pods_gone_before_scheduling() {
        let run = TimelineRun {
            policy: Policy::Fgd,
            time_scale: 1200,
            capacity_milli: 1000,
            samples: Vec::new(),
            pods: vec![
                pod("a", 1, 9, Some(3)),
                pod("b", 1, 9, Some(1)),
                pod("c", 5, 5, None),
                pod("d", 5, 9, None),
            ],
            ticks_processed: 9,
            last_tick: 9,
        };
        let done = [Done {
            run,
            elapsed: Duration::ZERO,
        }];
        let (csv, md) = summary(&done, "w");
        let row: Vec<&str> = csv.lines().nth(1).unwrap_or("").split(',').collect();
        // policy, pods, bound, never_bound, gone_before_scheduling, pending mean/median (of 0 and
        // 2400)/p99/max.
        assert_eq!(
            row[..9],
            ["fgd", "4", "2", "1", "1", "1200.000", "1200.0", "2400.0", "2400"]
        );
        assert!(
            md.contains("pending time (seconds = ticks × 1200, 1 tick = 1200 s of the trace)"),
            "{md}"
        );
        assert!(
            md.contains("| fgd | 4 | 2 | 1 | 1 | 1200.00 / 1200 / 2400 / 2400 |"),
            "{md}"
        );
    }

    #[test]
    fn nearest_rank_percentile() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(percentile(&v, 99.0), 99.0);
        assert_eq!(percentile(&v, 50.0), 50.0);
        assert_eq!(percentile(&[7.0], 99.0), 7.0);
        assert_eq!(percentile(&[], 99.0), 0.0);
    }
}
