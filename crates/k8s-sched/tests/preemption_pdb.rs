//! Preemption and PodDisruptionBudgets (upstream `pkg/scheduler/framework/preemption/
//! preemption.go` `filterPodsWithPDBViolation`, `pickOneNodeForPreemption`, and
//! `defaultpreemption/default_preemption.go` `SelectVictimsOnNode`), through the public API.

use k8s_sched::{KubeSchedulerConfiguration, Scheduler};
use k8s_testing::{node, pod, FakeApi};
use k8s_types::core::Pod;
use k8s_types::labels::LabelSelector;
use k8s_types::policy::PodDisruptionBudget;

fn scheduler() -> Scheduler {
    Scheduler::new(KubeSchedulerConfiguration::default()).unwrap()
}

fn running(name: &str, app: &str, cpu: &str, node: &str) -> Pod {
    let mut p = pod(name, cpu, "1Gi", &[]);
    p.spec.priority = Some(0);
    p.spec.node_name = Some(node.into());
    p.metadata.labels.insert("app".into(), app.into());
    p
}

/// A budget for `app` that allows no disruption (as the disruption controller would say with
/// currentHealthy == desiredHealthy).
fn exhausted_budget(app: &str) -> PodDisruptionBudget {
    let mut b = PodDisruptionBudget::default();
    b.metadata.name = format!("{app}-pdb");
    b.metadata.namespace = Some("default".into());
    b.spec.selector = Some(LabelSelector::from_labels([("app", app)]));
    b.status.disruptions_allowed = 0;
    b
}

fn preemptor(api: &mut FakeApi) {
    let mut high = pod("high", "1", "1Gi", &[]);
    high.spec.priority = Some(1000);
    api.add(high);
}

#[test]
fn the_node_whose_victim_a_budget_protects_is_not_chosen() {
    for protected in [None, Some("db")] {
        let mut api = FakeApi::new();
        api.add(node("a", "2", "4Gi", &[]));
        api.add(node("b", "2", "4Gi", &[]));
        api.add(running("web-a", "web", "1500m", "a"));
        api.add(running("db-b", "db", "1500m", "b"));
        if let Some(app) = protected {
            api.add(exhausted_budget(app));
        }
        preemptor(&mut api);
        scheduler().schedule(&mut api);
        let nominated = api.pod("high").status.nominated_node_name;
        match protected {
            // Everything equal: the node name sorting last.
            None => {
                assert_eq!(nominated.as_deref(), Some("b"));
                assert!(api.pod("db-b").is_terminating());
            }
            // b's victim would violate its budget: a has 0 violations and wins.
            Some(_) => {
                assert_eq!(nominated.as_deref(), Some("a"));
                assert!(api.pod("web-a").is_terminating());
                assert!(!api.pod("db-b").is_terminating());
            }
        }
    }
}

#[test]
fn violating_victims_are_reprieved_first() {
    for protected in [None, Some("db")] {
        let mut api = FakeApi::new();
        api.add(node("only", "2", "4Gi", &[]));
        // Same priority and start: v1 sorts as the more important (name order), so without a
        // budget it is reprieved and v2 goes.
        api.add(running("v1", "web", "1", "only"));
        api.add(running("v2", "db", "1", "only"));
        if let Some(app) = protected {
            api.add(exhausted_budget(app));
        }
        preemptor(&mut api);
        scheduler().schedule(&mut api);
        let (gone, kept) = match protected {
            None => ("v2", "v1"),
            Some(_) => ("v1", "v2"),
        };
        assert!(api.pod(gone).is_terminating(), "{protected:?}: {gone}");
        assert!(!api.pod(kept).is_terminating(), "{protected:?}: {kept}");
    }
}

#[test]
fn a_budget_with_room_or_an_already_disrupted_pod_is_no_violation() {
    let mut api = FakeApi::new();
    api.add(node("a", "2", "4Gi", &[]));
    api.add(node("b", "2", "4Gi", &[]));
    api.add(running("web-a", "web", "1500m", "a"));
    api.add(running("db-b", "db", "1500m", "b"));
    let mut b = exhausted_budget("db");
    // The apiserver already let db-b go: it uses none of the budget.
    b.status
        .disrupted_pods
        .insert("db-b".into(), "1970-01-01T00:00:01Z".into());
    api.add(b);
    preemptor(&mut api);
    scheduler().schedule(&mut api);
    assert_eq!(
        api.pod("high").status.nominated_node_name.as_deref(),
        Some("b")
    );
}
