//! Generations and their manifests.
//!
//! This crate owns the layout of a generation directory (`manifest.ron`,
//! `src/`, `bin/`), the manifest's schema and the content hashes in it.
//! Promotion, rollback, diff and verify of archived generations build on these
//! (the [archive] issue); this first cut writes and reads manifests.
//!
//! Invariant: nothing written here holds a timestamp or an absolute path, so
//! the same inputs give the same bytes.

mod manifest;

pub use manifest::{FileHash, Manifest, ManifestError, PassEntry, PluginEntry, hash_bytes, hash_files};
