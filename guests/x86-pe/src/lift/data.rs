//! Data movement and flag moves: mov, movzx, movsx, lea, xchg, bswap, push, pop, pushad, popad, leave, the sign
//! extensions (cbw, cwde, cwd, cdq), setcc, cmovcc, nops, cld/std/clc/stc/cmc, lahf/sahf.

use iced_x86::{Instruction, Mnemonic, OpKind, Register};
use rpt_ir::{BinaryOp, ConvOp, Type, UnaryOp};

use super::operand::{dest_width, op_width, reg_view};
use super::{Handler, Lifter};
use crate::state::{AF, CF, DF, EBP, ESP, GPRS, PF, SF, ZF};

/// Picks the handler for a data-movement instruction.
pub(crate) fn select(insn: &Instruction) -> Option<Handler> {
    let n = insn.op_count();
    let h: Handler = match insn.mnemonic() {
        Mnemonic::Mov if n == 2 => mov_rm_rm,
        Mnemonic::Movzx => |lx, i| extend_r_rm(lx, i, false),
        Mnemonic::Movsx => |lx, i| extend_r_rm(lx, i, true),
        Mnemonic::Lea if insn.op_kind(1) == OpKind::Memory => lea_r_m,
        Mnemonic::Xchg if n == 2 => xchg_rm_r,
        Mnemonic::Bswap if dest_width(insn) == Type::I32 => bswap_r32,
        // Only 32-bit pushes and pops: `66`-prefixed ones do not occur in 32-bit compiler output.
        Mnemonic::Push if n == 1 && insn.stack_pointer_increment() == -4 => push_rm_imm,
        Mnemonic::Pop if n == 1 && insn.stack_pointer_increment() == 4 => pop_rm,
        Mnemonic::Leave if insn.code() == iced_x86::Code::Leaved => leave,
        Mnemonic::Pushad if insn.code() == iced_x86::Code::Pushad => pushad,
        Mnemonic::Popad if insn.code() == iced_x86::Code::Popad => popad,
        Mnemonic::Cdq => |lx, _| sign_fill(lx, Register::EAX, Register::EDX),
        Mnemonic::Cwd => |lx, _| sign_fill(lx, Register::AX, Register::DX),
        Mnemonic::Cwde => |lx, _| sign_extend(lx, Register::AX, Register::EAX),
        Mnemonic::Cbw => |lx, _| sign_extend(lx, Register::AL, Register::AX),
        // `pause` is a spin-loop hint and `endbr32` a CET landing pad; neither changes state.
        Mnemonic::Nop | Mnemonic::Pause | Mnemonic::Endbr32 => nop,
        Mnemonic::Cld => |lx, _| lx.set_flag_const(DF, false),
        Mnemonic::Std => |lx, _| lx.set_flag_const(DF, true),
        Mnemonic::Clc => |lx, _| lx.set_flag_const(CF, false),
        Mnemonic::Stc => |lx, _| lx.set_flag_const(CF, true),
        Mnemonic::Cmc => cmc,
        Mnemonic::Lahf => lahf,
        Mnemonic::Sahf => sahf,
        m if is_setcc(m) => setcc_rm8,
        m if is_cmovcc(m) => cmovcc_r_rm,
        _ => return None,
    };
    Some(h)
}

fn is_setcc(m: Mnemonic) -> bool {
    use Mnemonic as M;
    matches!(
        m,
        M::Seto
            | M::Setno
            | M::Setb
            | M::Setae
            | M::Sete
            | M::Setne
            | M::Setbe
            | M::Seta
            | M::Sets
            | M::Setns
            | M::Setp
            | M::Setnp
            | M::Setl
            | M::Setge
            | M::Setle
            | M::Setg
    )
}

fn is_cmovcc(m: Mnemonic) -> bool {
    use Mnemonic as M;
    matches!(
        m,
        M::Cmovo
            | M::Cmovno
            | M::Cmovb
            | M::Cmovae
            | M::Cmove
            | M::Cmovne
            | M::Cmovbe
            | M::Cmova
            | M::Cmovs
            | M::Cmovns
            | M::Cmovp
            | M::Cmovnp
            | M::Cmovl
            | M::Cmovge
            | M::Cmovle
            | M::Cmovg
    )
}

fn mov_rm_rm(lx: &mut Lifter<'_>, insn: &Instruction) {
    let v = lx.read_op(insn, 1);
    lx.write_op(insn, 0, v);
}

/// `movzx` and (`signed`) `movsx r, rm`: the narrower source zero- or sign-extended.
fn extend_r_rm(lx: &mut Lifter<'_>, insn: &Instruction, signed: bool) {
    let to = dest_width(insn);
    let from = op_width(insn, 1).unwrap_or(Type::I8);
    let src = lx.loc(insn, 1);
    let v = lx.read(src, from);
    let v = if signed { lx.b.sext(v, to) } else { lx.b.resize(v, to) };
    lx.write_op(insn, 0, v);
}

/// `lea`: the address itself, truncated for a 16-bit destination.
fn lea_r_m(lx: &mut Lifter<'_>, insn: &Instruction) {
    let addr = lx.ea(insn);
    let v = lx.b.resize(addr, dest_width(insn));
    lx.write_op(insn, 0, v);
}

fn xchg_rm_r(lx: &mut Lifter<'_>, insn: &Instruction) {
    let (a_loc, a, b_loc, b) = lx.read_both(insn);
    lx.write(a_loc, b);
    lx.write(b_loc, a);
}

fn bswap_r32(lx: &mut Lifter<'_>, insn: &Instruction) {
    let v = lx.read_op(insn, 0);
    let r = lx.b.unary(UnaryOp::Bswap, v);
    lx.write_op(insn, 0, r);
}

/// `push`: the operand is read before esp moves, so `push esp` and `push [esp+4]` see the old esp.
fn push_rm_imm(lx: &mut Lifter<'_>, insn: &Instruction) {
    let v = lx.read_op(insn, 0);
    let v = lx.b.sext(v, Type::I32);
    lx.push32(v);
}

/// `pop`: esp moves before a memory destination's address is computed, as the manual specifies;
/// `pop esp` ends with the popped value in esp.
fn pop_rm(lx: &mut Lifter<'_>, insn: &Instruction) {
    let v = lx.pop32();
    lx.write_op(insn, 0, v);
}

/// `pushad`: eax, ecx, edx, ebx, the original esp, ebp, esi, edi, in that order.
fn pushad(lx: &mut Lifter<'_>, _insn: &Instruction) {
    let original_esp = lx.b.get(ESP);
    for slot in GPRS {
        let v = if slot == ESP { original_esp } else { lx.b.get(slot) };
        lx.push32(v);
    }
}

/// `popad`: the reverse of `pushad`; the saved esp is skipped, not loaded.
fn popad(lx: &mut Lifter<'_>, _insn: &Instruction) {
    for slot in GPRS.iter().rev() {
        let v = lx.pop32();
        if *slot != ESP {
            lx.b.set(*slot, v);
        }
    }
}

/// `leave`: `mov esp, ebp; pop ebp`.
fn leave(lx: &mut Lifter<'_>, _insn: &Instruction) {
    let ebp = lx.b.get(EBP);
    lx.b.set(ESP, ebp);
    let v = lx.pop32();
    lx.b.set(EBP, v);
}

/// `cdq` (eax into edx), `cwd` (ax into dx): `to` = the sign of `from`, repeated.
fn sign_fill(lx: &mut Lifter<'_>, from: Register, to: Register) {
    let v = lx.read_reg(from);
    let top = lx.b.ty(v).bits() - 1;
    let sign = lx.b.binary_imm(BinaryOp::Ashr, v, u64::from(top));
    lx.write_reg(to, sign);
}

/// `cwde` (ax into eax), `cbw` (al into ax): `to` = `from` sign-extended.
fn sign_extend(lx: &mut Lifter<'_>, from: Register, to: Register) {
    let Some((_, ty, _)) = reg_view(to) else { return };
    let v = lx.read_reg(from);
    let v = lx.b.convert(ConvOp::Sext, v, ty);
    lx.write_reg(to, v);
}

/// Every nop form (`nop`, `nop dword [eax+eax]`, `xchg eax, eax`): nothing, not even the memory operand is read.
fn nop(_lx: &mut Lifter<'_>, _insn: &Instruction) {}

fn cmc(lx: &mut Lifter<'_>, _insn: &Instruction) {
    let cf = lx.b.get(CF);
    let v = lx.not1(cf);
    lx.b.set(CF, v);
}

/// Bit positions of the flags `lahf`/`sahf` move (the low byte of EFLAGS).
const LAHF_BITS: [(rpt_ir::SlotId, u32); 5] = [(CF, 0), (PF, 2), (AF, 4), (ZF, 6), (SF, 7)];

/// `lahf`: ah = SF:ZF:0:AF:0:PF:1:CF.
fn lahf(lx: &mut Lifter<'_>, _insn: &Instruction) {
    let mut acc = lx.b.iconst(Type::I8, 2);
    for (slot, bit) in LAHF_BITS {
        let f = lx.b.get(slot);
        let f = lx.b.resize(f, Type::I8);
        let placed = if bit == 0 {
            f
        } else {
            lx.b.binary_imm(BinaryOp::Shl, f, u64::from(bit))
        };
        acc = lx.b.binary(BinaryOp::Or, acc, placed);
    }
    lx.write_reg(iced_x86::Register::AH, acc);
}

/// `sahf`: SF, ZF, AF, PF and CF from ah.
fn sahf(lx: &mut Lifter<'_>, _insn: &Instruction) {
    let ah = lx.read_reg(iced_x86::Register::AH);
    for (slot, bit) in LAHF_BITS {
        let f = lx.bit(ah, bit);
        lx.b.set(slot, f);
    }
}

fn setcc_rm8(lx: &mut Lifter<'_>, insn: &Instruction) {
    let c = lx.cond(insn.condition_code());
    let v = lx.b.resize(c, Type::I8);
    lx.write_op(insn, 0, v);
}

/// `cmovcc`: the source is read (a memory source is loaded) whatever the condition, as on hardware.
fn cmovcc_r_rm(lx: &mut Lifter<'_>, insn: &Instruction) {
    let (_, v) = lx.read_source(insn);
    let (dst, _, old) = lx.read_dest(insn);
    let c = lx.cond(insn.condition_code());
    let r = lx.b.select(c, v, old);
    lx.write(dst, r);
}
