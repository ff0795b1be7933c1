//! The host C compiler: its settings and the identity that goes into cache keys and manifests.

use std::io::ErrorKind;
use std::process::Command;

use rpt_api::CompilerSettings;

use crate::BuildError;

/// A probed C compiler with the host's flags.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Toolchain {
    settings: CompilerSettings,
    identity: String,
}

impl Toolchain {
    /// Runs `<cc> --version` to check the compiler exists and to learn its identity.
    pub fn probe(settings: CompilerSettings) -> Result<Toolchain, BuildError> {
        let output = match Command::new(&settings.cc).arg("--version").output() {
            Ok(output) => output,
            Err(e) if e.kind() == ErrorKind::NotFound => {
                return Err(BuildError::CompilerMissing {
                    cc: settings.cc.clone(),
                });
            }
            Err(e) => {
                return Err(BuildError::CompilerBroken {
                    cc: settings.cc.clone(),
                    detail: e.to_string(),
                });
            }
        };
        if !output.status.success() {
            return Err(BuildError::CompilerBroken {
                cc: settings.cc.clone(),
                detail: String::from_utf8_lossy(&output.stderr).trim().to_string(),
            });
        }
        let identity = identity_of(&settings.cc, &String::from_utf8_lossy(&output.stdout));
        Ok(Toolchain { settings, identity })
    }

    /// The compiler's identity: its command and version text, without installation paths
    /// (which differ between machines that produce identical objects).
    pub fn identity(&self) -> &str {
        &self.identity
    }

    /// The compiler command and flags.
    pub fn settings(&self) -> &CompilerSettings {
        &self.settings
    }
}

fn identity_of(cc: &str, version: &str) -> String {
    let lines: Vec<&str> = version
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("InstalledDir:") && !l.starts_with("Configuration file:"))
        .collect();
    format!("{cc}: {}", lines.join("; "))
}

#[cfg(test)]
mod tests {
    use super::identity_of;

    #[test]
    fn identity_drops_installation_paths() {
        let version = "Debian clang version 19.1.7\nTarget: x86_64-pc-linux-gnu\nThread model: posix\nInstalledDir: /usr/lib/llvm-19/bin\n";
        assert_eq!(
            identity_of("clang-19", version),
            "clang-19: Debian clang version 19.1.7; Target: x86_64-pc-linux-gnu; Thread model: posix"
        );
    }
}
