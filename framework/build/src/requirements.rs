//! Checking that this machine has what a host needs, so a missing toolchain is reported as the
//! package to install rather than as a compiler's or emulator's own error.

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use rpt_api::{Needed, Purpose, Requirement};

use crate::BuildError;

/// One requirement that is not met, as [`BuildError::Missing`] lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MissingPiece {
    /// The command or file that is not there.
    pub what: String,
    /// The package that provides it.
    pub package: String,
}

/// Checks the requirements of `host` needed for `purpose`; the error lists every missing piece
/// and one `apt-get install` line for all of them.
pub fn check_requirements(host: &str, requirements: &[Requirement], purpose: Purpose) -> Result<(), BuildError> {
    check_with_path(host, requirements, purpose, std::env::var_os("PATH"))
}

/// [`check_requirements`] with an explicit `PATH`, so tests need not change the environment.
pub fn check_with_path(
    host: &str,
    requirements: &[Requirement],
    purpose: Purpose,
    path: Option<OsString>,
) -> Result<(), BuildError> {
    let dirs: Vec<PathBuf> = path.map(|p| std::env::split_paths(&p).collect()).unwrap_or_default();
    let missing: Vec<MissingPiece> = requirements
        .iter()
        .filter(|r| r.purpose == purpose)
        .filter(|r| match &r.needed {
            Needed::Command(name) => !dirs.iter().any(|d| is_executable(&d.join(name))),
            Needed::File(file) => !Path::new(file).is_file(),
        })
        .map(|r| MissingPiece {
            what: match &r.needed {
                Needed::Command(name) => format!("the command `{name}`"),
                Needed::File(file) => file.clone(),
            },
            package: r.package.clone(),
        })
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    Err(BuildError::Missing {
        host: host.to_string(),
        purpose: match purpose {
            Purpose::Build => "build for it",
            Purpose::Run => "run what was built for it",
        },
        missing,
    })
}

/// The Debian packages named by `missing`, sorted and without repeats, for one `apt-get install`.
pub(crate) fn packages(missing: &[MissingPiece]) -> String {
    let set: BTreeSet<&str> = missing.iter().map(|m| m.package.as_str()).collect();
    set.into_iter().collect::<Vec<_>>().join(" ")
}

fn is_executable(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        path.metadata()
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    }
    #[cfg(not(unix))]
    {
        path.is_file()
    }
}
