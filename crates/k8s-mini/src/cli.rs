//! The command line: clap's definitions and what each command runs.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use k8s_cluster::manifest::{self, Document, ManifestError};
use k8s_cluster::{run_manifests_to, run_to_state, OutputFormat, RunOptions, RunState};

use crate::view::{self, GetOutput, Printed, Resource, Scope};
use crate::{inputs, replay, EXIT_CODES};

#[derive(Parser)]
#[command(
    name = "k8s-mini",
    version,
    about = "k8s-mini: the Kubernetes control plane as a deterministic simulator",
    long_about = "k8s-mini: the Kubernetes control plane (etcd, kube-apiserver, kube-scheduler, kubelets, \
kube-controller-manager) as one deterministic, tick-driven process. Give it Kubernetes YAML; look at the \
result as kubectl shows a cluster. The virtual clock: tick t is t seconds after 1970-01-01T00:00:00Z, and \
AGE / LAST SEEN are measured from the end of the run (or --at-tick).",
    after_help = EXIT_CODES
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a scenario: `scenarios/<name>.yaml`, any YAML file, or `-f` inputs; print the events per
    /// tick, tables and expectation results (or the final state with -o json|yaml).
    #[command(after_help = EXIT_CODES)]
    Scenario(ScenarioArgs),
    /// Display one or many resources as `kubectl get` does, at the end of the run or --at-tick.
    #[command(after_help = EXIT_CODES)]
    Get(GetArgs),
    /// Show details of pods, nodes, deployments, replicasets, jobs or services as `kubectl describe` does,
    /// Events included.
    #[command(after_help = EXIT_CODES)]
    Describe(DescribeArgs),
    /// List events as `kubectl events` does (repeats folded as `40s (x3 over 2m)`).
    #[command(after_help = EXIT_CODES)]
    Events(EventsArgs),
    /// Replay a GPU cluster trace (Alibaba openb) under the FGD paper's protocol: curves, summary,
    /// SVG plot.
    #[command(after_help = EXIT_CODES)]
    Replay(replay::ReplayArgs),
    /// Serve the scenario's cluster as a Kubernetes API server on 127.0.0.1 for kubectl
    /// (docs/serve.md).
    #[command(after_help = EXIT_CODES)]
    Serve(crate::serve_command::ServeArgs),
    /// Add a workload to a cluster and answer: does it fit, where and when each pod binds, what
    /// is preempted, why not, how many more nodes would make it fit (docs/whatif.md).
    #[command(after_help = crate::whatif::WHATIF_EXIT_CODES)]
    Whatif(crate::whatif::WhatifArgs),
    /// Per node pool: nodes, GPUs total / allocated / free / fragmented, CPU, memory; pending
    /// pods per reason (docs/whatif.md).
    #[command(after_help = EXIT_CODES)]
    Capacity(crate::whatif::CapacityArgs),
    /// Run the same input under two or more scheduler configurations and compare them: pods
    /// bound and pending, time to bind, preemptions, GPU fragmentation, utilisation spread, pods
    /// placed differently; SVG / HTML of allocation over time (docs/compare.md).
    #[command(after_help = crate::compare::COMPARE_EXIT_CODES)]
    Compare(crate::compare::CompareArgs),
}

/// `-f` and how the run goes: shared by `get`, `describe` and `events`.
#[derive(clap::Args)]
pub(crate) struct RunInput {
    /// A manifest file, a directory of them (.json, .yaml, .yml), or `-` for standard input;
    /// repeatable. A bundled scenario's name works too.
    #[arg(
        short = 'f',
        long = "filename",
        value_name = "FILE|DIR|-",
        required = true
    )]
    pub(crate) files: Vec<String>,
    /// Read the directories given with -f recursively.
    #[arg(short = 'R', long)]
    pub(crate) recursive: bool,
    /// Stop the run when the virtual clock reads N (ticks 0 to N-1 ran) and show that state.
    #[arg(long, value_name = "N")]
    pub(crate) at_tick: Option<u64>,
    /// Run exactly this many ticks (overrides the Scenario's spec.ticks).
    #[arg(long)]
    pub(crate) ticks: Option<u64>,
    /// A KubeSchedulerConfiguration file (kubescheduler.config.k8s.io/v1).
    #[arg(long, value_name = "FILE")]
    pub(crate) scheduler_config: Option<PathBuf>,
    /// The namespace to look in.
    #[arg(short = 'n', long, default_value = "default")]
    pub(crate) namespace: String,
    /// Every namespace (adds a NAMESPACE column).
    #[arg(short = 'A', long)]
    pub(crate) all_namespaces: bool,
}

#[derive(clap::Args)]
struct ScenarioArgs {
    /// Bundled scenario name (see --list) or a path to a YAML file.
    name: Option<String>,
    /// More inputs: a manifest file, a directory of them, or `-` for standard input; repeatable.
    #[arg(short = 'f', long = "filename", value_name = "FILE|DIR|-")]
    files: Vec<String>,
    /// Read the directories given with -f recursively.
    #[arg(short = 'R', long)]
    recursive: bool,
    /// List the bundled scenarios.
    #[arg(long)]
    list: bool,
    /// Run exactly this many ticks.
    #[arg(long)]
    ticks: Option<u64>,
    /// A KubeSchedulerConfiguration file (kubescheduler.config.k8s.io/v1).
    #[arg(long, value_name = "FILE")]
    scheduler_config: Option<PathBuf>,
    /// Output format: text (events, tables, expectations) or the final state as a v1 List.
    #[arg(short = 'o', long, value_enum, default_value_t = Output::Text)]
    output: Output,
    /// Explain every scheduling attempt of this pod (`<namespace>/<pod>`): Filter verdicts per
    /// node, Score plugin scores, totals, the chosen node or the failure. Printed as an
    /// `## explain` section (text) or on standard error (json/yaml).
    #[arg(long, value_name = "NAMESPACE/POD")]
    explain: Option<String>,
    /// Simulate every tick instead of skipping the ticks in which nothing can happen (the output
    /// is the same, byte for byte; slower).
    #[arg(long)]
    every_tick: bool,
    /// Write the whole store (every object with its resourceVersion) and the virtual clock to
    /// FILE at the end of the run, or at --snapshot-out-at-tick.
    #[arg(long, value_name = "FILE")]
    snapshot_out: Option<PathBuf>,
    /// Take the --snapshot-out snapshot when the clock reads N (after ticks 0..N-1).
    #[arg(long, value_name = "N", requires = "snapshot_out")]
    snapshot_out_at_tick: Option<u64>,
    /// Resume from a snapshot written by --snapshot-out instead of applying the input's objects:
    /// the Scenario's steps and expectations run from the snapshot's tick on.
    #[arg(long, value_name = "FILE")]
    snapshot_in: Option<PathBuf>,
}

#[derive(Clone, Copy, ValueEnum)]
enum Output {
    Text,
    Json,
    Yaml,
}

#[derive(clap::Args)]
struct GetArgs {
    /// The resource type (pods, nodes, deployments, replicasets, jobs, events; short names and
    /// TYPE/NAME work too), then names.
    #[arg(required = true, value_name = "TYPE[/NAME]")]
    what: Vec<String>,
    #[command(flatten)]
    input: RunInput,
    /// Output format: the table (default), wide (more columns), name, json, yaml.
    #[arg(short = 'o', long, value_enum)]
    output: Option<GetOutput>,
}

#[derive(clap::Args)]
struct DescribeArgs {
    /// The type (`pod`/`po`, `node`/`no`, `deployment`/`deploy`, `replicaset`/`rs`, `job`), then a name
    /// or a name prefix (none: every object of the type); or `TYPE/NAME`.
    #[arg(required = true, value_name = "TYPE[/NAME]")]
    what: Vec<String>,
    #[command(flatten)]
    input: RunInput,
}

#[derive(clap::Args)]
struct EventsArgs {
    #[command(flatten)]
    input: RunInput,
    /// List the nodes' start-up events too (folded into one line on standard error otherwise).
    #[arg(long)]
    all_node_events: bool,
}

/// Runs the command line `args` (the program name first) and returns the exit code.
pub fn run<I, T>(args: I) -> ExitCode
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    // Logs (`K8S_MINI_LOG=debug`) go to standard error; errors only by default.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("K8S_MINI_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("error")),
        )
        .with_writer(std::io::stderr)
        .try_init();
    let cli = match Cli::try_parse_from(args) {
        Ok(c) => c,
        Err(e) => {
            // Help and --version go to standard output with exit 0; usage errors exit 2.
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
        }
    };
    match cli.command {
        Command::Replay(args) => replay::run(args),
        Command::Scenario(args) => scenario(args),
        Command::Get(args) => get(args),
        Command::Describe(args) => describe(args),
        Command::Events(args) => events(args),
        Command::Serve(args) => crate::serve_command::run(args),
        Command::Whatif(args) => crate::whatif::run_whatif(args),
        Command::Capacity(args) => crate::whatif::run_capacity(args),
        Command::Compare(args) => crate::compare::run_compare(args),
    }
}

fn scenarios_dir() -> PathBuf {
    // This crate is crates/k8s-mini: the bundled scenarios are the workspace's.
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .and_then(Path::parent)
        .map_or_else(|| PathBuf::from("scenarios"), |root| root.join("scenarios"))
}

/// A bundled scenario's name (`job-completions`) as its file; anything that looks like a path as is.
pub(crate) fn resolve(name: &str) -> PathBuf {
    let as_path = PathBuf::from(name);
    if name == "-"
        || as_path.exists()
        || name.contains('/')
        || name.ends_with(".yaml")
        || name.ends_with(".yml")
    {
        return as_path;
    }
    scenarios_dir().join(format!("{name}.yaml"))
}

pub(crate) fn bad_input(e: &ManifestError) -> ExitCode {
    eprintln!("error: {e}");
    ExitCode::from(2)
}

fn list() -> ExitCode {
    let dir = scenarios_dir();
    let mut entries: Vec<PathBuf> = match std::fs::read_dir(&dir) {
        Ok(rd) => rd
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
            .collect(),
        Err(e) => {
            eprintln!("error: cannot read {}: {e}", dir.display());
            return ExitCode::from(2);
        }
    };
    entries.sort();
    for p in entries {
        let name = p
            .file_stem()
            .map(|s| s.to_string_lossy().to_string())
            .unwrap_or_default();
        let description = manifest::load_file(&p)
            .ok()
            .and_then(|m| {
                m.docs.into_iter().find_map(|d| match d.doc {
                    Document::Scenario(s) => Some(s.spec.description.clone()),
                    _ => None,
                })
            })
            .unwrap_or_default();
        let first_line = description.lines().next().unwrap_or("").trim().to_string();
        outln!("{name:<22} {first_line}");
    }
    ExitCode::SUCCESS
}

/// The files `-f` (and a scenario's positional name) name: bundled names resolved, directories
/// expanded. `Err` is the exit code after the error was printed.
pub(crate) fn input_files(names: &[String], recursive: bool) -> Result<Vec<String>, ExitCode> {
    let mut resolved = Vec::new();
    for n in names {
        let p = resolve(n);
        if !p.exists()
            && n != "-"
            && !n.contains('/')
            && !n.ends_with(".yaml")
            && !n.ends_with(".yml")
        {
            eprintln!("error: unknown scenario or file {n:?} (see `k8s-mini scenario --list`)");
            return Err(ExitCode::from(2));
        }
        resolved.push(p.display().to_string());
    }
    inputs::expand(&resolved, recursive).map_err(|e| bad_input(&e))
}

fn scenario(args: ScenarioArgs) -> ExitCode {
    if args.list {
        return list();
    }
    let mut names: Vec<String> = args.name.into_iter().collect();
    names.extend(args.files);
    if names.is_empty() {
        eprintln!("error: give a scenario name, a path or -f FILE (see --list)");
        return ExitCode::from(2);
    }
    let files = match input_files(&names, args.recursive) {
        Ok(f) => f,
        Err(code) => return code,
    };
    let read = match inputs::read(&files) {
        Ok(r) => r,
        Err(e) => return bad_input(&e),
    };
    let opts = RunOptions {
        ticks: args.ticks,
        scheduler_config: args.scheduler_config,
        explain: args.explain,
        output: match args.output {
            Output::Text => OutputFormat::Text,
            Output::Json => OutputFormat::Json,
            Output::Yaml => OutputFormat::Yaml,
        },
        every_tick: args.every_tick,
        snapshot_out: args.snapshot_out,
        snapshot_out_at_tick: args.snapshot_out_at_tick,
        snapshot_in: args.snapshot_in,
        exit_after: true,
    };
    // Standard output is written as the run produces it (the json/yaml List is streamed).
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    match run_manifests_to(read.manifests, &read.path, &opts, &mut out) {
        Ok(outcome) => {
            drop(out);
            // A reader that closed the pipe (`| head`) is not an error of the run
            // (`outcome.output_closed`): end quietly. Any other write failure is reported.
            if outcome.output_closed {
                return ExitCode::SUCCESS;
            }
            if let Some(e) = &outcome.output_error {
                eprintln!("error: writing the output: {e}");
            }
            eprint!("{}", outcome.stderr);
            ExitCode::from(u8::try_from(outcome.exit_code()).unwrap_or(1))
        }
        Err(e) => bad_input(&e),
    }
}

/// Runs `-f`'s inputs to the end or to `--at-tick`; warnings and failed steps go to standard error.
pub(crate) fn run_state(input: &RunInput) -> Result<RunState, ExitCode> {
    let files = input_files(&input.files, input.recursive)?;
    let read = inputs::read(&files).map_err(|e| bad_input(&e))?;
    let opts = RunOptions {
        ticks: input.ticks,
        scheduler_config: input.scheduler_config.clone(),
        ..RunOptions::default()
    };
    let state = run_to_state(read.manifests, &read.path, &opts, input.at_tick)
        .map_err(|e| bad_input(&e))?;
    for w in &state.warnings {
        eprintln!("warning: {w}");
    }
    if let Some(t) = input.at_tick.filter(|&t| t > state.now) {
        eprintln!(
            "warning: the run ended when the clock read {} (nothing was left to happen or --ticks/spec.ticks), before --at-tick {t}: showing that state",
            state.now
        );
    }
    for s in &state.failed_steps {
        eprintln!("{s}");
    }
    Ok(state)
}

fn scope(input: &RunInput) -> Scope {
    Scope {
        namespace: input.namespace.clone(),
        all: input.all_namespaces,
    }
}

fn finish(p: Printed) -> ExitCode {
    out!("{}", p.stdout);
    eprint!("{}", p.stderr);
    ExitCode::from(p.code)
}

/// `TYPE NAME...` or `TYPE/NAME...` (kubectl's two forms; not mixed).
fn split_what(what: &[String]) -> Result<(Resource, Vec<String>), ExitCode> {
    let unknown = |t: &str| {
        eprintln!(
            "error: the server doesn't have a resource type \"{t}\" (k8s-mini knows {})",
            Resource::KNOWN
        );
        ExitCode::from(2)
    };
    if what[0].contains('/') {
        let mut kind = None;
        let mut names = Vec::new();
        for w in what {
            let Some((t, n)) = w.split_once('/') else {
                eprintln!("error: there is no need to specify a resource type as a separate argument when passing arguments in resource/name form");
                return Err(ExitCode::from(2));
            };
            let r = Resource::parse(t).ok_or_else(|| unknown(t))?;
            if kind.is_some_and(|k| k != r) {
                eprintln!("error: k8s-mini takes names of one resource type at a time");
                return Err(ExitCode::from(2));
            }
            kind = Some(r);
            names.push(n.to_string());
        }
        return Ok((kind.unwrap_or(Resource::Pods), names));
    }
    let r = Resource::parse(&what[0]).ok_or_else(|| unknown(&what[0]))?;
    Ok((r, what[1..].to_vec()))
}

fn get(args: GetArgs) -> ExitCode {
    let (r, names) = match split_what(&args.what) {
        Ok(x) => x,
        Err(code) => return code,
    };
    match run_state(&args.input) {
        Ok(state) => finish(view::get(
            &state,
            r,
            &names,
            &scope(&args.input),
            args.output,
        )),
        Err(code) => code,
    }
}

fn describe(args: DescribeArgs) -> ExitCode {
    let (r, names) = match split_what(&args.what) {
        Ok(x) => x,
        Err(code) => return code,
    };
    if r == Resource::Events {
        eprintln!(
            "error: k8s-mini describe knows {} for now",
            view::DESCRIBABLE
        );
        return ExitCode::from(2);
    }
    if names.len() > 1 {
        eprintln!("error: give one name (or a prefix), or none for every object of the type");
        return ExitCode::from(2);
    }
    match run_state(&args.input) {
        Ok(state) => match view::describe(
            &state,
            r,
            names.first().map(String::as_str),
            &scope(&args.input),
        ) {
            Some(printed) => finish(printed),
            None => ExitCode::from(2),
        },
        Err(code) => code,
    }
}

fn events(args: EventsArgs) -> ExitCode {
    match run_state(&args.input) {
        Ok(state) => finish(view::events(
            &state,
            &scope(&args.input),
            args.all_node_events,
        )),
        Err(code) => code,
    }
}
