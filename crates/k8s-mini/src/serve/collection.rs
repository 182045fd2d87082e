//! `deletecollection` (upstream `staging/src/k8s.io/apiserver/pkg/endpoints/handlers/delete.go`
//! `DeleteCollection` and `registry/generic/registry/store.go` `Store.DeleteCollection`): a
//! DELETE on a namespaced collection (`/api/v1/namespaces/<ns>/pods?labelSelector=...`) or a
//! cluster-scoped one lists what the label and field selectors select, deletes each object with the
//! request's `DeleteOptions` (grace period, propagation policy, `dryRun`), and answers the list as
//! it was selected (`<Kind>List`, 200). Namespaces have no `deletecollection` upstream (405).
//! Each deleted object is recorded as its own `delete` step.

use k8s_cluster::Session;
use k8s_types::object::{Kind, Object};
use serde_json::{json, Value};

use crate::serve::dry_run;
use crate::serve::reply::{self, Reply};
use crate::serve::rest::{
    delete_request, delete_step, selectors, typed_json, Recorded, Request, Target,
};

/// DELETE on a collection.
pub(crate) fn delete_collection(s: &mut Session, t: &Target, req: &Request) -> (Reply, Recorded) {
    let kind = &t.info.kind;
    if *kind == Kind::Namespace || (kind.namespaced() && t.namespace.is_none()) {
        return (reply::method_not_allowed(), None);
    }
    let (labels, fields) = match selectors(kind, req) {
        Ok(x) => x,
        Err(r) => return (r, None),
    };
    let d = match delete_request(req) {
        Ok(d) => d,
        Err(r) => return (r, None),
    };
    let selected: Vec<Object> = s
        .api_ref()
        .list_shared(kind, t.namespace.as_deref(), labels.as_ref())
        .iter()
        .map(AsRef::as_ref)
        .filter(|o| fields.matches(o))
        .cloned()
        .collect();
    let rv = s.api_ref().revision();
    let mut steps = Vec::new();
    for o in &selected {
        let name = o.meta().name.clone();
        // Upstream deletes each in turn and reports the errors together; an object already gone
        // (deleted by a cascade of an earlier one) is skipped as upstream's `NotFound` is.
        match dry_run::write(s, req, |api| {
            api.delete(kind, t.namespace.as_deref().unwrap_or(""), &name, d.options)
        }) {
            Ok(_) => steps.push(delete_step(t, &name, &d)),
            Err(e) if e.code == 404 => {}
            Err(e) => {
                let mut named = t.clone();
                named.name = Some(name);
                return (
                    reply::failure(&e, &named.details()),
                    (!steps.is_empty()).then_some(Value::Array(steps)),
                );
            }
        }
    }
    let items: Vec<Value> = selected.iter().map(typed_json).collect();
    let list = json!({
        "kind": format!("{}List", kind.name()), "apiVersion": t.info.group_version(),
        "metadata": {"resourceVersion": rv.to_string()}, "items": items,
    });
    (
        Reply::json(200, &list),
        (!steps.is_empty()).then_some(Value::Array(steps)),
    )
}
