//! k8s-deviceplugin
