//! Registers a function saves on entry and restores before it returns: its callers need not hand
//! them over.
//!
//! Compiled code reads a callee-saved register only to save it (x86 `push ebx`, PowerPC
//! `stw r31, -4(r1)`, `mflr r0; stw r0, 4(r1)`) and writes it only to restore it (`pop ebx`,
//! `lwz r31`, `mtlr r0`). Counted as a read and a write, every such register would be handed over
//! around every call. A word is *preserved* when the function's entry value of it is used for
//! nothing but being stored to a stack slot, no callee, helper or exit sees it, and on every path
//! to a return the word holds its entry value again: untouched, or loaded back from the slot it
//! was saved to. A caller that keeps the word in a C local then keeps its value across the call;
//! `struct cpu` gets back whatever stale value the callee read from it, which no one reads.
//!
//! Addresses are followed symbolically, as the stack pointer's entry value plus a constant (or
//! that aligned down), and a save holds on a path until a store to an overlapping address with
//! a known base. Any load that reads part of a save, or reads the stack at a base the save's
//! cannot be compared with, observes the saved register (an argument spilled to the stack and
//! read back as part of a double is a use). A store through any other pointer is assumed to miss the register save
//! area: it belongs to the function, as every compiler's calling convention has it. Only a
//! program writing into its own callers' saved registers (stack smashing) could tell.

use std::collections::{BTreeMap, BTreeSet};

use rpt_ir::verify::reverse_postorder;
use rpt_ir::{BinaryOp, CallTarget, Function, InstKind, Program, SlotId, SlotLayout, Terminator, Value};

use super::{Bits, Slots, Words, ends_the_program, merge_returns, rounds_by_guest_mode};

/// The low bits an AND must keep for a stack address to stay itself: a frame's worth.
const KEEPS_FRAME: i64 = 0xf_ffff;

/// What a value is, as far as saves and restores care.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Sym {
    Unknown,
    Const(i64),
    /// The function's entry value of a slot word, plus `off`.
    Entry {
        word: usize,
        off: i64,
    },
    /// The value an instruction of the function computed (`v`), plus `off`: a base nothing here
    /// knows more of, such as a stack pointer aligned with an AND.
    Opaque {
        value: u32,
        off: i64,
    },
    /// The value loaded from the address `base + off`.
    Loaded {
        base: Base,
        off: i64,
    },
}

/// What an address is relative to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Base {
    Entry(usize),
    Opaque(u32),
}

impl Sym {
    /// The address this value is, as a base and an offset.
    fn address(self) -> Option<(Base, i64)> {
        match self {
            Sym::Entry { word, off } => Some((Base::Entry(word), off)),
            Sym::Opaque { value, off } => Some((Base::Opaque(value), off)),
            Sym::Unknown | Sym::Const(_) | Sym::Loaded { .. } => None,
        }
    }

    /// This value plus `d`, where that stays symbolic.
    fn plus(self, d: i64) -> Sym {
        match self {
            Sym::Entry { word, off } => Sym::Entry {
                word,
                off: off.wrapping_add(d),
            },
            Sym::Opaque { value, off } => Sym::Opaque {
                value,
                off: off.wrapping_add(d),
            },
            Sym::Unknown | Sym::Const(_) | Sym::Loaded { .. } => Sym::Unknown,
        }
    }
}

/// A stack slot holding a word's entry value: (saved word, stack base, offset, bytes).
type Save = (usize, Base, i64, u64);

/// The symbolic state at a point of the function.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Point {
    /// Each slot word's current value.
    words: Vec<Sym>,
    /// The saves that hold on every path to here.
    saved: BTreeSet<Save>,
    /// Stack addresses that left the function's sight on some path to here (stored, passed on,
    /// computed with): code anywhere may read forward from them.
    escaped: BTreeSet<(Base, i64)>,
}

impl Point {
    fn join(&mut self, other: &Point) -> bool {
        let before = self.clone();
        for w in 0..self.words.len().min(other.words.len()) {
            if self.words[w] != other.words[w] {
                // A register untouched on one path and loaded back from its save on the other (a
                // prologue that saves it only past an early return) holds its entry value on both.
                self.words[w] = if self.holds_entry(w) && other.holds_entry(w) {
                    Sym::Entry { word: w, off: 0 }
                } else {
                    Sym::Unknown
                };
            }
        }
        self.saved.retain(|s| other.saved.contains(s));
        self.escaped.extend(other.escaped.iter().copied());
        *self != before
    }

    /// Whether code that got the stack address `base + off` may read the save `(.., b, o, n)`:
    /// reading forward from the address reaches it, or the two bases cannot be compared.
    fn reaches(base: Base, off: i64, b: Base, o: i64, n: u64) -> bool {
        b != base || o.wrapping_add(n as i64) > off
    }

    /// The stack address `base + off` escapes: every save it may reach is observed.
    fn escape(&mut self, (base, off): (Base, i64), observed: Option<&mut Bits>) {
        self.escaped.insert((base, off));
        if let Some(observed) = observed {
            for &(w, b, o, n) in &self.saved {
                if Point::reaches(base, off, b, o, n) {
                    observed.insert(w);
                }
            }
        }
    }

    /// The word whose entry value `sym` is, if it is one (directly or loaded back from its save).
    fn entry_of(&self, sym: Sym) -> Option<usize> {
        match sym {
            Sym::Entry { word, .. } => Some(word),
            Sym::Loaded { base, off } => self
                .saved
                .iter()
                .find(|&&(_, b, o, _)| b == base && o == off)
                .map(|&(w, ..)| w),
            Sym::Opaque { .. } | Sym::Unknown | Sym::Const(_) => None,
        }
    }

    /// Whether `word` holds exactly its entry value.
    fn holds_entry(&self, word: usize) -> bool {
        match self.words.get(word) {
            Some(&Sym::Entry { word: w, off }) => w == word && off == 0,
            Some(&s @ Sym::Loaded { .. }) => self.entry_of(s) == Some(word),
            _ => false,
        }
    }
}

/// The words `func` preserves, given what its callees read and write (`callee`), and how words
/// come back when it returns (`Words::returns`).
pub(super) fn preserved_words(
    func: &Function,
    program: &Program,
    slots: &Slots,
    callee: &dyn Fn(&CallTarget) -> Words,
    used: &[bool],
    stack_pointer: Option<SlotId>,
) -> (Bits, Option<BTreeMap<usize, i64>>) {
    let n_words = slots.word.len();
    let plain = |slot: SlotId| -> Option<usize> {
        let s = program.state.get(slot)?;
        matches!(s.layout, SlotLayout::Plain).then_some(slot.index())
    };
    // An address on the stack: relative to the stack pointer's entry value, or to that aligned.
    let stack_address = |sym: Sym| match sym.address()? {
        (Base::Entry(w), off) if Some(w) == stack_pointer.map(|sp| sp.index()) => Some((Base::Entry(w), off)),
        (base @ Base::Opaque(_), off) => Some((base, off)),
        _ => None,
    };
    let order = reverse_postorder(func);
    let mut at_entry: Vec<Option<Point>> = vec![None; func.blocks.len()];
    if let Some(first) = at_entry.first_mut() {
        *first = Some(Point {
            words: (0..n_words).map(|w| Sym::Entry { word: w, off: 0 }).collect(),
            saved: BTreeSet::new(),
            escaped: BTreeSet::new(),
        });
    }
    let mut sym = vec![Sym::Unknown; func.value_types.len()];
    let mut observed = Bits::default();
    let mut returns: Option<BTreeMap<usize, i64>> = None;
    // The first sweeps find the state at each block's entry; the last, with those fixed, looks
    // for anything that observes an entry value.
    let mut settled = false;
    loop {
        let mut changed = false;
        for &b in &order {
            let Some(mut point) = at_entry[b.index()].clone() else {
                continue;
            };
            let block = &func.blocks[b.index()];
            let watch = |sym: &[Sym], point: &Point, v: Value, allowed: bool, observed: &mut Bits| {
                if !settled || allowed {
                    return;
                }
                if let Some(w) = sym.get(v.index()).and_then(|&s| point.entry_of(s)) {
                    observed.insert(w);
                }
            };
            for inst in &block.insts {
                let get = |sym: &[Sym], v: Value| sym.get(v.index()).copied().unwrap_or(Sym::Unknown);
                // Stack addresses an instruction lets out of sight: a stored one, and any operand
                // but an address, an offset or alignment, a comparison or a slot write (slots
                // are followed, and checked at calls and returns).
                let escaping: Vec<Value> = match &inst.kind {
                    InstKind::Store { value, .. } => vec![*value],
                    InstKind::Load { .. }
                    | InstKind::Icmp { .. }
                    | InstKind::SetSlot { .. }
                    | InstKind::Binary {
                        op: BinaryOp::Add | BinaryOp::Sub | BinaryOp::And,
                        ..
                    } => Vec::new(),
                    kind => kind.operands(),
                };
                for v in escaping {
                    if let Some(at) = stack_address(get(&sym, v)) {
                        point.escape(at, settled.then_some(&mut observed));
                    }
                }
                // Which operands may carry an entry value without observing it.
                match &inst.kind {
                    InstKind::Store { addr, value, .. } => {
                        let saves = stack_address(get(&sym, *addr)).is_some();
                        watch(&sym, &point, *value, saves, &mut observed);
                        watch(&sym, &point, *addr, false, &mut observed);
                    }
                    InstKind::SetSlot { slot, value } => {
                        let back = plain(*slot).is_some_and(|w| point.entry_of(get(&sym, *value)) == Some(w));
                        watch(&sym, &point, *value, back, &mut observed);
                    }
                    kind => {
                        for v in kind.operands() {
                            watch(&sym, &point, v, false, &mut observed);
                        }
                    }
                }
                let aligns_stack = matches!(&inst.kind, InstKind::Binary { op: BinaryOp::And, args }
                    if stack_address(get(&sym, args[0])).is_some() && matches!(get(&sym, args[1]), Sym::Const(_)));
                let result = match &inst.kind {
                    InstKind::Iconst { ty, imm } => {
                        let bits = ty.bits().clamp(1, 64);
                        let shift = 64 - bits;
                        Sym::Const(((*imm << shift) as i64) >> shift)
                    }
                    // An AND that keeps every low bit of a stack address keeps the address: the
                    // stack lies where the guest's address fold does not move it (PowerPC's
                    // bit-30 fold of MEM1, where every stack is).
                    InstKind::Binary {
                        op: BinaryOp::And,
                        args,
                    } if stack_address(get(&sym, args[0])).is_some()
                        && matches!(get(&sym, args[1]), Sym::Const(c) if c & KEEPS_FRAME == KEEPS_FRAME) =>
                    {
                        get(&sym, args[0])
                    }
                    InstKind::Binary { op, args } => match (op, get(&sym, args[0]), get(&sym, args[1])) {
                        (BinaryOp::Add, a, Sym::Const(c)) | (BinaryOp::Add, Sym::Const(c), a)
                            if a.address().is_some() =>
                        {
                            a.plus(c)
                        }
                        (BinaryOp::Sub, a, Sym::Const(c)) if a.address().is_some() => a.plus(c.wrapping_neg()),
                        _ => Sym::Unknown,
                    },
                    InstKind::GetSlot { slot } => plain(*slot)
                        .and_then(|w| point.words.get(w).copied())
                        .unwrap_or(Sym::Unknown),
                    InstKind::SetSlot { slot, value } => {
                        let w = slots.word(*slot);
                        if let Some(s) = point.words.get_mut(w) {
                            *s = if plain(*slot).is_some() {
                                get(&sym, *value)
                            } else {
                                Sym::Unknown
                            };
                        }
                        Sym::Unknown
                    }
                    InstKind::Kill { slot } | InstKind::SetIndexed { slot, .. } => {
                        if let Some(s) = point.words.get_mut(slots.word(*slot)) {
                            *s = Sym::Unknown;
                        }
                        Sym::Unknown
                    }
                    InstKind::Load { ty, addr, .. } => {
                        let at = stack_address(get(&sym, *addr));
                        if settled && let Some((base, off)) = at {
                            // A load that reads part of a save, or a save at a base it cannot be
                            // compared with, reads the saved register: it is observed. Only a
                            // load of exactly the save may restore it (and its uses are watched).
                            let bytes = u64::from(ty.bits().div_ceil(8));
                            let end = off.wrapping_add(bytes as i64);
                            for &(w, b, o, n) in &point.saved {
                                let exact = b == base && o == off && n == bytes;
                                let apart = b == base && (o.wrapping_add(n as i64) <= off || end <= o);
                                if !exact && !apart {
                                    observed.insert(w);
                                }
                            }
                        }
                        at.map_or(Sym::Unknown, |(base, off)| Sym::Loaded { base, off })
                    }
                    InstKind::Store { addr, value, .. } => {
                        if let Some((base, off)) = stack_address(get(&sym, *addr)) {
                            // A store to the stack ends the saves it may overlap: those at another
                            // base (how two bases relate is unknown) and those it meets at this one.
                            let bytes = func.value_type(*value).map_or(16, |t| u64::from(t.bits().div_ceil(8)));
                            let end = off.wrapping_add(bytes as i64);
                            point
                                .saved
                                .retain(|&(_, b, o, n)| b == base && (o.wrapping_add(n as i64) <= off || end <= o));
                            if let Sym::Entry { word, off: 0 } = get(&sym, *value)
                                && Base::Entry(word) != base
                                && program.state.get(SlotId(word as u32)).map(|s| s.ty) == func.value_type(*value)
                            {
                                if settled
                                    && point
                                        .escaped
                                        .iter()
                                        .any(|&(b, e)| Point::reaches(b, e, base, off, bytes))
                                {
                                    observed.insert(word);
                                }
                                point.saved.insert((word, base, off, bytes));
                            }
                        }
                        Sym::Unknown
                    }
                    InstKind::CallHelper { helper, .. } => {
                        let (reads, writes) = helper_use(program, slots, helper);
                        if settled {
                            for w in reads.iter() {
                                if point.holds_entry(w) {
                                    observed.insert(w);
                                }
                            }
                        }
                        for w in writes.iter() {
                            if let Some(s) = point.words.get_mut(w) {
                                *s = Sym::Unknown;
                            }
                        }
                        Sym::Unknown
                    }
                    kind => {
                        if settled && rounds_by_guest_mode(kind) {
                            for w in slots.special.iter() {
                                if point.holds_entry(w) {
                                    observed.insert(w);
                                }
                            }
                        }
                        Sym::Unknown
                    }
                };
                if let Some(r) = inst.result
                    && let Some(s) = sym.get_mut(r.index())
                {
                    // A value nobody uses is never emitted, so it carries nothing. The stack
                    // pointer aligned down (`and esp, -16`) is a stack base of its own.
                    *s = match result {
                        _ if !used.get(r.index()).copied().unwrap_or(true) => Sym::Unknown,
                        Sym::Unknown if aligns_stack => Sym::Opaque { value: r.0, off: 0 },
                        known => known,
                    };
                }
            }
            for v in block.term.operands() {
                watch(&sym, &point, v, false, &mut observed);
                if let Some(at) = stack_address(sym.get(v.index()).copied().unwrap_or(Sym::Unknown)) {
                    point.escape(at, settled.then_some(&mut observed));
                }
            }
            // What leaves the function hands on the stack addresses its registers hold, but the
            // stack pointer's own (a callee reads only its arguments above it).
            if !matches!(
                block.term,
                Terminator::Jump(_) | Terminator::Branch { .. } | Terminator::Switch { .. }
            ) {
                let held: Vec<(Base, i64)> = point
                    .words
                    .iter()
                    .enumerate()
                    .filter(|&(w, _)| Some(w) != stack_pointer.map(|sp| sp.index()))
                    .filter_map(|(_, &s)| stack_address(s))
                    .collect();
                for at in held {
                    point.escape(at, settled.then_some(&mut observed));
                }
            }
            // A return path: a word not holding its entry value is not preserved; how each word
            // comes back joins the function's `returns`.
            let mut finish = |point: &Point, observed: &mut Bits| {
                if !settled {
                    return;
                }
                let mut back = BTreeMap::new();
                for w in 0..n_words {
                    if point.holds_entry(w) {
                        back.insert(w, 0);
                    } else {
                        observed.insert(w);
                        if let Some(&Sym::Entry { word, off }) = point.words.get(w)
                            && word == w
                        {
                            back.insert(w, off);
                        }
                    }
                }
                merge_returns(&mut returns, &Some(back));
            };
            let mut continues = true;
            match &block.term {
                Terminator::Call { target, .. } | Terminator::TailCall { target } => {
                    let c = callee(target);
                    let tail = matches!(block.term, Terminator::TailCall { .. });
                    if settled {
                        for w in c.reads.iter() {
                            // A tail callee sees whatever the word holds when it returns, too.
                            if tail || point.holds_entry(w) {
                                observed.insert(w);
                            }
                        }
                    }
                    match &c.returns {
                        // Not known to return (yet): nothing follows the call.
                        None => continues = false,
                        Some(adjusts) => {
                            for w in c.writes.iter() {
                                let Some(s) = point.words.get_mut(w) else { continue };
                                *s = match (adjusts.get(&w), *s) {
                                    (Some(d), s) => s.plus(*d),
                                    (None, _) => Sym::Unknown,
                                };
                            }
                            if tail {
                                finish(&point, &mut observed);
                            }
                        }
                    }
                }
                Terminator::Return => finish(&point, &mut observed),
                Terminator::Exit { reason, .. } if settled && !ends_the_program(*reason) => {
                    observed = slots.all.clone();
                }
                _ => {}
            }
            if !continues {
                continue;
            }
            for dest in block.term.successors() {
                let Some(slot) = at_entry.get_mut(dest.block.index()) else {
                    continue;
                };
                match slot {
                    Some(into) => changed |= into.join(&point),
                    None => {
                        *slot = Some(point.clone());
                        changed = true;
                    }
                }
            }
        }
        if settled {
            break;
        }
        settled = !changed;
    }
    let mut preserved = slots.all.clone();
    for w in observed.iter() {
        preserved.remove(w);
    }
    for (id, s) in program.state.iter() {
        if !matches!(s.layout, SlotLayout::Plain) {
            preserved.remove(id.index());
        }
    }
    (preserved, returns)
}

/// The words a call of `helper` may read and write.
pub(super) fn helper_use(program: &Program, slots: &Slots, helper: &str) -> (Bits, Bits) {
    let Some(decl) = program.helpers.get(helper) else {
        return (slots.all.clone(), slots.all.clone());
    };
    let e = decl.effects;
    let touched = if !decl.touches.is_empty() && !e.may_exit {
        let mut t = Bits::default();
        for &s in &decl.touches {
            t.insert(slots.word(s));
        }
        t
    } else {
        slots.all.clone()
    };
    let mut reads = Bits::default();
    if e.reads_state || e.writes_state || e.may_exit {
        reads.union_with(&touched);
    }
    if e.reads_flags {
        reads.union_with(&slots.flags);
    }
    let writes = if e.writes_state || e.may_exit {
        touched
    } else {
        Bits::default()
    };
    (reads, writes)
}
