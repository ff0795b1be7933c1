//! Backward liveness of flags inside one function, given what is known of the functions around it.

use std::collections::BTreeMap;

use rpt_ir::{Block, CallTarget, ExitReason, Function, GuestAddr, HelperDecl, InstKind, Terminator};

use crate::flags::{FlagSet, FlagUniverse, Summary};

/// What one function's flag liveness depends on outside the function.
pub struct Context<'a> {
    /// The guest's flags.
    pub universe: &'a FlagUniverse,
    /// The program's helpers; a helper that reads flags or may leave lifted code reads every flag.
    pub helpers: &'a BTreeMap<String, HelperDecl>,
    /// Flags some caller reads after this function returns.
    pub ret_live: FlagSet,
    /// The summary of a lifted function, or `None` for anything else (an extern, an address that
    /// is not a function), which is assumed to read every flag.
    pub callee: &'a dyn Fn(GuestAddr) -> Option<Summary>,
    /// What an indirect call's callee reads on entry: the union of the flags every address-taken
    /// lifted function reads (see [`crate::solve::solve`]). The flags live after the call are
    /// added at each site, because a callee that is not lifted (a platform function behind an
    /// import slot) passes every flag through.
    pub indirect_reads: FlagSet,
}

/// A call or tail call of a function, with the flags read after it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CallSite {
    /// The block the call ends.
    pub block: Block,
    /// The guest address of the calling instruction (the block's last `mark`), if it has one.
    pub pc: Option<GuestAddr>,
    /// The callee, when known at lift time.
    pub direct: Option<GuestAddr>,
    /// Whether it is a tail call (its callee returns straight to this function's caller).
    pub tail: bool,
    /// For a call, the flags live when the callee returns; for a tail call, empty (the caller's
    /// `ret_live` applies instead).
    pub live_after: FlagSet,
}

/// The flags live at each block's entry, and the function's call sites.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Liveness {
    /// Flags live on entry to each block, indexed by block.
    pub live_in: Vec<FlagSet>,
    /// Every call and tail call, in block order.
    pub call_sites: Vec<CallSite>,
}

impl Liveness {
    /// The flags the function reads before writing them: its entry-live flags.
    pub fn entry_live(&self) -> FlagSet {
        self.live_in.first().copied().unwrap_or(FlagSet::EMPTY)
    }
}

impl Context<'_> {
    /// Flags live just before the terminator of a block, given the blocks' current `live_in`.
    pub(crate) fn live_at_terminator(&self, term: &Terminator, live_in: &[FlagSet]) -> FlagSet {
        let all = self.universe.all();
        let callee = |target: &CallTarget, live_after: FlagSet| match target {
            CallTarget::Direct(addr) => (self.callee)(*addr).map_or(all, |s| s.entry_live(live_after)),
            CallTarget::Indirect(_) => self.indirect_reads.union(live_after),
        };
        let successors = || {
            term.successors()
                .iter()
                .map(|dest| live_in.get(dest.block.index()).copied().unwrap_or(FlagSet::EMPTY))
                .fold(FlagSet::EMPTY, FlagSet::union)
        };
        match term {
            Terminator::Jump(_) | Terminator::Branch { .. } | Terminator::Switch { .. } => successors(),
            // The callee's summary applied to this site's live-after flags (for a tail call, this
            // function's own): what it reads, and what passes through it unwritten.
            Terminator::Call { target, cont } => callee(
                target,
                live_in.get(cont.block.index()).copied().unwrap_or(FlagSet::EMPTY),
            ),
            Terminator::TailCall { target } => callee(target, self.ret_live),
            Terminator::Return => self.ret_live,
            // The runtime may resume from, or interpret on from, the state it is left at a yield, a
            // system call or unlifted code; the exits that end the program only report the pc.
            Terminator::Exit { reason, .. } => match reason {
                ExitReason::Halt | ExitReason::DivideError | ExitReason::InvalidOpcode => FlagSet::EMPTY,
                // Code rpt could not lift stops the program today, but keeps the state a later
                // tier would need to go on from there.
                ExitReason::Unlifted | ExitReason::Syscall | ExitReason::Yield | ExitReason::Unliftable => all,
            },
            Terminator::Unreachable => FlagSet::EMPTY,
        }
    }

    /// How one instruction changes the flags live before it, given those live after it.
    pub(crate) fn step(&self, kind: &InstKind, live: FlagSet) -> FlagSet {
        match kind {
            // A kill says the value before it is not needed, as a write does.
            InstKind::SetSlot { slot, .. } | InstKind::Kill { slot } => live.minus(self.universe.touched_by(*slot)),
            InstKind::GetSlot { slot } => live.union(self.universe.touched_by(*slot)),
            InstKind::CallHelper { helper, .. } => {
                let reads = self
                    .helpers
                    .get(helper)
                    .is_none_or(|h| h.effects.reads_flags || h.effects.may_exit);
                if reads { live.union(self.universe.all()) } else { live }
            }
            _ => live,
        }
    }

    /// Solves the function's flag liveness.
    pub fn solve(&self, func: &Function) -> Liveness {
        let n = func.blocks.len();
        let mut live_in = vec![FlagSet::EMPTY; n];
        let keeps = conditional_keeps(func);
        // Sets only grow, so sweeping in reverse block order until nothing changes terminates; lifted
        // code is mostly laid out in address order, which makes reverse order close to post-order.
        loop {
            let mut changed = false;
            for (index, block) in func.blocks.iter().enumerate().rev() {
                let mut live = self.live_at_terminator(&block.term, &live_in);
                for (at, inst) in block.insts.iter().enumerate().rev() {
                    if !keeps.contains(&(index, at)) {
                        live = self.step(&inst.kind, live);
                    }
                }
                changed |= live_in[index].insert(live);
            }
            if !changed {
                break;
            }
        }
        let mut call_sites = Vec::new();
        for (block, data) in func.iter_blocks() {
            let (target, tail, live_after) = match &data.term {
                Terminator::Call { target, cont } => (target, false, live_in[cont.block.index()]),
                Terminator::TailCall { target } => (target, true, FlagSet::EMPTY),
                _ => continue,
            };
            let pc = data.insts.iter().rev().find_map(|i| match i.kind {
                InstKind::Mark { pc } => Some(pc),
                _ => None,
            });
            let direct = match target {
                CallTarget::Direct(addr) => Some(*addr),
                CallTarget::Indirect(_) => None,
            };
            call_sites.push(CallSite {
                block,
                pc,
                direct,
                tail,
                live_after,
            });
        }
        Liveness { live_in, call_sites }
    }
}

/// The reads and writes of conditional keeps, by (block, instruction) index: `v = get %f; w =
/// select c, v, x (or x, v); set %f, w` in one block, `v` and `w` used nowhere else and nothing
/// between the read and the write that writes state or calls a helper. x86 lifts a shift or rotate
/// by `cl` so (its flags stay as they were when the count is 0). For liveness the pair passes `%f`
/// through: its old value is needed exactly when `%f` is live after the write. Counting the read
/// as a read would make such a function read the flag on entry whatever its callers read after
/// it, and with it every indirect call of the program.
pub(crate) fn conditional_keeps(func: &Function) -> std::collections::BTreeSet<(usize, usize)> {
    let mut uses: BTreeMap<rpt_ir::Value, usize> = BTreeMap::new();
    for block in &func.blocks {
        for inst in &block.insts {
            for v in inst.kind.operands() {
                *uses.entry(v).or_default() += 1;
            }
        }
        for v in block.term.operands() {
            *uses.entry(v).or_default() += 1;
        }
    }
    let used_once = |v: rpt_ir::Value| uses.get(&v) == Some(&1);
    let mut keeps = std::collections::BTreeSet::new();
    for (b, block) in func.blocks.iter().enumerate() {
        let defined_at: BTreeMap<rpt_ir::Value, usize> = block
            .insts
            .iter()
            .enumerate()
            .filter_map(|(at, inst)| inst.result.map(|r| (r, at)))
            .collect();
        for (set_at, inst) in block.insts.iter().enumerate() {
            let InstKind::SetSlot { slot, value } = inst.kind else {
                continue;
            };
            let Some(&select_at) = defined_at.get(&value).filter(|_| used_once(value)) else {
                continue;
            };
            let InstKind::Select { if_true, if_false, .. } = block.insts[select_at].kind else {
                continue;
            };
            let read_at = [if_true, if_false].into_iter().find_map(|v| {
                let at = *defined_at.get(&v)?;
                let same = matches!(block.insts[at].kind, InstKind::GetSlot { slot: s } if s == slot);
                (same && used_once(v) && if_true != if_false).then_some(at)
            });
            let Some(read_at) = read_at else { continue };
            let quiet = block.insts[read_at + 1..set_at].iter().all(|i| {
                !matches!(
                    i.kind,
                    InstKind::SetSlot { .. }
                        | InstKind::SetIndexed { .. }
                        | InstKind::Kill { .. }
                        | InstKind::CallHelper { .. }
                )
            });
            if quiet {
                keeps.insert((b, read_at));
                keeps.insert((b, set_at));
            }
        }
    }
    keeps
}
