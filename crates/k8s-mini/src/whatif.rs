//! `k8s-mini whatif` and `k8s-mini capacity`: the command lines over `k8s_cluster::whatif` and
//! `k8s_cluster::capacity` (docs/whatif.md).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::ValueEnum;
use k8s_cluster::capacity;
use k8s_cluster::manifest::{Document, ManifestError, Source};
use k8s_cluster::whatif::{self, Request, Scale};
use k8s_types::object::Object;

use crate::cli::{bad_input, input_files, run_state, RunInput};
use crate::inputs;

/// The exit codes of `whatif`, as its `--help` prints them.
pub const WHATIF_EXIT_CODES: &str = "\
Exit codes:
  0  the workload fits: every one of its pods is bound
  1  it does not fit (the answer says why, and how many more nodes would make it fit)
  2  bad input: unreadable or invalid files (with file, line and field path), a workload object the
     apiserver refuses when it is added, unknown flags, a --like node that does not exist";

/// Output formats of `whatif` and `capacity`.
#[derive(Clone, Copy, ValueEnum)]
pub enum DataOutput {
    Text,
    Json,
    Yaml,
}

#[derive(clap::Args)]
pub struct WhatifArgs {
    /// The cluster: a dump (`kubectl get ... -A -o yaml`), a scenario, a directory; repeatable.
    /// A bundled scenario's name works too.
    #[arg(
        short = 'f',
        long = "filename",
        value_name = "FILE|DIR|-",
        required = true
    )]
    files: Vec<String>,
    /// Read the directories given with -f and --add recursively.
    #[arg(short = 'R', long)]
    recursive: bool,
    /// The workload to add: manifests (Pods, Deployments, Jobs, PodGroups, ...); repeatable.
    #[arg(long = "add", value_name = "FILE|DIR")]
    add: Vec<String>,
    /// Add N nodes like --like with the workload.
    #[arg(long, value_name = "N", default_value_t = 0)]
    add_nodes: usize,
    /// The node whose shape --add-nodes and the node search copy (default for the search: the
    /// most common shape among the nodes that could hold a pending workload pod).
    #[arg(long, value_name = "NODE")]
    like: Option<String>,
    /// Set spec.replicas of a Deployment, ReplicaSet or StatefulSet with the workload; repeatable.
    #[arg(long, value_name = "KIND/NAME=N")]
    scale: Vec<String>,
    /// The namespace of --scale's objects.
    #[arg(short = 'n', long, default_value = "default")]
    namespace: String,
    /// Ticks to run after the workload is added (300: kube-scheduler's 5-minute
    /// podMaxInUnschedulablePodsDuration).
    #[arg(long, value_name = "N", default_value_t = whatif::DEFAULT_TICKS)]
    ticks: u64,
    /// The most nodes the "how many more nodes" search adds (0: no search).
    #[arg(long, value_name = "N", default_value_t = whatif::DEFAULT_MAX_NODES)]
    max_nodes: usize,
    /// Count the copies of this pod the cluster can still take, as cluster-capacity does.
    #[arg(long, value_name = "POD_FILE")]
    max_replicas: Option<String>,
    /// cluster-capacity's --max-limit: stop after this many copies (0: no limit but 10,000).
    #[arg(long, value_name = "N", default_value_t = 0)]
    max_limit: usize,
    /// A KubeSchedulerConfiguration file (kubescheduler.config.k8s.io/v1).
    #[arg(long, value_name = "FILE")]
    scheduler_config: Option<PathBuf>,
    /// The answer as text (one screen), or as data.
    #[arg(short = 'o', long, value_enum, default_value_t = DataOutput::Text)]
    output: DataOutput,
}

#[derive(clap::Args)]
pub struct CapacityArgs {
    /// A manifest file, a directory of them, or `-`; repeatable. A bundled scenario's name works too.
    #[arg(
        short = 'f',
        long = "filename",
        value_name = "FILE|DIR|-",
        required = true
    )]
    files: Vec<String>,
    /// Read the directories given with -f recursively.
    #[arg(short = 'R', long)]
    recursive: bool,
    /// Stop the run when the virtual clock reads N and show that state.
    #[arg(long, value_name = "N")]
    at_tick: Option<u64>,
    /// Run exactly this many ticks (overrides the Scenario's spec.ticks).
    #[arg(long)]
    ticks: Option<u64>,
    /// A KubeSchedulerConfiguration file (kubescheduler.config.k8s.io/v1).
    #[arg(long, value_name = "FILE")]
    scheduler_config: Option<PathBuf>,
    /// The node label that names a pool; repeatable, the first one a node carries wins (default:
    /// node.kubernetes.io/instance-type, then nvidia.com/gpu.product).
    #[arg(long, value_name = "LABEL")]
    pool_label: Vec<String>,
    /// Text, or the view as data.
    #[arg(short = 'o', long, value_enum, default_value_t = DataOutput::Text)]
    output: DataOutput,
}

/// The answer as JSON (pretty, keys in the order of the fields) or YAML.
pub(crate) fn data(v: Result<serde_json::Value, serde_json::Error>, o: DataOutput) -> String {
    let text = match (v, o) {
        (Ok(v), DataOutput::Json) => serde_json::to_string_pretty(&v).map_err(|e| e.to_string()),
        (Ok(v), _) => serde_yaml::to_string(&v).map_err(|e| e.to_string()),
        (Err(e), _) => Err(e.to_string()),
    };
    match text {
        Ok(t) if t.ends_with('\n') => t,
        Ok(t) => t + "\n",
        Err(e) => format!("error: {e}\n"),
    }
}

fn read_all(names: &[String], recursive: bool) -> Result<inputs::Inputs, ExitCode> {
    let files = input_files(names, recursive)?;
    inputs::read(&files).map_err(|e| bad_input(&e))
}

fn pod_file(name: &str) -> Result<k8s_types::core::Pod, ExitCode> {
    let read = read_all(&[name.to_string()], false)?;
    read.manifests
        .docs
        .into_iter()
        .find_map(|d| match d.doc {
            Document::Object(o) => match *o {
                Object::Pod(p) => Some(*p),
                _ => None,
            },
            _ => None,
        })
        .ok_or_else(|| {
            bad_input(&ManifestError {
                source_loc: Source {
                    file: name.to_string(),
                    line: 0,
                },
                path: String::new(),
                message: "--max-replicas: no Pod in this file".into(),
            })
        })
}

fn request(args: &WhatifArgs) -> Result<Request, ExitCode> {
    let cluster = read_all(&args.files, args.recursive)?;
    let add = if args.add.is_empty() {
        Default::default()
    } else {
        read_all(&args.add, args.recursive)?.manifests
    };
    let mut scale = Vec::new();
    for s in &args.scale {
        scale.push(Scale::parse(s, &args.namespace).map_err(|e| {
            eprintln!("error: {e}");
            ExitCode::from(2)
        })?);
    }
    let max_replicas = match &args.max_replicas {
        Some(f) => Some(pod_file(f)?),
        None => None,
    };
    Ok(Request {
        cluster: cluster.manifests,
        cluster_path: cluster.path,
        add,
        add_nodes: args.add_nodes,
        like: args.like.clone(),
        scale,
        ticks: args.ticks,
        max_nodes: args.max_nodes,
        max_replicas,
        max_limit: args.max_limit,
        scheduler_config: args.scheduler_config.clone(),
    })
}

/// `k8s-mini whatif`.
pub fn run_whatif(args: WhatifArgs) -> ExitCode {
    if args.ticks > 100_000 {
        eprintln!("error: --ticks {}: at most 100000", args.ticks);
        return ExitCode::from(2);
    }
    let req = match request(&args) {
        Ok(r) => r,
        Err(code) => return code,
    };
    let answer = match whatif::what_if(&req) {
        Ok(a) => a,
        Err(e) => return bad_input(&e),
    };
    for w in &answer.warnings {
        eprintln!("warning: {w}");
    }
    match args.output {
        DataOutput::Text => out!("{}", whatif::render(&answer)),
        o => out!("{}", data(serde_json::to_value(&answer), o)),
    }
    if answer.fits {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// `k8s-mini capacity`.
pub fn run_capacity(args: CapacityArgs) -> ExitCode {
    let input = RunInput {
        files: args.files,
        recursive: args.recursive,
        at_tick: args.at_tick,
        ticks: args.ticks,
        scheduler_config: args.scheduler_config,
        namespace: "default".into(),
        all_namespaces: true,
    };
    let state = match run_state(&input) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let view = capacity::capacity_view(state.cluster.api_ref(), &args.pool_label);
    match args.output {
        DataOutput::Text => out!("{}", capacity::render(&view)),
        o => out!("{}", data(serde_json::to_value(&view), o)),
    }
    ExitCode::SUCCESS
}
