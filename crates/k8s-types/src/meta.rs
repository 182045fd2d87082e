//! Object metadata, as upstream `k8s.io/apimachinery/pkg/apis/meta/v1` `ObjectMeta`, `OwnerReference`
//! and `TypeMeta`.

use std::collections::BTreeMap;

use compact_str::CompactString;

use crate::cow_arc::CowArc;
use crate::ThinVec;
use serde::{Deserialize, Serialize};

pub use crate::cow_arc::StringMap;

/// `apiVersion` and `kind` of a document, read first to pick the concrete type.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TypeMeta {
    /// e.g. `v1`, `apps/v1`.
    #[serde(default)]
    pub api_version: String,
    /// e.g. `Pod`.
    #[serde(default)]
    pub kind: String,
}

/// Upstream `metav1.ObjectMeta`. Timestamps are RFC 3339 strings as upstream; k8s-mini writes the tick
/// as seconds after `1970-01-01T00:00:00Z` (see [`tick_timestamp`]).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ObjectMeta {
    /// Unique within a namespace (DNS-1123 subdomain for most kinds).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// Prefix the apiserver completes with 5 random-looking (here: deterministic) characters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generate_name: Option<CompactString>,
    /// Empty for cluster-scoped kinds; defaulted to `default` for namespaced kinds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<CompactString>,
    /// Set by the apiserver on create.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uid: Option<String>,
    /// The store revision of the last write to this object (decimal string, as upstream).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_version: Option<CompactString>,
    /// Incremented by the apiserver on every spec change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generation: Option<i64>,
    /// RFC 3339; set by the apiserver from the current tick.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub creation_timestamp: Option<CompactString>,
    /// Set when a graceful delete has started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deletion_timestamp: Option<CompactString>,
    /// Seconds (ticks) of grace left when deletion started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deletion_grace_period_seconds: Option<i64>,
    /// Labels (sorted map: output order is deterministic).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: StringMap,
    /// Annotations (sorted map).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: StringMap,
    /// Owners of this object; the garbage collector deletes it when its controller owner is gone.
    #[serde(default, skip_serializing_if = "CowArc::is_empty_list")]
    pub owner_references: CowArc<Vec<OwnerReference>>,
    /// Finalizers (kept, not acted on). A `ThinVec`: one pointer wide, and the empty list (most
    /// objects) allocates nothing.
    #[serde(default, skip_serializing_if = "ThinVec::is_empty")]
    pub finalizers: ThinVec<String>,
}

impl ObjectMeta {
    /// The namespace, or `""` for cluster-scoped objects.
    pub fn namespace(&self) -> &str {
        self.namespace.as_deref().unwrap_or("")
    }

    /// `resourceVersion` parsed as a store revision; 0 when unset or not a number.
    pub fn resource_version_number(&self) -> i64 {
        self.resource_version
            .as_deref()
            .and_then(|rv| rv.parse().ok())
            .unwrap_or(0)
    }

    /// The owner reference with `controller: true`, if any (upstream `metav1.GetControllerOf`).
    pub fn controller_ref(&self) -> Option<&OwnerReference> {
        self.owner_references
            .iter()
            .find(|r| r.controller == Some(true))
    }
}

/// Upstream `metav1.OwnerReference`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OwnerReference {
    /// API version of the owner, e.g. `apps/v1`.
    #[serde(default)]
    pub api_version: String,
    /// Kind of the owner, e.g. `ReplicaSet`.
    #[serde(default)]
    pub kind: String,
    /// Name of the owner (same namespace as the dependent).
    #[serde(default)]
    pub name: String,
    /// UID of the owner.
    #[serde(default)]
    pub uid: String,
    /// True when the owner is the managing controller.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub controller: Option<bool>,
    /// Foreground-deletion blocking flag (kept, not acted on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_owner_deletion: Option<bool>,
}

/// A reference to another object, as upstream `corev1.ObjectReference` (used by Events and Bindings).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ObjectReference {
    /// Kind of the referent.
    #[serde(default, skip_serializing_if = "str::is_empty")]
    pub kind: CompactString,
    /// Namespace of the referent.
    #[serde(default, skip_serializing_if = "str::is_empty")]
    pub namespace: CompactString,
    /// Name of the referent.
    #[serde(default, skip_serializing_if = "str::is_empty")]
    pub name: CompactString,
    /// UID of the referent.
    #[serde(default, skip_serializing_if = "str::is_empty")]
    pub uid: CompactString,
    /// API version of the referent.
    #[serde(default, skip_serializing_if = "str::is_empty")]
    pub api_version: CompactString,
    /// resourceVersion of the referent when the reference was made.
    #[serde(default, skip_serializing_if = "str::is_empty")]
    pub resource_version: CompactString,
    /// Field within the referent, e.g. `spec.containers{app}`. A boxed string (16 bytes, empty
    /// allocates nothing): almost always empty, and 8 bytes less brings an `Event` to 640 bytes,
    /// mimalloc's 640-byte size class instead of the 768-byte one.
    #[serde(default, skip_serializing_if = "str::is_empty")]
    pub field_path: Box<str>,
}

/// Go's `time.Duration.String()` for whole seconds (ticks): `0s`, `10s`, `1m0s`, `2m40s`, `1h0m0s`,
/// as upstream prints durations in messages (e.g. the kubelet's `back-off 2m40s restarting failed
/// container`, the scheduler's waiting-pod timeout).
pub fn go_duration(secs: crate::Tick) -> String {
    let (h, m, s) = (secs / 3600, (secs % 3600) / 60, secs % 60);
    if h > 0 {
        format!("{h}h{m}m{s}s")
    } else if m > 0 {
        format!("{m}m{s}s")
    } else {
        format!("{s}s")
    }
}

/// Appends the low `digits` hex digits of `v`, lowercase and zero-padded: what `{:0Nx}` writes
/// for a value that fits in N digits. Names and UIDs minted on every create use it instead of
/// `format!`.
pub fn push_lower_hex(s: &mut String, v: u64, digits: u32) {
    for _ in 16..digits {
        s.push('0');
    }
    let mut buf = [0u8; 16];
    let n = digits.min(16) as usize;
    fill_lower_hex(&mut buf[..n], v);
    s.push_str(std::str::from_utf8(&buf[..n]).unwrap_or_default());
}

/// Writes `v` in lowercase hex into `out`, right-aligned and zero-padded: its low `out.len()`
/// digits, with zeros beyond the 16 a `u64` has.
pub fn fill_lower_hex(out: &mut [u8], v: u64) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let n = out.len();
    for (i, b) in out.iter_mut().enumerate() {
        let shift = (n - 1 - i) * 4;
        *b = if shift < 64 {
            HEX[((v >> shift) & 0xf) as usize]
        } else {
            b'0'
        };
    }
}

/// A tick rendered as an RFC 3339 UTC timestamp: tick N is N seconds after 1970-01-01T00:00:00Z.
/// Ticks are the only clock in k8s-mini; this keeps the upstream field type without reading wall time.
pub fn tick_timestamp(tick: crate::Tick) -> String {
    tick_timestamp_compact(tick).into()
}

/// [`tick_timestamp`] as a [`CompactString`]: a four-digit year's 20 bytes are stored inline
/// (no allocation).
pub fn tick_timestamp_compact(tick: crate::Tick) -> CompactString {
    match tick_timestamp_bytes(tick) {
        Some(b) => std::str::from_utf8(&b).map(Into::into).unwrap_or_default(),
        None => {
            let days = tick / 86_400;
            let rem = tick % 86_400;
            let (y, m, d) = civil_from_days(days as i64);
            let (h, mi, s) = (rem / 3600, (rem % 3600) / 60, rem % 60);
            crate::format_compact!("{y:04}-{m:02}-{d:02}T{h:02}:{mi:02}:{s:02}Z")
        }
    }
}

/// The 20 bytes of [`tick_timestamp`] for a four-digit year (`None` for any other year, which
/// `tick_timestamp` writes through `format!`): for comparing a stamp with a tick without
/// allocating.
pub fn tick_timestamp_bytes(tick: crate::Tick) -> Option<[u8; 20]> {
    // Most timestamps of a run are written at the tick of the one before (every write of a
    // busy tick stamps the same second): the last one is kept per thread.
    thread_local! {
        static LAST: std::cell::Cell<Option<(crate::Tick, [u8; 20])>> =
            const { std::cell::Cell::new(None) };
    }
    if let Some((t, b)) = LAST.get() {
        if t == tick {
            return Some(b);
        }
    }
    let b = render_timestamp_bytes(tick)?;
    LAST.set(Some((tick, b)));
    Some(b)
}

/// [`tick_timestamp_bytes`] computed.
fn render_timestamp_bytes(tick: crate::Tick) -> Option<[u8; 20]> {
    let secs = tick;
    let days = secs / 86_400;
    let rem = secs % 86_400;
    let (y, m, d) = civil_from_days(days as i64);
    let (h, mi, s) = (rem / 3600, (rem % 3600) / 60, rem % 60);
    if !(0..=9999).contains(&y) {
        return None;
    }
    // Every object write stamps a time, so the common four-digit year is written digit by digit
    // rather than through `format!` (the same text).
    let mut b = *b"0000-00-00T00:00:00Z";
    let y = y as u64;
    let put2 = |b: &mut [u8; 20], at: usize, v: u64| {
        b[at] = b'0' + (v / 10) as u8;
        b[at + 1] = b'0' + (v % 10) as u8;
    };
    put2(&mut b, 0, y / 100);
    put2(&mut b, 2, y % 100);
    put2(&mut b, 5, m as u64);
    put2(&mut b, 8, d as u64);
    put2(&mut b, 11, h);
    put2(&mut b, 14, mi);
    put2(&mut b, 17, s);
    Some(b)
}

/// Inverse of [`tick_timestamp`] for timestamps it wrote; `None` for any other text.
pub fn timestamp_tick(ts: &str) -> Option<crate::Tick> {
    let b = ts.as_bytes();
    if b.len() != 20 || b[4] != b'-' || b[7] != b'-' || b[10] != b'T' || b[19] != b'Z' {
        return None;
    }
    const DIGITS: [usize; 14] = [0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18];
    let (y, mo, d, h, mi, s) = if DIGITS.iter().all(|&i| b[i].is_ascii_digit()) {
        // The common case, read without `str::parse`; the same numbers.
        let n = |at: usize, len: usize| {
            b[at..at + len]
                .iter()
                .fold(0i64, |acc, c| acc * 10 + i64::from(c - b'0'))
        };
        (n(0, 4), n(5, 2), n(8, 2), n(11, 2), n(14, 2), n(17, 2))
    } else {
        let num = |r: std::ops::Range<usize>| ts.get(r)?.parse::<i64>().ok();
        (
            num(0..4)?,
            num(5..7)?,
            num(8..10)?,
            num(11..13)?,
            num(14..16)?,
            num(17..19)?,
        )
    };
    let days = days_from_civil(y, mo, d);
    let total = days * 86_400 + h * 3600 + mi * 60 + s;
    u64::try_from(total).ok()
}

// Howard Hinnant's civil calendar algorithms (public domain).
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (if m <= 2 { y + 1 } else { y }, m, d)
}

fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = if m > 2 { m - 3 } else { m + 9 };
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compact_timestamps_are_the_same_text_and_inline() {
        for tick in [
            0,
            86_400 + 3661,
            1_709_208_000,
            253_402_300_799,
            253_402_300_800,
        ] {
            let c = tick_timestamp_compact(tick);
            assert_eq!(c, tick_timestamp(tick));
            // 20 bytes fit in the 24 a CompactString stores inline; the five-digit year's 21 too.
            assert!(!c.is_heap_allocated(), "{c}");
        }
        assert_eq!(
            tick_timestamp_compact(1_709_208_000),
            "2024-02-29T12:00:00Z"
        );
    }

    #[test]
    fn tick_timestamps_round_trip() {
        assert_eq!(tick_timestamp(0), "1970-01-01T00:00:00Z");
        assert_eq!(tick_timestamp(86_400 + 3661), "1970-01-02T01:01:01Z");
        // 2024-02-29T12:00:00Z is 1709208000 seconds after the epoch.
        assert_eq!(tick_timestamp(1_709_208_000), "2024-02-29T12:00:00Z");
        assert_eq!(timestamp_tick("2024-02-29T12:00:00Z"), Some(1_709_208_000));
        assert_eq!(timestamp_tick("not a time"), None);
        // Past year 9999 the year takes five digits (the `format!` path).
        assert_eq!(tick_timestamp(253_402_300_800), "10000-01-01T00:00:00Z");
        assert_eq!(tick_timestamp(253_402_300_799), "9999-12-31T23:59:59Z");
        // Text that is not all digits is read as `str::parse` reads it.
        assert_eq!(timestamp_tick("2024-+2-29T12:00:00Z"), Some(1_709_208_000));
        assert_eq!(timestamp_tick("2024-0x-29T12:00:00Z"), None);
    }

    #[test]
    fn lower_hex_pads_as_format_does() {
        for (v, digits) in [
            (0u64, 4),
            (0x2a, 16),
            (0xdead_beef, 8),
            (u64::MAX, 16),
            (0xabc, 12),
            (0x1f, 18),
        ] {
            let mut s = String::new();
            push_lower_hex(&mut s, v, digits);
            assert_eq!(s, format!("{v:0w$x}", w = digits as usize));
            let mut buf = vec![0u8; digits as usize];
            fill_lower_hex(&mut buf, v);
            assert_eq!(buf, s.as_bytes());
        }
    }

    #[test]
    fn tick_timestamps_match_the_formatted_reference() {
        for tick in (0..3_000_000_000u64)
            .step_by(7_919_777)
            .chain([59, 3599, 86_399])
        {
            let days = tick / 86_400;
            let rem = tick % 86_400;
            let (y, m, d) = civil_from_days(days as i64);
            let want = format!(
                "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
                rem / 3600,
                (rem % 3600) / 60,
                rem % 60
            );
            assert_eq!(tick_timestamp(tick), want);
            assert_eq!(timestamp_tick(&want), Some(tick));
        }
    }

    /// The last timestamp kept per thread answers only for its own tick: repeated, alternating
    /// and returning ticks give the computed text.
    #[test]
    fn repeated_ticks_give_the_computed_timestamp() {
        for tick in [5, 5, 86_400, 5, 86_400, 86_400, 0, 0, 5] {
            assert_eq!(tick_timestamp_bytes(tick), render_timestamp_bytes(tick));
            assert_eq!(
                tick_timestamp(tick).as_bytes(),
                &render_timestamp_bytes(tick).expect("four-digit year")
            );
        }
        // A year past 9999 has no 20-byte form, before and after a cached tick.
        let far = 400_000_000_000;
        assert_eq!(tick_timestamp_bytes(far), None);
        assert_eq!(tick_timestamp_bytes(7).map(|b| b[18]), Some(b'7'));
        assert_eq!(tick_timestamp_bytes(far), None);
    }

    #[test]
    fn controller_ref_picks_the_controller_owner() {
        let mut m = ObjectMeta::default();
        m.owner_references.push(OwnerReference {
            name: "a".into(),
            ..Default::default()
        });
        m.owner_references.push(OwnerReference {
            name: "b".into(),
            controller: Some(true),
            ..Default::default()
        });
        assert_eq!(m.controller_ref().map(|r| r.name.as_str()), Some("b"));
        m.resource_version = Some("42".into());
        assert_eq!(m.resource_version_number(), 42);
    }
}
