//! The `Priority` admission plugin (upstream `plugin/pkg/admission/priority/admission.go`).
//!
//! Mutating, for pods:
//! - on create, `spec.priorityClassName` is resolved to `spec.priority` and, when the class has one,
//!   `spec.preemptionPolicy`. With no class name the global-default class is used (the one with the
//!   lowest value if several claim it); with none, priority 0 and `PreemptLowerPriority`. An unknown
//!   class is `Forbidden: no PriorityClass with name <x> was found`; a `spec.priority` or
//!   `preemptionPolicy` that disagrees with the class is Forbidden.
//! - on update, a missing priority/preemptionPolicy is taken from the stored pod.
//!
//! Validating, for PriorityClasses: at most one may be `globalDefault`.
//!
//! `system-node-critical` (2000001000) and `system-cluster-critical` (2000000000) resolve even when
//! no such object is stored (upstream creates them at startup).

use k8s_types::admission::{MutatingAdmission, Operation, ValidatingAdmission};
use k8s_types::core::Pod;
use k8s_types::object::Kind;
use k8s_types::scheduling::PriorityClass;
use k8s_types::status::Status;
use k8s_types::store::ObjectStore;
use k8s_types::{Object, Resource};

use crate::defaults::priority_class::PREEMPT_LOWER_PRIORITY;
use crate::validation::priority_class::SYSTEM_PRIORITY_CLASSES;

/// Upstream `PluginName`.
pub const PLUGIN_NAME: &str = "Priority";
/// Upstream `scheduling.DefaultPriorityWhenNoDefaultClassExists`.
pub const DEFAULT_PRIORITY_WHEN_NO_DEFAULT_CLASS_EXISTS: i32 = 0;

/// Upstream message for an unknown class.
pub fn no_class_message(name: &str) -> String {
    format!("no PriorityClass with name {name} was found")
}

/// The plugin (stateless; classes are read from the store).
#[derive(Clone, Copy, Debug, Default)]
pub struct Priority;

/// A resolved class: name, value, preemption policy.
struct Resolved {
    name: String,
    value: i32,
    preemption_policy: Option<String>,
}

fn stored_classes(store: &dyn ObjectStore) -> Vec<&PriorityClass> {
    store
        .list(&Kind::PriorityClass.key_prefix())
        .into_iter()
        .filter_map(PriorityClass::from_object_ref)
        .collect()
}

/// Upstream `getDefaultPriorityClass`: the global default with the lowest value (first in name
/// order among equals).
fn default_class(store: &dyn ObjectStore) -> Option<&PriorityClass> {
    let mut best: Option<&PriorityClass> = None;
    for pc in stored_classes(store)
        .into_iter()
        .filter(|pc| pc.global_default)
    {
        if best.is_none_or(|b| b.value > pc.value) {
            best = Some(pc);
        }
    }
    best
}

fn resolve(store: &dyn ObjectStore, name: &str) -> Option<Resolved> {
    if let Some(pc) = store
        .get(&Kind::PriorityClass.key("", name))
        .and_then(PriorityClass::from_object_ref)
    {
        return Some(Resolved {
            name: name.to_string(),
            value: pc.value,
            preemption_policy: pc.preemption_policy.clone(),
        });
    }
    SYSTEM_PRIORITY_CLASSES
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(n, v)| Resolved {
            name: n.to_string(),
            value: *v,
            preemption_policy: Some(PREEMPT_LOWER_PRIORITY.to_string()),
        })
}

fn admit_pod_create(pod: &mut Pod, store: &dyn ObjectStore) -> Result<(), Status> {
    let reject = |pod: &Pod, cause: &str| super::forbidden_meta(&Kind::Pod, &pod.metadata, cause);
    let class_name = pod.spec.priority_class_name.clone().unwrap_or_default();
    let resolved = if class_name.is_empty() {
        match default_class(store) {
            Some(pc) => Resolved {
                name: pc.metadata.name.clone(),
                value: pc.value,
                preemption_policy: pc.preemption_policy.clone(),
            },
            None => Resolved {
                name: String::new(),
                value: DEFAULT_PRIORITY_WHEN_NO_DEFAULT_CLASS_EXISTS,
                preemption_policy: Some(PREEMPT_LOWER_PRIORITY.to_string()),
            },
        }
    } else {
        resolve(store, &class_name).ok_or_else(|| reject(pod, &no_class_message(&class_name)))?
    };
    if class_name.is_empty() && !resolved.name.is_empty() {
        pod.spec.priority_class_name = Some(resolved.name.clone());
    }
    if let Some(p) = pod.spec.priority {
        if p != resolved.value {
            return Err(reject(
                pod,
                &format!(
                    "the integer value of priority ({p}) must not be provided in pod spec; priority admission controller computed {} from the given PriorityClass name",
                    resolved.value
                ),
            ));
        }
    }
    pod.spec.priority = Some(resolved.value);
    if let Some(policy) = resolved.preemption_policy {
        if let Some(given) = pod.spec.preemption_policy.as_deref() {
            if given != policy {
                return Err(reject(
                    pod,
                    &format!(
                        "the string value of PreemptionPolicy ({given}) must not be provided in pod spec; priority admission controller computed {policy} from the given PriorityClass name"
                    ),
                ));
            }
        }
        pod.spec.preemption_policy = Some(policy);
    }
    Ok(())
}

impl MutatingAdmission for Priority {
    fn name(&self) -> &str {
        PLUGIN_NAME
    }

    fn admit(
        &self,
        operation: Operation,
        obj: &mut Object,
        old: Option<&Object>,
        store: &dyn ObjectStore,
    ) -> Result<(), Status> {
        let Object::Pod(pod) = obj else {
            return Ok(());
        };
        match operation {
            Operation::Create => admit_pod_create(pod, store),
            Operation::Update => {
                if let Some(Object::Pod(old_pod)) = old {
                    if pod.spec.priority.is_none() {
                        pod.spec.priority = old_pod.spec.priority;
                    }
                    if pod.spec.preemption_policy.is_none() {
                        pod.spec
                            .preemption_policy
                            .clone_from(&old_pod.spec.preemption_policy);
                    }
                }
                Ok(())
            }
            Operation::Delete => Ok(()),
        }
    }
}

impl ValidatingAdmission for Priority {
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
        let Object::PriorityClass(pc) = obj else {
            return Ok(());
        };
        if operation == Operation::Delete || !pc.global_default {
            return Ok(());
        }
        if let Some(dpc) = default_class(store) {
            if operation == Operation::Create || dpc.metadata.name != pc.metadata.name {
                return Err(super::forbidden(
                    obj,
                    &format!(
                        "PriorityClass {} is already marked as default. Only one default can exist",
                        dpc.metadata.name
                    ),
                ));
            }
        }
        Ok(())
    }
}
