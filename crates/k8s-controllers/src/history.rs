//! Controller history, after upstream `pkg/controller/history/controller_history.go`: the
//! ControllerRevisions a StatefulSet or DaemonSet keeps of its pod template
//! (`ListControllerRevisions`, `AdoptControllerRevision`, `NewControllerRevision`,
//! `ControllerRevisionName`, `CreateControllerRevision` with its name-collision loop,
//! `UpdateControllerRevision`, `SortControllerRevisions`, `FindEqualRevisions`) and the
//! revision's data (`getPatch` of `stateful_set_utils.go` and `daemon/update.go`).
//!
//! Difference from upstream (docs/fidelity.md): the name's hash is
//! [`crate::pod_template_hash::compute_hash`] of the pod template with the collision count
//! (FNV-32a of the template's JSON as k8s-mini serializes it), where upstream's
//! `HashControllerRevision` runs FNV-32 over the revision's raw JSON data as Go encodes it; the
//! `<owner>-<hash>` naming, the `controller.kubernetes.io/hash` label and every rule on revision
//! numbers are upstream's.

use k8s_types::apiserver::{ApiClient, DeleteOptions};
use k8s_types::apps::{ControllerRevision, PodTemplateSpec};
use k8s_types::informer::SharedInformerFactory;
use k8s_types::labels::LabelSelector;
use k8s_types::meta::ObjectMeta;
use k8s_types::status::Status;
use k8s_types::{Kind, Resource};

use crate::controller_utils::new_controller_ref;
use crate::pod_template_hash::compute_hash;

/// Upstream `ControllerRevisionHashLabel`.
pub const CONTROLLER_REVISION_HASH_LABEL: &str = "controller.kubernetes.io/hash";

/// Upstream `ControllerRevisionName`: `<prefix>-<hash>`, the prefix cut to 223 bytes so the
/// name stays within 253.
pub fn controller_revision_name(prefix: &str, hash: &str) -> String {
    let mut end = prefix.len().min(223);
    while !prefix.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}-{hash}", &prefix[..end])
}

/// Upstream `getPatch`: `{"spec":{"template":{...,"$patch":"replace"}}}`, the revision's data.
pub fn template_patch(template: &PodTemplateSpec) -> serde_json::Value {
    let mut t = serde_json::to_value(template).unwrap_or_default();
    if let Some(m) = t.as_object_mut() {
        m.insert("$patch".into(), "replace".into());
    }
    serde_json::json!({ "spec": { "template": t } })
}

/// Upstream `NewControllerRevision` for a workload's template: labelled with the template's
/// labels and `controller.kubernetes.io/hash`, annotated as `owner`, controlled by it, named
/// `<owner>-<hash>` (see the module docs for the hash).
pub fn new_controller_revision(
    owner: &ObjectMeta,
    owner_kind: &Kind,
    template: &PodTemplateSpec,
    revision: i64,
    collision_count: i32,
) -> ControllerRevision {
    let hash = compute_hash(template, Some(collision_count));
    let mut cr = ControllerRevision::default();
    cr.metadata.name = controller_revision_name(&owner.name, &hash);
    cr.metadata.namespace = owner.namespace.clone();
    // Upstream `newRevision` (StatefulSet) and `snapshot` (DaemonSet) copy the owner's
    // annotations.
    cr.metadata.annotations = owner.annotations.clone();
    cr.metadata.labels = template.metadata.labels.clone();
    cr.metadata
        .labels
        .insert(CONTROLLER_REVISION_HASH_LABEL.into(), hash);
    cr.metadata.owner_references = vec![new_controller_ref(owner, owner_kind)].into();
    cr.data = Some(template_patch(template));
    cr.revision = revision;
    cr
}

/// Upstream `SortControllerRevisions`: by `revision`, ties by creation time, then name.
pub fn sort_controller_revisions(revisions: &mut [ControllerRevision]) {
    revisions.sort_by(|a, b| {
        (a.revision, &a.metadata.creation_timestamp, &a.metadata.name).cmp(&(
            b.revision,
            &b.metadata.creation_timestamp,
            &b.metadata.name,
        ))
    });
}

/// Upstream `EqualRevision`: the same data (and, when both carry one, the same hash label).
pub fn equal_revision(a: &ControllerRevision, b: &ControllerRevision) -> bool {
    let (ha, hb) = (
        a.metadata.labels.get(CONTROLLER_REVISION_HASH_LABEL),
        b.metadata.labels.get(CONTROLLER_REVISION_HASH_LABEL),
    );
    if let (Some(ha), Some(hb)) = (ha, hb) {
        if ha != hb {
            return false;
        }
    }
    a.data == b.data
}

/// Upstream `nextRevision`: one more than the last (sorted) revision's number, 1 for none.
pub fn next_revision(sorted: &[ControllerRevision]) -> i64 {
    sorted.last().map_or(1, |r| r.revision.saturating_add(1))
}

/// Upstream `ListControllerRevisions` followed by the owner's `adoptOrphanRevisions`: the
/// revisions of the owner's namespace matching `selector` that it controls, with the orphans
/// among them adopted (a controller reference added) unless the owner is being deleted;
/// sorted as [`sort_controller_revisions`].
///
/// # Errors
/// A failed adoption (NotFound is skipped: the orphan is gone).
pub fn list_and_adopt(
    api: &mut dyn ApiClient,
    informers: &SharedInformerFactory,
    owner: &ObjectMeta,
    owner_kind: &Kind,
    selector: &LabelSelector,
) -> Result<Vec<ControllerRevision>, Status> {
    let uid = owner.uid.clone().unwrap_or_default();
    let mut out = Vec::new();
    let cache = informers.of(&Kind::ControllerRevision);
    let listed: Vec<ControllerRevision> = cache
        .list_namespace::<ControllerRevision>(owner.namespace())
        .filter(|r| selector.matches(&r.metadata.labels))
        .cloned()
        .collect();
    for r in listed {
        match r.metadata.controller_ref() {
            Some(c) if c.uid == uid => out.push(r),
            Some(_) => {}
            None if owner.deletion_timestamp.is_some() => {}
            None => {
                let mut adopted = r;
                adopted
                    .metadata
                    .owner_references
                    .push(new_controller_ref(owner, owner_kind));
                match api.update(adopted.into_object()) {
                    Ok(o) => out.extend(ControllerRevision::from_object(o)),
                    Err(e) if e.is_not_found() => {}
                    Err(e) => return Err(e),
                }
            }
        }
    }
    sort_controller_revisions(&mut out);
    Ok(out)
}

/// Upstream `CreateControllerRevision`: creates `<owner>-<hash>`; when that name is taken by a
/// revision with other data, `collision_count` is bumped and the name recomputed; when it is
/// taken by one with the same data, that one is returned.
///
/// # Errors
/// An apiserver error other than AlreadyExists.
pub fn create_controller_revision(
    api: &mut dyn ApiClient,
    owner: &ObjectMeta,
    owner_kind: &Kind,
    template: &PodTemplateSpec,
    revision: i64,
    collision_count: &mut i32,
) -> Result<ControllerRevision, Status> {
    loop {
        let cr = new_controller_revision(owner, owner_kind, template, revision, *collision_count);
        let name = cr.metadata.name.clone();
        let data = cr.data.clone();
        match api.create(cr.into_object()) {
            Ok(o) => return ControllerRevision::from_object(o).ok_or_else(not_a_revision),
            Err(e) if e.is_already_exists() => {
                let existing = api.get(&Kind::ControllerRevision, owner.namespace(), &name)?;
                let existing =
                    ControllerRevision::from_object(existing).ok_or_else(not_a_revision)?;
                if existing.data == data {
                    return Ok(existing);
                }
                *collision_count = collision_count.saturating_add(1);
            }
            Err(e) => return Err(e),
        }
    }
}

fn not_a_revision() -> Status {
    Status::internal("the apiserver answered with another kind than ControllerRevision")
}

/// Upstream `UpdateControllerRevision`: the revision renumbered (a rollback to an old
/// template); a no-op when it already has that number.
///
/// # Errors
/// The apiserver's.
pub fn update_controller_revision(
    api: &mut dyn ApiClient,
    revision: &ControllerRevision,
    new_revision: i64,
) -> Result<ControllerRevision, Status> {
    if revision.revision == new_revision {
        return Ok(revision.clone());
    }
    let mut r = revision.clone();
    r.revision = new_revision;
    let o = api.update(r.into_object())?;
    ControllerRevision::from_object(o).ok_or_else(not_a_revision)
}

/// Upstream `DeleteControllerRevision` (NotFound counts as done).
///
/// # Errors
/// The apiserver's.
pub fn delete_controller_revision(
    api: &mut dyn ApiClient,
    revision: &ControllerRevision,
) -> Result<(), Status> {
    match api.delete(
        &Kind::ControllerRevision,
        revision.metadata.namespace(),
        &revision.metadata.name,
        DeleteOptions::default(),
    ) {
        Err(e) if !e.is_not_found() => Err(e),
        _ => Ok(()),
    }
}

/// The revisions to delete so that at most `limit` non-live ones remain (upstream
/// `truncateHistory` of both controllers): the non-live revisions of `sorted`, oldest first,
/// beyond the limit. A negative limit keeps everything.
pub fn revisions_to_truncate(
    sorted: &[ControllerRevision],
    is_live: impl Fn(&ControllerRevision) -> bool,
    limit: i32,
) -> Vec<&ControllerRevision> {
    let history: Vec<&ControllerRevision> = sorted.iter().filter(|r| !is_live(r)).collect();
    let Ok(limit) = usize::try_from(limit) else {
        return Vec::new();
    };
    let excess = history.len().saturating_sub(limit);
    history.into_iter().take(excess).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rev(name: &str, revision: i64) -> ControllerRevision {
        let mut r = ControllerRevision::default();
        r.metadata.name = name.into();
        r.revision = revision;
        r
    }

    #[test]
    fn names_cut_the_prefix_to_223_bytes() {
        assert_eq!(controller_revision_name("web", "abc"), "web-abc");
        let long = "a".repeat(300);
        let n = controller_revision_name(&long, "abc");
        // 223 + "-" + 3 = 227 bytes.
        assert_eq!(n.len(), 227);
        assert!(n.ends_with("a-abc"));
    }

    #[test]
    fn next_revision_follows_the_highest() {
        assert_eq!(next_revision(&[]), 1);
        let mut v = vec![rev("b", 4), rev("a", 2)];
        sort_controller_revisions(&mut v);
        assert_eq!(v[0].metadata.name, "a");
        assert_eq!(next_revision(&v), 5);
    }

    #[test]
    fn truncation_skips_live_revisions_and_takes_the_oldest() {
        // Five revisions, r3 live; limit 2: history r1 r2 r4 r5 (4), 2 too many: r1 and r2.
        let v: Vec<ControllerRevision> = (1..=5).map(|i| rev(&format!("r{i}"), i)).collect();
        let gone: Vec<&str> = revisions_to_truncate(&v, |r| r.metadata.name == "r3", 2)
            .iter()
            .map(|r| r.metadata.name.as_str())
            .collect();
        assert_eq!(gone, vec!["r1", "r2"]);
        assert!(revisions_to_truncate(&v, |_| false, -1).is_empty());
        assert!(revisions_to_truncate(&v, |_| false, 5).is_empty());
    }

    #[test]
    fn the_data_is_a_replace_patch_of_the_template() {
        let mut t = PodTemplateSpec::default();
        t.metadata.labels.insert("app".into(), "web".into());
        let d = template_patch(&t);
        assert_eq!(d["spec"]["template"]["$patch"], "replace");
        assert_eq!(d["spec"]["template"]["metadata"]["labels"]["app"], "web");
        let owner = ObjectMeta {
            name: "web".into(),
            namespace: Some("default".into()),
            ..Default::default()
        };
        let cr = new_controller_revision(&owner, &Kind::StatefulSet, &t, 1, 0);
        assert_eq!(cr.template(), Some(t.clone()));
        let hash = compute_hash(&t, Some(0));
        assert_eq!(cr.metadata.name, format!("web-{hash}"));
        assert_eq!(cr.metadata.labels[CONTROLLER_REVISION_HASH_LABEL], hash);
    }
}
