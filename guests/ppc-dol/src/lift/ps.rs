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

use rpt_ir::{BinaryOp, ConvOp, FBinaryOp, FTernaryOp, FloatCC, Rounding, Type, Value};

use super::fp::{Fma, SignOp};
use super::mem::Ea;
use super::{Flow, Handler, Lifter};
use crate::decode::{A_MASK, Insn, PRIMARY, Row, Suffix, Syntax, X_MASK, opcode};
use crate::estimate;
use crate::quantize;
use crate::state::{cr_field, fpr, gqr, ps1};

/// A paired-single A-form row (primary 4), with Rc.
const fn a(name: &'static str, xo: u32, syntax: Syntax, lift: Handler) -> Row {
    Row::new(name, A_MASK, opcode(4, xo), syntax, Suffix::Rc, Flow::Plain(lift))
}

/// A paired-single X-form row (primary 4).
const fn x(name: &'static str, xo: u32, syntax: Syntax, suffix: Suffix, lift: Handler) -> Row {
    Row::new(name, X_MASK, opcode(4, xo), syntax, suffix, Flow::Plain(lift))
}

/// An indexed quantised load or store (primary 4, a 6-bit extended opcode below W and I).
const fn x6(name: &'static str, xo: u32, lift: Handler) -> Row {
    Row::new(
        name,
        0xfc00_007e,
        opcode(4, xo),
        Syntax::PsqMemX,
        Suffix::None,
        Flow::Plain(lift),
    )
}

/// A quantised load or store with displacement (its own primary opcode).
const fn d(name: &'static str, op: u32, lift: Handler) -> Row {
    Row::new(
        name,
        PRIMARY,
        opcode(op, 0),
        Syntax::PsqMem,
        Suffix::None,
        Flow::Plain(lift),
    )
}

use Ea::{Disp, DispUpdate, Indexed, IndexedUpdate};
use Syntax as S;

/// The paired-single rows of the decoder table.
// One row a line, as a table reads: rustfmt would spread the longer rows over six lines.
#[rustfmt::skip]
pub static ROWS: &[Row] = &[
    a("ps_div", 18, S::FABC, |lx, i| lx.ps_arith(i, FBinaryOp::Fdiv)),
    a("ps_sub", 20, S::FABC, |lx, i| lx.ps_arith(i, FBinaryOp::Fsub)),
    a("ps_add", 21, S::FABC, |lx, i| lx.ps_arith(i, FBinaryOp::Fadd)),
    a("ps_sel", 23, S::FACB, ps_sel),
    a("ps_res", 24, S::FB, |lx, i| lx.ps_estimate(i, estimate::FRES_HELPER, false)),
    a("ps_mul", 25, S::FAC, |lx, i| lx.ps_arith(i, FBinaryOp::Fmul)),
    a("ps_rsqrte", 26, S::FB, |lx, i| lx.ps_estimate(i, estimate::FRSQRTE_HELPER, true)),
    a("ps_msub", 28, S::FACB, |lx, i| lx.ps_madd(i, Fma::Msub)),
    a("ps_madd", 29, S::FACB, |lx, i| lx.ps_madd(i, Fma::Madd)),
    a("ps_nmsub", 30, S::FACB, |lx, i| lx.ps_madd(i, Fma::Nmsub)),
    a("ps_nmadd", 31, S::FACB, |lx, i| lx.ps_madd(i, Fma::Nmadd)),
    a("ps_sum0", 10, S::FACB, |lx, i| ps_sum(lx, i, 0)),
    a("ps_sum1", 11, S::FACB, |lx, i| ps_sum(lx, i, 1)),
    a("ps_muls0", 12, S::FAC, |lx, i| muls(lx, i, 0)),
    a("ps_muls1", 13, S::FAC, |lx, i| muls(lx, i, 1)),
    a("ps_madds0", 14, S::FACB, |lx, i| madds(lx, i, 0)),
    a("ps_madds1", 15, S::FACB, |lx, i| madds(lx, i, 1)),
    // The ordered and unordered compares differ only in exception bits.
    x("ps_cmpu0", 0, S::FCmp, Suffix::None, |lx, i| ps_cmp(lx, i, 0)),
    x("ps_cmpo0", 32, S::FCmp, Suffix::None, |lx, i| ps_cmp(lx, i, 0)),
    x("ps_cmpu1", 64, S::FCmp, Suffix::None, |lx, i| ps_cmp(lx, i, 1)),
    x("ps_cmpo1", 96, S::FCmp, Suffix::None, |lx, i| ps_cmp(lx, i, 1)),
    x("ps_neg", 40, S::FB, Suffix::Rc, |lx, i| lx.ps_move(i, SignOp::Negate)),
    x("ps_mr", 72, S::FB, Suffix::Rc, |lx, i| lx.ps_move(i, SignOp::Keep)),
    x("ps_nabs", 136, S::FB, Suffix::Rc, |lx, i| lx.ps_move(i, SignOp::Set)),
    x("ps_abs", 264, S::FB, Suffix::Rc, |lx, i| lx.ps_move(i, SignOp::Clear)),
    // (frA's half, frB's half).
    x("ps_merge00", 528, S::FABC, Suffix::Rc, |lx, i| lx.ps_merge(i, 0, 0)),
    x("ps_merge01", 560, S::FABC, Suffix::Rc, |lx, i| lx.ps_merge(i, 0, 1)),
    x("ps_merge10", 592, S::FABC, Suffix::Rc, |lx, i| lx.ps_merge(i, 1, 0)),
    x("ps_merge11", 624, S::FABC, Suffix::Rc, |lx, i| lx.ps_merge(i, 1, 1)),
    x6("psq_lx", 6, |lx, i| psq(lx, i, Indexed, Transfer::Load)),
    x6("psq_stx", 7, |lx, i| psq(lx, i, Indexed, Transfer::Store)),
    x6("psq_lux", 38, |lx, i| psq(lx, i, IndexedUpdate, Transfer::Load)),
    x6("psq_stux", 39, |lx, i| psq(lx, i, IndexedUpdate, Transfer::Store)),
    d("psq_l", 56, |lx, i| psq(lx, i, Disp, Transfer::Load)),
    d("psq_lu", 57, |lx, i| psq(lx, i, DispUpdate, Transfer::Load)),
    d("psq_st", 60, |lx, i| psq(lx, i, Disp, Transfer::Store)),
    d("psq_stu", 61, |lx, i| psq(lx, i, DispUpdate, Transfer::Store)),
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
            touches: Vec::new(),
        },
        HelperDecl {
            name: quantize::STORE_HELPER.to_string(),
            params: vec![Type::I32, Type::I32, Type::I64, Type::I32],
            result: None,
            effects: Effects {
                writes_memory: true,
                ..Effects::PURE
            },
            touches: Vec::new(),
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

    /// One half of `a * c ± b` (fused, frC forced to 25 bits), rounded to single, negated as
    /// `form` says.
    fn ps_fma(&mut self, a: Value, c: Value, b: Value, form: Fma) -> Value {
        let c_in = self.force_25bit(c);
        let addend = self.fma_addend(form, b);
        let r = self.b.fternary(FTernaryOp::Fma, Rounding::Dynamic, a, c_in, addend);
        let r = self.round_to_single(r);
        let r = self.fix_nan(r, &[a, b, c], true);
        self.fma_result(form, r)
    }

    /// Both halves computed by `half_result(lx, h)` (h = 0, 1) into frD, then CR1 if Rc; nothing
    /// when a half has no result.
    fn ps_each_half(&mut self, insn: &Insn, mut half_result: impl FnMut(&mut Lifter<'_>, u32) -> Option<Value>) {
        let Some(v0) = half_result(self, 0) else { return };
        let Some(v1) = half_result(self, 1) else { return };
        self.set_pair(insn.rd(), v0, v1);
        self.record_fp(insn);
    }

    /// `ps_add`, `ps_sub`, `ps_mul`, `ps_div`: per half, frA op frB (frC for `ps_mul`).
    fn ps_arith(&mut self, insn: &Insn, op: FBinaryOp) {
        let second = if op == FBinaryOp::Fmul {
            insn.rc_field()
        } else {
            insn.rb()
        };
        self.ps_each_half(insn, |lx, h| {
            let a = lx.half(insn.ra(), h);
            let b = lx.half(second, h);
            Some(lx.ps_binary(op, a, b))
        });
    }

    /// `ps_madd`, `ps_msub`, `ps_nmadd`, `ps_nmsub`: per half, frA * frC ± frB.
    fn ps_madd(&mut self, insn: &Insn, form: Fma) {
        self.ps_each_half(insn, |lx, h| {
            let a = lx.half(insn.ra(), h);
            let c = lx.half(insn.rc_field(), h);
            let b = lx.half(insn.rb(), h);
            Some(lx.ps_fma(a, c, b, form))
        });
    }

    /// `ps_mr`, `ps_neg`, `ps_abs`, `ps_nabs`: frB's halves with their signs changed as `op` says.
    fn ps_move(&mut self, insn: &Insn, op: SignOp) {
        let b0 = self.half(insn.rb(), 0);
        let b1 = self.half(insn.rb(), 1);
        let v0 = self.sign_op(op, b0);
        let v1 = self.sign_op(op, b1);
        self.set_pair(insn.rd(), v0, v1);
        self.record_fp(insn);
    }

    /// `ps_mergeAB`: (frA's half `from_a`, frB's half `from_b`).
    fn ps_merge(&mut self, insn: &Insn, from_a: u32, from_b: u32) {
        let v0 = self.half(insn.ra(), from_a);
        let v1 = self.half(insn.rb(), from_b);
        self.set_pair(insn.rd(), v0, v1);
        self.record_fp(insn);
    }

    /// `ps_res`, `ps_rsqrte`: the helper's estimate per half, rounded to single when `round`.
    fn ps_estimate(&mut self, insn: &Insn, helper: &str, round: bool) {
        self.ps_each_half(insn, |lx, h| {
            let b = lx.half(insn.rb(), h);
            let bits = lx.b.convert(ConvOp::Bitcast, b, Type::I64);
            let r = lx.b.call_helper(helper, vec![bits], Some(Type::I64))?;
            let r = lx.b.convert(ConvOp::Bitcast, r, Type::F64);
            Some(if round { lx.round_to_single(r) } else { r })
        });
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

/// Which way a quantised transfer goes.
#[derive(Clone, Copy)]
enum Transfer {
    /// `psq_l*`.
    Load,
    /// `psq_st*`.
    Store,
}

/// `psq_l`, `psq_lu`, `psq_lx`, `psq_lux`, `psq_st`, `psq_stu`, `psq_stx`, `psq_stux`: W and I
/// from the instruction, the address formed as `form` says (a 12-bit displacement for the D forms).
fn psq(lx: &mut Lifter<'_>, insn: &Insn, form: Ea, transfer: Transfer) {
    let (disp, w, i) = if form.indexed() {
        (0, insn.word & 0x400 != 0, (insn.word >> 7) & 7)
    } else {
        let disp = (((insn.word & 0xfff) << 20) as i32 >> 20) as u32;
        (disp, insn.word & 0x8000 != 0, (insn.word >> 12) & 7)
    };
    let ea = lx.ea_with_disp(insn, form, disp);
    match transfer {
        Transfer::Load => lx.psq_load(insn, ea, w, i),
        Transfer::Store => lx.psq_store(insn, ea, w, i),
    }
    lx.update(insn, form, ea);
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

/// `ps_madds0`/`ps_madds1`: both halves of frA times one half of frC, plus frB.
fn madds(lx: &mut Lifter<'_>, insn: &Insn, which: u32) {
    let c = lx.half(insn.rc_field(), which);
    lx.ps_each_half(insn, |lx, h| {
        let a = lx.half(insn.ra(), h);
        let b = lx.half(insn.rb(), h);
        Some(lx.ps_fma(a, c, b, Fma::Madd))
    });
}

/// `ps_sum0[.]` (`to` 0): ps0 = frA.ps0 + frB.ps1, ps1 = frC.ps1 (rounded to single);
/// `ps_sum1[.]` (`to` 1): ps0 = frC.ps0 (rounded to single), ps1 = frA.ps0 + frB.ps1.
fn ps_sum(lx: &mut Lifter<'_>, insn: &Insn, to: u32) {
    let a0 = lx.half(insn.ra(), 0);
    let b1 = lx.half(insn.rb(), 1);
    let c = lx.half(insn.rc_field(), 1 - to);
    let sum = lx.ps_binary(FBinaryOp::Fadd, a0, b1);
    let other = lx.round_to_single(c);
    let other = lx.fix_nan(other, &[c], true);
    if to == 0 {
        lx.set_pair(insn.rd(), sum, other);
    } else {
        lx.set_pair(insn.rd(), other, sum);
    }
    lx.record_fp(insn);
}

/// `ps_sel[.]`: per half, frC when frA >= 0 (either zero counts), else frB (also for NaN).
fn ps_sel(lx: &mut Lifter<'_>, insn: &Insn) {
    lx.ps_each_half(insn, |lx, h| {
        let a = lx.half(insn.ra(), h);
        let c = lx.half(insn.rc_field(), h);
        let b = lx.half(insn.rb(), h);
        let zero = lx.b.fconst(Type::F64, 0);
        let ge = lx.b.fcmp(FloatCC::Le, zero, a);
        Some(lx.b.select(ge, c, b))
    });
}

/// `ps_cmpu0`/`ps_cmpo0` (`which` 0), `ps_cmpu1`/`ps_cmpo1` (1): compares one half of frA and
/// frB into a CR field.
fn ps_cmp(lx: &mut Lifter<'_>, insn: &Insn, which: u32) {
    let a = lx.half(insn.ra(), which);
    let b = lx.half(insn.rb(), which);
    let field = lx.fcompare_field(a, b);
    lx.b.set(cr_field(insn.crfd()), field);
}
