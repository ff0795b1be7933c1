//! Rechecking a generation against its manifest: every listed file's hash, and nothing extra.

use std::fmt;
use std::fs;
use std::path::Path;

use crate::error::{ArchiveError, io};
use crate::store::MANIFEST_HASH_FILE;
use crate::{MANIFEST_FILE, Manifest, hash_bytes, list_files};

/// One way a generation's files disagree with its manifest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Problem {
    /// A listed file is not there.
    Missing {
        /// The file, relative to the generation.
        path: String,
    },
    /// A listed file's bytes have another hash.
    Differs {
        /// The file, relative to the generation.
        path: String,
        /// The hash the manifest records.
        expected: String,
        /// The hash of the bytes found.
        actual: String,
    },
    /// A file is there that the manifest does not list.
    Extra {
        /// The file, relative to the generation.
        path: String,
    },
    /// A listed path cannot be read as a file.
    Unreadable {
        /// The file, relative to the generation.
        path: String,
        /// Why.
        error: String,
    },
}

impl Problem {
    /// The file the problem is about.
    pub fn path(&self) -> &str {
        match self {
            Problem::Missing { path }
            | Problem::Differs { path, .. }
            | Problem::Extra { path }
            | Problem::Unreadable { path, .. } => path,
        }
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Problem::Missing { path } => write!(f, "missing: {path}"),
            Problem::Differs { path, expected, actual } => {
                write!(f, "differs: {path} (sha256 {actual}, manifest says {expected})")
            }
            Problem::Extra { path } => write!(f, "extra: {path} (not in the manifest)"),
            Problem::Unreadable { path, error } => write!(f, "unreadable: {path}: {error}"),
        }
    }
}

/// Checks every file the manifest of the generation at `dir` lists; `is_extra` decides which
/// unlisted files count as problems (a generation in `gen/` keeps a cache of objects in `obj/`).
///
/// Problems come back sorted by path; an empty list means the generation is intact.
pub fn verify_generation(dir: &Path, is_extra: &dyn Fn(&str) -> bool) -> Result<Vec<Problem>, ArchiveError> {
    if !dir.join(MANIFEST_FILE).is_file() {
        return Err(ArchiveError::NotAGeneration(dir.to_path_buf()));
    }
    let manifest = Manifest::read(dir)?;
    let mut problems = Vec::new();
    for file in &manifest.files {
        match fs::read(dir.join(&file.path)) {
            Ok(bytes) => {
                let actual = hash_bytes(&bytes);
                if actual != file.sha256 {
                    problems.push(Problem::Differs {
                        path: file.path.clone(),
                        expected: file.sha256.clone(),
                        actual,
                    });
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => problems.push(Problem::Missing {
                path: file.path.clone(),
            }),
            Err(e) => problems.push(Problem::Unreadable {
                path: file.path.clone(),
                error: e.to_string(),
            }),
        }
    }
    for path in list_files(dir)? {
        if path != MANIFEST_FILE && manifest.file_hash(&path).is_none() && is_extra(&path) {
            problems.push(Problem::Extra { path });
        }
    }
    problems.sort_by(|a, b| a.path().cmp(b.path()));
    Ok(problems)
}

/// Checks an archived version: every listed file, no file beyond them, and the manifest itself
/// against the hash recorded beside it when it was promoted (`manifest.sha256`).
pub fn verify_archived(dir: &Path) -> Result<Vec<Problem>, ArchiveError> {
    let mut problems = verify_generation(dir, &|path| path != MANIFEST_HASH_FILE)?;
    let recorded_path = dir.join(MANIFEST_HASH_FILE);
    let manifest_bytes =
        fs::read(dir.join(MANIFEST_FILE)).map_err(io(format!("read {}", dir.join(MANIFEST_FILE).display())))?;
    let actual = hash_bytes(&manifest_bytes);
    match fs::read_to_string(&recorded_path) {
        Ok(text) => {
            let expected = text.trim().to_string();
            if expected != actual {
                problems.push(Problem::Differs {
                    path: MANIFEST_FILE.to_string(),
                    expected,
                    actual,
                });
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => problems.push(Problem::Missing {
            path: MANIFEST_HASH_FILE.to_string(),
        }),
        Err(e) => problems.push(Problem::Unreadable {
            path: MANIFEST_HASH_FILE.to_string(),
            error: e.to_string(),
        }),
    }
    problems.sort_by(|a, b| a.path().cmp(b.path()));
    Ok(problems)
}
