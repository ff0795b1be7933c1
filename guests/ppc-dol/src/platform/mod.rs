//! The platforms this guest offers and their C files.
//!
//! A DOL has no imports, so a platform is only its C part: the `@sc` system-call helper and
//! the time base. Adding a platform is a C file in `platform/` plus one line in [`PLATFORMS`].

use rpt_api::{GuestError, SourceFile};

/// A platform: its name and its C file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Platform {
    /// The name recipes use (`linux-syscalls`).
    pub name: &'static str,
    /// The C file's path under the generation's `src/`.
    pub c_path: &'static str,
    /// The C file's text.
    pub c_source: &'static str,
}

/// Every platform of the PowerPC guest.
pub const PLATFORMS: &[Platform] = &[Platform {
    name: "linux-syscalls",
    c_path: "guest/linux_syscalls.c",
    c_source: include_str!("../../platform/linux_syscalls.c"),
}];

/// The guest's own C part, shared by every platform: start-up and exits, the helpers
/// (`ppc_helpers.c`, which the crate also compiles into itself for the interpreter: `crate::interp`),
/// and the program's own setjmp and longjmp when a recipe names them (`ppc_setjmp.c`, `crate::nonlocal`).
const GUEST_RUNTIME: [(&str, &str); 3] = [
    ("guest/ppc_runtime.c", include_str!("../../runtime/ppc_runtime.c")),
    ("guest/ppc_helpers.c", include_str!("../../runtime/ppc_helpers.c")),
    ("guest/ppc_setjmp.c", include_str!("../../runtime/ppc_setjmp.c")),
];

/// Looks a platform up by name.
pub fn find(name: &str) -> Result<&'static Platform, GuestError> {
    rpt_api::find_platform(PLATFORMS, name, |p| p.name)
}

/// The guest's C part and the platform's C file.
pub fn runtime_sources(platform: &str) -> Result<Vec<SourceFile>, GuestError> {
    let p = find(platform)?;
    Ok(GUEST_RUNTIME
        .into_iter()
        .chain([(p.c_path, p.c_source)])
        .map(|(path, contents)| SourceFile {
            path: path.to_string(),
            contents: contents.to_string(),
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_helper_is_defined_in_c() {
        let all: String = PLATFORMS
            .iter()
            .map(|p| p.c_source)
            .chain(GUEST_RUNTIME.map(|(_, text)| text))
            .collect();
        for h in crate::helpers() {
            assert!(
                all.contains(&format!(" rpt_helper_{}(struct cpu *restrict c", h.name)),
                "rpt_helper_{} is not defined",
                h.name
            );
        }
    }
}
