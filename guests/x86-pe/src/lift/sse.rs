//! Scalar SSE and SSE2, as compilers emit them for `float` and `double` with `-mfpmath=sse`:
//! moves (movss, movsd, movd, movq, movaps/movapd/movups/movupd), scalar arithmetic, square
//! roots, min/max, comparisons into EFLAGS or masks (cmpss/cmpsd, movmskps/movmskpd), conversions, the bitwise operations on whole
//! registers, the unpack/convert forms gcc uses to widen a float, and ldmxcsr/stmxcsr.
//!
//! Model (docs/sse.md says the same for readers of the generated code):
//! - An xmm register is two i64 slots; scalar instructions change only the low 32 or 64 bits
//!   and keep the rest, loads into a register (`movss`/`movsd`/`movd`/`movq` from memory or a
//!   GPR) clear everything above what they load, as the manual says.
//! - Rounded operations use MXCSR.RC: the lifter switches on it into four copies of the
//!   operation with a fixed IR rounding each, so the common round-to-nearest path is plain host
//!   arithmetic, and the x87 unit's own rounding control stays independent of this one.
//! - NaNs follow the SSE rules, not the host's: the first operand's NaN (quieted) before the
//!   second's; an invalid operation without NaN operands gives the negative default NaN
//!   (0xffc00000, 0xfff8000000000000). min/max return the second operand when either is a NaN
//!   or both are zeros, which makes them selects on an ordered compare.
//! - Conversions to int32 give the integer indefinite 0x80000000 for NaNs and out-of-range
//!   values; cvtt* truncate, the others round by MXCSR.RC.
//! - MXCSR's exception flags (bits 0-5) are not computed: they keep what `ldmxcsr` put there,
//!   and exceptions stay masked whatever the mask bits say. DAZ and FTZ are not honoured.
//!   Compilers set neither; computing the sticky flags would cost every operation several
//!   compares (see docs/sse.md).
//! - Alignment checks of movaps/movapd and the packed bitwise operations with memory operands
//!   are not made: the aligned and unaligned forms behave alike.

use iced_x86::{Code, Instruction, OpKind, Register};
use rpt_ir::{
    BinaryOp, BlockCall, ConvOp, FBinaryOp, FConvOp, FUnaryOp, FloatCC, IntCC, Rounding, Terminator, Type, Value,
};

use super::operand::addressing_ok;
use super::{Handler, Lifter, is_gpr};
use crate::state::{AF, CF, MXCSR, OF, PF, SF, ZF, xmm_hi, xmm_lo};

/// The width of the scalar lane an instruction works on.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Lane {
    /// 32 bits, `float` (the `ss` forms).
    Single,
    /// 64 bits, `double` (the `sd` forms).
    Double,
}

impl Lane {
    fn float(self) -> Type {
        match self {
            Lane::Single => Type::F32,
            Lane::Double => Type::F64,
        }
    }

    fn int(self) -> Type {
        match self {
            Lane::Single => Type::I32,
            Lane::Double => Type::I64,
        }
    }

    /// The quiet bit of a NaN.
    fn quiet_bit(self) -> u64 {
        match self {
            Lane::Single => 0x0040_0000,
            Lane::Double => 0x0008_0000_0000_0000,
        }
    }

    /// The "real indefinite": the NaN an invalid operation without NaN operands returns.
    fn default_nan(self) -> u64 {
        match self {
            Lane::Single => 0xffc0_0000,
            Lane::Double => 0xfff8_0000_0000_0000,
        }
    }
}

/// Picks the handler for an SSE instruction; `None` for everything else, and for forms whose
/// operands the lifter cannot model.
pub(crate) fn select(insn: &Instruction) -> Option<Handler> {
    use Code as C;
    let h: Handler = match insn.code() {
        C::Movss_xmm_xmmm32 | C::Movss_xmmm32_xmm => |lx, i| scalar_move(lx, i, Type::I32),
        C::Movsd_xmm_xmmm64 | C::Movsd_xmmm64_xmm => |lx, i| scalar_move(lx, i, Type::I64),
        C::Movaps_xmm_xmmm128
        | C::Movaps_xmmm128_xmm
        | C::Movapd_xmm_xmmm128
        | C::Movapd_xmmm128_xmm
        | C::Movups_xmm_xmmm128
        | C::Movups_xmmm128_xmm
        | C::Movupd_xmm_xmmm128
        | C::Movupd_xmmm128_xmm
        | C::Movdqa_xmm_xmmm128
        | C::Movdqa_xmmm128_xmm
        | C::Movdqu_xmm_xmmm128
        | C::Movdqu_xmmm128_xmm => mov128,
        C::Movd_xmm_rm32 => |lx, i| zero_extending_load(lx, i, Type::I32),
        C::Movd_rm32_xmm => |lx, i| store_low(lx, i, Type::I32),
        C::Movq_xmm_xmmm64 => |lx, i| zero_extending_load(lx, i, Type::I64),
        C::Movq_xmmm64_xmm => movq_from_xmm,
        C::Addss_xmm_xmmm32 => |lx, i| arith(lx, i, FBinaryOp::Fadd, Lane::Single),
        C::Addsd_xmm_xmmm64 => |lx, i| arith(lx, i, FBinaryOp::Fadd, Lane::Double),
        C::Subss_xmm_xmmm32 => |lx, i| arith(lx, i, FBinaryOp::Fsub, Lane::Single),
        C::Subsd_xmm_xmmm64 => |lx, i| arith(lx, i, FBinaryOp::Fsub, Lane::Double),
        C::Mulss_xmm_xmmm32 => |lx, i| arith(lx, i, FBinaryOp::Fmul, Lane::Single),
        C::Mulsd_xmm_xmmm64 => |lx, i| arith(lx, i, FBinaryOp::Fmul, Lane::Double),
        C::Divss_xmm_xmmm32 => |lx, i| arith(lx, i, FBinaryOp::Fdiv, Lane::Single),
        C::Divsd_xmm_xmmm64 => |lx, i| arith(lx, i, FBinaryOp::Fdiv, Lane::Double),
        C::Sqrtss_xmm_xmmm32 => |lx, i| sqrt(lx, i, Lane::Single),
        C::Sqrtsd_xmm_xmmm64 => |lx, i| sqrt(lx, i, Lane::Double),
        C::Minss_xmm_xmmm32 => |lx, i| min_max(lx, i, Lane::Single, false),
        C::Minsd_xmm_xmmm64 => |lx, i| min_max(lx, i, Lane::Double, false),
        C::Maxss_xmm_xmmm32 => |lx, i| min_max(lx, i, Lane::Single, true),
        C::Maxsd_xmm_xmmm64 => |lx, i| min_max(lx, i, Lane::Double, true),
        // comis* and ucomis* differ only in which NaNs raise the (masked) invalid exception.
        C::Comiss_xmm_xmmm32 | C::Ucomiss_xmm_xmmm32 => |lx, i| compare(lx, i, Lane::Single),
        C::Comisd_xmm_xmmm64 | C::Ucomisd_xmm_xmmm64 => |lx, i| compare(lx, i, Lane::Double),
        C::Cmpss_xmm_xmmm32_imm8 => |lx, i| compare_mask(lx, i, Lane::Single),
        C::Cmpsd_xmm_xmmm64_imm8 => |lx, i| compare_mask(lx, i, Lane::Double),
        C::Movmskps_r32_xmm => |lx, i| sign_mask(lx, i, Lane::Single),
        C::Movmskpd_r32_xmm => |lx, i| sign_mask(lx, i, Lane::Double),
        C::Cvtsi2ss_xmm_rm32 => |lx, i| int_to_float(lx, i, Lane::Single),
        C::Cvtsi2sd_xmm_rm32 => |lx, i| int_to_float(lx, i, Lane::Double),
        C::Cvtss2sd_xmm_xmmm32 => cvtss2sd,
        C::Cvtsd2ss_xmm_xmmm64 => cvtsd2ss,
        C::Cvtss2si_r32_xmmm32 => |lx, i| float_to_int(lx, i, Lane::Single, false),
        C::Cvtsd2si_r32_xmmm64 => |lx, i| float_to_int(lx, i, Lane::Double, false),
        C::Cvttss2si_r32_xmmm32 => |lx, i| float_to_int(lx, i, Lane::Single, true),
        C::Cvttsd2si_r32_xmmm64 => |lx, i| float_to_int(lx, i, Lane::Double, true),
        C::Andps_xmm_xmmm128 | C::Andpd_xmm_xmmm128 | C::Pand_xmm_xmmm128 => {
            |lx, i| bitwise(lx, i, BinaryOp::And, false)
        }
        C::Andnps_xmm_xmmm128 | C::Andnpd_xmm_xmmm128 | C::Pandn_xmm_xmmm128 => {
            |lx, i| bitwise(lx, i, BinaryOp::And, true)
        }
        C::Orps_xmm_xmmm128 | C::Orpd_xmm_xmmm128 | C::Por_xmm_xmmm128 => |lx, i| bitwise(lx, i, BinaryOp::Or, false),
        C::Xorps_xmm_xmmm128 | C::Xorpd_xmm_xmmm128 | C::Pxor_xmm_xmmm128 => {
            |lx, i| bitwise(lx, i, BinaryOp::Xor, false)
        }
        C::Unpcklps_xmm_xmmm128 => unpcklps,
        C::Unpcklpd_xmm_xmmm128 => unpcklpd,
        C::Cvtps2pd_xmm_xmmm64 => cvtps2pd,
        C::Ldmxcsr_m32 => ldmxcsr,
        C::Stmxcsr_m32 => stmxcsr,
        _ => return None,
    };
    operands_ok(insn).then_some(h)
}

/// Whether every operand is an xmm0-7 register, a general register or a flat memory operand.
fn operands_ok(insn: &Instruction) -> bool {
    (0..insn.op_count()).all(|i| match insn.op_kind(i) {
        OpKind::Register => {
            let r = insn.op_register(i);
            xmm_number(r).is_some() || is_gpr(r)
        }
        OpKind::Memory => addressing_ok(insn),
        // The predicate of cmpss/cmpsd.
        OpKind::Immediate8 => true,
        _ => false,
    })
}

/// The number of an xmm register the 32-bit register file has (xmm0-7).
fn xmm_number(r: Register) -> Option<u32> {
    let n = (r as u32).checked_sub(Register::XMM0 as u32)?;
    (n < 8).then_some(n)
}

/// Where an SSE operand lives.
#[derive(Clone, Copy)]
enum Src {
    /// xmm register `n`.
    Xmm(u32),
    /// A general register.
    Gpr(Register),
    /// Guest memory at this address.
    Mem(Value),
}

impl Lifter<'_> {
    fn sse_loc(&mut self, insn: &Instruction, i: u32) -> Src {
        match insn.op_kind(i) {
            OpKind::Memory => Src::Mem(self.ea(insn)),
            _ => {
                let r = insn.op_register(i);
                match xmm_number(r) {
                    Some(n) => Src::Xmm(n),
                    None => Src::Gpr(r),
                }
            }
        }
    }

    /// The low `ty` bits (i32 or i64) of an operand: an xmm register's low lane, a GPR or memory.
    fn read_low(&mut self, src: Src, ty: Type) -> Value {
        match src {
            Src::Xmm(n) => {
                let lo = self.b.get(xmm_lo(n));
                self.b.resize(lo, ty)
            }
            Src::Gpr(r) => {
                let v = self.read_reg(r);
                self.b.resize(v, ty)
            }
            Src::Mem(addr) => self.load(ty, addr),
        }
    }

    /// All 128 bits of an operand as (low, high).
    fn read_full(&mut self, src: Src) -> (Value, Value) {
        match src {
            Src::Xmm(n) => (self.b.get(xmm_lo(n)), self.b.get(xmm_hi(n))),
            Src::Mem(addr) => {
                let lo = self.load(Type::I64, addr);
                let high_addr = self.b.binary_imm(BinaryOp::Add, addr, 8);
                let hi = self.load(Type::I64, high_addr);
                (lo, hi)
            }
            Src::Gpr(r) => {
                let v = self.read_reg(r);
                let lo = self.b.resize(v, Type::I64);
                let hi = self.b.iconst(Type::I64, 0);
                (lo, hi)
            }
        }
    }

    /// Writes all 128 bits of an operand.
    fn write_full(&mut self, dst: Src, lo: Value, hi: Value) {
        match dst {
            Src::Xmm(n) => {
                self.b.set(xmm_lo(n), lo);
                self.b.set(xmm_hi(n), hi);
            }
            Src::Mem(addr) => {
                self.store(addr, lo);
                let high_addr = self.b.binary_imm(BinaryOp::Add, addr, 8);
                self.store(high_addr, hi);
            }
            Src::Gpr(r) => {
                let v = self.b.resize(lo, Type::I32);
                self.write_reg(r, v);
            }
        }
    }

    /// Writes `bits` (i32 or i64) to an operand: into the low lane of an xmm register keeping
    /// everything above it, or to memory or a GPR.
    fn write_low(&mut self, dst: Src, bits: Value) {
        match dst {
            Src::Xmm(n) => {
                let v = if self.b.ty(bits) == Type::I64 {
                    bits
                } else {
                    let old = self.b.get(xmm_lo(n));
                    let kept = self.b.binary_imm(BinaryOp::And, old, 0xffff_ffff_0000_0000);
                    let wide = self.b.resize(bits, Type::I64);
                    self.b.binary(BinaryOp::Or, kept, wide)
                };
                self.b.set(xmm_lo(n), v);
            }
            Src::Gpr(r) => {
                let v = self.b.resize(bits, Type::I32);
                self.write_reg(r, v);
            }
            Src::Mem(addr) => self.store(addr, bits),
        }
    }

    /// Writes `bits` (i32 or i64) to xmm register `n` zero-extended to 128 bits.
    fn write_zero_extended(&mut self, n: u32, bits: Value) {
        let lo = self.b.resize(bits, Type::I64);
        let hi = self.b.iconst(Type::I64, 0);
        self.b.set(xmm_lo(n), lo);
        self.b.set(xmm_hi(n), hi);
    }

    /// The scalar lane of operand `i` as a float.
    fn read_scalar(&mut self, insn: &Instruction, i: u32, lane: Lane) -> Value {
        let src = self.sse_loc(insn, i);
        let bits = self.read_low(src, lane.int());
        self.b.convert(ConvOp::Bitcast, bits, lane.float())
    }

    /// Writes a float into the scalar lane of operand 0, keeping the rest of the register.
    fn write_scalar(&mut self, insn: &Instruction, v: Value) {
        let dst = self.sse_loc(insn, 0);
        let ty = if self.b.ty(v) == Type::F32 {
            Type::I32
        } else {
            Type::I64
        };
        let bits = self.b.convert(ConvOp::Bitcast, v, ty);
        self.write_low(dst, bits);
    }

    /// Computes `op` once per MXCSR rounding mode and picks the current one: a switch on RC into
    /// four blocks whose results meet in a block parameter.
    fn mxcsr_rounded(&mut self, op: impl Fn(&mut Lifter<'_>, Rounding) -> Value) -> Value {
        let mxcsr = self.b.get(MXCSR);
        let rc = self.b.binary_imm(BinaryOp::Lshr, mxcsr, 13);
        let rc = self.b.binary_imm(BinaryOp::And, rc, 3);
        // RC encoding: 0 nearest, 1 down, 2 up, 3 toward zero.
        let modes = [Rounding::Nearest, Rounding::Down, Rounding::Up, Rounding::Zero];
        let blocks = modes.map(|_| self.b.create_block());
        let join = self.b.create_block();
        self.b.terminate(Terminator::Switch {
            index: rc,
            cases: blocks.iter().map(|&b| BlockCall::plain(b)).collect(),
            default: BlockCall::plain(blocks[0]),
        });
        let mut result = None;
        for (block, mode) in blocks.into_iter().zip(modes) {
            self.b.switch_to_block(block);
            let v = op(self, mode);
            if result.is_none() {
                let ty = self.b.ty(v);
                result = Some(self.b.add_block_param(join, ty));
            }
            self.b.jump(join, vec![v]);
        }
        self.b.switch_to_block(join);
        // `modes` is not empty, so the parameter exists.
        result.unwrap_or_else(|| self.b.iconst(Type::I32, 0))
    }

    fn is_nan(&mut self, v: Value) -> Value {
        self.b.fcmp(FloatCC::Uno, v, v)
    }

    /// Replaces a NaN result by the NaN SSE gives: the first NaN operand quieted, or the
    /// default NaN when no operand is a NaN (an invalid operation).
    fn sse_nan(&mut self, r: Value, operands: &[Value], lane: Lane) -> Value {
        let mut pick = self.b.iconst(lane.int(), lane.default_nan());
        for &op in operands.iter().rev() {
            let nan = self.is_nan(op);
            let bits = self.b.convert(ConvOp::Bitcast, op, lane.int());
            let quiet = self.b.binary_imm(BinaryOp::Or, bits, lane.quiet_bit());
            pick = self.b.select(nan, quiet, pick);
        }
        let pick = self.b.convert(ConvOp::Bitcast, pick, lane.float());
        let nan = self.is_nan(r);
        self.b.select(nan, pick, r)
    }
}

/// `movss`/`movsd`: register to register merges the low 32 or 64 bits; a load clears the bits
/// above them; a store writes them.
fn scalar_move(lx: &mut Lifter<'_>, insn: &Instruction, ty: Type) {
    let src = lx.sse_loc(insn, 1);
    let dst = lx.sse_loc(insn, 0);
    let v = lx.read_low(src, ty);
    match (dst, src) {
        (Src::Xmm(n), Src::Mem(_)) => lx.write_zero_extended(n, v),
        _ => lx.write_low(dst, v),
    }
}

/// The 128-bit moves: every bit copied.
fn mov128(lx: &mut Lifter<'_>, insn: &Instruction) {
    let src = lx.sse_loc(insn, 1);
    let dst = lx.sse_loc(insn, 0);
    let (lo, hi) = lx.read_full(src);
    lx.write_full(dst, lo, hi);
}

/// `movd xmm, r/m32`, `movq xmm, xmm/m64`: zero-extended to 128 bits.
fn zero_extending_load(lx: &mut Lifter<'_>, insn: &Instruction, ty: Type) {
    let src = lx.sse_loc(insn, 1);
    let v = lx.read_low(src, ty);
    if let Src::Xmm(n) = lx.sse_loc(insn, 0) {
        lx.write_zero_extended(n, v);
    }
}

/// `movq xmm/m64, xmm`: to a register it clears bits 64-127, to memory it stores 64 bits.
fn movq_from_xmm(lx: &mut Lifter<'_>, insn: &Instruction) {
    match lx.sse_loc(insn, 0) {
        Src::Xmm(_) => zero_extending_load(lx, insn, Type::I64),
        _ => store_low(lx, insn, Type::I64),
    }
}

/// `movd r/m32, xmm`, `movq m64, xmm`: the low 32 or 64 bits.
fn store_low(lx: &mut Lifter<'_>, insn: &Instruction, ty: Type) {
    let src = lx.sse_loc(insn, 1);
    let v = lx.read_low(src, ty);
    let dst = lx.sse_loc(insn, 0);
    lx.write_low(dst, v);
}

/// `addss`/`subsd`/...: the scalar lane rounded by MXCSR, NaNs by the SSE rules.
fn arith(lx: &mut Lifter<'_>, insn: &Instruction, op: FBinaryOp, lane: Lane) {
    let a = lx.read_scalar(insn, 0, lane);
    let b = lx.read_scalar(insn, 1, lane);
    let r = lx.mxcsr_rounded(|lx, mode| lx.b.fbinary(op, mode, a, b));
    let r = lx.sse_nan(r, &[a, b], lane);
    lx.write_scalar(insn, r);
}

/// `sqrtss`/`sqrtsd`: of a negative number the default NaN, of a NaN the NaN quieted.
fn sqrt(lx: &mut Lifter<'_>, insn: &Instruction, lane: Lane) {
    let x = lx.read_scalar(insn, 1, lane);
    let r = lx.mxcsr_rounded(|lx, mode| lx.b.funary(FUnaryOp::Fsqrt, mode, x));
    let r = lx.sse_nan(r, &[x], lane);
    lx.write_scalar(insn, r);
}

/// `minss`/`maxsd`/...: `a < b ? a : b` (`a > b` for max) — the second operand when the
/// compare is false, which covers NaNs (no quieting) and zeros of either sign.
fn min_max(lx: &mut Lifter<'_>, insn: &Instruction, lane: Lane, max: bool) {
    let a = lx.read_scalar(insn, 0, lane);
    let b = lx.read_scalar(insn, 1, lane);
    let a_wins = if max {
        lx.b.fcmp(FloatCC::Lt, b, a)
    } else {
        lx.b.fcmp(FloatCC::Lt, a, b)
    };
    let r = lx.b.select(a_wins, a, b);
    lx.write_scalar(insn, r);
}

/// `comiss`/`ucomisd`/...: ZF, PF, CF = 111 unordered, 000 greater, 001 less, 100 equal;
/// OF, SF and AF cleared.
fn compare(lx: &mut Lifter<'_>, insn: &Instruction, lane: Lane) {
    let a = lx.read_scalar(insn, 0, lane);
    let b = lx.read_scalar(insn, 1, lane);
    let unordered = lx.b.fcmp(FloatCC::Uno, a, b);
    let equal = lx.b.fcmp(FloatCC::Eq, a, b);
    let less = lx.b.fcmp(FloatCC::Lt, a, b);
    let zf = lx.b.binary(BinaryOp::Or, unordered, equal);
    let cf = lx.b.binary(BinaryOp::Or, unordered, less);
    lx.b.set(ZF, zf);
    lx.b.set(PF, unordered);
    lx.b.set(CF, cf);
    let zero = lx.b.iconst(Type::I1, 0);
    for flag in [OF, SF, AF] {
        lx.b.set(flag, zero);
    }
}

/// `cmpss`/`cmpsd` (and the `cmpltsd`... spellings): the scalar lane becomes all ones when the
/// predicate holds, else zero. Predicates 0-3 are eq, lt, le, unord; 4-7 their negations, which
/// hold for unordered operands.
fn compare_mask(lx: &mut Lifter<'_>, insn: &Instruction, lane: Lane) {
    let a = lx.read_scalar(insn, 0, lane);
    let b = lx.read_scalar(insn, 1, lane);
    let predicate = insn.immediate8() & 7;
    let holds = match predicate & 3 {
        0 => lx.b.fcmp(FloatCC::Eq, a, b),
        1 => lx.b.fcmp(FloatCC::Lt, a, b),
        2 => lx.b.fcmp(FloatCC::Le, a, b),
        _ => lx.b.fcmp(FloatCC::Uno, a, b),
    };
    let holds = if predicate >= 4 {
        let one = lx.b.iconst(Type::I1, 1);
        lx.b.binary(BinaryOp::Xor, holds, one)
    } else {
        holds
    };
    let ones = lx.b.iconst(lane.int(), u64::MAX);
    let zero = lx.b.iconst(lane.int(), 0);
    let mask = lx.b.select(holds, ones, zero);
    let dst = lx.sse_loc(insn, 0);
    lx.write_low(dst, mask);
}

/// `movmskps`/`movmskpd`: the sign bits of the four floats or two doubles, into bits 0-3 or 0-1
/// of a general register.
fn sign_mask(lx: &mut Lifter<'_>, insn: &Instruction, lane: Lane) {
    let Src::Xmm(n) = lx.sse_loc(insn, 1) else { return };
    let lo = lx.b.get(xmm_lo(n));
    let hi = lx.b.get(xmm_hi(n));
    // (half, sign bit position within it, result bit)
    let bits: &[(Value, u64, u64)] = match lane {
        Lane::Single => &[(lo, 31, 0), (lo, 63, 1), (hi, 31, 2), (hi, 63, 3)],
        Lane::Double => &[(lo, 63, 0), (hi, 63, 1)],
    };
    let mut mask = lx.b.iconst(Type::I64, 0);
    for &(half, sign, to) in bits {
        let bit = lx.b.binary_imm(BinaryOp::Lshr, half, sign);
        let bit = lx.b.binary_imm(BinaryOp::And, bit, 1);
        let bit = lx.b.binary_imm(BinaryOp::Shl, bit, to);
        mask = lx.b.binary(BinaryOp::Or, mask, bit);
    }
    let mask = lx.b.resize(mask, Type::I32);
    lx.write_reg(insn.op_register(0), mask);
}

/// `cvtsi2ss`/`cvtsi2sd`: a signed int32 from a GPR or memory; exact for doubles, rounded by
/// MXCSR for floats.
fn int_to_float(lx: &mut Lifter<'_>, insn: &Instruction, lane: Lane) {
    let src = lx.sse_loc(insn, 1);
    let i = lx.read_low(src, Type::I32);
    let r = match lane {
        Lane::Double => lx.b.fconvert(FConvOp::SintToFloat, Rounding::Nearest, i, Type::F64),
        Lane::Single => lx.mxcsr_rounded(|lx, mode| lx.b.fconvert(FConvOp::SintToFloat, mode, i, Type::F32)),
    };
    lx.write_scalar(insn, r);
}

/// `cvtss2sd`: exact; a NaN keeps its sign and payload, quieted.
fn cvtss2sd(lx: &mut Lifter<'_>, insn: &Instruction) {
    let src = lx.sse_loc(insn, 1);
    let bits = lx.read_low(src, Type::I32);
    let r = widen_bits(lx, bits);
    let dst = lx.sse_loc(insn, 0);
    lx.write_low(dst, r);
}

/// `cvtsd2ss`: rounded by MXCSR; a NaN keeps its sign and the top of its payload, quieted.
fn cvtsd2ss(lx: &mut Lifter<'_>, insn: &Instruction) {
    let x = lx.read_scalar(insn, 1, Lane::Double);
    let narrowed = lx.mxcsr_rounded(|lx, mode| lx.b.fconvert(FConvOp::Fconvert, mode, x, Type::F32));
    let bits = lx.b.convert(ConvOp::Bitcast, x, Type::I64);
    let nan_bits = lx.b.f64_nan_to_f32_bits(bits);
    let nan_value = lx.b.convert(ConvOp::Bitcast, nan_bits, Type::F32);
    let nan = lx.is_nan(x);
    let r = lx.b.select(nan, nan_value, narrowed);
    lx.write_scalar(insn, r);
}

/// `cvtss2si`/`cvttsd2si`/...: to int32, 0x80000000 for NaNs and results outside int32.
///
/// The IR conversion is undefined out of range, so it converts to i64 only values below 2^32
/// in magnitude (others are certainly out of range) and range-checks the i64 afterwards, which
/// is right for every rounding mode.
fn float_to_int(lx: &mut Lifter<'_>, insn: &Instruction, lane: Lane, truncate: bool) {
    let x = lx.read_scalar(insn, 1, lane);
    let x = match lane {
        Lane::Single => lx.b.fconvert(FConvOp::Fconvert, Rounding::Nearest, x, Type::F64),
        Lane::Double => x,
    };
    let magnitude = lx.b.funary(FUnaryOp::Fabs, Rounding::Nearest, x);
    let limit = lx.b.fconst(Type::F64, u128::from(4_294_967_296f64.to_bits()));
    let small = lx.b.fcmp(FloatCC::Lt, magnitude, limit);
    let zero = lx.b.fconst(Type::F64, 0);
    let safe = lx.b.select(small, x, zero);
    let wide = if truncate {
        lx.b.fconvert(FConvOp::FloatToSint, Rounding::Zero, safe, Type::I64)
    } else {
        lx.mxcsr_rounded(|lx, mode| lx.b.fconvert(FConvOp::FloatToSint, mode, safe, Type::I64))
    };
    let narrow = lx.b.resize(wide, Type::I32);
    let back = lx.b.sext(narrow, Type::I64);
    let fits = lx.b.icmp(IntCC::Eq, back, wide);
    let ok = lx.b.binary(BinaryOp::And, small, fits);
    let indefinite = lx.c32(0x8000_0000);
    let r = lx.b.select(ok, narrow, indefinite);
    lx.write_reg(insn.op_register(0), r);
}

/// The bitwise operations on all 128 bits; `andn` complements the destination first.
fn bitwise(lx: &mut Lifter<'_>, insn: &Instruction, op: BinaryOp, complement_dest: bool) {
    let dst = lx.sse_loc(insn, 0);
    let src = lx.sse_loc(insn, 1);
    let (mut a_lo, mut a_hi) = lx.read_full(dst);
    let (b_lo, b_hi) = lx.read_full(src);
    if complement_dest {
        a_lo = lx.b.unary(rpt_ir::UnaryOp::Not, a_lo);
        a_hi = lx.b.unary(rpt_ir::UnaryOp::Not, a_hi);
    }
    let lo = lx.b.binary(op, a_lo, b_lo);
    let hi = lx.b.binary(op, a_hi, b_hi);
    lx.write_full(dst, lo, hi);
}

/// `unpcklps`: dest = a0, b0, a1, b1 (32-bit lanes, low first).
fn unpcklps(lx: &mut Lifter<'_>, insn: &Instruction) {
    let dst = lx.sse_loc(insn, 0);
    let src = lx.sse_loc(insn, 1);
    let (a, _) = lx.read_full(dst);
    // The memory form reads 128 bits, but only the low 64 are used.
    let b = lx.read_low(src, Type::I64);
    let a0 = lx.b.binary_imm(BinaryOp::And, a, 0xffff_ffff);
    let b0 = lx.b.binary_imm(BinaryOp::Shl, b, 32);
    let lo = lx.b.binary(BinaryOp::Or, a0, b0);
    let a1 = lx.b.binary_imm(BinaryOp::Lshr, a, 32);
    let b1 = lx.b.binary_imm(BinaryOp::And, b, 0xffff_ffff_0000_0000);
    let hi = lx.b.binary(BinaryOp::Or, a1, b1);
    lx.write_full(dst, lo, hi);
}

/// `unpcklpd`: dest = a0, b0 (64-bit lanes).
fn unpcklpd(lx: &mut Lifter<'_>, insn: &Instruction) {
    let dst = lx.sse_loc(insn, 0);
    let src = lx.sse_loc(insn, 1);
    let b = lx.read_low(src, Type::I64);
    if let Src::Xmm(n) = dst {
        lx.b.set(xmm_hi(n), b);
    }
}

/// `cvtps2pd`: both low floats widened exactly (NaNs quieted, as `cvtss2sd` does).
fn cvtps2pd(lx: &mut Lifter<'_>, insn: &Instruction) {
    let src = lx.sse_loc(insn, 1);
    let both = lx.read_low(src, Type::I64);
    let low = lx.b.resize(both, Type::I32);
    let high = lx.b.binary_imm(BinaryOp::Lshr, both, 32);
    let high = lx.b.resize(high, Type::I32);
    let lo = widen_bits(lx, low);
    let hi = widen_bits(lx, high);
    if let Src::Xmm(n) = lx.sse_loc(insn, 0) {
        lx.b.set(xmm_lo(n), lo);
        lx.b.set(xmm_hi(n), hi);
    }
}

/// A float's bits widened to a double's bits, as `cvtss2sd` does.
fn widen_bits(lx: &mut Lifter<'_>, bits: Value) -> Value {
    let x = lx.b.convert(ConvOp::Bitcast, bits, Type::F32);
    let widened = lx.b.fconvert(FConvOp::Fconvert, Rounding::Nearest, x, Type::F64);
    let nan_bits = lx.b.f32_nan_to_f64_bits(bits, true);
    let widened_bits = lx.b.convert(ConvOp::Bitcast, widened, Type::I64);
    let nan = lx.is_nan(x);
    lx.b.select(nan, nan_bits, widened_bits)
}

/// `ldmxcsr m32`. Reserved bits set would raise #GP on hardware; compilers never set them.
fn ldmxcsr(lx: &mut Lifter<'_>, insn: &Instruction) {
    let addr = lx.ea(insn);
    let v = lx.load(Type::I32, addr);
    lx.b.set(MXCSR, v);
}

/// `stmxcsr m32`.
fn stmxcsr(lx: &mut Lifter<'_>, insn: &Instruction) {
    let addr = lx.ea(insn);
    let v = lx.b.get(MXCSR);
    lx.store(addr, v);
}
