//! k8s-controllers
