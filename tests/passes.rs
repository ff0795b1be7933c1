//! Passes are harmless and audited: every sample of tests/host-matrix.ron prints what its oracle
//! prints with each pass configuration (CI runs a reduced set: see `EVERY_SAMPLE_IN_CI`), and the
//! flag-ABI audit in a generation's manifest follows the program's use of flags across calls.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use rpt_tests::matrix::{Sample, Verdict, run_oracle, run_with, samples};
use rpt_tests::{build_pe, rpt_in, sha256_file, stderr_of};

/// The pass configurations every sample must pass with (as `--passes` lists); the empty one is the
/// baseline. switch-recovery comes after flag-abi, as in the default pipeline: before it, the
/// flag writes of a compare tree keep its blocks from being pure and it finds nothing; inline comes
/// first, so flag-abi sees the copies in their callers.
const CONFIGURATIONS: &[&str] = &[
    "",
    "inline",
    "flag-abi",
    "flag-abi,switch-recovery",
    "x87-regions",
    "memarg",
    "inline,flag-abi,switch-recovery,x87-regions,memarg",
];

/// The configurations CI runs on every sample: none and all together (the default pipeline runs in
/// every other end-to-end test). Each pass alone runs on the `ci` samples in CI and on all of them
/// by `scripts/host-matrix.sh`, which keeps CI within its time (125 recompilations take 9 minutes).
const EVERY_SAMPLE_IN_CI: &[&str] = &["", "inline,flag-abi,switch-recovery,x87-regions,memarg"];

#[test]
fn every_sample_prints_the_same_without_passes_and_with_all() {
    check_configurations(|_| true, EVERY_SAMPLE_IN_CI);
}

#[test]
fn ci_samples_print_the_same_with_each_pass_alone() {
    check_configurations(|sample| sample.ci, &single_passes());
}

#[test]
#[ignore = "about 8 minutes: scripts/host-matrix.sh runs it"]
fn every_sample_prints_the_same_with_each_pass_alone() {
    check_configurations(|sample| !sample.ci, &single_passes());
}

fn single_passes() -> Vec<&'static str> {
    CONFIGURATIONS
        .iter()
        .copied()
        .filter(|config| !EVERY_SAMPLE_IN_CI.contains(config))
        .collect()
}

/// Recompiles and runs each sample `chosen` picks with each configuration in `configs` on x86-64
/// and compares it with the sample's oracle.
fn check_configurations(chosen: impl Fn(&Sample) -> bool, configs: &[&str]) {
    let scratch = tempfile::tempdir().expect("tempdir");
    let cache = scratch.path().join("cache");
    let mut failures = Vec::new();
    let samples = samples().expect("tests/host-matrix.ron");
    for (index, sample) in samples.iter().enumerate().filter(|(_, s)| chosen(s)) {
        let oracle_dir = scratch.path().join(format!("oracle-{index}"));
        fs::create_dir_all(&oracle_dir).expect("oracle dir");
        let expected = match run_oracle(sample, &oracle_dir) {
            Ok(expected) => expected,
            Err(e) => {
                failures.push(format!("{}: oracle: {e}", sample.recipe));
                continue;
            }
        };
        for config in configs {
            let options = ["--passes", config];
            let verdict = run_with(
                sample,
                "x86-64",
                &options,
                &expected,
                &scratch.path().join("gen"),
                &cache,
            );
            if let Verdict::Fail(why) = verdict {
                failures.push(format!("{} with --passes {config:?}: {why}", sample.recipe));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Builds tests/guests/x86/passes/flag_return.c (with `defines`), writes a recipe for it and
/// returns the recipe's path and the address of `below`.
fn flag_return_guest(dir: &Path, name: &str, defines: &[&str]) -> (PathBuf, u64) {
    let source = rpt_tests::workspace_root().join("tests/guests/x86/passes/flag_return.c");
    let exe = dir.join(format!("{name}.exe"));
    build_pe(&source, &exe, defines);
    let recipe = dir.join(format!("{name}.ron"));
    let text = format!(
        "(\n    guest: \"x86-pe\",\n    image: \"{name}.exe\",\n    image_sha256: \"{}\",\n    \
         platform: \"win32-console\",\n    passes: [(name: \"flag-abi\")],\n)\n",
        sha256_file(&exe)
    );
    fs::write(&recipe, text).expect("write recipe");
    let nm = Command::new("i686-w64-mingw32-nm").arg(&exe).output().expect("nm runs");
    let symbols = String::from_utf8_lossy(&nm.stdout);
    let below = symbols
        .lines()
        .find(|l| l.ends_with(" _below"))
        .and_then(|l| u64::from_str_radix(l.split(' ').next()?, 16).ok())
        .unwrap_or_else(|| panic!("nm shows no _below:\n{symbols}"));
    (recipe, below)
}

/// Recompiles and runs `recipe`; returns the flag-abi report from its generation's manifest.
fn audit_of(dir: &Path, recipe: &Path) -> String {
    let gen_dir = dir.join("gen");
    let recipe = recipe.to_str().expect("utf-8 path");
    let out = rpt_in("run", recipe, &gen_dir, &dir.join("cache"), &["--report"]);
    let stderr = stderr_of(&out);
    assert_eq!(
        out.status.code(),
        Some(12),
        "exit status of {recipe}; rpt said:\n{stderr}"
    );
    assert!(
        stderr.contains("report of pass flag-abi:"),
        "--report prints the audit:\n{stderr}"
    );
    let stem = Path::new(recipe).file_stem().expect("recipe name");
    let generations: Vec<PathBuf> = fs::read_dir(gen_dir.join(stem))
        .expect("generation directory")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    assert_eq!(generations.len(), 1, "one generation of {recipe}");
    let manifest = fs::read_to_string(generations[0].join("manifest.ron")).expect("manifest.ron");
    // The report is one RON string in `pass_reports`; its lines are joined by `\n` escapes.
    let start = manifest
        .find("\"flag-abi: ")
        .expect("the manifest holds the flag-abi report");
    let end = manifest[start + 1..]
        .find('"')
        .map(|e| start + 1 + e)
        .expect("end of the report");
    manifest[start + 1..end].replace("\\n", "\n")
}

#[test]
fn the_audit_in_the_manifest_changes_when_a_caller_reads_a_flag_across_a_call() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (plain, below) = flag_return_guest(dir.path(), "no_flag_read", &[]);
    let (reading, below_too) = flag_return_guest(dir.path(), "flag_read", &["-DREAD_CF"]);
    let before = audit_of(dir.path(), &plain);
    assert!(
        !before.lines().any(|l| l.starts_with("flag-returning")),
        "no flag is read across a call, so no function returns one:\n{before}"
    );
    assert!(
        before.starts_with("flag-abi: 2 functions, 0 flag-returning"),
        "{before}"
    );
    let after = audit_of(dir.path(), &reading);
    let line_too = format!("flag-returning f_{below_too:08x}: cf");
    assert!(
        after.lines().any(|l| l == line_too),
        "`below` at {below:#x} returns CF to a caller that reads it:\n{after}"
    );
}
