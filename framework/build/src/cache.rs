//! The content-addressed object cache shared by every generation and recipe on a machine.

use std::fs;
use std::path::{Path, PathBuf};

use crate::BuildError;

/// A directory of compiled objects named by their cache key.
///
/// Objects are written once, atomically (temporary file then rename), and never
/// modified, so concurrent `rpt` processes may share one cache.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ObjectCache {
    dir: PathBuf,
}

impl ObjectCache {
    /// Opens (creating if needed) a cache rooted at `dir`.
    pub fn open(dir: PathBuf) -> Result<ObjectCache, BuildError> {
        for sub in ["objects", "tmp"] {
            let path = dir.join(sub);
            fs::create_dir_all(&path).map_err(BuildError::io(format!("create the object cache {}", path.display())))?;
        }
        Ok(ObjectCache { dir })
    }

    /// `$RPT_CACHE_DIR`, else `$XDG_CACHE_HOME/rpt`, else `$HOME/.cache/rpt`
    /// (else `rpt-cache` in the system's temporary directory).
    pub fn default_dir() -> PathBuf {
        default_dir_from(|name| std::env::var_os(name))
    }

    /// The cache's root directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Where the object with this key lives (whether or not it exists yet).
    pub fn object_path(&self, key: &str) -> PathBuf {
        let shard = key.get(..2).unwrap_or("xx");
        self.dir.join("objects").join(shard).join(format!("{key}.o"))
    }

    /// Where objects are written before being renamed into place.
    pub(crate) fn tmp_dir(&self) -> PathBuf {
        self.dir.join("tmp")
    }
}

/// [`ObjectCache::default_dir`] over any environment, so the rules can be tested without
/// changing the process environment. Empty variables count as unset.
fn default_dir_from(env: impl Fn(&str) -> Option<std::ffi::OsString>) -> PathBuf {
    let var = |name: &str| env(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    if let Some(dir) = var("RPT_CACHE_DIR") {
        dir
    } else if let Some(dir) = var("XDG_CACHE_HOME") {
        dir.join("rpt")
    } else if let Some(home) = var("HOME") {
        home.join(".cache").join("rpt")
    } else {
        std::env::temp_dir().join("rpt-cache")
    }
}

#[cfg(test)]
mod tests {
    use std::ffi::OsString;
    use std::path::PathBuf;

    use super::default_dir_from;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<OsString> {
        let pairs: Vec<(String, String)> = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        move |name| pairs.iter().find(|(k, _)| k == name).map(|(_, v)| OsString::from(v))
    }

    #[test]
    fn default_dir_prefers_rpt_then_xdg_then_home() {
        let all = [("RPT_CACHE_DIR", "/r"), ("XDG_CACHE_HOME", "/x"), ("HOME", "/h")];
        assert_eq!(default_dir_from(env(&all)), PathBuf::from("/r"));
        assert_eq!(default_dir_from(env(&all[1..])), PathBuf::from("/x/rpt"));
        assert_eq!(default_dir_from(env(&all[2..])), PathBuf::from("/h/.cache/rpt"));
        assert_eq!(
            default_dir_from(env(&[("RPT_CACHE_DIR", ""), ("HOME", "/h")])),
            PathBuf::from("/h/.cache/rpt")
        );
        assert_eq!(default_dir_from(env(&[])), std::env::temp_dir().join("rpt-cache"));
    }
}
