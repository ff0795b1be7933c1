//! `fninit` while the x87 unit is not modelled: the one x87 instruction mingw's start-up runs
//! (`_fpreset`) on every path, so integer programs built with a CRT can be recompiled.
//!
//! Without x87 state slots no lifted instruction can read what `fninit` resets (control word
//! 0x037f, empty stack, clear status), so lifting it as "no change" is exact for every program
//! this lifter accepts. The x87 lifter replaces this file: its table is consulted first.

use iced_x86::{Instruction, Mnemonic};

use super::{Handler, Lifter};

/// Picks the handler for the x87 control instructions this file covers.
pub(crate) fn select(insn: &Instruction) -> Option<Handler> {
    match insn.mnemonic() {
        Mnemonic::Fninit => Some(fninit),
        _ => None,
    }
}

/// `fninit`: resets x87 state that nothing lifted can observe yet.
fn fninit(_lx: &mut Lifter<'_>, _insn: &Instruction) {}
