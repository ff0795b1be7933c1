//! The lifter: one guest function (its CFG from `discover`) into one IR function.
//!
//! `rpt_api::lift` walks the function's blocks (a `mark pc` and a listing line per instruction,
//! `exit pc, unlifted` where nothing can be lifted); this module lifts one instruction at a time
//! for it ([`InsnLifter`]). State lives in slots: each instruction reads the registers and flags
//! it needs and writes back what it changes, and later passes remove the redundancy. Memory
//! accesses are little-endian loads and stores in `ram` with i32 addresses.
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

use iced_x86::{Code, Instruction, Register};
use rpt_api::GuestImage;
use rpt_api::LiftResult;
use rpt_api::lift::{self, BlockContext, InsnLifter, Step};
use rpt_ir::{BlockCall, CallTarget, ExitReason, FunctionBuilder, GuestAddr, IntCC, Terminator, Type, Value};

use crate::decode::{self, Disassembler};
use crate::discover::{Failure, Walker, X86};
use crate::eh::{EH_FRAME_EXTERN, EH_INSTALL_EXTERN};
use crate::state::EIP;

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
    /// The last comparison whose flags a condition may read as a direct comparison of its
    /// operands (`flags.rs`); `None` at the start of every guest block.
    pub(crate) last_compare: Option<flags::Compare>,
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
    lift::lift_function(walker, entry, &crate::state::state_desc(), |b, lifting| {
        lifting.lift_blocks(function_lifter(walker, b, entry, ret_eip))
    })
}

/// The instruction at `addr` lifted alone for the run-time tier (`rpt_api::tier`), by the same
/// lifter as a function's instructions; `None` when nothing decodes there. An instruction alone
/// owns no landing pads: a function that has them is an entry of its own, never tier code.
pub(crate) fn lift_instruction(walker: &Walker<'_>, addr: GuestAddr, ret_eip: bool) -> Option<LiftResult> {
    lift::lift_instruction(walker, addr, &crate::state::state_desc(), |b, lifting| {
        let mut lifter = function_lifter(walker, b, addr, ret_eip);
        lifter.eh_entry = None;
        lifting.lift_blocks(lifter)
    })
}

/// The lifter of the function at `entry` (or of one instruction there).
fn function_lifter<'f>(
    walker: &Walker<'_>,
    b: FunctionBuilder<'f>,
    entry: GuestAddr,
    ret_eip: bool,
) -> FunctionLifter<'f> {
    let eh = &walker.isa().eh;
    FunctionLifter {
        lx: Lifter {
            b,
            pc: entry,
            ret_eip,
            last_compare: None,
        },
        disasm: Disassembler::new(),
        saved_index: None,
        eh_entry: eh.owns_landing_pads(entry).then_some(entry),
        eh_return: !eh.is_empty(),
        sets_esp_from_ecx: false,
    }
}

/// The x86 lifter as the shared loop drives it.
struct FunctionLifter<'f> {
    lx: Lifter<'f>,
    disasm: Disassembler,
    /// The index register's value saved before a `mov reg, [idx*4+table]` whose `jmp reg` is a switch.
    saved_index: Option<Value>,
    /// The entry, while its resume-point check is still to be lifted: the function owns C++
    /// landing pads (docs/cxx-exceptions.md).
    eh_entry: Option<GuestAddr>,
    /// Whether the image has landing pads, so that `mov esp, ecx; ret` is the unwinder's jump to one.
    eh_return: bool,
    /// Whether the previous instruction of this block was `mov esp, ecx`.
    sets_esp_from_ecx: bool,
}

impl FunctionLifter<'_> {
    /// The start of a function owning landing pads: unless eip is the function's own address
    /// (set by `rpt_x86_eh_frame` just before it dispatches the function), set it and call
    /// `rpt_x86_eh_frame`, which runs the function under a resume point and returns when it does.
    fn eh_frame_check(&mut self, entry: GuestAddr) {
        let b = &mut self.lx.b;
        let eip = b.get(EIP);
        let is_body = b.icmp_imm(IntCC::Eq, eip, entry.0);
        let (body, enter, done) = (b.create_block(), b.create_block(), b.create_block());
        b.branch(is_body, body, enter);
        b.switch_to_block(enter);
        let own = b.iconst(Type::I32, entry.0);
        b.set(EIP, own);
        b.terminate(Terminator::Call {
            target: CallTarget::Direct(EH_FRAME_EXTERN),
            cont: BlockCall::plain(done),
        });
        b.switch_to_block(done);
        b.terminate(Terminator::Return);
        b.switch_to_block(body);
        let zero = b.iconst(Type::I32, 0);
        b.set(EIP, zero);
    }
}

impl<'f> InsnLifter<'f, X86> for FunctionLifter<'f> {
    const PC_TYPE: Type = Type::I32;

    fn builder(&mut self) -> &mut FunctionBuilder<'f> {
        &mut self.lx.b
    }

    /// The saved switch index belongs to its guest block.
    fn start_block(&mut self) {
        self.saved_index = None;
        self.lx.last_compare = None;
        self.sets_esp_from_ecx = false;
    }

    fn set_pc(&mut self, pc: GuestAddr) {
        self.lx.pc = pc;
    }

    fn listing_text(&mut self, insn: &Instruction) -> String {
        self.disasm.text(insn)
    }

    /// Where nothing decodes there is no instruction to list.
    fn undecoded_listing_text(&mut self, _: Option<&Failure>) -> Option<String> {
        None
    }

    fn lift(&mut self, insn: &Instruction, cx: &mut BlockContext<'_, X86>) -> Step {
        let Some(kind) = classify(insn) else {
            return Step::Unliftable;
        };
        let pc = self.lx.pc;
        if let Some(entry) = self.eh_entry.take_if(|e| *e == pc) {
            self.eh_frame_check(entry);
        }
        let after_mov_esp_ecx = std::mem::replace(
            &mut self.sets_esp_from_ecx,
            matches!(insn.code(), Code::Mov_r32_rm32 | Code::Mov_rm32_r32)
                && insn.op0_register() == Register::ESP
                && insn.op1_register() == Register::ECX,
        );
        if matches!(kind, Kind::Return) && insn.op_count() == 0 && after_mov_esp_ecx && self.eh_return {
            // `mov esp, ecx; ret`: __builtin_eh_return's epilogue, the unwinder's jump to a landing pad.
            self.lx.b.terminate(Terminator::TailCall {
                target: CallTarget::Direct(EH_INSTALL_EXTERN),
            });
            return Step::Ended;
        }
        match kind {
            Kind::Plain(handler) => {
                if let Some(table) = cx.cfg.jump_tables.values().find(|t| t.load_at == Some(pc)) {
                    self.saved_index = Some(self.lx.b.get(table.index_slot));
                }
                handler(&mut self.lx, insn);
            }
            Kind::Call if insn.near_branch_target() == u64::from(insn.next_ip32()) => {
                // `call $+5` only pushes its own return address (a PC-relative idiom).
                control::push_return_address(&mut self.lx, insn);
            }
            _ => {
                let mut bcx = control::BlockCx {
                    walker: cx.walker,
                    cfg: cx.cfg,
                    blocks: cx.blocks,
                    saved_index: self.saved_index,
                    diags: Vec::new(),
                };
                control::lift_terminator(&mut self.lx, &mut bcx, insn, kind);
                cx.diagnostics.append(&mut bcx.diags);
                return Step::Ended;
            }
        }
        Step::Next(GuestAddr(insn.next_ip32().into()))
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
