//! Server-side printing: `Accept: application/json;as=Table;g=meta.k8s.io;v=v1` answers a
//! `meta.k8s.io/v1` Table whose column definitions and cells are `k8s-mini get`'s printers
//! ([`k8s_cluster::printers`]: upstream `pkg/printers/internalversion/printers.go` of v1.32 for
//! Pods, Nodes, Deployments, ReplicaSets, Jobs, Events and Namespaces, the default convertor's Name
//! and Created At for every other kind, `k8s.io/apiserver/pkg/registry/rest/table.go`). This file
//! is the HTTP envelope only: the Accept header, `includeObject`, the rows' objects. As upstream,
//! the cells are generated wide (priority-1 columns included) and kubectl hides what `-o wide` does
//! not ask for; ages are read against the simulated clock. Column descriptions are left empty.

use k8s_cluster::printers::{self, Cell};
use k8s_types::object::{Kind, Object};
use k8s_types::Tick;
use serde_json::{json, Value};

use crate::serve::custom::PrinterColumn;

/// Whether an Accept header asks for a Table.
pub(crate) fn wants_table(accept: &str) -> bool {
    accept.split(',').any(|part| {
        let params: Vec<&str> = part.split(';').map(str::trim).collect();
        params.contains(&"as=Table") && params.contains(&"g=meta.k8s.io")
    })
}

/// `includeObject` of a Table request: `None`, `Metadata` (the default) or `Object`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Include {
    None,
    Metadata,
    Object,
}

impl Include {
    /// Parses the query parameter.
    pub(crate) fn parse(v: Option<&str>) -> Result<Include, String> {
        match v {
            None | Some("" | "Metadata") => Ok(Include::Metadata),
            Some("None") => Ok(Include::None),
            Some("Object") => Ok(Include::Object),
            Some(other) => Err(format!(
                "includeObject: Unsupported value: {other:?}: supported values: \"None\", \"Metadata\", \"Object\""
            )),
        }
    }
}

fn column_definitions(kind: &Kind) -> Vec<Value> {
    printers::columns(kind)
        .into_iter()
        .map(|c| {
            json!({"name": c.name, "type": c.type_, "format": c.format, "description": "", "priority": c.priority})
        })
        .collect()
}

/// The cells of one object's row, as JSON: strings, and numbers for upstream's `int64` cells.
pub(crate) fn cells(obj: &Object, now: Tick) -> Vec<Value> {
    printers::cells(obj, now)
        .into_iter()
        .map(|c| match c {
            Cell::Text(s) => Value::String(s),
            Cell::Int(n) => Value::from(n),
        })
        .collect()
}

fn row_object(obj: &Object, include: Include) -> Option<Value> {
    match include {
        Include::None => None,
        Include::Object => {
            let mut o = obj.clone();
            o.set_type_meta();
            Some(o.to_json())
        }
        Include::Metadata => Some(json!({
            "kind": "PartialObjectMetadata",
            "apiVersion": "meta.k8s.io/v1",
            "metadata": serde_json::to_value(obj.meta()).unwrap_or(Value::Null),
        })),
    }
}

/// A Table of `objects` of `kind`; `headers` false leaves the column definitions out (the watch
/// events after the first, as upstream). With `columns` (custom resources, from the CRD's
/// `additionalPrinterColumns`), the Table is upstream's CRD tableconvertor's: Name (format
/// `name`) then those columns; otherwise the kind's built-in printer.
pub(crate) fn table(
    kind: &Kind,
    columns: &[PrinterColumn],
    objects: &[&Object],
    now: Tick,
    include: Include,
    headers: bool,
    metadata: Value,
) -> Value {
    let rows: Vec<Value> = objects
        .iter()
        .map(|o| {
            let cells = if columns.is_empty() {
                cells(o, now)
            } else {
                let v = o.to_json();
                let mut c = vec![json!(o.meta().name)];
                c.extend(columns.iter().map(|col| col.cell(&v, now)));
                c
            };
            let mut row = json!({"cells": cells});
            if let Some(obj) = row_object(o, include) {
                row["object"] = obj;
            }
            row
        })
        .collect();
    let defs = if headers && !columns.is_empty() {
        let mut d = vec![
            json!({"name": "Name", "type": "string", "format": "name", "description": "", "priority": 0}),
        ];
        d.extend(columns.iter().map(PrinterColumn::definition));
        Value::Array(d)
    } else if headers {
        Value::Array(column_definitions(kind))
    } else {
        Value::Array(Vec::new())
    };
    json!({"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": metadata, "columnDefinitions": defs, "rows": rows})
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(kind: &Kind, v: Value) -> Object {
        k8s_cluster::manifest::decode_object_json(kind, v).unwrap()
    }

    #[test]
    fn job_row_as_print_job_writes_it() {
        // completions 3, 2 succeeded, started at t=10, still running at t=100: Running, 2/3, 90s.
        let job = decode(
            &Kind::Job,
            json!({"apiVersion": "batch/v1", "kind": "Job",
                "metadata": {"name": "pi", "creationTimestamp": "1970-01-01T00:00:05Z"},
                "spec": {"completions": 3, "selector": {"matchLabels": {"job-name": "pi"}},
                    "template": {"spec": {"containers": [{"name": "pi", "image": "perl"}]}}},
                "status": {"succeeded": 2, "startTime": "1970-01-01T00:00:10Z"}}),
        );
        assert_eq!(
            cells(&job, 100),
            vec![
                json!("pi"),
                json!("Running"),
                json!("2/3"),
                json!("90s"),
                json!("95s"),
                json!("pi"),
                json!("perl"),
                json!("job-name=pi")
            ]
        );
    }

    #[test]
    fn node_row_reads_conditions_roles_and_cordon() {
        let node = decode(
            &Kind::Node,
            json!({"apiVersion": "v1", "kind": "Node",
                "metadata": {"name": "n1", "creationTimestamp": "1970-01-01T00:00:00Z",
                    "labels": {"node-role.kubernetes.io/control-plane": "", "kubernetes.io/role": "gpu"}},
                "spec": {"unschedulable": true},
                "status": {"conditions": [{"type": "Ready", "status": "True"}],
                    "addresses": [{"type": "InternalIP", "address": "10.0.0.1"}],
                    "nodeInfo": {"kubeletVersion": "v1.32.0"}}}),
        );
        let c = cells(&node, 7200);
        assert_eq!(c[1], json!("Ready,SchedulingDisabled"));
        assert_eq!(c[2], json!("control-plane,gpu"));
        assert_eq!(c[3], json!("120m"));
        assert_eq!(c[4], json!("v1.32.0"));
        assert_eq!(c[5], json!("10.0.0.1"));
        assert_eq!(c[6], json!("<none>"));
        assert_eq!(c[7], json!("<unknown>"));
    }

    /// `printDeployment`'s Up-to-date and Available are `int64` cells: JSON numbers, while the
    /// columns are declared "string" as upstream declares them; Event's wide Name column carries
    /// `format: name`.
    #[test]
    fn deployment_counts_are_json_numbers_and_columns_come_from_the_printers() {
        let d = decode(
            &Kind::Deployment,
            json!({"apiVersion": "apps/v1", "kind": "Deployment",
                "metadata": {"name": "web", "creationTimestamp": "1970-01-01T00:00:00Z"},
                "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}},
                    "template": {"spec": {"containers": [{"name": "app", "image": "app:v1"}]}}},
                "status": {"readyReplicas": 2, "updatedReplicas": 3, "availableReplicas": 2}}),
        );
        assert_eq!(
            cells(&d, 30),
            vec![
                json!("web"),
                json!("2/3"),
                json!(3),
                json!(2),
                json!("30s"),
                json!("app"),
                json!("app:v1"),
                json!("app=web")
            ]
        );
        assert_eq!(
            column_definitions(&Kind::Deployment)[2],
            json!({"name": "Up-to-date", "type": "string", "format": "", "description": "", "priority": 0})
        );
        assert_eq!(
            column_definitions(&Kind::Event)[9],
            json!({"name": "Name", "type": "string", "format": "name", "description": "", "priority": 1})
        );
    }

    #[test]
    fn table_accept_header_as_kubectl_sends_it() {
        assert!(wants_table("application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"));
        assert!(!wants_table("application/json"));
        assert_eq!(Include::parse(Some("Object")), Ok(Include::Object));
        assert!(Include::parse(Some("All")).is_err());
    }
}
