//! The C runtime shared by every guest, embedded in rpt and written into each generation.
//!
//! The runtime is C rather than Rust because every host must be able to build it,
//! including hosts with no Rust standard library (see `docs/c-abi.md` for the contract it
//! implements). This crate only carries the text; it never compiles anything itself.

#![deny(missing_docs)]

use rpt_api::SourceFile;

/// The runtime header: memory access helpers, dispatch and exit declarations, rounding helpers.
pub const HEADER: &str = include_str!("../c/rpt_runtime.h");

/// The runtime body: `main`, the guest memory reservation, dispatch, exits and rounding.
pub const SOURCE: &str = include_str!("../c/rpt_runtime.c");

/// Where the header lives in a generation's `src/` (the generated `cpu.h` includes it from there).
pub const HEADER_PATH: &str = "runtime/rpt_runtime.h";

/// Where the body lives in a generation's `src/`.
pub const SOURCE_PATH: &str = "runtime/rpt_runtime.c";

/// Hex sha256 of this crate's sources, C files included; part of every object cache key.
pub const RUNTIME_HASH: &str = env!("RPT_SOURCE_HASH");

/// The runtime's files, at their paths relative to a generation's `src/`.
pub fn sources() -> Vec<SourceFile> {
    vec![
        SourceFile {
            path: HEADER_PATH.to_string(),
            contents: HEADER.to_string(),
        },
        SourceFile {
            path: SOURCE_PATH.to_string(),
            contents: SOURCE.to_string(),
        },
    ]
}
