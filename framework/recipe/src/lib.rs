//! Recipes: the RON schema, validation with line and column errors, and the recipe digest.
//!
//! This crate owns what a recipe file may say and what it means before any plugin sees it:
//! [`parse`] reads and validates the text, [`load`] also reads the guest image and refuses it
//! unless its sha256 is the one the recipe names, and [`digest`] hashes everything in a recipe
//! that changes rpt's output. It knows nothing of plugins: a guest, host or pass name is only a
//! string here, and the core checks that it is registered.

#![deny(missing_docs)]

mod digest;
mod error;
mod locate;
mod schema;
mod validate;

#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};

pub use digest::{DIGEST_FORMAT, canonical_form, digest, sha256_hex};
pub use error::{Location, RecipeError};
pub use schema::{
    CSource, CacheGeometry, CompilerOverrides, DEFAULT_HOST, DEFAULT_SHARDS, ImportStub, MAX_SHARDS, Override,
    ParamValue, PassConfig, PluginSource, Recipe,
};

/// A recipe read from disk together with its guest image, whose hash has been checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoadedRecipe {
    /// The recipe file, as given to [`load`].
    pub path: PathBuf,
    /// The parsed, validated recipe.
    pub recipe: Recipe,
    /// The image file: the recipe's `image` resolved against the recipe file's directory.
    pub image_path: PathBuf,
    /// The image's bytes; their sha256 is `recipe.image_sha256`.
    pub image: Vec<u8>,
    /// The recipe's C sources (`c_sources`), read and checked against their sha256, in recipe order.
    pub c_sources: Vec<LoadedSource>,
}

/// One of a recipe's C sources, read from disk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoadedSource {
    /// Its file name, which is its path within the generation's `src/overrides/`.
    pub name: String,
    /// The file: the recipe's `path` resolved against the recipe file's directory.
    pub path: PathBuf,
    /// Its bytes; their sha256 is the one the recipe names.
    pub contents: Vec<u8>,
}

/// Parses and validates recipe text; `path` names the file in errors.
///
/// Syntax and schema errors (an unknown or missing field, a wrong type) carry the line and column
/// where ron stopped; validation errors carry the line and column of the offending field where it
/// is written in the text. Hashes come back in lower case, however they were written.
pub fn parse(path: &Path, text: &str) -> Result<Recipe, RecipeError> {
    // IMPLICIT_SOME lets an optional value be written plainly (`launcher: "ccache"`), as users expect.
    let options = ron::Options::default().with_default_extension(ron::extensions::Extensions::IMPLICIT_SOME);
    let mut recipe: Recipe = options.from_str(text).map_err(|e| RecipeError::Parse {
        path: path.to_owned(),
        location: Location {
            line: e.span.start.line,
            column: e.span.start.col,
        },
        message: parse_message(&e.code),
    })?;
    validate::validate(path, text, &recipe)?;
    // Hashes may be written in either case; everything downstream sees lower case.
    recipe.image_sha256.make_ascii_lowercase();
    for o in &mut recipe.overrides {
        o.original_sha256.make_ascii_lowercase();
    }
    for source in &mut recipe.c_sources {
        source.sha256.make_ascii_lowercase();
    }
    Ok(recipe)
}

/// Reads the recipe at `path`, then its image and C sources, and checks their sha256 against the recipe.
///
/// The image path in the recipe is relative to the recipe file's directory. A hash mismatch is
/// an error naming the image, the expected and the actual hash: a recipe never silently applies
/// to different code.
pub fn load(path: &Path) -> Result<LoadedRecipe, RecipeError> {
    let text = std::fs::read_to_string(path).map_err(|source| RecipeError::Io {
        path: path.to_owned(),
        source,
    })?;
    let recipe = parse(path, &text)?;
    let image_path = path.parent().unwrap_or(Path::new("")).join(&recipe.image);
    let image = std::fs::read(&image_path).map_err(|source| RecipeError::Io {
        path: image_path.clone(),
        source,
    })?;
    let actual = sha256_hex(&image);
    if !actual.eq_ignore_ascii_case(&recipe.image_sha256) {
        return Err(RecipeError::ImageHashMismatch {
            recipe: path.to_owned(),
            image: image_path,
            expected: recipe.image_sha256.to_ascii_lowercase(),
            actual,
        });
    }
    let mut c_sources = Vec::with_capacity(recipe.c_sources.len());
    for (index, source) in recipe.c_sources.iter().enumerate() {
        let source_path = path.parent().unwrap_or(Path::new("")).join(&source.path);
        let contents = std::fs::read(&source_path).map_err(|e| RecipeError::Io {
            path: source_path.clone(),
            source: e,
        })?;
        let actual = sha256_hex(&contents);
        if actual != source.sha256 {
            return Err(RecipeError::SourceHashMismatch {
                recipe: path.to_owned(),
                source_file: source_path,
                index,
                expected: source.sha256.clone(),
                actual,
            });
        }
        // Validation made sure every source has a UTF-8 file name.
        let name = source
            .path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        c_sources.push(LoadedSource {
            name,
            path: source_path,
            contents,
        });
    }
    Ok(LoadedRecipe {
        path: path.to_owned(),
        recipe,
        image_path,
        image,
        c_sources,
    })
}

/// Where the field `path` (such as `host_cpu` or `passes[2].name`) is written in recipe `text`, for
/// errors found after parsing (an unknown CPU model, say) that should still name a line and column.
pub fn locate(text: &str, path: &str) -> Option<Location> {
    locate::FieldLocations::scan(text).get(path)
}

/// ron's message for a parse error, reworded for the schema errors users meet most.
fn parse_message(code: &ron::Error) -> String {
    let quoted = |names: &[&str]| names.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ");
    let within = |outer: &Option<String>| outer.as_ref().map(|o| format!(" in `{o}`")).unwrap_or_default();
    match code {
        ron::Error::NoSuchStructField { expected, found, outer } => {
            format!(
                "unknown field `{found}`{}, expected one of {}",
                within(outer),
                quoted(expected)
            )
        }
        ron::Error::MissingStructField { field, outer } => format!("missing field `{field}`{}", within(outer)),
        ron::Error::DuplicateStructField { field, outer } => format!("duplicate field `{field}`{}", within(outer)),
        ron::Error::Message(m) if m.contains("untagged enum ParamValue") => {
            "a pass parameter must be `true` or `false`, an integer or a string".to_owned()
        }
        other => other.to_string(),
    }
}
