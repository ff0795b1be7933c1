//! The per-recipe archive lock: an advisory lock (`flock`) on `archive/<recipe>/.lock`.
//!
//! The kernel drops the lock when its holder exits, however it exits (a SIGKILL included), so a
//! lock is never left stale. The holder writes its process id into the file so that whoever finds
//! it held can say who holds it.

use std::fs::{self, File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use fs4::FileExt;

use crate::error::{ArchiveError, io};

/// A held archive lock; dropping it releases the lock.
#[derive(Debug)]
pub struct ArchiveLock {
    file: File,
    dir: PathBuf,
}

/// The outcome of [`ArchiveLock::try_acquire`].
#[derive(Debug)]
pub enum LockAttempt {
    /// The lock is ours.
    Acquired(ArchiveLock),
    /// Another process holds it; its id, if it has written it yet.
    Held {
        /// The lock file.
        path: PathBuf,
        /// The holder's process id.
        pid: Option<u32>,
    },
}

fn open(lock_path: &Path) -> Result<File, ArchiveError> {
    if let Some(parent) = lock_path.parent() {
        fs::create_dir_all(parent).map_err(io(format!("create {}", parent.display())))?;
    }
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(lock_path)
        .map_err(io(format!("open the lock file {}", lock_path.display())))
}

fn holder(file: &mut File) -> Option<u32> {
    let mut text = String::new();
    file.seek(SeekFrom::Start(0)).ok()?;
    file.read_to_string(&mut text).ok()?;
    text.trim().parse().ok()
}

impl ArchiveLock {
    /// Takes the lock of the archive directory `dir` if nobody holds it, without waiting.
    pub fn try_acquire(dir: &Path) -> Result<LockAttempt, ArchiveError> {
        let path = dir.join(crate::LOCK_FILE);
        let mut file = open(&path)?;
        match FileExt::try_lock(&file) {
            Ok(()) => Ok(LockAttempt::Acquired(ArchiveLock::claimed(file, dir)?)),
            Err(fs4::TryLockError::WouldBlock) => Ok(LockAttempt::Held {
                pid: holder(&mut file),
                path,
            }),
            Err(fs4::TryLockError::Error(e)) => Err(io(format!("lock {}", path.display()))(e)),
        }
    }

    /// Takes the lock of the archive directory `dir`, waiting for its holder to finish.
    pub fn acquire(dir: &Path) -> Result<ArchiveLock, ArchiveError> {
        let path = dir.join(crate::LOCK_FILE);
        let file = open(&path)?;
        FileExt::lock(&file).map_err(io(format!("lock {}", path.display())))?;
        ArchiveLock::claimed(file, dir)
    }

    fn claimed(mut file: File, dir: &Path) -> Result<ArchiveLock, ArchiveError> {
        let path = dir.join(crate::LOCK_FILE);
        let write = |file: &mut File| -> std::io::Result<()> {
            file.set_len(0)?;
            file.seek(SeekFrom::Start(0))?;
            writeln!(file, "{}", std::process::id())?;
            file.flush()
        };
        write(&mut file).map_err(io(format!("write {}", path.display())))?;
        Ok(ArchiveLock {
            file,
            dir: dir.to_path_buf(),
        })
    }

    /// The archive directory this lock guards.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

impl Drop for ArchiveLock {
    fn drop(&mut self) {
        // The next holder writes its own id; clearing ours first keeps a stale id from being shown.
        let _ = self.file.set_len(0);
        let _ = FileExt::unlock(&self.file);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_held_lock_names_its_holder_and_is_free_again_once_dropped() {
        let dir = tempfile::tempdir().expect("tempdir");
        let LockAttempt::Acquired(lock) = ArchiveLock::try_acquire(dir.path()).expect("try") else {
            panic!("a fresh lock is free");
        };
        match ArchiveLock::try_acquire(dir.path()).expect("try again") {
            LockAttempt::Held { pid, path } => {
                assert_eq!(pid, Some(std::process::id()));
                assert_eq!(path, dir.path().join(".lock"));
            }
            LockAttempt::Acquired(_) => panic!("flock locks conflict between open files"),
        }
        drop(lock);
        assert!(matches!(
            ArchiveLock::try_acquire(dir.path()).expect("try after drop"),
            LockAttempt::Acquired(_)
        ));
    }
}
