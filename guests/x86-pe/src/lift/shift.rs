//! Shifts and rotates: shl/sal, shr, sar, rol, ror (8, 16 and 32 bits) and 32-bit shld/shrd.
//!
//! The count is masked to 5 bits as on every CPU since the 80286. A masked count of zero changes
//! nothing, flags included; with a `cl` count that is decided at run time by selecting the old
//! flag values. OF is defined by the manual only for a count of 1; rpt uses the count-1 formula
//! for every count. AF after a nonzero shift is undefined; rpt sets it to 0. Shifts of 8- and
//! 16-bit operands are done in 32 bits so counts up to 31 behave as on hardware (everything
//! shifted out), not modulo the operand width.

use iced_x86::{Instruction, Mnemonic, OpKind};
use rpt_ir::{BinaryOp, IntCC, SlotId, Type, Value};

use super::operand::{Loc, dest_width};
use super::{Handler, Lifter};
use crate::state::{AF, CF, OF, PF, SF, ZF};

/// Picks the handler for a shift or rotate.
pub(crate) fn select(insn: &Instruction) -> Option<Handler> {
    let count_ok = |i: u32| match insn.op_kind(i) {
        OpKind::Register => insn.op_register(i) == iced_x86::Register::CL,
        OpKind::Immediate8 => true,
        _ => false,
    };
    let h: Handler = match insn.mnemonic() {
        Mnemonic::Shl | Mnemonic::Sal if insn.op_count() == 2 && count_ok(1) => |lx, i| shift(lx, i, ShiftKind::Shl),
        Mnemonic::Shr if insn.op_count() == 2 && count_ok(1) => |lx, i| shift(lx, i, ShiftKind::Shr),
        Mnemonic::Sar if insn.op_count() == 2 && count_ok(1) => |lx, i| shift(lx, i, ShiftKind::Sar),
        Mnemonic::Rol if insn.op_count() == 2 && count_ok(1) => |lx, i| rotate(lx, i, true),
        Mnemonic::Ror if insn.op_count() == 2 && count_ok(1) => |lx, i| rotate(lx, i, false),
        Mnemonic::Shld if insn.op_count() == 3 && count_ok(2) && dest_width(insn) == Type::I32 => {
            |lx, i| double_shift(lx, i, true)
        }
        Mnemonic::Shrd if insn.op_count() == 3 && count_ok(2) && dest_width(insn) == Type::I32 => {
            |lx, i| double_shift(lx, i, false)
        }
        _ => return None,
    };
    Some(h)
}

/// The masked count: a constant when it is an immediate, else `cl & 31` as an i32.
enum Count {
    Const(u32),
    Dynamic(Value),
}

fn count(lx: &mut Lifter<'_>, insn: &Instruction, i: u32) -> Count {
    match lx.loc(insn, i) {
        Loc::Imm(v) => Count::Const((v & 31) as u32),
        loc => {
            let cl = lx.read(loc, Type::I8);
            let c = lx.b.resize(cl, Type::I32);
            Count::Dynamic(lx.b.binary_imm(BinaryOp::And, c, 31))
        }
    }
}

/// Writes the flags that a shift by a possibly-zero dynamic count computed: each keeps its old
/// value when the count is zero.
struct FlagWriter {
    count_is_zero: Option<Value>,
}

impl FlagWriter {
    fn set(&self, lx: &mut Lifter<'_>, slot: SlotId, new: Value) {
        let v = match self.count_is_zero {
            Some(z) => {
                let old = lx.b.get(slot);
                lx.b.select(z, old, new)
            }
            None => new,
        };
        lx.b.set(slot, v);
    }

    /// The flags of a shift: CF and OF as computed, AF 0 (rpt's choice), ZF, SF and PF of `r`.
    fn set_shift_flags(&self, lx: &mut Lifter<'_>, r: Value, cf: Value, of: Value) {
        self.set(lx, CF, cf);
        self.set(lx, OF, of);
        let af = lx.flag_const(false);
        self.set(lx, AF, af);
        let zf = lx.b.icmp_imm(IntCC::Eq, r, 0);
        self.set(lx, ZF, zf);
        let sf = lx.msb(r);
        self.set(lx, SF, sf);
        let pf = lx.parity(r);
        self.set(lx, PF, pf);
    }
}

/// Resolves the count; `None` when it is the constant 0 (the instruction does nothing).
fn prepare(lx: &mut Lifter<'_>, insn: &Instruction, i: u32) -> Option<(Value, FlagWriter)> {
    match count(lx, insn, i) {
        Count::Const(0) => None,
        Count::Const(c) => Some((lx.c32(c), FlagWriter { count_is_zero: None })),
        Count::Dynamic(c) => {
            let z = lx.b.icmp_imm(IntCC::Eq, c, 0);
            Some((c, FlagWriter { count_is_zero: Some(z) }))
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum ShiftKind {
    Shl,
    Shr,
    Sar,
}

/// `shl`/`sal`, `shr`, `sar rm, imm8/cl`.
fn shift(lx: &mut Lifter<'_>, insn: &Instruction, kind: ShiftKind) {
    let Some((c, fw)) = prepare(lx, insn, 1) else { return };
    let (dst, ty, x) = lx.read_dest(insn);
    let (r, cf, of) = match kind {
        ShiftKind::Shl => {
            // In 64 bits the last bit shifted out lands at bit `width`.
            let x64 = lx.b.resize(x, Type::I64);
            let c64 = lx.b.resize(c, Type::I64);
            let r64 = lx.b.binary(BinaryOp::Shl, x64, c64);
            let out = lx.b.binary_imm(BinaryOp::Lshr, r64, u64::from(ty.bits()));
            let cf = lx.bit(out, 0);
            let r = lx.b.resize(r64, ty);
            let top = lx.msb(r);
            let of = lx.b.binary(BinaryOp::Xor, top, cf);
            (r, cf, of)
        }
        ShiftKind::Shr | ShiftKind::Sar => {
            let x32 = if kind == ShiftKind::Sar {
                lx.b.sext(x, Type::I32)
            } else {
                lx.b.resize(x, Type::I32)
            };
            let op = if kind == ShiftKind::Sar {
                BinaryOp::Ashr
            } else {
                BinaryOp::Lshr
            };
            let r32 = lx.b.binary(op, x32, c);
            // CF is the last bit shifted out: bit 0 after shifting by count-1.
            let c1 = lx.b.binary_imm(BinaryOp::Sub, c, 1);
            let c1 = lx.b.binary_imm(BinaryOp::And, c1, 31);
            let last = lx.b.binary(op, x32, c1);
            let cf = lx.bit(last, 0);
            let r = lx.b.resize(r32, ty);
            let of = if kind == ShiftKind::Sar {
                lx.flag_const(false)
            } else {
                lx.msb(x)
            };
            (r, cf, of)
        }
    };
    lx.write(dst, r);
    fw.set_shift_flags(lx, r, cf, of);
}

/// `rol` (`left`), `ror rm, imm8/cl`. Rotates change only CF and OF. The 5-bit count is taken
/// modulo the width for the rotation itself (the IR's rotate does that), but flags change
/// whenever the 5-bit count is nonzero.
fn rotate(lx: &mut Lifter<'_>, insn: &Instruction, left: bool) {
    let Some((c, fw)) = prepare(lx, insn, 1) else { return };
    let (dst, ty, x) = lx.read_dest(insn);
    let amount = lx.b.resize(c, ty);
    let r =
        lx.b.binary(if left { BinaryOp::Rotl } else { BinaryOp::Rotr }, x, amount);
    lx.write(dst, r);
    let top = lx.msb(r);
    let (cf, of) = if left {
        let cf = lx.bit(r, 0);
        (cf, lx.b.binary(BinaryOp::Xor, top, cf))
    } else {
        let next = lx.bit(r, ty.bits() - 2);
        (top, lx.b.binary(BinaryOp::Xor, top, next))
    };
    fw.set(lx, CF, cf);
    fw.set(lx, OF, of);
}

/// `shld` (`left`), `shrd rm32, r32, imm8/cl`: the destination shifted, filled from the source's
/// other end.
fn double_shift(lx: &mut Lifter<'_>, insn: &Instruction, left: bool) {
    let Some((c, fw)) = prepare(lx, insn, 2) else { return };
    let dst = lx.loc(insn, 0);
    let x = lx.read(dst, Type::I32);
    let src = lx.loc(insn, 1);
    let s = lx.read(src, Type::I32);
    let thirty_two = lx.c32(32);
    let back = lx.b.binary(BinaryOp::Sub, thirty_two, c);
    let (main, fill, out_shift) = if left {
        let main = lx.b.binary(BinaryOp::Shl, x, c);
        let fill = lx.b.binary(BinaryOp::Lshr, s, back);
        (main, fill, back)
    } else {
        let main = lx.b.binary(BinaryOp::Lshr, x, c);
        let fill = lx.b.binary(BinaryOp::Shl, s, back);
        let c1 = lx.b.binary_imm(BinaryOp::Sub, c, 1);
        (main, fill, c1)
    };
    let r = lx.b.binary(BinaryOp::Or, main, fill);
    // With a zero dynamic count `32 - c` wraps to a shift by 0, so the result must be selected too.
    let r = match fw.count_is_zero {
        Some(z) => lx.b.select(z, x, r),
        None => r,
    };
    lx.write(dst, r);
    let out = lx.b.binary(BinaryOp::Lshr, x, out_shift);
    let cf = lx.bit(out, 0);
    let top_r = lx.msb(r);
    let top_x = lx.msb(x);
    let of = lx.b.binary(BinaryOp::Xor, top_r, top_x);
    fw.set_shift_flags(lx, r, cf, of);
}
