//! Branches: `b`, `bc` with every BO form (CR test, CTR decrement), `bclr`, `bcctr`, with and
//! without link; traps. Each ends its IR block (except `bl $+4`, which only loads LR).

use std::collections::BTreeMap;

use rpt_api::{Diagnostic, Severity};
use rpt_ir::{BinaryOp, Block, BlockCall, CallTarget, ExitReason, GuestAddr, IntCC, Terminator, Value};

use super::{Flow, Lifter};
use crate::decode::Insn;
use crate::discover::{FunctionCfg, Ppc};
use crate::state::{CTR, LR};
use rpt_api::discover::Isa;

impl Lifter<'_> {
    /// The branch condition of BO/BI, decrementing CTR when BO says so; `None` for "always".
    fn branch_condition(&mut self, insn: &Insn, may_decrement: bool) -> Option<Value> {
        let (bo, bi) = (insn.rd(), insn.ra());
        let mut cond: Option<Value> = None;
        if bo & 4 == 0 && may_decrement {
            let ctr = self.b.get(CTR);
            let ctr = self.b.binary_imm(BinaryOp::Sub, ctr, 1);
            self.b.set(CTR, ctr);
            let cc = if bo & 2 != 0 { IntCC::Eq } else { IntCC::Ne };
            cond = Some(self.b.icmp_imm(cc, ctr, 0));
        }
        if bo & 16 == 0 {
            let bit = self.cr_bit_value(bi);
            let want = if bo & 8 != 0 {
                bit
            } else {
                self.b.unary(rpt_ir::UnaryOp::Not, bit)
            };
            cond = Some(match cond {
                Some(c) => self.b.binary(BinaryOp::And, c, want),
                None => want,
            });
        }
        cond
    }

    fn set_lr(&mut self, insn: &Insn) {
        let next = self.c32(insn.next().0 as u32);
        self.b.set(LR, next);
    }

    /// A block that does `term` and nothing else.
    fn block_with(&mut self, term: Terminator) -> Block {
        let here = self.b.current_block();
        let block = self.b.create_block();
        self.b.switch_to_block(block);
        self.b.terminate(term);
        self.b.switch_to_block(here);
        block
    }
}

/// Lifts a control-flow instruction; returns whether it ended the block.
pub(crate) fn lift_control(
    lx: &mut Lifter<'_>,
    isa: &Ppc,
    cfg: &FunctionCfg,
    blocks: &BTreeMap<GuestAddr, Block>,
    insn: &Insn,
    diags: &mut Vec<Diagnostic>,
) -> bool {
    let next = insn.next();
    let next_block = blocks.get(&next).copied();
    // Where a direct transfer to `target` goes: a block of this function, or another function
    // (an import among them: the program's own setjmp or longjmp, which the platform runs).
    let mut goto = |lx: &mut Lifter<'_>, target: GuestAddr| -> Block {
        if let Some(&b) = blocks.get(&target) {
            return b;
        }
        if cfg.calls_entry(target, ()) || isa.external(target).is_some() {
            return lx.block_with(Terminator::TailCall {
                target: CallTarget::Direct(target),
            });
        }
        report_not_code(diags, insn, "branch", target);
        let pc = lx.c32(target.0 as u32);
        lx.block_with(Terminator::Exit {
            pc,
            reason: ExitReason::Unlifted,
        })
    };
    let continue_at = |lx: &mut Lifter<'_>| -> Block {
        match next_block {
            Some(b) => b,
            // A call that never returns: control cannot come back here.
            None => lx.block_with(Terminator::Unreachable),
        }
    };
    // Ends the block: always to `taken`, or to `taken` when `cond` holds and else on.
    let jump_or_branch = |lx: &mut Lifter<'_>, cond: Option<Value>, taken: Block| match cond {
        None => lx.b.jump(taken, Vec::new()),
        Some(c) => {
            let fall = continue_at(lx);
            lx.b.branch(c, taken, fall);
        }
    };
    match insn.row.flow {
        Flow::Plain(_) => false,
        Flow::Branch | Flow::BranchCond => {
            let link = insn.bit0();
            let target = insn.branch_target();
            let cond = if matches!(insn.row.flow, Flow::BranchCond) {
                lx.branch_condition(insn, true)
            } else {
                None
            };
            if link {
                lx.set_lr(insn);
                if target == next {
                    // `bl $+4` / `bcl 20,31,$+4`: only LR changes; a conditional one branches to next either way.
                    return false;
                }
            }
            let taken = if link && cfg.returns_twice_calls.contains(&insn.addr) {
                // A call of the program's setjmp: the code after it is a function of its own,
                // which the platform's setjmp dispatches under a resume point (lr names it);
                // ctr = lr tells it the call was recognised (ctr is free at a call in the ABI).
                let ret = lx.c32(next.0 as u32);
                lx.b.set(CTR, ret);
                lx.block_with(Terminator::TailCall {
                    target: CallTarget::Direct(target),
                })
            } else if link && (cfg.calls_entry(target, ()) || isa.external(target).is_some()) {
                let cont = continue_at(lx);
                lx.block_with(Terminator::Call {
                    target: CallTarget::Direct(target),
                    cont: BlockCall::plain(cont),
                })
            } else if link {
                // A call of something that is not code: glibc's guarded calls of undefined weak
                // functions (`bl 0x80000000` after a test of the symbol's address) are never taken
                // on the paths a program runs. If one is, it is a guest fault at this call (the
                // report names it and its target), not a jump into whatever lies at the target.
                report_not_code(diags, insn, "call", target);
                let pc = lx.c32(insn.addr.0 as u32);
                lx.block_with(Terminator::Exit {
                    pc,
                    reason: ExitReason::Unliftable,
                })
            } else {
                goto(lx, target)
            };
            jump_or_branch(lx, cond, taken);
            true
        }
        Flow::BranchLr | Flow::BranchCtr => {
            let is_lr = matches!(insn.row.flow, Flow::BranchLr);
            // The target is read before LK overwrites LR (`blrl` calls the old LR).
            let target = lx.b.get(if is_lr { LR } else { CTR });
            let cond = lx.branch_condition(insn, is_lr);
            let link = insn.bit0();
            if link {
                lx.set_lr(insn);
            }
            let taken = if link {
                let cont = continue_at(lx);
                lx.block_with(Terminator::Call {
                    target: CallTarget::Indirect(target),
                    cont: BlockCall::plain(cont),
                })
            } else if is_lr {
                lx.block_with(Terminator::Return)
            } else if let Some(table) = cfg.jump_tables.get(&insn.addr) {
                jump_table_block(lx, cfg, blocks, table, target)
            } else {
                lx.block_with(Terminator::TailCall {
                    target: CallTarget::Indirect(target),
                })
            };
            jump_or_branch(lx, cond, taken);
            true
        }
        Flow::Trap => {
            let a = lx.gpr(insn.ra());
            let b = if insn.row.name == "twi" {
                lx.c32(insn.simm() as u32)
            } else {
                lx.gpr(insn.rb())
            };
            let to = insn.rd();
            let mut cond = lx.c1(false);
            for (bit, cc) in [
                (16, IntCC::Slt),
                (8, IntCC::Sgt),
                (4, IntCC::Eq),
                (2, IntCC::Ult),
                (1, IntCC::Ugt),
            ] {
                if to & bit != 0 {
                    let c = lx.b.icmp(cc, a, b);
                    cond = lx.b.binary(BinaryOp::Or, cond, c);
                }
            }
            let pc = lx.c32(insn.addr.0 as u32);
            let trap = lx.block_with(Terminator::Exit {
                pc,
                reason: ExitReason::InvalidOpcode,
            });
            // TO = 31 traps whatever the operands (`trap`).
            jump_or_branch(lx, (to != 31).then_some(cond), trap);
            true
        }
    }
}

/// Reports a branch or call to `target`, which is not code.
fn report_not_code(diags: &mut Vec<Diagnostic>, insn: &Insn, what: &str, target: GuestAddr) {
    diags.push(Diagnostic {
        severity: Severity::Error,
        addr: insn.addr,
        message: format!("{what} to {target}, which is not code"),
    });
}

/// A block that switches on CTR over the table's targets: index `(ctr - lowest) / 4`, with
/// addresses that are no case (or misaligned) going to an indirect tail jump, so a wrong guess
/// about the table stays correct.
fn jump_table_block(
    lx: &mut Lifter<'_>,
    cfg: &FunctionCfg,
    blocks: &BTreeMap<GuestAddr, Block>,
    targets: &[GuestAddr],
    ctr: Value,
) -> Block {
    let here = lx.b.current_block();
    let (Some(&lo), Some(&hi)) = (targets.first(), targets.last()) else {
        return lx.block_with(Terminator::TailCall {
            target: CallTarget::Indirect(ctr),
        });
    };
    let block = lx.b.create_block();
    lx.b.switch_to_block(block);
    let offset = lx.b.binary_imm(BinaryOp::Sub, ctr, lo.0);
    let index = lx.b.binary_imm(BinaryOp::Rotr, offset, 2);
    let default = lx.block_with(Terminator::TailCall {
        target: CallTarget::Indirect(ctr),
    });
    let mut cases = Vec::new();
    for k in 0..=((hi.0 - lo.0) / 4) {
        let t = GuestAddr(lo.0 + 4 * k);
        let dest = if !targets.contains(&t) {
            default
        } else if let Some(&b) = blocks.get(&t) {
            b
        } else if cfg.calls_entry(t, ()) {
            lx.block_with(Terminator::TailCall {
                target: CallTarget::Direct(t),
            })
        } else {
            default
        };
        cases.push(BlockCall::plain(dest));
    }
    lx.b.terminate(Terminator::Switch {
        index,
        cases,
        default: BlockCall::plain(default),
    });
    lx.b.switch_to_block(here);
    block
}
