//! Recipe errors: every one names the file it is about, and a line and column where there is one.

use std::fmt;
use std::path::{Path, PathBuf};

/// A line and column in a recipe file, both counted from 1; the column counts characters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Location {
    /// The line, from 1.
    pub line: usize,
    /// The column in characters, from 1.
    pub column: usize,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.column)
    }
}

/// Everything that can go wrong reading a recipe and its image.
#[derive(Debug, thiserror::Error)]
pub enum RecipeError {
    /// A file (the recipe or its image) could not be read.
    #[error("{}: cannot read: {source}", path.display())]
    Io {
        /// The file that could not be read.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The recipe is not valid RON, or does not fit the schema (an unknown or missing field, a
    /// value of the wrong type).
    #[error("{}:{location}: {message}", path.display())]
    Parse {
        /// The recipe file.
        path: PathBuf,
        /// Where the parser stopped.
        location: Location,
        /// What it found wrong.
        message: String,
    },
    /// The recipe parsed but a value breaks a rule of the schema (a shard count out of range, a
    /// malformed hash, a duplicate pass, ...).
    #[error("{}{}: {message}", path.display(), location.map(|l| format!(":{l}")).unwrap_or_default())]
    Invalid {
        /// The recipe file.
        path: PathBuf,
        /// Where the offending field is written, when it could be found in the text.
        location: Option<Location>,
        /// The field, as a path such as `passes[2].name`.
        field: String,
        /// What is wrong with it.
        message: String,
    },
    /// The image's bytes do not have the hash the recipe expects.
    #[error(
        "{}: sha256 is {actual} but recipe {} expects {expected}; \
         a recipe never silently applies to different code (update image_sha256 if the image \
         changed on purpose)",
        image.display(),
        recipe.display()
    )]
    ImageHashMismatch {
        /// The recipe file.
        recipe: PathBuf,
        /// The image file.
        image: PathBuf,
        /// The hash the recipe names.
        expected: String,
        /// The hash of the bytes read.
        actual: String,
    },
    /// A C source's bytes do not have the hash the recipe expects.
    #[error(
        "{}: sha256 is {actual} but recipe {} expects {expected} (c_sources[{index}]); \
         update c_sources[{index}].sha256 if you changed the file on purpose",
        source_file.display(),
        recipe.display()
    )]
    SourceHashMismatch {
        /// The recipe file.
        recipe: PathBuf,
        /// The C source file.
        source_file: PathBuf,
        /// Its index in `c_sources`.
        index: usize,
        /// The hash the recipe names.
        expected: String,
        /// The hash of the bytes read.
        actual: String,
    },
}

impl RecipeError {
    /// The file the error is about: the recipe, or for an unreadable image the image.
    pub fn path(&self) -> &Path {
        match self {
            RecipeError::Io { path, .. } | RecipeError::Parse { path, .. } | RecipeError::Invalid { path, .. } => path,
            RecipeError::ImageHashMismatch { image, .. } => image,
            RecipeError::SourceHashMismatch { source_file, .. } => source_file,
        }
    }

    /// Where in the recipe the error is, when it is known.
    pub fn location(&self) -> Option<Location> {
        match self {
            RecipeError::Parse { location, .. } => Some(*location),
            RecipeError::Invalid { location, .. } => *location,
            RecipeError::Io { .. } | RecipeError::ImageHashMismatch { .. } | RecipeError::SourceHashMismatch { .. } => {
                None
            }
        }
    }
}
