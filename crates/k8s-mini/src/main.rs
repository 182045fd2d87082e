//! The `k8s-mini` binary: see the library's `run` (`k8s-mini --help`).

use std::process::ExitCode;

/// The process allocator: mimalloc, a faster general-purpose allocator than the system's for the
/// many small objects a replay creates (results do not depend on it). The `system-allocator`
/// feature keeps the system's instead, for heap profilers that intercept `malloc` (heaptrack).
#[cfg(not(feature = "system-allocator"))]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    k8s_mini::run(std::env::args_os())
}
