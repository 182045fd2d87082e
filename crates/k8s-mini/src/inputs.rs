//! `-f FILE|DIR|-` as kubectl reads it (`k8s.io/cli-runtime/pkg/resource`, `FilenameParam`): a
//! file; a directory's files whose names end in `.json`, `.yaml` or `.yml`, in lexical order, and
//! with `-R` those of its subdirectories too (`filepath.Walk` order); `-` for standard input (named
//! `STDIN` in errors). Every input's documents are read as one stream, in the order given.

use std::io::Read;
use std::path::{Path, PathBuf};

use k8s_cluster::manifest::{self, ManifestError, Manifests, Source, MAX_FILE_BYTES, MAX_OBJECTS};

/// The file extensions kubectl reads from a directory (`resource.FileExtensions`).
const EXTENSIONS: [&str; 3] = ["json", "yaml", "yml"];

/// The manifests of every input, and the path that names the run (the first file that holds a
/// Scenario document, else the first input).
pub struct Inputs {
    pub manifests: Manifests,
    pub path: PathBuf,
}

fn error(file: &str, message: String) -> ManifestError {
    ManifestError {
        source_loc: Source {
            file: file.to_string(),
            line: 0,
        },
        path: String::new(),
        message,
    }
}

/// The files `-f` names, directories expanded.
///
/// # Errors
/// A directory that cannot be read, a path that does not exist, or a directory with no manifest
/// files (kubectl: `error reading [dir]: recognized file extensions are [.json .yaml .yml]`).
pub fn expand(args: &[String], recursive: bool) -> Result<Vec<String>, ManifestError> {
    let mut out = Vec::new();
    for a in args {
        if a == "-" {
            out.push(a.clone());
            continue;
        }
        let p = Path::new(a);
        if p.is_dir() {
            let before = out.len();
            walk(p, recursive, &mut out)?;
            if out.len() == before {
                return Err(error(
                    a,
                    "no manifest files in this directory: recognized file extensions are [.json .yaml .yml]"
                        .into(),
                ));
            }
        } else if p.exists() {
            out.push(a.clone());
        } else {
            return Err(error(a, "the path does not exist".into()));
        }
    }
    Ok(out)
}

fn walk(dir: &Path, recursive: bool, out: &mut Vec<String>) -> Result<(), ManifestError> {
    let name = dir.display().to_string();
    let rd =
        std::fs::read_dir(dir).map_err(|e| error(&name, format!("cannot read directory: {e}")))?;
    let mut entries: Vec<PathBuf> = rd.filter_map(Result::ok).map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            if recursive {
                walk(&p, recursive, out)?;
            }
        } else if p
            .extension()
            .and_then(|x| x.to_str())
            .is_some_and(|x| EXTENSIONS.contains(&x))
        {
            out.push(p.display().to_string());
        }
    }
    Ok(())
}

/// Reads every input (see [`expand`]) into one stream of documents.
///
/// # Errors
/// The first input that cannot be read or holds a bad document, or more than [`MAX_OBJECTS`]
/// objects in all.
pub fn read(files: &[String]) -> Result<Inputs, ManifestError> {
    let mut all = Manifests::default();
    let mut path: Option<PathBuf> = None;
    let mut scenario_path: Option<PathBuf> = None;
    for f in files {
        let (m, p) = if f == "-" {
            let mut text = String::new();
            std::io::stdin()
                .take(MAX_FILE_BYTES + 1)
                .read_to_string(&mut text)
                .map_err(|e| error("STDIN", format!("cannot read standard input: {e}")))?;
            if text.len() as u64 > MAX_FILE_BYTES {
                return Err(error(
                    "STDIN",
                    format!("more than the limit of {MAX_FILE_BYTES} bytes (64 MiB)"),
                ));
            }
            (
                manifest::parse_stream("STDIN", &text)?,
                PathBuf::from("STDIN"),
            )
        } else {
            (manifest::load_file(Path::new(f))?, PathBuf::from(f))
        };
        if scenario_path.is_none()
            && m.docs
                .iter()
                .any(|d| matches!(d.doc, manifest::Document::Scenario(_)))
        {
            scenario_path = Some(p.clone());
        }
        path.get_or_insert(p);
        all.docs.extend(m.docs);
        all.warnings.extend(m.warnings);
        if all.docs.len() > MAX_OBJECTS {
            return Err(error(
                f,
                format!("the inputs hold more than {MAX_OBJECTS} documents, the limit"),
            ));
        }
    }
    Ok(Inputs {
        manifests: all,
        path: scenario_path
            .or(path)
            .unwrap_or_else(|| PathBuf::from("STDIN")),
    })
}
