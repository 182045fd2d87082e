//! `serve`: a k8s-mini cluster as a Kubernetes API server over HTTP on 127.0.0.1, for kubectl and
//! other clients (docs/serve.md). The cluster is the one a scenario run builds (apiserver, store,
//! scheduler, controllers, kubelets; [`k8s_cluster::Session`]), owned by one thread that applies
//! requests between ticks; the HTTP side is axum.
//!
//! - `driver`: the clock and the request loop; `rest`: the verbs; `watch`: the watch cache;
//! - `discovery`, `resources`: what `/api` and `/apis` list; `table`: server-side printing;
//! - `patch`: merge, JSON and strategic merge patch; `fields`: field selectors;
//! - `openapi`: the `/openapi/v3` index kubectl checks before validating;
//! - `record`: `--record`, the session as a Scenario; `reply`: Status errors; `http`: axum;
//! - `fuzzing`: one request without a socket, for the fuzz target `http_request`.

mod collection;
mod custom;
mod discovery;
mod driver;
mod dry_run;
mod fields;
pub mod fuzzing;
mod http;
mod openapi;
mod patch;
mod record;
mod reply;
mod resources;
mod rest;
mod scale;
mod table;
mod watch;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Largest request body (upstream kube-apiserver's `--max-request-bytes` default for a write is
/// 3 MiB, `DefaultMaxRequestSizeBytes`).
pub const MAX_BODY_BYTES: usize = 3 * 1024 * 1024;

/// How simulated time moves.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Clock {
    /// Only `POST /k8s-mini/v1/step?ticks=N` moves it.
    Paused,
    /// This many ticks (simulated seconds) per real second.
    Speed(f64),
}

/// Options of [`serve`] / [`start`].
#[derive(Clone, Debug)]
pub struct ServeOptions {
    /// The scenario (or plain manifests) the cluster starts from.
    pub file: PathBuf,
    /// Port on 127.0.0.1 (0: any free port).
    pub port: u16,
    /// The clock.
    pub clock: Clock,
    /// Where to write a kubeconfig for this server.
    pub kubeconfig_out: Option<PathBuf>,
    /// Where to write the session as a Scenario.
    pub record: Option<PathBuf>,
}

/// Why the server could not start.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The input is bad (exit 2, as a scenario run).
    #[error("{0}")]
    Manifest(#[from] k8s_cluster::manifest::ManifestError),
    /// A socket or file error.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// The recording cannot be set up.
    #[error("--record: {0}")]
    Record(String),
}

/// A running server.
pub struct Server {
    addr: SocketAddr,
    to_driver: std::sync::mpsc::Sender<driver::Msg>,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    driver: Option<std::thread::JoinHandle<()>>,
    http: Option<std::thread::JoinHandle<()>>,
}

impl Server {
    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Runs `ticks` ticks now, as `POST /k8s-mini/v1/step?ticks=N` does (for a driver in the same
    /// process, e.g. a test moving the clock while kubectl waits); returns the tick reached.
    pub fn step(&self, ticks: u64) -> Option<u64> {
        let req = rest::Request {
            method: "POST".into(),
            path: "/k8s-mini/v1/step".into(),
            query: vec![("ticks".into(), ticks.to_string())],
            ..Default::default()
        };
        let (tx, rx) = tokio::sync::oneshot::channel();
        self.to_driver.send(driver::Msg::Request(req, tx)).ok()?;
        match rx.blocking_recv().ok()? {
            driver::Answer::Reply(r) => {
                serde_json::from_slice::<serde_json::Value>(&r.body).ok()?["tick"].as_u64()
            }
            driver::Answer::Watch { .. } => None,
        }
    }

    /// Blocks until the server stops.
    pub fn wait(mut self) {
        if let Some(h) = self.http.take() {
            let _ = h.join();
        }
        if let Some(h) = self.driver.take() {
            let _ = h.join();
        }
    }

    /// Stops the server (open watches end).
    pub fn shutdown(mut self) {
        self.stop();
    }

    fn stop(&mut self) {
        if let Some(s) = self.shutdown.take() {
            let _ = s.send(());
        }
        let _ = self.to_driver.send(driver::Msg::Shutdown);
        if let Some(h) = self.driver.take() {
            let _ = h.join();
        }
        if let Some(h) = self.http.take() {
            let _ = h.join();
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A kubeconfig for a server at `url` (no authentication), context `k8s-mini`, namespace
/// `default`.
pub fn kubeconfig(url: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: k8s-mini\n  cluster:\n    server: {url}\ncontexts:\n- name: k8s-mini\n  context:\n    cluster: k8s-mini\n    namespace: default\n    user: k8s-mini\ncurrent-context: k8s-mini\nusers:\n- name: k8s-mini\n  user: {{}}\n"
    )
}

/// Loads the cluster, binds 127.0.0.1:`port` and serves in background threads.
///
/// # Errors
/// Bad input ([`ServeError::Manifest`]), a port in use, an unwritable kubeconfig or recording.
pub fn start(opts: &ServeOptions) -> Result<Server, ServeError> {
    let listener = std::net::TcpListener::bind(("127.0.0.1", opts.port))?;
    listener.set_nonblocking(true)?;
    let addr = listener.local_addr()?;
    let recorder = match &opts.record {
        Some(out) => Some(record::Recorder::new(&opts.file, out).map_err(ServeError::Record)?),
        None => None,
    };
    let (to_driver, from_http) = std::sync::mpsc::channel();
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    let file = opts.file.clone();
    let clock = opts.clock;
    let address = addr.to_string();
    let driver = std::thread::Builder::new()
        .name("k8s-mini-cluster".into())
        .spawn(move || match k8s_cluster::Session::load(&file) {
            Ok(session) => {
                for w in session.warnings() {
                    eprintln!("warning: {w}");
                }
                let _ = ready_tx.send(Ok(()));
                driver::Driver::new(session, clock, recorder, address).run(&from_http);
            }
            Err(e) => {
                let _ = ready_tx.send(Err(e));
            }
        })?;
    match ready_rx.recv() {
        Ok(Ok(())) => {}
        Ok(Err(e)) => {
            let _ = driver.join();
            return Err(ServeError::Manifest(e));
        }
        Err(_) => {
            let _ = driver.join();
            return Err(ServeError::Io(std::io::Error::other(
                "the cluster thread stopped while loading",
            )));
        }
    }
    let shared = Arc::new(http::Shared {
        to_driver: std::sync::Mutex::new(to_driver.clone()),
        max_body: MAX_BODY_BYTES,
    });
    let (shutdown_tx, shutdown_rx) = tokio::sync::oneshot::channel::<()>();
    let http = std::thread::Builder::new()
        .name("k8s-mini-http".into())
        .spawn(move || {
            let rt = match tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                Ok(rt) => rt,
                Err(e) => {
                    eprintln!("k8s-mini serve: {e}");
                    return;
                }
            };
            rt.block_on(async move {
                let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
                    return;
                };
                let app = axum::Router::new()
                    .fallback(http::handle)
                    .with_state(shared);
                let _ = axum::serve(listener, app)
                    .with_graceful_shutdown(async move {
                        let _ = shutdown_rx.await;
                    })
                    .await;
            });
        })?;
    let server = Server {
        addr,
        to_driver,
        shutdown: Some(shutdown_tx),
        driver: Some(driver),
        http: Some(http),
    };
    if let Some(path) = &opts.kubeconfig_out {
        write_kubeconfig(path, &server.url())?;
    }
    Ok(server)
}

fn write_kubeconfig(path: &Path, url: &str) -> std::io::Result<()> {
    std::fs::write(path, kubeconfig(url))
}

/// [`start`], then serve until the process ends.
///
/// # Errors
/// As [`start`].
pub fn serve(opts: &ServeOptions) -> Result<(), ServeError> {
    let server = start(opts)?;
    eprintln!("k8s-mini serve: listening on {}", server.url());
    server.wait();
    Ok(())
}
