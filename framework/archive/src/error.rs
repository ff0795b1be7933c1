//! What can go wrong in the archive; every error names the directory or file involved.

use std::path::PathBuf;

use crate::{ManifestError, Problem};

/// An archive operation failed.
#[derive(Debug, thiserror::Error)]
pub enum ArchiveError {
    /// File-system trouble, with what was being done.
    #[error("cannot {what}: {source}")]
    Io {
        /// What was being done, with the path.
        what: String,
        /// The underlying error.
        source: std::io::Error,
    },
    /// A manifest could not be read.
    #[error(transparent)]
    Manifest(#[from] ManifestError),
    /// A directory that should be a generation has no manifest.
    #[error("{}: not a generation (it has no manifest.ron); run `rpt recompile` to make one", .0.display())]
    NotAGeneration(PathBuf),
    /// A generation's files do not match its manifest.
    #[error("{}: the generation does not match its manifest:{}", path.display(), list(problems))]
    Damaged {
        /// The generation directory.
        path: PathBuf,
        /// What differs.
        problems: Vec<Problem>,
    },
    /// A generation of another recipe was offered.
    #[error("{}: this generation is of recipe `{found}`, not `{expected}`", path.display())]
    WrongRecipe {
        /// The generation directory.
        path: PathBuf,
        /// The recipe its manifest names.
        found: String,
        /// The recipe being archived.
        expected: String,
    },
    /// A file changed while it was being copied into the archive.
    #[error("{}: changed while it was being copied (is a recompile running?); nothing was archived", .0.display())]
    ChangedWhileCopying(PathBuf),
    /// A version that does not exist.
    #[error("{}: there is no {version} (versions: {known})", dir.display())]
    NoSuchVersion {
        /// The recipe's archive directory.
        dir: PathBuf,
        /// The version asked for.
        version: String,
        /// The versions there are.
        known: String,
    },
    /// Rollback with nothing older to go back to.
    #[error("{}: {current} is the oldest version; there is nothing to roll back to", dir.display())]
    NothingOlder {
        /// The recipe's archive directory.
        dir: PathBuf,
        /// The current version.
        current: String,
    },
    /// Text that is not a version name.
    #[error("`{0}` is not a version: write it as v1, v2, ...")]
    BadVersion(String),
    /// `CURRENT` holds something other than a version name.
    #[error("{}: holds {text:?}, not a version name such as v3", path.display())]
    BadCurrent {
        /// The CURRENT file.
        path: PathBuf,
        /// What it holds.
        text: String,
    },
    /// The archive lock belongs to another recipe's archive.
    #[error("{}: the lock held is for {}", dir.display(), held.display())]
    WrongLock {
        /// The archive the operation is on.
        dir: PathBuf,
        /// The archive the lock is for.
        held: PathBuf,
    },
}

fn list(problems: &[Problem]) -> String {
    problems.iter().map(|p| format!("\n  {p}")).collect()
}

/// Turns an I/O error into [`ArchiveError::Io`] with what was being done.
pub(crate) fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> ArchiveError {
    let what = what.into();
    move |source| ArchiveError::Io { what, source }
}
