//! How C is compiled and linked for x86-64 Linux, and what that needs on this machine.

use rpt_api::{CompilerSettings, Needed, Requirement};

/// The clang target triple.
pub const TRIPLE: &str = "x86_64-linux-gnu";

/// Flags for every compile beyond rpt's common ones (`rpt_api::COMMON_CFLAGS` says why each is there).
pub const CFLAGS: &[&str] = &[];

/// Flags for the link beyond the target and lld: `-lm`, since the runtime's `fenv` calls
/// (directed rounding) need libm on glibc.
pub const LDFLAGS: &[&str] = &["-lm"];

/// The compiler settings of this host.
pub fn settings() -> CompilerSettings {
    CompilerSettings::clang_for(TRIPLE, CFLAGS, LDFLAGS)
}

/// clang, lld (which clang finds beside itself) and glibc's development files.
pub fn requirements() -> Vec<Requirement> {
    let mut all = Requirement::clang_19();
    all.push(Requirement::to_build(
        Needed::File("/usr/lib/x86_64-linux-gnu/crt1.o".to_string()),
        "libc6-dev",
    ));
    all
}
