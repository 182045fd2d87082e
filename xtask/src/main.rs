//! `cargo xtask`: the documented alias of the `k8s-mini` command line (crates/k8s-mini). Every
//! command runs the same code (the `k8s-mini` library) in this debug build, except `replay`, the
//! heavy one: it is re-run as `cargo run --release -p k8s-mini -- replay ...`, so the trace replay
//! runs optimized (cargo prints its build progress on standard error; the first release build
//! takes minutes).
//!
//! Exit codes: those of `k8s-mini` (`k8s-mini --help`).

use std::process::{Command, ExitCode};

/// The process allocator, as the `k8s-mini` binary's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if args.get(1).is_some_and(|a| a == "replay") {
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let status = Command::new(cargo)
            .args(["run", "--release", "--package", "k8s-mini", "--"])
            .args(&args[1..])
            .status();
        return match status {
            Ok(s) => ExitCode::from(s.code().and_then(|c| u8::try_from(c).ok()).unwrap_or(1)),
            Err(e) => {
                eprintln!("error: cannot run cargo for the release build of k8s-mini: {e}");
                ExitCode::from(2)
            }
        };
    }
    let mut forwarded = vec![std::ffi::OsString::from("cargo xtask")];
    forwarded.extend(args.into_iter().skip(1));
    k8s_mini::run(forwarded)
}
