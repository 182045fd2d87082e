//! Which resources and devices a node's NVIDIA device plugin serves (upstream `NVIDIA/k8s-device-plugin`
//! `internal/rm/device_map.go`: `buildDeviceMapFromConfigResources`, `updateDeviceMapWithReplicas`)
//! and the labels GPU Feature Discovery publishes for them (`internal/lm/resource.go`,
//! `internal/lm/mig-strategy.go`).
//!
//! - No MIG (or `--mig-strategy=none`): one `nvidia.com/gpu` device per GPU, IDs `"0"`, `"1"`, ...
//! - `single`: every GPU split the same way, each MIG device one `nvidia.com/gpu` (`"0:0"`,
//!   `"0:1"`, ...); a layout with two profiles is upstream's error "more than one MIG device type
//!   present on node", one without MIG devices "device 0 has no MIG devices configured".
//! - `mixed`: one resource per profile, `nvidia.com/mig-<profile>`; `nvidia.com/gpu` stays
//!   registered with no device (the real node then shows `nvidia.com/gpu: 0`).
//! - Sharing: each device becomes `replicas` devices `<id>::<n>` (upstream `NewAnnotatedID`), under
//!   the same resource, or `<resource>.shared` with `renameByDefault` (then the original resource
//!   has no device).

use std::collections::BTreeMap;

use k8s_types::status::FieldError;

use crate::config::{DevicePluginConfig, MigStrategy, LABEL_MIG_CONFIG};
use crate::mig::{layout, mig_model, profile_slices};
use crate::nvidia::{NvidiaDevicePlugin, LABEL_GPU_COUNT, LABEL_GPU_PRESENT, LABEL_GPU_PRODUCT};
use crate::RESOURCE_NAME;

/// GFD label: whether the GPUs support MIG.
pub const LABEL_MIG_CAPABLE: &str = "nvidia.com/mig.capable";

/// The device plugins of a node with `n` GPUs of `product` (GFD's `nvidia.com/gpu.product`), each
/// with `memory_mib` of memory when known, configured by `cfg`. A node without configuration gets
/// exactly [`NvidiaDevicePlugin::with_product`].
///
/// # Errors
/// A [`FieldError`] on `nvidia.com/mig.config` for a GPU without MIG, a layout the model does not
/// allow, or a layout the strategy cannot serve.
pub fn plugins_for_node(
    n: usize,
    product: &str,
    memory_mib: Option<u64>,
    cfg: &DevicePluginConfig,
) -> Result<Vec<NvidiaDevicePlugin>, Vec<FieldError>> {
    if !cfg.configured {
        return Ok(vec![NvidiaDevicePlugin::with_product(n, product)]);
    }
    let mig_path = format!("metadata.labels[{LABEL_MIG_CONFIG}]");
    let mig_err =
        |v: &str, detail: String| vec![FieldError::invalid(&mig_path, format!("{v:?}"), detail)];
    let model = mig_model(product);
    let mut profiles: Vec<&'static str> = Vec::new();
    let mut base: BTreeMap<String, Vec<(String, usize)>> = BTreeMap::new();
    base.insert(RESOURCE_NAME.to_string(), Vec::new());
    let mig_on = cfg.mig_config.is_some() && cfg.mig_strategy != MigStrategy::None;
    if let (true, Some(config)) = (mig_on, cfg.mig_config.as_deref()) {
        let Some(m) = model else {
            return Err(mig_err(
                config,
                format!(
                    "GPU model {product:?} does not support MIG (nvidia.com/mig.capable=false)"
                ),
            ));
        };
        profiles = layout(config, &m).map_err(|e| mig_err(config, e))?;
        if cfg.mig_strategy == MigStrategy::Single {
            if profiles.is_empty() {
                return Err(mig_err(
                    config,
                    "invalid MIG configuration: at least one device with migEnabled=true was not configured correctly: device 0 has no MIG devices configured".into(),
                ));
            }
            if profiles.iter().any(|p| *p != profiles[0]) {
                return Err(mig_err(
                    config,
                    "invalid MIG configuration: more than one MIG device type present on node (mig-strategy=single needs every MIG device of one profile; use mixed)".into(),
                ));
            }
        }
        for g in 0..n {
            for (j, p) in profiles.iter().enumerate() {
                let name = match cfg.mig_strategy {
                    MigStrategy::Single => RESOURCE_NAME.to_string(),
                    _ => format!("nvidia.com/mig-{p}"),
                };
                base.entry(name).or_default().push((format!("{g}:{j}"), g));
            }
        }
    } else {
        let gpus = base.entry(RESOURCE_NAME.to_string()).or_default();
        gpus.extend((0..n).map(|g| (g.to_string(), g)));
    }
    let sharing = cfg.sharing;
    let mut resources: BTreeMap<String, (Vec<(String, usize)>, bool)> = BTreeMap::new();
    for (name, devices) in base {
        if !sharing.is_replicated() || devices.is_empty() {
            resources.entry(name).or_insert((devices, false));
            continue;
        }
        let replicated: Vec<(String, usize)> = devices
            .iter()
            .flat_map(|(id, g)| (0..sharing.replicas).map(move |r| (format!("{id}::{r}"), *g)))
            .collect();
        if sharing.rename_by_default {
            resources.insert(format!("{name}.shared"), (replicated, true));
            if name == RESOURCE_NAME {
                resources.entry(name).or_insert((Vec::new(), false));
            }
        } else {
            resources.insert(name, (replicated, true));
        }
    }
    let labels = gfd_labels(n, product, cfg, &profiles, model.is_some());
    let mut out = Vec::new();
    for (name, (devices, shared)) in resources {
        let mut p = NvidiaDevicePlugin::with_devices(&name, devices);
        if shared {
            p.set_sharing(sharing);
        }
        if let Some(t) = &cfg.topology {
            p.set_topology(t.clone());
        }
        p.set_product(Some(product.to_string()), memory_mib);
        if name == RESOURCE_NAME {
            p.set_labels(labels.clone());
        }
        out.push(p);
    }
    Ok(out)
}

/// GPU Feature Discovery's labels for a configured node (upstream `internal/lm`): `gpu.present`,
/// `gpu.count` (physical GPUs), `mig.capable`, `mig.strategy` (unless none); for whole GPUs
/// `gpu.product` (`-SHARED` appended when shared and not renamed), `gpu.replicas`,
/// `gpu.sharing-strategy`; for MIG-enabled GPUs `gpu.replicas=0` and `gpu.sharing-strategy=none`
/// (the GPUs themselves are not shared) and per MIG resource `<resource>.count`, `.product`
/// (`<product>-MIG-<profile>`), `.replicas`, `.sharing-strategy`, `.slices.gi`, `.slices.ci`.
/// Under `single` the MIG resource is `nvidia.com/gpu` itself, except that `nvidia.com/gpu.count`
/// stays the number of physical GPUs (GFD writes the MIG device count there; k8s-mini keeps the
/// physical count, which is how a resumed node finds its GPUs again; the MIG count is the node's
/// capacity). MIG memory, multiprocessor and engine labels are not published.
pub fn gfd_labels(
    n: usize,
    product: &str,
    cfg: &DevicePluginConfig,
    profiles: &[&str],
    mig_capable: bool,
) -> BTreeMap<String, String> {
    let mut l = BTreeMap::new();
    if n == 0 {
        return l;
    }
    let mut set = |k: &str, v: String| {
        l.insert(k.to_string(), v);
    };
    set(LABEL_GPU_PRESENT, "true".into());
    set(LABEL_GPU_COUNT, n.to_string());
    set(LABEL_MIG_CAPABLE, mig_capable.to_string());
    if cfg.mig_strategy != MigStrategy::None {
        set("nvidia.com/mig.strategy", cfg.mig_strategy.as_str().into());
    }
    let shared = cfg.sharing.is_replicated();
    let suffix = if shared && !cfg.sharing.rename_by_default {
        "-SHARED"
    } else {
        ""
    };
    let replicas = cfg.sharing.replicas.max(1).to_string();
    let strategy = if shared {
        cfg.sharing.strategy.as_str()
    } else {
        "none"
    };
    let mig_on = cfg.mig_config.is_some() && cfg.mig_strategy != MigStrategy::None;
    if !mig_on {
        set(LABEL_GPU_PRODUCT, format!("{product}{suffix}"));
        set("nvidia.com/gpu.replicas", replicas);
        set("nvidia.com/gpu.sharing-strategy", strategy.into());
        return l;
    }
    set(LABEL_GPU_PRODUCT, product.to_string());
    set("nvidia.com/gpu.replicas", "0".into());
    set("nvidia.com/gpu.sharing-strategy", "none".into());
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for p in profiles {
        *counts.entry(p).or_default() += n;
    }
    for (p, count) in counts {
        let key = match cfg.mig_strategy {
            MigStrategy::Single => RESOURCE_NAME.to_string(),
            _ => format!("nvidia.com/mig-{p}"),
        };
        if cfg.mig_strategy != MigStrategy::Single {
            set(&format!("{key}.count"), count.to_string());
        }
        set(
            &format!("{key}.product"),
            format!("{product}-MIG-{p}{suffix}"),
        );
        set(&format!("{key}.replicas"), replicas.clone());
        set(&format!("{key}.sharing-strategy"), strategy.into());
        set(&format!("{key}.slices.gi"), profile_slices(p).to_string());
        set(&format!("{key}.slices.ci"), profile_slices(p).to_string());
    }
    l
}
