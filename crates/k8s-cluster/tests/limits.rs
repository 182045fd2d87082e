//! Inputs beyond the documented limits (docs/scenario-format.md "Limits") are refused as bad input
//! (the CLI's exit 2) with a message naming the file, and huge values inside the limits run without
//! a panic.

use std::io::Write;
use std::path::PathBuf;

use k8s_cluster::manifest::{MAX_FILE_BYTES, MAX_OBJECTS};
use k8s_cluster::{run_file, RunOptions};

fn temp(text: &str) -> PathBuf {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static N: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!("k8s-mini-limits-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("case-{}.yaml", N.fetch_add(1, Ordering::SeqCst)));
    std::fs::File::create(&path)
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    path
}

fn refused(text: &str, opts: &RunOptions) -> String {
    let path = temp(text);
    let e = run_file(&path, opts).expect_err("refused").to_string();
    assert!(
        e.starts_with(&path.display().to_string()) || e.starts_with("--ticks"),
        "{e}"
    );
    e
}

const NODE: &str = "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {capacity: {cpu: '4', memory: 8Gi}}\n---\n";

#[test]
fn a_file_over_64_mib_is_refused_before_it_is_read() {
    let path = temp("");
    // A sparse file: one byte over the limit, nothing written.
    std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(MAX_FILE_BYTES + 1)
        .unwrap();
    let e = run_file(&path, &RunOptions::default())
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        format!(
            "{}: the file is 67108865 bytes, more than the limit of 67108864 bytes (64 MiB)",
            path.display()
        )
    );
}

#[test]
fn a_list_over_the_object_limit_is_refused() {
    let mut text = String::from("apiVersion: v1\nkind: List\nitems: [");
    for _ in 0..=MAX_OBJECTS {
        text.push_str("{},");
    }
    text.push_str("]\n");
    let e = refused(&text, &RunOptions::default());
    assert!(
        e.ends_with(":1: items: 200001 items: more than 200000 objects in one input (the limit)"),
        "{e}"
    );
}

#[test]
fn ticks_above_the_tick_limit_are_refused() {
    let e = refused(
        "apiVersion: sim.k8s-mini.io/v1alpha1\nkind: Scenario\nmetadata: {name: s}\nspec: {ticks: 2147483648}\n",
        &RunOptions::default(),
    );
    assert!(
        e.ends_with(
            ": spec.ticks: Invalid value: 2147483648: must be at most 2147483647 (the tick limit)"
        ),
        "{e}"
    );
    let e = refused(
        "apiVersion: sim.k8s-mini.io/v1alpha1\nkind: Scenario\nmetadata: {name: s}\nspec:\n  expect:\n  - {from: 1, to: 18446744073709551615, pods: {count: 0}}\n",
        &RunOptions::default(),
    );
    assert!(
        e.contains(": spec.expect[0].to: Invalid value: 18446744073709551615"),
        "{e}"
    );
    let e = refused(
        NODE,
        &RunOptions {
            ticks: Some(u64::MAX),
            ..Default::default()
        },
    );
    assert_eq!(
        e,
        "--ticks: 18446744073709551615 is more than the tick limit, 2147483647"
    );
}

#[test]
fn names_longer_than_upstream_allows_are_refused() {
    let long = "a".repeat(254);
    let e = refused(
        &format!("apiVersion: v1\nkind: Namespace\nmetadata: {{name: {long}}}\n"),
        &RunOptions::default(),
    );
    assert!(e.contains("metadata.name"), "{e}");
    assert!(e.contains("must be no more than 63 characters"), "{e}");
    let e = refused(
        &format!("{NODE}apiVersion: v1\nkind: Pod\nmetadata: {{name: {long}}}\nspec: {{containers: [{{name: c, image: i}}]}}\n"),
        &RunOptions::default(),
    );
    assert!(e.contains("must be no more than 253 characters"), "{e}");
}

#[test]
fn huge_quantities_run_without_a_panic() {
    // 1e29 cpu and memory parse (below the ~1.7e29 bound), and 10^15 GPUs; the pod cannot fit and
    // stays Pending.
    let path = temp(&format!(
        "{NODE}apiVersion: v1\nkind: Pod\nmetadata: {{name: huge}}\nspec:\n  containers:\n  - name: c\n    image: i\n    resources: {{requests: {{cpu: '1e29', memory: '1e29', nvidia.com/gpu: '1000000000000000'}}, limits: {{nvidia.com/gpu: '1000000000000000'}}}}\n"
    ));
    let out = run_file(&path, &RunOptions::default()).unwrap();
    assert!(out.stdout.contains("FailedScheduling"), "{}", out.stdout);
    let e = refused(
        &format!("{NODE}apiVersion: v1\nkind: Pod\nmetadata: {{name: huge}}\nspec: {{containers: [{{name: c, image: i, resources: {{requests: {{cpu: '1e30'}}}}}}]}}\n"),
        &RunOptions::default(),
    );
    assert!(
        e.contains("spec.containers[0].resources.requests.cpu"),
        "{e}"
    );
}
