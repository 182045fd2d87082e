//! Every crate inherits the workspace's package metadata (`[workspace.package]` in the root
//! Cargo.toml): version, edition, license, rust-version, repository and readme, and has a
//! description (its own or the workspace's); dependencies between workspace crates carry a version
//! as well as a path (`cargo package` needs it); the license file is there.

use std::process::Command;

const INHERITED: [&str; 6] = [
    "version",
    "edition",
    "license",
    "rust-version",
    "repository",
    "readme",
];

fn metadata() -> serde_json::Value {
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
    serde_json::from_slice(&out.stdout).expect("metadata is JSON")
}

#[test]
fn every_crate_inherits_the_workspace_metadata() {
    let meta = metadata();
    let packages = meta["packages"].as_array().expect("packages");
    assert!(packages.len() >= 12, "{} packages", packages.len());
    let mut problems = Vec::new();
    for p in packages {
        let name = p["name"].as_str().unwrap_or_default();
        let manifest = p["manifest_path"].as_str().unwrap_or_default();
        let text = std::fs::read_to_string(manifest).expect("Cargo.toml");
        let package = text
            .split("\n[")
            .find(|s| s.starts_with("[package]") || s.starts_with("package]"))
            .unwrap_or_default();
        for key in INHERITED {
            if !package.contains(&format!("\n{key}.workspace = true")) {
                problems.push(format!(
                    "{name}: {key} is not inherited ({key}.workspace = true)"
                ));
            }
        }
        if p["description"].as_str().is_none_or(str::is_empty) {
            problems.push(format!("{name}: no description"));
        }
        if p["license"] != "Apache-2.0" {
            problems.push(format!("{name}: license {}", p["license"]));
        }
        if p["rust_version"] != "1.88" {
            problems.push(format!("{name}: rust-version {}", p["rust_version"]));
        }
        for d in p["dependencies"].as_array().into_iter().flatten() {
            let local = d["path"].is_string();
            if local && d["kind"].as_str() != Some("dev") && d["req"] == "*" {
                problems.push(format!(
                    "{name}: dependency {} has a path but no version",
                    d["name"]
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_license_file_is_apache_2() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let text = std::fs::read_to_string(root.join("LICENSE")).expect("LICENSE at the root");
    assert!(text.contains("Apache License"), "LICENSE");
    assert!(text.contains("Version 2.0, January 2004"), "LICENSE");
}
