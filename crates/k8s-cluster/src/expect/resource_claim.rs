//! The `resourceClaim` check: a DRA ResourceClaim's allocation and reservations, as `kubectl get
//! resourceclaim <name> -o yaml` shows them (`status.allocation.devices.results`,
//! `status.reservedFor`).

use serde::Deserialize;

use k8s_types::apiserver::{ApiClient, ApiExt};
use k8s_types::resource::ResourceClaim;

/// `resourceClaim`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ResourceClaimExpectation {
    /// The claim's name.
    pub name: String,
    /// Namespace (default `default`).
    #[serde(default)]
    pub namespace: Option<String>,
    /// Whether `status.allocation` is set.
    #[serde(default)]
    pub allocated: Option<bool>,
    /// The allocated devices as `<pool>/<device>` (e.g. `h100-a/gpu-0`), in result order.
    #[serde(default)]
    pub devices: Option<Vec<String>>,
    /// The allocation results' `request` names, in result order (`<request>/<subrequest>` for a
    /// `firstAvailable` request).
    #[serde(default)]
    pub requests: Option<Vec<String>>,
    /// The names of the pods in `status.reservedFor`, in order.
    #[serde(default)]
    pub reserved_for: Option<Vec<String>>,
    /// `false`: the claim must not exist (deleted with its pod).
    #[serde(default)]
    pub exists: Option<bool>,
}

/// `None` when every given field holds, else the differences joined by `; `.
pub(super) fn check_resource_claim(
    api: &dyn ApiClient,
    c: &ResourceClaimExpectation,
) -> Option<String> {
    let ns = c.namespace.as_deref().unwrap_or("default");
    let claim = match api.get_typed::<ResourceClaim>(ns, &c.name) {
        Ok(claim) => claim,
        Err(_) if c.exists == Some(false) => return None,
        Err(e) => return Some(e.message),
    };
    let mut problems = Vec::new();
    if c.exists == Some(false) {
        problems.push("expected the claim not to exist".to_string());
    }
    let allocation = claim.status.allocation.as_ref();
    if let Some(want) = c.allocated {
        if allocation.is_some() != want {
            problems.push(format!(
                "expected allocated {want}, got {}",
                allocation.is_some()
            ));
        }
    }
    if let Some(want) = &c.devices {
        let got: Vec<String> = allocation
            .map(|a| {
                a.devices
                    .results
                    .iter()
                    .map(|r| format!("{}/{}", r.pool, r.device))
                    .collect()
            })
            .unwrap_or_default();
        if got != *want {
            problems.push(format!("expected devices {want:?}, got {got:?}"));
        }
    }
    if let Some(want) = &c.requests {
        let got: Vec<String> = allocation
            .map(|a| {
                a.devices
                    .results
                    .iter()
                    .map(|r| r.request.clone())
                    .collect()
            })
            .unwrap_or_default();
        if got != *want {
            problems.push(format!("expected requests {want:?}, got {got:?}"));
        }
    }
    if let Some(want) = &c.reserved_for {
        let got: Vec<String> = claim
            .status
            .reserved_for
            .iter()
            .map(|r| r.name.clone())
            .collect();
        if got != *want {
            problems.push(format!("expected reservedFor {want:?}, got {got:?}"));
        }
    }
    (!problems.is_empty()).then(|| problems.join("; "))
}
