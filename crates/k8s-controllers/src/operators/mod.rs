//! Operators: controllers of custom resources, written the way an out-of-tree operator is. Each
//! lives in its own folder, depends on the interface crate `k8s-types` only (the
//! [`k8s_types::controller::Controller`] contract, informers, the apiserver client) and nothing
//! else of this crate, reads its custom resource untyped from a shared informer, ships its
//! CustomResourceDefinition as a YAML file, and is registered by whoever builds the controller
//! manager, like a user's own controller ([`crate::ControllerManager::register`]).
//! docs/operators.md walks through writing one.
//!
//! - [`pytorchjob`]: kubeflow.org/v1 PyTorchJob (kubeflow/training-operator v1) with gang
//!   scheduling through a coscheduling PodGroup.

pub mod pytorchjob;
