//! Resource arithmetic shared by the scheduler and the kubelet: [`Resources`] (upstream scheduler
//! `framework.Resource`: milli-CPU, bytes, pod count, extended resources as integers) and the pod's
//! effective request (upstream `k8s.io/component-helpers/resource` `PodRequests`: containers, init
//! containers, sidecars, overhead).

use std::collections::BTreeMap;

use crate::core::{resource_names as rn, Container, Pod, ResourceList};

/// Upstream `schedutil.DefaultMilliCPURequest`: CPU assumed for scoring when a container sets none.
pub const DEFAULT_MILLI_CPU_REQUEST: i64 = 100;
/// Upstream `schedutil.DefaultMemoryRequest`: 200 MiB assumed for scoring when a container sets none.
pub const DEFAULT_MEMORY_REQUEST: i64 = 200 * 1024 * 1024;

/// Amounts of resources as integers: CPU in milli-CPU, memory and ephemeral storage in bytes, pods as
/// a count, every other (extended) resource by name as its integer value (e.g. `nvidia.com/gpu` in
/// devices). Mirrors upstream `framework.Resource`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Resources {
    /// Milli-CPU.
    pub milli_cpu: i64,
    /// Bytes.
    pub memory: i64,
    /// Bytes.
    pub ephemeral_storage: i64,
    /// Pod count (upstream `AllowedPodNumber`).
    pub pods: i64,
    /// Extended and other scalar resources by name, in whole units (hugepages in bytes).
    pub scalar: BTreeMap<String, i64>,
}

impl Resources {
    /// Converts a `ResourceList`: `cpu` by milli-value, everything else by value (rounded up).
    #[inline]
    pub fn from_list(list: &ResourceList) -> Resources {
        let mut r = Resources::default();
        for (name, q) in list {
            match name.as_str() {
                rn::CPU => r.milli_cpu = q.milli_value(),
                rn::MEMORY => r.memory = q.value(),
                rn::EPHEMERAL_STORAGE => r.ephemeral_storage = q.value(),
                rn::PODS => r.pods = q.value(),
                _ => {
                    r.scalar.insert(name.clone(), q.value());
                }
            }
        }
        r
    }

    /// The amount of one resource by name (0 when absent).
    pub fn get(&self, name: &str) -> i64 {
        match name {
            rn::CPU => self.milli_cpu,
            rn::MEMORY => self.memory,
            rn::EPHEMERAL_STORAGE => self.ephemeral_storage,
            rn::PODS => self.pods,
            _ => self.scalar.get(name).copied().unwrap_or(0),
        }
    }

    /// Adds `other` into `self` (saturating).
    pub fn add(&mut self, other: &Resources) {
        self.milli_cpu = self.milli_cpu.saturating_add(other.milli_cpu);
        self.memory = self.memory.saturating_add(other.memory);
        self.ephemeral_storage = self
            .ephemeral_storage
            .saturating_add(other.ephemeral_storage);
        self.pods = self.pods.saturating_add(other.pods);
        for (k, v) in &other.scalar {
            let e = self.scalar.entry(k.clone()).or_insert(0);
            *e = e.saturating_add(*v);
        }
    }

    /// Subtracts `other` from `self` (saturating); scalars that reach 0 are removed.
    pub fn sub(&mut self, other: &Resources) {
        self.milli_cpu = self.milli_cpu.saturating_sub(other.milli_cpu);
        self.memory = self.memory.saturating_sub(other.memory);
        self.ephemeral_storage = self
            .ephemeral_storage
            .saturating_sub(other.ephemeral_storage);
        self.pods = self.pods.saturating_sub(other.pods);
        for (k, v) in &other.scalar {
            let e = self.scalar.entry(k.clone()).or_insert(0);
            *e = e.saturating_sub(*v);
            if *e == 0 {
                self.scalar.remove(k);
            }
        }
    }

    /// Element-wise maximum (upstream `SetMaxResource`).
    pub fn set_max(&mut self, other: &Resources) {
        self.milli_cpu = self.milli_cpu.max(other.milli_cpu);
        self.memory = self.memory.max(other.memory);
        self.ephemeral_storage = self.ephemeral_storage.max(other.ephemeral_storage);
        self.pods = self.pods.max(other.pods);
        for (k, v) in &other.scalar {
            let e = self.scalar.entry(k.clone()).or_insert(0);
            *e = (*e).max(*v);
        }
    }

    /// True when every amount is zero.
    pub fn is_zero(&self) -> bool {
        self.milli_cpu == 0
            && self.memory == 0
            && self.ephemeral_storage == 0
            && self.pods == 0
            && self.scalar.values().all(|v| *v == 0)
    }
}

fn container_requests(c: &Container) -> Resources {
    Resources::from_list(&c.resources.requests)
}

/// The pod's effective request, as upstream `resource.PodRequests` (without in-place resize):
/// `max(sum(containers) + sum(sidecars), max over init containers of (init + sidecars started before
/// it)) + overhead`. Only `requests` count: the apiserver's defaulting copies limits into missing
/// requests beforehand. `pods` is not included (the scheduler adds 1 per pod itself).
pub fn pod_requests(pod: &Pod) -> Resources {
    aggregate(pod, container_requests)
}

/// The pod's request for scoring: like [`pod_requests`] but each regular container without a CPU or
/// memory request counts [`DEFAULT_MILLI_CPU_REQUEST`] / [`DEFAULT_MEMORY_REQUEST`] (upstream
/// `schedutil.GetNonzeroRequests`, used by NodeResourcesFit and BalancedAllocation scoring).
pub fn pod_non_zero_requests(pod: &Pod) -> Resources {
    aggregate(pod, |c| {
        let mut r = container_requests(c);
        if !c.resources.requests.contains_key(rn::CPU) {
            r.milli_cpu = DEFAULT_MILLI_CPU_REQUEST;
        }
        if !c.resources.requests.contains_key(rn::MEMORY) {
            r.memory = DEFAULT_MEMORY_REQUEST;
        }
        r
    })
}

/// Upstream `PodRequests`' aggregation, with `regular` giving each app container's request (init
/// containers always count their plain requests).
fn aggregate(pod: &Pod, regular: impl Fn(&Container) -> Resources) -> Resources {
    let mut reqs = Resources::default();
    for c in &pod.spec.containers {
        reqs.add(&regular(c));
    }
    let mut restartable = Resources::default();
    let mut init_max = Resources::default();
    for ic in &pod.spec.init_containers {
        let r = container_requests(ic);
        if ic.restart_policy.as_deref() == Some("Always") {
            reqs.add(&r);
            restartable.add(&r);
            init_max.set_max(&restartable);
        } else {
            let mut tmp = r;
            tmp.add(&restartable);
            init_max.set_max(&tmp);
        }
    }
    reqs.set_max(&init_max);
    reqs.add(&Resources::from_list(&pod.spec.overhead));
    reqs
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::{Container, ResourceRequirements};
    use crate::Quantity;

    fn container(cpu: &str, mem: &str, sidecar: bool) -> Container {
        let mut requests = ResourceList::new();
        requests.insert("cpu".into(), Quantity::parse(cpu).unwrap());
        requests.insert("memory".into(), Quantity::parse(mem).unwrap());
        Container {
            resources: ResourceRequirements {
                requests: requests.into(),
                limits: Default::default(),
                claims: Vec::new(),
            },
            restart_policy: sidecar.then(|| "Always".to_string()),
            ..Default::default()
        }
    }

    #[test]
    fn init_containers_sidecars_and_overhead_follow_upstream() {
        // Upstream PodRequests example: containers 1 CPU + 2 CPU; init 4 CPU; sidecar 500m.
        let mut pod = Pod::default();
        pod.spec.containers =
            vec![container("1", "1Gi", false), container("2", "1Gi", false)].into();
        pod.spec.init_containers = vec![
            container("500m", "100Mi", true),
            container("4", "1Gi", false),
        ];
        pod.spec
            .overhead
            .insert("cpu".into(), Quantity::parse("250m").unwrap());
        let r = pod_requests(&pod);
        // Regular + sidecar: 3500m; init phase: 4000m + 500m sidecar = 4500m; max = 4500m; + 250m.
        assert_eq!(r.milli_cpu, 4750);
        assert_eq!(r.memory, 2 * 1024 * 1024 * 1024 + 100 * 1024 * 1024);
    }

    #[test]
    fn non_zero_requests_default_missing_cpu_and_memory() {
        let mut pod = Pod::default();
        pod.spec.containers = vec![Container::default(), container("1", "1Gi", false)].into();
        let r = pod_non_zero_requests(&pod);
        assert_eq!(r.milli_cpu, 1100);
        assert_eq!(r.memory, 1024 * 1024 * 1024 + DEFAULT_MEMORY_REQUEST);
        assert_eq!(pod_requests(&pod).milli_cpu, 1000);
    }
}
