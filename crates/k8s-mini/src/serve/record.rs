//! `--record FILE`: the session written as a Scenario that replays to the same state. The input's
//! documents are kept; the Scenario document gets, as its steps, the scenario's own steps and every
//! write a client made (at the tick it was applied, before the scenario's own steps of that tick,
//! which is when `serve` applied it), `ticks` set to where the session stands, and no
//! expectations. Rewritten after every recorded write and every tick.

use std::path::{Path, PathBuf};

use k8s_types::Tick;
use serde_json::{json, Value};

/// The recorder.
pub(crate) struct Recorder {
    path: PathBuf,
    docs: Vec<Value>,
    scenario: Value,
    own_steps: Vec<Value>,
    writes: Vec<(Tick, Value)>,
}

impl Recorder {
    /// Reads the input's documents.
    ///
    /// # Errors
    /// When the input cannot be read again or is not YAML (it was loaded once already).
    pub(crate) fn new(input: &Path, out: &Path) -> Result<Recorder, String> {
        let text =
            std::fs::read_to_string(input).map_err(|e| format!("{}: {e}", input.display()))?;
        let mut docs = Vec::new();
        let mut scenario = None;
        for d in serde_yaml::Deserializer::from_str(&text) {
            let v: Value = serde::Deserialize::deserialize(d)
                .map_err(|e| format!("{}: {e}", input.display()))?;
            if v.is_null() {
                continue;
            }
            if v["kind"] == "Scenario" && scenario.is_none() {
                scenario = Some(v);
            } else {
                docs.push(v);
            }
        }
        let name = input
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let mut scenario = scenario.unwrap_or_else(|| {
            json!({"apiVersion": "sim.k8s-mini.io/v1alpha1", "kind": "Scenario", "metadata": {"name": name}, "spec": {}})
        });
        let own_steps = scenario["spec"]["steps"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        if let Some(spec) = scenario["spec"].as_object_mut() {
            spec.remove("expect");
            spec.insert(
                "description".into(),
                json!(format!(
                    "recorded by k8s-mini serve from {}",
                    input.display()
                )),
            );
        }
        Ok(Recorder {
            path: out.to_path_buf(),
            docs,
            scenario,
            own_steps,
            writes: Vec::new(),
        })
    }

    /// Adds a write applied at `tick`.
    pub(crate) fn push(&mut self, tick: Tick, mut step: Value) {
        step["at"] = json!(tick);
        self.writes.push((tick, step));
    }

    /// The Scenario text for a session standing at `now`: runs exactly to `now`, or one tick more
    /// when writes were applied at `now` (so that they are replayed).
    pub(crate) fn render(&self, now: Tick) -> String {
        let mut steps: Vec<(Tick, u8, Value)> = self
            .writes
            .iter()
            .map(|(t, v)| (*t, 0, v.clone()))
            .collect();
        steps.extend(
            self.own_steps
                .iter()
                .map(|v| (v["at"].as_u64().unwrap_or(0), 1, v.clone())),
        );
        // Stable: at the same tick, client writes first, each group in its own order.
        steps.sort_by_key(|(t, group, _)| (*t, *group));
        let ticks = if self.writes.iter().any(|(t, _)| *t >= now) {
            now + 1
        } else {
            now
        };
        let mut scenario = self.scenario.clone();
        scenario["spec"]["steps"] = Value::Array(steps.into_iter().map(|(_, _, v)| v).collect());
        scenario["spec"]["ticks"] = json!(ticks);
        let mut out = String::new();
        for d in self.docs.iter().chain(std::iter::once(&scenario)) {
            out.push_str("---\n");
            out.push_str(&serde_yaml::to_string(d).unwrap_or_default());
        }
        out
    }

    /// Writes the file.
    pub(crate) fn write(&self, now: Tick) -> std::io::Result<()> {
        std::fs::write(&self.path, self.render(now))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_writes_come_before_the_scenarios_own_steps_of_their_tick() {
        let dir =
            std::env::temp_dir().join(format!("k8s-mini-serve-record-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let input = dir.join("in.yaml");
        std::fs::write(
            &input,
            "apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n---\napiVersion: sim.k8s-mini.io/v1alpha1\nkind: Scenario\nmetadata: {name: s}\nspec:\n  ticks: 3\n  steps:\n  - {at: 2, cordon: {node: n}}\n  expect:\n  - pods: {selector: a=b, count: 1}\n",
        )
        .unwrap();
        let mut r = Recorder::new(&input, &dir.join("out.yaml")).unwrap();
        r.push(
            2,
            json!({"delete": {"kind": "Pod", "namespace": "default", "name": "p"}}),
        );
        let text = r.render(5);
        let docs: Vec<Value> = serde_yaml::Deserializer::from_str(&text)
            .map(|d| serde::Deserialize::deserialize(d).unwrap())
            .collect();
        assert_eq!(docs.len(), 2);
        let spec = &docs[1]["spec"];
        assert_eq!(spec["ticks"], json!(5));
        assert!(spec.get("expect").is_none());
        assert_eq!(spec["steps"][0]["delete"]["name"], "p");
        assert_eq!(spec["steps"][1]["cordon"]["node"], "n");
        // A write at the tick the session stands at needs one more tick to be replayed.
        r.push(5, json!({"delete": {"kind": "Pod", "name": "q"}}));
        assert!(r.render(5).contains("ticks: 6"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
