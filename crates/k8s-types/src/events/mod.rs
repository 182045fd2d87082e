//! Recording `v1` Events the way upstream's legacy recorder does (client-go `tools/record/event.go`:
//! `recorderImpl.generateEvent`/`makeEvent`, `eventBroadcasterImpl.recordToSink`, `recordEvent`).
//!
//! Each component owns one [`EventRecorder`] (upstream: each component has its own broadcaster,
//! whose sink runs one `EventCorrelator`). An occurrence is built as a new Event named
//! `<involved name>.<16 hex digits>`, passed through the [`EventCorrelator`] (aggregation, counting,
//! spam filter: see [`correlator`]), then either created, or written over the Event it repeats
//! (`count`, `lastTimestamp` and `message`, as upstream's patch) with `update` — a Modified watch
//! event.

pub mod correlator;

pub use correlator::EventCorrelator;

use crate::apiserver::ApiClient;
use crate::core::event::{Event, EventSource};
use crate::meta::{tick_timestamp_compact, ObjectMeta, ObjectReference};
use crate::object::{Kind, Object, Resource, Shared};
use crate::status::Status;
use crate::CompactString;

/// What an Event takes from the object it is about: its kind and metadata (upstream `ref.GetReference`
/// reads only these). Borrowed, so recording an event about a typed object never copies it.
#[derive(Clone, Debug)]
pub struct Involved<'a> {
    kind: Kind,
    meta: &'a ObjectMeta,
}

impl<'a> Involved<'a> {
    /// The kind and metadata of `object`.
    pub fn new(kind: Kind, meta: &'a ObjectMeta) -> Self {
        Involved { kind, meta }
    }

    /// A typed object (`Pod`, `Node`, ...).
    pub fn of<R: Resource>(object: &'a R) -> Self {
        Involved {
            kind: R::KIND,
            meta: object.meta(),
        }
    }
}

impl<'a> From<&'a Object> for Involved<'a> {
    fn from(object: &'a Object) -> Self {
        Involved {
            kind: object.kind(),
            meta: object.meta(),
        }
    }
}

/// What became of one occurrence.
#[derive(Clone, Debug, PartialEq)]
pub enum Recorded {
    /// A new Event was written (as the apiserver stored it, shared: not a copy).
    Created(Shared<Event>),
    /// An existing Event was counted up (as the apiserver stored it, shared).
    Updated(Shared<Event>),
    /// The spam filter had no token for it: nothing was written.
    Dropped,
    /// The apiserver refused the write (upstream gives up on such errors too).
    Failed(Status),
}

/// One component's event recorder: its default source and its correlator, on the apiserver's
/// clock.
#[derive(Clone, Debug)]
pub struct EventRecorder {
    source: EventSource,
    correlator: EventCorrelator,
}

impl EventRecorder {
    /// A recorder writing as `source` (upstream `NewRecorder(scheme, source)`), with empty caches.
    pub fn new(source: EventSource) -> Self {
        EventRecorder {
            source,
            correlator: EventCorrelator::new(),
        }
    }

    /// A recorder for `component` with no host (controllers, the scheduler).
    pub fn for_component(component: &str) -> Self {
        Self::new(EventSource {
            component: component.into(),
            host: CompactString::default(),
        })
    }

    /// The source its events carry.
    pub fn source(&self) -> &EventSource {
        &self.source
    }

    /// Records an event about `involved` (upstream `recorder.Event`, then the sink's
    /// `recordToSink`). Write failures are returned, not retried: upstream retries only transport
    /// errors, which k8s-mini has none of.
    pub fn record<'a>(
        &mut self,
        api: &mut dyn ApiClient,
        involved: impl Into<Involved<'a>>,
        type_: &str,
        reason: &str,
        message: impl Into<CompactString>,
    ) -> Recorded {
        let source = self.source.clone();
        self.record_as(api, source, involved, type_, reason, message)
    }

    /// [`EventRecorder::record`] with another source (the scheduler's profiles each write as their
    /// own `schedulerName`; upstream gives each profile a recorder of one broadcaster).
    pub fn record_as<'a>(
        &mut self,
        api: &mut dyn ApiClient,
        source: EventSource,
        involved: impl Into<Involved<'a>>,
        type_: &str,
        reason: &str,
        message: impl Into<CompactString>,
    ) -> Recorded {
        let now = api.now();
        let event = make_event(api, involved.into(), type_, reason, message.into(), source);
        let Some(event) = self.correlator.correlate(event, now) else {
            return Recorded::Dropped;
        };
        let written = if event.count > 1 {
            update_existing(api, event)
        } else {
            create(api, event)
        };
        if let Recorded::Created(e) | Recorded::Updated(e) = &written {
            self.correlator.update_state(e);
        }
        written
    }
}

/// Upstream `makeEvent` + `generateEvent`: a new Event about `involved`, `count` 1, first and last
/// timestamp now. The name suffix is the store revision the Event would get, in 16 hex digits
/// (upstream: the time in nanoseconds), so names are unique and deterministic. Events about
/// cluster-scoped objects live in `default`.
pub fn make_event(
    api: &dyn ApiClient,
    involved: Involved<'_>,
    type_: &str,
    reason: &str,
    message: CompactString,
    source: EventSource,
) -> Event {
    let Involved { kind, meta } = involved;
    let now = tick_timestamp_compact(api.now());
    Event {
        api_version: "v1".into(),
        kind: "Event".into(),
        metadata: ObjectMeta {
            name: fresh_name(api, &meta.name),
            namespace: Some(match meta.namespace() {
                "" => "default".into(),
                ns => ns.into(),
            }),
            ..Default::default()
        },
        involved_object: ObjectReference {
            kind: kind.name().into(),
            namespace: meta.namespace().into(),
            name: meta.name.as_str().into(),
            uid: meta.uid.as_deref().unwrap_or_default().into(),
            api_version: kind.api_version().into(),
            resource_version: meta.resource_version.as_deref().unwrap_or_default().into(),
            field_path: Box::default(),
        },
        reason: reason.into(),
        message,
        reporting_component: Some(source.component.clone()),
        source,
        type_: type_.into(),
        first_timestamp: Some(now.clone()),
        last_timestamp: Some(now),
        count: 1,
    }
}

/// `<involved name>.<16 hex digits>`: the revision the Event will be written at, as
/// `format!("{name}.{:016x}")` writes it.
fn fresh_name(api: &dyn ApiClient, involved_name: &str) -> String {
    let mut name = String::with_capacity(involved_name.len() + 17);
    name.push_str(involved_name);
    name.push('.');
    crate::meta::push_lower_hex(&mut name, (api.revision() + 1) as u64, 16);
    name
}

fn create(api: &mut dyn ApiClient, mut event: Event) -> Recorded {
    // Upstream clears the resourceVersion before a create.
    event.metadata.resource_version = None;
    match api
        .create_shared(Object::Event(Box::new(event)))
        .map(Shared::new)
    {
        Ok(Some(e)) => Recorded::Created(e),
        Ok(None) => Recorded::Failed(Status::internal("stored object has the wrong kind")),
        Err(e) => Recorded::Failed(e),
    }
}

/// True when `stored` is the Event `event` repeats: same source, involved object, type and reason
/// (the message of an aggregate changes with every occurrence).
fn same_series(stored: &Event, event: &Event) -> bool {
    let (a, b) = (&stored.involved_object, &event.involved_object);
    stored.source == event.source
        && a.kind == b.kind
        && a.namespace == b.namespace
        && a.name == b.name
        && a.uid == b.uid
        && stored.type_ == event.type_
        && stored.reason == event.reason
}

/// Upstream `recordEvent` with `updateExistingEvent`: the patch of `count`, `lastTimestamp` and
/// `message` onto the Event of that name (here a read and an `update`); when it is gone, a create
/// of the whole event under the same name. k8s-mini's revision-derived names can, unlike
/// upstream's nanosecond ones, have been taken by an unrelated Event when the first occurrence was
/// dropped; that case creates the event under a fresh name.
fn update_existing(api: &mut dyn ApiClient, mut event: Event) -> Recorded {
    let namespace = event.metadata.namespace().to_string();
    match api.get(&Kind::Event, &namespace, &event.metadata.name) {
        Ok(Object::Event(mut stored)) if same_series(&stored, &event) => {
            stored.count = event.count;
            stored.last_timestamp = event.last_timestamp;
            stored.message = event.message;
            match api.update_shared(Object::Event(stored)).map(Shared::new) {
                Ok(Some(e)) => Recorded::Updated(e),
                Ok(None) => Recorded::Failed(Status::internal("stored object has the wrong kind")),
                Err(e) => Recorded::Failed(e),
            }
        }
        Err(e) if e.is_not_found() => create(api, event),
        Err(e) => Recorded::Failed(e),
        Ok(_) => {
            event.metadata.name = fresh_name(api, &event.involved_object.name);
            create(api, event)
        }
    }
}

#[cfg(test)]
mod tests;
