//! Bad input gets a clear error naming the recipe and the guest address, import or line — never a panic.

use std::fs;
use std::path::Path;

use rpt_tests::{build_pe, rpt_in, sha256_file, stderr_of};

fn write_recipe(dir: &Path, image: &Path, extra: &str) -> String {
    let recipe = dir.join("probe.ron");
    let text = format!(
        "Recipe(\n    guest: \"x86-pe\",\n    image: {:?},\n    image_sha256: \"{}\",\n    platform: \"win32-console\",\n    host: \"x86-64\",\n{extra})\n",
        image.file_name().and_then(|n| n.to_str()).expect("utf-8 name"),
        sha256_file(image)
    );
    fs::write(&recipe, text).expect("write recipe");
    recipe.to_str().expect("utf-8 path").to_string()
}

fn recompile(dir: &Path, recipe: &str) -> (bool, String) {
    let out = rpt_in("recompile", recipe, &dir.join("gen"), &dir.join("cache"), &[]);
    let stderr = stderr_of(&out);
    assert!(!stderr.contains("panicked"), "rpt panicked:\n{stderr}");
    (out.status.success(), stderr)
}

/// Finds the address objdump gives an instruction, to check rpt names the same one.
fn address_of(exe: &Path, mnemonic: &str) -> u64 {
    let out = std::process::Command::new("i686-w64-mingw32-objdump")
        .arg("-d")
        .arg(exe)
        .output()
        .expect("objdump runs");
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find(|l| {
            l.split('\t')
                .nth(2)
                .is_some_and(|insn| insn.trim_start().starts_with(mnemonic))
        })
        .unwrap_or_else(|| panic!("objdump shows no {mnemonic}"));
    let addr = line.split(':').next().expect("address").trim();
    u64::from_str_radix(addr, 16).expect("hex address")
}

#[test]
fn an_instruction_the_lifter_lacks_names_its_address_and_the_recipe() {
    let dir = tempfile::tempdir().expect("tempdir");
    let src = dir.path().join("probe.c");
    fs::write(
        &src,
        "__declspec(dllimport) void __stdcall ExitProcess(unsigned);\n\
         void __stdcall start(void) { unsigned a = 0, b, c, d; __asm__ volatile(\"cpuid\" : \"+a\"(a), \"=b\"(b), \"=c\"(c), \"=d\"(d)); ExitProcess(a ^ b ^ c ^ d); }\n",
    )
    .expect("write source");
    let exe = dir.path().join("probe.exe");
    build_pe(&src, &exe, &[]);
    let recipe = write_recipe(dir.path(), &exe, "");
    let (ok, stderr) = recompile(dir.path(), &recipe);
    assert!(!ok, "recompiling code with cpuid must fail:\n{stderr}");
    let addr = address_of(&exe, "cpuid");
    assert!(
        stderr.contains(&recipe),
        "the message must name the recipe {recipe}:\n{stderr}"
    );
    assert!(
        stderr.contains(&format!("{addr:#010x}")),
        "the message must name {addr:#010x}:\n{stderr}"
    );
    assert!(
        stderr.contains("cpuid"),
        "the message must name the instruction:\n{stderr}"
    );
}

#[test]
fn every_import_the_platform_lacks_is_listed_before_any_code_is_emitted() {
    let dir = tempfile::tempdir().expect("tempdir");
    let src = dir.path().join("probe.c");
    fs::write(
        &src,
        "__declspec(dllimport) void __stdcall ExitProcess(unsigned);\n\
         __declspec(dllimport) int __stdcall Beep(unsigned, unsigned);\n\
         __declspec(dllimport) void __stdcall Sleep(unsigned);\n\
         __declspec(dllimport) int __stdcall SetConsoleTitleA(const char *);\n\
         __declspec(dllimport) unsigned __stdcall GetLogicalDrives(void);\n\
         void __stdcall start(void) { Beep(440, 10); Sleep(1); SetConsoleTitleA(\"x\"); ExitProcess(GetLogicalDrives()); }\n",
    )
    .expect("write source");
    let exe = dir.path().join("probe.exe");
    build_pe(&src, &exe, &[]);
    let recipe = write_recipe(dir.path(), &exe, "");
    let (ok, stderr) = recompile(dir.path(), &recipe);
    assert!(!ok, "unknown imports must fail:\n{stderr}");
    assert!(stderr.contains(&recipe), "the message must name the recipe:\n{stderr}");
    assert!(
        stderr.contains("does not implement 3 imports"),
        "the message must count the missing imports:\n{stderr}"
    );
    for name in [
        "KERNEL32.dll!Beep",
        "KERNEL32.dll!SetConsoleTitleA",
        "KERNEL32.dll!GetLogicalDrives",
    ] {
        assert!(stderr.contains(name), "the message must name {name}:\n{stderr}");
    }
    // Sleep and ExitProcess are implemented, so they are not listed.
    assert!(!stderr.contains("Sleep") && !stderr.contains("ExitProcess"), "{stderr}");
    // Nothing was generated: the check runs before lifting and emitting.
    let mut c_files = Vec::new();
    let mut stack = vec![dir.path().join("gen")];
    while let Some(d) = stack.pop() {
        for entry in fs::read_dir(&d).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "c") {
                c_files.push(path);
            }
        }
    }
    assert!(
        c_files.is_empty(),
        "C was emitted before the import check failed: {c_files:?}"
    );
}

#[test]
fn a_recipe_typo_gets_line_and_column() {
    let dir = tempfile::tempdir().expect("tempdir");
    let exe = dir.path().join("any.exe");
    fs::write(&exe, b"MZ").expect("write image");
    let recipe = write_recipe(dir.path(), &exe, "    pases: [],\n");
    let (ok, stderr) = recompile(dir.path(), &recipe);
    assert!(!ok);
    assert!(
        stderr.contains(&format!("{recipe}:7:5")),
        "expected {recipe}:7:5 in:\n{stderr}"
    );
    assert!(stderr.contains("pases"), "{stderr}");
}

#[test]
fn an_image_that_does_not_match_its_hash_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let exe = dir.path().join("any.exe");
    fs::write(&exe, b"MZ first").expect("write image");
    let recipe = write_recipe(dir.path(), &exe, "");
    fs::write(&exe, b"MZ second").expect("rewrite image");
    let (ok, stderr) = recompile(dir.path(), &recipe);
    assert!(!ok);
    assert!(stderr.contains("any.exe") && stderr.contains("sha256"), "{stderr}");
}

#[test]
fn a_truncated_pe_is_a_clear_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let full = std::fs::read(rpt_tests::workspace_root().join("tests/guests/x86/demo.exe")).expect("demo.exe exists");
    let exe = dir.path().join("cut.exe");
    fs::write(&exe, &full[..full.len().min(700)]).expect("write image");
    let recipe = write_recipe(dir.path(), &exe, "");
    let (ok, stderr) = recompile(dir.path(), &recipe);
    assert!(!ok);
    assert!(stderr.contains(&recipe) && stderr.contains("bad image"), "{stderr}");
}
