"""The generated clusters of docs/benchmarks.md ("Whole-cluster benchmarks"), as manifests.

    python3 crates/k8s-cluster/benches/gen_cluster.py NODES PODS PER_DEPLOYMENT [SURGE] > c.yaml
    cargo run --release -p k8s-mini -- scenario c.yaml --output json

Writes the same text as `manifests()` in cluster_perf.rs (without a ResourceQuota): NODES Nodes of
4 cpu / 32Gi / 110 pods in three zones, then Deployments of PER_DEPLOYMENT replicas (the last one
smaller) of pods requesting 100m / 500Mi, maxSurge = maxUnavailable = SURGE (default 25%).
`5000 150000 1000` is the 150,000-pod cluster, `1000 10000 10000` the rolling update's.
"""
import sys
nodes, pods, per = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
surge = sys.argv[4] if len(sys.argv) > 4 else "25%"
out = []
for i in range(nodes):
    out.append(f'---\napiVersion: v1\nkind: Node\nmetadata:\n  name: node-{i:05}\n  labels:\n    kubernetes.io/hostname: node-{i:05}\n    topology.kubernetes.io/zone: zone-{i%3}\nstatus:\n  capacity: {{cpu: "4", memory: 32Gi, pods: "110"}}\n')
d = 0; left = pods
while left > 0:
    r = min(left, per)
    out.append(f'---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app-{d}\nspec:\n  replicas: {r}\n  strategy:\n    type: RollingUpdate\n    rollingUpdate: {{maxSurge: {surge}, maxUnavailable: {surge}}}\n  selector: {{matchLabels: {{app: app-{d}}}}}\n  template:\n    metadata: {{labels: {{app: app-{d}}}}}\n    spec:\n      containers:\n      - name: c\n        image: app:v1\n        resources: {{requests: {{cpu: 100m, memory: 500Mi}}}}\n')
    left -= r; d += 1
sys.stdout.write(''.join(out))
