//! The design rule, checked from `cargo metadata`: library crates depend on a sibling crate only
//! through `k8s-types`; only `k8s-cluster` and `xtask` wire concrete crates together.

use std::process::Command;

#[test]
fn library_crates_depend_only_on_k8s_types() {
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
        names.contains(&"k8s-sched") && names.contains(&"k8s-types"),
        "{names:?}"
    );
    let mut violations = Vec::new();
    for p in packages {
        let name = p["name"].as_str().unwrap_or_default();
        if matches!(name, "k8s-cluster" | "xtask" | "k8s-types") {
            continue;
        }
        for d in p["dependencies"].as_array().into_iter().flatten() {
            let dep = d["name"].as_str().unwrap_or_default();
            let is_dev = d["kind"].as_str() == Some("dev");
            if names.contains(&dep) && dep != "k8s-types" && !is_dev {
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
