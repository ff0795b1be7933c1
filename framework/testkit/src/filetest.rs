//! Golden files ("filetests"): input and expected output in one text file.
//!
//! A file starts with its kind, `test KIND [ARGS...]` (`test lift x86`, `test pass flag-abi`,
//! `test emit-c`). The input follows, up to the first section line; then come the expected
//! outputs, each after a line `---` (the only section) or `--- NAME` (one of several):
//!
//! ```text
//! test pass flag-abi
//! ; what the case shows
//! <input>
//! ---
//! <expected output>
//! ```
//!
//! [`run`] finds every `*.rir` file of a folder, checks its kind, hands the input to the test's
//! function and compares each section it returns with the file's. A difference is shown as a
//! unified diff; `RPT_BLESS=1` rewrites the sections instead. A folder without files fails, so a
//! misplaced folder cannot pass unnoticed.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The environment variable that rewrites expectations instead of comparing them.
pub const BLESS: &str = "RPT_BLESS";

/// One golden file, as the test's function sees it.
#[derive(Clone, Debug)]
pub struct Case {
    /// The file.
    pub path: PathBuf,
    /// The file's name without `.rir`, for messages and derived names.
    pub name: String,
    /// The words after `test KIND` on the first line.
    pub args: Vec<String>,
    /// The text between the first line and the first section line (comments included).
    pub input: String,
}

impl Case {
    /// The value of the first input line that starts with `key` and a space (`bytes 90c3`).
    pub fn field(&self, key: &str) -> Option<&str> {
        self.input
            .lines()
            .find_map(|l| l.strip_prefix(key)?.strip_prefix(' ').map(str::trim))
    }

    /// Every input line that starts with `key` and a space, without the key.
    pub fn fields<'a>(&'a self, key: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.input
            .lines()
            .filter_map(move |l| l.strip_prefix(key)?.strip_prefix(' ').map(str::trim))
    }
}

/// What a test makes of a case: its output sections, named (`""` for a file's only section).
pub type Sections = Vec<(String, String)>;

/// The one unnamed section of a case with a single output.
pub fn single(text: String) -> Sections {
    vec![(String::new(), text)]
}

/// A golden file taken apart.
struct Parsed {
    header: String,
    input: String,
    sections: Sections,
}

fn parse(text: &str) -> Parsed {
    let (header, rest) = text.split_once('\n').unwrap_or((text, ""));
    let mut input = String::new();
    let mut sections: Sections = Vec::new();
    for line in rest.split_inclusive('\n') {
        let bare = line.trim_end_matches('\n');
        if let Some(name) = bare.strip_prefix("---").filter(|n| n.is_empty() || n.starts_with(' ')) {
            sections.push((name.trim().to_string(), String::new()));
        } else if let Some((_, text)) = sections.last_mut() {
            text.push_str(line);
        } else {
            input.push_str(line);
        }
    }
    Parsed {
        header: header.to_string(),
        input,
        sections,
    }
}

fn render(header: &str, input: &str, sections: &Sections) -> String {
    let mut out = format!("{header}\n{input}");
    if !out.ends_with('\n') {
        out.push('\n');
    }
    for (name, text) in sections {
        if name.is_empty() {
            out.push_str("---\n");
        } else {
            let _ = writeln!(out, "--- {name}");
        }
        out.push_str(text);
        if !text.is_empty() && !text.ends_with('\n') {
            out.push('\n');
        }
    }
    out
}

/// The input of a golden file's text (everything between its `test` line and its first section),
/// or `None` when the text does not start with a `test` line. Other tests reuse golden inputs.
pub fn input_of(text: &str) -> Option<String> {
    text.starts_with("test ").then(|| parse(text).input)
}

/// A unified diff from `expected` to `actual`, with three lines of context.
pub fn diff(expected: &str, actual: &str) -> String {
    similar::TextDiff::from_lines(expected, actual)
        .unified_diff()
        .context_radius(3)
        .header("expected", "actual")
        .to_string()
}

/// Whether this run rewrites expectations.
pub fn blessing() -> bool {
    std::env::var_os(BLESS).is_some_and(|v| v == "1")
}

/// Runs every `*.rir` file in `dir` whose first line is `test KIND`: `produce` turns each case
/// into its output sections (or an error, which fails the case). Panics with every failure at
/// the end, each with its file and diff.
pub fn run(dir: impl AsRef<Path>, kind: &str, produce: impl Fn(&Case) -> Result<Sections, String>) {
    let dir = dir.as_ref();
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "rir"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no golden files (*.rir) in {}", dir.display());
    let bless = blessing();
    let mut failures = Vec::new();
    for path in &files {
        if let Err(why) = run_file(path, kind, bless, &produce) {
            failures.push(format!("{}: {why}", path.display()));
        }
    }
    assert!(
        failures.is_empty(),
        "{}\n\nIf the new output is right, run the test again with {BLESS}=1 to rewrite the expectations.",
        failures.join("\n\n")
    );
}

/// [`run`] for a pass over whole programs: each case's input parses and verifies, `transform`
/// changes a copy and says in one line what it did, the copy verifies too, `check` compares the
/// two (running both in the reference interpreter, say), and the output is the line (as a `;`
/// comment) and the program as printed.
pub fn run_program_pass(
    dir: impl AsRef<Path>,
    kind: &str,
    transform: impl Fn(&mut rpt_ir::Program) -> Result<String, String>,
    check: impl Fn(&str, &rpt_ir::Program, &rpt_ir::Program),
) {
    run(dir, kind, |case| {
        let original =
            rpt_ir::parse::parse_program(&case.input).map_err(|e| format!("the input does not parse: {e}"))?;
        rpt_ir::verify::verify_program(&original).map_err(|e| format!("the input does not verify: {e}"))?;
        let mut transformed = original.clone();
        let summary = transform(&mut transformed)?;
        rpt_ir::verify::verify_program(&transformed).map_err(|e| format!("the pass's output does not verify: {e}"))?;
        let mut actual = format!("; {summary}\n");
        rpt_ir::print::write_program(&mut actual, &transformed).map_err(|e| e.to_string())?;
        check(&case.name, &original, &transformed);
        Ok(single(actual))
    });
}

fn run_file(
    path: &Path,
    kind: &str,
    bless: bool,
    produce: &impl Fn(&Case) -> Result<Sections, String>,
) -> Result<(), String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read it: {e}"))?;
    let parsed = parse(&text);
    let mut words = parsed.header.split_whitespace();
    let kind_words: Vec<&str> = kind.split_whitespace().collect();
    if words.next() != Some("test") || !kind_words.iter().all(|k| words.next() == Some(k)) {
        return Err(format!("the first line must be `test {kind}`, not `{}`", parsed.header));
    }
    let case = Case {
        path: path.to_path_buf(),
        name: path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default(),
        args: words.map(str::to_string).collect(),
        input: parsed.input.clone(),
    };
    let actual = produce(&case)?;
    if bless {
        let written = render(&parsed.header, &parsed.input, &actual);
        return std::fs::write(path, written).map_err(|e| format!("cannot rewrite it: {e}"));
    }
    let names = |s: &Sections| s.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
    if names(&actual) != names(&parsed.sections) {
        return Err(format!(
            "its sections are {:?} but the test makes {:?}",
            names(&parsed.sections),
            names(&actual)
        ));
    }
    let mut differences = String::new();
    for ((name, expected), (_, actual)) in parsed.sections.iter().zip(&actual) {
        if expected != actual {
            let label = if name.is_empty() {
                "output".to_string()
            } else {
                format!("section `{name}`")
            };
            let _ = write!(differences, "\n{label} differs:\n{}", diff(expected, actual));
        }
    }
    if differences.is_empty() {
        Ok(())
    } else {
        Err(differences)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_comes_apart_into_header_input_and_sections_and_back() {
        let text = "test emit-c x\n; note\nbody\n--- one\nA\n--- two\nB\nC\n";
        let parsed = parse(text);
        assert_eq!(parsed.header, "test emit-c x");
        assert_eq!(parsed.input, "; note\nbody\n");
        assert_eq!(
            parsed.sections,
            vec![
                ("one".to_string(), "A\n".to_string()),
                ("two".to_string(), "B\nC\n".to_string())
            ]
        );
        assert_eq!(render(&parsed.header, &parsed.input, &parsed.sections), text);
        assert_eq!(input_of(text).as_deref(), Some("; note\nbody\n"));
        assert_eq!(input_of("; no header\n"), None);
        // A line that only starts with three dashes is not a section.
        assert_eq!(parse("test k\n----\n---x\n").sections, Vec::new());
    }

    #[test]
    fn a_difference_is_a_unified_diff_naming_the_section() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("case.rir");
        std::fs::write(&path, "test kind a b\nin\n---\nold\nsame\n").expect("write");
        let err = run_file(&path, "kind", false, &|case: &Case| {
            assert_eq!(case.args, ["a", "b"]);
            assert_eq!(case.name, "case");
            Ok(single(format!("new\n{}", "same\n")))
        })
        .expect_err("differs");
        assert!(err.contains("-old\n+new\n"), "{err}");
        let err = run_file(&path, "other", false, &|_: &Case| Ok(Vec::new())).expect_err("wrong kind");
        assert!(err.contains("must be `test other`"), "{err}");
        run_file(&path, "kind", true, &|_: &Case| Ok(single("blessed\n".into()))).expect("blesses");
        assert_eq!(
            std::fs::read_to_string(&path).expect("read"),
            "test kind a b\nin\n---\nblessed\n"
        );
    }

    #[test]
    fn fields_are_read_from_input_lines() {
        let case = Case {
            path: PathBuf::new(),
            name: String::new(),
            args: Vec::new(),
            input: "; bytes not this\nbytes 90 c3\nimport a\nimport b\n".to_string(),
        };
        assert_eq!(case.field("bytes"), Some("90 c3"));
        assert_eq!(case.fields("import").collect::<Vec<_>>(), ["a", "b"]);
    }
}
