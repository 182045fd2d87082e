//! [`Session`]: a scenario's cluster driven one tick at a time by someone else (`serve`): the same
//! loading, the same steps and drains, the same tick as a scenario run, so that what a session
//! applies between ticks, written back as steps at those ticks, replays to the same state.

use std::collections::BTreeSet;
use std::path::Path;

use k8s_types::apiserver::ApiClient;
use k8s_types::object::Object;
use k8s_types::status::Status;
use k8s_types::Tick;

use crate::cluster::Cluster;
use crate::drain::Drain;
use crate::load::prepare;
use crate::manifest::ManifestError;
use crate::run::RunOptions;
use crate::steps::{advance_drains, run_step, ReadyStep};

/// A loaded scenario's cluster, between two ticks. Writes made through [`Session::api`] or
/// [`Session::apply`] land at [`Session::now`], exactly where a Scenario step with `at: now`
/// would: after the apiserver clock is set to the tick and before the scenario's own steps of that
/// tick and its components run.
pub struct Session {
    cluster: Cluster,
    steps: Vec<ReadyStep>,
    drains: Vec<Drain>,
    log: Vec<String>,
    warnings: Vec<String>,
    other_kinds: BTreeSet<(String, String, bool)>,
}

impl Session {
    /// Loads a scenario file as `cargo xtask scenario` does (manifests, scheduler configuration,
    /// kubelet settings and behaviors, the Scenario's steps); its expectations are not checked.
    ///
    /// # Errors
    /// A [`ManifestError`] for bad input, with file, line and field path.
    pub fn load(path: &Path) -> Result<Session, ManifestError> {
        let p = prepare(
            crate::manifest::load_file(path)?,
            path,
            &RunOptions::default(),
        )?;
        Ok(Session {
            cluster: p.cluster,
            steps: p.steps,
            drains: Vec::new(),
            log: Vec::new(),
            warnings: p.warnings,
            other_kinds: p.other_kinds,
        })
    }

    /// The tick the next [`Session::tick`] runs; writes made now carry its timestamps.
    pub fn now(&self) -> Tick {
        self.cluster.now()
    }

    /// The apiserver.
    pub fn api(&mut self) -> &mut dyn ApiClient {
        self.cluster.api()
    }

    /// The apiserver, read-only.
    pub fn api_ref(&self) -> &dyn ApiClient {
        self.cluster.api_ref()
    }

    /// Runs `f` on the apiserver with every write a dry run (see [`Cluster::dry_run`]).
    pub fn dry_run<R>(&mut self, f: impl FnOnce(&mut dyn ApiClient) -> R) -> R {
        self.cluster.dry_run(f)
    }

    /// Creates an object as a Scenario `apply` step does: a Node starts a kubelet for it (see
    /// [`Cluster::apply`]).
    ///
    /// # Errors
    /// The apiserver's `Status`.
    pub fn apply(&mut self, obj: Object) -> Result<(), Status> {
        self.cluster.apply(obj)
    }

    /// Warnings from loading the scenario.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// The `t=N step: ...` lines of the scenario's steps run so far (`FAILED` ones included).
    pub fn step_log(&self) -> &[String] {
        &self.log
    }

    /// Runs one tick as a scenario run does: the scenario's steps due now (in file order), the
    /// drains in progress, the components; then sets the apiserver clock to the next tick.
    /// Returns the step lines it added to [`Session::step_log`].
    pub fn tick(&mut self) -> Vec<String> {
        let t = self.cluster.now();
        let mut lines = Vec::new();
        for rs in self.steps.iter().filter(|s| s.step.at == t) {
            match run_step(&mut self.cluster, rs, &mut self.drains) {
                Ok(what) => lines.push(format!("t={t} step: {what}")),
                Err(e) => lines.push(format!("t={t} step FAILED: {e}")),
            }
        }
        advance_drains(&mut self.cluster, &mut self.drains, &mut lines);
        self.cluster.tick();
        self.cluster.begin_tick();
        self.log.extend(lines.iter().cloned());
        lines
    }

    /// Writes the cluster's state as `cargo xtask scenario --output json` prints it at the end of
    /// a run (a pretty `v1` List and a newline): the bytes a replay of the session is compared to.
    ///
    /// # Errors
    /// The writer's error.
    pub fn write_state_json(&self, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        let list = crate::output::ListView::new(self.cluster.api_ref(), &self.other_kinds);
        list.write_json(&mut *out)?;
        out.write_all(b"\n")
    }
}
