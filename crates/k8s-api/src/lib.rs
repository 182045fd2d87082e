//! k8s-api
