//! Running a scenario file end to end: load the manifests, build the cluster, apply the initial
//! objects, run the ticks with the timed steps, check the expectations, and render the output.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use k8s_sched::config::KubeSchedulerConfiguration;
use k8s_sched::explain::PodKey;
use k8s_types::apiserver::{ApiClient, ApiExt};
use k8s_types::core::Namespace;
use k8s_types::meta::ObjectMeta;
use k8s_types::object::{Kind, Object};
use k8s_types::store::WatchEventType;
use k8s_types::Tick;

use crate::cluster::{Cluster, ClusterConfig, ClusterError};
use crate::expect::{check, CheckResult};
use crate::manifest::{self, Document, ManifestError, Source};
use crate::output;
use crate::scenario::{Expectation, Scenario};
use crate::steps::{advance_drains, decode_steps, run_step, ReadyStep};

/// Upper bound on ticks for a run without a fixed tick count.
pub const MAX_TICKS: u64 = 1000;

/// Output format.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OutputFormat {
    /// Events per tick, tables, expectation results.
    #[default]
    Text,
    /// The final state as a `v1` List in JSON.
    Json,
    /// The final state as a `v1` List in YAML.
    Yaml,
}

/// Options of a run (the CLI's flags).
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// Run exactly this many ticks (overrides the Scenario's `spec.ticks`).
    pub ticks: Option<u64>,
    /// A `KubeSchedulerConfiguration` file (overrides one in the scenario).
    pub scheduler_config: Option<std::path::PathBuf>,
    /// Output format.
    pub output: OutputFormat,
    /// `--explain <namespace>/<pod>`: record every scheduling attempt of this pod and print them
    /// in an `## explain <namespace>/<pod>` section (text mode) or on standard error (json/yaml).
    pub explain: Option<String>,
    /// Simulate every tick, without skipping the ticks in which nothing can happen (the output is
    /// the same; for tests that check exactly that).
    pub every_tick: bool,
}

/// The result of a run.
#[derive(Clone, Debug)]
pub struct RunOutcome {
    /// What goes to standard output ([`run_file`]; empty after [`run_file_to`], which wrote it).
    pub stdout: String,
    /// Why writing the output failed, if it did ([`run_file_to`]), other than a reader that closed
    /// the pipe.
    pub output_error: Option<String>,
    /// The reader closed the pipe before the output was written (`| head`); not an error of the run.
    pub output_closed: bool,
    /// What goes to standard error (warnings; expectation failures in json/yaml mode).
    pub stderr: String,
    /// Number of expectations (and steps) that failed.
    pub failures: usize,
    /// Number of expectation checks made.
    pub checks: usize,
}

impl RunOutcome {
    /// The process exit code: 0 when everything held, 1 when something failed.
    pub fn exit_code(&self) -> i32 {
        i32::from(self.failures > 0)
    }
}

/// Runs the scenario in `path`; the output is returned in [`RunOutcome::stdout`].
///
/// # Errors
/// A [`ManifestError`] for bad input (the CLI exits 2).
pub fn run_file(path: &Path, opts: &RunOptions) -> Result<RunOutcome, ManifestError> {
    let mut buf = Vec::new();
    let mut outcome = run_file_to(path, opts, &mut buf)?;
    outcome.stdout = String::from_utf8_lossy(&buf).into_owned();
    Ok(outcome)
}

/// Runs the scenario in `path`, writing what goes to standard output to `out` as it is produced:
/// the `--output json|yaml` List is serialized object by object, never held in memory whole.
///
/// # Errors
/// A [`ManifestError`] for bad input (the CLI exits 2).
pub fn run_file_to(
    path: &Path,
    opts: &RunOptions,
    out: &mut dyn std::io::Write,
) -> Result<RunOutcome, ManifestError> {
    if let Some(t) = opts.ticks.filter(|&t| t > crate::scenario::TICK_LIMIT) {
        let source = Source {
            file: "--ticks".to_string(),
            line: 0,
        };
        return Err(bad(
            &source,
            &format!(
                "{t} is more than the tick limit, {}",
                crate::scenario::TICK_LIMIT
            ),
        ));
    }
    let manifests = manifest::load_file(path)?;
    let mut scheduler_config: Option<KubeSchedulerConfiguration> = None;
    let mut scheduler_config_source: Option<Source> = None;
    // The lines of the configuration's fields, for errors found when the scheduler is built.
    let mut scheduler_config_positions = None;
    let mut scenario: Option<(Scenario, Source)> = None;
    let mut objects: Vec<(Object, Source)> = Vec::new();
    for loaded in manifests.docs {
        match loaded.doc {
            Document::Object(o) => objects.push((*o, loaded.source)),
            Document::SchedulerConfig(c) => {
                if scheduler_config.is_some() {
                    return Err(bad(
                        &loaded.source,
                        "only one KubeSchedulerConfiguration is allowed",
                    ));
                }
                scheduler_config = Some(*c);
                scheduler_config_source = Some(loaded.source);
                scheduler_config_positions = loaded.positions;
            }
            Document::Scenario(s) => {
                if scenario.is_some() {
                    return Err(bad(&loaded.source, "only one Scenario document is allowed"));
                }
                scenario = Some((*s, loaded.source));
            }
        }
    }
    if let Some(file) = &opts.scheduler_config {
        let m = manifest::load_file(file)?;
        let cfg = m.docs.into_iter().find_map(|d| match d.doc {
            Document::SchedulerConfig(c) => Some((*c, d.source, d.positions)),
            _ => None,
        });
        let (cfg, cfg_source, cfg_positions) = cfg.ok_or_else(|| {
            bad(
                &Source {
                    file: file.display().to_string(),
                    line: 1,
                },
                "no KubeSchedulerConfiguration document found",
            )
        })?;
        scheduler_config = Some(cfg);
        scheduler_config_source = Some(cfg_source);
        scheduler_config_positions = cfg_positions;
    }
    let (scenario, scenario_source) = scenario.unwrap_or_else(|| {
        (
            Scenario::default(),
            Source {
                file: path.display().to_string(),
                line: 1,
            },
        )
    });
    let config = ClusterConfig {
        scheduler: scheduler_config.unwrap_or_default(),
        kubelet: k8s_kubelet::KubeletConfig {
            startup_ticks: scenario.spec.kubelet.startup_ticks,
            behaviors: scenario
                .spec
                .behaviors
                .iter()
                .enumerate()
                .filter_map(|(i, r)| r.to_rule(&format!("spec.behaviors[{i}]")).ok())
                .collect(),
            ..Default::default()
        },
    };
    if let Err((path, message)) = scenario.validate() {
        return Err(ManifestError {
            source_loc: scenario_source.clone(),
            path,
            message,
        });
    }
    let config_source = scheduler_config_source.unwrap_or_else(|| scenario_source.clone());
    let mut cluster = Cluster::new(config).map_err(|e| match e {
        ClusterError::SchedulerConfig(e) => manifest::scheduler_config_error(
            &config_source,
            scheduler_config_positions.as_ref(),
            &e,
        ),
        e => bad(&config_source, &e.to_string()),
    })?;
    if let Some(target) = &opts.explain {
        let key = PodKey::parse(target).map_err(|e| {
            let source = Source {
                file: "--explain".to_string(),
                line: 0,
            };
            bad(&source, &e.to_string())
        })?;
        cluster.set_explain(Some(key));
    }
    let mut other_kinds = BTreeSet::new();
    let mut warnings = manifests.warnings;
    if let Some(t) = &scenario.spec.trace {
        objects.extend(crate::trace::scenario_objects(
            t,
            path,
            &scenario_source,
            &mut warnings,
        )?);
    }
    apply_initial(&mut cluster, objects, &mut other_kinds, &mut warnings)?;
    let steps = decode_steps(&scenario, &scenario_source)?;
    Ok(run_cluster(
        cluster,
        &scenario,
        steps,
        opts,
        Loaded {
            other_kinds,
            warnings,
            file: &path.display().to_string(),
        },
        out,
    ))
}

/// A writer that remembers the kind of its first failure (the serializers report it only as
/// text).
struct FailureKind<'a> {
    inner: &'a mut dyn std::io::Write,
    failed: Option<std::io::ErrorKind>,
}

impl std::io::Write for FailureKind<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let r = self.inner.write(buf);
        if let Err(e) = &r {
            self.failed.get_or_insert(e.kind());
        }
        r
    }

    fn flush(&mut self) -> std::io::Result<()> {
        let r = self.inner.flush();
        if let Err(e) = &r {
            self.failed.get_or_insert(e.kind());
        }
        r
    }
}

/// What loading the input left for the run's output: the untyped kinds seen (listed in the json/yaml
/// List), the load warnings and the input's file name.
struct Loaded<'a> {
    other_kinds: BTreeSet<(String, String, bool)>,
    warnings: Vec<String>,
    file: &'a str,
}

fn bad(source: &Source, message: &str) -> ManifestError {
    ManifestError {
        source_loc: source.clone(),
        path: String::new(),
        message: message.to_string(),
    }
}

/// Creation order of the initial objects: namespaces, priority classes, nodes, workload controllers,
/// then the rest, each group in file order (as `kubectl apply` of ordered files would need).
fn rank(o: &Object) -> u8 {
    match o {
        Object::Namespace(_) => 0,
        Object::PriorityClass(_) => 1,
        Object::Node(_) => 2,
        Object::Deployment(_) => 3,
        Object::ReplicaSet(_) | Object::DaemonSet(_) | Object::StatefulSet(_) => 4,
        Object::PodGroup(_) | Object::CronJob(_) => 5,
        _ => 6,
    }
}

/// A warning for each pod (or pod template) that asks for a `schedulerName` no profile of the
/// scheduler serves: as upstream, nothing schedules it, and it stays Pending without an event.
fn unserved_scheduler_warnings(
    cluster: &Cluster,
    objects: &[(Object, Source)],
    warnings: &mut Vec<String>,
) {
    for (obj, source) in objects {
        let (what, verb, who, spec) = match obj {
            Object::Pod(p) => ("pod", "asks", "it stays", &p.spec),
            Object::Deployment(d) => (
                "the pods of deployment",
                "ask",
                "they stay",
                &d.spec.template.spec,
            ),
            Object::ReplicaSet(r) => (
                "the pods of replicaset",
                "ask",
                "they stay",
                &r.spec.template.spec,
            ),
            Object::Job(j) => ("the pods of job", "ask", "they stay", &j.spec.template.spec),
            Object::DaemonSet(d) => (
                "the pods of daemonset",
                "ask",
                "they stay",
                &d.spec.template.spec,
            ),
            Object::StatefulSet(s) => (
                "the pods of statefulset",
                "ask",
                "they stay",
                &s.spec.template.spec,
            ),
            _ => continue,
        };
        let name = spec
            .scheduler_name
            .as_deref()
            .filter(|n| !n.is_empty())
            .unwrap_or(k8s_types::core::DEFAULT_SCHEDULER_NAME);
        if cluster.scheduler().profile(name).is_none() {
            let meta = obj.meta();
            let ns = Some(meta.namespace())
                .filter(|n| !n.is_empty())
                .unwrap_or("default");
            warnings.push(format!(
                "{source}: {what} {}/{} {verb} for schedulerName {name:?}, which no scheduler profile serves: {who} Pending",
                ns,
                meta.name
            ));
        }
    }
}

fn apply_initial(
    cluster: &mut Cluster,
    mut objects: Vec<(Object, Source)>,
    other_kinds: &mut BTreeSet<(String, String, bool)>,
    warnings: &mut Vec<String>,
) -> Result<(), ManifestError> {
    objects.sort_by_key(|(o, _)| rank(o));
    unserved_scheduler_warnings(cluster, &objects, warnings);
    cluster.begin_tick();
    // A dump's ownerReferences name the old uids; the apiserver assigns new ones, so map old -> new.
    let mut uid_map: BTreeMap<String, String> = BTreeMap::new();
    // Owner references whose owner was not loaded before the dependent: (uid, "Kind ns/name").
    let mut unresolved: BTreeMap<String, String> = BTreeMap::new();
    for (mut obj, source) in objects {
        let meta = obj.meta_mut();
        let old_uid = meta.uid.take();
        meta.resource_version = None;
        let owner_ns = Some(meta.namespace())
            .filter(|n| !n.is_empty())
            .unwrap_or("default")
            .to_string();
        for owner in &mut meta.owner_references {
            if let Some(new) = uid_map.get(&owner.uid) {
                owner.uid = new.clone();
            } else {
                unresolved.insert(
                    owner.uid.clone(),
                    format!("{} {owner_ns}/{}", owner.kind, owner.name),
                );
            }
        }
        let kind = obj.kind();
        if let Kind::Other {
            api_version,
            kind,
            namespaced,
        } = &kind
        {
            other_kinds.insert((api_version.clone(), kind.clone(), *namespaced));
        }
        let ns = obj.meta().namespace().to_string();
        if kind.namespaced() && !ns.is_empty() && ns_missing(cluster.api_ref(), &ns) {
            warnings.push(format!(
                "{source}: namespace {ns:?} is not in the input; created it"
            ));
            let created = cluster.apply(Object::Namespace(Namespace {
                metadata: ObjectMeta {
                    name: ns.clone(),
                    ..Default::default()
                },
                ..Default::default()
            }));
            created.map_err(|s| bad(&source, &s.message))?;
        }
        let (name, namespace) = (obj.meta().name.clone(), ns);
        cluster.apply(obj).map_err(|s| status_error(&source, &s))?;
        if let (Some(old), Ok(new)) = (old_uid, cluster.api_ref().get(&kind, &namespace, &name)) {
            if let Some(new_uid) = new.meta().uid.clone() {
                uid_map.insert(old, new_uid);
            }
        }
    }
    // Owners named by the input but not in it live outside it (a dump of pods without their
    // ReplicaSets): their dependents are kept, not garbage-collected at tick 0.
    unresolved.retain(|uid, _| !uid_map.contains_key(uid));
    if !unresolved.is_empty() {
        let names: Vec<&str> = unresolved.values().map(String::as_str).collect();
        warnings.push(format!(
            "{} owner(s) named by ownerReferences are not in the input; their dependents are kept as if they lived outside it: {}",
            names.len(),
            names.join(", ")
        ));
        cluster.set_external_owners(unresolved.into_keys().collect());
    }
    Ok(())
}

fn ns_missing(api: &dyn ApiClient, ns: &str) -> bool {
    api.get_typed::<Namespace>("", ns).is_err()
}

fn status_error(source: &Source, s: &k8s_types::status::Status) -> ManifestError {
    if s.causes.len() == 1 {
        let c = &s.causes[0];
        return ManifestError {
            source_loc: source.clone(),
            path: c.field.clone(),
            message: c.message.clone(),
        };
    }
    bad(source, &s.message)
}

fn expectation_when(e: &Expectation) -> String {
    match (e.at, e.from) {
        (Some(t), _) => format!("t={t}"),
        (None, Some(f)) => match e.to {
            Some(to) => format!("t={f}..{to}"),
            None => format!("t={f}.."),
        },
        (None, None) => "end".into(),
    }
}

#[allow(clippy::too_many_lines)]
fn run_cluster(
    mut cluster: Cluster,
    scenario: &Scenario,
    steps: Vec<ReadyStep>,
    opts: &RunOptions,
    loaded: Loaded<'_>,
    out: &mut dyn std::io::Write,
) -> RunOutcome {
    let Loaded {
        other_kinds,
        warnings,
        file,
    } = loaded;
    let fixed = opts.ticks.or(scenario.spec.ticks);
    let last_step = steps.iter().map(|s| s.step.at).max();
    let last_expect = scenario
        .spec
        .expect
        .iter()
        .filter_map(|e| e.at.or(e.to).or(e.from))
        .max();
    let quiet_needed = scenario.spec.kubelet.startup_ticks.saturating_add(11);
    let mut event_rows: Vec<Vec<String>> = Vec::new();
    let mut event_counts: BTreeMap<String, i32> = BTreeMap::new();
    let mut step_rows: Vec<String> = Vec::new();
    let mut results: Vec<(String, CheckResult)> = Vec::new();
    let mut range_failed: BTreeSet<usize> = BTreeSet::new();
    let mut step_failures = 0usize;
    let mut drains = Vec::new();
    let mut last_rev = 0i64;
    let mut quiet = 0u64;
    let mut last_active: Option<Tick> = None;
    // Whether the previous tick wrote nothing (then every component has seen every write).
    let mut previous_quiet = false;
    // The event table is printed in text mode only; json/yaml output carries the Events as objects.
    let text = opts.output == OutputFormat::Text;
    // Events written while loading the initial objects (e.g. kubelet registration).
    if text {
        collect_events(
            cluster.api_ref(),
            &mut last_rev,
            &mut event_counts,
            &mut event_rows,
        );
    }
    loop {
        let t = cluster.now();
        match fixed {
            Some(n) if t >= n => break,
            None if t >= MAX_TICKS => break,
            None if quiet >= quiet_needed
                && last_step.is_none_or(|s| t > s)
                && last_expect.is_none_or(|x| t > x)
                && cluster.next_pod_wakeup().is_none()
                && drains.is_empty() =>
            {
                break
            }
            _ => {}
        }
        if previous_quiet && !opts.every_tick && drains.is_empty() {
            let to = idle_until(&cluster, scenario, &steps, fixed, quiet, quiet_needed);
            let reached = cluster.skip_idle(to);
            if reached > t {
                quiet += reached - t;
                continue;
            }
        }
        cluster.begin_tick();
        let rev_before = cluster.api_ref().revision();
        for rs in steps.iter().filter(|s| s.step.at == t) {
            match run_step(&mut cluster, rs, &mut drains) {
                Ok(what) => step_rows.push(format!("t={t} step: {what}")),
                Err(e) => {
                    step_failures += 1;
                    step_rows.push(format!("t={t} step FAILED: {e}"));
                }
            }
        }
        step_failures += advance_drains(&mut cluster, &mut drains, &mut step_rows);
        cluster.tick();
        if text {
            collect_events(
                cluster.api_ref(),
                &mut last_rev,
                &mut event_counts,
                &mut event_rows,
            );
        }
        // Lease renewals alone (every 10 s per node) are not activity; the node lifecycle
        // controller reads them in the tick that writes them (before any other reader).
        previous_quiet = cluster.api_ref().revision() - cluster.heartbeats() == rev_before;
        if previous_quiet {
            quiet += 1;
        } else {
            quiet = 0;
            last_active = Some(t);
        }
        for (i, e) in scenario.spec.expect.iter().enumerate() {
            let in_range =
                e.at.is_none() && e.from.is_some_and(|f| t >= f) && e.to.is_none_or(|to| t <= to);
            if e.at == Some(t) {
                for r in check(cluster.api_ref(), e) {
                    results.push((expectation_when(e), r));
                }
            } else if in_range && !range_failed.contains(&i) {
                for r in check(cluster.api_ref(), e) {
                    if let Some(f) = &r.failure {
                        range_failed.insert(i);
                        results.push((
                            expectation_when(e),
                            CheckResult {
                                what: r.what.clone(),
                                failure: Some(format!("at t={t}: {f}")),
                            },
                        ));
                    }
                }
            }
        }
    }
    let end = cluster.now();
    for (i, e) in scenario.spec.expect.iter().enumerate() {
        if let Some(at) = e.at {
            if at >= end {
                results.push((
                    expectation_when(e),
                    CheckResult {
                        what: format!("expectation #{i}"),
                        failure: Some(format!("the run ended at tick {end} before tick {at}")),
                    },
                ));
            }
        } else if let Some(from) = e.from {
            let last = e.to.unwrap_or(from);
            if last >= end || from >= end {
                results.push((
                    expectation_when(e),
                    CheckResult {
                        what: format!("expectation #{i}"),
                        failure: Some(format!(
                            "the run ended at tick {end} before tick {}",
                            from.max(last)
                        )),
                    },
                ));
            } else if !range_failed.contains(&i) {
                for r in check(cluster.api_ref(), e) {
                    results.push((
                        expectation_when(e),
                        CheckResult {
                            what: r.what,
                            failure: None,
                        },
                    ));
                }
            }
        } else {
            for r in check(cluster.api_ref(), e) {
                results.push((expectation_when(e), r));
            }
        }
    }
    for d in &drains {
        step_failures += 1;
        step_rows.push(format!(
            "t={end} drain {} FAILED: the run ended at tick {end} before the node was drained",
            d.node()
        ));
    }
    for rs in steps.iter().filter(|s| s.step.at >= end) {
        step_failures += 1;
        step_rows.push(format!(
            "t={} step FAILED: the run ended at tick {end} before this step",
            rs.step.at
        ));
    }
    let expectation_failures = results.iter().filter(|(_, r)| r.failure.is_some()).count();
    let failures = step_failures + expectation_failures;
    let checks = results.len();
    let mut stdout = String::new();
    let mut stderr = String::new();
    let mut output_error = None;
    let mut recorded = FailureKind {
        inner: out,
        failed: None,
    };
    let out: &mut dyn std::io::Write = &mut recorded;
    let name = if scenario.metadata.name.is_empty() {
        file.to_string()
    } else {
        scenario.metadata.name.clone()
    };
    match opts.output {
        OutputFormat::Text => {
            stdout.push_str(&format!("# scenario {name}\n"));
            if !scenario.spec.description.is_empty() {
                stdout.push_str(&format!("# {}\n", scenario.spec.description.trim()));
            }
            let stable = last_active.map_or_else(
                || "no changes".to_string(),
                |t| format!("last change at tick {t}"),
            );
            let plural = if end == 1 { "" } else { "s" };
            stdout.push_str(&format!("# ran {end} tick{plural} ({stable})\n"));
            for w in &warnings {
                stdout.push_str(&format!("warning: {w}\n"));
            }
            for s in &step_rows {
                stdout.push_str(s);
                stdout.push('\n');
            }
            stdout.push_str("\n## events\n");
            stdout.push_str(&output::table(&output::EVENT_HEADER, &event_rows));
            stdout.push_str("\n## pods\n");
            stdout.push_str(&output::pods_table(cluster.api_ref(), end));
            stdout.push_str("\n## nodes: allocated resources\n");
            stdout.push_str(&output::nodes_table(cluster.api_ref()));
            if let Some(t) = crate::output_services::services_table(cluster.api_ref(), end) {
                stdout.push_str("\n## services\n");
                stdout.push_str(&t);
            }
            if let Some(t) = crate::output_services::endpoint_slices_table(cluster.api_ref(), end) {
                stdout.push_str("\n## endpointslices\n");
                stdout.push_str(&t);
            }
            if let Some(section) = explain_section(&cluster, opts) {
                stdout.push('\n');
                stdout.push_str(&section);
            }
            if checks > 0 || failures > 0 {
                stdout.push_str("\n## expectations\n");
                stdout.push_str(&render_results(&results));
                let held = results.iter().filter(|(_, r)| r.failure.is_none()).count();
                let steps_note = match step_failures {
                    0 => String::new(),
                    1 => ", 1 step failed".to_string(),
                    n => format!(", {n} steps failed"),
                };
                stdout.push_str(&format!(
                    "\nresult: {held}/{checks} expectations held{steps_note}\n"
                ));
            }
        }
        OutputFormat::Json | OutputFormat::Yaml => {
            let list = output::ListView::new(cluster.api_ref(), &other_kinds);
            let written = if opts.output == OutputFormat::Json {
                serde_json::to_writer_pretty(&mut *out, &list)
                    .map_err(|e| e.to_string())
                    .and_then(|()| out.write_all(b"\n").map_err(|e| e.to_string()))
            } else {
                serde_yaml::to_writer(&mut *out, &list).map_err(|e| e.to_string())
            };
            output_error = written.err();
            for w in &warnings {
                stderr.push_str(&format!("warning: {w}\n"));
            }
            if let Some(section) = explain_section(&cluster, opts) {
                stderr.push_str(&section);
            }
            for s in step_rows.iter().filter(|s| s.contains("FAILED")) {
                stderr.push_str(s);
                stderr.push('\n');
            }
            stderr.push_str(&render_results(
                &results
                    .iter()
                    .filter(|(_, r)| r.failure.is_some())
                    .cloned()
                    .collect::<Vec<_>>(),
            ));
        }
    }
    if !stdout.is_empty() && output_error.is_none() {
        output_error = out
            .write_all(stdout.as_bytes())
            .err()
            .map(|e| e.to_string());
    }
    if output_error.is_none() {
        output_error = out.flush().err().map(|e| e.to_string());
    }
    let output_closed = recorded.failed == Some(std::io::ErrorKind::BrokenPipe);
    if output_closed {
        output_error = None;
    }
    RunOutcome {
        stdout: String::new(),
        output_error,
        output_closed,
        stderr,
        failures,
        checks,
    }
}

/// Fast-forward: how far the run may jump from the current tick after a tick that wrote nothing,
/// the output staying that of running every tick. The earliest of: the cluster's next wake-up
/// ([`Cluster::next_wakeup`]), the next step, the next expectation tick (`at`, `from`; inside a
/// range nothing changes, so each skipped tick would check what the last one did), and the end of
/// the run: the fixed tick count, or without one [`MAX_TICKS`] and the first tick at which the
/// "nothing changes" end could hold (enough quiet ticks, past the last step and expectation).
fn idle_until(
    cluster: &Cluster,
    scenario: &Scenario,
    steps: &[ReadyStep],
    fixed: Option<u64>,
    quiet: u64,
    quiet_needed: u64,
) -> Tick {
    let t = cluster.now();
    let mut to = match fixed {
        Some(n) => n,
        None => {
            let last_step = steps.iter().map(|s| s.step.at).max();
            let last_expect = scenario
                .spec
                .expect
                .iter()
                .filter_map(|e| e.at.or(e.to).or(e.from))
                .max();
            let quiet_end = t.saturating_add(quiet_needed.saturating_sub(quiet));
            let after = |x: Option<u64>| x.map_or(0, |x| x.saturating_add(1));
            MAX_TICKS.min(quiet_end.max(after(last_step)).max(after(last_expect)))
        }
    };
    let future = |x: u64| (x >= t).then_some(x);
    let upcoming = steps
        .iter()
        .filter_map(|s| future(s.step.at))
        .chain(
            scenario
                .spec
                .expect
                .iter()
                .filter_map(|e| e.at.or(e.from))
                .filter_map(future),
        )
        .chain(cluster.next_wakeup());
    for x in upcoming {
        to = to.min(x);
    }
    to
}

/// The `## explain <namespace>/<pod>` section, when `--explain` was given; when the key names a
/// PodGroup, the gang view `## explain podgroup <namespace>/<name>` instead.
fn explain_section(cluster: &Cluster, opts: &RunOptions) -> Option<String> {
    let key = PodKey::parse(opts.explain.as_deref()?).ok()?;
    let api = cluster.api_ref();
    if let Ok(pg) = api.get_typed::<k8s_types::scheduling::PodGroup>(&key.namespace, &key.name) {
        let pods: Vec<k8s_types::core::Pod> = api.list_typed(Some(&key.namespace), None);
        return Some(format!(
            "## explain podgroup {key}\n{}",
            k8s_sched::explain::render_pod_group(&key, &pg, &pods, cluster.explanations())
        ));
    }
    Some(format!(
        "## explain {key}\n{}",
        k8s_sched::explain::render(&key, cluster.explanations())
    ))
}

fn render_results(results: &[(String, CheckResult)]) -> String {
    let mut out = String::new();
    for (when, r) in results {
        match &r.failure {
            None => out.push_str(&format!("PASS  {when:<8} {}\n", r.what)),
            Some(f) => out.push_str(&format!("FAIL  {when:<8} {}: {f}\n", r.what)),
        }
    }
    out
}

/// The event rows of the Events written since `last_rev`: one row per occurrence the components'
/// event correlators let through, i.e. per Added Event and per Modified Event whose `count` grew
/// (`counts` remembers the last count seen per Event); dropped occurrences wrote nothing.
fn collect_events(
    api: &dyn ApiClient,
    last_rev: &mut i64,
    counts: &mut BTreeMap<String, i32>,
    rows: &mut Vec<Vec<String>>,
) {
    if let Ok(changes) = api.watch(&Kind::Event, *last_rev) {
        for ch in changes {
            let Object::Event(e) = &*ch.object else {
                continue;
            };
            let key = ch.object.key();
            match ch.type_ {
                WatchEventType::Added => {
                    counts.insert(key, e.count);
                    rows.push(output::event_row(e));
                }
                WatchEventType::Modified => {
                    let before = counts.insert(key, e.count).unwrap_or(0);
                    if e.count > before {
                        rows.push(output::event_row(e));
                    }
                }
                WatchEventType::Deleted => {
                    counts.remove(&key);
                }
            }
        }
    }
    *last_rev = api.revision();
}
