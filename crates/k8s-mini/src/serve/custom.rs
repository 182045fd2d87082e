//! Custom resources served from the stored CustomResourceDefinitions (upstream
//! `staging/src/k8s.io/apiextensions-apiserver/pkg/apiserver/customresource_discovery_controller.go`
//! for discovery, `customresource_handler.go` for the routes, and
//! `pkg/registry/customresource/tableconvertor/tableconvertor.go` for the Table): each served
//! version of each stored CRD is one [`ResourceInfo`] with the CRD's names, scope and printer
//! columns. Read from the store on every request, so a CRD created over HTTP is served by the
//! next request.

use k8s_types::apiextensions::{crd_kind, CustomResourceDefinition};
use k8s_types::apiserver::ApiClient;
use k8s_types::Tick;
use serde_json::{json, Value};

use crate::serve::resources::{self, ResourceInfo, SCALE, STATUS};

/// One Table column of a custom resource: upstream `CustomResourceColumnDefinition`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct PrinterColumn {
    pub(crate) name: String,
    pub(crate) type_: String,
    pub(crate) format: String,
    pub(crate) description: String,
    pub(crate) priority: i64,
    pub(crate) json_path: String,
}

impl PrinterColumn {
    /// The column a version without `additionalPrinterColumns` gets (upstream
    /// `apiextensions/v1/helpers.go` `GetColumnsForVersion`: Age, `date`,
    /// `.metadata.creationTimestamp`).
    pub(crate) fn age() -> PrinterColumn {
        PrinterColumn {
            name: "Age".into(),
            type_: "date".into(),
            format: String::new(),
            description: String::new(),
            priority: 0,
            json_path: ".metadata.creationTimestamp".into(),
        }
    }

    fn from_json(v: &Value) -> Option<PrinterColumn> {
        let s = |k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_string();
        let name = s("name");
        if name.is_empty() {
            return None;
        }
        Some(PrinterColumn {
            name,
            type_: s("type"),
            format: s("format"),
            description: s("description"),
            priority: v.get("priority").and_then(Value::as_i64).unwrap_or(0),
            json_path: s("jsonPath"),
        })
    }

    /// The Table column definition (`TableColumnDefinition`).
    pub(crate) fn definition(&self) -> Value {
        json!({"name": self.name, "type": self.type_, "format": self.format,
            "description": self.description, "priority": self.priority})
    }

    /// The cell of `obj` (its JSON) as upstream's tableconvertor fills it: the first JSONPath
    /// result; `string` columns print it as text, `integer`/`number`/`boolean` keep the JSON
    /// value, `date` is the age of an RFC 3339 time against the simulated clock; `null` when the
    /// path finds nothing (kubectl prints `<none>`) or is not of the forms k8s-mini evaluates
    /// (`.a.b`, `[n]`, `[-n]`, `[-1:]`; docs/serve.md).
    pub(crate) fn cell(&self, obj: &Value, now: Tick) -> Value {
        let Some(v) = eval(obj, &self.json_path) else {
            return Value::Null;
        };
        match self.type_.as_str() {
            "integer" => v.as_i64().map_or(Value::Null, Value::from),
            "number" => v.as_f64().map_or(Value::Null, Value::from),
            "boolean" => v.as_bool().map_or(Value::Null, Value::from),
            "date" => match v.as_str() {
                Some(ts) => json!(k8s_cluster::printers::since(Some(ts), now)),
                None => Value::Null,
            },
            _ => match v {
                Value::String(s) => Value::String(s.clone()),
                other => Value::String(other.to_string()),
            },
        }
    }
}

/// Evaluates a JSONPath of the forms `.a.b`, `.a[2]`, `.a[-1]` and `.a[-1:]` (a slice: its first
/// element) on `v`; `None` when a step finds nothing or the path has another form.
pub(crate) fn eval<'a>(v: &'a Value, path: &str) -> Option<&'a Value> {
    let path = path.trim();
    let path = path
        .strip_prefix('{')
        .and_then(|p| p.strip_suffix('}'))
        .unwrap_or(path);
    let mut cur = v;
    let mut rest = path;
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix('.') {
            let end = r.find(['.', '[']).unwrap_or(r.len());
            let (field, tail) = r.split_at(end);
            if field.is_empty() {
                return None;
            }
            cur = cur.as_object()?.get(field)?;
            rest = tail;
        } else if let Some(r) = rest.strip_prefix('[') {
            let end = r.find(']')?;
            let (index, tail) = (&r[..end], &r[end + 1..]);
            let arr = cur.as_array()?;
            let (index, slice) = match index.strip_suffix(':') {
                Some(i) => (i, true),
                None => (index, false),
            };
            let i: i64 = index.parse().ok()?;
            let len = i64::try_from(arr.len()).ok()?;
            let at = if i < 0 { len + i } else { i };
            if slice && at < 0 {
                // `[-5:]` of a shorter list starts at its first element.
                cur = arr.first()?;
            } else {
                cur = arr.get(usize::try_from(at).ok()?)?;
            }
            rest = tail;
        } else {
            return None;
        }
    }
    Some(cur)
}

/// Upstream's kube-aware version order (`k8s.io/apimachinery/pkg/version`
/// `CompareKubeAwareVersionStrings`): GA before beta before alpha, higher major first, then
/// higher minor; strings of another form after them, alphabetically.
pub(crate) fn version_priority(v: &str) -> (u8, i64, i64, String) {
    let parsed = v.strip_prefix('v').and_then(|r| {
        let digits = r.find(|c: char| !c.is_ascii_digit()).unwrap_or(r.len());
        let major: i64 = r[..digits].parse().ok()?;
        let tail = &r[digits..];
        if tail.is_empty() {
            return Some((0u8, -major, 0i64));
        }
        let (rank, minor) = if let Some(m) = tail.strip_prefix("beta") {
            (1u8, m)
        } else {
            (2u8, tail.strip_prefix("alpha")?)
        };
        let minor: i64 = minor.parse().ok()?;
        Some((rank, -major, -minor))
    });
    match parsed {
        Some((rank, major, minor)) => (rank, major, minor, String::new()),
        None => (3, 0, 0, v.to_string()),
    }
}

/// The served resources of every stored CRD: sorted by group, then version (kube-aware order),
/// then plural. A CRD whose spec does not decode is skipped.
pub(crate) fn crd_resources(api: &dyn ApiClient) -> Vec<ResourceInfo> {
    let mut out = Vec::new();
    for obj in api.list_shared(&crd_kind(), None, None) {
        let Some(Ok(crd)) = CustomResourceDefinition::from_object(&obj) else {
            continue;
        };
        let raw = obj.to_json();
        let names = &crd.spec.names;
        if crd.spec.group.is_empty() || names.plural.is_empty() || names.kind.is_empty() {
            continue;
        }
        let categories: Vec<String> = raw["spec"]["names"]["categories"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|c| c.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default();
        let raw_versions = raw["spec"]["versions"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        for v in crd.spec.versions.iter().filter(|v| v.served) {
            let raw_v = raw_versions
                .iter()
                .find(|r| r["name"] == v.name.as_str())
                .cloned()
                .unwrap_or(Value::Null);
            let mut columns: Vec<PrinterColumn> = raw_v["additionalPrinterColumns"]
                .as_array()
                .map(|a| a.iter().filter_map(PrinterColumn::from_json).collect())
                .unwrap_or_default();
            if columns.is_empty() {
                columns.push(PrinterColumn::age());
            }
            let singular = if names.singular.is_empty() {
                // Upstream defaults `singular` to the lowercased kind (`SetDefaults_CustomResourceDefinitionSpec`).
                names.kind.to_ascii_lowercase()
            } else {
                names.singular.clone()
            };
            out.push(ResourceInfo {
                kind: crd.resource_kind(&v.name),
                group: crd.spec.group.clone(),
                version: v.name.clone(),
                plural: names.plural.clone(),
                singular,
                short_names: names.short_names.clone(),
                categories: categories.clone(),
                subresources: [
                    v.has_status_subresource().then_some(STATUS),
                    v.scale_subresource().map(|_| SCALE),
                ]
                .into_iter()
                .flatten()
                .collect(),
                columns,
                custom: true,
                scale: v.scale_subresource(),
            });
        }
    }
    out.sort_by(|a, b| {
        (&a.group, version_priority(&a.version), &a.plural).cmp(&(
            &b.group,
            version_priority(&b.version),
            &b.plural,
        ))
    });
    out
}

/// Every resource served now: the built-in ones, then the custom ones.
pub(crate) fn served(api: &dyn ApiClient) -> Vec<ResourceInfo> {
    let mut all = resources::all();
    all.extend(crd_resources(api));
    all
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jsonpath_of_printer_columns() {
        let obj = json!({"metadata": {"name": "a"}, "status": {"conditions": [
            {"type": "Created"}, {"type": "Running"}, {"type": "Succeeded"}]}});
        // PyTorchJob's State column: the last condition's type.
        assert_eq!(
            eval(&obj, ".status.conditions[-1:].type"),
            Some(&json!("Succeeded"))
        );
        assert_eq!(
            eval(&obj, ".status.conditions[0].type"),
            Some(&json!("Created"))
        );
        assert_eq!(eval(&obj, "{.metadata.name}"), Some(&json!("a")));
        assert_eq!(eval(&obj, ".status.conditions[3].type"), None);
        assert_eq!(eval(&obj, ".status.missing"), None);
        assert_eq!(eval(&obj, ".status.conditions[?(@.type)]"), None);
    }

    #[test]
    fn kube_aware_version_order() {
        let mut vs = vec![
            "v1alpha1", "v2beta1", "v1", "foo", "v1beta2", "v2", "v1beta1",
        ];
        vs.sort_by_key(|v| version_priority(v));
        assert_eq!(
            vs,
            ["v2", "v1", "v2beta1", "v1beta2", "v1beta1", "v1alpha1", "foo"]
        );
    }

    #[test]
    fn cells_by_column_type() {
        let obj = json!({"metadata": {"creationTimestamp": "1970-01-01T00:00:10Z"},
            "spec": {"replicas": 3, "on": true, "sel": {"a": "b"}}});
        let col = |t: &str, p: &str| PrinterColumn {
            name: "X".into(),
            type_: t.into(),
            format: String::new(),
            description: String::new(),
            priority: 0,
            json_path: p.into(),
        };
        // Created at t=10, read at t=100: 90 s old.
        assert_eq!(
            col("date", ".metadata.creationTimestamp").cell(&obj, 100),
            json!("90s")
        );
        assert_eq!(col("integer", ".spec.replicas").cell(&obj, 0), json!(3));
        assert_eq!(col("boolean", ".spec.on").cell(&obj, 0), json!(true));
        assert_eq!(col("string", ".spec.replicas").cell(&obj, 0), json!("3"));
        assert_eq!(
            col("string", ".spec.sel").cell(&obj, 0),
            json!("{\"a\":\"b\"}")
        );
        assert_eq!(col("string", ".spec.none").cell(&obj, 0), Value::Null);
    }
}
