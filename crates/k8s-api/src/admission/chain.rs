//! [`AdmissionChain`]: the ordered mutating and validating plugins (upstream
//! `k8s.io/apiserver/pkg/admission/chain.go` `chainAdmissionHandler`). The first plugin that rejects
//! a request ends it with that plugin's `Status`.

use k8s_types::admission::{MutatingAdmission, Operation, ValidatingAdmission};
use k8s_types::status::Status;
use k8s_types::store::ObjectStore;
use k8s_types::Object;

use super::default_toleration_seconds::DefaultTolerationSeconds;
use super::limit_ranger::LimitRanger;
use super::namespace_lifecycle::NamespaceLifecycle;
use super::priority::Priority;
use super::runtime_class::RuntimeClassPlugin;

/// Mutating plugins, then validating plugins, each list in registration order.
#[derive(Default)]
pub struct AdmissionChain {
    mutating: Vec<Box<dyn MutatingAdmission>>,
    validating: Vec<Box<dyn ValidatingAdmission>>,
    /// Whether `ResourceQuota` runs after the validating plugins (it writes quota status, so the
    /// apiserver runs it itself: [`super::resource_quota::evaluate`]).
    quota: bool,
}

impl AdmissionChain {
    /// A chain with no plugins.
    pub fn empty() -> AdmissionChain {
        AdmissionChain::default()
    }

    /// The default chain: mutating `LimitRanger`, `Priority`, `DefaultTolerationSeconds`,
    /// `RuntimeClass`; validating `NamespaceLifecycle`, `LimitRanger`, `Priority`,
    /// `RuntimeClass`, then `ResourceQuota`
    /// (upstream's recommended order, `AllOrderedPlugins`).
    pub fn with_default_plugins() -> AdmissionChain {
        let mut c = AdmissionChain::empty();
        c.add_mutating(Box::new(LimitRanger));
        c.add_mutating(Box::new(Priority));
        c.add_mutating(Box::new(DefaultTolerationSeconds));
        c.add_mutating(Box::new(RuntimeClassPlugin));
        c.add_validating(Box::new(NamespaceLifecycle));
        c.add_validating(Box::new(LimitRanger));
        c.add_validating(Box::new(Priority));
        c.add_validating(Box::new(RuntimeClassPlugin));
        c.quota = true;
        c
    }

    /// Whether the `ResourceQuota` plugin runs (last, after the validating plugins).
    pub fn quota_enabled(&self) -> bool {
        self.quota
    }

    /// Turns the `ResourceQuota` plugin on or off.
    pub fn set_quota_enabled(&mut self, on: bool) {
        self.quota = on;
    }

    /// Appends a mutating plugin (runs after those already registered).
    pub fn add_mutating(&mut self, p: Box<dyn MutatingAdmission>) {
        self.mutating.push(p);
    }

    /// Appends a validating plugin (runs after those already registered).
    pub fn add_validating(&mut self, p: Box<dyn ValidatingAdmission>) {
        self.validating.push(p);
    }

    /// Names of the mutating plugins, in order.
    pub fn mutating_names(&self) -> Vec<String> {
        self.mutating.iter().map(|p| p.name().to_string()).collect()
    }

    /// Names of the validating plugins, in order (`ResourceQuota` last when enabled).
    pub fn validating_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .validating
            .iter()
            .map(|p| p.name().to_string())
            .collect();
        if self.quota {
            names.push(super::resource_quota::PLUGIN_NAME.to_string());
        }
        names
    }

    /// Runs every mutating plugin in order.
    ///
    /// # Errors
    /// The first plugin's rejection.
    pub fn admit(
        &self,
        op: Operation,
        obj: &mut Object,
        old: Option<&Object>,
        store: &dyn ObjectStore,
    ) -> Result<(), Status> {
        for p in &self.mutating {
            p.admit(op, obj, old, store)?;
        }
        Ok(())
    }

    /// Runs every validating plugin in order.
    ///
    /// # Errors
    /// The first plugin's rejection.
    pub fn validate(
        &self,
        op: Operation,
        obj: &Object,
        old: Option<&Object>,
        store: &dyn ObjectStore,
    ) -> Result<(), Status> {
        for p in &self.validating {
            p.validate(op, obj, old, store)?;
        }
        Ok(())
    }
}
