//! The thread that owns the cluster: it answers requests one at a time, between ticks, in the
//! order they arrive, and runs the ticks on the clock (real time times `--speed`, one tick per
//! simulated second) or when `POST /k8s-mini/v1/step` asks (`--paused`). Nothing else touches the
//! cluster, so every answer and every tick sees a consistent state.

use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use k8s_cluster::Session;
use k8s_types::Tick;
use serde_json::{json, Value};
use tokio::sync::mpsc::UnboundedReceiver;

use crate::serve::collection;
use crate::serve::custom;
use crate::serve::discovery;
use crate::serve::dry_run;
use crate::serve::fields::FieldSelector;
use crate::serve::openapi;
use crate::serve::record::Recorder;
use crate::serve::reply::{self, Reply};
use crate::serve::resources::{self, ResourceInfo};
use crate::serve::rest::{self, Request, Target};
use crate::serve::table::{self, Include};
use crate::serve::watch::{self, WatchCache, Watcher};
use crate::serve::Clock;

/// Most ticks one `step` request may run.
pub(crate) const MAX_STEP: u64 = 100_000;

/// Default and largest watch duration, in seconds of real time (upstream's
/// `--min-request-timeout` is 1800 s).
pub(crate) const WATCH_TIMEOUT_SECS: u64 = 1800;

/// A message to the driver.
pub(crate) enum Msg {
    Request(Request, tokio::sync::oneshot::Sender<Answer>),
    Shutdown,
}

/// The driver's answer.
pub(crate) enum Answer {
    Reply(Reply),
    Watch {
        rx: UnboundedReceiver<Vec<u8>>,
        timeout: Duration,
    },
}

pub(crate) struct Driver {
    session: Session,
    clock: Clock,
    cache: WatchCache,
    watchers: Vec<Watcher>,
    recorder: Option<Recorder>,
    server_address: String,
}

impl Driver {
    pub(crate) fn new(
        session: Session,
        clock: Clock,
        recorder: Option<Recorder>,
        server_address: String,
    ) -> Driver {
        let cache = WatchCache::new(session.api_ref().revision());
        Driver {
            session,
            clock,
            cache,
            watchers: Vec::new(),
            recorder,
            server_address,
        }
    }

    /// Runs until the channel closes or a Shutdown arrives.
    pub(crate) fn run(mut self, rx: &Receiver<Msg>) {
        self.save();
        let period = match self.clock {
            Clock::Speed(x) if x > 0.0 => Some(Duration::from_secs_f64(1.0 / x)),
            _ => None,
        };
        let mut next = Instant::now() + period.unwrap_or_default();
        loop {
            let msg = match period {
                None => match rx.recv() {
                    Ok(m) => m,
                    Err(_) => return,
                },
                Some(p) => {
                    let now = Instant::now();
                    if now >= next {
                        self.tick();
                        next += p;
                        // Far behind (a slow tick at a high speed): do not try to catch up.
                        if next + p * 10 < Instant::now() {
                            next = Instant::now() + p;
                        }
                        match rx.try_recv() {
                            Ok(m) => m,
                            Err(std::sync::mpsc::TryRecvError::Empty) => continue,
                            Err(std::sync::mpsc::TryRecvError::Disconnected) => return,
                        }
                    } else {
                        match rx.recv_timeout(next - now) {
                            Ok(m) => m,
                            Err(RecvTimeoutError::Timeout) => continue,
                            Err(RecvTimeoutError::Disconnected) => return,
                        }
                    }
                }
            };
            match msg {
                Msg::Shutdown => return,
                Msg::Request(req, tx) => {
                    // A bug reached by some request answers 500 instead of stopping the server
                    // (the apiserver's writes are single compare-and-swap operations: a failed
                    // request leaves the store as it was or with its one write done).
                    let answer = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        self.handle(&req)
                    }))
                    .unwrap_or_else(|_| {
                        Answer::Reply(reply::failure(
                            &k8s_types::status::Status::internal(
                                "an internal error occurred while serving the request",
                            ),
                            &reply::Details::default(),
                        ))
                    });
                    let _ = tx.send(answer);
                }
            }
        }
    }

    fn now(&self) -> Tick {
        self.session.now()
    }

    /// The resources served now: the built-in ones and those of the stored CRDs.
    fn served(&self) -> Vec<ResourceInfo> {
        custom::served(self.session.api_ref())
    }

    fn sync(&mut self) {
        let now = self.now();
        let mut kinds: Vec<k8s_types::object::Kind> = Vec::new();
        for r in self.served() {
            if !kinds.contains(&r.kind) {
                kinds.push(r.kind);
            }
        }
        self.cache
            .sync(self.session.api_ref(), &kinds, &mut self.watchers, now);
    }

    fn save(&self) {
        if let Some(r) = &self.recorder {
            if let Err(e) = r.write(self.now()) {
                eprintln!("k8s-mini serve: cannot write the recording: {e}");
            }
        }
    }

    /// One tick of the cluster; returns the scenario step lines it printed.
    pub(crate) fn tick(&mut self) -> Vec<String> {
        let lines = self.session.tick();
        self.sync();
        let now = self.now();
        if now.is_multiple_of(watch::BOOKMARK_EVERY) {
            let rev = self.cache.synced();
            self.watchers
                .retain(|w| !w.bookmarks || w.bookmark(rev, false));
        }
        self.save();
        lines
    }

    /// Answers one request.
    pub(crate) fn handle(&mut self, req: &Request) -> Answer {
        let segs: Vec<&str> = req.path.split('/').filter(|s| !s.is_empty()).collect();
        let get = req.method == "GET";
        let only_get = |r: Reply| if get { r } else { reply::method_not_allowed() };
        let all = self.served();
        let r = match segs.as_slice() {
            ["version"] => only_get(discovery::version()),
            ["healthz" | "livez" | "readyz"] => only_get(Reply {
                code: 200,
                content_type: "text/plain".into(),
                body: b"ok".to_vec(),
            }),
            ["api"] => only_get(discovery::api(&all, &req.accept, &self.server_address)),
            ["apis"] => only_get(discovery::apis(&all, &req.accept)),
            ["api", "v1"] => only_get(discovery::resource_list(&all, "", "v1")),
            ["apis", g] => only_get(discovery::group(&all, g)),
            ["apis", g, v] => only_get(discovery::resource_list(&all, g, v)),
            ["openapi", "v3"] => only_get(openapi::index(&all)),
            ["openapi", "v3", "api", "v1"] => only_get(openapi::group_version(&all, "", "v1")),
            ["openapi", "v3", "apis", g, v] => only_get(openapi::group_version(&all, g, v)),
            ["k8s-mini", "v1", "step"] if req.method == "POST" => self.step(req),
            ["k8s-mini", "v1", "clock"] if get => self.clock_json(),
            ["k8s-mini", "v1", "state"] if get => self.state(),
            ["k8s-mini", "v1", ..] => reply::method_not_allowed(),
            ["api", "v1", rest @ ..] => return self.resource(&all, "", "v1", rest, req),
            ["apis", g, v, rest @ ..] => return self.resource(&all, g, v, rest, req),
            _ => reply::not_found_path(),
        };
        Answer::Reply(r)
    }

    fn clock_json(&self) -> Reply {
        let (paused, speed) = match self.clock {
            Clock::Paused => (true, 0.0),
            Clock::Speed(x) => (false, x),
        };
        Reply::json(
            200,
            &json!({"tick": self.now(), "paused": paused, "speed": speed, "resourceVersion": self.session.api_ref().revision().to_string()}),
        )
    }

    fn state(&self) -> Reply {
        let mut body = Vec::new();
        match self.session.write_state_json(&mut body) {
            Ok(()) => Reply {
                code: 200,
                content_type: reply::JSON.into(),
                body,
            },
            Err(e) => reply::failure(
                &k8s_types::status::Status::internal(e.to_string()),
                &reply::Details::default(),
            ),
        }
    }

    fn step(&mut self, req: &Request) -> Reply {
        let n = match req.param("ticks").map(str::parse::<u64>) {
            None => 1,
            Some(Ok(n)) if n <= MAX_STEP => n,
            _ => {
                return reply::bad_request(format!("ticks must be an integer from 0 to {MAX_STEP}"))
            }
        };
        let mut lines = Vec::new();
        for _ in 0..n {
            lines.extend(self.tick());
        }
        Reply::json(
            200,
            &json!({"tick": self.now(), "resourceVersion": self.session.api_ref().revision().to_string(), "steps": lines}),
        )
    }

    fn target(
        all: &[ResourceInfo],
        group: &str,
        version: &str,
        rest: &[&str],
    ) -> Result<Target, Reply> {
        let find = |plural: &str| resources::find(all, group, version, plural);
        let known_gv = all.iter().any(|r| r.group == group && r.version == version);
        if !known_gv {
            return Err(reply::not_found_path());
        }
        let (info, namespace, name, sub): (Option<ResourceInfo>, _, _, _) = match rest {
            ["namespaces", ns, plural, tail @ ..] if find(plural).is_some() => (
                find(plural),
                Some(ns.to_string()),
                tail.first(),
                tail.get(1),
            ),
            [plural, tail @ ..] => (find(plural), None, tail.first(), tail.get(1)),
            [] => return Err(reply::not_found_path()),
        };
        let Some(info) = info else {
            return Err(reply::not_found_path());
        };
        let extra = match rest {
            ["namespaces", _, _, tail @ ..] if namespace.is_some() => tail.len() > 2,
            [_, tail @ ..] => tail.len() > 2,
            [] => false,
        };
        if extra || (namespace.is_some() && !info.kind.namespaced()) {
            return Err(reply::not_found_path());
        }
        if let Some(s) = sub {
            if info.subresource(s).is_none() {
                return Err(reply::not_found_path());
            }
        }
        Ok(Target {
            info,
            namespace,
            name: name.map(|s| s.to_string()),
            sub: sub.map(|s| s.to_string()),
        })
    }

    fn resource(
        &mut self,
        all: &[ResourceInfo],
        group: &str,
        version: &str,
        rest: &[&str],
        req: &Request,
    ) -> Answer {
        let t = match Self::target(all, group, version, rest) {
            Ok(t) => t,
            Err(r) => return Answer::Reply(r),
        };
        let namespaced_object = t.info.kind.namespaced() && t.namespace.is_none();
        // `binding` and `eviction` take a create only; the others get, update and patch.
        let action_sub = matches!(t.sub.as_deref(), Some("binding" | "eviction"));
        if req.method != "GET" {
            if let Err(r) = dry_run::check(req) {
                return Answer::Reply(r);
            }
        }
        let (r, recorded) = match (req.method.as_str(), &t.name) {
            ("GET", None) => {
                let watch = matches!(req.param("watch"), Some("true" | "1"));
                if watch {
                    return self.watch(&t, req);
                }
                (rest::list(&self.session, &t, req), None)
            }
            (_, Some(_)) if namespaced_object => (reply::not_found_path(), None),
            ("GET", Some(_)) if !action_sub => (rest::get(&self.session, &t, req), None),
            ("POST", None) if namespaced_object => (reply::method_not_allowed(), None),
            ("POST", None) => rest::create(&mut self.session, &t, req),
            ("POST", Some(_)) if action_sub => rest::create_subresource(&mut self.session, &t, req),
            ("PUT", Some(_)) if !action_sub => rest::update(&mut self.session, &t, req),
            ("PATCH", Some(_)) if !action_sub => rest::patch(&mut self.session, &t, req),
            ("DELETE", Some(_)) if t.sub.is_none() => rest::delete(&mut self.session, &t, req),
            ("DELETE", None) => collection::delete_collection(&mut self.session, &t, req),
            _ => (reply::method_not_allowed(), None),
        };
        if req.method != "GET" {
            // A dry run changed nothing: nothing to record.
            let recorded = recorded.filter(|_| !dry_run::is_dry_run(req));
            if let (Some(step), Some(rec)) = (recorded, self.recorder.as_mut()) {
                // A deletecollection records one `delete` step per object.
                match step {
                    Value::Array(steps) => {
                        for step in steps {
                            rec.push(self.session.now(), step);
                        }
                    }
                    step => rec.push(self.session.now(), step),
                }
            }
            self.sync();
            self.save();
        }
        Answer::Reply(r)
    }

    fn watch(&mut self, t: &Target, req: &Request) -> Answer {
        let bad = |m: String| Answer::Reply(reply::bad_request(m));
        let labels = match req
            .param("labelSelector")
            .map(k8s_types::labels::LabelSelector::parse)
        {
            Some(Err(e)) => return bad(e),
            Some(Ok(l)) => Some(l),
            None => None,
        };
        let fields =
            match FieldSelector::parse(&t.info.kind, req.param("fieldSelector").unwrap_or("")) {
                Ok(f) => f,
                Err(e) => return bad(e),
            };
        let table = if table::wants_table(&req.accept) {
            match Include::parse(req.param("includeObject")) {
                Ok(i) => Some(i),
                Err(e) => return bad(e),
            }
        } else {
            None
        };
        let rv = match req
            .param("resourceVersion")
            .filter(|v| !v.is_empty() && *v != "0")
        {
            None => None,
            Some(v) => match v.parse::<i64>() {
                Ok(n) => Some(n),
                Err(_) => return bad(format!("invalid resource version: {v:?}")),
            },
        };
        let timeout = match req.param("timeoutSeconds").map(str::parse::<u64>) {
            None => WATCH_TIMEOUT_SECS,
            Some(Ok(n)) => n.min(WATCH_TIMEOUT_SECS),
            Some(Err(_)) => return bad("timeoutSeconds must be a non-negative integer".into()),
        };
        let initial_end = matches!(req.param("sendInitialEvents"), Some("true"));
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        let w = Watcher {
            kind: t.info.kind.clone(),
            group_version: t.info.group_version(),
            namespace: t.namespace.clone(),
            labels,
            fields,
            table,
            columns: t.info.columns.clone(),
            bookmarks: matches!(req.param("allowWatchBookmarks"), Some("true" | "1")),
            sent_headers: false,
            tx: tx.clone(),
        };
        // Changes made since the last request or tick go out first.
        self.sync();
        match self
            .cache
            .start(self.session.api_ref(), w, rv, initial_end, self.now())
        {
            Ok(Some(w)) => self.watchers.push(w),
            Ok(None) => {}
            Err(line) => {
                let _ = tx.send(line);
                drop(tx);
            }
        }
        Answer::Watch {
            rx,
            timeout: Duration::from_secs(timeout),
        }
    }
}

#[cfg(test)]
#[path = "driver_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "driver_crd_tests.rs"]
mod crd_tests;
