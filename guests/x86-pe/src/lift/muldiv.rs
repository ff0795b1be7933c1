//! Multiplication and division: mul, imul (one, two and three operands), div, idiv.
//!
//! Division by zero and quotients that do not fit raise #DE on hardware; here they branch to an
//! `exit <pc>, divide_error` before the IR division could be undefined. Flags the manual leaves
//! undefined (SF, ZF, AF, PF after multiplication; all six after division) are left unchanged.

use iced_x86::{Instruction, Mnemonic, Register};
use rpt_ir::{BinaryOp, ExitReason, IntCC, Type, Value};

use super::operand::dest_width;
use super::{Handler, Lifter};
use crate::state::{CF, OF};

/// Picks the handler for a multiply or divide.
pub(crate) fn select(insn: &Instruction) -> Option<Handler> {
    let h: Handler = match (insn.mnemonic(), insn.op_count()) {
        (Mnemonic::Mul, 1) => mul_rm,
        (Mnemonic::Imul, 1) => imul_rm,
        (Mnemonic::Imul, 2) => imul_r_rm,
        (Mnemonic::Imul, 3) => imul_r_rm_imm,
        (Mnemonic::Div, 1) => div_rm,
        (Mnemonic::Idiv, 1) => idiv_rm,
        _ => return None,
    };
    Some(h)
}

/// The accumulator views of a width: (low source/destination, high destination).
fn acc_regs(ty: Type) -> (Register, Register) {
    match ty {
        Type::I8 => (Register::AL, Register::AH),
        Type::I16 => (Register::AX, Register::DX),
        _ => (Register::EAX, Register::EDX),
    }
}

fn set_cf_of(lx: &mut Lifter<'_>, v: Value) {
    lx.b.set(CF, v);
    lx.b.set(OF, v);
}

/// `mul rm`: unsigned widening multiply of the accumulator; CF = OF = (high half != 0).
fn mul_rm(lx: &mut Lifter<'_>, insn: &Instruction) {
    widening_multiply(lx, insn, false);
}

/// `imul rm`: signed widening multiply; CF = OF = (the high half is not the low half's sign).
fn imul_rm(lx: &mut Lifter<'_>, insn: &Instruction) {
    widening_multiply(lx, insn, true);
}

fn widening_multiply(lx: &mut Lifter<'_>, insn: &Instruction, signed: bool) {
    let ty = dest_width(insn);
    let (lo_reg, hi_reg) = acc_regs(ty);
    let a = lx.read_reg(lo_reg);
    let b = lx.read_op(insn, 0);
    let hi_op = if signed { BinaryOp::Smulhi } else { BinaryOp::Umulhi };
    let lo = lx.b.binary(BinaryOp::Mul, a, b);
    let hi = lx.b.binary(hi_op, a, b);
    let overflow = overflowed(lx, lo, hi, signed);
    if ty == Type::I8 {
        // The 8-bit form puts both halves in ax.
        let lo16 = lx.b.resize(lo, Type::I16);
        let hi16 = lx.b.resize(hi, Type::I16);
        let hi16 = lx.b.binary_imm(BinaryOp::Shl, hi16, 8);
        let ax = lx.b.binary(BinaryOp::Or, hi16, lo16);
        lx.write_reg(Register::AX, ax);
    } else {
        lx.write_reg(lo_reg, lo);
        lx.write_reg(hi_reg, hi);
    }
    set_cf_of(lx, overflow);
}

/// Whether the double-width product `hi:lo` does not fit in `lo`'s width.
fn overflowed(lx: &mut Lifter<'_>, lo: Value, hi: Value, signed: bool) -> Value {
    if signed {
        let bits = lx.b.ty(lo).bits();
        let sign = lx.b.binary_imm(BinaryOp::Ashr, lo, u64::from(bits - 1));
        lx.b.icmp(IntCC::Ne, hi, sign)
    } else {
        lx.b.icmp_imm(IntCC::Ne, hi, 0)
    }
}

/// `imul r, rm`: truncated signed product; CF = OF = (it did not fit).
fn imul_r_rm(lx: &mut Lifter<'_>, insn: &Instruction) {
    let a = lx.read_op(insn, 0);
    let b = lx.read_op(insn, 1);
    truncating_multiply(lx, insn, a, b);
}

/// `imul r, rm, imm`.
fn imul_r_rm_imm(lx: &mut Lifter<'_>, insn: &Instruction) {
    let a = lx.read_op(insn, 1);
    let b = lx.read_op(insn, 2);
    truncating_multiply(lx, insn, a, b);
}

fn truncating_multiply(lx: &mut Lifter<'_>, insn: &Instruction, a: Value, b: Value) {
    let lo = lx.b.binary(BinaryOp::Mul, a, b);
    let hi = lx.b.binary(BinaryOp::Smulhi, a, b);
    let overflow = overflowed(lx, lo, hi, true);
    lx.write_op(insn, 0, lo);
    set_cf_of(lx, overflow);
}

/// Continues in a new block when `bad` is false; otherwise exits with `divide_error` at this instruction.
fn divide_error_if(lx: &mut Lifter<'_>, bad: Value) {
    let err = lx.b.create_block();
    let ok = lx.b.create_block();
    lx.b.branch(bad, err, ok);
    lx.b.switch_to_block(err);
    lx.exit_here(ExitReason::DivideError);
    lx.b.switch_to_block(ok);
}

/// The double-width dividend (ax, dx:ax or edx:eax) and its type.
fn dividend(lx: &mut Lifter<'_>, ty: Type) -> (Value, Type) {
    if ty == Type::I8 {
        return (lx.read_reg(Register::AX), Type::I16);
    }
    let wide = if ty == Type::I16 { Type::I32 } else { Type::I64 };
    let (lo_reg, hi_reg) = acc_regs(ty);
    let lo = lx.read_reg(lo_reg);
    let hi = lx.read_reg(hi_reg);
    let lo = lx.b.resize(lo, wide);
    let hi = lx.b.resize(hi, wide);
    let hi = lx.b.binary_imm(BinaryOp::Shl, hi, u64::from(ty.bits()));
    (lx.b.binary(BinaryOp::Or, hi, lo), wide)
}

fn write_quotient_remainder(lx: &mut Lifter<'_>, ty: Type, q: Value, r: Value) {
    let (q_reg, r_reg) = acc_regs(ty);
    let q = lx.b.resize(q, ty);
    let r = lx.b.resize(r, ty);
    lx.write_reg(q_reg, q);
    lx.write_reg(r_reg, r);
}

/// `div rm`: unsigned; #DE when the divisor is zero or the quotient does not fit.
fn div_rm(lx: &mut Lifter<'_>, insn: &Instruction) {
    let ty = dest_width(insn);
    let d = lx.read_op(insn, 0);
    let (n, wide) = dividend(lx, ty);
    let zero = lx.b.icmp_imm(IntCC::Eq, d, 0);
    divide_error_if(lx, zero);
    let d = lx.b.resize(d, wide);
    let q = lx.b.binary(BinaryOp::Udiv, n, d);
    let r = lx.b.binary(BinaryOp::Urem, n, d);
    let too_big = lx.b.icmp_imm(IntCC::Ugt, q, ty.mask());
    divide_error_if(lx, too_big);
    write_quotient_remainder(lx, ty, q, r);
}

/// `idiv rm`: signed, truncating; #DE when the divisor is zero or the quotient does not fit
/// (which covers MIN / -1, checked first because the IR leaves it undefined).
fn idiv_rm(lx: &mut Lifter<'_>, insn: &Instruction) {
    let ty = dest_width(insn);
    let d = lx.read_op(insn, 0);
    let (n, wide) = dividend(lx, ty);
    let d = lx.b.sext(d, wide);
    let zero = lx.b.icmp_imm(IntCC::Eq, d, 0);
    let min = 1u64 << (wide.bits() - 1);
    let n_min = lx.b.icmp_imm(IntCC::Eq, n, min);
    let d_neg1 = lx.b.icmp_imm(IntCC::Eq, d, wide.mask());
    let overflow = lx.b.binary(BinaryOp::And, n_min, d_neg1);
    let bad = lx.b.binary(BinaryOp::Or, zero, overflow);
    divide_error_if(lx, bad);
    let q = lx.b.binary(BinaryOp::Sdiv, n, d);
    let r = lx.b.binary(BinaryOp::Srem, n, d);
    let q_narrow = lx.b.resize(q, ty);
    let q_back = lx.b.sext(q_narrow, wide);
    let doesnt_fit = lx.b.icmp(IntCC::Ne, q_back, q);
    divide_error_if(lx, doesnt_fit);
    write_quotient_remainder(lx, ty, q, r);
}
