//! The `discovery.k8s.io/v1` API group: EndpointSlice (upstream `k8s.io/api/discovery/v1`).

pub mod endpoint_slice;

pub use endpoint_slice::*;
