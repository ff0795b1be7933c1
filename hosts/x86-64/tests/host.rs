//! The x86-64 host plugin: its description, flags that clang-19 accepts, and the L1I reader.

use std::fs;
use std::path::Path;

use rpt_api::{CEnvironment, CacheGeometry, HostPlugin, Runner};
use rpt_host_x86_64::{FALLBACK_L1I, X86_64Host, l1i_from_sysfs};
use rpt_testkit::host;

#[test]
fn describes_x86_64_linux() {
    let host = X86_64Host;
    let info = host.info();
    assert_eq!(info.name, "x86-64");
    assert_eq!(info.hash.len(), 64);
    let desc = host.desc();
    assert_eq!(
        (desc.triple.as_str(), desc.cpu.as_str()),
        ("x86_64-linux-gnu", "native")
    );
    assert_eq!(
        (desc.pointer_bits, desc.gprs, desc.fprs, desc.big_endian),
        (64, 14, 16, false)
    );
    assert_eq!(host.runner(), Runner::Native);
    assert_eq!(host.environment(), CEnvironment::Libc);
    let models = host.cpu_models();
    let names: Vec<&str> = models.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(names, ["native", "skylake", "znver3", "x86-64-v3"]);
    assert_eq!(models[0].l1i, desc.l1i);
    // `native` must not tune for the compiling machine: objects would then depend on it.
    assert!(models[0].cflags.is_empty());
    for m in &models {
        assert_eq!(m.l1i.check(), Ok(()), "{}", m.name);
    }
    let cc = host.compiler();
    assert_eq!(cc.cc, "clang-19");
    for flag in ["-O2", "-fno-strict-aliasing", "--target=x86_64-linux-gnu", "-Wall"] {
        assert!(cc.cflags.iter().any(|f| f == flag), "missing {flag} in {:?}", cc.cflags);
    }
    assert!(cc.ldflags.iter().any(|f| f == "-fuse-ld=lld"), "{:?}", cc.ldflags);
}

#[test]
fn clang_accepts_the_flags_and_links_with_lld() {
    let dir = tempfile::tempdir().expect("temporary directory");
    fs::write(
        dir.path().join("m.c"),
        "#include <math.h>\nint main(int argc, char **argv) { (void)argv; return (int)sqrt((double)argc * 16.0); }\n",
    )
    .expect("write");
    host::compile_for_every_model(&X86_64Host, dir.path(), "m.c");
    host::compile_and_link(&X86_64Host, dir.path(), &["m.c"], &[]);
    assert_eq!(host::run(&X86_64Host, dir.path(), &[]).status.code(), Some(4));
}

fn fake_index(root: &Path, name: &str, ty: &str, level: &str, size: &str, ways: &str, line: &str) {
    let dir = root.join(name);
    fs::create_dir_all(&dir).expect("create index dir");
    for (file, text) in [
        ("type", ty),
        ("level", level),
        ("size", size),
        ("ways_of_associativity", ways),
        ("coherency_line_size", line),
    ] {
        fs::write(dir.join(file), format!("{text}\n")).expect("write sysfs file");
    }
}

#[test]
fn reads_the_level_1_instruction_cache_from_sysfs() {
    let dir = tempfile::tempdir().expect("temporary directory");
    fake_index(dir.path(), "index0", "Data", "1", "48K", "12", "64");
    fake_index(dir.path(), "index1", "Instruction", "1", "64K", "4", "128");
    fake_index(dir.path(), "index2", "Unified", "2", "2048K", "16", "64");
    fs::write(dir.path().join("uevent"), "").expect("write");
    assert_eq!(
        l1i_from_sysfs(dir.path()),
        Some(CacheGeometry {
            size: 64 * 1024,
            ways: 4,
            line: 128
        })
    );
}

#[test]
fn falls_back_when_sysfs_says_nothing_usable() {
    let dir = tempfile::tempdir().expect("temporary directory");
    assert_eq!(l1i_from_sysfs(&dir.path().join("missing")), None);
    fake_index(dir.path(), "index0", "Instruction", "2", "32K", "8", "64");
    fake_index(dir.path(), "index1", "Instruction", "1", "lots", "8", "64");
    assert_eq!(l1i_from_sysfs(dir.path()), None);
    assert_eq!(
        FALLBACK_L1I,
        CacheGeometry {
            size: 32 * 1024,
            ways: 8,
            line: 64
        }
    );
}

#[test]
fn this_machines_geometry_is_the_sysfs_one_or_the_fallback() {
    let from_sysfs = l1i_from_sysfs(Path::new("/sys/devices/system/cpu/cpu0/cache"));
    assert_eq!(X86_64Host.desc().l1i, from_sysfs.unwrap_or(FALLBACK_L1I));
}
