//! Options several commands take, each with its help and its default in one place.

use std::path::{Path, PathBuf};

use rpt_build::ObjectCache;

/// `--gen-dir`.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct GenDirOption {
    /// Where generations are (default: `gen/` beside the recipe's `recipes/` folder).
    #[arg(long)]
    pub gen_dir: Option<PathBuf>,
}

impl GenDirOption {
    /// The folder holding the generations of the recipe at `recipe_path`.
    pub fn root(&self, recipe_path: &Path) -> PathBuf {
        self.gen_dir
            .clone()
            .unwrap_or_else(|| rpt_generation::default_gen_root(recipe_path))
    }
}

/// `--cache-dir`.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct CacheDirOption {
    /// Where compiled objects are cached (default: $RPT_CACHE_DIR, else ~/.cache/rpt).
    #[arg(long)]
    pub cache_dir: Option<PathBuf>,
}

impl CacheDirOption {
    /// The object cache's folder.
    pub fn dir(&self) -> PathBuf {
        self.cache_dir.clone().unwrap_or_else(ObjectCache::default_dir)
    }
}
