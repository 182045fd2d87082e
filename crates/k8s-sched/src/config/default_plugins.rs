//! The default profile's plugins and upstream's merge of a profile's custom plugin sets into them
//! (upstream `pkg/scheduler/apis/config/v1/default_plugins.go`: `getDefaultPlugins`,
//! `mergePlugins`, `mergePluginSet`).
//!
//! The default MultiPoint list is upstream's (v1.34+: `DynamicResources` before
//! `DefaultPreemption`, as `getDefaultPlugins` inserts it while the DynamicResourceAllocation
//! feature is on, GA and default since v1.34) followed by `Coscheduling`, which is not part of
//! upstream's default profile: k8s-mini enables it so PodGroups work out of the box. For pods
//! without the `scheduling.x-k8s.io/pod-group` label it is a no-op. With the feature gates
//! `GenericWorkload` and `GangScheduling` on (both alpha and off by default in v1.36), upstream
//! appends `GangScheduling` to the MultiPoint list; so does k8s-mini.

use std::collections::{BTreeMap, BTreeSet};

use super::{Plugin, PluginSet, Plugins};
use crate::plugins::names;

/// The default MultiPoint plugins with their score weights, in upstream order; `gang_scheduling`
/// appends GangScheduling.
pub fn default_plugins(gang_scheduling: bool) -> Plugins {
    let mut enabled = vec![
        Plugin::named(names::SCHEDULING_GATES),
        Plugin::named(names::PRIORITY_SORT),
        Plugin::named(names::NODE_UNSCHEDULABLE),
        Plugin::named(names::NODE_NAME),
        Plugin::weighted(names::TAINT_TOLERATION, 3),
        Plugin::weighted(names::NODE_AFFINITY, 2),
        Plugin::named(names::NODE_PORTS),
        Plugin::weighted(names::NODE_RESOURCES_FIT, 1),
        Plugin::named(names::VOLUME_RESTRICTIONS),
        Plugin::named(names::NODE_VOLUME_LIMITS),
        Plugin::named(names::VOLUME_BINDING),
        Plugin::named(names::VOLUME_ZONE),
        Plugin::weighted(names::POD_TOPOLOGY_SPREAD, 2),
        Plugin::weighted(names::INTER_POD_AFFINITY, 2),
        Plugin::named(names::DYNAMIC_RESOURCES),
        Plugin::named(names::DEFAULT_PREEMPTION),
        Plugin::weighted(names::NODE_RESOURCES_BALANCED_ALLOCATION, 1),
        Plugin::weighted(names::IMAGE_LOCALITY, 1),
        Plugin::named(names::DEFAULT_BINDER),
        Plugin::named(names::COSCHEDULING),
    ];
    if gang_scheduling {
        enabled.push(Plugin::named(names::GANG_SCHEDULING));
    }
    Plugins {
        multi_point: PluginSet {
            enabled,
            disabled: Vec::new(),
        },
        ..Default::default()
    }
}

/// Upstream `mergePlugins`: merges each extension point's custom set into the default one.
pub fn merge_plugins(defaults: Plugins, custom: Option<&Plugins>) -> Plugins {
    let Some(c) = custom else {
        return defaults;
    };
    Plugins {
        pre_enqueue: merge_plugin_set(&defaults.pre_enqueue, &c.pre_enqueue),
        queue_sort: merge_plugin_set(&defaults.queue_sort, &c.queue_sort),
        pre_filter: merge_plugin_set(&defaults.pre_filter, &c.pre_filter),
        filter: merge_plugin_set(&defaults.filter, &c.filter),
        post_filter: merge_plugin_set(&defaults.post_filter, &c.post_filter),
        pre_score: merge_plugin_set(&defaults.pre_score, &c.pre_score),
        score: merge_plugin_set(&defaults.score, &c.score),
        reserve: merge_plugin_set(&defaults.reserve, &c.reserve),
        permit: merge_plugin_set(&defaults.permit, &c.permit),
        pre_bind: merge_plugin_set(&defaults.pre_bind, &c.pre_bind),
        bind: merge_plugin_set(&defaults.bind, &c.bind),
        post_bind: merge_plugin_set(&defaults.post_bind, &c.post_bind),
        multi_point: merge_plugin_set(&defaults.multi_point, &c.multi_point),
    }
}

/// Upstream `mergePluginSet`: disabled defaults are dropped (`*` drops all), a default that is
/// re-enabled is replaced in place (keeping its position), other custom plugins are appended.
/// Both disabled lists are kept so MultiPoint expansion can honour them.
pub fn merge_plugin_set(defaults: &PluginSet, custom: &PluginSet) -> PluginSet {
    let mut disabled = Vec::new();
    let mut disabled_names = BTreeSet::new();
    for d in custom.disabled.iter().chain(defaults.disabled.iter()) {
        disabled.push(Plugin::named(&d.name));
        disabled_names.insert(d.name.as_str());
    }
    let mut custom_by_name: BTreeMap<&str, (usize, &Plugin)> = BTreeMap::new();
    for (i, p) in custom.enabled.iter().enumerate() {
        custom_by_name.insert(p.name.as_str(), (i, p));
    }
    let mut replaced = BTreeSet::new();
    let mut enabled = Vec::new();
    if !disabled_names.contains("*") {
        for d in &defaults.enabled {
            if disabled_names.contains(d.name.as_str()) {
                continue;
            }
            match custom_by_name.get(d.name.as_str()) {
                Some((i, p)) => {
                    replaced.insert(*i);
                    enabled.push((*p).clone());
                }
                None => enabled.push(d.clone()),
            }
        }
    }
    for (i, p) in custom.enabled.iter().enumerate() {
        if !replaced.contains(&i) {
            enabled.push(p.clone());
        }
    }
    PluginSet { enabled, disabled }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_replaces_in_place_appends_and_disables() {
        let defaults = PluginSet {
            enabled: vec![
                Plugin::named("A"),
                Plugin::weighted("B", 1),
                Plugin::named("C"),
            ],
            disabled: vec![],
        };
        let custom = PluginSet {
            enabled: vec![Plugin::named("D"), Plugin::weighted("B", 5)],
            disabled: vec![Plugin::named("C")],
        };
        let m = merge_plugin_set(&defaults, &custom);
        let names: Vec<_> = m
            .enabled
            .iter()
            .map(|p| (p.name.as_str(), p.weight))
            .collect();
        assert_eq!(names, vec![("A", None), ("B", Some(5)), ("D", None)]);
        assert_eq!(m.disabled, vec![Plugin::named("C")]);

        let star = PluginSet {
            enabled: vec![Plugin::named("X")],
            disabled: vec![Plugin::named("*")],
        };
        let m = merge_plugin_set(&defaults, &star);
        assert_eq!(m.enabled, vec![Plugin::named("X")]);
    }
}
