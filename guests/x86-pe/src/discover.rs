//! Function discovery: recursive descent from strong seeds, then validated weak candidates.
//!
//! Strong seeds are the image entry, its exports, the recipe's entry points and function hints,
//! and every target of a direct call (or tail jump) from strong code. Their reachable code must
//! lift; anything that does not is an [`Severity::Error`] naming the address and the bytes.
//!
//! Weak candidates are 32-bit immediates and aligned data words that point into executable code
//! (function pointers, vtables, callback tables). A weak candidate is kept only if it and every
//! function it calls decode and lift cleanly, and it is not an address inside a known function or
//! a jump-table case; otherwise it is dropped with a [`Severity::Note`]. Kept ones are both
//! functions and `address_taken`, as are strong functions whose address appears the same way.
//!
//! The per-function walk ([`Walker::walk`]) is shared with the lifter, so discovery and lifting
//! agree on every block, jump table, tail call and call that never returns.

use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};

use iced_x86::{Instruction, OpKind, Register};
use rpt_api::{Diagnostic, Discovery, GuestImage, Seeds, Severity};
use rpt_ir::GuestAddr;

use crate::decode::{self, DecodeError, Disassembler};
use crate::lift::jump_table::{self, JumpTable};
use crate::lift::{self, Kind};

/// Imports after which execution never continues; code after a call to them is not followed.
const NORETURN_IMPORTS: &[&str] = &[
    "ExitProcess",
    "ExitThread",
    "FatalExit",
    "FatalAppExitA",
    "FatalAppExitW",
    "exit",
    "_exit",
    "abort",
    "longjmp",
];

/// Imports that return more than once: `setjmp` returns again whenever `longjmp` names its buffer.
///
/// A call to one becomes a tail call, and the code after it becomes a function of its own
/// (the resume point): the platform's `setjmp` dispatches that function inside a host frame
/// that `longjmp` can unwind to (docs/c-abi.md, "Resume points").
const RETURNS_TWICE_IMPORTS: &[&str] = &["_setjmp3", "_setjmp", "setjmp"];

/// What calling an import does to control flow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ImportFlow {
    /// Returns once, like any function.
    Returns,
    /// Never returns (`ExitProcess`, `longjmp`).
    NoReturn,
    /// Returns once now and again at every `longjmp` (`_setjmp3`).
    ReturnsTwice,
}

impl ImportFlow {
    fn of(name: &str) -> ImportFlow {
        if NORETURN_IMPORTS.iter().any(|n| n.eq_ignore_ascii_case(name)) {
            ImportFlow::NoReturn
        } else if RETURNS_TWICE_IMPORTS.contains(&name) {
            ImportFlow::ReturnsTwice
        } else {
            ImportFlow::Returns
        }
    }
}

/// Why an instruction could not be taken into a function.
#[derive(Clone, Debug)]
pub(crate) enum Failure {
    /// Nothing decodes here.
    Decode(DecodeError),
    /// It decodes, but the lifter has no handler for it.
    Unsupported(Instruction),
}

/// The control-flow graph of one function as the walk found it.
#[derive(Clone, Debug, Default)]
pub(crate) struct FunctionCfg {
    /// The function's entry.
    pub(crate) entry: GuestAddr,
    /// Every reachable instruction.
    pub(crate) insns: BTreeMap<GuestAddr, Instruction>,
    /// Addresses where a guest basic block starts (the entry, branch targets, fall-throughs, call returns).
    pub(crate) block_starts: BTreeSet<GuestAddr>,
    /// Recognised jump tables by the address of their indirect jump.
    pub(crate) jump_tables: BTreeMap<GuestAddr, JumpTable>,
    /// Functions this one calls or tail-jumps to directly (in the image, not imports).
    pub(crate) calls: BTreeSet<GuestAddr>,
    /// Direct calls whose target is not code: (call address, target).
    pub(crate) bad_calls: BTreeSet<(GuestAddr, GuestAddr)>,
    /// Call instructions whose callee never returns, so nothing after them is followed.
    pub(crate) noreturn_calls: BTreeSet<GuestAddr>,
    /// Calls of an import that returns twice (`setjmp`): lifted as tail calls, and the address after
    /// each is a function entry of its own (in `calls`).
    pub(crate) returns_twice_calls: BTreeSet<GuestAddr>,
    /// Addresses reached that could not be decoded or lifted.
    pub(crate) failures: BTreeMap<GuestAddr, Failure>,
    /// 32-bit immediates that point into executable code (weak function candidates).
    pub(crate) code_immediates: BTreeSet<GuestAddr>,
    /// Whether some path may return to the caller (a `ret`, an indirect or tail jump, or unknown code).
    pub(crate) may_return: bool,
}

/// Walks functions of one image against a known set of function entries.
pub(crate) struct Walker<'a> {
    image: &'a GuestImage,
    functions: Cow<'a, BTreeSet<GuestAddr>>,
    /// Entries added on top of `functions` (kept apart so a trial walker need not copy the set).
    added: BTreeSet<GuestAddr>,
    /// IAT slot → the import's thunk.
    iat: BTreeMap<GuestAddr, GuestAddr>,
    /// Thunk → what calling the import does to control flow.
    thunks: BTreeMap<GuestAddr, ImportFlow>,
    /// Memoised "may this function return" answers for call continuations.
    returns: RefCell<BTreeMap<GuestAddr, bool>>,
}

impl<'a> Walker<'a> {
    /// A walker over `image` where `functions` are the known entries (jumps to them are tail calls).
    pub(crate) fn new(image: &'a GuestImage, functions: Cow<'a, BTreeSet<GuestAddr>>) -> Walker<'a> {
        let iat = image.imports.iter().map(|i| (i.slot, i.thunk)).collect();
        let thunks = image
            .imports
            .iter()
            .map(|i| (i.thunk, ImportFlow::of(&i.name)))
            .collect();
        Walker {
            image,
            functions,
            added: BTreeSet::new(),
            iat,
            thunks,
            returns: RefCell::new(BTreeMap::new()),
        }
    }

    /// The image walked.
    pub(crate) fn image(&self) -> &'a GuestImage {
        self.image
    }

    /// Whether `addr` is a known function entry.
    pub(crate) fn is_function(&self, addr: GuestAddr) -> bool {
        self.functions.contains(&addr) || self.added.contains(&addr)
    }

    /// Whether `addr` is an import's thunk.
    pub(crate) fn is_thunk(&self, addr: GuestAddr) -> bool {
        self.thunks.contains_key(&addr)
    }

    /// What calling `target` does when it is an import's thunk or a stub that only jumps through
    /// an IAT slot (`jmp [__imp__abort]`, as import libraries link them); `None` for other code.
    pub(crate) fn import_flow(&self, target: GuestAddr) -> Option<ImportFlow> {
        if let Some(&flow) = self.thunks.get(&target) {
            return Some(flow);
        }
        let insn = decode::decode_at(self.image, target).ok()?;
        match lift::classify(&insn) {
            Some(Kind::JumpIndirect) => self.thunks.get(&self.iat_operand(&insn)?).copied(),
            _ => None,
        }
    }

    /// The thunk of the import whose IAT slot is `slot`.
    pub(crate) fn iat_thunk(&self, slot: GuestAddr) -> Option<GuestAddr> {
        self.iat.get(&slot).copied()
    }

    /// Whether a jump from the function at `entry` to `addr` leaves the function (a tail call).
    pub(crate) fn is_tail_target(&self, addr: GuestAddr, entry: GuestAddr) -> bool {
        addr != entry && (self.is_function(addr) || self.is_thunk(addr))
    }

    fn add_function(&mut self, addr: GuestAddr) -> bool {
        let added = !self.functions.contains(&addr) && self.added.insert(addr);
        if added {
            // A new entry can turn an intra-function jump into a tail call, so earlier answers may change.
            self.returns.borrow_mut().clear();
        }
        added
    }

    /// A walker that knows what this one knows and can learn more without changing it.
    fn trial(&self) -> Walker<'_> {
        let mut w = Walker::new(self.image, Cow::Borrowed(self.functions.as_ref()));
        w.added = self.added.clone();
        w
    }

    /// Every known entry.
    fn all_functions(&self) -> BTreeSet<GuestAddr> {
        self.functions.iter().chain(&self.added).copied().collect()
    }

    /// Whether the function at `addr` may return, judged from its own code with its calls assumed to return.
    fn may_return(&self, addr: GuestAddr) -> bool {
        if let Some(&r) = self.returns.borrow().get(&addr) {
            return r;
        }
        let r = self.walk_inner(addr, false).may_return;
        self.returns.borrow_mut().insert(addr, r);
        r
    }

    /// The CFG of the function at `entry`.
    pub(crate) fn walk(&self, entry: GuestAddr) -> FunctionCfg {
        self.walk_inner(entry, true)
    }

    /// With `deep`, calls to in-image functions that never return end their path; without, every
    /// such call is assumed to return (this keeps the return analysis one level deep and cycle-free).
    fn walk_inner(&self, entry: GuestAddr, deep: bool) -> FunctionCfg {
        let mut cfg = FunctionCfg {
            entry,
            ..FunctionCfg::default()
        };
        cfg.block_starts.insert(entry);
        let mut queue = BTreeSet::from([entry]);
        let mut indirect = BTreeSet::new();
        loop {
            while let Some(start) = queue.pop_first() {
                self.walk_run(&mut cfg, start, deep, &mut queue, &mut indirect);
            }
            let mut found = false;
            for j in indirect.clone() {
                let Some(insn) = cfg.insns.get(&j) else { continue };
                if let Some(table) = jump_table::recognise(self.image, &cfg.insns, &cfg.block_starts, insn) {
                    for &t in &table.targets {
                        self.add_target(&mut cfg, &mut queue, t);
                    }
                    cfg.jump_tables.insert(j, table);
                    indirect.remove(&j);
                    found = true;
                }
            }
            if !found {
                break;
            }
        }
        if !indirect.is_empty() {
            // An indirect tail jump may reach a function that returns to our caller.
            cfg.may_return = true;
        }
        cfg
    }

    /// A jump or branch target: a tail call when it is another function's entry, else a block.
    fn add_target(&self, cfg: &mut FunctionCfg, queue: &mut BTreeSet<GuestAddr>, addr: GuestAddr) {
        if self.is_tail_target(addr, cfg.entry) {
            if self.thunks.get(&addr) != Some(&ImportFlow::NoReturn) {
                cfg.may_return = true;
            }
            if self.is_function(addr) {
                cfg.calls.insert(addr);
            }
        } else if cfg.block_starts.insert(addr) {
            queue.insert(addr);
        }
    }

    /// Decodes straight-line code from `start` until the block ends or joins code already walked.
    fn walk_run(
        &self,
        cfg: &mut FunctionCfg,
        start: GuestAddr,
        deep: bool,
        queue: &mut BTreeSet<GuestAddr>,
        indirect: &mut BTreeSet<GuestAddr>,
    ) {
        let mut pc = start;
        let add_block = |cfg: &mut FunctionCfg, queue: &mut BTreeSet<GuestAddr>, addr: GuestAddr| {
            if cfg.block_starts.insert(addr) {
                queue.insert(addr);
            }
        };
        loop {
            if cfg.insns.contains_key(&pc) || cfg.failures.contains_key(&pc) {
                return;
            }
            let insn = match decode::decode_at(self.image, pc) {
                Ok(insn) => insn,
                Err(e) => {
                    cfg.failures.insert(pc, Failure::Decode(e));
                    cfg.may_return = true;
                    return;
                }
            };
            cfg.insns.insert(pc, insn);
            let Some(kind) = lift::classify(&insn) else {
                cfg.failures.insert(pc, Failure::Unsupported(insn));
                cfg.may_return = true;
                return;
            };
            let next = GuestAddr(insn.next_ip32().into());
            match kind {
                Kind::Plain(_) => {
                    self.note_immediates(cfg, &insn);
                    pc = next;
                }
                Kind::Branch(_) => {
                    self.add_target(cfg, queue, GuestAddr(insn.near_branch_target()));
                    add_block(cfg, queue, next);
                    return;
                }
                Kind::Jump => {
                    self.add_target(cfg, queue, GuestAddr(insn.near_branch_target()));
                    return;
                }
                Kind::JumpIndirect => {
                    match self.iat_operand(&insn) {
                        Some(thunk) => {
                            if self.thunks.get(&thunk) != Some(&ImportFlow::NoReturn) {
                                cfg.may_return = true;
                            }
                        }
                        None => {
                            indirect.insert(pc);
                        }
                    }
                    return;
                }
                Kind::Call => {
                    let target = GuestAddr(insn.near_branch_target());
                    if target == next {
                        // `call $+5` pushes its own address and goes on (the lifter does the same).
                        pc = next;
                        continue;
                    }
                    let flow = self.import_flow(target);
                    if !self.thunks.contains_key(&target) && self.image.is_code(target) {
                        cfg.calls.insert(target);
                    }
                    let returns = if flow == Some(ImportFlow::ReturnsTwice) {
                        self.resume_after(cfg, pc, next);
                        return;
                    } else if let Some(flow) = flow {
                        flow == ImportFlow::Returns
                    } else if self.image.is_code(target) {
                        !deep || self.may_return(target)
                    } else {
                        cfg.bad_calls.insert((pc, target));
                        true
                    };
                    if returns {
                        add_block(cfg, queue, next);
                    } else {
                        cfg.noreturn_calls.insert(pc);
                    }
                    return;
                }
                Kind::CallIndirect => {
                    let flow = self.iat_operand(&insn).and_then(|t| self.thunks.get(&t).copied());
                    if flow == Some(ImportFlow::ReturnsTwice) {
                        self.resume_after(cfg, pc, next);
                        return;
                    }
                    if flow == Some(ImportFlow::NoReturn) {
                        cfg.noreturn_calls.insert(pc);
                    } else {
                        add_block(cfg, queue, next);
                    }
                    return;
                }
                Kind::Return => {
                    cfg.may_return = true;
                    return;
                }
                Kind::Stop(_) => return,
            }
        }
    }

    /// A call at `pc` of an import that returns twice: the code after it is a function of its own,
    /// which returns to this function's caller, so this function may return.
    fn resume_after(&self, cfg: &mut FunctionCfg, pc: GuestAddr, next: GuestAddr) {
        cfg.returns_twice_calls.insert(pc);
        cfg.calls.insert(next);
        cfg.may_return = true;
    }

    /// The import thunk reached through `[disp32]`, when that is an IAT slot.
    fn iat_operand(&self, insn: &Instruction) -> Option<GuestAddr> {
        if insn.op_kind(0) != OpKind::Memory
            || insn.memory_segment() == Register::FS
            || insn.memory_base() != Register::None
            || insn.memory_index() != Register::None
        {
            return None;
        }
        self.iat_thunk(GuestAddr(insn.memory_displacement32().into()))
    }

    fn note_immediates(&self, cfg: &mut FunctionCfg, insn: &Instruction) {
        for i in 0..insn.op_count() {
            if insn.op_kind(i) == OpKind::Immediate32 {
                let v = GuestAddr(insn.immediate(i) & 0xffff_ffff);
                if self.image.is_code(v) {
                    cfg.code_immediates.insert(v);
                }
            }
        }
    }
}

/// Finds every function reachable from the image's entry, its exports and the seeds, plus the
/// weak candidates that survive validation.
pub(crate) fn discover(image: &GuestImage, seeds: &Seeds) -> Discovery {
    let mut strong: BTreeSet<GuestAddr> = BTreeSet::new();
    let mut early = Vec::new();
    // A DLL may have no entry point (AddressOfEntryPoint 0 puts it on the headers); that is
    // worth a warning, not an error about undecodable bytes.
    if image.is_code(image.entry) {
        strong.insert(image.entry);
    } else {
        early.push(Diagnostic {
            severity: Severity::Warning,
            addr: image.entry,
            message: format!(
                "the image's entry point {} is not in an executable section; it is not lifted",
                image.entry
            ),
        });
    }
    strong.extend(image.exports.values().copied().filter(|&a| image.is_code(a)));
    strong.extend(seeds.entry_points.iter().copied());
    strong.extend(seeds.function_hints.iter().copied());

    // Phase 1: strong code, to a fixed point over direct call targets.
    let mut walker = Walker::new(image, Cow::Owned(strong.clone()));
    let mut queue = strong.clone();
    while let Some(f) = queue.pop_first() {
        let cfg = walker.walk(f);
        for c in cfg.calls {
            if walker.add_function(c) {
                queue.insert(c);
            }
        }
    }
    let strong_functions = walker.all_functions();
    // From here on the strong set is the walker's base, so trial walkers borrow it instead of copying it.
    let mut walker = Walker::new(image, Cow::Borrowed(&strong_functions));

    // Phase 2: weak candidates from immediates and data words, validated one by one.
    let mut notes: BTreeMap<GuestAddr, String> = BTreeMap::new();
    let mut covered: BTreeSet<GuestAddr> = BTreeSet::new();
    let mut cases: BTreeSet<GuestAddr> = BTreeSet::new();
    let mut candidates: BTreeSet<GuestAddr> = data_words(image);
    candidates.extend(constructor_lists(image));
    for &f in &strong_functions {
        let cfg = walker.walk(f);
        note_cover(&cfg, &mut covered, &mut cases);
        candidates.extend(cfg.code_immediates.iter().copied());
    }
    let mut address_taken = BTreeSet::new();
    let mut seen = BTreeSet::new();
    while let Some(c) = candidates.pop_first() {
        if !seen.insert(c) {
            continue;
        }
        if walker.is_function(c) {
            address_taken.insert(c);
            continue;
        }
        if cases.contains(&c) {
            // Jump-table entries in data are case labels, already lifted as blocks.
            continue;
        }
        if covered.contains(&c) {
            notes.insert(
                c,
                format!("dropped the possible function pointer {c}: it points inside known code"),
            );
            continue;
        }
        match validate(&walker, c) {
            Ok(cfgs) => {
                for cfg in &cfgs {
                    walker.add_function(cfg.entry);
                    note_cover(cfg, &mut covered, &mut cases);
                    candidates.extend(cfg.code_immediates.iter().copied().filter(|a| !seen.contains(a)));
                }
                address_taken.insert(c);
            }
            Err(why) => {
                notes.insert(c, format!("dropped the possible function pointer {c}: {why}"));
            }
        }
    }

    // Phase 3: diagnostics for strong code, against the final function set.
    let mut diagnostics: Vec<Diagnostic> = early;
    diagnostics.extend(notes.into_iter().map(|(addr, message)| Diagnostic {
        severity: Severity::Note,
        addr,
        message,
    }));
    let mut errors: BTreeMap<GuestAddr, Diagnostic> = BTreeMap::new();
    let mut disasm = Disassembler::new();
    for &f in &strong_functions {
        let cfg = walker.walk(f);
        for (&addr, failure) in &cfg.failures {
            errors.entry(addr).or_insert_with(|| Diagnostic {
                severity: Severity::Error,
                addr,
                message: format!(
                    "in {}: {}",
                    f.function_name(),
                    lift::describe_failure(&walker, failure, &mut disasm)
                ),
            });
        }
        for &(addr, target) in &cfg.bad_calls {
            errors.entry(addr).or_insert_with(|| Diagnostic {
                severity: Severity::Warning,
                addr,
                message: format!("call to {target}, which is not in an executable section"),
            });
        }
    }
    diagnostics.extend(errors.into_values());
    diagnostics.sort_by_key(|d| (d.addr, d.severity));
    Discovery {
        functions: walker.all_functions(),
        address_taken,
        diagnostics,
    }
}

/// Records the addresses inside a walked function that a function pointer cannot sensibly name.
fn note_cover(cfg: &FunctionCfg, covered: &mut BTreeSet<GuestAddr>, cases: &mut BTreeSet<GuestAddr>) {
    covered.extend(cfg.insns.keys().copied().filter(|&a| a != cfg.entry));
    for table in cfg.jump_tables.values() {
        cases.extend(table.targets.iter().copied());
    }
}

/// Walks a weak candidate and the new functions it calls; all must be free of failures.
fn validate(walker: &Walker<'_>, candidate: GuestAddr) -> Result<Vec<FunctionCfg>, String> {
    let mut trial = walker.trial();
    trial.add_function(candidate);
    let mut stack = vec![candidate];
    let mut cfgs = Vec::new();
    let mut disasm = Disassembler::new();
    while let Some(f) = stack.pop() {
        let cfg = trial.walk(f);
        if let Some((addr, failure)) = cfg.failures.iter().next() {
            return Err(format!(
                "at {addr}: {}",
                lift::describe_failure(walker, failure, &mut disasm)
            ));
        }
        if let Some((_, target)) = cfg.bad_calls.iter().next() {
            return Err(format!("it calls {target}, which is not code"));
        }
        for &c in &cfg.calls {
            if trial.add_function(c) {
                stack.push(c);
            }
        }
        cfgs.push(cfg);
    }
    Ok(cfgs)
}

/// Function pointers in GCC's constructor and destructor lists inside executable sections.
///
/// mingw's linker script puts `__CTOR_LIST__` and `__DTOR_LIST__` at the end of `.text`: an aligned
/// word 0xffffffff, the functions, then a 0 word. `__do_global_ctors` calls them through the list,
/// so nothing else names them. Only complete lists of code pointers count.
fn constructor_lists(image: &GuestImage) -> BTreeSet<GuestAddr> {
    let mut out = BTreeSet::new();
    for seg in image.segments.iter().filter(|s| s.flags.execute) {
        let skip = ((4 - seg.addr.0 % 4) % 4) as usize;
        let words: Vec<u32> = seg
            .bytes
            .get(skip..)
            .unwrap_or_default()
            .chunks_exact(4)
            .filter_map(|c| <[u8; 4]>::try_from(c).ok().map(u32::from_le_bytes))
            .collect();
        for (i, &w) in words.iter().enumerate() {
            if w != u32::MAX {
                continue;
            }
            let list: Vec<u32> = words
                .iter()
                .skip(i + 1)
                .take_while(|&&p| p != 0 && image.is_code(GuestAddr(u64::from(p))))
                .copied()
                .collect();
            let terminated = words.get(i + 1 + list.len()) == Some(&0);
            if terminated && !list.is_empty() {
                out.extend(list.into_iter().map(|p| GuestAddr(u64::from(p))));
            }
        }
    }
    out
}

/// Aligned 32-bit words in non-executable sections that point into executable code.
fn data_words(image: &GuestImage) -> BTreeSet<GuestAddr> {
    let mut out = BTreeSet::new();
    for seg in image
        .segments
        .iter()
        .filter(|s| !s.flags.execute && s.name != "headers")
    {
        let skip = ((4 - seg.addr.0 % 4) % 4) as usize;
        for chunk in seg.bytes.get(skip..).unwrap_or_default().chunks_exact(4) {
            let Ok(word) = <[u8; 4]>::try_from(chunk) else { continue };
            let addr = GuestAddr(u64::from(u32::from_le_bytes(word)));
            if image.is_code(addr) {
                out.insert(addr);
            }
        }
    }
    out
}
