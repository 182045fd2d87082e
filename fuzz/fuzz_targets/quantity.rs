#![no_main]
//! `cargo +nightly fuzz run quantity`: see `k8s_mini_fuzz::checks::quantity`.

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| k8s_mini_fuzz::checks::quantity(data));
