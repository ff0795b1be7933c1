//! The archive's layout and its operations: versions, `CURRENT`, promote, rollback, leftovers.
//!
//! ```text
//! archive/<recipe>/
//!   v1/ v2/ ...        promoted generations: manifest.ron, manifest.sha256, src/, bin/ (files read-only)
//!   CURRENT            `v2` and a newline: the current version (a plain file, so it survives copies and zips)
//!   LAST               the highest version number ever issued, so a number is never reused
//!   .lock              the archive lock (see `lock`)
//!   .tmp-*             work in progress of a promote; never a version, removed by the next promote or gc
//! ```

use std::fmt;
use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use crate::error::{ArchiveError, io};
use crate::{ArchiveLock, MANIFEST_FILE, Manifest, hash_bytes, verify_archived, verify_generation};

/// The file naming the current version.
pub const CURRENT_FILE: &str = "CURRENT";
/// The file holding the highest version number ever issued.
pub const LAST_FILE: &str = "LAST";
/// The lock file.
pub const LOCK_FILE: &str = ".lock";
/// The file in each version holding the sha256 of its `manifest.ron`, written by promote.
pub const MANIFEST_HASH_FILE: &str = "manifest.sha256";
/// The prefix of everything a promote writes before it is final.
pub const TEMP_PREFIX: &str = ".tmp-";

/// A version number, written `v1`, `v2`, ...
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Version(pub u32);

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "v{}", self.0)
    }
}

impl FromStr for Version {
    type Err = ArchiveError;

    fn from_str(s: &str) -> Result<Version, ArchiveError> {
        let digits = s
            .strip_prefix('v')
            .ok_or_else(|| ArchiveError::BadVersion(s.to_string()))?;
        // `v01` would name the same version as `v1`; only the canonical spelling is a version.
        if digits.starts_with('0') || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(ArchiveError::BadVersion(s.to_string()));
        }
        digits
            .parse()
            .map(Version)
            .map_err(|_| ArchiveError::BadVersion(s.to_string()))
    }
}

/// What a promote did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Promoted {
    /// The new version.
    pub version: Version,
    /// The version that was current before.
    pub previous: Option<Version>,
    /// The oldest version with the very same manifest, if there is one.
    pub identical_to: Option<Version>,
    /// Files copied (besides the manifest).
    pub files: usize,
}

/// The recipes with a directory in the archive root `root`, sorted (none if `root` does not exist).
pub fn recipes_in(root: &Path) -> Result<Vec<String>, ArchiveError> {
    let entries = match fs::read_dir(root) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(io(format!("read {}", root.display()))(e)),
    };
    let mut out = Vec::new();
    for entry in entries {
        let entry = entry.map_err(io(format!("read {}", root.display())))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if entry.path().is_dir() && !name.starts_with('.') {
            out.push(name);
        }
    }
    out.sort();
    Ok(out)
}

/// One recipe's part of the archive: `<root>/<recipe>/`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecipeArchive {
    dir: PathBuf,
    name: String,
}

fn sync_dir(dir: &Path) -> Result<(), ArchiveError> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(io(format!("sync {}", dir.display())))
}

/// Writes `contents` to `dir/name` through a temporary file and a rename, so readers see the
/// old contents or the new, never a mix.
fn write_atomically(dir: &Path, name: &str, contents: &[u8]) -> Result<(), ArchiveError> {
    let tmp = dir.join(format!("{TEMP_PREFIX}{name}"));
    let target = dir.join(name);
    let mut file = File::create(&tmp).map_err(io(format!("create {}", tmp.display())))?;
    file.write_all(contents)
        .and_then(|()| file.sync_all())
        .map_err(io(format!("write {}", tmp.display())))?;
    fs::rename(&tmp, &target).map_err(io(format!("rename {} to {}", tmp.display(), target.display())))?;
    sync_dir(dir)
}

impl RecipeArchive {
    /// The archive of `recipe` under the archive root `root`.
    pub fn new(root: &Path, recipe: &str) -> RecipeArchive {
        RecipeArchive {
            dir: root.join(recipe),
            name: recipe.to_string(),
        }
    }

    /// `<root>/<recipe>`.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The recipe's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The directory of a version.
    pub fn version_dir(&self, version: Version) -> PathBuf {
        self.dir.join(version.to_string())
    }

    /// The versions there are, in increasing order.
    pub fn versions(&self) -> Result<Vec<Version>, ArchiveError> {
        let mut out = Vec::new();
        for entry in self.entries()? {
            if let Ok(version) = entry.file_name().to_string_lossy().parse::<Version>()
                && entry.path().is_dir()
            {
                out.push(version);
            }
        }
        out.sort();
        Ok(out)
    }

    /// The entries of the recipe's archive directory; none when it does not exist yet.
    fn entries(&self) -> Result<Vec<fs::DirEntry>, ArchiveError> {
        match fs::read_dir(&self.dir) {
            Ok(entries) => entries
                .map(|e| e.map_err(io(format!("read {}", self.dir.display()))))
                .collect(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
            Err(e) => Err(io(format!("read {}", self.dir.display()))(e)),
        }
    }

    /// The version `CURRENT` names, if there is a `CURRENT`.
    pub fn current(&self) -> Result<Option<Version>, ArchiveError> {
        let path = self.dir.join(CURRENT_FILE);
        match fs::read_to_string(&path) {
            Ok(text) => text
                .trim()
                .parse()
                .map(Some)
                .map_err(|_| ArchiveError::BadCurrent { path, text }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(io(format!("read {}", path.display()))(e)),
        }
    }

    /// The highest version number ever issued (from `LAST` and the directories, whichever is higher).
    pub fn last_issued(&self) -> Result<Option<Version>, ArchiveError> {
        let path = self.dir.join(LAST_FILE);
        let recorded = match fs::read_to_string(&path) {
            Ok(text) => text.trim().parse::<Version>().ok(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(io(format!("read {}", path.display()))(e)),
        };
        Ok(self.versions()?.into_iter().chain(recorded).max())
    }

    /// Everything an interrupted promote left behind (`.tmp-*`).
    pub fn leftovers(&self) -> Result<Vec<PathBuf>, ArchiveError> {
        let mut out = Vec::new();
        for entry in self.entries()? {
            if entry.file_name().to_string_lossy().starts_with(TEMP_PREFIX) {
                out.push(entry.path());
            }
        }
        out.sort();
        Ok(out)
    }

    fn check_lock(&self, lock: &ArchiveLock) -> Result<(), ArchiveError> {
        if lock.dir() == self.dir {
            Ok(())
        } else {
            Err(ArchiveError::WrongLock {
                dir: self.dir.clone(),
                held: lock.dir().to_path_buf(),
            })
        }
    }

    /// Removes what interrupted promotes left behind. Only the lock holder writes `.tmp-*`, so
    /// under the lock every one of them is a leftover.
    pub fn remove_leftovers(&self, lock: &ArchiveLock) -> Result<Vec<PathBuf>, ArchiveError> {
        self.check_lock(lock)?;
        let leftovers = self.leftovers()?;
        for path in &leftovers {
            if path.is_dir() {
                make_writable(path)?;
                fs::remove_dir_all(path)
            } else {
                fs::remove_file(path)
            }
            .map_err(io(format!("remove {}", path.display())))?;
        }
        Ok(leftovers)
    }

    /// Copies the generation at `generation` into the next version and makes it current.
    ///
    /// The generation must be intact (every file its manifest lists, with its hash) and of this
    /// recipe. The copy is assembled in `.tmp-vN`, each file checked against the manifest as it
    /// is read, synced, then renamed to `vN` in one step; `LAST` and then `CURRENT` are replaced
    /// the same way. A promote stopped at any point leaves every earlier version and `CURRENT`
    /// as they were (or, stopped after the rename, a complete `vN` that is not yet current).
    /// `on_file` hears each file's path after it is copied.
    pub fn promote(
        &self,
        lock: &ArchiveLock,
        generation: &Path,
        on_file: &mut dyn FnMut(&str),
    ) -> Result<Promoted, ArchiveError> {
        self.check_lock(lock)?;
        let manifest_path = generation.join(MANIFEST_FILE);
        if !manifest_path.is_file() {
            return Err(ArchiveError::NotAGeneration(generation.to_path_buf()));
        }
        let manifest_bytes = fs::read(&manifest_path).map_err(io(format!("read {}", manifest_path.display())))?;
        let manifest = Manifest::parse(&manifest_path, &manifest_bytes)?;
        if manifest.recipe != self.name {
            return Err(ArchiveError::WrongRecipe {
                path: generation.to_path_buf(),
                found: manifest.recipe,
                expected: self.name.clone(),
            });
        }
        let problems = verify_generation(generation, &|_| false)?;
        if !problems.is_empty() {
            return Err(ArchiveError::Damaged {
                path: generation.to_path_buf(),
                problems,
            });
        }

        self.remove_leftovers(lock)?;
        let previous = self.current()?;
        let mut identical_to = None;
        for version in self.versions()? {
            if identical_to.is_none()
                && fs::read(self.version_dir(version).join(MANIFEST_FILE)).ok().as_deref() == Some(&manifest_bytes[..])
            {
                identical_to = Some(version);
            }
        }
        let version = Version(self.last_issued()?.map_or(1, |v| v.0 + 1));
        let tmp = self.dir.join(format!("{TEMP_PREFIX}{version}"));
        let assembled = assemble(generation, &tmp, &manifest, &manifest_bytes, on_file);
        if let Err(e) = assembled {
            // Best effort: a leftover would be removed by the next promote or gc anyway.
            let _ = make_writable(&tmp).map(|()| fs::remove_dir_all(&tmp));
            return Err(e);
        }
        let final_dir = self.version_dir(version);
        fs::rename(&tmp, &final_dir).map_err(io(format!("rename {} to {}", tmp.display(), final_dir.display())))?;
        sync_dir(&self.dir)?;
        write_atomically(&self.dir, LAST_FILE, format!("{version}\n").as_bytes())?;
        write_atomically(&self.dir, CURRENT_FILE, format!("{version}\n").as_bytes())?;
        Ok(Promoted {
            version,
            previous,
            identical_to,
            files: manifest.files.len(),
        })
    }

    /// Makes `version` current; it must exist and be intact. Nothing is deleted.
    pub fn set_current(&self, lock: &ArchiveLock, version: Version) -> Result<(), ArchiveError> {
        self.check_lock(lock)?;
        let versions = self.versions()?;
        if !versions.contains(&version) {
            return Err(self.no_such_version(&version.to_string(), &versions));
        }
        let problems = verify_archived(&self.version_dir(version))?;
        if !problems.is_empty() {
            return Err(ArchiveError::Damaged {
                path: self.version_dir(version),
                problems,
            });
        }
        write_atomically(&self.dir, CURRENT_FILE, format!("{version}\n").as_bytes())
    }

    /// Moves `CURRENT` back to the highest version below it, or to `to` when given (which may also
    /// be a later version: a roll forward). Returns the versions before and after.
    pub fn rollback(
        &self,
        lock: &ArchiveLock,
        to: Option<Version>,
    ) -> Result<(Option<Version>, Version), ArchiveError> {
        let versions = self.versions()?;
        let current = self.current()?;
        let target =
            match (to, current) {
                (Some(to), _) => to,
                (None, Some(current)) => versions.iter().copied().filter(|v| *v < current).max().ok_or_else(|| {
                    ArchiveError::NothingOlder {
                        dir: self.dir.clone(),
                        current: current.to_string(),
                    }
                })?,
                (None, None) => return Err(self.no_such_version("CURRENT", &versions)),
            };
        self.set_current(lock, target)?;
        Ok((current, target))
    }

    /// The error for a version that does not exist, listing those that do.
    pub fn no_such_version(&self, asked: &str, versions: &[Version]) -> ArchiveError {
        let known = if versions.is_empty() {
            "none yet; `rpt promote` makes v1".to_string()
        } else {
            versions.iter().map(Version::to_string).collect::<Vec<_>>().join(", ")
        };
        ArchiveError::NoSuchVersion {
            dir: self.dir.clone(),
            version: asked.to_string(),
            known,
        }
    }

    /// Resolves `v3` or `CURRENT` to an existing version.
    pub fn resolve(&self, name: &str) -> Result<Version, ArchiveError> {
        let versions = self.versions()?;
        let version = if name == CURRENT_FILE {
            self.current()?.ok_or_else(|| self.no_such_version(name, &versions))?
        } else {
            name.parse()?
        };
        if versions.contains(&version) {
            Ok(version)
        } else {
            Err(self.no_such_version(name, &versions))
        }
    }

    /// Generation directories under `gen_recipe_dir` (a recipe's folder in `gen/`) whose manifest
    /// is byte-identical to an intact archived version's: everything in them is kept in the
    /// archive, so they can go. Returns each with the version holding it.
    pub fn archived_generations(&self, gen_recipe_dir: &Path) -> Result<Vec<(PathBuf, Version)>, ArchiveError> {
        let entries = match fs::read_dir(gen_recipe_dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(io(format!("read {}", gen_recipe_dir.display()))(e)),
        };
        let mut archived = Vec::new();
        for version in self.versions()? {
            let dir = self.version_dir(version);
            if let Ok(bytes) = fs::read(dir.join(MANIFEST_FILE))
                && verify_archived(&dir)?.is_empty()
            {
                archived.push((bytes, version));
            }
        }
        let mut out = Vec::new();
        for entry in entries {
            let path = entry.map_err(io(format!("read {}", gen_recipe_dir.display())))?.path();
            let Ok(bytes) = fs::read(path.join(MANIFEST_FILE)) else {
                continue;
            };
            if let Some((_, version)) = archived.iter().find(|(b, _)| *b == bytes) {
                out.push((path, *version));
            }
        }
        out.sort();
        Ok(out)
    }
}

/// Copies the files of the generation at `generation` that `manifest` lists, then the manifest and
/// its hash, into `tmp`, checking each file's hash as it is read and syncing everything.
fn assemble(
    generation: &Path,
    tmp: &Path,
    manifest: &Manifest,
    manifest_bytes: &[u8],
    on_file: &mut dyn FnMut(&str),
) -> Result<(), ArchiveError> {
    let tmp = tmp.to_path_buf();
    let manifest_path = generation.join(MANIFEST_FILE);
    fs::create_dir_all(&tmp).map_err(io(format!("create {}", tmp.display())))?;
    let mut dirs = std::collections::BTreeSet::from([tmp.clone()]);
    for file in &manifest.files {
        let from = generation.join(&file.path);
        let to = tmp.join(&file.path);
        let bytes = fs::read(&from).map_err(io(format!("read {}", from.display())))?;
        if hash_bytes(&bytes) != file.sha256 {
            return Err(ArchiveError::ChangedWhileCopying(from));
        }
        if let Some(parent) = to.parent()
            && !dirs.contains(parent)
        {
            fs::create_dir_all(parent).map_err(io(format!("create {}", parent.display())))?;
            // Remember every directory this made, to sync each before the rename.
            let mut dir = parent;
            while dir != tmp && dirs.insert(dir.to_path_buf()) {
                match dir.parent() {
                    Some(up) => dir = up,
                    None => break,
                }
            }
        }
        let mode = fs::metadata(&from)
            .map_err(io(format!("read {}", from.display())))?
            .permissions();
        write_read_only(&to, &bytes, mode)?;
        on_file(&file.path);
    }
    let mode = fs::metadata(&manifest_path)
        .map_err(io(format!("read {}", manifest_path.display())))?
        .permissions();
    write_read_only(&tmp.join(MANIFEST_FILE), manifest_bytes, mode.clone())?;
    let manifest_hash = format!("{}\n", hash_bytes(manifest_bytes));
    write_read_only(&tmp.join(MANIFEST_HASH_FILE), manifest_hash.as_bytes(), mode)?;
    // Directory entries must be on disk before the rename publishes them.
    let mut dirs: Vec<PathBuf> = dirs.into_iter().collect();
    dirs.sort_by_key(|d| std::cmp::Reverse(d.components().count()));
    for dir in &dirs {
        sync_dir(dir)?;
    }
    Ok(())
}

/// Writes a file and makes it read-only (keeping its execute bits): an archived version is never
/// edited in place.
fn write_read_only(path: &Path, bytes: &[u8], mut permissions: fs::Permissions) -> Result<(), ArchiveError> {
    let mut file = File::create(path).map_err(io(format!("create {}", path.display())))?;
    file.write_all(bytes)
        .and_then(|()| file.sync_all())
        .map_err(io(format!("write {}", path.display())))?;
    permissions.set_readonly(true);
    fs::set_permissions(path, permissions).map_err(io(format!("make {} read-only", path.display())))
}

/// Gives the owner write permission on every file under `dir` (archived files are read-only,
/// which some platforms refuse to delete).
pub(crate) fn make_writable(dir: &Path) -> Result<(), ArchiveError> {
    for rel in crate::list_files(dir)? {
        let path = dir.join(rel);
        let mut permissions = fs::metadata(&path)
            .map_err(io(format!("read {}", path.display())))?
            .permissions();
        if permissions.readonly() {
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                permissions.set_mode(permissions.mode() | 0o200);
            }
            #[cfg(not(unix))]
            permissions.set_readonly(false);
            fs::set_permissions(&path, permissions).map_err(io(format!("make {} writable", path.display())))?;
        }
    }
    Ok(())
}
