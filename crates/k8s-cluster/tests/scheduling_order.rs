//! Pods of equal priority created in the same tick are scheduled in creation order, not name order.

use std::path::Path;

use k8s_cluster::{run_file, RunOptions};

#[test]
fn equal_priority_pods_queue_in_creation_order() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/creation-order.yaml");
    let out = run_file(&path, &RunOptions::default()).unwrap();
    assert_eq!(out.failures, 0, "{}", out.stdout);
    assert!(out
        .stdout
        .contains("Successfully assigned default/zz-first to n1"));
    assert!(
        out.stdout
            .lines()
            .any(|l| l.contains("FailedScheduling") && l.contains("pod/aa-second")),
        "{}",
        out.stdout
    );
    assert!(out
        .stdout
        .contains("0/1 nodes are available: 1 Insufficient cpu."));
}
