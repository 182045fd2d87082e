//! k8s-api: the kube-apiserver of k8s-mini. [`ApiServer`] implements
//! [`k8s_types::apiserver::ApiClient`] over any [`k8s_types::store::ObjectStore`]: create, get,
//! list, update, update_status, delete (graceful for pods), the `pods/binding` subresource and
//! watch, with upstream's defaulting, admission, validation and error texts.
//!
//! Request pipeline (upstream `k8s.io/apiserver/pkg/endpoints/handlers` and
//! `k8s.io/apiserver/pkg/registry/generic/registry/store.go`): [`defaults`] (decode-time) ->
//! mutating [`admission`] -> the kind's strategy in [`registry`] (status reset/keep, generation,
//! system fields, generated names from [`names`]) -> [`validation`] (all field errors at once) ->
//! validating [`admission`] -> the store.
//!
//! Modules: [`server`] (the struct), [`verbs`], [`dry_run`] (`dryRun=All`: every write checked, none stored), [`subresources`] (`pods/binding`), [`qos`],
//! [`errors`] (Status builders), [`watch_cache`] (the `spec.nodeName` pod index kubelets list from).
//!
//! Determinism: timestamps come from [`ApiServer::set_tick`]; generated names and UIDs are derived
//! from the store revision, never from randomness or wall time.

pub mod admission;
pub mod apiextensions;
pub mod defaults;
pub mod dry_run;
pub mod errors;
pub mod names;
mod pod_shares;
pub mod qos;
pub mod registry;
pub mod server;
pub mod subresources;
pub mod validation;
pub mod verbs;
pub mod watch_cache;

pub use admission::AdmissionChain;
pub use server::ApiServer;
