//! Tidy checks over the whole tree: dependency direction (DESIGN.md §2) and file headers.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

/// Every file under `dir` whose name passes `keep`, skipping build output and hidden folders.
fn files_where(dir: &Path, keep: &dyn Fn(&Path) -> bool, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        if name == "target" || name == "gen" || name.to_string_lossy().starts_with('.') {
            continue;
        }
        if path.is_dir() {
            files_where(&path, keep, out);
        } else if keep(&path) {
            out.push(path);
        }
    }
}

/// The rpt crates a manifest depends on (normal dependencies only; build and dev dependencies are free).
fn rpt_dependencies(text: &str) -> (String, BTreeSet<String>) {
    let mut name = String::new();
    let mut deps = BTreeSet::new();
    let mut section = String::new();
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            section = line.trim_matches(['[', ']']).to_string();
            continue;
        }
        if section == "package" && line.starts_with("name") {
            name = line.split('"').nth(1).unwrap_or_default().to_string();
        }
        if section == "dependencies"
            && let Some(dep) = line.split(['=', '.', ' ']).next()
            && dep.starts_with("rpt-")
        {
            deps.insert(dep.to_string());
        }
    }
    (name, deps)
}

/// Which rpt crates each kind of crate may depend on.
fn allowed(name: &str) -> Option<&'static [&'static str]> {
    Some(match name {
        "rpt-ir" | "rpt-source-hash" => &[],
        "rpt-api" => &["rpt-ir"],
        "rpt-recipe" => &["rpt-ir"],
        // core holds the C-per-function queries of DESIGN.md §6, hence emit-c (see core's lib.rs).
        "rpt-core" => &["rpt-ir", "rpt-api", "rpt-recipe", "rpt-emit-c"],
        "rpt-emit-c" => &["rpt-ir", "rpt-api"],
        "rpt-build" => &["rpt-api"],
        "rpt-archive" => &["rpt-recipe"],
        // A generation is written from the core's output with the runtime's files and built through
        // the build crate; its manifest is the archive's (see generation's lib.rs).
        "rpt-generation" => &[
            "rpt-api",
            "rpt-archive",
            "rpt-build",
            "rpt-core",
            "rpt-emit-c",
            "rpt-recipe",
            "rpt-runtime",
        ],
        // The bench reads recipes (pass lists, the image a DOL must equal) and talks to rpt only
        // through the `rpt` executable it is given.
        "rpt-bench" => &["rpt-recipe"],
        // The runtime crate only embeds C; it names its files with the api's SourceFile.
        "rpt-runtime" => &["rpt-api"],
        // What tests share (golden files, lifting any guest, the oracle kit); only dev-dependencies use it.
        "rpt-testkit" => &["rpt-ir", "rpt-api"],
        "rpt-cli" | "rpt-tests" => return None,
        // A test fixture may re-export the example pass under another ABI identity (the
        // foreign-layout fixture); it is test code, like rpt-tests.
        n if n.starts_with("rpt-pass-fixture-") => &["rpt-ir", "rpt-api", "rpt-pass-example"],
        n if n.starts_with("rpt-guest-") || n.starts_with("rpt-pass-") => &["rpt-ir", "rpt-api"],
        n if n.starts_with("rpt-host-") => &["rpt-api"],
        _ => &[],
    })
}

#[test]
fn dependencies_point_one_way() {
    let root = workspace_root();
    let mut found = Vec::new();
    files_where(&root, &|p| p.file_name().is_some_and(|n| n == "Cargo.toml"), &mut found);
    let mut problems = Vec::new();
    let mut checked = 0;
    for path in found {
        let Ok(text) = fs::read_to_string(&path) else { continue };
        let (name, deps) = rpt_dependencies(&text);
        if name.is_empty() {
            continue;
        }
        checked += 1;
        let Some(allowed) = allowed(&name) else { continue };
        for dep in deps {
            if !allowed.contains(&dep.as_str()) {
                problems.push(format!("{name} must not depend on {dep} ({})", path.display()));
            }
        }
    }
    assert!(
        checked >= 10,
        "found only {checked} crates: is the tidy test looking in the right place?"
    );
    assert!(problems.is_empty(), "wrong dependency edges:\n{}", problems.join("\n"));
}

/// Pass crates live in passes/ (or are test fixtures), are named `rpt-pass-*`, and are leaves:
/// only the CLI (which links built-in passes) and the end-to-end tests and their fixtures may
/// depend on one, so a pass can always be built on its own as a plugin.
#[test]
fn passes_are_leaf_crates_named_rpt_pass() {
    let root = workspace_root();
    let mut found = Vec::new();
    files_where(&root, &|p| p.file_name().is_some_and(|n| n == "Cargo.toml"), &mut found);
    let mut problems = Vec::new();
    let mut passes = 0;
    for path in &found {
        let Ok(text) = fs::read_to_string(path) else { continue };
        let (name, deps) = rpt_dependencies(&text);
        let rel = path.strip_prefix(&root).unwrap_or(path);
        if rel.starts_with("passes") {
            passes += 1;
            if !name.starts_with("rpt-pass-") {
                problems.push(format!(
                    "{}: a crate in passes/ must be named rpt-pass-*, not `{name}`",
                    rel.display()
                ));
            }
        }
        if name != "rpt-cli" && name != "rpt-tests" && !name.starts_with("rpt-pass-fixture-") {
            for dep in deps.iter().filter(|d| d.starts_with("rpt-pass-")) {
                problems.push(format!(
                    "{name} must not depend on the pass crate {dep} ({})",
                    rel.display()
                ));
            }
        }
    }
    assert!(
        passes >= 1,
        "found no crate in passes/: is the tidy test looking in the right place?"
    );
    assert!(
        problems.is_empty(),
        "pass crates out of place:\n{}",
        problems.join("\n")
    );
}

#[test]
fn every_rust_file_opens_with_a_module_comment() {
    let root = workspace_root();
    let mut files = Vec::new();
    files_where(&root, &|p| p.extension().is_some_and(|e| e == "rs"), &mut files);
    let missing: Vec<String> = files
        .iter()
        .filter(|p| {
            fs::read_to_string(p)
                .map(|t| !t.trim_start().starts_with("//!"))
                .unwrap_or(false)
        })
        .map(|p| p.strip_prefix(&root).unwrap_or(p).display().to_string())
        .collect();
    assert!(
        missing.is_empty(),
        "files without a leading `//!` line:\n{}",
        missing.join("\n")
    );
}

/// The crates that may start processes (ARCHITECTURE.md, "Invariants"): the CLI, the build crate
/// (compilers, linkers, runners), the bench (the programs it measures) and the tests' own kit
/// (oracles: compilers and emulators), which nothing shipped depends on.
const MAY_START_PROCESSES: &[&str] = &[
    "framework/cli",
    "framework/build",
    "framework/bench",
    "framework/testkit",
];

#[test]
fn only_cli_build_and_bench_start_processes() {
    let root = workspace_root();
    let mut files = Vec::new();
    for top in ["framework", "guests", "hosts", "passes"] {
        files_where(
            &root.join(top),
            &|p| p.extension().is_some_and(|e| e == "rs"),
            &mut files,
        );
    }
    let mut offenders = Vec::new();
    let mut scanned = 0;
    for path in &files {
        let rel = path.strip_prefix(&root).unwrap_or(path);
        let rel_text = rel.display().to_string();
        // Only library and binary sources: a crate's own tests may run what they like.
        let in_src = rel.components().any(|c| c.as_os_str() == "src");
        if !in_src || MAY_START_PROCESSES.iter().any(|c| rel_text.starts_with(c)) {
            continue;
        }
        scanned += 1;
        let Ok(text) = fs::read_to_string(path) else { continue };
        if text.contains("process::Command") || text.contains("Command::new(") {
            offenders.push(rel_text);
        }
    }
    assert!(
        scanned >= 20,
        "scanned only {scanned} files: is the tidy test looking in the right place?"
    );
    assert!(
        offenders.is_empty(),
        "these files start processes, which only {MAY_START_PROCESSES:?} may do:\n{}",
        offenders.join("\n")
    );
}

/// The quoted words of the array constant `name` in `text`.
fn quoted_words_of(text: &str, name: &str) -> BTreeSet<String> {
    let start = text
        .find(&format!("const {name}: &[&str] = &["))
        .unwrap_or_else(|| panic!("no constant {name}"));
    let list = &text[start..];
    let list = &list[..list.find("];").unwrap_or(list.len())];
    list.split('"').skip(1).step_by(2).map(str::to_string).collect()
}

/// C's keywords are listed twice on purpose (ARCHITECTURE.md, "Deliberately absent"): the emitter
/// must not generate them and a recipe may not name an override after one, and neither crate may
/// depend on the other. The two lists must stay the same.
#[test]
fn the_c_keyword_lists_agree() {
    let root = workspace_root();
    let read = |rel: &str| fs::read_to_string(root.join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"));
    let emitter = quoted_words_of(&read("framework/emit-c/src/ctype.rs"), "RESERVED");
    let recipe = quoted_words_of(&read("framework/recipe/src/validate.rs"), "C_KEYWORDS");
    assert!(emitter.len() > 50 && emitter.contains("_Bool"), "{emitter:?}");
    assert_eq!(emitter, recipe);
}
