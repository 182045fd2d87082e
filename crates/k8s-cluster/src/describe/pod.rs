//! `kubectl describe pod`: upstream `staging/src/k8s.io/kubectl/pkg/describe/describe.go` (v1.32,
//! `describePod`, `describeContainers`, `describeStatus`, `DescribeProbe`, `describeVolumes`,
//! `printLabelsMultiline`, `printAnnotationsMultiline`, `printPodTolerationsMultiline`,
//! `describeTopologySpreadConstraints`, `DescribeEvents`): the same fields in the same order with
//! the same labels, written through a prefix writer (two spaces per level) into a `text/tabwriter`
//! (minimum width 0, padding 2) flushed before the Events table, as `tabbedString` does.
//!
//! Times are the run's virtual clock: `Start Time` and container times as `time.RFC1123Z`
//! (`Thu, 01 Jan 1970 00:00:05 +0000`), Event ages as `now` minus the timestamps.
//!
//! What the simulated objects do not carry is printed as upstream prints the empty field:
//! `Container ID:` and `Image ID:` are empty (there is no container runtime), `Mounts:` is `<none>`
//! (volume mounts are not simulated), and the `sim.k8s-mini.io/behavior` annotation is shown as any
//! other annotation (docs/fidelity.md).

use k8s_types::apiserver::{ApiClient, ApiExt};
use k8s_types::apps::PodTemplateSpec;
use k8s_types::core::{
    Container, ContainerState, ContainerStatus, Event, Pod, PodSpec, Probe, Toleration,
    TopologySpreadConstraint,
};
use k8s_types::Tick;

use super::{annotations_multiline, describe_events, labels_multiline, print_bool, PrefixWriter};
use crate::printers::{format_label_selector, rfc1123z, since};

/// `printPodTolerationsMultiline`: sorted by key (stable), `key=value:Effect op=Exists for Ns`.
pub(crate) fn tolerations_multiline(w: &mut PrefixWriter, title: &str, list: &[Toleration]) {
    w.write(0, &format!("{title}:\t"));
    if list.is_empty() {
        w.write(0, "<none>\n");
        return;
    }
    let mut tolerations: Vec<_> = list.iter().collect();
    tolerations.sort_by(|a, b| a.key.cmp(&b.key));
    for (i, t) in tolerations.into_iter().enumerate() {
        if i != 0 {
            w.write(0, "\t");
        }
        let mut s = t.key.clone();
        if !t.value.is_empty() {
            s.push_str(&format!("={}", t.value));
        }
        if !t.effect.is_empty() {
            s.push_str(&format!(":{}", t.effect));
        }
        if t.operator == "Exists" && t.value.is_empty() {
            if t.key.is_empty() && t.effect.is_empty() {
                s.push_str("op=Exists");
            } else {
                s.push_str(" op=Exists");
            }
        }
        if let Some(secs) = t.toleration_seconds {
            s.push_str(&format!(" for {secs}s"));
        }
        w.write(0, &format!("{s}\n"));
    }
}

/// An `IntOrString` port as Go prints it.
fn port(v: Option<&serde_json::Value>) -> String {
    match v {
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(serde_json::Value::Number(n)) => n.to_string(),
        _ => String::new(),
    }
}

/// `DescribeProbe`: the handler, then `delay=0s timeout=1s period=10s #success=1 #failure=3` (the
/// apiserver's defaults when unset).
fn describe_probe(p: &Probe) -> String {
    let attrs = format!(
        "delay={}s timeout={}s period={}s #success={} #failure={}",
        p.initial_delay_seconds.unwrap_or(0),
        p.timeout_seconds.unwrap_or(1),
        p.period_seconds.unwrap_or(10),
        p.success_threshold.unwrap_or(1),
        p.failure_threshold.unwrap_or(3)
    );
    let s = |v: &serde_json::Value, k: &str| {
        v.get(k).and_then(|x| x.as_str()).unwrap_or("").to_string()
    };
    if let Some(e) = &p.exec {
        let cmd: Vec<String> = e
            .get("command")
            .and_then(|c| c.as_array())
            .map(|a| {
                a.iter()
                    .map(|x| x.as_str().unwrap_or("").to_string())
                    .collect()
            })
            .unwrap_or_default();
        return format!("exec [{}] {attrs}", cmd.join(" "));
    }
    if let Some(h) = &p.http_get {
        let scheme = Some(s(h, "scheme").to_lowercase())
            .filter(|x| !x.is_empty())
            .unwrap_or_else(|| "http".into());
        let port = port(h.get("port"));
        let host = if port.is_empty() {
            s(h, "host")
        } else {
            format!("{}:{port}", s(h, "host"))
        };
        let path = s(h, "path");
        let path = if path.is_empty() || path.starts_with('/') {
            path
        } else {
            format!("/{path}")
        };
        return format!("http-get {scheme}://{host}{path} {attrs}");
    }
    if let Some(t) = &p.tcp_socket {
        return format!(
            "tcp-socket {}:{} {attrs}",
            s(t, "host"),
            port(t.get("port"))
        );
    }
    if let Some(g) = &p.grpc {
        return format!(
            "grpc <pod>:{} {} {attrs}",
            port(g.get("port")),
            s(g, "service")
        );
    }
    format!("unknown {attrs}")
}

/// `describeStatus`: one container state (`State` or `Last State`).
fn describe_state(w: &mut PrefixWriter, name: &str, st: &ContainerState) {
    if let Some(r) = &st.running {
        w.write(2, &format!("{name}:\tRunning\n"));
        let started = r.started_at.as_deref().map(rfc1123z).unwrap_or_default();
        w.write(3, &format!("Started:\t{started}\n"));
    } else if let Some(wt) = &st.waiting {
        w.write(2, &format!("{name}:\tWaiting\n"));
        if let Some(r) = wt.reason.as_deref().filter(|r| !r.is_empty()) {
            w.write(3, &format!("Reason:\t{r}\n"));
        }
    } else if let Some(t) = &st.terminated {
        w.write(2, &format!("{name}:\tTerminated\n"));
        if let Some(r) = t.reason.as_deref().filter(|r| !r.is_empty()) {
            w.write(3, &format!("Reason:\t{r}\n"));
        }
        if let Some(m) = t.message.as_deref().filter(|m| !m.is_empty()) {
            w.write(3, &format!("Message:\t{m}\n"));
        }
        w.write(3, &format!("Exit Code:\t{}\n", t.exit_code.unwrap_or(0)));
        if let Some(sig) = t.signal.filter(|s| *s > 0) {
            w.write(3, &format!("Signal:\t{sig}\n"));
        }
        let time =
            |ts: &Option<k8s_types::CompactString>| ts.as_deref().map(rfc1123z).unwrap_or_default();
        w.write(3, &format!("Started:\t{}\n", time(&t.started_at)));
        w.write(3, &format!("Finished:\t{}\n", time(&t.finished_at)));
    } else {
        w.write(2, &format!("{name}:\tWaiting\n"));
    }
}

/// `describeContainerEnvVars`: literal values; `fieldRef` with the value resolved for the fields a
/// simulated pod has (empty in a template, which has no pod to resolve against: upstream's nil
/// `resolverFn`); secret and config map keys as upstream words them.
fn describe_env(w: &mut PrefixWriter, pod: Option<&Pod>, c: &Container) {
    if c.env.is_empty() {
        w.write(2, "Environment:\t<none>\n");
        return;
    }
    w.write(2, "Environment:\n");
    let s = |v: &serde_json::Value, k: &str| {
        v.get(k).and_then(|x| x.as_str()).unwrap_or("").to_string()
    };
    for e in &c.env {
        let name = s(e, "name");
        let Some(from) = e.get("valueFrom") else {
            for (i, line) in s(e, "value").split('\n').enumerate() {
                if i == 0 {
                    w.write(3, &format!("{name}:\t{line}\n"));
                } else {
                    w.write(3, &format!("\t{line}\n"));
                }
            }
            continue;
        };
        let optional =
            |r: &serde_json::Value| r.get("optional").and_then(|o| o.as_bool()).unwrap_or(false);
        if let Some(f) = from.get("fieldRef") {
            let path = s(f, "fieldPath");
            let value = match (pod, path.as_str()) {
                (Some(pod), "metadata.name") => pod.metadata.name.clone(),
                (Some(pod), "metadata.namespace") => pod.metadata.namespace().to_string(),
                (Some(pod), "spec.nodeName") => pod.node_name().unwrap_or("").to_string(),
                (Some(pod), "status.podIP") => {
                    pod.status.pod_ip.as_deref().unwrap_or_default().to_string()
                }
                (Some(pod), "status.hostIP") => pod
                    .status
                    .host_ip
                    .as_deref()
                    .unwrap_or_default()
                    .to_string(),
                _ => String::new(),
            };
            let api = Some(s(f, "apiVersion"))
                .filter(|a| !a.is_empty())
                .unwrap_or_else(|| "v1".into());
            w.write(3, &format!("{name}:\t{value} ({api}:{path})\n"));
        } else if let Some(r) = from.get("resourceFieldRef") {
            w.write(3, &format!("{name}:\t ({})\n", s(r, "resource")));
        } else if let Some(r) = from.get("secretKeyRef") {
            w.write(
                3,
                &format!(
                    "{name}:\t<set to the key '{}' in secret '{}'>\tOptional: {}\n",
                    s(r, "key"),
                    s(r, "name"),
                    optional(r)
                ),
            );
        } else if let Some(r) = from.get("configMapKeyRef") {
            w.write(
                3,
                &format!(
                    "{name}:\t<set to the key '{}' of config map '{}'>\tOptional: {}\n",
                    s(r, "key"),
                    s(r, "name"),
                    optional(r)
                ),
            );
        }
    }
}

/// `describeContainers`: one section (`Init Containers` or `Containers`); `space` is `""` for a
/// pod and `"  "` in a pod template (`DescribePodTemplate`), where the section title is indented
/// by it and each container name by one more space.
pub(crate) fn describe_containers(
    w: &mut PrefixWriter,
    label: &str,
    space: &str,
    pod: Option<&Pod>,
    containers: &[Container],
    statuses: &[ContainerStatus],
) {
    let none = if containers.is_empty() { " <none>" } else { "" };
    let name_indent = if space.is_empty() { "" } else { " " };
    w.write(0, &format!("{space}{label}:{none}\n"));
    for c in containers {
        let status = statuses.iter().find(|s| s.name == c.name);
        w.write(1, &format!("{name_indent}{}:\n", c.name));
        if status.is_some() {
            w.write(2, "Container ID:\t\n");
        }
        w.write(2, &format!("Image:\t{}\n", c.image));
        if status.is_some() {
            w.write(2, "Image ID:\t\n");
        }
        let protocol =
            |p: &k8s_types::core::ContainerPort| p.protocol.clone().unwrap_or_else(|| "TCP".into());
        let ports: Vec<String> = c
            .ports
            .iter()
            .map(|p| format!("{}/{}", p.container_port, protocol(p)))
            .collect();
        let host_ports: Vec<String> = c
            .ports
            .iter()
            .map(|p| format!("{}/{}", p.host_port.unwrap_or(0), protocol(p)))
            .collect();
        let or_none = |v: &[String]| {
            if v.is_empty() {
                "<none>".to_string()
            } else {
                v.join(", ")
            }
        };
        if ports.len() > 1 {
            w.write(2, &format!("Ports:\t{}\n", ports.join(", ")));
            w.write(2, &format!("Host Ports:\t{}\n", host_ports.join(", ")));
        } else {
            w.write(2, &format!("Port:\t{}\n", or_none(&ports)));
            w.write(2, &format!("Host Port:\t{}\n", or_none(&host_ports)));
        }
        for (title, list) in [("Command", &c.command), ("Args", &c.args)] {
            if !list.is_empty() {
                w.write(2, &format!("{title}:\n"));
                for line in list.iter().flat_map(|a| a.split('\n')) {
                    w.write(3, &format!("{line}\n"));
                }
            }
        }
        if let Some(st) = status {
            describe_state(w, "State", &st.state);
            if st.last_state.terminated.is_some() {
                describe_state(w, "Last State", &st.last_state);
            }
            w.write(2, &format!("Ready:\t{}\n", print_bool(st.ready)));
            w.write(2, &format!("Restart Count:\t{}\n", st.restart_count));
        }
        for (title, list) in [
            ("Limits", &c.resources.limits),
            ("Requests", &c.resources.requests),
        ] {
            if !list.is_empty() {
                w.write(2, &format!("{title}:\n"));
                for (name, q) in list {
                    w.write(3, &format!("{name}:\t{q}\n"));
                }
            }
        }
        for (title, probe) in [
            ("Liveness", &c.liveness_probe),
            ("Readiness", &c.readiness_probe),
            ("Startup", &c.startup_probe),
        ] {
            if let Some(p) = probe {
                w.write(2, &format!("{title}:\t{}\n", describe_probe(p)));
            }
        }
        describe_env(w, pod, c);
        w.write(2, "Mounts:\t<none>\n");
    }
}

/// `describeVolumes`: the sources a simulated pod can name; any other as `<unknown>`. `space` as in
/// [`describe_containers`].
pub(crate) fn describe_volumes(w: &mut PrefixWriter, space: &str, spec: &PodSpec) {
    if spec.volumes.is_empty() {
        w.write(0, &format!("{space}Volumes:\t<none>\n"));
        return;
    }
    let name_indent = if space.is_empty() { "" } else { " " };
    w.write(0, &format!("{space}Volumes:\n"));
    let s = |v: &serde_json::Value, k: &str| {
        v.get(k).and_then(|x| x.as_str()).unwrap_or("").to_string()
    };
    let b = |v: &serde_json::Value, k: &str| v.get(k).and_then(|x| x.as_bool()).unwrap_or(false);
    for v in &spec.volumes {
        w.write(1, &format!("{name_indent}{}:\n", v.name));
        if let Some(c) = &v.persistent_volume_claim {
            w.write(2, &format!("Type:\tPersistentVolumeClaim (a reference to a PersistentVolumeClaim in the same namespace)\n    ClaimName:\t{}\n    ReadOnly:\t{}\n", c.claim_name, c.read_only.unwrap_or(false)));
        } else if let Some(e) = v.other.get("emptyDir") {
            let limit = Some(s(e, "sizeLimit"))
                .filter(|l| !l.is_empty() && l != "0")
                .unwrap_or_else(|| "<unset>".into());
            w.write(2, &format!("Type:\tEmptyDir (a temporary directory that shares a pod's lifetime)\n    Medium:\t{}\n    SizeLimit:\t{limit}\n", s(e, "medium")));
        } else if let Some(c) = v.other.get("configMap") {
            w.write(2, &format!("Type:\tConfigMap (a volume populated by a ConfigMap)\n    Name:\t{}\n    Optional:\t{}\n", s(c, "name"), b(c, "optional")));
        } else if let Some(c) = v.other.get("secret") {
            w.write(2, &format!("Type:\tSecret (a volume populated by a Secret)\n    SecretName:\t{}\n    Optional:\t{}\n", s(c, "secretName"), b(c, "optional")));
        } else if let Some(h) = v.other.get("hostPath") {
            let t = Some(s(h, "type"))
                .filter(|t| !t.is_empty())
                .unwrap_or_else(|| "<none>".into());
            w.write(2, &format!("Type:\tHostPath (bare host directory volume)\n    Path:\t{}\n    HostPathType:\t{t}\n", s(h, "path")));
        } else {
            w.write(1, "<unknown>\n");
        }
    }
}

/// `describeTopologySpreadConstraints`: sorted by topology key (stable); nothing when there are
/// none. `space` as in [`describe_containers`].
pub(crate) fn describe_topology_spread_constraints(
    w: &mut PrefixWriter,
    space: &str,
    list: &[TopologySpreadConstraint],
) {
    if list.is_empty() {
        return;
    }
    let mut tscs: Vec<_> = list.iter().collect();
    tscs.sort_by(|a, b| a.topology_key.cmp(&b.topology_key));
    w.write(0, &format!("{space}Topology Spread Constraints:\t"));
    for (i, t) in tscs.into_iter().enumerate() {
        if i != 0 {
            w.write(0, &format!("{space}\t"));
        }
        let mut s = format!(
            "{}:{} when max skew {} is exceeded",
            t.topology_key, t.when_unsatisfiable, t.max_skew
        );
        if t.label_selector.is_some() {
            s.push_str(&format!(
                " for selector {}",
                format_label_selector(t.label_selector.as_ref())
            ));
        }
        w.write(0, &format!("{s}\n"));
    }
}

/// `DescribePodTemplate`: the template's labels, annotations (when it has any), service account,
/// containers, volumes, topology spread constraints, priority class, node selector and
/// tolerations, indented under `Pod Template:` (shared by the Deployment, ReplicaSet and Job
/// describers).
pub(crate) fn describe_pod_template(w: &mut PrefixWriter, template: &PodTemplateSpec) {
    w.write(0, "Pod Template:\n");
    labels_multiline(w, "  Labels", &template.metadata.labels);
    if !template.metadata.annotations.is_empty() {
        annotations_multiline(w, "  Annotations", &template.metadata.annotations);
    }
    let spec = &template.spec;
    if let Some(sa) = spec
        .service_account_name
        .as_deref()
        .filter(|s| !s.is_empty())
    {
        w.write(1, &format!("Service Account:\t{sa}\n"));
    }
    if !spec.init_containers.is_empty() {
        describe_containers(w, "Init Containers", "  ", None, &spec.init_containers, &[]);
    }
    describe_containers(w, "Containers", "  ", None, &spec.containers, &[]);
    describe_volumes(w, "  ", spec);
    describe_topology_spread_constraints(w, "  ", &spec.topology_spread_constraints);
    if let Some(pc) = spec
        .priority_class_name
        .as_deref()
        .filter(|s| !s.is_empty())
    {
        w.write(1, &format!("Priority Class Name:\t{pc}\n"));
    }
    labels_multiline(w, "  Node-Selectors", &spec.node_selector);
    tolerations_multiline(w, "  Tolerations", &spec.tolerations);
}

/// The Events whose involved object is `pod` (kind Pod, its namespace and name, and its uid when
/// the Event names one), as `searchEvents`' field selector finds them.
pub fn pod_events(api: &dyn ApiClient, pod: &Pod) -> Vec<Event> {
    let uid = pod.metadata.uid.as_deref().unwrap_or("");
    api.list_typed::<Event>(Some(pod.metadata.namespace()), None)
        .into_iter()
        .filter(|e| {
            let o = &e.involved_object;
            o.kind == "Pod"
                && o.name == pod.metadata.name
                && (o.uid.is_empty() || uid.is_empty() || o.uid == uid)
        })
        .collect()
}

/// What `kubectl describe pod` prints for `pod`, with `events` (see [`pod_events`]) and the clock at
/// `now`.
pub fn describe_pod(pod: &Pod, events: Vec<Event>, now: Tick) -> String {
    let mut w = PrefixWriter::new();
    w.write(0, &format!("Name:\t{}\n", pod.metadata.name));
    w.write(0, &format!("Namespace:\t{}\n", pod.metadata.namespace()));
    if let Some(p) = pod.spec.priority {
        w.write(0, &format!("Priority:\t{p}\n"));
    }
    if let Some(pc) = pod
        .spec
        .priority_class_name
        .as_deref()
        .filter(|s| !s.is_empty())
    {
        w.write(0, &format!("Priority Class Name:\t{pc}\n"));
    }
    if let Some(sa) = pod
        .spec
        .service_account_name
        .as_deref()
        .filter(|s| !s.is_empty())
    {
        w.write(0, &format!("Service Account:\t{sa}\n"));
    }
    match pod.node_name().filter(|n| !n.is_empty()) {
        None => w.write(0, "Node:\t<none>\n"),
        Some(n) => w.write(
            0,
            &format!(
                "Node:\t{n}/{}\n",
                pod.status.host_ip.as_deref().unwrap_or("")
            ),
        ),
    }
    if let Some(st) = &pod.status.start_time {
        w.write(0, &format!("Start Time:\t{}\n", rfc1123z(st)));
    }
    labels_multiline(&mut w, "Labels", &pod.metadata.labels);
    annotations_multiline(&mut w, "Annotations", &pod.metadata.annotations);
    let phase = pod.status.phase.as_deref().unwrap_or("");
    match &pod.metadata.deletion_timestamp {
        Some(d) if phase != "Failed" && phase != "Succeeded" => {
            w.write(
                0,
                &format!("Status:\tTerminating (lasts {})\n", since(Some(d), now)),
            );
            w.write(
                0,
                &format!(
                    "Termination Grace Period:\t{}s\n",
                    pod.metadata.deletion_grace_period_seconds.unwrap_or(0)
                ),
            );
        }
        _ => w.write(0, &format!("Status:\t{phase}\n")),
    }
    if let Some(r) = pod.status.reason.as_deref().filter(|s| !s.is_empty()) {
        w.write(0, &format!("Reason:\t{r}\n"));
    }
    if let Some(m) = pod.status.message.as_deref().filter(|s| !s.is_empty()) {
        w.write(0, &format!("Message:\t{m}\n"));
    }
    let ip = pod.status.pod_ip.as_deref().unwrap_or("");
    w.write(0, &format!("IP:\t{ip}\n"));
    if ip.is_empty() {
        w.write(0, "IPs:\t<none>\n");
    } else {
        w.write(0, "IPs:\n");
        w.write(1, &format!("IP:\t{ip}\n"));
    }
    if let Some(c) = pod.metadata.controller_ref() {
        w.write(0, &format!("Controlled By:\t{}/{}\n", c.kind, c.name));
    }
    if let Some(n) = pod
        .status
        .nominated_node_name
        .as_deref()
        .filter(|s| !s.is_empty())
    {
        w.write(0, &format!("NominatedNodeName:\t{n}\n"));
    }
    if !pod.spec.init_containers.is_empty() {
        describe_containers(
            &mut w,
            "Init Containers",
            "",
            Some(pod),
            &pod.spec.init_containers,
            &pod.status.init_container_statuses,
        );
    }
    describe_containers(
        &mut w,
        "Containers",
        "",
        Some(pod),
        &pod.spec.containers,
        &pod.status.container_statuses,
    );
    if !pod.status.conditions.is_empty() {
        w.write(0, "Conditions:\n  Type\tStatus\n");
        for c in &pod.status.conditions {
            w.write(1, &format!("{} \t{} \n", c.type_, c.status));
        }
    }
    describe_volumes(&mut w, "", &pod.spec);
    w.write(
        0,
        &format!(
            "QoS Class:\t{}\n",
            pod.status.qos_class.as_deref().unwrap_or("")
        ),
    );
    labels_multiline(&mut w, "Node-Selectors", &pod.spec.node_selector);
    tolerations_multiline(&mut w, "Tolerations", &pod.spec.tolerations);
    describe_topology_spread_constraints(&mut w, "", &pod.spec.topology_spread_constraints);
    describe_events(&mut w, events, now);
    w.finish()
}
