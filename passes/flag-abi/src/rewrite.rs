//! The per-function transform: flag writes nobody reads are dropped, then what only they used.

use std::collections::{BTreeMap, BTreeSet};

use rpt_ir::{Function, GuestAddr, InstKind, Value};

use crate::flags::FlagSet;
use crate::liveness::Context;

/// What the transform of one function needs from the whole-program analysis: the flags its callers
/// read after it returns and the entry-live flags of each lifted function it calls directly. A
/// direct callee missing from `callee_entry` is treated as reading every flag (an extern).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct FunctionFacts {
    /// Flags some caller reads after this function returns.
    pub ret_live: FlagSet,
    /// Entry-live flags of the lifted functions this one calls or tail-calls directly.
    pub callee_entry: BTreeMap<GuestAddr, FlagSet>,
}

/// Counts of what the transform removed from one function.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Removed {
    /// Flag writes dropped.
    pub flag_writes: usize,
    /// Instructions that only fed them, dropped after.
    pub dead_values: usize,
}

/// Drops every write of a flag that no path reads before it is written again, then every
/// side-effect-free instruction whose result nothing uses any more.
pub fn remove_dead_flag_writes(func: &mut Function, ctx: &Context<'_>) -> Removed {
    let liveness = ctx.solve(func);
    let mut removed = Removed::default();
    for block in &mut func.blocks {
        let mut live = ctx.live_at_terminator(&block.term, &liveness.live_in);
        let mut keep = vec![true; block.insts.len()];
        for (index, inst) in block.insts.iter().enumerate().rev() {
            if let InstKind::SetSlot { slot, .. } = inst.kind
                && ctx.universe.is_flag(slot)
                && !live.intersects(ctx.universe.touched_by(slot))
            {
                keep[index] = false;
                removed.flag_writes += 1;
                continue;
            }
            live = ctx.step(&inst.kind, live);
        }
        let mut flags = keep.into_iter();
        block.insts.retain(|_| flags.next().unwrap_or(true));
    }
    removed.dead_values = remove_unused_values(func);
    removed
}

/// Removes side-effect-free instructions whose results are unused, until none is left.
fn remove_unused_values(func: &mut Function) -> usize {
    let mut removed = 0;
    loop {
        let mut used: BTreeSet<Value> = BTreeSet::new();
        for block in &func.blocks {
            for inst in &block.insts {
                used.extend(inst.kind.operands());
            }
            used.extend(block.term.operands());
        }
        let before = removed;
        for block in &mut func.blocks {
            block.insts.retain(|inst| {
                let dead = !inst.kind.has_side_effects() && inst.result.is_none_or(|r| !used.contains(&r));
                if dead {
                    removed += 1;
                }
                !dead
            });
        }
        if removed == before {
            return removed;
        }
    }
}
