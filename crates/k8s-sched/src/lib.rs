//! k8s-sched
