//! [`CycleState`]: the typed scratch space of one scheduling attempt, shared by the plugins of that
//! attempt (upstream `staging/src/k8s.io/kube-scheduler/framework/cycle_state.go`). A PreFilter
//! plugin writes what it computed once; its Filter reads it for every node.

use std::any::{Any, TypeId};
use std::borrow::Cow;
use std::collections::BTreeSet;

/// A value stored in a [`CycleState`] (upstream `StateData`). Implemented for every
/// `Clone + Send + Sync + 'static` type; cloning matters because preemption evaluates each node on
/// its own copy of the state.
pub trait StateData: Any + Send + Sync {
    /// A boxed copy (upstream `Clone`).
    fn clone_data(&self) -> Box<dyn StateData>;
    /// Upcast for downcasting to the concrete type.
    fn as_any(&self) -> &dyn Any;
    /// Mutable upcast for downcasting to the concrete type.
    fn as_any_mut(&mut self) -> &mut dyn Any;
}

impl<T: Any + Clone + Send + Sync> StateData for T {
    fn clone_data(&self) -> Box<dyn StateData> {
        Box::new(self.clone())
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

/// Per-attempt storage keyed by string (by convention `<ExtensionPoint><PluginName>`, e.g.
/// `PreFilterNodeResourcesFit`), plus the sets of plugins whose Filter/Score are skipped because
/// their PreFilter/PreScore returned `Skip`.
///
/// Entries are kept in a short list tagged with the value's type, so a typed read (done per node
/// by some Filter and Score plugins) compares strings only for an entry of the right type.
#[derive(Default)]
pub struct CycleState {
    data: Vec<(TypeId, String, Box<dyn StateData>)>,
    skip_filter_plugins: BTreeSet<String>,
    skip_score_plugins: BTreeSet<String>,
}

impl CycleState {
    /// An empty state.
    pub fn new() -> CycleState {
        CycleState::default()
    }

    /// Stores `value` under `key`, replacing any previous value.
    pub fn write<T: StateData>(&mut self, key: impl Into<String>, value: T) {
        let key = key.into();
        self.data.retain(|(_, k, _)| *k != key);
        self.data.push((TypeId::of::<T>(), key, Box::new(value)));
    }

    /// The value under `key` if it exists and has type `T`.
    pub fn read<T: 'static>(&self, key: &str) -> Option<&T> {
        let t = TypeId::of::<T>();
        self.data
            .iter()
            .find(|(id, k, _)| *id == t && k == key)
            .and_then(|(_, _, b)| (**b).as_any().downcast_ref())
    }

    /// The value under `key` if it exists and has type `T`, else `compute()`: what a plugin's
    /// Filter or Score reads when its PreFilter or PreScore wrote the value, and computes itself
    /// when it did not (the plugin called on its own, as in tests). Upstream's plugins return an
    /// error for a missing state (`getPreFilterState`, `getPreScoreState`); k8s-mini computes it
    /// instead, with the same result as the PreFilter/PreScore would have stored.
    pub fn read_or_compute<T: StateData + Clone>(
        &self,
        key: &str,
        compute: impl FnOnce() -> T,
    ) -> Cow<'_, T> {
        match self.read::<T>(key) {
            Some(v) => Cow::Borrowed(v),
            None => Cow::Owned(compute()),
        }
    }

    /// The value under `key`, mutably, if it exists and has type `T`.
    pub fn read_mut<T: 'static>(&mut self, key: &str) -> Option<&mut T> {
        let t = TypeId::of::<T>();
        self.data
            .iter_mut()
            .find(|(id, k, _)| *id == t && k == key)
            .and_then(|(_, _, b)| (**b).as_any_mut().downcast_mut())
    }

    /// Removes the value under `key`.
    pub fn delete(&mut self, key: &str) {
        self.data.retain(|(_, k, _)| k != key);
    }

    /// Plugins whose Filter is skipped in this attempt.
    pub fn skip_filter_plugins(&self) -> &BTreeSet<String> {
        &self.skip_filter_plugins
    }

    /// Marks a plugin's Filter as skipped (its PreFilter returned Skip).
    pub fn skip_filter_plugin(&mut self, plugin: &str) {
        self.skip_filter_plugins.insert(plugin.to_string());
    }

    /// Plugins whose Score is skipped in this attempt.
    pub fn skip_score_plugins(&self) -> &BTreeSet<String> {
        &self.skip_score_plugins
    }

    /// Marks a plugin's Score as skipped (its PreScore returned Skip).
    pub fn skip_score_plugin(&mut self, plugin: &str) {
        self.skip_score_plugins.insert(plugin.to_string());
    }
}

impl Clone for CycleState {
    fn clone(&self) -> CycleState {
        CycleState {
            data: self
                .data
                .iter()
                .map(|(t, k, v)| (*t, k.clone(), (**v).clone_data()))
                .collect(),
            skip_filter_plugins: self.skip_filter_plugins.clone(),
            skip_score_plugins: self.skip_score_plugins.clone(),
        }
    }
}

impl std::fmt::Debug for CycleState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CycleState")
            .field("keys", &{
                let mut keys: Vec<&String> = self.data.iter().map(|(_, k, _)| k).collect();
                keys.sort();
                keys
            })
            .field("skip_filter_plugins", &self.skip_filter_plugins)
            .field("skip_score_plugins", &self.skip_score_plugins)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typed_read_write_and_clone() {
        let mut s = CycleState::new();
        s.write("PreFilterX", vec![1i64, 2]);
        assert_eq!(s.read::<Vec<i64>>("PreFilterX"), Some(&vec![1, 2]));
        assert!(s.read::<String>("PreFilterX").is_none());
        let copy = s.clone();
        if let Some(v) = s.read_mut::<Vec<i64>>("PreFilterX") {
            v.push(3);
        }
        assert_eq!(copy.read::<Vec<i64>>("PreFilterX").map(Vec::len), Some(2));
        assert_eq!(s.read::<Vec<i64>>("PreFilterX").map(Vec::len), Some(3));
        let read = s.read_or_compute("PreFilterX", || vec![9i64]);
        assert!(matches!(read, Cow::Borrowed(v) if v.len() == 3));
        let computed = s.read_or_compute("PreFilterY", || vec![9i64]);
        assert!(matches!(computed, Cow::Owned(ref v) if *v == [9]));
        s.delete("PreFilterX");
        assert!(s.read::<Vec<i64>>("PreFilterX").is_none());
    }
}
