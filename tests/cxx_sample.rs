//! The C++ sample (tests/guests/x86/cxx): 2,000 lines of the project's own C++ built with mingw
//! g++ -static, so libstdc++ and libgcc's DWARF-2 unwinder are guest code. Recompiled by
//! `recipes/cxx-sample.ron`, it prints exactly what Wine running the PE prints, and, with msvcrt's
//! "\r\n" as "\n", what the same sources built natively for i386 print: virtual dispatch,
//! strings, containers, streams, and exceptions thrown and caught across many frames (rethrow,
//! destructors during unwinding, catch by base class, exceptions leaving virtual calls and
//! constructors). A second test reads the generation: every landing pad is an entry of its own,
//! and every function owning landing pads runs under a resume point (docs/cxx-exceptions.md).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use rpt_tests::{rpt_binary, stderr_of, workspace_root};

fn sample_dir() -> PathBuf {
    workspace_root().join("tests/guests/x86/cxx")
}

/// Lives as long as the test process: the generation, the object cache and the Wine prefix.
fn scratch() -> &'static Path {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| tempfile::tempdir().expect("tempdir")).path()
}

/// `rpt run` of the recipe, once for both tests: its output, and the generation it left.
fn recompiled() -> &'static (Output, PathBuf) {
    static RUN: OnceLock<(Output, PathBuf)> = OnceLock::new();
    RUN.get_or_init(|| {
        let gen_dir = scratch().join("gen");
        let sandbox = tempfile::tempdir().expect("tempdir");
        let out = Command::new(rpt_binary())
            .arg("run")
            .arg(workspace_root().join("recipes/cxx-sample.ron"))
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
}

fn wine() -> Output {
    let cwd = tempfile::tempdir().expect("tempdir");
    let out = Command::new("wine")
        .arg(sample_dir().join("cxx.exe"))
        .current_dir(cwd.path())
        .env("WINEPREFIX", scratch().join("wine-prefix"))
        .env("WINEDEBUG", "-all")
        .env_remove("DISPLAY")
        .output()
        .expect("Wine is needed (scripts/install-deps.sh installs wine32:i386)");
    assert!(out.status.success(), "wine: {}", stderr_of(&out));
    out
}

fn native() -> Output {
    let dir = tempfile::tempdir().expect("tempdir");
    let exe = dir.path().join("cxx");
    rpt_testkit::run_tool(
        Command::new(sample_dir().join("build.sh")).arg("oracle").arg(&exe),
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

#[test]
fn cxx_sample_prints_what_wine_and_the_native_build_print() {
    let (out, _) = recompiled();
    assert_eq!(out.status.code(), Some(0), "rpt run: {}", stderr_of(out));
    let wine = wine();
    assert!(
        out.stdout == wine.stdout,
        "rpt printed:\n{}\nWine:\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&wine.stdout)
    );
    // msvcrt's stdout is in text mode: "\n" leaves it as "\r\n".
    let native = native();
    assert!(
        without_cr(&out.stdout) == native.stdout,
        "rpt's output differs from the native build's"
    );
    let text = String::from_utf8_lossy(&native.stdout);
    for section in [
        "== script",
        "== shapes",
        "== ledger",
        "== json",
        "== containers",
        "== construction",
        "== frames",
    ] {
        assert!(text.contains(section), "the sample prints {section}");
    }
}

#[test]
fn landing_pads_are_entries_and_their_functions_run_under_resume_points() {
    let (out, gen_dir) = recompiled();
    assert!(out.status.success(), "rpt run: {}", stderr_of(out));
    let image = std::fs::read(sample_dir().join("cxx.exe")).expect("cxx.exe");
    let image = rpt_guest_x86_pe::loader_pe::load(&image).expect("a PE");
    let eh = rpt_guest_x86_pe::eh::read(&image).expect("readable exception tables");
    // Each function's IR by name.
    let ir = rpt_tests::ir_text(gen_dir);
    let mut functions = std::collections::BTreeMap::<String, Vec<&str>>::new();
    let mut current = None;
    for line in ir.lines() {
        if let Some(name) = line.strip_prefix("function ") {
            let name = name.trim_end_matches(" {").to_string();
            functions.insert(name.clone(), Vec::new());
            current = Some(name);
        } else if let Some(f) = current.as_ref().and_then(|n| functions.get_mut(n)) {
            f.push(line);
        }
    }
    let name = |a: rpt_ir::GuestAddr| format!("f_{:08x}", a.0);
    let frame = format!("call {}", name(rpt_guest_x86_pe::eh::EH_FRAME_EXTERN));
    let install = format!("tail {}", name(rpt_guest_x86_pe::eh::EH_INSTALL_EXTERN));
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
                body.iter().any(|l| l.trim() == frame),
                "{} owns landing pads but establishes no resume point",
                name(f.start)
            );
        }
    }
    assert!(
        owners_lifted > 100,
        "{owners_lifted} functions owning landing pads were lifted"
    );
    // No function without landing pads pays for them.
    let with_check = functions
        .iter()
        .filter(|(_, body)| body.iter().any(|l| l.trim() == frame))
        .count();
    assert_eq!(
        with_check, owners_lifted,
        "only functions owning landing pads have the check"
    );
    // The unwinder's `mov esp, ecx; ret`: _Unwind_RaiseException, _Unwind_Resume, ...
    let installs = functions
        .values()
        .filter(|body| body.iter().any(|l| l.trim() == install))
        .count();
    assert!(installs >= 2, "{installs} functions end in the landing jump");
}
