//! Integer arithmetic and logic: add, adc, sub, sbb, cmp, inc, dec, neg, and, or, xor, test, not,
//! the bit scans and tests (bt, bts, btr, btc, bsf, bsr), and the atomic read-modify-writes (xadd, cmpxchg).
//!
//! A `lock` prefix changes nothing here: lifted code runs one guest thread.

use iced_x86::{Instruction, Mnemonic, OpKind};
use rpt_ir::{BinaryOp, IntCC, UnaryOp};

use super::operand::dest_width;
use super::{Handler, Lifter};
use crate::state::{CF, ZF};

/// Picks the handler for an arithmetic or logic instruction.
pub(crate) fn select(insn: &Instruction) -> Option<Handler> {
    let two = insn.op_count() == 2;
    let one = insn.op_count() == 1;
    let h: Handler = match insn.mnemonic() {
        Mnemonic::Add if two => add_rm_r,
        Mnemonic::Adc if two => adc_rm_r,
        Mnemonic::Sub if two => sub_rm_r,
        Mnemonic::Sbb if two => sbb_rm_r,
        Mnemonic::Cmp if two => cmp_rm_r,
        Mnemonic::And if two => and_rm_r,
        Mnemonic::Or if two => or_rm_r,
        Mnemonic::Xor if two => xor_rm_r,
        Mnemonic::Test if two => test_rm_r,
        Mnemonic::Inc if one => inc_rm,
        Mnemonic::Dec if one => dec_rm,
        Mnemonic::Neg if one => neg_rm,
        Mnemonic::Not if one => not_rm,
        // `bt mem, reg` addresses a bit string beyond the operand; compilers do not emit it for C.
        Mnemonic::Bt | Mnemonic::Bts | Mnemonic::Btr | Mnemonic::Btc
            if two && !(insn.op_kind(0) == OpKind::Memory && insn.op_kind(1) == OpKind::Register) =>
        {
            bt_rm
        }
        Mnemonic::Bsf if two => bsf_r_rm,
        Mnemonic::Tzcnt if two => tzcnt_r_rm,
        Mnemonic::Bsr if two => bsr_r_rm,
        Mnemonic::Xadd if two => xadd_rm_r,
        Mnemonic::Cmpxchg if two => cmpxchg_rm_r,
        _ => return None,
    };
    Some(h)
}

/// The shared shape of the two-operand ALU group: `dst = dst op src`, flags, optional write-back.
fn binop(lx: &mut Lifter<'_>, insn: &Instruction, op: Op) {
    let ty = dest_width(insn);
    let dst = lx.loc(insn, 0);
    let src = lx.loc(insn, 1);
    let a = lx.read(dst, ty);
    let b = lx.read(src, ty);
    let r = match op {
        Op::Add | Op::Adc => {
            let s = lx.b.binary(BinaryOp::Add, a, b);
            if op == Op::Adc {
                let cf = lx.b.get(CF);
                let c = lx.b.resize(cf, ty);
                lx.b.binary(BinaryOp::Add, s, c)
            } else {
                s
            }
        }
        Op::Sub | Op::Sbb | Op::Cmp => {
            let d = lx.b.binary(BinaryOp::Sub, a, b);
            if op == Op::Sbb {
                let cf = lx.b.get(CF);
                let c = lx.b.resize(cf, ty);
                lx.b.binary(BinaryOp::Sub, d, c)
            } else {
                d
            }
        }
        Op::And | Op::Test => lx.b.binary(BinaryOp::And, a, b),
        Op::Or => lx.b.binary(BinaryOp::Or, a, b),
        Op::Xor => lx.b.binary(BinaryOp::Xor, a, b),
    };
    match op {
        Op::Add | Op::Adc => lx.set_add_flags(a, b, r, true),
        Op::Sub | Op::Sbb | Op::Cmp => lx.set_sub_flags(a, b, r, true),
        Op::And | Op::Or | Op::Xor | Op::Test => lx.set_logic_flags(r),
    }
    if !matches!(op, Op::Cmp | Op::Test) {
        lx.write(dst, r);
    }
}

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

fn add_rm_r(lx: &mut Lifter<'_>, insn: &Instruction) {
    binop(lx, insn, Op::Add);
}

fn adc_rm_r(lx: &mut Lifter<'_>, insn: &Instruction) {
    binop(lx, insn, Op::Adc);
}

fn sub_rm_r(lx: &mut Lifter<'_>, insn: &Instruction) {
    binop(lx, insn, Op::Sub);
}

fn sbb_rm_r(lx: &mut Lifter<'_>, insn: &Instruction) {
    binop(lx, insn, Op::Sbb);
}

fn cmp_rm_r(lx: &mut Lifter<'_>, insn: &Instruction) {
    binop(lx, insn, Op::Cmp);
}

fn and_rm_r(lx: &mut Lifter<'_>, insn: &Instruction) {
    binop(lx, insn, Op::And);
}

fn or_rm_r(lx: &mut Lifter<'_>, insn: &Instruction) {
    binop(lx, insn, Op::Or);
}

fn xor_rm_r(lx: &mut Lifter<'_>, insn: &Instruction) {
    // `xor r, r` is the zeroing idiom; it still sets the flags of a zero result, so no special case.
    binop(lx, insn, Op::Xor);
}

fn test_rm_r(lx: &mut Lifter<'_>, insn: &Instruction) {
    binop(lx, insn, Op::Test);
}

/// `inc`: add 1, all flags but CF.
fn inc_rm(lx: &mut Lifter<'_>, insn: &Instruction) {
    let ty = dest_width(insn);
    let dst = lx.loc(insn, 0);
    let a = lx.read(dst, ty);
    let one = lx.b.iconst(ty, 1);
    let r = lx.b.binary(BinaryOp::Add, a, one);
    lx.set_add_flags(a, one, r, false);
    lx.write(dst, r);
}

/// `dec`: subtract 1, all flags but CF.
fn dec_rm(lx: &mut Lifter<'_>, insn: &Instruction) {
    let ty = dest_width(insn);
    let dst = lx.loc(insn, 0);
    let a = lx.read(dst, ty);
    let one = lx.b.iconst(ty, 1);
    let r = lx.b.binary(BinaryOp::Sub, a, one);
    lx.set_sub_flags(a, one, r, false);
    lx.write(dst, r);
}

/// `neg`: `0 - x` with the flags of that subtraction (CF set unless x is zero).
fn neg_rm(lx: &mut Lifter<'_>, insn: &Instruction) {
    let ty = dest_width(insn);
    let dst = lx.loc(insn, 0);
    let x = lx.read(dst, ty);
    let zero = lx.b.iconst(ty, 0);
    let r = lx.b.binary(BinaryOp::Sub, zero, x);
    lx.set_sub_flags(zero, x, r, true);
    lx.write(dst, r);
}

/// `not`: complement; no flags.
fn not_rm(lx: &mut Lifter<'_>, insn: &Instruction) {
    let ty = dest_width(insn);
    let dst = lx.loc(insn, 0);
    let x = lx.read(dst, ty);
    let r = lx.b.unary(UnaryOp::Not, x);
    lx.write(dst, r);
}

/// `bt`/`bts`/`btr`/`btc rm, reg/imm`: CF = the selected bit (offset modulo the width), which
/// bts/btr/btc then set, clear or flip. ZF is kept; OF, SF, AF, PF are undefined and left unchanged.
fn bt_rm(lx: &mut Lifter<'_>, insn: &Instruction) {
    let ty = dest_width(insn);
    let dst = lx.loc(insn, 0);
    let x = lx.read(dst, ty);
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

/// `bsf r, rm`: index of the lowest set bit; a zero source sets ZF and leaves the destination
/// unchanged (what current CPUs do; the manual calls it undefined).
fn bsf_r_rm(lx: &mut Lifter<'_>, insn: &Instruction) {
    bit_scan(lx, insn, false);
}

/// `bsr r, rm`: index of the highest set bit; zero source as for `bsf`.
fn bsr_r_rm(lx: &mut Lifter<'_>, insn: &Instruction) {
    bit_scan(lx, insn, true);
}

/// `tzcnt r, rm` (`rep bsf`, which mingw's string code uses): the trailing zero count, the width
/// for zero; CF = source was zero, ZF = result is zero (CPUs without BMI1 run it as `bsf`; rpt
/// follows the CPUs that have it, as this machine and the oracles do).
fn tzcnt_r_rm(lx: &mut Lifter<'_>, insn: &Instruction) {
    let ty = dest_width(insn);
    let src = lx.loc(insn, 1);
    let x = lx.read(src, ty);
    let count = lx.b.unary(UnaryOp::Ctz, x);
    let source_zero = lx.b.icmp_imm(IntCC::Eq, x, 0);
    let result_zero = lx.b.icmp_imm(IntCC::Eq, count, 0);
    lx.b.set(CF, source_zero);
    lx.b.set(ZF, result_zero);
    let dst = lx.loc(insn, 0);
    lx.write(dst, count);
}

fn bit_scan(lx: &mut Lifter<'_>, insn: &Instruction, reverse: bool) {
    let ty = dest_width(insn);
    let src = lx.loc(insn, 1);
    let x = lx.read(src, ty);
    let dst = lx.loc(insn, 0);
    let old = lx.read(dst, ty);
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
    let ty = dest_width(insn);
    let dst = lx.loc(insn, 0);
    let src = lx.loc(insn, 1);
    let a = lx.read(dst, ty);
    let b = lx.read(src, ty);
    let r = lx.b.binary(BinaryOp::Add, a, b);
    lx.set_add_flags(a, b, r, true);
    // The source register is written first, so `xadd r, r` ends with the sum, as on hardware.
    lx.write(src, a);
    lx.write(dst, r);
}

/// `cmpxchg rm, r`: compares the accumulator with rm (flags as `cmp acc, rm`); if equal rm = r,
/// else the accumulator = rm. The destination is written either way, as the locked cycle does.
fn cmpxchg_rm_r(lx: &mut Lifter<'_>, insn: &Instruction) {
    let ty = dest_width(insn);
    let acc_reg = match ty {
        rpt_ir::Type::I8 => iced_x86::Register::AL,
        rpt_ir::Type::I16 => iced_x86::Register::AX,
        _ => iced_x86::Register::EAX,
    };
    let dst = lx.loc(insn, 0);
    let src = lx.loc(insn, 1);
    let old = lx.read(dst, ty);
    let new = lx.read(src, ty);
    let acc = lx.read_reg(acc_reg);
    let diff = lx.b.binary(BinaryOp::Sub, acc, old);
    lx.set_sub_flags(acc, old, diff, true);
    let equal = lx.b.icmp(IntCC::Eq, acc, old);
    let stored = lx.b.select(equal, new, old);
    let acc_after = lx.b.select(equal, acc, old);
    lx.write_reg(acc_reg, acc_after);
    lx.write(dst, stored);
}
