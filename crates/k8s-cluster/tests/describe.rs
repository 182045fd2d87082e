//! `kubectl describe node`, `deployment` and `replicaset` (upstream `kubectl/pkg/describe/
//! describe.go` v1.32) on objects built by hand, every number worked out in the comments. The
//! layout (tabwriter, minimum width 0, padding 2) is the one `crates/k8s-mini/tests/
//! serve_kubectl.rs` checks against the real kubectl.

use k8s_cluster::describe::{describe_deployment, describe_node, describe_replica_set};
use k8s_types::apps::{Deployment, ReplicaSet};
use k8s_types::coordination::Lease;
use k8s_types::core::{Event, Node, Pod};

fn parse<T: serde::de::DeserializeOwned>(yaml: &str) -> T {
    serde_yaml::from_str(yaml).expect("test object parses")
}

/// A GPU node: allocatable 7500m CPU, 30Gi memory, 4 GPUs; two taints, a worker role.
const NODE: &str = r#"
metadata:
  name: gpu-a
  uid: 0b5c-node
  creationTimestamp: "1970-01-01T00:00:00Z"
  labels: {kubernetes.io/hostname: gpu-a, node-role.kubernetes.io/worker: "", nvidia.com/gpu.product: A100}
spec:
  podCIDR: 10.244.1.0/24
  podCIDRs: [10.244.1.0/24]
  taints:
  - {key: nvidia.com/gpu, value: "true", effect: NoSchedule}
  - {key: dedicated, effect: NoExecute}
status:
  capacity: {cpu: "8", memory: 32Gi, nvidia.com/gpu: "4", pods: "110"}
  allocatable: {cpu: 7500m, memory: 30Gi, nvidia.com/gpu: "4", pods: "110"}
  conditions:
  - {type: Ready, status: "True", reason: KubeletReady, message: kubelet is posting ready status,
     lastHeartbeatTime: "1970-01-01T00:02:30Z", lastTransitionTime: "1970-01-01T00:01:40Z"}
  addresses:
  - {type: InternalIP, address: 10.0.0.1}
  - {type: Hostname, address: gpu-a}
  nodeInfo: {architecture: amd64, operatingSystem: linux, kubeletVersion: v1.32.0}
"#;

/// Requests: max(containers 2 CPU, init container 3 CPU) = 3 CPU, 8Gi, 2 GPUs; limits 4 CPU, 8Gi,
/// 2 GPUs. Created at t=40.
const TRAIN: &str = r#"
metadata: {name: train, namespace: default, creationTimestamp: "1970-01-01T00:00:40Z"}
spec:
  nodeName: gpu-a
  initContainers:
  - {name: fetch, image: busybox, resources: {requests: {cpu: "3"}}}
  containers:
  - name: trainer
    image: pytorch
    resources:
      requests: {cpu: "2", memory: 8Gi, nvidia.com/gpu: "2"}
      limits: {cpu: "4", memory: 8Gi, nvidia.com/gpu: "2"}
status: {phase: Running}
"#;

/// Requests: container 100m + sidecar (init container with restartPolicy Always) 50m = 150m CPU,
/// 128Mi + 64Mi = 192Mi; no limits. Created at t=0.
const AGENT: &str = r#"
metadata: {name: agent, namespace: kube-system, creationTimestamp: "1970-01-01T00:00:00Z"}
spec:
  nodeName: gpu-a
  initContainers:
  - {name: proxy, image: envoy, restartPolicy: Always, resources: {requests: {cpu: 50m, memory: 64Mi}}}
  containers:
  - {name: agent, image: agent, resources: {requests: {cpu: 100m, memory: 128Mi}}}
status: {phase: Running}
"#;

/// The kubelet's NodeReady, three times between t=100 and t=150 (uid: the node's name).
const NODE_READY: &str = r#"
metadata: {name: gpu-a.1, namespace: default}
involvedObject: {kind: Node, name: gpu-a, uid: gpu-a}
reason: NodeReady
message: "Node gpu-a status is now: NodeReady"
source: {component: kubelet}
type: Normal
firstTimestamp: "1970-01-01T00:01:40Z"
lastTimestamp: "1970-01-01T00:02:30Z"
count: 3
"#;

/// At t=160. Percentages are Go's `int64(used / allocatable * 100)`:
/// train: CPU 3000m/7500m = 40 %, limit 4000m/7500m = 53.3 -> 53 %, memory 8Gi/30Gi = 26.7 -> 26 %;
/// agent: 150m/7500m = 2 %, 192Mi/30720Mi = 0.6 -> 0 %, no limits (`0 (0%)`).
/// Totals: 3 + 150m = 3150m CPU (42 %), 8Gi + 192Mi = 8384Mi (27.3 -> 27 %), limits 4 (53 %) and
/// 8Gi (26 %); no ephemeral storage allocatable (0 %); GPUs 2 / 2 without percentages.
/// Taints sort by `effect,key`: NoExecute before NoSchedule. Ages: train 120 s (`2m`), agent
/// 160 s (`2m40s`); the Event last seen 10 s ago, first 60 s ago.
const EXPECTED_NODE: &str = "\
Name:               gpu-a
Roles:              worker
Labels:             kubernetes.io/hostname=gpu-a
                    node-role.kubernetes.io/worker=
                    nvidia.com/gpu.product=A100
Annotations:        <none>
CreationTimestamp:  Thu, 01 Jan 1970 00:00:00 +0000
Taints:             dedicated:NoExecute
                    nvidia.com/gpu=true:NoSchedule
Unschedulable:      false
Lease:
  HolderIdentity:  gpu-a
  AcquireTime:     <unset>
  RenewTime:       Thu, 01 Jan 1970 00:02:30 +0000
Conditions:
  Type    Status  LastHeartbeatTime                 LastTransitionTime                Reason         Message
  ----    ------  -----------------                 ------------------                ------         -------
  Ready   True    Thu, 01 Jan 1970 00:02:30 +0000   Thu, 01 Jan 1970 00:01:40 +0000   KubeletReady   kubelet is posting ready status
Addresses:
  InternalIP:  10.0.0.1
  Hostname:    gpu-a
Capacity:
  cpu:             8
  memory:          32Gi
  nvidia.com/gpu:  4
  pods:            110
Allocatable:
  cpu:             7500m
  memory:          30Gi
  nvidia.com/gpu:  4
  pods:            110
System Info:
  Machine ID:                 
  System UUID:                
  Boot ID:                    
  Kernel Version:             
  OS Image:                   
  Operating System:           linux
  Architecture:               amd64
  Container Runtime Version:  
  Kubelet Version:            v1.32.0
  Kube-Proxy Version:         
PodCIDR:                      10.244.1.0/24
PodCIDRs:                     10.244.1.0/24
Non-terminated Pods:          (2 in total)
  Namespace                   Name     CPU Requests  CPU Limits  Memory Requests  Memory Limits  Age
  ---------                   ----     ------------  ----------  ---------------  -------------  ---
  default                     train    3 (40%)       4 (53%)     8Gi (26%)        8Gi (26%)      2m
  kube-system                 agent    150m (2%)     0 (0%)      192Mi (0%)       0 (0%)         2m40s
Allocated resources:
  (Total limits may be over 100 percent, i.e., overcommitted.)
  Resource           Requests      Limits
  --------           --------      ------
  cpu                3150m (42%)   4 (53%)
  memory             8384Mi (27%)  8Gi (26%)
  ephemeral-storage  0 (0%)        0 (0%)
  nvidia.com/gpu     2             2
Events:
  Type    Reason     Age                From     Message
  ----    ------     ----               ----     -------
  Normal  NodeReady  10s (x3 over 60s)  kubelet  Node gpu-a status is now: NodeReady
";

#[test]
fn describe_node_prints_kubectls_sections_with_gpu_allocation() {
    let node: Node = parse(NODE);
    let pods: Vec<Pod> = vec![parse(TRAIN), parse(AGENT)];
    let lease: Lease = parse(
        "metadata: {name: gpu-a, namespace: kube-node-lease}\nspec: {holderIdentity: gpu-a, renewTime: \"1970-01-01T00:02:30.000000Z\"}\n",
    );
    let events: Vec<Event> = vec![parse(NODE_READY)];
    let text = describe_node(&node, &pods, Some(&lease), events, 160);
    assert_eq!(text, EXPECTED_NODE, "\n{text}");
}

/// A Deployment mid-way through nothing: 3 replicas, maxSurge 1 (an int) and maxUnavailable left
/// to its default (25%), a template with an annotation, a port, a fieldRef env var (no value in a
/// template: nothing to resolve it against), an emptyDir volume, a node selector, a toleration.
const DEPLOYMENT: &str = r#"
metadata:
  name: web
  namespace: default
  uid: d-uid
  creationTimestamp: "1970-01-01T00:00:05Z"
  labels: {app: web}
  annotations: {deployment.kubernetes.io/revision: "2"}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 1}}
  template:
    metadata:
      labels: {app: web}
      annotations: {prometheus.io/scrape: "true"}
    spec:
      nodeSelector: {pool: cpu}
      tolerations: [{key: dedicated, operator: Exists, effect: NoSchedule}]
      volumes: [{name: cache, emptyDir: {}}]
      containers:
      - name: app
        image: app:v2
        ports: [{containerPort: 8080}]
        env: [{name: NODE, valueFrom: {fieldRef: {fieldPath: spec.nodeName}}}]
        resources: {requests: {cpu: 250m, memory: 256Mi}}
status:
  replicas: 3
  updatedReplicas: 3
  readyReplicas: 3
  availableReplicas: 3
  conditions:
  - {type: Available, status: "True", reason: MinimumReplicasAvailable}
  - {type: Progressing, status: "True", reason: NewReplicaSetAvailable}
"#;

/// `printReplicaSetsByLabels`: `name (status.replicas/spec.replicas replicas created)`.
const EXPECTED_DEPLOYMENT: &str = "\
Name:                   web
Namespace:              default
CreationTimestamp:      Thu, 01 Jan 1970 00:00:05 +0000
Labels:                 app=web
Annotations:            deployment.kubernetes.io/revision: 2
Selector:               app=web
Replicas:               3 desired | 3 updated | 3 total | 3 available | 0 unavailable
StrategyType:           RollingUpdate
MinReadySeconds:        0
RollingUpdateStrategy:  25% max unavailable, 1 max surge
Pod Template:
  Labels:       app=web
  Annotations:  prometheus.io/scrape: true
  Containers:
   app:
    Image:      app:v2
    Port:       8080/TCP
    Host Port:  0/TCP
    Requests:
      cpu:     250m
      memory:  256Mi
    Environment:
      NODE:   (v1:spec.nodeName)
    Mounts:  <none>
  Volumes:
   cache:
    Type:          EmptyDir (a temporary directory that shares a pod's lifetime)
    Medium:        
    SizeLimit:     <unset>
  Node-Selectors:  pool=cpu
  Tolerations:     dedicated:NoSchedule op=Exists
Conditions:
  Type           Status  Reason
  ----           ------  ------
  Available      True    MinimumReplicasAvailable
  Progressing    True    NewReplicaSetAvailable
OldReplicaSets:  web-1 (0/0 replicas created)
NewReplicaSet:   web-2 (3/3 replicas created)
Events:
  Type    Reason             Age   From                   Message
  ----    ------             ----  ----                   -------
  Normal  ScalingReplicaSet  55s   deployment-controller  Scaled up replica set web-2 from 0 to 3
";

fn replica_set(name: &str, image: &str, spec: i32, status: i32) -> ReplicaSet {
    parse(&format!(
        r#"
metadata:
  name: {name}
  namespace: default
  uid: {name}-uid
  labels: {{app: web, pod-template-hash: "{name}"}}
  ownerReferences: [{{apiVersion: apps/v1, kind: Deployment, name: web, uid: d-uid, controller: true}}]
spec:
  replicas: {spec}
  selector: {{matchLabels: {{app: web, pod-template-hash: "{name}"}}}}
  template:
    metadata: {{labels: {{app: web, pod-template-hash: "{name}"}}}}
    spec: {{containers: [{{name: app, image: {image}}}]}}
status: {{replicas: {status}}}
"#
    ))
}

fn event(kind: &str, name: &str, reason: &str, component: &str, message: &str, at: &str) -> Event {
    parse(&format!(
        r#"
metadata: {{name: {name}.1, namespace: default}}
involvedObject: {{kind: {kind}, name: {name}, namespace: default}}
reason: {reason}
message: "{message}"
source: {{component: {component}}}
type: Normal
firstTimestamp: "{at}"
lastTimestamp: "{at}"
count: 1
"#
    ))
}

#[test]
fn describe_deployment_prints_strategy_template_conditions_and_replica_sets() {
    let d: Deployment = parse(DEPLOYMENT);
    let old = replica_set("web-1", "app:v1", 0, 0);
    let new = replica_set("web-2", "app:v2", 3, 3);
    let events = vec![event(
        "Deployment",
        "web",
        "ScalingReplicaSet",
        "deployment-controller",
        "Scaled up replica set web-2 from 0 to 3",
        "1970-01-01T00:00:05Z",
    )];
    // The event at t=5 seen at t=60: 55s.
    let text = describe_deployment(&d, &[old], Some(&new), events, 60);
    assert_eq!(text, EXPECTED_DEPLOYMENT, "\n{text}");
}

/// `Replicas: status / spec`, the pods by phase as counted by the caller, the controller.
const EXPECTED_REPLICA_SET: &str = "\
Name:           web-2
Namespace:      default
Selector:       app=web,pod-template-hash=web-2
Labels:         app=web
                pod-template-hash=web-2
Annotations:    <none>
Controlled By:  Deployment/web
Replicas:       2 current / 3 desired
Pods Status:    1 Running / 1 Waiting / 0 Succeeded / 0 Failed
Pod Template:
  Labels:  app=web
           pod-template-hash=web-2
  Containers:
   app:
    Image:         app:v2
    Port:          <none>
    Host Port:     <none>
    Environment:   <none>
    Mounts:        <none>
  Volumes:         <none>
  Node-Selectors:  <none>
  Tolerations:     <none>
Events:
  Type    Reason            Age   From                   Message
  ----    ------            ----  ----                   -------
  Normal  SuccessfulCreate  2m    replicaset-controller  Created pod: web-2-abcde
";

#[test]
fn describe_replica_set_prints_replicas_pod_phases_and_template() {
    let rs = replica_set("web-2", "app:v2", 3, 2);
    let phases = k8s_cluster::describe::replicaset::PodPhases {
        running: 1,
        waiting: 1,
        succeeded: 0,
        failed: 0,
    };
    let events = vec![event(
        "ReplicaSet",
        "web-2",
        "SuccessfulCreate",
        "replicaset-controller",
        "Created pod: web-2-abcde",
        "1970-01-01T00:00:10Z",
    )];
    // Created at t=10, seen at t=130: 120 s, `2m`.
    let text = describe_replica_set(&rs, phases, events, 130);
    assert_eq!(text, EXPECTED_REPLICA_SET, "\n{text}");
}

/// Without allocatable the percentages are against capacity; without a Lease the error of getting
/// it is printed (`describeNode`); no conditions, no table; `kubernetes.io/role` names a role too.
#[test]
fn describe_node_without_allocatable_or_lease() {
    let node: Node = parse(
        "metadata: {name: n1, labels: {kubernetes.io/role: master}}\nspec: {unschedulable: true}\nstatus: {capacity: {cpu: \"4\", memory: 4Gi}}\n",
    );
    let pod: Pod = parse(
        "metadata: {name: p, namespace: default}\nspec:\n  nodeName: n1\n  containers: [{name: c, image: i, resources: {requests: {cpu: \"1\", memory: 1Gi}, limits: {cpu: \"6\"}}}]\nstatus: {phase: Running}\n",
    );
    let text = describe_node(&node, &[pod], None, vec![], 10);
    for line in [
        "Roles:              master\n",
        // Go's zero time for an unset creationTimestamp.
        "CreationTimestamp:  Mon, 01 Jan 0001 00:00:00 +0000\n",
        "Unschedulable:      true\n",
        "Lease:              Failed to get lease: leases.coordination.k8s.io \"n1\" not found\nAddresses:\nCapacity:\n",
        // 1 of 4 CPUs is 25 %, the limit 6 of 4 is 150 %; 1Gi of 4Gi 25 %; no creationTimestamp.
        "  default                     p       1 (25%)       6 (150%)    1Gi (25%)        0 (0%)         <unknown>\n",
        "  cpu                1 (25%)    6 (150%)\n",
        // In the tabwriter block of the resource table above: aligned with `ephemeral-storage`.
        "  ephemeral-storage  0 (0%)     0 (0%)\nEvents:              <none>\n",
    ] {
        assert!(text.contains(line), "{line}---\n{text}");
    }
    assert!(!text.contains("Conditions:"), "{text}");
    assert!(!text.contains("Allocatable:"), "{text}");
}

/// `Recreate` has no rolling-update parameters: no RollingUpdateStrategy line; replicas default
/// to 1; no ReplicaSets, no OldReplicaSets/NewReplicaSet lines.
#[test]
fn describe_deployment_recreate_without_replica_sets() {
    let d: Deployment = parse(
        "metadata: {name: db, namespace: default}\nspec:\n  strategy: {type: Recreate}\n  selector: {matchLabels: {app: db}}\n  template: {metadata: {labels: {app: db}}, spec: {containers: [{name: c, image: pg}]}}\n",
    );
    let text = describe_deployment(&d, &[], None, vec![], 0);
    assert!(text.contains("Replicas:           1 desired | 0 updated | 0 total | 0 available | 0 unavailable\nStrategyType:       Recreate\nMinReadySeconds:    0\nPod Template:\n"), "{text}");
    assert!(!text.contains("RollingUpdateStrategy"), "{text}");
    assert!(!text.contains("ReplicaSet"), "{text}");
    // One tabwriter block from Name to Events: aligned at `CreationTimestamp:` plus 2.
    assert!(text.ends_with("Events:            <none>\n"), "{text}");
}

/// Upstream `TestDescribeJob` (kubectl `pkg/describe/describe_test.go`, v1.32): its cases and the
/// lines it wants and does not want, with its alignment.
#[test]
fn describe_job_upstream_cases() {
    let job = |spec: &str, status: &str| -> k8s_types::batch::Job {
        parse(&format!(
            "metadata: {{name: bar, namespace: foo}}\nspec: {spec}\nstatus: {status}\n"
        ))
    };
    let indexed = "{completionMode: Indexed}";
    let cases: [(k8s_types::batch::Job, &[&str], &[&str]); 6] = [
        (
            job("{}", "{}"),
            &[],
            &[
                "Completed Indexes:",
                "Suspend:",
                "Backoff Limit:",
                "TTL Seconds After Finished:",
            ],
        ),
        (job(indexed, "{}"), &["Completed Indexes:  <none>"], &[]),
        (
            job(
                indexed,
                "{completedIndexes: \"0-5,7,9,10,12,13,15,16,18,20,21,23,24,26,27,29,30,32\"}",
            ),
            &["Completed Indexes:  0-5,7,9,10,12,13,15,16,18,20,21,23,24,26,27,29,30,32"],
            &[],
        ),
        (
            job(
                indexed,
                "{completedIndexes: \"0-5,7,9,10,12,13,15,16,18,20,21,23,24,26,27,29,30,32-34,36,37\"}",
            ),
            &["Completed Indexes:  0-5,7,9,10,12,13,15,16,18,20,21,23,24,26,27,29,30,32-34,..."],
            &[],
        ),
        (
            job(
                "{suspend: true, ttlSecondsAfterFinished: 123, backoffLimit: 1}",
                "{}",
            ),
            &[
                "Suspend:                     true",
                "TTL Seconds After Finished:  123",
                "Backoff Limit:               1",
            ],
            &[],
        ),
        (job("{suspend: false}", "{}"), &["Suspend:        false"], &[]),
    ];
    for (j, want, dont) in cases {
        let text = k8s_cluster::describe::describe_job(&j, vec![], 0);
        for w in want {
            assert!(text.contains(w), "{w}\n---\n{text}");
        }
        for d in dont {
            assert!(!text.contains(d), "{d}\n---\n{text}");
        }
    }
}

/// A finished Job as the job controller leaves it: started at t=2, complete at t=95 (Duration
/// `93s`, HumanDuration keeps seconds under 2 minutes), 1 Active (1 Ready) / 3 Succeeded.
#[test]
fn describe_job_prints_times_duration_and_pod_statuses() {
    let j: k8s_types::batch::Job = parse(
        r#"
metadata: {name: pi, namespace: default, uid: j-uid, labels: {app: pi}}
spec:
  parallelism: 2
  completions: 4
  completionMode: NonIndexed
  suspend: false
  backoffLimit: 6
  activeDeadlineSeconds: 600
  selector: {matchLabels: {batch.kubernetes.io/controller-uid: j-uid}}
  template:
    metadata: {labels: {batch.kubernetes.io/controller-uid: j-uid}}
    spec: {restartPolicy: Never, containers: [{name: pi, image: perl, command: [perl, -e, print 1]}]}
status: {startTime: "1970-01-01T00:00:02Z", completionTime: "1970-01-01T00:01:35Z", active: 1, ready: 1, succeeded: 3}
"#,
    );
    let text = k8s_cluster::describe::describe_job(&j, vec![], 100);
    let head = "\
Name:                     pi
Namespace:                default
Selector:                 batch.kubernetes.io/controller-uid=j-uid
Labels:                   app=pi
Annotations:              <none>
Parallelism:              2
Completions:              4
Completion Mode:          NonIndexed
Suspend:                  false
Backoff Limit:            6
Start Time:               Thu, 01 Jan 1970 00:00:02 +0000
Completed At:             Thu, 01 Jan 1970 00:01:35 +0000
Duration:                 93s
Active Deadline Seconds:  600s
Pods Statuses:            1 Active (1 Ready) / 3 Succeeded / 0 Failed
Pod Template:
  Labels:  batch.kubernetes.io/controller-uid=j-uid
  Containers:
   pi:
    Image:      perl
    Port:       <none>
    Host Port:  <none>
    Command:
      perl
      -e
      print 1
";
    assert!(text.starts_with(head), "{text}");
}

/// No CPU allocatable: upstream divides the pod's share by zero without a guard and converts
/// `+Inf` (a request) and `NaN` (no limit, 0/0) with `int64()`, which on amd64 gives
/// -9223372036854775808; the Allocated resources totals are guarded and print 0 %.
#[test]
fn describe_node_percentages_against_zero_allocatable_are_gos() {
    let node: Node = parse("metadata: {name: n0}\nstatus: {capacity: {memory: 1Gi}}\n");
    let pod: Pod = parse(
        "metadata: {name: p, namespace: default}\nspec:\n  nodeName: n0\n  containers: [{name: c, image: i, resources: {requests: {cpu: 500m}}}]\nstatus: {phase: Running}\n",
    );
    let text = describe_node(&node, &[pod], None, vec![], 0);
    assert!(
        text.contains("500m (-9223372036854775808%)  0 (-9223372036854775808%)  0 (0%)"),
        "{text}"
    );
    assert!(
        text.contains("  cpu                500m (0%)  0 (0%)\n"),
        "{text}"
    );
}
