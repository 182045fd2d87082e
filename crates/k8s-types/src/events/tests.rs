//! The correlator's rules, each checked against a value worked out by hand from client-go
//! `tools/record/events_cache.go`.

use std::collections::BTreeMap;

use super::correlator::{
    event_key, spam_key, EventName, KeyDigest, LocalKeys, Lru, Stamp, AGGREGATE_MESSAGE_PREFIX,
};
use super::*;
use crate::core::event::event_types::{NORMAL, WARNING};
use crate::core::{Binding, Pod};
use crate::labels::LabelSelector;
use crate::meta::timestamp_tick;
use crate::store::WatchEvent;
use crate::Tick;

/// An apiserver holding only Events: create, get, update, list.
#[derive(Default)]
struct EventApi {
    now: Tick,
    revision: i64,
    objects: BTreeMap<String, Object>,
}

impl EventApi {
    fn events(&self) -> Vec<Event> {
        self.objects
            .values()
            .filter_map(|o| match o {
                Object::Event(e) => Some((**e).clone()),
                _ => None,
            })
            .collect()
    }
}

impl ApiClient for EventApi {
    fn now(&self) -> Tick {
        self.now
    }

    fn revision(&self) -> i64 {
        self.revision
    }

    fn create(&mut self, mut obj: Object) -> Result<Object, Status> {
        let key = obj.key();
        if self.objects.contains_key(&key) {
            return Err(Status::already_exists(&obj.kind(), &obj.meta().name));
        }
        self.revision += 1;
        obj.meta_mut().resource_version =
            Some(crate::ToCompactString::to_compact_string(&self.revision));
        self.objects.insert(key, obj.clone());
        Ok(obj)
    }

    fn get(&self, kind: &Kind, namespace: &str, name: &str) -> Result<Object, Status> {
        self.objects
            .get(&kind.key(namespace, name))
            .cloned()
            .ok_or_else(|| Status::not_found(kind, name))
    }

    fn list(&self, _: &Kind, _: Option<&str>, _: Option<&LabelSelector>) -> Vec<Object> {
        self.objects.values().cloned().collect()
    }

    fn update(&mut self, mut obj: Object) -> Result<Object, Status> {
        let key = obj.key();
        let Some(stored) = self.objects.get(&key) else {
            return Err(Status::not_found(&obj.kind(), &obj.meta().name));
        };
        if obj.meta().resource_version != stored.meta().resource_version {
            return Err(Status::conflict(&obj.kind(), &obj.meta().name));
        }
        self.revision += 1;
        obj.meta_mut().resource_version =
            Some(crate::ToCompactString::to_compact_string(&self.revision));
        self.objects.insert(key, obj.clone());
        Ok(obj)
    }

    fn update_status(&mut self, obj: Object) -> Result<Object, Status> {
        self.update(obj)
    }

    fn delete(
        &mut self,
        kind: &Kind,
        namespace: &str,
        name: &str,
        _: crate::apiserver::DeleteOptions,
    ) -> Result<Object, Status> {
        self.revision += 1;
        self.objects
            .remove(&kind.key(namespace, name))
            .ok_or_else(|| Status::not_found(kind, name))
    }

    fn bind(&mut self, _: &Binding) -> Result<Pod, Status> {
        Err(Status::internal("no pods here"))
    }

    fn watch(&self, _: &Kind, _: i64) -> Result<Vec<WatchEvent>, Status> {
        Ok(Vec::new())
    }
}

fn pod(name: &str) -> Object {
    let mut p = Pod::default();
    p.metadata.name = name.to_string();
    p.metadata.namespace = Some("default".into());
    p.metadata.uid = Some(format!("uid-{name}"));
    Object::Pod(Box::new(p))
}

fn recorder() -> EventRecorder {
    EventRecorder::for_component("test-controller")
}

fn created(r: Recorded) -> Event {
    match r {
        Recorded::Created(e) => (*e).clone(),
        other => panic!("expected a create, got {other:?}"),
    }
}

fn updated(r: Recorded) -> Event {
    match r {
        Recorded::Updated(e) => (*e).clone(),
        other => panic!("expected an update, got {other:?}"),
    }
}

fn tick(ts: &Option<crate::CompactString>) -> Tick {
    ts.as_deref().and_then(timestamp_tick).expect("timestamp")
}

#[test]
fn first_occurrence_is_created_with_count_one_and_a_revision_name() {
    let (mut api, mut r) = (EventApi::default(), recorder());
    api.revision = 41;
    let e = created(r.record(
        &mut api,
        &pod("p"),
        NORMAL,
        "Started",
        "Started container app",
    ));
    assert_eq!(e.metadata.name, "p.000000000000002a");
    assert_eq!(e.count, 1);
    assert_eq!(e.source.component, "test-controller");
    assert_eq!(e.reporting_component.as_deref(), Some("test-controller"));
}

/// An Event about a typed pod (`Involved::of`, no copy of the pod) is the Event recorded about the
/// same pod as an `Object`, and both count as one series: the second is an update (count 2).
#[test]
fn typed_involved_object_records_the_same_event_as_the_object() {
    let (mut api, mut r) = (EventApi::default(), recorder());
    let Object::Pod(mut typed) = pod("p") else {
        unreachable!("pod() builds a Pod")
    };
    typed.metadata.resource_version = Some("7".into());
    let first = created(r.record(&mut api, Involved::of(&*typed), NORMAL, "Pulled", "m"));
    let mut other = EventRecorder::for_component("test-controller");
    let mut api2 = EventApi::default();
    let object = Object::Pod(typed.clone());
    let same = created(other.record(&mut api2, &object, NORMAL, "Pulled", "m"));
    assert_eq!(first, same);
    assert_eq!(first.involved_object.kind, "Pod");
    assert_eq!(first.involved_object.api_version, "v1");
    assert_eq!(first.involved_object.uid, "uid-p");
    assert_eq!(first.involved_object.resource_version, "7");
    let again = updated(r.record(&mut api, Involved::of(&*typed), NORMAL, "Pulled", "m"));
    assert_eq!((again.metadata.name, again.count), (first.metadata.name, 2));
}

#[test]
fn identical_event_increments_count_and_keeps_first_timestamp() {
    let (mut api, mut r) = (EventApi::default(), recorder());
    api.now = 5;
    let first = created(r.record(&mut api, &pod("p"), WARNING, "BackOff", "Back-off"));
    api.now = 9;
    let again = updated(r.record(&mut api, &pod("p"), WARNING, "BackOff", "Back-off"));
    assert_eq!(again.metadata.name, first.metadata.name);
    assert_eq!(again.count, 2);
    assert_eq!(tick(&again.first_timestamp), 5);
    assert_eq!(tick(&again.last_timestamp), 9);
    api.now = 12;
    let third = updated(r.record(&mut api, &pod("p"), WARNING, "BackOff", "Back-off"));
    assert_eq!((third.count, tick(&third.first_timestamp)), (3, 5));
    assert_eq!(api.events().len(), 1);
    // Another message, reason, type or object is another Event.
    created(r.record(&mut api, &pod("p"), WARNING, "BackOff", "Back-off 2"));
    created(r.record(&mut api, &pod("p"), WARNING, "Failed", "Back-off"));
    created(r.record(&mut api, &pod("p"), NORMAL, "BackOff", "Back-off"));
    created(r.record(&mut api, &pod("q"), WARNING, "BackOff", "Back-off"));
    assert_eq!(api.events().len(), 5);
}

#[test]
fn tenth_similar_event_becomes_the_aggregate() {
    let (mut api, mut r) = (EventApi::default(), recorder());
    let msg = |i: usize| format!("Created pod: p-{i:02}");
    // Nine distinct messages of one (source, object, type, reason): nine Events.
    for i in 0..9 {
        let e = created(r.record(&mut api, &pod("rs"), NORMAL, "SuccessfulCreate", msg(i)));
        assert_eq!(e.message, msg(i));
    }
    // The tenth makes ten distinct messages: a new Event with the combined message, count 1.
    let agg = created(r.record(&mut api, &pod("rs"), NORMAL, "SuccessfulCreate", msg(9)));
    assert_eq!(
        agg.message,
        "(combined from similar events): Created pod: p-09"
    );
    assert!(agg.message.starts_with(AGGREGATE_MESSAGE_PREFIX));
    assert_eq!(agg.count, 1);
    assert_eq!(agg.reporting_component, None);
    // The eleventh counts that Event up and carries the latest message.
    api.now = 3;
    let next = updated(r.record(&mut api, &pod("rs"), NORMAL, "SuccessfulCreate", msg(10)));
    assert_eq!(next.metadata.name, agg.metadata.name);
    assert_eq!(next.count, 2);
    assert_eq!(
        next.message,
        "(combined from similar events): Created pod: p-10"
    );
    assert_eq!(
        (tick(&next.first_timestamp), tick(&next.last_timestamp)),
        (0, 3)
    );
    assert_eq!(api.events().len(), 10);
}

#[test]
fn a_message_still_in_the_local_set_is_counted_on_its_own_event() {
    let (mut api, mut r) = (EventApi::default(), recorder());
    for i in 0..10 {
        r.record(&mut api, &pod("rs"), NORMAL, "R", format!("m{i}"));
    }
    // The set held m0..m9; m0 (the smallest) was popped, so m5 is still in it: nine keys, no
    // aggregation, and m5's own Event counts 2.
    let e = updated(r.record(&mut api, &pod("rs"), NORMAL, "R", "m5"));
    assert_eq!((e.message.as_str(), e.count), ("m5", 2));
    // m0 was popped: it makes ten again and counts up the aggregate.
    let e = updated(r.record(&mut api, &pod("rs"), NORMAL, "R", "m0"));
    assert_eq!(e.message, format!("{AGGREGATE_MESSAGE_PREFIX}m0"));
    assert_eq!(e.count, 2);
}

#[test]
fn similar_events_more_than_600_seconds_apart_start_a_new_group() {
    for (gap, aggregated) in [(600, true), (601, false)] {
        let (mut api, mut r) = (EventApi::default(), recorder());
        for i in 0..9 {
            r.record(&mut api, &pod("rs"), NORMAL, "R", format!("m{i}"));
        }
        api.now = gap;
        let e = created(r.record(&mut api, &pod("rs"), NORMAL, "R", "m9"));
        assert_eq!(
            e.message.starts_with(AGGREGATE_MESSAGE_PREFIX),
            aggregated,
            "gap {gap}"
        );
    }
}

#[test]
fn twenty_sixth_event_in_a_tick_is_dropped_and_a_token_returns_after_300_ticks() {
    let (mut api, mut r) = (EventApi::default(), recorder());
    let mut record = |api: &mut EventApi| r.record(api, &pod("p"), WARNING, "BackOff", "Back-off");
    for n in 1..=25 {
        let got = record(&mut api);
        let e = if n == 1 { created(got) } else { updated(got) };
        assert_eq!(e.count, n);
    }
    assert_eq!(record(&mut api), Recorded::Dropped);
    api.now = 299;
    assert_eq!(record(&mut api), Recorded::Dropped);
    api.now = 300;
    // The logger counted the two dropped occurrences before the filter dropped them (upstream
    // observes, then filters): 25 + 2 + 1.
    let e = updated(record(&mut api));
    assert_eq!(e.count, 28);
    assert_eq!(record(&mut api), Recorded::Dropped);
    assert_eq!(api.events().len(), 1);
    assert_eq!(api.events()[0].count, 28);
}

#[test]
fn the_spam_bucket_is_per_object_and_type() {
    let (mut api, mut r) = (EventApi::default(), recorder());
    for i in 0..25 {
        r.record(&mut api, &pod("p"), NORMAL, "R", format!("m{i}"));
    }
    assert_eq!(
        r.record(&mut api, &pod("p"), NORMAL, "Other", "x"),
        Recorded::Dropped
    );
    created(r.record(&mut api, &pod("p"), WARNING, "Other", "x"));
    created(r.record(&mut api, &pod("q"), NORMAL, "Other", "x"));
    let mut other = EventRecorder::for_component("another-controller");
    created(other.record(&mut api, &pod("p"), NORMAL, "Other", "x"));
}

#[test]
fn a_repeat_of_a_deleted_event_is_created_again_under_its_name() {
    let (mut api, mut r) = (EventApi::default(), recorder());
    let e = created(r.record(&mut api, &pod("p"), NORMAL, "R", "m"));
    api.delete(
        &Kind::Event,
        "default",
        &e.metadata.name,
        Default::default(),
    )
    .expect("delete");
    let again = created(r.record(&mut api, &pod("p"), NORMAL, "R", "m"));
    assert_eq!((again.metadata.name, again.count), (e.metadata.name, 2));
}

#[test]
fn lru_evicts_the_least_recently_used_entry() {
    let mut lru = Lru::new(2);
    lru.add("a", 1);
    lru.add("b", 2);
    assert_eq!(lru.get(&"a"), Some(&1));
    lru.add("c", 3);
    assert_eq!(lru.get(&"b"), None);
    assert_eq!(lru.get(&"a"), Some(&1));
    lru.add("a", 4);
    lru.add("d", 5);
    assert_eq!(lru.get(&"c"), None);
    assert_eq!(lru.get(&"a"), Some(&4));
    assert_eq!(lru.len(), 2);
}

/// The caches' digests follow upstream's string keys: parts joined without a separator, so a
/// key split differently between its parts is the same key (upstream `getEventKey` concatenates),
/// and the digest of the parts is the digest of the key string.
#[test]
fn key_digests_are_digests_of_the_joined_key() {
    assert_eq!(KeyDigest::of(&["ab", "c"]), KeyDigest::of(&["a", "bc"]));
    assert_eq!(KeyDigest::of(&["ab", "c"]), KeyDigest::of(&["abc"]));
    assert_ne!(KeyDigest::of(&["abc"]), KeyDigest::of(&["abd"]));
    assert_ne!(KeyDigest::of(&[""]), KeyDigest::of(&["a"]));
    let mut e = Event::default();
    e.source.component = "kubelet".into();
    e.involved_object.name = "p".into();
    e.reason = "Pulled".into();
    e.message = "m".into();
    assert_eq!(
        KeyDigest::of(&[event_key(&e).as_str()]),
        KeyDigest::of(&["kubelet", "p", "Pulled", "m"])
    );
    assert_eq!(
        KeyDigest::of(&[spam_key(&e).as_str()]),
        KeyDigest::of(&["kubeletp"])
    );
    // Keys longer than the stack buffer (512 bytes) are joined on the heap: the same digest
    // whichever way the parts are split, and the digest of the whole string.
    let long = "x".repeat(700);
    let (a, b) = long.split_at(300);
    assert_eq!(KeyDigest::of(&[a, b]), KeyDigest::of(&[long.as_str()]));
    assert_eq!(
        KeyDigest::of(&[long.as_str()]),
        KeyDigest(xxhash_rust::xxh3::xxh3_128(long.as_bytes()))
    );
    let (c, d) = long.split_at(512);
    assert_eq!(KeyDigest::of(&[&c[..511], "x"]), KeyDigest::of(&[c]));
    assert_ne!(KeyDigest::of(&[c, d]), KeyDigest::of(&[c]));
}

#[test]
fn local_keys_are_a_set_in_string_order() {
    // Inserted out of order and with a repeat: the set holds each message once and pops them
    // smallest first, as the `BTreeSet<String>` it replaces did ("m10" < "m2" as strings).
    let mut keys = LocalKeys::default();
    assert!(keys.insert("m2"));
    assert!(keys.insert("m10"));
    assert!(!keys.insert("m2"));
    assert!(keys.insert("a"));
    assert_eq!(keys.len(), 3);
    let popped: Vec<Option<Box<str>>> = (0..4).map(|_| keys.pop_first()).collect();
    assert_eq!(
        popped,
        vec![
            Some("a".into()),
            Some("m10".into()),
            Some("m2".into()),
            None
        ]
    );
    assert_eq!(keys.len(), 0);
}

/// Updating an entry in place (`get_or_insert_default`) leaves the entries, their values and
/// their recency order as upstream's `get`, update and `add` of the copy do, evictions included.
#[test]
fn in_place_updates_keep_the_lru_order_of_get_then_add() {
    let mut a: Lru<u32, u32> = Lru::new(3);
    let mut b: Lru<u32, u32> = Lru::new(3);
    let mut x: u64 = 7;
    for _ in 0..500 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let key = ((x >> 33) % 6) as u32;
        let v = a.get(&key).copied().unwrap_or_default() + 1;
        a.add(key, v);
        *b.get_or_insert_default(key) += 1;
        assert_eq!(a.by_recency(), b.by_recency());
    }
    assert_eq!(a.len(), 3);
}

/// One message is held without a list; a second makes a sorted list, popping gives the smallest
/// first and falls back to one message, then none.
#[test]
fn local_keys_with_one_message_and_back() {
    let mut keys = LocalKeys::default();
    assert_eq!(keys.len(), 0);
    assert!(keys.insert("b"));
    assert!(!keys.insert("b"));
    assert_eq!(keys, LocalKeys::One("b".into()));
    assert!(keys.insert("a"));
    assert_eq!(keys, LocalKeys::Many(vec!["a".into(), "b".into()]));
    assert_eq!(keys.pop_first().as_deref(), Some("a"));
    assert_eq!(keys, LocalKeys::One("b".into()));
    assert!(!keys.insert("b"));
    assert_eq!(keys.pop_first().as_deref(), Some("b"));
    assert_eq!(keys, LocalKeys::Empty);
    assert_eq!(keys.pop_first(), None);
}

/// The logger keeps a first timestamp as its tick only when the tick writes the same text back.
#[test]
fn stamps_give_back_their_text() {
    let t: Tick = 1_709_208_000;
    let text = crate::meta::tick_timestamp(t);
    assert_eq!(Stamp::of(Some(&text)), Stamp::Tick(t));
    assert_eq!(
        Stamp::of(Some(&text)).text().as_deref(),
        Some(text.as_str())
    );
    // Read by `timestamp_tick`, but not the text `tick_timestamp` writes: kept as text.
    let odd = "2024-+2-29T12:00:00Z";
    assert_eq!(timestamp_tick(odd), Some(t));
    assert_eq!(Stamp::of(Some(odd)), Stamp::Text(odd.into()));
    assert_eq!(Stamp::of(Some(odd)).text().as_deref(), Some(odd));
    assert_eq!(
        Stamp::of(Some("yesterday")).text().as_deref(),
        Some("yesterday")
    );
    assert_eq!(Stamp::of(None), Stamp::None);
    assert_eq!(Stamp::of(None).text(), None);
    // A year past 9999 is written through `format!`: kept as text, given back the same.
    let far = crate::meta::tick_timestamp(400_000_000_000);
    assert_eq!(Stamp::of(Some(&far)).text().as_deref(), Some(far.as_str()));
}

#[test]
fn event_names_give_back_their_text() {
    let back = |n: &EventName, involved: &str| {
        let mut out = String::from("old");
        n.write_to(involved, &mut out);
        out
    };
    // The generated form: kept as the number 0xa9d5.
    let n = EventName::of("web-0.000000000000a9d5", "web-0");
    assert_eq!(n, EventName::Suffix(0xa9d5));
    assert_eq!(back(&n, "web-0"), "web-0.000000000000a9d5");
    // An involved name with dots of its own.
    let n = EventName::of("a.b.00000000000000ff", "a.b");
    assert_eq!(n, EventName::Suffix(255));
    assert_eq!(back(&n, "a.b"), "a.b.00000000000000ff");
    // Not the generated form (uppercase hex, 15 digits, another prefix, no dot): kept as text.
    for (name, involved) in [
        ("web-0.000000000000A9D5", "web-0"),
        ("web-0.00000000000a9d5", "web-0"),
        ("web-1.000000000000a9d5", "web-0"),
        ("web-0-000000000000a9d5", "web-0"),
        ("my-event", "web-0"),
    ] {
        let n = EventName::of(name, involved);
        assert_eq!(n, EventName::Text(name.into()));
        assert_eq!(back(&n, involved), name);
    }
}
