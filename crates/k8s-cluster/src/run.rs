//! Running a scenario file end to end: load the manifests, build the cluster, apply the initial
//! objects, run the ticks with the timed steps, check the expectations, and render the output.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use k8s_sched::explain::PodKey;
use k8s_types::apiserver::{ApiClient, ApiExt};
use k8s_types::object::{Kind, Object};
use k8s_types::store::WatchEventType;
use k8s_types::Tick;

use crate::cluster::{Cluster, OutsideWatchers};
use crate::expect::CheckResult;
use crate::load::{bad, prepare};
use crate::manifest::{self, ManifestError, Manifests, Source};
use crate::output;
use crate::scenario::{Expectation, Scenario};
use crate::steps::{advance_drains, run_step, ReadyStep};

/// Upper bound on ticks for a run without a fixed tick count.
pub const MAX_TICKS: u64 = 1000;

/// Output format.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OutputFormat {
    /// Events per tick, tables, expectation results.
    #[default]
    Text,
    /// The final state as a `v1` List in JSON.
    Json,
    /// The final state as a `v1` List in YAML.
    Yaml,
}

/// Options of a run (the CLI's flags).
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// Run exactly this many ticks (overrides the Scenario's `spec.ticks`).
    pub ticks: Option<u64>,
    /// A `KubeSchedulerConfiguration` file (overrides one in the scenario).
    pub scheduler_config: Option<std::path::PathBuf>,
    /// Output format.
    pub output: OutputFormat,
    /// `--explain <namespace>/<pod>`: record every scheduling attempt of this pod and print them
    /// in an `## explain <namespace>/<pod>` section (text mode) or on standard error (json/yaml).
    pub explain: Option<String>,
    /// Simulate every tick, without skipping the ticks in which nothing can happen (the output is
    /// the same; for tests that check exactly that).
    pub every_tick: bool,
    /// `--snapshot-out FILE`: write the whole store and the clock to this file at the end of the
    /// run, or when the clock reads [`RunOptions::snapshot_out_at_tick`] (`crate::snapshot`).
    pub snapshot_out: Option<std::path::PathBuf>,
    /// `--snapshot-out-at-tick N`: take the snapshot when the clock reads N (after ticks 0..N-1).
    pub snapshot_out_at_tick: Option<Tick>,
    /// `--snapshot-in FILE`: resume from this snapshot instead of applying the input's objects
    /// (overrides the Scenario's `spec.snapshotIn`).
    pub snapshot_in: Option<std::path::PathBuf>,
    /// The process exits once the run's output is written (the command line): the cluster is
    /// left to the operating system instead of being dropped object by object, which took about
    /// 1.3 s of a 150,000-pod run (docs/benchmarks.md). Nothing is written or skipped by it.
    pub exit_after: bool,
}

/// The result of a run.
#[derive(Clone, Debug)]
pub struct RunOutcome {
    /// What goes to standard output ([`run_file`]; empty after [`run_file_to`], which wrote it).
    pub stdout: String,
    /// Why writing the output failed, if it did ([`run_file_to`]), other than a reader that closed
    /// the pipe.
    pub output_error: Option<String>,
    /// The reader closed the pipe before the output was written (`| head`); not an error of the run.
    pub output_closed: bool,
    /// What goes to standard error (warnings; expectation failures in json/yaml mode).
    pub stderr: String,
    /// Number of expectations (and steps) that failed.
    pub failures: usize,
    /// Number of expectation checks made.
    pub checks: usize,
}

impl RunOutcome {
    /// The process exit code: 0 when everything held, 1 when something failed.
    pub fn exit_code(&self) -> i32 {
        i32::from(self.failures > 0)
    }
}

/// Runs the scenario in `path`; the output is returned in [`RunOutcome::stdout`].
///
/// # Errors
/// A [`ManifestError`] for bad input (the CLI exits 2).
pub fn run_file(path: &Path, opts: &RunOptions) -> Result<RunOutcome, ManifestError> {
    let mut buf = Vec::new();
    let mut outcome = run_file_to(path, opts, &mut buf)?;
    outcome.stdout = String::from_utf8_lossy(&buf).into_owned();
    Ok(outcome)
}

/// Runs the scenario in `path`, writing what goes to standard output to `out` as it is produced:
/// the `--output json|yaml` List is serialized object by object, never held in memory whole.
///
/// # Errors
/// A [`ManifestError`] for bad input (the CLI exits 2).
pub fn run_file_to(
    path: &Path,
    opts: &RunOptions,
    out: &mut dyn std::io::Write,
) -> Result<RunOutcome, ManifestError> {
    check_ticks(opts)?;
    let manifests = manifest::load_file(path)?;
    run_manifests_to(manifests, path, opts, out)
}

/// Runs the manifests already read from one or more inputs (`k8s-mini -f a.yaml -f dir/ -f -`),
/// writing what goes to standard output to `out`, as [`run_file_to`] does. `path` names the run when
/// the Scenario has no name, and a Scenario's trace files are relative to its directory.
///
/// # Errors
/// A [`ManifestError`] for bad input (the CLI exits 2).
pub fn run_manifests_to(
    manifests: Manifests,
    path: &Path,
    opts: &RunOptions,
    out: &mut dyn std::io::Write,
) -> Result<RunOutcome, ManifestError> {
    check_ticks(opts)?;
    let prepared = prepare(manifests, path, opts)?;
    let driven = drive(
        prepared.cluster,
        Plan {
            scenario: &prepared.scenario,
            steps: &prepared.steps,
            other_kinds: &prepared.other_kinds,
            resumed: prepared.resumed,
            observe: None,
        },
        opts,
        None,
    );
    Ok(render(
        driven,
        &prepared.scenario,
        &prepared.steps,
        opts,
        Loaded {
            other_kinds: prepared.other_kinds,
            warnings: prepared.warnings,
            file: &path.display().to_string(),
        },
        out,
    ))
}

/// The cluster as a run left it, for `k8s-mini get` and `describe`: the run stopped at the end (as
/// [`run_file_to`] would) or, with `at_tick`, when the virtual clock reads `at_tick` (after ticks
/// `0..at_tick` ran; a tick is one second).
pub struct RunState {
    /// The cluster: read it through [`Cluster::api_ref`].
    pub cluster: Cluster,
    /// The virtual clock at the end (ticks run): the "now" of AGE and LAST SEEN columns.
    pub now: Tick,
    /// Warnings from loading the input (for standard error).
    pub warnings: Vec<String>,
    /// Steps that failed, one line each (for standard error).
    pub failed_steps: Vec<String>,
}

/// Runs the manifests until the end or until the clock reads `at_tick`, and returns the cluster.
/// Expectations are not checked (the run is the same as [`run_manifests_to`]'s, so its state at a
/// tick is the one the expectations there see).
///
/// # Errors
/// A [`ManifestError`] for bad input (the CLI exits 2).
pub fn run_to_state(
    manifests: Manifests,
    path: &Path,
    opts: &RunOptions,
    at_tick: Option<Tick>,
) -> Result<RunState, ManifestError> {
    check_ticks(opts)?;
    let prepared = prepare(manifests, path, opts)?;
    let driven = drive(
        prepared.cluster,
        Plan {
            scenario: &prepared.scenario,
            steps: &prepared.steps,
            other_kinds: &prepared.other_kinds,
            resumed: prepared.resumed,
            observe: None,
        },
        opts,
        Some(at_tick.unwrap_or(Tick::MAX)),
    );
    let failed_steps = driven
        .step_rows
        .iter()
        .filter(|s| s.contains("FAILED"))
        .cloned()
        .collect();
    Ok(RunState {
        now: driven.cluster.now(),
        cluster: driven.cluster,
        warnings: prepared.warnings,
        failed_steps,
    })
}

fn check_ticks(opts: &RunOptions) -> Result<(), ManifestError> {
    if let Some(t) = opts.ticks.filter(|&t| t > crate::scenario::TICK_LIMIT) {
        let source = Source {
            file: "--ticks".to_string(),
            line: 0,
        };
        return Err(bad(
            &source,
            &format!(
                "{t} is more than the tick limit, {}",
                crate::scenario::TICK_LIMIT
            ),
        ));
    }
    Ok(())
}

/// A writer that remembers the kind of its first failure (the serializers report it only as
/// text).
struct FailureKind<'a> {
    inner: &'a mut dyn std::io::Write,
    failed: Option<std::io::ErrorKind>,
}

impl std::io::Write for FailureKind<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let r = self.inner.write(buf);
        if let Err(e) = &r {
            self.failed.get_or_insert(e.kind());
        }
        r
    }

    fn flush(&mut self) -> std::io::Result<()> {
        let r = self.inner.flush();
        if let Err(e) = &r {
            self.failed.get_or_insert(e.kind());
        }
        r
    }
}

/// What loading the input left for the run's output: the untyped kinds seen (listed in the json/yaml
/// List), the load warnings and the input's file name.
struct Loaded<'a> {
    other_kinds: BTreeSet<(String, String, bool)>,
    warnings: Vec<String>,
    file: &'a str,
}

fn expectation_when(e: &Expectation) -> String {
    match (e.at, e.from) {
        (Some(t), _) => format!("t={t}"),
        (None, Some(f)) => match e.to {
            Some(to) => format!("t={f}..{to}"),
            None => format!("t={f}.."),
        },
        (None, None) => "end".into(),
    }
}

/// What the tick loop leaves: the cluster, and what the output prints of the run.
pub(crate) struct Driven {
    pub(crate) cluster: Cluster,
    last_active: Option<Tick>,
    event_rows: Vec<Vec<String>>,
    pub(crate) step_rows: Vec<String>,
    results: Vec<(String, CheckResult)>,
    range_failed: BTreeSet<usize>,
    step_failures: usize,
    drains: Vec<crate::drain::Drain>,
}

/// What the tick loop runs: the Scenario, its steps, the untyped kinds of the input (for a
/// snapshot) and, for a run resumed from a snapshot, the loop's state then.
pub(crate) struct Plan<'a> {
    pub(crate) scenario: &'a Scenario,
    pub(crate) steps: &'a [ReadyStep],
    pub(crate) other_kinds: &'a BTreeSet<(String, String, bool)>,
    pub(crate) resumed: Option<crate::snapshot::LoopState>,
    /// Called after every tick that ran (not the skipped idle ticks, which change nothing):
    /// `k8s-mini compare` samples the allocation there.
    pub(crate) observe: Option<&'a mut dyn FnMut(&Cluster)>,
}

/// Writes `--snapshot-out` now; a failure is a failed step row.
fn take_snapshot(
    cluster: &Cluster,
    plan: &Plan<'_>,
    opts: &RunOptions,
    state: crate::snapshot::LoopState,
    step_rows: &mut Vec<String>,
) -> usize {
    let Some(path) = &opts.snapshot_out else {
        return 0;
    };
    match crate::snapshot::write(path, cluster, plan.other_kinds, state) {
        Ok(()) => 0,
        Err(e) => {
            step_rows.push(format!("t={} snapshot FAILED: {e}", cluster.now()));
            1
        }
    }
}

/// The tick loop: steps, ticks, event rows (text output only), expectations checked at their
/// ticks. `stop_at`: stop when the clock reads it (`k8s-mini get --at-tick`), wherever the run would
/// have ended otherwise; then expectations are not checked.
#[allow(clippy::too_many_lines)]
pub(crate) fn drive(
    mut cluster: Cluster,
    mut plan: Plan<'_>,
    opts: &RunOptions,
    stop_at: Option<Tick>,
) -> Driven {
    let (scenario, steps) = (plan.scenario, plan.steps);
    let fixed = opts.ticks.or(scenario.spec.ticks);
    let last_step = steps.iter().map(|s| s.step.at).max();
    let last_expect = scenario
        .spec
        .expect
        .iter()
        .filter_map(|e| e.at.or(e.to).or(e.from))
        .max();
    let quiet_needed = scenario.spec.kubelet.startup_ticks.saturating_add(11);
    let mut event_rows: Vec<Vec<String>> = Vec::new();
    let mut event_counts: BTreeMap<String, i32> = BTreeMap::new();
    let mut step_rows: Vec<String> = Vec::new();
    let mut results: Vec<(String, CheckResult)> = Vec::new();
    let mut range_failed: BTreeSet<usize> = BTreeSet::new();
    let mut step_failures = 0usize;
    let mut drains = Vec::new();
    let mut last_rev = 0i64;
    let resumed = plan.resumed.unwrap_or_default();
    let mut quiet = resumed.quiet;
    let mut last_active: Option<Tick> = resumed.last_active;
    // Whether the previous tick wrote nothing (then every component has seen every write).
    let mut previous_quiet = quiet > 0;
    let mut snapshot_due = opts.snapshot_out.is_some();
    // The event table is printed in text mode only; json/yaml output carries the Events as objects.
    let text = opts.output == OutputFormat::Text && stop_at.is_none();
    // Events written while loading the initial objects (e.g. kubelet registration).
    if text {
        collect_events(
            cluster.api_ref(),
            &mut last_rev,
            &mut event_counts,
            &mut event_rows,
        );
    }
    // Compaction within a tick keeps what the event collector has yet to read; without it only
    // the components' own positions count.
    if !text {
        cluster.set_outside_watchers(OutsideWatchers::Nobody);
    }
    loop {
        if text {
            cluster.set_outside_watchers(OutsideWatchers::From(last_rev));
        }
        let t = cluster.now();
        if snapshot_due && opts.snapshot_out_at_tick == Some(t) {
            snapshot_due = false;
            let state = crate::snapshot::LoopState { quiet, last_active };
            step_failures += take_snapshot(&cluster, &plan, opts, state, &mut step_rows);
        }
        if stop_at.is_some_and(|s| t >= s) {
            break;
        }
        match fixed {
            Some(n) if t >= n => break,
            None if t >= MAX_TICKS => break,
            None if quiet >= quiet_needed
                && last_step.is_none_or(|s| t > s)
                && last_expect.is_none_or(|x| t > x)
                && cluster.next_pod_wakeup().is_none()
                && drains.is_empty() =>
            {
                break
            }
            _ => {}
        }
        if previous_quiet && !opts.every_tick && drains.is_empty() {
            let mut to = idle_until(&cluster, scenario, steps, fixed, quiet, quiet_needed);
            if let Some(at) = opts.snapshot_out_at_tick.filter(|&a| snapshot_due && a > t) {
                to = to.min(at);
            }
            let reached = cluster.skip_idle(to);
            if reached > t {
                quiet += reached - t;
                continue;
            }
        }
        cluster.begin_tick();
        let rev_before = cluster.api_ref().revision();
        for rs in steps.iter().filter(|s| s.step.at == t) {
            match run_step(&mut cluster, rs, &mut drains) {
                Ok(what) => step_rows.push(format!("t={t} step: {what}")),
                Err(e) => {
                    step_failures += 1;
                    step_rows.push(format!("t={t} step FAILED: {e}"));
                }
            }
        }
        step_failures += advance_drains(&mut cluster, &mut drains, &mut step_rows);
        cluster.tick();
        if let Some(f) = plan.observe.as_mut() {
            f(&cluster);
        }
        if text {
            collect_events(
                cluster.api_ref(),
                &mut last_rev,
                &mut event_counts,
                &mut event_rows,
            );
        }
        // Lease renewals alone (every 10 s per node) are not activity; the node lifecycle
        // controller reads them in the tick that writes them (before any other reader).
        previous_quiet = cluster.api_ref().revision() - cluster.heartbeats() == rev_before;
        if previous_quiet {
            quiet += 1;
        } else {
            quiet = 0;
            last_active = Some(t);
        }
        for (i, e) in scenario.spec.expect.iter().enumerate() {
            let in_range =
                e.at.is_none() && e.from.is_some_and(|f| t >= f) && e.to.is_none_or(|to| t <= to);
            if e.at == Some(t) && stop_at.is_none() {
                for r in crate::expect::check_cluster(&cluster, e) {
                    results.push((expectation_when(e), r));
                }
            } else if in_range && !range_failed.contains(&i) && stop_at.is_none() {
                for r in crate::expect::check_cluster(&cluster, e) {
                    if let Some(f) = &r.failure {
                        range_failed.insert(i);
                        results.push((
                            expectation_when(e),
                            CheckResult {
                                what: r.what.clone(),
                                failure: Some(format!("at t={t}: {f}")),
                            },
                        ));
                    }
                }
            }
        }
    }
    if snapshot_due {
        match opts.snapshot_out_at_tick {
            None => {
                let state = crate::snapshot::LoopState { quiet, last_active };
                step_failures += take_snapshot(&cluster, &plan, opts, state, &mut step_rows);
            }
            Some(at) => {
                step_failures += 1;
                step_rows.push(format!(
                    "t={} snapshot FAILED: the run ended at tick {} before tick {at}",
                    cluster.now(),
                    cluster.now()
                ));
            }
        }
    }
    Driven {
        cluster,
        last_active,
        event_rows,
        step_rows,
        results,
        range_failed,
        step_failures,
        drains,
    }
}

/// The end of a run: expectations checked at the end, what failed to finish, the output.
#[allow(clippy::too_many_lines)]
fn render(
    driven: Driven,
    scenario: &Scenario,
    steps: &[ReadyStep],
    opts: &RunOptions,
    loaded: Loaded<'_>,
    out: &mut dyn std::io::Write,
) -> RunOutcome {
    let Loaded {
        other_kinds,
        warnings,
        file,
    } = loaded;
    let Driven {
        cluster,
        last_active,
        event_rows,
        mut step_rows,
        mut results,
        range_failed,
        mut step_failures,
        drains,
    } = driven;
    let end = cluster.now();
    for (i, e) in scenario.spec.expect.iter().enumerate() {
        if let Some(at) = e.at {
            if at >= end {
                results.push((
                    expectation_when(e),
                    CheckResult {
                        what: format!("expectation #{i}"),
                        failure: Some(format!("the run ended at tick {end} before tick {at}")),
                    },
                ));
            }
        } else if let Some(from) = e.from {
            let last = e.to.unwrap_or(from);
            if last >= end || from >= end {
                results.push((
                    expectation_when(e),
                    CheckResult {
                        what: format!("expectation #{i}"),
                        failure: Some(format!(
                            "the run ended at tick {end} before tick {}",
                            from.max(last)
                        )),
                    },
                ));
            } else if !range_failed.contains(&i) {
                for r in crate::expect::check_cluster(&cluster, e) {
                    results.push((
                        expectation_when(e),
                        CheckResult {
                            what: r.what,
                            failure: None,
                        },
                    ));
                }
            }
        } else {
            for r in crate::expect::check_cluster(&cluster, e) {
                results.push((expectation_when(e), r));
            }
        }
    }
    for d in &drains {
        step_failures += 1;
        step_rows.push(format!(
            "t={end} drain {} FAILED: the run ended at tick {end} before the node was drained",
            d.node()
        ));
    }
    for rs in steps.iter().filter(|s| s.step.at >= end) {
        step_failures += 1;
        step_rows.push(format!(
            "t={} step FAILED: the run ended at tick {end} before this step",
            rs.step.at
        ));
    }
    let expectation_failures = results.iter().filter(|(_, r)| r.failure.is_some()).count();
    let failures = step_failures + expectation_failures;
    let checks = results.len();
    let mut stdout = String::new();
    let mut stderr = String::new();
    let mut output_error = None;
    let mut recorded = FailureKind {
        inner: out,
        failed: None,
    };
    let out: &mut dyn std::io::Write = &mut recorded;
    let name = if scenario.metadata.name.is_empty() {
        file.to_string()
    } else {
        scenario.metadata.name.clone()
    };
    match opts.output {
        OutputFormat::Text => {
            stdout.push_str(&format!("# scenario {name}\n"));
            if !scenario.spec.description.is_empty() {
                stdout.push_str(&format!("# {}\n", scenario.spec.description.trim()));
            }
            let stable = last_active.map_or_else(
                || "no changes".to_string(),
                |t| format!("last change at tick {t}"),
            );
            let plural = if end == 1 { "" } else { "s" };
            stdout.push_str(&format!("# ran {end} tick{plural} ({stable})\n"));
            stdout.push_str(&crate::output_conflicts::header(&cluster).unwrap_or_default());
            // Diagnostics go to standard error in every mode (data on standard output).
            for w in &warnings {
                stderr.push_str(&format!("warning: {w}\n"));
            }
            for s in &step_rows {
                stdout.push_str(s);
                stdout.push('\n');
            }
            stdout.push_str("\n## events\n");
            stdout.push_str(&output::table(&output::EVENT_HEADER, &event_rows));
            stdout.push_str(&crate::output_conflicts::section(&cluster).unwrap_or_default());
            stdout.push_str("\n## pods\n");
            stdout.push_str(&output::pods_table(cluster.api_ref(), end));
            let n_nodes = cluster.api_ref().list_shared(&Kind::Node, None, None).len();
            if n_nodes > crate::capacity::BIG_CLUSTER_NODES {
                // A row per node and resource buries a big cluster: the pools instead.
                stdout.push_str("\n## capacity\n");
                let view = crate::capacity::capacity_view(cluster.api_ref(), &[]);
                stdout.push_str(&crate::capacity::render(&view));
            } else {
                stdout.push_str("\n## nodes: allocated resources\n");
                stdout.push_str(&output::nodes_table(cluster.api_ref()));
            }
            if let Some(t) = crate::output_services::services_table(cluster.api_ref(), end) {
                stdout.push_str("\n## services\n");
                stdout.push_str(&t);
            }
            if let Some(t) = crate::output_services::endpoint_slices_table(cluster.api_ref(), end) {
                stdout.push_str("\n## endpointslices\n");
                stdout.push_str(&t);
            }
            if let Some(section) = explain_section(&cluster, opts) {
                stdout.push('\n');
                stdout.push_str(&section);
            }
            if checks > 0 || failures > 0 {
                stdout.push_str("\n## expectations\n");
                stdout.push_str(&render_results(&results));
                let held = results.iter().filter(|(_, r)| r.failure.is_none()).count();
                let steps_note = match step_failures {
                    0 => String::new(),
                    1 => ", 1 step failed".to_string(),
                    n => format!(", {n} steps failed"),
                };
                stdout.push_str(&format!(
                    "\nresult: {held}/{checks} expectations held{steps_note}\n"
                ));
            }
        }
        OutputFormat::Json | OutputFormat::Yaml => {
            let list = output::ListView::new(cluster.api_ref(), &other_kinds)
                .with_conflicts(crate::output_conflicts::json(&cluster));
            let written = if opts.output == OutputFormat::Json {
                list.write_json(&mut *out)
                    .and_then(|()| out.write_all(b"\n"))
                    .map_err(|e| e.to_string())
            } else {
                serde_yaml::to_writer(&mut *out, &list).map_err(|e| e.to_string())
            };
            output_error = written.err();
            for w in &warnings {
                stderr.push_str(&format!("warning: {w}\n"));
            }
            if let Some(section) = explain_section(&cluster, opts) {
                stderr.push_str(&section);
            }
            for s in step_rows.iter().filter(|s| s.contains("FAILED")) {
                stderr.push_str(s);
                stderr.push('\n');
            }
            stderr.push_str(&render_results(
                &results
                    .iter()
                    .filter(|(_, r)| r.failure.is_some())
                    .cloned()
                    .collect::<Vec<_>>(),
            ));
        }
    }
    if !stdout.is_empty() && output_error.is_none() {
        output_error = out
            .write_all(stdout.as_bytes())
            .err()
            .map(|e| e.to_string());
    }
    if output_error.is_none() {
        output_error = out.flush().err().map(|e| e.to_string());
    }
    let output_closed = recorded.failed == Some(std::io::ErrorKind::BrokenPipe);
    if output_closed {
        output_error = None;
    }
    if opts.exit_after {
        std::mem::forget(cluster);
    }
    RunOutcome {
        stdout: String::new(),
        output_error,
        output_closed,
        stderr,
        failures,
        checks,
    }
}

/// Fast-forward: how far the run may jump from the current tick after a tick that wrote nothing,
/// the output staying that of running every tick. The earliest of: the cluster's next wake-up
/// ([`Cluster::next_wakeup`]), the next step, the next expectation tick (`at`, `from`; inside a
/// range nothing changes, so each skipped tick would check what the last one did), and the end of
/// the run: the fixed tick count, or without one [`MAX_TICKS`] and the first tick at which the
/// "nothing changes" end could hold (enough quiet ticks, past the last step and expectation).
fn idle_until(
    cluster: &Cluster,
    scenario: &Scenario,
    steps: &[ReadyStep],
    fixed: Option<u64>,
    quiet: u64,
    quiet_needed: u64,
) -> Tick {
    let t = cluster.now();
    let mut to = match fixed {
        Some(n) => n,
        None => {
            let last_step = steps.iter().map(|s| s.step.at).max();
            let last_expect = scenario
                .spec
                .expect
                .iter()
                .filter_map(|e| e.at.or(e.to).or(e.from))
                .max();
            let quiet_end = t.saturating_add(quiet_needed.saturating_sub(quiet));
            let after = |x: Option<u64>| x.map_or(0, |x| x.saturating_add(1));
            MAX_TICKS.min(quiet_end.max(after(last_step)).max(after(last_expect)))
        }
    };
    let future = |x: u64| (x >= t).then_some(x);
    let upcoming = steps
        .iter()
        .filter_map(|s| future(s.step.at))
        .chain(
            scenario
                .spec
                .expect
                .iter()
                .filter_map(|e| e.at.or(e.from))
                .filter_map(future),
        )
        .chain(cluster.next_wakeup());
    for x in upcoming {
        to = to.min(x);
    }
    to
}

/// The `## explain <namespace>/<pod>` section, when `--explain` was given; when the key names a
/// PodGroup (coscheduling, else native `scheduling.k8s.io/v1alpha2`), the gang view
/// `## explain podgroup <namespace>/<name>` instead.
fn explain_section(cluster: &Cluster, opts: &RunOptions) -> Option<String> {
    let key = PodKey::parse(opts.explain.as_deref()?).ok()?;
    let api = cluster.api_ref();
    if let Ok(pg) = api.get_typed::<k8s_types::scheduling::PodGroup>(&key.namespace, &key.name) {
        let pods: Vec<k8s_types::core::Pod> = api.list_typed(Some(&key.namespace), None);
        return Some(format!(
            "## explain podgroup {key}\n{}",
            k8s_sched::explain::render_pod_group(&key, &pg, &pods, cluster.explanations())
        ));
    }
    if let Ok(pg) =
        api.get_typed::<k8s_types::scheduling::v1alpha2::PodGroup>(&key.namespace, &key.name)
    {
        let pods: Vec<k8s_types::core::Pod> = api.list_typed(Some(&key.namespace), None);
        return Some(format!(
            "## explain podgroup {key}\n{}",
            k8s_sched::explain::render_scheduling_pod_group(
                &key,
                &pg,
                &pods,
                cluster.explanations(),
                cluster
                    .scheduler()
                    .pod_group_cycle(&key.namespace, &key.name)
            )
        ));
    }
    Some(format!(
        "## explain {key}\n{}",
        k8s_sched::explain::render(&key, cluster.explanations())
    ))
}

fn render_results(results: &[(String, CheckResult)]) -> String {
    let mut out = String::new();
    for (when, r) in results {
        match &r.failure {
            None => out.push_str(&format!("PASS  {when:<8} {}\n", r.what)),
            Some(f) => out.push_str(&format!("FAIL  {when:<8} {}: {f}\n", r.what)),
        }
    }
    out
}

/// The event rows of the Events written since `last_rev`: one row per occurrence the components'
/// event correlators let through, i.e. per Added Event and per Modified Event whose `count` grew
/// (`counts` remembers the last count seen per Event); dropped occurrences wrote nothing.
fn collect_events(
    api: &dyn ApiClient,
    last_rev: &mut i64,
    counts: &mut BTreeMap<String, i32>,
    rows: &mut Vec<Vec<String>>,
) {
    if let Ok(changes) = api.watch(&Kind::Event, *last_rev) {
        for ch in changes {
            let Object::Event(e) = &*ch.object else {
                continue;
            };
            let key = ch.object.key();
            match ch.type_ {
                WatchEventType::Added => {
                    counts.insert(key, e.count);
                    rows.push(output::event_row(e));
                }
                WatchEventType::Modified => {
                    let before = counts.insert(key, e.count).unwrap_or(0);
                    if e.count > before {
                        rows.push(output::event_row(e));
                    }
                }
                WatchEventType::Deleted => {
                    counts.remove(&key);
                }
            }
        }
    }
    *last_rev = api.revision();
}
