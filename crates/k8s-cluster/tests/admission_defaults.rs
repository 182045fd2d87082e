//! Pod defaults that kube-apiserver's admission plugins add, end to end through `run_file`:
//! DefaultTolerationSeconds's 300 s not-ready / unreachable tolerations let a pod schedule onto a
//! node with the not-ready NoExecute taint and keep a pod bound 300 ticks after its node becomes
//! unreachable (its kubelet stopped) (fixture `default-toleration-seconds.yaml`; upstream
//! `plugin/pkg/admission/defaulttolerationseconds`).

use std::path::Path;

use k8s_cluster::{run_file, RunOptions};

#[test]
fn default_tolerations_delay_eviction_by_300_ticks_and_allow_not_ready_nodes() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/default-toleration-seconds.yaml");
    let out = run_file(&path, &RunOptions::default()).expect("the scenario runs");
    // The fixture's expectations: `late` bound to the tainted node-2 at tick 3; no eviction of
    // `early` by tick 344, one at tick 345 (its node unreachable from tick 45).
    assert_eq!(out.failures, 0, "{}", out.stdout);
    assert_eq!(out.checks, 3);
    assert!(out
        .stdout
        .contains("345   Normal   TaintManagerEviction     pod/early    Marking for deletion Pod default/early"));
}
