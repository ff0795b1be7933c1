//! Function discovery: recursive descent from strong seeds, then validated weak candidates.
//!
//! Strong seeds are the image entry, the recipe's entry points and function hints, and every
//! target of a `bl` from strong code. Their reachable code must lift; anything that does not is
//! an error naming the address and the word.
//!
//! Weak candidates are code addresses built by `lis`/`addi` (or `lis`/`ori`) pairs and aligned
//! data words that point at code (function pointers, vtables). A candidate is kept only if it and
//! every function it calls decode cleanly and it is not inside a known function; otherwise it is
//! dropped with a note. Kept ones are functions and `address_taken`.
//!
//! The per-function walk ([`Walker::walk`]) is shared with the lifter, so discovery and lifting
//! agree on every block, jump table, tail call and call that never returns.

use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};

use rpt_api::{Diagnostic, Discovery, GuestImage, Seeds, Severity};
use rpt_ir::GuestAddr;

use crate::decode::{self, Insn};
use crate::lift::{self, Flow};

/// Why an instruction could not be taken into a function.
#[derive(Clone, Debug)]
pub(crate) enum Failure {
    /// The address is not in an executable section (or is misaligned).
    NotCode,
    /// No decoder row matches this word.
    Unknown(u32),
}

/// A recognised jump table: the `bctr` goes to one of these targets.
#[derive(Clone, Debug)]
pub(crate) struct JumpTable {
    /// The case targets, deduplicated and sorted.
    pub(crate) targets: Vec<GuestAddr>,
}

/// The control-flow graph of one function as the walk found it.
#[derive(Clone, Default)]
pub(crate) struct FunctionCfg {
    /// The function's entry.
    pub(crate) entry: GuestAddr,
    /// Every reachable instruction.
    pub(crate) insns: BTreeMap<GuestAddr, Insn>,
    /// Addresses where a guest basic block starts.
    pub(crate) block_starts: BTreeSet<GuestAddr>,
    /// Addresses where walking stopped on something unliftable.
    pub(crate) failures: BTreeMap<GuestAddr, Failure>,
    /// Direct call and tail-call targets.
    pub(crate) calls: BTreeSet<GuestAddr>,
    /// `bl`s to functions that never return.
    pub(crate) noreturn_calls: BTreeSet<GuestAddr>,
    /// Jump tables by the address of their `bctr`.
    pub(crate) jump_tables: BTreeMap<GuestAddr, JumpTable>,
    /// Code addresses built in registers (weak function-pointer candidates).
    pub(crate) code_constants: BTreeSet<GuestAddr>,
    /// Whether some path returns to the caller.
    pub(crate) may_return: bool,
}

/// Walks functions of an image against a set of known function entries.
pub(crate) struct Walker<'a> {
    image: &'a GuestImage,
    functions: Cow<'a, BTreeSet<GuestAddr>>,
    added: BTreeSet<GuestAddr>,
    returns: RefCell<BTreeMap<GuestAddr, bool>>,
}

/// Reads the instruction at `addr`, if it lies in an executable section.
pub(crate) fn fetch(image: &GuestImage, addr: GuestAddr) -> Result<Insn, Failure> {
    if !addr.0.is_multiple_of(4) || !image.is_code(addr) {
        return Err(Failure::NotCode);
    }
    let bytes = image.bytes_at(addr, 4).ok_or(Failure::NotCode)?;
    let word = <[u8; 4]>::try_from(bytes)
        .map(u32::from_be_bytes)
        .map_err(|_| Failure::NotCode)?;
    decode::decode(addr, word).ok_or(Failure::Unknown(word))
}

/// Whether a branch with this BO always goes (no CR test, no CTR decrement).
pub(crate) fn branch_always(bo: u32) -> bool {
    bo & 0x14 == 0x14
}

impl<'a> Walker<'a> {
    /// A walker that knows the functions in `functions`.
    pub(crate) fn new(image: &'a GuestImage, functions: Cow<'a, BTreeSet<GuestAddr>>) -> Walker<'a> {
        Walker {
            image,
            functions,
            added: BTreeSet::new(),
            returns: RefCell::new(BTreeMap::new()),
        }
    }

    /// Whether `addr` is a known function entry.
    pub(crate) fn is_function(&self, addr: GuestAddr) -> bool {
        self.functions.contains(&addr) || self.added.contains(&addr)
    }

    fn add_function(&mut self, addr: GuestAddr) -> bool {
        let added = !self.functions.contains(&addr) && self.added.insert(addr);
        if added {
            self.returns.borrow_mut().clear();
        }
        added
    }

    fn trial(&self) -> Walker<'_> {
        let mut w = Walker::new(self.image, Cow::Borrowed(self.functions.as_ref()));
        w.added = self.added.clone();
        w
    }

    fn all_functions(&self) -> BTreeSet<GuestAddr> {
        self.functions.iter().chain(&self.added).copied().collect()
    }

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

    /// With `deep`, calls to functions that never return end their path; without, every call is
    /// assumed to return (which keeps the return analysis one level deep and cycle-free).
    fn walk_inner(&self, entry: GuestAddr, deep: bool) -> FunctionCfg {
        let mut cfg = FunctionCfg {
            entry,
            ..FunctionCfg::default()
        };
        cfg.block_starts.insert(entry);
        let mut queue = BTreeSet::from([entry]);
        while let Some(start) = queue.pop_first() {
            self.walk_run(&mut cfg, start, deep, &mut queue);
        }
        cfg
    }

    /// A jump target: a tail call when it is another function's entry, else a block.
    fn add_target(&self, cfg: &mut FunctionCfg, queue: &mut BTreeSet<GuestAddr>, addr: GuestAddr) {
        if addr != cfg.entry && self.is_function(addr) {
            cfg.may_return = true;
            cfg.calls.insert(addr);
        } else if cfg.block_starts.insert(addr) {
            queue.insert(addr);
        }
    }

    fn walk_run(&self, cfg: &mut FunctionCfg, start: GuestAddr, deep: bool, queue: &mut BTreeSet<GuestAddr>) {
        let mut pc = start;
        let add_block = |cfg: &mut FunctionCfg, queue: &mut BTreeSet<GuestAddr>, addr: GuestAddr| {
            if cfg.block_starts.insert(addr) {
                queue.insert(addr);
            }
        };
        // Constants built in registers along this run (lis, then addi/ori), for function pointers.
        let mut consts: [Option<u32>; 32] = [None; 32];
        loop {
            if cfg.insns.contains_key(&pc) || cfg.failures.contains_key(&pc) {
                return;
            }
            let insn = match fetch(self.image, pc) {
                Ok(insn) => insn,
                Err(e) => {
                    cfg.failures.insert(pc, e);
                    cfg.may_return = true;
                    return;
                }
            };
            cfg.insns.insert(pc, insn);
            let next = insn.next();
            let bo = insn.rd();
            match insn.row.flow {
                Flow::Plain(_) => {
                    self.track_constant(cfg, &mut consts, &insn);
                    pc = next;
                }
                Flow::Branch | Flow::BranchCond if insn.bit0() => {
                    let target = insn.branch_target();
                    let conditional = matches!(insn.row.flow, Flow::BranchCond) && !branch_always(bo);
                    if target == next {
                        // `bl $+4` (or `bcl 20,31,$+4`) only loads LR with its own address.
                        pc = next;
                        continue;
                    }
                    let returns = if self.image.is_code(target) {
                        cfg.calls.insert(target);
                        !deep || self.may_return(target)
                    } else {
                        true
                    };
                    if returns || conditional {
                        add_block(cfg, queue, next);
                    } else {
                        cfg.noreturn_calls.insert(pc);
                    }
                    return;
                }
                Flow::Branch => {
                    self.add_target(cfg, queue, insn.branch_target());
                    return;
                }
                Flow::BranchCond => {
                    self.add_target(cfg, queue, insn.branch_target());
                    if !branch_always(bo) {
                        add_block(cfg, queue, next);
                    }
                    return;
                }
                Flow::BranchLr | Flow::BranchCtr if insn.bit0() => {
                    add_block(cfg, queue, next);
                    return;
                }
                Flow::BranchLr => {
                    cfg.may_return = true;
                    if !branch_always(bo) {
                        add_block(cfg, queue, next);
                    }
                    return;
                }
                Flow::BranchCtr => {
                    if branch_always(bo) {
                        match recognise_jump_table(self.image, cfg, pc) {
                            Some(table) => {
                                for &t in &table.targets {
                                    self.add_target(cfg, queue, t);
                                }
                                cfg.jump_tables.insert(pc, table);
                            }
                            // An indirect tail jump may reach a function that returns to our caller.
                            None => cfg.may_return = true,
                        }
                    } else {
                        cfg.may_return = true;
                        add_block(cfg, queue, next);
                    }
                    return;
                }
                Flow::Trap => {
                    if insn.rd() != 31 {
                        add_block(cfg, queue, next);
                    }
                    return;
                }
            }
        }
    }

    fn track_constant(&self, cfg: &mut FunctionCfg, consts: &mut [Option<u32>; 32], insn: &Insn) {
        let (d, a) = (insn.rd() as usize, insn.ra() as usize);
        match insn.row.name {
            "addis" if a == 0 => consts[d] = Some(insn.uimm() << 16),
            "addi" if a != 0 => {
                consts[d] = consts[a].map(|c| c.wrapping_add(insn.simm() as u32));
                if let Some(c) = consts[d] {
                    let addr = GuestAddr(u64::from(c));
                    if c.is_multiple_of(4) && self.image.is_code(addr) {
                        cfg.code_constants.insert(addr);
                    }
                }
            }
            "ori" => {
                // ori writes rA from rS (the rD field).
                consts[a] = consts[d].map(|c| c | insn.uimm());
                if let Some(c) = consts[a] {
                    let addr = GuestAddr(u64::from(c));
                    if c.is_multiple_of(4) && self.image.is_code(addr) {
                        cfg.code_constants.insert(addr);
                    }
                }
            }
            // Stores and compares write no GPR; everything else may write rD (or rA): forget both.
            name if name.starts_with("st") || name.starts_with("cmp") || name.starts_with("dcb") => {}
            _ => {
                consts[d] = None;
                consts[a] = None;
            }
        }
    }
}

/// Recognises gcc's jump-table sequence ending in the `bctr` at `at`:
/// `cmplwi crN,rI,K; ...; lis rB,T@ha; addi rB,rB,T@l; lwzx rE,rB,rX; [add rT,rE,rB;] mtctr rT; bctr`,
/// with absolute entries, or entries relative to the table when the `add` is there.
fn recognise_jump_table(image: &GuestImage, cfg: &FunctionCfg, at: GuestAddr) -> Option<JumpTable> {
    // The straight-line window before the bctr (within its run of decoded instructions).
    let mut window = Vec::new();
    let mut pc = at.0;
    while window.len() < 16 && pc >= 4 {
        pc -= 4;
        match cfg.insns.get(&GuestAddr(pc)) {
            Some(i) => window.push(*i),
            None => break,
        }
    }
    window.reverse();
    // mtctr rT (mtspr 9, rT) closest to the bctr.
    let mtctr = window.iter().rposition(|i| i.row.name == "mtspr" && i.spr() == 9)?;
    let target_reg = window[mtctr].rd();
    let before = &window[..mtctr];
    let def = before
        .iter()
        .rposition(|i| i.rd() == target_reg && !i.row.name.starts_with("st"))?;
    let (load, relative) = match before[def].row.name {
        "lwzx" => (def, false),
        "add" => {
            let (x, y) = (before[def].ra(), before[def].rb());
            let l = before[..def]
                .iter()
                .rposition(|i| i.row.name == "lwzx" && (i.rd() == x || i.rd() == y))?;
            (l, true)
        }
        _ => return None,
    };
    // Constants before the load: the table base is one of lwzx's operands.
    let mut consts: [Option<u32>; 32] = [None; 32];
    for i in &before[..load] {
        let (d, a) = (i.rd() as usize, i.ra() as usize);
        match i.row.name {
            "addis" if a == 0 => consts[d] = Some(i.uimm() << 16),
            "addi" if a != 0 => consts[d] = consts[a].map(|c| c.wrapping_add(i.simm() as u32)),
            "ori" => consts[a] = consts[d].map(|c| c | i.uimm()),
            name if name.starts_with("st") || name.starts_with("cmp") => {}
            _ => consts[d] = None,
        }
    }
    let l = &before[load];
    let base = consts[l.ra() as usize].or(consts[l.rb() as usize])?;
    // The bound: the nearest unsigned compare with an immediate before the load.
    let bound = before[..load].iter().rev().find(|i| i.row.name == "cmpli")?.uimm();
    let mut targets = BTreeSet::new();
    for k in 0..=bound {
        let entry_addr = GuestAddr(u64::from(base.wrapping_add(4 * k)));
        let bytes = image.bytes_at(entry_addr, 4)?;
        let entry = u32::from_be_bytes(<[u8; 4]>::try_from(bytes).ok()?);
        let target = if relative { base.wrapping_add(entry) } else { entry };
        let target = GuestAddr(u64::from(target));
        if !target.0.is_multiple_of(4) || !image.is_code(target) {
            return None;
        }
        targets.insert(target);
    }
    Some(JumpTable {
        targets: targets.into_iter().collect(),
    })
}

/// Finds every function reachable from the image's entry and the seeds, plus the weak candidates
/// that survive validation.
pub(crate) fn discover(image: &GuestImage, seeds: &Seeds) -> Discovery {
    let mut strong: BTreeSet<GuestAddr> = BTreeSet::new();
    let mut early = Vec::new();
    if image.is_code(image.entry) {
        strong.insert(image.entry);
    } else {
        early.push(Diagnostic {
            severity: Severity::Warning,
            addr: image.entry,
            message: format!(
                "the entry point {} is not in a text section; it is not lifted",
                image.entry
            ),
        });
    }
    strong.extend(seeds.entry_points.iter().copied());
    strong.extend(seeds.function_hints.iter().copied());

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
    let mut walker = Walker::new(image, Cow::Borrowed(&strong_functions));

    let mut notes: BTreeMap<GuestAddr, String> = BTreeMap::new();
    let mut covered: BTreeSet<GuestAddr> = BTreeSet::new();
    let mut cases: BTreeSet<GuestAddr> = BTreeSet::new();
    let mut candidates: BTreeSet<GuestAddr> = data_words(image);
    for &f in &strong_functions {
        let cfg = walker.walk(f);
        note_cover(&cfg, &mut covered, &mut cases);
        candidates.extend(cfg.code_constants.iter().copied());
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
                    candidates.extend(cfg.code_constants.iter().copied().filter(|a| !seen.contains(a)));
                }
                address_taken.insert(c);
            }
            Err(why) => {
                notes.insert(c, format!("dropped the possible function pointer {c}: {why}"));
            }
        }
    }

    let mut diagnostics: Vec<Diagnostic> = early;
    diagnostics.extend(notes.into_iter().map(|(addr, message)| Diagnostic {
        severity: Severity::Note,
        addr,
        message,
    }));
    let mut errors: BTreeMap<GuestAddr, Diagnostic> = BTreeMap::new();
    for &f in &strong_functions {
        let cfg = walker.walk(f);
        for (&addr, failure) in &cfg.failures {
            errors.entry(addr).or_insert_with(|| Diagnostic {
                severity: Severity::Error,
                addr,
                message: format!("in {}: {}", f.function_name(), lift::describe_failure(failure)),
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

fn note_cover(cfg: &FunctionCfg, covered: &mut BTreeSet<GuestAddr>, cases: &mut BTreeSet<GuestAddr>) {
    covered.extend(cfg.insns.keys().copied().filter(|&a| a != cfg.entry));
    for table in cfg.jump_tables.values() {
        cases.extend(table.targets.iter().copied());
    }
}

fn validate(walker: &Walker<'_>, candidate: GuestAddr) -> Result<Vec<FunctionCfg>, String> {
    let mut trial = walker.trial();
    trial.add_function(candidate);
    let mut stack = vec![candidate];
    let mut cfgs = Vec::new();
    while let Some(f) = stack.pop() {
        let cfg = trial.walk(f);
        if let Some((addr, failure)) = cfg.failures.iter().next() {
            return Err(format!("at {addr}: {}", lift::describe_failure(failure)));
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

/// Aligned 32-bit big-endian words in data sections that point at code.
fn data_words(image: &GuestImage) -> BTreeSet<GuestAddr> {
    let mut out = BTreeSet::new();
    for seg in image.segments.iter().filter(|s| !s.flags.execute) {
        let skip = ((4 - seg.addr.0 % 4) % 4) as usize;
        for chunk in seg.bytes.get(skip..).unwrap_or_default().chunks_exact(4) {
            let Ok(word) = <[u8; 4]>::try_from(chunk) else { continue };
            let addr = GuestAddr(u64::from(u32::from_be_bytes(word)));
            if addr.0.is_multiple_of(4) && image.is_code(addr) {
                out.insert(addr);
            }
        }
    }
    out
}
