//! kubectl's writes beyond the basics against `serve`: server dry run, deletecollection,
//! ControllerRevisions (`rollout history` / `undo`), and a CRD's status and scale subresources.

mod common_serve;

use common_serve::{words, Env, WEB};

/// `--dry-run=server` (KEP-576) on create, scale, set image and delete: kubectl prints what the
/// apiserver answered, nothing is stored, the recording holds only the real writes; a `dryRun`
/// value other than `All` gets upstream's 422.
#[test]
fn server_dry_run_answers_every_verb_and_stores_nothing() {
    let env = Env::new("dryrun", true);
    env.ok(&["apply", "-f", "web.yaml"]);
    env.server().step(5);
    let rv = env.ok(&[
        "get",
        "deploy",
        "web",
        "-o",
        "jsonpath={.metadata.resourceVersion}",
    ]);
    let state = env.ok(&["get", "--raw", "/k8s-mini/v1/state"]);
    assert_eq!(
        env.ok(&["scale", "deploy", "web", "--replicas=5", "--dry-run=server"]),
        "deployment.apps/web scaled (server dry run)\n"
    );
    // The answer is the object as the write would leave it (`set image` prints it).
    assert_eq!(
        env.ok(&[
            "patch",
            "deploy",
            "web",
            "--subresource=scale",
            "-p",
            r#"{"spec":{"replicas":5}}"#,
            "--dry-run=server",
            "-o",
            "jsonpath={.spec.replicas} {.status.replicas}"
        ]),
        "5 3"
    );
    assert_eq!(
        env.ok(&[
            "set",
            "image",
            "deploy/web",
            "app=app:v2",
            "--dry-run=server",
            "-o",
            "jsonpath={.spec.template.spec.containers[0].image} {.metadata.resourceVersion}"
        ]),
        format!("app:v2 {rv}")
    );
    assert_eq!(
        env.ok(&["delete", "deploy", "web", "--dry-run=server"]),
        "deployment.apps \"web\" deleted (server dry run)\n"
    );
    std::fs::write(env.dir.join("api.yaml"), WEB.replace("web", "api")).unwrap();
    let dry = env.ok(&[
        "create",
        "-f",
        "api.yaml",
        "--dry-run=server",
        "-o",
        "jsonpath={.metadata.name} {.spec.replicas} [{.metadata.resourceVersion}] {.metadata.uid}",
    ]);
    assert!(dry.starts_with("api 3 [] "), "{dry}");
    // kubectl's typed commands send protobuf, which serve does not decode: upstream's 415.
    let proto = env.run(&["create", "deployment", "api", "--image=api:v1"]);
    assert_eq!(
        String::from_utf8_lossy(&proto.stderr),
        "error: failed to create deployment: the body of the request was in an unknown format - accepted media types include: application/json, application/yaml\n"
    );
    // Invalid and existing objects fail as the real write would.
    let exists = env.run(&["create", "-f", "web.yaml", "--dry-run=server"]);
    assert_eq!(
        String::from_utf8_lossy(&exists.stderr),
        "Error from server (AlreadyExists): error when creating \"web.yaml\": deployments.apps \"web\" already exists\n"
    );
    // Nothing changed, now or after the controllers ran.
    assert_eq!(env.ok(&["get", "--raw", "/k8s-mini/v1/state"]), state);
    assert_eq!(env.run(&["get", "deploy", "api"]).status.code(), Some(1));
    // The real create, at the same store revision, answers what the dry run did (the uid too).
    let real = env.ok(&[
        "create",
        "-f",
        "api.yaml",
        "-o",
        "jsonpath={.metadata.name} {.spec.replicas} [] {.metadata.uid}",
    ]);
    assert_eq!(real, dry);
    env.server().step(3);
    assert_eq!(
        env.ok(&[
            "get",
            "deploy",
            "web",
            "-o",
            "jsonpath={.spec.replicas} {.spec.template.spec.containers[0].image}"
        ]),
        "3 app:v1"
    );
    // Upstream's ValidateDryRun: only `All` (kubectl prints the 422's details its own way).
    std::fs::write(env.dir.join("pod.json"), r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"i"}]}}"#).unwrap();
    let bad = env.run(&[
        "create",
        "--raw",
        "/api/v1/namespaces/default/pods?dryRun=Some",
        "-f",
        "pod.json",
    ]);
    assert_eq!(
        String::from_utf8_lossy(&bad.stderr),
        "The CreateOptions \"\" is invalid: dryRun: Unsupported value: []string{\"Some\"}: supported values: \"All\"\n"
    );
    env.assert_replays();
}

/// ControllerRevisions over HTTP: `kubectl get controllerrevisions` with upstream's columns,
/// `rollout history` and `rollout undo` of a DaemonSet (kubectl reads the revisions and patches
/// the template back), and the recording replays.
#[test]
fn kubectl_rollout_history_and_undo_of_a_daemonset() {
    let env = Env::new("history", true);
    let ds = "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: agent}\nspec:\n  selector: {matchLabels: {app: agent}}\n  template:\n    metadata: {labels: {app: agent}}\n    spec:\n      containers:\n      - name: agent\n        image: agent:v1\n";
    std::fs::write(env.dir.join("ds.yaml"), ds).unwrap();
    env.ok(&["apply", "-f", "ds.yaml"]);
    env.server().step(2);
    env.ok(&["set", "image", "ds/agent", "agent=agent:v2"]);
    env.server().step(2);
    let revisions = env.ok(&[
        "get",
        "controllerrevisions",
        "-o",
        "custom-columns=REV:.revision,IMAGE:.data.spec.template.spec.containers[0].image",
        "--sort-by=.revision",
    ]);
    assert_eq!(revisions, "REV   IMAGE\n1     agent:v1\n2     agent:v2\n");
    let table = env.ok(&["get", "controllerrevisions"]);
    let rows: Vec<Vec<&str>> = table.lines().map(words).collect();
    assert_eq!(rows[0], ["NAME", "CONTROLLER", "REVISION", "AGE"]);
    assert_eq!(rows.len(), 3);
    assert!(
        rows[1..].iter().all(|r| r[1] == "daemonset.apps/agent"),
        "{table}"
    );
    assert_eq!(
        env.ok(&["rollout", "history", "ds/agent"]),
        "daemonset.apps/agent \nREVISION  CHANGE-CAUSE\n1         <none>\n2         <none>\n\n"
    );
    assert_eq!(
        env.ok(&["rollout", "undo", "ds/agent"]),
        "daemonset.apps/agent rolled back\n"
    );
    env.server().step(2);
    assert_eq!(
        env.ok(&[
            "get",
            "ds",
            "agent",
            "-o",
            "jsonpath={.spec.template.spec.containers[0].image}"
        ]),
        "agent:v1"
    );
    // Upstream's history: the rolled-back-to revision becomes the newest (3), its old number gone.
    let revisions = env.ok(&[
        "get",
        "controllerrevisions",
        "-o",
        "custom-columns=REV:.revision,IMAGE:.data.spec.template.spec.containers[0].image",
        "--sort-by=.revision",
    ]);
    assert_eq!(revisions, "REV   IMAGE\n2     agent:v2\n3     agent:v1\n");
    env.assert_replays();
}

/// `deletecollection`: DELETE on a collection with a label selector deletes what it selects (pods
/// gracefully, as one by one), answers the selected list, records one `delete` step each; with
/// `dryRun=All` nothing goes.
#[test]
fn deletecollection_deletes_what_the_selector_selects() {
    let env = Env::new("deletecollection", true);
    env.ok(&["apply", "-f", "web.yaml"]);
    env.server().step(5);
    let pods = env.ok(&["get", "pods", "-o", "jsonpath={.items[*].metadata.name}"]);
    assert_eq!(pods.split(' ').count(), 3, "{pods}");
    let url = "/api/v1/namespaces/default/pods?labelSelector=app%3Dweb";
    let dry: serde_json::Value =
        serde_json::from_str(&env.ok(&["delete", "--raw", &format!("{url}&dryRun=All")])).unwrap();
    assert_eq!(dry["kind"], "PodList");
    assert_eq!(
        env.ok(&[
            "get",
            "pods",
            "-o",
            "jsonpath={.items[*].metadata.deletionTimestamp}"
        ]),
        ""
    );
    let deleted: serde_json::Value =
        serde_json::from_str(&env.ok(&["delete", "--raw", url])).unwrap();
    let names: Vec<&str> = deleted["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["metadata"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names.join(" "), pods);
    // Bound pods go gracefully (30 s): all three terminating, the ReplicaSet replaces them.
    env.server().step(1);
    let terminating = env.ok(&[
        "get",
        "pods",
        "-o",
        "jsonpath={range .items[?(@.metadata.deletionTimestamp)]}{.metadata.name} {end}",
    ]);
    assert_eq!(terminating.trim(), pods);
    // Nothing else selected: the Deployment's other objects stay.
    assert!(env.ok(&["get", "deploy", "web"]).contains("web"));
    env.assert_replays();
}

/// A CRD's `status` and `scale` subresources (the PyTorchJob CRD declares both): the Scale reads
/// the CRD's replica paths, `kubectl scale` writes `specReplicasPath`, an update of the main
/// resource cannot change the status, `/status` can.
#[test]
fn custom_resources_have_their_crds_status_and_scale_subresources() {
    let env = Env::on_scenario("crsub", "pytorchjob-operator.yaml");
    env.server().step(5);
    let resources = env.ok(&["get", "--raw", "/apis/kubeflow.org/v1"]);
    assert!(
        resources.contains(r#""name":"pytorchjobs/scale""#),
        "{resources}"
    );
    assert!(
        resources.contains(r#""name":"pytorchjobs/status""#),
        "{resources}"
    );
    let scale = |env: &Env| {
        env.ok(&[
            "get",
            "pytorchjob",
            "mnist",
            "--subresource=scale",
            "-o",
            "jsonpath={.spec.replicas} {.status.replicas} {.status.selector}",
        ])
    };
    // Worker replicas 3 (spec), 3 active (status), and the operator's selector string.
    assert_eq!(
        scale(&env),
        "3 3 training.kubeflow.org/job-name=mnist,training.kubeflow.org/operator-name=pytorchjob-controller,training.kubeflow.org/replica-type=worker"
    );
    assert_eq!(
        env.ok(&["scale", "pytorchjob", "mnist", "--replicas=2"]),
        "pytorchjob.kubeflow.org/mnist scaled\n"
    );
    assert_eq!(
        env.ok(&[
            "get",
            "pytorchjob",
            "mnist",
            "-o",
            "jsonpath={.spec.pytorchReplicaSpecs.Worker.replicas} {.metadata.generation}"
        ]),
        "2 2"
    );
    // The main resource's update keeps the status (and does not bump the generation for it).
    env.ok(&[
        "patch",
        "pytorchjob",
        "mnist",
        "--type=merge",
        "-p",
        r#"{"status":{"startTime":"2000-01-01T00:00:00Z"}}"#,
    ]);
    let start = env.ok(&[
        "get",
        "pytorchjob",
        "mnist",
        "-o",
        "jsonpath={.status.startTime} {.metadata.generation}",
    ]);
    assert_eq!(start, "1970-01-01T00:00:00Z 2");
    env.ok(&[
        "patch",
        "pytorchjob",
        "mnist",
        "--subresource=status",
        "--type=merge",
        "-p",
        r#"{"status":{"startTime":"2000-01-01T00:00:00Z"}}"#,
    ]);
    assert_eq!(
        env.ok(&[
            "get",
            "pytorchjob",
            "mnist",
            "-o",
            "jsonpath={.status.startTime}"
        ]),
        "2000-01-01T00:00:00Z"
    );
    // A create cannot set the status either (upstream PrepareForCreate).
    let job = r#"{"apiVersion":"kubeflow.org/v1","kind":"PyTorchJob","metadata":{"name":"other"},"spec":{"pytorchReplicaSpecs":{"Master":{"replicas":1,"template":{"spec":{"containers":[{"name":"pytorch","image":"i"}]}}}}},"status":{"startTime":"2000-01-01T00:00:00Z"}}"#;
    std::fs::write(env.dir.join("other.json"), job).unwrap();
    assert_eq!(
        env.ok(&["create", "-f", "other.json", "-o", "jsonpath=[{.status}]"]),
        "[]"
    );
}
