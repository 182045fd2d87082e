//! Client-side event correlation, after upstream client-go `tools/record/events_cache.go`
//! (`EventCorrelator`, `EventAggregator`, `eventLogger`, `EventSourceObjectSpamFilter`). Each
//! recorder runs every event through [`EventCorrelator::correlate`] before writing it:
//!
//! 1. the aggregator (`EventAggregate`, `EventAggregatorByReasonFunc`): events that differ only by
//!    message are grouped; once [`DEFAULT_AGGREGATE_MAX_EVENTS`] distinct messages of a group were
//!    seen within [`DEFAULT_AGGREGATE_INTERVAL_SECONDS`] of each other, the event is replaced by one
//!    whose message is [`AGGREGATE_MESSAGE_PREFIX`] + the latest message, keyed by the group so
//!    that later ones count up that single event;
//! 2. the logger (`eventObserve`): an event whose key was seen before becomes an update of the
//!    Event written then (same name and `firstTimestamp`, `count` + 1);
//! 3. the spam filter (`EventSourceObjectSpamFilter.Filter`): a token bucket per source, object and
//!    type ([`DEFAULT_SPAM_BURST`] tokens, one back every [`SPAM_REFILL_SECONDS`]); an event without
//!    a token is dropped. As upstream, the logger has already counted it, so the next occurrence
//!    that gets through carries the dropped ones in its `count`.
//!
//! Determinism: time is the apiserver's tick; the three LRU caches ([`MAX_LRU_CACHE_ENTRIES`]
//! entries each, upstream `groupcache/lru`) order entries by a use counter; the aggregator's
//! "pop any" of a full local-key set takes the smallest key (upstream takes whichever a Go map
//! iteration yields first). The token bucket counts in token-seconds (integers): upstream's
//! `rate.Limiter` at `float32(1/300)` tokens per second gives back its first token after exactly
//! 300 whole seconds too.

use std::hash::Hash;

use hashlink::linked_hash_map::{Entry, LinkedHashMap};

use crate::core::event::Event;
use crate::meta::ObjectMeta;
use crate::Tick;

/// Upstream `maxLruCacheEntries`: capacity of each of the correlator's three caches.
pub const MAX_LRU_CACHE_ENTRIES: usize = 4096;
/// Upstream `defaultAggregateMaxEvents`: distinct messages of one group before aggregating.
pub const DEFAULT_AGGREGATE_MAX_EVENTS: usize = 10;
/// Upstream `defaultAggregateIntervalInSeconds`: a group older than this (strictly) starts over.
pub const DEFAULT_AGGREGATE_INTERVAL_SECONDS: Tick = 600;
/// Upstream `defaultSpamBurst`: events a source may write about one object (and type) at once.
pub const DEFAULT_SPAM_BURST: u64 = 25;
/// Upstream `defaultSpamQPS` is `1/300`: one token comes back every 300 seconds.
pub const SPAM_REFILL_SECONDS: Tick = 300;
/// Upstream `EventAggregatorByReasonMessageFunc`'s prefix of an aggregate event's message.
pub const AGGREGATE_MESSAGE_PREFIX: &str = "(combined from similar events): ";

/// A least-recently-used map (upstream `groupcache/lru.Cache`): `get` and `add` make an entry the
/// most recent; adding past capacity evicts the least recent. A linked hash map (hashlink's
/// `LinkedHashMap`) keeps the entries from least to most recently used, so the eviction order
/// depends only on the order of calls (never on hashes). The correlator's caches are keyed by
/// [`KeyDigest`]s (16 bytes) instead of the key strings (about 200 bytes each).
#[derive(Clone, Debug)]
pub(crate) struct Lru<K: Hash + Eq, V> {
    capacity: usize,
    /// Least recently used first.
    entries: LinkedHashMap<K, V, rustc_hash::FxBuildHasher>,
}

impl<K: Hash + Eq + Clone, V> Lru<K, V> {
    pub(crate) fn new(capacity: usize) -> Self {
        Lru {
            capacity,
            entries: LinkedHashMap::with_hasher(rustc_hash::FxBuildHasher),
        }
    }

    /// The entry, made most recent.
    pub(crate) fn get(&mut self, key: &K) -> Option<&V> {
        self.entries.to_back(key).map(|v| &*v)
    }

    /// The entry (a default one when absent), made most recent; a new entry evicts the least
    /// recent one past capacity. The same entries in the same recency order as a `get` followed
    /// by an `add` of the (updated) value, as upstream's aggregator does.
    pub(crate) fn get_or_insert_default(&mut self, key: K) -> &mut V
    where
        V: Default,
    {
        // Evicting before inserting leaves what `add` leaves (it inserts, then evicts the least
        // recent, never the new entry) for any capacity of at least one.
        if self.entries.len() >= self.capacity && !self.entries.contains_key(&key) {
            self.entries.pop_front();
        }
        match self.entries.entry(key) {
            Entry::Occupied(mut e) => {
                e.to_back();
                e.into_mut()
            }
            Entry::Vacant(e) => e.insert(V::default()),
        }
    }

    /// Sets the entry and makes it most recent; evicts the least recent entry past capacity.
    pub(crate) fn add(&mut self, key: K, value: V) {
        // `insert` moves an existing entry to the back (most recent).
        self.entries.insert(key, value);
        if self.entries.len() > self.capacity {
            self.entries.pop_front();
        }
    }

    /// The keys from least to most recently used, with their values.
    #[cfg(test)]
    pub(crate) fn by_recency(&self) -> Vec<(K, &V)> {
        self.entries.iter().map(|(k, v)| (k.clone(), v)).collect()
    }

    /// Number of entries.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }
}

/// The parts of upstream `getEventKey`: source, involved object (with `fieldPath`), type, reason
/// and message, joined without a separator as upstream does.
fn event_key_parts(e: &Event) -> [&str; 11] {
    let io = &e.involved_object;
    [
        e.source.component.as_str(),
        &e.source.host,
        &io.kind,
        &io.namespace,
        &io.name,
        &io.field_path,
        &io.uid,
        &io.api_version,
        &e.type_,
        &e.reason,
        &e.message,
    ]
}

/// The parts of upstream `getSpamKey`: source, involved object (without `fieldPath`) and type.
fn spam_key_parts(e: &Event) -> [&str; 8] {
    let io = &e.involved_object;
    [
        e.source.component.as_str(),
        &e.source.host,
        &io.kind,
        &io.namespace,
        &io.name,
        &io.uid,
        &io.api_version,
        &e.type_,
    ]
}

/// The parts of upstream `EventAggregatorByReasonFunc`'s aggregate key: source, involved object
/// without `fieldPath`, type, reason, reportingController, reportingInstance. k8s-mini's Event has
/// no `reportingInstance`; upstream's recorder sets it to `source.host`, which is what is used.
fn aggregate_key_parts(e: &Event) -> [&str; 11] {
    let io = &e.involved_object;
    [
        e.source.component.as_str(),
        &e.source.host,
        &io.kind,
        &io.namespace,
        &io.name,
        &io.uid,
        &io.api_version,
        &e.type_,
        &e.reason,
        e.reporting_component.as_deref().unwrap_or(""),
        &e.source.host,
    ]
}

/// Upstream `getEventKey` (see [`event_key_parts`]).
pub fn event_key(e: &Event) -> String {
    event_key_parts(e).concat()
}

/// Upstream `getSpamKey` (see [`spam_key_parts`]).
pub fn spam_key(e: &Event) -> String {
    spam_key_parts(e).concat()
}

/// Upstream `EventAggregatorByReasonFunc`: the aggregate key (see [`aggregate_key_parts`]) and
/// the local key (the message).
pub fn aggregate_keys(e: &Event) -> (String, String) {
    (aggregate_key_parts(e).concat(), e.message.to_string())
}

/// What the correlator's caches are keyed by: a 128-bit digest of the key string (upstream keys
/// its LRU caches by the string itself). The XXH3-128 digest of the concatenated parts (the
/// `xxhash-rust` crate), so keys equal as strings (also when split differently between the parts,
/// as upstream's separator-less join) have equal digests, and distinct keys collide with a
/// probability of about 2^-128 per pair (docs/fidelity.md). The digest never reaches the output:
/// only equality and the caches' order by recency matter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct KeyDigest(pub(crate) u128);

impl KeyDigest {
    /// The digest of `parts` joined without a separator.
    pub(crate) fn of(parts: &[&str]) -> KeyDigest {
        // Joined first: one pass over ~200 bytes costs less than a streaming update per part.
        // Into a buffer on the stack when the key fits (almost always), else on the heap.
        const STACK: usize = 512;
        let len: usize = parts.iter().map(|p| p.len()).sum();
        if len > STACK {
            return KeyDigest(xxhash_rust::xxh3::xxh3_128(parts.concat().as_bytes()));
        }
        let mut buf = [0u8; STACK];
        let mut at = 0;
        for p in parts {
            buf[at..at + p.len()].copy_from_slice(p.as_bytes());
            at += p.len();
        }
        KeyDigest(xxhash_rust::xxh3::xxh3_128(&buf[..len]))
    }
}

/// Upstream `aggregateRecord`: the distinct messages of a group and when it was last seen.
#[derive(Clone, Debug, Default)]
struct AggregateRecord {
    local_keys: LocalKeys,
    last: Option<Tick>,
}

/// Upstream `aggregateRecord.localKeys` (a `sets.String`): the distinct messages of a group, kept
/// as a sorted list of exactly sized strings. Most groups hold one message (one event per object
/// and reason), which is held without a list; a `BTreeSet` would allocate a whole node (11 slots).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) enum LocalKeys {
    #[default]
    Empty,
    One(Box<str>),
    /// Two or more, sorted.
    Many(Vec<Box<str>>),
}

impl LocalKeys {
    /// Adds `message` unless present; true when it was new.
    pub(crate) fn insert(&mut self, message: &str) -> bool {
        match self {
            LocalKeys::Empty => {
                *self = LocalKeys::One(Box::from(message));
                true
            }
            LocalKeys::One(m) if **m == *message => false,
            LocalKeys::One(m) => {
                let first = std::mem::take(m);
                let mut all = vec![first, Box::from(message)];
                all.sort_unstable();
                *self = LocalKeys::Many(all);
                true
            }
            LocalKeys::Many(all) => match all.binary_search_by(|k| (**k).cmp(message)) {
                Ok(_) => false,
                Err(at) => {
                    all.insert(at, Box::from(message));
                    true
                }
            },
        }
    }

    /// Removes and returns the smallest message (the set's first in string order).
    pub(crate) fn pop_first(&mut self) -> Option<Box<str>> {
        match std::mem::take(self) {
            LocalKeys::Empty => None,
            LocalKeys::One(m) => Some(m),
            LocalKeys::Many(mut all) => {
                let first = all.remove(0);
                *self = match all.len() {
                    0 => LocalKeys::Empty,
                    1 => LocalKeys::One(all.remove(0)),
                    _ => LocalKeys::Many(all),
                };
                Some(first)
            }
        }
    }

    /// Number of distinct messages.
    pub(crate) fn len(&self) -> usize {
        match self {
            LocalKeys::Empty => 0,
            LocalKeys::One(_) => 1,
            LocalKeys::Many(all) => all.len(),
        }
    }
}

/// Upstream `EventAggregator` with `EventAggregatorByReasonFunc` and
/// `EventAggregatorByReasonMessageFunc`.
#[derive(Clone, Debug)]
struct EventAggregator {
    cache: Lru<KeyDigest, AggregateRecord>,
}

impl EventAggregator {
    /// Upstream `EventAggregate`: the event to write (the incoming one, or the aggregate) and its
    /// cache key for the logger (the full event key, or the aggregate key).
    fn aggregate(&mut self, event: Event, now: Tick) -> (Event, KeyDigest) {
        let event_key = KeyDigest::of(&event_key_parts(&event));
        let aggregate_key = KeyDigest::of(&aggregate_key_parts(&event));
        // Upstream gets the record (a copy), updates it and adds it back; updated in place here,
        // which leaves the same entries in the same recency order.
        let record = self.cache.get_or_insert_default(aggregate_key);
        // Too old (or never seen: upstream's zero time): start over.
        if record
            .last
            .is_none_or(|last| now.saturating_sub(last) > DEFAULT_AGGREGATE_INTERVAL_SECONDS)
        {
            *record = AggregateRecord::default();
        }
        record.local_keys.insert(&event.message);
        record.last = Some(now);
        if record.local_keys.len() < DEFAULT_AGGREGATE_MAX_EVENTS {
            return (event, event_key);
        }
        // Upstream `PopAny` keeps the set below the maximum; k8s-mini pops the smallest key.
        record.local_keys.pop_first();
        // Upstream copies only these fields (no reportingController/Instance); the name is
        // `<involved name>.<suffix>` as for any new event.
        let aggregate = Event {
            api_version: event.api_version,
            kind: event.kind,
            metadata: ObjectMeta {
                name: event.metadata.name,
                namespace: event.metadata.namespace,
                ..Default::default()
            },
            involved_object: event.involved_object,
            reason: event.reason,
            message: crate::format_compact!("{AGGREGATE_MESSAGE_PREFIX}{}", event.message),
            source: event.source,
            type_: event.type_,
            first_timestamp: event.first_timestamp,
            last_timestamp: event.last_timestamp,
            count: 1,
            reporting_component: None,
        };
        (aggregate, aggregate_key)
    }
}

/// Upstream `eventLog`: what the logger remembers of the Event written for a key (one per
/// distinct event a recorder wrote, so kept small: the name as its suffix when it is a name
/// k8s-mini generates, the first timestamp as its tick when it is a stamp k8s-mini writes).
#[derive(Clone, Debug)]
struct EventLog {
    count: i32,
    first_timestamp: Stamp,
    name: EventName,
}

impl EventLog {
    fn of(e: &Event) -> EventLog {
        EventLog {
            count: e.count,
            first_timestamp: Stamp::of(e.first_timestamp.as_deref()),
            name: EventName::of(&e.metadata.name, &e.involved_object.name),
        }
    }
}

/// An Event's name as the logger keeps it: the number of a name `<involved name>.<16 lowercase hex
/// digits>` (the form `super::make_event` gives every new Event), else the name itself. Every
/// event under one logger key has the same involved object (its name is part of the key), so the
/// number and the involved name give back the whole name without a string per entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum EventName {
    Suffix(u64),
    Text(Box<str>),
}

impl EventName {
    pub(crate) fn of(name: &str, involved_name: &str) -> EventName {
        let hex = name
            .strip_prefix(involved_name)
            .and_then(|rest| rest.strip_prefix('.'))
            .filter(|hex| hex.len() == 16);
        // One pass over the 16 digits (lowercase only: the form `push_lower_hex` writes).
        let suffix = hex.and_then(|hex| {
            hex.bytes().try_fold(0u64, |n, b| {
                let digit = match b {
                    b'0'..=b'9' => b - b'0',
                    b'a'..=b'f' => b - b'a' + 10,
                    _ => return None,
                };
                Some(n << 4 | u64::from(digit))
            })
        });
        match suffix {
            Some(n) => EventName::Suffix(n),
            None => EventName::Text(name.into()),
        }
    }

    /// Writes the name into `out` (cleared first).
    pub(crate) fn write_to(&self, involved_name: &str, out: &mut String) {
        out.clear();
        match self {
            EventName::Suffix(n) => {
                out.reserve(involved_name.len() + 17);
                out.push_str(involved_name);
                out.push('.');
                crate::meta::push_lower_hex(out, *n, 16);
            }
            EventName::Text(name) => out.push_str(name),
        }
    }
}

/// An optional RFC 3339 stamp, as its tick when [`crate::meta::tick_timestamp`] writes exactly
/// that text, else as the text: [`Stamp::text`] gives back the same string either way.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Stamp {
    None,
    Tick(Tick),
    Text(Box<str>),
}

impl Stamp {
    pub(crate) fn of(text: Option<&str>) -> Stamp {
        let Some(text) = text else {
            return Stamp::None;
        };
        match crate::meta::timestamp_tick(text) {
            Some(t)
                if crate::meta::tick_timestamp_bytes(t)
                    .is_some_and(|b| b.as_slice() == text.as_bytes()) =>
            {
                Stamp::Tick(t)
            }
            _ => Stamp::Text(text.into()),
        }
    }

    pub(crate) fn text(&self) -> Option<crate::CompactString> {
        match self {
            Stamp::None => None,
            Stamp::Tick(t) => Some(crate::meta::tick_timestamp_compact(*t)),
            Stamp::Text(s) => Some(s.as_ref().into()),
        }
    }
}

/// Upstream `eventLogger`.
#[derive(Clone, Debug)]
struct EventLogger {
    cache: Lru<KeyDigest, EventLog>,
}

impl EventLogger {
    /// Upstream `eventObserve`: a key seen before takes the earlier Event's name and
    /// `firstTimestamp` and counts one more; the observation is remembered either way.
    fn observe(&mut self, mut event: Event, key: KeyDigest) -> Event {
        if let Some(last) = self.cache.get(&key).filter(|l| l.count > 0) {
            last.name
                .write_to(&event.involved_object.name, &mut event.metadata.name);
            event.first_timestamp = last.first_timestamp.text();
            event.count = last.count + 1;
        }
        self.cache.add(key, EventLog::of(&event));
        event
    }

    /// Upstream `updateState`: remembers the Event as the apiserver returned it, under its own key.
    fn update_state(&mut self, event: &Event) {
        self.cache
            .add(KeyDigest::of(&event_key_parts(event)), EventLog::of(event));
    }
}

/// One token bucket of the spam filter, in token-seconds: a token is [`SPAM_REFILL_SECONDS`]
/// units and every second adds one unit, up to [`DEFAULT_SPAM_BURST`] tokens.
#[derive(Clone, Copy, Debug)]
struct TokenBucket {
    units: u64,
    last: Tick,
}

/// Upstream `EventSourceObjectSpamFilter` with `getSpamKey`, burst [`DEFAULT_SPAM_BURST`] and
/// `qps` 1/[`SPAM_REFILL_SECONDS`] (`flowcontrol.NewTokenBucketPassiveRateLimiterWithClock`, a
/// bucket that starts full).
#[derive(Clone, Debug)]
struct SpamFilter {
    cache: Lru<KeyDigest, TokenBucket>,
}

impl SpamFilter {
    /// Upstream `Filter`: true when the event must be dropped (no token left).
    fn filter(&mut self, event: &Event, now: Tick) -> bool {
        let capacity = DEFAULT_SPAM_BURST * SPAM_REFILL_SECONDS;
        let key = KeyDigest::of(&spam_key_parts(event));
        let mut bucket = self.cache.get(&key).copied().unwrap_or(TokenBucket {
            units: capacity,
            last: now,
        });
        bucket.units = (bucket.units + now.saturating_sub(bucket.last)).min(capacity);
        bucket.last = now;
        let accepted = bucket.units >= SPAM_REFILL_SECONDS;
        if accepted {
            bucket.units -= SPAM_REFILL_SECONDS;
        }
        self.cache.add(key, bucket);
        !accepted
    }
}

/// Upstream `EventCorrelator` as `NewEventCorrelator` configures it (the defaults above).
#[derive(Clone, Debug)]
pub struct EventCorrelator {
    aggregator: EventAggregator,
    logger: EventLogger,
    spam: SpamFilter,
}

impl Default for EventCorrelator {
    fn default() -> Self {
        Self::new()
    }
}

impl EventCorrelator {
    /// A correlator with empty caches.
    pub fn new() -> Self {
        EventCorrelator {
            aggregator: EventAggregator {
                cache: Lru::new(MAX_LRU_CACHE_ENTRIES),
            },
            logger: EventLogger {
                cache: Lru::new(MAX_LRU_CACHE_ENTRIES),
            },
            spam: SpamFilter {
                cache: Lru::new(MAX_LRU_CACHE_ENTRIES),
            },
        }
    }

    /// Upstream `EventCorrelate`: aggregate, observe, then filter. `None` when the spam filter
    /// drops the event; otherwise the event to write, which updates an existing Event (same name)
    /// when its `count` is above 1 (upstream `recordToSink`'s `Count > 1`).
    pub fn correlate(&mut self, event: Event, now: Tick) -> Option<Event> {
        let (event, key) = self.aggregator.aggregate(event, now);
        let observed = self.logger.observe(event, key);
        if self.spam.filter(&observed, now) {
            return None;
        }
        Some(observed)
    }

    /// Upstream `UpdateState`: the Event as the apiserver stored it after a successful write.
    pub fn update_state(&mut self, event: &Event) {
        self.logger.update_state(event);
    }
}
