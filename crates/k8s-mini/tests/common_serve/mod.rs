//! The harness the kubectl tests share (`serve_kubectl.rs`, `serve_kubectl_writes.rs`): `serve`
//! started in-process on an ephemeral port (paused clock, recording), the real kubectl v1.32 run
//! against it, and the recorded session replayed by the scenario runner.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use k8s_mini::serve::{Clock, ServeOptions, Server};

pub const NODES: &str = "apiVersion: v1\nkind: Node\nmetadata: {name: node-1}\nstatus:\n  capacity: {cpu: \"8\", memory: 16Gi, pods: \"110\"}\n---\napiVersion: v1\nkind: Node\nmetadata: {name: node-2}\nstatus:\n  capacity: {cpu: \"8\", memory: 16Gi, pods: \"110\"}\n";

pub const WEB: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  labels: {app: web}\nspec:\n  replicas: 3\n  selector:\n    matchLabels: {app: web}\n  strategy:\n    type: RollingUpdate\n    rollingUpdate: {maxSurge: 1, maxUnavailable: 0}\n  template:\n    metadata:\n      labels: {app: web}\n    spec:\n      containers:\n      - name: app\n        image: app:v1\n        resources:\n          requests: {cpu: 500m, memory: 256Mi}\n";

pub struct Env {
    pub dir: PathBuf,
    pub server: Option<Server>,
}

impl Env {
    pub fn new(name: &str, record: bool) -> Env {
        Env::with_clock(name, record, Clock::Paused)
    }

    pub fn with_clock(name: &str, record: bool, clock: Clock) -> Env {
        Env::start(name, record, clock, None)
    }

    /// A server on a bundled scenario (`scenarios/<file>`), paused at t=0, recording.
    pub fn on_scenario(name: &str, file: &str) -> Env {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../scenarios")
            .join(file);
        Env::start(name, true, Clock::Paused, Some(path))
    }

    /// The recorded session replays to the server's state, byte for byte.
    pub fn assert_replays(&self) {
        let state = self.ok(&["get", "--raw", "/k8s-mini/v1/state"]);
        let recorded = self.dir.join("recorded.yaml");
        let replay = k8s_cluster::run_file(
            &recorded,
            &k8s_cluster::RunOptions {
                output: k8s_cluster::OutputFormat::Json,
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(replay.failures, 0, "{}", replay.stderr);
        assert!(
            replay.stdout == state,
            "the replay of {} differs:\n{}",
            recorded.display(),
            std::fs::read_to_string(&recorded).unwrap_or_default()
        );
    }

    pub fn start(name: &str, record: bool, clock: Clock, file: Option<PathBuf>) -> Env {
        assert!(
            Path::new("/usr/bin/kubectl").exists() || which_kubectl(),
            "kubectl is required for these tests (CI has /usr/bin/kubectl v1.32)"
        );
        let dir =
            std::env::temp_dir().join(format!("k8s-mini-serve-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("nodes.yaml"), NODES).unwrap();
        std::fs::write(dir.join("web.yaml"), WEB).unwrap();
        let server = k8s_mini::serve::start(&ServeOptions {
            file: file.unwrap_or_else(|| dir.join("nodes.yaml")),
            port: 0,
            clock,
            kubeconfig_out: Some(dir.join("kubeconfig")),
            record: record.then(|| dir.join("recorded.yaml")),
        })
        .unwrap();
        Env {
            dir,
            server: Some(server),
        }
    }

    pub fn server(&self) -> &Server {
        self.server.as_ref().unwrap()
    }

    pub fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new("kubectl");
        c.args(args)
            .env("KUBECONFIG", self.dir.join("kubeconfig"))
            .env("HOME", &self.dir)
            .current_dir(&self.dir);
        c
    }

    pub fn run(&self, args: &[&str]) -> Output {
        self.cmd(args).output().expect("kubectl runs")
    }

    /// kubectl's standard output; panics when it fails.
    pub fn ok(&self, args: &[&str]) -> String {
        let o = self.run(args);
        assert!(
            o.status.success(),
            "kubectl {args:?}: {}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8_lossy(&o.stdout).into_owned()
    }

    /// Runs kubectl while the clock moves one tick every 50 ms (kubectl waits on the cluster).
    pub fn while_ticking(&self, args: &[&str]) -> Output {
        let mut child = self
            .cmd(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let start = Instant::now();
        while child.try_wait().unwrap().is_none() {
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "kubectl {args:?} hangs"
            );
            self.server().step(1);
            std::thread::sleep(Duration::from_millis(50));
        }
        child.wait_with_output().unwrap()
    }
}

pub fn which_kubectl() -> bool {
    Command::new("kubectl")
        .arg("version")
        .arg("--client")
        .output()
        .is_ok_and(|o| o.status.success())
}

impl Drop for Env {
    fn drop(&mut self) {
        drop(self.server.take());
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

pub fn words(line: &str) -> Vec<&str> {
    line.split_whitespace().collect()
}
