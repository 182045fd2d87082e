//! k8s-deviceplugin: the NVIDIA GPU device plugin (upstream `NVIDIA/k8s-device-plugin`,
//! `internal/plugin/server.go` and `internal/rm/`) as an in-process
//! [`k8s_types::deviceplugin::DevicePlugin`].
//!
//! What a kubelet sees of it, as with the real gRPC plugin:
//! - it registers under the extended resource [`RESOURCE_NAME`] (`nvidia.com/gpu`) with
//!   `GetPreferredAllocationAvailable: true`;
//! - `ListAndWatch` streams every GPU with its health ([`NvidiaDevicePlugin::list_and_watch`]);
//! - `GetPreferredAllocation` picks which free GPUs a container should get
//!   ([`preferred_allocation`]);
//! - `Allocate` says how to expose the chosen GPUs to the container: `NVIDIA_VISIBLE_DEVICES` and
//!   the device nodes ([`allocate`]).
//!
//! [`health`] decides which XID errors make a GPU unhealthy (the plugin's default skip list).
//!
//! GPU sharing and topology (docs/gpus.md): [`config`] reads a node's MIG strategy and layout,
//! time-slicing / MPS replicas and interconnect from its labels and annotations; [`mig`] knows the
//! MIG profiles each GPU model allows; [`device_map::plugins_for_node`] builds one plugin per
//! resource (`nvidia.com/gpu`, `nvidia.com/mig-<profile>`, `<resource>.shared`) with MIG device IDs
//! `<gpu>:<mig>` and replica IDs `<id>::<n>`; [`topology`] holds the NVLink/PCIe link scores and
//! go-gpuallocator's best-effort policy.
//!
//! [`gpushare::GpuShareDevicePlugin`] serves fractional GPUs (`alibabacloud.com/gpu-milli`, 1000
//! devices per GPU) on the same GPUs; the scheduler's GpuShare plugin keeps the two consistent.
//!
//! [`dra::NvidiaDraDriver`] is the other way to a node's GPUs: the NVIDIA DRA driver's kubelet
//! plugin publishing them as a `resource.k8s.io/v1` ResourceSlice (docs/dra.md).
//!
//! Device IDs are GPU indices (`"0"`, `"1"`, ...). The real plugin's default
//! `--device-id-strategy=uuid` advertises `GPU-<uuid>` IDs instead; `NVIDIA_VISIBLE_DEVICES` accepts
//! either form, so indices keep the output short without changing behaviour.

pub mod allocate;
pub mod config;
pub mod device_map;
pub mod dra;
pub mod gpushare;
pub mod health;
pub mod mig;
pub mod nvidia;
pub mod preferred_allocation;
pub mod topology;

pub use allocate::{container_allocate_response, CONTROL_DEVICE_NODES, NVIDIA_VISIBLE_DEVICES};
pub use config::DevicePluginConfig;
pub use device_map::plugins_for_node;
pub use gpushare::GpuShareDevicePlugin;
pub use nvidia::{NvidiaDevicePlugin, RESOURCE_NAME};
