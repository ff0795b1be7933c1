//! How C is compiled and linked for AArch64 Linux, and what that needs on this machine.

use rpt_api::{CompilerSettings, Needed, Requirement};

/// The clang target triple.
pub const TRIPLE: &str = "aarch64-linux-gnu";

/// Flags for every compile beyond rpt's common ones: none. clang finds Debian's cross headers in
/// `/usr/aarch64-linux-gnu` by itself.
pub const CFLAGS: &[&str] = &[];

/// Flags for the link beyond the target and lld: `-static`, so the binary needs no AArch64 dynamic
/// loader. It then runs under `qemu-aarch64` without a sysroot (`-L`) and can be copied to any
/// AArch64 Linux as is. clang finds the cross glibc and libgcc (`crt1.o`, `crtbeginT.o`, `libc.a`)
/// by itself.
pub const LDFLAGS: &[&str] = &["-static", "-lm"];

/// The compiler settings of this host.
pub fn settings() -> CompilerSettings {
    CompilerSettings::clang_for(TRIPLE, CFLAGS, LDFLAGS)
}

/// clang, lld, and Debian's arm64 cross glibc and libgcc (which `gcc-aarch64-linux-gnu` also pulls in).
pub fn requirements() -> Vec<Requirement> {
    let mut all = Requirement::clang_19();
    for (file, package) in [
        ("/usr/aarch64-linux-gnu/lib/libc.a", "libc6-dev-arm64-cross"),
        (
            "/usr/lib/gcc-cross/aarch64-linux-gnu/12/crtbeginT.o",
            "libgcc-12-dev-arm64-cross",
        ),
    ] {
        all.push(Requirement::to_build(Needed::File(file.to_string()), package));
    }
    all
}
