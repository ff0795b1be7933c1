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

#[cfg(test)]
mod tests {
    use std::ffi::OsString;

    use rpt_api::{Needed, Purpose, Requirement};

    use super::check_with_path;
    use crate::BuildError;

    fn requirement(needed: Needed, package: &str, purpose: Purpose) -> Requirement {
        Requirement {
            needed,
            package: package.into(),
            purpose,
        }
    }

    #[test]
    fn a_missing_file_or_command_names_its_package() {
        let dir = tempfile::tempdir().expect("temporary directory");
        let present = dir.path().join("libc.a");
        std::fs::write(&present, "").expect("write");
        let tool = dir.path().join("qemu-fake");
        std::fs::write(&tool, "#!/bin/sh\n").expect("write");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        }
        let path = Some(OsString::from(dir.path()));
        let reqs = vec![
            requirement(
                Needed::File(present.display().to_string()),
                "libc-dev-x",
                Purpose::Build,
            ),
            requirement(Needed::File("/nonexistent/crt1.o".into()), "libc-dev-y", Purpose::Build),
            requirement(Needed::Command("cc-missing".into()), "cc-pkg", Purpose::Build),
            requirement(Needed::Command("qemu-fake".into()), "qemu-user", Purpose::Run),
            requirement(Needed::Command("qemu-gone".into()), "qemu-user", Purpose::Run),
        ];
        let err = check_with_path("h", &reqs, Purpose::Build, path.clone()).expect_err("two are missing");
        let BuildError::Missing { missing, .. } = &err else {
            panic!("unexpected error {err}")
        };
        assert_eq!(missing.len(), 2);
        let text = err.to_string();
        for part in [
            "host `h`: cannot build for it",
            "/nonexistent/crt1.o (package libc-dev-y)",
            "the command `cc-missing` (package cc-pkg) are missing",
            "apt-get install cc-pkg libc-dev-y",
        ] {
            assert!(text.contains(part), "{part:?} not in {text}");
        }
        let err = check_with_path("h", &reqs, Purpose::Run, path.clone()).expect_err("qemu-gone is missing");
        assert!(
            err.to_string()
                .contains("cannot run what was built for it on this machine: the command `qemu-gone` (package qemu-user) is missing; install with `apt-get install qemu-user`"),
            "{err}"
        );
        assert!(check_with_path("h", &reqs[..1], Purpose::Build, path.clone()).is_ok());
        assert!(check_with_path("h", &reqs[3..4], Purpose::Run, path).is_ok());
        // A command that is a plain file without execute permission does not count.
        let not_executable = dir.path().join("plain");
        std::fs::write(&not_executable, "").expect("write");
        let reqs = [requirement(Needed::Command("plain".into()), "p", Purpose::Run)];
        assert!(check_with_path("h", &reqs, Purpose::Run, Some(OsString::from(dir.path()))).is_err());
    }
}
