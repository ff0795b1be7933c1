//! What can go wrong naming, finding, writing or building a generation; every error names the
//! file, directory or choice involved.

use std::path::PathBuf;

use rpt_archive::ManifestError;
use rpt_build::BuildError;
use rpt_core::CoreError;
use rpt_recipe::{Location, RecipeError};

/// Naming, finding, writing or building a generation failed.
#[derive(Debug, thiserror::Error)]
pub enum GenerationError {
    /// File-system trouble; the message says what was being done, with the path.
    #[error("{what}")]
    Io {
        /// What was being done (`writing gen/demo/…/src/cpu.h`).
        what: String,
        /// The underlying error.
        source: std::io::Error,
    },
    /// A line of the run-time tier's coverage file that is not `0x<address> <count>`.
    #[error("{}:{line}: not a coverage line (`0x<address> <count>`): {text}", path.display())]
    BadCoverage {
        /// The coverage file.
        path: PathBuf,
        /// The line number, from 1.
        line: usize,
        /// The line.
        text: String,
    },
    /// A recipe path without a file name, which generations are named after.
    #[error("{}: a recipe file needs a name", .0.display())]
    RecipeName(PathBuf),
    /// The selection names a pass twice.
    #[error("--passes names `{0}` twice")]
    PassTwice(String),
    /// The host or CPU model does not exist; `location` is where the recipe names it, when it does.
    #[error("{}{}: {error}", recipe.display(), location.map(|l| format!(":{l}")).unwrap_or_default())]
    Host {
        /// The recipe file.
        recipe: PathBuf,
        /// The line and column of the offending field, when the name came from the recipe.
        location: Option<Location>,
        /// What is unknown, with the names that are known (part of this message, not a cause;
        /// boxed, as it is large and rare).
        error: Box<CoreError>,
    },
    /// The recipe file could not be read or is not valid.
    #[error(transparent)]
    Recipe(#[from] RecipeError),
    /// No generation of the recipe as it is built now.
    #[error(
        "{}: there is no generation of the recipe as it is now ({}); run `rpt recompile {}` first",
        recipe.display(),
        dir.display(),
        recipe.display()
    )]
    NoCurrent {
        /// The recipe file.
        recipe: PathBuf,
        /// Where its generation would be.
        dir: PathBuf,
    },
    /// `--generation` or `gen:ID` matches no generation of the recipe.
    #[error("no generation `{id}` in {} (there: {})", dir.display(), if known.is_empty() { "none".to_string() } else { known.join(", ") })]
    NoSuchGeneration {
        /// What was asked for.
        id: String,
        /// The recipe's generations directory (`gen/<recipe>`).
        dir: PathBuf,
        /// The generations there.
        known: Vec<String>,
    },
    /// A prefix that matches several generations.
    #[error("`{id}` names several generations in {}: {}", dir.display(), matching.join(", "))]
    Ambiguous {
        /// What was asked for.
        id: String,
        /// The recipe's generations directory.
        dir: PathBuf,
        /// The generations it matches.
        matching: Vec<String>,
    },
    /// The link of a program for a host without a C library left symbols undefined.
    #[error(
        "the {host} host has no C library, and the program needs functions the {platform} platform \
         leaves out there (its documentation lists them)"
    )]
    NeedsCLibrary {
        /// The host.
        host: String,
        /// The guest platform whose functions are missing.
        platform: String,
        /// The linker's failure, which lists the symbols.
        source: BuildError,
    },
    /// Compiling or linking failed.
    #[error(transparent)]
    Build(#[from] BuildError),
    /// Reading, hashing or writing the manifest failed.
    #[error(transparent)]
    Manifest(#[from] ManifestError),
}

impl GenerationError {
    /// Wraps an I/O error with what was being done.
    pub(crate) fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> GenerationError {
        let what = what.into();
        move |source| GenerationError::Io { what, source }
    }
}
