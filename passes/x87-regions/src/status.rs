//! Whether anything in a program can read the x87 status word: if nothing can, the exception flags
//! and C1 that each operation records are dead, and regions use the quiet value forms, which
//! compute values only.
//!
//! Recording them is not free on the x86-64 host: the value forms run the guest's instruction on the
//! host's x87 and read its status word after it (fnstsw), which waits for the instruction to
//! finish, so a chain of x87 operations runs one at a time instead of overlapping (physics-x86's
//! Newton iteration ran twenty times slower than the same loop compiled natively).
//!
//! The status word can be read by:
//! - `fnstsw` (the lifter reads the `fpu_sw` slot);
//! - a helper that reads guest state without naming its slots, or naming `fpu_sw` (the x87
//!   helpers themselves excepted: they read the word only to record into it);
//! - code outside the program's lifted functions: an extern that is not one of the platform's C
//!   library functions (an override in the recipe's C, `setjmp`), and whatever the runtime goes
//!   on with after a system call, a halt or a yield. The platforms' C library functions read no
//!   x87 state but the control word (the x86 platform's test
//!   `no_platform_function_reads_the_x87_status_word` holds this), and the platform marks them as
//!   the externs that touch no flag, so that set is the one used here.
//!
//! A fault (a divide error, an invalid or unliftable instruction) and a jump to code nobody lifted
//! end the program with a report, so nothing reads the word after them. When a run-time tier runs
//! code nobody lifted (issue [fallback-tier]), that exit must count as a reader here. fnstenv,
//! fnsave and fxsave are not lifted (they are unliftable), so they need no case. A fault's register
//! report may show a status word that is not the guest's; no guest computation can see it.

use rpt_ir::{ExitReason, InstKind, Program, Terminator};

use crate::abi::{Unit, helper};

/// Why the status word may be read, for the pass's report; `None` when nothing can read it.
pub fn reader(program: &Program, unit: &Unit) -> Option<String> {
    let x87_helper = |name: &str| helper::STACK_FORMS.contains(&name) || helper::VALUE_FORMS.contains(&name);
    if let Some(addr) = program
        .externs
        .keys()
        .find(|addr| !program.flag_transparent.contains(addr))
    {
        return Some(format!("the extern at {addr} may read it"));
    }
    for (addr, func) in &program.functions {
        for block in &func.blocks {
            for inst in &block.insts {
                let reads = match &inst.kind {
                    InstKind::GetSlot { slot } | InstKind::GetIndexed { slot, .. } => *slot == unit.sw,
                    InstKind::CallHelper { helper, .. } if !x87_helper(helper) => {
                        program.helpers.get(helper).is_none_or(|decl| {
                            decl.effects.reads_state && (decl.touches.is_empty() || decl.touches.contains(&unit.sw))
                        })
                    }
                    _ => false,
                };
                if reads {
                    return Some(format!("function {addr} reads it"));
                }
            }
            if let Terminator::Exit { reason, .. } = block.term
                && !matches!(
                    reason,
                    ExitReason::DivideError | ExitReason::InvalidOpcode | ExitReason::Unliftable | ExitReason::Unlifted
                )
            {
                return Some(format!("function {addr} leaves lifted code ({reason:?})"));
            }
        }
    }
    None
}
