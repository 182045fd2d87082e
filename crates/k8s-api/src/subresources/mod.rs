//! Subresources with their own REST handlers. Only `pods/binding` is simulated (the `/status`
//! subresource is the `update_status` verb in [`crate::verbs::update`]).

pub mod binding;
