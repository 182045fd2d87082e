//! A pod's QoS class (upstream `pkg/apis/core/helper/qos/qos.go` `ComputePodQOS`), written to
//! `status.qosClass` when the pod is created:
//! - `BestEffort`: no container (regular or init) requests or limits cpu or memory;
//! - `Guaranteed`: every container has cpu and memory limits, and the summed requests equal the
//!   summed limits for both;
//! - `Burstable`: anything else.
//!
//! Only cpu and memory count; zero quantities count as unset.

use k8s_types::core::Pod;
use k8s_types::Quantity;

/// `Guaranteed`.
pub const GUARANTEED: &str = "Guaranteed";
/// `Burstable`.
pub const BURSTABLE: &str = "Burstable";
/// `BestEffort`.
pub const BEST_EFFORT: &str = "BestEffort";

const QOS_RESOURCES: [&str; 2] = ["cpu", "memory"];

/// Upstream `ComputePodQOS`.
pub fn compute_pod_qos(pod: &Pod) -> &'static str {
    // Per entry of QOS_RESOURCES: the summed request and limit, when some container sets one
    // above zero (upstream's `requests` and `limits` lists).
    let mut requests: [Option<Quantity>; QOS_RESOURCES.len()] = Default::default();
    let mut limits: [Option<Quantity>; QOS_RESOURCES.len()] = Default::default();
    let mut guaranteed = true;
    for c in pod.spec.containers.iter().chain(&pod.spec.init_containers) {
        for (name, q) in &c.resources.requests {
            if let Some(i) = QOS_RESOURCES.iter().position(|r| *r == name.as_str()) {
                if q.nano_value() > 0 {
                    requests[i].get_or_insert_with(Quantity::zero).add(q);
                }
            }
        }
        let mut found = 0;
        for (name, q) in &c.resources.limits {
            if let Some(i) = QOS_RESOURCES.iter().position(|r| *r == name.as_str()) {
                if q.nano_value() > 0 {
                    found += 1;
                    limits[i].get_or_insert_with(Quantity::zero).add(q);
                }
            }
        }
        if found < QOS_RESOURCES.len() {
            guaranteed = false;
        }
    }
    let set = |list: &[Option<Quantity>]| list.iter().filter(|q| q.is_some()).count();
    if set(&requests) == 0 && set(&limits) == 0 {
        return BEST_EFFORT;
    }
    if guaranteed {
        guaranteed = requests.iter().zip(&limits).all(|(req, lim)| match req {
            Some(req) => lim.as_ref() == Some(req),
            None => true,
        });
    }
    if guaranteed && set(&requests) == set(&limits) {
        GUARANTEED
    } else {
        BURSTABLE
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_types::core::Container;

    fn container(req: &[(&str, &str)], lim: &[(&str, &str)]) -> Container {
        let mut c = Container::default();
        for (k, v) in req {
            c.resources
                .requests
                .insert(k.to_string(), Quantity::parse(v).unwrap());
        }
        for (k, v) in lim {
            c.resources
                .limits
                .insert(k.to_string(), Quantity::parse(v).unwrap());
        }
        c
    }

    fn pod(cs: Vec<Container>) -> Pod {
        let mut p = Pod::default();
        p.spec.containers = cs.into();
        p
    }

    #[test]
    fn classes_follow_upstream_qos_test_cases() {
        // Upstream qos_test.go TestComputePodQOS: no resources -> BestEffort; equal cpu+memory
        // requests and limits -> Guaranteed; only requests, or a missing memory limit -> Burstable.
        assert_eq!(
            compute_pod_qos(&pod(vec![container(&[], &[])])),
            BEST_EFFORT
        );
        let g = container(
            &[("cpu", "100m"), ("memory", "100Mi")],
            &[("cpu", "100m"), ("memory", "100Mi")],
        );
        assert_eq!(
            compute_pod_qos(&pod(vec![g.clone(), g.clone()])),
            GUARANTEED
        );
        assert_eq!(
            compute_pod_qos(&pod(vec![
                g,
                container(&[("cpu", "100m")], &[("cpu", "100m")])
            ])),
            BURSTABLE
        );
        assert_eq!(
            compute_pod_qos(&pod(vec![container(&[("cpu", "1")], &[])])),
            BURSTABLE
        );
        // Limits without requests (before defaulting copies them): no request equals its limit
        // in count, so Burstable; a request below its limit, Burstable; zero counts as unset.
        let limits_only = container(&[], &[("cpu", "100m"), ("memory", "100Mi")]);
        assert_eq!(compute_pod_qos(&pod(vec![limits_only])), BURSTABLE);
        let below = container(
            &[("cpu", "100m"), ("memory", "100Mi")],
            &[("cpu", "200m"), ("memory", "100Mi")],
        );
        assert_eq!(compute_pod_qos(&pod(vec![below])), BURSTABLE);
        assert_eq!(
            compute_pod_qos(&pod(vec![container(&[("cpu", "0")], &[("memory", "0")])])),
            BEST_EFFORT
        );
        // Extended resources do not count.
        assert_eq!(
            compute_pod_qos(&pod(vec![container(
                &[("nvidia.com/gpu", "1")],
                &[("nvidia.com/gpu", "1")]
            )])),
            BEST_EFFORT
        );
    }
}
