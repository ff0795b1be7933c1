//! Control flow: jcc, loop, jecxz, jmp, call, ret, and the instructions that stop (hlt, ud2, int3).
//!
//! `call` stores the return address at esp-4 and ends the block with an IR `call` whose
//! continuation is the next guest block; `ret` pops it again (esp += 4 + imm) without checking it.
//! A jump to another function's entry is a tail call. `call [slot]`/`jmp [slot]` through an import's
//! IAT slot become direct calls to the import's thunk, so the extern is called without dispatch.
//! A call of `setjmp` (an import that returns twice) stores its return address in `eip` and becomes
//! a tail call; the code after it is a function of its own (see `discover`).

use std::collections::BTreeMap;

use iced_x86::{Code, Instruction, Mnemonic, OpKind};
use rpt_api::{Diagnostic, Severity};
use rpt_ir::{BinaryOp, Block, BlockCall, CallTarget, ExitReason, GuestAddr, IntCC, Terminator, Type, Value};

use super::operand::addressing_ok;
use super::{Kind, Lifter};
use crate::discover::{FunctionCfg, Walker};
use crate::state::{ECX, EIP, ESP};

/// Picks the control-flow kind of a branch, jump, call, return or stop; `None` for everything else.
pub(crate) fn select(insn: &Instruction) -> Option<Kind> {
    let near = insn.op_count() == 1 && insn.op_kind(0) == OpKind::NearBranch32;
    let indirect = insn.op_count() == 1
        && match insn.op_kind(0) {
            OpKind::Register => insn.op_register(0).is_gpr32(),
            OpKind::Memory => addressing_ok(insn) && insn.memory_size().size() == 4,
            _ => false,
        };
    Some(match insn.mnemonic() {
        m if is_jcc(m) => {
            if !near {
                return None;
            }
            Kind::Branch(jcc_cond)
        }
        Mnemonic::Loop if insn.code() == Code::Loop_rel8_32_ECX => Kind::Branch(loop_cond),
        Mnemonic::Jecxz if insn.code() == Code::Jecxz_rel8_32 => Kind::Branch(jecxz_cond),
        Mnemonic::Jmp if near => Kind::Jump,
        Mnemonic::Jmp if indirect => Kind::JumpIndirect,
        Mnemonic::Call if near => Kind::Call,
        Mnemonic::Call if indirect => Kind::CallIndirect,
        // `rep ret` (an old AMD branch-predictor idiom) is an ordinary ret.
        Mnemonic::Ret if matches!(insn.code(), Code::Retnd | Code::Retnd_imm16) => Kind::Return,
        Mnemonic::Hlt => Kind::Stop(ExitReason::Halt),
        Mnemonic::Ud2 => Kind::Stop(ExitReason::InvalidOpcode),
        // No debugger is attached to recompiled code, so a breakpoint is reported like `ud2`.
        Mnemonic::Int3 => Kind::Stop(ExitReason::InvalidOpcode),
        _ => return None,
    })
}

fn is_jcc(m: Mnemonic) -> bool {
    use Mnemonic as M;
    matches!(
        m,
        M::Jo
            | M::Jno
            | M::Jb
            | M::Jae
            | M::Je
            | M::Jne
            | M::Jbe
            | M::Ja
            | M::Js
            | M::Jns
            | M::Jp
            | M::Jnp
            | M::Jl
            | M::Jge
            | M::Jle
            | M::Jg
    )
}

fn jcc_cond(lx: &mut Lifter<'_>, insn: &Instruction) -> Value {
    lx.cond(insn.condition_code())
}

/// `loop`: decrement ecx (flags untouched) and branch while it is not zero.
fn loop_cond(lx: &mut Lifter<'_>, _insn: &Instruction) -> Value {
    let ecx = lx.b.get(ECX);
    let ecx = lx.b.binary_imm(BinaryOp::Sub, ecx, 1);
    lx.b.set(ECX, ecx);
    lx.b.icmp_imm(IntCC::Ne, ecx, 0)
}

/// `jecxz`: branch when ecx is zero.
fn jecxz_cond(lx: &mut Lifter<'_>, _insn: &Instruction) -> Value {
    let ecx = lx.b.get(ECX);
    lx.b.icmp_imm(IntCC::Eq, ecx, 0)
}

/// What terminators need beyond the instruction: the function's CFG and its blocks.
pub(crate) struct BlockCx<'c> {
    /// Program-wide facts (functions, imports).
    pub(crate) walker: &'c Walker<'c>,
    /// This function's CFG.
    pub(crate) cfg: &'c FunctionCfg,
    /// The IR block of each guest block.
    pub(crate) blocks: &'c BTreeMap<GuestAddr, Block>,
    /// The switch index saved before a `mov reg, [idx*4+table]` (the two-instruction jump-table form).
    pub(crate) saved_index: Option<Value>,
    /// Diagnostics found while lifting terminators.
    pub(crate) diags: Vec<Diagnostic>,
}

impl BlockCx<'_> {
    /// The block control reaches at `addr`: a guest block of this function, or a new block
    /// that tail-calls another function (the walker made the same choice when it built the CFG).
    fn dest(&self, lx: &mut Lifter<'_>, addr: GuestAddr) -> Block {
        if let Some(&b) = self.blocks.get(&addr)
            && !self.walker.is_tail_target(addr, (), self.cfg.entry.addr)
        {
            return b;
        }
        let here = lx.b.current_block();
        let stub = lx.b.create_block();
        lx.b.switch_to_block(stub);
        if self.walker.is_function(addr) || self.walker.isa().is_thunk(addr) {
            lx.b.terminate(Terminator::TailCall {
                target: CallTarget::Direct(addr),
            });
        } else {
            // The walker records every intra-function target as a block, so this is only reached
            // for a target it could not follow; the runtime reports the address if it is ever taken.
            lx.b.exit_at(addr, ExitReason::Unlifted, Type::I32);
        }
        lx.b.switch_to_block(here);
        stub
    }

    /// A block that leaves lifted code at `addr` (after a call that never returns).
    fn exit_block(lx: &mut Lifter<'_>, addr: GuestAddr) -> Block {
        let here = lx.b.current_block();
        let block = lx.b.create_block();
        lx.b.switch_to_block(block);
        lx.b.exit_at(addr, ExitReason::Unlifted, Type::I32);
        lx.b.switch_to_block(here);
        block
    }
}

/// `call $+5` and every call: store the return address below esp.
pub(crate) fn push_return_address(lx: &mut Lifter<'_>, insn: &Instruction) {
    let ret = lx.c32(insn.next_ip32());
    lx.push32(ret);
}

/// Lifts a block-ending instruction.
pub(crate) fn lift_terminator(lx: &mut Lifter<'_>, cx: &mut BlockCx<'_>, insn: &Instruction, kind: Kind) {
    let pc = lx.pc;
    let next = GuestAddr(insn.next_ip32().into());
    match kind {
        Kind::Plain(handler) => {
            // Plain instructions never end a block here; lift it and fall through for safety.
            handler(lx, insn);
            let dest = cx.dest(lx, next);
            lx.b.jump(dest, Vec::new());
        }
        Kind::Branch(cond) => {
            let c = cond(lx, insn);
            let then_block = cx.dest(lx, GuestAddr(insn.near_branch_target()));
            let else_block = cx.dest(lx, next);
            lx.b.branch(c, then_block, else_block);
        }
        Kind::Jump => {
            let dest = cx.dest(lx, GuestAddr(insn.near_branch_target()));
            lx.b.jump(dest, Vec::new());
        }
        Kind::JumpIndirect => jump_indirect(lx, cx, insn),
        Kind::Call | Kind::CallIndirect => {
            let target = if matches!(kind, Kind::Call) {
                let t = GuestAddr(insn.near_branch_target());
                if cx.walker.is_function(t) || cx.walker.isa().is_thunk(t) {
                    CallTarget::Direct(t)
                } else {
                    cx.diags.push(Diagnostic {
                        severity: Severity::Warning,
                        addr: pc,
                        message: format!(
                            "call to {t} which is not a discovered function; it is dispatched at run time"
                        ),
                    });
                    CallTarget::Indirect(lx.c32(t.0 as u32))
                }
            } else if let Some(thunk) = cx.walker.isa().iat_operand(insn) {
                CallTarget::Direct(thunk)
            } else {
                // Read the target before esp moves: `call [esp+4]` means the old esp.
                CallTarget::Indirect(lx.read_op(insn, 0))
            };
            push_return_address(lx, insn);
            if cx.cfg.returns_twice_calls.contains(&pc) {
                // `setjmp`: the code after the call is its own function, which the platform's
                // setjmp dispatches under a resume point; eip tells it the call was recognised.
                let ret = lx.c32(insn.next_ip32());
                lx.b.set(EIP, ret);
                lx.b.terminate(Terminator::TailCall { target });
                return;
            }
            let cont = if cx.cfg.noreturn_calls.contains(&pc) {
                BlockCx::exit_block(lx, next)
            } else {
                cx.dest(lx, next)
            };
            lx.b.terminate(Terminator::Call {
                target,
                cont: BlockCall::plain(cont),
            });
        }
        Kind::Return => {
            let extra = if insn.op_count() == 1 {
                insn.immediate(0) as u32 & 0xffff
            } else {
                0
            };
            let esp = lx.b.get(ESP);
            if lx.ret_eip {
                // Only for measuring what leaving it out saves: nothing reads eip after a lifted
                // return (the caller continues at its own continuation block).
                let ret = lx.load(Type::I32, esp);
                lx.b.set(EIP, ret);
            }
            let esp = lx.b.binary_imm(BinaryOp::Add, esp, u64::from(4 + extra));
            lx.b.set(ESP, esp);
            lx.b.terminate(Terminator::Return);
        }
        Kind::Stop(reason) => lx.exit_here(reason),
    }
}

fn jump_indirect(lx: &mut Lifter<'_>, cx: &mut BlockCx<'_>, insn: &Instruction) {
    let pc = lx.pc;
    if let Some(thunk) = cx.walker.isa().iat_operand(insn) {
        lx.b.terminate(Terminator::TailCall {
            target: CallTarget::Direct(thunk),
        });
        return;
    }
    if let Some(table) = cx.cfg.jump_tables.get(&pc) {
        let index = match table.load_at {
            Some(_) => cx.saved_index,
            None => Some(lx.b.get(table.index_slot)),
        };
        if let Some(index) = index {
            // Out-of-range indices cannot reach here past the bounds check, but if they do, the
            // original jump is still right: it goes wherever the table (or register) says. So
            // does an index whose entry is not one of this function's cases.
            let here = lx.b.current_block();
            let fallback = lx.b.create_block();
            let cases: Vec<BlockCall> = table
                .by_index
                .iter()
                .map(|t| BlockCall::plain(t.map_or(fallback, |t| cx.dest(lx, t))))
                .collect();
            lx.b.switch_to_block(fallback);
            let target = lx.read_op(insn, 0);
            lx.b.terminate(Terminator::TailCall {
                target: CallTarget::Indirect(target),
            });
            lx.b.switch_to_block(here);
            lx.b.terminate(Terminator::Switch {
                index,
                cases,
                default: BlockCall::plain(fallback),
            });
            return;
        }
    }
    let target = lx.read_op(insn, 0);
    lx.b.terminate(Terminator::TailCall {
        target: CallTarget::Indirect(target),
    });
}
