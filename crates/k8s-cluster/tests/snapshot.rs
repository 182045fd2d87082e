//! `--snapshot-out` / `--snapshot-in`: a run resumed from a snapshot taken at tick T gives, from
//! tick T on, exactly the output of the uninterrupted run (compared byte for byte on a bundled
//! scenario), and taking a snapshot changes nothing in the run that takes it.

use std::path::{Path, PathBuf};

use k8s_cluster::{run_file, OutputFormat, RunOptions};

fn scenario(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios")
        .join(format!("{name}.yaml"))
}

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("k8s-mini-snapshot-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir.join(name)
}

fn run(name: &str, opts: &RunOptions) -> k8s_cluster::RunOutcome {
    run_file(&scenario(name), opts).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// The lines of a text output that belong to ticks `t >= from`: the header's run summary, step rows
/// and event rows of those ticks (with their spacing collapsed: the table's column widths depend on
/// the earlier rows too), and every table after the event table; expectation rows checked before
/// `from` are left out.
fn from_tick(out: &str, from: u64) -> Vec<String> {
    let mut keep = Vec::new();
    let mut section = "";
    for line in out.lines() {
        if line.starts_with("## ") {
            section = if line == "## events" {
                "events"
            } else if line == "## expectations" {
                "expectations"
            } else {
                "tables"
            };
            keep.push(line.to_string());
            continue;
        }
        let tick_of = |s: &str| s.parse::<u64>().ok();
        let keep_it = match section {
            "" => {
                line.starts_with("# ran")
                    || line
                        .strip_prefix("t=")
                        .and_then(|r| r.split(' ').next())
                        .and_then(tick_of)
                        .is_some_and(|t| t >= from)
            }
            "events" => line
                .split_whitespace()
                .next()
                .and_then(tick_of)
                .is_none_or(|t| t >= from),
            "expectations" => {
                let when = line.split_whitespace().nth(1).unwrap_or("");
                match when.strip_prefix("t=") {
                    Some(w) => w
                        .split("..")
                        .next()
                        .and_then(tick_of)
                        .is_some_and(|t| t >= from),
                    None => !line.starts_with("result:"),
                }
            }
            _ => true,
        };
        if keep_it && section == "events" {
            // The event table's column widths depend on the rows before `from` too.
            keep.push(line.split_whitespace().collect::<Vec<_>>().join(" "));
        } else if keep_it {
            keep.push(line.to_string());
        }
    }
    keep
}

fn check_resume(name: &str, at: u64) {
    let snap = tmp(&format!("{name}-{at}.yaml"));
    let plain = run(name, &RunOptions::default());
    let taking = run(
        name,
        &RunOptions {
            snapshot_out: Some(snap.clone()),
            snapshot_out_at_tick: Some(at),
            ..Default::default()
        },
    );
    assert_eq!(
        plain.stdout, taking.stdout,
        "taking a snapshot changed the run"
    );
    assert_eq!(taking.failures, 0, "{}", taking.stdout);
    let resumed = run(
        name,
        &RunOptions {
            snapshot_in: Some(snap.clone()),
            ..Default::default()
        },
    );
    let (a, b) = (from_tick(&plain.stdout, at), from_tick(&resumed.stdout, at));
    if a != b {
        let diff: Vec<String> = a
            .iter()
            .zip(&b)
            .filter(|(x, y)| x != y)
            .take(10)
            .map(|(x, y)| format!("-{x}\n+{y}"))
            .collect();
        panic!(
            "{name} resumed at {at} differs ({} vs {} lines):\n{}",
            a.len(),
            b.len(),
            diff.join("\n")
        );
    }
    assert_eq!(resumed.failures, 0, "{}", resumed.stdout);
    // The final state as data, byte for byte: every object, uid and resourceVersion.
    let json = |snapshot_in: Option<PathBuf>| {
        run(
            name,
            &RunOptions {
                output: OutputFormat::Json,
                snapshot_in,
                ..Default::default()
            },
        )
        .stdout
    };
    assert_eq!(json(None), json(Some(snap)), "{name}: final List differs");
}

/// rolling-update (52 ticks) snapshotted at tick 19, when the rollout is done and the old pods are
/// still Terminating: the resumed run deletes the same pod at t=20 (its name is picked from the
/// store), its replacement gets the same generated name, and the old pods go at the same ticks.
#[test]
fn rolling_update_resumed_at_19_matches_the_uninterrupted_run() {
    check_resume("rolling-update", 19);
}

/// gpu-device-plugin snapshotted at tick 5, its GPU pods running since tick 1: every pod keeps its device IDs
/// (the kubelets adopt them from the `k8s-mini.io/allocated-devices` annotation) and the rest of the
/// run is the same.
#[test]
fn gpu_device_plugin_resumed_at_5_keeps_its_devices() {
    check_resume("gpu-device-plugin", 5);
}

/// Configured GPU nodes resume with the same devices: the time-sliced node's physical GPU count
/// comes back from `nvidia.com/gpu.count` (the stored capacity counts replicas), the MIG nodes'
/// from the same label (the stored capacity counts MIG devices), and every pod keeps its replica
/// or MIG device IDs.
#[test]
fn shared_and_mig_gpu_nodes_resume_with_their_devices() {
    check_resume("time-slicing", 5);
    check_resume("mig-mixed", 4);
}

/// A snapshot asked for at a tick the run never reaches is a failed step, not a silent no-op; a
/// file that is not a snapshot is bad input naming the file and line.
#[test]
fn snapshot_errors_are_reported() {
    let snap = tmp("never.yaml");
    let out = run(
        "rolling-update",
        &RunOptions {
            snapshot_out: Some(snap.clone()),
            snapshot_out_at_tick: Some(500),
            ..Default::default()
        },
    );
    assert_eq!(out.exit_code(), 1);
    assert!(
        out.stdout
            .contains("t=52 snapshot FAILED: the run ended at tick 52 before tick 500"),
        "{}",
        out.stdout
    );
    assert!(!snap.exists());
    let not_a_snapshot = tmp("plain.yaml");
    std::fs::write(
        &not_a_snapshot,
        "apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n",
    )
    .expect("write");
    let e = run_file(
        &scenario("rolling-update"),
        &RunOptions {
            snapshot_in: Some(not_a_snapshot.clone()),
            ..Default::default()
        },
    )
    .map(|_| ())
    .unwrap_err()
    .to_string();
    assert_eq!(
        e,
        format!(
            "{}:1: not a snapshot: no Snapshot document followed by `---`",
            not_a_snapshot.display()
        )
    );
}

/// The Scenario's `spec.snapshotIn` (relative to the scenario file) resumes as `--snapshot-in` does.
#[test]
fn spec_snapshot_in_is_relative_to_the_scenario_file() {
    let snap = tmp("spec-19.yaml");
    run(
        "rolling-update",
        &RunOptions {
            snapshot_out: Some(snap.clone()),
            snapshot_out_at_tick: Some(19),
            ..Default::default()
        },
    );
    let text = std::fs::read_to_string(scenario("rolling-update")).expect("scenario");
    let with_field = text.replacen(
        "  ticks: 52\n",
        "  ticks: 52\n  snapshotIn: spec-19.yaml\n",
        1,
    );
    assert_ne!(with_field, text);
    let file = tmp("rolling-update-resumed.yaml");
    std::fs::write(&file, with_field).expect("write");
    let by_field = run_file(&file, &RunOptions::default()).unwrap_or_else(|e| panic!("{e}"));
    let by_flag = run(
        "rolling-update",
        &RunOptions {
            snapshot_in: Some(snap),
            ..Default::default()
        },
    );
    assert_eq!(by_field.stdout, by_flag.stdout);
    assert_eq!(by_field.failures, 0, "{}", by_field.stdout);
}
