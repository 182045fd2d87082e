//! k8s-store
