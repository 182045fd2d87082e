//! k8s-types: the Kubernetes API objects k8s-mini understands and the traits every other crate talks
//! through.
//!
//! Where to start:
//! - [`meta`]: `ObjectMeta`, `OwnerReference`, `TypeMeta` (upstream `k8s.io/apimachinery/pkg/apis/meta/v1`).
//! - [`core`], [`apps`], [`scheduling`]: the objects, shaped and named as upstream so real manifests
//!   deserialize (unknown fields are ignored).
//! - [`object::Object`]: one enum over every kind, the unit the store and apiserver move around.
//! - [`quantity::Quantity`]: `resource.Quantity` with upstream parse and print rules.
//! - [`labels`]: label selectors (and their string form); [`validation`]: name and label syntax
//!   checks with upstream's messages; [`core::taints`]: taint/toleration matching.
//! - Component boundaries, one module each: [`store`] (etcd), [`apiserver`] (kube-apiserver),
//!   [`admission`], [`deviceplugin`], [`controller`]. The scheduler framework (what a plugin sees)
//!   is its own interface crate, `k8s-sched-framework`.
//! - [`status`]: apimachinery `Status` errors (NotFound, AlreadyExists, Conflict, Invalid...).
//!
//! Architecture invariant: this crate depends on no sibling crate; every other library crate depends on
//! siblings only through interface crates (this one, and `k8s-sched-framework` for the scheduler).

pub mod admission;
pub mod apiextensions;
pub mod apiserver;
pub mod apps;
pub mod batch;
pub mod conflict;
pub mod controller;
pub mod coordination;
pub mod core;
pub mod cow_arc;
pub mod deviceplugin;
pub mod discovery;
pub mod events;
pub mod gpushare;
pub mod informer;
pub mod labels;
pub mod meta;
pub mod node;
pub mod object;
pub mod policy;
pub mod quantity;
pub mod quota;
pub mod resource;
pub mod resources;
pub mod rng;
pub mod scheduling;
pub mod status;
pub mod store;
pub mod validation;
pub mod workqueue;

pub use compact_str::{format_compact, CompactString, ToCompactString};
pub use object::{Kind, Object, Resource, Shared};
pub use quantity::{Format, Quantity, QuantityError};
pub use thin_vec::ThinVec;

/// Simulated time. One tick is the unit of the tick loop; k8s-mini maps one tick to one second of
/// wall-clock time wherever upstream speaks in seconds (backoff, timeouts, startup delays).
pub type Tick = u64;
