//! [`CowArc`]: a field shared between the versions of an object until one of them changes it.
//!
//! A status write stores a new version of an object whose spec did not change (upstream's status
//! strategies reset the spec to the stored one: `podStatusStrategy.PrepareForUpdate` in
//! `pkg/registry/core/pod/strategy.go`). Every version a watch history, an informer or a kubelet
//! still holds would otherwise carry its own deep copy of that spec. A `CowArc` field is cloned by
//! bumping a reference count; writing through it copies the value first when another version
//! shares it (`Arc::make_mut`), so code reads and writes the field as if it owned it.

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
}
