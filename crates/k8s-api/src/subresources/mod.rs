//! Subresources with their own REST handlers: `pods/binding` and `pods/eviction` (the `/status`
//! subresource is the `update_status` verb in [`crate::verbs::update`]).

pub mod binding;
pub mod eviction;
