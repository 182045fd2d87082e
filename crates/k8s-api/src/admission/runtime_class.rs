//! The `RuntimeClass` admission plugin (upstream `plugin/pkg/admission/runtimeclass/admission.go`:
//! `prepareObjects`, `setOverhead`, `setScheduling`, `validateOverhead`), for pods on create.
//!
//! Mutating: a pod naming a RuntimeClass that does not exist is refused (`pod rejected:
//! RuntimeClass "x" not found`); the class's `overhead.podFixed` becomes `spec.overhead` (a pod
//! that already sets a different overhead is refused: `pod rejected: Pod's Overhead doesn't match
//! RuntimeClass's defined Overhead`); its `scheduling.nodeSelector` is merged into the pod's (a key
//! with another value is `conflict: runtimeClass.scheduling.nodeSelector[k] = v;
//! pod.spec.nodeSelector[k] = w`) and its tolerations added to the pod's.
//!
//! Validating: the overhead must still be the class's, and a pod without a class with an overhead
//! may not set one (`pod rejected: Pod Overhead set without corresponding RuntimeClass defined
//! Overhead`).
//!
//! The scheduler and the kubelet count `spec.overhead` in the pod's request
//! ([`k8s_types::resources::pod_requests`], upstream `resource.PodRequests`), so NodeResourcesFit
//! and the ResourceQuota charge include it.
//!
//! Simplified: upstream's `MergeTolerations` also drops a toleration another one covers; here only
//! exact duplicates are skipped.

use k8s_types::admission::{MutatingAdmission, Operation, ValidatingAdmission};
use k8s_types::core::Pod;
use k8s_types::node::RuntimeClass;
use k8s_types::object::Kind;
use k8s_types::status::Status;
use k8s_types::store::ObjectStore;
use k8s_types::{Object, Resource};

/// Upstream `PluginName`.
pub const PLUGIN_NAME: &str = "RuntimeClass";
/// Upstream message when the pod's overhead is not the class's.
pub const OVERHEAD_MISMATCH: &str =
    "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead";
/// Upstream message for an overhead without a class that defines one.
pub const OVERHEAD_WITHOUT_CLASS: &str =
    "pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead";

/// The plugin (stateless; RuntimeClasses are read from the store).
#[derive(Clone, Copy, Debug, Default)]
pub struct RuntimeClassPlugin;

/// Upstream `prepareObjects`: the pod's class, `None` without one.
fn class_of<'a>(pod: &Pod, store: &'a dyn ObjectStore) -> Result<Option<&'a RuntimeClass>, Status> {
    let Some(name) = pod.spec.runtime_class_name.as_deref() else {
        return Ok(None);
    };
    store
        .get(&Kind::RuntimeClass.key("", name))
        .and_then(RuntimeClass::from_object_ref)
        .map(Some)
        .ok_or_else(|| {
            super::forbidden_meta(
                &Kind::Pod,
                &pod.metadata,
                &format!("pod rejected: RuntimeClass {name:?} not found"),
            )
        })
}

/// Upstream `setOverhead` and `setScheduling`.
pub fn apply_class(pod: &mut Pod, rc: &RuntimeClass) -> Result<(), String> {
    if let Some(o) = &rc.overhead {
        if !pod.spec.overhead.is_empty() && pod.spec.overhead != o.pod_fixed {
            return Err(OVERHEAD_MISMATCH.to_string());
        }
        pod.spec.overhead.clone_from(&o.pod_fixed);
    }
    if let Some(s) = &rc.scheduling {
        for (k, v) in &s.node_selector {
            match pod.spec.node_selector.get(k) {
                Some(w) if w != v => {
                    return Err(format!(
                        "conflict: runtimeClass.scheduling.nodeSelector[{k}] = {v}; pod.spec.nodeSelector[{k}] = {w}"
                    ));
                }
                _ => {
                    pod.spec.node_selector.insert(k.clone(), v.clone());
                }
            }
        }
        for t in &s.tolerations {
            if !pod.spec.tolerations.contains(t) {
                pod.spec.tolerations.push(t.clone());
            }
        }
    }
    Ok(())
}

/// Upstream `validateOverhead`.
pub fn validate_overhead(pod: &Pod, rc: Option<&RuntimeClass>) -> Result<(), &'static str> {
    match rc.and_then(|rc| rc.overhead.as_ref()) {
        Some(o) if o.pod_fixed != pod.spec.overhead => Err(OVERHEAD_MISMATCH),
        Some(_) => Ok(()),
        None if !pod.spec.overhead.is_empty() => Err(OVERHEAD_WITHOUT_CLASS),
        None => Ok(()),
    }
}

impl MutatingAdmission for RuntimeClassPlugin {
    fn name(&self) -> &str {
        PLUGIN_NAME
    }

    fn admit(
        &self,
        operation: Operation,
        obj: &mut Object,
        _old: Option<&Object>,
        store: &dyn ObjectStore,
    ) -> Result<(), Status> {
        let (Operation::Create, Object::Pod(pod)) = (operation, obj) else {
            return Ok(());
        };
        let Some(rc) = class_of(pod, store)? else {
            return Ok(());
        };
        apply_class(pod, rc)
            .map_err(|cause| super::forbidden_meta(&Kind::Pod, &pod.metadata, &cause))
    }
}

impl ValidatingAdmission for RuntimeClassPlugin {
    fn name(&self) -> &str {
        PLUGIN_NAME
    }

    fn validate(
        &self,
        operation: Operation,
        obj: &Object,
        _old: Option<&Object>,
        store: &dyn ObjectStore,
    ) -> Result<(), Status> {
        let (Operation::Create, Object::Pod(pod)) = (operation, obj) else {
            return Ok(());
        };
        let rc = class_of(pod, store)?;
        validate_overhead(pod, rc).map_err(|cause| super::forbidden(obj, cause))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_types::node::{Overhead, Scheduling};
    use k8s_types::Quantity;

    fn class() -> RuntimeClass {
        RuntimeClass {
            handler: "kata".into(),
            overhead: Some(Overhead {
                pod_fixed: [(
                    "cpu".to_string(),
                    Quantity::parse("250m").unwrap_or_default(),
                )]
                .into(),
            }),
            scheduling: Some(Scheduling {
                node_selector: [("runtime".to_string(), "kata".to_string())].into(),
                tolerations: Vec::new(),
            }),
            ..Default::default()
        }
    }

    #[test]
    fn overhead_and_node_selector_are_copied_and_conflicts_refused() {
        let rc = class();
        let mut pod = Pod::default();
        apply_class(&mut pod, &rc).unwrap();
        assert_eq!(pod.spec.overhead, rc.overhead.clone().unwrap().pod_fixed);
        assert_eq!(pod.spec.node_selector["runtime"], "kata");
        assert_eq!(validate_overhead(&pod, Some(&rc)), Ok(()));
        assert_eq!(validate_overhead(&pod, None), Err(OVERHEAD_WITHOUT_CLASS));

        let mut other = Pod::default();
        other
            .spec
            .node_selector
            .insert("runtime".into(), "runc".into());
        assert_eq!(
            apply_class(&mut other, &rc),
            Err("conflict: runtimeClass.scheduling.nodeSelector[runtime] = kata; pod.spec.nodeSelector[runtime] = runc".into())
        );
        let mut wrong = Pod::default();
        wrong
            .spec
            .overhead
            .insert("cpu".into(), Quantity::parse("1").unwrap_or_default());
        assert_eq!(apply_class(&mut wrong, &rc), Err(OVERHEAD_MISMATCH.into()));
    }
}
