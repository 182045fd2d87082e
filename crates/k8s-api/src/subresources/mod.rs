//! Subresources with their own REST handlers: `pods/binding`, `pods/eviction` and
//! `namespaces/finalize` (the `/status`
//! subresource is the `update_status` verb in [`crate::verbs::update`]).

pub mod binding;
pub mod eviction;
pub mod finalize;
