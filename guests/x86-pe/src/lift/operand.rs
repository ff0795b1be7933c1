//! Operands: registers (with 8- and 16-bit views of the 32-bit slots), effective addresses, memory.

use iced_x86::{Instruction, MemorySize, OpKind, Register};
use rpt_ir::{AddrSpace, BinaryOp, Endian, SlotId, Type, Value};

use super::{Lifter, is_gpr};
use crate::state::{EAX, EBP, EBX, ECX, EDI, EDX, ESI, ESP};

/// A resolved operand: where to read it from and write it to.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Loc {
    /// A register (any width).
    Reg(Register),
    /// Guest memory at an i32 address, accessed as `ty`.
    Mem(Value, Type),
    /// An immediate, already sign- or zero-extended by the decoder as the encoding says.
    Imm(u64),
}

/// The 32-bit slot holding a register, the view's type and its bit offset (8 for ah/ch/dh/bh).
pub(crate) fn reg_view(r: Register) -> Option<(SlotId, Type, u32)> {
    use Register as R;
    Some(match r {
        R::EAX => (EAX, Type::I32, 0),
        R::ECX => (ECX, Type::I32, 0),
        R::EDX => (EDX, Type::I32, 0),
        R::EBX => (EBX, Type::I32, 0),
        R::ESP => (ESP, Type::I32, 0),
        R::EBP => (EBP, Type::I32, 0),
        R::ESI => (ESI, Type::I32, 0),
        R::EDI => (EDI, Type::I32, 0),
        R::AX => (EAX, Type::I16, 0),
        R::CX => (ECX, Type::I16, 0),
        R::DX => (EDX, Type::I16, 0),
        R::BX => (EBX, Type::I16, 0),
        R::SP => (ESP, Type::I16, 0),
        R::BP => (EBP, Type::I16, 0),
        R::SI => (ESI, Type::I16, 0),
        R::DI => (EDI, Type::I16, 0),
        R::AL => (EAX, Type::I8, 0),
        R::CL => (ECX, Type::I8, 0),
        R::DL => (EDX, Type::I8, 0),
        R::BL => (EBX, Type::I8, 0),
        R::AH => (EAX, Type::I8, 8),
        R::CH => (ECX, Type::I8, 8),
        R::DH => (EDX, Type::I8, 8),
        R::BH => (EBX, Type::I8, 8),
        _ => return None,
    })
}

/// The type of an access of `size`, for the integer widths the lifter handles.
fn mem_type(size: MemorySize) -> Option<Type> {
    match size.size() {
        1 => Some(Type::I8),
        2 => Some(Type::I16),
        4 => Some(Type::I32),
        _ => None,
    }
}

/// Where FS points: the one thread's TEB, which the platform fills in at start-up
/// (docs/c-abi.md, "x86 guest conventions"; `RPT_X86_TEB_ADDR` in the guest's C part).
pub(crate) const TEB_ADDR: u32 = 0x7fff_0000;

/// Whether the memory operand uses 32-bit addressing the lifter can model: flat, or FS-relative
/// (the TEB at [`TEB_ADDR`], as Win32 sets it up for its one thread).
///
/// GS is unused by Win32 on x86, and 16-bit addressing (`67` prefix) does not occur in 32-bit
/// compiler output.
pub(crate) fn addressing_ok(insn: &Instruction) -> bool {
    let reg_ok = |r: Register| r == Register::None || r.is_gpr32();
    reg_ok(insn.memory_base()) && reg_ok(insn.memory_index()) && insn.memory_segment() != Register::GS
}

/// Whether the memory operand is flat and, unless the instruction never accesses it (`lea`,
/// the long `nop` forms), an 8-, 16- or 32-bit access.
fn memory_ok(insn: &Instruction) -> bool {
    addressing_ok(insn)
        && (matches!(insn.mnemonic(), iced_x86::Mnemonic::Lea | iced_x86::Mnemonic::Nop)
            || mem_type(insn.memory_size()).is_some())
}

/// Whether every operand is a general register, a flat memory operand or an immediate.
pub(crate) fn operands_ok(insn: &Instruction) -> bool {
    (0..insn.op_count()).all(|i| match insn.op_kind(i) {
        OpKind::Register => is_gpr(insn.op_register(i)),
        OpKind::Memory => memory_ok(insn),
        OpKind::Immediate8
        | OpKind::Immediate16
        | OpKind::Immediate32
        | OpKind::Immediate8to16
        | OpKind::Immediate8to32
        | OpKind::Immediate8_2nd => true,
        _ => false,
    })
}

/// The width of operand `i` when it is a register or memory; `None` for immediates.
pub(crate) fn op_width(insn: &Instruction, i: u32) -> Option<Type> {
    match insn.op_kind(i) {
        OpKind::Register => reg_view(insn.op_register(i)).map(|(_, t, _)| t),
        OpKind::Memory => mem_type(insn.memory_size()),
        _ => None,
    }
}

/// The width of operand 0 (the destination of almost every instruction); i32 if it has none.
pub(crate) fn dest_width(insn: &Instruction) -> Type {
    op_width(insn, 0).unwrap_or(Type::I32)
}

impl Lifter<'_> {
    /// Resolves operand `i`; a memory operand's address is computed here, once.
    pub(crate) fn loc(&mut self, insn: &Instruction, i: u32) -> Loc {
        match insn.op_kind(i) {
            OpKind::Register => Loc::Reg(insn.op_register(i)),
            OpKind::Memory => {
                let addr = self.ea(insn);
                Loc::Mem(addr, mem_type(insn.memory_size()).unwrap_or(Type::I32))
            }
            _ => Loc::Imm(insn.immediate(i)),
        }
    }

    /// Reads a location; immediates become constants of `imm_ty`.
    pub(crate) fn read(&mut self, loc: Loc, imm_ty: Type) -> Value {
        match loc {
            Loc::Reg(r) => self.read_reg(r),
            Loc::Mem(addr, ty) => self.load(ty, addr),
            Loc::Imm(v) => self.b.iconst(imm_ty, v),
        }
    }

    /// Writes a location (immediates cannot be written; selection never asks for it).
    pub(crate) fn write(&mut self, loc: Loc, v: Value) {
        match loc {
            Loc::Reg(r) => self.write_reg(r, v),
            Loc::Mem(addr, _) => self.store(addr, v),
            Loc::Imm(_) => {}
        }
    }

    /// Reads operand `i`, with immediates typed as operand 0.
    pub(crate) fn read_op(&mut self, insn: &Instruction, i: u32) -> Value {
        let ty = dest_width(insn);
        let loc = self.loc(insn, i);
        self.read(loc, ty)
    }

    /// Resolves and reads operand 0, which the instruction reads before writing it: where it is,
    /// its width and its value.
    pub(crate) fn read_dest(&mut self, insn: &Instruction) -> (Loc, Type, Value) {
        let ty = dest_width(insn);
        let dst = self.loc(insn, 0);
        let v = self.read(dst, ty);
        (dst, ty, v)
    }

    /// Resolves and reads operand 1 at the destination's width: the width and the value.
    pub(crate) fn read_source(&mut self, insn: &Instruction) -> (Type, Value) {
        let ty = dest_width(insn);
        let src = self.loc(insn, 1);
        (ty, self.read(src, ty))
    }

    /// Resolves both operands of a two-operand instruction (the destination first), then reads
    /// them at the destination's width: (destination, its value, source, its value).
    pub(crate) fn read_both(&mut self, insn: &Instruction) -> (Loc, Value, Loc, Value) {
        let ty = dest_width(insn);
        let dst = self.loc(insn, 0);
        let src = self.loc(insn, 1);
        let a = self.read(dst, ty);
        let b = self.read(src, ty);
        (dst, a, src, b)
    }

    /// Writes operand `i`.
    pub(crate) fn write_op(&mut self, insn: &Instruction, i: u32, v: Value) {
        let loc = self.loc(insn, i);
        self.write(loc, v);
    }

    /// Reads a register: the 32-bit slot, shifted and truncated for 8- and 16-bit views.
    pub(crate) fn read_reg(&mut self, r: Register) -> Value {
        let Some((slot, ty, shift)) = reg_view(r) else {
            // Selection admits only general registers, so this is unreachable in practice.
            return self.b.iconst(Type::I32, 0);
        };
        let full = self.b.get(slot);
        if ty == Type::I32 {
            return full;
        }
        let shifted = if shift == 0 {
            full
        } else {
            self.b.binary_imm(BinaryOp::Lshr, full, u64::from(shift))
        };
        self.b.resize(shifted, ty)
    }

    /// Writes a register: 8- and 16-bit views are merged into the 32-bit slot, keeping the other bits.
    pub(crate) fn write_reg(&mut self, r: Register, v: Value) {
        let Some((slot, ty, shift)) = reg_view(r) else { return };
        if ty == Type::I32 {
            self.b.set(slot, v);
            return;
        }
        let old = self.b.get(slot);
        let keep = !((ty.mask() as u32) << shift);
        let kept = self.b.binary_imm(BinaryOp::And, old, u64::from(keep));
        let wide = self.b.resize(v, Type::I32);
        let placed = if shift == 0 {
            wide
        } else {
            self.b.binary_imm(BinaryOp::Shl, wide, u64::from(shift))
        };
        let merged = self.b.binary(BinaryOp::Or, kept, placed);
        self.b.set(slot, merged);
    }

    /// The effective address of the instruction's memory operand: base + index*scale + displacement,
    /// plus the TEB's address for an FS override.
    pub(crate) fn ea(&mut self, insn: &Instruction) -> Value {
        let mut disp = insn.memory_displacement32();
        if insn.memory_segment() == Register::FS {
            disp = disp.wrapping_add(TEB_ADDR);
        }
        let mut sum: Option<Value> = None;
        let base = insn.memory_base();
        if base != Register::None {
            sum = Some(self.read_reg(base));
        }
        let index = insn.memory_index();
        if index != Register::None {
            let mut iv = self.read_reg(index);
            let scale = insn.memory_index_scale();
            if scale > 1 {
                iv = self.b.binary_imm(BinaryOp::Shl, iv, u64::from(scale.trailing_zeros()));
            }
            sum = Some(match sum {
                Some(s) => self.b.binary(BinaryOp::Add, s, iv),
                None => iv,
            });
        }
        match sum {
            None => self.c32(disp),
            Some(s) if disp == 0 => s,
            Some(s) => self.b.binary_imm(BinaryOp::Add, s, u64::from(disp)),
        }
    }

    /// A little-endian load from guest memory.
    pub(crate) fn load(&mut self, ty: Type, addr: Value) -> Value {
        self.b.load(ty, Endian::Little, AddrSpace::RAM, addr)
    }

    /// A little-endian store to guest memory.
    pub(crate) fn store(&mut self, addr: Value, v: Value) {
        self.b.store(Endian::Little, AddrSpace::RAM, addr, v);
    }

    /// Pushes a 32-bit value: `esp -= 4; [esp] = v`.
    pub(crate) fn push32(&mut self, v: Value) {
        let esp = self.b.get(ESP);
        let new = self.b.binary_imm(BinaryOp::Sub, esp, 4);
        self.store(new, v);
        self.b.set(ESP, new);
    }

    /// Pops a 32-bit value: `v = [esp]; esp += 4`.
    pub(crate) fn pop32(&mut self) -> Value {
        let esp = self.b.get(ESP);
        let v = self.load(Type::I32, esp);
        let new = self.b.binary_imm(BinaryOp::Add, esp, 4);
        self.b.set(ESP, new);
        v
    }
}
