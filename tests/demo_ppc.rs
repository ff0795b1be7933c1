//! The PowerPC samples: each one, recompiled from its DOL, prints exactly what the same ELF prints
//! under `qemu-ppc -cpu 750cl`, and exits with the same status. The paired-single sample, which
//! qemu cannot run, must print its committed `paired.expected` (derived by `expected.py` from
//! Gekko's documented behaviour) and exit with 0.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use rpt_tests::{rpt, rpt_in, sha256_file, stderr_of, workspace_root};

fn guests() -> PathBuf {
    workspace_root().join("tests/guests/ppc")
}

/// Builds a sample's ELF with the committed build script.
fn build_elf(name: &str, out: &Path) {
    let status = Command::new(guests().join("build.sh"))
        .args(["elf", name])
        .arg(out)
        .status()
        .expect("build.sh runs (install gcc-powerpc-linux-gnu: scripts/install-deps.sh)");
    assert!(status.success(), "building {name}.elf failed");
}

fn qemu(elf: &Path) -> Output {
    Command::new("qemu-ppc")
        .args(["-cpu", "750cl"])
        .arg(elf)
        .output()
        .expect("qemu-ppc runs (install qemu-user)")
}

fn assert_same(name: &str, oracle: &Output, ours: &Output) {
    assert!(!oracle.stdout.is_empty(), "qemu printed nothing for {name}");
    assert_eq!(
        String::from_utf8_lossy(&ours.stdout),
        String::from_utf8_lossy(&oracle.stdout),
        "{name}: recompiled output differs from qemu-ppc; rpt said:\n{}",
        stderr_of(ours)
    );
    assert_eq!(ours.stdout, oracle.stdout);
    assert_eq!(
        ours.status.code(),
        oracle.status.code(),
        "{name}: exit codes differ:\n{}",
        stderr_of(ours)
    );
}

/// Builds the sample, converts it, writes a recipe for it and runs it through rpt; the oracle is
/// qemu-ppc, or for paired singles (which qemu lacks) the committed expected output. Returns the
/// directory holding the generation (`gen/`).
fn check_sample(name: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let elf = dir.path().join(format!("{name}.elf"));
    let dol = dir.path().join(format!("{name}.dol"));
    build_elf(name, &elf);
    let expected = guests().join(format!("{name}.expected"));
    let oracle = if expected.exists() {
        // The status of a successful run: build an Output from the expected text.
        let mut out = Command::new("true").output().expect("true runs");
        out.stdout = std::fs::read(&expected).expect("read expected output");
        out
    } else {
        qemu(&elf)
    };
    convert_to_dol(&elf, &dol);
    let recipe = dir.path().join(format!("{name}.ron"));
    std::fs::write(
        &recipe,
        format!(
            "(guest: \"ppc-dol\", image: \"{name}.dol\", image_sha256: \"{}\", platform: \"linux-syscalls\", shards: 2)",
            sha256_file(&dol)
        ),
    )
    .expect("write recipe");
    let ours = rpt_in(
        "run",
        recipe.to_str().expect("utf-8"),
        &dir.path().join("gen"),
        &dir.path().join("cache"),
        &[],
    );
    assert_same(name, &oracle, &ours);
    dir
}

/// `rpt convert-image ppc-dol ELF DOL`, which must succeed.
fn convert_to_dol(elf: &Path, dol: &Path) {
    let convert = rpt(&[
        "convert-image",
        "ppc-dol",
        elf.to_str().expect("utf-8"),
        dol.to_str().expect("utf-8"),
    ]);
    assert!(
        convert.status.success(),
        "rpt convert-image failed:\n{}",
        stderr_of(&convert)
    );
}

#[test]
fn integer_sample_matches_qemu() {
    check_sample("integer");
}

#[test]
fn demo_recipe_matches_qemu_and_its_guest_is_reproducible() {
    let dir = tempfile::tempdir().expect("tempdir");
    rpt_tests::real::assert_build_check(&guests());
    let oracle = qemu(&guests().join("integer.elf"));
    let ours = rpt_in(
        "run",
        "recipes/demo-ppc.ron",
        &dir.path().join("gen"),
        &dir.path().join("cache"),
        &[],
    );
    assert_same("demo-ppc", &oracle, &ours);
}

/// The computed-goto interpreter shared with the x86 samples (tests/guests/x86/msvcrt/dispatch.c):
/// qemu's output, and each of its four dispatch sites (`rlwinm` masks the opcode, `lwzx` reads the
/// table of 24 labels, `bctr`) a switch over blocks of the interpreter's own function, the table's
/// base in a register set once at its entry.
#[test]
fn computed_goto_sample_matches_qemu_and_dispatches_inside_its_function() {
    let dir = check_sample("dispatch");
    let ir = rpt_tests::ir_text(&dir.path().join("gen"));
    let mut function = "";
    let mut switches = std::collections::BTreeMap::<&str, usize>::new();
    for line in ir.lines() {
        if let Some(name) = line.strip_prefix("function ") {
            function = name;
        } else if line.trim_start().starts_with("switch ") {
            let distinct: std::collections::BTreeSet<&str> = line
                .split(['[', ']', ','])
                .map(str::trim)
                .filter(|b| b.starts_with("block"))
                .collect();
            // 24 labels and the default.
            if distinct.len() == 25 {
                *switches.entry(function).or_default() += 1;
            }
        }
    }
    assert_eq!(switches.len(), 1, "one function dispatches: {switches:?}");
    assert!(switches.values().all(|&n| n == 4), "four dispatch sites: {switches:?}");
}

#[test]
fn float_sample_matches_qemu() {
    check_sample("float");
}

#[test]
fn paired_single_sample_matches_its_documented_results() {
    check_sample("paired");
}

#[test]
fn mem1_and_its_uncached_mirror_are_one_memory() {
    let dir = tempfile::tempdir().expect("tempdir");
    let elf = dir.path().join("mirror.elf");
    let dol = dir.path().join("mirror.dol");
    let status = Command::new("powerpc-linux-gnu-gcc")
        .args([
            "-nostdlib",
            "-static",
            "-fno-pie",
            "-no-pie",
            "-Wl,--build-id=none",
            "-Wl,-Ttext=0x80003100",
        ])
        .arg(guests().join("mem1_mirror.S"))
        .arg("-o")
        .arg(&elf)
        .status()
        .expect("powerpc-linux-gnu-gcc runs");
    assert!(status.success(), "building mem1_mirror.S failed");
    convert_to_dol(&elf, &dol);
    let recipe = dir.path().join("mirror.ron");
    std::fs::write(
        &recipe,
        format!(
            "(guest: \"ppc-dol\", image: \"mirror.dol\", image_sha256: \"{}\", platform: \"linux-syscalls\")",
            sha256_file(&dol)
        ),
    )
    .expect("write recipe");
    // On every host: the fold is in the lifted code, so no host has to map memory twice.
    for host in ["x86-64", "aarch64", "loongarch64"] {
        let out = rpt_in(
            "run",
            recipe.to_str().expect("utf-8"),
            &dir.path().join("gen"),
            &dir.path().join("cache"),
            &["--host", host],
        );
        assert_eq!(out.status.code(), Some(42), "{host}: {}", stderr_of(&out));
    }
}
