//! The fuzz corpus replayed on stable (what CI runs instead of `cargo +nightly fuzz`): every file in
//! `fuzz/corpus/<target>/` — the seeds from the bundled scenarios, test fixtures and hand-written
//! inputs, and the inputs that once crashed a target — is fed to the same check the fuzz target
//! runs (`fuzz/src/checks.rs`), which panics when a property fails.

use std::path::{Path, PathBuf};

#[path = "../../../fuzz/src/checks.rs"]
#[allow(dead_code)]
mod checks;

fn corpus(target: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/corpus")
        .join(target);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    assert!(!files.is_empty(), "{} is empty", dir.display());
    files
}

fn replay(target: &str, check: fn(&[u8])) {
    for f in corpus(target) {
        let data = std::fs::read(&f).unwrap();
        let name = f.display().to_string();
        if std::panic::catch_unwind(|| check(&data)).is_err() {
            panic!("fuzz check {target} fails on {name}");
        }
    }
}

#[test]
fn quantity_corpus() {
    replay("quantity", checks::quantity);
}

#[test]
fn manifest_corpus() {
    replay("manifest", checks::manifest);
}

#[test]
fn scheduler_config_corpus() {
    replay("scheduler_config", checks::scheduler_config);
}

#[test]
fn trace_csv_corpus() {
    replay("trace_csv", checks::trace_csv);
}

#[test]
fn label_selector_corpus() {
    replay("label_selector", checks::label_selector);
}

#[test]
fn http_request_corpus() {
    replay("http_request", checks::http_request);
}
