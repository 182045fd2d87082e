//! A reader that closed standard output (`k8s-mini scenario x | head -1`) ends the program
//! quietly: exit 0 and no panic message, not exit 101 with "failed printing to stdout".

use std::process::{Command, Stdio};

/// Runs k8s-mini with `args`, its standard output a pipe whose read end is closed before it writes.
fn run_with_closed_stdout(args: &[&str]) -> (Option<i32>, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_k8s-mini"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("k8s-mini starts");
    // No reader: every write to standard output fails with EPIPE (Rust ignores SIGPIPE).
    drop(child.stdout.take());
    let out = child.wait_with_output().expect("k8s-mini ends");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn list_into_a_closed_pipe_exits_0_without_a_panic() {
    let (code, stderr) = run_with_closed_stdout(&["scenario", "--list"]);
    assert_eq!(code, Some(0), "stderr: {stderr}");
    assert!(!stderr.contains("panicked"), "stderr: {stderr}");
    assert_eq!(stderr, "");
}

#[test]
fn scenario_text_and_json_into_a_closed_pipe_exit_0_without_a_message() {
    for extra in [
        &[][..],
        &["--output", "json"][..],
        &["--output", "yaml"][..],
    ] {
        let mut args = vec!["scenario", "job-completions"];
        args.extend_from_slice(extra);
        let (code, stderr) = run_with_closed_stdout(&args);
        assert_eq!(code, Some(0), "{args:?}: stderr: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: stderr: {stderr}");
        assert!(!stderr.contains("error"), "{args:?}: stderr: {stderr}");
    }
}

#[test]
fn get_describe_and_events_into_a_closed_pipe_exit_0_without_a_message() {
    for args in [
        &["get", "pods", "-f", "job-completions"][..],
        &["get", "pods", "-f", "job-completions", "-o", "json"][..],
        &["describe", "pods", "-f", "job-completions"][..],
        &["events", "-f", "job-completions"][..],
    ] {
        let (code, stderr) = run_with_closed_stdout(args);
        assert_eq!(code, Some(0), "{args:?}: stderr: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: stderr: {stderr}");
        assert!(!stderr.contains("error"), "{args:?}: stderr: {stderr}");
    }
}
