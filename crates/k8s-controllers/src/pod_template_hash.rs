//! The `pod-template-hash` of a Deployment's ReplicaSets, after upstream
//! `pkg/controller/controller_utils.go` `ComputeHash` and apimachinery `util/rand.SafeEncodeString`.
//!
//! Upstream hashes the template with FNV-32a over a `spew` dump of the Go struct
//! (`hashutil.DeepHashObject`), mixes in `collisionCount` (4 little-endian bytes in an 8-byte
//! buffer), prints the `uint32` in decimal and maps every digit through the alphabet
//! `bcdfghjklmnpqrstvwxz2456789`. k8s-mini does the same over a deterministic JSON serialization of
//! the template (struct field order, sorted maps), so hashes have upstream's shape (e.g. `65bb57b6b5`)
//! and are stable across runs, but they are not byte-equal to the hashes a real cluster computes
//! for the same template: Go's spew dump cannot be reproduced outside Go.

use k8s_types::apps::PodTemplateSpec;

/// The alphabet of upstream `rand.SafeEncodeString` (no vowels, no confusable digits).
pub const SAFE_ENCODE_ALPHANUMS: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";

const FNV32_OFFSET_BASIS: u32 = 0x811c_9dc5;
const FNV32_PRIME: u32 = 0x0100_0193;

/// FNV-1a, 32 bits (Go `hash/fnv.New32a`), continuing from `state`.
fn fnv32a_update(mut state: u32, bytes: &[u8]) -> u32 {
    for &b in bytes {
        state ^= u32::from(b);
        state = state.wrapping_mul(FNV32_PRIME);
    }
    state
}

/// FNV-1a 32-bit hash of `bytes` (Go `fnv.New32a().Sum32()`).
pub fn fnv32a(bytes: &[u8]) -> u32 {
    fnv32a_update(FNV32_OFFSET_BASIS, bytes)
}

/// Upstream `rand.SafeEncodeString`: each character `c` becomes `alphanums[c % 27]`.
pub fn safe_encode_string(s: &str) -> String {
    s.chars()
        .map(|c| {
            let i = (c as u32 as usize) % SAFE_ENCODE_ALPHANUMS.len();
            char::from(SAFE_ENCODE_ALPHANUMS[i])
        })
        .collect()
}

/// Upstream `controller.ComputeHash(template, collisionCount)`: FNV-32a of the template (here its
/// JSON serialization) followed, when `collision_count` is set, by an 8-byte buffer holding the
/// count as little-endian `uint32` in its first 4 bytes; the decimal sum is safe-encoded.
pub fn compute_hash(template: &PodTemplateSpec, collision_count: Option<i32>) -> String {
    // Serializing plain data (string map keys, no custom serializers) cannot fail; an empty buffer
    // would only make the hash less specific, never panic.
    let bytes = serde_json::to_vec(template).unwrap_or_default();
    let mut h = fnv32a(&bytes);
    if let Some(c) = collision_count {
        let mut buf = [0u8; 8];
        buf[..4].copy_from_slice(&(c as u32).to_le_bytes());
        h = fnv32a_update(h, &buf);
    }
    safe_encode_string(&h.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv32a_matches_reference_vectors() {
        // FNV-1a 32 reference values (Fowler/Noll/Vo test suite): "" and "a", "foobar".
        assert_eq!(fnv32a(b""), 0x811c_9dc5);
        assert_eq!(fnv32a(b"a"), 0xe40c_292c);
        assert_eq!(fnv32a(b"foobar"), 0xbf9c_f968);
    }

    #[test]
    fn safe_encoding_maps_digits_like_upstream() {
        // '0' is 48, 48 % 27 = 21 -> '4'; '6' is 54 -> 0 -> 'b' (computed by hand from the alphabet).
        assert_eq!(safe_encode_string("0123456789"), "456789bcdf");
        // 2166136261 (FNV-32a of the empty input) encodes to 65bb57b6b5.
        assert_eq!(safe_encode_string("2166136261"), "65bb57b6b5");
    }

    #[test]
    fn hash_changes_with_template_and_collision_count() {
        let mut t = PodTemplateSpec::default();
        t.metadata.labels.insert("app".into(), "web".into());
        let h1 = compute_hash(&t, None);
        assert_eq!(h1, compute_hash(&t, None), "deterministic");
        assert_ne!(h1, compute_hash(&t, Some(1)));
        t.metadata.labels.insert("tier".into(), "fe".into());
        assert_ne!(h1, compute_hash(&t, None));
        assert!(h1
            .bytes()
            .all(|b| SAFE_ENCODE_ALPHANUMS.contains(&b) && b"456789bcdf".contains(&b)));
    }
}
