//! How C is compiled and linked for LoongArch64 Linux without a C library, and what that needs.

use rpt_api::{CompilerSettings, Requirement};

/// The clang target triple.
pub const TRIPLE: &str = "loongarch64-linux-gnu";

/// Flags for every compile beyond rpt's common ones (`rpt_api::COMMON_CFLAGS`):
///
/// - `-mno-lsx`: clang-19 enables the LSX vector extension by default, and Debian 12's
///   `qemu-loongarch64` (7.2) does not implement it: vectorised code dies with SIGILL. rpt keeps
///   the LA64 base ISA so its output runs on every LoongArch64 CPU and under the stock emulator.
///   Real 3A5000/3A6000 machines have LSX: a recipe for them may add `compiler: (cflags: ["-mlsx"])`
///   (and test under qemu-user 10 from bookworm-backports, which runs LSX).
/// - `-ffreestanding -nostdlibinc`: there is no LoongArch C library or header set here. clang's own
///   `<stddef.h>` and `<stdint.h>` remain; the x86-64 system headers in `/usr/include` must not be
///   picked up.
/// - `-fno-stack-protector`: there is no C library to supply the stack guard.
/// - `-fno-pic`: the binary is a static executable; direct addressing is shorter than the GOT.
pub const CFLAGS: &[&str] = &[
    "-mno-lsx",
    "-ffreestanding",
    "-nostdlibinc",
    "-fno-stack-protector",
    "-fno-pic",
];

/// Flags for the link beyond the target and lld (which is required: GNU ld here does not know
/// LoongArch): a static executable with no start files and no libraries (the shim brings `_start`
/// and everything else).
pub const LDFLAGS: &[&str] = &["-nostdlib", "-static"];

/// The compiler settings of this host.
pub fn settings() -> CompilerSettings {
    CompilerSettings::clang_for(TRIPLE, CFLAGS, LDFLAGS)
}

/// clang and lld; nothing else, since the shim replaces the C library.
pub fn requirements() -> Vec<Requirement> {
    Requirement::clang_19()
}
