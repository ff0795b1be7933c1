//! The lifter: one guest function (its CFG from `discover`) into one IR function.
//!
//! Every guest instruction starts with `mark pc`; guest basic blocks become IR blocks, and
//! `block0` only jumps to the entry's guest block so that a loop back to the function's
//! first instruction is an ordinary jump. State lives in slots: each instruction reads the
//! registers and flags it needs and writes back what it changes, and later passes remove the
//! redundancy. Memory accesses are little-endian loads and stores in `ram` with i32 addresses.
//!
//! What an instruction does is chosen by [`classify`], the one table both discovery and the
//! lifter use, so "discovery thinks this is liftable" and "the lifter lifts it" cannot differ.
//!
//! Choices where the manual leaves results undefined (the instruction oracle masks exactly these):
//! - AF after logic ops and after shifts (shl/shr/sar/shld/shrd) by a nonzero count: 0.
//! - OF after shifts and rotates by counts other than 1: the count-1 formula.
//! - CF after 8- and 16-bit shl/shr by a count at least the width: the bit shifted out of a
//!   32-bit copy, which is 0.
//! - Left unchanged, because the instruction does not write them: SF, ZF, AF, PF after
//!   `mul`/`imul`; all six flags after `div`/`idiv`; CF, OF, SF, AF, PF after `bsf`/`bsr`;
//!   OF, SF, AF, PF after `bt`/`bts`/`btr`/`btc`.
//! - `bsf`/`bsr` of zero leave the destination unchanged (what the CPUs do).
//! - `int3` exits with `invalid_opcode`: there is no debugger to trap into, and the runtime
//!   reports the address just as it does for `ud2`.

mod alu;
mod control;
mod data;
mod flags;
pub(crate) mod jump_table;
mod muldiv;
mod operand;

#[cfg(test)]
pub(crate) use operand::TEB_ADDR;
mod shift;
mod sse;
mod string;
mod x87;

use std::collections::BTreeMap;

use iced_x86::{Instruction, Register};
use rpt_api::{Diagnostic, GuestImage, LiftResult, Severity};
use rpt_ir::{Block, ExitReason, Function, FunctionBuilder, GuestAddr, Type, Value};

use crate::decode::{self, Disassembler};
use crate::discover::{Failure, FunctionCfg, Walker};

/// Lifts one straight-line instruction into the current block.
pub(crate) type Handler = fn(&mut Lifter<'_>, &Instruction);

/// Computes the `i1` condition of a conditional branch (it may also update state, as `loop` does).
pub(crate) type CondFn = fn(&mut Lifter<'_>, &Instruction) -> Value;

/// What an instruction does to control flow, and how to lift it.
#[derive(Clone, Copy)]
pub(crate) enum Kind {
    /// Falls through to the next instruction.
    Plain(Handler),
    /// Goes to `near_branch_target()` when the condition holds, else falls through.
    Branch(CondFn),
    /// `jmp rel`.
    Jump,
    /// `jmp r/m32`.
    JumpIndirect,
    /// `call rel32`.
    Call,
    /// `call r/m32`.
    CallIndirect,
    /// `ret` / `ret imm16`.
    Return,
    /// Leaves lifted code for the runtime (`hlt`, `ud2`, `int3`).
    Stop(ExitReason),
}

/// The table: which instructions rpt lifts and how. `None` means "not liftable".
pub(crate) fn classify(insn: &Instruction) -> Option<Kind> {
    if let Some(kind) = control::select(insn) {
        return Some(kind);
    }
    if let Some(h) = string::select(insn) {
        return Some(Kind::Plain(h));
    }
    if let Some(h) = sse::select(insn) {
        return Some(Kind::Plain(h));
    }
    if let Some(h) = x87::select(insn) {
        return Some(Kind::Plain(h));
    }
    if !operand::operands_ok(insn) {
        return None;
    }
    let handler = data::select(insn)
        .or_else(|| alu::select(insn))
        .or_else(|| shift::select(insn))
        .or_else(|| muldiv::select(insn))?;
    Some(Kind::Plain(handler))
}

/// The state of lifting one instruction: the builder and where the instruction is.
pub(crate) struct Lifter<'a> {
    /// The builder, positioned in the block the instruction continues.
    pub(crate) b: FunctionBuilder<'a>,
    /// The instruction's address.
    pub(crate) pc: GuestAddr,
    /// Whether `ret` stores the return address in `eip` (the `ret_eip` guest option).
    pub(crate) ret_eip: bool,
}

impl Lifter<'_> {
    /// An i32 constant.
    pub(crate) fn c32(&mut self, v: u32) -> Value {
        self.b.iconst(Type::I32, u64::from(v))
    }

    /// Ends the current block with an exit to the runtime at this instruction.
    pub(crate) fn exit_here(&mut self, reason: ExitReason) {
        let pc = self.pc;
        self.b.exit_at(pc, reason, Type::I32);
    }
}

/// Lifts the function at `entry`.
pub(crate) fn lift_function(walker: &Walker<'_>, entry: GuestAddr, ret_eip: bool) -> LiftResult {
    let cfg = walker.walk(entry);
    let state = crate::state::state_desc();
    let mut function = Function::new(entry);
    let mut fl = FnLift {
        walker,
        ret_eip,
        cfg: &cfg,
        diagnostics: Vec::new(),
        listing: Vec::new(),
        disasm: Disassembler::new(),
    };
    {
        let b = FunctionBuilder::new(&mut function, &state);
        fl.build(b);
    }
    fl.diagnostics.sort_by_key(|d| d.addr);
    // Overlapping instruction streams can lift one address in two blocks; the listing names it once.
    fl.listing.sort_by_key(|(addr, _)| *addr);
    fl.listing.dedup_by_key(|(addr, _)| *addr);
    LiftResult {
        function,
        diagnostics: fl.diagnostics,
        listing: fl.listing,
    }
}

struct FnLift<'w> {
    walker: &'w Walker<'w>,
    ret_eip: bool,
    cfg: &'w FunctionCfg,
    diagnostics: Vec<Diagnostic>,
    listing: Vec<(GuestAddr, String)>,
    disasm: Disassembler,
}

impl FnLift<'_> {
    fn build(&mut self, mut b: FunctionBuilder<'_>) {
        let blocks: BTreeMap<GuestAddr, Block> = self.cfg.block_starts.keys().map(|&a| (a, b.create_block())).collect();
        if let Some(&first) = blocks.get(&self.cfg.entry.addr) {
            b.jump(first, Vec::new());
        }
        let mut lx = Lifter {
            b,
            pc: self.cfg.entry.addr,
            ret_eip: self.ret_eip,
        };
        for (&start, &block) in &blocks {
            lx.b.switch_to_block(block);
            self.lift_block(&mut lx, &blocks, start);
        }
    }

    /// Lifts the guest block at `start` into the current IR block, up to its terminator or the next block.
    fn lift_block(&mut self, lx: &mut Lifter<'_>, blocks: &BTreeMap<GuestAddr, Block>, start: GuestAddr) {
        let mut pc = start;
        // The index register's value saved before a `mov reg, [idx*4+table]` whose `jmp reg` is a switch.
        let mut saved_index: Option<Value> = None;
        loop {
            lx.pc = pc;
            let Some(insn) = self.cfg.insns.get(&pc) else {
                self.unlifted(lx, pc);
                return;
            };
            // Every marked instruction gets a listing line, an unliftable one too, so the
            // listing and the line table describe the same instructions.
            lx.b.mark(pc);
            self.listing.push((pc, self.disasm.text(insn)));
            let Some(kind) = classify(insn) else {
                self.unlifted(lx, pc);
                return;
            };
            let next = GuestAddr(insn.next_ip32().into());
            match kind {
                Kind::Plain(handler) => {
                    if let Some(table) = self.cfg.jump_tables.values().find(|t| t.load_at == Some(pc)) {
                        saved_index = Some(lx.b.get(table.index_slot));
                    }
                    handler(lx, insn);
                }
                Kind::Call if insn.near_branch_target() == u64::from(insn.next_ip32()) => {
                    // `call $+5` only pushes its own return address (a PC-relative idiom).
                    control::push_return_address(lx, insn);
                }
                _ => {
                    let mut cx = control::BlockCx {
                        walker: self.walker,
                        cfg: self.cfg,
                        blocks,
                        saved_index,
                        diags: Vec::new(),
                    };
                    control::lift_terminator(lx, &mut cx, insn, kind);
                    self.diagnostics.append(&mut cx.diags);
                    return;
                }
            }
            if let Some(&block) = blocks.get(&next) {
                lx.b.jump(block, Vec::new());
                return;
            }
            pc = next;
        }
    }

    /// Ends the block with `exit pc, unlifted` and records why.
    fn unlifted(&mut self, lx: &mut Lifter<'_>, pc: GuestAddr) {
        let message = match self.cfg.failures.get(&pc) {
            Some(f) => describe_failure(self.walker.image(), f, &mut self.disasm),
            None => "no instruction was decoded here".to_string(),
        };
        self.diagnostics.push(Diagnostic {
            severity: Severity::Error,
            addr: pc,
            message,
        });
        lx.exit_here(ExitReason::Unlifted);
    }
}

/// Says what could not be lifted: the mnemonic and the bytes, or why nothing decoded.
pub(crate) fn describe_failure(image: &GuestImage, failure: &Failure, disasm: &mut Disassembler) -> String {
    match failure {
        Failure::Decode(e) => format!("cannot decode: {e}"),
        Failure::Unsupported(insn) => format!(
            "cannot lift `{}` ({}): the x86 lifter does not handle this instruction",
            disasm.text(insn),
            decode::hex_bytes(&decode::insn_bytes(image, insn))
        ),
    }
}

/// Whether a register is one the lifter models (the 8-, 16- and 32-bit general registers).
pub(crate) fn is_gpr(r: Register) -> bool {
    r.is_gpr8() || r.is_gpr16() || r.is_gpr32()
}
