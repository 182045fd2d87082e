//! Namespace defaults (upstream `pkg/apis/core/v1/defaults.go` `SetDefaults_Namespace`): the
//! immutable label `kubernetes.io/metadata.name: <name>`.

use k8s_types::core::Namespace;

/// Upstream `v1.LabelMetadataName`.
pub const LABEL_METADATA_NAME: &str = "kubernetes.io/metadata.name";

/// Upstream `SetDefaults_Namespace`.
pub fn set_defaults_namespace(ns: &mut Namespace) {
    if !ns.metadata.name.is_empty() {
        ns.metadata
            .labels
            .insert(LABEL_METADATA_NAME.to_string(), ns.metadata.name.clone());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn name_label_is_added() {
        let mut ns = Namespace::default();
        ns.metadata.name = "team-a".into();
        set_defaults_namespace(&mut ns);
        assert_eq!(ns.metadata.labels[LABEL_METADATA_NAME], "team-a");
    }
}
