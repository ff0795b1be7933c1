//! Comparing two generations: the manifest fields that differ, the files that differ, and each
//! function whose C or IR differs, with a unified diff of each.
//!
//! Functions are found in the generated text itself. A shard (`src/shard_NNNN.c`) is a preamble
//! (includes and prototypes) followed by one paragraph per function, paragraphs separated by an
//! empty line, and the paragraph holding the definition `void f_<addr>(...)` (a line that does not
//! end in `;`) is that function's C — its `#line`, its body and, for an override, the prototype of
//! the replacement. The IR shards (`src/ir/shard_NNNN.rir`) are the same: the paragraph holding
//! `function f_<addr> {` is that function's IR, with any comment above it. Functions are matched
//! by name, so a function that moved to another shard (a new shard count) is still the same function.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;
use std::fs;
use std::path::Path;

use crate::error::{ArchiveError, io};
use crate::{MANIFEST_FILE, Manifest};

/// How something differs between the two sides.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Change {
    /// Only in the second.
    Added,
    /// Only in the first.
    Removed,
    /// In both, different.
    Changed,
}

impl Change {
    fn word(self) -> &'static str {
        match self {
            Change::Added => "added",
            Change::Removed => "removed",
            Change::Changed => "changed",
        }
    }
}

/// A manifest field whose value differs, as lines on each side.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldChange {
    /// The field's name in `manifest.ron`.
    pub field: String,
    /// Its lines in the first generation.
    pub before: Vec<String>,
    /// Its lines in the second.
    pub after: Vec<String>,
}

/// A file (other than the manifest) that differs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileChange {
    /// The path, relative to the generation.
    pub path: String,
    /// How.
    pub change: Change,
}

/// A function whose C or IR differs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FunctionChange {
    /// Its C name (`f_004014b0`).
    pub name: String,
    /// How.
    pub change: Change,
    /// A unified diff of its C, if that differs.
    pub c_patch: Option<String>,
    /// A unified diff of its IR, if that differs.
    pub ir_patch: Option<String>,
}

/// Everything that differs between two generations.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GenerationDiff {
    /// Names for the two sides in the output (`v1`, `v2`, or paths).
    pub labels: (String, String),
    /// Manifest fields that differ (the file list is under [`GenerationDiff::files`]).
    pub fields: Vec<FieldChange>,
    /// Files that differ, by path.
    pub files: Vec<FileChange>,
    /// Functions that differ, in address order.
    pub functions: Vec<FunctionChange>,
    /// How many functions each side has.
    pub function_counts: (usize, usize),
}

/// The lines of each manifest field, in the manifest's order, leaving out the file list.
fn field_lines(m: &Manifest) -> Vec<(&'static str, Vec<String>)> {
    let one = |s: &str| vec![s.to_string()];
    vec![
        ("recipe", one(&m.recipe)),
        ("recipe_digest", one(&m.recipe_digest)),
        ("image_sha256", one(&m.image_sha256)),
        ("host", one(&m.host)),
        ("rpt_version", one(&m.rpt_version)),
        ("emitter_hash", one(&m.emitter_hash)),
        ("runtime_hash", one(&m.runtime_hash)),
        ("compiler", one(&m.compiler)),
        ("cflags", m.cflags.clone()),
        ("ldflags", m.ldflags.clone()),
        (
            "plugins",
            m.plugins
                .iter()
                .map(|p| format!("{} {} {} {}", p.kind, p.name, p.version, p.hash))
                .collect(),
        ),
        (
            "passes",
            m.passes
                .iter()
                .map(|p| format!("{} {}", p.name, p.params.join(" ")).trim_end().to_string())
                .collect(),
        ),
        (
            "pass_reports",
            m.pass_reports
                .iter()
                .flat_map(|(pass, report)| report.lines().map(move |l| format!("{pass}: {l}")))
                .collect(),
        ),
        ("recipe_form", m.recipe_form.clone()),
        ("compile_units", m.compile_units.clone()),
        ("include_dirs", m.include_dirs.clone()),
        ("binary", one(&m.binary)),
    ]
}

/// The name a definition line gives its function: `void f_00401000(struct cpu *restrict c)` (C)
/// or `function f_00401000 {` (IR).
fn defined_name(line: &str, ir: bool) -> Option<String> {
    let name = if ir {
        line.strip_prefix("function ")?.strip_suffix(" {")?
    } else {
        if line.ends_with(';') {
            return None;
        }
        line.strip_prefix("void ")?.split('(').next()?
    };
    let hex = name.strip_prefix("f_")?;
    (!hex.is_empty() && hex.bytes().all(|b| b.is_ascii_hexdigit())).then(|| name.to_string())
}

/// Each function's paragraph in the generated files whose paths pass `pick`.
fn functions_in(
    dir: &Path,
    m: &Manifest,
    pick: &dyn Fn(&str) -> bool,
    ir: bool,
) -> Result<BTreeMap<String, String>, ArchiveError> {
    let mut out = BTreeMap::new();
    for file in m.files.iter().filter(|f| pick(&f.path)) {
        let path = dir.join(&file.path);
        let text = fs::read_to_string(&path).map_err(io(format!("read {}", path.display())))?;
        for paragraph in text.split("\n\n") {
            if let Some(name) = paragraph.lines().find_map(|l| defined_name(l, ir)) {
                let mut body = paragraph.trim_matches('\n').to_string();
                body.push('\n');
                out.insert(name, body);
            }
        }
    }
    Ok(out)
}

fn is_c_shard(path: &str) -> bool {
    path.strip_prefix("src/shard_").is_some_and(|rest| rest.ends_with(".c"))
}

fn is_ir_shard(path: &str) -> bool {
    path.starts_with("src/ir/") && path.ends_with(".rir")
}

fn patch(a: Option<&String>, b: Option<&String>, label_a: &str, label_b: &str) -> Option<String> {
    if a == b {
        return None;
    }
    let empty = String::new();
    let (a, b) = (a.unwrap_or(&empty), b.unwrap_or(&empty));
    Some(
        similar::TextDiff::from_lines(a, b)
            .unified_diff()
            .context_radius(3)
            .header(label_a, label_b)
            .to_string(),
    )
}

/// Address order: `f_` names with more hex digits are higher addresses.
fn address_order(a: &String, b: &String) -> std::cmp::Ordering {
    (a.len(), a).cmp(&(b.len(), b))
}

/// Compares the generations (or archived versions) at `a` and `b`; `labels` name them in output.
pub fn diff_generations(a: &Path, b: &Path, labels: (&str, &str)) -> Result<GenerationDiff, ArchiveError> {
    let read = |dir: &Path| {
        if dir.join(MANIFEST_FILE).is_file() {
            Manifest::read(dir).map_err(ArchiveError::from)
        } else {
            Err(ArchiveError::NotAGeneration(dir.to_path_buf()))
        }
    };
    let (ma, mb) = (read(a)?, read(b)?);

    let fields = field_lines(&ma)
        .into_iter()
        .zip(field_lines(&mb))
        .filter(|((_, x), (_, y))| x != y)
        .map(|((field, before), (_, after))| FieldChange {
            field: field.to_string(),
            before,
            after,
        })
        .collect();

    let hashes = |m: &Manifest| -> BTreeMap<String, String> {
        m.files.iter().map(|f| (f.path.clone(), f.sha256.clone())).collect()
    };
    let (fa, fb) = (hashes(&ma), hashes(&mb));
    let paths: BTreeSet<&String> = fa.keys().chain(fb.keys()).collect();
    let files = paths
        .into_iter()
        .filter_map(|path| {
            let change = match (fa.get(path), fb.get(path)) {
                (Some(x), Some(y)) if x == y => return None,
                (Some(_), Some(_)) => Change::Changed,
                (None, _) => Change::Added,
                (_, None) => Change::Removed,
            };
            Some(FileChange {
                path: path.clone(),
                change,
            })
        })
        .collect();

    let (ca, cb) = (
        functions_in(a, &ma, &is_c_shard, false)?,
        functions_in(b, &mb, &is_c_shard, false)?,
    );
    let (ia, ib) = (
        functions_in(a, &ma, &is_ir_shard, true)?,
        functions_in(b, &mb, &is_ir_shard, true)?,
    );
    let mut names: Vec<&String> = ca.keys().chain(cb.keys()).chain(ia.keys()).chain(ib.keys()).collect();
    names.sort_by(|x, y| address_order(x, y));
    names.dedup();
    let (la, lb) = labels;
    let mut functions = Vec::new();
    for name in names {
        let in_a = ca.contains_key(name) || ia.contains_key(name);
        let in_b = cb.contains_key(name) || ib.contains_key(name);
        let c_patch = patch(
            ca.get(name),
            cb.get(name),
            &format!("{la}/{name}.c"),
            &format!("{lb}/{name}.c"),
        );
        let ir_patch = patch(
            ia.get(name),
            ib.get(name),
            &format!("{la}/{name}.rir"),
            &format!("{lb}/{name}.rir"),
        );
        let change = match (in_a, in_b) {
            (false, _) => Change::Added,
            (_, false) => Change::Removed,
            _ if c_patch.is_none() && ir_patch.is_none() => continue,
            _ => Change::Changed,
        };
        functions.push(FunctionChange {
            name: name.clone(),
            change,
            c_patch,
            ir_patch,
        });
    }
    let count = |c: &BTreeMap<String, String>, i: &BTreeMap<String, String>| {
        c.keys().chain(i.keys()).collect::<BTreeSet<_>>().len()
    };
    Ok(GenerationDiff {
        labels: (la.to_string(), lb.to_string()),
        fields,
        files,
        functions,
        function_counts: (count(&ca, &ia), count(&cb, &ib)),
    })
}

impl GenerationDiff {
    /// True when the two generations are the same.
    pub fn is_empty(&self) -> bool {
        self.fields.is_empty() && self.files.is_empty() && self.functions.is_empty()
    }

    /// Functions with the given kind of change, by name.
    pub fn functions_with(&self, change: Change) -> Vec<&str> {
        self.functions
            .iter()
            .filter(|f| f.change == change)
            .map(|f| f.name.as_str())
            .collect()
    }

    /// The report: fields, files, a summary of functions, then (with `patches`) each function's
    /// C and IR diff.
    pub fn render(&self, patches: bool) -> String {
        let (la, lb) = &self.labels;
        let mut out = String::new();
        let _ = writeln!(out, "diff {la} {lb}");
        if self.is_empty() {
            out.push_str("identical\n");
            return out;
        }
        if !self.fields.is_empty() {
            out.push_str("\nmanifest fields that differ:\n");
            for f in &self.fields {
                let _ = writeln!(out, "  {}:", f.field);
                let removed: Vec<&String> = f.before.iter().filter(|l| !f.after.contains(l)).collect();
                let added: Vec<&String> = f.after.iter().filter(|l| !f.before.contains(l)).collect();
                for l in &removed {
                    let _ = writeln!(out, "    - {l}");
                }
                for l in &added {
                    let _ = writeln!(out, "    + {l}");
                }
                if removed.is_empty() && added.is_empty() {
                    out.push_str("    (same entries in another order)\n");
                }
            }
        }
        let count = |c: Change| self.files.iter().filter(|f| f.change == c).count();
        let _ = writeln!(
            out,
            "\nfiles: {} changed, {} added, {} removed",
            count(Change::Changed),
            count(Change::Added),
            count(Change::Removed)
        );
        for f in &self.files {
            let _ = writeln!(out, "  {:<8}{}", f.change.word(), f.path);
        }
        let fcount = |c: Change| self.functions.iter().filter(|f| f.change == c).count();
        let _ = writeln!(
            out,
            "\nfunctions: {} changed, {} added, {} removed (of {} and {})",
            fcount(Change::Changed),
            fcount(Change::Added),
            fcount(Change::Removed),
            self.function_counts.0,
            self.function_counts.1
        );
        for f in &self.functions {
            let what: Vec<&str> = [("C", f.c_patch.is_some()), ("IR", f.ir_patch.is_some())]
                .iter()
                .filter(|(_, differs)| *differs)
                .map(|(w, _)| *w)
                .collect();
            let _ = writeln!(out, "  {:<8}{} ({})", f.change.word(), f.name, what.join(", "));
        }
        if patches {
            for f in &self.functions {
                for p in [&f.c_patch, &f.ir_patch].into_iter().flatten() {
                    out.push('\n');
                    out.push_str(p);
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn definitions_are_told_from_prototypes() {
        assert_eq!(
            defined_name("void f_004014b0(struct cpu *restrict c)", false).as_deref(),
            Some("f_004014b0")
        );
        assert_eq!(defined_name("void f_004014b0(struct cpu *restrict c);", false), None);
        assert_eq!(defined_name("void my_fix(struct cpu *restrict c)", false), None);
        assert_eq!(defined_name("function f_10 {", true).as_deref(), Some("f_10"));
        assert_eq!(defined_name("function f_10", true), None);
    }

    #[test]
    fn addresses_order_by_width_then_digits() {
        let mut names = vec![
            "f_100000000".to_string(),
            "f_ffffffff".to_string(),
            "f_00000001".to_string(),
        ];
        names.sort_by(address_order);
        assert_eq!(names, ["f_00000001", "f_ffffffff", "f_100000000"]);
    }
}
