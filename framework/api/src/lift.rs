//! The lifting loop, written once for every guest.
//!
//! A guest lifts one instruction at a time through its [`InsnLifter`]; everything around that
//! lives here, so every guest turns the blocks its walk found into IR the same way:
//! - each guest block of the function's [`FunctionCfg`] becomes an IR block, and `block0` only
//!   jumps to the entry's block, so a loop back to the first instruction is an ordinary jump;
//! - every instruction starts with `mark pc` and gets a listing line, so the listing and the line
//!   table describe the same instructions;
//! - straight-line code that runs into the next guest block jumps there;
//! - a flag a block reads at its top, written by its only predecessor, is that write's value
//!   (`lift/forward.rs`: the host compiler then folds a condition split across blocks);
//! - where nothing can be lifted (no instruction was decoded there, or the guest has no rule for
//!   the one that was), the block ends in `exit pc, unliftable` (a guest fault if execution gets
//!   there) with an error diagnostic that says why ([`Isa::describe`]).
//!
//! The walk is the one discovery made ([`Walker::walk`]), so discovery and lifting agree on every
//! block, jump table, tail call and call that never returns.

use std::collections::BTreeMap;

use rpt_ir::{Block, ExitReason, Function, FunctionBuilder, GuestAddr, StateDesc, Type};

use crate::discover::{FunctionCfg, Isa, Walker};
use crate::{Diagnostic, LiftResult, Severity};

mod forward;

/// What lifting one instruction did to control flow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Control goes on at `next`, the address of the instruction after it.
    Next(GuestAddr),
    /// The instruction ended the IR block (a branch, call, return or exit).
    Ended,
    /// The guest has no rule for the instruction: the block ends in `exit pc, unliftable`.
    Unliftable,
}

/// What a guest's instruction lifter may consult beyond the instruction.
pub struct BlockContext<'c, I: Isa> {
    /// Program-wide facts: the known functions, the image, the instruction set.
    pub walker: &'c Walker<'c, I>,
    /// The function's walk.
    pub cfg: &'c FunctionCfg<I>,
    /// The IR block of each guest block.
    pub blocks: &'c BTreeMap<GuestAddr, Block>,
    /// Where lifting reports problems (a branch to something that is not code).
    pub diagnostics: &'c mut Vec<Diagnostic>,
}

/// A guest's lifter as the loop drives it: it holds the function's builder and lifts one
/// instruction at a time.
pub trait InsnLifter<'f, I: Isa> {
    /// The type of guest addresses, the `pc` of `exit` terminators.
    const PC_TYPE: Type;

    /// The builder, positioned in the block the next instruction continues.
    fn builder(&mut self) -> &mut FunctionBuilder<'f>;

    /// A guest block starts: whatever the lifter carries from one instruction to the next within
    /// a block is forgotten.
    fn start_block(&mut self);

    /// The next instruction to lift is at `pc`.
    fn set_pc(&mut self, pc: GuestAddr);

    /// The guest PC an `exit` names for the code at `addr` in `context`, where the runtime goes on:
    /// the address itself for a fixed-width guest; for one whose routines are entered in several
    /// widths, the function key of that address in those widths.
    fn exit_pc(&self, addr: GuestAddr, context: I::Context) -> GuestAddr {
        let _ = context;
        addr
    }

    /// The listing line of a decoded instruction.
    fn listing_text(&mut self, insn: &I::Insn) -> String;

    /// The listing line of an address where no instruction was decoded (`failure` says why, when
    /// the walk knows); `None` lists and marks nothing there.
    fn undecoded_listing_text(&mut self, failure: Option<&I::Failure>) -> Option<String>;

    /// Lifts `insn` into the current block.
    fn lift(&mut self, insn: &I::Insn, cx: &mut BlockContext<'_, I>) -> Step;
}

/// The loop, ready to lift one function with the lifter the guest builds around its builder.
pub struct Lifting<'c, I: Isa> {
    walker: &'c Walker<'c, I>,
    cfg: &'c FunctionCfg<I>,
    /// Lifting one instruction for the run-time tier: a block start other than the entry is a
    /// place to go on at, `exit <addr>, unlifted`, not code to lift.
    continuations: bool,
}

/// What the loop found besides the IR: diagnostics and listing lines, in address order.
pub struct Lifted {
    diagnostics: Vec<Diagnostic>,
    listing: Vec<(GuestAddr, String)>,
}

/// Lifts the function at `entry`: `lift` builds the guest's lifter around the function's builder
/// and hands it to [`Lifting::lift_blocks`].
pub fn lift_function<I: Isa>(
    walker: &Walker<'_, I>,
    entry: GuestAddr,
    state: &StateDesc,
    lift: impl FnOnce(FunctionBuilder<'_>, Lifting<'_, I>) -> Lifted,
) -> LiftResult {
    lift_function_in(walker, entry, I::Context::default(), state, lift)
}

/// [`lift_function`] for the function at `entry` entered in `context`.
pub fn lift_function_in<I: Isa>(
    walker: &Walker<'_, I>,
    entry: GuestAddr,
    context: I::Context,
    state: &StateDesc,
    lift: impl FnOnce(FunctionBuilder<'_>, Lifting<'_, I>) -> Lifted,
) -> LiftResult {
    let cfg = walker.walk_entry(crate::discover::Entry { addr: entry, context });
    let mut function = Function::new(entry);
    let Lifted {
        mut diagnostics,
        mut listing,
    } = lift(
        FunctionBuilder::new(&mut function, state),
        Lifting {
            walker,
            cfg: &cfg,
            continuations: false,
        },
    );
    forward::forward_flags(&mut function, state);
    diagnostics.sort_by_key(|d| d.addr);
    // Overlapping instruction streams can lift one address in two blocks; the listing names it once.
    listing.sort_by_key(|(addr, _)| *addr);
    listing.dedup_by_key(|(addr, _)| *addr);
    LiftResult {
        function,
        diagnostics,
        listing,
    }
}

/// Lifts the one instruction at `addr` for the run-time tier (`crate::tier`), with the guest's
/// own lifter, so the tier runs what compiled code runs: the instruction's CFG is
/// [`Walker::instruction_cfg`]'s, and every place control goes on at afterwards ends in
/// `exit <addr>, unlifted`. Calls stay calls and returns returns; the tier's C gives them their
/// meaning at run time. `None` when nothing decodes at `addr`.
pub fn lift_instruction<I: Isa>(
    walker: &Walker<'_, I>,
    addr: GuestAddr,
    state: &StateDesc,
    lift: impl FnOnce(FunctionBuilder<'_>, Lifting<'_, I>) -> Lifted,
) -> Option<LiftResult> {
    lift_instruction_in(walker, addr, I::Context::default(), state, lift)
}

/// [`lift_instruction`] for the instruction at `addr` decoded in `context`.
pub fn lift_instruction_in<I: Isa>(
    walker: &Walker<'_, I>,
    addr: GuestAddr,
    context: I::Context,
    state: &StateDesc,
    lift: impl FnOnce(FunctionBuilder<'_>, Lifting<'_, I>) -> Lifted,
) -> Option<LiftResult> {
    let cfg = walker.instruction_cfg_in(addr, context)?;
    let mut function = Function::new(addr);
    let Lifted { diagnostics, listing } = lift(
        FunctionBuilder::new(&mut function, state),
        Lifting {
            walker,
            cfg: &cfg,
            continuations: true,
        },
    );
    Some(LiftResult {
        function,
        diagnostics,
        listing,
    })
}

impl<I: Isa> Lifting<'_, I> {
    /// Lifts every guest block of the function with `lifter`.
    pub fn lift_blocks<'f, L: InsnLifter<'f, I>>(self, mut lifter: L) -> Lifted {
        let mut lifted = Lifted {
            diagnostics: Vec::new(),
            listing: Vec::new(),
        };
        let b = lifter.builder();
        let blocks: BTreeMap<GuestAddr, Block> = self.cfg.block_starts.keys().map(|&a| (a, b.create_block())).collect();
        if let Some(&first) = blocks.get(&self.cfg.entry.addr) {
            b.jump(first, Vec::new());
        }
        for (&start, &block) in &blocks {
            lifter.builder().switch_to_block(block);
            if self.continuations && start != self.cfg.entry.addr {
                let context = self
                    .cfg
                    .block_starts
                    .get(&start)
                    .copied()
                    .unwrap_or(self.cfg.entry.context);
                let pc = lifter.exit_pc(start, context);
                lifter.builder().exit_at(pc, ExitReason::Unlifted, L::PC_TYPE);
                continue;
            }
            lifter.start_block();
            let mut cx = BlockContext {
                walker: self.walker,
                cfg: self.cfg,
                blocks: &blocks,
                diagnostics: &mut lifted.diagnostics,
            };
            lift_block(&mut lifter, &mut cx, &mut lifted.listing, start);
        }
        lifted
    }
}

/// Lifts the guest block at `start` into the current IR block, up to its terminator or the next block.
fn lift_block<'f, I: Isa, L: InsnLifter<'f, I>>(
    lifter: &mut L,
    cx: &mut BlockContext<'_, I>,
    listing: &mut Vec<(GuestAddr, String)>,
    start: GuestAddr,
) {
    let mut pc = start;
    loop {
        lifter.set_pc(pc);
        let Some(insn) = cx.cfg.insns.get(&pc) else {
            if let Some(text) = lifter.undecoded_listing_text(cx.cfg.failures.get(&pc)) {
                listing.push((pc, text));
                lifter.builder().mark(pc);
            }
            unliftable(lifter, cx, pc);
            return;
        };
        // Every marked instruction gets a listing line, an unliftable one too.
        lifter.builder().mark(pc);
        listing.push((pc, lifter.listing_text(insn)));
        let next = match lifter.lift(insn, cx) {
            Step::Next(next) => next,
            Step::Ended => return,
            Step::Unliftable => {
                unliftable(lifter, cx, pc);
                return;
            }
        };
        if let Some(&block) = cx.blocks.get(&next) {
            lifter.builder().jump(block, Vec::new());
            return;
        }
        pc = next;
    }
}

/// Ends the block with `exit pc, unliftable` (a guest fault if execution gets here) and records why.
fn unliftable<'f, I: Isa, L: InsnLifter<'f, I>>(lifter: &mut L, cx: &mut BlockContext<'_, I>, pc: GuestAddr) {
    let message = match cx.cfg.failures.get(&pc) {
        Some(f) => cx.walker.isa().describe(cx.walker.image(), f),
        None => "no instruction was decoded here".to_string(),
    };
    cx.diagnostics.push(Diagnostic {
        severity: Severity::Error,
        addr: pc,
        message,
    });
    let context = cx
        .cfg
        .block_starts
        .range(..=pc)
        .next_back()
        .map_or(cx.cfg.entry.context, |(_, &c)| c);
    let exit = lifter.exit_pc(pc, context);
    lifter.builder().exit_at(exit, ExitReason::Unliftable, L::PC_TYPE);
}
