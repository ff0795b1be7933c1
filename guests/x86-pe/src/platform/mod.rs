//! The platforms this guest offers: which imports each implements, as which C symbols, in which C file.
//!
//! Adding a platform is a new file here plus one line in [`PLATFORMS`].

mod win32_console;

use rpt_api::{ExternStateUse, Externs, GuestError, GuestImage, SourceFile};
use rpt_ir::{GuestAddr, SlotRole};

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
    /// For a function, the bytes of stack it pops when it returns: the return address, plus the
    /// arguments under stdcall (esp comes back that much higher).
    pub pops: u32,
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
///
/// Every import but `setjmp` and `longjmp` also keeps the C calling convention for the registers
/// ([`c_abi_state_use`]). `setjmp` reads the callee-saved registers it saves and runs the rest of
/// its caller, so it may touch everything; `longjmp` has a contract of its own
/// ([`longjmp_state_use`]).
pub fn externs(image: &GuestImage, platform: &str) -> Result<Externs, GuestError> {
    let p = find(platform)?;
    let mut out = Externs::default();
    let mut keeps_c_abi = |thunk: GuestAddr, name: &str, pops: Option<u32>| {
        if name == LONGJMP {
            out.state_use.insert(thunk, longjmp_state_use());
        } else if !SETJMPS.contains(&name) {
            let mut contract = c_abi_state_use(pops);
            contract.never_returns = crate::discover::NORETURN_IMPORTS
                .iter()
                .any(|n| n.eq_ignore_ascii_case(name));
            out.state_use.insert(thunk, contract);
        }
    };
    for import in &image.imports {
        match p
            .imports
            .iter()
            .find(|i| i.name == import.name && same_module(i.module, &import.module))
        {
            Some(imp) => {
                if let ImportKind::Function(symbol) = imp.kind {
                    keeps_c_abi(import.thunk, &import.name, Some(imp.pops));
                    out.implemented.insert(import.thunk, symbol.to_string());
                    out.flag_transparent.insert(import.thunk);
                }
            }
            None => {
                // The stub of a missing import reads the caller from the stack and at most
                // returns a value in eax.
                keeps_c_abi(import.thunk, &import.name, None);
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

/// The imports whose C saves the callee-saved registers (platform/msvcrt_setjmp.c).
const SETJMPS: [&str; 2] = ["_setjmp", "_setjmp3"];

/// The import whose C restores them and never returns.
const LONGJMP: &str = "longjmp";

/// What msvcrt's `longjmp` reads and writes for a caller keeping state in C locals: its arguments
/// through esp, and the state no `setjmp` saves (x87, SSE and the other non-general slots), which
/// the frame it resumes sees as the longjmp left it. It never returns, so nothing it writes
/// reaches a caller's continuation: the registers it restores are for the frame that called
/// `setjmp`, which takes back everything (`setjmp` still touches every slot). The general
/// registers and flags a caller holds are its own frame's, which the longjmp abandons.
fn longjmp_state_use() -> ExternStateUse {
    let mut contract = c_abi_state_use(None);
    contract.writes.clear();
    contract.never_returns = true;
    contract
}

/// What a platform function under the C calling convention (cdecl or stdcall) may touch: it takes
/// its arguments from the stack, so of the general registers it reads only esp; it may change
/// eax, ecx, edx and esp (stdcall pops its arguments) and preserves ebx, ebp, esi and edi; it
/// touches no flag (see `flag_transparent`). Everything else (x87 and SSE state, DF, eip) it may
/// read and write. It comes back with esp `pops` bytes higher, when that is known (the platform's
/// own functions; a missing import's stub cannot know its convention).
fn c_abi_state_use(pops: Option<u32>) -> ExternStateUse {
    use crate::state::{EAX, ECX, EDX, ESP};
    let state = crate::state::state_desc();
    let others = || {
        state
            .iter()
            .filter(|(_, s)| !matches!(s.role, SlotRole::Gpr | SlotRole::Flag))
            .map(|(id, _)| id)
    };
    ExternStateUse {
        reads: std::iter::once(ESP).chain(others()).collect(),
        writes: [EAX, ECX, EDX, ESP].into_iter().chain(others()).collect(),
        adjusts: pops.map(|p| (ESP, i64::from(p))).into_iter().collect(),
        never_returns: false,
    }
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

    /// passes/x87-regions counts on this: the platforms' C library functions (the externs that
    /// touch no flag) never read the x87 status word, so a program that has no `fnstsw` never
    /// reads it, and its x87 operations need not record it.
    #[test]
    fn no_platform_function_reads_the_x87_status_word() {
        for p in PLATFORMS {
            for (path, text) in p.c_files {
                assert!(
                    !text.contains("fpu_sw"),
                    "{path} of platform {} uses the status word",
                    p.name
                );
            }
        }
    }

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

    /// The body of the C function `name` (`name(struct cpu *...) { ... }`) in the platform's files.
    fn c_body<'a>(p: &'a Platform, name: &str) -> Option<&'a str> {
        p.c_files.iter().find_map(|(_, text)| {
            let mut rest = *text;
            while let Some(at) = rest.find(name) {
                let tail = &rest[at + name.len()..];
                if tail.starts_with("(struct cpu *") {
                    let open = tail.find(")\n{")?;
                    let body = &tail[open..];
                    return Some(&body[..body.find("\n}\n")?]);
                }
                rest = tail;
            }
            None
        })
    }

    /// The argument counts `rpt_win32_return(c, N, ...)` (stdcall) pops in `body` and in the
    /// `rpt_win32_*(c)` functions it calls.
    fn stdcall_counts(p: &Platform, body: &str, depth: u32) -> BTreeSet<u32> {
        let mut out = BTreeSet::new();
        for part in body.split("rpt_win32_return(c, ").skip(1) {
            if let Some(n) = part.split(',').next().and_then(|n| n.trim().parse().ok()) {
                out.insert(n);
            }
        }
        if depth > 0 {
            for part in body.split("rpt_win32_").skip(1) {
                let name: String = part.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                if part[name.len()..].starts_with("(c)")
                    && let Some(inner) = c_body(p, &format!("rpt_win32_{name}"))
                {
                    out.extend(stdcall_counts(p, inner, depth - 1));
                }
            }
        }
        out
    }

    #[test]
    fn the_bytes_each_function_pops_are_what_its_c_pops() {
        for p in PLATFORMS {
            for i in p.imports {
                let ImportKind::Function(symbol) = i.kind else { continue };
                let counts = c_body(p, symbol).map(|b| stdcall_counts(p, b, 1)).unwrap_or_default();
                let pops: BTreeSet<u32> = counts.iter().map(|n| 4 + 4 * n).collect();
                if counts.is_empty() {
                    // cdecl (or never returns).
                    let noreturn = crate::discover::NORETURN_IMPORTS.contains(&i.name);
                    assert!(
                        i.pops == 4 || noreturn,
                        "{}: pops {}, but its C returns cdecl",
                        i.name,
                        i.pops
                    );
                } else {
                    assert_eq!(
                        pops,
                        BTreeSet::from([i.pops]),
                        "{}: the table and the C disagree",
                        i.name
                    );
                }
            }
        }
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
