//! The platforms this guest offers: which imports each implements, as which C symbols, in which C file.
//!
//! Adding a platform is a new file here plus one line in [`PLATFORMS`].

mod win32_console;

use std::collections::BTreeMap;

use rpt_api::{GuestError, GuestImage, SourceFile};
use rpt_ir::GuestAddr;

/// One imported function a platform implements.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ImportImpl {
    /// The DLL (compared case-insensitively, with or without `.dll`).
    pub module: &'static str,
    /// The imported name (compared exactly, as the Windows loader does).
    pub name: &'static str,
    /// The C function implementing it.
    pub symbol: &'static str,
}

/// A platform: its name, its imports and its C file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Platform {
    /// The name recipes use (`win32-console`).
    pub name: &'static str,
    /// The imports it implements.
    pub imports: &'static [ImportImpl],
    /// The C file's path under the generation's `src/`.
    pub c_path: &'static str,
    /// The C file's text.
    pub c_source: &'static str,
}

/// Every platform of the x86 PE guest.
pub const PLATFORMS: &[Platform] = &[win32_console::PLATFORM];

/// The guest's own C part, shared by every platform.
const GUEST_RUNTIME: (&str, &str) = ("guest/x86_runtime.c", include_str!("../../runtime/x86_runtime.c"));

/// Looks a platform up by name.
pub fn find(name: &str) -> Result<&'static Platform, GuestError> {
    PLATFORMS
        .iter()
        .find(|p| p.name == name)
        .ok_or_else(|| GuestError::UnknownPlatform {
            platform: name.to_string(),
            known: PLATFORMS.iter().map(|p| p.name).collect::<Vec<_>>().join(", "),
        })
}

/// `KERNEL32.dll`, `kernel32.DLL` and `kernel32` name the same module.
fn same_module(a: &str, b: &str) -> bool {
    fn stem(m: &str) -> &str {
        let n = m.len();
        if n >= 4 && m.get(n - 4..).is_some_and(|ext| ext.eq_ignore_ascii_case(".dll")) {
            m.get(..n - 4).unwrap_or(m)
        } else {
            m
        }
    }
    stem(a).eq_ignore_ascii_case(stem(b))
}

/// Maps each import's thunk to the platform's C symbol; fails on the first import it lacks.
pub fn externs(image: &GuestImage, platform: &str) -> Result<BTreeMap<GuestAddr, String>, GuestError> {
    let p = find(platform)?;
    let mut out = BTreeMap::new();
    for import in &image.imports {
        let Some(imp) = p
            .imports
            .iter()
            .find(|i| i.name == import.name && same_module(i.module, &import.module))
        else {
            return Err(GuestError::MissingImport {
                platform: platform.to_string(),
                module: import.module.clone(),
                name: import.name.clone(),
            });
        };
        out.insert(import.thunk, imp.symbol.to_string());
    }
    Ok(out)
}

/// The guest's C part and the platform's C file.
pub fn runtime_sources(platform: &str) -> Result<Vec<SourceFile>, GuestError> {
    let p = find(platform)?;
    Ok(vec![
        SourceFile {
            path: GUEST_RUNTIME.0.to_string(),
            contents: GUEST_RUNTIME.1.to_string(),
        },
        SourceFile {
            path: p.c_path.to_string(),
            contents: p.c_source.to_string(),
        },
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn module_names_compare_loosely() {
        assert!(same_module("KERNEL32.dll", "kernel32.DLL"));
        assert!(same_module("KERNEL32.dll", "kernel32"));
        assert!(!same_module("KERNEL32.dll", "USER32.dll"));
        assert!(!same_module("dll", "x.dll"));
    }

    #[test]
    fn every_symbol_is_defined_in_its_c_file() {
        for p in PLATFORMS {
            for i in p.imports {
                let definition = format!("void {}(struct cpu *restrict c)\n{{", i.symbol);
                assert!(p.c_source.contains(&definition), "{} lacks {}", p.c_path, i.symbol);
            }
        }
    }
}
