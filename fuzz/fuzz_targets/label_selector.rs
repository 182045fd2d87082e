#![no_main]
//! `cargo +nightly fuzz run label_selector`: see `k8s_mini_fuzz::checks::label_selector`.

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| k8s_mini_fuzz::checks::label_selector(data));
