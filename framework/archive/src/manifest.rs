//! `manifest.ron`: what a generation was made from and the hash of every file in it.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// A plugin that took part in a generation.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PluginEntry {
    /// `guest`, `host` or `pass`.
    pub kind: String,
    /// The plugin's name.
    pub name: String,
    /// Its version.
    pub version: String,
    /// Hex sha256 of its sources or library.
    pub hash: String,
}

/// A pass that ran, with its parameters as the recipe gave them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PassEntry {
    /// The pass.
    pub name: String,
    /// Parameters rendered as `name=value`, sorted.
    pub params: Vec<String>,
}

/// The hash of one file of the generation, by path relative to the generation directory.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileHash {
    /// Relative path with `/` separators.
    pub path: String,
    /// Hex sha256 of the file's bytes.
    pub sha256: String,
}

/// Everything that identifies a generation.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// The recipe's name (its file stem).
    pub recipe: String,
    /// The recipe digest.
    pub recipe_digest: String,
    /// Hex sha256 of the guest image.
    pub image_sha256: String,
    /// The host the binary is for.
    pub host: String,
    /// rpt's version.
    pub rpt_version: String,
    /// Hash of the C emitter's sources.
    pub emitter_hash: String,
    /// Hash of the C runtime's sources.
    pub runtime_hash: String,
    /// The compiler's identity (`clang-19 --version`, first line).
    pub compiler: String,
    /// Compile flags.
    pub cflags: Vec<String>,
    /// Link flags.
    pub ldflags: Vec<String>,
    /// Plugins, sorted by kind then name.
    pub plugins: Vec<PluginEntry>,
    /// Passes in the order they ran.
    pub passes: Vec<PassEntry>,
    /// Reports passes left for the manifest (e.g. a flag-ABI audit), by pass name.
    pub pass_reports: BTreeMap<String, String>,
    /// The places of code rpt could not lift, each compiled to a guest fault raised only if
    /// executed, as `0x00401005: what is wrong there`, in address order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fault_sites: Vec<String>,
    /// The imports the platform lacks (`KERNEL32.dll!FormatMessageA`), in import-table order: each a
    /// stub that stops the program if it is called.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stubbed_imports: Vec<String>,
    /// The sha256 of the run-time tier's coverage file the build read its coverage entries from
    /// (the entries themselves are in `recipe_form`), when there was one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tier_coverage_sha256: Option<String>,
    /// The recipe's canonical form (the text its digest hashes), one entry per line, so two
    /// generations show which recipe settings differ.
    #[serde(default)]
    pub recipe_form: Vec<String>,
    /// The C files compiled into the binary, relative to the generation directory, in link order.
    #[serde(default)]
    pub compile_units: Vec<String>,
    /// The compiler's include directories, relative to the generation directory.
    #[serde(default)]
    pub include_dirs: Vec<String>,
    /// The linked binary, relative to the generation directory (`bin/<recipe>`).
    #[serde(default)]
    pub binary: String,
    /// Every file of the generation except the manifest, sorted by path.
    pub files: Vec<FileHash>,
}

/// Reading or writing a manifest failed.
#[derive(Debug, thiserror::Error)]
pub enum ManifestError {
    /// File-system trouble, with the path.
    #[error("{path}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The manifest text is not valid.
    #[error("{path}: {message}")]
    Parse {
        /// The manifest file.
        path: PathBuf,
        /// What is wrong, with line and column.
        message: String,
    },
}

/// Hex sha256 of some bytes.
pub fn hash_bytes(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) -> Result<(), ManifestError> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| ManifestError::Io { path, source }
    };
    for entry in fs::read_dir(dir).map_err(io(dir))? {
        let path = entry.map_err(io(dir))?.path();
        if path.is_dir() {
            walk(root, &path, out)?;
        } else {
            let rel = path
                .strip_prefix(root)
                .unwrap_or(&path)
                .to_string_lossy()
                .replace('\\', "/");
            out.push(rel);
        }
    }
    Ok(())
}

/// Every file under `root`, by path relative to it with `/` separators, sorted.
pub fn list_files(root: &Path) -> Result<Vec<String>, ManifestError> {
    let mut out = Vec::new();
    walk(root, root, &mut out)?;
    out.sort();
    Ok(out)
}

/// Hashes every file under `root` (except `manifest.ron`), sorted by relative path.
pub fn hash_files(root: &Path) -> Result<Vec<FileHash>, ManifestError> {
    let files = list_files(root)?.into_iter().filter(|rel| rel != MANIFEST_FILE);
    hash_each(root, files)
}

/// Hashes every file under `root/subdir`, by path relative to `root` (`src/cpu.h` for `src`),
/// sorted: the files of one part of a generation, without reading the rest of it.
pub fn hash_files_in(root: &Path, subdir: &str) -> Result<Vec<FileHash>, ManifestError> {
    let files = list_files(&root.join(subdir))?
        .into_iter()
        .map(|rel| format!("{subdir}/{rel}"));
    hash_each(root, files)
}

/// Hashes the files at the given paths relative to `root`, in their order.
fn hash_each(root: &Path, relative_paths: impl Iterator<Item = String>) -> Result<Vec<FileHash>, ManifestError> {
    relative_paths
        .map(|rel| {
            let path = root.join(&rel);
            let bytes = fs::read(&path).map_err(|source| ManifestError::Io { path, source })?;
            Ok(FileHash {
                path: rel,
                sha256: hash_bytes(&bytes),
            })
        })
        .collect()
}

/// The manifest's file name in a generation directory.
pub const MANIFEST_FILE: &str = "manifest.ron";

impl Manifest {
    /// The manifest as RON text, in a fixed layout.
    pub fn to_text(&self) -> String {
        let config = ron::ser::PrettyConfig::new().indentor("  ".to_string());
        // Serialising plain strings, vectors and maps cannot fail.
        ron::ser::to_string_pretty(self, config).unwrap_or_default() + "\n"
    }

    /// Writes `manifest.ron` into a generation directory.
    pub fn write(&self, generation: &Path) -> Result<(), ManifestError> {
        let path = generation.join("manifest.ron");
        fs::write(&path, self.to_text()).map_err(|source| ManifestError::Io { path, source })
    }

    /// Reads `manifest.ron` from a generation directory.
    pub fn read(generation: &Path) -> Result<Manifest, ManifestError> {
        let path = generation.join(MANIFEST_FILE);
        let bytes = fs::read(&path).map_err(|source| ManifestError::Io {
            path: path.clone(),
            source,
        })?;
        Manifest::parse(&path, &bytes)
    }

    /// Parses manifest bytes; `path` names the file in errors.
    pub fn parse(path: &Path, bytes: &[u8]) -> Result<Manifest, ManifestError> {
        let text = std::str::from_utf8(bytes).map_err(|e| ManifestError::Parse {
            path: path.to_path_buf(),
            message: format!("not UTF-8: {e}"),
        })?;
        let manifest: Manifest = ron::from_str(text).map_err(|e| ManifestError::Parse {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        manifest.check_paths().map_err(|message| ManifestError::Parse {
            path: path.to_path_buf(),
            message,
        })?;
        Ok(manifest)
    }

    /// Every path a manifest names must stay inside its generation: relative, `/`-separated, with
    /// no `..`, `.` or empty component, so reading a damaged or hostile manifest never reaches
    /// files elsewhere.
    fn check_paths(&self) -> Result<(), String> {
        let paths = self
            .files
            .iter()
            .map(|f| f.path.as_str())
            .chain(self.compile_units.iter().map(String::as_str))
            .chain(self.include_dirs.iter().map(String::as_str))
            .chain((!self.binary.is_empty()).then_some(self.binary.as_str()));
        for p in paths {
            let inside =
                !p.is_empty() && !p.contains('\\') && p.split('/').all(|c| !c.is_empty() && c != "." && c != "..");
            if !inside {
                return Err(format!(
                    "the path {p:?} leaves the generation directory or is malformed"
                ));
            }
        }
        Ok(())
    }

    /// The hash recorded for `path`, if the manifest lists it.
    pub fn file_hash(&self, path: &str) -> Option<&str> {
        self.files.iter().find(|f| f.path == path).map(|f| f.sha256.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Manifest {
        Manifest {
            recipe: "demo".into(),
            recipe_digest: "ab".into(),
            image_sha256: "cd".into(),
            host: "x86-64".into(),
            rpt_version: "0.1.0".into(),
            emitter_hash: "e".into(),
            runtime_hash: "r".into(),
            compiler: "clang version 19".into(),
            cflags: vec!["-O2".into()],
            ldflags: vec![],
            plugins: vec![PluginEntry {
                kind: "guest".into(),
                name: "x86-pe".into(),
                version: "0.1.0".into(),
                hash: "h".into(),
            }],
            passes: vec![],
            pass_reports: BTreeMap::new(),
            fault_sites: vec![],
            stubbed_imports: vec![],
            tier_coverage_sha256: None,
            recipe_form: vec!["rpt-recipe-digest 1".into()],
            compile_units: vec!["src/a.c".into()],
            include_dirs: vec!["src".into()],
            binary: "bin/demo".into(),
            files: vec![FileHash {
                path: "src/a.c".into(),
                sha256: hash_bytes(b"x"),
            }],
        }
    }

    #[test]
    fn manifest_round_trips_through_its_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        let m = sample();
        m.write(dir.path()).expect("write");
        assert_eq!(Manifest::read(dir.path()).expect("read"), m);
    }

    #[test]
    fn file_hashes_are_sorted_relative_and_skip_the_manifest() {
        let dir = tempfile::tempdir().expect("tempdir");
        fs::create_dir_all(dir.path().join("src/guest")).expect("mkdir");
        fs::write(dir.path().join("src/guest/b.c"), "b").expect("write");
        fs::write(dir.path().join("src/a.c"), "a").expect("write");
        fs::write(dir.path().join("manifest.ron"), "()").expect("write");
        let hashes = hash_files(dir.path()).expect("hash");
        let paths: Vec<&str> = hashes.iter().map(|h| h.path.as_str()).collect();
        assert_eq!(paths, ["src/a.c", "src/guest/b.c"]);
        assert_eq!(hashes[0].sha256, hash_bytes(b"a"));
        let in_guest = hash_files_in(dir.path(), "src/guest").expect("hash");
        assert_eq!(in_guest, [hashes[1].clone()]);
    }

    #[test]
    fn paths_outside_the_generation_are_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        for bad in ["../etc/passwd", "/etc/passwd", "src//a.c", "src/./a.c", ""] {
            let mut m = sample();
            m.files[0].path = bad.into();
            m.write(dir.path()).expect("write");
            let e = Manifest::read(dir.path()).expect_err(bad);
            assert!(e.to_string().contains("leaves the generation directory"), "{e}");
        }
    }

    #[test]
    fn a_damaged_manifest_is_an_error_naming_the_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        fs::write(dir.path().join("manifest.ron"), "(recipe: 3").expect("write");
        let e = Manifest::read(dir.path()).expect_err("must fail");
        assert!(e.to_string().contains("manifest.ron"), "{e}");
    }
}
