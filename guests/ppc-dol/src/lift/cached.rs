//! Which effective addresses are already in a cached view, so their bit-30 fold can go.
//!
//! Every load and store reaches memory through `ea & 0xbfffffff` (`Lifter::cached_view`), which
//! makes the uncached mirrors the cached memory. An AND per access is 4–12% of the integer
//! samples' host instructions, and nearly every access does not need it: its address is a stack
//! slot, a global, or an element of one. After lifting, a forward analysis over the function
//! follows the general registers and the values computed from them, and drops the fold where the
//! address is one of:
//! - a constant with bit 30 clear (exact: the AND changes nothing);
//! - the stack pointer r1 plus or minus a constant under 256 MiB: r1 points into MEM1 at entry
//!   (the platform puts the stack there, as the GameCube's start-up does);
//! - a pointer of those two kinds (or a constant inside MEM1, 0x80000000..0x81800000, or MEM2,
//!   0x90000000..0x94000000, where the platform's heap lies) plus an index computed at run time.
//!
//! Two assumptions make it pay, both about compiled code:
//! - indexing an object stays inside it, as C requires, so a cached pointer plus an index is
//!   never an uncached address. Code that wants the uncached mirror forms it from a constant
//!   (`addis rX, rY, 0x4000`, or a `lis` of 0xc000..), which these rules keep folded;
//! - a call (and `sc`) keeps r1, r2, r13 and r14..r31, as the ABIs say: a caller that reads one of
//!   them after a call relies on that already, on the hardware too. The others are unknown after it.
//!
//! A constant plus a constant is computed; anything else (a pointer loaded from memory, a
//! function's arguments) stays folded.

use rpt_ir::{BinaryOp, ConvOp, Function, Inst, InstKind, Terminator, Type, Value};

use crate::state::gpr;

/// The bit that tells an uncached view of MEM1 (0xc0000000) from the cached one (0x80000000):
/// the one the fold clears.
pub(crate) const UNCACHED_BIT: u32 = 0x4000_0000;

/// Where the platform's pointers may be without being on the stack: MEM1 and the MEM2 range
/// (anonymous mmap hands out pages from 0x90000000).
const CACHED_REGIONS: [(u32, u32); 2] = [(0x8000_0000, 0x8180_0000), (0x9000_0000, 0x9400_0000)];

/// How far a constant offset may move a cached pointer and leave it in the cached views: every
/// cached region plus this stays below 0xc0000000.
const NEAR: u32 = 0x1000_0000;

/// What is known of an i32 value (or of the low 32 bits of an i64) or of a general register.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fact {
    /// Not reached yet (the optimistic start of a loop).
    Unreached,
    /// This constant.
    Const(u32),
    /// A pointer into a cached view (below 0xc0000000 and at or above 0x80000000).
    Cached,
    /// Anything.
    Unknown,
}

fn in_cached_region(c: u32) -> bool {
    CACHED_REGIONS.iter().any(|&(lo, hi)| (lo..hi).contains(&c))
}

fn near(c: u32) -> bool {
    (c as i32).unsigned_abs() < NEAR
}

impl Fact {
    /// What holds on both of two paths.
    fn meet(self, other: Fact) -> Fact {
        match (self, other) {
            (Fact::Unreached, x) | (x, Fact::Unreached) => x,
            (Fact::Const(a), Fact::Const(b)) if a == b => self,
            (Fact::Const(a), Fact::Const(b)) if in_cached_region(a) && in_cached_region(b) => Fact::Cached,
            (Fact::Cached, Fact::Cached) => Fact::Cached,
            (Fact::Cached, Fact::Const(c)) | (Fact::Const(c), Fact::Cached) if in_cached_region(c) => Fact::Cached,
            _ => Fact::Unknown,
        }
    }

    /// Whether a pointer with this fact plus an index computed at run time stays cached.
    fn is_base(self) -> bool {
        match self {
            Fact::Cached => true,
            Fact::Const(c) => in_cached_region(c),
            _ => false,
        }
    }

    /// Whether clearing bit 30 of this address changes nothing.
    fn fold_is_identity(self) -> bool {
        match self {
            Fact::Cached => true,
            Fact::Const(c) => c & UNCACHED_BIT == 0,
            _ => false,
        }
    }
}

/// The fact of `op` on two operands' facts. A fact of an i64 is one of its low 32 bits (the lifter
/// computes `add` and its carry in 64 bits), so only operations whose low 32 bits depend on the
/// operands' low 32 bits alone may see one: `wide` says the operands are i64.
fn binary(op: BinaryOp, a: Fact, b: Fact, wide: bool) -> Fact {
    use Fact::*;
    if a == Unreached || b == Unreached {
        return Unreached;
    }
    match (op, a, b) {
        (BinaryOp::Shl, ..) if wide => Unknown,
        (BinaryOp::Add, Const(x), Const(y)) => Const(x.wrapping_add(y)),
        (BinaryOp::Sub, Const(x), Const(y)) => Const(x.wrapping_sub(y)),
        (BinaryOp::Or, Const(x), Const(y)) => Const(x | y),
        (BinaryOp::And, Const(x), Const(y)) => Const(x & y),
        (BinaryOp::Shl, Const(x), Const(y)) => Const(x.wrapping_shl(y)),
        (BinaryOp::Add, Cached, Const(c)) | (BinaryOp::Add, Const(c), Cached) | (BinaryOp::Sub, Cached, Const(c)) => {
            if near(c) {
                Cached
            } else {
                Unknown
            }
        }
        (BinaryOp::Add, base, Unknown) | (BinaryOp::Add, Unknown, base) if base.is_base() => Cached,
        // Rounding a cached pointer down to an alignment (`clrrwi`) keeps bit 31 and clears nothing
        // it did not have.
        (BinaryOp::And, Cached, Const(m)) | (BinaryOp::And, Const(m), Cached) if m & 0x8000_0000 != 0 => Cached,
        _ => Unknown,
    }
}

/// The general-register facts at a point.
type Registers = [Fact; 32];

/// Removes every `and ea, 0xbfffffff` whose `ea` is known to be in a cached view (see the module
/// doc), with its mask constant, and makes their users read `ea`.
pub(crate) fn drop_known_cached_folds(func: &mut Function) {
    let values = analyse(func);
    let fact = |v: Value| values.get(v.index()).copied().unwrap_or(Fact::Unknown);
    let n = func.value_types.len();
    let mut replaced: Vec<Option<Value>> = vec![None; n];
    let mut is_mask = vec![false; n];
    for inst in func.blocks.iter().flat_map(|b| &b.insts) {
        if let (Some(result), Some((ea, mask))) = (inst.result, fold_of(func, inst, &values))
            && fact(ea).fold_is_identity()
        {
            replaced[result.index()] = Some(ea);
            is_mask[mask.index()] = true;
        }
    }
    if replaced.iter().all(Option::is_none) {
        return;
    }
    // The mask constant is the fold's own (`binary_imm` made it), so it dies with the fold unless
    // something else reads it.
    let mut uses = vec![0usize; n];
    for block in &func.blocks {
        let kept = block
            .insts
            .iter()
            .filter(|i| i.result.is_none_or(|r| replaced[r.index()].is_none()));
        for v in kept.flat_map(|i| i.kind.operands()).chain(block.term.operands()) {
            uses[v.index()] += 1;
        }
    }
    let map = |v: Value| replaced.get(v.index()).copied().flatten().unwrap_or(v);
    for block in &mut func.blocks {
        block.insts.retain(|inst| {
            inst.result
                .is_none_or(|r| replaced[r.index()].is_none() && !(is_mask[r.index()] && uses[r.index()] == 0))
        });
        for inst in &mut block.insts {
            inst.kind.map_operands(map);
        }
        block.term.map_operands(map);
    }
    func.renumber_values();
}

/// `(ea, mask)` when `inst` is the fold `and ea, 0xbfffffff` of an i32.
fn fold_of(func: &Function, inst: &Inst, values: &[Fact]) -> Option<(Value, Value)> {
    let InstKind::Binary {
        op: BinaryOp::And,
        args: [ea, mask],
    } = inst.kind
    else {
        return None;
    };
    let is_fold =
        func.value_type(ea) == Some(Type::I32) && values.get(mask.index()) == Some(&Fact::Const(!UNCACHED_BIT));
    is_fold.then_some((ea, mask))
}

/// The fact of every value (indexed by value), from a forward analysis of the general registers
/// over the blocks to a fixed point.
fn analyse(func: &Function) -> Vec<Fact> {
    let blocks = func.blocks.len();
    let mut entry_facts: Vec<Registers> = vec![[Fact::Unreached; 32]; blocks];
    let mut values = vec![Fact::Unreached; func.value_types.len()];
    if blocks == 0 {
        return values;
    }
    let mut at_entry = [Fact::Unknown; 32];
    at_entry[1] = Fact::Cached;
    entry_facts[0] = at_entry;
    let mut changed = true;
    while changed {
        changed = false;
        for b in 0..blocks {
            let block = &func.blocks[b];
            let mut regs = entry_facts[b];
            for param in &block.params {
                values[param.index()] = Fact::Unknown;
            }
            for inst in &block.insts {
                let fact = transfer(&inst.kind, |v| func.value_type(v), &values, &mut regs);
                if let Some(r) = inst.result {
                    values[r.index()] = fact;
                }
            }
            let out = match block.term {
                Terminator::Call { .. } => after_call(&regs),
                _ => regs,
            };
            for dest in block.term.successors() {
                let d = dest.block.index();
                let Some(slot) = entry_facts.get_mut(d) else { continue };
                let mut met = *slot;
                for (m, o) in met.iter_mut().zip(out) {
                    *m = m.meet(o);
                }
                if met != *slot {
                    *slot = met;
                    changed = true;
                }
            }
        }
    }
    values
}

/// The registers both PowerPC ABIs (SysV and the EABI GameCube code is built for) keep across a
/// call: r1, the small-data anchors r2 and r13, and r14..r31.
const KEPT_ACROSS_CALLS: [bool; 32] = {
    let mut kept = [true; 32];
    kept[0] = false;
    let mut n = 3;
    while n <= 12 {
        kept[n] = false;
        n += 1;
    }
    kept
};

/// The register facts after a call, from those before it.
fn after_call(before: &Registers) -> Registers {
    let mut after = [Fact::Unknown; 32];
    for (n, fact) in after.iter_mut().enumerate() {
        if KEPT_ACROSS_CALLS[n] {
            *fact = before[n];
        }
    }
    after
}

/// The fact of `kind`'s result, updating the register facts it writes.
fn transfer(kind: &InstKind, types: impl Fn(Value) -> Option<Type>, values: &[Fact], regs: &mut Registers) -> Fact {
    let of = |v: &Value| values.get(v.index()).copied().unwrap_or(Fact::Unknown);
    let gpr_index = |slot: rpt_ir::SlotId| (slot.0 < 32 && gpr(slot.0) == slot).then_some(slot.0 as usize);
    match kind {
        InstKind::Iconst {
            ty: Type::I32 | Type::I64,
            imm,
        } => Fact::Const(*imm as u32),
        InstKind::Binary { op, args: [a, b] } => binary(*op, of(a), of(b), types(*a) == Some(Type::I64)),
        InstKind::Convert {
            op: ConvOp::Zext | ConvOp::Sext,
            arg,
            to: Type::I64,
        } if types(*arg) == Some(Type::I32) => of(arg),
        InstKind::Convert {
            op: ConvOp::Trunc,
            arg,
            to: Type::I32,
        } if types(*arg) == Some(Type::I64) => of(arg),
        InstKind::GetSlot { slot } => gpr_index(*slot).map_or(Fact::Unknown, |n| regs[n]),
        InstKind::SetSlot { slot, value } => {
            if let Some(n) = gpr_index(*slot) {
                regs[n] = of(value);
            }
            Fact::Unknown
        }
        InstKind::Kill { slot } => {
            if let Some(n) = gpr_index(*slot) {
                regs[n] = Fact::Unknown;
            }
            Fact::Unknown
        }
        // `sc` writes r3 in `struct cpu`, and the system call convention keeps what a call does.
        InstKind::CallHelper { .. } => {
            *regs = after_call(regs);
            Fact::Unknown
        }
        _ => Fact::Unknown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::state_desc;

    #[test]
    fn a_pointer_plus_an_index_stays_cached_but_not_plus_the_mirror_offset() {
        let index = Fact::Unknown;
        assert_eq!(binary(BinaryOp::Add, Fact::Cached, index, false), Fact::Cached);
        assert_eq!(
            binary(BinaryOp::Add, index, Fact::Const(0x8000_4904), false),
            Fact::Cached
        );
        assert_eq!(
            binary(BinaryOp::Add, index, Fact::Const(0xc000_4904), false),
            Fact::Unknown
        );
        assert_eq!(
            binary(BinaryOp::Add, Fact::Cached, Fact::Const(0x4000_0000), false),
            Fact::Unknown
        );
        assert_eq!(binary(BinaryOp::Add, Fact::Cached, Fact::Cached, false), Fact::Unknown);
        assert_eq!(
            binary(BinaryOp::Sub, Fact::Cached, Fact::Const(16), false),
            Fact::Cached
        );
        assert_eq!(
            binary(BinaryOp::And, Fact::Cached, Fact::Const(0xffff_ffe0), false),
            Fact::Cached
        );
        assert_eq!(
            binary(BinaryOp::Shl, Fact::Const(1), Fact::Const(33), true),
            Fact::Unknown
        );
        assert_eq!(Fact::Const(0x8000_0000).meet(Fact::Const(0x8000_0010)), Fact::Cached);
        assert_eq!(Fact::Const(0x8000_0000).meet(Fact::Const(0xc000_0000)), Fact::Unknown);
        assert_eq!(Fact::Unreached.meet(Fact::Const(7)), Fact::Const(7));
    }

    /// A loop around a call: r31 (kept across calls) stays a MEM1 base, r9 (volatile) does not.
    #[test]
    fn a_call_keeps_the_nonvolatile_registers_facts_only() {
        let text = "function f_80003100 {
block0:
    v0: i32 = iconst 0x80004000
    set %r31, v0
    set %r9, v0
    jump block1
block1:
    call f_80003200, block2
block2:
    v1: i32 = get %r31
    v2: i32 = get %r3
    v3: i32 = add v1, v2
    v4: i32 = iconst 0xbfffffff
    v5: i32 = and v3, v4
    v6: i32 = load.be ram v5
    v7: i32 = get %r9
    v8: i32 = iconst 0xbfffffff
    v9: i32 = and v7, v8
    v10: i32 = load.be ram v9
    set %r3, v6
    jump block1
}
";
        let state = state_desc();
        let mut func = rpt_ir::parse::parse_function(text, &state).expect("parses");
        drop_known_cached_folds(&mut func);
        let printed = rpt_ir::print::function_to_string(&func, &state);
        assert_eq!(printed.matches("and ").count(), 1, "{printed}");
        assert!(printed.contains("load.be ram v3\n"), "{printed}");
        assert_eq!(rpt_ir::parse::parse_function(&printed, &state).as_ref(), Ok(&func));
    }
}
