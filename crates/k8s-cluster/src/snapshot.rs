//! Snapshots: the whole store written to a file at a tick or at the end of a run (`--snapshot-out`,
//! `--snapshot-out-at-tick`) and a run resumed from one (`--snapshot-in`, or the Scenario's
//! `spec.snapshotIn`), as `etcdctl snapshot save` / `restore` would: every object with its
//! `resourceVersion`, the store's revision, and the virtual clock.
//!
//! The file is YAML: a `sim.k8s-mini.io/v1alpha1` `Snapshot` document (the tick, the revision, the
//! run loop's idle count, what lives outside the input), then `---` and a `v1` List of every object
//! in the store (node Leases included), as `-o yaml` prints it.
//!
//! What a resumed run rebuilds rather than reads (docs/fidelity.md, "Snapshots"): the scheduler and
//! the controller-manager start empty and list everything, as after a restart; kubelets adopt their
//! pods and rebuild their Lease and status clocks from the store ([`k8s_kubelet::Kubelet::resume`]).
//! Memory that is not in the store is lost: the scheduler's backoff and unschedulable queues
//! (a pending pod is retried at once), controllers' expectations and delayed requeues, kubelets'
//! container restart back-off and the remaining run time of running containers.

use std::collections::BTreeSet;
use std::path::Path;

use k8s_types::object::{Kind, Object};
use k8s_types::Tick;
use serde::{Deserialize, Serialize};

use crate::cluster::{Cluster, ClusterConfig};
use crate::manifest::{self, Document, ManifestError, Source};

/// apiVersion and kind of the header document.
pub const SNAPSHOT_KIND: (&str, &str) = ("sim.k8s-mini.io/v1alpha1", "Snapshot");

/// The header document of a snapshot file.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Header {
    /// `sim.k8s-mini.io/v1alpha1`.
    pub api_version: String,
    /// `Snapshot`.
    pub kind: String,
    /// The virtual clock: ticks `0..tick` had run; the resumed run starts with tick `tick`.
    pub tick: Tick,
    /// The store's revision (the List's `metadata.resourceVersion`).
    pub revision: i64,
    /// Ticks in a row, just before `tick`, that wrote nothing (the run loop's end test reads it).
    #[serde(default)]
    pub quiet_ticks: u64,
    /// The last tick that wrote something, if any.
    #[serde(default)]
    pub last_change: Option<Tick>,
    /// Owner uids that live outside the input (see `Cluster::set_external`).
    #[serde(default)]
    pub external_owners: BTreeSet<String>,
    /// Node names that live outside the input.
    #[serde(default)]
    pub external_nodes: BTreeSet<String>,
}

/// The run loop's memory that a snapshot keeps.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct LoopState {
    pub(crate) quiet: u64,
    pub(crate) last_active: Option<Tick>,
}

/// Writes the snapshot of `cluster` to `path`.
///
/// # Errors
/// The I/O or serialization error, as text.
pub(crate) fn write(
    path: &Path,
    cluster: &Cluster,
    other_kinds: &BTreeSet<(String, String, bool)>,
    state: LoopState,
) -> Result<(), String> {
    let (owners, nodes) = cluster.external();
    let header = Header {
        api_version: SNAPSHOT_KIND.0.to_string(),
        kind: SNAPSHOT_KIND.1.to_string(),
        tick: cluster.now(),
        revision: cluster.api_ref().revision(),
        quiet_ticks: state.quiet,
        last_change: state.last_active,
        external_owners: owners.clone(),
        external_nodes: nodes.clone(),
    };
    let fail = |e: &dyn std::fmt::Display| format!("cannot write {}: {e}", path.display());
    let file = std::fs::File::create(path).map_err(|e| fail(&e))?;
    let mut out = std::io::BufWriter::new(file);
    serde_yaml::to_writer(&mut out, &header).map_err(|e| fail(&e))?;
    std::io::Write::write_all(&mut out, b"---\n").map_err(|e| fail(&e))?;
    let list = crate::output::ListView::whole(cluster.api_ref(), other_kinds);
    serde_yaml::to_writer(&mut out, &list).map_err(|e| fail(&e))?;
    std::io::Write::flush(&mut out).map_err(|e| fail(&e))
}

/// A snapshot read back: the header and every object, with the untyped kinds among them.
pub(crate) struct Read {
    pub(crate) header: Header,
    pub(crate) objects: Vec<Object>,
    pub(crate) other_kinds: BTreeSet<(String, String, bool)>,
}

/// Reads a snapshot file. Errors name the file and line.
///
/// # Errors
/// A [`ManifestError`]: unreadable, no header, a bad object.
pub(crate) fn read(path: &Path) -> Result<Read, ManifestError> {
    let name = path.display().to_string();
    let at = |line: usize, message: String| ManifestError {
        source_loc: Source {
            file: name.clone(),
            line,
        },
        path: String::new(),
        message,
    };
    let text =
        std::fs::read_to_string(path).map_err(|e| at(0, format!("cannot read file: {e}")))?;
    let sep = text.lines().position(|l| l == "---").ok_or_else(|| {
        at(
            1,
            "not a snapshot: no Snapshot document followed by `---`".into(),
        )
    })?;
    let head: String = text.lines().take(sep).collect::<Vec<_>>().join("\n");
    let header: Header =
        serde_yaml::from_str(&head).map_err(|e| at(1, format!("not a snapshot header: {e}")))?;
    if (header.api_version.as_str(), header.kind.as_str()) != SNAPSHOT_KIND {
        return Err(at(
            1,
            format!(
                "not a snapshot: expected apiVersion {} kind {}",
                SNAPSHOT_KIND.0, SNAPSHOT_KIND.1
            ),
        ));
    }
    // The List keeps its line numbers: the header's lines are blanked.
    let body: String = text
        .lines()
        .enumerate()
        .map(|(i, l)| if i <= sep { "" } else { l })
        .collect::<Vec<_>>()
        .join("\n");
    let manifests = manifest::parse_stream(&name, &body)?;
    let mut objects = Vec::new();
    let mut other_kinds = BTreeSet::new();
    for loaded in manifests.docs {
        let Document::Object(obj) = loaded.doc else {
            return Err(at(
                loaded.source.line,
                "a snapshot holds API objects only".into(),
            ));
        };
        if let Kind::Other {
            api_version,
            kind,
            namespaced,
        } = obj.kind()
        {
            other_kinds.insert((api_version, kind, namespaced));
        }
        objects.push(*obj);
    }
    Ok(Read {
        header,
        objects,
        other_kinds,
    })
}

/// The cluster a snapshot holds, resumed at its tick.
///
/// # Errors
/// A [`ManifestError`] at the snapshot file when the store cannot be restored (a bad
/// resourceVersion) or the scheduler configuration is invalid.
pub(crate) fn resume(
    path: &Path,
    read: Read,
    config: ClusterConfig,
) -> Result<Cluster, ManifestError> {
    let err = |message: String| ManifestError {
        source_loc: Source {
            file: path.display().to_string(),
            line: 0,
        },
        path: String::new(),
        message,
    };
    let header = read.header;
    let store = k8s_store::MemStore::restored(read.objects, header.revision).map_err(err)?;
    Cluster::resume(
        config,
        store,
        header.tick,
        header.external_owners,
        header.external_nodes,
    )
    .map_err(|e| err(e.to_string()))
}
