//! The `DefaultTolerationSeconds` admission plugin (upstream
//! `plugin/pkg/admission/defaulttolerationseconds/admission.go`, enabled by default in
//! kube-apiserver): on create and update, a pod that does not tolerate the
//! `node.kubernetes.io/not-ready:NoExecute` taint gets
//! `{key: node.kubernetes.io/not-ready, operator: Exists, effect: NoExecute, tolerationSeconds: 300}`
//! appended to its tolerations, and likewise for `node.kubernetes.io/unreachable`. A toleration
//! counts when its key is that taint's key or empty and its effect is `NoExecute` or empty (the
//! operator is not looked at, as upstream). So a pod stays bound for 300 s (ticks) after its
//! node becomes not ready or unreachable, and may be scheduled onto a node that has such a taint.

use k8s_types::admission::{MutatingAdmission, Operation};
use k8s_types::core::{Pod, Toleration};
use k8s_types::status::Status;
use k8s_types::store::ObjectStore;
use k8s_types::Object;

/// Upstream `PluginName`.
pub const PLUGIN_NAME: &str = "DefaultTolerationSeconds";
/// Upstream `v1.TaintNodeNotReady`.
pub const TAINT_NODE_NOT_READY: &str = "node.kubernetes.io/not-ready";
/// Upstream `v1.TaintNodeUnreachable`.
pub const TAINT_NODE_UNREACHABLE: &str = "node.kubernetes.io/unreachable";
/// Upstream default of `--default-not-ready-toleration-seconds` and
/// `--default-unreachable-toleration-seconds`, in seconds (ticks).
pub const DEFAULT_TOLERATION_SECONDS: i64 = 300;

/// The plugin (stateless).
#[derive(Clone, Copy, Debug, Default)]
pub struct DefaultTolerationSeconds;

/// True when some toleration of `pod` counts for the NoExecute taint `key` (see the module doc).
fn tolerates(pod: &Pod, key: &str) -> bool {
    pod.spec.tolerations.iter().any(|t| {
        (t.key == key || t.key.is_empty()) && (t.effect == "NoExecute" || t.effect.is_empty())
    })
}

/// Appends the default tolerations `pod` lacks (not-ready first, then unreachable).
pub fn add_default_tolerations(pod: &mut Pod) {
    let missing: Vec<&str> = [TAINT_NODE_NOT_READY, TAINT_NODE_UNREACHABLE]
        .into_iter()
        .filter(|key| !tolerates(pod, key))
        .collect();
    for key in missing {
        pod.spec.tolerations.push(Toleration {
            key: key.to_string(),
            operator: "Exists".to_string(),
            value: String::new(),
            effect: "NoExecute".to_string(),
            toleration_seconds: Some(DEFAULT_TOLERATION_SECONDS),
        });
    }
}

impl MutatingAdmission for DefaultTolerationSeconds {
    fn name(&self) -> &str {
        PLUGIN_NAME
    }

    fn admit(
        &self,
        operation: Operation,
        obj: &mut Object,
        _old: Option<&Object>,
        _store: &dyn ObjectStore,
    ) -> Result<(), Status> {
        if let (Operation::Create | Operation::Update, Object::Pod(pod)) = (operation, obj) {
            add_default_tolerations(pod);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toleration(key: &str, effect: &str, seconds: Option<i64>) -> Toleration {
        Toleration {
            key: key.into(),
            operator: "Exists".into(),
            effect: effect.into(),
            toleration_seconds: seconds,
            ..Default::default()
        }
    }

    fn keys_after(tolerations: Vec<Toleration>) -> Vec<(String, String, Option<i64>)> {
        let mut p = Pod::default();
        p.spec.tolerations = tolerations.into();
        add_default_tolerations(&mut p);
        p.spec
            .tolerations
            .iter()
            .map(|t| (t.key.clone(), t.effect.clone(), t.toleration_seconds))
            .collect()
    }

    fn t(key: &str, effect: &str, s: Option<i64>) -> (String, String, Option<i64>) {
        (key.into(), effect.into(), s)
    }

    /// Cases of upstream's `TestForgivenessAdmission`.
    #[test]
    fn defaults_are_added_only_for_the_taints_not_tolerated() {
        // No tolerations: both added, not-ready first.
        assert_eq!(
            keys_after(vec![]),
            vec![
                t(TAINT_NODE_NOT_READY, "NoExecute", Some(300)),
                t(TAINT_NODE_UNREACHABLE, "NoExecute", Some(300)),
            ]
        );
        // A not-ready NoExecute toleration of its own (700 s): only unreachable is added.
        assert_eq!(
            keys_after(vec![toleration(
                TAINT_NODE_NOT_READY,
                "NoExecute",
                Some(700)
            )]),
            vec![
                t(TAINT_NODE_NOT_READY, "NoExecute", Some(700)),
                t(TAINT_NODE_UNREACHABLE, "NoExecute", Some(300)),
            ]
        );
        // An empty key with an empty effect tolerates both: nothing added.
        assert_eq!(
            keys_after(vec![toleration("", "", None)]),
            vec![t("", "", None)]
        );
        // An empty key with NoExecute also tolerates both; with NoSchedule neither.
        assert_eq!(keys_after(vec![toleration("", "NoExecute", None)]).len(), 1);
        assert_eq!(
            keys_after(vec![toleration("", "NoSchedule", None)]).len(),
            3
        );
        // The not-ready key with NoSchedule does not count.
        assert_eq!(
            keys_after(vec![toleration(TAINT_NODE_NOT_READY, "NoSchedule", None)]).len(),
            3
        );
    }
}
