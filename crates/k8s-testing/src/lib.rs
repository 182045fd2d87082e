//! Test support shared by k8s-mini's crates (a dev-dependency only, never a dependency of a
//! library): [`FakeApi`], a small in-memory apiserver behind the `ApiClient` contract, and
//! builders for the objects tests make most ([`node`], [`pod`], [`gang_pod`], [`pod_group`],
//! [`deployment`], [`rolling`], [`q`]).
//!
//! The real apiserver (k8s-api, with admission, validation and the watch cache) is what
//! k8s-cluster wires in; this fake keeps a component's tests independent of it, as the design
//! rule asks (library crates depend on siblings only through k8s-types).

mod api;
mod builders;

pub use api::FakeApi;
pub use builders::{deployment, gang_pod, node, pod, pod_group, q, rolling};
