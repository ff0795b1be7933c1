//! Which guest state each function may read on entry and may write, counting everything it calls:
//! what a caller keeping state in C locals must hand over around a call, and take back after it.
//!
//! With state in locals (docs/c-abi.md, "State in locals") a call used to write every dirty local
//! back to `struct cpu` and reload every local after it. A callee that never looks at a slot needs
//! neither: the caller keeps it in its local (in a host register) across the call. For each call
//! the emitter writes back the dirty locals the callee may read, and those it may write that the
//! caller may read after the call, and reloads the latter ([`StateUse::writes`]). Such a slot is
//! written back even if the callee writes it on some paths only, so whatever the callee leaves
//! in `struct cpu` is right either way.
//!
//! The sets are over slot words (a packed field counts as its parent; writing a field reads the
//! rest of its word too) and are found by a fixpoint over the call graph:
//! - reads: the words read before any write on some path from the entry (a `kill` ends the old
//!   value as a write does), and what each callee reads where the call is reached;
//! - writes: every word written, and what each callee writes;
//! - an extern the platform gives a contract (`rpt_api::Externs::state_use`: a C library function
//!   takes its arguments from the stack and returns in caller-saved registers) reads and writes
//!   the slots it names;
//! - anything that hands the whole state to code no analysis sees reads and writes every word: a
//!   call of any other extern (`setjmp`, an override), an `exit` the runtime may go on from (a
//!   system call, a halt, a yield, code nobody lifted), and a helper that reads or writes state without naming the
//!   slots it touches, or that may leave lifted code;
//! - a helper naming what it touches reads (and, if it writes state, writes) those words, plus
//!   every flag if it reads flags; an operation rounding by the guest's mode reads the special
//!   slots (where each guest keeps its rounding mode: PowerPC's FPSCR, x86's MXCSR);
//! - an indirect call may reach any address-taken function (discovery's set, the same one
//!   flag-abi relies on); if one of those is not lifted, or there are none, every word.
//!
//! A guest fault (`exit` for a divide error, an invalid or unliftable instruction, or
//! `unreachable`) ends the program with a report of the registers `struct cpu` holds; a caller's
//! local that the callee never touches is then reported as it was when last written back. Nothing
//! resumes after a fault (no guest's `rpt_guest_on_exit` handles one), so no guest computation can
//! see the difference; a platform that one day delivers faults to the guest (SEH) must make them
//! read every word here.

use std::collections::{BTreeMap, BTreeSet};

mod preserved;

use rpt_api::ExternStateUse;
use rpt_ir::{
    CallTarget, ExitReason, Function, GuestAddr, InstKind, Program, Rounding, SlotId, SlotLayout, SlotRole, StateDesc,
    Terminator,
};

/// The state one function (with its callees) may read on entry and may write.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct StateUse {
    /// Slot words it may read before writing them.
    pub reads: BTreeSet<SlotId>,
    /// Slot words it may write.
    pub writes: BTreeSet<SlotId>,
}

/// What the calls of one function reach: per direct callee, and for its indirect calls. A callee
/// that is absent (and indirect calls, when `indirect` is `None`) may read and write everything.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct CallStateUse {
    /// Lifted direct callees.
    pub direct: BTreeMap<GuestAddr, StateUse>,
    /// Every address-taken function together, when all of them are lifted.
    pub indirect: Option<StateUse>,
    /// What an indirect call hands over when its target is in the direct table (see
    /// [`ProgramStateUse::direct_functions`]), when the program has light functions to tell
    /// apart; an indirect call to anything else hands over everything.
    pub indirect_light: Option<StateUse>,
    /// The slot words a caller may read from `struct cpu` after the function itself returns, when
    /// known (`None`: every word). A local outside them need not be written back at a return.
    pub after_return: Option<BTreeSet<SlotId>>,
}

/// Nothing known of any callee: every call hands over and takes back every local.
pub static UNKNOWN_CALLS: CallStateUse = CallStateUse {
    direct: BTreeMap::new(),
    indirect: None,
    indirect_light: None,
    after_return: None,
};

impl CallStateUse {
    /// What a call of `target` may read and write; `None` for everything.
    pub fn of(&self, target: &CallTarget) -> Option<&StateUse> {
        match target {
            CallTarget::Direct(addr) => self.direct.get(addr),
            CallTarget::Indirect(_) => self.indirect.as_ref(),
        }
    }
}

/// The state use of every lifted function of a program, and of its indirect calls.
///
/// Indirect calls reach two kinds of function. Most calls go to small ones: callbacks,
/// comparators, virtual methods, a table of operations, which use a few registers and keep the
/// callee-saved ones. A few address-taken functions use much more: a C runtime's start-up and
/// exit handlers, which run the whole program or call its destructors through further indirect
/// calls. One union over both would make every indirect call write back and reload every local
/// (the callee-saved registers a hot loop keeps its variables in) for the sake of functions that
/// run once. So when a program has both, an indirect call is emitted twice: a target found in the
/// direct table of light functions, which holds the functions the *light union* covers
/// (`light_union` says how it is chosen; [`ProgramStateUse::direct_functions`]), is handed that;
/// any other everything. A wrong guess costs speed, never
/// correctness: the table holds exactly the functions the light hand-over is enough for.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProgramStateUse {
    /// Lifted functions, and the externs with a contract.
    functions: BTreeMap<GuestAddr, Words>,
    indirect: Option<Words>,
    /// The union of the light address-taken functions, when some others are opaque.
    light: Option<Words>,
    /// Per lifted function, the words read after it returns ([`after_return`]).
    after_return: BTreeMap<GuestAddr, Bits>,
    slots: Vec<SlotId>,
}

impl ProgramStateUse {
    /// What the calls of `func` reach, for emitting it.
    pub fn calls_of(&self, func: &Function) -> CallStateUse {
        let (direct, indirect) = func.callees();
        CallStateUse {
            direct: direct
                .iter()
                .filter_map(|addr| Some((*addr, self.to_use(self.functions.get(addr)?))))
                .collect(),
            indirect: if indirect {
                self.indirect.as_ref().map(|w| self.to_use(w))
            } else {
                None
            },
            indirect_light: if indirect {
                self.light.as_ref().map(|w| self.to_use(w))
            } else {
                None
            },
            after_return: self.after_return.get(&func.entry).map(|b| self.pick(b)),
        }
    }

    /// Which of `candidates` (lifted functions and externs) indirect calls may reach through the
    /// direct table: all of them when one union serves every indirect call; else those for which
    /// handing over the light union is enough (they read and write nothing more, and come back as
    /// the analysis of every indirect caller assumes).
    pub fn direct_functions(&self, candidates: &BTreeSet<GuestAddr>) -> BTreeSet<GuestAddr> {
        let (Some(light), Some(all)) = (&self.light, &self.indirect) else {
            return candidates.clone();
        };
        candidates
            .iter()
            .copied()
            .filter(|addr| {
                self.functions
                    .get(addr)
                    .is_some_and(|w| fits_the_light_union(w, light, all))
            })
            .collect()
    }

    fn to_use(&self, words: &Words) -> StateUse {
        StateUse {
            reads: self.pick(&words.reads),
            writes: self.pick(&words.writes),
        }
    }

    fn pick(&self, set: &Bits) -> BTreeSet<SlotId> {
        self.slots.iter().copied().filter(|s| set.contains(s.index())).collect()
    }
}

/// A set of slot indexes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Bits(Vec<u64>);

impl Bits {
    fn all(n: usize) -> Bits {
        let mut b = Bits(vec![0; n.div_ceil(64)]);
        for i in 0..n {
            b.insert(i);
        }
        b
    }

    fn insert(&mut self, i: usize) {
        if self.0.len() <= i / 64 {
            self.0.resize(i / 64 + 1, 0);
        }
        self.0[i / 64] |= 1 << (i % 64);
    }

    fn remove(&mut self, i: usize) {
        if let Some(w) = self.0.get_mut(i / 64) {
            *w &= !(1 << (i % 64));
        }
    }

    fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.0
            .iter()
            .enumerate()
            .flat_map(|(k, &w)| (0..64).filter(move |b| w & (1 << b) != 0).map(move |b| k * 64 + b))
    }

    fn contains(&self, i: usize) -> bool {
        self.0.get(i / 64).is_some_and(|w| w & (1 << (i % 64)) != 0)
    }

    /// Adds `other`; says whether anything was new.
    fn union_with(&mut self, other: &Bits) -> bool {
        if self.0.len() < other.0.len() {
            self.0.resize(other.0.len(), 0);
        }
        let mut grew = false;
        for (a, b) in self.0.iter_mut().zip(&other.0) {
            grew |= *b & !*a != 0;
            *a |= b;
        }
        grew
    }
}

/// A function's reads and writes as sets of slot-word indexes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Words {
    reads: Bits,
    writes: Bits,
    /// How words come back when the function returns: `None` while no path is known to return
    /// (a call of it then continues nowhere, the optimistic start of the fixpoint); else the words
    /// whose value on every return is their value at the call plus a constant (the stack pointer
    /// of a convention where the callee pops the return address).
    returns: Option<BTreeMap<usize, i64>>,
}

impl Words {
    /// What code no analysis sees may do: read and write every word, and return with any value.
    fn everything(slots: &Slots) -> Words {
        Words {
            reads: slots.all.clone(),
            writes: slots.all.clone(),
            returns: Some(BTreeMap::new()),
        }
    }
}

/// Joins what one more return path (or possible callee) says of how words come back into `into`;
/// says whether it changed.
fn merge_returns(into: &mut Option<BTreeMap<usize, i64>>, other: &Option<BTreeMap<usize, i64>>) -> bool {
    match (into.as_mut(), other) {
        (_, None) => false,
        (None, Some(o)) => {
            *into = Some(o.clone());
            true
        }
        (Some(i), Some(o)) => {
            let before = i.len();
            i.retain(|w, d| o.get(w) == Some(d));
            i.len() != before
        }
    }
}

/// What the analysis knows of the state.
struct Slots {
    all: Bits,
    flags: Bits,
    /// The general registers and flags.
    registers: Bits,
    special: Bits,
    /// The word of each slot index: itself, or a packed field's parent.
    word: Vec<usize>,
    packed: Vec<bool>,
}

impl Slots {
    fn new(state: &StateDesc) -> Slots {
        let n = state.len();
        let mut slots = Slots {
            all: Bits::all(n),
            flags: Bits::default(),
            registers: Bits::default(),
            special: Bits::default(),
            word: (0..n).collect(),
            packed: vec![false; n],
        };
        for (id, slot) in state.iter() {
            if let SlotLayout::Packed { parent, .. } = slot.layout {
                slots.word[id.index()] = parent.index();
                slots.packed[id.index()] = true;
            }
            let word = slots.word[id.index()];
            if matches!(slot.role, SlotRole::Gpr | SlotRole::Flag) {
                slots.registers.insert(word);
            }
            match slot.role {
                SlotRole::Flag => slots.flags.insert(word),
                SlotRole::Special => slots.special.insert(word),
                SlotRole::Gpr | SlotRole::Fpr => {}
            }
        }
        slots
    }

    fn word(&self, slot: SlotId) -> usize {
        self.word.get(slot.index()).copied().unwrap_or(slot.index())
    }
}

/// Finds the state use of every lifted function of `program`, given what the externs with a
/// contract (`rpt_api::Externs::state_use`) read and write; any other extern touches everything.
/// `scratch` are the guest's scratch registers (`rpt_api::MemoryModel::scratch_registers`).
pub fn analyze(
    program: &Program,
    externs: &BTreeMap<GuestAddr, ExternStateUse>,
    stack_pointer: Option<SlotId>,
    scratch: &[SlotId],
) -> ProgramStateUse {
    let slots = Slots::new(&program.state);
    let mut uses: BTreeMap<GuestAddr, Words> = program.functions.keys().map(|&a| (a, Words::default())).collect();
    let contracts: BTreeMap<GuestAddr, Words> = externs
        .iter()
        .filter(|(addr, _)| !program.functions.contains_key(addr))
        .map(|(&addr, u)| {
            let mut w = Words {
                returns: (!u.never_returns).then(|| u.adjusts.iter().map(|(s, d)| (slots.word(*s), *d)).collect()),
                ..Words::default()
            };
            for s in &u.reads {
                w.reads.insert(slots.word(*s));
            }
            for s in &u.writes {
                w.writes.insert(slots.word(*s));
            }
            (addr, w)
        })
        .collect();
    // With no address-taken function known, an indirect call reaches something discovery never
    // saw: it may touch everything.
    let indirect_lifted =
        !program.address_taken.is_empty() && program.address_taken.iter().all(|a| program.functions.contains_key(a));
    let mut indirect = Words::default();
    // Sets only grow, bounded by every word, and what returns only goes from unknown to known
    // to fewer known words: the loop ends.
    loop {
        let mut changed = false;
        for (addr, func) in &program.functions {
            let found = function_use(
                func,
                program,
                &slots,
                Calls {
                    uses: &uses,
                    contracts: &contracts,
                    indirect: indirect_lifted.then_some(&indirect),
                },
                stack_pointer,
            );
            if let Some(old) = uses.get_mut(addr) {
                changed |= old.reads.union_with(&found.reads);
                changed |= old.writes.union_with(&found.writes);

                changed |= merge_returns(&mut old.returns, &found.returns);
            }
        }
        for a in &program.address_taken {
            if let Some(w) = uses.get(a) {
                changed |= indirect.reads.union_with(&w.reads);
                changed |= indirect.writes.union_with(&w.writes);
                changed |= merge_returns(&mut indirect.returns, &w.returns);
            }
        }
        if !changed {
            break;
        }
    }
    uses.extend(contracts);
    let light = indirect_lifted
        .then(|| light_union(program, &slots, &uses, &indirect))
        .flatten();
    let indirect = indirect_lifted.then_some(indirect);
    let after_return = after_return(program, &slots, &uses, indirect.as_ref(), scratch);
    ProgramStateUse {
        functions: uses,
        indirect,
        light,
        after_return,
        slots: program.state.iter().map(|(id, _)| id).collect(),
    }
}

/// The words some caller may read from `struct cpu` after each lifted function returns: a
/// second fixpoint, once every function's reads are known, like flag-abi's `ret_live` for flags.
///
/// Code outside lifted code (the runtime after the entry point or a callback returns, a platform
/// function a callback returns to) reads anything but the guest's `scratch` registers, which its
/// calling convention lets every function clobber; so every function starts with the rest. A
/// lifted caller adds the words live after its call (read before written on some path, its own
/// `after_return` at its returns); a tail call hands the tail caller's on; an indirect call or
/// tail call reaches every address-taken function (every function, when one of those is not
/// lifted). A function whose only readers of a scratch register are none need not write it back:
/// a leaf using r9 or ecx as a temporary leaves `struct cpu` alone.
fn after_return(
    program: &Program,
    slots: &Slots,
    uses: &BTreeMap<GuestAddr, Words>,
    indirect: Option<&Words>,
    scratch: &[SlotId],
) -> BTreeMap<GuestAddr, Bits> {
    let mut outside = slots.all.clone();
    for s in scratch {
        outside.remove(slots.word(*s));
    }
    let mut after: BTreeMap<GuestAddr, Bits> = program.functions.keys().map(|&a| (a, outside.clone())).collect();
    let everything = Words::everything(slots);
    let callee = |target: &CallTarget| -> &Words {
        match target {
            CallTarget::Direct(addr) => uses.get(addr).unwrap_or(&everything),
            CallTarget::Indirect(_) => indirect.unwrap_or(&everything),
        }
    };
    // What indirect calls and tail calls leave live reaches every function they may call.
    let indirect_targets: Vec<GuestAddr> = if indirect.is_some() {
        program.address_taken.iter().copied().collect()
    } else {
        program.functions.keys().copied().collect()
    };
    // Sets only grow, bounded by every word: the loop ends.
    loop {
        let mut grew: Vec<(GuestAddr, Bits)> = Vec::new();
        let mut after_indirect = Bits::default();
        for (addr, func) in &program.functions {
            let at_return = after.get(addr).cloned().unwrap_or_else(|| slots.all.clone());
            let live_in = block_liveness(func, program, slots, &callee, &at_return, &mut Bits::default());
            for block in &func.blocks {
                let (target, live_after) = match &block.term {
                    Terminator::Call { target, cont } => {
                        (target, live_in.get(cont.block.index()).cloned().unwrap_or_default())
                    }
                    Terminator::TailCall { target } => (target, at_return.clone()),
                    _ => continue,
                };
                match target {
                    CallTarget::Direct(t) => grew.push((*t, live_after)),
                    CallTarget::Indirect(_) => {
                        after_indirect.union_with(&live_after);
                    }
                }
            }
        }
        grew.extend(indirect_targets.iter().map(|&t| (t, after_indirect.clone())));
        let mut changed = false;
        for (t, live) in grew {
            if let Some(set) = after.get_mut(&t) {
                changed |= set.union_with(&live);
            }
        }
        if !changed {
            return after;
        }
    }
}

/// The light union, when some address-taken function needs more than it; `None` when one union
/// serves every indirect call. What a hot loop keeps across an indirect call is in general
/// registers and flags, so what sets a callee apart is which of those it uses. The ones the
/// address-taken functions that call nothing use (the callbacks, comparators and small methods
/// indirect calls mostly reach) are the yardstick; the light union is what every address-taken
/// function whose general registers and flags stay within them uses (a callback calling the C
/// library, say, but not a run-time start-up routine that clobbers the callee-saved registers).
fn light_union(program: &Program, slots: &Slots, uses: &BTreeMap<GuestAddr, Words>, all: &Words) -> Option<Words> {
    let taken: Vec<(&Function, &Words)> = program
        .address_taken
        .iter()
        .filter_map(|a| Some((program.functions.get(a)?, uses.get(a)?)))
        .collect();
    let mut yardstick = Bits::default();
    let mut any = false;
    for (func, w) in &taken {
        let calls = func
            .blocks
            .iter()
            .any(|b| matches!(b.term, Terminator::Call { .. } | Terminator::TailCall { .. }));
        if !calls {
            any = true;
            yardstick.union_with(&w.reads);
            yardstick.union_with(&w.writes);
        }
    }
    let mut light = Words::default();
    for (_, w) in &taken {
        let within = w
            .reads
            .iter()
            .chain(w.writes.iter())
            .all(|i| !slots.registers.contains(i) || yardstick.contains(i));
        if within {
            light.reads.union_with(&w.reads);
            light.writes.union_with(&w.writes);
        }
    }
    let some_need_more = program
        .address_taken
        .iter()
        .any(|a| uses.get(a).is_none_or(|w| !fits_the_light_union(w, &light, all)));
    (any && some_need_more).then_some(light)
}

/// Whether handing over `light` is enough for a call of `w` that every indirect caller's own
/// analysis took to be a call of any address-taken function (`all`): it reads and writes nothing
/// more, and every word `all` says comes back adjusted by a constant comes back so from it too.
fn fits_the_light_union(w: &Words, light: &Words, all: &Words) -> bool {
    let within = |a: &Bits, b: &Bits| a.iter().all(|i| b.contains(i));
    if !within(&w.reads, &light.reads) || !within(&w.writes, &light.writes) {
        return false;
    }
    match (&w.returns, &all.returns) {
        (None, _) => true,
        (Some(_), None) => false,
        (Some(back), Some(claimed)) => claimed.iter().all(|(word, d)| back.get(word) == Some(d)),
    }
}

/// What the fixpoint knows of callees so far.
#[derive(Clone, Copy)]
struct Calls<'a> {
    uses: &'a BTreeMap<GuestAddr, Words>,
    contracts: &'a BTreeMap<GuestAddr, Words>,
    indirect: Option<&'a Words>,
}

/// One function's use given its callees' current ones: a backward pass over each block for the
/// words read before being written, iterated to a fixpoint over the blocks.
fn function_use(
    func: &Function,
    program: &Program,
    slots: &Slots,
    calls: Calls<'_>,
    stack_pointer: Option<SlotId>,
) -> Words {
    let Calls {
        uses,
        contracts,
        indirect,
    } = calls;
    let everything = Words::everything(slots);
    let callee = |target: &CallTarget| -> &Words {
        match target {
            CallTarget::Direct(addr) => uses.get(addr).or_else(|| contracts.get(addr)).unwrap_or(&everything),
            CallTarget::Indirect(_) => indirect.unwrap_or(&everything),
        }
    };
    let mut writes = Bits::default();
    let live_in = block_liveness(func, program, slots, &callee, &Bits::default(), &mut writes);
    let used = used_values(func);
    let mut reads = live_in.first().cloned().unwrap_or_default();
    let (preserved, returns) =
        preserved::preserved_words(func, program, slots, &|t| callee(t).clone(), &used, stack_pointer);
    for w in preserved.iter() {
        reads.remove(w);
        writes.remove(w);
    }
    Words { reads, writes, returns }
}

/// The values some instruction or terminator of `func` reads: a read whose value nobody uses is
/// not emitted, so it reads nothing.
fn used_values(func: &Function) -> Vec<bool> {
    let mut used = vec![false; func.value_types.len()];
    for block in &func.blocks {
        let operands = block
            .insts
            .iter()
            .flat_map(|i| i.kind.operands())
            .chain(block.term.operands());
        for v in operands {
            if let Some(u) = used.get_mut(v.index()) {
                *u = true;
            }
        }
    }
    used
}

/// The slot words live on entry to each block of `func` (read before written on some path on),
/// given what each callee reads and the words live where the function returns (`at_return`: none
/// for its own summary, what its callers read for [`after_return`]); adds every word it or its
/// callees may write to `writes`.
fn block_liveness<'w>(
    func: &Function,
    program: &Program,
    slots: &Slots,
    callee: &dyn Fn(&CallTarget) -> &'w Words,
    at_return: &Bits,
    writes: &mut Bits,
) -> Vec<Bits> {
    let used = used_values(func);
    let n = func.blocks.len();
    let mut live_in: Vec<Bits> = vec![Bits::default(); n];
    let mut changed = true;
    while changed {
        changed = false;
        for bi in (0..n).rev() {
            let block = &func.blocks[bi];
            let mut live = Bits::default();
            for dest in block.term.successors() {
                if let Some(l) = live_in.get(dest.block.index()) {
                    live.union_with(l);
                }
            }
            match &block.term {
                Terminator::Call { target, .. } => {
                    let w = callee(target);
                    live.union_with(&w.reads);
                    writes.union_with(&w.writes);
                }
                Terminator::TailCall { target } => {
                    let w = callee(target);
                    live.union_with(&w.reads);
                    live.union_with(at_return);
                    writes.union_with(&w.writes);
                }
                Terminator::Exit { reason, .. } if !ends_the_program(*reason) => {
                    live.union_with(&slots.all);
                    writes.union_with(&slots.all);
                }
                Terminator::Exit { .. }
                | Terminator::Unreachable
                | Terminator::Jump(_)
                | Terminator::Branch { .. }
                | Terminator::Switch { .. } => {}
                Terminator::Return => {
                    live.union_with(at_return);
                }
            }
            for inst in block.insts.iter().rev() {
                match &inst.kind {
                    InstKind::GetSlot { slot } | InstKind::GetIndexed { slot, .. }
                        if inst
                            .result
                            .is_some_and(|v| used.get(v.index()).copied().unwrap_or(true)) =>
                    {
                        live.insert(slots.word(*slot))
                    }
                    InstKind::SetSlot { slot, .. } => {
                        let word = slots.word(*slot);
                        writes.insert(word);
                        if slots.packed.get(slot.index()).copied().unwrap_or(false) {
                            live.insert(word);
                        } else {
                            live.remove(word);
                        }
                    }
                    InstKind::SetIndexed { slot, .. } => {
                        let word = slots.word(*slot);
                        writes.insert(word);
                        live.insert(word);
                    }
                    InstKind::Kill { slot } if !slots.packed.get(slot.index()).copied().unwrap_or(false) => {
                        live.remove(slots.word(*slot));
                    }
                    InstKind::CallHelper { helper, .. } => {
                        let (r, w) = preserved::helper_use(program, slots, helper);
                        live.union_with(&r);
                        writes.union_with(&w);
                    }
                    kind if rounds_by_guest_mode(kind) => {
                        live.union_with(&slots.special);
                    }
                    _ => {}
                }
            }
            if live != live_in[bi] {
                live_in[bi] = live;
                changed = true;
            }
        }
    }
    live_in
}

/// Whether an exit for `reason` is a guest fault that ends the program with a report: nothing
/// resumes after it, so it reads no state a caller must hand over. A system call, a halt, a yield
/// and code nobody lifted hand the state to the runtime, which may go on with it.
fn ends_the_program(reason: ExitReason) -> bool {
    match reason {
        ExitReason::DivideError | ExitReason::InvalidOpcode | ExitReason::Unliftable => true,
        ExitReason::Unlifted | ExitReason::Syscall | ExitReason::Halt | ExitReason::Yield => false,
    }
}

/// Whether an instruction rounds by the guest's current mode (which the guest's C part reads
/// from `struct cpu`).
pub(crate) fn rounds_by_guest_mode(kind: &InstKind) -> bool {
    matches!(
        kind,
        InstKind::FBinary {
            rounding: Rounding::Dynamic,
            ..
        } | InstKind::FTernary {
            rounding: Rounding::Dynamic,
            ..
        } | InstKind::FUnary {
            rounding: Rounding::Dynamic,
            ..
        } | InstKind::FConvert {
            rounding: Rounding::Dynamic,
            ..
        }
    )
}

#[cfg(test)]
mod tests {
    use rpt_ir::parse::parse_program;

    use super::*;

    const STATE: &str = "state {\n    a: i32 gpr\n    b: i32 gpr\n    s: i32 gpr\n    sp: i32 gpr\n}\n";

    /// What a call of `callee` from a function calling it reads and writes, by slot name.
    fn call_of(body: &str, callee: u64, externs: &BTreeMap<GuestAddr, ExternStateUse>) -> Option<(String, String)> {
        let program = parse_program(&format!("{STATE}{body}")).expect("test IR parses");
        let sp = program.state.find("sp");
        let uses = analyze(&program, externs, sp, &[]);
        let caller = program.functions.values().next().expect("a caller");
        let names = |set: &BTreeSet<SlotId>| {
            set.iter()
                .map(|s| program.state.slot(*s).name.clone())
                .collect::<Vec<_>>()
                .join(",")
        };
        let calls = uses.calls_of(caller);
        let u = calls.of(&CallTarget::Direct(GuestAddr(callee)))?;
        Some((names(&u.reads), names(&u.writes)))
    }

    const CALLER: &str = "function f_00001000 {\nblock0:\n    call f_00002000, block1\nblock1:\n    return\n}\n";

    fn callee(body: &str) -> String {
        format!("{CALLER}\nfunction f_00002000 {{\nblock0:\n{body}}}\n")
    }

    /// Saves s below the stack pointer, uses it for a's value, loads it back and pops.
    const SAVE_USE_RESTORE_S: &str = "    v0: i32 = get %sp
    v1: i32 = iconst 0x4
    v2: i32 = sub v0, v1
    v3: i32 = get %s
    store.le ram v2, v3
    set %sp, v2
    v4: i32 = get %a
    set %s, v4
    v5: i32 = load.le ram v2
    set %s, v5
    v6: i32 = add v2, v1
    set %sp, v6
";

    #[test]
    fn a_register_saved_on_the_stack_and_loaded_back_is_preserved() {
        let program = callee(&format!("{SAVE_USE_RESTORE_S}    return\n"));
        let (reads, writes) = call_of(&program, 0x2000, &BTreeMap::new()).expect("a lifted callee");
        assert_eq!((reads.as_str(), writes.as_str()), ("a,sp", "sp"));
    }

    #[test]
    fn a_register_stored_through_a_pointer_is_read() {
        // The same shape, but the "save" goes through a pointer in a: a real use of s.
        let program = callee(
            "    v0: i32 = get %a
    v3: i32 = get %s
    store.le ram v0, v3
    v4: i32 = iconst 0x1
    set %s, v4
    v5: i32 = load.le ram v0
    set %s, v5
    return
",
        );
        let (reads, writes) = call_of(&program, 0x2000, &BTreeMap::new()).expect("a lifted callee");
        assert_eq!((reads.as_str(), writes.as_str()), ("a,s", "s"));
    }

    #[test]
    fn a_save_overwritten_before_its_load_is_not_a_restore() {
        let program = callee(
            "    v0: i32 = get %sp
    v1: i32 = iconst 0x4
    v2: i32 = sub v0, v1
    v3: i32 = get %s
    store.le ram v2, v3
    v4: i32 = iconst 0x9
    store.le ram v2, v4
    v5: i32 = load.le ram v2
    set %s, v5
    return
",
        );
        let (reads, writes) = call_of(&program, 0x2000, &BTreeMap::new()).expect("a lifted callee");
        assert_eq!((reads.as_str(), writes.as_str()), ("s,sp", "s"));
    }

    #[test]
    fn externs_touch_what_their_contract_says_and_everything_without_one() {
        let program = format!("extern f_00002000 \"ext\"\n{CALLER}");
        assert_eq!(
            call_of(&program, 0x2000, &BTreeMap::new()),
            None,
            "no contract: everything"
        );
        let contract = ExternStateUse {
            reads: vec![SlotId(3)],
            writes: vec![SlotId(0), SlotId(3)],
            adjusts: vec![(SlotId(3), 4)],
            never_returns: false,
        };
        let externs = BTreeMap::from([(GuestAddr(0x2000), contract)]);
        let (reads, writes) = call_of(&program, 0x2000, &externs).expect("a contract");
        assert_eq!((reads.as_str(), writes.as_str()), ("sp", "a,sp"));
    }

    #[test]
    fn an_indirect_call_without_address_taken_functions_touches_everything() {
        let program = parse_program(&format!(
            "{STATE}function f_00001000 {{\nblock0:\n    v0: i32 = get %a\n    call v0, block1\nblock1:\n    return\n}}\n"
        ))
        .expect("test IR parses");
        let uses = analyze(&program, &BTreeMap::new(), None, &[]);
        let caller = &program.functions[&GuestAddr(0x1000)];
        assert_eq!(uses.calls_of(caller).indirect, None);
    }

    #[test]
    fn a_register_saved_only_past_an_early_return_is_preserved() {
        // The prologue saves s only on the path that uses it (a shrink-wrapped PowerPC prologue):
        // at the return s is untouched on one path and loaded back on the other.
        let program = callee(&format!(
            "    v10: i32 = get %a
    v11: i32 = iconst 0x0
    v12: i1 = icmp eq v10, v11
    br v12, block2, block1
block1:
{SAVE_USE_RESTORE_S}    jump block2
block2:
    return
"
        ));
        let (reads, writes) = call_of(&program, 0x2000, &BTreeMap::new()).expect("a lifted callee");
        assert_eq!((reads.as_str(), writes.as_str()), ("a,sp", "sp"));
    }

    #[test]
    fn a_scratch_register_no_caller_reads_after_a_return_is_not_written_back() {
        // b and s are scratch. f_2000 writes a, b and s; f_1000 reads b after calling it, and
        // tail-calls f_3000 (which inherits what f_1000's callers read); f_4000's indirect call
        // reaches the address-taken f_5000, and reads s after it.
        let program = parse_program(&format!(
            "{STATE}address_taken f_00005000
function f_00001000 {{
block0:
    call f_00002000, block1
block1:
    v0: i32 = get %b
    set %a, v0
    tail f_00003000
}}
function f_00002000 {{
block0:
    v0: i32 = iconst 0x1
    set %a, v0
    set %b, v0
    set %s, v0
    return
}}
function f_00003000 {{
block0:
    v0: i32 = iconst 0x2
    set %b, v0
    return
}}
function f_00004000 {{
block0:
    v0: i32 = get %a
    call v0, block1
block1:
    v1: i32 = get %s
    set %a, v1
    return
}}
function f_00005000 {{
block0:
    v0: i32 = iconst 0x3
    set %s, v0
    set %b, v0
    return
}}
"
        ))
        .expect("test IR parses");
        let slot = |n: &str| program.state.find(n).expect("a slot");
        let scratch = [slot("b"), slot("s")];
        let uses = analyze(&program, &BTreeMap::new(), program.state.find("sp"), &scratch);
        let after = |addr: u64| {
            let names: Vec<String> = uses
                .calls_of(&program.functions[&GuestAddr(addr)])
                .after_return
                .expect("known for a lifted function")
                .iter()
                .map(|s| program.state.slot(*s).name.clone())
                .collect();
            names.join(",")
        };
        assert_eq!(after(0x2000), "a,b,sp", "f_1000 reads b after the call");
        assert_eq!(after(0x3000), "a,sp", "a tail callee inherits its caller's readers");
        assert_eq!(
            after(0x5000),
            "a,s,sp",
            "an indirect call reaches every address-taken function"
        );
        assert_eq!(after(0x4000), "a,sp", "no caller: only what code outside reads");
        // Without scratch registers, everything is read after every return.
        let uses = analyze(&program, &BTreeMap::new(), None, &[]);
        let all = uses.calls_of(&program.functions[&GuestAddr(0x2000)]).after_return;
        assert_eq!(all.map(|s| s.len()), Some(4));
    }

    #[test]
    fn indirect_calls_hand_small_callees_the_light_union_and_the_rest_everything() {
        // f_2000 is a leaf callback (reads a, writes b); f_3000, also address-taken, calls an
        // extern without a contract, so it may touch everything.
        let program = parse_program(&format!(
            "{STATE}extern f_00009000 \"ext\"\naddress_taken f_00002000\naddress_taken f_00003000
function f_00001000 {{
block0:
    v0: i32 = get %s
    call v0, block1
block1:
    return
}}
function f_00002000 {{
block0:
    v0: i32 = get %a
    set %b, v0
    return
}}
function f_00003000 {{
block0:
    call f_00009000, block1
block1:
    return
}}
function f_00004000 {{
block0:
    v0: i32 = get %b
    set %a, v0
    return
}}
"
        ))
        .expect("test IR parses");
        let uses = analyze(&program, &BTreeMap::new(), None, &[]);
        let calls = uses.calls_of(&program.functions[&GuestAddr(0x1000)]);
        let slot = |n: &str| program.state.find(n).expect("a slot");
        let light = calls.indirect_light.expect("a light union");
        assert_eq!(light.reads, BTreeSet::from([slot("a")]));
        assert_eq!(light.writes, BTreeSet::from([slot("b")]));
        assert_eq!(
            calls.indirect.map(|u| u.reads.len()),
            Some(4),
            "the full union is everything"
        );
        // The direct table holds what the light union covers: the callback, not the one calling
        // the extern, nor f_4000, which reads b.
        let all: BTreeSet<GuestAddr> = [0x1000, 0x2000, 0x3000, 0x4000, 0x9000].map(GuestAddr).into();
        assert_eq!(uses.direct_functions(&all), BTreeSet::from([GuestAddr(0x2000)]));
        // With only light functions taken, one union serves every call and the table holds all.
        let mut only_light = program.clone();
        only_light.address_taken.remove(&GuestAddr(0x3000));
        let uses = analyze(&only_light, &BTreeMap::new(), None, &[]);
        assert_eq!(
            uses.calls_of(&only_light.functions[&GuestAddr(0x1000)]).indirect_light,
            None
        );
        assert_eq!(uses.direct_functions(&all), all);
    }

    #[test]
    fn a_register_read_back_as_part_of_a_wider_load_is_read() {
        // s spilled next to a constant and read back as one 64-bit value (PowerPC's integer to
        // double conversion through the stack): a use of s, though it went through a stack slot.
        let program = callee(
            "    v0: i32 = get %sp
    v1: i32 = iconst 0x8
    v2: i32 = sub v0, v1
    v3: i32 = get %s
    store.le ram v2, v3
    v4: i32 = iconst 0x4
    v5: i32 = add v2, v4
    store.le ram v5, v4
    v6: i64 = load.le ram v2
    v7: i32 = trunc v6
    set %a, v7
    return
",
        );
        let (reads, writes) = call_of(&program, 0x2000, &BTreeMap::new()).expect("a lifted callee");
        assert_eq!((reads.as_str(), writes.as_str()), ("s,sp", "a"));
    }

    #[test]
    fn a_register_read_through_an_escaped_stack_address_is_read() {
        // a spilled to the stack, the spill's address stored to memory and a read through what
        // comes back (PowerPC's varargs save area and va_arg): a is read.
        let program = callee(
            "    v0: i32 = get %sp
    v1: i32 = iconst 0x8
    v2: i32 = sub v0, v1
    v3: i32 = get %a
    store.le ram v2, v3
    v4: i32 = iconst 0x100
    store.le ram v4, v2
    v5: i32 = load.le ram v4
    v6: i32 = load.le ram v5
    set %b, v6
    return
",
        );
        let (reads, writes) = call_of(&program, 0x2000, &BTreeMap::new()).expect("a lifted callee");
        assert_eq!((reads.as_str(), writes.as_str()), ("a,sp", "b"));
    }
}
