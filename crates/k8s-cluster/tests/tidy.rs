//! Tidy checks over the workspace's sources (docs/architecture.md, "Tidy rules"):
//! - no Rust file has more than [`MAX_CODE_LINES`] lines of code (lines that are neither blank nor
//!   only a comment), except the files listed in [`OVERSIZED`], which may not grow past the
//!   number listed for them (they are to be split, not extended);
//! - every name a crate re-exports at its root (`pub use` in `src/lib.rs`) is listed on that
//!   crate's line of the "Entry points" table in docs/architecture.md, and that line lists nothing
//!   else in backquotes that the root does not export.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Most lines of code a Rust file may have.
const MAX_CODE_LINES: usize = 800;

/// Files over [`MAX_CODE_LINES`] when the rule was introduced, with their size then: they may
/// shrink, not grow.
const OVERSIZED: &[(&str, usize)] = &[
    (
        "crates/k8s-sched/src/plugins/pod_topology_spread/tests.rs",
        1583,
    ),
    (
        "crates/k8s-sched/src/plugins/inter_pod_affinity/tests.rs",
        1048,
    ),
    ("crates/k8s-sched/src/runtime/mod.rs", 922),
    ("crates/k8s-sched/src/runtime/fused.rs", 921),
];

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("workspace root")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).expect("readable directory") {
        let p = e.expect("entry").path();
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        if p.is_dir() {
            if name != "target" && !name.starts_with('.') {
                rust_files(&p, out);
            }
        } else if name.ends_with(".rs") {
            out.push(p);
        }
    }
}

/// Lines that are neither blank nor only a `//` comment.
fn code_lines(text: &str) -> usize {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("//"))
        .count()
}

#[test]
fn code_lines_per_file_stay_under_the_limit() {
    let root = workspace();
    let mut files = Vec::new();
    for dir in ["crates", "xtask"] {
        rust_files(&root.join(dir), &mut files);
    }
    assert!(files.len() > 100, "found only {} files", files.len());
    let mut over = Vec::new();
    for f in &files {
        let rel = f
            .strip_prefix(&root)
            .expect("under the root")
            .to_string_lossy()
            .replace('\\', "/");
        let n = code_lines(&std::fs::read_to_string(f).expect("readable"));
        let limit = OVERSIZED
            .iter()
            .find(|(p, _)| *p == rel)
            .map_or(MAX_CODE_LINES, |(_, n)| *n);
        if n > limit {
            over.push(format!("{rel}: {n} lines of code (limit {limit})"));
        }
    }
    assert!(
        over.is_empty(),
        "split these files (docs/architecture.md, \"Tidy rules\"):\n{}",
        over.join("\n")
    );
    for (p, _) in OVERSIZED {
        assert!(root.join(p).exists(), "{p} is listed in OVERSIZED but gone");
    }
}

/// The names `lib.rs` re-exports (`pub use a::{B, c as D};` gives B and D).
fn root_exports(lib: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut stmt = String::new();
    for line in lib.lines() {
        let t = line.trim();
        if stmt.is_empty() && !t.starts_with("pub use ") {
            continue;
        }
        stmt.push_str(t);
        stmt.push(' ');
        if !t.ends_with(';') {
            continue;
        }
        let body = stmt
            .trim()
            .trim_start_matches("pub use ")
            .trim_end_matches(';');
        let names = match (body.find('{'), body.rfind('}')) {
            (Some(a), Some(b)) => body[a + 1..b].to_string(),
            _ => body.rsplit("::").next().unwrap_or(body).to_string(),
        };
        for n in names.split(',') {
            let n = n.trim();
            if n.is_empty() {
                continue;
            }
            let name = n.rsplit(" as ").next().unwrap_or(n);
            out.insert(name.rsplit("::").next().unwrap_or(name).to_string());
        }
        stmt.clear();
    }
    out
}

#[test]
fn root_exports_are_listed_in_the_architecture_doc() {
    let root = workspace();
    let doc = std::fs::read_to_string(root.join("docs/architecture.md")).expect("architecture.md");
    let table: Vec<&str> = doc
        .split("## Entry points")
        .nth(1)
        .expect("an \"Entry points\" section")
        .lines()
        .take_while(|l| !l.starts_with("## "))
        .filter(|l| l.starts_with("| `k8s-") || l.starts_with("| `xtask"))
        .collect();
    let mut crates = Vec::new();
    for e in std::fs::read_dir(root.join("crates")).expect("crates/") {
        let p = e.expect("entry").path();
        if p.join("src/lib.rs").exists() {
            crates.push(p);
        }
    }
    crates.sort();
    assert!(crates.len() >= 9, "{crates:?}");
    let mut problems = Vec::new();
    for c in &crates {
        let name = c.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        let exports = root_exports(&std::fs::read_to_string(c.join("src/lib.rs")).expect("lib.rs"));
        let Some(row) = table
            .iter()
            .find(|l| l.starts_with(&format!("| `{name}` |")))
        else {
            problems.push(format!("{name}: no row in the Entry points table"));
            continue;
        };
        let cells: Vec<&str> = row.split('|').collect();
        let listed: BTreeSet<String> = cells
            .get(2)
            .unwrap_or(&"")
            .split('`')
            .skip(1)
            .step_by(2)
            .map(str::to_string)
            .collect();
        for missing in exports.difference(&listed) {
            problems.push(format!("{name}: re-exports `{missing}`, not listed"));
        }
        for extra in listed.difference(&exports) {
            problems.push(format!("{name}: lists `{extra}`, not re-exported"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn root_exports_parse_groups_renames_and_multiline_lists() {
    let lib = "pub use a::B;\npub use c::{D, e::F as G,\n    H};\nuse i::J;\n";
    let got: Vec<String> = root_exports(lib).into_iter().collect();
    assert_eq!(got, ["B", "D", "G", "H"]);
}
