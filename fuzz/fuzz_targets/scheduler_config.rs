#![no_main]
//! `cargo +nightly fuzz run scheduler_config`: see `k8s_mini_fuzz::checks::scheduler_config`.

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| k8s_mini_fuzz::checks::scheduler_config(data));
