//! Integer arithmetic and logic: add, adc, sub, sbb, cmp, inc, dec, neg, and, or, xor, test, not,
//! the bit scans and tests (bt, bts, btr, btc, bsf, bsr), and the atomic read-modify-writes (xadd, cmpxchg).
//!
//! A `lock` prefix changes nothing here: lifted code runs one guest thread.

use iced_x86::{Instruction, Mnemonic, OpKind};
use rpt_ir::{BinaryOp, IntCC, Type, UnaryOp, Value};

use super::operand::dest_width;
use super::{Handler, Lifter};
use crate::state::{CF, ZF};

/// Picks the handler for an arithmetic or logic instruction.
pub(crate) fn select(insn: &Instruction) -> Option<Handler> {
    let two = insn.op_count() == 2;
    let one = insn.op_count() == 1;
    let h: Handler = match insn.mnemonic() {
        Mnemonic::Add if two => |lx, i| binop(lx, i, Op::Add),
        Mnemonic::Adc if two => |lx, i| binop(lx, i, Op::Adc),
        Mnemonic::Sub if two => |lx, i| binop(lx, i, Op::Sub),
        Mnemonic::Sbb if two => |lx, i| binop(lx, i, Op::Sbb),
        Mnemonic::Cmp if two => |lx, i| binop(lx, i, Op::Cmp),
        Mnemonic::And if two => |lx, i| binop(lx, i, Op::And),
        Mnemonic::Or if two => |lx, i| binop(lx, i, Op::Or),
        // `xor r, r` is the zeroing idiom; it still sets the flags of a zero result, so no special case.
        Mnemonic::Xor if two => |lx, i| binop(lx, i, Op::Xor),
        Mnemonic::Test if two => |lx, i| binop(lx, i, Op::Test),
        Mnemonic::Inc if one => |lx, i| inc_dec_rm(lx, i, BinaryOp::Add),
        Mnemonic::Dec if one => |lx, i| inc_dec_rm(lx, i, BinaryOp::Sub),
        Mnemonic::Neg if one => neg_rm,
        Mnemonic::Not if one => not_rm,
        // `bt mem, reg` addresses a bit string beyond the operand; compilers do not emit it for C.
        Mnemonic::Bt | Mnemonic::Bts | Mnemonic::Btr | Mnemonic::Btc
            if two && !(insn.op_kind(0) == OpKind::Memory && insn.op_kind(1) == OpKind::Register) =>
        {
            bt_rm
        }
        Mnemonic::Bsf if two => |lx, i| bit_scan(lx, i, false),
        Mnemonic::Tzcnt if two => tzcnt_r_rm,
        Mnemonic::Bsr if two => |lx, i| bit_scan(lx, i, true),
        Mnemonic::Xadd if two => xadd_rm_r,
        Mnemonic::Cmpxchg if two => cmpxchg_rm_r,
        _ => return None,
    };
    Some(h)
}

/// The two-operand ALU group: `dst = dst op src`, flags, and the write-back unless `op` only
/// compares or tests.
fn binop(lx: &mut Lifter<'_>, insn: &Instruction, op: Op) {
    let (dst, mut a, _, mut b) = lx.read_both(insn);
    // `xor r, r` and `sub r, r`, the zeroing idiom: the result and the flags do not depend on r,
    // and saying so keeps the register's old value from looking read (a callee-saved register
    // zeroed this way is not handed over by callers, `rpt_emit_c::state_use`).
    let same_register = insn.op_count() == 2
        && insn.op0_kind() == OpKind::Register
        && insn.op1_kind() == OpKind::Register
        && insn.op0_register() == insn.op1_register();
    if same_register && matches!(op, Op::Xor | Op::Sub) {
        let ty = lx.b.func().value_type(a).unwrap_or(Type::I32);
        a = lx.b.iconst(ty, 0);
        b = a;
    }
    let r = match op {
        Op::Add | Op::Adc => {
            let s = lx.b.binary(BinaryOp::Add, a, b);
            if op == Op::Adc {
                lx.add_carry(BinaryOp::Add, s)
            } else {
                s
            }
        }
        Op::Sub | Op::Sbb | Op::Cmp => {
            let d = lx.b.binary(BinaryOp::Sub, a, b);
            if op == Op::Sbb {
                lx.add_carry(BinaryOp::Sub, d)
            } else {
                d
            }
        }
        Op::And | Op::Test => lx.b.binary(BinaryOp::And, a, b),
        Op::Or => lx.b.binary(BinaryOp::Or, a, b),
        Op::Xor => lx.b.binary(BinaryOp::Xor, a, b),
    };
    let carry_in = matches!(op, Op::Adc | Op::Sbb);
    match op {
        Op::Add | Op::Adc => lx.set_arith_flags(BinaryOp::Add, a, b, r, true, carry_in),
        Op::Sub | Op::Sbb | Op::Cmp => lx.set_arith_flags(BinaryOp::Sub, a, b, r, true, carry_in),
        Op::And | Op::Or | Op::Xor | Op::Test => lx.set_logic_flags(r),
    }
    if !matches!(op, Op::Cmp | Op::Test) {
        lx.write(dst, r);
    }
}

/// The operations of [`binop`].
#[derive(Clone, Copy, PartialEq, Eq)]
enum Op {
    Add,
    Adc,
    Sub,
    Sbb,
    Cmp,
    And,
    Or,
    Xor,
    Test,
}

impl Lifter<'_> {
    /// `v op CF` (`op` Add for adc, Sub for sbb), CF widened to `v`'s type.
    fn add_carry(&mut self, op: BinaryOp, v: Value) -> Value {
        let cf = self.b.get(CF);
        let ty = self.b.ty(v);
        let c = self.b.resize(cf, ty);
        self.b.binary(op, v, c)
    }
}

/// `inc` (`op` Add) and `dec` (Sub): the destination plus or minus 1, with every flag but CF.
fn inc_dec_rm(lx: &mut Lifter<'_>, insn: &Instruction, op: BinaryOp) {
    let (dst, ty, a) = lx.read_dest(insn);
    let one = lx.b.iconst(ty, 1);
    let r = lx.add_sub_with_flags(op, a, one, false);
    lx.write(dst, r);
}

/// `neg`: `0 - x` with the flags of that subtraction (CF set unless x is zero).
fn neg_rm(lx: &mut Lifter<'_>, insn: &Instruction) {
    let (dst, ty, x) = lx.read_dest(insn);
    let zero = lx.b.iconst(ty, 0);
    let r = lx.add_sub_with_flags(BinaryOp::Sub, zero, x, true);
    lx.write(dst, r);
}

/// `not`: complement; no flags.
fn not_rm(lx: &mut Lifter<'_>, insn: &Instruction) {
    let (dst, _, x) = lx.read_dest(insn);
    let r = lx.b.unary(UnaryOp::Not, x);
    lx.write(dst, r);
}

/// `bt`/`bts`/`btr`/`btc rm, reg/imm`: CF = the selected bit (offset modulo the width), which
/// bts/btr/btc then set, clear or flip. ZF is kept; OF, SF, AF, PF are undefined and left unchanged.
fn bt_rm(lx: &mut Lifter<'_>, insn: &Instruction) {
    let (dst, ty, x) = lx.read_dest(insn);
    let src = lx.loc(insn, 1);
    let n = lx.read(src, ty);
    let n = lx.b.binary_imm(BinaryOp::And, n, u64::from(ty.bits() - 1));
    let shifted = lx.b.binary(BinaryOp::Lshr, x, n);
    let cf = lx.bit(shifted, 0);
    lx.b.set(CF, cf);
    let one = lx.b.iconst(ty, 1);
    let mask = lx.b.binary(BinaryOp::Shl, one, n);
    let r = match insn.mnemonic() {
        Mnemonic::Bts => lx.b.binary(BinaryOp::Or, x, mask),
        Mnemonic::Btr => {
            let keep = lx.b.unary(UnaryOp::Not, mask);
            lx.b.binary(BinaryOp::And, x, keep)
        }
        Mnemonic::Btc => lx.b.binary(BinaryOp::Xor, x, mask),
        _ => return,
    };
    lx.write(dst, r);
}

/// `tzcnt r, rm` (`rep bsf`, which mingw's string code uses): the trailing zero count, the width
/// for zero; CF = source was zero, ZF = result is zero (CPUs without BMI1 run it as `bsf`; rpt
/// follows the CPUs that have it, as this machine and the oracles do).
fn tzcnt_r_rm(lx: &mut Lifter<'_>, insn: &Instruction) {
    let (_, x) = lx.read_source(insn);
    let count = lx.b.unary(UnaryOp::Ctz, x);
    let source_zero = lx.b.icmp_imm(IntCC::Eq, x, 0);
    let result_zero = lx.b.icmp_imm(IntCC::Eq, count, 0);
    lx.b.set(CF, source_zero);
    lx.b.set(ZF, result_zero);
    lx.write_op(insn, 0, count);
}

/// `bsf r, rm` (`reverse` false: the index of the lowest set bit) and `bsr r, rm` (true: of the
/// highest); a zero source sets ZF and leaves the destination unchanged (what current CPUs do;
/// the manual calls it undefined).
fn bit_scan(lx: &mut Lifter<'_>, insn: &Instruction, reverse: bool) {
    let (ty, x) = lx.read_source(insn);
    let (dst, _, old) = lx.read_dest(insn);
    let index = if reverse {
        let lz = lx.b.unary(UnaryOp::Clz, x);
        let top = lx.b.iconst(ty, u64::from(ty.bits() - 1));
        lx.b.binary(BinaryOp::Sub, top, lz)
    } else {
        lx.b.unary(UnaryOp::Ctz, x)
    };
    let zero = lx.b.icmp_imm(IntCC::Eq, x, 0);
    let r = lx.b.select(zero, old, index);
    lx.b.set(ZF, zero);
    lx.write(dst, r);
}

/// `xadd rm, r`: rm = rm + r and r = the old rm, with the flags of the addition.
fn xadd_rm_r(lx: &mut Lifter<'_>, insn: &Instruction) {
    let (dst, a, src, b) = lx.read_both(insn);
    let r = lx.add_sub_with_flags(BinaryOp::Add, a, b, true);
    // The source register is written first, so `xadd r, r` ends with the sum, as on hardware.
    lx.write(src, a);
    lx.write(dst, r);
}

/// `cmpxchg rm, r`: compares the accumulator with rm (flags as `cmp acc, rm`); if equal rm = r,
/// else the accumulator = rm. The destination is written either way, as the locked cycle does.
fn cmpxchg_rm_r(lx: &mut Lifter<'_>, insn: &Instruction) {
    let acc_reg = match dest_width(insn) {
        Type::I8 => iced_x86::Register::AL,
        Type::I16 => iced_x86::Register::AX,
        _ => iced_x86::Register::EAX,
    };
    let (dst, old, _, new) = lx.read_both(insn);
    let acc = lx.read_reg(acc_reg);
    lx.add_sub_with_flags(BinaryOp::Sub, acc, old, true);
    let equal = lx.b.icmp(IntCC::Eq, acc, old);
    let stored = lx.b.select(equal, new, old);
    let acc_after = lx.b.select(equal, acc, old);
    lx.write_reg(acc_reg, acc_after);
    lx.write(dst, stored);
}
