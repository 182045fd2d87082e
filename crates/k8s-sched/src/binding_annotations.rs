//! Annotations a Reserve plugin asks to be written on the pod with its Binding (upstream
//! `corev1.Binding.metadata.annotations`, which the apiserver's `pods/binding` copies onto the pod:
//! `pkg/registry/core/pod/storage/storage.go` `setPodHostAndAnnotations`). Alibaba's GPU-share
//! scheduler records the GPU index it chose this way (`alibabacloud.com/gpu-index`).
//!
//! A Reserve plugin writes [`BindingAnnotations`] under [`BINDING_ANNOTATIONS_KEY`] in the
//! CycleState; the scheduling cycle then re-assumes the pod with the annotations (so later pods of
//! the same tick see the decision in the snapshot) and DefaultBinder sends them in the Binding.

use k8s_types::object::Shared;
use std::collections::BTreeMap;

use k8s_sched_framework::CycleState;
use k8s_types::core::Pod;

/// CycleState key of the annotations.
pub const BINDING_ANNOTATIONS_KEY: &str = "k8s-mini.io/binding-annotations";

/// Annotation name -> value, to set at binding.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BindingAnnotations(pub BTreeMap<String, String>);

/// Adds `key = value` to the annotations of this attempt.
pub fn add(state: &mut CycleState, key: &str, value: String) {
    match state.read_mut::<BindingAnnotations>(BINDING_ANNOTATIONS_KEY) {
        Some(a) => {
            a.0.insert(key.to_string(), value);
        }
        None => {
            let mut m = BTreeMap::new();
            m.insert(key.to_string(), value);
            state.write(BINDING_ANNOTATIONS_KEY, BindingAnnotations(m));
        }
    }
}

/// Removes `key` (Unreserve).
pub fn remove(state: &mut CycleState, key: &str) {
    if let Some(a) = state.read_mut::<BindingAnnotations>(BINDING_ANNOTATIONS_KEY) {
        a.0.remove(key);
    }
}

/// The annotations of this attempt, if any.
pub fn get(state: &CycleState) -> Option<&BTreeMap<String, String>> {
    state
        .read::<BindingAnnotations>(BINDING_ANNOTATIONS_KEY)
        .map(|a| &a.0)
        .filter(|m| !m.is_empty())
}

/// `pod` with the attempt's annotations applied; `None` when there are none.
pub fn annotated(state: &CycleState, pod: &Pod) -> Option<Shared<Pod>> {
    let ann = get(state)?;
    let mut p = pod.clone();
    for (k, v) in ann {
        p.metadata.annotations.insert(k.clone(), v.clone());
    }
    Some(Shared::from_typed(p))
}
