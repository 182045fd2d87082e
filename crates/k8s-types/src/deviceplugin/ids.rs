//! [`DeviceIds`]: a set of device IDs in ID order ([`compare_device_ids`]), stored as runs.
//!
//! Upstream's device manager (`pkg/kubelet/cm/devicemanager/manager.go`) keeps a resource's
//! healthy and allocated devices as `sets.Set[string]` and hands `GetPreferredAllocation` the
//! free ones as a string list. A GPU-share node advertises 1,000 devices per GPU
//! (`"<gpu>-<k>"`, see k8s-deviceplugin's `gpushare.rs`), so those sets hold 8,000 strings on an
//! 8-GPU node. Here the consecutive units `<group>-<k>`, `<group>-<k+1>`, ... of one group are one
//! run (a whole free GPU is one run of 1,000), and set differences work on the runs; every other
//! ID is a run of its own. The set is the same as the string set it stands for, in the same order.

use std::borrow::Cow;
use std::cmp::Ordering;

use super::compare_device_ids;

/// One run of a [`DeviceIds`].
#[derive(Clone, Debug, PartialEq, Eq)]
enum Run {
    /// One ID that is not a canonical unit ([`unit`]).
    Id(String),
    /// The units `"<group>-<k>"` for `k` in `from..to` (`from < to`).
    Units { group: u64, from: u64, to: u64 },
}

/// A set of device IDs, iterated in ID order ([`compare_device_ids`]), as runs of units.
///
/// Invariants: the runs' IDs, one after the other, are strictly increasing in ID order; an ID
/// that is a canonical unit (`"<group>-<k>"`, both decimal numbers without a sign or leading
/// zero, see [`DeviceIds::from_ids`]) is always held in a unit run, and two unit runs that follow
/// each other are merged when the second continues the first. So two sets are equal exactly when
/// their runs are.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DeviceIds {
    runs: Vec<Run>,
}

/// The group and number of a canonical unit ID `"<group>-<k>"`: both parts decimal, without a
/// sign and without a leading zero (`"0"` itself is one), so that formatting them gives the ID back.
pub(super) fn unit(id: &str) -> Option<(u64, u64)> {
    let (g, k) = id.split_once('-')?;
    Some((canonical_number(g)?, canonical_number(k)?))
}

fn canonical_number(s: &str) -> Option<u64> {
    let digits = !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !digits || (s.len() > 1 && s.starts_with('0')) {
        return None;
    }
    s.parse().ok()
}

fn unit_id(group: u64, k: u64) -> String {
    format!("{group}-{k}")
}

impl DeviceIds {
    /// The set of these IDs (any order, duplicates dropped).
    pub fn from_ids<S: AsRef<str>>(ids: impl IntoIterator<Item = S>) -> DeviceIds {
        // Each ID parsed once; a list already in ID order (the usual case) is not sorted.
        let mut v: Vec<(Option<(u64, u64)>, S)> =
            ids.into_iter().map(|id| (unit(id.as_ref()), id)).collect();
        let order = |a: &(Option<(u64, u64)>, S), b: &(Option<(u64, u64)>, S)| match (a.0, b.0) {
            (Some(x), Some(y)) => x.cmp(&y),
            _ => compare_device_ids(a.1.as_ref(), b.1.as_ref()),
        };
        if !v.windows(2).all(|w| order(&w[0], &w[1]) == Ordering::Less) {
            v.sort_by(order);
            v.dedup_by(|a, b| a.1.as_ref() == b.1.as_ref());
        }
        let mut out = DeviceIds::default();
        for (u, id) in &v {
            match u {
                Some((g, k)) => out.push_units(*g, *k, k + 1),
                None => out.runs.push(Run::Id(id.as_ref().to_string())),
            }
        }
        out
    }

    /// The set of these IDs when they are strictly increasing in ID order (so distinct), each
    /// parsed once; `None` otherwise.
    pub fn from_increasing<S: AsRef<str>>(ids: &[S]) -> Option<DeviceIds> {
        let mut out = DeviceIds::default();
        let mut last: Option<(Option<(u64, u64)>, &str)> = None;
        for id in ids {
            let id = id.as_ref();
            let u = unit(id);
            if let Some((lu, lid)) = last {
                let order = match (lu, u) {
                    (Some(x), Some(y)) => x.cmp(&y),
                    _ => compare_device_ids(lid, id),
                };
                if order != Ordering::Less {
                    return None;
                }
            }
            match u {
                Some((g, k)) => out.push_units(g, k, k + 1),
                None => out.runs.push(Run::Id(id.to_string())),
            }
            last = Some((u, id));
        }
        Some(out)
    }

    /// The units `"<group>-<k>"` for `k` in `from..to`, followed by each later group of `groups`
    /// likewise: the device list of a plugin that shares each of its devices out in numbered units
    /// (`groups` in increasing order).
    pub fn units(groups: impl IntoIterator<Item = u64>, from: u64, to: u64) -> DeviceIds {
        let mut out = DeviceIds::default();
        for g in groups {
            out.push_units(g, from, to);
        }
        out
    }

    /// Appends units that come after every ID held, merging with the last run when it continues it.
    fn push_units(&mut self, group: u64, from: u64, to: u64) {
        if from >= to {
            return;
        }
        if let Some(Run::Units {
            group: g, to: end, ..
        }) = self.runs.last_mut()
        {
            if *g == group && *end == from {
                *end = to;
                return;
            }
        }
        self.runs.push(Run::Units { group, from, to });
    }

    /// Number of IDs.
    pub fn len(&self) -> usize {
        self.runs
            .iter()
            .map(|r| match r {
                Run::Id(_) => 1,
                Run::Units { from, to, .. } => usize::try_from(to - from).unwrap_or(usize::MAX),
            })
            .sum()
    }

    /// No ID.
    pub fn is_empty(&self) -> bool {
        self.runs.is_empty()
    }

    /// Whether every ID is a canonical unit `"<group>-<k>"`.
    pub fn all_units(&self) -> bool {
        self.runs.iter().all(|r| matches!(r, Run::Units { .. }))
    }

    /// The IDs in ID order.
    pub fn iter(&self) -> impl Iterator<Item = Cow<'_, str>> + '_ {
        self.runs
            .iter()
            .flat_map(|r| -> Box<dyn Iterator<Item = Cow<'_, str>>> {
                match r {
                    Run::Id(id) => Box::new(std::iter::once(Cow::Borrowed(id.as_str()))),
                    Run::Units { group, from, to } => {
                        let g = *group;
                        Box::new((*from..*to).map(move |k| Cow::Owned(unit_id(g, k))))
                    }
                }
            })
    }

    /// The IDs in ID order, as strings.
    pub fn to_strings(&self) -> Vec<String> {
        self.iter().map(Cow::into_owned).collect()
    }

    /// The numbers `k` of the units `"<group>-<k>"` held, in increasing order.
    pub fn units_of(&self, group: u64) -> impl Iterator<Item = u64> + '_ {
        self.ranges_of(group).flat_map(|(from, to)| from..to)
    }

    /// The unit ranges of `group`, in increasing order (they never overlap).
    fn ranges_of(&self, group: u64) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.runs.iter().filter_map(move |r| match r {
            Run::Units { group: g, from, to } if *g == group => Some((*from, *to)),
            _ => None,
        })
    }

    /// Whether `id` is held.
    pub fn contains(&self, id: &str) -> bool {
        match unit(id) {
            Some((g, k)) => self.ranges_of(g).any(|(from, to)| (from..to).contains(&k)),
            None => self.runs.iter().any(|r| matches!(r, Run::Id(x) if x == id)),
        }
    }

    /// The IDs held here and not in `other`, in ID order.
    pub fn difference(&self, other: &DeviceIds) -> DeviceIds {
        if other.is_empty() {
            return self.clone();
        }
        let mut out = DeviceIds::default();
        for r in &self.runs {
            match r {
                Run::Id(id) => {
                    if !other.contains(id) {
                        out.runs.push(r.clone());
                    }
                }
                Run::Units { group, from, to } => {
                    let mut k = *from;
                    for (f, t) in other.ranges_of(*group) {
                        if t <= k {
                            continue;
                        }
                        if f >= *to {
                            break;
                        }
                        out.push_units(*group, k, f.max(k));
                        k = t;
                    }
                    out.push_units(*group, k, *to);
                }
            }
        }
        out
    }

    /// The IDs held in either set, in ID order.
    pub fn union(&self, other: &DeviceIds) -> DeviceIds {
        if self.is_empty() {
            return other.clone();
        }
        if other.is_empty() {
            return self.clone();
        }
        DeviceIds::from_ids(self.iter().chain(other.iter()))
    }

    /// The first ID (in this set's order) that `other` holds too.
    pub fn first_common(&self, other: &DeviceIds) -> Option<String> {
        for r in &self.runs {
            match r {
                Run::Id(id) => {
                    if other.contains(id) {
                        return Some(id.clone());
                    }
                }
                Run::Units { group, from, to } => {
                    let common = other
                        .ranges_of(*group)
                        .filter(|(f, t)| f < to && t > from)
                        .map(|(f, _)| f.max(*from))
                        .min();
                    if let Some(k) = common {
                        return Some(unit_id(*group, k));
                    }
                }
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(ids: &[&str]) -> Vec<String> {
        ids.iter().map(|s| s.to_string()).collect()
    }

    /// The set as a sorted, deduplicated string list (the definition it stands for).
    fn reference(ids: &[String]) -> Vec<String> {
        let mut v = ids.to_vec();
        v.sort_by(|a, b| compare_device_ids(a, b));
        v.dedup();
        v
    }

    #[test]
    fn units_are_runs_and_other_ids_stand_alone() {
        let ids = DeviceIds::from_ids(["0-2", "0-0", "0-1", "1-0", "GPU-a", "0-5", "7", "0-1"]);
        assert_eq!(
            ids.runs,
            vec![
                Run::Units {
                    group: 0,
                    from: 0,
                    to: 3
                },
                Run::Units {
                    group: 0,
                    from: 5,
                    to: 6
                },
                Run::Units {
                    group: 1,
                    from: 0,
                    to: 1
                },
                Run::Id("7".into()),
                Run::Id("GPU-a".into()),
            ]
        );
        assert_eq!(ids.len(), 7);
        assert_eq!(
            ids.to_strings(),
            strings(&["0-0", "0-1", "0-2", "0-5", "1-0", "7", "GPU-a"])
        );
        // Non-canonical numbers are IDs of their own, in their place of the order.
        let odd = DeviceIds::from_ids(["0-5", "0-05", "0-6", "0-5:"]);
        assert_eq!(odd.to_strings(), strings(&["0-05", "0-5", "0-5:", "0-6"]));
        assert!(!odd.all_units());
        assert!(odd.contains("0-05") && odd.contains("0-6") && !odd.contains("0-7"));
        // 2 GPUs of 1,000 units: two runs.
        let whole = DeviceIds::units([0, 1], 0, 1000);
        assert_eq!(whole.runs.len(), 2);
        assert_eq!(whole.len(), 2000);
        assert_eq!(
            whole,
            DeviceIds::from_ids((0..2).flat_map(|g| (0..1000).map(move |k| format!("{g}-{k}"))))
        );
        assert_eq!(whole.units_of(1).take(2).collect::<Vec<_>>(), vec![0, 1]);
    }

    #[test]
    fn difference_union_and_common_agree_with_string_sets() {
        let pool = [
            "0-0", "0-1", "0-2", "0-3", "0-4", "0-5", "0-6", "0-9", "1-0", "1-1", "1-2", "2-7",
            "0", "1", "10", "0-05", "0-5:", "GPU-a", "x", "00-1", "1:0",
        ];
        // Subsets by bit masks over a 21-ID pool: a few thousand pairs, every shape of overlap.
        let subset = |mask: u32| -> Vec<String> {
            pool.iter()
                .enumerate()
                .filter(|(i, _)| mask & (1 << i) != 0)
                .map(|(_, s)| s.to_string())
                .collect()
        };
        let masks: Vec<u32> = (0..97u32)
            .map(|i| i.wrapping_mul(2_654_435_761) & 0x1f_ffff)
            .chain([0, 0x1f_ffff, 0x7f, 0x3f80])
            .collect();
        for &a in &masks {
            let (sa, da) = (subset(a), DeviceIds::from_ids(subset(a)));
            assert_eq!(da.to_strings(), reference(&sa));
            assert_eq!(da.len(), sa.len());
            for &b in &masks {
                let (sb, db) = (subset(b), DeviceIds::from_ids(subset(b)));
                let diff: Vec<String> = reference(&sa)
                    .into_iter()
                    .filter(|x| !sb.contains(x))
                    .collect();
                let d = da.difference(&db);
                assert_eq!(d.to_strings(), diff, "{sa:?} - {sb:?}");
                assert_eq!(
                    d,
                    DeviceIds::from_ids(&diff),
                    "normal form of {sa:?} - {sb:?}"
                );
                let both: Vec<String> = sa.iter().chain(&sb).cloned().collect();
                assert_eq!(da.union(&db).to_strings(), reference(&both));
                let common = reference(&sa).into_iter().find(|x| sb.contains(x));
                assert_eq!(da.first_common(&db), common, "{sa:?} & {sb:?}");
            }
        }
    }

    #[test]
    fn only_increasing_lists_are_taken_as_they_are() {
        let ids = strings(&["0-8", "0-9", "0-10", "1-0", "GPU-a"]);
        assert_eq!(
            DeviceIds::from_increasing(&ids),
            Some(DeviceIds::from_ids(&ids))
        );
        // "0-10" before "0-9" (text order), a duplicate, an unknown ID out of place.
        for bad in [
            &["0-10", "0-9"][..],
            &["0-1", "0-1"][..],
            &["GPU-a", "0-1"][..],
            &["7", "0-1"][..],
        ] {
            assert_eq!(DeviceIds::from_increasing(&strings(bad)), None, "{bad:?}");
        }
        assert_eq!(
            DeviceIds::from_increasing::<String>(&[]),
            Some(DeviceIds::default())
        );
    }

    #[test]
    fn range_difference_by_hand() {
        // GPU 3's 1,000 units minus 3-100..3-199 and 3-500: 3-0..3-99, 3-200..3-499, 3-501..3-999.
        let all = DeviceIds::units([3], 0, 1000);
        let held = DeviceIds::from_ids((100..200).chain([500]).map(|k| format!("3-{k}")));
        let free = all.difference(&held);
        assert_eq!(free.len(), 899);
        assert_eq!(
            free.runs,
            vec![
                Run::Units {
                    group: 3,
                    from: 0,
                    to: 100
                },
                Run::Units {
                    group: 3,
                    from: 200,
                    to: 500
                },
                Run::Units {
                    group: 3,
                    from: 501,
                    to: 1000
                },
            ]
        );
        assert_eq!(free.first_common(&held), None);
        assert_eq!(all.first_common(&held).as_deref(), Some("3-100"));
    }
}
