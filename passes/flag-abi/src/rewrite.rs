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

impl FunctionFacts {
    /// The facts as the bytes the core caches and hands back to the transform: `ret_live`, the callee
    /// count and each callee's address and entry-live set, little-endian.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(20 + self.callee_entry.len() * 24);
        out.extend_from_slice(&self.ret_live.0.to_le_bytes());
        out.extend_from_slice(&(self.callee_entry.len() as u32).to_le_bytes());
        for (addr, set) in &self.callee_entry {
            out.extend_from_slice(&addr.0.to_le_bytes());
            out.extend_from_slice(&set.0.to_le_bytes());
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
        let count = u32::from_le_bytes(take(4)?.try_into().map_err(|_| "bad width".to_string())?);
        let mut callee_entry = BTreeMap::new();
        for _ in 0..count {
            let addr = u64::from_le_bytes(take(8)?.try_into().map_err(|_| "bad width".to_string())?);
            let set = FlagSet(u128_at(take(16)?)?);
            callee_entry.insert(GuestAddr(addr), set);
        }
        if !rest.is_empty() {
            return Err(format!("{} bytes after the flag-abi facts", rest.len()));
        }
        Ok(FunctionFacts { ret_live, callee_entry })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn facts_round_trip_and_refuse_truncation() {
        let facts = FunctionFacts {
            ret_live: FlagSet(0b101),
            callee_entry: BTreeMap::from([(GuestAddr(0x401000), FlagSet(1)), (GuestAddr(0x402000), FlagSet(0))]),
        };
        let bytes = facts.encode();
        assert_eq!(FunctionFacts::decode(&bytes), Ok(facts));
        assert!(FunctionFacts::decode(&bytes[..bytes.len() - 1]).is_err());
        assert_eq!(FunctionFacts::decode(&[]), Ok(FunctionFacts::default()));
    }
}
