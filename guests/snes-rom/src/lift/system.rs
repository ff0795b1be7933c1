//! Flags, REP/SEP, XCE, register transfers and the stack instructions.
//!
//! What changes the widths (REP, SEP, XCE, PLP) writes the M, X and E slots too, and clears the
//! index registers' high bytes when they become 8 bits wide, as the CPU does. The widths the
//! following code was decoded in are the walk's (`crate::discover`); where the walk could not
//! know them, `control` goes on through the function table in the widths the state holds.

use rpt_ir::{BinaryOp, IntCC, SlotId, Type, Value};

use super::Lifter;
use crate::decode::Insn;
use crate::state::{A, C, D, DBR, DEC, EMU, IRQ_OFF, M8, P_BITS, PBR, S, V, X, X8, Y};

/// Lifts `insn` if it is one of this module's; false otherwise.
pub(crate) fn lift(lx: &mut Lifter<'_>, insn: &Insn) -> bool {
    let w = insn.widths;
    let e = w.emulation;
    let flag = |lx: &mut Lifter<'_>, slot: SlotId, v: bool| {
        let v = lx.b.iconst(Type::I1, u64::from(v));
        lx.b.set(slot, v);
    };
    let cycles = insn.cycles(false, false, false);
    match insn.info.opcode {
        0x18 => flag(lx, C, false),
        0x38 => flag(lx, C, true),
        0x58 => flag(lx, IRQ_OFF, false),
        0x78 => flag(lx, IRQ_OFF, true),
        0xd8 => flag(lx, DEC, false),
        0xf8 => flag(lx, DEC, true),
        0xb8 => flag(lx, V, false),
        0xea | 0x42 => {}
        // REP / SEP.
        0xc2 | 0xe2 => {
            let set = insn.info.opcode == 0xe2;
            let bits = insn.operand as u8;
            for (n, &slot) in P_BITS.iter().enumerate() {
                let is_width = slot == M8 || slot == X8;
                if bits & (1 << n) != 0 && !(is_width && e) {
                    flag(lx, slot, set);
                }
            }
            if set && bits & 0x10 != 0 && !e {
                clear_index_high_bytes(lx);
            }
        }
        // XCE.
        0xfb => exchange_carry_and_emulation(lx, e),
        // Transfers.
        0xaa | 0xa8 => {
            let dest = if insn.info.opcode == 0xaa { X } else { Y };
            let a = lx.b.get(A);
            lx.set_index(dest, a, w.x8);
            lx.set_nz(a, !w.x8);
        }
        0x8a | 0x98 => {
            let v = lx.b.get(if insn.info.opcode == 0x8a { X } else { Y });
            lx.set_acc(v, !w.m8);
            lx.set_nz(v, !w.m8);
        }
        0x9b | 0xbb => {
            let (from, to) = if insn.info.opcode == 0x9b { (X, Y) } else { (Y, X) };
            let v = lx.b.get(from);
            lx.set_index(to, v, w.x8);
            lx.set_nz(v, !w.x8);
        }
        0xba => {
            let s = lx.b.get(S);
            lx.set_index(X, s, w.x8);
            lx.set_nz(s, !w.x8);
        }
        0x9a | 0x1b => {
            let v = lx.b.get(if insn.info.opcode == 0x9a { X } else { A });
            lx.b.set(S, v);
            lx.stack_back_to_page1(e);
        }
        0x3b | 0x7b => {
            let v = lx.b.get(if insn.info.opcode == 0x3b { S } else { D });
            lx.b.set(A, v);
            lx.set_nz(v, true);
        }
        0x5b => {
            let a = lx.b.get(A);
            lx.b.set(D, a);
            lx.set_nz(a, true);
        }
        0xeb => {
            let a = lx.b.get(A);
            let swapped = lx.b.binary_imm(BinaryOp::Rotl, a, 8);
            lx.b.set(A, swapped);
            lx.set_nz(swapped, false);
        }
        // Pushes.
        0x48 => {
            let v = lx.b.get(A);
            push_sized(lx, v, !w.m8, e);
        }
        0xda | 0x5a => {
            let v = lx.b.get(if insn.info.opcode == 0xda { X } else { Y });
            push_sized(lx, v, !w.x8, e);
        }
        0x08 => {
            let p = status_byte(lx, insn);
            lx.push8(p, e);
        }
        0x8b | 0x4b => {
            let v = lx.b.get(if insn.info.opcode == 0x8b { DBR } else { PBR });
            let v = lx.b.resize(v, Type::I16);
            lx.push8(v, e);
        }
        0x0b => {
            let d = lx.b.get(D);
            lx.push16(d, false);
            lx.stack_back_to_page1(e);
        }
        0xf4 => {
            let v = lx.b.iconst(Type::I16, u64::from(insn.operand));
            lx.push16(v, false);
            lx.stack_back_to_page1(e);
        }
        0x62 => {
            let target = (insn.next() as u16).wrapping_add(insn.operand as u16);
            let v = lx.b.iconst(Type::I16, u64::from(target));
            lx.push16(v, false);
            lx.stack_back_to_page1(e);
        }
        0xd4 => {
            // PEI (dp): pushes the 16-bit word at the direct-page address (the pointer, not what it
            // points to, though the table calls its mode `(dp)`).
            let v = lx.direct_word(insn.operand);
            lx.push16(v, false);
            lx.stack_back_to_page1(e);
        }
        // Pulls.
        0x68 => {
            let v = pull_sized(lx, !w.m8, e);
            lx.set_acc(v, !w.m8);
            lx.set_nz(v, !w.m8);
        }
        0xfa | 0x7a => {
            let v = pull_sized(lx, !w.x8, e);
            lx.set_index(if insn.info.opcode == 0xfa { X } else { Y }, v, w.x8);
            lx.set_nz(v, !w.x8);
        }
        0xab => {
            let v = lx.pull8(false);
            lx.stack_back_to_page1(e);
            let bank = lx.b.resize(v, Type::I8);
            lx.b.set(DBR, bank);
            lx.set_nz(v, false);
        }
        0x2b => {
            let v = lx.pull16(false);
            lx.stack_back_to_page1(e);
            lx.b.set(D, v);
            lx.set_nz(v, true);
        }
        0x28 => {
            let p = lx.pull8(e);
            set_status(lx, p, e);
        }
        _ => return false,
    }
    // PEI's direct-page cycle is added by `direct_word`; everything else's count is static.
    lx.add_cycles(cycles);
    true
}

/// Pushes an 8- or 16-bit register.
fn push_sized(lx: &mut Lifter<'_>, v: Value, wide: bool, e: bool) {
    if wide { lx.push16(v, e) } else { lx.push8(v, e) }
}

/// Pulls an 8- or 16-bit register.
fn pull_sized(lx: &mut Lifter<'_>, wide: bool, e: bool) -> Value {
    if wide { lx.pull16(e) } else { lx.pull8(e) }
}

/// X and Y keep only their low bytes (X became 8 bits wide).
fn clear_index_high_bytes(lx: &mut Lifter<'_>) {
    for slot in [X, Y] {
        let v = lx.b.get(slot);
        let low = lx.b.binary_imm(BinaryOp::And, v, 0xff);
        lx.b.set(slot, low);
    }
}

/// P as PHP, BRK and COP push it (an i16): C Z I D X M V N from bit 0. In emulation mode bit 5
/// reads as 1 and bit 4 (B) is set; a hardware interrupt pushes B clear, which the guest's C part
/// does (`status_byte` in runtime/snes_runtime.c).
pub(crate) fn status_byte(lx: &mut Lifter<'_>, insn: &Insn) -> Value {
    let e = insn.widths.emulation;
    let mut p = lx.b.iconst(Type::I16, 0);
    for (n, &slot) in P_BITS.iter().enumerate() {
        let bit = if e && (slot == M8 || slot == X8) {
            lx.b.iconst(Type::I16, 1)
        } else {
            let v = lx.b.get(slot);
            lx.b.resize(v, Type::I16)
        };
        let placed = lx.b.binary_imm(BinaryOp::Shl, bit, n as u64);
        p = lx.b.binary(BinaryOp::Or, p, placed);
    }
    p
}

/// Sets the flags from a pulled P (PLP, RTI). In emulation mode M and X stay 1; in native mode
/// they follow the byte, and 8-bit index registers lose their high bytes.
pub(crate) fn set_status(lx: &mut Lifter<'_>, p: Value, e: bool) {
    for (n, &slot) in P_BITS.iter().enumerate() {
        if e && (slot == M8 || slot == X8) {
            continue;
        }
        let masked = lx.b.binary_imm(BinaryOp::And, p, 1 << n);
        let bit = lx.b.icmp_imm(IntCC::Ne, masked, 0);
        lx.b.set(slot, bit);
    }
    if !e {
        let x8 = lx.b.get(X8);
        for slot in [X, Y] {
            let v = lx.b.get(slot);
            let low = lx.b.binary_imm(BinaryOp::And, v, 0xff);
            let kept = lx.b.select(x8, low, v);
            lx.b.set(slot, kept);
        }
    }
}

/// XCE: E takes the carry and the carry E's old value (`e`, which the widths say). Entering
/// emulation mode makes M and X 1, drops the index registers' high bytes and puts S in page 1;
/// leaving it, M and X read 1 (they were forced there); native mode staying native changes only
/// the carry.
fn exchange_carry_and_emulation(lx: &mut Lifter<'_>, e: bool) {
    let carry = lx.b.get(C);
    lx.b.set(EMU, carry);
    let old = lx.b.iconst(Type::I1, u64::from(e));
    lx.b.set(C, old);
    if e {
        // M and X are 1 in emulation mode already, and stay 1 whichever way it goes.
        return;
    }
    let one = lx.b.iconst(Type::I1, 1);
    for slot in [M8, X8] {
        let v = lx.b.get(slot);
        let v = lx.b.select(carry, one, v);
        lx.b.set(slot, v);
    }
    for slot in [X, Y, S] {
        let v = lx.b.get(slot);
        let low = lx.b.binary_imm(BinaryOp::And, v, 0xff);
        let entered = if slot == S {
            lx.b.binary_imm(BinaryOp::Or, low, 0x100)
        } else {
            low
        };
        let v = lx.b.select(carry, entered, v);
        lx.b.set(slot, v);
    }
}
