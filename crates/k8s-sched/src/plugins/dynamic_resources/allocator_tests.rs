//! Tests of the structured allocator (`allocator.rs`), worked out by hand against upstream
//! `k8s.io/dynamic-resource-allocation/structured` semantics.

use std::collections::BTreeSet;

use k8s_types::core::Node;

use k8s_types::resource::{
    AllocationResult, CelDeviceSelector, Device, DeviceAttribute, DeviceClass, DeviceConstraint,
    DeviceRequest, DeviceSelector, DeviceSubRequest, ExactDeviceRequest, ResourceClaim,
    ResourcePool, ResourceSlice, ResourceSliceSpec,
};

use super::allocator::{Allocator, DeviceId};

fn device(name: &str, product: &str) -> Device {
    let mut d = Device {
        name: name.into(),
        ..Device::default()
    };
    d.attributes
        .insert("productName".into(), DeviceAttribute::string(product));
    d
}

fn slice(node: &str, generation: i64, devices: Vec<Device>) -> ResourceSlice {
    ResourceSlice {
        metadata: k8s_types::meta::ObjectMeta {
            name: format!("{node}-gpu.nvidia.com-{generation}"),
            ..Default::default()
        },
        spec: ResourceSliceSpec {
            driver: "gpu.nvidia.com".into(),
            pool: ResourcePool {
                name: node.into(),
                generation,
                resource_slice_count: 1,
            },
            node_name: Some(node.into()),
            devices,
            ..Default::default()
        },
        ..Default::default()
    }
}

fn class() -> DeviceClass {
    let mut c = DeviceClass::default();
    c.metadata.name = "gpu.nvidia.com".into();
    c.spec.selectors = vec![sel("device.driver == 'gpu.nvidia.com'")];
    c
}

fn sel(e: &str) -> DeviceSelector {
    DeviceSelector {
        cel: Some(CelDeviceSelector {
            expression: e.into(),
        }),
    }
}

fn request(name: &str, mode: &str, count: i64, selectors: &[&str]) -> DeviceRequest {
    DeviceRequest {
        name: name.into(),
        exactly: Some(ExactDeviceRequest {
            device_class_name: "gpu.nvidia.com".into(),
            selectors: selectors.iter().map(|s| sel(s)).collect(),
            allocation_mode: Some(mode.into()),
            count: (mode == "ExactCount").then_some(count),
            ..Default::default()
        }),
        ..Default::default()
    }
}

fn claim(name: &str, requests: Vec<DeviceRequest>) -> ResourceClaim {
    let mut c = ResourceClaim::default();
    c.metadata.name = name.into();
    c.metadata.namespace = Some("default".into());
    c.spec.devices.requests = requests;
    c
}

fn node(name: &str) -> Node {
    let mut n = Node::default();
    n.metadata.name = name.into();
    n
}

fn devices(r: &AllocationResult) -> Vec<String> {
    r.devices
        .results
        .iter()
        .map(|d| format!("{}:{}", d.request, d.device))
        .collect()
}

const H100: &str = "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA H100'";

/// gpu-0 is the node's only H100, gpu-1 an A100. Request `any` (no selector) comes first:
/// taking gpu-0 would leave `h100` nothing, so the search backtracks: any -> gpu-1,
/// h100 -> gpu-0 (worked out by hand, as upstream's allocateOne would).
#[test]
fn the_search_backtracks_so_a_later_request_gets_the_only_device_it_can_use() {
    let slices = vec![slice(
        "n1",
        1,
        vec![
            device("gpu-0", "NVIDIA H100"),
            device("gpu-1", "NVIDIA A100"),
        ],
    )];
    let c = claim(
        "c",
        vec![
            request("any", "ExactCount", 1, &[]),
            request("h100", "ExactCount", 1, &[H100]),
        ],
    );
    let a = Allocator::new(
        vec![class()],
        slices,
        BTreeSet::new(),
        std::slice::from_ref(&c),
    );
    let r = a
        .allocate(&node("n1"), &[c], &BTreeSet::new())
        .unwrap()
        .unwrap();
    assert_eq!(devices(&r[0]), ["any:gpu-1", "h100:gpu-0"]);
    // The node selector pins the node-local devices to n1.
    let sel = r[0].node_selector.as_ref().unwrap();
    assert_eq!(sel.node_selector_terms[0].match_fields[0].values, ["n1"]);
    // Another node has no slice: nothing fits.
    let c2 = claim("c", vec![request("any", "ExactCount", 1, &[])]);
    let a = Allocator::new(
        vec![class()],
        vec![],
        BTreeSet::new(),
        std::slice::from_ref(&c2),
    );
    assert_eq!(a.allocate(&node("n2"), &[c2], &BTreeSet::new()), Ok(None));
}

/// `All` takes every matching device (3 H100s of 4 GPUs), and none when one of them is
/// allocated; admin access takes an allocated device anyway.
#[test]
fn all_mode_needs_every_matching_device_free_and_admin_access_ignores_allocations() {
    let slices = vec![slice(
        "n1",
        1,
        vec![
            device("gpu-0", "NVIDIA H100"),
            device("gpu-1", "NVIDIA A100"),
            device("gpu-2", "NVIDIA H100"),
            device("gpu-3", "NVIDIA H100"),
        ],
    )];
    let c = claim("all", vec![request("h100s", "All", 0, &[H100])]);
    let free = Allocator::new(
        vec![class()],
        slices.clone(),
        BTreeSet::new(),
        std::slice::from_ref(&c),
    );
    let r = free
        .allocate(&node("n1"), std::slice::from_ref(&c), &BTreeSet::new())
        .unwrap()
        .unwrap();
    assert_eq!(
        devices(&r[0]),
        ["h100s:gpu-0", "h100s:gpu-2", "h100s:gpu-3"]
    );
    let taken: BTreeSet<DeviceId> = [("gpu.nvidia.com".into(), "n1".into(), "gpu-2".into())].into();
    let busy = Allocator::new(
        vec![class()],
        slices.clone(),
        taken.clone(),
        std::slice::from_ref(&c),
    );
    assert_eq!(busy.allocate(&node("n1"), &[c], &BTreeSet::new()), Ok(None));
    // In flight counts as taken too.
    let c = claim("one", vec![request("gpu", "ExactCount", 1, &[H100])]);
    let a = Allocator::new(
        vec![class()],
        slices.clone(),
        BTreeSet::new(),
        std::slice::from_ref(&c),
    );
    let r = a.allocate(&node("n1"), &[c], &taken).unwrap().unwrap();
    assert_eq!(devices(&r[0]), ["gpu:gpu-0"]);
    let mut admin = request(
        "debug",
        "ExactCount",
        1,
        &["device.attributes['gpu.nvidia.com'].productName == 'NVIDIA A100'"],
    );
    admin.exactly.as_mut().unwrap().admin_access = Some(true);
    let c = claim("admin", vec![admin]);
    let all_taken: BTreeSet<DeviceId> =
        [("gpu.nvidia.com".into(), "n1".into(), "gpu-1".into())].into();
    let a = Allocator::new(vec![class()], slices, all_taken, std::slice::from_ref(&c));
    let r = a
        .allocate(&node("n1"), &[c], &BTreeSet::new())
        .unwrap()
        .unwrap();
    assert_eq!(devices(&r[0]), ["debug:gpu-1"]);
    assert_eq!(r[0].devices.results[0].admin_access, Some(true));
}

/// Only the newest generation of a pool counts; a selector that fails to evaluate is an
/// error naming the claim, the selector and the device, as upstream words it.
#[test]
fn old_pool_generations_are_ignored_and_cel_errors_are_reported() {
    let slices = vec![
        slice(
            "n1",
            1,
            vec![
                device("gpu-0", "NVIDIA H100"),
                device("gpu-1", "NVIDIA H100"),
            ],
        ),
        slice("n1", 2, vec![device("gpu-1", "NVIDIA H100")]),
    ];
    let c = claim("two", vec![request("gpus", "ExactCount", 2, &[])]);
    let a = Allocator::new(
        vec![class()],
        slices.clone(),
        BTreeSet::new(),
        std::slice::from_ref(&c),
    );
    assert_eq!(a.allocate(&node("n1"), &[c], &BTreeSet::new()), Ok(None));
    let c = claim(
        "bad",
        vec![request(
            "gpu",
            "ExactCount",
            1,
            &["device.attributes['gpu.nvidia.com'].memory > 1"],
        )],
    );
    let a = Allocator::new(
        vec![class()],
        slices,
        BTreeSet::new(),
        std::slice::from_ref(&c),
    );
    let e = a.allocate(&node("n1"), &[c], &BTreeSet::new()).unwrap_err();
    assert!(
        e.starts_with(
            "claim default/bad: selector #0 on device gpu.nvidia.com/n1/gpu-1: CEL runtime error: "
        ),
        "{e}"
    );
}

fn sub(name: &str, count: i64, selectors: &[&str]) -> DeviceSubRequest {
    DeviceSubRequest {
        name: name.into(),
        device_class_name: "gpu.nvidia.com".into(),
        selectors: selectors.iter().map(|s| sel(s)).collect(),
        allocation_mode: Some("ExactCount".into()),
        count: Some(count),
        ..Default::default()
    }
}

fn prioritized(name: &str, subs: Vec<DeviceSubRequest>) -> DeviceRequest {
    DeviceRequest {
        name: name.into(),
        first_available: subs,
        ..Default::default()
    }
}

fn allocate_on(slices: &[ResourceSlice], c: &ResourceClaim, taken: &[&str]) -> Option<Vec<String>> {
    let taken: BTreeSet<DeviceId> = taken
        .iter()
        .map(|d| ("gpu.nvidia.com".into(), "n1".into(), d.to_string()))
        .collect();
    let a = Allocator::new(
        vec![class()],
        slices.to_vec(),
        taken,
        std::slice::from_ref(c),
    );
    a.allocate(&node("n1"), std::slice::from_ref(c), &BTreeSet::new())
        .unwrap()
        .map(|r| devices(&r[0]))
}

const A100: &str = "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA A100'";

/// A node with two H100s (gpu-0, gpu-1) and two A100s (gpu-2, gpu-3). `gpu` prefers 2 H100s,
/// then 2 A100s (KEP-4816's example shape): with both H100s free it takes them (`gpu/h100`);
/// with gpu-1 taken the first alternative cannot be met, so the second is: gpu-2, gpu-3 named
/// `gpu/a100`; with an A100 also taken nothing fits.
#[test]
fn first_available_takes_the_first_sub_request_that_fits_and_names_it() {
    let slices = vec![slice(
        "n1",
        1,
        vec![
            device("gpu-0", "NVIDIA H100"),
            device("gpu-1", "NVIDIA H100"),
            device("gpu-2", "NVIDIA A100"),
            device("gpu-3", "NVIDIA A100"),
        ],
    )];
    let c = claim(
        "c",
        vec![prioritized(
            "gpu",
            vec![sub("h100", 2, &[H100]), sub("a100", 2, &[A100])],
        )],
    );
    assert_eq!(
        allocate_on(&slices, &c, &[]).unwrap(),
        ["gpu/h100:gpu-0", "gpu/h100:gpu-1"]
    );
    assert_eq!(
        allocate_on(&slices, &c, &["gpu-1"]).unwrap(),
        ["gpu/a100:gpu-2", "gpu/a100:gpu-3"]
    );
    assert_eq!(allocate_on(&slices, &c, &["gpu-1", "gpu-3"]), None);
}

/// The alternatives are part of the backtracking search: request `first` could take the only
/// H100 with its first alternative, but then `second` (H100 only) fails, so the search goes
/// back and `first` takes an A100 through its second alternative (hand-worked: upstream's
/// allocateOne moves to the next sub-request when the later requests cannot be satisfied).
#[test]
fn a_later_request_can_push_an_earlier_one_to_its_next_alternative() {
    let slices = vec![slice(
        "n1",
        1,
        vec![
            device("gpu-0", "NVIDIA H100"),
            device("gpu-1", "NVIDIA A100"),
        ],
    )];
    let c = claim(
        "c",
        vec![
            prioritized(
                "first",
                vec![sub("h100", 1, &[H100]), sub("a100", 1, &[A100])],
            ),
            request("second", "ExactCount", 1, &[H100]),
        ],
    );
    assert_eq!(
        allocate_on(&slices, &c, &[]).unwrap(),
        ["first/a100:gpu-1", "second:gpu-0"]
    );
}

fn with_attr(mut d: Device, key: &str, value: &str) -> Device {
    d.attributes
        .insert(key.into(), DeviceAttribute::string(value));
    d
}

/// `matchAttribute: gpu.nvidia.com/parentUUID` over two requests: gpu-0 and gpu-1 are on parent
/// A, gpu-2 and gpu-3 on parent B, listed gpu-0, gpu-2, gpu-1, gpu-3. Without the constraint
/// each request takes the first free device (gpu-0, gpu-2); with it, `b` must share gpu-0's
/// parent, so it takes gpu-1. When gpu-1 is taken, gpu-0 has no partner, so the search
/// backtracks: `a` takes gpu-2 (parent B) and `b` gpu-3.
#[test]
fn match_attribute_keeps_the_devices_of_the_named_requests_on_one_value() {
    let d = |n: &str, parent: &str| with_attr(device(n, "NVIDIA H100"), "parentUUID", parent);
    let slices = vec![slice(
        "n1",
        1,
        vec![
            d("gpu-0", "A"),
            d("gpu-2", "B"),
            d("gpu-1", "A"),
            d("gpu-3", "B"),
        ],
    )];
    let mut c = claim(
        "c",
        vec![
            request("a", "ExactCount", 1, &[]),
            request("b", "ExactCount", 1, &[]),
        ],
    );
    // Slice order: gpu-0, gpu-2, gpu-1, gpu-3; unconstrained, b takes the next free: gpu-2.
    assert_eq!(
        allocate_on(&slices, &c, &[]).unwrap(),
        ["a:gpu-0", "b:gpu-2"]
    );
    c.spec.devices.constraints = vec![DeviceConstraint {
        requests: vec!["a".into(), "b".into()],
        match_attribute: Some("gpu.nvidia.com/parentUUID".into()),
    }];
    assert_eq!(
        allocate_on(&slices, &c, &[]).unwrap(),
        ["a:gpu-0", "b:gpu-1"]
    );
    assert_eq!(
        allocate_on(&slices, &c, &["gpu-1"]).unwrap(),
        ["a:gpu-2", "b:gpu-3"]
    );
    // A constraint that names only `a` does not bind `b`.
    c.spec.devices.constraints[0].requests = vec!["a".into()];
    assert_eq!(
        allocate_on(&slices, &c, &[]).unwrap(),
        ["a:gpu-0", "b:gpu-2"]
    );
    // A device without the attribute never satisfies the constraint (upstream: lookup fails).
    c.spec.devices.constraints[0].match_attribute = Some("gpu.nvidia.com/pcieRoot".into());
    assert_eq!(allocate_on(&slices, &c, &[]), None);
    // Another domain than the driver's is not looked up by its short name.
    c.spec.devices.constraints[0].match_attribute = Some("example.com/parentUUID".into());
    assert_eq!(allocate_on(&slices, &c, &[]), None);
}

/// A constraint naming `gpu/a100` applies only when that alternative is taken: with both H100s
/// free, `gpu/h100` takes gpu-0 and gpu-1 (different parents: allowed); when gpu-1 is taken the
/// A100s must share a parent: gpu-2 (P) and gpu-4 (P), skipping gpu-3 (Q). A constraint over
/// all requests with `All` mode fails when the matching devices disagree.
#[test]
fn constraints_on_sub_requests_and_all_mode() {
    let d = |n: &str, p: &str, parent: &str| with_attr(device(n, p), "parentUUID", parent);
    let slices = vec![slice(
        "n1",
        1,
        vec![
            d("gpu-0", "NVIDIA H100", "X"),
            d("gpu-1", "NVIDIA H100", "Y"),
            d("gpu-2", "NVIDIA A100", "P"),
            d("gpu-3", "NVIDIA A100", "Q"),
            d("gpu-4", "NVIDIA A100", "P"),
        ],
    )];
    let mut c = claim(
        "c",
        vec![prioritized(
            "gpu",
            vec![sub("h100", 2, &[H100]), sub("a100", 2, &[A100])],
        )],
    );
    c.spec.devices.constraints = vec![DeviceConstraint {
        requests: vec!["gpu/a100".into()],
        match_attribute: Some("gpu.nvidia.com/parentUUID".into()),
    }];
    assert_eq!(
        allocate_on(&slices, &c, &[]).unwrap(),
        ["gpu/h100:gpu-0", "gpu/h100:gpu-1"]
    );
    assert_eq!(
        allocate_on(&slices, &c, &["gpu-1"]).unwrap(),
        ["gpu/a100:gpu-2", "gpu/a100:gpu-4"]
    );
    let mut all = claim("all", vec![request("a100s", "All", 0, &[A100])]);
    all.spec.devices.constraints = vec![DeviceConstraint {
        requests: vec![],
        match_attribute: Some("gpu.nvidia.com/productName".into()),
    }];
    assert_eq!(
        allocate_on(&slices, &all, &[]).unwrap(),
        ["a100s:gpu-2", "a100s:gpu-3", "a100s:gpu-4"]
    );
    all.spec.devices.constraints[0].match_attribute = Some("gpu.nvidia.com/parentUUID".into());
    assert_eq!(allocate_on(&slices, &all, &[]), None);
}
