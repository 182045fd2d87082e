//! The in-tree plugins, one per file, and the in-tree [`Registry`]
//! (upstream `pkg/scheduler/framework/plugins/registry.go` `NewInTreeRegistry`).
//!
//! Upstream default-profile plugins that k8s-mini does not implement yet are listed in
//! [`NOT_YET_IMPLEMENTED`]: a profile that enables them builds without them and logs a warning.

pub mod coscheduling;
pub mod coscheduling_fit;
pub mod default_binder;
pub mod default_preemption;
pub mod dynamic_resources;
pub mod gang_scheduling;
pub mod gpu;
pub(crate) mod helper;
pub mod image_locality;
pub mod inter_pod_affinity;
pub mod names;
pub mod node_affinity;
pub mod node_name;
pub mod node_ports;
pub mod node_resources;
pub mod node_unschedulable;
pub mod pod_topology_spread;
pub mod priority_sort;
pub mod scheduling_gates;
pub(crate) mod selector;
pub mod taint_toleration;

#[cfg(test)]
pub(crate) mod fixtures;
#[cfg(test)]
pub(crate) mod testutil;

use k8s_sched_framework::{PluginFactory, Registry};

/// Upstream plugin names accepted in configurations but not implemented yet; they are skipped
/// with a warning when a profile is built.
pub const NOT_YET_IMPLEMENTED: &[&str] = &[
    names::VOLUME_RESTRICTIONS,
    names::NODE_VOLUME_LIMITS,
    names::VOLUME_BINDING,
    names::VOLUME_ZONE,
];

/// True when `name` is in [`NOT_YET_IMPLEMENTED`].
pub fn not_yet_implemented(name: &str) -> bool {
    NOT_YET_IMPLEMENTED.contains(&name)
}

/// The in-tree plugins by name.
pub fn in_tree_registry() -> Registry {
    let entries: Vec<(&str, PluginFactory)> = vec![
        (
            names::SCHEDULING_GATES,
            Box::new(scheduling_gates::SchedulingGates::factory),
        ),
        (
            names::PRIORITY_SORT,
            Box::new(priority_sort::PrioritySort::factory),
        ),
        (
            names::NODE_UNSCHEDULABLE,
            Box::new(node_unschedulable::NodeUnschedulable::factory),
        ),
        (names::NODE_NAME, Box::new(node_name::NodeName::factory)),
        (
            names::TAINT_TOLERATION,
            Box::new(taint_toleration::TaintToleration::factory),
        ),
        (
            names::NODE_AFFINITY,
            Box::new(node_affinity::NodeAffinity::factory),
        ),
        (names::NODE_PORTS, Box::new(node_ports::NodePorts::factory)),
        (
            names::NODE_RESOURCES_FIT,
            Box::new(node_resources::fit::NodeResourcesFit::factory),
        ),
        (
            names::NODE_RESOURCES_BALANCED_ALLOCATION,
            Box::new(node_resources::balanced_allocation::NodeResourcesBalancedAllocation::factory),
        ),
        (
            names::POD_TOPOLOGY_SPREAD,
            Box::new(pod_topology_spread::PodTopologySpread::factory),
        ),
        (
            names::INTER_POD_AFFINITY,
            Box::new(inter_pod_affinity::InterPodAffinity::factory),
        ),
        (
            names::IMAGE_LOCALITY,
            Box::new(image_locality::ImageLocality::factory),
        ),
        (
            names::DEFAULT_PREEMPTION,
            Box::new(default_preemption::DefaultPreemption::factory),
        ),
        (
            names::DEFAULT_BINDER,
            Box::new(default_binder::DefaultBinder::factory),
        ),
        (
            names::COSCHEDULING,
            Box::new(coscheduling::Coscheduling::factory),
        ),
        (
            names::GANG_SCHEDULING,
            Box::new(gang_scheduling::GangScheduling::factory),
        ),
        (
            names::DYNAMIC_RESOURCES,
            Box::new(dynamic_resources::DynamicResources::factory),
        ),
    ];
    let mut r = Registry::new();
    let entries = entries.into_iter().chain(gpu::registry_entries());
    for (name, f) in entries {
        // Names are distinct constants: registering cannot fail.
        let _ = r.register(name, f);
    }
    r
}
