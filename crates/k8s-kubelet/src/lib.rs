//! k8s-kubelet: the node agent (upstream `pkg/kubelet`). One [`Kubelet`] per node registers its
//! Node, reports capacity (machine + device plugins) and status, and runs the pods bound to it:
//! admission re-check, device allocation through the device plugins, pod IPs from the podCIDR,
//! simulated containers going ContainerCreating -> Running, and deletion.
//!
//! Modules, each mirroring one upstream piece:
//! - [`kubelet`]: the sync loop (`syncLoop`, `HandlePodAdditions`, `syncPod`, pod cleanup);
//! - [`node_status`]: registration and the node status setters; [`node_lease`]: the Lease
//!   heartbeat;
//! - [`admission`]: the predicate admit handler (resources, node affinity, host ports, taints);
//! - [`device_manager`]: the device manager (`cm/devicemanager`);
//! - [`sync_pod`]: the pod status the kubelet generates and its container events;
//! - [`runtime`]: the simulated container runtime and pod records (`computePodActions`);
//! - [`container`]: one container's state, restarts and last termination;
//! - [`behavior`]: what a container does (declared), [`prober`]: probes on the virtual clock,
//!   [`backoff`]: the restart and image-pull back-off;
//! - [`pod_ip`]: pod IPs from the node's podCIDR (the CNI `host-local` IPAM's job);
//! - [`power`]: the machine losing power and booting again (containers lost, `Rebooted`).
//!
//! The kubelet talks to device plugins only through [`k8s_types::deviceplugin::DevicePlugin`] and
//! to the cluster only through [`k8s_types::apiserver::ApiClient`].

pub mod admission;
pub mod backoff;
pub mod behavior;
pub mod container;
pub mod device_manager;
pub mod dra;
pub mod kubelet;
pub mod node_lease;
pub mod node_status;
pub mod pod_ip;
pub mod power;
pub mod prober;
pub mod runtime;
pub mod sync_pod;

pub use kubelet::{Kubelet, KubeletConfig};
