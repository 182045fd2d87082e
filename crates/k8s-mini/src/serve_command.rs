//! `k8s-mini serve`: the scenario's cluster as a Kubernetes API server on 127.0.0.1 for kubectl
//! (the [`crate::serve`] module; docs/serve.md).

use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub(crate) struct ServeArgs {
    /// The scenario or manifests the cluster starts from (bundled name or path).
    #[arg(short = 'f', long = "filename", value_name = "FILE")]
    pub(crate) file: String,
    /// Port on 127.0.0.1 (0: any free port).
    #[arg(long, default_value_t = 8001)]
    pub(crate) port: u16,
    /// Ticks (simulated seconds) per real second.
    #[arg(long, default_value_t = 1.0, conflicts_with = "paused")]
    pub(crate) speed: f64,
    /// Keep the clock still; `POST /k8s-mini/v1/step?ticks=N` moves it.
    #[arg(long)]
    pub(crate) paused: bool,
    /// Write a kubeconfig for this server here.
    #[arg(long, value_name = "FILE")]
    pub(crate) kubeconfig_out: Option<PathBuf>,
    /// Write the session as a Scenario that replays to the same state.
    #[arg(long, value_name = "FILE")]
    pub(crate) record: Option<PathBuf>,
}

/// Runs the server until it is stopped (Ctrl-C). Exit codes: 2 bad input (the scenario or a flag),
/// 1 the server could not start or failed.
pub(crate) fn run(args: ServeArgs) -> ExitCode {
    if !(args.speed.is_finite() && args.speed > 0.0) {
        eprintln!("error: --speed must be a positive number");
        return ExitCode::from(2);
    }
    let opts = crate::serve::ServeOptions {
        file: crate::cli::resolve(&args.file),
        port: args.port,
        clock: if args.paused {
            crate::serve::Clock::Paused
        } else {
            crate::serve::Clock::Speed(args.speed)
        },
        kubeconfig_out: args.kubeconfig_out,
        record: args.record,
    };
    match crate::serve::serve(&opts) {
        Ok(()) => ExitCode::SUCCESS,
        Err(crate::serve::ServeError::Manifest(e)) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(1)
        }
    }
}
