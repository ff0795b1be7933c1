//! The C++ sample (tests/guests/x86/cxx): 2,010 lines of the project's own C++ built with mingw
//! g++ -static, so libstdc++ and libgcc's DWARF-2 unwinder are guest code. Recompiled by
//! `recipes/cxx-sample.ron`, it prints exactly what Wine running the PE prints, and, with msvcrt's
//! "\r\n" as "\n", what the same sources built natively for i386 print: virtual dispatch,
//! strings, containers, streams, and exceptions thrown and caught across many frames (rethrow,
//! destructors during unwinding, catch by base class, exceptions leaving virtual calls and
//! constructors). Another test reads the generation: every landing pad is an entry of its own,
//! and every function owning landing pads runs under a resume point (docs/cxx-exceptions.md).
//!
//! Its generated C is about 100 MB (libstdc++'s streams and locales are 4,300 functions), a dozen
//! minutes of clang on two cores, so CI runs both checks on `mini.cpp` (recipe `cxx-mini`, the same
//! exception machinery without iostreams, under a minute) and the full sample runs with
//! `cargo test -p rpt-tests --test cxx_sample -- --ignored`.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::{Command, Output};
use std::sync::Mutex;

use rpt_testkit::process_scratch as scratch;

use rpt_tests::{rpt_binary, stderr_of, workspace_root};

/// One of the two programs: its PE, recipe and native oracle.
struct Sample {
    exe: &'static str,
    recipe: &'static str,
    /// `build.sh`'s command for the native oracle.
    oracle: &'static str,
    /// At least this many functions owning landing pads are lifted.
    eh_functions: usize,
}

const FULL: Sample = Sample {
    exe: "cxx.exe",
    recipe: "recipes/cxx-sample.ron",
    oracle: "oracle",
    eh_functions: 300,
};

const MINI: Sample = Sample {
    exe: "mini.exe",
    recipe: "recipes/cxx-mini.ron",
    oracle: "oracle-mini",
    eh_functions: 20,
};

fn sample_dir() -> PathBuf {
    workspace_root().join("tests/guests/x86/cxx")
}

/// `rpt run` of the sample's recipe on x86-64, once per sample for both of its tests: its output,
/// and the generation it left.
fn recompiled(sample: &Sample) -> (Output, PathBuf) {
    recompiled_on(sample, "x86-64")
}

/// The same for `host` (AArch64 and LoongArch64 run under qemu-user).
fn recompiled_on(sample: &Sample, host: &'static str) -> (Output, PathBuf) {
    type Runs = BTreeMap<(&'static str, &'static str), (Output, PathBuf)>;
    static RUNS: Mutex<Runs> = Mutex::new(BTreeMap::new());
    let mut runs = RUNS.lock().unwrap_or_else(|e| e.into_inner());
    runs.entry((sample.recipe, host))
        .or_insert_with(|| {
            let gen_dir = scratch().join(sample.exe).join(format!("gen-{host}"));
            let sandbox = tempfile::tempdir().expect("tempdir");
            let out = Command::new(rpt_binary())
                .arg("run")
                .arg(workspace_root().join(sample.recipe))
                .args(["--host", host])
                .arg("--gen-dir")
                .arg(&gen_dir)
                .arg("--cache-dir")
                .arg(scratch().join("cache"))
                .current_dir(sandbox.path())
                .env("CI", "1")
                .env("RPT_SANDBOX", sandbox.path())
                .output()
                .expect("rpt run");
            (out, gen_dir)
        })
        .clone()
}

fn wine(sample: &Sample) -> Output {
    static PREFIX: Mutex<()> = Mutex::new(());
    // The first run makes the prefix; two first runs must not race.
    let _one_at_a_time = PREFIX.lock().unwrap_or_else(|e| e.into_inner());
    let cwd = tempfile::tempdir().expect("tempdir");
    let out = Command::new("wine")
        .arg(sample_dir().join(sample.exe))
        .current_dir(cwd.path())
        .env("WINEPREFIX", scratch().join("wine-prefix"))
        .env("WINEDEBUG", "-all")
        .env_remove("DISPLAY")
        .output()
        .expect("Wine is needed (scripts/install-deps.sh installs wine32:i386)");
    assert!(out.status.success(), "wine: {}", stderr_of(&out));
    out
}

fn native(sample: &Sample) -> Output {
    let dir = tempfile::tempdir().expect("tempdir");
    let exe = dir.path().join("oracle");
    rpt_testkit::run_tool(
        Command::new(sample_dir().join("build.sh")).arg(sample.oracle).arg(&exe),
        b"",
        "building the native oracle needs g++-12-multilib",
    );
    let out = Command::new(&exe)
        .current_dir(dir.path())
        .output()
        .expect("the native oracle");
    assert!(out.status.success());
    out
}

fn without_cr(bytes: &[u8]) -> Vec<u8> {
    bytes.iter().copied().filter(|&b| b != b'\r').collect()
}

/// rpt's output is Wine's byte for byte, and the native build's once msvcrt's text mode ("\n"
/// leaves stdout as "\r\n") is undone.
fn prints_what_its_oracles_print(sample: &Sample) -> String {
    prints_what_its_oracles_print_on(sample, "x86-64")
}

fn prints_what_its_oracles_print_on(sample: &Sample, host: &'static str) -> String {
    let (out, _) = recompiled_on(sample, host);
    assert_eq!(out.status.code(), Some(0), "rpt run on {host}: {}", stderr_of(&out));
    let wine = wine(sample);
    assert!(
        out.stdout == wine.stdout,
        "rpt on {host} printed:\n{}\nWine:\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&wine.stdout)
    );
    let native = native(sample);
    assert!(
        without_cr(&out.stdout) == native.stdout,
        "rpt's output differs from the native build's"
    );
    String::from_utf8_lossy(&native.stdout).into_owned()
}

/// Every landing pad is a function of its own in the generated IR; every lifted function owning
/// landing pads, and no other, calls `rpt_x86_eh_frame`; the unwinder's last `ret` is a tail call of
/// `rpt_x86_eh_install`.
fn landing_pads_are_entries(sample: &Sample) {
    let (out, gen_dir) = recompiled(sample);
    assert!(out.status.success(), "rpt run: {}", stderr_of(&out));
    let image = std::fs::read(sample_dir().join(sample.exe)).expect("the PE");
    let image = rpt_guest_x86_pe::loader_pe::load(&image).expect("a PE");
    let eh = rpt_guest_x86_pe::eh::read(&image).expect("readable exception tables");
    let ir = rpt_tests::ir_text(&gen_dir);
    let mut functions = BTreeMap::<String, Vec<&str>>::new();
    let mut current = None;
    for line in ir.lines() {
        if let Some(name) = line.strip_prefix("function ") {
            let name = name.trim_end_matches(" {").to_string();
            functions.insert(name.clone(), Vec::new());
            current = Some(name);
        } else if let Some(f) = current.as_ref().and_then(|n| functions.get_mut(n)) {
            f.push(line.trim());
        }
    }
    let name = |a: rpt_ir::GuestAddr| format!("f_{:08x}", a.0);
    let frame = format!("call {},", name(rpt_guest_x86_pe::eh::EH_FRAME_EXTERN));
    let install = format!("tail {}", name(rpt_guest_x86_pe::eh::EH_INSTALL_EXTERN));
    let calls_frame = |body: &[&str]| body.iter().any(|l| l.starts_with(&frame));
    let mut owners_lifted = 0;
    for f in eh.functions.values() {
        for &pad in &f.landing_pads {
            assert!(
                functions.contains_key(&name(pad)),
                "landing pad {pad} of {} is not an entry",
                name(f.start)
            );
        }
        // An FDE start that no call reaches (a `.cold` part) is not a function of its own.
        if let Some(body) = functions.get(&name(f.start)) {
            owners_lifted += 1;
            assert!(
                calls_frame(body),
                "{} owns landing pads but establishes no resume point",
                name(f.start)
            );
        }
    }
    assert!(
        owners_lifted >= sample.eh_functions,
        "only {owners_lifted} functions owning landing pads were lifted"
    );
    let with_check = functions.values().filter(|body| calls_frame(body)).count();
    assert_eq!(
        with_check, owners_lifted,
        "only functions owning landing pads have the check"
    );
    // _Unwind_RaiseException, _Unwind_Resume, _Unwind_Resume_or_Rethrow, _Unwind_ForcedUnwind.
    let installs = functions
        .values()
        .filter(|body| body.iter().any(|l| *l == install))
        .count();
    assert!(installs >= 2, "{installs} functions end in the landing jump");
}

#[test]
fn mini_sample_prints_what_wine_and_the_native_build_print() {
    let text = prints_what_its_oracles_print(&MINI);
    assert!(text.contains("caught 1000"), "{text}");
}

/// The exceptions, the unwinder and the resume points on the other hosts (through qemu-user): the
/// host frames dropped between a throw and its landing pad are AArch64's and LoongArch64's (on the
/// latter through the shim's own setjmp/longjmp).
#[test]
fn mini_sample_prints_what_its_oracles_print_on_aarch64_and_loongarch64() {
    for host in ["aarch64", "loongarch64"] {
        let text = prints_what_its_oracles_print_on(&MINI, host);
        assert!(text.contains("caught 1000"), "{host}: {text}");
    }
}

#[test]
fn mini_sample_landing_pads_are_entries_and_their_functions_run_under_resume_points() {
    landing_pads_are_entries(&MINI);
}

#[test]
#[ignore = "about 100 MB of generated C, a dozen minutes on two cores; CI runs the mini sample"]
fn cxx_sample_prints_what_wine_and_the_native_build_print() {
    let text = prints_what_its_oracles_print(&FULL);
    for section in [
        "== script",
        "== shapes",
        "== ledger",
        "== json",
        "== containers",
        "== construction",
        "== frames",
        "== done",
    ] {
        assert!(text.contains(section), "the sample prints {section}");
    }
}

/// The full sample on the other hosts: scripts/host-matrix.sh runs these.
#[test]
#[ignore = "about 100 MB of generated C per host, a dozen minutes on two cores each"]
fn cxx_sample_prints_what_its_oracles_print_on_aarch64() {
    prints_what_its_oracles_print_on(&FULL, "aarch64");
}

#[test]
#[ignore = "about 100 MB of generated C per host, a dozen minutes on two cores each"]
fn cxx_sample_prints_what_its_oracles_print_on_loongarch64() {
    prints_what_its_oracles_print_on(&FULL, "loongarch64");
}

#[test]
#[ignore = "about 100 MB of generated C, a dozen minutes on two cores; CI runs the mini sample"]
fn cxx_sample_landing_pads_are_entries_and_their_functions_run_under_resume_points() {
    landing_pads_are_entries(&FULL);
}
