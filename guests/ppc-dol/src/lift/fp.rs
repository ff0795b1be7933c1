//! Floating point: double and single arithmetic, fused multiply-adds, conversions, compares,
//! moves and the FPSCR instructions.
//!
//! Model (written down because the 750 manual leaves choices, and passes rely on them):
//! - Every rounded operation uses the FPSCR's RN field (IR `.rdyn`; the C part's
//!   `rpt_guest_rounding` reads it). Arithmetic and multiply-adds test RN inline first: when it
//!   is round-to-nearest (the host's own mode) the operation is a plain host operation, and only
//!   if that gives a NaN, or RN is another mode, does a cold path redo it with `.rdyn` and the NaN
//!   rules below ([`Lifter::rounded_result`]). Both paths give the same bits: the fast one is the
//!   slow one specialised to RN = nearest and a non-NaN result.
//! - Single-precision instructions compute in double precision and round the result to single
//!   once more; for single-precision inputs (what `lfs` and single instructions produce) that is
//!   the correctly rounded single result, because a double holds every exact sum, difference,
//!   product and quotient of two singles to more than twice the precision. The result fills both
//!   paired-single halves, as Gekko does.
//! - NaNs follow the PowerPC rules, not the host's: a NaN operand is returned quieted, frA before
//!   frB before frC; an invalid operation without NaN operands gives the default NaN
//!   0x7ff8000000000000; single results keep only a single's payload. `fneg`, `fabs`, `fnabs`
//!   and `fmr` are bit operations and change NaNs like any other value.
//! - The FPSCR's exception and status bits (FX, FEX, VX, OX, UX, ZX, XX, the VX* causes, FR, FI,
//!   FPRF) are not computed: they keep what `mtfsf`/`mtfsfi`/`mtfsb*` put there. Games set the
//!   rounding mode and the enables; nothing a game does depends on the sticky bits, and keeping
//!   them would cost every float operation a read-modify-write of the FPSCR. The record forms'
//!   CR1 is the FPSCR's top nibble, consistent with that.
//! - Single-precision multiplies (`fmuls`, `fmadds` and the other single multiply-adds) first
//!   round frC's mantissa to 25 bits, as the 750 does (Dolphin's hardware tests). For frC values
//!   that are singles (all that `lfs` and single instructions produce) this changes nothing; qemu
//!   omits it, so the oracle test gives such cases single-precision inputs only.
//! - `fres` and `frsqrte` return the 750's estimates (see `estimate.rs` and `runtime/ppc_helpers.c`).
//! - `fnmadd`/`fnmsub` round, then negate (the architecture's definition: "the same result as
//!   `fmadd` and then negating"). qemu negates before rounding, which differs under the directed
//!   roundings toward ±infinity; the oracle test keeps those cases to the symmetric modes.
//! - The FPSCR's summary bits are recomputed after every FPSCR instruction: VX is the OR of the
//!   invalid-operation causes, FEX says an exception is set with its enable; bit 20 stays 0.

use rpt_ir::{
    BinaryOp, BlockCall, ConvOp, FBinaryOp, FConvOp, FTernaryOp, FUnaryOp, FloatCC, IntCC, Rounding, Terminator, Type,
    Value,
};

use super::Lifter;
use crate::decode::Insn;
use crate::state::{FPSCR, cr_field, fpr, ps1};

/// The default NaN of PowerPC.
pub const DEFAULT_NAN: u64 = 0x7ff8_0000_0000_0000;
const QUIET_BIT: u64 = 0x0008_0000_0000_0000;
/// The low 29 bits of a double's fraction, which a single does not have.
const SINGLE_DROPPED: u64 = (1 << 29) - 1;

impl Lifter<'_> {
    fn f64_const(&mut self, v: f64) -> Value {
        self.b.fconst(Type::F64, u128::from(v.to_bits()))
    }

    /// Whether a float is a NaN.
    pub(crate) fn is_nan(&mut self, v: Value) -> Value {
        self.b.fcmp(FloatCC::Uno, v, v)
    }

    fn bits_of(&mut self, v: Value) -> Value {
        self.b.convert(ConvOp::Bitcast, v, Type::I64)
    }

    fn double_from_bits(&mut self, v: Value) -> Value {
        self.b.convert(ConvOp::Bitcast, v, Type::F64)
    }

    /// The NaN an operation with these operands returns, in priority order, if one of them is a
    /// NaN (quieted); the default NaN otherwise. With `single`, only a single's payload is kept.
    fn pick_nan(&mut self, operands: &[Value], single: bool) -> Value {
        let mut pick = self.b.iconst(Type::I64, DEFAULT_NAN);
        for &op in operands.iter().rev() {
            let nan = self.is_nan(op);
            let bits = self.bits_of(op);
            let mut quiet = self.b.binary_imm(BinaryOp::Or, bits, QUIET_BIT);
            if single {
                quiet = self.b.binary_imm(BinaryOp::And, quiet, !SINGLE_DROPPED);
            }
            pick = self.b.select(nan, quiet, pick);
        }
        self.double_from_bits(pick)
    }

    /// Replaces a NaN result by the NaN PowerPC would give.
    pub(crate) fn fix_nan(&mut self, r: Value, operands: &[Value], single: bool) -> Value {
        let nan = self.is_nan(r);
        let pick = self.pick_nan(operands, single);
        self.b.select(nan, pick, r)
    }

    /// Rounds a double to single precision (FPSCR rounding) and widens it back, exactly.
    pub(crate) fn round_to_single(&mut self, v: Value) -> Value {
        self.round_to_single_by(v, Rounding::Dynamic)
    }

    /// Rounds a double to single precision by `rounding` and widens it back, exactly.
    fn round_to_single_by(&mut self, v: Value, rounding: Rounding) -> Value {
        let s = self.b.fconvert(FConvOp::Fconvert, rounding, v, Type::F32);
        self.b.fconvert(FConvOp::Fconvert, Rounding::Nearest, s, Type::F64)
    }

    /// The result `compute(rounding)` of an operation on `operands` under the FPSCR's rounding
    /// mode, with PowerPC's NaN: computed with `Nearest` on a fast path when FPSCR[RN] is
    /// round-to-nearest, kept unless it is a NaN; otherwise computed again on a cold path with the
    /// run-time mode and fixed by [`Lifter::fix_nan`]. The builder continues in the block where
    /// both paths join.
    fn rounded_result(
        &mut self,
        operands: &[Value],
        single: bool,
        compute: impl Fn(&mut Self, Rounding) -> Value,
    ) -> Value {
        let fpscr = self.b.get(FPSCR);
        let rn = self.b.binary_imm(BinaryOp::And, fpscr, 3);
        let nearest = self.b.icmp_imm(IntCC::Eq, rn, 0);
        let (fast, slow, join) = (self.b.create_block(), self.b.create_block(), self.b.create_block());
        let result = self.b.add_block_param(join, Type::F64);
        self.b.branch(nearest, fast, slow);
        self.b.switch_to_block(fast);
        let quick = compute(self, Rounding::Nearest);
        let nan = self.is_nan(quick);
        self.b.terminate(Terminator::Branch {
            cond: nan,
            then_dest: BlockCall::plain(slow),
            else_dest: BlockCall {
                block: join,
                args: vec![quick],
            },
        });
        self.b.switch_to_block(slow);
        let full = compute(self, Rounding::Dynamic);
        let fixed = self.fix_nan(full, operands, single);
        self.b.jump(join, vec![fixed]);
        self.b.switch_to_block(join);
        result
    }

    /// A single's bit pattern as a double, by the PowerPC load rules: exact, and a signalling
    /// NaN stays signalling (a host conversion would quiet it).
    pub(crate) fn single_bits_to_double(&mut self, w: Value) -> Value {
        let f = self.b.convert(ConvOp::Bitcast, w, Type::F32);
        let widened = self.b.fconvert(FConvOp::Fconvert, Rounding::Nearest, f, Type::F64);
        let nan = self.b.fcmp(FloatCC::Uno, f, f);
        let bits = self.b.f32_nan_to_f64_bits(w, false);
        let nan_value = self.double_from_bits(bits);
        self.b.select(nan, nan_value, widened)
    }

    /// A double's bit pattern stored as a single, by the PowerPC store rules: the bits are moved,
    /// not rounded; values in the single denormal range are denormalised; smaller ones give a
    /// signed zero.
    pub(crate) fn double_bits_to_single_bits(&mut self, bits: Value) -> Value {
        let exp = self.b.binary_imm(BinaryOp::Lshr, bits, 52);
        let exp = self.b.binary_imm(BinaryOp::And, exp, 0x7ff);
        // exp > 896: sign and top exponent bit, then 30 bits from bit 29 up.
        let top = self.b.binary_imm(BinaryOp::Lshr, bits, 62);
        let top = self.b.binary_imm(BinaryOp::Shl, top, 30);
        let mid = self.b.binary_imm(BinaryOp::Lshr, bits, 29);
        let mid = self.b.binary_imm(BinaryOp::And, mid, 0x3fff_ffff);
        let plain = self.b.binary(BinaryOp::Or, top, mid);
        // exp <= 896: the sign, plus a denormal fraction when exp >= 874.
        let sign = self.b.binary_imm(BinaryOp::Lshr, bits, 63);
        let sign = self.b.binary_imm(BinaryOp::Shl, sign, 31);
        let frac = self.b.binary_imm(BinaryOp::And, bits, (1 << 52) - 1);
        let frac = self.b.binary_imm(BinaryOp::Or, frac, 1 << 52);
        let limit = self.b.iconst(Type::I64, 926);
        let amount = self.b.binary(BinaryOp::Sub, limit, exp);
        let amount = self.b.binary_imm(BinaryOp::And, amount, 63);
        let denormal = self.b.binary(BinaryOp::Lshr, frac, amount);
        let in_range = self.b.icmp_imm(IntCC::Uge, exp, 874);
        let zero = self.b.iconst(Type::I64, 0);
        let denormal = self.b.select(in_range, denormal, zero);
        let small = self.b.binary(BinaryOp::Or, sign, denormal);
        let big = self.b.icmp_imm(IntCC::Ugt, exp, 896);
        let r = self.b.select(big, plain, small);
        self.b.convert(ConvOp::Trunc, r, Type::I32)
    }

    pub(crate) fn fpr(&mut self, n: u32) -> Value {
        self.b.get(fpr(n))
    }

    /// Writes a double result (ps0 only).
    pub(crate) fn set_fpr(&mut self, n: u32, v: Value) {
        self.b.set(fpr(n), v);
    }

    /// Writes a single result into both paired-single halves.
    pub(crate) fn set_fpr_single(&mut self, n: u32, v: Value) {
        self.b.set(fpr(n), v);
        self.b.set(ps1(n), v);
    }

    /// CR1 from the FPSCR's top nibble (FX FEX VX OX) when Rc is set.
    pub(crate) fn record_fp(&mut self, insn: &Insn) {
        if insn.bit0() {
            let fpscr = self.b.get(FPSCR);
            let top = self.b.binary_imm(BinaryOp::Lshr, fpscr, 28);
            let field = self.b.resize(top, Type::I8);
            self.b.set(cr_field(1), field);
        }
    }

    /// Writes a result of `precision`: a single one into both paired-single halves, a double one
    /// into ps0 only.
    fn set_fpr_as(&mut self, n: u32, v: Value, precision: Precision) {
        match precision {
            Precision::Single => self.set_fpr_single(n, v),
            Precision::Double => self.set_fpr(n, v),
        }
    }

    /// `fadd`, `fsub`, `fmul`, `fdiv` and their single forms: frA op frB (frC for `fmul`).
    pub(crate) fn arith(&mut self, insn: &Insn, op: FBinaryOp, precision: Precision) {
        let single = precision == Precision::Single;
        let a = self.fpr(insn.ra());
        let b = if op == FBinaryOp::Fmul {
            self.fpr(insn.rc_field())
        } else {
            self.fpr(insn.rb())
        };
        let b_in = if single && op == FBinaryOp::Fmul {
            self.force_25bit(b)
        } else {
            b
        };
        let r = self.rounded_result(&[a, b], single, |lx, rounding| {
            let r = lx.b.fbinary(op, rounding, a, b_in);
            if single { lx.round_to_single_by(r, rounding) } else { r }
        });
        self.set_fpr_as(insn.rd(), r, precision);
        self.record_fp(insn);
    }

    /// The multiply-add family: `frA * frC ± frB`, rounded once, optionally negated afterwards
    /// (a NaN result is not negated).
    pub(crate) fn madd(&mut self, insn: &Insn, form: Fma, precision: Precision) {
        let single = precision == Precision::Single;
        let a = self.fpr(insn.ra());
        let c = self.fpr(insn.rc_field());
        let b = self.fpr(insn.rb());
        let addend = self.fma_addend(form, b);
        let c_in = if single { self.force_25bit(c) } else { c };
        let r = self.rounded_result(&[a, b, c], single, |lx, rounding| {
            let r = lx.b.fternary(FTernaryOp::Fma, rounding, a, c_in, addend);
            if single { lx.round_to_single_by(r, rounding) } else { r }
        });
        let r = self.fma_result(form, r);
        self.set_fpr_as(insn.rd(), r, precision);
        self.record_fp(insn);
    }

    /// The addend of a multiply-add: frB, negated for the subtracting forms.
    pub(crate) fn fma_addend(&mut self, form: Fma, b: Value) -> Value {
        if matches!(form, Fma::Msub | Fma::Nmsub) {
            self.b.funary(FUnaryOp::Fneg, Rounding::Nearest, b)
        } else {
            b
        }
    }

    /// The result of a multiply-add, negated for the negating forms unless it is a NaN.
    pub(crate) fn fma_result(&mut self, form: Fma, r: Value) -> Value {
        if matches!(form, Fma::Nmadd | Fma::Nmsub) {
            let nan = self.is_nan(r);
            let negated = self.b.funary(FUnaryOp::Fneg, Rounding::Nearest, r);
            self.b.select(nan, r, negated)
        } else {
            r
        }
    }

    /// A CR field from comparing two floats: LT GT EQ, or FU (the low bit) when unordered.
    pub(crate) fn fcompare_field(&mut self, a: Value, b: Value) -> Value {
        let lt = self.b.fcmp(FloatCC::Lt, a, b);
        let gt = self.b.fcmp(FloatCC::Lt, b, a);
        let eq = self.b.fcmp(FloatCC::Eq, a, b);
        let un = self.b.fcmp(FloatCC::Uno, a, b);
        self.cr_field_from_bits(&[lt, gt, eq, un])
    }

    /// `fctiw`/`fctiwz`: to a 32-bit integer with saturation (NaN gives 0x80000000), placed in
    /// the low word of the FPR with 0xfff80000 above it, as the 750 leaves it (Dolphin's hardware
    /// tests; qemu sign-extends the word instead, and the oracle test compares the low word).
    pub(crate) fn convert_to_int_word(&mut self, insn: &Insn, rounding: Rounding) {
        let b = self.fpr(insn.rb());
        let nan = self.is_nan(b);
        // Clamp far outside the 32-bit range first, so the 64-bit conversion is always defined.
        let hi = self.f64_const(4_294_967_296.0);
        let lo = self.f64_const(-4_294_967_296.0);
        let too_big = self.b.fcmp(FloatCC::Lt, hi, b);
        let too_small = self.b.fcmp(FloatCC::Lt, b, lo);
        let zero = self.f64_const(0.0);
        let x = self.b.select(too_big, hi, b);
        let x = self.b.select(too_small, lo, x);
        let x = self.b.select(nan, zero, x);
        let i = self.b.fconvert(FConvOp::FloatToSint, rounding, x, Type::I64);
        let max = self.b.icmp_imm(IntCC::Sgt, i, 0x7fff_ffff);
        let min = self.b.icmp_imm(IntCC::Slt, i, (-0x8000_0000i64) as u64);
        let low = self.b.convert(ConvOp::Trunc, i, Type::I32);
        let int_max = self.c32(0x7fff_ffff);
        let int_min = self.c32(0x8000_0000);
        let w = self.b.select(max, int_max, low);
        let w = self.b.select(min, int_min, w);
        let w = self.b.select(nan, int_min, w);
        let w64 = self.b.convert(ConvOp::Zext, w, Type::I64);
        let bits = self.b.binary_imm(BinaryOp::Or, w64, 0xfff8_0000_0000_0000);
        let r = self.double_from_bits(bits);
        self.set_fpr(insn.rd(), r);
        self.record_fp(insn);
    }

    /// `fmr`, `fneg`, `fabs`, `fnabs`: frB with its sign changed as `op` says.
    pub(crate) fn move_op(&mut self, insn: &Insn, op: SignOp) {
        let b = self.fpr(insn.rb());
        let r = self.sign_op(op, b);
        self.set_fpr(insn.rd(), r);
        self.record_fp(insn);
    }

    /// `v` with its sign changed as `op` says (a bit operation: NaNs change like any value).
    pub(crate) fn sign_op(&mut self, op: SignOp, v: Value) -> Value {
        match op {
            SignOp::Keep => v,
            SignOp::Negate => self.b.funary(FUnaryOp::Fneg, Rounding::Nearest, v),
            SignOp::Clear => self.b.funary(FUnaryOp::Fabs, Rounding::Nearest, v),
            SignOp::Set => {
                let a = self.b.funary(FUnaryOp::Fabs, Rounding::Nearest, v);
                self.b.funary(FUnaryOp::Fneg, Rounding::Nearest, a)
            }
        }
    }

    /// `fres` (single, into both halves), `frsqrte` (double): the 750's estimate the helper
    /// computes from frB's bits.
    pub(crate) fn estimate(&mut self, insn: &Insn, helper: &str, precision: Precision) {
        let b = self.fpr(insn.rb());
        let bits = self.bits_of(b);
        if let Some(r) = self.b.call_helper(helper, vec![bits], Some(Type::I64)) {
            let r = self.double_from_bits(r);
            self.set_fpr_as(insn.rd(), r, precision);
        }
        self.record_fp(insn);
    }
}

/// The precision of a floating-point instruction's result.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Precision {
    /// Rounded to double; written to ps0 only.
    Double,
    /// Rounded to single; written to both paired-single halves.
    Single,
}

/// The multiply-add forms: `a * c + b`, `a * c - b`, and both negated.
#[derive(Clone, Copy)]
pub(crate) enum Fma {
    /// `fmadd`.
    Madd,
    /// `fmsub`.
    Msub,
    /// `fnmadd`.
    Nmadd,
    /// `fnmsub`.
    Nmsub,
}

/// What `fmr`, `fneg`, `fabs`, `fnabs` (and their paired-single forms) do to the sign.
#[derive(Clone, Copy)]
pub(crate) enum SignOp {
    /// `fmr`: nothing.
    Keep,
    /// `fneg`: flips it.
    Negate,
    /// `fabs`: clears it.
    Clear,
    /// `fnabs`: sets it.
    Set,
}

/// `fsel frD,frA,frC,frB`: frC when frA >= 0 (either zero counts), else frB (also for NaN).
pub(crate) fn fsel(lx: &mut Lifter<'_>, insn: &Insn) {
    let a = lx.fpr(insn.ra());
    let c = lx.fpr(insn.rc_field());
    let b = lx.fpr(insn.rb());
    let zero = lx.f64_const(0.0);
    let ge = lx.b.fcmp(FloatCC::Le, zero, a);
    let r = lx.b.select(ge, c, b);
    lx.set_fpr(insn.rd(), r);
    lx.record_fp(insn);
}

/// `frsp[.]`: rounds to single precision; a NaN keeps a single's payload, quieted.
pub(crate) fn frsp(lx: &mut Lifter<'_>, insn: &Insn) {
    let b = lx.fpr(insn.rb());
    let r = lx.round_to_single(b);
    let r = lx.fix_nan(r, &[b], true);
    lx.set_fpr_single(insn.rd(), r);
    lx.record_fp(insn);
}

/// `fcmpu`/`fcmpo crfD,frA,frB`: they set the same CR field (and differ only in exception bits).
pub(crate) fn fcmp(lx: &mut Lifter<'_>, insn: &Insn) {
    let a = lx.fpr(insn.ra());
    let b = lx.fpr(insn.rb());
    let field = lx.fcompare_field(a, b);
    lx.b.set(cr_field(insn.crfd()), field);
}

/// `mffs[.] frD`: the FPSCR in the low word, zeros above it (as qemu's 750 gives it).
pub(crate) fn mffs(lx: &mut Lifter<'_>, insn: &Insn) {
    let fpscr = lx.b.get(FPSCR);
    let bits = lx.b.convert(ConvOp::Zext, fpscr, Type::I64);
    let r = lx.double_from_bits(bits);
    lx.set_fpr(insn.rd(), r);
    lx.record_fp(insn);
}

/// `mtfsf[.] FM,frB`: the FPSCR nibbles selected by FM from frB's low word.
pub(crate) fn mtfsf(lx: &mut Lifter<'_>, insn: &Insn) {
    let fm = (insn.word >> 17) & 0xff;
    let mut mask = 0u32;
    for n in 0..8 {
        if fm & (0x80 >> n) != 0 {
            mask |= 0xf000_0000 >> (4 * n);
        }
    }
    let b = lx.fpr(insn.rb());
    let bits = lx.bits_of(b);
    let low = lx.b.convert(ConvOp::Trunc, bits, Type::I32);
    set_fpscr_bits(lx, low, mask);
    lx.record_fp(insn);
}

/// `mtfsfi[.] crfD,IMM`.
pub(crate) fn mtfsfi(lx: &mut Lifter<'_>, insn: &Insn) {
    let shift = 28 - 4 * insn.crfd();
    let imm = (insn.word >> 12) & 15;
    let v = lx.c32(imm << shift);
    set_fpscr_bits(lx, v, 0xf << shift);
    lx.record_fp(insn);
}

/// `mtfsb0[.] crbD` (`set` false), `mtfsb1[.] crbD` (`set` true).
pub(crate) fn mtfsb(lx: &mut Lifter<'_>, insn: &Insn, set: bool) {
    let bit = 0x8000_0000 >> insn.rd();
    let v = lx.c32(if set { bit } else { 0 });
    set_fpscr_bits(lx, v, bit);
    lx.record_fp(insn);
}

/// `mcrfs crfD,crfS`: copies an FPSCR nibble into the CR and clears its exception bits
/// (FX, OX, UX, ZX, XX and the VX causes; FEX and VX are summaries and stay).
pub(crate) fn mcrfs(lx: &mut Lifter<'_>, insn: &Insn) {
    let shift = 28 - 4 * insn.crfs();
    let fpscr = lx.b.get(FPSCR);
    let nibble = lx.b.binary_imm(BinaryOp::Lshr, fpscr, u64::from(shift));
    let nibble = lx.b.binary_imm(BinaryOp::And, nibble, 15);
    let field = lx.b.resize(nibble, Type::I8);
    lx.b.set(cr_field(insn.crfd()), field);
    const EXCEPTION_BITS: u32 = 0x9ff8_0700;
    let clear = EXCEPTION_BITS & (0xf << shift);
    let kept = lx.b.binary_imm(BinaryOp::And, fpscr, u64::from(!clear));
    let r = with_summaries(lx, kept);
    lx.b.set(FPSCR, r);
}

/// The invalid-operation causes VXSNAN..VXVC, VXSOFT, VXSQRT, VXCVI, whose OR is VX.
const VX_CAUSES: u64 = 0x01f8_0700;
/// FEX, VX and the reserved bit 20, which no instruction writes directly.
const NOT_WRITABLE: u64 = 0x6000_0800;

/// The FPSCR with its summary bits recomputed: VX is the OR of the invalid-operation causes and
/// FEX says whether any exception (VX, OX, UX, ZX, XX) is set together with its enable.
fn with_summaries(lx: &mut Lifter<'_>, v: Value) -> Value {
    let base = lx.b.binary_imm(BinaryOp::And, v, !NOT_WRITABLE & 0xffff_ffff);
    let causes = lx.b.binary_imm(BinaryOp::And, v, VX_CAUSES);
    let vx = lx.b.icmp_imm(IntCC::Ne, causes, 0);
    let vx = lx.b.resize(vx, Type::I32);
    let vx = lx.b.binary_imm(BinaryOp::Shl, vx, 29);
    let with_vx = lx.b.binary(BinaryOp::Or, base, vx);
    let exceptions = lx.b.binary_imm(BinaryOp::Lshr, with_vx, 25);
    let enables = lx.b.binary_imm(BinaryOp::Lshr, with_vx, 3);
    let both = lx.b.binary(BinaryOp::And, exceptions, enables);
    let both = lx.b.binary_imm(BinaryOp::And, both, 0x1f);
    let fex = lx.b.icmp_imm(IntCC::Ne, both, 0);
    let fex = lx.b.resize(fex, Type::I32);
    let fex = lx.b.binary_imm(BinaryOp::Shl, fex, 30);
    lx.b.binary(BinaryOp::Or, with_vx, fex)
}

/// FPSCR = (FPSCR & ~mask) | (v & mask), then the summaries.
fn set_fpscr_bits(lx: &mut Lifter<'_>, v: Value, mask: u32) {
    let fpscr = lx.b.get(FPSCR);
    let kept = lx.b.binary_imm(BinaryOp::And, fpscr, u64::from(!mask));
    let new = lx.b.binary_imm(BinaryOp::And, v, u64::from(mask));
    let r = lx.b.binary(BinaryOp::Or, kept, new);
    let r = with_summaries(lx, r);
    lx.b.set(FPSCR, r);
}
