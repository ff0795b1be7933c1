//! The C runtime shared by every guest, embedded in rpt and written into each generation.
//!
//! The runtime is C rather than Rust because every host must be able to build it,
//! including hosts with no Rust standard library (see `docs/c-abi.md` for the contract it
//! implements). This crate only carries the text; it never compiles anything itself.
//!
//! The runtime reaches the operating system only through the host primitives of
//! `rpt_host.h`. [`LIBC_HOST_PART`] implements them on a C library; a freestanding host
//! leaves it out ([`freestanding_sources`]) and supplies them in its own shim.

#![deny(missing_docs)]

use rpt_api::SourceFile;

/// The runtime header: memory access helpers, dispatch and exit declarations, rounding helpers.
pub const HEADER: &str = include_str!("../c/rpt_runtime.h");

/// The host primitives' header: what a host's C library or shim must provide.
pub const HOST_HEADER: &str = include_str!("../c/rpt_host.h");

/// The runtime body: `main`, the guest memory reservation, dispatch, exits and rounding.
pub const SOURCE: &str = include_str!("../c/rpt_runtime.c");

/// The host primitives on a C library (`mmap`, `write`, `read`, `openat`, `clock_gettime`, `fenv`, `setjmp`, ...).
pub const LIBC_HOST_PART: &str = include_str!("../c/rpt_host_libc.c");

/// Where the header lives in a generation's `src/` (the generated `cpu.h` includes it from there).
pub const HEADER_PATH: &str = "runtime/rpt_runtime.h";

/// Where the host primitives' header lives in a generation's `src/` (shims include it as `rpt_host.h`).
pub const HOST_HEADER_PATH: &str = "runtime/rpt_host.h";

/// Where the body lives in a generation's `src/`.
pub const SOURCE_PATH: &str = "runtime/rpt_runtime.c";

/// Where the C-library host part lives in a generation's `src/`.
pub const LIBC_HOST_PART_PATH: &str = "runtime/rpt_host_libc.c";

/// Hex sha256 of this crate's sources, C files included; part of every object cache key.
pub const RUNTIME_HASH: &str = env!("RPT_SOURCE_HASH");

fn file(path: &str, contents: &str) -> SourceFile {
    SourceFile {
        path: path.to_string(),
        contents: contents.to_string(),
    }
}

/// The runtime's files for a host with a C library, at their paths relative to a generation's `src/`.
pub fn sources() -> Vec<SourceFile> {
    let mut files = freestanding_sources();
    files.push(file(LIBC_HOST_PART_PATH, LIBC_HOST_PART));
    files
}

/// The runtime's files for a freestanding host, which supplies the host primitives itself.
pub fn freestanding_sources() -> Vec<SourceFile> {
    vec![
        file(HEADER_PATH, HEADER),
        file(HOST_HEADER_PATH, HOST_HEADER),
        file(SOURCE_PATH, SOURCE),
    ]
}
