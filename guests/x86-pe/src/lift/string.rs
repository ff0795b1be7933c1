//! String instructions: movs, stos, lods, cmps, scas in 8, 16 and 32 bits, with rep/repe/repne.
//!
//! DF picks the direction at run time. A repeated instruction becomes a loop of IR blocks inside
//! the one guest instruction: test ecx, do one step, decrement ecx, and for cmps/scas also stop
//! on ZF as the prefix says.

use iced_x86::{Code, Instruction, Register};
use rpt_ir::{BinaryOp, IntCC, Type, Value};

use super::{Handler, Lifter};
use crate::state::{DF, ECX, EDI, ESI, ZF};

#[derive(Clone, Copy, PartialEq, Eq)]
enum Op {
    Movs,
    Stos,
    Lods,
    Cmps,
    Scas,
}

fn decode(code: Code) -> Option<(Op, Type)> {
    use Code as C;
    Some(match code {
        C::Movsb_m8_m8 => (Op::Movs, Type::I8),
        C::Movsw_m16_m16 => (Op::Movs, Type::I16),
        C::Movsd_m32_m32 => (Op::Movs, Type::I32),
        C::Stosb_m8_AL => (Op::Stos, Type::I8),
        C::Stosw_m16_AX => (Op::Stos, Type::I16),
        C::Stosd_m32_EAX => (Op::Stos, Type::I32),
        C::Lodsb_AL_m8 => (Op::Lods, Type::I8),
        C::Lodsw_AX_m16 => (Op::Lods, Type::I16),
        C::Lodsd_EAX_m32 => (Op::Lods, Type::I32),
        C::Cmpsb_m8_m8 => (Op::Cmps, Type::I8),
        C::Cmpsw_m16_m16 => (Op::Cmps, Type::I16),
        C::Cmpsd_m32_m32 => (Op::Cmps, Type::I32),
        C::Scasb_AL_m8 => (Op::Scas, Type::I8),
        C::Scasw_AX_m16 => (Op::Scas, Type::I16),
        C::Scasd_EAX_m32 => (Op::Scas, Type::I32),
        _ => return None,
    })
}

/// Picks the handler for a string instruction with 32-bit addressing and a flat source segment.
pub(crate) fn select(insn: &Instruction) -> Option<Handler> {
    decode(insn.code())?;
    let flat_addressing = (0..insn.op_count()).all(|i| {
        !matches!(
            insn.op_kind(i),
            iced_x86::OpKind::MemorySegSI | iced_x86::OpKind::MemorySegDI | iced_x86::OpKind::MemoryESDI
        )
    });
    let flat_segment = !matches!(insn.memory_segment(), Register::FS | Register::GS);
    (flat_addressing && flat_segment).then_some(string_insn as Handler)
}

fn accumulator(ty: Type) -> Register {
    match ty {
        Type::I8 => Register::AL,
        Type::I16 => Register::AX,
        _ => Register::EAX,
    }
}

fn string_insn(lx: &mut Lifter<'_>, insn: &Instruction) {
    let Some((op, ty)) = decode(insn.code()) else { return };
    let compares = matches!(op, Op::Cmps | Op::Scas);
    // REPNE on movs/stos/lods repeats exactly like REP on every CPU rpt targets.
    let repeated = insn.has_rep_prefix() || insn.has_repne_prefix();
    if !repeated {
        step(lx, op, ty);
        return;
    }
    let head = lx.b.create_block();
    let body = lx.b.create_block();
    let done = lx.b.create_block();
    lx.b.jump(head, Vec::new());
    lx.b.switch_to_block(head);
    let ecx = lx.b.get(ECX);
    let empty = lx.b.icmp_imm(IntCC::Eq, ecx, 0);
    lx.b.branch(empty, done, body);
    lx.b.switch_to_block(body);
    step(lx, op, ty);
    let ecx = lx.b.get(ECX);
    let ecx = lx.b.binary_imm(BinaryOp::Sub, ecx, 1);
    lx.b.set(ECX, ecx);
    if compares {
        // repe continues while equal (ZF=1), repne while different (ZF=0).
        let zf = lx.b.get(ZF);
        let go_on = if insn.has_repe_prefix() { zf } else { lx.not1(zf) };
        lx.b.branch(go_on, head, done);
    } else {
        lx.b.jump(head, Vec::new());
    }
    lx.b.switch_to_block(done);
}

/// +size or -size as DF says.
fn stride(lx: &mut Lifter<'_>, ty: Type) -> Value {
    let n = u64::from(ty.bits() / 8);
    let df = lx.b.get(DF);
    let down = lx.b.iconst(Type::I32, n.wrapping_neg());
    let up = lx.b.iconst(Type::I32, n);
    lx.b.select(df, down, up)
}

fn advance(lx: &mut Lifter<'_>, slot: rpt_ir::SlotId, by: Value) {
    let v = lx.b.get(slot);
    let v = lx.b.binary(BinaryOp::Add, v, by);
    lx.b.set(slot, v);
}

/// One iteration.
fn step(lx: &mut Lifter<'_>, op: Op, ty: Type) {
    let by = stride(lx, ty);
    let acc = accumulator(ty);
    match op {
        Op::Movs => {
            let src = lx.b.get(ESI);
            let v = lx.load(ty, src);
            let dst = lx.b.get(EDI);
            lx.store(dst, v);
            advance(lx, ESI, by);
            advance(lx, EDI, by);
        }
        Op::Stos => {
            let v = lx.read_reg(acc);
            let dst = lx.b.get(EDI);
            lx.store(dst, v);
            advance(lx, EDI, by);
        }
        Op::Lods => {
            let src = lx.b.get(ESI);
            let v = lx.load(ty, src);
            lx.write_reg(acc, v);
            advance(lx, ESI, by);
        }
        Op::Cmps => {
            let src = lx.b.get(ESI);
            let a = lx.load(ty, src);
            let dst = lx.b.get(EDI);
            let b = lx.load(ty, dst);
            lx.add_sub_with_flags(BinaryOp::Sub, a, b, true);
            advance(lx, ESI, by);
            advance(lx, EDI, by);
        }
        Op::Scas => {
            let a = lx.read_reg(acc);
            let dst = lx.b.get(EDI);
            let b = lx.load(ty, dst);
            lx.add_sub_with_flags(BinaryOp::Sub, a, b, true);
            advance(lx, EDI, by);
        }
    }
}
