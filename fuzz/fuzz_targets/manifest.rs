#![no_main]
//! `cargo +nightly fuzz run manifest`: see `k8s_mini_fuzz::checks::manifest`.

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| k8s_mini_fuzz::checks::manifest(data));
