//! Which functions an indirect call may reach, as the image's tables of function addresses
//! suggest.

use std::collections::{BTreeMap, BTreeSet};

use rpt_ir::{BinaryOp, CallTarget, Function, GuestAddr, InstKind, SlotId, Terminator, Value};

use crate::MAX_CANDIDATES;

/// The width of a table word (`rpt_api`'s discovery finds tables of 32-bit words).
const WORD: u64 = 4;

/// How many `get`s and operations deep a value is followed.
const MAX_DEPTH: usize = 8;

/// How many blocks back a slot's value is followed from one `get`.
const MAX_BLOCKS_BACK: usize = 512;

/// Per block of `func` ending in an indirect call, the functions its target may be, in address
/// order, when it is loaded from a table `tables` knows (`rpt_ir::Program::pointer_tables`) and
/// there are at most [`MAX_CANDIDATES`] of them.
///
/// A target that is a register's value on entry is what the function's callers pass in it
/// (`on_entry`: qsort's comparator, handed down a recursion).
pub fn candidates(
    func: &Function,
    tables: &BTreeMap<GuestAddr, Vec<GuestAddr>>,
    on_entry: &dyn Fn(SlotId) -> Option<BTreeSet<GuestAddr>>,
) -> BTreeMap<u32, Vec<GuestAddr>> {
    let values = Values::new(func);
    let mut out = BTreeMap::new();
    for (b, block) in func.blocks.iter().enumerate() {
        let Terminator::Call {
            target: CallTarget::Indirect(target),
            ..
        } = &block.term
        else {
            continue;
        };
        if let Some(found) = values.table_targets(*target, tables, on_entry)
            && !found.is_empty()
            && found.len() <= MAX_CANDIDATES
        {
            out.insert(b as u32, found.into_iter().collect());
        }
    }
    out
}

/// Where a value came from: an instruction (block, index), or a slot's value on entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Origin {
    At((usize, usize)),
    Entry(SlotId),
}

/// What reaches a read of a slot: a `set`'s value, or the slot's value on entry.
enum Reach {
    Set(Value),
    Entry(SlotId),
}

/// The function's values, where each is defined, and its blocks' predecessors.
struct Values<'f> {
    func: &'f Function,
    /// Block and instruction index of each value's definition (`None` for block parameters).
    defs: Vec<Option<(usize, usize)>>,
    preds: Vec<Vec<usize>>,
}

impl<'f> Values<'f> {
    fn new(func: &'f Function) -> Values<'f> {
        let mut defs = vec![None; func.value_types.len()];
        let mut preds = vec![Vec::new(); func.blocks.len()];
        for (b, block) in func.blocks.iter().enumerate() {
            for (i, inst) in block.insts.iter().enumerate() {
                if let Some(slot) = inst.result.and_then(|v| defs.get_mut(v.index())) {
                    *slot = Some((b, i));
                }
            }
            for dest in block.term.successors() {
                if let Some(p) = preds.get_mut(dest.block.index()) {
                    p.push(b);
                }
            }
        }
        Values { func, defs, preds }
    }

    fn kind(&self, at: (usize, usize)) -> Option<&'f InstKind> {
        self.func.blocks.get(at.0)?.insts.get(at.1).map(|i| &i.kind)
    }

    /// The instruction defining `v` (`None` for a block parameter).
    fn def(&self, v: Value) -> Option<&'f InstKind> {
        self.kind(self.defs.get(v.index()).copied().flatten()?)
    }

    /// The instructions that may have computed `v`, seeing through slots (a `get` of a slot is
    /// what the `set`s of it that reach the `get` stored, or the slot's value on entry) and
    /// selects. `None` when one is not known (too far back).
    fn origins(&self, v: Value, depth: usize) -> Option<Vec<Origin>> {
        let at = self.defs.get(v.index()).copied().flatten()?;
        match self.kind(at)? {
            InstKind::GetSlot { slot } => {
                let mut found = Vec::new();
                let mut seen = BTreeSet::new();
                self.reaching_sets(*slot, at.0, at.1, MAX_BLOCKS_BACK, &mut seen, &mut found)?;
                self.origins_of(found, depth)
            }
            InstKind::Select { if_true, if_false, .. } => {
                let mut out = self.origins(*if_true, depth.checked_sub(1)?)?;
                out.extend(self.origins(*if_false, depth.checked_sub(1)?)?);
                Some(out)
            }
            // PowerPC's `mr rD,rS` is `or rD,rS,rS`: a copy.
            InstKind::Binary {
                op: BinaryOp::Or,
                args: [x, y],
            } => {
                let (a, b) = (
                    self.origins(*x, depth.checked_sub(1)?),
                    self.origins(*y, depth.checked_sub(1)?),
                );
                match (a, b) {
                    (Some(a), Some(b)) if a == b => Some(a),
                    _ => Some(vec![Origin::At(at)]),
                }
            }
            _ => Some(vec![Origin::At(at)]),
        }
    }

    /// The origins of what reached a `get` (or a call).
    fn origins_of(&self, found: Vec<Reach>, depth: usize) -> Option<Vec<Origin>> {
        let mut out = Vec::new();
        for reach in found {
            match reach {
                Reach::Set(value) => out.extend(self.origins(value, depth.checked_sub(1)?)?),
                Reach::Entry(slot) => out.push(Origin::Entry(slot)),
            }
        }
        Some(out)
    }

    /// What `slot` holds where block `b` ends in a call: the constants it may be, seeing
    /// through a recursion that passes its own entry value on (`self_call`). `None` when some
    /// way in holds anything else.
    fn constants_at_end(&self, b: usize, slot: SlotId, self_call: bool) -> Option<BTreeSet<u64>> {
        let block = self.func.blocks.get(b)?;
        let mut found = Vec::new();
        self.reaching_sets(
            slot,
            b,
            block.insts.len(),
            MAX_BLOCKS_BACK,
            &mut BTreeSet::new(),
            &mut found,
        )?;
        let mut out = BTreeSet::new();
        for origin in self.origins_of(found, MAX_DEPTH)? {
            match origin {
                Origin::Entry(s) if self_call && s == slot => {}
                Origin::Entry(_) => return None,
                Origin::At(at) => match (self.constant_at(at, MAX_DEPTH), self.kind(at)?) {
                    (Some(c), _) => {
                        out.insert(c);
                    }
                    // Reloaded from the caller's frame: what it stored there.
                    (None, InstKind::Load { addr, .. }) => {
                        let stored = self.stored_at(*addr, &|_| None);
                        if stored.is_empty() {
                            return None;
                        }
                        out.extend(stored.into_iter().map(|a| a.0));
                    }
                    (None, _) => return None,
                },
            }
        }
        Some(out)
    }

    /// What reaches instruction `before` of block `b` in `slot`: the values of the `set`s that
    /// do, and the slot's entry value when a way from the entry sets nothing.
    fn reaching_sets(
        &self,
        slot: SlotId,
        b: usize,
        before: usize,
        depth: usize,
        seen: &mut BTreeSet<usize>,
        found: &mut Vec<Reach>,
    ) -> Option<()> {
        let block = self.func.blocks.get(b)?;
        let set = block.insts[..before.min(block.insts.len())]
            .iter()
            .rev()
            .find_map(|i| match &i.kind {
                InstKind::SetSlot { slot: s, value } if *s == slot => Some(*value),
                _ => None,
            });
        if let Some(value) = set {
            found.push(Reach::Set(value));
            return Some(());
        }
        if depth == 0 {
            return None;
        }
        if b == 0 {
            found.push(Reach::Entry(slot));
        }
        for &p in self.preds.get(b)? {
            if !seen.insert(p) {
                continue;
            }
            // Through calls too: a callee keeps the registers a loop keeps its table in (and a
            // wrong guess costs a compare, the check before each candidate makes it right).
            let pred = self.func.blocks.get(p)?;
            self.reaching_sets(slot, p, pred.insts.len(), depth - 1, seen, found)?;
        }
        Some(())
    }

    /// The constant `v` always is, if it is one.
    fn constant(&self, v: Value, depth: usize) -> Option<u64> {
        let mut value = None;
        for origin in self.origins(v, depth)? {
            let Origin::At(at) = origin else {
                return None;
            };
            let c = self.constant_at(at, depth)?;
            if value.is_some_and(|known| known != c) {
                return None;
            }
            value = Some(c);
        }
        value
    }

    /// The constant the instruction at `at` computes, if it computes one.
    fn constant_at(&self, at: (usize, usize), depth: usize) -> Option<u64> {
        match self.kind(at)? {
            InstKind::Iconst { imm, .. } => Some(*imm),
            InstKind::Binary {
                op: BinaryOp::Add,
                args: [x, y],
            } => Some(
                self.constant(*x, depth.checked_sub(1)?)?
                    .wrapping_add(self.constant(*y, depth.checked_sub(1)?)?),
            ),
            _ => None,
        }
    }

    /// Whether every origin of `v` is a load from memory (an object's vtable pointer).
    fn loaded(&self, v: Value) -> bool {
        self.origins(v, MAX_DEPTH).is_some_and(|o| {
            !o.is_empty()
                && o.iter().all(
                    |origin| matches!(origin, Origin::At(at) if matches!(self.kind(*at), Some(InstKind::Load { .. }))),
                )
        })
    }

    /// The functions a call of `target` may reach through the tables.
    fn table_targets(
        &self,
        target: Value,
        tables: &BTreeMap<GuestAddr, Vec<GuestAddr>>,
        on_entry: &dyn Fn(SlotId) -> Option<BTreeSet<GuestAddr>>,
    ) -> Option<BTreeSet<GuestAddr>> {
        // Candidates from every origin that says; a loop's first target may come from elsewhere
        // (a constant the compiler worked out, a spilled copy), and the check covers the rest.
        let mut out = BTreeSet::new();
        for origin in self.origins(target, MAX_DEPTH)? {
            match origin {
                Origin::At(at) => match self.kind(at) {
                    Some(InstKind::Load { addr, .. }) => match self.loaded_from(*addr, tables) {
                        Some(found) if !found.is_empty() => out.extend(found),
                        // A function pointer the function keeps in its own frame (spilled
                        // across a loop, or an argument it stored): what it stores there.
                        _ => out.extend(self.stored_at(*addr, on_entry)),
                    },
                    // A target the compiler worked out: a candidate as it stands.
                    _ => out.extend(self.constant_at(at, MAX_DEPTH).map(GuestAddr)),
                },
                Origin::Entry(slot) => out.extend(on_entry(slot).unwrap_or_default()),
            }
        }
        Some(out)
    }

    /// `addr` as a register plus a constant (`r1 + 44`), read where it is used.
    fn register_offset(&self, addr: Value) -> Option<(SlotId, u64)> {
        let slot_of = |v: Value| match self.def(v) {
            Some(InstKind::GetSlot { slot }) => Some(*slot),
            _ => None,
        };
        let imm_of = |v: Value| match self.def(v) {
            Some(InstKind::Iconst { imm, .. }) => Some(*imm),
            _ => None,
        };
        match self.def(addr)? {
            InstKind::GetSlot { slot } => Some((*slot, 0)),
            InstKind::Binary {
                op: BinaryOp::Add,
                args: [x, y],
            } => slot_of(*x).zip(imm_of(*y)).or_else(|| slot_of(*y).zip(imm_of(*x))),
            _ => None,
        }
    }

    /// The constants (and entry values) the function stores at the address `addr` names as a
    /// register plus a constant: a frame slot, the stack pointer being the same register
    /// between a prologue and an epilogue. Only a suggestion, as every candidate is.
    fn stored_at(&self, addr: Value, on_entry: &dyn Fn(SlotId) -> Option<BTreeSet<GuestAddr>>) -> BTreeSet<GuestAddr> {
        let mut out = BTreeSet::new();
        let Some(place) = self.register_offset(addr) else {
            return out;
        };
        for block in &self.func.blocks {
            for inst in &block.insts {
                let InstKind::Store { addr: a, value, .. } = &inst.kind else {
                    continue;
                };
                if self.register_offset(*a) != Some(place) {
                    continue;
                }
                for origin in self.origins(*value, MAX_DEPTH).unwrap_or_default() {
                    match origin {
                        Origin::At(at) => out.extend(self.constant_at(at, MAX_DEPTH).map(GuestAddr)),
                        Origin::Entry(slot) => out.extend(on_entry(slot).unwrap_or_default()),
                    }
                }
            }
        }
        out
    }

    /// The functions a load from `addr` may read from the tables.
    fn loaded_from(&self, addr: Value, tables: &BTreeMap<GuestAddr, Vec<GuestAddr>>) -> Option<Vec<GuestAddr>> {
        let addr = self.without_mask(addr);
        if let Some(c) = self.constant(addr, MAX_DEPTH) {
            // A function pointer variable: the word itself.
            return Some(table_from(tables, c)?.into_iter().take(1).collect());
        }
        let (base, offset) = self.base_and_offset(addr, tables)?;
        if let Some(c) = self.constant(base, MAX_DEPTH) {
            // `table[i]`: the table the constant points into, from there on, as far as the index
            // can reach when it is masked (`op_table[x & 7]`).
            let mut entries = table_from(tables, c)?;
            if let Some(most) = self.index_bound(addr, base) {
                entries.truncate(usize::try_from(most / WORD + 1).unwrap_or(usize::MAX));
            }
            return Some(entries);
        }
        if offset % WORD == 0 && self.loaded(base) {
            // A virtual call: the word at `offset` of every table.
            let index = usize::try_from(offset / WORD).ok()?;
            return Some(tables.values().filter_map(|t| t.get(index).copied()).collect());
        }
        None
    }

    /// `addr` without an AND with a constant (PowerPC's fold of the uncached mirror).
    fn without_mask(&self, addr: Value) -> Value {
        match self.def(addr) {
            Some(InstKind::Binary {
                op: BinaryOp::And,
                args: [x, y],
            }) if self.constant(*y, 0).is_some() => *x,
            _ => addr,
        }
    }

    /// The largest byte offset the index added to `base` in `addr` can have, when its mask and
    /// scale say (`(i & 7) << 2` reaches 28).
    fn index_bound(&self, addr: Value, base: Value) -> Option<u64> {
        let InstKind::Binary {
            op: BinaryOp::Add,
            args: [x, y],
        } = self.def(addr)?
        else {
            return None;
        };
        let index = if *x == base { *y } else { *x };
        self.largest(index, MAX_DEPTH)
    }

    /// The largest value `v` can have, from masks and shifts by constants.
    fn largest(&self, v: Value, depth: usize) -> Option<u64> {
        let mut most = 0;
        for origin in self.origins(v, depth)? {
            let Origin::At(at) = origin else {
                return None;
            };
            let bound = match self.kind(at)? {
                InstKind::Iconst { imm, .. } => *imm,
                InstKind::Binary {
                    op: BinaryOp::And,
                    args: [x, y],
                } => match (self.constant(*x, depth), self.constant(*y, depth)) {
                    (Some(m), _) | (_, Some(m)) => m,
                    _ => return None,
                },
                InstKind::Binary {
                    op: BinaryOp::Shl,
                    args: [x, y],
                } => {
                    let shift = self.constant(*y, depth)?;
                    self.largest(*x, depth.checked_sub(1)?)?
                        .checked_shl(u32::try_from(shift).ok()?)?
                }
                InstKind::Binary {
                    op: BinaryOp::Mul,
                    args: [x, y],
                } => {
                    let scale = self.constant(*y, depth)?;
                    self.largest(*x, depth.checked_sub(1)?)?.checked_mul(scale)?
                }
                _ => return None,
            };
            most = most.max(bound);
        }
        Some(most)
    }

    /// `addr` as a base plus a constant offset. `x + c` gives `(x, c)`, unless `c` is an address
    /// inside a table: then `x` is an index into it and the base is `c` itself (either way round).
    fn base_and_offset(&self, addr: Value, tables: &BTreeMap<GuestAddr, Vec<GuestAddr>>) -> Option<(Value, u64)> {
        let Some(InstKind::Binary {
            op: BinaryOp::Add,
            args: [x, y],
        }) = self.def(addr)
        else {
            return Some((addr, 0));
        };
        let split = |constant: Value, other: Value| -> Option<(Value, u64)> {
            let c = self.constant(constant, MAX_DEPTH)?;
            Some(if table_from(tables, c).is_some() {
                (constant, 0)
            } else {
                (other, c)
            })
        };
        split(*y, *x).or_else(|| split(*x, *y))
    }
}

/// The functions a table word at `at` and the words after it name, when `at` is in a table.
fn table_from(tables: &BTreeMap<GuestAddr, Vec<GuestAddr>>, at: u64) -> Option<Vec<GuestAddr>> {
    let (start, entries) = tables.range(..=GuestAddr(at)).next_back()?;
    let skip = at.checked_sub(start.0)?;
    if skip % WORD != 0 {
        return None;
    }
    let skip = usize::try_from(skip / WORD).ok()?;
    (skip < entries.len()).then(|| entries[skip..].to_vec())
}

/// The constants `slot` may hold where block `b` of `func` ends in a call of `callee`; `None`
/// when anything else may reach it. A recursive call passing its own entry value on adds nothing.
pub fn constants_passed(func: &Function, b: usize, slot: SlotId, callee: GuestAddr) -> Option<BTreeSet<u64>> {
    Values::new(func).constants_at_end(b, slot, func.entry == callee)
}
