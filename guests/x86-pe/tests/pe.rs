//! The PE path on a real mingw-built program (tests/pe/sample.c): loading, bad images, discovery,
//! lifting (its switch becomes a `switch`), and the whole lifted program run in the IR interpreter
//! against the same C compiled natively with `gcc -m32`.

mod common;

use std::process::Command;
use std::sync::OnceLock;

use rpt_api::{GuestError, GuestImage, GuestPlugin, Seeds, Severity};
use rpt_guest_x86_pe::X86Pe;
use rpt_ir::{GuestAddr, Terminator};

const SAMPLE: &str = include_str!("pe/sample.c");

fn sample_pe() -> &'static [u8] {
    static PE: OnceLock<Vec<u8>> = OnceLock::new();
    PE.get_or_init(|| common::build_pe("sample", SAMPLE))
}

fn sample_image() -> GuestImage {
    X86Pe.load(sample_pe()).expect("the sample loads")
}

fn u32_at(image: &GuestImage, addr: GuestAddr) -> u32 {
    let b = image.bytes_at(addr, 4).expect("initialised bytes");
    u32::from_le_bytes(b.try_into().expect("four bytes"))
}

#[test]
fn loads_sections_entry_and_imports() {
    let image = sample_image();
    let names: Vec<&str> = image.segments.iter().map(|s| s.name.as_str()).collect();
    // An export makes ld add .edata, and with it .reloc, which the loader ignores (see loader_pe).
    assert_eq!(
        names,
        ["headers", ".text", ".rdata", ".bss", ".edata", ".idata", ".reloc"]
    );
    let headers = &image.segments[0];
    assert_eq!(headers.addr, GuestAddr(0x40_0000));
    assert_eq!(headers.bytes.get(..2), Some(&b"MZ"[..]));
    assert!(!headers.flags.write && !headers.flags.execute);
    let text = &image.segments[1];
    assert_eq!(text.addr, GuestAddr(0x40_1000));
    assert!(text.flags.execute && text.flags.read && !text.flags.write);
    let bss = &image.segments[3];
    assert!(bss.bytes.is_empty() && bss.mem_size >= 4 && bss.flags.write);
    assert!(image.is_code(image.entry), "entry {} is in .text", image.entry);

    let imports: Vec<(&str, &str)> = image
        .imports
        .iter()
        .map(|i| (i.module.as_str(), i.name.as_str()))
        .collect();
    assert_eq!(
        imports,
        [
            ("KERNEL32.dll", "ExitProcess"),
            ("KERNEL32.dll", "GetStdHandle"),
            ("KERNEL32.dll", "WriteFile")
        ]
    );
    for (i, import) in image.imports.iter().enumerate() {
        assert_eq!(import.thunk, GuestAddr(0xfff0_0000 + 16 * i as u64));
        assert_eq!(
            u64::from(u32_at(&image, import.slot)),
            import.thunk.0,
            "IAT slot of {}",
            import.name
        );
    }
    let exported: Vec<&str> = image.exports.keys().map(String::as_str).collect();
    assert_eq!(exported, ["sample_version"]);
    assert!(image.is_code(image.exports["sample_version"]));
}

fn bad_image_message(bytes: &[u8]) -> String {
    match X86Pe.load(bytes) {
        Err(GuestError::BadImage(m)) => m,
        Err(other) => panic!("expected BadImage, got {other}"),
        Ok(_) => panic!("a broken image loaded"),
    }
}

#[test]
fn truncated_images_are_errors_not_panics() {
    let pe = sample_pe();
    // Every prefix must load or fail cleanly; short ones must fail.
    for len in 0..pe.len() {
        let result = X86Pe.load(&pe[..len]);
        if len < 0x200 {
            assert!(
                matches!(result, Err(GuestError::BadImage(_))),
                "prefix of {len} bytes loaded"
            );
        }
    }
    assert!(bad_image_message(&pe[..64]).contains("not a PE"));
    assert!(bad_image_message(b"").contains("not a PE"));
    assert!(bad_image_message(&[0x4d, 0x5a, 0, 0]).contains("not a PE"));
}

fn pe_header_offset(pe: &[u8]) -> usize {
    u32::from_le_bytes(pe[0x3c..0x40].try_into().expect("e_lfanew")) as usize
}

#[test]
fn corrupted_images_name_the_problem() {
    let pe = sample_pe();
    let nt = pe_header_offset(pe);

    let mut wide = pe.to_vec();
    wide[nt + 24..nt + 26].copy_from_slice(&0x20bu16.to_le_bytes());
    assert!(
        bad_image_message(&wide).contains("64-bit"),
        "{}",
        bad_image_message(&wide)
    );

    let mut arm = pe.to_vec();
    arm[nt + 4..nt + 6].copy_from_slice(&0x1c0u16.to_le_bytes());
    assert!(bad_image_message(&arm).contains("not i386"));

    // The first section header's PointerToRawData, moved past the end of the file.
    let opt_size = u16::from_le_bytes(pe[nt + 20..nt + 22].try_into().expect("size")) as usize;
    let first_section = nt + 24 + opt_size;
    let mut outside = pe.to_vec();
    outside[first_section + 20..first_section + 24].copy_from_slice(&0x00ff_0000u32.to_le_bytes());
    let msg = bad_image_message(&outside);
    assert!(msg.contains(".text") && msg.contains("file"), "{msg}");

    // A section that wraps past 4 GiB.
    let mut huge = pe.to_vec();
    huge[first_section + 8..first_section + 12].copy_from_slice(&0xffff_0000u32.to_le_bytes());
    assert!(bad_image_message(&huge).contains("4 GiB"));
}

#[test]
fn randomly_corrupted_images_never_panic() {
    // Flip bytes all over the file (headers, tables and code alike) with a fixed-seed xorshift;
    // loading, discovery and lifting must each finish with a result (verified IR), never a panic.
    let pe = sample_pe();
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut loaded = 0;
    for _ in 0..300 {
        let mut bytes = pe.to_vec();
        let flips = 1 + next() % 8;
        for _ in 0..flips {
            // Mostly the first 1 KiB, where the headers and tables live.
            let limit = if next() % 4 == 0 {
                bytes.len()
            } else {
                1024.min(bytes.len())
            };
            let at = (next() % limit as u64) as usize;
            bytes[at] = next() as u8;
        }
        let Ok(image) = X86Pe.load(&bytes) else { continue };
        loaded += 1;
        let discovery = X86Pe.discover(&image, &Seeds::default());
        for &f in discovery.functions.iter().take(40) {
            common::lift_verified(&image, f, &discovery.functions);
        }
    }
    assert!(loaded > 30, "most single-byte corruptions still load ({loaded} did)");
}

#[test]
fn discovery_finds_called_and_address_taken_functions() {
    let image = sample_image();
    let discovery = X86Pe.discover(&image, &Seeds::default());
    let errors: Vec<_> = discovery
        .diagnostics
        .iter()
        .filter(|d| d.severity >= Severity::Warning)
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
    assert!(discovery.functions.contains(&image.entry));
    assert!(discovery.functions.contains(&image.exports["sample_version"]));
    // twice, rotl5 and negate are reached only through the table in .rdata.
    assert_eq!(discovery.address_taken.len(), 3, "{:?}", discovery.address_taken);
    assert!(discovery.address_taken.is_subset(&discovery.functions));
    let (program, diagnostics) = common::lift_program(&image);
    assert!(common::errors(&diagnostics).is_empty(), "{diagnostics:#?}");
    // start, op, fib, twice, rotl5, negate, mix64, sdiv, checksum, put_hex, sample_version.
    assert_eq!(program.functions.len(), 11, "{:x?}", program.functions.keys());
}

#[test]
fn the_switch_becomes_a_switch_terminator() {
    let image = sample_image();
    let (program, _) = common::lift_program(&image);
    let switches: Vec<usize> = program
        .functions
        .values()
        .flat_map(|f| &f.blocks)
        .filter_map(|b| match &b.term {
            Terminator::Switch { cases, .. } => Some(cases.len()),
            _ => None,
        })
        .collect();
    assert_eq!(switches, [10], "one switch with cases 0..=9");
}

#[test]
fn externs_and_runtime_sources() {
    let image = sample_image();
    let externs = X86Pe
        .externs(&image, "win32-console")
        .expect("all imports are implemented");
    let symbols: Vec<&str> = externs.values().map(String::as_str).collect();
    assert_eq!(
        symbols,
        [
            "rpt_win32_KERNEL32_ExitProcess",
            "rpt_win32_KERNEL32_GetStdHandle",
            "rpt_win32_KERNEL32_WriteFile"
        ]
    );
    let mut lowercase = image.clone();
    for i in &mut lowercase.imports {
        i.module = "kernel32.DLL".to_string();
    }
    assert_eq!(
        X86Pe
            .externs(&lowercase, "win32-console")
            .expect("module names are case-insensitive"),
        externs
    );
    let mut missing = image.clone();
    missing.imports[1].name = "Sleep".to_string();
    assert_eq!(
        X86Pe.externs(&missing, "win32-console"),
        Err(GuestError::MissingImport {
            platform: "win32-console".to_string(),
            module: "KERNEL32.dll".to_string(),
            name: "Sleep".to_string()
        })
    );
    assert!(matches!(
        X86Pe.externs(&image, "linux"),
        Err(GuestError::UnknownPlatform { .. })
    ));
    assert_eq!(X86Pe.platforms(), ["win32-console"]);
    let sources = X86Pe
        .runtime_sources("win32-console", &Default::default())
        .expect("sources");
    let paths: Vec<&str> = sources.iter().map(|s| s.path.as_str()).collect();
    assert_eq!(paths, ["guest/x86_runtime.c", "guest/win32_console.c"]);
    assert!(X86Pe.info().hash.len() == 64 && X86Pe.info().name == "x86-pe");
}

#[test]
fn the_lifted_sample_prints_what_the_native_build_prints() {
    let dir = common::scratch("pe");
    let src = dir.join("sample_native.c");
    let exe = dir.join("sample32");
    std::fs::write(&src, SAMPLE).expect("write source");
    common::run_tool(
        Command::new("gcc")
            .args(["-m32", "-O2", "-DNATIVE", "-o"])
            .arg(&exe)
            .arg(&src),
        "this test compares with a native i386 build and needs `gcc -m32`: install gcc-12-multilib",
    );
    let native = Command::new(&exe).output().expect("run the native sample");
    assert!(
        native.stdout.starts_with(b"switch=") && native.stdout.ends_with(b"\n"),
        "{native:?}"
    );

    let image = sample_image();
    let (program, _) = common::lift_program(&image);
    let (stdout, exit_code) = common::run_program(&image, &program);
    assert_eq!(
        String::from_utf8_lossy(&stdout),
        String::from_utf8_lossy(&native.stdout)
    );
    assert_eq!(exit_code.map(|c| c as i32), native.status.code());
}
