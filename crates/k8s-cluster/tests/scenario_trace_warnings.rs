//! A scenario's `spec.trace` reports the rows the trace importer accepts but flags (a pod
//! scheduled before it was created, GPU milli without GPUs) as the run's
//! warning lines (standard output in text mode, standard error in json/yaml mode), with the CSV
//! file and line, through the public `run_file`.

use std::path::PathBuf;

use k8s_cluster::{run_file, RunOptions};

fn dir() -> PathBuf {
    let d = std::env::temp_dir().join(format!("k8s-mini-trace-warn-{}", std::process::id()));
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

#[test]
fn flagged_trace_rows_become_run_warnings_with_file_and_line() {
    let d = dir();
    std::fs::write(
        d.join("nodes.csv"),
        "sn,cpu_milli,memory_mib,gpu,model\nn0,64000,262144,2,P100\n",
    )
    .expect("nodes");
    // Line 3: scheduled at 90, created at 100. Line 4: 500 milli-GPU with num_gpu 0.
    std::fs::write(
        d.join("pods.csv"),
        concat!(
            "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n",
            "p0,1000,1024,1,1000,,LS,Running,0,100,0\n",
            "p1,1000,1024,1,1000,,LS,Running,100,200,90\n",
            "p2,1000,1024,0,500,,LS,Running,0,100,0\n",
        ),
    )
    .expect("pods");
    let scenario = d.join("scenario.yaml");
    std::fs::write(
        &scenario,
        concat!(
            "apiVersion: sim.k8s-mini.io/v1alpha1\n",
            "kind: Scenario\n",
            "metadata: {name: t}\n",
            "spec:\n",
            "  trace: {nodes: nodes.csv, pods: pods.csv}\n",
            "  expect:\n",
            "  - pods: {scheduled: 3}\n",
        ),
    )
    .expect("scenario");
    let out = run_file(&scenario, &RunOptions::default()).expect("the scenario runs");
    assert_eq!(out.failures, 0, "{}", out.stdout);
    let pods = d.join("pods.csv").display().to_string();
    // Warnings are diagnostics: standard error, in text mode too.
    let warnings: Vec<&str> = out
        .stderr
        .lines()
        .filter(|l| l.starts_with("warning: ") && l.contains(&pods))
        .collect();
    assert_eq!(warnings.len(), 2, "{}", out.stderr);
    assert!(!out.stdout.contains("warning: "), "{}", out.stdout);
    assert!(warnings[0].contains(&format!("{pods}:3: pod p1: scheduled_time 90")));
    assert!(warnings[1].contains(&format!("{pods}:4: pod p2")));
}
