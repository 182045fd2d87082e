//! Adoption and release of dependents, after upstream `pkg/controller/controller_ref_manager.go`
//! (`BaseControllerRefManager.ClaimObject`, `PodControllerRefManager`,
//! `ReplicaSetControllerRefManager`): a controller claims the objects it controls that still match
//! its selector, adopts matching orphans (adds a controller ownerReference) and releases owned
//! objects that stopped matching (removes its ownerReference).

use std::sync::Arc;

use k8s_types::apiserver::ApiClient;
use k8s_types::labels::LabelSelector;
use k8s_types::meta::ObjectMeta;
use k8s_types::status::Status;
use k8s_types::{Kind, Object, Resource};

use crate::controller_utils::new_controller_ref;

/// Upstream `RecheckDeletionTimestamp` / `CanAdopt`: re-reads the owner and refuses adoption when it
/// is gone, was replaced (other uid) or is being deleted.
fn can_adopt(api: &dyn ApiClient, kind: &Kind, owner: &ObjectMeta) -> Result<(), Status> {
    let fresh = api.get(kind, owner.namespace(), &owner.name)?;
    let fm = fresh.meta();
    if fm.uid != owner.uid {
        return Err(Status::internal(format!(
            "original {} {}/{} is gone: got uid {}, wanted {}",
            kind.name(),
            owner.namespace(),
            owner.name,
            fm.uid.as_deref().unwrap_or(""),
            owner.uid.as_deref().unwrap_or("")
        )));
    }
    if let Some(ts) = &fm.deletion_timestamp {
        return Err(Status::internal(format!(
            "{} {}/{} has just been deleted at {}",
            kind.name(),
            owner.namespace(),
            owner.name,
            ts
        )));
    }
    Ok(())
}

/// Claims `objs` for the owner (upstream `ClaimObject` applied to each object, in the given order).
///
/// Returns the claimed objects (already controlled and matching, or just adopted), with adopted
/// objects as the apiserver returned them. Objects controlled by someone else are ignored; owned
/// objects that no longer match `selector` are released unless the owner is being deleted.
///
/// # Errors
/// The first adopt/release failure other than NotFound (upstream aggregates them and the caller
/// skips the rest of its sync).
pub fn claim_objects<R: Resource>(
    api: &mut dyn ApiClient,
    owner_kind: &Kind,
    owner: &ObjectMeta,
    selector: &LabelSelector,
    objs: Vec<R>,
) -> Result<Vec<R>, Status> {
    let shared = objs
        .into_iter()
        .map(|o| Arc::new(o.into_object()))
        .collect();
    let claimed = claim_shared(api, owner_kind, owner, selector, shared)?;
    Ok(claimed
        .into_iter()
        .filter_map(|o| R::from_object(Arc::unwrap_or_clone(o)))
        .collect())
}

/// [`claim_objects`] over objects shared with an informer's cache: nothing is copied except the
/// objects it writes (adopted or released).
///
/// # Errors
/// As [`claim_objects`].
pub fn claim_shared(
    api: &mut dyn ApiClient,
    owner_kind: &Kind,
    owner: &ObjectMeta,
    selector: &LabelSelector,
    objs: Vec<Arc<Object>>,
) -> Result<Vec<Arc<Object>>, Status> {
    let owner_uid = owner.uid.clone().unwrap_or_default();
    let owner_deleting = owner.deletion_timestamp.is_some();
    let mut claimed = Vec::new();
    let mut first_err: Option<Status> = None;
    let mut adopt_checked: Option<Result<(), Status>> = None;
    for obj in objs {
        let meta = obj.meta();
        let matches = selector.matches(&meta.labels);
        if let Some(cref) = meta.controller_ref() {
            if cref.uid != owner_uid {
                continue;
            }
            if matches {
                claimed.push(obj);
                continue;
            }
            if owner_deleting {
                continue;
            }
            let mut o = Arc::unwrap_or_clone(obj);
            o.meta_mut().owner_references.retain(|r| r.uid != owner_uid);
            if let Err(e) = api.update(o) {
                if !e.is_not_found() && first_err.is_none() {
                    first_err = Some(e);
                }
            }
            continue;
        }
        // An orphan.
        if owner_deleting || !matches || meta.deletion_timestamp.is_some() {
            continue;
        }
        if !owner.namespace().is_empty() && owner.namespace() != meta.namespace() {
            continue;
        }
        let check = adopt_checked
            .get_or_insert_with(|| can_adopt(api, owner_kind, owner))
            .clone();
        if let Err(e) = check {
            if first_err.is_none() {
                first_err = Some(e);
            }
            continue;
        }
        let mut o = Arc::unwrap_or_clone(obj);
        o.meta_mut()
            .owner_references
            .push(new_controller_ref(owner, owner_kind));
        match api.update_shared(o) {
            Ok(updated) => claimed.push(updated),
            Err(e) => {
                if !e.is_not_found() && first_err.is_none() {
                    first_err = Some(e);
                }
            }
        }
    }
    match first_err {
        Some(e) => Err(e),
        None => Ok(claimed),
    }
}
