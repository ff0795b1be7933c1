//! How C is compiled and linked for x86-64 Linux, and what that needs on this machine.

use rpt_api::{CompilerSettings, Needed, Purpose, Requirement};

/// The clang target triple.
pub const TRIPLE: &str = "x86_64-linux-gnu";

/// The compiler command.
pub const CC: &str = "clang-19";

/// Flags for every compile, each for a reason:
///
/// - `-O2`: the speed recompiled code is for.
/// - `-fno-strict-aliasing`: lifted code reads one guest address with several types.
/// - `-fno-math-errno`: `sqrt` becomes one instruction instead of a libm call that sets errno.
/// - `-ffp-contract=off`: each IR float operation rounds once; fusing into FMA would not.
/// - `-gline-tables-only`: the `#line` guest-pc mapping reaches the binary for profilers
///   and debuggers, without full debug info.
/// - `-Wall`: generated code and the runtime are kept warning-free; rpt reports any warning as
///   a bug of its own.
///
/// `-fwrapv` is deliberately absent: the emitter does all integer arithmetic in unsigned
/// types, so signed overflow cannot occur in generated code.
pub const CFLAGS: &[&str] = &[
    "--target=x86_64-linux-gnu",
    "-O2",
    "-fno-strict-aliasing",
    "-fno-math-errno",
    "-ffp-contract=off",
    "-gline-tables-only",
    "-Wall",
];

/// Flags for the link. lld is fast and deterministic; `-lm` and the runtime's `fenv` calls
/// (directed rounding) need libm on glibc.
pub const LDFLAGS: &[&str] = &["--target=x86_64-linux-gnu", "-fuse-ld=lld", "-lm"];

/// The compiler settings of this host.
pub fn settings() -> CompilerSettings {
    CompilerSettings {
        cc: CC.to_string(),
        cflags: CFLAGS.iter().map(|s| s.to_string()).collect(),
        ldflags: LDFLAGS.iter().map(|s| s.to_string()).collect(),
    }
}

/// clang, lld (which clang finds beside itself) and glibc's development files.
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
            Needed::File("/usr/lib/x86_64-linux-gnu/crt1.o".to_string()),
            "libc6-dev",
        ),
    ]
}
