//! Records what determines the memory layout of the IR types: their source, the compiler and
//! the target. rpt-api's shared-layout plugin transport compares it between host and plugin.

use std::process::Command;

fn main() {
    rpt_source_hash::emit(&["src", "Cargo.toml", "build.rs"]);
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_string());
    // `-vV` names the exact compiler build (commit and LLVM), not only its version.
    let compiler = Command::new(&rustc)
        .arg("-vV")
        .output()
        .map(|out| String::from_utf8_lossy(&out.stdout).into_owned())
        .unwrap_or_else(|e| panic!("cannot run `{rustc} -vV`: {e}"));
    let target = std::env::var("TARGET").unwrap_or_default();
    let flags = layout_flags(&std::env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default());
    println!("cargo:rerun-if-env-changed=RUSTC");
    println!("cargo:rerun-if-env-changed=CARGO_ENCODED_RUSTFLAGS");
    // One line: a `rustc-env` value cannot hold a line break.
    let compiler = compiler.split_whitespace().collect::<Vec<_>>().join(" ");
    println!("cargo:rustc-env=RPT_IR_COMPILER={compiler}; target {target}; flags [{flags}]");
}

/// The compiler flags that may change how a type is laid out: everything but the codegen
/// options (`-C`: optimisation, debug info, target CPU, linker arguments), which never change the
/// layout of a `repr(Rust)` type. `-Z` flags (`-Zrandomize-layout`) and `--cfg` stay. rpt builds
/// plugins with other debug-info flags than its own, so those must not count.
fn layout_flags(encoded: &str) -> String {
    let mut kept = Vec::new();
    let mut flags = encoded.split('\x1f').filter(|f| !f.is_empty());
    while let Some(flag) = flags.next() {
        if flag == "-C" || flag == "--codegen" {
            flags.next();
        } else if !flag.starts_with("-C") && !flag.starts_with("--codegen=") {
            kept.push(flag);
        }
    }
    kept.join(" ")
}
