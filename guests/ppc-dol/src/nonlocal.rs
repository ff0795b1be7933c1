//! The program's own `setjmp` and `longjmp`, named by the recipe.
//!
//! A DOL imports nothing: a statically linked C library (glibc's, or CodeWarrior's MSL in a game)
//! brings its `setjmp` and `longjmp` as guest code. Lifted as they are, a `longjmp` would restore
//! the guest's stack pointer and return address and then return from the host function that runs
//! it, into a caller whose frame the guest has already left. So the recipe names their addresses
//! (`guest_options: {"setjmp": "0x80047648 0x80047650 0x80091c04", "longjmp": "0x80047660"}`,
//! from the ELF's symbols: every entry of each family), and they become imports whose thunk is
//! that address: discovery does not walk them, a call of a `setjmp` returns twice (the code after
//! it is a resume function of its own), one of a `longjmp` never returns, and the platform's C
//! (`rpt_ppc_setjmp`, `rpt_ppc_longjmp` in `platform/linux_syscalls.c`) runs them on the
//! runtime's resume points (docs/c-abi.md, "Resume points"), as the x86 platform runs msvcrt's.

use std::collections::BTreeMap;

use rpt_api::{ExternStateUse, GuestError, GuestImage, GuestOptions, Import, ParamValue};
use rpt_ir::{GuestAddr, SlotRole};

/// The options and the name each import gets: the C symbol is `rpt_ppc_<name>`.
pub(crate) const FAMILIES: [&str; 2] = ["setjmp", "longjmp"];

/// The module the imports are listed under.
const MODULE: &str = "program";

/// The addresses an option names: a string of hex (or decimal) addresses separated by spaces or
/// commas, or one integer.
fn addresses(name: &str, value: &ParamValue) -> Result<Vec<GuestAddr>, GuestError> {
    let bad = |why: String| GuestError::BadOption {
        name: name.to_string(),
        why,
    };
    match value {
        ParamValue::Int(a) => u32::try_from(*a)
            .map(|a| vec![GuestAddr(u64::from(a))])
            .map_err(|_| bad(format!("{a} is not a 32-bit address"))),
        ParamValue::Str(text) => text
            .split([' ', ','])
            .filter(|w| !w.is_empty())
            .map(|w| {
                let parsed = match w.strip_prefix("0x").or_else(|| w.strip_prefix("0X")) {
                    Some(hex) => u32::from_str_radix(hex, 16),
                    None => w.parse::<u32>(),
                };
                parsed
                    .map(|a| GuestAddr(u64::from(a)))
                    .map_err(|_| bad(format!("`{w}` is not an address")))
            })
            .collect(),
        ParamValue::Bool(_) => Err(bad("expected addresses, as \"0x80047648 0x80047650\"".to_string())),
    }
}

/// Checks the options this module reads; any other option is an error.
pub(crate) fn check_options(options: &GuestOptions) -> Result<(), GuestError> {
    for (name, value) in options {
        if !FAMILIES.contains(&name.as_str()) {
            return Err(GuestError::BadOption {
                name: name.clone(),
                why: format!("the ppc-dol guest's options are {}", FAMILIES.join(" and ")),
            });
        }
        addresses(name, value)?;
    }
    Ok(())
}

/// Adds an import for each address the options name, which must be code of the image.
pub(crate) fn add_imports(image: &mut GuestImage, options: &GuestOptions) -> Result<(), GuestError> {
    for family in FAMILIES {
        let Some(value) = options.get(family) else {
            continue;
        };
        for addr in addresses(family, value)? {
            if !addr.0.is_multiple_of(4) || !image.is_code(addr) {
                return Err(GuestError::BadOption {
                    name: family.to_string(),
                    why: format!("{addr} is not an instruction of the image"),
                });
            }
            image.imports.push(Import {
                module: MODULE.to_string(),
                name: family.to_string(),
                // A DOL has no import table: the "slot" is the function itself.
                slot: addr,
                thunk: addr,
            });
        }
    }
    Ok(())
}

/// What `longjmp` reads and writes for a caller keeping state in C locals
/// (`rpt_api::Externs::state_use`): its arguments r3 and r4, and the state no `setjmp` saves (the
/// FPSCR, XER, GQRs and the other special registers), which the frame it resumes sees as the
/// longjmp left it. It never returns, so nothing it writes reaches a caller's continuation: the
/// registers it restores are for the frame that called `setjmp`, which takes back everything
/// (`setjmp` keeps touching every slot). The general, floating-point and CR registers a caller
/// holds are its own frame's, which a longjmp abandons (the volatile ones) or restores from the
/// jmp_buf (the nonvolatile ones), so they are not handed over.
pub(crate) fn longjmp_state_use() -> ExternStateUse {
    let state = crate::state::state_desc();
    ExternStateUse {
        reads: [crate::state::gpr(3), crate::state::gpr(4)]
            .into_iter()
            .chain(
                state
                    .iter()
                    .filter(|(_, s)| s.role == SlotRole::Special)
                    .map(|(id, _)| id),
            )
            .collect(),
        writes: Vec::new(),
        adjusts: Vec::new(),
        never_returns: true,
    }
}

/// The contracts of the imports `image` has: the `longjmp` family's ([`longjmp_state_use`]).
pub(crate) fn state_use(image: &GuestImage) -> BTreeMap<GuestAddr, ExternStateUse> {
    image
        .imports
        .iter()
        .filter(|i| i.module == MODULE && i.name == "longjmp")
        .map(|i| (i.thunk, longjmp_state_use()))
        .collect()
}

/// The C symbol that runs the import named `name`.
pub(crate) fn symbol(name: &str) -> String {
    format!("rpt_ppc_{name}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_name_addresses_and_nothing_else() {
        let opts = |k: &str, v: ParamValue| GuestOptions::from([(k.to_string(), v)]);
        assert!(check_options(&opts("setjmp", ParamValue::Str("0x80047648, 0x80047650".into()))).is_ok());
        assert!(check_options(&opts("longjmp", ParamValue::Int(0x8004_7660))).is_ok());
        let typo = check_options(&opts("setjump", ParamValue::Int(0)))
            .unwrap_err()
            .to_string();
        assert!(
            typo.contains("setjump") && typo.contains("setjmp and longjmp"),
            "{typo}"
        );
        let bad = check_options(&opts("setjmp", ParamValue::Str("0x8004zz".into())))
            .unwrap_err()
            .to_string();
        assert!(bad.contains("0x8004zz"), "{bad}");
    }

    /// longjmp gets a contract (its arguments and the special registers, no writes, no return);
    /// setjmp none, so it still touches every slot.
    #[test]
    fn only_longjmp_has_a_state_contract() {
        let import = |name: &str, at: u64| Import {
            module: MODULE.to_string(),
            name: name.to_string(),
            slot: GuestAddr(at),
            thunk: GuestAddr(at),
        };
        let image = GuestImage {
            segments: Vec::new(),
            entry: GuestAddr(0x8000_3100),
            exports: Default::default(),
            imports: vec![import("setjmp", 0x8000_3100), import("longjmp", 0x8000_3200)],
        };
        let contracts = state_use(&image);
        assert_eq!(contracts.keys().copied().collect::<Vec<_>>(), [GuestAddr(0x8000_3200)]);
        let longjmp = &contracts[&GuestAddr(0x8000_3200)];
        assert!(longjmp.never_returns && longjmp.writes.is_empty());
        assert!(longjmp.reads.contains(&crate::state::gpr(3)) && longjmp.reads.contains(&crate::state::FPSCR));
        assert!(!longjmp.reads.contains(&crate::state::gpr(31)) && !longjmp.reads.contains(&crate::state::cr_field(2)));
    }
}
