//! The AArch64 host plugin: its description and CPU models, flags clang-19 accepts, and a static
//! binary that runs under qemu-aarch64.

use rpt_testkit::host;
use std::fs;

use rpt_api::{CEnvironment, HostPlugin, Needed, Purpose, Runner};
use rpt_host_aarch64::{Aarch64Host, DEFAULT_CPU};

#[test]
fn describes_aarch64_linux() {
    let host = Aarch64Host;
    assert_eq!(host.info().name, "aarch64");
    assert_eq!(host.info().hash.len(), 64);
    let desc = host.desc();
    assert_eq!(
        (desc.triple.as_str(), desc.cpu.as_str()),
        ("aarch64-linux-gnu", DEFAULT_CPU)
    );
    assert_eq!(
        (desc.pointer_bits, desc.gprs, desc.fprs, desc.big_endian),
        (64, 29, 32, false)
    );
    assert_eq!(host.environment(), CEnvironment::Libc);
    assert_eq!(
        host.runner(),
        Runner::Emulator {
            program: "qemu-aarch64".into(),
            args: vec![]
        }
    );
    let requirements = host.requirements();
    let packages: Vec<(&str, Purpose)> = requirements.iter().map(|r| (r.package.as_str(), r.purpose)).collect();
    for needed in [
        ("libc6-dev-arm64-cross", Purpose::Build),
        ("libgcc-12-dev-arm64-cross", Purpose::Build),
        ("qemu-user", Purpose::Run),
    ] {
        assert!(packages.contains(&needed), "{needed:?} missing from {packages:?}");
    }
}

#[test]
fn cpu_models_have_real_geometries_and_the_default_comes_first() {
    let host = Aarch64Host;
    let models = host.cpu_models();
    let names: Vec<&str> = models.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(names, ["cortex-a72", "cortex-a76", "cortex-a53", "apple-m1"]);
    for m in &models {
        assert_eq!(m.l1i.check(), Ok(()), "{}", m.name);
        assert_eq!(m.cflags, vec![format!("-mtune={}", m.name)]);
    }
    // The Raspberry Pi 4's Cortex-A72: 48 KiB, 3 ways, 64-byte lines, 256 sets.
    assert_eq!(host.desc().l1i, models[0].l1i);
    assert_eq!(
        (models[0].l1i.size, models[0].l1i.ways, models[0].l1i.line),
        (49152, 3, 64)
    );
    assert_eq!(models[0].l1i.sets(), Some(256));
}

#[test]
fn a_static_binary_built_with_every_models_flags_runs_under_qemu() {
    let host = Aarch64Host;
    for r in host.requirements() {
        if let Needed::File(path) = &r.needed {
            assert!(
                fs::metadata(path).is_ok(),
                "{path} is missing: install {} (scripts/install-deps.sh test)",
                r.package
            );
        }
    }
    let dir = tempfile::tempdir().expect("temporary directory");
    fs::write(
        dir.path().join("m.c"),
        "#include <math.h>\n#include <stdio.h>\nint main(int argc, char **argv) { (void)argv; printf(\"%d\\n\", (int)sqrt((double)argc * 16.0)); return 7; }\n",
    )
    .expect("write");
    host::compile_for_every_model(&host, dir.path(), "m.c");
    host::compile_and_link(&host, dir.path(), &["m.c"], &[]);
    let out = host::run(&host, dir.path(), &["x"]);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "5\n");
    assert_eq!(out.status.code(), Some(7));
}
