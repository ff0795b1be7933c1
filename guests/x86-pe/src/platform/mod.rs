//! The platforms this guest offers: which imports each implements, as which C symbols, in which C file.
//!
//! Adding a platform is a new file here plus one line in [`PLATFORMS`].

mod win32_console;

use rpt_api::{Externs, GuestError, GuestImage, SourceFile};

use crate::x87::Model;

/// How a platform implements one import.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ImportKind {
    /// A function: calls reach this C symbol (an extern, docs/c-abi.md).
    Function(&'static str),
    /// A variable: the platform's start-up points the import's IAT slot at guest data it owns.
    Data,
}

/// One import a platform implements.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ImportImpl {
    /// The DLL (compared case-insensitively, with or without `.dll`).
    pub module: &'static str,
    /// The imported name (compared exactly, as the Windows loader does).
    pub name: &'static str,
    /// Function or data.
    pub kind: ImportKind,
}

/// A platform: its name, its imports and its C files.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Platform {
    /// The name recipes use (`win32-console`).
    pub name: &'static str,
    /// The imports it implements.
    pub imports: &'static [ImportImpl],
    /// Its C files (headers too): path under the generation's `src/`, and text.
    pub c_files: &'static [(&'static str, &'static str)],
}

/// Every platform of the x86 PE guest.
pub const PLATFORMS: &[Platform] = &[win32_console::PLATFORM];

/// The guest's own C part, shared by every platform.
const GUEST_RUNTIME: [(&str, &str); 12] = [
    ("guest/x86_runtime.c", include_str!("../../runtime/x86_runtime.c")),
    ("guest/x87.c", include_str!("../../runtime/x87.c")),
    (rpt_api::GUEST_INLINE_HEADER, include_str!("../../runtime/inline.h")),
    ("guest/x87_defs.h", include_str!("../../runtime/x87_defs.h")),
    ("guest/x87_host.h", include_str!("../../runtime/x87_host.h")),
    ("guest/x87_values.h", include_str!("../../runtime/x87_values.h")),
    ("guest/x87_soft.h", include_str!("../../runtime/x87_soft.h")),
    (
        "guest/x87_soft_transcendental.h",
        include_str!("../../runtime/x87_soft_transcendental.h"),
    ),
    (
        "guest/x87_soft_tables.h",
        include_str!("../../runtime/x87_soft_tables.h"),
    ),
    ("guest/x87_soft_libm.h", include_str!("../../runtime/x87_soft_libm.h")),
    ("guest/x87_soft_math.h", include_str!("../../runtime/x87_soft_math.h")),
    ("guest/x87_f64.h", include_str!("../../runtime/x87_f64.h")),
];

/// Looks a platform up by name.
pub fn find(name: &str) -> Result<&'static Platform, GuestError> {
    rpt_api::find_platform(PLATFORMS, name, |p| p.name)
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

/// Maps each imported function's thunk to the platform's C symbol, and lists the imports the
/// platform lacks in import-table order.
///
/// Data imports (`_iob`, `__initenv`, ...) get no extern: the platform's start-up points their
/// IAT slots at guest data.
///
/// Every import is flag-transparent: the platform's C (and the stubs of missing imports) never
/// reads or writes a flag slot; the only writes of flags outside lifted code are the x87 helpers'
/// (fcomi) and the clearing of DF, which is not a flag slot. The C++ exception externs are left
/// out: they transfer control.
pub fn externs(image: &GuestImage, platform: &str) -> Result<Externs, GuestError> {
    let p = find(platform)?;
    let mut out = Externs::default();
    for import in &image.imports {
        match p
            .imports
            .iter()
            .find(|i| i.name == import.name && same_module(i.module, &import.module))
        {
            Some(imp) => {
                if let ImportKind::Function(symbol) = imp.kind {
                    out.implemented.insert(import.thunk, symbol.to_string());
                    out.flag_transparent.insert(import.thunk);
                }
            }
            None => {
                out.missing
                    .push((import.thunk, format!("{}!{}", import.module, import.name)));
                out.flag_transparent.insert(import.thunk);
            }
        }
    }
    // C++ exceptions (platform/cxx_eh.c), only for images that have landing pads.
    if !crate::eh::cached(image).is_empty() {
        out.implemented
            .insert(crate::eh::EH_FRAME_EXTERN, "rpt_x86_eh_frame".to_string());
        out.implemented
            .insert(crate::eh::EH_INSTALL_EXTERN, "rpt_x86_eh_install".to_string());
    }
    Ok(out)
}

/// The guest's C part and the platform's C files.
///
/// The x87 value model is chosen when `x87.c` is compiled: under [`Model::F64`] the file starts by
/// defining `RPT_X87_F64`, which selects the unit of `x87_f64.h`; `inline.h` starts with the same
/// define, which keeps generated code calling the helpers out of line.
pub fn runtime_sources(platform: &str, model: Model) -> Result<Vec<SourceFile>, GuestError> {
    let p = find(platform)?;
    Ok(GUEST_RUNTIME
        .into_iter()
        .chain(p.c_files.iter().copied())
        .map(|(path, contents)| SourceFile {
            path: path.to_string(),
            contents: match (path, model) {
                ("guest/x87.c" | rpt_api::GUEST_INLINE_HEADER, Model::F64) => {
                    format!("#define RPT_X87_F64 1\n{contents}")
                }
                _ => contents.to_string(),
            },
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    #[test]
    fn module_names_compare_loosely() {
        assert!(same_module("KERNEL32.dll", "kernel32.DLL"));
        assert!(same_module("KERNEL32.dll", "kernel32"));
        assert!(!same_module("KERNEL32.dll", "USER32.dll"));
        assert!(!same_module("dll", "x.dll"));
    }

    /// Every extern definition `void rpt_win32_<module>_<name>(struct cpu *restrict c) {` in a C
    /// file, and every one the definition macros define (`RPT_MSVCRT_UNARY(sin, ...)`).
    fn c_definitions(p: &Platform) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        for (_, text) in p.c_files {
            for line in text.lines() {
                let by_macro = ["RPT_MSVCRT_UNARY(", "RPT_MSVCRT_BINARY(", "RPT_MSVCRT_CONSTANT("]
                    .iter()
                    .find_map(|m| line.strip_prefix(m)?.split(',').next());
                if let Some(name) = by_macro {
                    out.insert(format!("rpt_win32_msvcrt_{name}"));
                }
            }
            let mut rest = *text;
            while let Some(at) = rest.find("void rpt_win32_") {
                let tail = &rest[at + "void ".len()..];
                let end = tail.find('(').unwrap_or(0);
                let after = tail[end..]
                    .strip_prefix("(struct cpu *restrict c)")
                    .map(str::trim_start);
                if after.is_some_and(|a| a.starts_with('{')) {
                    out.insert(tail[..end].to_string());
                }
                rest = &tail[end..];
            }
        }
        out
    }

    #[test]
    fn the_function_table_and_the_c_definitions_agree() {
        for p in PLATFORMS {
            let defined = c_definitions(p);
            let listed: BTreeSet<String> = p
                .imports
                .iter()
                .filter_map(|i| match i.kind {
                    ImportKind::Function(symbol) => Some(symbol.to_string()),
                    ImportKind::Data => None,
                })
                .collect();
            let unlisted: Vec<_> = defined.difference(&listed).collect();
            let undefined: Vec<_> = listed.difference(&defined).collect();
            assert!(
                undefined.is_empty(),
                "{}: listed but not defined in C: {undefined:?}",
                p.name
            );
            assert!(
                unlisted.is_empty(),
                "{}: defined in C but not listed: {unlisted:?}",
                p.name
            );
        }
    }

    #[test]
    fn the_data_imports_match_the_c_table() {
        let text = win32_console::PLATFORM
            .c_files
            .iter()
            .find(|(path, _)| *path == "guest/win32_console.c")
            .map(|(_, text)| *text)
            .unwrap_or_default();
        let table = text
            .split("BEGIN DATA IMPORTS")
            .nth(1)
            .and_then(|t| t.split("END DATA IMPORTS").next())
            .unwrap_or_default();
        let in_c: BTreeSet<&str> = table
            .split("{ \"")
            .skip(1)
            .filter_map(|e| e.split('"').next())
            .collect();
        let in_rust: BTreeSet<&str> = win32_console::PLATFORM
            .imports
            .iter()
            .filter(|i| i.kind == ImportKind::Data)
            .map(|i| i.name)
            .collect();
        assert!(!in_c.is_empty());
        assert_eq!(in_c, in_rust);
    }

    #[test]
    fn import_names_are_unique() {
        for p in PLATFORMS {
            let mut seen = BTreeSet::new();
            for i in p.imports {
                assert!(
                    seen.insert((i.module, i.name)),
                    "{}!{} is listed twice",
                    i.module,
                    i.name
                );
            }
        }
    }

    #[test]
    fn the_coverage_table_lists_every_import() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/win32-console.md");
        let doc = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let table = doc.split("## Coverage").nth(1).unwrap_or_default();
        let documented: BTreeSet<&str> = table
            .lines()
            .filter_map(|l| l.strip_prefix("| `"))
            .filter_map(|l| l.split('`').next())
            .collect();
        let implemented: BTreeSet<&str> = win32_console::PLATFORM.imports.iter().map(|i| i.name).collect();
        let undocumented: Vec<_> = implemented.difference(&documented).collect();
        let unimplemented: Vec<_> = documented.difference(&implemented).collect();
        assert!(undocumented.is_empty(), "docs/win32-console.md lacks {undocumented:?}");
        assert!(
            unimplemented.is_empty(),
            "docs/win32-console.md lists {unimplemented:?}, which are not implemented"
        );
    }

    #[test]
    fn the_teb_address_is_the_same_in_rust_and_c() {
        let header = win32_console::PLATFORM
            .c_files
            .iter()
            .find(|(path, _)| path.ends_with("win32_console.h"))
            .map(|(_, text)| *text)
            .unwrap_or_default();
        let expected = format!("#define RPT_X86_TEB_ADDR {:#x}u", crate::lift::TEB_ADDR);
        assert!(header.contains(&expected), "win32_console.h must say {expected}");
    }
}
