//! Building and recording `v1` Events the way upstream's `record.EventRecorder` does: one Event object
//! per occurrence, named `<involved name>.<16 hex digits>`, created through the apiserver.

use crate::apiserver::ApiClient;
use crate::core::event::{Event, EventSource};
use crate::meta::{tick_timestamp, ObjectMeta, ObjectReference};
use crate::object::Object;

/// Records an event about `involved` through `api`. The name suffix is the store revision the event
/// will get, in 16 hex digits, so names are unique and deterministic. Failures are ignored, as
/// upstream's recorder drops events it cannot write.
pub fn record(
    api: &mut dyn ApiClient,
    involved: &Object,
    type_: &str,
    reason: &str,
    message: impl Into<String>,
    source: EventSource,
) {
    let meta = involved.meta();
    let kind = involved.kind();
    let now = tick_timestamp(api.now());
    let event = Event {
        api_version: "v1".into(),
        kind: "Event".into(),
        metadata: ObjectMeta {
            name: format!("{}.{:016x}", meta.name, api.revision() + 1),
            namespace: Some(match meta.namespace() {
                "" => "default".to_string(),
                ns => ns.to_string(),
            }),
            ..Default::default()
        },
        involved_object: ObjectReference {
            kind: kind.name().to_string(),
            namespace: meta.namespace().to_string(),
            name: meta.name.clone(),
            uid: meta.uid.clone().unwrap_or_default(),
            api_version: kind.api_version().to_string(),
            resource_version: meta.resource_version.clone().unwrap_or_default(),
            field_path: String::new(),
        },
        reason: reason.to_string(),
        message: message.into(),
        reporting_component: Some(source.component.clone()),
        source,
        type_: type_.to_string(),
        first_timestamp: Some(now.clone()),
        last_timestamp: Some(now),
        count: 1,
    };
    let _ = api.create(Object::Event(event));
}
