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

/// A freestanding PE from `body`, the statements of its `start` (kernel32's ExitProcess declared).
fn probe_pe(dir: &Path, body: &str) -> std::path::PathBuf {
    let src = dir.join("probe.c");
    fs::write(
        &src,
        format!(
            "__declspec(dllimport) void __stdcall ExitProcess(unsigned);\n\
             volatile unsigned never;\n\
             void __stdcall start(void) {{ {body} }}\n"
        ),
    )
    .expect("write source");
    let exe = dir.join("probe.exe");
    build_pe(&src, &exe, &[]);
    exe
}

/// `cpuid`, which the x86 lifter does not handle, folded into the exit status.
const CPUID: &str = "unsigned a = 0, b, c, d; \
    __asm__ volatile(\"cpuid\" : \"+a\"(a), \"=b\"(b), \"=c\"(c), \"=d\"(d)); ExitProcess(a ^ b ^ c ^ d);";

#[test]
fn an_instruction_the_lifter_lacks_is_a_guest_fault_when_executed_and_an_error_when_strict() {
    let dir = tempfile::tempdir().expect("tempdir");
    let exe = probe_pe(dir.path(), CPUID);
    let addr = address_of(&exe, "cpuid");
    let at = format!("{addr:#010x}");
    // The build succeeds and lists the place once as a warning.
    let recipe = write_recipe(dir.path(), &exe, "");
    let (ok, stderr) = recompile(dir.path(), &recipe);
    assert!(ok, "code that only faults when executed must build:\n{stderr}");
    assert!(
        stderr.contains("warning: 1 place of guest code rpt could not lift") && stderr.contains(&at),
        "{stderr}"
    );
    // Running it reaches the cpuid: a report naming the place, the bytes and the function, and
    // the guest-fault status.
    let out = rpt_in("run", &recipe, &dir.path().join("gen"), &dir.path().join("cache"), &[]);
    let stderr = stderr_of(&out);
    assert_eq!(out.status.code(), Some(123), "{stderr}");
    for needle in [
        &format!("guest fault at {at}: code rpt could not lift"),
        "cannot lift `cpuid` (0f a2)",
        "bytes: 0f a2",
        "in the function at 0x",
    ] {
        assert!(stderr.contains(needle), "`{needle}` is missing from:\n{stderr}");
    }
    // The manifest records the place.
    let generations: Vec<_> = fs::read_dir(dir.path().join("gen/probe"))
        .expect("generations")
        .flatten()
        .collect();
    let manifest = fs::read_to_string(generations[0].path().join("manifest.ron")).expect("manifest");
    assert!(manifest.contains("fault_sites") && manifest.contains(&at), "{manifest}");
    // With strict_lifting the build stops, naming the recipe, the address and the instruction.
    let strict = write_recipe(dir.path(), &exe, "    strict_lifting: true,\n");
    let (ok, stderr) = recompile(dir.path(), &strict);
    assert!(
        !ok,
        "with strict_lifting, recompiling code with cpuid must fail:\n{stderr}"
    );
    for needle in [strict.as_str(), at.as_str(), "cpuid", "strict_lifting"] {
        assert!(stderr.contains(needle), "`{needle}` is missing from:\n{stderr}");
    }
}

/// A fault two calls deep names its callers, innermost first, from the guest's stack.
#[test]
fn a_guest_fault_names_its_callers() {
    let dir = tempfile::tempdir().expect("tempdir");
    let src = dir.path().join("probe.c");
    fs::write(
        &src,
        format!(
            "__declspec(dllimport) void __stdcall ExitProcess(unsigned);\n\
             __attribute__((noinline)) unsigned inner(void) {{ {} return a ^ b ^ c ^ d; }}\n\
             __attribute__((noinline)) unsigned outer(void) {{ return inner() * 3 + 1; }}\n\
             void __stdcall start(void) {{ ExitProcess(outer() + 5); }}\n",
            CPUID.split("ExitProcess").next().unwrap_or_default()
        ),
    )
    .expect("write source");
    let exe = dir.path().join("probe.exe");
    build_pe(&src, &exe, &[]);
    let recipe = write_recipe(dir.path(), &exe, "");
    let out = rpt_in("run", &recipe, &dir.path().join("gen"), &dir.path().join("cache"), &[]);
    let stderr = stderr_of(&out);
    assert_eq!(out.status.code(), Some(123), "{stderr}");
    let outer = symbol_address(&exe, "_outer");
    let start = symbol_address(&exe, "_start@0");
    let callers: Vec<&str> = stderr
        .lines()
        .filter(|l| l.trim_start().starts_with("called from") || l.trim_start().starts_with("from"))
        .collect();
    assert!(callers.len() >= 2, "two callers expected:\n{stderr}");
    assert!(
        callers[0].ends_with(&format!("in the function at {outer:#010x}")),
        "the first caller is outer:\n{stderr}"
    );
    assert!(
        callers[1].ends_with(&format!("in the function at {start:#010x}")),
        "the second caller is start:\n{stderr}"
    );
}

/// The address of a symbol of `exe` (mingw keeps COFF symbols unless stripped).
fn symbol_address(exe: &Path, name: &str) -> u64 {
    let out = std::process::Command::new("i686-w64-mingw32-nm")
        .arg(exe)
        .output()
        .expect("nm runs");
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find(|l| l.ends_with(&format!(" {name}")))
        .unwrap_or_else(|| panic!("nm shows no {name}:\n{text}"));
    u64::from_str_radix(line.split(' ').next().expect("address"), 16).expect("hex address")
}

#[test]
fn an_instruction_the_lifter_lacks_that_never_runs_does_not_stop_the_program() {
    let dir = tempfile::tempdir().expect("tempdir");
    let exe = probe_pe(dir.path(), &format!("if (never) {{ {CPUID} }} ExitProcess(7);"));
    address_of(&exe, "cpuid");
    let recipe = write_recipe(dir.path(), &exe, "");
    let out = rpt_in("run", &recipe, &dir.path().join("gen"), &dir.path().join("cache"), &[]);
    let stderr = stderr_of(&out);
    assert_eq!(out.status.code(), Some(7), "{stderr}");
    assert!(
        stderr.contains("could not lift"),
        "the place is still listed:\n{stderr}"
    );
}

/// Imports the win32-console platform lacks (Beep, SetConsoleTitleA, GetLogicalDrives) beside one
/// it has (Sleep), then `body`.
const MISSING_IMPORTS: &str = "__declspec(dllimport) int __stdcall Beep(unsigned, unsigned);\n\
    __declspec(dllimport) void __stdcall Sleep(unsigned);\n\
    __declspec(dllimport) int __stdcall SetConsoleTitleA(const char *);\n\
    __declspec(dllimport) unsigned __stdcall GetLogicalDrives(void);\n";

/// A freestanding PE that declares [`MISSING_IMPORTS`] and runs `body`.
fn missing_imports_pe(dir: &Path, body: &str) -> std::path::PathBuf {
    let src = dir.join("probe.c");
    fs::write(
        &src,
        format!(
            "__declspec(dllimport) void __stdcall ExitProcess(unsigned);\n{MISSING_IMPORTS}\
             volatile unsigned never;\nvoid __stdcall start(void) {{ {body} }}\n"
        ),
    )
    .expect("write source");
    let exe = dir.join("probe.exe");
    build_pe(&src, &exe, &[]);
    exe
}

const MISSING: [&str; 3] = [
    "KERNEL32.dll!Beep",
    "KERNEL32.dll!SetConsoleTitleA",
    "KERNEL32.dll!GetLogicalDrives",
];

#[test]
fn an_import_the_platform_lacks_stops_the_program_when_called_and_is_an_error_when_strict() {
    let dir = tempfile::tempdir().expect("tempdir");
    let exe = missing_imports_pe(
        dir.path(),
        "Sleep(1); Beep(440, 10); SetConsoleTitleA(\"x\"); ExitProcess(GetLogicalDrives());",
    );
    let recipe = write_recipe(dir.path(), &exe, "");
    let (ok, stderr) = recompile(dir.path(), &recipe);
    assert!(ok, "missing imports are stubs, not errors:\n{stderr}");
    assert!(stderr.contains("does not implement 3 imports"), "{stderr}");
    for name in MISSING {
        assert!(stderr.contains(name), "the warning must name {name}:\n{stderr}");
    }
    assert!(!stderr.contains("Sleep") && !stderr.contains("ExitProcess"), "{stderr}");
    // The first missing import the program calls stops it, naming the import and its caller.
    let out = rpt_in("run", &recipe, &dir.path().join("gen"), &dir.path().join("cache"), &[]);
    let stderr = stderr_of(&out);
    assert_eq!(out.status.code(), Some(122), "{stderr}");
    let caller = stderr
        .split("rpt: the guest called KERNEL32.dll!Beep, which the platform does not implement, from ")
        .nth(1)
        .and_then(|rest| rest.get(..10))
        .and_then(|hex| u64::from_str_radix(hex.trim_start_matches("0x"), 16).ok())
        .unwrap_or_else(|| panic!("no report of the Beep call:\n{stderr}"));
    assert!(
        (0x40_1000..0x40_2000).contains(&caller),
        "the caller {caller:#x} is not in .text"
    );
    let generations: Vec<_> = fs::read_dir(dir.path().join("gen/probe"))
        .expect("generations")
        .flatten()
        .collect();
    let manifest = fs::read_to_string(generations[0].path().join("manifest.ron")).expect("manifest");
    assert!(
        manifest.contains("stubbed_imports") && manifest.contains(MISSING[0]),
        "{manifest}"
    );
    // With strict_imports the build stops before any code is emitted, listing every one.
    let strict_dir = tempfile::tempdir().expect("tempdir");
    let strict = write_recipe(dir.path(), &exe, "    strict_imports: true,\n");
    let (ok, stderr) = recompile(strict_dir.path(), &strict);
    assert!(!ok, "with strict_imports, unknown imports must fail:\n{stderr}");
    assert!(stderr.contains(&strict), "the message must name the recipe:\n{stderr}");
    assert!(stderr.contains("does not implement 3 imports"), "{stderr}");
    for name in MISSING {
        assert!(stderr.contains(name), "the message must name {name}:\n{stderr}");
    }
    let gen_root = strict_dir.path().join("gen");
    let emitted = if gen_root.exists() {
        rpt_tests::read_tree(&gen_root)
    } else {
        Vec::new()
    };
    assert!(
        !emitted.iter().any(|(path, _)| path.ends_with(".c")),
        "C was emitted before the import check failed"
    );
}

#[test]
fn an_import_the_platform_lacks_that_is_never_called_does_not_stop_the_program() {
    let dir = tempfile::tempdir().expect("tempdir");
    let exe = missing_imports_pe(
        dir.path(),
        "if (never) { Beep(1, 1); SetConsoleTitleA(\"x\"); GetLogicalDrives(); } Sleep(1); ExitProcess(9);",
    );
    let recipe = write_recipe(dir.path(), &exe, "");
    let out = rpt_in("run", &recipe, &dir.path().join("gen"), &dir.path().join("cache"), &[]);
    let stderr = stderr_of(&out);
    assert_eq!(out.status.code(), Some(9), "{stderr}");
    assert!(stderr.contains("does not implement 3 imports"), "{stderr}");
}

/// The recipe's `import_stubs` make stubs return (popping stdcall arguments and leaving an error
/// for GetLastError) instead of stopping; `strict_imports` then counts only the others; a name
/// that is not a missing import is an error naming the ones that are.
#[test]
fn a_stub_the_recipe_gives_a_return_returns_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let exe = missing_imports_pe(
        dir.path(),
        "__declspec(dllimport) unsigned __stdcall GetLastError(void);
         int beep = Beep(440, 10) + Beep(1, 1); unsigned drives = GetLogicalDrives();
         if (never) SetConsoleTitleA(\"x\");
         ExitProcess(beep * 10 + GetLastError() + drives);",
    );
    let stubs = "    import_stubs: {\n\
         \x20       \"KERNEL32.dll!Beep\": (returns: 1, pops: 8),\n\
         \x20       \"kernel32.DLL!GetLogicalDrives\": (last_error: Some(5)),\n\
         \x20   },\n";
    let recipe = write_recipe(dir.path(), &exe, stubs);
    let out = rpt_in("run", &recipe, &dir.path().join("gen"), &dir.path().join("cache"), &[]);
    let stderr = stderr_of(&out);
    assert_eq!(out.status.code(), Some(25), "2 * 10 + error 5 + 0 drives:\n{stderr}");
    assert!(
        stderr.contains("KERNEL32.dll!Beep (returns what the recipe's import_stubs says)"),
        "{stderr}"
    );
    assert_eq!(
        stderr.matches("rpt: the guest called KERNEL32.dll!Beep from ").count(),
        1,
        "reported once:\n{stderr}"
    );
    // strict_imports counts only the import no stub covers.
    let strict = write_recipe(dir.path(), &exe, &format!("{stubs}    strict_imports: true,\n"));
    let (ok, stderr) = recompile(dir.path(), &strict);
    assert!(!ok, "{stderr}");
    assert!(stderr.contains("does not implement 1 import"), "{stderr}");
    assert!(
        stderr.contains("SetConsoleTitleA") && !stderr.contains("!Beep"),
        "{stderr}"
    );
    // A name that is not a missing import is an error.
    let typo = write_recipe(dir.path(), &exe, "    import_stubs: {\"KERNEL32.dll!Beeep\": ()},\n");
    let (ok, stderr) = recompile(dir.path(), &typo);
    assert!(!ok, "{stderr}");
    assert!(
        stderr.contains("import_stubs names `KERNEL32.dll!Beeep`") && stderr.contains(MISSING[0]),
        "{stderr}"
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

/// A recipe for the SNES ROM `rom` in `dir`, with `extra` lines.
fn write_snes_recipe(dir: &Path, rom: &Path, extra: &str) -> String {
    let recipe = dir.join("rom.ron");
    let text = format!(
        "Recipe(\n    guest: \"snes-rom\",\n    image: {:?},\n    image_sha256: \"{}\",\n    platform: \"snes\",\n    host: \"x86-64\",\n{extra})\n",
        rom.file_name().and_then(|n| n.to_str()).expect("utf-8 name"),
        sha256_file(rom)
    );
    fs::write(&recipe, text).expect("write recipe");
    recipe.to_str().expect("utf-8 path").to_string()
}

#[test]
fn malformed_snes_roms_are_refused_with_clear_messages() {
    let dir = tempfile::tempdir().expect("tempdir");
    let nmi = std::fs::read(rpt_tests::workspace_root().join("tests/guests/snes/nmi.sfc")).expect("nmi.sfc exists");
    let cases: [(&str, Vec<u8>, &str, &str); 4] = [
        ("small.sfc", nmi[..0x4000].to_vec(), "", "at least 32 KiB"),
        ("blank.sfc", vec![0u8; 0x8000], "", "no plausible internal header"),
        ("huge.sfc", vec![0u8; 0x90_0000], "", "no mapping holds"),
        (
            "nmi-as-exhirom.sfc",
            nmi.clone(),
            "    guest_options: {\"mapping\": \"exhirom\"},\n",
            "names the exhirom mapping",
        ),
    ];
    for (name, bytes, extra, why) in cases {
        let rom = dir.path().join(name);
        fs::write(&rom, bytes).expect("write image");
        let recipe = write_snes_recipe(dir.path(), &rom, extra);
        let (ok, stderr) = recompile(dir.path(), &recipe);
        assert!(!ok, "{name} was accepted");
        assert!(stderr.contains(&recipe) && stderr.contains(why), "{name}:\n{stderr}");
    }
    // A mapping that is not one is a recipe error naming the option.
    let rom = dir.path().join("nmi.sfc");
    fs::write(&rom, &nmi).expect("write image");
    let recipe = write_snes_recipe(dir.path(), &rom, "    guest_options: {\"mapping\": \"sa1\"},\n");
    let (ok, stderr) = recompile(dir.path(), &recipe);
    assert!(!ok);
    assert!(stderr.contains("mapping") && stderr.contains("lorom"), "{stderr}");
}
