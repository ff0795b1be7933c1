//! The per-function transform: flag writes nobody reads are dropped, then what only they used.

use std::collections::{BTreeMap, BTreeSet};

use rpt_ir::{Function, GuestAddr, Inst, InstKind, Terminator, Value};

use crate::flags::{FlagSet, Summary};
use crate::liveness::{Context, conditional_keeps};

/// What the transform of one function needs from the whole-program analysis: the flags its callers
/// read after it returns, the summary of each lifted function it calls directly and the flags an
/// indirect callee may read. A direct callee missing from `callees` is treated as reading every
/// flag (an extern).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct FunctionFacts {
    /// Flags some caller reads after this function returns.
    pub ret_live: FlagSet,
    /// The summaries of the lifted functions this one calls or tail-calls directly.
    pub callees: BTreeMap<GuestAddr, Summary>,
    /// What the callee of an indirect call may read on entry (empty if this function makes none).
    pub indirect_reads: FlagSet,
}

/// Counts of what the transform removed from one function.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Removed {
    /// Flag writes dropped.
    pub flag_writes: usize,
    /// Instructions that only fed them, dropped after.
    pub dead_values: usize,
    /// `kill`s added before calls and returns.
    pub kills: usize,
}

/// Drops every write of a flag that no path reads before it is written again, then every
/// side-effect-free instruction whose result nothing uses any more, then marks with `kill` the
/// flags that are dead at a call or return but may hold a value written since the last call
/// ([`insert_kills`]).
pub fn remove_dead_flag_writes(func: &mut Function, ctx: &Context<'_>) -> Removed {
    // A read whose value nothing uses keeps a write alive until the read itself goes, so the two
    // removals alternate until neither finds anything.
    let mut removed = Removed {
        dead_values: remove_unused_values(func),
        ..Removed::default()
    };
    loop {
        let writes = remove_dead_writes(func, ctx);
        if writes == 0 {
            break;
        }
        removed.flag_writes += writes;
        removed.dead_values += remove_unused_values(func);
    }
    removed.kills = insert_kills(func, ctx);
    removed
}

/// One sweep of [`remove_dead_flag_writes`]: drops the flag writes no path reads; how many.
fn remove_dead_writes(func: &mut Function, ctx: &Context<'_>) -> usize {
    let liveness = ctx.solve(func);
    let conditional = conditional_keeps(func);
    let mut removed = 0;
    for (b, block) in func.blocks.iter_mut().enumerate() {
        let mut live = ctx.live_at_terminator(&block.term, &liveness.live_in);
        let mut keep = vec![true; block.insts.len()];
        for (index, inst) in block.insts.iter().enumerate().rev() {
            if let InstKind::SetSlot { slot, .. } = inst.kind
                && ctx.universe.is_flag(slot)
                && !live.intersects(ctx.universe.touched_by(slot))
            {
                keep[index] = false;
                removed += 1;
                continue;
            }
            // A conditional keep passes its flag through (liveness.rs says why).
            if !conditional.contains(&(b, index)) {
                live = ctx.step(&inst.kind, live);
            }
        }
        let mut flags = keep.into_iter();
        block.insts.retain(|_| flags.next().unwrap_or(true));
    }
    removed
}

/// Adds a `kill` of each plain flag that is dead at a call, tail call or return but may hold a
/// value this function wrote since it was entered or last called out.
///
/// A write kept for the one path that reads it would otherwise reach, on every other path, the
/// write-back of state-in-memory before the next call: in a loop whose exit reads a `dec`'s
/// flags and whose body makes an indirect call, every iteration would compute and store flags
/// that nobody reads. The forward "written since" set is the C backend's own notion of a dirty
/// local (a call leaves every local clean), so a kill lands exactly where a write-back would
/// otherwise store a dead flag.
pub fn insert_kills(func: &mut Function, ctx: &Context<'_>) -> usize {
    let liveness = ctx.solve(func);
    let step = |kind: &InstKind, written: FlagSet| match kind {
        InstKind::SetSlot { slot, .. } => written.union(ctx.universe.touched_by(*slot)),
        InstKind::Kill { slot } => written.minus(ctx.universe.touched_by(*slot)),
        _ => written,
    };
    let n = func.blocks.len();
    let mut written_in = vec![FlagSet::EMPTY; n];
    loop {
        let mut changed = false;
        for (index, block) in func.blocks.iter().enumerate() {
            let mut written = written_in[index];
            for inst in &block.insts {
                written = step(&inst.kind, written);
            }
            if matches!(block.term, Terminator::Call { .. }) {
                written = FlagSet::EMPTY;
            }
            for dest in block.term.successors() {
                if let Some(into) = written_in.get_mut(dest.block.index()) {
                    changed |= into.insert(written);
                }
            }
        }
        if !changed {
            break;
        }
    }
    let mut added = 0;
    for (index, block) in func.blocks.iter_mut().enumerate() {
        if !matches!(
            block.term,
            Terminator::Call { .. } | Terminator::TailCall { .. } | Terminator::Return
        ) {
            continue;
        }
        let written = block.insts.iter().fold(written_in[index], |w, i| step(&i.kind, w));
        let dead = written.minus(ctx.live_at_terminator(&block.term, &liveness.live_in));
        for slot in ctx.universe.plain_slots(dead) {
            block.insts.push(Inst {
                result: None,
                kind: InstKind::Kill { slot },
            });
            added += 1;
        }
    }
    added
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

impl FunctionFacts {
    /// The facts as the bytes the core caches and hands back to the transform: `ret_live`,
    /// `indirect_reads`, the callee count and each callee's address and summary (reads, passes),
    /// little-endian.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(36 + self.callees.len() * 40);
        out.extend_from_slice(&self.ret_live.0.to_le_bytes());
        out.extend_from_slice(&self.indirect_reads.0.to_le_bytes());
        out.extend_from_slice(&(self.callees.len() as u32).to_le_bytes());
        for (addr, summary) in &self.callees {
            out.extend_from_slice(&addr.0.to_le_bytes());
            out.extend_from_slice(&summary.reads.0.to_le_bytes());
            out.extend_from_slice(&summary.passes.0.to_le_bytes());
        }
        out
    }

    /// Reads what [`FunctionFacts::encode`] wrote; empty bytes are empty facts.
    pub fn decode(bytes: &[u8]) -> Result<FunctionFacts, String> {
        if bytes.is_empty() {
            return Ok(FunctionFacts::default());
        }
        let mut rest = bytes;
        let mut take = |n: usize| -> Result<&[u8], String> {
            if rest.len() < n {
                return Err(format!("truncated flag-abi facts ({} bytes)", bytes.len()));
            }
            let (head, tail) = rest.split_at(n);
            rest = tail;
            Ok(head)
        };
        let u128_at = |b: &[u8]| {
            b.try_into()
                .map(u128::from_le_bytes)
                .map_err(|_| "bad width".to_string())
        };
        let ret_live = FlagSet(u128_at(take(16)?)?);
        let indirect_reads = FlagSet(u128_at(take(16)?)?);
        let count = u32::from_le_bytes(take(4)?.try_into().map_err(|_| "bad width".to_string())?);
        let mut callees = BTreeMap::new();
        for _ in 0..count {
            let addr = u64::from_le_bytes(take(8)?.try_into().map_err(|_| "bad width".to_string())?);
            let reads = FlagSet(u128_at(take(16)?)?);
            let passes = FlagSet(u128_at(take(16)?)?);
            callees.insert(GuestAddr(addr), Summary { reads, passes });
        }
        if !rest.is_empty() {
            return Err(format!("{} bytes after the flag-abi facts", rest.len()));
        }
        Ok(FunctionFacts {
            ret_live,
            callees,
            indirect_reads,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn facts_round_trip_and_refuse_truncation() {
        let facts = FunctionFacts {
            ret_live: FlagSet(0b101),
            callees: BTreeMap::from([
                (
                    GuestAddr(0x401000),
                    Summary {
                        reads: FlagSet(1),
                        passes: FlagSet(0b110),
                    },
                ),
                (GuestAddr(0x402000), Summary::default()),
            ]),
            indirect_reads: FlagSet(0b10),
        };
        let bytes = facts.encode();
        assert_eq!(FunctionFacts::decode(&bytes), Ok(facts));
        assert!(FunctionFacts::decode(&bytes[..bytes.len() - 1]).is_err());
        assert_eq!(FunctionFacts::decode(&[]), Ok(FunctionFacts::default()));
    }
}
