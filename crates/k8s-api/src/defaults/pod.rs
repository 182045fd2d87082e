//! Pod defaults (upstream `pkg/apis/core/v1/defaults.go` `SetDefaults_Pod`): the PodSpec defaults,
//! plus, for Pods only (not templates), every resource with a limit but no request gets the limit
//! as its request, and with `hostNetwork: true` a port without `hostPort` gets `hostPort =
//! containerPort`.

use k8s_types::core::{Container, Pod};
use k8s_types::cow_arc::CowArc;

use super::pod_spec::set_defaults_pod_spec;

fn requests_from_limits(containers: &mut [Container]) {
    for c in containers {
        let r = &mut c.resources;
        // Only a missing request is written: the requests map may be shared with the template's
        // (a write copies it).
        for (name, q) in r.limits.iter() {
            if !r.requests.contains_key(name) {
                r.requests.insert(name.clone(), q.clone());
            }
        }
    }
}

fn host_network_ports(containers: &mut [Container]) {
    for c in containers {
        for p in &mut c.ports {
            if p.host_port.unwrap_or(0) == 0 {
                p.host_port = Some(p.container_port);
            }
        }
    }
}

/// Upstream `SetDefaults_Pod` (and the `SetDefaults_PodSpec` it implies). A container list the pod
/// shares with its template (already defaulted) is kept shared when the defaults change nothing
/// in it ([`CowArc::write_if_changed`]).
pub fn set_defaults_pod(pod: &mut Pod) {
    let host_network = pod.spec.host_network == Some(true);
    let spec = &mut *pod.spec;
    CowArc::write_if_changed(&mut spec.containers, |cs| {
        requests_from_limits(cs);
        if host_network {
            host_network_ports(cs);
        }
    });
    requests_from_limits(&mut spec.init_containers);
    if host_network {
        host_network_ports(&mut spec.init_containers);
    }
    set_defaults_pod_spec(spec);
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_types::Quantity;

    #[test]
    fn limits_default_missing_requests() {
        // Upstream pkg/apis/core/v1/defaults_test.go TestSetDefaultRequestsPod: a limit without a request
        // becomes the request; an explicit request is kept.
        let mut pod = Pod::default();
        let mut c = Container::default();
        c.resources
            .limits
            .insert("cpu".into(), Quantity::parse("2").unwrap());
        c.resources
            .limits
            .insert("nvidia.com/gpu".into(), Quantity::parse("1").unwrap());
        c.resources
            .requests
            .insert("cpu".into(), Quantity::parse("500m").unwrap());
        pod.spec.containers.push(c);
        set_defaults_pod(&mut pod);
        let req = &pod.spec.containers[0].resources.requests;
        assert_eq!(req["cpu"].to_string(), "500m");
        assert_eq!(req["nvidia.com/gpu"].to_string(), "1");
    }

    #[test]
    fn a_defaulted_container_list_stays_shared() {
        let mut template = Pod::default();
        template.spec.containers.push(Container {
            name: "app".into(),
            image: "app:v1".into(),
            ..Default::default()
        });
        set_defaults_pod(&mut template);
        assert_eq!(
            template.spec.containers[0].image_pull_policy.as_deref(),
            Some("IfNotPresent")
        );
        // A pod made from the defaulted template: the defaults change nothing, the list is shared.
        let mut pod = template.clone();
        set_defaults_pod(&mut pod);
        assert!(CowArc::ptr_eq(
            &pod.spec.containers,
            &template.spec.containers
        ));
        // One that needs a default gets its own list; the template's is untouched.
        let mut other = template.clone();
        other.spec.containers.push(Container {
            name: "side".into(),
            image: "side".into(),
            ..Default::default()
        });
        let mut shared = other.clone();
        set_defaults_pod(&mut shared);
        assert!(!CowArc::ptr_eq(
            &shared.spec.containers,
            &other.spec.containers
        ));
        assert_eq!(
            shared.spec.containers[1].image_pull_policy.as_deref(),
            Some("Always")
        );
        assert_eq!(other.spec.containers[1].image_pull_policy, None);
        assert_eq!(template.spec.containers.len(), 1);
    }

    #[test]
    fn covered_limits_leave_a_shared_requests_map_shared() {
        use k8s_types::cow_arc::ResourceMap;
        let requests: ResourceMap = [("cpu".to_string(), Quantity::parse("1").unwrap())].into();
        let mut pod = Pod::default();
        let mut c = Container::default();
        c.resources.requests = requests.clone();
        c.resources.limits = [("cpu".to_string(), Quantity::parse("2").unwrap())].into();
        pod.spec.containers.push(c);
        set_defaults_pod(&mut pod);
        let got = &pod.spec.containers[0].resources.requests;
        assert!(ResourceMap::ptr_eq(got, &requests));
        assert_eq!(got["cpu"].to_string(), "1");
    }
}
