//! `k8s-mini`, the command line: run Kubernetes manifests through the simulated control plane
//! (`scenario`), look at what a run left as kubectl would (`get`, `describe`, `events`), and replay
//! a GPU cluster trace (`replay`), ask what a workload would do to a cluster (`whatif`) and what
//! its node pools hold (`capacity`), and run one input under several scheduler configurations side
//! by side (`compare`). `cargo xtask ...` is an alias that forwards here.
//!
//! kubectl's conventions: `-f FILE|DIR|-` (repeatable; `-R` descends into directories; `-` is
//! standard input), `-o json|yaml|wide|name`, `-n NAMESPACE` / `-A`; data on standard output,
//! diagnostics (warnings, progress, errors) on standard error; a reader that closes the pipe ends
//! the program quietly with exit 0. Exit codes: [`EXIT_CODES`].

/// `println!` for standard output that ends the program quietly when the reader closed the pipe
/// (`k8s-mini scenario --list | head -1`) instead of panicking: see [`emit`].
macro_rules! outln {
    ($($t:tt)*) => { $crate::emit(&format!("{}\n", format_args!($($t)*))) };
}

/// `print!` with [`outln`]'s handling of a closed pipe.
macro_rules! out {
    ($($t:tt)*) => { $crate::emit(&format!($($t)*)) };
}

mod cli;
mod compare;
mod compare_plot;
mod inputs;
mod plot;
mod replay;
pub mod serve;
mod serve_command;
mod timeline;
mod timeline_plot;
mod view;
mod whatif;

pub use cli::run;

/// The exit codes, as `--help` prints them.
pub const EXIT_CODES: &str = "\
Exit codes:
  0  done: the run finished and every expectation held; get/describe/events printed what was asked
  1  a scenario's expectation or step failed (expected and actual are printed); replay: a median
     outside the paper's published range; get/describe: the named object does not exist (NotFound)
  2  bad input: unreadable or invalid files (with file, line and field path), unknown flags,
     resources or scenarios";

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
