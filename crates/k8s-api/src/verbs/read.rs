//! `get`, `list` and `watch` (upstream `store.go` `Get`, `List`, `Watch`): reads straight from the
//! store. A list is a prefix scan in key order (namespace, then name), filtered by a label
//! selector; a watch serves the store's history under the kind's prefix, and a compacted revision
//! is `410 Gone`.

use std::sync::Arc;

use k8s_types::labels::LabelSelector;
use k8s_types::object::Kind;
use k8s_types::status::Status;
use k8s_types::store::WatchEvent;
use k8s_types::Object;

use crate::server::ApiServer;
use crate::{errors, registry};

impl ApiServer {
    /// The get verb. An empty namespace means `default` for namespaced kinds.
    pub(crate) fn get_object(
        &self,
        kind: &Kind,
        namespace: &str,
        name: &str,
    ) -> Result<Arc<Object>, Status> {
        if name.is_empty() {
            return Err(super::name_required());
        }
        let ns = registry::request_namespace(kind, namespace);
        self.store
            .get_shared(&kind.key(&ns, name))
            .ok_or_else(|| Status::not_found(kind, name))
    }

    /// The list verb. `namespace` `None` or `Some("")` lists every namespace; cluster-scoped kinds
    /// ignore it.
    pub(crate) fn list_objects(
        &self,
        kind: &Kind,
        namespace: Option<&str>,
        selector: Option<&LabelSelector>,
    ) -> Vec<Arc<Object>> {
        let mut prefix = kind.key_prefix();
        if kind.namespaced() {
            if let Some(ns) = namespace.filter(|ns| !ns.is_empty()) {
                prefix.push_str(ns);
                prefix.push('/');
            }
        }
        self.store
            .list_shared(&prefix)
            .into_iter()
            .filter(|o| selector.is_none_or(|s| s.matches(&o.meta().labels)))
            .collect()
    }

    /// The watch verb: every change of `kind` after `after_revision`, in revision order.
    pub(crate) fn watch_kind(
        &self,
        kind: &Kind,
        after_revision: i64,
    ) -> Result<Vec<WatchEvent>, Status> {
        self.store
            .watch(&kind.key_prefix(), after_revision)
            .map_err(|e| errors::from_store(e, kind, ""))
    }

    /// [`ApiServer::watch_kind`] handing each change to `visit` instead of collecting them.
    pub(crate) fn watch_kind_each(
        &self,
        kind: &Kind,
        after_revision: i64,
        visit: &mut dyn FnMut(&WatchEvent),
    ) -> Result<(), Status> {
        self.store
            .watch_each(&kind.key_prefix(), after_revision, visit)
            .map_err(|e| errors::from_store(e, kind, ""))
    }
}
