//! [`DomainKey`]: a topology value as the key of a [`DomainCounts`](super::DomainCounts) map.

use std::hash::Hasher;

/// Bytes a [`DomainKey`] keeps inline.
const INLINE_KEY: usize = 30;

/// A topology value as a hash-map key: values of up to 30 bytes (hostnames, zones) are stored
/// inline, so comparing the key found in the table needs no pointer chase; longer ones on the
/// heap. Hashes and compares as the `str` it holds.
#[derive(Clone, Debug)]
pub enum DomainKey {
    /// The value's bytes and length.
    Inline([u8; INLINE_KEY], u8),
    /// A longer value.
    Heap(Box<str>),
}

impl DomainKey {
    /// The value.
    pub fn as_str(&self) -> &str {
        match self {
            DomainKey::Inline(b, n) => std::str::from_utf8(&b[..usize::from(*n)]).unwrap_or(""),
            DomainKey::Heap(s) => s,
        }
    }
}

impl From<&str> for DomainKey {
    fn from(s: &str) -> DomainKey {
        if s.len() <= INLINE_KEY {
            let mut b = [0u8; INLINE_KEY];
            b[..s.len()].copy_from_slice(s.as_bytes());
            DomainKey::Inline(b, s.len() as u8)
        } else {
            DomainKey::Heap(s.into())
        }
    }
}

impl std::borrow::Borrow<str> for DomainKey {
    fn borrow(&self) -> &str {
        self.as_str()
    }
}

impl PartialEq for DomainKey {
    fn eq(&self, other: &DomainKey) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for DomainKey {}

impl std::hash::Hash for DomainKey {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}
