//! The PowerPC instruction set as function discovery sees it.
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
//! The walk and the phases are `rpt_api::discover`'s; this file says how PowerPC code flows.

use std::collections::{BTreeMap, BTreeSet};

use rpt_api::discover::{self, CallFlow, CodePointer, Flow};
use rpt_api::{Discovery, GuestImage, Seeds};
use rpt_ir::GuestAddr;

use crate::decode::{self, Insn};
use crate::lift;

/// Why an instruction could not be taken into a function.
#[derive(Clone, Debug)]
pub(crate) enum Failure {
    /// The address is not in an executable section (or is misaligned).
    NotCode,
    /// No decoder row matches this word.
    Unknown(u32),
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

/// The walk of a PowerPC function (the lifter walks with it too).
pub(crate) type Walker<'a> = discover::Walker<'a, Ppc>;

/// The control-flow graph of one PowerPC function.
pub(crate) type FunctionCfg = discover::FunctionCfg<Ppc>;

/// The PowerPC instruction set: the decoder table and its rows' control flow, and the program's
/// own `setjmp` and `longjmp` when the recipe names them (the image's imports, [`crate::nonlocal`]).
pub(crate) struct Ppc {
    /// Import address → what calling it does.
    externals: BTreeMap<GuestAddr, CallFlow>,
}

impl Ppc {
    /// The instruction set as `image` imports.
    pub(crate) fn new(image: &GuestImage) -> Ppc {
        let flow = |name: &str| match name {
            "setjmp" => CallFlow::ReturnsTwice,
            "longjmp" => CallFlow::NoReturn,
            _ => CallFlow::Returns,
        };
        Ppc {
            externals: image.imports.iter().map(|i| (i.thunk, flow(&i.name))).collect(),
        }
    }
}

impl discover::Isa for Ppc {
    type Insn = Insn;
    type Context = ();
    type Failure = Failure;
    /// A recognised jump table: the case targets the `bctr` goes to, deduplicated and sorted.
    type JumpTable = Vec<GuestAddr>;
    /// Constants built in registers along the path (lis, then addi or ori), for function pointers.
    type Run = [Option<u32>; 32];

    fn decode(&self, image: &GuestImage, at: GuestAddr, _: ()) -> Result<(Insn, GuestAddr), Failure> {
        let insn = fetch(image, at)?;
        Ok((insn, insn.next()))
    }

    fn flow(
        &self,
        image: &GuestImage,
        insn: &Insn,
        _: &mut (),
        consts: &mut [Option<u32>; 32],
        code_constants: &mut BTreeSet<GuestAddr>,
    ) -> Result<Flow, Failure> {
        let always = branch_always(insn.rd());
        let link = insn.bit0();
        Ok(match insn.row.flow {
            lift::Flow::Plain(_) => {
                track_constant(image, code_constants, consts, insn);
                Flow::Next
            }
            lift::Flow::Branch | lift::Flow::BranchCond if link => Flow::Call {
                target: insn.branch_target(),
                conditional: matches!(insn.row.flow, lift::Flow::BranchCond) && !always,
            },
            lift::Flow::Branch => Flow::Jump(insn.branch_target()),
            lift::Flow::BranchCond if always => Flow::Jump(insn.branch_target()),
            lift::Flow::BranchCond => Flow::Branch(insn.branch_target()),
            lift::Flow::BranchLr | lift::Flow::BranchCtr if link => Flow::CallIndirect { external: None },
            lift::Flow::BranchLr => Flow::Return { conditional: !always },
            lift::Flow::BranchCtr => Flow::JumpIndirect { conditional: !always },
            // `tw 31,...` always traps; other TO fields may fall through.
            lift::Flow::Trap => Flow::Trap {
                conditional: insn.rd() != 31,
            },
        })
    }

    fn jump_table(&self, image: &GuestImage, cfg: &FunctionCfg, at: GuestAddr) -> Option<Vec<GuestAddr>> {
        recognise_jump_table(image, cfg, at)
    }

    fn external(&self, addr: GuestAddr) -> Option<CallFlow> {
        self.externals.get(&addr).copied()
    }

    /// `bl` holds a 26-bit displacement, so a call of address 0 (an undefined weak function in a
    /// static link) from `at` wraps to the 64 MiB boundary below `at`: 0x80000000 for code in
    /// MEM1 (GNU ld names it `__ehdr_start` when the ELF headers are loaded there). glibc tests
    /// such a function's address before calling it.
    fn calls_address_zero(&self, at: GuestAddr, target: GuestAddr) -> bool {
        target.0 == 0 || target.0 == at.0 & !0x03ff_ffff
    }

    /// The PowerPC SysV ABI's non-volatile registers survive a call: r1 (the stack), r2 and r13
    /// (the system's and the small-data anchors) and r14-r31. gcc builds a pointer's high half in
    /// one of them before a call and adds its low half after (Lua's `luaopen_io` takes
    /// `&io_noclose` so: `lis r28` before `luaL_checkversion_`, `addi r28,r28` after it).
    fn run_after_call(&self, run: &Self::Run) -> Self::Run {
        let mut kept = [None; 32];
        for r in [1, 2].into_iter().chain(13..32) {
            kept[r] = run[r];
        }
        kept
    }

    fn pointer_candidates(&self, image: &GuestImage) -> Vec<CodePointer> {
        data_words(image)
    }

    fn describe(&self, _: &GuestImage, failure: &Failure) -> String {
        lift::describe_failure(failure)
    }
}

/// Follows `lis`/`addi` and `lis`/`ori` pairs along a path (a block starts with what the edge that first reached it knew), noting the code addresses they build.
fn track_constant(
    image: &GuestImage,
    code_constants: &mut BTreeSet<GuestAddr>,
    consts: &mut [Option<u32>; 32],
    insn: &Insn,
) {
    let (d, a) = (insn.rd() as usize, insn.ra() as usize);
    match insn.row.name {
        "addis" if a == 0 => consts[d] = Some(insn.uimm() << 16),
        "addi" if a != 0 => {
            consts[d] = consts[a].map(|c| c.wrapping_add(insn.simm() as u32));
            if let Some(c) = consts[d] {
                let addr = GuestAddr(u64::from(c));
                if c.is_multiple_of(4) && image.is_code(addr) {
                    code_constants.insert(addr);
                }
            }
        }
        "ori" => {
            // ori writes rA from rS (the rD field).
            consts[a] = consts[d].map(|c| c | insn.uimm());
            if let Some(c) = consts[a] {
                let addr = GuestAddr(u64::from(c));
                if c.is_multiple_of(4) && image.is_code(addr) {
                    code_constants.insert(addr);
                }
            }
        }
        // Everything else forgets the registers it writes, and only those: `mflr r0` leaves the
        // r8 that a `lis r8` before it set for an `addi r4,r8,lo` after it (the rA field of an
        // mfspr is part of the SPR number, not a register).
        _ => {
            for w in written_gprs(insn).into_iter().flatten() {
                match consts.get_mut(w as usize) {
                    Some(slot) => *slot = None,
                    None => *consts = [None; 32],
                }
            }
        }
    }
}

/// How far back from a `bctr` the recogniser looks (instructions of the straight run before it).
const WINDOW: usize = 48;

/// Most entries a mask-bounded table may have (an `rlwinm` mask of 16 bits): wider masks are
/// plain shifts (`slwi`), which bound nothing.
const MASK_ENTRIES_MAX: u32 = 1 << 14;

/// Recognises a jump-table sequence ending in the `bctr` at `at`:
/// `...; lwzx rE,rB,rX; [add rT,rE,rB;] mtctr rT; bctr`, with absolute entries, or entries
/// relative to the table when the `add` is there. The table base rB is a constant the run builds,
/// in any of the forms gcc and glibc use:
/// - `lis rB,T@ha; addi rB,rB,T@l` (absolute code);
/// - position-independent code: `bcl 20,31,$+4; mflr rP` takes the address of the next
///   instruction, `addis`/`addi` on rP reach the table or the `.got2` entry holding its address,
///   and `lwz rB,d(rP)` reads that entry as the image holds it (`_wordcopy_fwd_aligned`).
///
/// The bound is the index's: an index masked and scaled in one instruction
/// (`rlwinm rX,rY,2,MB,29`, gcc's `goto *labels[op & 0x7f]` and glibc's `len & 7` dispatch) admits
/// mask/4 + 1 entries, but the table may be shorter (Lua's 83 opcodes under a 0x7f mask), so the
/// entries are taken while they point at code, stopping at the first that does not. Otherwise the
/// bound is the nearest `cmplwi` before the load (a `switch`), and every entry up to it must
/// point at code, or the table is not recognised.
pub(crate) fn recognise_jump_table(image: &GuestImage, cfg: &FunctionCfg, at: GuestAddr) -> Option<Vec<GuestAddr>> {
    // The straight-line window before the bctr (within its run of decoded instructions).
    let mut window = Vec::new();
    let mut pc = at.0;
    while window.len() < WINDOW && pc >= 4 {
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
    let def = before.iter().rposition(|i| writes_gpr(i, target_reg))?;
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
    let l = &before[load];
    if relative {
        // The entries are relative to the table: the add's other operand must still be the base.
        let other = if before[def].ra() == l.rd() {
            before[def].rb()
        } else {
            before[def].ra()
        };
        if other != l.ra() && other != l.rb() || before[load + 1..def].iter().any(|i| writes_gpr(i, other)) {
            return None;
        }
    }
    // Constants along the run up to the load, starting from the function's PIC registers: the
    // table base is one of lwzx's operands.
    let mut pic = pic_registers(image, cfg);
    for (r, value) in constant_registers(cfg).into_iter().enumerate() {
        pic[r] = pic[r].or(value);
    }
    let mut consts = Constants {
        gprs: pic,
        lr: None,
        pic,
    };
    for i in &before[..load] {
        consts.step(image, i);
    }
    let (base, index) = match (consts.gpr(l.ra()), consts.gpr(l.rb())) {
        (Some(base), _) if l.ra() != 0 => (base, l.rb()),
        (_, Some(base)) => (base, l.ra()),
        _ => return None,
    };
    let (count, lenient) = match mask_bound(&before[..load], index) {
        Some(entries) => (entries, true),
        None => (
            before[..load].iter().rev().find(|i| i.row.name == "cmpli")?.uimm() + 1,
            false,
        ),
    };
    let mut targets = BTreeSet::new();
    for k in 0..count {
        let target = table_entry(image, base, k).map(|entry| if relative { base.wrapping_add(entry) } else { entry });
        match target.map(|t| GuestAddr(u64::from(t))) {
            Some(t) if t.0.is_multiple_of(4) && image.is_code(t) => {
                targets.insert(t);
            }
            _ if lenient => break,
            _ => return None,
        }
    }
    if targets.is_empty() {
        return None;
    }
    Some(targets.into_iter().collect())
}

/// How many instructions after a `bcl 20,31,$+4` the PIC register's set-up may take (glibc's
/// printf_positional saves 18 registers between the `bcl` and its `mflr r30`).
const PIC_SETUP: usize = 64;

/// The function's PIC registers and their values: gcc's position-independent code sets one
/// register (r30 in glibc) in the prologue, `bcl 20,31,$+4; ... mflr rP; addis rP,rP,hi;
/// addi rP,rP,lo`, and keeps it for the whole function, so a jump table far from the prologue
/// still finds its base through it. A register counts only if every other write to it in the
/// function restores it from the stack frame in an epilogue ([`is_frame_restore`]), and all
/// set-ups agree on its value.
fn pic_registers(image: &GuestImage, cfg: &FunctionCfg) -> [Option<u32>; 32] {
    let mut found: [Option<u32>; 32] = [None; 32];
    let mut setup = BTreeSet::new();
    let mut conflicting = [false; 32];
    for (addr, i) in &cfg.insns {
        if !(matches!(i.row.name, "bc" | "b") && i.bit0() && i.branch_target() == i.next()) {
            continue;
        }
        let mut consts = Constants::default();
        consts.step(image, i);
        let mut last_write: [Option<u32>; 32] = [None; 32];
        let mut pc = addr.0;
        for _ in 0..PIC_SETUP {
            pc += 4;
            let Some(next) = cfg.insns.get(&GuestAddr(pc)) else {
                break;
            };
            if !matches!(next.row.flow, lift::Flow::Plain(_)) {
                break;
            }
            consts.step(image, next);
            for w in written_gprs(next).into_iter().flatten().filter(|&w| w < 32) {
                setup.insert((pc, w));
                last_write[w as usize] = consts.gpr(w);
            }
        }
        for r in 0..32 {
            if let Some(v) = last_write[r] {
                conflicting[r] |= found[r].is_some_and(|f| f != v);
                found[r] = Some(v);
            }
        }
    }
    for (addr, i) in &cfg.insns {
        let restore = is_frame_restore(i);
        for w in written_gprs(i).into_iter().flatten() {
            if w == ALL_GPRS && !restore {
                found = [None; 32];
            } else if (w as usize) < 32 && !restore && !setup.contains(&(addr.0, w)) {
                found[w as usize] = None;
            }
        }
    }
    for r in 0..32 {
        if conflicting[r] {
            found[r] = None;
        }
    }
    found
}

/// Registers that hold one absolute address for the whole function: gcc keeps a jump table's base
/// in a callee-saved register when the function switches more than once (Lua's `str_format`
/// sets r26 with `lis r26,T@ha; addi r26,r26,T@l` in its prologue and switches through it far
/// below). A register counts if its only writes in the function are one `lis` (`addis rX,0,hi`)
/// and one `addi rX,rX,lo` or `ori rX,rX,lo` after it, besides restores from the stack frame, and
/// it is callee-saved (r14 to r31) or the function calls nothing.
fn constant_registers(cfg: &FunctionCfg) -> [Option<u32>; 32] {
    let mut writes: [Vec<&Insn>; 32] = std::array::from_fn(|_| Vec::new());
    for i in cfg.insns.values() {
        if is_frame_restore(i) {
            continue;
        }
        for w in written_gprs(i).into_iter().flatten() {
            if w == ALL_GPRS {
                writes.iter_mut().for_each(|list| list.push(i));
            } else if let Some(list) = writes.get_mut(w as usize) {
                list.push(i);
            }
        }
    }
    // Only callee-saved registers keep a value across calls; in a leaf function every one does
    // (the computed-goto interpreter of tests/guests/x86/msvcrt/dispatch.c keeps its table in r7).
    let calls = |i: &Insn| {
        i.bit0()
            && match i.row.flow {
                // `bcl 20,31,$+4` only reads the PC.
                lift::Flow::Branch | lift::Flow::BranchCond => i.branch_target() != i.next(),
                lift::Flow::BranchLr | lift::Flow::BranchCtr => true,
                _ => false,
            }
    };
    let leaf = !cfg.insns.values().any(calls);
    std::array::from_fn(|r| match writes[r].as_slice() {
        _ if r < 14 && !leaf => None,
        [hi, lo] if hi.row.name == "addis" && hi.ra() == 0 && lo.ra() as usize == r && lo.next() > hi.next() => {
            let high = hi.uimm() << 16;
            match lo.row.name {
                "addi" => Some(high.wrapping_add(lo.simm() as u32)),
                "ori" => Some(high | lo.uimm()),
                _ => None,
            }
        }
        _ => None,
    })
}

/// Whether `insn` restores registers from the stack frame in an epilogue: `lwz` or `lmw` from
/// r1, from r11 (what gcc's epilogue of a large frame addresses the frame's top through) or from
/// r31 (the frame pointer of a function with a variable frame). A load from r31 may also be an
/// ordinary local variable, but gcc keeps its PIC register in its register from the prologue on and
/// loads it from the frame only to give the caller's value back.
fn is_frame_restore(insn: &Insn) -> bool {
    matches!(insn.row.name, "lwz" | "lmw") && matches!(insn.ra(), 1 | 11 | 31)
}

/// The `k`th word of the table at `base`, as the image holds it.
fn table_entry(image: &GuestImage, base: u32, k: u32) -> Option<u32> {
    let entry_addr = GuestAddr(u64::from(base.wrapping_add(k.checked_mul(4)?)));
    let bytes = image.bytes_at(entry_addr, 4)?;
    <[u8; 4]>::try_from(bytes).ok().map(u32::from_be_bytes)
}

/// The number of entries an index admits when its last definition before the load masks and
/// scales it in one `rlwinm rX,rY,2,MB,29` (mask/4 + 1), if that mask is narrow enough to bound a table.
fn mask_bound(before: &[Insn], index: u32) -> Option<u32> {
    let def = before.iter().rev().find(|i| writes_gpr(i, index))?;
    if def.row.name != "rlwinm" || def.rb() != 2 || def.me() != 29 {
        return None;
    }
    let mask = (u32::MAX >> def.rc_field()) & !3;
    let entries = (mask >> 2) + 1;
    (entries <= MASK_ENTRIES_MAX).then_some(entries)
}

/// Whether `insn` writes general-purpose register `r` (conservatively: yes when unsure).
fn writes_gpr(insn: &Insn, r: u32) -> bool {
    let [a, b] = written_gprs(insn);
    a == Some(r) || b == Some(r) || a == Some(ALL_GPRS)
}

/// Stands for "every register" in [`written_gprs`] (multiple-word loads).
const ALL_GPRS: u32 = 32;

/// The general-purpose registers an instruction writes, by its operand shape: rD for the
/// D-forms, rA for the logical, shift and rotate forms, rA too for the update forms of loads and
/// stores; [`ALL_GPRS`] for lmw and the string loads.
fn written_gprs(insn: &Insn) -> [Option<u32>; 2] {
    use crate::decode::Syntax as S;
    let name = insn.row.name;
    let store = name.starts_with("st") || name.starts_with("psq_st");
    let update = (name.ends_with('u') || name.ends_with("ux")) && !name.starts_with("b");
    let (d, a) = (Some(insn.rd()), Some(insn.ra()));
    let updated = if update { a } else { None };
    match insn.row.syntax {
        _ if matches!(name, "lmw" | "lswi" | "lswx") => [Some(ALL_GPRS), None],
        S::DASimm | S::DA | S::D | S::Mfspr | S::Mftb => [d, None],
        S::DMem | S::DAB if store => [updated, None],
        S::DMem | S::DAB => [d, updated],
        S::FMem | S::FDAB | S::PsqMem | S::PsqMemX => [updated, None],
        S::ASUimm | S::ASB | S::AS | S::ASSh | S::Rlwi | S::Rlwnm => [a, None],
        _ => [None, None],
    }
}

/// Register constants along a straight run of instructions, as the jump-table recogniser needs
/// them: immediates, `addis`/`addi`/`ori` on them, moves, the link register a `bcl 20,31,$+4`
/// sets and `mflr` reads, and words `lwz` reads from the image at a constant address.
#[derive(Default)]
struct Constants {
    gprs: [Option<u32>; 32],
    lr: Option<u32>,
    /// The function's PIC registers ([`pic_registers`]): an epilogue's restore of one, met on the
    /// way back from a `bctr`, belongs to a path that returns, so the register keeps its value
    /// on the path that reaches the `bctr`.
    pic: [Option<u32>; 32],
}

impl Constants {
    fn gpr(&self, r: u32) -> Option<u32> {
        self.gprs.get(r as usize).copied().flatten()
    }

    /// rA as an address base: register 0 reads as 0 there.
    fn base(&self, r: u32) -> Option<u32> {
        if r == 0 { Some(0) } else { self.gpr(r) }
    }

    fn step(&mut self, image: &GuestImage, i: &Insn) {
        let value = match i.row.name {
            "addis" => self.base(i.ra()).map(|b| b.wrapping_add(i.uimm() << 16)),
            "addi" => self.base(i.ra()).map(|b| b.wrapping_add(i.simm() as u32)),
            "ori" => self.gpr(i.rd()).map(|s| s | i.uimm()),
            // `mr rA,rS` is `or rA,rS,rS`.
            "or" if i.rd() == i.rb() => self.gpr(i.rd()),
            "mfspr" if i.spr() == 8 => self.lr,
            "lwz" => self
                .base(i.ra())
                .and_then(|b| table_entry(image, b.wrapping_add(i.simm() as u32), 0)),
            _ => None,
        };
        match i.row.name {
            "mtspr" if i.spr() == 8 => self.lr = self.gpr(i.rd()),
            "b" | "bc" | "bclr" | "bcctr" if i.bit0() => {
                // `bcl 20,31,$+4` only takes its own address; a real call clobbers the
                // volatile registers (r0, r3..r12) and the link register.
                if matches!(i.row.name, "b" | "bc") && i.branch_target() == i.next() {
                    self.lr = Some(i.next().0 as u32);
                } else {
                    self.lr = None;
                    for r in [0].into_iter().chain(3..=12) {
                        self.gprs[r] = None;
                    }
                }
            }
            _ => {}
        }
        let restore = is_frame_restore(i);
        for w in written_gprs(i).into_iter().flatten() {
            if w == ALL_GPRS {
                self.gprs = if restore { self.pic } else { [None; 32] };
            } else if let Some(slot) = self.gprs.get_mut(w as usize) {
                *slot = if restore { self.pic[w as usize] } else { None };
            }
        }
        if value.is_some() {
            let dest = match i.row.syntax {
                crate::decode::Syntax::ASUimm | crate::decode::Syntax::ASB => i.ra(),
                _ => i.rd(),
            };
            if let Some(slot) = self.gprs.get_mut(dest as usize) {
                *slot = value;
            }
        }
    }
}

/// Finds every function reachable from the image's entry and the seeds, plus the weak candidates
/// that survive validation.
pub(crate) fn discover(image: &GuestImage, seeds: &Seeds) -> Discovery {
    discover::discover(&Ppc::new(image), image, seeds).discovery
}

/// Aligned 32-bit big-endian words in data sections that point at aligned code.
fn data_words(image: &GuestImage) -> Vec<CodePointer> {
    image
        .segments
        .iter()
        .filter(|s| !s.flags.execute)
        .flat_map(|s| discover::aligned_words(s, true))
        .map(|(at, word)| CodePointer {
            at,
            target: GuestAddr(u64::from(word)),
        })
        .filter(|p| p.target.0.is_multiple_of(4) && image.is_code(p.target))
        .collect()
}
