//! Choosing hosts from the command line and the recipe: `rpt hosts`, `--host-cpu`, a recipe's
//! `host_cpu` and `l1i`, unknown models named at their recipe line, and a missing toolchain named by
//! its package.

use std::fs;
use std::path::Path;

use rpt_tests::{rpt, rpt_binary, rpt_in, sha256_file, stderr_of, workspace_root};

/// A copy of the demo recipe in `dir` with `extra` fields, its image referred to by absolute path.
fn demo_recipe(dir: &Path, name: &str, extra: &str) -> String {
    let image = workspace_root().join("tests/guests/x86/demo.exe");
    let text = format!(
        "(\n    guest: \"x86-pe\",\n    image: {:?},\n    image_sha256: \"{}\",\n    platform: \"win32-console\",\n    function_hints: [0x4014b0, 0x4014c0, 0x4014d0, 0x4014e0, 0x4014f0, 0x401500, 0x401510, 0x401520],\n{extra})\n",
        image.display().to_string(),
        sha256_file(&image)
    );
    let path = dir.join(format!("{name}.ron"));
    fs::write(&path, text).expect("write recipe");
    path.display().to_string()
}

#[test]
fn rpt_hosts_lists_every_host_with_models_geometry_and_readiness() {
    let out = rpt(&["hosts"]);
    assert!(out.status.success(), "{}", stderr_of(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    for expected in [
        "x86-64: x86_64-linux-gnu, runs natively",
        "aarch64: aarch64-linux-gnu, runs under qemu-aarch64",
        "loongarch64: loongarch64-linux-gnu, runs under qemu-loongarch64, no C library",
        "cortex-a72  L1I 48 KiB, 3-way, 64-byte lines",
        "apple-m1    L1I 192 KiB, 6-way, 128-byte lines",
        "loongson-3a6000  L1I 64 KiB, 4-way, 64-byte lines",
        "29 general and 32 floating-point registers, 64-bit pointers, little-endian",
    ] {
        assert!(text.contains(expected), "{expected:?} missing from:\n{text}");
    }
    // This machine has every toolchain (scripts/install-deps.sh test installs them).
    assert_eq!(text.matches("  build: ready").count(), 3, "{text}");
    assert_eq!(text.matches("  run: ready").count(), 3, "{text}");
}

#[test]
fn a_recipes_cpu_model_and_l1i_shape_the_generation() {
    let dir = tempfile::tempdir().expect("tempdir");
    let recipe = demo_recipe(
        dir.path(),
        "m1",
        "    host: \"aarch64\",\n    host_cpu: \"apple-m1\",\n    l1i: (size: 131072, ways: 8, line: 128),\n",
    );
    let gen_dir = dir.path().join("gen");
    let out = rpt_in("recompile", &recipe, &gen_dir, &dir.path().join("cache"), &[]);
    let stderr = stderr_of(&out);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("for aarch64 (apple-m1, L1I 128 KiB, 8-way, 128-byte lines)"),
        "{stderr}"
    );
    let generations: Vec<_> = fs::read_dir(gen_dir.join("m1"))
        .expect("generations")
        .flatten()
        .map(|e| e.path())
        .collect();
    assert_eq!(generations.len(), 1);
    assert!(generations[0].to_string_lossy().ends_with("-aarch64"));
    let manifest = fs::read_to_string(generations[0].join("manifest.ron")).expect("manifest");
    assert!(manifest.contains("\"-mtune=apple-m1\""), "{manifest}");
    assert!(manifest.contains("\"-static\""), "{manifest}");
}

/// x86-64's opt-in ISA level: the generation is built with `-march=x86-64-v3` and, on a CPU that
/// has it (this machine's does), prints what the default build prints.
#[test]
fn the_x86_64_v3_model_builds_for_that_isa_level_and_runs_the_same() {
    let dir = tempfile::tempdir().expect("tempdir");
    let recipe = demo_recipe(dir.path(), "v3", "");
    let gen_dir = dir.path().join("gen");
    let cache = dir.path().join("cache");
    let default = rpt_in("run", &recipe, &gen_dir, &cache, &[]);
    assert!(default.status.success(), "{}", stderr_of(&default));
    let v3 = rpt_in("run", &recipe, &gen_dir, &cache, &["--host-cpu", "x86-64-v3"]);
    let stderr = stderr_of(&v3);
    let cpu = fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let has_v3 = ["avx2", "bmi2", "fma", "movbe"]
        .iter()
        .all(|flag| cpu.split_whitespace().any(|w| w == *flag));
    if has_v3 {
        assert!(v3.status.success(), "{stderr}");
        assert_eq!(v3.stdout, default.stdout, "{stderr}");
    }
    let manifests: Vec<String> = fs::read_dir(gen_dir.join("v3"))
        .expect("generations")
        .flatten()
        .filter_map(|e| fs::read_to_string(e.path().join("manifest.ron")).ok())
        .collect();
    assert_eq!(manifests.len(), 2, "one generation per CPU model");
    assert_eq!(
        manifests.iter().filter(|m| m.contains("\"-march=x86-64-v3\"")).count(),
        1,
        "{manifests:?}"
    );
}

/// What `rpt recompile` said when it refused `recipe` (with `extra` arguments), generations and
/// objects in `dir`.
fn refused(dir: &Path, recipe: &str, extra: &[&str]) -> String {
    let out = rpt_in("recompile", recipe, &dir.join("gen"), &dir.join("cache"), extra);
    assert!(!out.status.success(), "rpt recompile {recipe} succeeded");
    stderr_of(&out)
}

#[test]
fn an_unknown_cpu_model_is_named_at_its_recipe_line() {
    let dir = tempfile::tempdir().expect("tempdir");
    let recipe = demo_recipe(
        dir.path(),
        "bad",
        "    host: \"aarch64\",\n    host_cpu: \"cortex-a99\",\n",
    );
    let stderr = refused(dir.path(), &recipe, &[]);
    assert!(
        stderr.contains(&format!("{recipe}:8:5: host `aarch64` has no CPU model `cortex-a99`")),
        "{stderr}"
    );
    assert!(
        stderr.contains("known: cortex-a72, cortex-a76, cortex-a53, apple-m1"),
        "{stderr}"
    );
    let recipe = demo_recipe(dir.path(), "riscv", "    host: \"riscv64\",\n");
    let stderr = refused(dir.path(), &recipe, &[]);
    assert!(
        stderr.contains(&format!(
            "{recipe}:7:5: unknown host `riscv64` (known: aarch64, loongarch64, x86-64)"
        )),
        "{stderr}"
    );
    // The same through the command line names no line, since the recipe is not at fault.
    let recipe = demo_recipe(dir.path(), "good", "");
    let stderr = refused(dir.path(), &recipe, &["--host", "loongarch64", "--host-cpu", "la999"]);
    assert!(
        stderr.contains(&format!("{recipe}: host `loongarch64` has no CPU model `la999`")),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
}

/// rpt with `args`, generations and objects in `dir`, and only `path` on PATH.
fn rpt_with_path(dir: &Path, path: &Path, args: &[&str]) -> std::process::Output {
    std::process::Command::new(rpt_binary())
        .args(args)
        .arg("--gen-dir")
        .arg(dir.join("gen"))
        .arg("--cache-dir")
        .arg(dir.join("cache"))
        .env("PATH", path)
        .env("CI", "1")
        .output()
        .expect("rpt starts")
}

#[test]
fn a_missing_toolchain_names_the_package_to_install() {
    let dir = tempfile::tempdir().expect("tempdir");
    let recipe = demo_recipe(dir.path(), "demo", "");
    // A PATH with nothing on it: clang-19 (and qemu) cannot be found.
    let empty = dir.path().join("empty-path");
    fs::create_dir_all(&empty).expect("mkdir");
    let out = rpt_with_path(dir.path(), &empty, &["recompile", &recipe, "--host", "aarch64"]);
    let stderr = stderr_of(&out);
    assert!(!out.status.success());
    assert!(
        stderr.contains("host `aarch64`: cannot build for it on this machine: the command `clang-19` (package clang-19) is missing; install with `apt-get install clang-19`"),
        "{stderr}"
    );
    // With clang-19 on PATH but no emulator, building works and running names qemu-user.
    let bin = dir.path().join("only-clang");
    fs::create_dir_all(&bin).expect("mkdir");
    std::os::unix::fs::symlink("/usr/bin/clang-19", bin.join("clang-19")).expect("symlink clang-19");
    let out = rpt_with_path(dir.path(), &bin, &["run", &recipe, "--host", "loongarch64"]);
    let stderr = stderr_of(&out);
    assert!(stderr.contains("rpt: recompiled"), "{stderr}");
    assert!(
        stderr.contains("host `loongarch64`: cannot run what was built for it on this machine: the command `qemu-loongarch64` (package qemu-user) is missing"),
        "{stderr}"
    );
    assert!(out.stdout.is_empty());
}
