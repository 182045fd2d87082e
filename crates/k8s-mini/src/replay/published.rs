//! Reading the FGD paper's published result CSVs (hkust-adsl/kubernetes-scheduler-simulator
//! `experiments/analysis/expected_results/`: `derived_unalloc_gpu_summary.csv`,
//! `analysis_frag_discrete.csv`, `analysis_frag_ratio_discrete.csv`) strictly: a missing,
//! unreadable, empty, header-only or ragged file is an error naming the file, and a malformed cell
//! is reported as `file:line:column` (1-based line and character column), never dropped.

use std::path::Path;

/// A published CSV: its header and its non-blank data rows.
pub struct Table {
    /// The file, as displayed in errors.
    pub file: String,
    header: Vec<String>,
    rows: Vec<(usize, String)>,
}

/// One data row of a [`Table`].
pub struct Row<'a> {
    file: &'a str,
    line: usize,
    raw: &'a str,
    fields: Vec<&'a str>,
}

/// Reads and splits `path`.
///
/// # Errors
/// `path: <OS error>` (missing file, a directory), `path: empty file ...`, `path: no data rows
/// ...` (header only), `path:line: expected N columns, got M` (a truncated or ragged row), and
/// quoted fields (the published files are plain comma-separated values).
pub fn read(path: &Path) -> Result<Table, String> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| format!("{file}: {e}"))?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty());
    let Some((_, header)) = lines.next() else {
        return Err(format!("{file}: empty file: expected a header row"));
    };
    let header: Vec<String> = header.split(',').map(|h| h.trim().to_string()).collect();
    let mut rows = Vec::new();
    for (i, l) in lines {
        if l.contains('"') {
            return Err(format!(
                "{file}:{}: quoted CSV fields are not supported: published results are plain comma-separated values",
                i + 1
            ));
        }
        let n = l.split(',').count();
        if n != header.len() {
            return Err(format!(
                "{file}:{}: expected {} columns, got {n} (truncated or malformed row)",
                i + 1,
                header.len()
            ));
        }
        rows.push((i + 1, l.to_string()));
    }
    if rows.is_empty() {
        return Err(format!("{file}: no data rows (only a header)"));
    }
    Ok(Table { file, header, rows })
}

impl Table {
    /// The index of column `name`.
    ///
    /// # Errors
    /// `file:1: missing column "name"`.
    pub fn col(&self, name: &str) -> Result<usize, String> {
        self.header
            .iter()
            .position(|h| h == name)
            .ok_or_else(|| format!("{}:1: missing column {name:?}", self.file))
    }

    /// The header's column names.
    pub fn header(&self) -> &[String] {
        &self.header
    }

    /// The data rows, in file order.
    pub fn rows(&self) -> impl Iterator<Item = Row<'_>> {
        self.rows.iter().map(|(line, raw)| Row {
            file: &self.file,
            line: *line,
            raw,
            fields: raw.split(',').map(str::trim).collect(),
        })
    }
}

impl Row<'_> {
    /// The trimmed cell `i` ("" past the end; rows are checked for their column count).
    pub fn get(&self, i: usize) -> &str {
        self.fields.get(i).copied().unwrap_or("")
    }

    /// `file:line:column` of cell `i` (1-based character column of its first non-blank character).
    pub fn at(&self, i: usize) -> String {
        let mut offset = 0;
        for (k, f) in self.raw.split(',').enumerate() {
            if k == i {
                offset += f.len() - f.trim_start().len();
                break;
            }
            offset += f.len() + 1;
        }
        let offset = offset.min(self.raw.len());
        let column = self.raw.get(..offset).map_or(offset, |s| s.chars().count()) + 1;
        format!("{}:{}:{column}", self.file, self.line)
    }

    /// Cell `i` of column `name` as a finite number.
    ///
    /// # Errors
    /// `file:line:column: column name: expected a number, got "x"`.
    pub fn number(&self, i: usize, name: &str) -> Result<f64, String> {
        let v = self.get(i);
        v.parse::<f64>()
            .ok()
            .filter(|x| x.is_finite())
            .ok_or_else(|| {
                format!(
                    "{}: column {name}: expected a finite number, got {v:?}",
                    self.at(i)
                )
            })
    }

    /// Cell `i` of column `name` as a whole percent (`0`..=`u32::MAX`).
    ///
    /// # Errors
    /// `file:line:column: column name: expected a whole percent, got "x"`.
    pub fn percent(&self, i: usize, name: &str) -> Result<u32, String> {
        let v = self.get(i);
        v.parse::<u32>().map_err(|_| {
            format!(
                "{}: column {name}: expected a whole percent, got {v:?}",
                self.at(i)
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(name: &str, body: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("xtask-published-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let p = dir.join(name);
        std::fs::write(&p, body).expect("write");
        p
    }

    #[test]
    fn unusable_files_are_errors_naming_the_file() {
        let err = |p: &Path| read(p).err().unwrap_or_default();
        let missing = std::env::temp_dir().join("xtask-published-does-not-exist.csv");
        assert!(err(&missing).starts_with(&format!("{}: ", missing.display())));
        let dir = std::env::temp_dir();
        assert!(err(&dir).starts_with(&format!("{}: ", dir.display())));
        let p = temp("empty.csv", "");
        assert_eq!(
            err(&p),
            format!("{}: empty file: expected a header row", p.display())
        );
        let p = temp("hdr.csv", "workload,policy\n\n");
        assert_eq!(
            err(&p),
            format!("{}: no data rows (only a header)", p.display())
        );
        let p = temp("trunc.csv", "a,b,c\n1,2,3\n4,5");
        assert_eq!(
            err(&p),
            format!(
                "{}:3: expected 3 columns, got 2 (truncated or malformed row)",
                p.display()
            )
        );
        let p = temp("garbage.csv", "garbage\n");
        assert_eq!(
            err(&p),
            format!("{}: no data rows (only a header)", p.display())
        );
    }

    #[test]
    fn cells_are_located_by_line_and_character_column() {
        let p = temp("cells.csv", "w,p,a\n\nx,y, 12\nx,é,oops\n");
        let t = read(&p).expect("table");
        assert_eq!(t.col("a"), Ok(2));
        assert_eq!(
            t.col("z"),
            Err(format!("{}:1: missing column \"z\"", p.display()))
        );
        let rows: Vec<Row> = t.rows().collect();
        assert_eq!(rows[0].percent(2, "a"), Ok(12));
        // "x,y, 12": the value starts at character 6.
        assert_eq!(rows[0].at(2), format!("{}:3:6", p.display()));
        // "x,é,oops": é is one character (two bytes): "oops" starts at character 5.
        assert_eq!(
            rows[1].number(2, "a"),
            Err(format!(
                "{}:4:5: column a: expected a finite number, got \"oops\"",
                p.display()
            ))
        );
        assert!(rows[1].number(1, "p").is_err());
    }
}
