//! The run-time tier end to end: the sample whose functions are reached only through addresses
//! computed at run time (tests/guests/bench/computed.c), as a PE and as a DOL, on every host.
//!
//! The first `rpt run` runs those functions in the tier: its output is the oracle's, it reports a
//! share of guest instructions run compiled below 100%, and it writes the coverage file. The second
//! `rpt run` recompiles with the file's entries, names them as new to discovery, runs everything
//! compiled (100%, the tier never entered) and still prints what the oracle prints. Both runs count
//! the same guest instructions, which holds the tier's count to compiled code's.

use std::fs;
use std::path::Path;
use std::process::{Command, Output};

use rpt_tests::matrix::{self, HOSTS};
use rpt_tests::{rpt_binary, sha256_file, stderr_of, workspace_root};

/// The sample's recipe for `guest` with instruction counting on, written into `dir`.
fn counting_recipe(dir: &Path, guest: &str) -> String {
    let original = workspace_root().join(format!("recipes/tier-computed-{guest}.ron"));
    let text = fs::read_to_string(&original).expect("the sample's recipe");
    let image_dir = workspace_root().join("tests/guests/bench");
    let text = text
        .replace("\"../tests/guests/bench/", &format!("\"{}/", image_dir.display()))
        .replace("host: \"x86-64\",", "host: \"x86-64\",\n    count_instructions: true,");
    assert!(text.contains("count_instructions"), "the recipe changed shape:\n{text}");
    let path = dir.join(format!("computed-{guest}.ron"));
    fs::write(&path, text).expect("writing the recipe");
    path.display().to_string()
}

fn rpt_run(recipe: &str, host: &str, gen_dir: &Path, cache_dir: &Path, stdin: &[u8]) -> Output {
    rpt_run_with(recipe, host, gen_dir, cache_dir, stdin, &[])
}

fn rpt_run_with(recipe: &str, host: &str, gen_dir: &Path, cache_dir: &Path, stdin: &[u8], extra: &[&str]) -> Output {
    let mut cmd = Command::new(rpt_binary());
    cmd.args(["run", recipe, "--host", host])
        .args(extra)
        .arg("--gen-dir")
        .arg(gen_dir)
        .arg("--cache-dir")
        .arg(cache_dir)
        .env("CI", "1");
    matrix::output_with_input(cmd, stdin).expect("rpt starts")
}

/// The text of every generation's manifest under `recipe_dir` (`gen/<recipe>/`).
fn generation_manifests(recipe_dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for entry in fs::read_dir(recipe_dir).expect("the recipe's generations").flatten() {
        if let Ok(text) = fs::read_to_string(entry.path().join("manifest.ron")) {
            out.push(text);
        }
    }
    out
}

/// `(compiled, total)` from the runtime's `guest instructions run compiled: A of T (P%)` line.
fn compiled_share(stderr: &str) -> (u64, u64) {
    let line = stderr
        .lines()
        .find_map(|l| l.strip_prefix("rpt: guest instructions run compiled: "))
        .unwrap_or_else(|| panic!("no count of compiled instructions:\n{stderr}"));
    let mut words = line.split_whitespace();
    let compiled = words.next().and_then(|w| w.parse().ok());
    let total = words.nth(1).and_then(|w| w.parse().ok());
    match (compiled, total) {
        (Some(c), Some(t)) => (c, t),
        _ => panic!("cannot read the count line {line:?}"),
    }
}

#[test]
fn code_discovery_missed_runs_in_the_tier_then_compiled_after_one_recompile_on_every_host() {
    let work = tempfile::tempdir().expect("tempdir");
    let cache = work.path().join("cache");
    let samples = matrix::samples().expect("tests/host-matrix.ron");
    for guest in ["x86", "ppc"] {
        let sample = samples
            .iter()
            .find(|s| s.recipe == format!("recipes/tier-computed-{guest}.ron"))
            .expect("the sample is in the host matrix");
        let oracle_dir = work.path().join(format!("oracle-{guest}"));
        fs::create_dir_all(&oracle_dir).expect("oracle dir");
        let expected = matrix::run_oracle(sample, &oracle_dir).expect("the oracle runs");
        let recipe = counting_recipe(work.path(), guest);
        let mut totals = Vec::new();
        for host in HOSTS {
            let what = format!("{guest} on {host}");
            let gen_dir = work.path().join(format!("gen-{guest}-{host}"));
            let first = rpt_run(&recipe, host, &gen_dir, &cache, sample.stdin.as_bytes());
            let stderr = stderr_of(&first);
            assert_eq!(first.stdout, expected.stdout, "{what}, first run: output\n{stderr}");
            assert_eq!(
                first.status.code(),
                expected.status,
                "{what}, first run: status\n{stderr}"
            );
            let (compiled, total) = compiled_share(&stderr);
            assert!(
                compiled < total,
                "{what}: the first run ran everything compiled\n{stderr}"
            );
            assert!(stderr.contains("rpt: the run-time tier ran"), "{what}\n{stderr}");
            let coverage = fs::read_to_string(gen_dir.join(format!("computed-{guest}/tier-coverage.txt")))
                .unwrap_or_else(|e| panic!("{what}: no coverage file: {e}\n{stderr}"));
            let entries = coverage.lines().filter(|l| l.starts_with("0x")).count();
            // The six hidden functions, each entered through a computed address.
            assert_eq!(entries, 6, "{what}: coverage file:\n{coverage}");

            let second = rpt_run(&recipe, host, &gen_dir, &cache, sample.stdin.as_bytes());
            let stderr = stderr_of(&second);
            assert_eq!(second.stdout, expected.stdout, "{what}, second run: output\n{stderr}");
            assert_eq!(
                second.status.code(),
                expected.status,
                "{what}, second run: status\n{stderr}"
            );
            assert!(
                stderr.contains("run-time tier coverage: 6 entries from") && stderr.contains("6 of them new"),
                "{what}: the recompile did not read the coverage file\n{stderr}"
            );
            assert_eq!(compiled_share(&stderr), (total, total), "{what}: second run\n{stderr}");
            // The manifest of the generation built from the coverage file records the file's hash.
            let coverage_file = gen_dir.join(format!("computed-{guest}/tier-coverage.txt"));
            let manifests = generation_manifests(&gen_dir.join(format!("computed-{guest}")));
            let wanted = format!("tier_coverage_sha256: Some(\"{}\")", sha256_file(&coverage_file));
            assert_eq!(
                manifests.iter().filter(|m| m.contains(&wanted)).count(),
                1,
                "{what}: one generation records {wanted}"
            );
            assert!(stderr.contains("(100.00%)"), "{what}\n{stderr}");
            assert!(!stderr.contains("rpt: the run-time tier ran"), "{what}\n{stderr}");
            totals.push(total);
        }
        // The same guest instructions on every host, counted by compiled code and by the tier alike.
        assert!(totals.windows(2).all(|w| w[0] == w[1]), "{guest}: {totals:?}");
    }
}

/// With the tier turned off, the same program stops where it first reaches code no function holds,
/// naming the address and the call that got there, as before the tier existed.
#[test]
fn without_the_tier_a_miss_stops_the_program_naming_the_address_and_the_caller() {
    let work = tempfile::tempdir().expect("tempdir");
    let out = rpt_run_with(
        "recipes/tier-computed-ppc.ron",
        "x86-64",
        &work.path().join("gen"),
        &work.path().join("cache"),
        b"3\n",
        &["--run-time-tier", "false"],
    );
    let stderr = stderr_of(&out);
    assert!(out.status.code() == Some(125), "{stderr}");
    let exit = stderr
        .lines()
        .find(|l| l.contains("unlifted code"))
        .unwrap_or_else(|| panic!("no exit at unlifted code:\n{stderr}"));
    assert!(exit.starts_with("rpt: guest exit at 0x8000"), "{exit}");
    assert!(stderr.contains("  called from 0x"), "{stderr}");
    assert!(!stderr.contains("run-time tier ran"), "{stderr}");
}
