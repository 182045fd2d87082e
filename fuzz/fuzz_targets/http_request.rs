#![no_main]
//! `cargo +nightly fuzz run http_request`: see `k8s_mini_fuzz::checks::http_request`.

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| k8s_mini_fuzz::checks::http_request(data));
