//! Static MIG devices of the NVIDIA DRA driver (`cmd/gpu-kubelet-plugin`, `nvlib.go`
//! `enumerateGpusAndMigDevices`, `mig.go`, `deviceinfo.go` `MigDeviceInfo.GetDevice`): a GPU
//! with MIG mode on announces the MIG devices configured on it (by mig-parted, from the node
//! label `nvidia.com/mig.config`, the same layouts as the device plugin path: [`crate::mig`])
//! and not itself; a GPU without MIG announces itself. The driver's `DynamicMIG` feature
//! (devices created at allocation time, with counters) is not modelled, nor upstream's
//! partitionable devices (KEP-4815, gate `DRAPartitionableDevices`, alpha and off by default
//! until v1.36): with static MIG a whole GPU and its partitions are never offered together.
//!
//! - Name: `gpu-<minor>-mig-<profile without dots>-<profile id>-<placement start>`
//!   (`MigSpecTuple.ToCanonicalName`), e.g. `gpu-0-mig-1g10gb-19-0`.
//! - Attributes (`CommonAttributesMig` and `uuid`): `type: mig`, `uuid` (`MIG-...`),
//!   `parentUUID`, `profile`, and the parent's `productName`, `brand`, `architecture`,
//!   `cudaComputeCapability`, `driverVersion`, `cudaDriverVersion`.
//! - Capacity (`CommonCapacitiesMig`): `memory` in bytes, `multiprocessors`, `copyEngines`,
//!   `decoders`, `encoders`, `jpegEngines`, `ofaEngines` from the GPU instance profile, and
//!   `memorySlice<i>: 1` for each memory slice the placement covers.
//!
//! Profile IDs are NVML's GPU instance profile IDs for 8-memory-slice GPUs (A100, H100:
//! 1 slice 19, its double-memory variant 15, 2 slices 14, 3 slices 9, 4 slices 5, 7 slices 0).
//! The profile properties ([`H100_80GB_PROFILES`]) are those `nvidia-smi mig -lgip` lists for an
//! H100 80GB (memory given there in GiB to two decimals, here in MiB: 9.75 GiB = 9984 MiB);
//! for other models k8s-mini has no sourced table and publishes only the memory slices
//! (docs/fidelity.md). Placements are first-fit in layout order over each profile's allowed
//! starts (MIG User Guide, "A100 MIG Profiles" placement diagram): k8s-mini's rule for where
//! mig-parted's layout lands.

use std::collections::BTreeMap;

use k8s_types::quantity::Quantity;
use k8s_types::resource::{Device, DeviceAttribute, DeviceCapacity};

/// A GPU instance profile as NVML's `GetGpuInstanceProfileInfo` gives it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GiProfile {
    /// The profile name (`1g.10gb`).
    pub name: &'static str,
    /// NVML's profile ID.
    pub id: u32,
    /// Memory in MiB (`memorySizeMB`).
    pub memory_mib: i64,
    /// `multiprocessorCount`.
    pub multiprocessors: i64,
    /// `copyEngineCount`.
    pub copy_engines: i64,
    /// `decoderCount`.
    pub decoders: i64,
    /// `encoderCount`.
    pub encoders: i64,
    /// `jpegCount`.
    pub jpeg_engines: i64,
    /// `ofaCount`.
    pub ofa_engines: i64,
}

/// A profile from `(name, id, memory MiB)` and `[SMs, copy engines, decoders, JPEG, OFA]`
/// (H100s have no encoders).
const fn p(name: &'static str, id: u32, memory_mib: i64, units: [i64; 5]) -> GiProfile {
    let [sm, ce, dec, jpeg, ofa] = units;
    GiProfile {
        name,
        id,
        memory_mib,
        multiprocessors: sm,
        copy_engines: ce,
        decoders: dec,
        encoders: 0,
        jpeg_engines: jpeg,
        ofa_engines: ofa,
    }
}

/// The H100 80GB (SXM, HBM3) GPU instance profiles (`nvidia-smi mig -lgip`).
pub const H100_80GB_PROFILES: &[GiProfile] = &[
    p("1g.10gb", 19, 9984, [16, 1, 1, 1, 0]),
    p("1g.20gb", 15, 20096, [26, 1, 1, 1, 0]),
    p("2g.20gb", 14, 20096, [32, 2, 2, 2, 0]),
    p("3g.40gb", 9, 40448, [60, 3, 3, 3, 0]),
    p("4g.40gb", 5, 40448, [64, 4, 4, 4, 0]),
    p("7g.80gb", 0, 81152, [132, 8, 7, 7, 1]),
];

/// The memory slices of an 8-slice GPU (A100, H100).
pub const MEMORY_SLICES: u32 = 8;

/// (profile id, memory slices, allowed placement starts) of an 8-slice GPU's profile, by its
/// compute slices and whether it is the double-memory 1-slice variant.
fn shape(profile: &str, model_profiles: &[(&str, u32)]) -> Option<(u32, u32, &'static [u32])> {
    let compute = crate::mig::profile_slices(profile);
    // The smallest 1g profile of the model has one memory slice; the other 1g has two.
    let smallest_1g = model_profiles
        .iter()
        .find(|(p, _)| crate::mig::profile_slices(p) == 1)
        .map(|(p, _)| *p);
    Some(match compute {
        1 if smallest_1g == Some(profile) => (19, 1, &[0, 1, 2, 3, 4, 5, 6]),
        1 => (15, 2, &[0, 2, 4, 6]),
        2 => (14, 2, &[0, 2, 4]),
        3 => (9, 4, &[0, 4]),
        4 => (5, 4, &[0]),
        7 => (0, 8, &[0]),
        _ => return None,
    })
}

/// One MIG device of a layout: profile, profile id, placement start and size.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MigPlacement {
    /// The profile name.
    pub profile: &'static str,
    /// NVML's profile ID.
    pub id: u32,
    /// The first memory slice.
    pub start: u32,
    /// How many memory slices.
    pub size: u32,
}

/// Places the profiles of a layout on one 8-slice GPU, first fit in layout order; `None` when
/// the GPU is not an 8-slice model (A30) or a profile does not fit.
pub fn place(layout: &[&'static str], model_profiles: &[(&str, u32)]) -> Option<Vec<MigPlacement>> {
    if !model_profiles
        .iter()
        .any(|(p, _)| crate::mig::profile_slices(p) == 7)
    {
        return None;
    }
    let mut used = [false; MEMORY_SLICES as usize];
    let mut out = Vec::new();
    for profile in layout {
        let (id, size, starts) = shape(profile, model_profiles)?;
        let start = starts
            .iter()
            .copied()
            .find(|&s| s + size <= MEMORY_SLICES && (s..s + size).all(|i| !used[i as usize]))?;
        for i in start..start + size {
            used[i as usize] = true;
        }
        out.push(MigPlacement {
            profile,
            id,
            start,
            size,
        });
    }
    Some(out)
}

/// `MigSpecTuple.ToCanonicalName`: `gpu-<minor>-mig-<profile without dots>-<id>-<start>`.
pub fn canonical_name(minor: usize, m: &MigPlacement) -> String {
    format!(
        "gpu-{minor}-mig-{}-{}-{}",
        m.profile.replace('.', ""),
        m.id,
        m.start
    )
}

fn int_capacity(v: i64) -> DeviceCapacity {
    DeviceCapacity {
        value: Quantity::parse(&v.to_string()).unwrap_or_default(),
        request_policy: None,
    }
}

/// The MIG device `m` of a GPU whose whole-GPU attributes are `parent` (its `uuid` becomes
/// `parentUUID`); `uuid` is the MIG device's; `profiles` the model's profile table, if known.
pub fn device(
    minor: usize,
    m: &MigPlacement,
    parent: &BTreeMap<String, DeviceAttribute>,
    uuid: String,
    profiles: Option<&[GiProfile]>,
) -> Device {
    let mut attributes = BTreeMap::new();
    for k in [
        "productName",
        "brand",
        "architecture",
        "cudaComputeCapability",
        "driverVersion",
        "cudaDriverVersion",
    ] {
        if let Some(v) = parent.get(k) {
            attributes.insert(k.to_string(), v.clone());
        }
    }
    attributes.insert("type".into(), DeviceAttribute::string("mig"));
    attributes.insert("profile".into(), DeviceAttribute::string(m.profile));
    if let Some(u) = parent.get("uuid") {
        attributes.insert("parentUUID".into(), u.clone());
    }
    attributes.insert("uuid".into(), DeviceAttribute::string(uuid));
    let mut capacity = BTreeMap::new();
    if let Some(gi) = profiles.and_then(|ps| ps.iter().find(|p| p.name == m.profile)) {
        for (k, v) in [
            ("multiprocessors", gi.multiprocessors),
            ("copyEngines", gi.copy_engines),
            ("decoders", gi.decoders),
            ("encoders", gi.encoders),
            ("jpegEngines", gi.jpeg_engines),
            ("ofaEngines", gi.ofa_engines),
            ("memory", gi.memory_mib * 1024 * 1024),
        ] {
            capacity.insert(k.to_string(), int_capacity(v));
        }
    }
    for i in m.start..m.start + m.size {
        capacity.insert(format!("memorySlice{i}"), int_capacity(1));
    }
    Device {
        name: canonical_name(minor, m),
        attributes,
        capacity,
        ..Device::default()
    }
}

#[cfg(test)]
mod tests {
    use k8s_types::core::Node;

    use super::super::NvidiaDraDriver;

    fn node(labels: &[(&str, &str)]) -> Node {
        let mut n = Node::default();
        n.metadata.name = "h100-mig".into();
        for (k, v) in labels {
            n.metadata.labels.insert(k.to_string(), v.to_string());
        }
        n
    }

    /// mig-parted's `all-balanced` on an H100 80GB is 1g.10gb x2, 2g.20gb, 3g.40gb; first fit
    /// over the allowed starts places them at memory slices 0, 1, 2-3 and 4-7. Each GPU
    /// announces those four devices and not itself.
    #[test]
    fn a_mig_configured_h100_announces_its_mig_devices_instead_of_the_gpu() {
        let n = node(&[
            ("nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3"),
            ("nvidia.com/mig.config", "all-balanced"),
        ]);
        let s = NvidiaDraDriver::for_node(&n, 2).resource_slice();
        let names: Vec<&str> = s.spec.devices.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "gpu-0-mig-1g10gb-19-0",
                "gpu-0-mig-1g10gb-19-1",
                "gpu-0-mig-2g20gb-14-2",
                "gpu-0-mig-3g40gb-9-4",
                "gpu-1-mig-1g10gb-19-0",
                "gpu-1-mig-1g10gb-19-1",
                "gpu-1-mig-2g20gb-14-2",
                "gpu-1-mig-3g40gb-9-4",
            ]
        );
        let d = &s.spec.devices[3];
        let attr = |k: &str| d.attributes[k].clone();
        assert_eq!(attr("type").string.as_deref(), Some("mig"));
        assert_eq!(attr("profile").string.as_deref(), Some("3g.40gb"));
        assert_eq!(
            attr("productName").string.as_deref(),
            Some("NVIDIA H100 80GB HBM3")
        );
        let driver = NvidiaDraDriver::for_node(&n, 2);
        assert_eq!(
            attr("parentUUID").string,
            Some(driver.uuid(0)),
            "the parent is GPU 0"
        );
        let uuid = attr("uuid").string.unwrap();
        assert!(uuid.starts_with("MIG-") && uuid.len() == 40, "{uuid}");
        assert_ne!(
            s.spec.devices[0].attributes["uuid"],
            s.spec.devices[4].attributes["uuid"]
        );
        // 3g.40gb: 39.50 GiB = 40448 MiB = 42412802048 bytes, 60 SMs, memory slices 4..=7.
        assert_eq!(d.capacity["memory"].value.value(), 40448 * 1024 * 1024);
        assert_eq!(d.capacity["multiprocessors"].value.value(), 60);
        let slices: Vec<&str> = d
            .capacity
            .keys()
            .filter(|k| k.starts_with("memorySlice"))
            .map(String::as_str)
            .collect();
        assert_eq!(
            slices,
            [
                "memorySlice4",
                "memorySlice5",
                "memorySlice6",
                "memorySlice7"
            ]
        );
        // 1g.10gb: 9.75 GiB = 9984 MiB.
        assert_eq!(
            s.spec.devices[0].capacity["memory"].value.value(),
            10_468_982_784
        );
    }

    /// `all-disabled` (and no label) keep the whole GPU; an A100 40GB with `all-1g.5gb` gets
    /// seven 1-slice devices at starts 0..=6 with memory slices only (no sourced profile table);
    /// an A30 (4 memory slices) is not placed by k8s-mini and keeps the whole GPU.
    #[test]
    fn other_layouts_and_models() {
        let off = node(&[
            ("nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3"),
            ("nvidia.com/mig.config", "all-disabled"),
        ]);
        let names: Vec<String> = NvidiaDraDriver::for_node(&off, 1)
            .resource_slice()
            .spec
            .devices
            .into_iter()
            .map(|d| d.name)
            .collect();
        assert_eq!(names, ["gpu-0"]);
        let a100 = node(&[
            ("nvidia.com/gpu.product", "NVIDIA-A100-SXM4-40GB"),
            ("nvidia.com/mig.config", "all-1g.5gb"),
        ]);
        let devices = NvidiaDraDriver::for_node(&a100, 1)
            .resource_slice()
            .spec
            .devices;
        let names: Vec<&str> = devices.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(
            names,
            (0..7)
                .map(|i| format!("gpu-0-mig-1g5gb-19-{i}"))
                .collect::<Vec<_>>()
        );
        assert!(!devices[6].capacity.contains_key("memory"));
        assert!(devices[6].capacity.contains_key("memorySlice6"));
        // 1g.10gb on an A100 40GB is the 2-slice variant (profile 15), at starts 0, 2, 4, 6.
        let a100 = node(&[
            ("nvidia.com/gpu.product", "NVIDIA-A100-SXM4-40GB"),
            ("nvidia.com/mig.config", "all-1g.10gb"),
        ]);
        let names: Vec<String> = NvidiaDraDriver::for_node(&a100, 1)
            .resource_slice()
            .spec
            .devices
            .into_iter()
            .map(|d| d.name)
            .collect();
        assert_eq!(
            names,
            [
                "gpu-0-mig-1g10gb-15-0",
                "gpu-0-mig-1g10gb-15-2",
                "gpu-0-mig-1g10gb-15-4",
                "gpu-0-mig-1g10gb-15-6"
            ]
        );
        let a30 = node(&[
            ("nvidia.com/gpu.product", "NVIDIA-A30"),
            ("nvidia.com/mig.config", "all-1g.6gb"),
        ]);
        let names: Vec<String> = NvidiaDraDriver::for_node(&a30, 1)
            .resource_slice()
            .spec
            .devices
            .into_iter()
            .map(|d| d.name)
            .collect();
        assert_eq!(names, ["gpu-0"]);
    }
}
