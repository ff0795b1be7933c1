//! Integer arithmetic, logic, rotates, shifts and compares, with XER CA/OV/SO and CR0 exact.
//!
//! Every carrying form is `x + y + carry_in` on 32 bits (subtraction adds the complement:
//! `subf rD,rA,rB` is `~rA + rB + 1`), so one helper computes CA from a 64-bit sum and OV from
//! the operands' and result's signs.

use rpt_ir::{BinaryOp, ConvOp, IntCC, Type, UnaryOp, Value};

use super::Lifter;
use crate::decode::Insn;
use crate::state::CA;

/// The rotate mask of `rlw*` from MB and ME (IBM bit numbering, bit 0 is the most significant).
pub fn rotate_mask(mb: u32, me: u32) -> u32 {
    let from_mb = u32::MAX >> mb;
    let to_me = u32::MAX << (31 - me);
    if mb <= me { from_mb & to_me } else { from_mb | to_me }
}

impl Lifter<'_> {
    /// `x + y + cin` (cin an i32 0 or 1): the 32-bit sum and the carry out as an i1.
    fn add_carrying(&mut self, x: Value, y: Value, cin: Value) -> (Value, Value) {
        let x64 = self.b.convert(ConvOp::Zext, x, Type::I64);
        let y64 = self.b.convert(ConvOp::Zext, y, Type::I64);
        let c64 = self.b.convert(ConvOp::Zext, cin, Type::I64);
        let s = self.b.binary(BinaryOp::Add, x64, y64);
        let s = self.b.binary(BinaryOp::Add, s, c64);
        let hi = self.b.binary_imm(BinaryOp::Lshr, s, 32);
        let carry = self.b.convert(ConvOp::Trunc, hi, Type::I1);
        let r = self.b.convert(ConvOp::Trunc, s, Type::I32);
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

    /// The common tail of the XO-form adds: write rD, CA if asked, OV if OE, CR0 if Rc.
    fn finish_add(&mut self, insn: &Insn, x: Value, y: Value, cin: Value, sets_ca: bool) {
        let (r, carry) = self.add_carrying(x, y, cin);
        self.set_gpr(insn.rd(), r);
        if sets_ca {
            self.b.set(CA, carry);
        }
        if insn.oe() {
            let ov = self.add_overflow(x, y, r);
            self.set_ov(ov);
        }
        self.record(insn, r);
    }

    fn not_ra(&mut self, insn: &Insn) -> Value {
        let a = self.gpr(insn.ra());
        self.b.unary(UnaryOp::Not, a)
    }

    /// rA = f(rS, rB) for the X-form logical instructions, with CR0 if Rc.
    fn logical(&mut self, insn: &Insn, f: fn(&mut Lifter<'_>, Value, Value) -> Value) {
        let s = self.gpr(insn.rd());
        let b = self.gpr(insn.rb());
        let r = f(self, s, b);
        self.set_gpr(insn.ra(), r);
        self.record(insn, r);
    }

    /// rA = rS op UIMM (shifted), optionally recording.
    fn logical_imm(&mut self, insn: &Insn, op: BinaryOp, shift: u32, record: bool) {
        let s = self.gpr(insn.rd());
        let imm = self.c32(insn.uimm() << shift);
        let r = self.b.binary(op, s, imm);
        self.set_gpr(insn.ra(), r);
        if record {
            self.set_cr0(r);
        }
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

/// `addic rD,rA,SIMM`: sets CA.
pub(crate) fn addic(lx: &mut Lifter<'_>, insn: &Insn) {
    let a = lx.gpr(insn.ra());
    let imm = lx.c32(insn.simm() as u32);
    let zero = lx.c32(0);
    let (r, carry) = lx.add_carrying(a, imm, zero);
    lx.set_gpr(insn.rd(), r);
    lx.b.set(CA, carry);
}

/// `addic. rD,rA,SIMM`: sets CA and CR0.
pub(crate) fn addic_dot(lx: &mut Lifter<'_>, insn: &Insn) {
    addic(lx, insn);
    let r = lx.gpr(insn.rd());
    lx.set_cr0(r);
}

/// `subfic rD,rA,SIMM`: SIMM - rA, sets CA.
pub(crate) fn subfic(lx: &mut Lifter<'_>, insn: &Insn) {
    let na = lx.not_ra(insn);
    let imm = lx.c32(insn.simm() as u32);
    let one = lx.c32(1);
    let (r, carry) = lx.add_carrying(na, imm, one);
    lx.set_gpr(insn.rd(), r);
    lx.b.set(CA, carry);
}

/// `mulli rD,rA,SIMM`: the low 32 bits of the product.
pub(crate) fn mulli(lx: &mut Lifter<'_>, insn: &Insn) {
    let a = lx.gpr(insn.ra());
    let r = lx.b.binary_imm(BinaryOp::Mul, a, insn.simm() as u32 as u64);
    lx.set_gpr(insn.rd(), r);
}

/// `add[o][.]`.
pub(crate) fn add(lx: &mut Lifter<'_>, insn: &Insn) {
    let (a, b, z) = (lx.gpr(insn.ra()), lx.gpr(insn.rb()), lx.c32(0));
    lx.finish_add(insn, a, b, z, false);
}

/// `addc[o][.]`.
pub(crate) fn addc(lx: &mut Lifter<'_>, insn: &Insn) {
    let (a, b, z) = (lx.gpr(insn.ra()), lx.gpr(insn.rb()), lx.c32(0));
    lx.finish_add(insn, a, b, z, true);
}

/// `adde[o][.]`.
pub(crate) fn adde(lx: &mut Lifter<'_>, insn: &Insn) {
    let (a, b, c) = (lx.gpr(insn.ra()), lx.gpr(insn.rb()), lx.carry_in());
    lx.finish_add(insn, a, b, c, true);
}

/// `addme[o][.]`: rA + CA - 1.
pub(crate) fn addme(lx: &mut Lifter<'_>, insn: &Insn) {
    let (a, m, c) = (lx.gpr(insn.ra()), lx.c32(u32::MAX), lx.carry_in());
    lx.finish_add(insn, a, m, c, true);
}

/// `addze[o][.]`: rA + CA.
pub(crate) fn addze(lx: &mut Lifter<'_>, insn: &Insn) {
    let (a, z, c) = (lx.gpr(insn.ra()), lx.c32(0), lx.carry_in());
    lx.finish_add(insn, a, z, c, true);
}

/// `subf[o][.]`: rB - rA.
pub(crate) fn subf(lx: &mut Lifter<'_>, insn: &Insn) {
    let (na, b, one) = (lx.not_ra(insn), lx.gpr(insn.rb()), lx.c32(1));
    lx.finish_add(insn, na, b, one, false);
}

/// `subfc[o][.]`.
pub(crate) fn subfc(lx: &mut Lifter<'_>, insn: &Insn) {
    let (na, b, one) = (lx.not_ra(insn), lx.gpr(insn.rb()), lx.c32(1));
    lx.finish_add(insn, na, b, one, true);
}

/// `subfe[o][.]`: ~rA + rB + CA.
pub(crate) fn subfe(lx: &mut Lifter<'_>, insn: &Insn) {
    let (na, b, c) = (lx.not_ra(insn), lx.gpr(insn.rb()), lx.carry_in());
    lx.finish_add(insn, na, b, c, true);
}

/// `subfme[o][.]`: ~rA + CA - 1.
pub(crate) fn subfme(lx: &mut Lifter<'_>, insn: &Insn) {
    let (na, m, c) = (lx.not_ra(insn), lx.c32(u32::MAX), lx.carry_in());
    lx.finish_add(insn, na, m, c, true);
}

/// `subfze[o][.]`: ~rA + CA.
pub(crate) fn subfze(lx: &mut Lifter<'_>, insn: &Insn) {
    let (na, z, c) = (lx.not_ra(insn), lx.c32(0), lx.carry_in());
    lx.finish_add(insn, na, z, c, true);
}

/// `neg[o][.]`: ~rA + 1 (OV for 0x80000000).
pub(crate) fn neg(lx: &mut Lifter<'_>, insn: &Insn) {
    let (na, z, one) = (lx.not_ra(insn), lx.c32(0), lx.c32(1));
    lx.finish_add(insn, na, z, one, false);
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

/// `mulhw[.]`.
pub(crate) fn mulhw(lx: &mut Lifter<'_>, insn: &Insn) {
    let (a, b) = (lx.gpr(insn.ra()), lx.gpr(insn.rb()));
    let r = lx.b.binary(BinaryOp::Smulhi, a, b);
    lx.set_gpr(insn.rd(), r);
    lx.record(insn, r);
}

/// `mulhwu[.]`.
pub(crate) fn mulhwu(lx: &mut Lifter<'_>, insn: &Insn) {
    let (a, b) = (lx.gpr(insn.ra()), lx.gpr(insn.rb()));
    let r = lx.b.binary(BinaryOp::Umulhi, a, b);
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

/// `cmp crfD,L,rA,rB`.
pub(crate) fn cmp(lx: &mut Lifter<'_>, insn: &Insn) {
    let (a, b) = (lx.gpr(insn.ra()), lx.gpr(insn.rb()));
    lx.compare_into(insn.crfd(), a, b, true);
}

/// `cmpl crfD,L,rA,rB`.
pub(crate) fn cmpl(lx: &mut Lifter<'_>, insn: &Insn) {
    let (a, b) = (lx.gpr(insn.ra()), lx.gpr(insn.rb()));
    lx.compare_into(insn.crfd(), a, b, false);
}

/// `cmpi crfD,L,rA,SIMM`.
pub(crate) fn cmpi(lx: &mut Lifter<'_>, insn: &Insn) {
    let a = lx.gpr(insn.ra());
    let b = lx.c32(insn.simm() as u32);
    lx.compare_into(insn.crfd(), a, b, true);
}

/// `cmpli crfD,L,rA,UIMM`.
pub(crate) fn cmpli(lx: &mut Lifter<'_>, insn: &Insn) {
    let a = lx.gpr(insn.ra());
    let b = lx.c32(insn.uimm());
    lx.compare_into(insn.crfd(), a, b, false);
}

/// `and[.]`.
pub(crate) fn and(lx: &mut Lifter<'_>, insn: &Insn) {
    lx.logical(insn, |l, s, b| l.b.binary(BinaryOp::And, s, b));
}

/// `andc[.]`: rS & ~rB.
pub(crate) fn andc(lx: &mut Lifter<'_>, insn: &Insn) {
    lx.logical(insn, |l, s, b| {
        let nb = l.b.unary(UnaryOp::Not, b);
        l.b.binary(BinaryOp::And, s, nb)
    });
}

/// `or[.]` (`mr` when rS = rB).
pub(crate) fn or(lx: &mut Lifter<'_>, insn: &Insn) {
    lx.logical(insn, |l, s, b| l.b.binary(BinaryOp::Or, s, b));
}

/// `orc[.]`: rS | ~rB.
pub(crate) fn orc(lx: &mut Lifter<'_>, insn: &Insn) {
    lx.logical(insn, |l, s, b| {
        let nb = l.b.unary(UnaryOp::Not, b);
        l.b.binary(BinaryOp::Or, s, nb)
    });
}

/// `xor[.]`.
pub(crate) fn xor(lx: &mut Lifter<'_>, insn: &Insn) {
    lx.logical(insn, |l, s, b| l.b.binary(BinaryOp::Xor, s, b));
}

/// `nand[.]`.
pub(crate) fn nand(lx: &mut Lifter<'_>, insn: &Insn) {
    lx.logical(insn, |l, s, b| {
        let x = l.b.binary(BinaryOp::And, s, b);
        l.b.unary(UnaryOp::Not, x)
    });
}

/// `nor[.]`.
pub(crate) fn nor(lx: &mut Lifter<'_>, insn: &Insn) {
    lx.logical(insn, |l, s, b| {
        let x = l.b.binary(BinaryOp::Or, s, b);
        l.b.unary(UnaryOp::Not, x)
    });
}

/// `eqv[.]`.
pub(crate) fn eqv(lx: &mut Lifter<'_>, insn: &Insn) {
    lx.logical(insn, |l, s, b| {
        let x = l.b.binary(BinaryOp::Xor, s, b);
        l.b.unary(UnaryOp::Not, x)
    });
}

/// `ori rA,rS,UIMM`.
pub(crate) fn ori(lx: &mut Lifter<'_>, insn: &Insn) {
    lx.logical_imm(insn, BinaryOp::Or, 0, false);
}

/// `oris rA,rS,UIMM`.
pub(crate) fn oris(lx: &mut Lifter<'_>, insn: &Insn) {
    lx.logical_imm(insn, BinaryOp::Or, 16, false);
}

/// `xori rA,rS,UIMM`.
pub(crate) fn xori(lx: &mut Lifter<'_>, insn: &Insn) {
    lx.logical_imm(insn, BinaryOp::Xor, 0, false);
}

/// `xoris rA,rS,UIMM`.
pub(crate) fn xoris(lx: &mut Lifter<'_>, insn: &Insn) {
    lx.logical_imm(insn, BinaryOp::Xor, 16, false);
}

/// `andi. rA,rS,UIMM`.
pub(crate) fn andi_dot(lx: &mut Lifter<'_>, insn: &Insn) {
    lx.logical_imm(insn, BinaryOp::And, 0, true);
}

/// `andis. rA,rS,UIMM`.
pub(crate) fn andis_dot(lx: &mut Lifter<'_>, insn: &Insn) {
    lx.logical_imm(insn, BinaryOp::And, 16, true);
}

fn unary_rs(lx: &mut Lifter<'_>, insn: &Insn, f: fn(&mut Lifter<'_>, Value) -> Value) {
    let s = lx.gpr(insn.rd());
    let r = f(lx, s);
    lx.set_gpr(insn.ra(), r);
    lx.record(insn, r);
}

/// `extsb[.]`.
pub(crate) fn extsb(lx: &mut Lifter<'_>, insn: &Insn) {
    unary_rs(lx, insn, |l, s| {
        let low = l.b.convert(ConvOp::Trunc, s, Type::I8);
        l.b.convert(ConvOp::Sext, low, Type::I32)
    });
}

/// `extsh[.]`.
pub(crate) fn extsh(lx: &mut Lifter<'_>, insn: &Insn) {
    unary_rs(lx, insn, |l, s| {
        let low = l.b.convert(ConvOp::Trunc, s, Type::I16);
        l.b.convert(ConvOp::Sext, low, Type::I32)
    });
}

/// `cntlzw[.]` (32 for zero).
pub(crate) fn cntlzw(lx: &mut Lifter<'_>, insn: &Insn) {
    unary_rs(lx, insn, |l, s| l.b.unary(UnaryOp::Clz, s));
}

/// `slw[.]`: a shift amount of 32..63 (six bits of rB) gives 0.
pub(crate) fn slw(lx: &mut Lifter<'_>, insn: &Insn) {
    lx.logical(insn, |l, s, b| {
        let n = l.b.binary_imm(BinaryOp::And, b, 31);
        let shifted = l.b.binary(BinaryOp::Shl, s, n);
        let big = l.b.binary_imm(BinaryOp::And, b, 32);
        let big = l.b.icmp_imm(IntCC::Ne, big, 0);
        let zero = l.c32(0);
        l.b.select(big, zero, shifted)
    });
}

/// `srw[.]`.
pub(crate) fn srw(lx: &mut Lifter<'_>, insn: &Insn) {
    lx.logical(insn, |l, s, b| {
        let n = l.b.binary_imm(BinaryOp::And, b, 31);
        let shifted = l.b.binary(BinaryOp::Lshr, s, n);
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
    let lost = lx.b.icmp_imm(IntCC::Ne, out, 0);
    let negative = lx.b.icmp_imm(IntCC::Slt, s, 0);
    let ca = lx.b.binary(BinaryOp::And, negative, lost);
    lx.set_gpr(insn.ra(), r);
    lx.b.set(CA, ca);
    lx.record(insn, r);
}

/// `srawi[.] rA,rS,SH`.
pub(crate) fn srawi(lx: &mut Lifter<'_>, insn: &Insn) {
    let sh = insn.rb();
    let s = lx.gpr(insn.rd());
    let r = lx.b.binary_imm(BinaryOp::Ashr, s, u64::from(sh));
    let out = lx.b.binary_imm(BinaryOp::And, s, (1u64 << sh) - 1);
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
    let r = lx.b.binary_imm(
        BinaryOp::And,
        rotated,
        u64::from(rotate_mask(insn.rc_field(), insn.me())),
    );
    lx.set_gpr(insn.ra(), r);
    lx.record(insn, r);
}

/// `rlwnm[.] rA,rS,rB,MB,ME`.
pub(crate) fn rlwnm(lx: &mut Lifter<'_>, insn: &Insn) {
    let s = lx.gpr(insn.rd());
    let b = lx.gpr(insn.rb());
    let n = lx.b.binary_imm(BinaryOp::And, b, 31);
    let rotated = lx.b.binary(BinaryOp::Rotl, s, n);
    let r = lx.b.binary_imm(
        BinaryOp::And,
        rotated,
        u64::from(rotate_mask(insn.rc_field(), insn.me())),
    );
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
