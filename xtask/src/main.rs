//! `cargo xtask`: the k8s-mini command line. `cargo xtask scenario <name>` runs `scenarios/<name>.yaml`
//! (or any YAML file given by path); `cargo xtask scenario --list` lists the bundled scenarios.
//!
//! Exit codes: 0 ran and every expectation held; 1 an expectation failed; 2 bad input.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

/// `println!` for standard output that ends the program quietly when the reader closed the pipe
/// (`cargo xtask scenario --list | head -1`) instead of panicking: see [`emit`].
macro_rules! outln {
    ($($t:tt)*) => { $crate::emit(&format!("{}\n", format_args!($($t)*))) };
}

/// `print!` with [`outln`]'s handling of a closed pipe.
macro_rules! out {
    ($($t:tt)*) => { $crate::emit(&format!($($t)*)) };
}

mod plot;
mod replay;
mod timeline;
mod timeline_plot;

use k8s_cluster::manifest::{self, Document};
use k8s_cluster::{run_file_to, OutputFormat, RunOptions};

#[derive(Parser)]
#[command(
    name = "cargo xtask",
    about = "k8s-mini: the Kubernetes control plane as a deterministic simulator"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a scenario: `scenarios/<name>.yaml`, or any YAML file of Kubernetes manifests.
    Scenario(ScenarioArgs),
    /// Replay a GPU cluster trace (Alibaba openb) under the FGD paper's protocol: curves, summary,
    /// SVG plot.
    Replay(replay::ReplayArgs),
}

#[derive(clap::Args)]
struct ScenarioArgs {
    /// Bundled scenario name (see --list) or a path to a YAML file.
    name: Option<String>,
    /// List the bundled scenarios.
    #[arg(long)]
    list: bool,
    /// Run exactly this many ticks.
    #[arg(long)]
    ticks: Option<u64>,
    /// A KubeSchedulerConfiguration file (kubescheduler.config.k8s.io/v1).
    #[arg(long, value_name = "FILE")]
    scheduler_config: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Output::Text)]
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
}

#[derive(Clone, Copy, ValueEnum)]
enum Output {
    Text,
    Json,
    Yaml,
}

/// Writes `s` to standard output. A reader that closed the pipe (`| head`) ends the program at once
/// with exit 0, silently, as a tool killed by `SIGPIPE` would end without a message; any other write
/// failure is reported and ends it with exit 1. (`println!` panics instead: exit 101.)
pub(crate) fn emit(s: &str) {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    let written = stdout.write_all(s.as_bytes()).and_then(|()| stdout.flush());
    match written {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => std::process::exit(0),
        Err(e) => {
            eprintln!("error: writing the output: {e}");
            std::process::exit(1);
        }
    }
}

fn scenarios_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map_or_else(|| PathBuf::from("scenarios"), |root| root.join("scenarios"))
}

fn resolve(name: &str) -> PathBuf {
    let as_path = PathBuf::from(name);
    if as_path.exists() || name.contains('/') || name.ends_with(".yaml") || name.ends_with(".yml") {
        return as_path;
    }
    scenarios_dir().join(format!("{name}.yaml"))
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

/// The process allocator: mimalloc, a faster general-purpose allocator than the system's for the
/// many small objects a replay creates (results do not depend on it).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("K8S_MINI_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("error")),
        )
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    match cli.command {
        Command::Replay(args) => replay::run(args),
        Command::Scenario(args) => {
            if args.list {
                return list();
            }
            let Some(name) = args.name else {
                eprintln!("error: give a scenario name or path (see --list)");
                return ExitCode::from(2);
            };
            let path = resolve(&name);
            if !path.exists() && !name.contains('/') && !name.ends_with(".yaml") {
                eprintln!("error: unknown scenario {name:?} (see `cargo xtask scenario --list`)");
                return ExitCode::from(2);
            }
            let opts = RunOptions {
                ticks: args.ticks,
                scheduler_config: args.scheduler_config,
                explain: args.explain,
                every_tick: args.every_tick,
                output: match args.output {
                    Output::Text => OutputFormat::Text,
                    Output::Json => OutputFormat::Json,
                    Output::Yaml => OutputFormat::Yaml,
                },
            };
            // Standard output is written as the run produces it (the json/yaml List is streamed).
            let mut out = std::io::BufWriter::new(std::io::stdout().lock());
            match run_file_to(&path, &opts, &mut out) {
                Ok(outcome) => {
                    drop(out);
                    // A reader that closed the pipe (`| head`) is not an error of the run
                    // (`outcome.output_closed`); any other write failure is reported.
                    if let Some(e) = &outcome.output_error {
                        eprintln!("error: writing the output: {e}");
                    }
                    eprint!("{}", outcome.stderr);
                    ExitCode::from(u8::try_from(outcome.exit_code()).unwrap_or(1))
                }
                Err(e) => {
                    eprintln!("error: {e}");
                    ExitCode::from(2)
                }
            }
        }
    }
}
