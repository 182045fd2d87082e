//! [`CowArc`] and [`StringMap`]: fields shared between the versions of an object until one of
//! them changes it.
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

/// The empty map every empty [`StringMap`] reads as.
static EMPTY: BTreeMap<String, String> = BTreeMap::new();

/// A `map[string]string` field (`metadata.labels`, `metadata.annotations`) shared between
/// versions as [`CowArc`] shares a spec, and free when empty: an empty map is no allocation (most
/// objects have no annotations; Events have no labels either), a non-empty one is shared by
/// every clone until one is written. A pod created from a template shares the template's labels
/// (upstream `GetPodFromTemplate` copies them unchanged). Reads as a `BTreeMap` (sorted keys, so
/// output order is deterministic); `Debug`, equality and serde see the map only.
#[derive(Clone, Default)]
pub struct StringMap(Option<Arc<BTreeMap<String, String>>>);

impl StringMap {
    /// True when both hold the same allocation, or both are empty without one.
    pub fn ptr_eq(a: &StringMap, b: &StringMap) -> bool {
        match (&a.0, &b.0) {
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            (None, None) => true,
            _ => false,
        }
    }

    /// The map, copied when shared.
    pub fn into_inner(self) -> BTreeMap<String, String> {
        self.0.map(Arc::unwrap_or_clone).unwrap_or_default()
    }
}

impl Deref for StringMap {
    type Target = BTreeMap<String, String>;
    fn deref(&self) -> &BTreeMap<String, String> {
        self.0.as_deref().unwrap_or(&EMPTY)
    }
}

impl DerefMut for StringMap {
    fn deref_mut(&mut self) -> &mut BTreeMap<String, String> {
        Arc::make_mut(self.0.get_or_insert_with(Default::default))
    }
}

impl From<BTreeMap<String, String>> for StringMap {
    fn from(map: BTreeMap<String, String>) -> Self {
        StringMap((!map.is_empty()).then(|| Arc::new(map)))
    }
}

impl<const N: usize> From<[(String, String); N]> for StringMap {
    fn from(pairs: [(String, String); N]) -> Self {
        BTreeMap::from(pairs).into()
    }
}

impl FromIterator<(String, String)> for StringMap {
    fn from_iter<I: IntoIterator<Item = (String, String)>>(iter: I) -> Self {
        iter.into_iter().collect::<BTreeMap<_, _>>().into()
    }
}

impl<'a> IntoIterator for &'a StringMap {
    type Item = (&'a String, &'a String);
    type IntoIter = std::collections::btree_map::Iter<'a, String, String>;
    fn into_iter(self) -> Self::IntoIter {
        (**self).iter()
    }
}

impl PartialEq for StringMap {
    fn eq(&self, other: &Self) -> bool {
        StringMap::ptr_eq(self, other) || **self == **other
    }
}

impl Eq for StringMap {}

impl PartialEq<BTreeMap<String, String>> for StringMap {
    fn eq(&self, other: &BTreeMap<String, String>) -> bool {
        **self == *other
    }
}

impl fmt::Debug for StringMap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        (**self).fmt(f)
    }
}

impl Serialize for StringMap {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        (**self).serialize(s)
    }
}

impl<'de> Deserialize<'de> for StringMap {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        BTreeMap::deserialize(d).map(StringMap::from)
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
}
