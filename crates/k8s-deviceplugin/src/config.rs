//! How a node's NVIDIA device plugin is configured: MIG strategy and layout, GPU sharing
//! (time-slicing or MPS replicas) and the GPU interconnect topology, read from the Node manifest's
//! labels and annotations.
//!
//! Upstream the device plugin reads a config file (`NVIDIA/k8s-device-plugin` `api/config/v1`:
//! `flags.migStrategy`, `sharing.timeSlicing` / `sharing.mps` with `resources[].replicas`,
//! `renameByDefault`, `failRequestsGreaterThanOne`), the GPU Operator's mig-manager applies the MIG
//! layout named by the node label `nvidia.com/mig.config`, and GPU Feature Discovery publishes the
//! result as labels. A k8s-mini Node manifest describes the machine after that setup, so it uses the
//! published label names as input:
//!
//! | input | meaning (upstream field) |
//! |---|---|
//! | label `nvidia.com/mig.config` | mig-parted layout: `all-disabled`, `all-enabled`, `all-<profile>`, `all-balanced` |
//! | label `nvidia.com/mig.strategy` | `none`, `single`, `mixed` (`flags.migStrategy`; default `single` when a layout enables MIG, the GPU Operator's default) |
//! | label `nvidia.com/gpu.sharing-strategy` | `none`, `time-slicing`, `mps` |
//! | label `nvidia.com/gpu.replicas` | replicas per device (`resources[].replicas`; 0 and 1 mean not shared) |
//! | annotation `k8s-mini.io/device-plugin.rename-by-default` | `"true"`: shared resources are `<name>.shared` (`renameByDefault`) |
//! | annotation `k8s-mini.io/device-plugin.fail-requests-greater-than-one` | `"true"` / `"false"` (`failRequestsGreaterThanOne`; default false for time-slicing, true for MPS as upstream `config.go`) |
//! | annotations `k8s-mini.io/gpu-topology`, `k8s-mini.io/gpu-nvlink-groups`, `k8s-mini.io/gpu-numa-nodes` | see [`crate::topology`] |
//!
//! Without any of them the plugin is what it always was: whole GPUs, lowest indices first.
//! Simplifications: one `replicas` value for every resource of the node (upstream lists replicas
//! per resource name), sharing of all devices (`devices: all`).

use std::collections::BTreeMap;

use k8s_types::status::FieldError;

use crate::topology::GpuTopology;

/// Label naming the mig-parted layout the GPU Operator's mig-manager applies.
pub const LABEL_MIG_CONFIG: &str = "nvidia.com/mig.config";
/// GFD label and device plugin flag `--mig-strategy`.
pub const LABEL_MIG_STRATEGY: &str = "nvidia.com/mig.strategy";
/// GFD label with the sharing strategy of `nvidia.com/gpu`.
pub const LABEL_SHARING_STRATEGY: &str = "nvidia.com/gpu.sharing-strategy";
/// GFD label with the replicas of `nvidia.com/gpu`.
pub const LABEL_REPLICAS: &str = "nvidia.com/gpu.replicas";
/// Annotation for `renameByDefault`.
pub const ANNOTATION_RENAME_BY_DEFAULT: &str = "k8s-mini.io/device-plugin.rename-by-default";
/// Annotation for `failRequestsGreaterThanOne`.
pub const ANNOTATION_FAIL_REQUESTS_GREATER_THAN_ONE: &str =
    "k8s-mini.io/device-plugin.fail-requests-greater-than-one";

/// Upstream `flags.migStrategy`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum MigStrategy {
    /// MIG-enabled GPUs are advertised as whole GPUs.
    #[default]
    None,
    /// Every GPU split the same way; each MIG device is one `nvidia.com/gpu`.
    Single,
    /// One resource per profile, `nvidia.com/mig-<profile>`.
    Mixed,
}

impl MigStrategy {
    /// The flag / label value.
    pub fn as_str(self) -> &'static str {
        match self {
            MigStrategy::None => "none",
            MigStrategy::Single => "single",
            MigStrategy::Mixed => "mixed",
        }
    }
}

/// Upstream `SharingStrategy`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SharingStrategy {
    /// Not shared.
    #[default]
    None,
    /// `sharing.timeSlicing`.
    TimeSlicing,
    /// `sharing.mps`.
    Mps,
}

impl SharingStrategy {
    /// The GFD label value.
    pub fn as_str(self) -> &'static str {
        match self {
            SharingStrategy::None => "none",
            SharingStrategy::TimeSlicing => "time-slicing",
            SharingStrategy::Mps => "mps",
        }
    }
}

/// Upstream `ReplicatedResources`, one `replicas` for all resources.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sharing {
    /// Time-slicing, MPS or none.
    pub strategy: SharingStrategy,
    /// Replicas per device (1 when not shared).
    pub replicas: u32,
    /// Shared resources are renamed `<name>.shared`.
    pub rename_by_default: bool,
    /// Allocate rejects requests of more than one replica.
    pub fail_requests_greater_than_one: bool,
}

impl Sharing {
    /// True when devices are replicated (upstream `isReplicated`: replicas > 1).
    pub fn is_replicated(&self) -> bool {
        self.strategy != SharingStrategy::None && self.replicas > 1
    }
}

/// A node's device plugin configuration.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DevicePluginConfig {
    /// `flags.migStrategy`.
    pub mig_strategy: MigStrategy,
    /// The mig-parted layout name, when MIG is enabled (`None` for `all-disabled` or no label).
    pub mig_config: Option<String>,
    /// Sharing.
    pub sharing: Sharing,
    /// The GPU interconnect, when given.
    pub topology: Option<GpuTopology>,
    /// Whether any input was given (a node without any keeps today's plugin exactly).
    pub configured: bool,
}

fn label_path(key: &str) -> String {
    format!("metadata.labels[{key}]")
}

fn annotation_path(key: &str) -> String {
    format!("metadata.annotations[{key}]")
}

fn parse_bool(
    annotations: &BTreeMap<String, String>,
    key: &str,
    errs: &mut Vec<FieldError>,
) -> Option<bool> {
    match annotations.get(key).map(String::as_str) {
        None => None,
        Some("true") => Some(true),
        Some("false") => Some(false),
        Some(v) => {
            errs.push(FieldError::not_supported(
                annotation_path(key),
                v,
                &["true", "false"],
            ));
            None
        }
    }
}

impl DevicePluginConfig {
    /// Reads the configuration from a Node's labels and annotations, for a node with `n_gpus`
    /// GPUs (topology annotations are checked against it).
    ///
    /// # Errors
    /// One [`FieldError`] per bad value, naming the label or annotation.
    pub fn from_node(
        labels: &BTreeMap<String, String>,
        annotations: &BTreeMap<String, String>,
        n_gpus: usize,
    ) -> Result<DevicePluginConfig, Vec<FieldError>> {
        let mut errs = Vec::new();
        let mut cfg = DevicePluginConfig::default();
        let mig_config = labels.get(LABEL_MIG_CONFIG);
        let mig_enabled = mig_config.is_some_and(|c| c != "all-disabled");
        cfg.mig_strategy = match labels.get(LABEL_MIG_STRATEGY).map(String::as_str) {
            None if mig_enabled => MigStrategy::Single,
            None | Some("none") => MigStrategy::None,
            Some("single") => MigStrategy::Single,
            Some("mixed") => MigStrategy::Mixed,
            Some(v) => {
                errs.push(FieldError::not_supported(
                    label_path(LABEL_MIG_STRATEGY),
                    v,
                    &["none", "single", "mixed"],
                ));
                MigStrategy::None
            }
        };
        if mig_enabled {
            cfg.mig_config = mig_config.cloned();
        }
        let replicas = match labels.get(LABEL_REPLICAS) {
            None => None,
            Some(v) => match v.parse::<u32>() {
                Ok(n) if n <= 1024 => Some(n),
                _ => {
                    errs.push(FieldError::invalid(
                        label_path(LABEL_REPLICAS),
                        format!("{v:?}"),
                        "must be an integer from 0 to 1024",
                    ));
                    None
                }
            },
        };
        let strategy = match labels.get(LABEL_SHARING_STRATEGY).map(String::as_str) {
            // GFD publishes replicas without a strategy only for unshared devices; replicas > 1
            // alone means time-slicing, the common case.
            None if replicas.unwrap_or(1) > 1 => SharingStrategy::TimeSlicing,
            None | Some("none") => SharingStrategy::None,
            Some("time-slicing") => SharingStrategy::TimeSlicing,
            Some("mps") => SharingStrategy::Mps,
            Some(v) => {
                errs.push(FieldError::not_supported(
                    label_path(LABEL_SHARING_STRATEGY),
                    v,
                    &["none", "time-slicing", "mps"],
                ));
                SharingStrategy::None
            }
        };
        let r = replicas.unwrap_or(1).max(1);
        if strategy != SharingStrategy::None && r < 2 {
            errs.push(FieldError::invalid(
                label_path(LABEL_REPLICAS),
                format!("{:?}", replicas.map(|n| n.to_string()).unwrap_or_default()),
                format!(
                    "must be at least 2 when {LABEL_SHARING_STRATEGY} is {}",
                    strategy.as_str()
                ),
            ));
        }
        if strategy == SharingStrategy::None && r > 1 {
            errs.push(FieldError::invalid(
                label_path(LABEL_REPLICAS),
                format!("{r:?}"),
                format!("must be 0 or 1 when {LABEL_SHARING_STRATEGY} is none"),
            ));
        }
        if strategy == SharingStrategy::Mps && mig_enabled && cfg.mig_strategy != MigStrategy::None
        {
            // Upstream internal/plugin/mps.go and cmd/nvidia-device-plugin/main.go.
            errs.push(FieldError::invalid(
                label_path(LABEL_SHARING_STRATEGY),
                "\"mps\"",
                "sharing using MPS is not supported for MIG devices",
            ));
        }
        let rename = parse_bool(annotations, ANNOTATION_RENAME_BY_DEFAULT, &mut errs);
        let fail = parse_bool(
            annotations,
            ANNOTATION_FAIL_REQUESTS_GREATER_THAN_ONE,
            &mut errs,
        );
        cfg.sharing = Sharing {
            strategy,
            replicas: if strategy == SharingStrategy::None {
                1
            } else {
                r
            },
            rename_by_default: rename.unwrap_or(false),
            // Upstream api/config/v1/config.go: MPS defaults failRequestsGreaterThanOne to true.
            fail_requests_greater_than_one: fail.unwrap_or(strategy == SharingStrategy::Mps),
        };
        cfg.topology = match GpuTopology::from_annotations(annotations, n_gpus) {
            Ok(t) => t,
            Err(e) => {
                errs.extend(e);
                None
            }
        };
        // Labels that change nothing (a real node's `nvidia.com/gpu.replicas: "1"`,
        // `nvidia.com/gpu.sharing-strategy: none`) leave the node unconfigured.
        cfg.configured = mig_enabled
            || cfg.mig_strategy != MigStrategy::None
            || cfg.sharing.is_replicated()
            || rename.is_some()
            || fail.is_some()
            || cfg.topology.is_some();
        if errs.is_empty() {
            Ok(cfg)
        } else {
            Err(errs)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(kv: &[(&str, &str)]) -> BTreeMap<String, String> {
        kv.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn no_input_is_the_default_plugin() {
        let c = DevicePluginConfig::from_node(&map(&[]), &map(&[]), 8).expect("valid");
        assert!(!c.configured);
        assert_eq!(c.mig_strategy, MigStrategy::None);
        assert!(!c.sharing.is_replicated());
        // The real V100 node's GFD labels (replicas 1, sharing none) change nothing either.
        let l = map(&[(LABEL_REPLICAS, "1"), (LABEL_SHARING_STRATEGY, "none")]);
        let c = DevicePluginConfig::from_node(&l, &map(&[]), 8).expect("valid");
        assert!(!c.configured);
        assert!(!c.sharing.is_replicated());
        assert_eq!(c.sharing.replicas, 1);
    }

    #[test]
    fn mig_layout_defaults_to_single_and_mps_defaults_to_failing_big_requests() {
        let c =
            DevicePluginConfig::from_node(&map(&[(LABEL_MIG_CONFIG, "all-1g.10gb")]), &map(&[]), 8)
                .expect("valid");
        assert_eq!(c.mig_strategy, MigStrategy::Single);
        assert_eq!(c.mig_config.as_deref(), Some("all-1g.10gb"));
        let c = DevicePluginConfig::from_node(
            &map(&[(LABEL_SHARING_STRATEGY, "mps"), (LABEL_REPLICAS, "4")]),
            &map(&[]),
            2,
        )
        .expect("valid");
        assert_eq!(c.sharing.strategy, SharingStrategy::Mps);
        assert!(c.sharing.fail_requests_greater_than_one);
        let c = DevicePluginConfig::from_node(
            &map(&[(LABEL_REPLICAS, "4")]),
            &map(&[(ANNOTATION_RENAME_BY_DEFAULT, "true")]),
            2,
        )
        .expect("valid");
        assert_eq!(c.sharing.strategy, SharingStrategy::TimeSlicing);
        assert!(c.sharing.rename_by_default);
        assert!(!c.sharing.fail_requests_greater_than_one);
    }

    #[test]
    fn bad_values_name_the_label() {
        let errs = DevicePluginConfig::from_node(
            &map(&[
                (LABEL_MIG_STRATEGY, "both"),
                (LABEL_SHARING_STRATEGY, "time-slicing"),
                (LABEL_REPLICAS, "x"),
            ]),
            &map(&[(ANNOTATION_RENAME_BY_DEFAULT, "yes")]),
            8,
        )
        .expect_err("invalid");
        let fields: Vec<&str> = errs.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(
            fields,
            vec![
                "metadata.labels[nvidia.com/mig.strategy]",
                "metadata.labels[nvidia.com/gpu.replicas]",
                "metadata.labels[nvidia.com/gpu.replicas]",
                "metadata.annotations[k8s-mini.io/device-plugin.rename-by-default]",
            ]
        );
        let errs = DevicePluginConfig::from_node(
            &map(&[
                (LABEL_MIG_CONFIG, "all-1g.10gb"),
                (LABEL_SHARING_STRATEGY, "mps"),
                (LABEL_REPLICAS, "2"),
            ]),
            &map(&[]),
            8,
        )
        .expect_err("mps with MIG");
        assert!(errs[0]
            .to_string()
            .contains("not supported for MIG devices"));
    }
}
