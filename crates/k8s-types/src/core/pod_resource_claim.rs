//! The pod's side of Dynamic Resource Allocation (upstream `corev1.PodResourceClaim`,
//! `corev1.ResourceClaim`, `corev1.PodResourceClaimStatus`; KEP-4381): which ResourceClaims a pod
//! uses and which of its containers use them.

use serde::{Deserialize, Serialize};

use super::Pod;

/// Upstream `corev1.PodResourceClaim`: exactly one of `resourceClaimName` (an existing claim,
/// possibly shared by several pods) and `resourceClaimTemplateName` (a claim generated for this
/// pod by the ResourceClaim controller).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodResourceClaim {
    /// Unique in the pod; containers refer to the claim by it (a DNS label).
    #[serde(default)]
    pub name: String,
    /// An existing ResourceClaim in the pod's namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_claim_name: Option<String>,
    /// A ResourceClaimTemplate in the pod's namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_claim_template_name: Option<String>,
}

/// Upstream `corev1.ResourceClaim` (a container's `resources.claims[]` entry), renamed here so
/// it is not confused with `resource.k8s.io/v1` ResourceClaim.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContainerResourceClaim {
    /// The name of one of the pod's `spec.resourceClaims`.
    #[serde(default)]
    pub name: String,
    /// One request of that claim; empty means the whole claim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request: Option<String>,
}

/// Upstream `corev1.PodResourceClaimStatus`: the claim generated for a template-based entry.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodResourceClaimStatus {
    /// The `spec.resourceClaims[].name` it answers.
    #[serde(default)]
    pub name: String,
    /// The generated ResourceClaim's name; unset when none was needed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_claim_name: Option<String>,
}

impl Pod {
    /// The name of the ResourceClaim behind `spec.resourceClaims[i]`, as upstream's
    /// `resourceclaim.Name` (k8s.io/dynamic-resource-allocation/resourceclaim) resolves it: the
    /// claim's own name, or for a template the name the ResourceClaim controller recorded in
    /// `status.resourceClaimStatuses` (`Ok(None)`: recorded as not needed). The error is
    /// upstream's text: `pod "<ns>/<name>": ResourceClaim not created yet`, or, with neither
    /// field set, `... none of the supported fields are set`.
    pub fn resource_claim_name(&self, claim: &PodResourceClaim) -> Result<Option<String>, String> {
        if let Some(n) = &claim.resource_claim_name {
            return Ok(Some(n.clone()));
        }
        let (ns, name) = (self.metadata.namespace(), &self.metadata.name);
        if claim.resource_claim_template_name.is_some() {
            return match self
                .status
                .resource_claim_statuses
                .iter()
                .find(|s| s.name == claim.name)
            {
                Some(s) => Ok(s.resource_claim_name.clone()),
                None => Err(format!(
                    "pod \"{ns}/{name}\": ResourceClaim not created yet"
                )),
            };
        }
        Err(format!(
            "pod \"{ns}/{name}\", spec.resourceClaim {:?}: none of the supported fields are set",
            claim.name
        ))
    }
}
