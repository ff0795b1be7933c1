//! The PE path on a real mingw-built program (tests/pe/sample.c): loading, bad images, discovery,
//! lifting (its switch becomes a `switch`), and the whole lifted program run in the IR interpreter
//! against the same C compiled natively with `gcc -m32`.

mod common;

use std::process::Command;
use std::sync::OnceLock;

use rpt_api::{GuestError, GuestImage, GuestPlugin, Seeds};
use rpt_guest_x86_pe::X86Pe;
use rpt_ir::{GuestAddr, Terminator};

const SAMPLE: &str = include_str!("pe/sample.c");

fn sample_pe() -> &'static [u8] {
    static PE: OnceLock<Vec<u8>> = OnceLock::new();
    PE.get_or_init(|| common::build_pe("sample", SAMPLE))
}

fn sample_image() -> GuestImage {
    rpt_guest_x86_pe::loader_pe::load(sample_pe()).expect("the sample loads")
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
    match rpt_guest_x86_pe::loader_pe::load(bytes) {
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
        let result = rpt_guest_x86_pe::loader_pe::load(&pe[..len]);
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

/// The file offset of field `offset` of section header `index`.
fn section_header(pe: &[u8], index: usize, offset: usize) -> usize {
    let nt = pe_header_offset(pe);
    let opt_size = u16::from_le_bytes(pe[nt + 20..nt + 22].try_into().expect("size")) as usize;
    nt + 24 + opt_size + 40 * index + offset
}

fn put_u32(bytes: &mut [u8], at: usize, v: u32) {
    bytes[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

fn get_u32(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(bytes[at..at + 4].try_into().expect("four bytes"))
}

#[test]
fn overlapping_sections_are_refused() {
    let pe = sample_pe();
    // Move the second section (.rdata) onto the first (.text): same VirtualAddress.
    let mut overlap = pe.to_vec();
    let text_rva = get_u32(pe, section_header(pe, 0, 12));
    put_u32(&mut overlap, section_header(pe, 1, 12), text_rva + 0x10);
    let msg = bad_image_message(&overlap);
    assert!(
        msg.contains("overlap") && msg.contains(".text") && msg.contains(".rdata"),
        "{msg}"
    );
}

#[test]
fn an_import_table_outside_the_file_is_refused() {
    let pe = sample_pe();
    let nt = pe_header_offset(pe);
    // Data directory 1 (imports) of the PE32 optional header: at nt + 24 + 0x68.
    let dir = nt + 24 + 0x68;
    let mut outside = pe.to_vec();
    put_u32(&mut outside, dir, 0x0080_0000);
    let msg = bad_image_message(&outside);
    assert!(msg.contains("import table") && msg.contains("0x800000"), "{msg}");

    // Inside a section's address range, but past the bytes the file holds for it (.bss).
    let mut in_bss = pe.to_vec();
    let bss_rva = get_u32(pe, section_header(pe, 2, 12));
    put_u32(&mut in_bss, dir, bss_rva);
    let msg = bad_image_message(&in_bss);
    assert!(msg.contains("import table"), "{msg}");

    // The import descriptors are fine, but a name they point at lies outside the file.
    let import_rva = get_u32(pe, dir);
    let idata = (0..7)
        .find(|&i| {
            let va = get_u32(pe, section_header(pe, i, 12));
            let size = get_u32(pe, section_header(pe, i, 8));
            (va..va + size).contains(&import_rva)
        })
        .expect("a section holds the imports");
    let file_at =
        (import_rva - get_u32(pe, section_header(pe, idata, 12)) + get_u32(pe, section_header(pe, idata, 20))) as usize;
    let mut bad_name = pe.to_vec();
    put_u32(&mut bad_name, file_at + 12, 0x0090_0000);
    let msg = bad_image_message(&bad_name);
    assert!(msg.contains("import module name"), "{msg}");
}

#[test]
fn an_entry_point_outside_every_section_is_refused() {
    let pe = sample_pe();
    let nt = pe_header_offset(pe);
    let mut outside = pe.to_vec();
    // AddressOfEntryPoint, 16 bytes into the optional header.
    put_u32(&mut outside, nt + 24 + 16, 0x0070_0000);
    let msg = bad_image_message(&outside);
    assert!(msg.contains("entry point") && msg.contains("0xb00000"), "{msg}");

    // Pointing into the headers is outside every section too.
    let mut headers = pe.to_vec();
    put_u32(&mut headers, nt + 24 + 16, 0x10);
    let msg = bad_image_message(&headers);
    assert!(msg.contains("entry point"), "{msg}");
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
        let Ok(image) = rpt_guest_x86_pe::loader_pe::load(&bytes) else {
            continue;
        };
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
    let errors = common::worrying(&discovery.diagnostics);
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
    assert!(externs.missing.is_empty());
    let symbols: Vec<&str> = externs.implemented.values().map(String::as_str).collect();
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
    missing.imports[0].name = "Beep".to_string();
    missing.imports[2].name = "FlashWindow".to_string();
    let served = X86Pe
        .externs(&missing, "win32-console")
        .expect("a missing import is no error");
    assert_eq!(
        served.missing,
        [
            (image.imports[0].thunk, "KERNEL32.dll!Beep".to_string()),
            (image.imports[2].thunk, "KERNEL32.dll!FlashWindow".to_string())
        ]
    );
    assert_eq!(served.implemented.len(), 1);
    assert!(matches!(
        X86Pe.externs(&image, "linux"),
        Err(GuestError::UnknownPlatform { .. })
    ));
    assert_eq!(X86Pe.platforms(), ["win32-console"]);
    let sources = X86Pe
        .runtime_sources("win32-console", &Default::default())
        .expect("sources");
    let paths: Vec<&str> = sources.iter().map(|s| s.path.as_str()).collect();
    assert_eq!(
        paths[..14],
        [
            "guest/x86_runtime.c",
            "guest/x87.c",
            "guest/inline.h",
            "guest/x87_defs.h",
            "guest/x87_host.h",
            "guest/x87_values.h",
            "guest/x87_soft.h",
            "guest/x87_soft_transcendental.h",
            "guest/x87_soft_tables.h",
            "guest/x87_soft_libm.h",
            "guest/x87_soft_math.h",
            "guest/x87_f64.h",
            "guest/win32_console.h",
            "guest/win32_console.c"
        ]
    );
    // The f64 value model is chosen where x87.c is compiled, and inline.h (which generated code
    // includes) knows it too; nothing else changes.
    let options: rpt_api::GuestOptions = [("x87".to_string(), rpt_api::ParamValue::Str("f64".into()))]
        .into_iter()
        .collect();
    let f64_sources = X86Pe.runtime_sources("win32-console", &options).expect("sources");
    for (f80, f64) in sources.iter().zip(&f64_sources) {
        if f80.path == "guest/x87.c" || f80.path == rpt_api::GUEST_INLINE_HEADER {
            assert_eq!(f64.contents, format!("#define RPT_X87_F64 1\n{}", f80.contents));
        } else {
            assert_eq!(f64.contents, f80.contents, "{}", f80.path);
        }
    }
    assert!(paths.iter().all(|p| p.starts_with("guest/")), "{paths:?}");
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

#[test]
fn the_x87_option_names_the_value_model() {
    use rpt_api::ParamValue;
    let with = |name: &str, value: ParamValue| {
        let options: rpt_api::GuestOptions = [(name.to_string(), value)].into_iter().collect();
        X86Pe.check_options(&options)
    };
    assert_eq!(X86Pe.check_options(&Default::default()), Ok(()));
    assert_eq!(with("x87", ParamValue::Str("f80".into())), Ok(()));
    assert_eq!(with("x87", ParamValue::Str("f64".into())), Ok(()));
    let other = with("x87", ParamValue::Str("f32".into())).expect_err("there is no f32 model");
    assert!(other.to_string().contains("\"f64\""), "{other}");
    assert!(with("x87", ParamValue::Bool(true)).is_err());
    assert!(with("sse", ParamValue::Str("f80".into())).is_err());
}
