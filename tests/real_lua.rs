//! Lua 5.4 from Debian's source package, built by mingw (tests/real/lua): recompiled by
//! `recipes/real-lua-pe.ron`, the interpreter runs bench.lua (recursion, tables, strings and
//! patterns, closures, metatables, coroutines, errors through setjmp/longjmp, floats, utf8, load)
//! and prints exactly what its oracles print, which build.sh recorded in bench.out (Wine running
//! the PE, and the native i386 build of the same sources; `build.sh check` runs both again).
//! Its bytecode dispatch, GCC's computed goto, compiles to switches inside `luaV_execute`.
//! The same interpreter linked against static glibc for PowerPC (`lua.elf`, converted to
//! `lua.dol`, `recipes/real-lua-dol.ron`) prints what `qemu-ppc -cpu 750cl lua.elf` prints.

use std::fs;
use std::path::Path;
use std::process::{Command, Output};

use rpt_tests::{rpt_binary, stderr_of, workspace_root};

fn lua_dir() -> std::path::PathBuf {
    workspace_root().join("tests/real/lua")
}

/// A fresh directory holding a copy of the script `script`.
fn script_sandbox(script: &str) -> tempfile::TempDir {
    let sandbox = tempfile::tempdir().expect("tempdir");
    fs::copy(lua_dir().join(script), sandbox.path().join(script)).expect("copy the script");
    sandbox
}

/// `rpt run` of the PE's recipe for `host`, with bench.lua in a fresh sandbox; the generation goes to `gen_dir`.
fn run_bench(host: &str, gen_dir: &Path) -> Output {
    run_recipe("recipes/real-lua-pe.ron", "bench.lua", host, gen_dir)
}

/// `rpt run` of `recipe` (relative to the workspace) for `host` on `script` in a fresh sandbox.
fn run_recipe(recipe: &str, script: &str, host: &str, gen_dir: &Path) -> Output {
    let sandbox = script_sandbox(script);
    Command::new(rpt_binary())
        .arg("run")
        .arg(workspace_root().join(recipe))
        .args(["--host", host, "--gen-dir"])
        .arg(gen_dir)
        .args(["--", script])
        .current_dir(sandbox.path())
        .env("CI", "1")
        .env("RPT_SANDBOX", sandbox.path())
        .output()
        .expect("rpt run")
}

/// What the oracles print for bench.lua, as msvcrt's text mode writes it ("\r\n").
fn bench_out() -> Vec<u8> {
    fs::read(lua_dir().join("bench.out")).expect("bench.out")
}

fn assert_prints_the_oracles_output(host: &str, out: &Output) {
    assert_prints(host, out, &bench_out());
}

fn assert_prints(host: &str, out: &Output, want: &[u8]) {
    assert!(
        out.stdout == want,
        "on {host}, rpt printed:\n{}\nthe oracles:\n{}\nrpt said:\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(want),
        stderr_of(out)
    );
    assert_eq!(out.status.code(), Some(0), "on {host}: {}", stderr_of(out));
}

#[test]
fn lua_runs_its_bench_as_its_oracles_do_and_dispatches_inside_its_interpreter() {
    let gen_dir = tempfile::tempdir().expect("tempdir");
    let out = run_bench("x86-64", gen_dir.path());
    assert_prints_the_oracles_output("x86-64", &out);
    // Each dispatch site of luaV_execute (`goto *disptab[GET_OPCODE(i)]`, 83 opcodes under a 7-bit
    // mask) is a switch over the interpreter's own blocks: 83 cases and the default.
    let ir = rpt_tests::ir_text(gen_dir.path());
    let mut function = "";
    let mut dispatchers = std::collections::BTreeMap::<&str, usize>::new();
    for line in ir.lines() {
        if let Some(name) = line.strip_prefix("function ") {
            function = name;
        } else if line.trim_start().starts_with("switch ") && line.matches("block").count() == 84 {
            *dispatchers.entry(function).or_default() += 1;
        }
    }
    assert_eq!(
        dispatchers.len(),
        1,
        "one function dispatches the opcodes: {dispatchers:?}"
    );
    assert!(
        dispatchers.values().all(|&n| n >= 4),
        "gcc repeats the dispatch at the end of the handlers: {dispatchers:?}"
    );
}

/// The same on AArch64 (through qemu-aarch64): the interpreter, its setjmp/longjmp and its floats
/// on a host of another architecture.
#[test]
#[ignore = "CI runs the PE on LoongArch64 and the DOL on AArch64: scripts/host-matrix.sh runs it"]
fn lua_runs_its_bench_on_aarch64() {
    let gen_dir = tempfile::tempdir().expect("tempdir");
    let out = run_bench("aarch64", gen_dir.path());
    assert_prints_the_oracles_output("aarch64", &out);
}

/// The PE on LoongArch64, the freestanding host (through qemu-loongarch64): Lua's math library
/// calls msvcrt's `acos`, `asin`, `log10` and `tan`, which run there on the software x87 unit's
/// 128-bit float (guests/x86-pe/runtime/x87_soft_libm.h) and print the digits glibc's do.
#[test]
fn lua_runs_its_bench_on_loongarch64() {
    let gen_dir = tempfile::tempdir().expect("tempdir");
    let out = run_bench("loongarch64", gen_dir.path());
    assert_prints_the_oracles_output("loongarch64", &out);
}

/// The static-glibc PowerPC build as a DOL, on its linux-syscalls platform: glibc's start-up,
/// stdio and malloc, Lua's errors and coroutines through glibc's setjmp and longjmp (which the
/// recipe names), and its exit, which closes the standard files through `io_noclose`, a function
/// only reached through a pointer built on both sides of a call. Its oracle is `qemu-ppc -cpu
/// 750cl lua.elf`: run here too, and recorded as bench.out with "\n" for "\r\n" (the same lines;
/// `build.sh check` compares them).
#[test]
fn the_dol_runs_its_bench_as_qemu_ppc() {
    let qemu = qemu_ppc("bench.lua");
    let recorded: Vec<u8> = bench_out().into_iter().filter(|&b| b != b'\r').collect();
    assert!(
        qemu.stdout == recorded && qemu.status.success(),
        "qemu-ppc no longer prints bench.out: {}",
        stderr_of(&qemu)
    );
    let gen_dir = tempfile::tempdir().expect("tempdir");
    let out = run_recipe("recipes/real-lua-dol.ron", "bench.lua", "x86-64", gen_dir.path());
    assert_prints("x86-64 (the DOL)", &out, &qemu.stdout);
}

/// `qemu-ppc -cpu 750cl lua.elf SCRIPT` in a fresh sandbox holding the script.
fn qemu_ppc(script: &str) -> Output {
    let sandbox = script_sandbox(script);
    Command::new("qemu-ppc")
        .args(["-cpu", "750cl"])
        .arg(lua_dir().join("lua.elf"))
        .arg(script)
        .current_dir(sandbox.path())
        .output()
        .expect("qemu-ppc runs (qemu-user)")
}

#[test]
fn the_recipes_pin_the_committed_lua() {
    for (recipe, file) in [("real-lua-pe.ron", "lua.exe"), ("real-lua-dol.ron", "lua.dol")] {
        let text = fs::read_to_string(workspace_root().join("recipes").join(recipe)).expect("recipe");
        let sha = rpt_tests::sha256_file(&lua_dir().join(file));
        assert!(
            text.contains(&sha),
            "recipes/{recipe} does not pin {file}'s sha256 {sha}"
        );
    }
}

/// The DOL on LoongArch64, the freestanding host (through qemu-loongarch64): glibc and Lua print
/// the recorded bench output there too. The run takes seconds; the compile of 1,560 functions
/// for one more host about a minute.
#[test]
#[ignore = "CI runs the PE on LoongArch64 and the DOL on AArch64: scripts/host-matrix.sh runs it"]
fn the_dol_runs_its_bench_on_loongarch64() {
    dol_runs_its_bench_on("loongarch64");
}

/// The DOL on AArch64.
#[test]
fn the_dol_runs_its_bench_on_aarch64() {
    dol_runs_its_bench_on("aarch64");
}

fn dol_runs_its_bench_on(host: &str) {
    let recorded: Vec<u8> = bench_out().into_iter().filter(|&b| b != b'\r').collect();
    let gen_dir = tempfile::tempdir().expect("tempdir");
    let out = run_recipe("recipes/real-lua-dol.ron", "bench.lua", host, gen_dir.path());
    assert_prints(&format!("{host} (the DOL)"), &out, &recorded);
}
