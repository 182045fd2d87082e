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
    /// What it printed (upstream's probe output for the handler).
    pub output: String,
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
    pub failures: Vec<ProbeFailure>,
}

/// What a probe handler prints when the process does not answer (`down`) or answers unhealthy:
/// upstream `prober/http`, `prober/tcp`, `prober/exec`, `prober/grpc` outputs.
fn output(p: &Probe, pod_ip: &str, down: bool) -> String {
    let port = |v: &serde_json::Value| match v.get("port") {
        Some(serde_json::Value::Number(n)) => n.to_string(),
        Some(serde_json::Value::String(s)) => s.clone(),
        _ => String::new(),
    };
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
        for at in ts {
            let down = at < w.up;
            failures.push(ProbeFailure {
                at,
                probe,
                output: output(p, pod_ip, down),
            });
        }
    };
    let mut startup_ok = Some(start);
    if let Some(p) = &container.startup_probe {
        let t = Timing::of(p);
        let first = t.first(start, start);
        let (fails, kill, ok) = kill_probe(&t, first, &w, true, horizon);
        push(fails, ProbeType::Startup, p, &w);
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
            let (fails, kill, _) = kill_probe(&t, first, &w, false, horizon);
            push(fails, ProbeType::Liveness, p, &w);
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
            let k_up = t.index_at_or_after(first, w.up);
            let fails: Vec<Tick> = (0..k_up)
                .map(|k| t.probe_time(first, k))
                .take_while(|at| *at < horizon)
                .collect();
            push(fails, ProbeType::Readiness, p, &w);
            let at = t.probe_time(first, k_up + t.success - 1);
            ready = (at < horizon).then_some(at);
        }
    }
    let horizon = end.as_ref().map(|(t, _)| *t);
    failures.retain(|f| horizon.is_none_or(|h| f.at <= h));
    failures.sort_by_key(|f| f.at);
    Plan {
        started: start,
        startup_ok,
        ready: ready.filter(|r| horizon.is_none_or(|h| *r < h)),
        end,
        failures,
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
            p.failures[0].output,
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
        assert_eq!(p.failures.len(), 6);
        assert_eq!(
            p.failures[0].output,
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
}
