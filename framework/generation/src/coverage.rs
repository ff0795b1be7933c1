//! The run-time tier's coverage file: where a generated program entered the tier (code discovery
//! missed, `rpt_api::tier`), read back by the next build as entry points.
//!
//! The runtime writes it at exit when `RPT_TIER_COVERAGE` names it (`rpt run` sets that to
//! [`tier_coverage_path`]), merging what an earlier run wrote: a comment line, then one line per
//! entry, `0x<address> <times entered>`, in address order. Reading it is the only way its entries
//! reach a build: [`EffectiveRecipe::with_coverage`] puts them into the recipe's
//! `coverage_entries`, which the digest covers, so the generation's name says which entries it
//! was built with, and `recompile`, `run` and `promote` agree on it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use rpt_recipe::Recipe;

use crate::{EffectiveRecipe, GenerationError, recipe_generations, recipe_name};

/// The coverage file's name beside a recipe's generations, when the recipe names none.
pub const DEFAULT_COVERAGE_FILE: &str = "tier-coverage.txt";

/// A coverage file as read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TierCoverage {
    /// Where it was read from.
    pub path: PathBuf,
    /// Each entry address with how often the tier was entered there.
    pub entries: BTreeMap<u64, u64>,
    /// The sha256 of its bytes, which the manifest records.
    pub sha256: String,
}

/// Where the recipe at `recipe_path` keeps its coverage file: its `tier_coverage` (relative to the
/// recipe file), else `gen/<recipe>/tier-coverage.txt` under `gen_root`.
pub fn tier_coverage_path(gen_root: &Path, recipe_path: &Path, recipe: &Recipe) -> Result<PathBuf, GenerationError> {
    Ok(match &recipe.tier_coverage {
        Some(path) if path.is_absolute() => path.clone(),
        Some(path) => recipe_path.parent().unwrap_or(Path::new("")).join(path),
        None => recipe_generations(gen_root, &recipe_name(recipe_path)?).join(DEFAULT_COVERAGE_FILE),
    })
}

/// Reads the coverage file at `path`: `None` when there is none. Lines starting with `#` and empty
/// lines are skipped; any other line must be `0x<hex address> <decimal count>`, or the error names
/// the file and the line.
pub fn read_tier_coverage(path: &Path) -> Result<Option<TierCoverage>, GenerationError> {
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(GenerationError::io(format!("reading {}", path.display()))(e)),
    };
    let text = String::from_utf8_lossy(&bytes);
    let mut entries = BTreeMap::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let bad = || GenerationError::BadCoverage {
            path: path.to_path_buf(),
            line: n + 1,
            text: line.to_string(),
        };
        let (addr, count) = line.split_once(' ').ok_or_else(bad)?;
        let addr = addr
            .strip_prefix("0x")
            .and_then(|hex| u64::from_str_radix(hex, 16).ok())
            .ok_or_else(bad)?;
        let count: u64 = count.trim().parse().map_err(|_| bad())?;
        *entries.entry(addr).or_insert(0) += count;
    }
    Ok(Some(TierCoverage {
        path: path.to_path_buf(),
        entries,
        sha256: rpt_archive::hash_bytes(&bytes),
    }))
}

impl EffectiveRecipe {
    /// The recipe with the coverage file's entries as entry points of the build (its
    /// `coverage_entries`), when there is a file.
    pub fn with_coverage(mut self, coverage: Option<&TierCoverage>) -> EffectiveRecipe {
        if let Some(coverage) = coverage {
            self.recipe.coverage_entries = coverage.entries.clone();
        }
        self
    }
}

/// The recipe file `recipe` (read from `recipe_path`) as a build makes it: `selection` applied
/// ([`crate::effective_recipe`]), then its coverage file's entries, and that file when there is
/// one. Every command that names a generation goes through here, so `recompile`, `run` and
/// `promote` agree on its name.
pub fn effective_recipe_with_coverage(
    recipe: Recipe,
    selection: &crate::Selection,
    gen_root: &Path,
    recipe_path: &Path,
) -> Result<(EffectiveRecipe, Option<TierCoverage>), GenerationError> {
    let effective = crate::effective_recipe(recipe, selection)?;
    let coverage = read_tier_coverage(&tier_coverage_path(gen_root, recipe_path, &effective.recipe)?)?;
    Ok((effective.with_coverage(coverage.as_ref()), coverage))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_coverage_file_reads_back_with_its_counts_and_a_bad_line_is_named() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("tier-coverage.txt");
        assert_eq!(read_tier_coverage(&path).expect("absent is fine"), None);
        std::fs::write(&path, "# comment\n0x00401230 3\n\n0x80003100 12\n0x00401230 1\n").expect("write");
        let read = read_tier_coverage(&path).expect("reads").expect("present");
        assert_eq!(read.entries, BTreeMap::from([(0x40_1230, 4), (0x8000_3100, 12)]));
        assert_eq!(read.sha256.len(), 64);
        std::fs::write(&path, "0x00401230 3\n401234 1\n").expect("write");
        let err = read_tier_coverage(&path).expect_err("a line without 0x");
        let message = err.to_string();
        assert!(
            message.contains("tier-coverage.txt:2") && message.contains("401234 1"),
            "{message}"
        );
    }
}
