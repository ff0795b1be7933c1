//! The 65816 register file as IR state slots, and the SNES platform's time as the CPU sees it.
//!
//! Decisions:
//! - The accumulator is one 16-bit slot `a` (the datasheet's C; B is its high byte, which 8-bit
//!   operations leave alone), as are X, Y, S and D. With X=1 the index registers' high bytes are
//!   zero, as the CPU keeps them.
//! - N, V, Z and C are flag slots of their own (what the flag-ABI pass understands); the decimal
//!   and interrupt-disable flags are special. M, X and E are slots too, although lifted code
//!   knows them (a function is compiled per entry state, `crate::decode::Widths::key`): the
//!   runtime reads them to push P on an interrupt and to pick the variant an indirect transfer
//!   enters.
//! - `clock` counts the console's master clocks since power-on: each instruction adds its cycles
//!   (`crate::decode::Insn::cycles`) at 8 clocks each. `next_event` is the platform's: the clock value at which
//!   something happens (a scanline, vertical blank, an NMI). Lifted code compares the two where
//!   an interrupt may be taken and calls the platform only when the event is due; every bus access
//!   is a helper that reads and writes both, so a program polling `$4212` sees time pass.

use rpt_ir::{Slot, SlotId, SlotLayout, SlotRole, StateDesc, Type};

/// Every slot: name, type and role, in declaration order.
pub const SLOTS: [(&str, Type, SlotRole); 19] = [
    ("a", Type::I16, SlotRole::Gpr),
    ("x", Type::I16, SlotRole::Gpr),
    ("y", Type::I16, SlotRole::Gpr),
    ("s", Type::I16, SlotRole::Gpr),
    ("d", Type::I16, SlotRole::Gpr),
    ("dbr", Type::I8, SlotRole::Special),
    ("pbr", Type::I8, SlotRole::Special),
    ("n", Type::I1, SlotRole::Flag),
    ("v", Type::I1, SlotRole::Flag),
    ("z", Type::I1, SlotRole::Flag),
    ("c", Type::I1, SlotRole::Flag),
    ("dec", Type::I1, SlotRole::Special),
    ("irq_off", Type::I1, SlotRole::Special),
    ("m8", Type::I1, SlotRole::Special),
    ("x8", Type::I1, SlotRole::Special),
    ("emu", Type::I1, SlotRole::Special),
    ("clock", Type::I64, SlotRole::Special),
    ("next_event", Type::I64, SlotRole::Special),
    // The program counter as a function key (address and state bits) where the runtime needs
    // one: an interrupt taken, a halt. Lifted code does not keep it otherwise.
    ("pc", Type::I32, SlotRole::Special),
];

const fn slot(name: &str) -> SlotId {
    let mut i = 0;
    while i < SLOTS.len() {
        let (a, b) = (SLOTS[i].0.as_bytes(), name.as_bytes());
        if a.len() == b.len() {
            let mut k = 0;
            while k < a.len() && a[k] == b[k] {
                k += 1;
            }
            if k == a.len() {
                return SlotId(i as u32);
            }
        }
        i += 1;
    }
    panic!("no such slot in SLOTS")
}

/// The accumulator (C; B is its high byte).
pub const A: SlotId = slot("a");
/// The X index register.
pub const X: SlotId = slot("x");
/// The Y index register.
pub const Y: SlotId = slot("y");
/// The stack pointer.
pub const S: SlotId = slot("s");
/// The direct-page register.
pub const D: SlotId = slot("d");
/// The data bank register.
pub const DBR: SlotId = slot("dbr");
/// The program bank register.
pub const PBR: SlotId = slot("pbr");
/// Negative.
pub const N: SlotId = slot("n");
/// Overflow.
pub const V: SlotId = slot("v");
/// Zero.
pub const Z: SlotId = slot("z");
/// Carry.
pub const C: SlotId = slot("c");
/// Decimal mode.
pub const DEC: SlotId = slot("dec");
/// Interrupt disable (I).
pub const IRQ_OFF: SlotId = slot("irq_off");
/// M: an 8-bit accumulator.
pub const M8: SlotId = slot("m8");
/// X: 8-bit index registers.
pub const X8: SlotId = slot("x8");
/// E: emulation mode.
pub const EMU: SlotId = slot("emu");
/// Master clocks since power-on.
pub const CLOCK: SlotId = slot("clock");
/// The clock value of the platform's next event.
pub const NEXT_EVENT: SlotId = slot("next_event");
/// The program counter as a function key, where the runtime needs it.
pub const PC: SlotId = slot("pc");

/// P's bits in order from bit 0 (C Z I D X M V N); in emulation mode bit 4 (X) is B and bit 5
/// (M) reads as 1.
pub const P_BITS: [SlotId; 8] = [C, Z, IRQ_OFF, DEC, X8, M8, V, N];

/// The 65816 register file.
pub fn state_desc() -> StateDesc {
    StateDesc::from_table(SLOTS.into_iter().map(|(name, ty, role)| Slot {
        name: name.to_string(),
        ty,
        role,
        layout: SlotLayout::Plain,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constants_name_their_slots() {
        let desc = state_desc();
        for (id, name) in [(A, "a"), (S, "s"), (C, "c"), (EMU, "emu"), (CLOCK, "clock"), (PC, "pc")] {
            assert_eq!(desc.slot(id).name, name);
        }
    }
}
