//! Generations (DESIGN.md §8): one build of one recipe for one host, and the one place that knows
//! what a generation is called, where its pieces go, what its manifest records and how its binary
//! is made from its sources.
//!
//! - **Its recipe.** A command's `--host`, `--host-cpu` and `--passes` ([`Selection`]) turn the
//!   recipe file into the *effective recipe* ([`effective_recipe`]); a host other than the recipe's
//!   drops the recipe's `host_cpu` and `l1i`, which describe the recipe's own host.
//! - **Its name.** `<first 16 hex digits of the effective recipe's digest>-<host>`
//!   ([`generation_name`]), in `gen/<recipe>/` ([`GenerationDir`]). Every command that names a
//!   generation goes through [`effective_recipe`] (with the coverage file: [`effective_recipe_with_coverage`]), so `recompile` writes the directory that
//!   `promote` with the same flags looks for ([`current_generation`]); `--generation` and
//!   `bench --vs gen:ID` name one by name or prefix ([`named_generation`]).
//! - **Its coverage.** The run-time tier's coverage file (`coverage`: where the program entered
//!   the tier) adds entry points to the effective recipe ([`EffectiveRecipe::with_coverage`]),
//!   and with them to the digest and the name.
//! - **Its layout.** `src/` (generated C, `src/runtime/`, `src/overrides/`), `obj/`,
//!   `bin/<recipe>`, the include directories, `manifest.ron` ([`layout`] has the picture); the
//!   runtime files a host needs ([`runtime_files`]: with the C library's host part, or without it
//!   and with the host's shim).
//! - **Its build.** [`build`] writes `src/` afresh, drafts the manifest (`rpt_archive::Manifest`)
//!   and builds the binary through [`compile_and_link`], which `rpt build` also uses to rebuild a
//!   generation from its recorded manifest; the object cache key of both is [`object_key_extra`].
//!
//! Why a crate and not a module of `rpt-archive`: writing and building a generation needs the core's
//! output, the runtime's files and the build crate's compiler calls, and `rpt-archive` stays
//! file-system work over finished generations (manifests, hashes, the archive). This crate starts
//! no process itself (compiling goes through `rpt-build`) and prints nothing: it reports through
//! [`BuildEvent`]s and typed errors, and the CLI prints.
//!
//! Invariant: nothing it writes holds a timestamp or an absolute path, and the files are written in
//! the core's sorted order, so the same inputs give the same bytes.

#![deny(missing_docs)]

mod build;
mod coverage;
mod error;
pub mod layout;
mod select;

pub use build::{BuildEvent, Built, Linked, NewGeneration, build, compile_and_link, object_key_extra, runtime_files};
pub use coverage::{
    DEFAULT_COVERAGE_FILE, TierCoverage, effective_recipe_with_coverage, read_tier_coverage, tier_coverage_path,
};
pub use error::GenerationError;
pub use layout::{
    GenerationDir, current_generation, default_archive_root, default_gen_root, default_rebuild_dir, generation_name,
    manifest_generation_name, named_generation, project_dir, recipe_generations, recipe_name,
};
pub use select::{EffectiveRecipe, Selection, effective_recipe};
