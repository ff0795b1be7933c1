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

use std::collections::BTreeSet;

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

/// The PowerPC instruction set: the decoder table and its rows' control flow.
pub(crate) struct Ppc;

impl discover::Isa for Ppc {
    type Insn = Insn;
    type Context = ();
    type Failure = Failure;
    /// A recognised jump table: the case targets the `bctr` goes to, deduplicated and sorted.
    type JumpTable = Vec<GuestAddr>;
    /// Constants built in registers along the run (lis, then addi or ori), for function pointers.
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

    fn external(&self, _: GuestAddr) -> Option<CallFlow> {
        None
    }

    fn pointer_candidates(&self, image: &GuestImage) -> Vec<CodePointer> {
        data_words(image)
    }

    fn describe(&self, _: &GuestImage, failure: &Failure) -> String {
        lift::describe_failure(failure)
    }
}

/// Follows `lis`/`addi` and `lis`/`ori` pairs along a run, noting the code addresses they build.
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
        // Stores and compares write no GPR; everything else may write rD (or rA): forget both.
        name if name.starts_with("st") || name.starts_with("cmp") || name.starts_with("dcb") => {}
        _ => {
            consts[d] = None;
            consts[a] = None;
        }
    }
}

/// Recognises gcc's jump-table sequence ending in the `bctr` at `at`:
/// `cmplwi crN,rI,K; ...; lis rB,T@ha; addi rB,rB,T@l; lwzx rE,rB,rX; [add rT,rE,rB;] mtctr rT; bctr`,
/// with absolute entries, or entries relative to the table when the `add` is there.
fn recognise_jump_table(image: &GuestImage, cfg: &FunctionCfg, at: GuestAddr) -> Option<Vec<GuestAddr>> {
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
    Some(targets.into_iter().collect())
}

/// Finds every function reachable from the image's entry and the seeds, plus the weak candidates
/// that survive validation.
pub(crate) fn discover(image: &GuestImage, seeds: &Seeds) -> Discovery {
    discover::discover(&Ppc, image, seeds).discovery
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
