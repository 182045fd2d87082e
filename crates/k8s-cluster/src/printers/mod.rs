//! `kubectl get`'s tables over the cluster's objects: the columns of upstream's server-side printers
//! (`pkg/printers/internalversion/printers.go`, v1.32: `podColumnDefinitions`,
//! `nodeColumnDefinitions`, `deploymentColumnDefinitions`, `replicaSetColumnDefinitions`,
//! `jobColumnDefinitions`, `eventColumnDefinitions`, `namespaceColumnDefinitions`; `printPod`,
//! `printNode`, `printDeployment`, `printReplicaSet`, `printJob`, `printEvent`, `printNamespace`;
//! the default table convertor for every other kind). They are the one set of printers: `k8s-mini
//! get` renders them, `k8s-mini serve` answers them as `meta.k8s.io/v1` Tables. [`Table::render`]
//! lays them out as kubectl's human-readable printer does (`k8s.io/cli-runtime/pkg/printers`:
//! column names upper-cased, a `NAMESPACE` column first with `-A`, priority-1 columns only with
//! `-o wide`, a `text/tabwriter` with minimum width 6 and padding 3). Also here: `kubectl events`'
//! table (`kubectl/pkg/cmd/events/event_printer.go`).
//!
//! The clock: the run's virtual clock reads `now` (ticks run; tick `t` is `t` seconds after
//! 1970-01-01T00:00:00Z), and every AGE, LAST SEEN and DURATION is `now` minus the timestamp,
//! printed with `duration.HumanDuration` ([`human_duration`]).

mod events;
mod tables;
pub mod tabwriter;

pub use events::{event_interval, event_source, events_kubectl_events};
pub use tables::{
    cells, columns, format_label_selector, format_labels, label_selector_string, list,
};

use k8s_types::meta::timestamp_tick;
use k8s_types::Tick;

use crate::state::human_duration;

/// A column of a [`Table`]: upstream's `metav1.TableColumnDefinition` without its description.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Column {
    /// `Name`, as upstream spells it (`Nominated Node`).
    pub name: &'static str,
    /// `Type`: `string`, `integer` or `date` (the OpenAPI type upstream declares).
    pub type_: &'static str,
    /// `Format`: `name` for the column holding the object's name, else empty.
    pub format: &'static str,
    /// `Priority`: 0, always shown; 1, only with `-o wide`.
    pub priority: u8,
}

/// One cell of a row: upstream's cells are Go values, text or `int64` (the replica counts of
/// `printDeployment` and `printReplicaSet`, `printEvent`'s count); a Table in JSON carries them as
/// strings and numbers, `kubectl get` prints both with `%v`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Cell {
    /// A string cell.
    Text(String),
    /// An integer cell.
    Int(i64),
}

impl Cell {
    /// The text of a string cell.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Cell::Text(s) => Some(s),
            Cell::Int(_) => None,
        }
    }
}

impl std::fmt::Display for Cell {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Cell::Text(s) => f.write_str(s),
            Cell::Int(n) => write!(f, "{n}"),
        }
    }
}

impl From<String> for Cell {
    fn from(s: String) -> Cell {
        Cell::Text(s)
    }
}

impl From<&str> for Cell {
    fn from(s: &str) -> Cell {
        Cell::Text(s.to_string())
    }
}

/// One object's row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    /// The object's namespace (empty for cluster-scoped kinds).
    pub namespace: String,
    /// The object's name.
    pub name: String,
    /// One cell per column of the table.
    pub cells: Vec<Cell>,
}

/// Upstream's `metav1.Table` for one kind: column definitions and rows, in list order (namespace,
/// then name, as the apiserver lists them).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Table {
    /// The columns, in order.
    pub columns: Vec<Column>,
    /// The rows.
    pub rows: Vec<Row>,
}

impl Table {
    /// The table as `kubectl get` prints it: the header (column names upper-cased), `NAMESPACE`
    /// first when `with_namespace` (`-A`), priority-1 columns only when `wide`; `No resources
    /// found` is kubectl's message on standard error, so an empty table prints nothing here.
    pub fn render(&self, wide: bool, with_namespace: bool) -> String {
        if self.rows.is_empty() {
            return String::new();
        }
        let keep: Vec<usize> = (0..self.columns.len())
            .filter(|&i| wide || self.columns[i].priority == 0)
            .collect();
        let mut lines: Vec<Vec<String>> = Vec::with_capacity(self.rows.len() + 1);
        let mut header: Vec<String> = Vec::new();
        if with_namespace {
            header.push("NAMESPACE".into());
        }
        header.extend(keep.iter().map(|&i| self.columns[i].name.to_uppercase()));
        lines.push(header);
        for r in &self.rows {
            let mut line = Vec::new();
            if with_namespace {
                line.push(r.namespace.clone());
            }
            line.extend(
                keep.iter()
                    .map(|&i| r.cells.get(i).map(Cell::to_string).unwrap_or_default()),
            );
            lines.push(line);
        }
        let text: String = lines.iter().map(|l| l.join("\t") + "\n").collect();
        tabwriter::format(&text, 6, 3)
    }
}

/// `translateTimestampSince`: the age of `ts` when the clock reads `now`, `<unknown>` without a
/// timestamp.
pub fn since(ts: Option<&str>, now: Tick) -> String {
    ts.and_then(timestamp_tick).map_or_else(
        || "<unknown>".to_string(),
        |t| human_duration(i64::try_from(now).unwrap_or(i64::MAX) - i64::try_from(t).unwrap_or(0)),
    )
}

/// `time.RFC1123Z` of a tick timestamp, as `kubectl describe` prints times:
/// `Thu, 01 Jan 1970 00:00:05 +0000`; the text itself when it is not one of ours.
pub fn rfc1123z(ts: &str) -> String {
    let Some(t) = timestamp_tick(ts) else {
        return ts.to_string();
    };
    const DAYS: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    // 1970-01-01 was a Thursday.
    let weekday = DAYS[usize::try_from((t / 86_400 + 4) % 7).unwrap_or(0)];
    let month = ts
        .get(5..7)
        .and_then(|m| m.parse::<usize>().ok())
        .and_then(|m| MONTHS.get(m.wrapping_sub(1)))
        .copied()
        .unwrap_or("Jan");
    let (year, day, time) = (
        ts.get(0..4).unwrap_or("1970"),
        ts.get(8..10).unwrap_or("01"),
        ts.get(11..19).unwrap_or("00:00:00"),
    );
    format!("{weekday}, {day} {month} {year} {time} +0000")
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_types::meta::tick_timestamp;

    #[test]
    fn rfc1123z_of_ticks() {
        assert_eq!(
            rfc1123z(&tick_timestamp(5)),
            "Thu, 01 Jan 1970 00:00:05 +0000"
        );
        // 1970-02-01 (day 31) was a Sunday.
        assert_eq!(
            rfc1123z(&tick_timestamp(31 * 86_400 + 3_661)),
            "Sun, 01 Feb 1970 01:01:01 +0000"
        );
    }

    #[test]
    fn since_is_now_minus_the_timestamp() {
        assert_eq!(since(Some(&tick_timestamp(10)), 200), "3m10s");
        assert_eq!(since(None, 200), "<unknown>");
    }

    /// Columns at least 6 wide, 3 spaces of padding, the last cell not padded; wide columns only
    /// with `wide`; NAMESPACE first with `-A`.
    #[test]
    fn render_as_kubectl_get() {
        let t = Table {
            columns: vec![
                Column {
                    name: "Name",
                    type_: "string",
                    format: "",
                    priority: 0,
                },
                Column {
                    name: "Ready",
                    type_: "string",
                    format: "",
                    priority: 0,
                },
                Column {
                    name: "Nominated Node",
                    type_: "string",
                    format: "",
                    priority: 1,
                },
            ],
            rows: vec![Row {
                namespace: "default".into(),
                name: "a".into(),
                cells: vec!["a".into(), "1/1".into(), "<none>".into()],
            }],
        };
        assert_eq!(t.render(false, false), "NAME   READY\na      1/1\n");
        assert_eq!(
            t.render(true, true),
            "NAMESPACE   NAME   READY   NOMINATED NODE\ndefault     a      1/1     <none>\n"
        );
    }
}
