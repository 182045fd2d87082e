//! Probes on the virtual clock (upstream `pkg/kubelet/prober`: `worker.go` `doProbe`,
//! `prober.go`, `results`). k8s-mini runs no process, so a probe's answer follows the container's
//! declared behavior: the process answers from `readyAfterSeconds` after its start, and the
//! liveness (and startup) endpoint fails from `livenessFailsAfterSeconds`. Everything about one
//! attempt of a container is therefore known when it starts, and this module computes it as a
//! [`Plan`]: when the startup probe succeeds (or kills), when readiness turns true, and every failed
//! probe (each is an `Unhealthy` event upstream).
//!
//! Timing: a probe runs at `start + initialDelaySeconds + k * periodSeconds` (k = 0, 1, ...);
//! upstream's worker ticks from the moment it is created and skips results before the initial
//! delay, which differs by less than one period (docs/fidelity.md). Liveness and readiness probes
//! run only once the startup probe has succeeded (upstream `worker.doProbe`). A result flips after
//! `successThreshold` / `failureThreshold` consecutive results.

use k8s_types::core::{Container, Probe};
use k8s_types::Tick;

use crate::behavior::ContainerBehavior;

/// Upstream probe types as they appear in events (`Liveness probe failed: ...`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProbeType {
    /// livenessProbe.
    Liveness,
    /// readinessProbe.
    Readiness,
    /// startupProbe.
    Startup,
}

impl ProbeType {
    /// `Liveness`, `Readiness`, `Startup`.
    pub fn as_str(self) -> &'static str {
        match self {
            ProbeType::Liveness => "Liveness",
            ProbeType::Readiness => "Readiness",
            ProbeType::Startup => "Startup",
        }
    }
}

/// A probe's timing after defaulting (upstream `SetDefaults_Probe` values when unset).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Timing {
    delay: u64,
    period: u64,
    success: u64,
    failure: u64,
}

impl Timing {
    fn of(p: &Probe) -> Timing {
        let v = |x: Option<i32>, d: u64| {
            x.and_then(|x| u64::try_from(x).ok())
                .filter(|x| *x > 0)
                .unwrap_or(d)
        };
        Timing {
            delay: p
                .initial_delay_seconds
                .and_then(|x| u64::try_from(x).ok())
                .unwrap_or(0),
            period: v(p.period_seconds, 10),
            success: v(p.success_threshold, 1),
            failure: v(p.failure_threshold, 3),
        }
    }

    /// The k-th probe time counted from the probe at `first`.
    fn probe_time(&self, first: Tick, k: u64) -> Tick {
        first.saturating_add(k.saturating_mul(self.period))
    }

    /// The first probe at or after `start + delay`, and at or after `not_before`.
    fn first(&self, start: Tick, not_before: Tick) -> Tick {
        let base = start.saturating_add(self.delay);
        if not_before <= base {
            base
        } else {
            let k = (not_before - base).div_ceil(self.period);
            self.probe_time(base, k)
        }
    }

    /// Index of the first probe (from `first`) at or after `t`.
    fn index_at_or_after(&self, first: Tick, t: Tick) -> u64 {
        if t <= first {
            0
        } else {
            (t - first).div_ceil(self.period)
        }
    }
}

/// How an attempt ends by itself (before any deletion).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum End {
    /// The process exits with the code.
    Exit(u8),
    /// Memory use went above `limits.memory`.
    OomKilled,
    /// The kubelet kills it after failed probes of this type (liveness or startup).
    ProbeKill(ProbeType),
}

/// One failed probe: the tick, the probe type and its output.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProbeFailure {
    /// When the probe ran.
    pub at: Tick,
    /// Which probe.
    pub probe: ProbeType,
    /// What it printed (upstream's probe output for the handler), or with `errored` the error.
    pub output: String,
    /// The probe could not run (upstream: "errored and resulted in unknown state"), e.g. a named
    /// port the container does not declare.
    pub errored: bool,
}

/// The failed probes of an attempt, in time order: a few listed ones (startup and liveness, which
/// end in a kill or a success, and readiness before the process answers), and the readiness probe's
/// periodic failures while it cannot succeed, which may go on for as long as the container runs
/// (kept as a progression, not a list). At the same tick the listed ones come first.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Failures {
    listed: Vec<ProbeFailure>,
    periodic: Option<Periodic>,
}

/// A probe failing at `first + k * period` for every `k` with a time before `until`.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Periodic {
    first: Tick,
    period: Tick,
    until: Tick,
    template: ProbeFailure,
}

impl Periodic {
    /// How many of its failures fall before `t` (exclusive).
    fn count_before(&self, t: Tick) -> u64 {
        let t = t.min(self.until);
        if t <= self.first {
            0
        } else {
            (t - self.first).div_ceil(self.period)
        }
    }

    fn at(&self, k: u64) -> Option<ProbeFailure> {
        let at = self.first.checked_add(k.checked_mul(self.period)?)?;
        (at < self.until).then(|| ProbeFailure {
            at,
            ..self.template.clone()
        })
    }
}

impl Failures {
    /// The `i`-th failure in time order.
    pub fn get(&self, i: usize) -> Option<ProbeFailure> {
        let i = i as u64;
        let before = |t: Tick| self.periodic.as_ref().map_or(0, |p| p.count_before(t));
        for (j, f) in self.listed.iter().enumerate() {
            let pos = j as u64 + before(f.at);
            if i == pos {
                return Some(f.clone());
            }
            if i < pos {
                return self.periodic.as_ref()?.at(i - j as u64);
            }
        }
        self.periodic.as_ref()?.at(i - self.listed.len() as u64)
    }

    /// The failures in time order (endless while a readiness probe fails for as long as the
    /// container runs: bound it with `take` or `take_while`).
    pub fn iter(&self) -> impl Iterator<Item = ProbeFailure> + '_ {
        (0..).map_while(|i| self.get(i))
    }

    /// How many failures happen at or before `t`.
    pub fn count_until(&self, t: Tick) -> usize {
        let listed = self.listed.iter().filter(|f| f.at <= t).count();
        let periodic = self
            .periodic
            .as_ref()
            .map_or(0, |p| p.count_before(t.saturating_add(1)));
        listed.saturating_add(usize::try_from(periodic).unwrap_or(usize::MAX))
    }
}

/// Everything about one attempt of a container, known at its start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    /// The attempt's start.
    pub started: Tick,
    /// When `started` becomes true (the startup probe's success, or the start without one).
    pub startup_ok: Option<Tick>,
    /// When `ready` becomes true (the readiness probe's success, or `startup_ok` without one).
    pub ready: Option<Tick>,
    /// When and how the attempt ends by itself.
    pub end: Option<(Tick, End)>,
    /// Failed probes before the end, in time order.
    pub failures: Failures,
}

/// The port a probe dials (upstream `ResolveContainerPort`, pkg/kubelet/prober/prober.go): a
/// number as written; a name looked up in the container's `ports` (`findPortByName`), else parsed
/// as a number ("maybe it was an int stored as string"). `Err` carries the error upstream's probe
/// reports when neither works: Go's `strconv.Atoi: parsing "<name>": invalid syntax`.
fn resolve_port(v: &serde_json::Value, container: &Container) -> Result<String, String> {
    match v.get("port") {
        Some(serde_json::Value::Number(n)) => Ok(n.to_string()),
        Some(serde_json::Value::String(name)) => container
            .ports
            .iter()
            .find(|p| p.name.as_deref() == Some(name.as_str()))
            .map(|p| p.container_port.to_string())
            .or_else(|| name.parse::<i64>().ok().map(|n| n.to_string()))
            .ok_or_else(|| format!("strconv.Atoi: parsing {name:?}: invalid syntax")),
        _ => Ok(String::new()),
    }
}

/// The error that makes every run of the probe error out (the probe result `unknown`, counted as a
/// failure by the kubelet's `prober.probe`), if any: a named port the container does not have.
fn probe_error(p: &Probe, container: &Container) -> Option<String> {
    [&p.http_get, &p.tcp_socket]
        .into_iter()
        .flatten()
        .find_map(|h| resolve_port(h, container).err())
}

/// What a probe handler prints when the process does not answer (`down`) or answers unhealthy:
/// upstream `prober/http`, `prober/tcp`, `prober/exec`, `prober/grpc` outputs.
fn output(p: &Probe, container: &Container, pod_ip: &str, down: bool) -> String {
    let port = |v: &serde_json::Value| resolve_port(v, container).unwrap_or_default();
    if let Some(h) = &p.http_get {
        let path = h.get("path").and_then(|v| v.as_str()).unwrap_or("");
        let scheme = h
            .get("scheme")
            .and_then(|v| v.as_str())
            .unwrap_or("HTTP")
            .to_ascii_lowercase();
        if down {
            format!(
                "Get \"{scheme}://{pod_ip}:{}{path}\": dial tcp {pod_ip}:{}: connect: connection refused",
                port(h),
                port(h)
            )
        } else {
            "HTTP probe failed with statuscode: 500".into()
        }
    } else if let Some(t) = &p.tcp_socket {
        format!("dial tcp {pod_ip}:{}: connect: connection refused", port(t))
    } else if let Some(g) = &p.grpc {
        format!(
            "timeout: failed to connect service \"{pod_ip}:{}\" within {}s",
            port(g),
            p.timeout_seconds.unwrap_or(1)
        )
    } else {
        String::new()
    }
}

/// The answer window of the process for one attempt: `[up, down)` relative ticks.
struct Window {
    up: Tick,
    down: Option<Tick>,
}

impl Window {
    fn ok(&self, t: Tick, liveness: bool) -> bool {
        t >= self.up && !(liveness && self.down.is_some_and(|d| t >= d))
    }
}

/// A liveness-style probe (startup or liveness) run from `first`, up to `limit`: the failure times,
/// the kill time (`failureThreshold` failures in a row) and the first success. With
/// `stop_at_success` (a startup probe) it stops at the first success.
fn kill_probe(
    t: &Timing,
    first: Tick,
    w: &Window,
    stop_at_success: bool,
    limit: Tick,
) -> (Vec<Tick>, Option<Tick>, Option<Tick>) {
    let mut failures = Vec::new();
    let mut run = 0u64;
    let mut k = 0u64;
    let mut first_success = None;
    loop {
        let at = t.probe_time(first, k);
        if at > limit {
            return (failures, None, first_success);
        }
        if w.ok(at, true) {
            run = 0;
            if first_success.is_none() {
                first_success = Some(at);
            }
            if stop_at_success {
                return (failures, None, first_success);
            }
            // Jump to the first failing probe (if the endpoint ever fails).
            match w.down {
                Some(d) if d > at => k = t.index_at_or_after(first, d),
                Some(_) => k += 1,
                None => return (failures, None, first_success),
            }
            continue;
        }
        failures.push(at);
        run += 1;
        if run >= t.failure {
            return (failures, Some(at), first_success);
        }
        k += 1;
    }
}

/// The plan of an attempt of `container` starting at `start`: `limit_memory` is the container's
/// memory limit in bytes, `pod_ip` the IP the probes dial.
pub fn plan(
    container: &Container,
    behavior: &ContainerBehavior,
    attempt: u32,
    start: Tick,
    pod_ip: &str,
) -> Plan {
    let w = Window {
        up: start.saturating_add(behavior.ready_after_seconds.unwrap_or(0)),
        down: behavior
            .liveness_fails_after_seconds
            .map(|s| start.saturating_add(s)),
    };
    let run = behavior.run(attempt);
    let mut end: Option<(Tick, End)> = run
        .seconds
        .map(|s| (start.saturating_add(s), End::Exit(run.exit_code)));
    let limit = container
        .resources
        .limits
        .get("memory")
        .map(k8s_types::Quantity::value);
    if let Some(limit) = limit {
        if let Some(m) = behavior.memory.iter().find(|m| m.bytes.value() > limit) {
            let at = start.saturating_add(m.after_seconds);
            if end.as_ref().is_none_or(|(t, _)| at <= *t) {
                end = Some((at, End::OomKilled));
            }
        }
    }
    // Probes are computed up to the natural end (or a horizon far enough for any kill).
    let horizon = end.as_ref().map_or(Tick::MAX / 2, |(t, _)| *t);
    let mut failures: Vec<ProbeFailure> = Vec::new();
    let mut push = |ts: Vec<Tick>, probe: ProbeType, p: &Probe, w: &Window| {
        let error = probe_error(p, container);
        for at in ts {
            let down = at < w.up;
            failures.push(ProbeFailure {
                at,
                probe,
                output: error
                    .clone()
                    .unwrap_or_else(|| output(p, container, pod_ip, down)),
                errored: error.is_some(),
            });
        }
    };
    // A probe that errors out never succeeds, whatever the process does.
    let never = Window {
        up: Tick::MAX,
        down: None,
    };
    let window = |p: &Probe| {
        if probe_error(p, container).is_some() {
            &never
        } else {
            &w
        }
    };
    let mut periodic: Option<Periodic> = None;
    let mut startup_ok = Some(start);
    if let Some(p) = &container.startup_probe {
        let t = Timing::of(p);
        let first = t.first(start, start);
        let (fails, kill, ok) = kill_probe(&t, first, window(p), true, horizon);
        push(fails, ProbeType::Startup, p, window(p));
        startup_ok = ok;
        if let Some(k) = kill {
            end = Some((k, End::ProbeKill(ProbeType::Startup)));
        }
    }
    let mut ready = startup_ok;
    if let Some(s) = startup_ok {
        let horizon = end.as_ref().map_or(Tick::MAX / 2, |(t, _)| *t);
        if let Some(p) = &container.liveness_probe {
            let t = Timing::of(p);
            let first = t.first(start, s);
            let (fails, kill, _) = kill_probe(&t, first, window(p), false, horizon);
            push(fails, ProbeType::Liveness, p, window(p));
            if let Some(k) = kill {
                if end.as_ref().is_none_or(|(e, _)| k < *e) {
                    end = Some((k, End::ProbeKill(ProbeType::Liveness)));
                }
            }
        }
        if let Some(p) = &container.readiness_probe {
            let t = Timing::of(p);
            let first = t.first(start, s);
            let horizon = end.as_ref().map_or(Tick::MAX / 2, |(t, _)| *t);
            // Probes before the process is up fail; from then on `success` in a row make it ready.
            // Probes before the process is up fail (all of them, for a probe that errors out);
            // from then on `success` in a row make it ready.
            let up = window(p).up;
            let error = probe_error(p, container);
            let down = error.is_none();
            periodic = Some(Periodic {
                first,
                period: t.period,
                until: up.min(horizon),
                template: ProbeFailure {
                    at: first,
                    probe: ProbeType::Readiness,
                    output: error
                        .clone()
                        .unwrap_or_else(|| output(p, container, pod_ip, down)),
                    errored: error.is_some(),
                },
            });
            ready = (up < horizon).then(|| {
                let k_up = t.index_at_or_after(first, up);
                t.probe_time(first, k_up + t.success - 1)
            });
            ready = ready.filter(|at| *at < horizon);
        }
    }
    let horizon = end.as_ref().map(|(t, _)| *t);
    failures.retain(|f| horizon.is_none_or(|h| f.at <= h));
    failures.sort_by_key(|f| f.at);
    if let (Some(p), Some(h)) = (periodic.as_mut(), horizon) {
        p.until = p.until.min(h.saturating_add(1));
    }
    Plan {
        started: start,
        startup_ok,
        ready: ready.filter(|r| horizon.is_none_or(|h| *r < h)),
        end,
        failures: Failures {
            listed: failures,
            periodic,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::behavior::{MemoryStep, Run};
    use k8s_types::Quantity;

    fn http(period: i32, failure: i32, delay: i32) -> Probe {
        Probe {
            http_get: Some(serde_json::json!({"path": "/healthz", "port": 8080})),
            initial_delay_seconds: Some(delay),
            period_seconds: Some(period),
            failure_threshold: Some(failure),
            success_threshold: Some(1),
            timeout_seconds: Some(1),
            ..Default::default()
        }
    }

    /// The docs' liveness example (`livenessProbe` every 5 s, initial delay 5 s): a process that
    /// turns unhealthy 30 s after its start fails the probes at 30, 35 and 40 s and is killed at the
    /// third failure (40 s).
    #[test]
    fn liveness_kills_at_the_third_failure() {
        let c = Container {
            liveness_probe: Some(Box::new(http(5, 3, 5))),
            ..Default::default()
        };
        let b = ContainerBehavior {
            liveness_fails_after_seconds: Some(30),
            ..Default::default()
        };
        let p = plan(&c, &b, 0, 100, "10.244.1.2");
        assert_eq!(p.end, Some((140, End::ProbeKill(ProbeType::Liveness))));
        let at: Vec<Tick> = p.failures.iter().map(|f| f.at).collect();
        assert_eq!(at, vec![130, 135, 140]);
        assert_eq!(
            p.failures.get(0).unwrap().output,
            "HTTP probe failed with statuscode: 500"
        );
        assert_eq!(p.ready, Some(100));
    }

    /// A slow starter (ready after 60 s) with a startup probe of period 10 and failureThreshold 30
    /// starts at the probe at 60 s; liveness and readiness only run from then.
    #[test]
    fn startup_probe_holds_back_liveness_and_readiness() {
        let c = Container {
            startup_probe: Some(Box::new(http(10, 30, 0))),
            liveness_probe: Some(Box::new(http(10, 3, 0))),
            readiness_probe: Some(Box::new(http(5, 3, 0))),
            ..Default::default()
        };
        let b = ContainerBehavior {
            ready_after_seconds: Some(60),
            ..Default::default()
        };
        let p = plan(&c, &b, 0, 0, "10.244.1.2");
        assert_eq!(p.startup_ok, Some(60));
        assert_eq!(p.ready, Some(60));
        assert_eq!(p.end, None);
        // Startup failures at 0, 10, ..., 50: six, with upstream's connection-refused output.
        assert_eq!(p.failures.iter().count(), 6);
        assert_eq!(
            p.failures.get(0).unwrap().output,
            "Get \"http://10.244.1.2:8080/healthz\": dial tcp 10.244.1.2:8080: connect: connection refused"
        );
        // Without the startup probe the same liveness probe kills it at 20 s (0, 10, 20 fail).
        let c2 = Container {
            liveness_probe: Some(Box::new(http(10, 3, 0))),
            ..Default::default()
        };
        let p2 = plan(&c2, &b, 0, 0, "10.244.1.2");
        assert_eq!(p2.end, Some((20, End::ProbeKill(ProbeType::Liveness))));
    }

    #[test]
    fn readiness_needs_success_threshold_in_a_row() {
        let mut probe = http(5, 3, 2);
        probe.success_threshold = Some(2);
        let c = Container {
            readiness_probe: Some(Box::new(probe)),
            ..Default::default()
        };
        let b = ContainerBehavior {
            ready_after_seconds: Some(10),
            ..Default::default()
        };
        // Probes at 2, 7 (fail), 12, 17 (succeed): ready at 17.
        let p = plan(&c, &b, 0, 0, "ip");
        assert_eq!(p.ready, Some(17));
        assert_eq!(
            p.failures.iter().map(|f| f.at).collect::<Vec<_>>(),
            vec![2, 7]
        );
    }

    #[test]
    fn exits_and_oom_end_an_attempt() {
        let mut c = Container::default();
        c.resources
            .limits
            .insert("memory".into(), Quantity::parse("256Mi").unwrap());
        let b = ContainerBehavior {
            runs: vec![Run {
                seconds: Some(100),
                exit_code: 0,
            }],
            memory: vec![
                MemoryStep {
                    after_seconds: 0,
                    bytes: Quantity::parse("100Mi").unwrap(),
                },
                MemoryStep {
                    after_seconds: 45,
                    bytes: Quantity::parse("300Mi").unwrap(),
                },
            ],
            ..Default::default()
        };
        assert_eq!(plan(&c, &b, 0, 10, "ip").end, Some((55, End::OomKilled)));
        c.resources.limits.clear();
        assert_eq!(plan(&c, &b, 0, 10, "ip").end, Some((110, End::Exit(0))));
    }

    fn named(mut p: Probe, name: &str) -> Probe {
        p.http_get = Some(serde_json::json!({"path": "/healthz", "port": name}));
        p
    }

    /// A named port is the container port of that name (upstream `findPortByName`): the output
    /// dials 8080, not "http".
    #[test]
    fn a_named_port_is_the_containers_port_number() {
        let c = Container {
            ports: vec![k8s_types::core::ContainerPort {
                name: Some("http".into()),
                container_port: 8080,
                ..Default::default()
            }],
            readiness_probe: Some(Box::new(named(http(10, 3, 0), "http"))),
            ..Default::default()
        };
        let b = ContainerBehavior {
            ready_after_seconds: Some(15),
            ..Default::default()
        };
        let p = plan(&c, &b, 0, 0, "10.244.1.2");
        // Readiness probes at 0 and 10 fail (the process answers from 15), the one at 20 succeeds.
        let f: Vec<ProbeFailure> = p.failures.iter().collect();
        assert_eq!(f.iter().map(|f| f.at).collect::<Vec<_>>(), [0, 10]);
        assert!(!f[0].errored);
        assert_eq!(
            f[0].output,
            "Get \"http://10.244.1.2:8080/healthz\": dial tcp 10.244.1.2:8080: connect: connection refused"
        );
        assert_eq!(p.ready, Some(20));
    }

    /// A named port the container does not declare: upstream's `ResolveContainerPort` falls back to
    /// `strconv.Atoi`, which fails, so every probe errors ("resulted in unknown state") and counts as
    /// a failure: a liveness probe (period 10, failureThreshold 3) kills at 20 s; a readiness probe
    /// never succeeds and fails every period for as long as the container runs.
    #[test]
    fn an_undeclared_named_port_errors_every_probe() {
        let c = Container {
            liveness_probe: Some(Box::new(named(http(10, 3, 0), "http"))),
            ..Default::default()
        };
        let p = plan(&c, &ContainerBehavior::default(), 0, 0, "10.244.1.2");
        assert_eq!(p.end, Some((20, End::ProbeKill(ProbeType::Liveness))));
        let f = p.failures.get(2).unwrap();
        assert_eq!((f.at, f.errored), (20, true));
        assert_eq!(f.output, "strconv.Atoi: parsing \"http\": invalid syntax");
        let c = Container {
            readiness_probe: Some(Box::new(named(http(10, 3, 5), "http"))),
            ..Default::default()
        };
        let p = plan(&c, &ContainerBehavior::default(), 0, 100, "10.244.1.2");
        assert_eq!((p.ready, p.end), (None, None));
        // Probes at 105, 115, ...: the 1,000th (index 999) at 105 + 9,990.
        assert_eq!(p.failures.get(999).unwrap().at, 10_095);
        assert_eq!(p.failures.count_until(10_095), 1_000);
        assert_eq!(p.failures.count_until(104), 0);
        assert!(p.failures.get(999).unwrap().errored);
    }

    /// Listed failures (liveness) and the readiness progression merge in time order, listed first
    /// at the same tick.
    #[test]
    fn listed_and_periodic_failures_merge_in_time_order() {
        let c = Container {
            liveness_probe: Some(Box::new(http(10, 3, 0))),
            readiness_probe: Some(Box::new(http(5, 3, 0))),
            ..Default::default()
        };
        let b = ContainerBehavior {
            ready_after_seconds: Some(12),
            liveness_fails_after_seconds: Some(30),
            ..Default::default()
        };
        let p = plan(&c, &b, 0, 0, "10.244.1.2");
        // Liveness fails at 0 and 10 (not up yet), succeeds at 20, fails at 30, 40, 50 (killed at
        // 50); readiness fails at 0, 5, 10 and is ready at 15.
        let got: Vec<(Tick, ProbeType)> = p.failures.iter().map(|f| (f.at, f.probe)).collect();
        use ProbeType::{Liveness as L, Readiness as R};
        assert_eq!(
            got,
            [
                (0, L),
                (0, R),
                (5, R),
                (10, L),
                (10, R),
                (30, L),
                (40, L),
                (50, L)
            ]
        );
        assert_eq!(p.ready, Some(15));
    }
}
