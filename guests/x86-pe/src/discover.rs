//! The x86 instruction set as function discovery sees it (`rpt_api::discover` does the rest).
//!
//! Strong seeds are the image entry, its exports, the recipe's entry points and function hints,
//! and every target of a direct call (or tail jump) from strong code. Weak candidates are 32-bit
//! immediates, aligned data words and GCC's constructor lists that point into executable code.
//! Imports matter to control flow: a call of `ExitProcess` never returns, one of `_setjmp3`
//! returns twice, and a jump through an IAT slot is a tail call out of lifted code.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use iced_x86::{Instruction, OpKind, Register};
use rpt_api::discover::{self, CallFlow, CaseTargets, CodePointer, Flow};
use rpt_api::{Discovery, GuestImage, Seeds};
use rpt_ir::GuestAddr;

use crate::decode::{self, DecodeError, Disassembler};
use crate::eh::{self, EhInfo};
use crate::lift::jump_table::{self, JumpTable};
use crate::lift::{self, Kind};

/// Imports after which execution never continues; code after a call to them is not followed.
pub(crate) const NORETURN_IMPORTS: &[&str] = &[
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

fn import_flow(name: &str) -> CallFlow {
    if NORETURN_IMPORTS.iter().any(|n| n.eq_ignore_ascii_case(name)) {
        CallFlow::NoReturn
    } else if RETURNS_TWICE_IMPORTS.contains(&name) {
        CallFlow::ReturnsTwice
    } else {
        CallFlow::Returns
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

/// The walk of an x86 function (the lifter walks with it too).
pub(crate) type Walker<'a> = discover::Walker<'a, X86>;

/// The control-flow graph of one x86 function.
pub(crate) type FunctionCfg = discover::FunctionCfg<X86>;

/// The x86 instruction set of one image: its decoder and lift table, and its imports.
pub(crate) struct X86 {
    /// IAT slot → the import's thunk.
    iat: BTreeMap<GuestAddr, GuestAddr>,
    /// Thunk → what calling the import does to control flow.
    thunks: BTreeMap<GuestAddr, CallFlow>,
    /// C++ exception landing pads and the functions owning them.
    pub(crate) eh: Arc<EhInfo>,
}

impl X86 {
    /// The instruction set as `image` imports.
    pub(crate) fn new(image: &GuestImage) -> X86 {
        X86 {
            iat: image.imports.iter().map(|i| (i.slot, i.thunk)).collect(),
            thunks: image.imports.iter().map(|i| (i.thunk, import_flow(&i.name))).collect(),
            eh: eh::cached(image),
        }
    }

    /// Whether `addr` is an import's thunk.
    pub(crate) fn is_thunk(&self, addr: GuestAddr) -> bool {
        self.thunks.contains_key(&addr)
    }

    /// The import thunk an indirect jump or call through `[disp32]` reaches, when that is an IAT slot.
    pub(crate) fn iat_operand(&self, insn: &Instruction) -> Option<GuestAddr> {
        if insn.op_kind(0) != OpKind::Memory
            || insn.memory_segment() == Register::FS
            || insn.memory_base() != Register::None
            || insn.memory_index() != Register::None
        {
            return None;
        }
        self.iat.get(&GuestAddr(insn.memory_displacement32().into())).copied()
    }

    /// What calling the import reached through `insn`'s memory operand does.
    fn iat_flow(&self, insn: &Instruction) -> Option<CallFlow> {
        self.thunks.get(&self.iat_operand(insn)?).copied()
    }
}

impl CaseTargets for JumpTable {
    fn case_targets(&self) -> &[GuestAddr] {
        &self.targets
    }

    fn case_words(&self) -> Option<Vec<GuestAddr>> {
        let words = self.by_index.iter().enumerate().filter(|(_, t)| t.is_some());
        Some(words.map(|(i, _)| GuestAddr(self.table.0 + 4 * i as u64)).collect())
    }
}

impl discover::Isa for X86 {
    type Insn = Instruction;
    type Context = ();
    type Failure = Failure;
    type JumpTable = JumpTable;
    type Run = ();

    fn decode(&self, image: &GuestImage, at: GuestAddr, _: ()) -> Result<(Instruction, GuestAddr), Failure> {
        let insn = decode::decode_at(image, at).map_err(Failure::Decode)?;
        Ok((insn, GuestAddr(insn.next_ip32().into())))
    }

    fn flow(
        &self,
        image: &GuestImage,
        insn: &Instruction,
        _: &mut (),
        _: &mut (),
        code_constants: &mut BTreeSet<GuestAddr>,
    ) -> Result<Flow, Failure> {
        let kind = lift::classify(insn).ok_or(Failure::Unsupported(*insn))?;
        let target = GuestAddr(insn.near_branch_target());
        Ok(match kind {
            Kind::Plain(_) => {
                for i in 0..insn.op_count() {
                    if insn.op_kind(i) == OpKind::Immediate32 {
                        let v = GuestAddr(insn.immediate(i) & 0xffff_ffff);
                        if image.is_code(v) {
                            code_constants.insert(v);
                        }
                    }
                }
                Flow::Next
            }
            Kind::Branch(_) => Flow::Branch(target),
            Kind::Jump => Flow::Jump(target),
            Kind::JumpIndirect => match self.iat_flow(insn) {
                Some(flow) => Flow::TailExternal(flow),
                None => Flow::JumpIndirect { conditional: false },
            },
            Kind::Call => Flow::Call {
                target,
                conditional: false,
            },
            Kind::CallIndirect => Flow::CallIndirect {
                external: self.iat_flow(insn),
            },
            Kind::Return => Flow::Return { conditional: false },
            Kind::Stop(_) => Flow::Trap { conditional: false },
        })
    }

    fn jump_table(&self, image: &GuestImage, cfg: &FunctionCfg, at: GuestAddr) -> Option<JumpTable> {
        let insn = cfg.insns.get(&at)?;
        jump_table::recognise(image, &cfg.insns, &cfg.block_starts, insn)
    }

    fn external(&self, addr: GuestAddr) -> Option<CallFlow> {
        self.thunks.get(&addr).copied()
    }

    /// An import's thunk, or a stub that only jumps through an IAT slot (`jmp [__imp__abort]`,
    /// as import libraries link them). A function owning C++ landing pads returns even when its
    /// own code cannot (`try { throw x; } catch (...) {}`): it returns from a landing pad.
    fn call_flow(&self, image: &GuestImage, target: GuestAddr) -> Option<CallFlow> {
        if let Some(flow) = self.external(target) {
            return Some(flow);
        }
        if self.eh.owns_landing_pads(target) {
            return Some(CallFlow::Returns);
        }
        let insn = decode::decode_at(image, target).ok()?;
        match lift::classify(&insn) {
            Some(Kind::JumpIndirect) => self.iat_flow(&insn),
            _ => None,
        }
    }

    fn pointer_candidates(&self, image: &GuestImage) -> Vec<CodePointer> {
        let mut out = data_words(image);
        out.extend(constructor_lists(image));
        out
    }

    fn describe(&self, image: &GuestImage, failure: &Failure) -> String {
        lift::describe_failure(image, failure, &mut Disassembler::new())
    }
}

/// Finds every function reachable from the image's entry, its exports and the seeds, plus the
/// weak candidates that survive validation.
///
/// C++ landing pads are strong seeds: the unwinder enters them from a frame further down, so each
/// is an entry of its own (docs/cxx-exceptions.md). Unreadable exception tables are an error
/// diagnostic; the program is still recompiled, without landing pads.
pub(crate) fn discover(image: &GuestImage, seeds: &Seeds) -> Discovery {
    let isa = X86::new(image);
    let mut seeds = seeds.clone();
    seeds.entry_points.extend(isa.eh.landing_pads());
    let mut discovery = discover::discover(&isa, image, &seeds).discovery;
    if let Err(e) = eh::read(image) {
        discovery.diagnostics.push(rpt_api::Diagnostic {
            severity: rpt_api::Severity::Error,
            addr: image.entry,
            message: format!("C++ exceptions will not work: {e}"),
        });
    }
    discovery
}

/// Function pointers in GCC's constructor and destructor lists inside executable sections.
///
/// mingw's linker script puts `__CTOR_LIST__` and `__DTOR_LIST__` at the end of `.text`: an aligned
/// word 0xffffffff, the functions, then a 0 word. `__do_global_ctors` calls them through the list,
/// so nothing else names them. Only complete lists of code pointers count.
fn constructor_lists(image: &GuestImage) -> Vec<CodePointer> {
    let mut out = Vec::new();
    for seg in image.segments.iter().filter(|s| s.flags.execute) {
        let words: Vec<(GuestAddr, u32)> = discover::aligned_words(seg, false).collect();
        for (i, &(_, w)) in words.iter().enumerate() {
            if w != u32::MAX {
                continue;
            }
            let list: Vec<CodePointer> = words
                .iter()
                .skip(i + 1)
                .map(|&(at, p)| CodePointer {
                    at,
                    target: GuestAddr(u64::from(p)),
                })
                .take_while(|p| p.target.0 != 0 && image.is_code(p.target))
                .collect();
            let terminated = words.get(i + 1 + list.len()).map(|&(_, w)| w) == Some(0);
            if terminated && !list.is_empty() {
                out.extend(list);
            }
        }
    }
    out
}

/// Aligned 32-bit words in non-executable sections (the headers aside) that point into executable code.
fn data_words(image: &GuestImage) -> Vec<CodePointer> {
    image
        .segments
        .iter()
        .filter(|s| !s.flags.execute && s.name != "headers")
        .flat_map(|s| discover::aligned_words(s, false))
        .map(|(at, word)| CodePointer {
            at,
            target: GuestAddr(u64::from(word)),
        })
        .filter(|p| image.is_code(p.target))
        .collect()
}
