//! The REST verbs of [`crate::ApiServer`], one file each, in upstream's request order:
//! decode-time defaulting, mutating admission, the kind's strategy (`PrepareForCreate`/
//! `PrepareForUpdate`), validation, validating admission, storage.

pub mod create;
pub mod delete;
pub mod read;
pub mod restore;
pub mod update;

use k8s_types::status::Status;

/// Upstream answer to a request without a name.
pub fn name_required() -> Status {
    Status::bad_request("resource name may not be empty")
}
