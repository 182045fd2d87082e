//! The REST verbs over the cluster's apiserver (upstream
//! `k8s.io/apiserver/pkg/endpoints/handlers`: `get.go`, `create.go`, `update.go`, `patch.go`,
//! `delete.go`; the subresources `status`, `scale`, `binding`, `eviction`). Each request runs
//! between two ticks on the thread that owns the cluster; a write that succeeds is handed to the
//! recorder as the Scenario step that replays it.

use k8s_cluster::Session;
use k8s_types::apiserver::{DeleteOptions, PropagationPolicy};
use k8s_types::labels::LabelSelector;
use k8s_types::object::{Kind, Object};
use k8s_types::policy::Eviction;
use k8s_types::status::Status;
use serde_json::{json, Value};

use crate::serve::dry_run;
use crate::serve::fields::FieldSelector;
use crate::serve::patch;
use crate::serve::reply::{self, Details, Reply};
use crate::serve::resources::ResourceInfo;
use crate::serve::scale;
use crate::serve::table::{self, Include};

/// A request as the HTTP layer hands it over.
#[derive(Clone, Debug, Default)]
pub(crate) struct Request {
    pub(crate) method: String,
    pub(crate) path: String,
    pub(crate) query: Vec<(String, String)>,
    pub(crate) accept: String,
    pub(crate) content_type: String,
    pub(crate) body: Vec<u8>,
}

impl Request {
    /// The first value of a query parameter.
    pub(crate) fn param(&self, name: &str) -> Option<&str> {
        self.query
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// What a REST path names.
#[derive(Clone, Debug)]
pub(crate) struct Target {
    pub(crate) info: ResourceInfo,
    pub(crate) namespace: Option<String>,
    pub(crate) name: Option<String>,
    pub(crate) sub: Option<String>,
}

impl Target {
    pub(crate) fn details(&self) -> Details {
        Details {
            name: self.name.clone().unwrap_or_default(),
            group: self.info.group.clone(),
            resource: self.info.plural.clone(),
            kind: self.info.kind.name().to_string(),
        }
    }

    fn ns(&self) -> &str {
        self.namespace.as_deref().unwrap_or("")
    }
}

/// A Scenario step that replays a write (YAML-shaped JSON), or `None` for a write no step can
/// replay (status, binding).
pub(crate) type Recorded = Option<Value>;

fn fail(s: &Status, t: &Target) -> (Reply, Recorded) {
    (reply::failure(s, &t.details()), None)
}

fn ok(code: u16, obj: &Object) -> (Reply, Recorded) {
    (Reply::json(code, &typed_json(obj)), None)
}

/// The object's JSON with its `apiVersion` and `kind`.
pub(crate) fn typed_json(obj: &Object) -> Value {
    let mut o = obj.clone();
    o.set_type_meta();
    o.to_json()
}

/// The request body as JSON: a JSON body, or a YAML one (`application/yaml`), as
/// kube-apiserver's serializers accept. Protobuf and CBOR bodies are refused with upstream's 415:
/// kubectl's typed commands (`kubectl create deployment`, `create job`, ...) send protobuf
/// (docs/serve.md).
fn body_json(req: &Request) -> Result<Value, Reply> {
    let media = req
        .content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    match media.as_str() {
        // JSON, and the patch types (`application/merge-patch+json`, ...), checked by `patch`.
        m if m.is_empty() || m == "*/*" || m.ends_with("json") => serde_json::from_slice(&req.body)
            .map_err(|e| {
                reply::bad_request(format!(
                    "the body of the request could not be decoded as JSON: {e}"
                ))
            }),
        "application/yaml" => serde_yaml::from_slice(&req.body).map_err(|e| {
            reply::bad_request(format!(
                "the body of the request could not be decoded as YAML: {e}"
            ))
        }),
        other => Err(reply::unsupported_media_type(
            other,
            "application/json, application/yaml",
        )),
    }
}

/// Decodes a request body into an object of the target's kind, filling `apiVersion`, `kind` and
/// the namespace from the path as kube-apiserver does.
fn decode(t: &Target, mut v: Value) -> Result<Object, Reply> {
    let kind = &t.info.kind;
    let Some(m) = v.as_object_mut() else {
        return Err(reply::bad_request(
            "the body of the request is not a JSON object",
        ));
    };
    let gv = t.info.group_version();
    for (k, want) in [("apiVersion", gv.as_str()), ("kind", kind.name())] {
        match m.get(k).and_then(Value::as_str) {
            None | Some("") => {
                m.insert(k.into(), json!(want));
            }
            Some(got) if got != want => {
                let msg = if k == "apiVersion" {
                    format!("the API version in the data ({got}) does not match the expected API version ({gv})")
                } else {
                    format!(
                        "the kind in the data ({got}) does not match the expected kind ({})",
                        kind.name()
                    )
                };
                return Err(reply::bad_request(msg));
            }
            Some(_) => {}
        }
    }
    if kind.namespaced() {
        let meta = m.entry("metadata").or_insert_with(|| json!({}));
        if !meta.is_object() {
            return Err(reply::bad_request("metadata must be an object"));
        }
        let ns = meta.get("namespace").and_then(Value::as_str).unwrap_or("");
        if ns.is_empty() {
            meta["namespace"] = json!(t.ns());
        } else if ns != t.ns() {
            return Err(reply::bad_request(
                "the namespace of the provided object does not match the namespace sent on the request",
            ));
        }
    }
    k8s_cluster::manifest::decode_object_json(kind, v).map_err(|e| {
        reply::bad_request(format!(
            "{k} in version \"{}\" cannot be handled as a {k}: {e}",
            t.info.version,
            k = kind.name()
        ))
    })
}

/// RFC 7386 merge patch that turns `a` into `b` (upstream `jsonpatch.CreateMergePatch`).
pub(crate) fn create_merge_patch(a: &Value, b: &Value) -> Value {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let mut out = serde_json::Map::new();
            for (k, vb) in y {
                match x.get(k) {
                    Some(va) if va == vb => {}
                    Some(va) if va.is_object() && vb.is_object() => {
                        out.insert(k.clone(), create_merge_patch(va, vb));
                    }
                    _ => {
                        out.insert(k.clone(), vb.clone());
                    }
                }
            }
            for k in x.keys() {
                if !y.contains_key(k) {
                    out.insert(k.clone(), Value::Null);
                }
            }
            Value::Object(out)
        }
        _ => b.clone(),
    }
}

fn kind_label(kind: &Kind) -> String {
    kind.name().to_string()
}

/// A recorded `patch` or `delete` step names its kind by name, plus `apiVersion` when the name
/// alone resolves to another kind or none (the native PodGroup, CRDs, custom resources), so
/// that the step replays on the same object.
fn name_kind(step: &mut Value, t: &Target) {
    let kind = &t.info.kind;
    if Kind::ALL.iter().find(|k| k.name() == kind.name()) != Some(kind) {
        step["apiVersion"] = json!(t.info.group_version());
    }
}

fn patch_step(t: &Target, before: &Value, after: &Value) -> Recorded {
    let mut diff = create_merge_patch(before, after);
    if let Some(meta) = diff.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.remove("resourceVersion");
        if meta.is_empty() {
            diff.as_object_mut().map(|d| d.remove("metadata"));
        }
    }
    if diff.as_object().is_some_and(serde_json::Map::is_empty) {
        return None;
    }
    let mut p = json!({"kind": kind_label(&t.info.kind), "name": t.name, "merge": diff});
    name_kind(&mut p, t);
    if t.info.kind.namespaced() {
        p["namespace"] = json!(t.ns());
    }
    Some(json!({"patch": p}))
}

/// GET of a collection (not a watch): list, selectors, pagination, Table or `<Kind>List`.
/// The request's `labelSelector` and `fieldSelector`.
pub(crate) fn selectors(
    kind: &Kind,
    req: &Request,
) -> Result<(Option<LabelSelector>, FieldSelector), Reply> {
    let labels = match req.param("labelSelector").map(LabelSelector::parse) {
        Some(Err(e)) => return Err(reply::bad_request(e)),
        Some(Ok(l)) => Some(l),
        None => None,
    };
    let fields = FieldSelector::parse(kind, req.param("fieldSelector").unwrap_or(""))
        .map_err(reply::bad_request)?;
    Ok((labels, fields))
}

pub(crate) fn list(s: &Session, t: &Target, req: &Request) -> Reply {
    let kind = &t.info.kind;
    let (labels, fields) = match selectors(kind, req) {
        Ok(x) => x,
        Err(r) => return r,
    };
    let limit: usize = match req.param("limit").map(str::parse::<usize>) {
        Some(Ok(n)) => n,
        Some(Err(_)) => return reply::bad_request("limit must be a non-negative integer"),
        None => 0,
    };
    let start_after = match req.param("continue").filter(|c| !c.is_empty()) {
        Some(c) => match decode_continue(c) {
            Some(k) => Some(k),
            None => return reply::bad_request("continue key is not valid: invalid token"),
        },
        None => None,
    };
    let api = s.api_ref();
    let rv = api.revision();
    let all = api.list_shared(kind, t.namespace.as_deref(), labels.as_ref());
    let mut items: Vec<&Object> = all
        .iter()
        .map(AsRef::as_ref)
        .filter(|o| fields.matches(o))
        .filter(|o| start_after.as_ref().is_none_or(|k| o.key() > *k))
        .collect();
    let mut metadata = json!({"resourceVersion": rv.to_string()});
    if limit > 0 && items.len() > limit {
        let remaining = items.len() - limit;
        items.truncate(limit);
        if let Some(last) = items.last() {
            metadata["continue"] = json!(encode_continue(&last.key()));
            metadata["remainingItemCount"] = json!(remaining);
        }
    }
    if table::wants_table(&req.accept) {
        let include = match Include::parse(req.param("includeObject")) {
            Ok(i) => i,
            Err(e) => return reply::bad_request(e),
        };
        return Reply::json(
            200,
            &table::table(
                kind,
                &t.info.columns,
                &items,
                s.now(),
                include,
                true,
                metadata,
            ),
        );
    }
    let items: Vec<Value> = items.iter().map(|o| typed_json(o)).collect();
    Reply::json(
        200,
        &json!({
            "kind": format!("{}List", kind.name()), "apiVersion": t.info.group_version(),
            "metadata": metadata, "items": items,
        }),
    )
}

/// A continue token: the hex of the last key returned (opaque to clients, as upstream's).
fn encode_continue(key: &str) -> String {
    key.bytes().map(|b| format!("{b:02x}")).collect()
}

fn decode_continue(token: &str) -> Option<String> {
    if !token.len().is_multiple_of(2) {
        return None;
    }
    let bytes: Option<Vec<u8>> = (0..token.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(token.get(i..i + 2)?, 16).ok())
        .collect();
    String::from_utf8(bytes?).ok()
}

fn get_object(s: &Session, t: &Target) -> Result<Object, Status> {
    s.api_ref()
        .get(&t.info.kind, t.ns(), t.name.as_deref().unwrap_or(""))
}

/// GET of one object or its `status` / `scale`.
pub(crate) fn get(s: &Session, t: &Target, req: &Request) -> Reply {
    let obj = match get_object(s, t) {
        Ok(o) => o,
        Err(e) => return fail(&e, t).0,
    };
    match t.sub.as_deref() {
        Some("scale") => Reply::json(200, &scale::scale_json(t, &obj)),
        _ if table::wants_table(&req.accept) => {
            let include = Include::parse(req.param("includeObject")).unwrap_or(Include::Metadata);
            let rv = obj.meta().resource_version.clone().unwrap_or_default();
            Reply::json(
                200,
                &table::table(
                    &t.info.kind,
                    &t.info.columns,
                    &[&obj],
                    s.now(),
                    include,
                    true,
                    json!({"resourceVersion": rv}),
                ),
            )
        }
        _ => Reply::json(200, &typed_json(&obj)),
    }
}

/// POST to a collection: create.
pub(crate) fn create(s: &mut Session, t: &Target, req: &Request) -> (Reply, Recorded) {
    let body = match body_json(req) {
        Ok(b) => b,
        Err(r) => return (r, None),
    };
    let obj = match decode(t, body.clone()) {
        Ok(o) => o,
        Err(r) => return (r, None),
    };
    let mut named = t.clone();
    named.name = Some(obj.meta().name.clone());
    let result = if dry_run::is_dry_run(req) {
        s.dry_run(|api| api.create_shared(obj).map(|o| (*o).clone()))
    } else if let Object::Node(_) = &obj {
        // A Node is a machine: it gets a kubelet (and device plugins) as in a scenario.
        let name = obj.meta().name.clone();
        s.apply(obj)
            .and_then(|()| s.api_ref().get(&Kind::Node, "", &name))
    } else {
        s.api().create(obj)
    };
    match result {
        Ok(created) => {
            // The body as the apiserver read it (apiVersion, kind and namespace filled in from
            // the path), so that the `apply` step decodes it the same way.
            let mut step_body = body;
            step_body["apiVersion"] = json!(t.info.group_version());
            step_body["kind"] = json!(t.info.kind.name());
            if t.info.kind.namespaced() {
                step_body["metadata"]["namespace"] = json!(t.ns());
            }
            (
                Reply::json(201, &typed_json(&created)),
                Some(json!({"apply": step_body})),
            )
        }
        Err(e) => fail(&e, &named),
    }
}

/// Writes `after` (the whole object, decoded) over the stored one: update, or update_status for
/// the `status` subresource.
fn write(
    s: &mut Session,
    t: &Target,
    req: &Request,
    before: &Value,
    after: Value,
) -> (Reply, Recorded) {
    let status = t.sub.as_deref() == Some("status");
    let obj = match decode(t, after.clone()) {
        Ok(o) => o,
        Err(r) => return (r, None),
    };
    if obj.meta().name != t.name.clone().unwrap_or_default() {
        return (
            reply::bad_request("the name of the object does not match the name on the URL"),
            None,
        );
    }
    let result = dry_run::write(s, req, |api| {
        if status {
            api.update_status(obj)
        } else {
            api.update(obj)
        }
    });
    match result {
        Ok(o) => {
            let rec = if status {
                None
            } else {
                patch_step(t, before, &after)
            };
            (Reply::json(200, &typed_json(&o)), rec)
        }
        Err(e) => fail(&e, t),
    }
}

/// PUT of an object, its status or its scale.
pub(crate) fn update(s: &mut Session, t: &Target, req: &Request) -> (Reply, Recorded) {
    let current = match get_object(s, t) {
        Ok(o) => o,
        Err(e) => return fail(&e, t),
    };
    let body = match body_json(req) {
        Ok(b) => b,
        Err(r) => return (r, None),
    };
    let before = current.to_json();
    if t.sub.as_deref() == Some("scale") {
        return write_scale(s, t, req, &current, &body);
    }
    write(s, t, req, &before, body)
}

fn write_scale(
    s: &mut Session,
    t: &Target,
    req: &Request,
    current: &Object,
    scale: &Value,
) -> (Reply, Recorded) {
    let Some(replicas) = scale["spec"]["replicas"].as_i64() else {
        return (
            reply::bad_request("spec.replicas of the Scale is not an integer"),
            None,
        );
    };
    if let Some(rv) = scale["metadata"]["resourceVersion"].as_str() {
        if Some(rv) != current.meta().resource_version.as_deref() {
            return fail(
                &Status::conflict(&t.info.kind, t.name.as_deref().unwrap_or("")),
                t,
            );
        }
    }
    let before = current.to_json();
    let mut after = before.clone();
    scale::set_replicas(t, &mut after, replicas);
    let mut main = t.clone();
    main.sub = None;
    let (r, rec) = write(s, &main, req, &before, after.clone());
    if r.code != 200 {
        return (r, None);
    }
    if dry_run::is_dry_run(req) {
        // Nothing was stored: the Scale of the object the update would have written.
        return match decode(&main, after) {
            Ok(o) => (Reply::json(200, &scale::scale_json(t, &o)), rec),
            Err(r) => (r, None),
        };
    }
    match get_object(s, t) {
        Ok(o) => (Reply::json(200, &scale::scale_json(t, &o)), rec),
        Err(e) => fail(&e, t),
    }
}

/// PATCH of an object, its status or its scale: JSON merge, JSON, or strategic merge patch.
pub(crate) fn patch(s: &mut Session, t: &Target, req: &Request) -> (Reply, Recorded) {
    let media = req
        .content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    const ACCEPTED: &str = "application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json";
    if media == "application/apply-patch+yaml" || media == "application/apply-patch+cbor" {
        return (
            reply::unsupported_media_type(
                "server-side apply is not supported by k8s-mini serve (use client-side `kubectl apply`)",
                ACCEPTED,
            ),
            None,
        );
    }
    let kinds = [
        "application/json-patch+json",
        "application/merge-patch+json",
        "application/strategic-merge-patch+json",
    ];
    if !kinds.contains(&media.as_str()) {
        return (
            reply::unsupported_media_type(&format!("unknown patch type {media:?}"), ACCEPTED),
            None,
        );
    }
    if media == "application/strategic-merge-patch+json"
        && (t.info.kind == Kind::PodGroup || t.info.custom)
    {
        // A custom resource has no Go struct to read merge keys from (upstream: 415).
        return (
            reply::unsupported_media_type(
                "strategic merge patch is not supported for custom resources",
                "application/json-patch+json, application/merge-patch+json",
            ),
            None,
        );
    }
    let current = match get_object(s, t) {
        Ok(o) => o,
        Err(e) => return fail(&e, t),
    };
    let p = match body_json(req) {
        Ok(b) => b,
        Err(r) => return (r, None),
    };
    let scale = t.sub.as_deref() == Some("scale");
    let before = if scale {
        scale::scale_json(t, &current)
    } else {
        typed_json(&current)
    };
    let mut after = before.clone();
    let applied = match media.as_str() {
        "application/json-patch+json" => patch::json_patch(&mut after, &p),
        "application/merge-patch+json" => {
            if !p.is_object() {
                Err("a merge patch must be a JSON object".to_string())
            } else {
                patch::merge_patch(&mut after, &p);
                Ok(())
            }
        }
        _ => {
            if !p.is_object() {
                Err("a strategic merge patch must be a JSON object".to_string())
            } else {
                patch::strategic_merge_patch(&mut after, &p)
            }
        }
    };
    if let Err(e) = applied {
        // Upstream answers a patch that does not apply with 422 and the patch library's error
        // (`errors.NewGenericServerResponse(http.StatusUnprocessableEntity, ...)` in
        // `handlers/patch.go`).
        let status = Status {
            reason: k8s_types::status::StatusReason::Invalid,
            code: 422,
            message: e,
            causes: Vec::new(),
        };
        return fail(&status, t);
    }
    if scale {
        return write_scale(s, t, req, &current, &after);
    }
    write(s, t, req, &typed_json(&current), after)
}

/// DELETE of one object: `gracePeriodSeconds`, `propagationPolicy` (`Orphan`, `Background`,
/// `Foreground`: the apiserver and the garbage collector do the rest) and
/// `preconditions` (uid, resourceVersion) from the body or the query.
/// A delete's options, from the query or the body (`DeleteOptions`): the body (for
/// `preconditions`), the options, and the propagation policy as written (for the recorded step).
pub(crate) struct DeleteRequest {
    pub(crate) body: Value,
    pub(crate) options: DeleteOptions,
    pub(crate) policy: Option<String>,
}

/// Reads a delete's options (upstream `ValidateDeleteOptions` for `propagationPolicy`).
pub(crate) fn delete_request(req: &Request) -> Result<DeleteRequest, Reply> {
    let body = if req.body.iter().all(u8::is_ascii_whitespace) {
        json!({})
    } else {
        body_json(req)?
    };
    let grace = match req.param("gracePeriodSeconds") {
        Some(g) => match g.parse::<i64>() {
            Ok(n) => Some(n),
            Err(_) => return Err(reply::bad_request("gracePeriodSeconds must be an integer")),
        },
        None => body["gracePeriodSeconds"].as_i64(),
    };
    let policy = req
        .param("propagationPolicy")
        .map(str::to_string)
        .or_else(|| body["propagationPolicy"].as_str().map(str::to_string));
    let propagation_policy = match policy.as_deref() {
        None => None,
        Some(p) => match PropagationPolicy::parse(p) {
            Some(pp) => Some(pp),
            None => {
                return Err(reply::bad_request(format!("propagationPolicy: Unsupported value: {p:?}: supported values: \"Foreground\", \"Background\", \"Orphan\"")))
            }
        },
    };
    Ok(DeleteRequest {
        body,
        options: DeleteOptions {
            grace_period_seconds: grace,
            propagation_policy,
        },
        policy,
    })
}

/// The `delete` step that replays a delete of `name`.
pub(crate) fn delete_step(t: &Target, name: &str, d: &DeleteRequest) -> Value {
    let mut step = json!({"kind": kind_label(&t.info.kind), "name": name});
    name_kind(&mut step, t);
    if t.info.kind.namespaced() {
        step["namespace"] = json!(t.ns());
    }
    if let Some(g) = d.options.grace_period_seconds {
        step["gracePeriodSeconds"] = json!(g);
    }
    if let Some(p) = &d.policy {
        step["propagationPolicy"] = json!(p);
    }
    json!({"delete": step})
}

pub(crate) fn delete(s: &mut Session, t: &Target, req: &Request) -> (Reply, Recorded) {
    let d = match delete_request(req) {
        Ok(d) => d,
        Err(r) => return (r, None),
    };
    let body = &d.body;
    let current = match get_object(s, t) {
        Ok(o) => o,
        Err(e) => return fail(&e, t),
    };
    let pre = &body["preconditions"];
    let m = current.meta();
    if let Some(uid) = pre["uid"].as_str() {
        if Some(uid) != m.uid.as_deref() {
            let mut st = Status::conflict(&t.info.kind, &m.name);
            st.message = format!(
                "Precondition failed: UID in precondition: {uid}, UID in object meta: {}",
                m.uid.clone().unwrap_or_default()
            );
            return fail(&st, t);
        }
    }
    if let Some(rv) = pre["resourceVersion"].as_str() {
        if Some(rv) != m.resource_version.as_deref() {
            let mut st = Status::conflict(&t.info.kind, &m.name);
            st.message = format!(
                "Precondition failed: ResourceVersion in precondition: {rv}, ResourceVersion in object meta: {}",
                m.resource_version.clone().unwrap_or_default()
            );
            return fail(&st, t);
        }
    }
    let name = m.name.clone();
    match dry_run::write(s, req, |api| {
        api.delete(&t.info.kind, t.ns(), &name, d.options)
    }) {
        Ok(o) => (ok(200, &o).0, Some(delete_step(t, &name, &d))),
        Err(e) => fail(&e, t),
    }
}

/// POST `pods/<name>/binding` and `pods/<name>/eviction`.
pub(crate) fn create_subresource(s: &mut Session, t: &Target, req: &Request) -> (Reply, Recorded) {
    let body = match body_json(req) {
        Ok(b) => b,
        Err(r) => return (r, None),
    };
    let name = t.name.clone().unwrap_or_default();
    if let Some(n) = body["metadata"]["name"].as_str().filter(|n| !n.is_empty()) {
        if n != name {
            return (
                reply::bad_request(format!(
                    "name in URL does not match name in {} object",
                    if t.sub.as_deref() == Some("binding") {
                        "Binding"
                    } else {
                        "Eviction"
                    }
                )),
                None,
            );
        }
    }
    match t.sub.as_deref() {
        Some("binding") => {
            let mut b: k8s_types::core::Binding = match serde_json::from_value(body) {
                Ok(b) => b,
                Err(e) => return (reply::bad_request(format!("invalid Binding: {e}")), None),
            };
            b.metadata.name.clone_from(&name);
            b.metadata.namespace = Some(t.ns().into());
            match dry_run::write(s, req, |api| api.bind(&b)) {
                Ok(_) => (reply::success(201), None),
                Err(e) => fail(&e, t),
            }
        }
        Some("eviction") => {
            let grace = body["deleteOptions"]["gracePeriodSeconds"].as_i64();
            let mut e = Eviction::default();
            e.metadata.name.clone_from(&name);
            e.metadata.namespace = Some(t.ns().into());
            e.delete_options.grace_period_seconds = grace;
            match dry_run::write(s, req, |api| api.evict(&e)) {
                Ok(()) => {
                    let mut step = json!({"namespace": t.ns(), "name": name});
                    if let Some(g) = grace {
                        step["gracePeriodSeconds"] = json!(g);
                    }
                    (reply::success(201), Some(json!({"evict": step})))
                }
                Err(st) => fail(&st, t),
            }
        }
        _ => (reply::method_not_allowed(), None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_patch_from_two_objects_replays_to_the_second() {
        let a = json!({"spec": {"replicas": 3, "paused": true, "template": {"x": [1]}}, "m": 1});
        let b = json!({"spec": {"replicas": 5, "template": {"x": [1, 2]}}, "m": 1});
        let p = create_merge_patch(&a, &b);
        assert_eq!(
            p,
            json!({"spec": {"replicas": 5, "paused": null, "template": {"x": [1, 2]}}})
        );
        let mut c = a.clone();
        patch::merge_patch(&mut c, &p);
        assert_eq!(c, b);
    }

    #[test]
    fn continue_tokens_round_trip() {
        let k = "/registry/pods/default/web-0";
        assert_eq!(decode_continue(&encode_continue(k)).as_deref(), Some(k));
        assert_eq!(decode_continue("zz"), None);
        assert_eq!(decode_continue("abc"), None);
    }
}
