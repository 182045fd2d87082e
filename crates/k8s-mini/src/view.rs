//! `get`, `describe` and `events` over the state a run leaves: the tables of
//! `k8s_cluster::printers` and `k8s_cluster::describe`, selected and printed as kubectl does.

use k8s_cluster::printers::{self, Cell, Table};
use k8s_cluster::RunState;
use k8s_types::apiserver::ApiExt;
use k8s_types::core::Pod;
use k8s_types::Kind;

/// A resource type `get` knows, with kubectl's names for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Resource {
    Pods,
    Nodes,
    Deployments,
    ReplicaSets,
    Jobs,
    Services,
    Events,
}

impl Resource {
    /// kubectl's plural, singular and short names (`pods`, `pod`, `po`), with an optional
    /// `.group` suffix (`deployments.apps`).
    pub fn parse(s: &str) -> Option<Resource> {
        let s = s.to_ascii_lowercase();
        let (name, group) = s.split_once('.').unwrap_or((&s, ""));
        let r = match name {
            "pods" | "pod" | "po" => Resource::Pods,
            "nodes" | "node" | "no" => Resource::Nodes,
            "deployments" | "deployment" | "deploy" => Resource::Deployments,
            "replicasets" | "replicaset" | "rs" => Resource::ReplicaSets,
            "jobs" | "job" => Resource::Jobs,
            "services" | "service" | "svc" => Resource::Services,
            "events" | "event" | "ev" => Resource::Events,
            _ => return None,
        };
        (group.is_empty() || group == r.group()).then_some(r)
    }

    /// The names `get` accepts, for messages.
    pub const KNOWN: &'static str =
        "pods (po), nodes (no), deployments (deploy), replicasets (rs), jobs, services (svc), events (ev)";

    fn plural(self) -> &'static str {
        match self {
            Resource::Pods => "pods",
            Resource::Nodes => "nodes",
            Resource::Deployments => "deployments",
            Resource::ReplicaSets => "replicasets",
            Resource::Jobs => "jobs",
            Resource::Services => "services",
            Resource::Events => "events",
        }
    }

    fn singular(self) -> &'static str {
        self.plural().trim_end_matches('s')
    }

    fn group(self) -> &'static str {
        match self {
            Resource::Deployments | Resource::ReplicaSets => "apps",
            Resource::Jobs => "batch",
            _ => "",
        }
    }

    fn kind(self) -> Kind {
        match self {
            Resource::Pods => Kind::Pod,
            Resource::Nodes => Kind::Node,
            Resource::Deployments => Kind::Deployment,
            Resource::ReplicaSets => Kind::ReplicaSet,
            Resource::Jobs => Kind::Job,
            Resource::Services => Kind::Service,
            Resource::Events => Kind::Event,
        }
    }

    fn namespaced(self) -> bool {
        self != Resource::Nodes
    }

    /// `-o name`'s prefix: `pod`, `deployment.apps`, `job.batch`.
    fn name_prefix(self) -> String {
        match self.group() {
            "" => self.singular().to_string(),
            g => format!("{}.{g}", self.singular()),
        }
    }
}

/// `-o` for `get`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum GetOutput {
    Wide,
    Name,
    Json,
    Yaml,
}

/// Which namespace to look in: `-n NAMESPACE` (default `default`) or `-A`.
pub struct Scope {
    pub namespace: String,
    pub all: bool,
}

impl Scope {
    fn for_resource(&self, r: Resource) -> Option<&str> {
        (r.namespaced() && !self.all).then_some(self.namespace.as_str())
    }
}

/// What a view prints: standard output, standard error, the exit code.
pub struct Printed {
    pub stdout: String,
    pub stderr: String,
    pub code: u8,
}

/// kubectl's NotFound message (`Error from server (NotFound): pods "x" not found`).
fn not_found(r: Resource, name: &str) -> String {
    format!(
        "Error from server (NotFound): {} \"{name}\" not found\n",
        r.plural()
    )
}

/// kubectl's message when nothing matched (on standard error).
fn no_resources(r: Resource, scope: &Scope) -> String {
    match scope.for_resource(r) {
        Some(ns) => format!("No resources found in {ns} namespace.\n"),
        None => "No resources found\n".to_string(),
    }
}

fn table(state: &RunState, r: Resource, scope: &Scope) -> Table {
    printers::list(
        state.cluster.api_ref(),
        &r.kind(),
        scope.for_resource(r),
        state.now,
    )
}

/// `kubectl get <resource> [NAME...]`: the table (`-o wide` adds the priority-1 columns, `-A` the
/// NAMESPACE column), `-o name` (`pod/web-0`), or the objects as JSON/YAML (one object when one name
/// is given, else a `v1` List). Named objects are printed in the order named; a name that does not
/// exist is reported as kubectl does and makes the exit code 1.
pub fn get(
    state: &RunState,
    r: Resource,
    names: &[String],
    scope: &Scope,
    output: Option<GetOutput>,
) -> Printed {
    let mut stderr = String::new();
    let mut t = table(state, r, scope);
    let mut missing = false;
    if !names.is_empty() {
        let mut rows = Vec::new();
        for n in names {
            let found: Vec<_> = t
                .rows
                .iter()
                .filter(|row| &row.name == n)
                .cloned()
                .collect();
            if found.is_empty() {
                stderr.push_str(&not_found(r, n));
                missing = true;
            }
            rows.extend(found);
        }
        t.rows = rows;
    }
    let code = u8::from(missing);
    if t.rows.is_empty() && names.is_empty() {
        stderr.push_str(&no_resources(r, scope));
    }
    let stdout = match output {
        None | Some(GetOutput::Wide) => {
            t.render(output == Some(GetOutput::Wide), scope.all && r.namespaced())
        }
        Some(GetOutput::Name) => t
            .rows
            .iter()
            .map(|row| format!("{}/{}\n", r.name_prefix(), row.name))
            .collect(),
        Some(format @ (GetOutput::Json | GetOutput::Yaml)) => {
            let api = state.cluster.api_ref();
            let items: Vec<serde_json::Value> = t
                .rows
                .iter()
                .filter_map(|row| api.get(&r.kind(), &row.namespace, &row.name).ok())
                .map(|o| o.to_json())
                .collect();
            let value = if names.len() == 1 && items.len() == 1 {
                items.into_iter().next().unwrap_or_default()
            } else if t.rows.is_empty() && !names.is_empty() {
                return Printed {
                    stdout: String::new(),
                    stderr,
                    code,
                };
            } else {
                serde_json::json!({
                    "apiVersion": "v1",
                    "items": items,
                    "kind": "List",
                    "metadata": {"resourceVersion": ""},
                })
            };
            if format == GetOutput::Json {
                serde_json::to_string_pretty(&value).unwrap_or_default() + "\n"
            } else {
                serde_yaml::to_string(&value).unwrap_or_default()
            }
        }
    };
    Printed {
        stdout,
        stderr,
        code,
    }
}

/// The resource types `describe` knows, for messages.
pub const DESCRIBABLE: &str = "pods (po), nodes (no), deployments (deploy), replicasets (rs), jobs";

/// `kubectl describe <resource> [NAME]`: every object of the type in scope without a name; with
/// one, the object of that name, else (as kubectl's `DescribeMatchingResources`) every object whose
/// name starts with it; descriptions separated by a blank line. `None` for a type `describe` does
/// not know ([`DESCRIBABLE`]).
pub fn describe(
    state: &RunState,
    r: Resource,
    name: Option<&str>,
    scope: &Scope,
) -> Option<Printed> {
    use k8s_cluster::describe as d;
    use k8s_types::apps::{Deployment, ReplicaSet};
    use k8s_types::batch::Job;
    use k8s_types::core::{Node, Service};
    let api = state.cluster.api_ref();
    let ns = scope.for_resource(r);
    let now = state.now;
    let texts: Vec<String> = match r {
        Resource::Pods => choose(api.list_typed::<Pod>(ns, None), name, |p| &p.metadata.name)
            .iter()
            .map(|p| d::describe_pod(p, d::pod_events(api, p), now))
            .collect(),
        Resource::Nodes => choose(api.list_typed::<Node>(None, None), name, |n| {
            &n.metadata.name
        })
        .iter()
        .map(|n| {
            let pods = d::node::node_pods(api, &n.metadata.name);
            let lease = d::node::node_lease(api, &n.metadata.name);
            d::describe_node(n, &pods, lease.as_ref(), d::node::node_events(api, n), now)
        })
        .collect(),
        Resource::Deployments => choose(api.list_typed::<Deployment>(ns, None), name, |x| {
            &x.metadata.name
        })
        .iter()
        .map(|x| {
            let (old, new) = d::deployment::deployment_replica_sets(api, x);
            let events = d::deployment::deployment_events(api, x);
            d::describe_deployment(x, &old, new.as_ref(), events, now)
        })
        .collect(),
        Resource::ReplicaSets => choose(api.list_typed::<ReplicaSet>(ns, None), name, |x| {
            &x.metadata.name
        })
        .iter()
        .map(|x| {
            let phases = d::replicaset::pod_phases_for_controller(
                api,
                x.metadata.namespace(),
                x.spec.selector.as_ref(),
                x.metadata.uid.as_deref().unwrap_or(""),
            );
            let events = d::replicaset::replica_set_events(api, x);
            d::describe_replica_set(x, phases, events, now)
        })
        .collect(),
        Resource::Jobs => choose(api.list_typed::<Job>(ns, None), name, |x| &x.metadata.name)
            .iter()
            .map(|x| d::describe_job(x, d::job::job_events(api, x), now))
            .collect(),
        Resource::Services => choose(api.list_typed::<Service>(ns, None), name, |x| {
            &x.metadata.name
        })
        .iter()
        .map(|x| {
            let slices = d::service::service_endpoint_slices(api, x);
            d::describe_service(x, &slices, d::service::service_events(api, x), now)
        })
        .collect(),
        Resource::Events => return None,
    };
    if texts.is_empty() {
        let stderr = match name {
            Some(n) => not_found(r, n),
            None => no_resources(r, scope),
        };
        return Some(Printed {
            stdout: String::new(),
            stderr,
            code: u8::from(name.is_some()),
        });
    }
    Some(Printed {
        stdout: texts.join("\n\n"),
        stderr: String::new(),
        code: 0,
    })
}

/// The objects `describe` shows: all without a name; the one named; else those whose name starts
/// with it.
fn choose<T>(all: Vec<T>, name: Option<&str>, name_of: impl Fn(&T) -> &String) -> Vec<T> {
    let Some(n) = name else {
        return all;
    };
    if all.iter().any(|x| name_of(x) == n) {
        return all.into_iter().filter(|x| name_of(x) == n).collect();
    }
    all.into_iter()
        .filter(|x| name_of(x).starts_with(n))
        .collect()
}

/// The kubelet's start-up Events of a node (upstream kubelet `Starting`, `NodeHasSufficient*`,
/// `NodeHasNoDiskPressure`, `NodeAllocatableEnforced`, `NodeReady`, and the node controller's
/// `RegisteredNode`): one set per node at its registration.
const NODE_STARTUP_REASONS: [&str; 8] = [
    "Starting",
    "NodeHasSufficientMemory",
    "NodeHasNoDiskPressure",
    "NodeHasSufficientPID",
    "NodeAllocatableEnforced",
    "NodeReady",
    "RegisteredNode",
    "NodeHasSufficientDisk",
];

/// `kubectl events`: LAST SEEN with repeats folded (`40s (x3 over 2m)`), TYPE, REASON, OBJECT,
/// MESSAGE, sorted by last timestamp; NAMESPACE first with `-A`. Unless `all_node_events`, the
/// start-up Events of the nodes ([`NODE_STARTUP_REASONS`] on a Node) are folded into one line on
/// standard error: with hundreds of nodes they bury what the scenario does.
pub fn events(state: &RunState, scope: &Scope, all_node_events: bool) -> Printed {
    let api = state.cluster.api_ref();
    let mut t =
        printers::events_kubectl_events(api, scope.for_resource(Resource::Events), state.now);
    let mut stderr = String::new();
    if !all_node_events {
        let before = t.rows.len();
        let nodes: std::collections::BTreeSet<&str> = t
            .rows
            .iter()
            .filter(|r| is_node_startup(r))
            .filter_map(|r| {
                r.cells
                    .get(3)
                    .and_then(Cell::as_text)
                    .and_then(|o| o.strip_prefix("Node/"))
            })
            .collect();
        let folded_nodes = nodes.len();
        let mut reasons: Vec<String> = Vec::new();
        for r in t.rows.iter().filter(|r| is_node_startup(r)) {
            if let Some(reason) = r
                .cells
                .get(2)
                .and_then(Cell::as_text)
                .filter(|x| !reasons.iter().any(|y| y == x))
            {
                reasons.push(reason.to_string());
            }
        }
        t.rows.retain(|r| !is_node_startup(r));
        let folded = before - t.rows.len();
        if folded > 0 {
            stderr.push_str(&format!(
                "# {folded} node start-up events of {folded_nodes} node(s) not shown ({}); --all-node-events lists them\n",
                reasons.join(", ")
            ));
        }
    }
    if t.rows.is_empty() {
        stderr.push_str(&no_resources(Resource::Events, scope));
    }
    Printed {
        stdout: t.render(false, scope.all),
        stderr,
        code: 0,
    }
}

fn is_node_startup(r: &printers::Row) -> bool {
    r.cells
        .get(3)
        .and_then(Cell::as_text)
        .is_some_and(|o| o.starts_with("Node/"))
        && r.cells
            .get(2)
            .and_then(Cell::as_text)
            .is_some_and(|reason| NODE_STARTUP_REASONS.contains(&reason))
}
