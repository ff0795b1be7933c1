//! Generations and the archive of promoted generations.
//!
//! A *generation* is one directory per (recipe digest, host) holding `manifest.ron` — what the
//! generation was made from and the sha256 of every file — with the generated sources under `src/`
//! and the binary under `bin/`. The *archive* keeps promoted generations of each recipe as
//! `archive/<recipe>/vN/`, numbered from 1 and never reused, with `archive/<recipe>/CURRENT`
//! naming the current one.
//!
//! This crate owns the manifest's schema ([`Manifest`]), checking a generation against it
//! ([`verify_generation`]), the archive's layout and its operations ([`RecipeArchive`]: promote,
//! rollback, garbage collection, its lock), and comparing two generations function by function
//! ([`diff_generations`]). It does file-system work only: no processes, no terminal; the CLI
//! prints what these functions return.
//!
//! Invariant: nothing written here holds a timestamp or an absolute path, so the same inputs give
//! the same bytes, and an archived version, once its directory has its final name, is complete:
//! it is assembled under a temporary name and renamed in one step.

mod diff;
mod error;
mod lock;
mod manifest;
mod store;
mod verify;

pub use diff::{Change, FieldChange, FileChange, FunctionChange, GenerationDiff, diff_generations};
pub use error::ArchiveError;
pub use lock::{ArchiveLock, LockAttempt};
pub use manifest::{
    FileHash, MANIFEST_FILE, Manifest, ManifestError, PassEntry, PluginEntry, hash_bytes, hash_files, hash_files_in,
    list_files,
};
pub use store::{
    CURRENT_FILE, LAST_FILE, LOCK_FILE, MANIFEST_HASH_FILE, Promoted, RecipeArchive, TEMP_PREFIX, Version, recipes_in,
};
pub use verify::{Problem, verify_archived, verify_generation};
