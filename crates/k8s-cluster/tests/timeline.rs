//! The timeline replay (`k8s_cluster::trace::timeline`) through the public API: a hand-computed
//! three-pod trace (contention on one T4 GPU, the scheduler's backoff), a slice of the bundled
//! Alibaba openb trace (Weng et al., USENIX ATC '23) replayed with and without idle-time skipping
//! (identical per-pod outcomes), and bad input.

use std::path::{Path, PathBuf};

use k8s_cluster::trace::timeline::{
    replay_timeline, PodOutcome, TimelineError, TimelineOptions, TimelineRun, MAX_EVERY_TICK,
};
use k8s_cluster::trace::{Policy, Trace, TraceError};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn fixture() -> Trace {
    fixture_with("pods.csv")
}

fn fixture_with(pods: &str) -> Trace {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/timeline");
    Trace::load(&dir.join("nodes.csv"), &dir.join(pods)).expect("fixture loads")
}

/// The replay's error message for a fixture pod file, named as the CLI would.
fn error_for(pods: &str, opts: TimelineOptions) -> Option<String> {
    replay_timeline(
        &fixture_with(pods),
        &TimelineOptions {
            pod_file: Some(pods.to_string()),
            ..opts
        },
    )
    .err()
    .map(|e| e.to_string())
}

fn openb_slice(nodes: usize, pods: usize) -> Trace {
    let dir = root().join("data/alibaba-gpu-v2023");
    let mut t = Trace::load(
        &dir.join("openb_node_list_gpu_node.csv"),
        &dir.join("openb_pod_list_default.csv"),
    )
    .expect("bundled trace loads");
    t.nodes.truncate(nodes);
    t.pods.truncate(pods);
    t
}

fn outcome(run: &TimelineRun, name: &str) -> PodOutcome {
    run.pods
        .iter()
        .find(|p| p.name == name)
        .cloned()
        .expect("pod in the run")
}

/// Times 100..130 s become ticks 1..31 (`1 + t - 100`). By hand, with the scheduler's queue rules
/// (`k8s_sched::queue` and `queueing_hints`, upstream's: a rejected pod waits in the unschedulable
/// pool until an event one of its rejecting plugins registered moves it, then retries after its
/// backoff of 1, 2, 4, 8 ticks; an assigned pod's add or update only moves pods with a
/// cross-topology term (upstream `AssignedPodAdded` / `AssignedPodUpdated`), its delete moves
/// everyone; a change written in tick t is seen by the scheduler at t + 1):
/// - tick 1: `a` (T4 only) binds to n1, the only T4; Running at tick 2.
/// - tick 3: `b` (0.5 T4) fails (n1's GPU is whole-allocated: GpuShare; n2 is not a T4:
///   NodeAffinity; backoff to 4); `c` (0.5 GPU, any model) binds to n2.
/// - ticks 4..11: `c` bound and started, `a` terminating: assigned-pod adds and updates, which do
///   not move `b` (it has no pod (anti-)affinity or spread term).
/// - tick 11: `a` is deleted (graceful; the kubelet finishes it in the same tick).
/// - tick 12: the scheduler sees `a` gone (an assigned-pod delete moves every pod; b's backoff
///   ended at 4) -> `b` binds to n1, GPU 0: pending 9 ticks (the trace says 1 s). Running at 13,
///   deleted at 21; `c` deleted at 31.
#[test]
fn hand_computed_contention_and_backoff() {
    let trace = fixture();
    for skip_idle in [true, false] {
        let run = replay_timeline(
            &trace,
            &TimelineOptions {
                policy: Policy::BestFit,
                skip_idle,
                ..TimelineOptions::default()
            },
        )
        .expect("runs");
        let a = outcome(&run, "a");
        assert_eq!(
            (a.created, a.bound, a.running, a.deleted),
            (1, Some(1), Some(2), 11)
        );
        assert_eq!((a.node.as_deref(), a.gpus.as_str()), (Some("n1"), "0"));
        let c = outcome(&run, "c");
        assert_eq!((c.bound, c.node.as_deref()), (Some(3), Some("n2")));
        let b = outcome(&run, "b");
        assert_eq!((b.created, b.bound, b.running), (3, Some(12), Some(13)));
        assert_eq!((b.node.as_deref(), b.gpus.as_str()), (Some("n1"), "0"));
        assert_eq!(b.pending_ticks(), Some(9));
        assert_eq!(b.trace_pending_seconds, Some(1));
        assert_eq!(run.capacity_milli, 2000);
        assert_eq!(run.last_tick, 31);
        // Peak: a (1000) + c (500) from tick 3 to 10 (a terminating still counts at 11? no: the
        // kubelet deletes it within tick 11).
        let peak = run.samples.iter().map(|s| s.gpu_milli_allocated).max();
        assert_eq!(peak, Some(1500));
        let at = |t: u64| run.samples.iter().find(|s| s.tick == t).copied();
        let s3 = at(3).expect("tick 3 ran");
        assert_eq!(
            (s3.gpu_milli_allocated, s3.pods_pending, s3.pods_running),
            (1500, 1, 1)
        );
        if skip_idle {
            // Ticks run after registration (tick 0): every tick while something is in flight or
            // a write may wake the queue (1-6), the trace events (11, 21, 31), the tick after a's
            // deletion (12), b starting (13).
            let ticks: Vec<u64> = run.samples.iter().map(|s| s.tick).collect();
            assert_eq!(ticks, vec![1, 2, 3, 4, 5, 6, 11, 12, 13, 21, 31]);
        } else {
            assert_eq!(run.samples.len(), 31);
        }
    }
}

/// The first 10 GPU nodes (P100, 1-2 GPUs each) and 300 pods of the default openb trace, time
/// compressed 1200x (one tick = 20 minutes of the trace, so pods overlap, contend and wait for
/// departures): skipping idle time must give exactly the per-pod outcomes of running every tick.
#[test]
fn skipping_idle_time_changes_no_outcome() {
    let trace = openb_slice(10, 300);
    let run = |skip_idle| {
        replay_timeline(
            &trace,
            &TimelineOptions {
                policy: Policy::Fgd,
                time_scale: 1200,
                skip_idle,
                ..TimelineOptions::default()
            },
        )
        .expect("runs")
    };
    let (fast, slow) = (run(true), run(false));
    assert_eq!(fast.pods, slow.pods);
    assert_eq!(fast.last_tick, slow.last_tick);
    assert!(fast.ticks_processed < slow.ticks_processed);
    // Every processed tick of the skipping run shows the same state as that tick of the full run.
    for s in &fast.samples {
        let t = slow.samples.iter().find(|x| x.tick == s.tick);
        assert_eq!(t, Some(s));
    }
    let bound = fast.pods.iter().filter(|p| p.bound.is_some()).count();
    assert_eq!(bound, EXPECTED_SLICE_BOUND);
    let waited = fast
        .pods
        .iter()
        .filter(|p| p.pending_ticks().is_some_and(|t| t > 0))
        .count();
    assert_eq!(waited, EXPECTED_SLICE_WAITED);
    let pending: u64 = fast.pods.iter().filter_map(PodOutcome::pending_ticks).sum();
    assert_eq!(pending, EXPECTED_SLICE_PENDING_SUM);
}

/// Bound pods and summed pending ticks of the slice above (regression values of this
/// implementation, equal in the skipping and the every-tick run).
const EXPECTED_SLICE_BOUND: usize = 83;
const EXPECTED_SLICE_WAITED: usize = 16;
const EXPECTED_SLICE_PENDING_SUM: u64 = 208;

#[test]
fn bad_input_is_reported() {
    let trace = fixture();
    let zero = TimelineOptions {
        time_scale: 0,
        ..TimelineOptions::default()
    };
    assert_eq!(
        replay_timeline(&trace, &zero).err(),
        Some(TimelineError::ZeroTimeScale)
    );
    let mut no_gpu = trace.clone();
    no_gpu.nodes.iter_mut().for_each(|n| n.gpus = 0);
    assert_eq!(
        replay_timeline(&no_gpu, &TimelineOptions::default()).err(),
        Some(TimelineError::Trace(TraceError::NoGpuNodes))
    );
    let mut untimed = trace.clone();
    untimed.pods[1].deletion_time = None;
    let e = replay_timeline(&untimed, &TimelineOptions::default()).err();
    assert_eq!(
        e.map(|e| e.to_string()),
        Some("line 3: pod \"b\": empty deletion_time: timeline mode needs creation_time and deletion_time on every pod".to_string())
    );
    // No pod has a deletion_time (a multigpu file has no such column).
    let mut multigpu = trace.clone();
    multigpu
        .pods
        .iter_mut()
        .for_each(|p| p.deletion_time = None);
    let e = replay_timeline(&multigpu, &TimelineOptions::default()).err();
    assert_eq!(
        e.map(|e| e.to_string()),
        Some("line 2: pod \"a\": no deletion_time: no pod of the file has one (an empty column, or none as in the multigpu files); timeline mode needs creation_time and deletion_time".to_string())
    );
    let mut backwards = trace;
    backwards.pods[2].deletion_time = Some(50);
    assert_eq!(
        replay_timeline(&backwards, &TimelineOptions::default()).err(),
        Some(TimelineError::DeletedBeforeCreated {
            at: "line 4: ".into(),
            pod: "c".into(),
            creation: 102,
            deletion: 50
        })
    );
    let file = TimelineOptions {
        pod_file: Some("pods.csv".into()),
        ..TimelineOptions::default()
    };
    assert_eq!(
        replay_timeline(&backwards, &file)
            .err()
            .map(|e| e.to_string()),
        Some("pods.csv:4: pod \"c\": deletion_time 50 is before creation_time 102".to_string())
    );
    let no_node = TimelineOptions {
        node_limit: Some(0),
        ..TimelineOptions::default()
    };
    assert_eq!(
        replay_timeline(&fixture(), &no_node).err(),
        Some(TimelineError::NoNodeLeft { available: 2 })
    );
}

/// `dup.csv` has pod `p0` on lines 2 and 3: refused before the run (the apiserver would refuse the
/// second create with AlreadyExists and the outcomes of the two would mix).
#[test]
fn duplicate_names_are_refused_with_file_and_line() {
    assert_eq!(
        error_for("dup.csv", TimelineOptions::default()),
        Some("dup.csv:3: pod \"p0\": duplicate name (first on line 2)".to_string())
    );
}

/// `P0 bad` (line 3) is not a DNS-1123 subdomain: the apiserver's create fails
/// (upstream `ValidateObjectMeta` with `ValidatePodName`) and the replay ends with its message.
#[test]
fn a_pod_the_apiserver_rejects_ends_the_replay() {
    let e = error_for("badname.csv", TimelineOptions::default()).unwrap_or_default();
    assert!(
        e.starts_with("badname.csv:3: pod \"P0 bad\": create failed: Pod \"P0 bad\" is invalid: metadata.name: Invalid value: \"P0 bad\": a lowercase RFC 1123 subdomain"),
        "{e}"
    );
}

/// `longlife.csv`: `p0` lives 0 s (created and deleted at tick 1, before the scheduler's pass),
/// `p1` (a T4 GPU) lives i64::MAX seconds, i.e. 9,223,372,036,854,775,808 ticks at one tick per
/// second. Running every tick is refused; skipping idle time runs 3 ticks after registration (1:
/// p1 bound, 2: Running, then its deletion tick).
#[test]
fn zero_lifetime_pods_and_the_every_tick_limit() {
    let every_tick = TimelineOptions {
        skip_idle: false,
        ..TimelineOptions::default()
    };
    assert_eq!(
        replay_timeline(&fixture_with("longlife.csv"), &every_tick).err(),
        Some(TimelineError::TooManyTicks {
            ticks: 9_223_372_036_854_775_809,
            limit: MAX_EVERY_TICK
        })
    );
    let run =
        replay_timeline(&fixture_with("longlife.csv"), &TimelineOptions::default()).expect("runs");
    let p0 = outcome(&run, "p0");
    assert_eq!((p0.created, p0.deleted, p0.bound), (1, 1, None));
    assert!(p0.gone_before_scheduling());
    let p1 = outcome(&run, "p1");
    assert_eq!((p1.bound, p1.node.as_deref()), (Some(1), Some("n1")));
    assert!(!p1.gone_before_scheduling());
    assert_eq!(run.last_tick, 9_223_372_036_854_775_808);
    let ticks: Vec<u64> = run.samples.iter().map(|s| s.tick).collect();
    assert_eq!(ticks, vec![1, 2, 9_223_372_036_854_775_808]);
    assert_eq!(run.time_scale, 1);
}

/// `Cluster::skip_to` over an idle stretch: the Lease renewals due in it are not written, and the
/// node lifecycle controller counts them as seen, so the node stays Ready. By hand: the kubelet
/// registers and renews at t=0, then at 10, 20; the monitor passes run at 0, 5, 10, ...
/// `skip_to(1005)` accounts for the renewals at 30..=1000 (the last at 1000) and moves the next pass
/// to 1005; the pass at 1005 finds the Lease unchanged since t=20 but its probe at 1000 (the pass
/// that would have seen the renewal at 1000), so 1005 - 1000 <= 40 keeps Ready True. The next
/// renewal is written at 1010. Without the accounting, the pass at 1005 would find the node silent
/// since t=20 (over the 40 s grace period) and mark it Unknown. Then the renewals and status reports
/// of ticks that run are accounted for as the timeline replay does
/// (`Cluster::account_lease_renewals`, `Cluster::account_status_reports`).
#[test]
fn skipped_lease_renewals_are_not_written_and_keep_the_node_ready() {
    use k8s_cluster::{Cluster, ClusterConfig};
    use k8s_types::apiserver::ApiExt;
    use k8s_types::coordination::{micro_time, Lease, NODE_LEASE_NAMESPACE};
    use k8s_types::core::Node;
    use k8s_types::meta::tick_timestamp;

    let trace = fixture();
    let mut cluster = Cluster::new(ClusterConfig::default()).unwrap();
    cluster.add_node(trace.nodes[0].to_node()).unwrap();
    let name = trace.nodes[0].to_node().metadata.name;
    let renew_time = |c: &Cluster| {
        c.api_ref()
            .get_typed::<Lease>(NODE_LEASE_NAMESPACE, &name)
            .unwrap()
            .spec
            .renew_time
            .unwrap()
    };
    let ready = |c: &Cluster| {
        let node = c.api_ref().get_typed::<Node>("", &name).unwrap();
        node.status
            .conditions
            .iter()
            .find(|c| c.type_ == "Ready")
            .map(|c| c.status.clone())
    };
    for _ in 0..=20 {
        cluster.tick();
    }
    assert_eq!(renew_time(&cluster), micro_time(20));
    cluster.skip_to(1005);
    let revision = cluster.api_ref().revision();
    cluster.tick();
    assert_eq!(cluster.heartbeats(), 0, "no renewal is due at 1005");
    assert_eq!(
        cluster.api_ref().revision(),
        revision,
        "the tick wrote nothing"
    );
    assert_eq!(renew_time(&cluster), micro_time(20));
    assert_eq!(ready(&cluster).as_deref(), Some("True"));
    while cluster.now() <= 1100 {
        cluster.tick();
    }
    assert_eq!(renew_time(&cluster), micro_time(1100));
    assert_eq!(ready(&cluster).as_deref(), Some("True"));
    // The timeline's ticks that run: the renewals due at 1110, ..., 1200 are accounted for before
    // their tick, never written; the passes at 1105, ..., 1200 see them, so Ready stays True.
    // The periodic status report due at 1200 likewise (reports at 0, 300, ...; the ones in the
    // skipped stretch were moved as if written): Ready's lastHeartbeatTime stays at the
    // registration's, t=0.
    let heartbeat = |c: &Cluster| {
        let node = c.api_ref().get_typed::<Node>("", &name).unwrap();
        let ready = node.status.conditions.iter().find(|c| c.type_ == "Ready");
        ready.and_then(|c| c.last_heartbeat_time.clone())
    };
    while cluster.now() <= 1200 {
        assert!(cluster.account_lease_renewals(cluster.now() + 1));
        assert!(cluster.account_status_reports(cluster.now() + 1));
        cluster.tick();
        assert_eq!(cluster.heartbeats(), 0);
    }
    assert_eq!(renew_time(&cluster), micro_time(1100));
    assert_eq!(heartbeat(&cluster), Some(tick_timestamp(0)));
    assert_eq!(ready(&cluster).as_deref(), Some("True"));
    // Ticks that run without accounting write both again: the renewal at 1210, the report at 1500.
    while cluster.now() <= 1500 {
        cluster.tick();
    }
    assert_eq!(renew_time(&cluster), micro_time(1500));
    assert_eq!(heartbeat(&cluster), Some(tick_timestamp(1500)));
    // A stopped kubelet: the monitor's passes would write (the node's grace period runs out), so
    // nothing is accounted.
    cluster.stop_kubelet(&name).unwrap();
    assert!(!cluster.account_lease_renewals(cluster.now() + 1));
    assert!(!cluster.account_status_reports(cluster.now() + 1));
}
