//! k8s-kubelet
