//! [`CowArc`] and [`SharedMap`] ([`StringMap`], [`ResourceMap`]): fields shared between the
//! versions of an object until one of them changes it.
//!
//! A status write stores a new version of an object whose spec did not change (upstream's status
//! strategies reset the spec to the stored one: `podStatusStrategy.PrepareForUpdate` in
//! `pkg/registry/core/pod/strategy.go`). Every version a watch history, an informer or a kubelet
//! still holds would otherwise carry its own deep copy of that spec. A `CowArc` field is cloned by
//! bumping a reference count; writing through it copies the value first when another version
//! shares it (`Arc::make_mut`), so code reads and writes the field as if it owned it.

use std::collections::BTreeMap;
use std::fmt;
use std::ops::{Deref, DerefMut};
use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A value shared by reference count and copied on the first write while shared. Reads through
/// `Deref`; `DerefMut` copies a shared value first. `Debug`, equality and serde see the value
/// only, so an object's output is the same whether its fields are shared or not.
#[derive(Default)]
pub struct CowArc<T>(Arc<T>);

impl<T> CowArc<T> {
    /// Wraps `value`.
    pub fn new(value: T) -> CowArc<T> {
        CowArc(Arc::new(value))
    }

    /// True when both hold the same allocation (a clone that neither has written through).
    pub fn ptr_eq(a: &CowArc<T>, b: &CowArc<T>) -> bool {
        Arc::ptr_eq(&a.0, &b.0)
    }

    /// The value, writable in place when no other clone shares it (`None` when one does).
    pub fn get_mut(this: &mut CowArc<T>) -> Option<&mut T> {
        Arc::get_mut(&mut this.0)
    }
}

impl<T: Clone + PartialEq> CowArc<T> {
    /// Applies `write` to the value; a shared value is replaced only when `write` changed it, so
    /// an idempotent write (defaulting an already defaulted list) keeps the share. The copy it
    /// writes to is dropped when equal.
    pub fn write_if_changed(this: &mut CowArc<T>, write: impl FnOnce(&mut T)) {
        if let Some(v) = CowArc::get_mut(this) {
            write(v);
            return;
        }
        let mut copy = (*this.0).clone();
        write(&mut copy);
        if copy != *this.0 {
            *this = CowArc::new(copy);
        }
    }
}

impl<T> CowArc<Vec<T>> {
    /// True for an empty list (serde's `skip_serializing_if` for a `CowArc<Vec<T>>` field).
    pub fn is_empty_list(this: &CowArc<Vec<T>>) -> bool {
        this.0.is_empty()
    }
}

impl<T: Clone> CowArc<T> {
    /// The value, copied when shared.
    pub fn into_inner(self) -> T {
        Arc::unwrap_or_clone(self.0)
    }
}

impl<T> Clone for CowArc<T> {
    fn clone(&self) -> Self {
        CowArc(Arc::clone(&self.0))
    }
}

impl<T> Deref for CowArc<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T: Clone> DerefMut for CowArc<T> {
    fn deref_mut(&mut self) -> &mut T {
        Arc::make_mut(&mut self.0)
    }
}

impl<T> From<T> for CowArc<T> {
    fn from(value: T) -> Self {
        CowArc::new(value)
    }
}

impl<T> FromIterator<T> for CowArc<Vec<T>> {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        CowArc::new(iter.into_iter().collect())
    }
}

impl<'a, T> IntoIterator for &'a CowArc<Vec<T>> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

impl<'a, T: Clone> IntoIterator for &'a mut CowArc<Vec<T>> {
    type Item = &'a mut T;
    type IntoIter = std::slice::IterMut<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        Arc::make_mut(&mut self.0).iter_mut()
    }
}

impl<T: PartialEq> PartialEq for CowArc<T> {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0) || *self.0 == *other.0
    }
}

impl<T: Eq> Eq for CowArc<T> {}

impl<T: fmt::Debug> fmt::Debug for CowArc<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        (*self.0).fmt(f)
    }
}

impl<T: Serialize> Serialize for CowArc<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        (*self.0).serialize(s)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for CowArc<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        T::deserialize(d).map(CowArc::new)
    }
}

/// The last few distinct values passed to [`RecentValues::share`], so that an equal value made
/// later by another writer takes the same allocation: the kubelets give every pod that started in
/// the same tick the same conditions, and the apiserver stores them as one list. Least recently
/// shared first out; equality decides, never the address, so sharing changes no output.
#[derive(Debug)]
pub struct RecentValues<T> {
    /// Most recently shared last.
    slots: Vec<CowArc<T>>,
    capacity: usize,
}

impl<T: PartialEq> RecentValues<T> {
    /// Remembers up to `capacity` values (at least one).
    pub fn new(capacity: usize) -> RecentValues<T> {
        RecentValues {
            slots: Vec::with_capacity(capacity.max(1)),
            capacity: capacity.max(1),
        }
    }

    /// Points `value` at a remembered equal value, or remembers it (dropping the least recently
    /// shared one when full).
    pub fn share(&mut self, value: &mut CowArc<T>) {
        let found = self
            .slots
            .iter()
            .rposition(|s| CowArc::ptr_eq(s, value) || **s == **value);
        let slot = match found {
            Some(i) => {
                let slot = self.slots.remove(i);
                if !CowArc::ptr_eq(&slot, value) {
                    *value = slot.clone();
                }
                slot
            }
            None => {
                if self.slots.len() == self.capacity {
                    self.slots.remove(0);
                }
                value.clone()
            }
        };
        self.slots.push(slot);
    }
}

/// The value types a [`SharedMap`] holds: each names the empty map an unset one reads as (a
/// `static` cannot be generic).
pub trait MapValue: Clone + 'static {
    /// An empty map of this value type, for the lifetime of the program.
    fn empty_map() -> &'static BTreeMap<String, Self>;
}

impl MapValue for String {
    fn empty_map() -> &'static BTreeMap<String, String> {
        static EMPTY: BTreeMap<String, String> = BTreeMap::new();
        &EMPTY
    }
}

impl MapValue for crate::Quantity {
    fn empty_map() -> &'static BTreeMap<String, crate::Quantity> {
        static EMPTY: BTreeMap<String, crate::Quantity> = BTreeMap::new();
        &EMPTY
    }
}

/// A `map[string]V` field shared between versions as [`CowArc`] shares a spec, and free when
/// empty: an empty map is no allocation, a non-empty one is shared by every clone until one is
/// written. Reads as a `BTreeMap` (sorted keys, so output order is deterministic); `Debug`,
/// equality and serde see the map only.
pub struct SharedMap<V: MapValue>(Option<Arc<BTreeMap<String, V>>>);

/// `metadata.labels` and `metadata.annotations`: most objects have no annotations (Events have no
/// labels either), and a pod created from a template shares the template's labels (upstream
/// `GetPodFromTemplate` copies them unchanged).
pub type StringMap = SharedMap<String>;

/// A container's `resources.requests` and `resources.limits`: the pods of one template share the
/// template's maps through their creation, defaulting and binding (each a copy of the pod's spec),
/// where a `BTreeMap` of two resources is one 600-byte node per copy.
pub type ResourceMap = SharedMap<crate::Quantity>;

impl<V: MapValue> SharedMap<V> {
    /// An empty map (no allocation).
    pub const fn new() -> Self {
        SharedMap(None)
    }

    /// True when both hold the same allocation, or both are empty without one.
    pub fn ptr_eq(a: &SharedMap<V>, b: &SharedMap<V>) -> bool {
        match (&a.0, &b.0) {
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            (None, None) => true,
            _ => false,
        }
    }

    /// The map, copied when shared.
    pub fn into_inner(self) -> BTreeMap<String, V> {
        self.0.map(Arc::unwrap_or_clone).unwrap_or_default()
    }
}

impl<V: MapValue> Default for SharedMap<V> {
    fn default() -> Self {
        SharedMap(None)
    }
}

impl<V: MapValue> Clone for SharedMap<V> {
    fn clone(&self) -> Self {
        SharedMap(self.0.clone())
    }
}

impl<V: MapValue> Deref for SharedMap<V> {
    type Target = BTreeMap<String, V>;
    fn deref(&self) -> &BTreeMap<String, V> {
        self.0.as_deref().unwrap_or_else(|| V::empty_map())
    }
}

impl<V: MapValue> DerefMut for SharedMap<V> {
    fn deref_mut(&mut self) -> &mut BTreeMap<String, V> {
        Arc::make_mut(self.0.get_or_insert_with(Default::default))
    }
}

impl<V: MapValue> From<BTreeMap<String, V>> for SharedMap<V> {
    fn from(map: BTreeMap<String, V>) -> Self {
        SharedMap((!map.is_empty()).then(|| Arc::new(map)))
    }
}

impl<V: MapValue, const N: usize> From<[(String, V); N]> for SharedMap<V> {
    fn from(pairs: [(String, V); N]) -> Self {
        BTreeMap::from(pairs).into()
    }
}

impl<V: MapValue> FromIterator<(String, V)> for SharedMap<V> {
    fn from_iter<I: IntoIterator<Item = (String, V)>>(iter: I) -> Self {
        iter.into_iter().collect::<BTreeMap<_, _>>().into()
    }
}

impl<'a, V: MapValue> IntoIterator for &'a SharedMap<V> {
    type Item = (&'a String, &'a V);
    type IntoIter = std::collections::btree_map::Iter<'a, String, V>;
    fn into_iter(self) -> Self::IntoIter {
        (**self).iter()
    }
}

impl<V: MapValue + PartialEq> PartialEq for SharedMap<V> {
    fn eq(&self, other: &Self) -> bool {
        SharedMap::ptr_eq(self, other) || **self == **other
    }
}

impl<V: MapValue + Eq> Eq for SharedMap<V> {}

impl<V: MapValue + PartialEq> PartialEq<BTreeMap<String, V>> for SharedMap<V> {
    fn eq(&self, other: &BTreeMap<String, V>) -> bool {
        **self == *other
    }
}

impl<V: MapValue + fmt::Debug> fmt::Debug for SharedMap<V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        (**self).fmt(f)
    }
}

impl<V: MapValue + Serialize> Serialize for SharedMap<V> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        (**self).serialize(s)
    }
}

impl<'de, V: MapValue + Deserialize<'de>> Deserialize<'de> for SharedMap<V> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        BTreeMap::deserialize(d).map(SharedMap::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clones_share_until_one_writes() {
        let a = CowArc::new(vec![1, 2]);
        let mut b = a.clone();
        assert!(CowArc::ptr_eq(&a, &b));
        b.push(3);
        assert!(!CowArc::ptr_eq(&a, &b));
        assert_eq!(*a, vec![1, 2]);
        assert_eq!(*b, vec![1, 2, 3]);
        // A value nobody else holds is written in place.
        let before = Arc::as_ptr(&b.0);
        b.push(4);
        assert_eq!(Arc::as_ptr(&b.0), before);
    }

    #[test]
    fn equality_debug_and_serde_see_the_value() {
        let a = CowArc::new(vec![1, 2]);
        let b = CowArc::new(vec![1, 2]);
        assert!(!CowArc::ptr_eq(&a, &b));
        assert_eq!(a, b);
        assert_ne!(a, CowArc::new(vec![2]));
        assert_eq!(format!("{a:?}"), "[1, 2]");
        assert_eq!(serde_json::to_string(&a).unwrap(), "[1,2]");
        let back: CowArc<Vec<i32>> = serde_json::from_str("[1,2]").unwrap();
        assert_eq!(back, a);
        assert_eq!(a.into_inner(), vec![1, 2]);
    }

    #[test]
    fn string_maps_are_free_when_empty_and_shared_until_written() {
        let empty = StringMap::default();
        assert!(empty.0.is_none());
        assert!(empty.is_empty());
        assert_eq!(empty, StringMap::from(BTreeMap::new()));
        assert!(StringMap::from(BTreeMap::new()).0.is_none());
        let a: StringMap = [("app".to_string(), "web".to_string())].into();
        let mut b = a.clone();
        assert!(StringMap::ptr_eq(&a, &b));
        b.insert("pod-template-hash".into(), "h".into());
        assert!(!StringMap::ptr_eq(&a, &b));
        assert_eq!(a.len(), 1);
        assert_eq!(b["pod-template-hash"], "h");
        // Equal maps compare equal, shared or not, and against a plain map.
        let c: StringMap = a.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
        assert!(!StringMap::ptr_eq(&a, &c));
        assert_eq!(a, c);
        assert_eq!(a, BTreeMap::from([("app".to_string(), "web".to_string())]));
        assert_eq!(format!("{a:?}"), r#"{"app": "web"}"#);
        assert_eq!(
            serde_json::to_string(&b).unwrap(),
            r#"{"app":"web","pod-template-hash":"h"}"#
        );
        let back: StringMap = serde_json::from_str("{}").unwrap();
        assert!(back.0.is_none());
        let pairs: Vec<(&String, &String)> = (&a).into_iter().collect();
        assert_eq!(pairs.len(), 1);
        assert_eq!(b.into_inner().len(), 2);
    }

    #[test]
    fn shared_vectors_iterate_collect_and_copy_on_write() {
        let a: CowArc<Vec<u32>> = (1..=3).collect();
        let mut b = a.clone();
        assert_eq!((&a).into_iter().sum::<u32>(), 6);
        assert!(CowArc::ptr_eq(&a, &b));
        for x in &mut b {
            *x *= 10;
        }
        assert!(!CowArc::ptr_eq(&a, &b));
        assert_eq!(*a, vec![1, 2, 3]);
        assert_eq!(*b, vec![10, 20, 30]);
    }

    #[test]
    fn resource_maps_are_shared_until_written() {
        use crate::Quantity;
        let empty = ResourceMap::new();
        assert!(empty.0.is_none());
        assert!(empty.is_empty());
        let a: ResourceMap = [("cpu".to_string(), Quantity::parse("100m").unwrap())].into();
        let mut b = a.clone();
        assert!(ResourceMap::ptr_eq(&a, &b));
        b.insert("memory".into(), Quantity::parse("500Mi").unwrap());
        assert!(!ResourceMap::ptr_eq(&a, &b));
        assert_eq!(a.len(), 1);
        assert_eq!(b["memory"].to_string(), "500Mi");
        assert_eq!(
            serde_json::to_string(&b).unwrap(),
            r#"{"cpu":"100m","memory":"500Mi"}"#
        );
        let back: ResourceMap = serde_json::from_str(r#"{"cpu":"100m"}"#).unwrap();
        assert_eq!(back, a);
        assert!(serde_json::from_str::<ResourceMap>("{}")
            .unwrap()
            .0
            .is_none());
    }

    #[test]
    fn unchanged_writes_keep_the_share() {
        let a = CowArc::new(vec![1, 2]);
        let mut b = a.clone();
        CowArc::write_if_changed(&mut b, |v| v[0] = 1);
        assert!(CowArc::ptr_eq(&a, &b));
        CowArc::write_if_changed(&mut b, |v| v[0] = 5);
        assert!(!CowArc::ptr_eq(&a, &b));
        assert_eq!(
            (a.clone().into_inner(), b.clone().into_inner()),
            (vec![1, 2], vec![5, 2])
        );
        // Unshared: written in place.
        let before = Arc::as_ptr(&b.0);
        CowArc::write_if_changed(&mut b, |v| v.push(3));
        assert_eq!(Arc::as_ptr(&b.0), before);
        assert_eq!(*b, vec![5, 2, 3]);
    }

    #[test]
    fn recent_values_share_equal_ones_and_forget_the_least_recently_shared() {
        let mut recent = RecentValues::new(2);
        let mut a = CowArc::new(vec![1]);
        recent.share(&mut a);
        // An equal value in its own allocation now points at the first one.
        let mut a2 = CowArc::new(vec![1]);
        recent.share(&mut a2);
        assert!(CowArc::ptr_eq(&a, &a2));
        let mut b = CowArc::new(vec![2]);
        recent.share(&mut b);
        assert!(!CowArc::ptr_eq(&a, &b));
        // [1] was shared before [2]; a third value drops it, [2] stays.
        let mut c = CowArc::new(vec![3]);
        recent.share(&mut c);
        let mut a3 = CowArc::new(vec![1]);
        recent.share(&mut a3);
        assert!(!CowArc::ptr_eq(&a, &a3));
        // Now [3] and [1] (a3) are remembered: [2] was the least recently shared.
        let mut c2 = CowArc::new(vec![3]);
        recent.share(&mut c2);
        assert!(CowArc::ptr_eq(&c, &c2));
        let mut b2 = CowArc::new(vec![2]);
        recent.share(&mut b2);
        assert!(!CowArc::ptr_eq(&b, &b2));
        assert_eq!((a3[0], b2[0], c2[0]), (1, 2, 3));
    }
}
