//! Compiles a guest's helper C into the guest crate, from its build script, for the IR interpreter.
//!
//! A guest's runtime helpers (`rpt_helper_*`, docs/c-abi.md) are written once, in C: generations
//! compile the guest's C part, and the guest crate compiles the same files into itself so that
//! the reference interpreter calls them through FFI (ARCHITECTURE.md, "Helper semantics: one copy,
//! in C"). This crate holds what every guest's build does alike: the compiler flags generated code
//! is built with, the runtime header's folder, the guest's interpreter `cpu.h`, and telling the
//! crate which files it compiled.
//!
//! In a guest's `build.rs`:
//!
//! ```no_run
//! let files = ["runtime/ppc_helpers.c"];
//! rpt_interp_build::helpers("interp", &files).compile("ppc_helpers");
//! rpt_interp_build::announce(&files);
//! ```

use std::path::{Path, PathBuf};

/// The folder of the runtime's C files (`rpt_runtime.h`, `rpt_host.h`), beside this crate.
fn runtime_c_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../runtime/c")
}

/// A compiler set up for helper C: `files` (relative to the guest crate) against the guest's
/// interpreter `cpu.h` in `interpreter_dir`, which defines `RPT_INTERPRETER` before it includes
/// `rpt_runtime.h`.
///
/// The flags are the ones hosts build generated code with that change what code means
/// (`-fno-strict-aliasing`, `-fno-math-errno`, `-ffp-contract=off`: no fused multiply-adds on
/// hosts that have them) at `-O2`, and `-Wall` with warnings as errors, as generated C is held to.
/// It also asks cargo to rebuild when the runtime's headers or `interpreter_dir` change.
pub fn helpers(interpreter_dir: &str, files: &[&str]) -> cc::Build {
    let runtime = runtime_c_dir();
    for header in ["rpt_runtime.h", "rpt_host.h"] {
        println!("cargo:rerun-if-changed={}", runtime.join(header).display());
    }
    println!("cargo:rerun-if-changed={interpreter_dir}");
    let mut build = cc::Build::new();
    build
        .files(files)
        .include(interpreter_dir)
        .include(runtime)
        .opt_level(2)
        .flag("-fno-strict-aliasing")
        .flag("-fno-math-errno")
        .flag("-ffp-contract=off")
        .warnings(true)
        .extra_warnings(false)
        .warnings_into_errors(true);
    build
}

/// Tells the crate which helper C files it compiled: `env!("RPT_INTERPRETER_C")`, the paths
/// (relative to the crate) separated by spaces, for its test that they are the generation's files.
pub fn announce(files: &[&str]) {
    for file in files {
        println!("cargo:rerun-if-changed={file}");
    }
    println!("cargo:rustc-env=RPT_INTERPRETER_C={}", files.join(" "));
}
