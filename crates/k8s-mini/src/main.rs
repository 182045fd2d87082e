//! The `k8s-mini` binary: see the library's `run` (`k8s-mini --help`).

use std::process::ExitCode;

/// The process allocator: mimalloc, a faster general-purpose allocator than the system's for the
/// many small objects a replay creates (results do not depend on it). The `system-allocator`
/// feature keeps the system's instead, for heap profilers that intercept `malloc` (heaptrack).
#[cfg(not(feature = "system-allocator"))]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// mimalloc's `mi_option_purge_delay` (v3 `include/mimalloc.h`, `mi_option_e`; the `extended`
/// bindings name no constant for it).
#[cfg(not(feature = "system-allocator"))]
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// Keeps the memory mimalloc frees for the process's next allocations instead of handing it back
/// to the kernel (`purge_delay` -1; mimalloc's default returns freed ranges after 1 s). A run
/// builds its cluster up to a peak and then writes it out; memory given back in between is
/// faulted in and zeroed again by the kernel the next time the cluster grows into it. At 5,000
/// nodes and 150,000 pods that was about 62,000 extra page faults and 6-10 s of system time per
/// run, with the same peak RSS (docs/benchmarks.md, session 19). `MIMALLOC_PURGE_DELAY` in the
/// environment still wins.
#[cfg(not(feature = "system-allocator"))]
#[allow(unsafe_code)]
fn keep_freed_memory() {
    if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
        // SAFETY: `mi_option_set` only stores the option's value (mimalloc `options.c`); it takes
        // no pointer and is safe to call at any time, from any thread.
        unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, -1) };
    }
}

fn main() -> ExitCode {
    #[cfg(not(feature = "system-allocator"))]
    keep_freed_memory();
    k8s_mini::run(std::env::args_os())
}

#[cfg(all(test, not(feature = "system-allocator")))]
mod tests {
    use super::*;

    #[allow(unsafe_code)]
    fn purge_delay() -> std::os::raw::c_long {
        // SAFETY: `mi_option_get` reads the option's value; no pointer is involved.
        unsafe { libmimalloc_sys::mi_option_get(MI_OPTION_PURGE_DELAY) }
    }

    #[test]
    fn freed_memory_is_kept() {
        if std::env::var_os("MIMALLOC_PURGE_DELAY").is_some() {
            return; // the environment's value wins; nothing to check
        }
        // Option 15 is the purge delay: mimalloc v3's default for it is 1000 ms (`options.c`).
        assert_eq!(purge_delay(), 1000);
        keep_freed_memory();
        assert_eq!(purge_delay(), -1);
    }
}
