//! Writing the output to a reader that goes away: a closed pipe (`| head`) ends the output quietly
//! (`output_closed`, no error), any other write failure is reported; the run itself, its
//! expectations and its exit code are the same either way.

use std::io::{self, Write};
use std::path::Path;

use k8s_cluster::{run_file_to, OutputFormat, RunOptions};

/// Accepts `room` bytes, then fails every write with `kind`.
struct Failing {
    room: usize,
    kind: io::ErrorKind,
}

impl Write for Failing {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.room == 0 {
            return Err(io::Error::new(self.kind, "reader gone"));
        }
        let n = buf.len().min(self.room);
        self.room -= n;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

fn run(output: OutputFormat, kind: io::ErrorKind) -> k8s_cluster::RunOutcome {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/rolling-update.yaml");
    let opts = RunOptions {
        output,
        ..Default::default()
    };
    let mut w = Failing { room: 100, kind };
    run_file_to(&path, &opts, &mut w).expect("scenario loads")
}

#[test]
fn a_closed_pipe_is_not_an_error_and_other_failures_are() {
    for output in [OutputFormat::Text, OutputFormat::Json, OutputFormat::Yaml] {
        let closed = run(output, io::ErrorKind::BrokenPipe);
        assert!(closed.output_closed, "{output:?}");
        assert_eq!(closed.output_error, None, "{output:?}");
        assert_eq!(closed.exit_code(), 0, "{output:?}");
        let full = run(output, io::ErrorKind::StorageFull);
        assert!(!full.output_closed, "{output:?}");
        assert!(
            full.output_error
                .as_deref()
                .is_some_and(|e| e.contains("reader gone")),
            "{output:?}: {:?}",
            full.output_error
        );
    }
}

/// `exit_after` (the command line's: the cluster is left to the process's exit instead of being
/// dropped) changes nothing that is written: text and json, stdout and stderr, expectation counts.
#[test]
fn exit_after_writes_the_same_output() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/rolling-update.yaml");
    for output in [OutputFormat::Text, OutputFormat::Json] {
        let outcome = |exit_after| {
            let o = k8s_cluster::run_file(
                &path,
                &RunOptions {
                    output,
                    exit_after,
                    ..Default::default()
                },
            )
            .expect("scenario loads");
            (o.stdout, o.stderr, o.failures, o.checks)
        };
        let (kept, left) = (outcome(false), outcome(true));
        assert!(!kept.0.is_empty() && kept.3 > 0, "{output:?}");
        assert_eq!(kept, left, "{output:?}");
    }
}
