//! A simulated NVIDIA DRA driver for GPUs (`NVIDIA/k8s-dra-driver-gpu`, the `gpu-kubelet-plugin`
//! and its Helm chart `dra-driver-nvidia-gpu`): on a node labelled
//! [`LABEL_DRA_KUBELET_PLUGIN`]` = "true"` it publishes the node's GPUs as one `ResourceSlice`
//! of driver [`DRIVER_NAME`] (`gpu.nvidia.com`), pool = the node's name, one device per GPU named
//! `gpu-<minor>` (the driver's `GpuInfo.CanonicalName`), with the attributes the driver's
//! `GpuInfo.Attributes` publishes (`type`, `uuid`, `productName`, `brand`, `architecture`,
//! `cudaComputeCapability`, `driverVersion`, `cudaDriverVersion`) and the `memory` capacity of
//! `fullGpuCapacity`. The driver no longer publishes `index` (commit 36fc80ab) nor `minor`
//! (commit 50d90da0), and neither does this one.
//!
//! Where the values come from (docs/dra.md): the product from GPU Feature Discovery's
//! `nvidia.com/gpu.product` label (spaces written as `-`), the memory from `nvidia.com/gpu.memory`
//! (MiB) when set, else both from [`PRODUCTS`], a table of common data-center GPUs (architecture,
//! compute capability and memory as NVML reports them); the driver and CUDA driver versions are
//! fixed ([`DRIVER_VERSION`], [`CUDA_DRIVER_VERSION`]). UUIDs are synthetic
//! (`GPU-` and a hash of node and minor), stable from run to run.
//!
//! A node whose GPUs are MIG-configured (label `nvidia.com/mig.config`, read as for the device
//! plugin: [`crate::config`]) announces each GPU's static MIG devices instead of the GPU
//! ([`mig`]).

pub mod mig;

use std::collections::BTreeMap;

use k8s_types::core::Node;
use k8s_types::meta::ObjectMeta;
use k8s_types::quantity::Quantity;
use k8s_types::resource::{
    Device, DeviceAttribute, DeviceCapacity, ResourcePool, ResourceSlice, ResourceSliceSpec,
    API_VERSION,
};

/// The driver's name (`gpu.nvidia.com`, the chart's `DriverName`), also the DeviceClass the
/// chart installs for whole GPUs.
pub const DRIVER_NAME: &str = "gpu.nvidia.com";
/// The node label the GPU Operator's DRA instructions put on the nodes whose GPUs the DRA
/// driver's kubelet plugin manages (`kubeletPlugin.nodeSelector`); on such a node k8s-mini runs
/// the DRA driver instead of the device plugin.
pub const LABEL_DRA_KUBELET_PLUGIN: &str = "nvidia.com/dra-kubelet-plugin";
/// GPU Feature Discovery's memory label (MiB).
pub const LABEL_GPU_MEMORY: &str = "nvidia.com/gpu.memory";
/// The `type` attribute of a whole GPU (the driver's `GpuDeviceType`).
pub const GPU_DEVICE_TYPE: &str = "gpu";
/// The driver version published (a fixed R570 data-center driver).
pub const DRIVER_VERSION: &str = "570.172.8";
/// The CUDA driver version published (what the R570 driver supports).
pub const CUDA_DRIVER_VERSION: &str = "12.8.0";

/// One GPU model as NVML reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Product {
    /// NVML's `GetName` (GFD writes it with `-` for spaces).
    pub name: &'static str,
    /// go-nvlib's `GetBrandAsString`.
    pub brand: &'static str,
    /// go-nvlib's `GetArchitectureAsString`.
    pub architecture: &'static str,
    /// CUDA compute capability, as the driver publishes it (`major.minor.0`).
    pub compute_capability: &'static str,
    /// Total memory in MiB (NVML `GetMemoryInfo`).
    pub memory_mib: i64,
}

/// The GPU models k8s-mini knows without GFD labels for architecture and memory.
pub const PRODUCTS: &[Product] = &[
    Product {
        name: "NVIDIA H100 80GB HBM3",
        brand: "Nvidia",
        architecture: "Hopper",
        compute_capability: "9.0.0",
        memory_mib: 81559,
    },
    Product {
        name: "NVIDIA H200",
        brand: "Nvidia",
        architecture: "Hopper",
        compute_capability: "9.0.0",
        memory_mib: 143771,
    },
    Product {
        name: "NVIDIA A100-SXM4-80GB",
        brand: "Nvidia",
        architecture: "Ampere",
        compute_capability: "8.0.0",
        memory_mib: 81920,
    },
    Product {
        name: "NVIDIA A100-SXM4-40GB",
        brand: "Nvidia",
        architecture: "Ampere",
        compute_capability: "8.0.0",
        memory_mib: 40960,
    },
    Product {
        name: "NVIDIA A10G",
        brand: "Nvidia",
        architecture: "Ampere",
        compute_capability: "8.6.0",
        memory_mib: 23028,
    },
    Product {
        name: "NVIDIA L4",
        brand: "Nvidia",
        architecture: "Ada Lovelace",
        compute_capability: "8.9.0",
        memory_mib: 23034,
    },
    Product {
        name: "Tesla T4",
        brand: "Tesla",
        architecture: "Turing",
        compute_capability: "7.5.0",
        memory_mib: 15360,
    },
];

/// Whether the node's GPUs are managed by the DRA driver (label
/// [`LABEL_DRA_KUBELET_PLUGIN`]` = "true"`).
pub fn dra_enabled(node: &Node) -> bool {
    node.metadata
        .labels
        .get(LABEL_DRA_KUBELET_PLUGIN)
        .is_some_and(|v| v == "true")
}

/// The DRA driver of one node: `n` whole GPUs of one product.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NvidiaDraDriver {
    node: String,
    n_gpus: usize,
    product_name: String,
    product: Option<Product>,
    memory_mib: Option<i64>,
    /// The MIG devices of each GPU, when MIG is on (a mig-parted layout an 8-slice model takes).
    mig: Option<Vec<mig::MigPlacement>>,
    /// The model's GPU instance profile properties, when k8s-mini has them.
    gi_profiles: Option<&'static [mig::GiProfile]>,
}

/// FNV-1a, for the synthetic UUIDs.
fn fnv(bytes: &[u8], seed: u64) -> u64 {
    bytes.iter().fold(seed, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

impl NvidiaDraDriver {
    /// The driver of `node` with `n_gpus` GPUs; the product from GFD's `nvidia.com/gpu.product`
    /// label (unknown: `NVIDIA-GPU`), the memory from `nvidia.com/gpu.memory`.
    pub fn for_node(node: &Node, n_gpus: usize) -> NvidiaDraDriver {
        let labels = &node.metadata.labels;
        let label = labels
            .get(crate::nvidia::LABEL_GPU_PRODUCT)
            .map(String::as_str)
            .unwrap_or("NVIDIA-GPU");
        let product = PRODUCTS
            .iter()
            .find(|p| p.name.replace(' ', "-") == label)
            .copied();
        let mig_model = crate::mig::mig_model(label);
        let mig = labels
            .get(crate::config::LABEL_MIG_CONFIG)
            .filter(|c| c.as_str() != "all-disabled")
            .zip(mig_model)
            .and_then(|(c, m)| {
                let layout = crate::mig::layout(c, &m).ok()?;
                mig::place(&layout, m.profiles)
            });
        let gi_profiles = mig_model
            .filter(|m| m.name == "H100-80GB")
            .map(|_| mig::H100_80GB_PROFILES);
        NvidiaDraDriver {
            node: node.metadata.name.clone(),
            n_gpus,
            product_name: product
                .map(|p| p.name.to_string())
                .unwrap_or_else(|| label.to_string()),
            product,
            memory_mib: labels
                .get(LABEL_GPU_MEMORY)
                .and_then(|m| m.parse::<i64>().ok())
                .or(product.map(|p| p.memory_mib)),
            mig,
            gi_profiles,
        }
    }

    /// The synthetic UUID of MIG device `name` (`MIG-` and a UUID-shaped hash).
    fn mig_uuid(&self, name: &str) -> String {
        let u = self.uuid_of(&format!("{}/{name}", self.node));
        format!("MIG-{}", &u[4..])
    }

    /// The devices GPU `minor` announces: itself, or its MIG devices when MIG is on.
    pub fn devices_of(&self, minor: usize) -> Vec<Device> {
        let gpu = self.device(minor);
        match &self.mig {
            None => vec![gpu],
            Some(placements) => placements
                .iter()
                .map(|m| {
                    let uuid = self.mig_uuid(&mig::canonical_name(minor, m));
                    mig::device(minor, m, &gpu.attributes, uuid, self.gi_profiles)
                })
                .collect(),
        }
    }

    /// The synthetic UUID of GPU `minor`: `GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`.
    pub fn uuid(&self, minor: usize) -> String {
        self.uuid_of(&format!("{}/{minor}", self.node))
    }

    fn uuid_of(&self, key: &str) -> String {
        let a = fnv(key.as_bytes(), 0xcbf2_9ce4_8422_2325);
        let b = fnv(key.as_bytes(), a);
        let hex = format!("{a:016x}{b:016x}");
        format!(
            "GPU-{}-{}-{}-{}-{}",
            &hex[0..8],
            &hex[8..12],
            &hex[12..16],
            &hex[16..20],
            &hex[20..32]
        )
    }

    /// GPU `minor` as a device (the driver's `GpuInfo.GetDevice`).
    pub fn device(&self, minor: usize) -> Device {
        let mut attributes = BTreeMap::new();
        let mut put = |k: &str, v: DeviceAttribute| {
            attributes.insert(k.to_string(), v);
        };
        put("type", DeviceAttribute::string(GPU_DEVICE_TYPE));
        put("uuid", DeviceAttribute::string(self.uuid(minor)));
        put("productName", DeviceAttribute::string(&self.product_name));
        let (brand, arch, cc) = match self.product {
            Some(p) => (p.brand, p.architecture, p.compute_capability),
            None => ("Nvidia", "Unknown", "0.0.0"),
        };
        put("brand", DeviceAttribute::string(brand));
        put("architecture", DeviceAttribute::string(arch));
        put("cudaComputeCapability", DeviceAttribute::version(cc));
        put("driverVersion", DeviceAttribute::version(DRIVER_VERSION));
        put(
            "cudaDriverVersion",
            DeviceAttribute::version(CUDA_DRIVER_VERSION),
        );
        let mut capacity = BTreeMap::new();
        if let Some(mib) = self.memory_mib {
            if let Ok(q) = Quantity::parse(&format!("{mib}Mi")) {
                capacity.insert(
                    "memory".to_string(),
                    DeviceCapacity {
                        value: q,
                        request_policy: None,
                    },
                );
            }
        }
        Device {
            name: format!("gpu-{minor}"),
            attributes,
            capacity,
            ..Device::default()
        }
    }

    /// The node's ResourceSlice (generateName `<node>-gpu.nvidia.com-`, as the
    /// `resourceslice` controller of k8s.io/dynamic-resource-allocation names them; pool = node,
    /// generation 1, one slice).
    pub fn resource_slice(&self) -> ResourceSlice {
        ResourceSlice {
            api_version: API_VERSION.into(),
            kind: "ResourceSlice".into(),
            metadata: ObjectMeta {
                generate_name: Some(format!("{}-{DRIVER_NAME}-", self.node).into()),
                ..ObjectMeta::default()
            },
            spec: ResourceSliceSpec {
                driver: DRIVER_NAME.into(),
                pool: ResourcePool {
                    name: self.node.clone(),
                    generation: 1,
                    resource_slice_count: 1,
                },
                node_name: Some(self.node.clone()),
                devices: (0..self.n_gpus).flat_map(|i| self.devices_of(i)).collect(),
                ..ResourceSliceSpec::default()
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(labels: &[(&str, &str)]) -> Node {
        let mut n = Node::default();
        n.metadata.name = "h100-a".into();
        for (k, v) in labels {
            n.metadata.labels.insert(k.to_string(), v.to_string());
        }
        n
    }

    #[test]
    fn an_h100_node_publishes_one_device_per_gpu_with_the_drivers_attributes() {
        let n = node(&[
            ("nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3"),
            (LABEL_DRA_KUBELET_PLUGIN, "true"),
        ]);
        assert!(dra_enabled(&n));
        let s = NvidiaDraDriver::for_node(&n, 2).resource_slice();
        assert_eq!(s.spec.driver, "gpu.nvidia.com");
        assert_eq!(s.spec.pool.name, "h100-a");
        assert_eq!(s.spec.node_name.as_deref(), Some("h100-a"));
        assert_eq!(
            s.metadata.generate_name.as_deref(),
            Some("h100-a-gpu.nvidia.com-")
        );
        let names: Vec<&str> = s.spec.devices.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(names, ["gpu-0", "gpu-1"]);
        let d = &s.spec.devices[1];
        let attr = |k: &str| d.attributes[k].clone();
        assert_eq!(
            attr("productName").string.as_deref(),
            Some("NVIDIA H100 80GB HBM3")
        );
        assert_eq!(attr("architecture").string.as_deref(), Some("Hopper"));
        assert_eq!(attr("type").string.as_deref(), Some("gpu"));
        assert_eq!(
            attr("cudaComputeCapability").version.as_deref(),
            Some("9.0.0")
        );
        assert!(!d.attributes.contains_key("index"));
        // 81559 MiB, NVML's total for an H100 80GB HBM3.
        assert_eq!(d.capacity["memory"].value.to_string(), "81559Mi");
        // UUIDs differ per GPU and are stable.
        let u0 = attr("uuid").string.unwrap();
        assert!(u0.starts_with("GPU-") && u0.len() == 40, "{u0}");
        assert_ne!(
            s.spec.devices[0].attributes["uuid"],
            s.spec.devices[1].attributes["uuid"]
        );
        assert_eq!(NvidiaDraDriver::for_node(&n, 2).resource_slice(), s);
    }

    #[test]
    fn gfd_memory_label_wins_and_unknown_products_keep_their_label() {
        let n = node(&[
            ("nvidia.com/gpu.product", "NVIDIA-RTX-PRO-6000"),
            (LABEL_GPU_MEMORY, "97887"),
        ]);
        assert!(!dra_enabled(&n));
        let d = NvidiaDraDriver::for_node(&n, 1).device(0);
        assert_eq!(
            d.attributes["productName"].string.as_deref(),
            Some("NVIDIA-RTX-PRO-6000")
        );
        assert_eq!(d.capacity["memory"].value.to_string(), "97887Mi");
    }
}
