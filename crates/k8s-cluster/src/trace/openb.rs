//! Reading Alibaba's `cluster-trace-gpu-v2023` ("openb") CSVs, released with Weng et al., "Beware
//! of Fragmentation: Scheduling GPU-Sharing Workloads with Fragmentation Gradient Descent", USENIX
//! ATC '23, and turning rows into ordinary Kubernetes objects.
//!
//! Node CSV `sn,cpu_milli,memory_mib,gpu,model` -> a `v1` Node named `sn` with capacity and
//! allocatable `cpu: <cpu_milli>m`, `memory: <memory_mib>Mi`, `pods: 1001` (the trace's node YAML),
//! and, with GPUs, `nvidia.com/gpu: <gpu>` plus `alibabacloud.com/gpu-milli: <gpu * 1000>` and the
//! label `nvidia.com/gpu.product: <model>`: in a cluster the kubelet then reports both through the
//! NVIDIA and GPU-share device plugins.
//!
//! Pod CSV `name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,
//! deletion_time,scheduled_time` (the `multigpu*` files have only the first five columns) -> a `v1`
//! Pod in `default` with one container requesting `cpu`, `memory` and either `nvidia.com/gpu:
//! <num_gpu>` (whole GPUs, `gpu_milli = 1000`) or `alibabacloud.com/gpu-milli: <gpu_milli>` (a
//! fraction of one GPU), limits equal to the GPU request; a non-empty `gpu_spec` (`V100M16|V100M32`)
//! becomes required node affinity `nvidia.com/gpu.product In [...]`.
//!
//! Rows that are read but look wrong give warnings ([`Trace::warnings`], one per kind of problem,
//! at the first such row's `file:line` with the number of rows like it): a `scheduled_time` before
//! the `creation_time` (a negative trace pending time), and `num_gpu` 0 with a `gpu_milli` above 0
//! (imported as a CPU-only pod).

use std::collections::BTreeMap;
use std::path::Path;

use k8s_types::core::{
    node_labels, resource_names, Affinity, Container, Node, NodeAffinity, NodeSelector,
    NodeSelectorRequirement, NodeSelectorTerm, Pod, ResourceList,
};
use k8s_types::gpushare::{GpuRequest, GPU_MILLI, MILLI_PER_GPU};
use k8s_types::{Format, Quantity};

use super::TraceError;

/// Pods per node in the trace's node YAML (`status.capacity.pods`).
pub const NODE_PODS: i64 = 1001;
/// Namespace of imported pods.
pub const NAMESPACE: &str = "default";
/// Annotation keeping the pod's trace creation time, in seconds (the timeline's arrival).
pub const CREATION_TIME_ANNOTATION: &str = "trace.k8s-mini.io/creation-time";
/// Annotation keeping the pod's trace deletion time, in seconds (the timeline's departure).
pub const DELETION_TIME_ANNOTATION: &str = "trace.k8s-mini.io/deletion-time";

/// One node row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceNode {
    /// `sn`.
    pub name: String,
    /// Milli-CPU.
    pub milli_cpu: i64,
    /// MiB.
    pub memory_mib: i64,
    /// Physical GPUs.
    pub gpus: i64,
    /// GPU model, empty without GPUs.
    pub model: String,
}

/// One pod row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TracePod {
    /// `name`.
    pub name: String,
    /// Milli-CPU request.
    pub milli_cpu: i64,
    /// Memory request, MiB.
    pub memory_mib: i64,
    /// GPUs: `count` GPUs of `milli` milli-GPU each (count 0: none).
    pub gpu: GpuRequest,
    /// Allowed GPU models (from `gpu_spec`), duplicates removed, in file order.
    pub gpu_spec: Vec<String>,
    /// `qos`, when present.
    pub qos: Option<String>,
    /// `creation_time`, seconds.
    pub creation_time: Option<i64>,
    /// `deletion_time`, seconds.
    pub deletion_time: Option<i64>,
    /// `scheduled_time`, seconds (empty for pods the trace never scheduled).
    pub scheduled_time: Option<i64>,
    /// Line of the row in the pod file (1-based; 0 for a pod not read from a file), for error
    /// messages.
    pub line: usize,
}

/// A parsed trace: nodes and pods in file order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Trace {
    /// Nodes.
    pub nodes: Vec<TraceNode>,
    /// Pods.
    pub pods: Vec<TracePod>,
    /// Rows accepted as they are but probably wrong, one line each, prefixed `file:line` (see
    /// `read_pods_with_warnings`).
    pub warnings: Vec<String>,
}

impl Trace {
    /// Reads a node CSV and a pod CSV.
    ///
    /// # Errors
    /// [`TraceError`] with file and line.
    pub fn load(nodes: &Path, pods: &Path) -> Result<Trace, TraceError> {
        let nodes = read_nodes(nodes)?;
        let (pods, warnings) = read_pods_with_warnings(pods)?;
        Ok(Trace {
            nodes,
            pods,
            warnings,
        })
    }

    /// The nodes with at least one GPU (the paper's cluster).
    pub fn gpu_nodes(&self) -> Vec<&TraceNode> {
        self.nodes.iter().filter(|n| n.gpus > 0).collect()
    }
}

fn read(path: &Path) -> Result<String, TraceError> {
    std::fs::read_to_string(path).map_err(|e| TraceError::Io {
        path: path.display().to_string(),
        message: e.to_string(),
    })
}

struct Table<'a> {
    file: String,
    columns: BTreeMap<&'a str, usize>,
    rows: Vec<(usize, Vec<&'a str>)>,
    /// The text of each data row by line, to locate a cell's character column.
    raw: BTreeMap<usize, &'a str>,
}

/// Splits a trace CSV: plain comma-separated fields as the openb files are written (a UTF-8 byte
/// order mark is skipped; quoted fields are not supported and are reported as such).
fn table<'a>(file: &Path, text: &'a str) -> Result<Table<'a>, TraceError> {
    let file = file.display().to_string();
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if let Some((i, _)) = text.lines().enumerate().find(|(_, l)| l.contains('"')) {
        return Err(TraceError::Parse {
            file,
            line: i + 1,
            message:
                "quoted CSV fields are not supported: trace files are plain comma-separated values"
                    .into(),
        });
    }
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty());
    let Some((_, header)) = lines.next() else {
        return Err(TraceError::Parse {
            file,
            line: 1,
            message: "empty file: expected a header row".into(),
        });
    };
    let columns = header
        .split(',')
        .enumerate()
        .map(|(i, c)| (c.trim(), i))
        .collect();
    let width = header.split(',').count();
    let (mut rows, mut raw) = (Vec::new(), BTreeMap::new());
    for (i, l) in lines {
        let fields: Vec<&str> = l.split(',').map(str::trim).collect();
        if fields.len() != width {
            return Err(TraceError::Parse {
                file,
                line: i + 1,
                message: format!("expected {width} columns, got {}", fields.len()),
            });
        }
        rows.push((i + 1, fields));
        raw.insert(i + 1, l);
    }
    Ok(Table {
        file,
        columns,
        rows,
        raw,
    })
}

impl Table<'_> {
    fn need(&self, col: &str) -> Result<usize, TraceError> {
        self.columns
            .get(col)
            .copied()
            .ok_or_else(|| TraceError::Parse {
                file: self.file.clone(),
                line: 1,
                message: format!("missing column {col:?}"),
            })
    }

    fn err(&self, line: usize, message: String) -> TraceError {
        TraceError::Parse {
            file: self.file.clone(),
            line,
            message,
        }
    }

    /// An error at the cell `col` of `line` (`file:line:column`, the 1-based character column
    /// where the cell's value starts).
    fn cell_err(&self, line: usize, col: usize, message: String) -> TraceError {
        let raw = self.raw.get(&line).copied().unwrap_or("");
        let mut offset = 0;
        for (k, f) in raw.split(',').enumerate() {
            if k == col {
                offset += f.len() - f.trim_start().len();
                break;
            }
            offset += f.len() + 1;
        }
        let offset = offset.min(raw.len());
        TraceError::Cell {
            file: self.file.clone(),
            line,
            column: raw.get(..offset).map_or(offset, |s| s.chars().count()) + 1,
            message,
        }
    }

    fn int(&self, line: usize, row: &[&str], col: usize, name: &str) -> Result<i64, TraceError> {
        self.int_max(line, row, col, name, i64::MAX)
    }

    /// Cell `col` as an integer in `0..=max`: digits beyond `max` are out of range, anything else
    /// is not a non-negative integer.
    fn int_max(
        &self,
        line: usize,
        row: &[&str],
        col: usize,
        name: &str,
        max: i64,
    ) -> Result<i64, TraceError> {
        let v = row.get(col).copied().unwrap_or("");
        if let Some(x) = v.parse::<i64>().ok().filter(|x| (0..=max).contains(x)) {
            return Ok(x);
        }
        let digits = v.strip_prefix('+').unwrap_or(v);
        let message = if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
            format!("column {name}: {v} is out of range (max {max})")
        } else {
            format!("column {name}: expected a non-negative integer, got {v:?}")
        };
        Err(self.cell_err(line, col, message))
    }

    fn opt_int(&self, line: usize, row: &[&str], name: &str) -> Result<Option<i64>, TraceError> {
        match self.columns.get(name) {
            Some(c) if !row.get(*c).copied().unwrap_or("").is_empty() => {
                self.int(line, row, *c, name).map(Some)
            }
            _ => Ok(None),
        }
    }

    fn opt_str(&self, row: &[&str], name: &str) -> Option<String> {
        let c = self.columns.get(name)?;
        row.get(*c).map(|s| s.to_string()).filter(|s| !s.is_empty())
    }
}

/// Reads a node CSV.
///
/// # Errors
/// [`TraceError`] (missing file, missing column, bad number).
pub fn read_nodes(path: &Path) -> Result<Vec<TraceNode>, TraceError> {
    parse_nodes(path, &read(path)?)
}

/// Parses the text of a node CSV (`path` names it in messages): [`read_nodes`] without the read.
///
/// # Errors
/// As [`read_nodes`].
pub fn parse_nodes(path: &Path, text: &str) -> Result<Vec<TraceNode>, TraceError> {
    let t = table(path, text)?;
    let (sn, cpu, mem, gpu) = (
        t.need("sn")?,
        t.need("cpu_milli")?,
        t.need("memory_mib")?,
        t.need("gpu")?,
    );
    let model = t.columns.get("model").copied();
    let mut out = Vec::with_capacity(t.rows.len());
    for (line, row) in &t.rows {
        let name = row.get(sn).copied().unwrap_or("").to_string();
        if name.is_empty() {
            return Err(t.err(*line, "column sn: empty node name".into()));
        }
        let gpus = t.int_max(*line, row, gpu, "gpu", i64::from(u32::MAX))?;
        let model = model
            .and_then(|c| row.get(c))
            .map(|s| s.to_string())
            .unwrap_or_default();
        if gpus > 0 && model.is_empty() {
            return Err(t.err(*line, format!("node {name} has {gpus} GPUs but no model")));
        }
        out.push(TraceNode {
            name,
            milli_cpu: t.int(*line, row, cpu, "cpu_milli")?,
            memory_mib: t.int(*line, row, mem, "memory_mib")?,
            gpus,
            model,
        });
    }
    Ok(out)
}

/// Reads a pod CSV (its warnings dropped: see [`read_pods_with_warnings`]); the tests' shorthand.
///
/// # Errors
/// [`TraceError`] (missing file, missing column, bad number, a GPU request that is neither whole
/// GPUs nor a fraction of one GPU).
#[cfg(test)]
pub fn read_pods(path: &Path) -> Result<Vec<TracePod>, TraceError> {
    read_pods_with_warnings(path).map(|(pods, _)| pods)
}

/// Rows of one kind of suspicious input: the first one's line and description, and how many.
#[derive(Default)]
struct Suspicious {
    first: Option<(usize, String)>,
    rows: usize,
}

impl Suspicious {
    fn add(&mut self, line: usize, what: impl FnOnce() -> String) {
        if self.first.is_none() {
            self.first = Some((line, what()));
        }
        self.rows += 1;
    }

    /// `<file>:<line>: <what>; <n> row(s) of the file like this` for the first such row.
    fn warning(&self, file: &str) -> Option<String> {
        let (line, what) = self.first.as_ref()?;
        let rows = match self.rows {
            1 => "1 row of the file like this".to_string(),
            n => format!("{n} rows of the file like this, the first one shown"),
        };
        Some(format!("{file}:{line}: {what}; {rows}"))
    }
}

/// Reads a pod CSV, with a warning (`file:line: ...; N rows of the file like this`) for each kind
/// of row that is accepted but probably wrong: `scheduled_time` earlier than `creation_time` (the
/// trace pending time `scheduled_time - creation_time` is then negative), and `num_gpu` 0 with
/// `gpu_milli` above 0 (the pod is imported without GPUs). The published openb files have no such
/// row.
///
/// # Errors
/// As [`read_pods`].
pub fn read_pods_with_warnings(path: &Path) -> Result<(Vec<TracePod>, Vec<String>), TraceError> {
    parse_pods(path, &read(path)?)
}

/// Parses the text of a pod CSV (`path` names it in messages): [`read_pods_with_warnings`] without
/// the read.
///
/// # Errors
/// As [`read_pods`].
pub fn parse_pods(path: &Path, text: &str) -> Result<(Vec<TracePod>, Vec<String>), TraceError> {
    let t = table(path, text)?;
    let mut early_scheduled = Suspicious::default();
    let mut gpu_milli_without_gpus = Suspicious::default();
    let (name_c, cpu, mem, ngpu, mgpu) = (
        t.need("name")?,
        t.need("cpu_milli")?,
        t.need("memory_mib")?,
        t.need("num_gpu")?,
        t.need("gpu_milli")?,
    );
    let mut out = Vec::with_capacity(t.rows.len());
    for (line, row) in &t.rows {
        let name = row.get(name_c).copied().unwrap_or("").to_string();
        if name.is_empty() {
            return Err(t.err(*line, "column name: empty pod name".into()));
        }
        let count = t.int_max(*line, row, ngpu, "num_gpu", i64::from(u32::MAX))?;
        let milli = t.int(*line, row, mgpu, "gpu_milli")?;
        if count == 0 && milli > 0 {
            gpu_milli_without_gpus.add(*line, || {
                format!("pod {name}: num_gpu 0 with gpu_milli {milli}: imported as a CPU-only pod")
            });
        }
        let gpu = match (count, milli) {
            (0, _) => GpuRequest::default(),
            (_, 0) => {
                return Err(t.err(*line, format!("pod {name}: num_gpu {count} with gpu_milli 0")))
            }
            (1, m) if m <= MILLI_PER_GPU => GpuRequest { count: 1, milli: m },
            (k, MILLI_PER_GPU) => GpuRequest {
                count: u32::try_from(k).unwrap_or(u32::MAX),
                milli: MILLI_PER_GPU,
            },
            (k, m) => {
                return Err(t.err(
                    *line,
                    format!("pod {name}: {k} GPUs of {m} milli each: only whole GPUs or a fraction of one GPU are supported"),
                ))
            }
        };
        let mut gpu_spec: Vec<String> = Vec::new();
        for m in t
            .opt_str(row, "gpu_spec")
            .unwrap_or_default()
            .split('|')
            .filter(|m| !m.is_empty())
        {
            if !gpu_spec.iter().any(|x| x == m) {
                gpu_spec.push(m.to_string());
            }
        }
        let milli_cpu = t.int(*line, row, cpu, "cpu_milli")?;
        let memory_mib = t.int(*line, row, mem, "memory_mib")?;
        let creation_time = t.opt_int(*line, row, "creation_time")?;
        let deletion_time = t.opt_int(*line, row, "deletion_time")?;
        let scheduled_time = t.opt_int(*line, row, "scheduled_time")?;
        if let (Some(c), Some(s)) = (creation_time, scheduled_time) {
            if s < c {
                early_scheduled.add(*line, || {
                    format!(
                        "pod {name}: scheduled_time {s} is earlier than creation_time {c}: its trace pending time is negative ({} s)",
                        s - c
                    )
                });
            }
        }
        out.push(TracePod {
            milli_cpu,
            memory_mib,
            gpu,
            gpu_spec,
            qos: t.opt_str(row, "qos"),
            creation_time,
            deletion_time,
            scheduled_time,
            line: *line,
            name,
        });
    }
    let warnings = [early_scheduled, gpu_milli_without_gpus]
        .iter()
        .filter_map(|w| w.warning(&t.file))
        .collect();
    Ok((out, warnings))
}

fn milli(v: i64) -> Quantity {
    Quantity::from_milli(v, Format::DecimalSI)
}

fn count(v: i64) -> Quantity {
    Quantity::from_value(v, Format::DecimalSI)
}

fn mib(v: i64) -> Quantity {
    Quantity::from_value(v.saturating_mul(1024 * 1024), Format::BinarySI)
}

impl TraceNode {
    /// The Node manifest (see the module docs).
    pub fn to_node(&self) -> Node {
        let mut n = Node {
            api_version: "v1".into(),
            kind: "Node".into(),
            ..Default::default()
        };
        n.metadata.name = self.name.clone();
        n.metadata
            .labels
            .insert(node_labels::HOSTNAME.into(), self.name.clone());
        let mut list = ResourceList::new();
        list.insert(resource_names::CPU.into(), milli(self.milli_cpu));
        list.insert(resource_names::MEMORY.into(), mib(self.memory_mib));
        list.insert(resource_names::PODS.into(), count(NODE_PODS));
        if self.gpus > 0 {
            n.metadata
                .labels
                .insert(node_labels::NVIDIA_GPU_PRODUCT.into(), self.model.clone());
            list.insert(resource_names::NVIDIA_GPU.into(), count(self.gpus));
            list.insert(GPU_MILLI.into(), count(self.gpus * MILLI_PER_GPU));
        }
        n.status.capacity = list.clone();
        n.status.allocatable = list;
        n
    }
}

impl TracePod {
    /// The Pod manifest (see the module docs).
    pub fn to_pod(&self) -> Pod {
        self.to_pod_named(&self.name)
    }

    /// The Pod manifest under another name (the replay's inflated copies).
    pub fn to_pod_named(&self, name: &str) -> Pod {
        let mut p = Pod {
            api_version: "v1".into(),
            kind: "Pod".into(),
            ..Default::default()
        };
        p.metadata.name = name.to_string();
        p.metadata.namespace = Some(NAMESPACE.into());
        if let Some(t) = self.creation_time {
            p.metadata
                .annotations
                .insert(CREATION_TIME_ANNOTATION.into(), t.to_string());
        }
        if let Some(t) = self.deletion_time {
            p.metadata
                .annotations
                .insert(DELETION_TIME_ANNOTATION.into(), t.to_string());
        }
        let mut requests = ResourceList::new();
        let mut limits = ResourceList::new();
        requests.insert(resource_names::CPU.into(), milli(self.milli_cpu));
        requests.insert(resource_names::MEMORY.into(), mib(self.memory_mib));
        if self.gpu.count > 0 {
            let (res, v) = if self.gpu.is_shared() {
                (GPU_MILLI, self.gpu.milli)
            } else {
                (resource_names::NVIDIA_GPU, i64::from(self.gpu.count))
            };
            requests.insert(res.into(), count(v));
            limits.insert(res.into(), count(v));
        }
        let mut c = Container {
            name: "main".into(),
            image: "openb-workload".into(),
            ..Default::default()
        };
        c.resources.requests = requests.into();
        c.resources.limits = limits.into();
        p.spec.containers.push(c);
        if !self.gpu_spec.is_empty() {
            p.spec.affinity = Some(Affinity {
                node_affinity: Some(NodeAffinity {
                    required_during_scheduling_ignored_during_execution: Some(NodeSelector {
                        node_selector_terms: vec![NodeSelectorTerm {
                            match_expressions: vec![NodeSelectorRequirement {
                                key: node_labels::NVIDIA_GPU_PRODUCT.into(),
                                operator: "In".into(),
                                values: self.gpu_spec.clone(),
                            }],
                            match_fields: Vec::new(),
                        }],
                    }),
                    preferred_during_scheduling_ignored_during_execution: Vec::new(),
                }),
                pod_affinity: None,
                pod_anti_affinity: None,
            });
        }
        p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bom_is_skipped_and_quotes_are_reported() {
        let path = Path::new("pods.csv");
        let t = table(path, "\u{feff}name,cpu_milli\np0,1000\n").unwrap();
        assert_eq!(t.columns.get("name"), Some(&0));
        assert_eq!(t.rows, vec![(2, vec!["p0", "1000"])]);
        let e = table(path, "name,cpu_milli\n\"p0,x\",1000\n")
            .err()
            .unwrap();
        assert_eq!(
            e.to_string(),
            "pods.csv:2: quoted CSV fields are not supported: trace files are plain comma-separated values"
        );
    }

    fn temp(name: &str, body: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("openb-cells-{}", std::process::id()));
        let _ = std::fs::create_dir_all(&dir);
        let p = dir.join(name);
        let _ = std::fs::write(&p, body);
        p
    }

    const POD_HEADER: &str = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n";

    #[test]
    fn out_of_range_cells_are_reported_with_line_and_column() {
        let err = |p: &Path| read_pods(p).err().map(|e| e.to_string());
        // 99999999999 GPUs: more than a u32 GpuRequest count holds; the cell starts at
        // character 14 of line 2 ("p0,1000,1024," is 13 characters).
        let p = temp(
            "hugegpu.csv",
            &format!("{POD_HEADER}p0,1000,1024,99999999999,1000,,LS,Running,0,100,0\n"),
        );
        assert_eq!(
            err(&p),
            Some(format!(
                "{}:2:14: column num_gpu: 99999999999 is out of range (max 4294967295)",
                p.display()
            ))
        );
        // u64::MAX - 1 is an integer, but not a valid i64 time.
        let p = temp(
            "u64max1.csv",
            &format!("{POD_HEADER}p0,1000,1024,1,1000,,LS,Running,0,18446744073709551614,0\n"),
        );
        assert_eq!(
            err(&p),
            Some(format!(
                "{}:2:35: column deletion_time: 18446744073709551614 is out of range (max 9223372036854775807)",
                p.display()
            ))
        );
        // A negative number is still not a non-negative integer.
        let p = temp(
            "neg.csv",
            &format!("{POD_HEADER}p0,-5,1024,1,1000,,LS,Running,0,100,0\n"),
        );
        assert_eq!(
            err(&p),
            Some(format!(
                "{}:2:4: column cpu_milli: expected a non-negative integer, got \"-5\"",
                p.display()
            ))
        );
        // The largest count still parses.
        let p = temp(
            "maxgpu.csv",
            &format!("{POD_HEADER}p0,1000,1024,4294967295,1000,,LS,Running,0,100,0\n"),
        );
        assert_eq!(
            read_pods(&p).map(|v| v[0].gpu),
            Ok(GpuRequest {
                count: u32::MAX,
                milli: MILLI_PER_GPU
            })
        );
    }

    #[test]
    fn scheduled_before_created_is_a_warning_with_the_first_line_and_the_count() {
        // Line 3 (p1): scheduled 90 < created 100; line 4 (p2): 40 < 50; line 2 is scheduled
        // after its creation, line 5 at it, line 6 never: no warning for those.
        let p = temp(
            "early.csv",
            &format!(
                "{POD_HEADER}p0,1000,1024,1,1000,,LS,Running,100,200,150\np1,1000,1024,1,1000,,LS,Running,100,200,90\np2,1000,1024,0,0,,BE,Running,50,80,40\np3,1000,1024,0,0,,BE,Running,60,80,60\np4,1000,1024,1,1000,,LS,Pending,100,200,\n"
            ),
        );
        let (pods, warnings) = read_pods_with_warnings(&p).expect("rows are accepted");
        assert_eq!(pods.len(), 5);
        assert_eq!(
            (pods[1].creation_time, pods[1].scheduled_time),
            (Some(100), Some(90))
        );
        assert_eq!(
            warnings,
            vec![format!(
                "{}:3: pod p1: scheduled_time 90 is earlier than creation_time 100: its trace pending time is negative (-10 s); 2 rows of the file like this, the first one shown",
                p.display()
            )]
        );
    }

    #[test]
    fn gpu_milli_without_gpus_is_a_warning_and_a_cpu_only_pod() {
        // Line 2 (p0): num_gpu 0, gpu_milli 500; line 3 is an ordinary half-GPU pod.
        let p = temp(
            "milli0.csv",
            &format!(
                "{POD_HEADER}p0,2000,4096,0,500,,BE,Running,0,10,0\np1,1000,1024,1,500,,LS,Running,0,10,0\n"
            ),
        );
        let nodes = temp(
            "milli0_nodes.csv",
            "sn,cpu_milli,memory_mib,gpu,model\nn0,64000,262144,2,V100M16\n",
        );
        let trace = Trace::load(&nodes, &p).expect("rows are accepted");
        assert_eq!(trace.pods[0].gpu, GpuRequest::default());
        assert_eq!(
            trace.pods[1].gpu,
            GpuRequest {
                count: 1,
                milli: 500
            }
        );
        assert_eq!(
            trace.warnings,
            vec![format!(
                "{}:2: pod p0: num_gpu 0 with gpu_milli 500: imported as a CPU-only pod; 1 row of the file like this",
                p.display()
            )]
        );
        // Without such rows there is no warning.
        let clean = temp(
            "clean.csv",
            &format!("{POD_HEADER}p1,1000,1024,1,500,,LS,Running,0,10,0\n"),
        );
        assert_eq!(read_pods_with_warnings(&clean).map(|(_, w)| w), Ok(vec![]));
    }

    #[test]
    fn rows_with_the_wrong_number_of_columns_are_rejected() {
        let p = temp(
            "n_short.csv",
            "sn,cpu_milli,memory_mib,gpu,model\nn0,64000,262144,2\n",
        );
        assert_eq!(
            read_nodes(&p).err().map(|e| e.to_string()),
            Some(format!("{}:2: expected 5 columns, got 4", p.display()))
        );
        // An empty model with all five columns is the model error.
        let p = temp(
            "n_nomodel.csv",
            "sn,cpu_milli,memory_mib,gpu,model\nn0,64000,262144,2,\n",
        );
        assert_eq!(
            read_nodes(&p).err().map(|e| e.to_string()),
            Some(format!(
                "{}:2: node n0 has 2 GPUs but no model",
                p.display()
            ))
        );
        let p = temp(
            "short.csv",
            &format!("{POD_HEADER}p0,1000,1024,1,1000,,LS,Running,0\n"),
        );
        assert_eq!(
            read_pods(&p).err().map(|e| e.to_string()),
            Some(format!("{}:2: expected 11 columns, got 9", p.display()))
        );
    }
}
