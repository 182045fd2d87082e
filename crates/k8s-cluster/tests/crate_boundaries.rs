//! The design rule, checked from `cargo metadata` and the sources: library crates depend on
//! siblings only through interface crates (`k8s-types`, and `k8s-sched-framework` for the
//! scheduler's plugins); only `k8s-cluster`, `k8s-mini` (the command line) and `xtask` wire
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
        if matches!(name, "k8s-cluster" | "k8s-mini" | "xtask" | "k8s-types") {
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

/// What the wiring crates (k8s-cluster, k8s-mini, xtask) may name in k8s-sched: the crate root's
/// re-exports and the modules a user of the scheduler needs (configuration, `--explain` output,
/// plugin names, the one-pod-at-a-time [`Simulator`] the paper-mode replay drives). Anything else
/// is a reach-in into the scheduler's internals; there are none (issue 16 removed the replay's,
/// and no exception list exists).
///
/// [`Simulator`]: k8s_sched::simulator::Simulator
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
    "simulator",
    "plugins::names",
    "plugins::gpu::names",
];

/// `Scheduler` methods that hand out its internals (its cache, queue and profiles' frameworks):
/// for the scheduler's own tests, never for the wiring crates, which ask the scheduler
/// (`Scheduler::retry_ticks`, `Scheduler::has_profile`) instead.
const SCHED_INTERNAL_METHODS: &[&str] = &[".queue()", ".cache()", ".profiles()", ".profile("];

/// The framework crate's names a wiring crate may not use either: the scheduler's own plugin
/// handle and node-level machinery (a replay with its own `Handle` and `NodeInfo`s is a copy of
/// the scheduling cycle).
const FRAMEWORK_INTERNALS: &[&str] = &["Handle", "NodeInfo", "CycleState", "PodInfo"];

/// The `k8s_sched::...` paths a source file names (a `use k8s_sched::{a, b::C}` group gives `a`
/// and `b::C`).
fn sched_paths(text: &str) -> Vec<String> {
    paths_after(text, "k8s_sched::")
}

/// The `k8s_sched_framework::...` paths a source file names.
fn framework_paths(text: &str) -> Vec<String> {
    paths_after(text, "k8s_sched_framework::")
}

/// The paths a source file names after `prefix` (a crate name and `::`).
fn paths_after(text: &str, prefix: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find(prefix) {
        rest = &rest[i + prefix.len()..];
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

/// What `text` (a wiring crate's source file) uses of k8s-sched beyond its public API.
fn reach_ins_in(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for p in sched_paths(text) {
        if !SCHED_API.iter().any(|a| under(&p, a)) {
            out.push(format!("k8s_sched::{p}"));
        }
    }
    for m in SCHED_INTERNAL_METHODS {
        if text.contains(m) {
            out.push(format!("calls {m}"));
        }
    }
    for p in framework_paths(text) {
        if FRAMEWORK_INTERNALS.iter().any(|i| under(&p, i)) {
            out.push(format!("k8s_sched_framework::{p}"));
        }
    }
    out
}

#[test]
fn wiring_crates_use_only_the_schedulers_public_api() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files = Vec::new();
    let mut dirs = vec![
        root.join("crates/k8s-cluster/src"),
        root.join("crates/k8s-mini/src"),
        root.join("xtask/src"),
    ];
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
    for f in &files {
        let rel = f
            .strip_prefix(&root)
            .map(|p| p.to_string_lossy().replace('\\', "/"))
            .unwrap_or_default();
        let rel = rel.trim_start_matches("./").to_string();
        let text = std::fs::read_to_string(f).expect("readable");
        reach_ins.extend(
            reach_ins_in(&text)
                .into_iter()
                .map(|r| format!("{rel}: {r}")),
        );
    }
    assert!(
        reach_ins.is_empty(),
        "reach-ins into k8s-sched's internals (use its public API):\n{}",
        reach_ins.join("\n")
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

/// The check catches the reach-ins the paper-mode replay had before issue 16 (its own attempt on
/// the framework, its own Handle and NodeInfos, the queue's bookkeeping), and lets the public API
/// through.
#[test]
fn the_old_replay_reach_ins_are_caught() {
    let old = "use k8s_sched::binding_annotations;\n\
        use k8s_sched::plugins::gpu::frag::{node_frag, TypicalPod};\n\
        use k8s_sched::runtime::batch::{FilterScratch, ScoreScratch};\n\
        use k8s_sched_framework::{CycleState, Handle, NodeInfo, Status};\n\
        let q = cluster.scheduler().queue();";
    assert_eq!(
        reach_ins_in(old),
        [
            "k8s_sched::binding_annotations",
            "k8s_sched::plugins::gpu::frag",
            "k8s_sched::runtime::batch",
            "calls .queue()",
            "k8s_sched_framework::CycleState",
            "k8s_sched_framework::Handle",
            "k8s_sched_framework::NodeInfo",
        ]
    );
    let new = "use k8s_sched::config::TypicalPod;\n\
        use k8s_sched::simulator::{typical_pods, Simulator};\n\
        use k8s_sched::plugins::gpu::names as gpu;\n\
        let r = cluster.scheduler().retry_ticks(&key);";
    assert!(reach_ins_in(new).is_empty(), "{:?}", reach_ins_in(new));
}

/// k8s-sched's internals are not public at all: these modules of its root and of `runtime` are
/// declared `pub(crate)` (or private), so no other crate can reach into them.
#[test]
fn schedulers_internal_modules_are_private() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../k8s-sched/src");
    let internal: &[(&str, &[&str])] = &[
        (
            "lib.rs",
            &[
                "binding_annotations",
                "detached_client",
                "informer",
                "nominator",
                "podgroup_status",
                "pods_to_activate",
                "queueing_hints",
                "schedule_one",
                "scratch",
                "topology_counts",
                "waiting",
            ],
        ),
        (
            "runtime/mod.rs",
            &[
                "batch",
                "binding_cycle",
                "fused",
                "handle",
                "kernel",
                "node_arrays",
                "score_explain",
            ],
        ),
    ];
    let mut public = Vec::new();
    for (file, mods) in internal {
        let text = std::fs::read_to_string(root.join(file)).expect("readable");
        for m in *mods {
            assert!(
                text.contains(&format!("mod {m};")),
                "{file} declares no module {m}"
            );
            if text.contains(&format!("pub mod {m};")) {
                public.push(format!("{file}: {m}"));
            }
        }
    }
    assert!(public.is_empty(), "public internals: {public:?}");
}
