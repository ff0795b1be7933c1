//! Integer arithmetic, logic, rotates, shifts and compares, with XER CA/OV/SO and CR0 exact.
//!
//! Every carrying form is `x + y + carry_in` on 32 bits (subtraction adds the complement:
//! `subf rD,rA,rB` is `~rA + rB + 1`), so one helper computes CA from a 64-bit sum beside the 32-bit one and OV from
//! the operands' and result's signs.

use rpt_ir::{BinaryOp, ConvOp, IntCC, Type, UnaryOp, Value};

use super::Lifter;
use crate::decode::{Insn, Suffix};
use crate::state::CA;

/// The rotate mask of `rlw*` from MB and ME (IBM bit numbering, bit 0 is the most significant).
pub fn rotate_mask(mb: u32, me: u32) -> u32 {
    let from_mb = u32::MAX >> mb;
    let to_me = u32::MAX << (31 - me);
    if mb <= me { from_mb & to_me } else { from_mb | to_me }
}

impl Lifter<'_> {
    /// `x + y + cin` (cin an i32 0 or 1): the 32-bit sum and the carry out as an i1. The sum is
    /// computed in 32 bits and the carry apart from it in 64, so that when nothing reads CA
    /// (flag-abi drops the write) what is left is a plain 32-bit add: a loop counter kept in 64
    /// bits for its carry cost the host a 64-bit constant and add every iteration.
    fn add_carrying(&mut self, x: Value, y: Value, cin: Value) -> (Value, Value) {
        let r = self.b.binary(BinaryOp::Add, x, y);
        let r = self.b.binary(BinaryOp::Add, r, cin);
        let x64 = self.b.convert(ConvOp::Zext, x, Type::I64);
        let y64 = self.b.convert(ConvOp::Zext, y, Type::I64);
        let c64 = self.b.convert(ConvOp::Zext, cin, Type::I64);
        let s = self.b.binary(BinaryOp::Add, x64, y64);
        let s = self.b.binary(BinaryOp::Add, s, c64);
        let hi = self.b.binary_imm(BinaryOp::Lshr, s, 32);
        let carry = self.b.convert(ConvOp::Trunc, hi, Type::I1);
        (r, carry)
    }

    /// Signed overflow of `r = x + y (+ carry)`: both operands' signs differ from the result's.
    fn add_overflow(&mut self, x: Value, y: Value, r: Value) -> Value {
        let xr = self.b.binary(BinaryOp::Xor, x, r);
        let yr = self.b.binary(BinaryOp::Xor, y, r);
        let both = self.b.binary(BinaryOp::And, xr, yr);
        self.b.icmp_imm(IntCC::Slt, both, 0)
    }

    /// The current CA as an i32 0 or 1.
    fn carry_in(&mut self) -> Value {
        let ca = self.b.get(CA);
        self.b.convert(ConvOp::Zext, ca, Type::I32)
    }

    /// The value of an operand.
    fn operand(&mut self, insn: &Insn, operand: Operand) -> Value {
        match operand {
            Operand::Ra => self.gpr(insn.ra()),
            Operand::NotRa => {
                let a = self.gpr(insn.ra());
                self.b.unary(UnaryOp::Not, a)
            }
            Operand::Rb => self.gpr(insn.rb()),
            Operand::Simm => self.c32(insn.simm() as u32),
            Operand::Uimm => self.c32(insn.uimm()),
            Operand::Const(c) => self.c32(c),
            Operand::Ca => self.carry_in(),
        }
    }

    /// rA = f(rS, rB) for the X-form logical and shift instructions, with CR0 if Rc.
    fn x_form(&mut self, insn: &Insn, f: impl FnOnce(&mut Lifter<'_>, Value, Value) -> Value) {
        let s = self.gpr(insn.rd());
        let b = self.gpr(insn.rb());
        let r = f(self, s, b);
        self.set_gpr(insn.ra(), r);
        self.record(insn, r);
    }

    /// `op` of `a` and `b` with the complement `complement` says.
    pub(crate) fn logic(&mut self, op: BinaryOp, complement: Complement, a: Value, b: Value) -> Value {
        let b = match complement {
            Complement::SecondInput => self.b.unary(UnaryOp::Not, b),
            Complement::Neither | Complement::Result => b,
        };
        let r = self.b.binary(op, a, b);
        match complement {
            Complement::Result => self.b.unary(UnaryOp::Not, r),
            Complement::Neither | Complement::SecondInput => r,
        }
    }
}

/// An operand of the additions (which all compute `x + y + carry_in` on 32 bits) and compares.
#[derive(Clone, Copy)]
pub(crate) enum Operand {
    /// rA.
    Ra,
    /// ~rA (subtraction adds the complement).
    NotRa,
    /// rB.
    Rb,
    /// The D-form's SIMM.
    Simm,
    /// The D-form's UIMM.
    Uimm,
    /// A constant.
    Const(u32),
    /// XER[CA].
    Ca,
}

/// Which side of a logical operation is complemented: `andc`/`orc` complement rB, `nand`/`nor`/
/// `eqv` the result (and so do the CR-logic forms).
#[derive(Clone, Copy)]
pub(crate) enum Complement {
    /// `and`, `or`, `xor`.
    Neither,
    /// `andc`, `orc`.
    SecondInput,
    /// `nand`, `nor`, `eqv`.
    Result,
}

/// rD = x + y + carry_in (`inputs` in that order), CA when `sets_ca`; an XO form also sets OV
/// when OE is set and CR0 when Rc is (a D form has neither bit).
pub(crate) fn add(lx: &mut Lifter<'_>, insn: &Insn, inputs: [Operand; 3], sets_ca: bool) {
    let [x, y, cin] = inputs.map(|input| lx.operand(insn, input));
    let (r, carry) = lx.add_carrying(x, y, cin);
    lx.set_gpr(insn.rd(), r);
    if sets_ca {
        lx.b.set(CA, carry);
    }
    if insn.row.suffix == Suffix::OeRc {
        if insn.oe() {
            let ov = lx.add_overflow(x, y, r);
            lx.set_ov(ov);
        }
        lx.record(insn, r);
    }
}

/// `addi rD,rA,SIMM` (`li` when rA is 0).
pub(crate) fn addi(lx: &mut Lifter<'_>, insn: &Insn) {
    let a = lx.gpr_or_zero(insn.ra());
    let r = lx.b.binary_imm(BinaryOp::Add, a, insn.simm() as u32 as u64);
    lx.set_gpr(insn.rd(), r);
}

/// `addis rD,rA,SIMM` (`lis` when rA is 0).
pub(crate) fn addis(lx: &mut Lifter<'_>, insn: &Insn) {
    let a = lx.gpr_or_zero(insn.ra());
    let r = lx.b.binary_imm(BinaryOp::Add, a, u64::from((insn.simm() as u32) << 16));
    lx.set_gpr(insn.rd(), r);
}

/// `addic. rD,rA,SIMM`: sets CA and CR0.
pub(crate) fn addic_dot(lx: &mut Lifter<'_>, insn: &Insn) {
    add(lx, insn, [Operand::Ra, Operand::Simm, Operand::Const(0)], true);
    let r = lx.gpr(insn.rd());
    lx.set_cr0(r);
}

/// `mulli rD,rA,SIMM`: the low 32 bits of the product.
pub(crate) fn mulli(lx: &mut Lifter<'_>, insn: &Insn) {
    let a = lx.gpr(insn.ra());
    let r = lx.b.binary_imm(BinaryOp::Mul, a, insn.simm() as u32 as u64);
    lx.set_gpr(insn.rd(), r);
}

/// `mullw[o][.]`: OV when the signed 64-bit product does not fit 32 bits.
pub(crate) fn mullw(lx: &mut Lifter<'_>, insn: &Insn) {
    let (a, b) = (lx.gpr(insn.ra()), lx.gpr(insn.rb()));
    let r = lx.b.binary(BinaryOp::Mul, a, b);
    lx.set_gpr(insn.rd(), r);
    if insn.oe() {
        let a64 = lx.b.convert(ConvOp::Sext, a, Type::I64);
        let b64 = lx.b.convert(ConvOp::Sext, b, Type::I64);
        let p = lx.b.binary(BinaryOp::Mul, a64, b64);
        let back = lx.b.convert(ConvOp::Sext, r, Type::I64);
        let ov = lx.b.icmp(IntCC::Ne, p, back);
        lx.set_ov(ov);
    }
    lx.record(insn, r);
}

/// `mulhw[.]` (`Smulhi`), `mulhwu[.]` (`Umulhi`): the high 32 bits of the product.
pub(crate) fn multiply_high(lx: &mut Lifter<'_>, insn: &Insn, op: BinaryOp) {
    let (a, b) = (lx.gpr(insn.ra()), lx.gpr(insn.rb()));
    let r = lx.b.binary(op, a, b);
    lx.set_gpr(insn.rd(), r);
    lx.record(insn, r);
}

/// `divw[o][.]`: by zero or 0x80000000 / -1, the 750 gives -1 for a negative dividend, else 0.
pub(crate) fn divw(lx: &mut Lifter<'_>, insn: &Insn) {
    let (a, b) = (lx.gpr(insn.ra()), lx.gpr(insn.rb()));
    let zero = lx.b.icmp_imm(IntCC::Eq, b, 0);
    let min = lx.b.icmp_imm(IntCC::Eq, a, 0x8000_0000);
    let minus_one = lx.b.icmp_imm(IntCC::Eq, b, 0xffff_ffff);
    let ovf = lx.b.binary(BinaryOp::And, min, minus_one);
    let bad = lx.b.binary(BinaryOp::Or, zero, ovf);
    // Divide by 1 on the bad path so the division itself is always defined.
    let one = lx.c32(1);
    let safe = lx.b.select(bad, one, b);
    let q = lx.b.binary(BinaryOp::Sdiv, a, safe);
    let sign = lx.b.binary_imm(BinaryOp::Ashr, a, 31);
    let r = lx.b.select(bad, sign, q);
    lx.set_gpr(insn.rd(), r);
    if insn.oe() {
        lx.set_ov(bad);
    }
    lx.record(insn, r);
}

/// `divwu[o][.]`: by zero gives 0.
pub(crate) fn divwu(lx: &mut Lifter<'_>, insn: &Insn) {
    let (a, b) = (lx.gpr(insn.ra()), lx.gpr(insn.rb()));
    let bad = lx.b.icmp_imm(IntCC::Eq, b, 0);
    let one = lx.c32(1);
    let safe = lx.b.select(bad, one, b);
    let q = lx.b.binary(BinaryOp::Udiv, a, safe);
    let zero = lx.c32(0);
    let r = lx.b.select(bad, zero, q);
    lx.set_gpr(insn.rd(), r);
    if insn.oe() {
        lx.set_ov(bad);
    }
    lx.record(insn, r);
}

/// `cmp`/`cmpl crfD,L,rA,rB`, `cmpi crfD,L,rA,SIMM`, `cmpli crfD,L,rA,UIMM`: rA against `second`.
pub(crate) fn compare(lx: &mut Lifter<'_>, insn: &Insn, second: Operand, signed: bool) {
    let a = lx.gpr(insn.ra());
    let b = lx.operand(insn, second);
    lx.compare_into(insn.crfd(), a, b, signed);
}

/// `and[.]`, `andc[.]`, `or[.]` (`mr` when rS = rB), `orc[.]`, `xor[.]`, `nand[.]`, `nor[.]`,
/// `eqv[.]`: rA = rS op rB with the complement the form names.
pub(crate) fn logical(lx: &mut Lifter<'_>, insn: &Insn, op: BinaryOp, complement: Complement) {
    lx.x_form(insn, |l, s, b| l.logic(op, complement, s, b));
}

/// `ori`, `oris`, `xori`, `xoris`, `andi.`, `andis.`: rA = rS op UIMM shifted left by `shift`
/// (0 or 16), with CR0 when `record` (the `and` forms, which have no other).
pub(crate) fn logical_imm(lx: &mut Lifter<'_>, insn: &Insn, op: BinaryOp, shift: u32, record: bool) {
    let s = lx.gpr(insn.rd());
    let imm = lx.c32(insn.uimm() << shift);
    let r = lx.b.binary(op, s, imm);
    lx.set_gpr(insn.ra(), r);
    if record {
        lx.set_cr0(r);
    }
}

/// rA = f(rS), with CR0 if Rc.
fn unary_rs(lx: &mut Lifter<'_>, insn: &Insn, f: impl FnOnce(&mut Lifter<'_>, Value) -> Value) {
    let s = lx.gpr(insn.rd());
    let r = f(lx, s);
    lx.set_gpr(insn.ra(), r);
    lx.record(insn, r);
}

/// `extsb[.]` (`from` i8), `extsh[.]` (`from` i16): the low bits of rS, sign-extended.
pub(crate) fn extend_sign(lx: &mut Lifter<'_>, insn: &Insn, from: Type) {
    unary_rs(lx, insn, |l, s| {
        let low = l.b.convert(ConvOp::Trunc, s, from);
        l.b.convert(ConvOp::Sext, low, Type::I32)
    });
}

/// `cntlzw[.]` (32 for zero).
pub(crate) fn cntlzw(lx: &mut Lifter<'_>, insn: &Insn) {
    unary_rs(lx, insn, |l, s| l.b.unary(UnaryOp::Clz, s));
}

/// `slw[.]`, `srw[.]`: a shift amount of 32..63 (six bits of rB) gives 0.
pub(crate) fn shift_word(lx: &mut Lifter<'_>, insn: &Insn, op: BinaryOp) {
    lx.x_form(insn, |l, s, b| {
        let n = l.b.binary_imm(BinaryOp::And, b, 31);
        let shifted = l.b.binary(op, s, n);
        let big = l.b.binary_imm(BinaryOp::And, b, 32);
        let big = l.b.icmp_imm(IntCC::Ne, big, 0);
        let zero = l.c32(0);
        l.b.select(big, zero, shifted)
    });
}

/// `sraw[.]`: CA is set when the value is negative and any 1 bit is shifted out.
pub(crate) fn sraw(lx: &mut Lifter<'_>, insn: &Insn) {
    let s = lx.gpr(insn.rd());
    let b = lx.gpr(insn.rb());
    let n = lx.b.binary_imm(BinaryOp::And, b, 31);
    let big = lx.b.binary_imm(BinaryOp::And, b, 32);
    let big = lx.b.icmp_imm(IntCC::Ne, big, 0);
    let sign = lx.b.binary_imm(BinaryOp::Ashr, s, 31);
    let shifted = lx.b.binary(BinaryOp::Ashr, s, n);
    let r = lx.b.select(big, sign, shifted);
    // The bits shifted out: all of rS when the amount is 32 or more.
    let one = lx.c32(1);
    let low = lx.b.binary(BinaryOp::Shl, one, n);
    let low = lx.b.binary_imm(BinaryOp::Sub, low, 1);
    let all = lx.c32(u32::MAX);
    let out_mask = lx.b.select(big, all, low);
    let out = lx.b.binary(BinaryOp::And, s, out_mask);
    finish_shift_right_algebraic(lx, insn, s, out, r);
}

/// `srawi[.] rA,rS,SH`.
pub(crate) fn srawi(lx: &mut Lifter<'_>, insn: &Insn) {
    let sh = insn.rb();
    let s = lx.gpr(insn.rd());
    let r = lx.b.binary_imm(BinaryOp::Ashr, s, u64::from(sh));
    let out = lx.b.binary_imm(BinaryOp::And, s, (1u64 << sh) - 1);
    finish_shift_right_algebraic(lx, insn, s, out, r);
}

/// The tail of `sraw`/`srawi`: rA = `r`, and CA set when rS is negative and the bits shifted out
/// (`out`, rS under their mask) are not all zero.
fn finish_shift_right_algebraic(lx: &mut Lifter<'_>, insn: &Insn, s: Value, out: Value, r: Value) {
    let lost = lx.b.icmp_imm(IntCC::Ne, out, 0);
    let negative = lx.b.icmp_imm(IntCC::Slt, s, 0);
    let ca = lx.b.binary(BinaryOp::And, negative, lost);
    lx.set_gpr(insn.ra(), r);
    lx.b.set(CA, ca);
    lx.record(insn, r);
}

/// `rlwinm[.] rA,rS,SH,MB,ME`.
pub(crate) fn rlwinm(lx: &mut Lifter<'_>, insn: &Insn) {
    let s = lx.gpr(insn.rd());
    let rotated = lx.b.binary_imm(BinaryOp::Rotl, s, u64::from(insn.rb()));
    finish_rotate_and_mask(lx, insn, rotated);
}

/// `rlwnm[.] rA,rS,rB,MB,ME`.
pub(crate) fn rlwnm(lx: &mut Lifter<'_>, insn: &Insn) {
    let s = lx.gpr(insn.rd());
    let b = lx.gpr(insn.rb());
    let n = lx.b.binary_imm(BinaryOp::And, b, 31);
    let rotated = lx.b.binary(BinaryOp::Rotl, s, n);
    finish_rotate_and_mask(lx, insn, rotated);
}

/// The tail of `rlwinm`/`rlwnm`: rA = the rotated rS under the MB..ME mask.
fn finish_rotate_and_mask(lx: &mut Lifter<'_>, insn: &Insn, rotated: Value) {
    let mask = rotate_mask(insn.rc_field(), insn.me());
    let r = lx.b.binary_imm(BinaryOp::And, rotated, u64::from(mask));
    lx.set_gpr(insn.ra(), r);
    lx.record(insn, r);
}

/// `rlwimi[.] rA,rS,SH,MB,ME`: inserts the rotated bits under the mask into rA.
pub(crate) fn rlwimi(lx: &mut Lifter<'_>, insn: &Insn) {
    let mask = rotate_mask(insn.rc_field(), insn.me());
    let s = lx.gpr(insn.rd());
    let a = lx.gpr(insn.ra());
    let rotated = lx.b.binary_imm(BinaryOp::Rotl, s, u64::from(insn.rb()));
    let inserted = lx.b.binary_imm(BinaryOp::And, rotated, u64::from(mask));
    let kept = lx.b.binary_imm(BinaryOp::And, a, u64::from(!mask));
    let r = lx.b.binary(BinaryOp::Or, inserted, kept);
    lx.set_gpr(insn.ra(), r);
    lx.record(insn, r);
}

#[cfg(test)]
mod tests {
    use super::rotate_mask;

    #[test]
    fn masks_follow_ibm_bit_numbering() {
        assert_eq!(rotate_mask(0, 31), u32::MAX);
        assert_eq!(rotate_mask(0, 29), 0xffff_fffc);
        assert_eq!(rotate_mask(24, 31), 0xff);
        assert_eq!(rotate_mask(31, 0), 0x8000_0001);
        assert_eq!(rotate_mask(16, 15), u32::MAX);
    }
}
