//! DRA's API (`resource.k8s.io/v1`) through manifest loading and the apiserver: the four kinds
//! load, are defaulted (upstream `pkg/apis/resource/v1/defaults.go`) and validated with
//! kube-apiserver's field errors (`pkg/apis/resource/validation/validation.go`,
//! `pkg/apis/core/validation/validation.go` for the pod's side), and a pod's `resourceClaims`,
//! its containers' `resources.claims` are kept (issue 13: they used to be dropped).

use std::io::Write;

use k8s_cluster::{run_file, OutputFormat, RunOptions};

fn run_text(text: &str, output: OutputFormat) -> Result<k8s_cluster::RunOutcome, String> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static N: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!("k8s-mini-dra-api-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("case-{}.yaml", N.fetch_add(1, Ordering::SeqCst)));
    std::fs::File::create(&path)
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let opts = RunOptions {
        ticks: Some(3),
        output,
        ..RunOptions::default()
    };
    run_file(&path, &opts).map_err(|e| e.to_string())
}

const CLASS: &str = r#"apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.nvidia.com}
spec:
  selectors:
  - cel: {expression: 'device.driver == "gpu.nvidia.com"'}
---
"#;

const POD: &str = r#"apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one-gpu}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly: {deviceClassName: gpu.nvidia.com}
---
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  resourceClaims:
  - {name: gpu, resourceClaimTemplateName: one-gpu}
  containers:
  - name: c
    image: i
    resources:
      claims:
      - {name: gpu}
"#;

fn objects(out: &str) -> Vec<serde_json::Value> {
    let list: serde_json::Value = serde_json::from_str(out).expect("json");
    list["items"].as_array().cloned().unwrap_or_default()
}

#[test]
fn a_pods_resource_claims_are_kept_and_claims_are_defaulted() {
    let out = run_text(&format!("{CLASS}{POD}"), OutputFormat::Json).expect("loads");
    let items = objects(&out.stdout);
    let pod = items
        .iter()
        .find(|o| o["kind"] == "Pod")
        .expect("the pod is in the output");
    assert_eq!(
        pod["spec"]["resourceClaims"],
        serde_json::json!([{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}])
    );
    assert_eq!(
        pod["spec"]["containers"][0]["resources"]["claims"],
        serde_json::json!([{"name": "gpu"}])
    );
    let template = items
        .iter()
        .find(|o| o["kind"] == "ResourceClaimTemplate")
        .expect("the template is in the output");
    // SetDefaults_ExactDeviceRequest: allocationMode ExactCount, count 1.
    assert_eq!(
        template["spec"]["spec"]["devices"]["requests"][0]["exactly"],
        serde_json::json!({"deviceClassName": "gpu.nvidia.com", "allocationMode": "ExactCount", "count": 1})
    );
    let class = items.iter().find(|o| o["kind"] == "DeviceClass").unwrap();
    assert_eq!(class["apiVersion"], "resource.k8s.io/v1");
    assert_eq!(class["metadata"]["generation"], 1);
}

#[test]
fn invalid_claims_get_kube_apiservers_field_errors() {
    // allocationMode All with a count.
    let e = run_text(
        "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c}\nspec:\n  devices:\n    requests:\n    - name: all\n      exactly: {deviceClassName: gpu.nvidia.com, allocationMode: All, count: 2}\n",
        OutputFormat::Text,
    )
    .unwrap_err();
    assert!(e.contains(":1: "), "{e}");
    assert!(
        e.contains("spec.devices.requests[0].exactly.count: Invalid value: 2: must not be specified when allocationMode is 'All'"),
        "{e}"
    );
    // Neither exactly nor firstAvailable; a request name that is not a DNS label; an unknown mode.
    let e = run_text(
        "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c}\nspec:\n  devices:\n    requests:\n    - name: GPU\n    - name: b\n      exactly: {deviceClassName: x, allocationMode: Some}\n",
        OutputFormat::Text,
    )
    .unwrap_err();
    assert!(
        e.contains("spec.devices.requests[0]: Required value: exactly one of `exactly` or `firstAvailable` is required"),
        "{e}"
    );
    assert!(
        e.contains(
            "spec.devices.requests[0].name: Invalid value: \"GPU\": a lowercase RFC 1123 label"
        ),
        "{e}"
    );
    assert!(
        e.contains("spec.devices.requests[1].exactly.allocationMode: Unsupported value: \"Some\": supported values: \"All\", \"ExactCount\""),
        "{e}"
    );
    // A CEL selector that does not compile.
    let e = run_text(
        "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: bad}\nspec:\n  selectors:\n  - cel: {expression: 'device.driver =='}\n",
        OutputFormat::Text,
    )
    .unwrap_err();
    assert!(
        e.contains("spec.selectors[0].cel.expression: Invalid value: \"device.driver ==\": compilation failed: "),
        "{e}"
    );
}

#[test]
fn pod_claim_references_are_validated_as_upstream() {
    // A container naming a claim the pod does not have; a pod claim with both sources.
    let e = run_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  resourceClaims:\n  - {name: a, resourceClaimName: x, resourceClaimTemplateName: y}\n  containers:\n  - name: c\n    image: i\n    resources:\n      claims: [{name: gpu}]\n",
        OutputFormat::Text,
    )
    .unwrap_err();
    assert!(
        e.contains("spec.containers[0].resources.claims[0]: Not found: \"gpu\": must be one of the names in pod.spec.resourceClaims: a"),
        "{e}"
    );
    assert!(
        e.contains("spec.resourceClaims[0]: Invalid value: {...}: at most one of `resourceClaimName` or `resourceClaimTemplateName` may be specified"),
        "{e}"
    );
    let e = run_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n    image: i\n    resources:\n      claims: [{name: gpu}]\n",
        OutputFormat::Text,
    )
    .unwrap_err();
    assert!(
        e.contains("must be one of the names in pod.spec.resourceClaims which is empty"),
        "{e}"
    );
}

#[test]
fn a_resource_slice_says_where_its_devices_are() {
    let e = run_text(
        "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\nspec:\n  driver: gpu.nvidia.com\n  pool: {name: n1, resourceSliceCount: 1}\n  devices:\n  - name: gpu-0\n    attributes:\n      index: {int: 0, string: zero}\n",
        OutputFormat::Text,
    )
    .unwrap_err();
    assert!(
        e.contains("spec: Required value: exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required"),
        "{e}"
    );
    assert!(
        e.contains("spec.devices[0].attributes[index]: Invalid value: \"\": exactly one value must be specified"),
        "{e}"
    );
}

/// `firstAvailable` entries are defaulted like `exactly` (`SetDefaults_DeviceSubRequest`) and
/// validated (`validateDeviceSubRequest`: DNS-label names without repeats, class, mode/count);
/// constraints name requests of the claim (`validateRequestNameRef`) and need a fully
/// qualified `matchAttribute` (`validateDeviceConstraint`, `validateFullyQualifiedName`).
#[test]
fn first_available_and_constraints_are_defaulted_and_validated() {
    let ok = "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c}\nspec:\n  devices:\n    requests:\n    - name: gpu\n      firstAvailable:\n      - {name: h100, deviceClassName: gpu.nvidia.com}\n      - {name: a100, deviceClassName: gpu.nvidia.com, count: 2}\n    constraints:\n    - {requests: [gpu/a100], matchAttribute: gpu.nvidia.com/productName}\n";
    let out = run_text(ok, OutputFormat::Json).expect("valid");
    let items = objects(&out.stdout);
    let claim = items.iter().find(|o| o["kind"] == "ResourceClaim").unwrap();
    assert_eq!(
        claim["spec"]["devices"]["requests"][0]["firstAvailable"],
        serde_json::json!([
            {"name": "h100", "deviceClassName": "gpu.nvidia.com", "allocationMode": "ExactCount", "count": 1},
            {"name": "a100", "deviceClassName": "gpu.nvidia.com", "allocationMode": "ExactCount", "count": 2}
        ])
    );
    assert_eq!(
        claim["spec"]["devices"]["constraints"],
        serde_json::json!([{"requests": ["gpu/a100"], "matchAttribute": "gpu.nvidia.com/productName"}])
    );
    let bad = "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c}\nspec:\n  devices:\n    requests:\n    - name: gpu\n      firstAvailable:\n      - {name: h100, deviceClassName: gpu.nvidia.com, allocationMode: All, count: 1}\n      - {name: h100, deviceClassName: ''}\n    constraints:\n    - {requests: [gpu/l4, other, gpu], matchAttribute: productName}\n    - {requests: [gpu, gpu]}\n";
    let e = run_text(bad, OutputFormat::Text).unwrap_err();
    for want in [
        "spec.devices.requests[0].firstAvailable[0].count: Invalid value: 1: must not be specified when allocationMode is 'All'",
        "spec.devices.requests[0].firstAvailable[1].deviceClassName: Required value",
        "spec.devices.requests[0].firstAvailable[1]: Duplicate value: \"h100\"",
        "spec.devices.constraints[0].requests[0]: Invalid value: \"gpu/l4\": must be the name of a request in the claim or the name of a request and a subrequest separated by '/'",
        "spec.devices.constraints[0].requests[1]: Invalid value: \"other\": must be the name of a request",
        "spec.devices.constraints[0].matchAttribute: Invalid value: \"productName\": a fully qualified name must be a domain and a name separated by a slash",
        "spec.devices.constraints[1].requests[1]: Duplicate value: \"gpu\"",
        "spec.devices.constraints[1].matchAttribute: Required value",
    ] {
        assert!(e.contains(want), "missing {want:?} in {e}");
    }
    // `gpu` alone is a valid reference to the whole prioritized request.
    assert!(!e.contains("constraints[0].requests[2]"), "{e}");
}
