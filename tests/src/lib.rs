//! What the end-to-end tests share: finding the workspace, building and running `rpt`, building oracles.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use sha2::{Digest, Sha256};

pub mod matrix;
pub mod real;
pub mod snes_rom;

/// The workspace's root directory.
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

/// The `rpt` binary, built once per test process with the same cargo that runs the tests.
///
/// `cargo test --workspace` has normally built it already, so this is a quick no-op build.
pub fn rpt_binary() -> &'static Path {
    static BINARY: OnceLock<PathBuf> = OnceLock::new();
    BINARY.get_or_init(|| {
        let root = workspace_root();
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
        let status = Command::new(cargo)
            .args(["build", "--quiet", "-p", "rpt-cli", "--bin", "rpt"])
            .current_dir(&root)
            .status()
            .expect("cargo runs");
        assert!(status.success(), "building rpt failed");
        let target = std::env::var_os("CARGO_TARGET_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| root.join("target"));
        target.join("debug").join("rpt")
    })
}

/// Runs `rpt` with arguments from the workspace root, with progress bars off.
pub fn rpt(args: &[&str]) -> Output {
    Command::new(rpt_binary())
        .args(args)
        .current_dir(workspace_root())
        .env("CI", "1")
        .output()
        .expect("rpt starts")
}

/// Runs `rpt <command> <recipe>` with generations and the object cache kept in the given directories.
pub fn rpt_in(command: &str, recipe: &str, gen_dir: &Path, cache_dir: &Path, extra: &[&str]) -> Output {
    let gen_dir = gen_dir.to_str().expect("utf-8 path");
    let cache_dir = cache_dir.to_str().expect("utf-8 path");
    let mut args = vec![command, recipe, "--gen-dir", gen_dir, "--cache-dir", cache_dir];
    args.extend_from_slice(extra);
    rpt(&args)
}

/// Hex sha256 of a file's bytes.
pub fn sha256_file(path: &Path) -> String {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    Sha256::digest(&bytes).iter().map(|b| format!("{b:02x}")).collect()
}

/// Standard error of a run, as text.
pub fn stderr_of(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Extracts the object counts from rpt's summary line `objects: N compiled, M reused`.
pub fn object_counts(stderr: &str) -> (usize, usize) {
    let line = stderr
        .lines()
        .find_map(|l| l.trim().strip_prefix("objects: "))
        .unwrap_or_else(|| panic!("no `objects:` line in rpt's report:\n{stderr}"));
    let numbers: Vec<usize> = line
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|w| w.parse().ok())
        .collect();
    assert_eq!(numbers.len(), 2, "unexpected objects line: {line}");
    (numbers[0], numbers[1])
}

pub use rpt_testkit::toolchains::{build_freestanding_pe as build_pe, build_native_i386};

/// The text of every IR file (`.rir`) a generation under `root` holds, in path order.
pub fn ir_text(root: &Path) -> String {
    read_tree(root)
        .into_iter()
        .filter(|(path, _)| path.ends_with(".rir"))
        .map(|(_, bytes)| String::from_utf8_lossy(&bytes).into_owned())
        .collect()
}

/// Every file under `root` with its bytes, by relative path, sorted.
pub fn read_tree(root: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("readable dir").flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let rel = path.strip_prefix(root).expect("under root").display().to_string();
                out.push((rel, std::fs::read(&path).expect("readable file")));
            }
        }
    }
    out.sort();
    out
}
