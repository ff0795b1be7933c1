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

/// What tests/guests/ppc-glibc/linux_abi.c prints through rpt, run as `linux_abi x "y z"` with
/// RPT_ABI_PROBE=yes, standard output a pipe and `abi.txt` in the sandbox. Under qemu-ppc 7.2 it
/// prints the same but for AT_HWCAP (qemu says 0x08000000, FPU alone; Linux's 750CL entry adds
/// PPC_FEATURE_32 and HAS_MMU) and AT_PHDR (qemu gives every program its headers; rpt gives them
/// to programs with TLS, which this one has not), and qemu orders the vector differently.
const LINUX_ABI_EXPECTED: &str = "argc 3
sp aligned 1
argv[0] set 1
arg x
arg y z
env RPT_ABI_PROBE=yes
AT_DCACHEBSIZE 32
AT_ICACHEBSIZE 32
AT_PAGESZ 4096
AT_ENTRY is _start 1
AT_HWCAP 0x8c000000
AT_CLKTCK 100
AT_RANDOM aligned 1
AT_SECURE 0
AT_EXECFN present 1
AT_HWCAP2 0
pvr 0x00087210
uname 0
Linux ppc
statx 0
statx is a fifo 1
ioctl TCGETS -25
ioctl TIOCGWINSZ -25
getrandom 8
clock_gettime64 0
monotonic 1
open 3
read 13
sandbox file
_llseek 0
position 13
close 0
read after close -9
openat absolute -2
writev: a+b
writev 12
brk grows 1
mmap2 page aligned 1
call 500 -38
call 500 again -38
rseq -38
";

#[test]
fn linux_syscalls_gives_the_kernels_start_and_answers_calls_as_linux() {
    let dir = tempfile::tempdir().expect("tempdir");
    let elf = dir.path().join("linux_abi.elf");
    let dol = dir.path().join("linux_abi.dol");
    let flags = "-mcpu=750 -O2 -mhard-float -ffreestanding -fno-builtin -nostdlib -fno-pie -no-pie -static -fno-pic \
                 -mno-sdata -fno-asynchronous-unwind-tables -Wall -Wextra -Werror -Wl,--build-id=none \
                 -Wl,--no-warn-rwx-segments";
    let built = Command::new("powerpc-linux-gnu-gcc")
        .args(flags.split_whitespace())
        .arg("-T")
        .arg(workspace_root().join("tests/guests/ppc/gc.ld"))
        .arg(guest().join("linux_abi.c"))
        .arg("-o")
        .arg(&elf)
        .output()
        .expect("powerpc-linux-gnu-gcc runs (install gcc-powerpc-linux-gnu)");
    assert!(built.status.success(), "{}", stderr_of(&built));
    let convert = rpt_tests::rpt(&[
        "convert-image",
        "ppc-dol",
        elf.to_str().expect("utf-8"),
        dol.to_str().expect("utf-8"),
    ]);
    assert!(convert.status.success(), "{}", stderr_of(&convert));
    let recipe = dir.path().join("linux_abi.ron");
    std::fs::write(
        &recipe,
        format!(
            "(guest: \"ppc-dol\", image: \"linux_abi.dol\", image_sha256: \"{}\", platform: \"linux-syscalls\", shards: 1)",
            rpt_tests::sha256_file(&dol)
        ),
    )
    .expect("write recipe");
    let sandbox = dir.path().join("sandbox");
    std::fs::create_dir(&sandbox).expect("sandbox");
    std::fs::write(sandbox.join("abi.txt"), "sandbox file\n").expect("sandbox file");
    let run_on = |host: &str, args: &[&str]| {
        Command::new(rpt_binary())
            .args(["run", recipe.to_str().expect("utf-8"), "--host", host, "--gen-dir"])
            .arg(dir.path().join("gen"))
            .arg("--cache-dir")
            .arg(dir.path().join("cache"))
            .arg("--")
            .args(args)
            .env("CI", "1")
            .env("RPT_ABI_PROBE", "yes")
            .env("RPT_SANDBOX", &sandbox)
            .output()
            .expect("rpt starts")
    };
    let run = |args: &[&str]| run_on("x86-64", args);
    let ours = run(&["x", "y z"]);
    let said = stderr_of(&ours);
    // The call of the undefined weak function compiled to a fault site, which this run never reaches.
    assert!(said.contains("call to 0x80000000, which is not code"), "{said}");
    assert_eq!(
        String::from_utf8_lossy(&ours.stdout),
        LINUX_ABI_EXPECTED,
        "rpt said:\n{said}"
    );
    assert_eq!(ours.status.code(), Some(7), "{said}");
    // The unimplemented call and ioctl request are reported once each, by number.
    let reports: Vec<_> = said.lines().filter(|l| l.contains("rpt linux-syscalls:")).collect();
    assert_eq!(
        reports,
        [
            "rpt linux-syscalls: system call 54 (ioctl other than TCGETS) is not implemented: it fails with ENOTTY",
            "rpt linux-syscalls: system call 500 is not implemented: it fails with ENOSYS"
        ],
        "{said}"
    );

    // With five arguments the program makes that call: a guest fault at the call, which names its
    // target (qemu-ppc runs into the ELF header there and dies of SIGILL).
    let faulted = run(&["1", "2", "3", "4", "5"]);
    let said = stderr_of(&faulted);
    assert_eq!(faulted.status.code(), Some(123), "{said}");
    assert!(
        said.contains("guest fault") || said.contains("could not lift"),
        "{said}"
    );
    assert!(said.contains("call to 0x80000000, which is not code"), "{said}");

    // The platform is C on the runtime's services alone: the other hosts (under qemu-user; the
    // LoongArch64 one freestanding, with no C library) give the same start and answers.
    for host in ["aarch64", "loongarch64"] {
        let theirs = run_on(host, &["x", "y z"]);
        assert_eq!(
            String::from_utf8_lossy(&theirs.stdout),
            LINUX_ABI_EXPECTED,
            "on {host}; rpt said:\n{}",
            stderr_of(&theirs)
        );
        assert_eq!(theirs.status.code(), Some(7), "on {host}: {}", stderr_of(&theirs));
    }
}
