//! The design rule, checked from `cargo metadata` and the sources: library crates depend on
//! siblings only through interface crates (`k8s-types`, and `k8s-sched-framework` for the
//! scheduler's plugins); only `k8s-cluster` and `xtask` wire
//! concrete crates together, and they use the scheduler through its public API, not its
//! internals (reach-ins); `k8s-testing` is a dev-dependency only.

use std::process::Command;

/// The crates every library crate may depend on: API objects and component contracts, and the
/// scheduler framework's plugin-facing API.
const INTERFACE_CRATES: &[&str] = &["k8s-types", "k8s-sched-framework"];

#[test]
fn library_crates_depend_only_on_interface_crates() {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args([
            "metadata",
            "--no-deps",
            "--format-version",
            "1",
            "--offline",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo metadata runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).expect("metadata is JSON");
    let packages = meta["packages"].as_array().expect("packages");
    let names: Vec<&str> = packages.iter().filter_map(|p| p["name"].as_str()).collect();
    assert!(
        names.contains(&"k8s-sched")
            && names.contains(&"k8s-types")
            && names.contains(&"k8s-sched-framework"),
        "{names:?}"
    );
    let mut violations = Vec::new();
    for p in packages {
        let name = p["name"].as_str().unwrap_or_default();
        // k8s-serve is a wiring crate like xtask: it serves a whole `k8s_cluster::Session` over
        // HTTP and names no component crate (only k8s-cluster and k8s-types).
        if name == "k8s-serve" {
            for d in p["dependencies"].as_array().into_iter().flatten() {
                let dep = d["name"].as_str().unwrap_or_default();
                let wiring_ok = ["k8s-cluster", "k8s-types"].contains(&dep);
                if names.contains(&dep) && !wiring_ok && d["kind"].as_str() != Some("dev") {
                    violations.push(format!("{name} -> {dep}"));
                }
            }
        }
        if matches!(name, "k8s-cluster" | "xtask" | "k8s-types" | "k8s-serve") {
            continue;
        }
        // The framework crate is an interface crate over k8s-types only.
        let allowed: &[&str] = if name == "k8s-sched-framework" {
            &["k8s-types"]
        } else {
            INTERFACE_CRATES
        };
        for d in p["dependencies"].as_array().into_iter().flatten() {
            let dep = d["name"].as_str().unwrap_or_default();
            let is_dev = d["kind"].as_str() == Some("dev");
            if names.contains(&dep) && !allowed.contains(&dep) && !is_dev {
                violations.push(format!("{name} -> {dep}"));
            }
        }
    }
    assert!(
        violations.is_empty(),
        "crate boundary violated: {violations:?}"
    );
    // The test-support crate (its in-memory apiserver and builders) is a dev-dependency only,
    // of any crate, k8s-cluster and xtask included.
    let testing_deps: Vec<&str> = packages
        .iter()
        .filter(|p| {
            p["dependencies"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|d| d["name"] == "k8s-testing" && d["kind"].as_str() != Some("dev"))
        })
        .filter_map(|p| p["name"].as_str())
        .collect();
    assert!(
        testing_deps.is_empty(),
        "k8s-testing is a dev-dependency only, not of {testing_deps:?}"
    );
    // k8s-types itself depends on no sibling.
    let types = packages
        .iter()
        .find(|p| p["name"] == "k8s-types")
        .expect("k8s-types");
    let sibling_deps: Vec<&str> = types["dependencies"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|d| d["name"].as_str())
        .filter(|d| names.contains(d))
        .collect();
    assert!(
        sibling_deps.is_empty(),
        "k8s-types depends on {sibling_deps:?}"
    );
}

/// What the wiring crates (k8s-cluster, xtask) may name in k8s-sched: the crate root's
/// re-exports and the modules a user of the scheduler needs (configuration, `--explain` output,
/// plugin names). Anything else is a reach-in into the scheduler's internals.
const SCHED_API: &[&str] = &[
    "Scheduler",
    "KubeSchedulerConfiguration",
    "ConfigError",
    "Registry",
    "PluginArgs",
    "PluginFactory",
    "Decision",
    "ScheduleResult",
    "config",
    "explain",
    "plugins::names",
    "plugins::gpu::names",
];

/// Reach-ins that exist today, each where it is: the paper-mode trace replay runs its own
/// attempt on the scheduler's framework (issue 16, "one scheduling cycle", is to replace them
/// with a narrow public API), and the policies name FGD's args (`TypicalPodArgs`), which live in
/// the plugin's module rather than in `config`. The list may only shrink.
const KNOWN_REACH_INS: &[(&str, &str)] = &[
    (
        "crates/k8s-cluster/src/trace/policy.rs",
        "plugins::gpu::frag",
    ),
    (
        "crates/k8s-cluster/src/trace/replay.rs",
        "binding_annotations",
    ),
    (
        "crates/k8s-cluster/src/trace/replay.rs",
        "plugins::gpu::frag",
    ),
    (
        "crates/k8s-cluster/src/trace/replay.rs",
        "plugins::gpu::shape",
    ),
    ("crates/k8s-cluster/src/trace/replay.rs", "runtime"),
];

/// The `k8s_sched::...` paths a source file names (a `use k8s_sched::{a, b::C}` group gives `a`
/// and `b::C`).
fn sched_paths(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find("k8s_sched::") {
        rest = &rest[i + "k8s_sched::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let (mut depth, mut item, mut end) = (0, String::new(), group.len());
            for (j, ch) in group.char_indices() {
                match ch {
                    '{' => depth += 1,
                    '}' if depth == 0 => {
                        end = j;
                        break;
                    }
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        out.push(std::mem::take(&mut item).trim().to_string());
                        continue;
                    }
                    _ => {}
                }
                item.push(ch);
            }
            if !item.trim().is_empty() {
                out.push(item.trim().to_string());
            }
            rest = &group[end..];
        } else {
            let path: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
                .collect();
            out.push(path.trim_end_matches(':').to_string());
        }
    }
    out
}

fn under(path: &str, prefix: &str) -> bool {
    path == prefix || path.starts_with(&format!("{prefix}::"))
}

#[test]
fn wiring_crates_use_only_the_schedulers_public_api() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files = Vec::new();
    let mut dirs = vec![root.join("crates/k8s-cluster/src"), root.join("xtask/src")];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).expect("readable") {
            let p = e.expect("entry").path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                files.push(p);
            }
        }
    }
    let mut reach_ins = Vec::new();
    let mut seen_known = std::collections::BTreeSet::new();
    for f in &files {
        let rel = f
            .strip_prefix(&root)
            .map(|p| p.to_string_lossy().replace('\\', "/"))
            .unwrap_or_default();
        let rel = rel.trim_start_matches("./").to_string();
        let text = std::fs::read_to_string(f).expect("readable");
        for p in sched_paths(&text) {
            if SCHED_API.iter().any(|a| under(&p, a)) {
                continue;
            }
            match KNOWN_REACH_INS
                .iter()
                .find(|(file, m)| rel.ends_with(file) && under(&p, m))
            {
                Some(k) => {
                    seen_known.insert(*k);
                }
                None => reach_ins.push(format!("{rel}: k8s_sched::{p}")),
            }
        }
    }
    assert!(
        reach_ins.is_empty(),
        "reach-ins into k8s-sched's internals (use its public API):\n{}",
        reach_ins.join("\n")
    );
    let gone: Vec<_> = KNOWN_REACH_INS
        .iter()
        .filter(|k| !seen_known.contains(*k))
        .collect();
    assert!(
        gone.is_empty(),
        "remove these from KNOWN_REACH_INS, they are gone: {gone:?}"
    );
}

#[test]
fn sched_paths_expand_groups() {
    let text = "use k8s_sched::{config::{A, B}, runtime::Framework};\nk8s_sched::Scheduler::new(x)";
    assert_eq!(
        sched_paths(text),
        ["config::{A, B}", "runtime::Framework", "Scheduler::new"]
    );
}
