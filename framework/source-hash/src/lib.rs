//! Hashes a crate's own source files from its build script.
//!
//! Every built-in plugin, the C emitter and the runtime expose the hash of the
//! sources they were built from as `RPT_SOURCE_HASH`, so that rpt's object cache
//! and generation manifests change whenever the code producing them changes.
//! The hash covers relative paths and contents in sorted order: it is the same
//! on every machine and in every checkout location.

use std::fs;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

fn collect(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            collect(&path, out)?;
        } else {
            out.push(path);
        }
    }
    Ok(())
}

/// Hashes the listed files and directories (relative to `CARGO_MANIFEST_DIR`), prints the
/// `cargo:rerun-if-changed` lines and sets `RPT_SOURCE_HASH` for the crate being built.
///
/// Call from `build.rs`: `rpt_source_hash::emit(&["src", "runtime", "Cargo.toml"])`.
/// Paths that do not exist are skipped, so a crate may list folders it does not have yet.
pub fn emit(paths: &[&str]) {
    let root = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let mut files = Vec::new();
    for p in paths {
        let full = root.join(p);
        println!("cargo:rerun-if-changed={}", full.display());
        if full.is_dir() {
            if let Err(e) = collect(&full, &mut files) {
                panic!("cannot list {}: {e}", full.display());
            }
        } else if full.is_file() {
            files.push(full);
        }
    }
    let mut rel: Vec<(String, PathBuf)> = files
        .into_iter()
        .map(|f| {
            (
                f.strip_prefix(&root).unwrap_or(&f).to_string_lossy().replace('\\', "/"),
                f,
            )
        })
        .collect();
    rel.sort();
    let mut hasher = Sha256::new();
    for (name, path) in rel {
        let bytes = fs::read(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
        hasher.update((name.len() as u64).to_le_bytes());
        hasher.update(name.as_bytes());
        hasher.update((bytes.len() as u64).to_le_bytes());
        hasher.update(&bytes);
    }
    let digest = hasher.finalize();
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    println!("cargo:rustc-env=RPT_SOURCE_HASH={hex}");
}
