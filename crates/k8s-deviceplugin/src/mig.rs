//! MIG: the GPU models that support it, the profiles each allows, and the layouts the GPU
//! Operator's mig-manager applies from the `nvidia.com/mig.config` label.
//!
//! Profiles and their most instances per GPU are NVIDIA's (MIG User Guide, "Supported MIG
//! Profiles"; the same counts are the `all-<profile>` layouts of `NVIDIA/mig-parted`
//! `deployments/systemd/config-default.yaml`). `all-balanced` is mig-parted's layout per model:
//! 80GB A100/H100 `1g.10gb` x2 + `2g.20gb` x1 + `3g.40gb` x1, A100-40GB `1g.5gb` x2 + `2g.10gb` x1 +
//! `3g.20gb` x1, A30-24GB `1g.6gb` x2 + `2g.12gb` x1. `all-enabled` turns MIG on with no MIG device.
//! Media-extension profiles (`+me`) and layouts beyond these are not modelled.
//!
//! MIG devices of a GPU are numbered in layout order (profiles as the layout lists them), and their
//! device IDs are upstream's index form `<gpu>:<mig>` (`internal/rm/nvml_devices.go`
//! `newMigDevice`; the default `--device-id-strategy=uuid` would give `MIG-<uuid>`).

/// A MIG-capable GPU model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MigModel {
    /// The model as mig-parted's comments name it.
    pub name: &'static str,
    /// `(profile, most instances per GPU)`, smallest first.
    pub profiles: &'static [(&'static str, u32)],
    /// The `all-balanced` layout.
    pub balanced: &'static [(&'static str, u32)],
}

const A100_40GB: MigModel = MigModel {
    name: "A100-40GB",
    profiles: &[
        ("1g.5gb", 7),
        ("1g.10gb", 4),
        ("2g.10gb", 3),
        ("3g.20gb", 2),
        ("4g.20gb", 1),
        ("7g.40gb", 1),
    ],
    balanced: &[("1g.5gb", 2), ("2g.10gb", 1), ("3g.20gb", 1)],
};

const GPU_80GB_PROFILES: &[(&str, u32)] = &[
    ("1g.10gb", 7),
    ("1g.20gb", 4),
    ("2g.20gb", 3),
    ("3g.40gb", 2),
    ("4g.40gb", 1),
    ("7g.80gb", 1),
];
const GPU_80GB_BALANCED: &[(&str, u32)] = &[("1g.10gb", 2), ("2g.20gb", 1), ("3g.40gb", 1)];

const A100_80GB: MigModel = MigModel {
    name: "A100-80GB",
    profiles: GPU_80GB_PROFILES,
    balanced: GPU_80GB_BALANCED,
};

const H100_80GB: MigModel = MigModel {
    name: "H100-80GB",
    profiles: GPU_80GB_PROFILES,
    balanced: GPU_80GB_BALANCED,
};

const A30_24GB: MigModel = MigModel {
    name: "A30-24GB",
    profiles: &[("1g.6gb", 4), ("2g.12gb", 2), ("4g.24gb", 1)],
    balanced: &[("1g.6gb", 2), ("2g.12gb", 1)],
};

/// The MIG model of a GPU Feature Discovery product name (`nvidia.com/gpu.product`, e.g.
/// `NVIDIA-A100-SXM4-80GB`, `NVIDIA-H100-80GB-HBM3`, `A100-SXM4-40GB`), or `None` for a GPU without
/// MIG (or one k8s-mini does not model: H100 NVL/96GB, H200, B200, ...).
pub fn mig_model(product: &str) -> Option<MigModel> {
    let p = product.to_ascii_uppercase();
    if p.contains("A100") {
        if p.contains("80GB") {
            return Some(A100_80GB);
        }
        return Some(A100_40GB);
    }
    if p.contains("H100") && p.contains("80GB") && !p.contains("NVL") {
        return Some(H100_80GB);
    }
    if p.contains("A30") {
        return Some(A30_24GB);
    }
    None
}

/// Compute slices of a profile (`3g.40gb` has 3): GFD's `slices.gi` and, for the full compute
/// instance the device plugin uses, `slices.ci`.
pub fn profile_slices(profile: &str) -> u32 {
    profile
        .split_once('g')
        .and_then(|(n, _)| n.parse().ok())
        .unwrap_or(0)
}

/// The MIG profiles of one GPU under layout `config` (`all-<profile>`, `all-balanced`,
/// `all-enabled`), in device order.
///
/// # Errors
/// A message for an unknown layout or a profile the model does not allow.
pub fn layout(config: &str, model: &MigModel) -> Result<Vec<&'static str>, String> {
    let expand = |parts: &[(&'static str, u32)]| -> Vec<&'static str> {
        parts
            .iter()
            .flat_map(|(p, n)| std::iter::repeat_n(*p, *n as usize))
            .collect()
    };
    match config {
        "all-enabled" => Ok(Vec::new()),
        "all-balanced" => Ok(expand(model.balanced)),
        _ => {
            let supported = || {
                model
                    .profiles
                    .iter()
                    .map(|(p, _)| format!("all-{p}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            let Some(profile) = config.strip_prefix("all-") else {
                return Err(format!(
                    "unknown MIG configuration; supported: all-disabled, all-enabled, all-balanced, {}",
                    supported()
                ));
            };
            match model.profiles.iter().find(|(p, _)| *p == profile) {
                Some(&(p, n)) => Ok(expand(&[(p, n)])),
                None => Err(format!(
                    "MIG profile {profile} is not supported by {}; supported: all-disabled, all-enabled, all-balanced, {}",
                    model.name,
                    supported()
                )),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn models_from_product_names() {
        assert_eq!(
            mig_model("NVIDIA-H100-80GB-HBM3").map(|m| m.name),
            Some("H100-80GB")
        );
        assert_eq!(
            mig_model("NVIDIA-A100-SXM4-80GB").map(|m| m.name),
            Some("A100-80GB")
        );
        assert_eq!(
            mig_model("A100-SXM4-40GB").map(|m| m.name),
            Some("A100-40GB")
        );
        assert_eq!(mig_model("Tesla-T4"), None);
        assert_eq!(mig_model("Tesla-V100-SXM2-16GB-N"), None);
    }

    #[test]
    fn layouts_follow_mig_parted() {
        let h100 = mig_model("NVIDIA-H100-80GB-HBM3").expect("MIG");
        assert_eq!(layout("all-1g.10gb", &h100).expect("ok").len(), 7);
        assert_eq!(layout("all-3g.40gb", &h100).expect("ok"), ["3g.40gb"; 2]);
        assert_eq!(
            layout("all-balanced", &h100).expect("ok"),
            vec!["1g.10gb", "1g.10gb", "2g.20gb", "3g.40gb"]
        );
        let a100 = mig_model("A100-SXM4-40GB").expect("MIG");
        // mig-parted: all-1g.10gb is 4 devices on a 40GB A100 and 7 on an 80GB one.
        assert_eq!(layout("all-1g.10gb", &a100).expect("ok").len(), 4);
        let e = layout("all-1g.5gb", &h100).expect_err("not an H100 profile");
        assert!(
            e.starts_with("MIG profile 1g.5gb is not supported by H100-80GB"),
            "{e}"
        );
        assert!(layout("half", &h100).is_err());
        assert!(layout("all-enabled", &h100).expect("ok").is_empty());
        assert_eq!(profile_slices("3g.40gb"), 3);
        assert_eq!(profile_slices("1g.10gb"), 1);
    }
}
