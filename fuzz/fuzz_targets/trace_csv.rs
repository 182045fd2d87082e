#![no_main]
//! `cargo +nightly fuzz run trace_csv`: see `k8s_mini_fuzz::checks::trace_csv`.

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| k8s_mini_fuzz::checks::trace_csv(data));
