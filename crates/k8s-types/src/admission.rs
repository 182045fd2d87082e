//! Admission plugin contracts (upstream `k8s.io/apiserver/pkg/admission` `MutationInterface` and
//! `ValidationInterface`). The apiserver runs every mutating plugin, then validation, then every
//! validating plugin, in registration order.

use crate::object::Object;
use crate::status::Status;
use crate::store::ObjectStore;

/// The operation being admitted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operation {
    /// Create.
    Create,
    /// Update (spec/metadata or status).
    Update,
    /// Delete.
    Delete,
}

/// A plugin that may change the object before it is stored (e.g. defaulting, Priority).
pub trait MutatingAdmission {
    /// Plugin name, as upstream (e.g. `Priority`).
    fn name(&self) -> &str;

    /// Mutates `obj`; `store` gives read access to other objects (e.g. PriorityClasses).
    ///
    /// # Errors
    /// A `Status` (usually Forbidden or Invalid) to reject the request.
    fn admit(
        &self,
        operation: Operation,
        obj: &mut Object,
        old: Option<&Object>,
        store: &dyn ObjectStore,
    ) -> Result<(), Status>;
}

/// A plugin that may reject the object after mutation and validation.
pub trait ValidatingAdmission {
    /// Plugin name.
    fn name(&self) -> &str;

    /// Accepts or rejects `obj`.
    ///
    /// # Errors
    /// A `Status` to reject the request.
    fn validate(
        &self,
        operation: Operation,
        obj: &Object,
        old: Option<&Object>,
        store: &dyn ObjectStore,
    ) -> Result<(), Status>;
}
