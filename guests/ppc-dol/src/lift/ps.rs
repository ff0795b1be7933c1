//! Paired singles (Gekko/Broadway): arithmetic on both halves, merges, sums, the `muls`/`madds`
//! forms that take one half of frC for both, compares, selects, moves, and the quantised loads
//! and stores. Rows and lift functions.
//!
//! Semantics follow Dolphin's hardware tests (qemu has no paired singles):
//! - Each half is computed as its scalar single-precision counterpart would be (FPSCR rounding,
//!   rounded to single, PowerPC NaN rules), with one Gekko quirk: a multiplication first rounds
//!   frC's mantissa to 25 bits (Dolphin's `Force25Bit`; a no-op for values that are singles).
//! - `ps_merge*` and `ps_mr`/`ps_neg`/`ps_abs`/`ps_nabs` move halves unchanged (bit operations).
//! - `ps_res`/`ps_rsqrte` give the 750's estimates per half (`ps_rsqrte` rounded to single).
//! - `psq_l`/`psq_st` quantise through the GQR named in the instruction (see `quantize.rs` and `runtime/ppc_helpers.c`);
//!   with W = 1 only ps0 moves and a load sets ps1 to 1.0.

use rpt_ir::{BinaryOp, ConvOp, FBinaryOp, FTernaryOp, FUnaryOp, FloatCC, Rounding, Type, Value};

use super::{Flow, Lifter};
use crate::decode::{Insn, Row, Suffix, Syntax};
use crate::estimate;
use crate::quantize;
use crate::state::{cr_field, fpr, gqr, ps1};

const A_MASK: u32 = 0xfc00_003e;
const X_MASK: u32 = 0xfc00_07fe;
const X6_MASK: u32 = 0xfc00_007e;

const fn a(name: &'static str, xo: u32, syntax: Syntax, lift: super::Handler) -> Row {
    Row {
        name,
        mask: A_MASK,
        bits: (4 << 26) | (xo << 1),
        syntax,
        suffix: Suffix::Rc,
        flow: Flow::Plain(lift),
    }
}
const fn x(name: &'static str, xo: u32, syntax: Syntax, suffix: Suffix, lift: super::Handler) -> Row {
    Row {
        name,
        mask: X_MASK,
        bits: (4 << 26) | (xo << 1),
        syntax,
        suffix,
        flow: Flow::Plain(lift),
    }
}
const fn x6(name: &'static str, xo: u32, lift: super::Handler) -> Row {
    Row {
        name,
        mask: X6_MASK,
        bits: (4 << 26) | (xo << 1),
        syntax: Syntax::PsqMemX,
        suffix: Suffix::None,
        flow: Flow::Plain(lift),
    }
}
const fn d(name: &'static str, op: u32, lift: super::Handler) -> Row {
    Row {
        name,
        mask: 0xfc00_0000,
        bits: op << 26,
        syntax: Syntax::PsqMem,
        suffix: Suffix::None,
        flow: Flow::Plain(lift),
    }
}

use Syntax as S;

/// The paired-single rows of the decoder table.
pub static ROWS: &[Row] = &[
    a("ps_div", 18, S::FABC, ps_div),
    a("ps_sub", 20, S::FABC, ps_sub),
    a("ps_add", 21, S::FABC, ps_add),
    a("ps_sel", 23, S::FACB, ps_sel),
    a("ps_res", 24, S::FB, ps_res),
    a("ps_mul", 25, S::FAC, ps_mul),
    a("ps_rsqrte", 26, S::FB, ps_rsqrte),
    a("ps_msub", 28, S::FACB, ps_msub),
    a("ps_madd", 29, S::FACB, ps_madd),
    a("ps_nmsub", 30, S::FACB, ps_nmsub),
    a("ps_nmadd", 31, S::FACB, ps_nmadd),
    a("ps_sum0", 10, S::FACB, ps_sum0),
    a("ps_sum1", 11, S::FACB, ps_sum1),
    a("ps_muls0", 12, S::FAC, ps_muls0),
    a("ps_muls1", 13, S::FAC, ps_muls1),
    a("ps_madds0", 14, S::FACB, ps_madds0),
    a("ps_madds1", 15, S::FACB, ps_madds1),
    x("ps_cmpu0", 0, S::FCmp, Suffix::None, ps_cmp0),
    x("ps_cmpo0", 32, S::FCmp, Suffix::None, ps_cmp0),
    x("ps_cmpu1", 64, S::FCmp, Suffix::None, ps_cmp1),
    x("ps_cmpo1", 96, S::FCmp, Suffix::None, ps_cmp1),
    x("ps_neg", 40, S::FB, Suffix::Rc, ps_neg),
    x("ps_mr", 72, S::FB, Suffix::Rc, ps_mr),
    x("ps_nabs", 136, S::FB, Suffix::Rc, ps_nabs),
    x("ps_abs", 264, S::FB, Suffix::Rc, ps_abs),
    x("ps_merge00", 528, S::FABC, Suffix::Rc, ps_merge00),
    x("ps_merge01", 560, S::FABC, Suffix::Rc, ps_merge01),
    x("ps_merge10", 592, S::FABC, Suffix::Rc, ps_merge10),
    x("ps_merge11", 624, S::FABC, Suffix::Rc, ps_merge11),
    x6("psq_lx", 6, psq_lx),
    x6("psq_stx", 7, psq_stx),
    x6("psq_lux", 38, psq_lux),
    x6("psq_stux", 39, psq_stux),
    d("psq_l", 56, psq_l),
    d("psq_lu", 57, psq_lu),
    d("psq_st", 60, psq_st),
    d("psq_stu", 61, psq_stu),
];

/// The helpers paired-single code calls.
pub fn helpers() -> Vec<rpt_ir::HelperDecl> {
    use rpt_ir::{Effects, HelperDecl};
    vec![
        HelperDecl {
            name: quantize::LOAD_HELPER.to_string(),
            params: vec![Type::I32, Type::I32, Type::I32],
            result: Some(Type::I64),
            effects: Effects {
                reads_memory: true,
                ..Effects::PURE
            },
        },
        HelperDecl {
            name: quantize::STORE_HELPER.to_string(),
            params: vec![Type::I32, Type::I32, Type::I64, Type::I32],
            result: None,
            effects: Effects {
                writes_memory: true,
                ..Effects::PURE
            },
        },
    ]
}

impl Lifter<'_> {
    fn half(&mut self, n: u32, which: u32) -> Value {
        self.b.get(if which == 0 { fpr(n) } else { ps1(n) })
    }

    fn set_pair(&mut self, n: u32, v0: Value, v1: Value) {
        self.b.set(fpr(n), v0);
        self.b.set(ps1(n), v1);
    }

    /// Gekko's multiplier input for single-precision products: frC's mantissa rounded (half up)
    /// to 25 bits (a no-op for values that are singles).
    pub(crate) fn force_25bit(&mut self, v: Value) -> Value {
        let bits = self.b.convert(ConvOp::Bitcast, v, Type::I64);
        let kept = self.b.binary_imm(BinaryOp::And, bits, 0xffff_ffff_f800_0000);
        let round = self.b.binary_imm(BinaryOp::And, bits, 0x0800_0000);
        let r = self.b.binary(BinaryOp::Add, kept, round);
        self.b.convert(ConvOp::Bitcast, r, Type::F64)
    }

    /// One half of a two-operand operation, rounded to single with PowerPC NaNs.
    fn ps_binary(&mut self, op: FBinaryOp, a: Value, b: Value) -> Value {
        let b_in = if op == FBinaryOp::Fmul { self.force_25bit(b) } else { b };
        let r = self.b.fbinary(op, Rounding::Dynamic, a, b_in);
        let r = self.round_to_single(r);
        self.fix_nan(r, &[a, b], true)
    }

    /// One half of `a * c ± b` (fused, frC forced to 25 bits), rounded to single, optionally negated.
    fn ps_fma(&mut self, a: Value, c: Value, b: Value, subtract: bool, negate: bool) -> Value {
        let c_in = self.force_25bit(c);
        let addend = if subtract {
            self.b.funary(FUnaryOp::Fneg, Rounding::Nearest, b)
        } else {
            b
        };
        let r = self.b.fternary(FTernaryOp::Fma, Rounding::Dynamic, a, c_in, addend);
        let r = self.round_to_single(r);
        let r = self.fix_nan(r, &[a, b, c], true);
        if negate {
            let nan = self.is_nan(r);
            let neg = self.b.funary(FUnaryOp::Fneg, Rounding::Nearest, r);
            self.b.select(nan, r, neg)
        } else {
            r
        }
    }

    fn ps_arith(&mut self, insn: &Insn, op: FBinaryOp) {
        let second = if op == FBinaryOp::Fmul {
            insn.rc_field()
        } else {
            insn.rb()
        };
        let mut out = [None, None];
        for (h, slot) in out.iter_mut().enumerate() {
            let a = self.half(insn.ra(), h as u32);
            let b = self.half(second, h as u32);
            *slot = Some(self.ps_binary(op, a, b));
        }
        if let [Some(v0), Some(v1)] = out {
            self.set_pair(insn.rd(), v0, v1);
        }
        self.record_fp(insn);
    }

    fn ps_madd_family(&mut self, insn: &Insn, subtract: bool, negate: bool) {
        let mut out = [None, None];
        for (h, slot) in out.iter_mut().enumerate() {
            let a = self.half(insn.ra(), h as u32);
            let c = self.half(insn.rc_field(), h as u32);
            let b = self.half(insn.rb(), h as u32);
            *slot = Some(self.ps_fma(a, c, b, subtract, negate));
        }
        if let [Some(v0), Some(v1)] = out {
            self.set_pair(insn.rd(), v0, v1);
        }
        self.record_fp(insn);
    }

    fn ps_move(&mut self, insn: &Insn, f: fn(&mut Lifter<'_>, Value) -> Value) {
        let b0 = self.half(insn.rb(), 0);
        let b1 = self.half(insn.rb(), 1);
        let v0 = f(self, b0);
        let v1 = f(self, b1);
        self.set_pair(insn.rd(), v0, v1);
        self.record_fp(insn);
    }

    fn ps_merge(&mut self, insn: &Insn, from_a: u32, from_b: u32) {
        let v0 = self.half(insn.ra(), from_a);
        let v1 = self.half(insn.rb(), from_b);
        self.set_pair(insn.rd(), v0, v1);
        self.record_fp(insn);
    }

    fn ps_estimate(&mut self, insn: &Insn, helper: &str, round: bool) {
        let mut out = [None, None];
        for (h, slot) in out.iter_mut().enumerate() {
            let b = self.half(insn.rb(), h as u32);
            let bits = self.b.convert(ConvOp::Bitcast, b, Type::I64);
            let Some(r) = self.b.call_helper(helper, vec![bits], Some(Type::I64)) else {
                return;
            };
            let r = self.b.convert(ConvOp::Bitcast, r, Type::F64);
            *slot = Some(if round { self.round_to_single(r) } else { r });
        }
        if let [Some(v0), Some(v1)] = out {
            self.set_pair(insn.rd(), v0, v1);
        }
        self.record_fp(insn);
    }

    /// `psq_l` and its forms: `ea` computed, `w` and `i` from the instruction.
    fn psq_load(&mut self, insn: &Insn, ea: Value, w: bool, i: u32) {
        let g = self.b.get(gqr(i));
        let zero = self.c32(0);
        let Some(b0) = self
            .b
            .call_helper(quantize::LOAD_HELPER, vec![ea, g, zero], Some(Type::I64))
        else {
            return;
        };
        let v0 = self.b.convert(ConvOp::Bitcast, b0, Type::F64);
        let v1 = if w {
            self.b.fconst(Type::F64, u128::from(1.0f64.to_bits()))
        } else {
            let one = self.c32(1);
            let Some(b1) = self
                .b
                .call_helper(quantize::LOAD_HELPER, vec![ea, g, one], Some(Type::I64))
            else {
                return;
            };
            self.b.convert(ConvOp::Bitcast, b1, Type::F64)
        };
        self.set_pair(insn.rd(), v0, v1);
    }

    fn psq_store(&mut self, insn: &Insn, ea: Value, w: bool, i: u32) {
        let g = self.b.get(gqr(i));
        let slots = if w { 1 } else { 2 };
        for h in 0..slots {
            let v = self.half(insn.rd(), h);
            let bits = self.b.convert(ConvOp::Bitcast, v, Type::I64);
            let slot = self.c32(h);
            self.b
                .call_helper(quantize::STORE_HELPER, vec![ea, g, bits, slot], None);
        }
    }
}

/// The displacement-form fields of `psq_l`/`psq_st`: (d, W, I).
fn d_fields(insn: &Insn) -> (u32, bool, u32) {
    let disp = (((insn.word & 0xfff) << 20) as i32 >> 20) as u32;
    (disp, insn.word & 0x8000 != 0, (insn.word >> 12) & 7)
}

/// The indexed-form fields of `psq_lx`/`psq_stx`: (W, I).
fn x_fields(insn: &Insn) -> (bool, u32) {
    (insn.word & 0x400 != 0, (insn.word >> 7) & 7)
}

fn d_ea(lx: &mut Lifter<'_>, insn: &Insn, update: bool) -> Value {
    let (disp, _, _) = d_fields(insn);
    let base = if update {
        lx.gpr(insn.ra())
    } else {
        lx.gpr_or_zero(insn.ra())
    };
    lx.b.binary_imm(BinaryOp::Add, base, u64::from(disp))
}

fn x_ea(lx: &mut Lifter<'_>, insn: &Insn, update: bool) -> Value {
    let base = if update {
        lx.gpr(insn.ra())
    } else {
        lx.gpr_or_zero(insn.ra())
    };
    let index = lx.gpr(insn.rb());
    lx.b.binary(BinaryOp::Add, base, index)
}

/// `ps_add[.]`.
pub(crate) fn ps_add(lx: &mut Lifter<'_>, insn: &Insn) {
    lx.ps_arith(insn, FBinaryOp::Fadd);
}
/// `ps_sub[.]`.
pub(crate) fn ps_sub(lx: &mut Lifter<'_>, insn: &Insn) {
    lx.ps_arith(insn, FBinaryOp::Fsub);
}
/// `ps_mul[.]`.
pub(crate) fn ps_mul(lx: &mut Lifter<'_>, insn: &Insn) {
    lx.ps_arith(insn, FBinaryOp::Fmul);
}
/// `ps_div[.]`.
pub(crate) fn ps_div(lx: &mut Lifter<'_>, insn: &Insn) {
    lx.ps_arith(insn, FBinaryOp::Fdiv);
}
/// `ps_madd[.]`.
pub(crate) fn ps_madd(lx: &mut Lifter<'_>, insn: &Insn) {
    lx.ps_madd_family(insn, false, false);
}
/// `ps_msub[.]`.
pub(crate) fn ps_msub(lx: &mut Lifter<'_>, insn: &Insn) {
    lx.ps_madd_family(insn, true, false);
}
/// `ps_nmadd[.]`.
pub(crate) fn ps_nmadd(lx: &mut Lifter<'_>, insn: &Insn) {
    lx.ps_madd_family(insn, false, true);
}
/// `ps_nmsub[.]`.
pub(crate) fn ps_nmsub(lx: &mut Lifter<'_>, insn: &Insn) {
    lx.ps_madd_family(insn, true, true);
}

/// `ps_muls0`/`ps_muls1`: both halves of frA times one half of frC.
fn muls(lx: &mut Lifter<'_>, insn: &Insn, which: u32) {
    let c = lx.half(insn.rc_field(), which);
    let a0 = lx.half(insn.ra(), 0);
    let a1 = lx.half(insn.ra(), 1);
    let v0 = lx.ps_binary(FBinaryOp::Fmul, a0, c);
    let v1 = lx.ps_binary(FBinaryOp::Fmul, a1, c);
    lx.set_pair(insn.rd(), v0, v1);
    lx.record_fp(insn);
}
/// `ps_muls0[.]`.
pub(crate) fn ps_muls0(lx: &mut Lifter<'_>, insn: &Insn) {
    muls(lx, insn, 0);
}
/// `ps_muls1[.]`.
pub(crate) fn ps_muls1(lx: &mut Lifter<'_>, insn: &Insn) {
    muls(lx, insn, 1);
}

/// `ps_madds0`/`ps_madds1`: both halves of frA times one half of frC, plus frB.
fn madds(lx: &mut Lifter<'_>, insn: &Insn, which: u32) {
    let c = lx.half(insn.rc_field(), which);
    let mut out = [None, None];
    for (h, slot) in out.iter_mut().enumerate() {
        let a = lx.half(insn.ra(), h as u32);
        let b = lx.half(insn.rb(), h as u32);
        *slot = Some(lx.ps_fma(a, c, b, false, false));
    }
    if let [Some(v0), Some(v1)] = out {
        lx.set_pair(insn.rd(), v0, v1);
    }
    lx.record_fp(insn);
}
/// `ps_madds0[.]`.
pub(crate) fn ps_madds0(lx: &mut Lifter<'_>, insn: &Insn) {
    madds(lx, insn, 0);
}
/// `ps_madds1[.]`.
pub(crate) fn ps_madds1(lx: &mut Lifter<'_>, insn: &Insn) {
    madds(lx, insn, 1);
}

/// `ps_sum0[.]`: ps0 = frA.ps0 + frB.ps1, ps1 = frC.ps1 (rounded to single).
pub(crate) fn ps_sum0(lx: &mut Lifter<'_>, insn: &Insn) {
    let a0 = lx.half(insn.ra(), 0);
    let b1 = lx.half(insn.rb(), 1);
    let c1 = lx.half(insn.rc_field(), 1);
    let sum = lx.ps_binary(FBinaryOp::Fadd, a0, b1);
    let other = lx.round_to_single(c1);
    let other = lx.fix_nan(other, &[c1], true);
    lx.set_pair(insn.rd(), sum, other);
    lx.record_fp(insn);
}

/// `ps_sum1[.]`: ps0 = frC.ps0 (rounded to single), ps1 = frA.ps0 + frB.ps1.
pub(crate) fn ps_sum1(lx: &mut Lifter<'_>, insn: &Insn) {
    let a0 = lx.half(insn.ra(), 0);
    let b1 = lx.half(insn.rb(), 1);
    let c0 = lx.half(insn.rc_field(), 0);
    let sum = lx.ps_binary(FBinaryOp::Fadd, a0, b1);
    let other = lx.round_to_single(c0);
    let other = lx.fix_nan(other, &[c0], true);
    lx.set_pair(insn.rd(), other, sum);
    lx.record_fp(insn);
}

/// `ps_sel[.]`: per half, frC when frA >= 0 (either zero counts), else frB (also for NaN).
pub(crate) fn ps_sel(lx: &mut Lifter<'_>, insn: &Insn) {
    let mut out = [None, None];
    for (h, slot) in out.iter_mut().enumerate() {
        let a = lx.half(insn.ra(), h as u32);
        let c = lx.half(insn.rc_field(), h as u32);
        let b = lx.half(insn.rb(), h as u32);
        let zero = lx.b.fconst(Type::F64, 0);
        let ge = lx.b.fcmp(FloatCC::Le, zero, a);
        *slot = Some(lx.b.select(ge, c, b));
    }
    if let [Some(v0), Some(v1)] = out {
        lx.set_pair(insn.rd(), v0, v1);
    }
    lx.record_fp(insn);
}

/// `ps_res[.]`: the 750's reciprocal estimate per half.
pub(crate) fn ps_res(lx: &mut Lifter<'_>, insn: &Insn) {
    lx.ps_estimate(insn, estimate::FRES_HELPER, false);
}
/// `ps_rsqrte[.]`: the reciprocal square root estimate per half, rounded to single.
pub(crate) fn ps_rsqrte(lx: &mut Lifter<'_>, insn: &Insn) {
    lx.ps_estimate(insn, estimate::FRSQRTE_HELPER, true);
}

fn ps_cmp(lx: &mut Lifter<'_>, insn: &Insn, which: u32) {
    let a = lx.half(insn.ra(), which);
    let b = lx.half(insn.rb(), which);
    let field = lx.fcompare_field(a, b);
    lx.b.set(cr_field(insn.crfd()), field);
}
/// `ps_cmpu0`/`ps_cmpo0`: compares the ps0 halves into a CR field.
pub(crate) fn ps_cmp0(lx: &mut Lifter<'_>, insn: &Insn) {
    ps_cmp(lx, insn, 0);
}
/// `ps_cmpu1`/`ps_cmpo1`: compares the ps1 halves.
pub(crate) fn ps_cmp1(lx: &mut Lifter<'_>, insn: &Insn) {
    ps_cmp(lx, insn, 1);
}

/// `ps_mr[.]`.
pub(crate) fn ps_mr(lx: &mut Lifter<'_>, insn: &Insn) {
    lx.ps_move(insn, |_, v| v);
}
/// `ps_neg[.]`.
pub(crate) fn ps_neg(lx: &mut Lifter<'_>, insn: &Insn) {
    lx.ps_move(insn, |l, v| l.b.funary(FUnaryOp::Fneg, Rounding::Nearest, v));
}
/// `ps_abs[.]`.
pub(crate) fn ps_abs(lx: &mut Lifter<'_>, insn: &Insn) {
    lx.ps_move(insn, |l, v| l.b.funary(FUnaryOp::Fabs, Rounding::Nearest, v));
}
/// `ps_nabs[.]`.
pub(crate) fn ps_nabs(lx: &mut Lifter<'_>, insn: &Insn) {
    lx.ps_move(insn, |l, v| {
        let a = l.b.funary(FUnaryOp::Fabs, Rounding::Nearest, v);
        l.b.funary(FUnaryOp::Fneg, Rounding::Nearest, a)
    });
}

/// `ps_merge00[.]`: (frA.ps0, frB.ps0).
pub(crate) fn ps_merge00(lx: &mut Lifter<'_>, insn: &Insn) {
    lx.ps_merge(insn, 0, 0);
}
/// `ps_merge01[.]`: (frA.ps0, frB.ps1).
pub(crate) fn ps_merge01(lx: &mut Lifter<'_>, insn: &Insn) {
    lx.ps_merge(insn, 0, 1);
}
/// `ps_merge10[.]`: (frA.ps1, frB.ps0).
pub(crate) fn ps_merge10(lx: &mut Lifter<'_>, insn: &Insn) {
    lx.ps_merge(insn, 1, 0);
}
/// `ps_merge11[.]`: (frA.ps1, frB.ps1).
pub(crate) fn ps_merge11(lx: &mut Lifter<'_>, insn: &Insn) {
    lx.ps_merge(insn, 1, 1);
}

/// `psq_l frD,d(rA),W,I`.
pub(crate) fn psq_l(lx: &mut Lifter<'_>, insn: &Insn) {
    let (_, w, i) = d_fields(insn);
    let ea = d_ea(lx, insn, false);
    lx.psq_load(insn, ea, w, i);
}
/// `psq_lu frD,d(rA),W,I`.
pub(crate) fn psq_lu(lx: &mut Lifter<'_>, insn: &Insn) {
    let (_, w, i) = d_fields(insn);
    let ea = d_ea(lx, insn, true);
    lx.psq_load(insn, ea, w, i);
    lx.set_gpr(insn.ra(), ea);
}
/// `psq_st frS,d(rA),W,I`.
pub(crate) fn psq_st(lx: &mut Lifter<'_>, insn: &Insn) {
    let (_, w, i) = d_fields(insn);
    let ea = d_ea(lx, insn, false);
    lx.psq_store(insn, ea, w, i);
}
/// `psq_stu frS,d(rA),W,I`.
pub(crate) fn psq_stu(lx: &mut Lifter<'_>, insn: &Insn) {
    let (_, w, i) = d_fields(insn);
    let ea = d_ea(lx, insn, true);
    lx.psq_store(insn, ea, w, i);
    lx.set_gpr(insn.ra(), ea);
}
/// `psq_lx frD,rA,rB,W,I`.
pub(crate) fn psq_lx(lx: &mut Lifter<'_>, insn: &Insn) {
    let (w, i) = x_fields(insn);
    let ea = x_ea(lx, insn, false);
    lx.psq_load(insn, ea, w, i);
}
/// `psq_lux frD,rA,rB,W,I`.
pub(crate) fn psq_lux(lx: &mut Lifter<'_>, insn: &Insn) {
    let (w, i) = x_fields(insn);
    let ea = x_ea(lx, insn, true);
    lx.psq_load(insn, ea, w, i);
    lx.set_gpr(insn.ra(), ea);
}
/// `psq_stx frS,rA,rB,W,I`.
pub(crate) fn psq_stx(lx: &mut Lifter<'_>, insn: &Insn) {
    let (w, i) = x_fields(insn);
    let ea = x_ea(lx, insn, false);
    lx.psq_store(insn, ea, w, i);
}
/// `psq_stux frS,rA,rB,W,I`.
pub(crate) fn psq_stux(lx: &mut Lifter<'_>, insn: &Insn) {
    let (w, i) = x_fields(insn);
    let ea = x_ea(lx, insn, true);
    lx.psq_store(insn, ea, w, i);
    lx.set_gpr(insn.ra(), ea);
}
