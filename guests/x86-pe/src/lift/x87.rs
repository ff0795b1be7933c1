//! x87 instructions: each becomes one call of an x87 helper (`crate::x87` describes the model),
//! with its memory operand loaded or stored here, so the IR shows every guest memory access.
//!
//! `fldcw`, `fnstcw` and `fnstsw` are plain slot accesses; `fwait` and `fnop` do nothing (no
//! exception is ever pending: unmasked exceptions do not trap in this model).

use iced_x86::{Instruction, MemorySize, Mnemonic, OpKind, Register};
use rpt_ir::{BinaryOp, Type, Value};

use super::operand::addressing_ok;
use super::{Handler, Lifter};
use crate::state::{AF, CF, EAX, FPU_CW, FPU_SW, FPU_TOP, OF, PF, SF, ZF};
use crate::x87::{Kind, helper, op};

/// Picks the handler for an x87 instruction; `None` for anything else or an x87 form not modelled.
pub(crate) fn select(insn: &Instruction) -> Option<Handler> {
    use Mnemonic as M;
    let has_memory = (0..insn.op_count()).any(|i| insn.op_kind(i) == OpKind::Memory);
    if has_memory && !addressing_ok(insn) {
        return None;
    }
    let handler: Handler = match insn.mnemonic() {
        M::Fld | M::Fild => load,
        M::Fst | M::Fstp | M::Fist | M::Fistp | M::Fisttp => store,
        M::Fadd
        | M::Faddp
        | M::Fiadd
        | M::Fmul
        | M::Fmulp
        | M::Fimul
        | M::Fsub
        | M::Fsubp
        | M::Fisub
        | M::Fsubr
        | M::Fsubrp
        | M::Fisubr
        | M::Fdiv
        | M::Fdivp
        | M::Fidiv
        | M::Fdivr
        | M::Fdivrp
        | M::Fidivr => arith,
        M::Fcom | M::Fcomp | M::Ficom | M::Ficomp | M::Fucom | M::Fucomp => compare,
        M::Fcomi | M::Fcomip | M::Fucomi | M::Fucomip => compare,
        M::Fxch | M::Ffree | M::Ffreep => register,
        M::Fcmovb | M::Fcmove | M::Fcmovbe | M::Fcmovu | M::Fcmovnb | M::Fcmovne | M::Fcmovnbe | M::Fcmovnu => fcmov,
        M::Fnstsw | M::Fstsw => fnstsw,
        M::Fnstcw | M::Fstcw => fnstcw,
        M::Fldcw => fldcw,
        M::Wait | M::Fnop => nothing,
        m => {
            no_operand(m)?;
            operandless
        }
    };
    Some(handler)
}

/// The `x87_op` number of an instruction without operands.
fn no_operand(m: Mnemonic) -> Option<u32> {
    use Mnemonic as M;
    Some(match m {
        M::Fchs => op::FCHS,
        M::Fabs => op::FABS,
        M::Fsqrt => op::FSQRT,
        M::Frndint => op::FRNDINT,
        M::F2xm1 => op::F2XM1,
        M::Fsin => op::FSIN,
        M::Fcos => op::FCOS,
        M::Fptan => op::FPTAN,
        M::Fsincos => op::FSINCOS,
        M::Fpatan => op::FPATAN,
        M::Fyl2x => op::FYL2X,
        M::Fyl2xp1 => op::FYL2XP1,
        M::Fscale => op::FSCALE,
        M::Fprem => op::FPREM,
        M::Fprem1 => op::FPREM1,
        M::Fxtract => op::FXTRACT,
        M::Ftst => op::FTST,
        M::Fxam => op::FXAM,
        M::Fincstp => op::FINCSTP,
        M::Fdecstp => op::FDECSTP,
        M::Fninit | M::Finit => op::FNINIT,
        M::Fnclex | M::Fclex => op::FNCLEX,
        M::Fld1 => op::FLD1,
        M::Fldz => op::FLDZ,
        M::Fldpi => op::FLDPI,
        M::Fldl2e => op::FLDL2E,
        M::Fldl2t => op::FLDL2T,
        M::Fldlg2 => op::FLDLG2,
        M::Fldln2 => op::FLDLN2,
        M::Fcompp => op::FCOMPP,
        M::Fucompp => op::FUCOMPP,
        _ => return None,
    })
}

/// The format of the memory operand.
fn mem_kind(insn: &Instruction) -> Kind {
    match insn.memory_size() {
        MemorySize::Float32 => Kind::F32,
        MemorySize::Float64 => Kind::F64,
        MemorySize::Float80 => Kind::F80,
        MemorySize::Int16 => Kind::I16,
        MemorySize::Int32 => Kind::I32,
        _ => Kind::I64,
    }
}

/// The stack index of an `st(i)` register.
fn st_index(r: Register) -> u32 {
    (r as u32).wrapping_sub(Register::ST0 as u32) & 7
}

/// Operand `i`'s stack index when it is an x87 register, else None.
fn st_op(insn: &Instruction, i: u32) -> Option<u32> {
    (i < insn.op_count() && insn.op_kind(i) == OpKind::Register).then(|| st_index(insn.op_register(i)))
}

fn memory_operand(insn: &Instruction) -> bool {
    (0..insn.op_count()).any(|i| insn.op_kind(i) == OpKind::Memory)
}

impl Lifter<'_> {
    /// Calls an x87 helper with constant arguments; `x87_reg` gives a value (an fcomi's
    /// condition codes, else 0), the others none.
    fn call(&mut self, name: &str, args: &[u32]) -> Option<Value> {
        let vals: Vec<Value> = args.iter().map(|&a| self.c32(a)).collect();
        let result = (name == helper::REG).then_some(Type::I32);
        self.b.call_helper(name, vals, result)
    }

    /// The memory operand's bits for a helper: integers sign-extended, floats zero-extended, to i64.
    fn memory_bits(&mut self, insn: &Instruction, addr: Value, kind: Kind) -> Value {
        match kind {
            Kind::F32 => {
                let v = self.load(Type::I32, addr);
                self.b.resize(v, Type::I64)
            }
            Kind::I16 => {
                let v = self.load(Type::I16, addr);
                self.b.sext(v, Type::I64)
            }
            Kind::I32 => {
                let v = self.load(Type::I32, addr);
                self.b.sext(v, Type::I64)
            }
            Kind::F64 | Kind::I64 | Kind::F80 => {
                let _ = insn;
                self.load(Type::I64, addr)
            }
        }
    }
}

fn load(lx: &mut Lifter<'_>, insn: &Instruction) {
    if let Some(i) = st_op(insn, 0) {
        lx.call(helper::REG, &[op::FLD, i]);
        return;
    }
    let addr = lx.ea(insn);
    let kind = mem_kind(insn);
    let lo = lx.memory_bits(insn, addr, kind);
    let hi = if kind == Kind::F80 {
        let at = lx.b.binary_imm(BinaryOp::Add, addr, 8);
        let se = lx.load(Type::I16, at);
        lx.b.resize(se, Type::I32)
    } else {
        lx.c32(0)
    };
    let k = lx.c32(kind as u32);
    lx.b.call_helper(helper::LOAD, vec![k, lo, hi], None);
}

fn store(lx: &mut Lifter<'_>, insn: &Instruction) {
    let pop = matches!(insn.mnemonic(), Mnemonic::Fstp | Mnemonic::Fistp | Mnemonic::Fisttp);
    if let Some(i) = st_op(insn, 0) {
        lx.call(helper::REG, &[if pop { op::FSTP } else { op::FST }, i]);
        return;
    }
    let addr = lx.ea(insn);
    let kind = mem_kind(insn);
    let mut flags = if pop { op::STORE_POP } else { 0 };
    if insn.mnemonic() == Mnemonic::Fisttp {
        flags |= op::STORE_TRUNCATE;
    }
    let k = lx.c32(kind as u32);
    if kind == Kind::F80 {
        // The sign and exponent first, without popping; then the significand, popping.
        let high = lx.c32(op::STORE_HIGH);
        let se =
            lx.b.call_helper(helper::STORE, vec![k, high], Some(Type::I64))
                .map(|v| lx.b.resize(v, Type::I16));
        let f = lx.c32(flags);
        let m = lx.b.call_helper(helper::STORE, vec![k, f], Some(Type::I64));
        if let (Some(m), Some(se)) = (m, se) {
            lx.store(addr, m);
            let at = lx.b.binary_imm(BinaryOp::Add, addr, 8);
            lx.store(at, se);
        }
        return;
    }
    let f = lx.c32(flags);
    let Some(bits) = lx.b.call_helper(helper::STORE, vec![k, f], Some(Type::I64)) else {
        return;
    };
    let width = match kind {
        Kind::F32 | Kind::I32 => Type::I32,
        Kind::I16 => Type::I16,
        _ => Type::I64,
    };
    let v = lx.b.resize(bits, width);
    lx.store(addr, v);
}

fn arith(lx: &mut Lifter<'_>, insn: &Instruction) {
    use Mnemonic as M;
    let which = match insn.mnemonic() {
        M::Fadd | M::Faddp | M::Fiadd => op::ADD,
        M::Fmul | M::Fmulp | M::Fimul => op::MUL,
        M::Fsub | M::Fsubp | M::Fisub => op::SUB,
        M::Fsubr | M::Fsubrp | M::Fisubr => op::SUBR,
        M::Fdiv | M::Fdivp | M::Fidiv => op::DIV,
        _ => op::DIVR,
    };
    if memory_operand(insn) {
        let addr = lx.ea(insn);
        let kind = mem_kind(insn);
        let bits = lx.memory_bits(insn, addr, kind);
        let (w, k) = (lx.c32(which), lx.c32(kind as u32));
        lx.b.call_helper(helper::ARITH_MEM, vec![w, k, bits], None);
        return;
    }
    let pop = matches!(
        insn.mnemonic(),
        M::Faddp | M::Fmulp | M::Fsubp | M::Fsubrp | M::Fdivp | M::Fdivrp
    );
    let dst = st_op(insn, 0).unwrap_or(1);
    let src = st_op(insn, 1).unwrap_or(0);
    lx.call(helper::ARITH, &[which, dst, src, u32::from(pop)]);
}

fn compare(lx: &mut Lifter<'_>, insn: &Instruction) {
    use Mnemonic as M;
    let m = insn.mnemonic();
    let pop = matches!(m, M::Fcomp | M::Ficomp | M::Fucomp | M::Fcomip | M::Fucomip);
    if memory_operand(insn) {
        let addr = lx.ea(insn);
        let kind = mem_kind(insn);
        let bits = lx.memory_bits(insn, addr, kind);
        let (k, p) = (lx.c32(kind as u32), lx.c32(u32::from(pop)));
        lx.b.call_helper(helper::COM_MEM, vec![k, bits, p], None);
        return;
    }
    let unordered = matches!(m, M::Fucom | M::Fucomp | M::Fucomi | M::Fucomip);
    let to_eflags = matches!(m, M::Fcomi | M::Fcomip | M::Fucomi | M::Fucomip);
    // The other register is the last operand (`fcomi st(0), st(i)`, `fcom st(i)`); none: st(1).
    let i = insn.op_count().checked_sub(1).and_then(|k| st_op(insn, k)).unwrap_or(1);
    let which = op::FCOM + u32::from(pop) + 2 * u32::from(unordered) + 4 * u32::from(to_eflags);
    let codes = lx.call(helper::REG, &[which, i]);
    if let Some(codes) = codes.filter(|_| to_eflags) {
        // fcomi: ZF, PF and CF are C3, C2 and C0 of the compare; OF, SF and AF are cleared. Set
        // here rather than by the helper, so that no x87 helper touches a flag.
        for (slot, shift) in [(ZF, 14), (PF, 10), (CF, 8)] {
            let moved = lx.b.binary_imm(BinaryOp::Lshr, codes, shift);
            let bit = lx.b.binary_imm(BinaryOp::And, moved, 1);
            let flag = lx.b.resize(bit, Type::I1);
            lx.b.set(slot, flag);
        }
        for slot in [OF, SF, AF] {
            lx.set_flag_const(slot, false);
        }
    }
}

fn register(lx: &mut Lifter<'_>, insn: &Instruction) {
    let which = match insn.mnemonic() {
        Mnemonic::Fxch => op::FXCH,
        Mnemonic::Ffree => op::FFREE,
        _ => op::FFREEP,
    };
    // The register is the last operand (`fxch st(0), st(i)`); a bare fxch means st(1).
    let i = insn
        .op_count()
        .checked_sub(1)
        .and_then(|k| st_op(insn, k))
        .unwrap_or(if which == op::FXCH { 1 } else { 0 });
    lx.call(helper::REG, &[which, i]);
}

fn fcmov(lx: &mut Lifter<'_>, insn: &Instruction) {
    use iced_x86::ConditionCode as C;
    // iced gives fcmov no condition code of its own; the mnemonic names the flags it tests.
    let cc = match insn.mnemonic() {
        Mnemonic::Fcmovb => C::b,
        Mnemonic::Fcmove => C::e,
        Mnemonic::Fcmovbe => C::be,
        Mnemonic::Fcmovu => C::p,
        Mnemonic::Fcmovnb => C::ae,
        Mnemonic::Fcmovne => C::ne,
        Mnemonic::Fcmovnbe => C::a,
        _ => C::np,
    };
    let cond = lx.cond(cc);
    let cond = lx.b.resize(cond, Type::I32);
    let i = lx.c32(st_op(insn, 1).unwrap_or(1));
    lx.b.call_helper(helper::FCMOV, vec![i, cond], None);
}

fn operandless(lx: &mut Lifter<'_>, insn: &Instruction) {
    if let Some(which) = no_operand(insn.mnemonic()) {
        lx.call(helper::OP, &[which]);
    }
}

fn fnstsw(lx: &mut Lifter<'_>, insn: &Instruction) {
    let sw = lx.b.get(FPU_SW);
    let kept = lx.b.binary_imm(BinaryOp::And, sw, 0xc7ff);
    let top = lx.b.get(FPU_TOP);
    let top = lx.b.resize(top, Type::I16);
    let top = lx.b.binary_imm(BinaryOp::And, top, 7);
    let field = lx.b.binary_imm(BinaryOp::Shl, top, 11);
    let word = lx.b.binary(BinaryOp::Or, kept, field);
    if memory_operand(insn) {
        let addr = lx.ea(insn);
        lx.store(addr, word);
    } else {
        let eax = lx.b.get(EAX);
        let high = lx.b.binary_imm(BinaryOp::And, eax, 0xffff_0000);
        let low = lx.b.resize(word, Type::I32);
        let merged = lx.b.binary(BinaryOp::Or, high, low);
        lx.b.set(EAX, merged);
    }
}

fn fnstcw(lx: &mut Lifter<'_>, insn: &Instruction) {
    let cw = lx.b.get(FPU_CW);
    let addr = lx.ea(insn);
    lx.store(addr, cw);
}

fn fldcw(lx: &mut Lifter<'_>, insn: &Instruction) {
    let addr = lx.ea(insn);
    let cw = lx.load(Type::I16, addr);
    lx.b.set(FPU_CW, cw);
}

fn nothing(_lx: &mut Lifter<'_>, _insn: &Instruction) {}
