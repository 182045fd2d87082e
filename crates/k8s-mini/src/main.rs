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

/// mimalloc's `mi_option_allow_thp` (v3 `include/mimalloc.h`, `mi_option_e`; the `extended`
/// bindings name no constant for it).
#[cfg(all(not(feature = "system-allocator"), target_os = "linux"))]
const MI_OPTION_ALLOW_THP: libmimalloc_sys::mi_option_t = 43;

/// Gives the process 4 KB pages instead of transparent huge pages, as mimalloc does for
/// `MIMALLOC_ALLOW_THP=0` (its `_mi_prim_mem_init`: `prctl(PR_SET_THP_DISABLE)`, which the
/// kernel applies at every later page fault, `madvise(MADV_HUGEPAGE)` ranges included). mimalloc
/// reads that option before `main`, so the CLI sets both itself. A run touches each page of its
/// heap for the first time as the cluster grows; the kernel zeroing 2 MB pages at those faults
/// was most of the system time, for little TLB gain: at 5,000 nodes and 150,000 pods 18.8-19.1 s
/// wall (15.7 s user, 3.9-4.3 s system) became 16.4-16.5 s (16.6-16.7 s user, 0.7 s system) and
/// the peak RSS fell 21 MB (docs/benchmarks.md, session 23). `MIMALLOC_ALLOW_THP` in the
/// environment still wins.
#[cfg(all(not(feature = "system-allocator"), target_os = "linux"))]
#[allow(unsafe_code)]
fn no_transparent_huge_pages() {
    if std::env::var_os("MIMALLOC_ALLOW_THP").is_none() {
        // SAFETY: `mi_option_set` only stores the option's value (mimalloc `options.c`); `prctl`
        // with PR_SET_THP_DISABLE sets one flag of this process's memory map and takes no
        // pointer (its result is ignored: THP are an optimization, never a requirement).
        unsafe {
            libmimalloc_sys::mi_option_set(MI_OPTION_ALLOW_THP, 0);
            libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
        }
    }
}

fn main() -> ExitCode {
    #[cfg(not(feature = "system-allocator"))]
    keep_freed_memory();
    #[cfg(all(not(feature = "system-allocator"), target_os = "linux"))]
    no_transparent_huge_pages();
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

    #[cfg(target_os = "linux")]
    #[allow(unsafe_code)]
    #[test]
    fn transparent_huge_pages_are_off() {
        if std::env::var_os("MIMALLOC_ALLOW_THP").is_some() {
            return; // the environment's value wins; nothing to check
        }
        // SAFETY: both calls read a value; no pointer is involved.
        let option_and_flag = || unsafe {
            (
                libmimalloc_sys::mi_option_get(MI_OPTION_ALLOW_THP),
                libc::prctl(libc::PR_GET_THP_DISABLE, 0, 0, 0, 0),
            )
        };
        // Option 43 is allow_thp: mimalloc v3's default for it on Linux is 1 (`options.c`).
        assert_eq!(option_and_flag(), (1, 0));
        no_transparent_huge_pages();
        assert_eq!(option_and_flag(), (0, 1));
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
