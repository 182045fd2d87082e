//! Deterministic stand-ins for kube-apiserver's random names and UIDs.
//!
//! - `generateName` (upstream `k8s.io/apiserver/pkg/storage/names/generate.go`
//!   `SimpleNameGenerator`): the prefix, cut to 58 bytes, plus 5 characters from
//!   `bcdfghjklmnpqrstvwxz2456789`. Upstream draws them at random; k8s-mini derives them from an
//!   FNV-1a hash of (prefix, store revision, attempt), so the same sequence of requests yields the
//!   same names. On a collision the apiserver tries the next attempt (upstream retries generateName
//!   conflicts too).
//! - `metadata.uid` (upstream `uuid.NewUUID()`, a random version-4 UUID): derived from the store
//!   revision the object is created at, mixed with SplitMix64 and shaped as a version-4 UUID.

use k8s_types::meta::fill_lower_hex;

/// Upstream `alphanums`.
pub const GENERATE_NAME_ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
/// Upstream `randomLength`.
pub const GENERATE_NAME_RANDOM_LENGTH: usize = 5;
/// Upstream `maxGeneratedNameLength` (63 - 5).
pub const MAX_GENERATED_NAME_PREFIX: usize = 63 - GENERATE_NAME_RANDOM_LENGTH;
/// How many suffixes are tried before giving up on a prefix.
pub const GENERATE_NAME_ATTEMPTS: u32 = 8;

fn fnv1a(parts: &[&[u8]]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for p in parts {
        for b in *p {
            h ^= u64::from(*b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        // Separator so ("ab","c") and ("a","bc") differ.
        h ^= 0xff;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

fn splitmix64(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// A generated name for `prefix`: the prefix (at most 58 bytes, cut on a character boundary) plus
/// 5 suffix characters determined by `(prefix, revision, attempt)`.
pub fn generate_name(prefix: &str, revision: i64, attempt: u32) -> String {
    let mut cut = prefix.len().min(MAX_GENERATED_NAME_PREFIX);
    while !prefix.is_char_boundary(cut) {
        cut -= 1;
    }
    let base = &prefix[..cut];
    let mut h = fnv1a(&[
        base.as_bytes(),
        &revision.to_le_bytes(),
        &attempt.to_le_bytes(),
    ]);
    let n = GENERATE_NAME_ALPHABET.len() as u64;
    let mut name = String::with_capacity(base.len() + GENERATE_NAME_RANDOM_LENGTH);
    name.push_str(base);
    for _ in 0..GENERATE_NAME_RANDOM_LENGTH {
        name.push(char::from(GENERATE_NAME_ALPHABET[(h % n) as usize]));
        h /= n;
    }
    name
}

/// The UID of an object created at store revision `revision`: 32 hex digits as
/// `8-4-4-4-12`, version nibble 4 and RFC 4122 variant, like upstream's random UUIDs.
pub fn uid_for_revision(revision: i64) -> String {
    let hi = splitmix64(revision as u64);
    let lo = splitmix64(hi ^ 0x6b38_6d69_6e69_0001);
    let hi = (hi & 0xffff_ffff_ffff_0fff) | 0x0000_0000_0000_4000;
    let lo = (lo & 0x3fff_ffff_ffff_ffff) | 0x8000_0000_0000_0000;
    // `{:08x}-{:04x}-{:04x}-{:04x}-{:012x}` of the five fields, written digit by digit into
    // one buffer (one UID per create).
    let mut uid = *b"00000000-0000-0000-0000-000000000000";
    fill_lower_hex(&mut uid[0..8], hi >> 32);
    fill_lower_hex(&mut uid[9..13], (hi >> 16) & 0xffff);
    fill_lower_hex(&mut uid[14..18], hi & 0xffff);
    fill_lower_hex(&mut uid[19..23], lo >> 48);
    fill_lower_hex(&mut uid[24..36], lo & 0xffff_ffff_ffff);
    std::str::from_utf8(&uid)
        .map(str::to_owned)
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_names_are_deterministic_and_use_the_alphabet() {
        let a = generate_name("web-", 7, 0);
        assert_eq!(a, generate_name("web-", 7, 0));
        assert_ne!(a, generate_name("web-", 8, 0));
        assert_ne!(a, generate_name("web-", 7, 1));
        assert_eq!(a.len(), 4 + 5);
        assert!(a[4..].bytes().all(|b| GENERATE_NAME_ALPHABET.contains(&b)));
        let long = generate_name(&"x".repeat(100), 1, 0);
        assert_eq!(long.len(), 63);
    }

    #[test]
    fn uids_are_uuid_shaped_and_distinct() {
        let u = uid_for_revision(1);
        assert_eq!(u.len(), 36);
        let parts: Vec<&str> = u.split('-').collect();
        assert_eq!(
            parts.iter().map(|p| p.len()).collect::<Vec<_>>(),
            vec![8, 4, 4, 4, 12]
        );
        assert!(parts[2].starts_with('4'));
        assert!(matches!(parts[3].as_bytes()[0], b'8' | b'9' | b'a' | b'b'));
        assert_ne!(u, uid_for_revision(2));
        assert_eq!(u, uid_for_revision(1));
    }

    #[test]
    fn uids_are_the_formatted_fields() {
        for revision in (0..100_000i64).step_by(997).chain([i64::MAX, -1]) {
            let hi = splitmix64(revision as u64);
            let lo = splitmix64(hi ^ 0x6b38_6d69_6e69_0001);
            let hi = (hi & 0xffff_ffff_ffff_0fff) | 0x0000_0000_0000_4000;
            let lo = (lo & 0x3fff_ffff_ffff_ffff) | 0x8000_0000_0000_0000;
            let want = format!(
                "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
                hi >> 32,
                (hi >> 16) & 0xffff,
                hi & 0xffff,
                lo >> 48,
                lo & 0xffff_ffff_ffff
            );
            assert_eq!(uid_for_revision(revision), want);
        }
    }
}
