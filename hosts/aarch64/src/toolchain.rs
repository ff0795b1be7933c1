//! How C is compiled and linked for AArch64 Linux, and what that needs on this machine.

use rpt_api::{CompilerSettings, Needed, Purpose, Requirement};

/// The clang target triple.
pub const TRIPLE: &str = "aarch64-linux-gnu";

/// The compiler command.
pub const CC: &str = "clang-19";

/// Flags for every compile; the same as x86-64's (see there for why each is there), for this target.
/// clang finds Debian's cross headers in `/usr/aarch64-linux-gnu` by itself.
pub const CFLAGS: &[&str] = &[
    "--target=aarch64-linux-gnu",
    "-O2",
    "-fno-strict-aliasing",
    "-fno-math-errno",
    "-ffp-contract=off",
    "-gline-tables-only",
    "-Wall",
];

/// Flags for the link: lld, and `-static`, so the binary needs no AArch64 dynamic loader. It then
/// runs under `qemu-aarch64` without a sysroot (`-L`) and can be copied to any AArch64 Linux as is.
/// clang finds the cross glibc and libgcc (`crt1.o`, `crtbeginT.o`, `libc.a`) by itself.
pub const LDFLAGS: &[&str] = &["--target=aarch64-linux-gnu", "-fuse-ld=lld", "-static", "-lm"];

/// The compiler settings of this host.
pub fn settings() -> CompilerSettings {
    CompilerSettings {
        cc: CC.to_string(),
        cflags: CFLAGS.iter().map(|s| s.to_string()).collect(),
        ldflags: LDFLAGS.iter().map(|s| s.to_string()).collect(),
    }
}

/// clang, lld, and Debian's arm64 cross glibc and libgcc (which `gcc-aarch64-linux-gnu` also pulls in).
pub fn requirements() -> Vec<Requirement> {
    let build = |needed: Needed, package: &str| Requirement {
        needed,
        package: package.to_string(),
        purpose: Purpose::Build,
    };
    vec![
        build(Needed::Command(CC.to_string()), "clang-19"),
        build(Needed::File("/usr/lib/llvm-19/bin/ld.lld".to_string()), "lld-19"),
        build(
            Needed::File("/usr/aarch64-linux-gnu/lib/libc.a".to_string()),
            "libc6-dev-arm64-cross",
        ),
        build(
            Needed::File("/usr/lib/gcc-cross/aarch64-linux-gnu/12/crtbeginT.o".to_string()),
            "libgcc-12-dev-arm64-cross",
        ),
    ]
}
