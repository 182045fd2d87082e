//! `k8s-mini compare`: the command line over `k8s_cluster::compare` (docs/compare.md), and its
//! `--svg-out` / `--html-out` files (`compare_plot`).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use k8s_cluster::compare::{self, Column, Request};
use k8s_cluster::trace::Policy;

use crate::cli::{bad_input, input_files};
use crate::compare_plot;
use crate::inputs;
use crate::whatif::{data, DataOutput};

/// The word `--config` takes for the input's own scheduler configuration.
pub const OWN_CONFIG: &str = "scenario";

/// The exit codes of `compare`, as its `--help` prints them.
pub const COMPARE_EXIT_CODES: &str = "\
Exit codes:
  0  every configuration ran and the comparison was printed (and written, with --svg-out/--html-out)
  1  the comparison was printed but an --svg-out or --html-out file could not be written
  2  bad input: unreadable or invalid files (with file, line and field path), a configuration file
     that does not load, an unknown --policy, fewer than two columns, more than 100000 --ticks,
     unknown flags";

#[derive(clap::Args)]
pub struct CompareArgs {
    /// The cluster and the workload: dumps, scenarios, manifests, directories, `-`; repeatable.
    /// A bundled scenario's name works too.
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
    /// A KubeSchedulerConfiguration file (kubescheduler.config.k8s.io/v1), one column each, in
    /// order; `scenario` is the input's own configuration (or the defaults). At least two columns
    /// in all, --config and --policy together.
    #[arg(long = "config", value_name = "FILE|scenario")]
    configs: Vec<String>,
    /// A trace-replay placement policy (`k8s-mini replay --policy`'s names: fgd, best-fit,
    /// binpack, ...), one column each, after the --config columns.
    #[arg(long = "policy", value_name = "NAME")]
    policies: Vec<String>,
    /// Run exactly this many ticks (else the Scenario's spec.ticks, else until nothing changes).
    #[arg(long, value_name = "N")]
    ticks: Option<u64>,
    /// Write one SVG per configuration, `<column>.svg`: GPU and CPU allocated over time.
    #[arg(long, value_name = "DIR")]
    svg_out: Option<PathBuf>,
    /// Write one self-contained HTML page: the tables and every configuration's SVG.
    #[arg(long, value_name = "FILE")]
    html_out: Option<PathBuf>,
    /// Text (tables), or the comparison as data.
    #[arg(short = 'o', long, value_enum, default_value_t = DataOutput::Text)]
    output: DataOutput,
}

/// The columns: a file's stem names it (the whole path when two stems are the same);
/// [`OWN_CONFIG`] is the input's own configuration.
fn columns(configs: &[String]) -> Vec<Column> {
    let stem = |c: &str| {
        if c == OWN_CONFIG {
            OWN_CONFIG.to_string()
        } else {
            Path::new(c)
                .file_stem()
                .map_or_else(|| c.to_string(), |s| s.to_string_lossy().into_owned())
        }
    };
    configs
        .iter()
        .map(|c| {
            let clash = configs.iter().filter(|o| stem(o) == stem(c)).count() > 1;
            Column {
                name: if clash { c.clone() } else { stem(c) },
                scheduler_config: (c != OWN_CONFIG).then(|| PathBuf::from(c)),
                policy: None,
            }
        })
        .collect()
}

/// A file name for a column (its name with path separators and dots made safe).
pub(crate) fn file_name(column: &str) -> String {
    let s: String = column
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("{s}.svg")
}

fn write_files(args: &CompareArgs, c: &compare::Comparison) -> Result<(), String> {
    if let Some(dir) = &args.svg_out {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        for r in &c.runs {
            let svg = compare_plot::alloc_svg(r)?;
            let p = dir.join(file_name(&r.name));
            std::fs::write(&p, svg).map_err(|e| format!("{}: {e}", p.display()))?;
        }
    }
    if let Some(f) = &args.html_out {
        let page = compare_plot::html(c)?;
        std::fs::write(f, page).map_err(|e| format!("{}: {e}", f.display()))?;
    }
    Ok(())
}

/// `k8s-mini compare`.
pub fn run_compare(args: CompareArgs) -> ExitCode {
    if args.ticks.is_some_and(|t| t > 100_000) {
        eprintln!("error: --ticks: at most 100000");
        return ExitCode::from(2);
    }
    for c in args.configs.iter().filter(|c| *c != OWN_CONFIG) {
        if !Path::new(c).is_file() {
            eprintln!("error: --config {c}: the file does not exist");
            return ExitCode::from(2);
        }
    }
    let files = match input_files(&args.files, args.recursive) {
        Ok(f) => f,
        Err(code) => return code,
    };
    let read = match inputs::read(&files) {
        Ok(r) => r,
        Err(e) => return bad_input(&e),
    };
    let mut cols = columns(&args.configs);
    for name in &args.policies {
        match Policy::parse(name) {
            Ok(p) => cols.push(Column {
                name: p.name().to_string(),
                scheduler_config: None,
                policy: Some(p),
            }),
            Err(e) => {
                eprintln!("error: --policy {name}: {e}");
                return ExitCode::from(2);
            }
        }
    }
    let req = Request {
        manifests: read.manifests,
        path: read.path,
        columns: cols,
        ticks: args.ticks,
    };
    let c = match compare::compare(&req) {
        Ok(c) => c,
        Err(e) => return bad_input(&e),
    };
    for w in &c.warnings {
        eprintln!("warning: {w}");
    }
    match args.output {
        DataOutput::Text => out!("{}", compare::render(&c)),
        o => out!("{}", data(serde_json::to_value(&c), o)),
    }
    match write_files(&args, &c) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: writing the output: {e}");
            ExitCode::from(1)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_are_named_by_stem_unless_two_stems_clash() {
        let c = columns(&[
            "a/least.yaml".to_string(),
            "b/most.yaml".to_string(),
            OWN_CONFIG.to_string(),
        ]);
        let names: Vec<&str> = c.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["least", "most", "scenario"]);
        assert_eq!(c[2].scheduler_config, None);
        let c = columns(&["a/x.yaml".to_string(), "b/x.yaml".to_string()]);
        let names: Vec<&str> = c.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["a/x.yaml", "b/x.yaml"]);
        assert_eq!(file_name("a/x.yaml"), "a_x_yaml.svg");
    }
}
