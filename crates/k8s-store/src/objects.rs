//! The store's map of objects by key, split in two levels: the key's resource part (through its
//! resource segment's `/`: `/registry/pods/`, `/registry/events/`; a grouped kind's group,
//! `/registry/resource.k8s.io/`) and the rest (`default/web-0`). Every lookup and insert searches
//! only the objects of one resource, with shorter keys: with 150,000 pods and 600,000 Events in
//! one map, finding a pod compared its key with Event keys too, and the ResourceQuota admission's
//! look for quotas in a namespace searched the whole store to find none.
//!
//! Iteration is in the order of the whole keys, as one map of whole keys would give it: a
//! resource part ends at a `/` that no other resource part has at that position before its own
//! end (each ends at its own `N`-th slash), so no resource part is a proper prefix of another that
//! ends at a slash, and ordering by (resource part, rest) is ordering by the whole key (tests
//! compare with a sorted list of whole keys).

use std::collections::BTreeMap;
use std::ops::Bound;

use arcstr::ArcStr;

/// The slash that ends a key's resource part: the third of `/registry/<resource>/...`, the
/// first of a key that does not start with `/`.
pub(crate) fn split(key: &str) -> (&str, &str, bool) {
    const REGISTRY: &str = "/registry/";
    let bytes = key.as_bytes();
    // Every store key starts with `/registry/`: its two slashes need no search.
    let (from, mut slashes) = match key.starts_with(REGISTRY) {
        true => (REGISTRY.len(), 1),
        false if key.starts_with('/') => (0, 3),
        false => (0, 1),
    };
    for (i, &b) in bytes.iter().enumerate().skip(from) {
        if b == b'/' {
            slashes -= 1;
            if slashes == 0 {
                return (&key[..=i], &key[i + 1..], true);
            }
        }
    }
    (key, "", false)
}

/// Values by key, in two levels (see the module documentation). The rest of a key is an
/// `ArcStr` (a reference-counted string one pointer wide) so the watch history's entries for that
/// key share it (`insert_new` hands it to the value it makes) instead of each holding a copy.
#[derive(Clone, Debug)]
pub(crate) struct Objects<V> {
    by_resource: BTreeMap<String, BTreeMap<ArcStr, V>>,
    len: usize,
}

impl<V> Default for Objects<V> {
    fn default() -> Self {
        Objects {
            by_resource: BTreeMap::new(),
            len: 0,
        }
    }
}

impl<V> Objects<V> {
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    pub(crate) fn get(&self, key: &str) -> Option<&V> {
        let (resource, rest, _) = split(key);
        self.by_resource.get(resource)?.get(rest)
    }

    /// Sets the value of `key`; the one it replaces, if any (tests fill maps with it; the store
    /// writes through `insert_new` and `get_mut`).
    #[cfg(test)]
    pub(crate) fn insert(&mut self, key: &str, value: V) -> Option<V> {
        let (resource, rest, _) = split(key);
        let map = match self.by_resource.get_mut(resource) {
            Some(m) => m,
            None => self.by_resource.entry(resource.to_string()).or_default(),
        };
        let old = match map.get_mut(rest) {
            Some(v) => Some(std::mem::replace(v, value)),
            None => {
                map.insert(ArcStr::from(rest), value);
                None
            }
        };
        if old.is_none() {
            self.len += 1;
        }
        old
    }

    /// The value of `key`, writable.
    pub(crate) fn get_mut(&mut self, key: &str) -> Option<&mut V> {
        let (resource, rest, _) = split(key);
        self.by_resource.get_mut(resource)?.get_mut(rest)
    }

    /// Sets `key` to `make(rest)` when it has no value (one search of the map; `make` runs only
    /// then, given the key's rest as the map holds it). False, and nothing made, when `key` has a
    /// value.
    pub(crate) fn insert_new(&mut self, key: &str, make: impl FnOnce(&ArcStr) -> V) -> bool {
        let (resource, rest, _) = split(key);
        let map = match self.by_resource.get_mut(resource) {
            Some(m) => m,
            None => self.by_resource.entry(resource.to_string()).or_default(),
        };
        match map.entry(ArcStr::from(rest)) {
            std::collections::btree_map::Entry::Occupied(_) => false,
            std::collections::btree_map::Entry::Vacant(e) => {
                let value = make(e.key());
                e.insert(value);
                self.len += 1;
                true
            }
        }
    }

    pub(crate) fn remove(&mut self, key: &str) -> Option<V> {
        let (resource, rest, _) = split(key);
        let map = self.by_resource.get_mut(resource)?;
        let old = map.remove(rest)?;
        if map.is_empty() {
            self.by_resource.remove(resource);
        }
        self.len -= 1;
        Some(old)
    }

    /// The values whose keys start with `prefix`, in key order.
    pub(crate) fn with_prefix<'a, 'p>(&'a self, prefix: &'p str) -> impl Iterator<Item = &'a V> + 'p
    where
        'a: 'p,
    {
        let (resource, rest, complete) = split(prefix);
        // A prefix through a resource part: that resource's keys from `rest`.
        let within = complete
            .then(|| self.by_resource.get(resource))
            .flatten()
            .into_iter()
            .flat_map(move |m| {
                m.range::<str, _>((Bound::Included(rest), Bound::Unbounded))
                    .take_while(move |(k, _)| k.starts_with(rest))
                    .map(|(_, v)| v)
            });
        // A shorter prefix: every resource part that starts with it, whole.
        let across = (!complete)
            .then(|| {
                self.by_resource
                    .range::<str, _>((Bound::Included(prefix), Bound::Unbounded))
                    .take_while(move |(k, _)| k.starts_with(prefix))
            })
            .into_iter()
            .flatten()
            .flat_map(|(_, m)| m.values());
        within.chain(across)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys() -> Vec<&'static str> {
        vec![
            "/registry/pods/default/a",
            "/registry/pods/default/b",
            "/registry/pods/kube-system/a",
            "/registry/pods-x/default/a",
            "/registry/pods.x/default/a",
            "/registry/pod/default/a",
            "/registry/podsa",
            "/registry/pods",
            "/registry/events/default/a.0000000000000001",
            "/registry/nodes/n-1",
            "/registry/nodes/n",
            "/registry/resource.k8s.io/resourceclaims/default/c",
            "/registry/resource.k8s.io/deviceclasses/gpu",
            "/registry/",
            "/registry",
            "/k/a",
            "/k",
            "",
            "a",
            "a/",
            "a/b",
            "a-/b",
            "ab/c/d",
            "/",
            "//",
            "///x",
        ]
    }

    /// The split is at the third slash of a key starting with `/` (the first of any other key),
    /// as counting every slash from the start finds it.
    /// `insert_new` sets only new keys, makes the value only then, and counts it; `get_mut`
    /// writes the value `get` reads.
    #[test]
    fn insert_new_sets_only_new_keys() {
        let mut m: Objects<u32> = Objects::default();
        let mut made = 0;
        for (i, k) in keys().into_iter().enumerate() {
            assert!(m.insert_new(k, |rest| {
                assert_eq!(&**rest, split(k).1);
                made += 1;
                i as u32
            }));
        }
        assert_eq!(made, keys().len());
        assert_eq!(m.len(), keys().len());
        for k in keys() {
            assert!(!m.insert_new(k, |_| unreachable!("{k} has a value")));
        }
        assert_eq!(m.len(), keys().len());
        let k = "/registry/pods/default/b";
        *m.get_mut(k).expect("present") = 99;
        assert_eq!(m.get(k), Some(&99));
        assert_eq!(m.get_mut("/registry/pods/default/zz"), None);
    }

    #[test]
    fn split_is_at_the_resource_slash() {
        let reference = |key: &'static str| {
            let n = if key.starts_with('/') { 3 } else { 1 };
            match key.match_indices('/').nth(n - 1) {
                Some((at, _)) => (&key[..=at], &key[at + 1..], true),
                None => (key, "", false),
            }
        };
        for k in keys()
            .into_iter()
            .chain(["/registry//x", "/registryx/a/b", "/regis"])
        {
            assert_eq!(split(k), reference(k), "{k:?}");
        }
        assert_eq!(
            split("/registry/pods/default/a"),
            ("/registry/pods/", "default/a", true)
        );
    }

    fn filled() -> Objects<String> {
        let mut o = Objects::default();
        for k in keys() {
            assert_eq!(o.insert(k, k.to_string()), None, "{k}");
        }
        o
    }

    /// Listing by every prefix of every key (and some that match nothing) gives exactly the keys
    /// with that prefix, in the order of the whole keys.
    #[test]
    fn prefixes_list_in_whole_key_order() {
        let o = filled();
        let mut sorted = keys();
        sorted.sort_unstable();
        let mut prefixes: Vec<String> =
            vec!["/registry/q".into(), "zz".into(), "/registry/pods/x".into()];
        for k in keys() {
            for (i, _) in k.char_indices().chain([(k.len(), ' ')]) {
                prefixes.push(k[..i].to_string());
            }
        }
        for p in &prefixes {
            let got: Vec<&str> = o.with_prefix(p).map(String::as_str).collect();
            let want: Vec<&str> = sorted
                .iter()
                .copied()
                .filter(|k| k.starts_with(p.as_str()))
                .collect();
            assert_eq!(got, want, "prefix {p:?}");
        }
        assert_eq!(o.len(), keys().len());
    }

    #[test]
    fn get_insert_remove_count_and_replace() {
        let mut o = filled();
        for k in keys() {
            assert_eq!(o.get(k).map(String::as_str), Some(k));
            assert!(o.get(k).is_some());
        }
        assert_eq!(o.get("/registry/pods/default/c"), None);
        assert_eq!(
            o.insert("/registry/pods/default/a", "new".into())
                .as_deref(),
            Some("/registry/pods/default/a")
        );
        assert_eq!(o.len(), keys().len());
        assert_eq!(
            o.get("/registry/pods/default/a").map(String::as_str),
            Some("new")
        );
        assert_eq!(
            o.remove("/registry/nodes/n").as_deref(),
            Some("/registry/nodes/n")
        );
        assert_eq!(o.remove("/registry/nodes/n"), None);
        assert_eq!(o.len(), keys().len() - 1);
        assert_eq!(
            o.remove("/registry/nodes/n-1").as_deref(),
            Some("/registry/nodes/n-1")
        );
        assert_eq!(o.with_prefix("/registry/nodes/").count(), 0);
        assert_eq!(o.with_prefix("/registry/n").count(), 0);
    }
}
