//! Dry run (upstream `staging/src/k8s.io/apiserver/pkg/registry/generic/registry/dryrun.go`
//! `DryRunnableStorage`, KEP-576 "Kubernetes Dry-run"): a write request with `dryRun=All` runs the
//! whole pipeline (decoding, defaulting, mutating and validating admission, the kind's strategy,
//! validation, the ResourceQuota check) and answers as the write would, but the store is not
//! changed.
//!
//! Every write of the verbs goes through the three methods here. A real create or update first
//! points a pod's spec and an object's owner references (create only) and a pod's status lists at
//! equal ones stored recently ([`crate::pod_shares`]). In a dry run they check what the store
//! would check and return what it would return, without writing:
//! - create: `AlreadyExists` if the key is taken, else the object as it would be stored, with no
//!   `resourceVersion` (KEP-576: "ResourceVersion will also be left empty on creation");
//! - update: `NotFound` / `Conflict` as the store's compare-and-swap, else the new object with the
//!   stored `resourceVersion` ("On updates, the value will stay unchanged");
//! - delete: `NotFound` / `Conflict`, else the stored object.
//!
//! A ResourceQuota charge of a dry-run create is checked but not written (the KEP lists
//! ResourceQuota among the admission plugins whose side effects a dry run must skip). The uid,
//! the generated name and `creationTimestamp` are filled in as for a real create, as
//! kube-apiserver does (its `BeforeCreate` runs before the storage layer).

use std::sync::Arc;

use k8s_types::apiserver::ApiClient;
use k8s_types::store::StoreError;
use k8s_types::Object;

use crate::server::ApiServer;

impl ApiServer {
    /// Runs `f` with every store write of the apiserver turned into a dry run (upstream
    /// `dryRun=All` on the request's options). Reads see the store as it is; nothing is written,
    /// so the revision and every watcher are unchanged.
    pub fn dry_run<R>(&mut self, f: impl FnOnce(&mut ApiServer) -> R) -> R {
        let before = std::mem::replace(&mut self.dry_run, true);
        let r = f(self);
        self.dry_run = before;
        r
    }

    /// [`ApiServer::dry_run`] for a caller that holds the apiserver as an [`ApiClient`].
    pub fn dry_run_client<R>(&mut self, f: impl FnOnce(&mut dyn ApiClient) -> R) -> R {
        self.dry_run(|api| f(api))
    }

    /// Whether writes are dry runs now (inside [`ApiServer::dry_run`]).
    pub fn is_dry_run(&self) -> bool {
        self.dry_run
    }

    /// The store's create, or its dry run.
    pub(crate) fn storage_create(
        &mut self,
        key: &str,
        mut obj: Object,
    ) -> Result<Arc<Object>, StoreError> {
        if !self.dry_run {
            self.pod_shares.share_created(&mut obj);
            return self.store.create(key, obj);
        }
        if self.store.get(key).is_some() {
            return Err(StoreError::AlreadyExists {
                key: key.to_string(),
            });
        }
        Ok(Arc::new(obj))
    }

    /// The stored object at `key` if `expected` (a resourceVersion) matches it, as the store's
    /// compare-and-swap checks.
    fn dry_run_current(&self, key: &str, expected: Option<i64>) -> Result<Arc<Object>, StoreError> {
        let current = self
            .store
            .get_shared(key)
            .ok_or_else(|| StoreError::NotFound {
                key: key.to_string(),
            })?;
        let actual = current.meta().resource_version_number();
        match expected {
            Some(expected) if expected != actual => Err(StoreError::Conflict {
                key: key.to_string(),
                expected,
                actual,
            }),
            _ => Ok(current),
        }
    }

    /// The store's update, or its dry run.
    pub(crate) fn storage_update(
        &mut self,
        key: &str,
        mut obj: Object,
        expected: Option<i64>,
    ) -> Result<Arc<Object>, StoreError> {
        if !self.dry_run {
            self.pod_shares.share(&mut obj);
            return self.store.update(key, obj, expected);
        }
        let current = self.dry_run_current(key, expected)?;
        obj.meta_mut()
            .resource_version
            .clone_from(&current.meta().resource_version);
        Ok(Arc::new(obj))
    }

    /// The store's delete, or its dry run.
    pub(crate) fn storage_delete(
        &mut self,
        key: &str,
        expected: Option<i64>,
    ) -> Result<Arc<Object>, StoreError> {
        if !self.dry_run {
            return self.store.delete(key, expected);
        }
        self.dry_run_current(key, expected)
    }
}
