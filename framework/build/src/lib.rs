//! Toolchain calls, the content-addressed object cache, linking and running.
//!
//! This crate is where rpt touches processes: it probes the host's C compiler, compiles
//! generated C in parallel into a cache keyed by everything that shapes an object, links
//! the objects and runs the result (natively or under an emulator). Output is
//! reproducible: the compiler runs from a common root with relative paths and a fixed
//! debug compilation directory, so no absolute path reaches an object or a binary.

#![deny(missing_docs)]

mod cache;
mod compile;
mod requirements;
mod run;
mod toolchain;

use std::path::PathBuf;

pub use cache::ObjectCache;
pub use compile::{CompileJob, CompileReport, cache_key, compile_all, content_hash, link};
pub use requirements::{MissingPiece, check_requirements, check_with_path};
pub use run::{run, run_captured};
pub use toolchain::Toolchain;

/// What can go wrong while compiling, linking or running.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// The compiler command does not exist.
    #[error(
        "the C compiler `{cc}` was not found; install it with `apt-get install clang-19 lld-19` \
         or name another compiler in the recipe's host settings"
    )]
    CompilerMissing {
        /// The command that was tried.
        cc: String,
    },
    /// This machine lacks something a host needs (a cross C library, an emulator).
    #[error(
        "host `{host}`: cannot {purpose} on this machine: {} missing; install with \
         `apt-get install {}` (scripts/install-deps.sh test installs every host's packages)",
        describe_missing(missing),
        requirements::packages(missing)
    )]
    Missing {
        /// The host.
        host: String,
        /// What could not be done (`build for it`, `run what was built for it`).
        purpose: &'static str,
        /// Every missing piece with its package.
        missing: Vec<MissingPiece>,
    },
    /// The compiler exists but `--version` failed.
    #[error("the C compiler `{cc}` does not work (`{cc} --version` failed): {detail}")]
    CompilerBroken {
        /// The command that was tried.
        cc: String,
        /// Its error output or the reason it could not start.
        detail: String,
    },
    /// A file-system operation failed.
    #[error("cannot {what}: {source}")]
    Io {
        /// What was being done, with the path.
        what: String,
        /// The underlying error.
        source: std::io::Error,
    },
    /// Two compile jobs would write the same object file.
    #[error("two compile jobs are both named `{0}`")]
    DuplicateJob(String),
    /// The compiler rejected a source file.
    #[error("compiling {file} failed:\n{stderr}")]
    Compile {
        /// The source file.
        file: PathBuf,
        /// The compiler's error output.
        stderr: String,
    },
    /// The link failed.
    #[error("linking {output} failed:\n{stderr}")]
    Link {
        /// The executable being linked.
        output: PathBuf,
        /// The linker's error output.
        stderr: String,
    },
    /// A program could not be started.
    #[error("cannot run {program}: {source}")]
    Run {
        /// The program (the binary, or the emulator running it).
        program: String,
        /// Why it did not start.
        source: std::io::Error,
    },
}

fn describe_missing(missing: &[MissingPiece]) -> String {
    let pieces: Vec<String> = missing
        .iter()
        .map(|m| format!("{} (package {})", m.what, m.package))
        .collect();
    let verb = if pieces.len() == 1 { "is" } else { "are" };
    format!("{} {verb}", pieces.join(", "))
}

impl BuildError {
    pub(crate) fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> BuildError {
        let what = what.into();
        move |source| BuildError::Io { what, source }
    }
}
