//! A real static-glibc PowerPC program (tests/guests/ppc-glibc): its committed ELF and DOL are
//! what the build script builds, and recompiled from the DOL by `recipes/ppc-glibc-hello.ron` it
//! prints exactly what the ELF prints under `qemu-ppc -cpu 750cl`, with the same arguments and
//! environment, and exits with the same status. glibc's start-up reads the initial stack, the
//! auxiliary vector, the program headers and the PVR; its stdio, malloc, qsort and string
//! functions run as lifted code, through PIC jump tables; its AltiVec and transactional-memory
//! variants, which a 750 never runs, are guest faults that are never reached.

use std::path::PathBuf;
use std::process::{Command, Output};

use rpt_tests::{rpt_binary, stderr_of, workspace_root};

fn guest() -> PathBuf {
    workspace_root().join("tests/guests/ppc-glibc")
}

/// The arguments and environment both runs get.
const ARGS: [&str; 2] = ["one", "two words"];
const ENV: (&str, &str) = ("RPT_GLIBC_NO_SUCH_VARIABLE", "from the host");

fn qemu() -> Output {
    Command::new("qemu-ppc")
        .args(["-cpu", "750cl"])
        .arg(guest().join("hello.elf"))
        .args(ARGS)
        .env(ENV.0, ENV.1)
        .output()
        .expect("qemu-ppc runs (install qemu-user)")
}

#[test]
fn the_committed_glibc_guest_is_reproducible() {
    let check = Command::new(guest().join("build.sh"))
        .arg("check")
        .env("RPT", rpt_binary())
        .output()
        .expect("build.sh runs (install gcc-powerpc-linux-gnu and libc6-dev-powerpc-cross)");
    assert!(
        check.status.success(),
        "the committed glibc guest is not what build.sh builds:\n{}{}",
        String::from_utf8_lossy(&check.stdout),
        String::from_utf8_lossy(&check.stderr)
    );
}

#[test]
fn static_glibc_program_matches_qemu() {
    let dir = tempfile::tempdir().expect("tempdir");
    let recipe = workspace_root().join("recipes/ppc-glibc-hello.ron");
    let gen_dir = dir.path().join("gen");
    let mut extra = vec!["--"];
    extra.extend(ARGS);
    // rpt runs the program, which gets rpt's environment and the arguments after `--`.
    let ours = Command::new(rpt_binary())
        .args(["run", recipe.to_str().expect("utf-8"), "--gen-dir"])
        .arg(&gen_dir)
        .arg("--cache-dir")
        .arg(dir.path().join("cache"))
        .args(&extra)
        .current_dir(workspace_root())
        .env("CI", "1")
        .env(ENV.0, ENV.1)
        .output()
        .expect("rpt starts");
    let oracle = qemu();
    assert_eq!(oracle.status.code(), Some(44), "qemu-ppc: {}", stderr_of(&oracle));
    assert_eq!(
        String::from_utf8_lossy(&ours.stdout),
        String::from_utf8_lossy(&oracle.stdout),
        "the recompiled program's output differs from qemu-ppc's; rpt said:\n{}",
        stderr_of(&ours)
    );
    assert_eq!(ours.stdout, oracle.stdout);
    assert_eq!(ours.status.code(), oracle.status.code(), "{}", stderr_of(&ours));
    let said = stderr_of(&ours);
    // Every system call the start-up and stdio make is implemented: none is reported.
    assert!(!said.contains("rpt linux-syscalls:"), "{said}");
    // The code a 750 cannot run (AltiVec, transactional memory, glibc's `.long 0` abort, calls of
    // undefined weak functions) compiled to guest faults, listed once each.
    assert!(said.contains("places of guest code rpt could not lift"), "{said}");
    for what in [
        "call to 0x80000000, which is not code",
        "cannot lift the word 0x7c00051d",
    ] {
        assert!(said.contains(what), "no fault site says {what:?}:\n{said}");
    }
}
