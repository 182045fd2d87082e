//! k8s-cluster
