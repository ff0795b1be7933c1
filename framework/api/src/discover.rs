//! Function discovery, written once for every guest.
//!
//! A guest describes its instruction set through [`Isa`]: decode one instruction in a context,
//! classify how it passes control on ([`Flow`]), recognise a jump table, and say which words of
//! the image may be code pointers. Everything else lives here: the walk of one function into a
//! [`FunctionCfg`] (which the guest's lifter walks again, so discovery and lifting agree on every
//! block, jump table, tail call and call that never returns), the return analysis, and the three
//! phases of [`discover`] with their diagnostics.
//!
//! - Strong seeds are the image's entry, its exports, the recipe's entry points and function
//!   hints, and every direct call target of strong code. Their reachable code must decode;
//!   whatever does not is an error naming the address.
//! - Weak candidates are code addresses built in registers or written as immediates, and words in
//!   data that point at code (function pointers, vtables, callback tables). A candidate outside
//!   known code is kept only if it and every new function it calls walk cleanly; otherwise it is
//!   dropped with a note. Kept candidates are functions and `address_taken`, and so are strong
//!   functions whose address appears the same way.
//! - A candidate that names an instruction some walk already took into a function is never
//!   dropped: it becomes an entry of its own into that code (with a note), because something
//!   holds its address to jump or call there — a function that its neighbour's tail jump ran
//!   into, a label stored for a computed goto, a landing pad. Only a jump table's own words
//!   naming its cases are not entries: those cases are blocks of the function that jumps there.
//!
//! Contexts: an entry is an address plus the [`Isa::Context`] its first instruction decodes in —
//! the 65816's M and X widths, where one routine entered with 8- and 16-bit accumulators is two
//! functions; `()` for fixed-width instruction sets. A walk carries the context from instruction
//! to instruction (an instruction may change it, as REP and SEP do) and into the blocks and
//! callees it reaches. Entries in the default context are kept as plain addresses, which is all a
//! fixed-width guest ever has, so a walker can borrow the discovered set that lifting is handed
//! instead of copying it for every function.

use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Debug;

use rpt_ir::GuestAddr;

use crate::{Diagnostic, Discovery, GuestImage, Seeds, Segment, Severity};

/// What calling an address outside lifted code does (an import's thunk, a stub that only jumps to one).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CallFlow {
    /// Returns once, like any function.
    Returns,
    /// Never returns (`ExitProcess`, `longjmp`).
    NoReturn,
    /// Returns now and again later (`setjmp`, which returns at every `longjmp` naming its buffer):
    /// the call is a tail call and the code after it a function of its own.
    ReturnsTwice,
}

/// How an instruction passes control on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flow {
    /// To the next instruction.
    Next,
    /// Always to `target`: a block of this function, or a tail call when `target` is another
    /// function's entry or outside lifted code.
    Jump(GuestAddr),
    /// To `target` or to the next instruction.
    Branch(GuestAddr),
    /// Calls `target`, then goes on at the next instruction unless the callee never returns. A
    /// `conditional` call also goes on when it is not taken. A call of the next instruction only
    /// pushes its own address (a position-independent idiom) and counts as [`Flow::Next`].
    Call {
        /// The callee.
        target: GuestAddr,
        /// Whether the call may not be taken.
        conditional: bool,
    },
    /// Calls through a register or memory, then goes on at the next instruction unless `external`
    /// (the callee when it is known to be outside lifted code) never returns.
    CallIndirect {
        /// What the callee does when it is an import.
        external: Option<CallFlow>,
    },
    /// Jumps through a register or memory. An unconditional one is a jump table when
    /// [`Isa::jump_table`] recognises one, else a tail jump; a `conditional` one may fall through.
    JumpIndirect {
        /// Whether the jump may not be taken.
        conditional: bool,
    },
    /// A tail jump out of lifted code (`jmp [__imp__exit]`), doing what the callee does.
    TailExternal(CallFlow),
    /// Returns to the caller; a `conditional` return may fall through.
    Return {
        /// Whether the return may not be taken.
        conditional: bool,
    },
    /// Leaves lifted code (a halt, a trap). A `conditional` trap goes on at the next instruction,
    /// which starts a block of its own (the lifter branches there when the trap is not taken).
    Trap {
        /// Whether the trap may not be taken.
        conditional: bool,
    },
}

/// What a recognised jump table tells discovery: where its cases go.
pub trait CaseTargets {
    /// The case targets.
    fn case_targets(&self) -> &[GuestAddr];

    /// The addresses of the table's words that name its cases, when its entries are code
    /// addresses: those words are the table, not function pointers. `None` (a table of offsets,
    /// or one whose words the guest does not track) makes every case target count as named by
    /// the table wherever else it appears.
    fn case_words(&self) -> Option<Vec<GuestAddr>> {
        None
    }
}

/// A word of the image that holds a code address: a function pointer, a vtable slot, a label.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct CodePointer {
    /// Where the word is.
    pub at: GuestAddr,
    /// The code address it holds.
    pub target: GuestAddr,
}

/// A table that is no more than its case targets.
impl CaseTargets for Vec<GuestAddr> {
    fn case_targets(&self) -> &[GuestAddr] {
        self
    }
}

/// A guest's instruction set as discovery sees it.
pub trait Isa: Sized {
    /// A decoded instruction.
    type Insn: Clone;
    /// The decoding state an entry starts in and a walk carries along (`()` for fixed-width sets).
    type Context: Copy + Ord + Default + Debug;
    /// Why an address could not be taken into a function (not code, no decoder row, no lift rule).
    type Failure: Clone + Debug;
    /// A recognised jump table.
    type JumpTable: Clone + Debug + CaseTargets;
    /// What [`Isa::flow`] remembers along a path of instructions (register constants). A block
    /// starts with the state of the first edge the walk reaches it by: a value found along one
    /// path is one the code can compute, which is all a function-pointer candidate needs.
    type Run: Default + Clone;

    /// Decodes the instruction at `at` in `context`, and the address of the instruction after it.
    fn decode(
        &self,
        image: &GuestImage,
        at: GuestAddr,
        context: Self::Context,
    ) -> Result<(Self::Insn, GuestAddr), Self::Failure>;

    /// How `insn` passes control on, or why it cannot be lifted (the instruction is still kept in
    /// the function, so its listing line names it). May change `context` for what follows and may
    /// add code addresses the instruction builds or names to `code_constants`.
    fn flow(
        &self,
        image: &GuestImage,
        insn: &Self::Insn,
        context: &mut Self::Context,
        run: &mut Self::Run,
        code_constants: &mut BTreeSet<GuestAddr>,
    ) -> Result<Flow, Self::Failure>;

    /// The jump table ending in the indirect jump at `at`, from the code walked so far.
    fn jump_table(&self, image: &GuestImage, cfg: &FunctionCfg<Self>, at: GuestAddr) -> Option<Self::JumpTable>;

    /// Addresses outside lifted code that the image calls (import thunks), with what calling them does.
    fn external(&self, addr: GuestAddr) -> Option<CallFlow>;

    /// What a direct call of `target` does when that is known without walking it: an external, or
    /// code that only jumps to one. The default asks [`Isa::external`].
    fn call_flow(&self, image: &GuestImage, target: GuestAddr) -> Option<CallFlow> {
        let _ = image;
        self.external(target)
    }

    /// What of `run` a call's return keeps: the registers the calling convention preserves
    /// across a call (a compiler builds a pointer's high half in one before a call and adds its
    /// low half after). The default keeps nothing.
    fn run_after_call(&self, run: &Self::Run) -> Self::Run {
        let _ = run;
        Self::Run::default()
    }

    /// Whether the direct call at `at` of `target` (which is not code) is a call of address 0 as
    /// the linker encodes it: the call of an undefined weak function, which the program makes only
    /// after testing the function's address. Such a call still faults if it runs, but a weak
    /// candidate that reaches one is not taken for data. The default: a call of address 0 itself.
    fn calls_address_zero(&self, at: GuestAddr, target: GuestAddr) -> bool {
        let _ = at;
        target.0 == 0
    }

    /// Whether an instruction whose [`Isa::flow`] failed with `failure` is still lifted alone for the
    /// run-time tier (its lifter gives it a meaning: a 65816 XCE whose widths the walk lost goes on
    /// through the function table). The default: no, the tier has no instruction there.
    fn lifts_after_failure(&self, failure: &Self::Failure) -> bool {
        let _ = failure;
        false
    }

    /// The context `insn` was decoded in. The default: the default context, all a fixed-width
    /// instruction set has.
    fn insn_context(&self, insn: &Self::Insn) -> Self::Context {
        let _ = insn;
        Self::Context::default()
    }

    /// Words of the image that point at code: weak function candidates.
    fn pointer_candidates(&self, image: &GuestImage) -> Vec<CodePointer>;

    /// Says why `failure` happened, for diagnostics.
    fn describe(&self, image: &GuestImage, failure: &Self::Failure) -> String;
}

/// A function entry: an address and the context its first instruction decodes in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Entry<C> {
    /// Where the function starts.
    pub addr: GuestAddr,
    /// The context it is entered in.
    pub context: C,
}

/// The control-flow graph of one function as the walk found it.
pub struct FunctionCfg<I: Isa> {
    /// The function's entry.
    pub entry: Entry<I::Context>,
    /// Every reachable instruction, by address.
    pub insns: BTreeMap<GuestAddr, I::Insn>,
    /// Where guest basic blocks start (the entry, branch targets, fall-throughs, call returns),
    /// with the context each starts in.
    pub block_starts: BTreeMap<GuestAddr, I::Context>,
    /// Addresses reached that could not be taken, and why.
    pub failures: BTreeMap<GuestAddr, I::Failure>,
    /// Functions this one calls or tail-jumps to directly (in the image, not externals).
    pub calls: BTreeSet<Entry<I::Context>>,
    /// Direct calls whose target is not code: (call address, target).
    pub bad_calls: BTreeSet<(GuestAddr, GuestAddr)>,
    /// Calls whose callee never returns, so nothing after them is followed.
    pub noreturn_calls: BTreeSet<GuestAddr>,
    /// Calls of an external that returns twice: lifted as tail calls, and the address after each
    /// is an entry of its own (in `calls`).
    pub returns_twice_calls: BTreeSet<GuestAddr>,
    /// Recognised jump tables by the address of their indirect jump.
    pub jump_tables: BTreeMap<GuestAddr, I::JumpTable>,
    /// Code addresses built in registers or named by immediates (weak function candidates).
    pub code_constants: BTreeSet<GuestAddr>,
    /// Whether some path may return to the caller (a return, an indirect or tail jump, or code
    /// that could not be taken).
    pub may_return: bool,
}

impl<I: Isa> Clone for FunctionCfg<I> {
    fn clone(&self) -> Self {
        FunctionCfg {
            entry: self.entry,
            insns: self.insns.clone(),
            block_starts: self.block_starts.clone(),
            failures: self.failures.clone(),
            calls: self.calls.clone(),
            bad_calls: self.bad_calls.clone(),
            noreturn_calls: self.noreturn_calls.clone(),
            returns_twice_calls: self.returns_twice_calls.clone(),
            jump_tables: self.jump_tables.clone(),
            code_constants: self.code_constants.clone(),
            may_return: self.may_return,
        }
    }
}

impl<I: Isa> FunctionCfg<I> {
    fn new(entry: Entry<I::Context>) -> FunctionCfg<I> {
        FunctionCfg {
            entry,
            insns: BTreeMap::new(),
            block_starts: BTreeMap::from([(entry.addr, entry.context)]),
            failures: BTreeMap::new(),
            calls: BTreeSet::new(),
            bad_calls: BTreeSet::new(),
            noreturn_calls: BTreeSet::new(),
            returns_twice_calls: BTreeSet::new(),
            jump_tables: BTreeMap::new(),
            code_constants: BTreeSet::new(),
            may_return: false,
        }
    }

    /// Whether the function directly calls or tail-jumps to `addr` entered in `context`.
    pub fn calls_entry(&self, addr: GuestAddr, context: I::Context) -> bool {
        self.calls.contains(&Entry { addr, context })
    }
}

/// The blocks still to walk in one function, with the context each starts in, and the run state
/// each starts with (that of the first edge that reached it).
struct Queue<I: Isa> {
    blocks: BTreeSet<(GuestAddr, I::Context)>,
    runs: BTreeMap<GuestAddr, I::Run>,
}

impl<I: Isa> Queue<I> {
    /// The next block to walk and the state it starts with.
    fn pop(&mut self) -> Option<(GuestAddr, I::Context, I::Run)> {
        let (addr, context) = self.blocks.pop_first()?;
        let run = self.runs.remove(&addr).unwrap_or_default();
        Some((addr, context, run))
    }
}

/// Walks functions of one image against a set of known entries.
pub struct Walker<'a, I: Isa> {
    isa: &'a I,
    image: &'a GuestImage,
    /// Entries in the default context, as addresses (borrowed from the caller when it can).
    functions: Cow<'a, BTreeSet<GuestAddr>>,
    /// Entries added on top of `functions` (kept apart so a trial walker need not copy the base).
    added: BTreeSet<Entry<I::Context>>,
    /// Memoised "may this function return" answers for call continuations.
    returns: RefCell<BTreeMap<Entry<I::Context>, bool>>,
}

impl<'a, I: Isa> Walker<'a, I> {
    /// A walker over `image` where `functions` (entries in the default context) are known, so
    /// jumps to them are tail calls.
    pub fn new(isa: &'a I, image: &'a GuestImage, functions: Cow<'a, BTreeSet<GuestAddr>>) -> Walker<'a, I> {
        Walker {
            isa,
            image,
            functions,
            added: BTreeSet::new(),
            returns: RefCell::new(BTreeMap::new()),
        }
    }

    /// A walker where `functions` (default context) and `variants` (entries in other contexts)
    /// are known: what lifting is handed for a guest whose routines are entered in several widths.
    pub fn with_variants(
        isa: &'a I,
        image: &'a GuestImage,
        functions: Cow<'a, BTreeSet<GuestAddr>>,
        variants: BTreeSet<Entry<I::Context>>,
    ) -> Walker<'a, I> {
        let mut walker = Walker::new(isa, image, functions);
        walker.added = variants;
        walker
    }

    /// The instruction set walked.
    pub fn isa(&self) -> &'a I {
        self.isa
    }

    /// The image walked.
    pub fn image(&self) -> &'a GuestImage {
        self.image
    }

    /// Whether `entry` is a known function entry.
    pub fn is_entry(&self, entry: Entry<I::Context>) -> bool {
        (entry.context == I::Context::default() && self.functions.contains(&entry.addr)) || self.added.contains(&entry)
    }

    /// Whether `addr` is a known function entry in the default context.
    pub fn is_function(&self, addr: GuestAddr) -> bool {
        self.is_entry(Entry {
            addr,
            context: I::Context::default(),
        })
    }

    /// Whether a jump in `context` from the function at `from` to `addr` leaves the function: a
    /// tail call to another function or out of lifted code.
    pub fn is_tail_target(&self, addr: GuestAddr, context: I::Context, from: GuestAddr) -> bool {
        addr != from && (self.is_entry(Entry { addr, context }) || self.isa.external(addr).is_some())
    }

    fn add_function(&mut self, entry: Entry<I::Context>) -> bool {
        if self.is_entry(entry) || !self.added.insert(entry) {
            return false;
        }
        // A new entry can turn an intra-function jump into a tail call, so earlier answers may change.
        self.returns.borrow_mut().clear();
        true
    }

    /// A walker that knows what this one knows and can learn more without changing it.
    fn trial(&self) -> Walker<'_, I> {
        let mut w = Walker::new(self.isa, self.image, Cow::Borrowed(self.functions.as_ref()));
        w.added = self.added.clone();
        w
    }

    /// Every known entry: the default-context ones as addresses, and the others.
    fn all_functions(&self) -> (BTreeSet<GuestAddr>, BTreeSet<Entry<I::Context>>) {
        let mut plain = self.functions.as_ref().clone();
        let mut variants = BTreeSet::new();
        for &e in &self.added {
            if e.context == I::Context::default() {
                plain.insert(e.addr);
            } else {
                variants.insert(e);
            }
        }
        (plain, variants)
    }

    /// Whether the function at `entry` may return, judged from its own code with its calls
    /// assumed to return.
    fn may_return(&self, entry: Entry<I::Context>) -> bool {
        if let Some(&r) = self.returns.borrow().get(&entry) {
            return r;
        }
        let r = self.walk_inner(entry, false).may_return;
        self.returns.borrow_mut().insert(entry, r);
        r
    }

    /// The CFG of the function at `addr` entered in the default context.
    pub fn walk(&self, addr: GuestAddr) -> FunctionCfg<I> {
        self.walk_entry(Entry {
            addr,
            context: I::Context::default(),
        })
    }

    /// The CFG of the function at `entry`.
    pub fn walk_entry(&self, entry: Entry<I::Context>) -> FunctionCfg<I> {
        self.walk_inner(entry, true)
    }

    /// The CFG of the one instruction at `addr` (default context) as the run-time tier runs it
    /// (`crate::tier`): the instruction is the entry block, and every address control can go on at
    /// after it — the next instruction, a branch or jump target, a call's return — is a block
    /// start with no instruction, which [`crate::lift::lift_instruction`] lifts as
    /// `exit <addr>, unlifted`, "go on there". A direct call's target is a callee, as in a walk,
    /// so the lifter makes it a call. Nothing is walked beyond the instruction: no jump table is
    /// recognised (an indirect jump is a tail jump through the function table), and every call
    /// is assumed to return unless the callee is an external known not to. `None` when nothing
    /// decodes at `addr` or its flow cannot be taken.
    pub fn instruction_cfg(&self, addr: GuestAddr) -> Option<FunctionCfg<I>> {
        self.instruction_cfg_in(addr, I::Context::default())
    }

    /// [`Walker::instruction_cfg`] for the instruction at `addr` decoded in `context`.
    pub fn instruction_cfg_in(&self, addr: GuestAddr, context: I::Context) -> Option<FunctionCfg<I>> {
        let (insn, next) = self.isa.decode(self.image, addr, context).ok()?;
        let mut cfg = FunctionCfg::new(Entry { addr, context });
        let mut after = context;
        let flow = self.isa.flow(
            self.image,
            &insn,
            &mut after,
            &mut I::Run::default(),
            &mut cfg.code_constants,
        );
        let flow = match flow {
            Ok(flow) => flow,
            Err(failure) if self.isa.lifts_after_failure(&failure) => {
                cfg.insns.insert(addr, insn);
                cfg.failures.insert(addr, failure);
                cfg.may_return = true;
                return Some(cfg);
            }
            Err(_) => return None,
        };
        cfg.insns.insert(addr, insn);
        // Where control may go on after the instruction, each a block start with no instruction.
        let mut go_on = Vec::new();
        let mut may_return = false;
        match flow {
            Flow::Next => go_on.push(next),
            Flow::Call { target, .. } if target == next => go_on.push(next),
            Flow::Jump(target) => go_on.push(target),
            Flow::Branch(target) => {
                go_on.push(target);
                go_on.push(next);
            }
            Flow::Call { target, conditional } => match self.isa.call_flow(self.image, target) {
                Some(CallFlow::ReturnsTwice) => {
                    resume_after(&mut cfg, addr, next, after);
                }
                flow => {
                    if flow == Some(CallFlow::NoReturn) && !conditional {
                        cfg.noreturn_calls.insert(addr);
                    } else {
                        go_on.push(next);
                    }
                    if self.isa.external(target).is_none() && self.image.is_code(target) {
                        cfg.calls.insert(Entry {
                            addr: target,
                            context: after,
                        });
                    } else if flow.is_none() {
                        cfg.bad_calls.insert((addr, target));
                    }
                }
            },
            Flow::CallIndirect { external } => match external {
                Some(CallFlow::ReturnsTwice) => resume_after(&mut cfg, addr, next, after),
                Some(CallFlow::NoReturn) => {
                    cfg.noreturn_calls.insert(addr);
                }
                Some(CallFlow::Returns) | None => go_on.push(next),
            },
            Flow::JumpIndirect { conditional } | Flow::Return { conditional } | Flow::Trap { conditional } => {
                may_return = !matches!(flow, Flow::Trap { .. });
                if conditional {
                    go_on.push(next);
                }
            }
            Flow::TailExternal(flow) => may_return = flow != CallFlow::NoReturn,
        }
        for at in go_on {
            cfg.block_starts.entry(at).or_insert(after);
        }
        cfg.may_return |= may_return;
        Some(cfg)
    }

    /// With `deep`, calls of functions that never return end their path; without, every call is
    /// assumed to return (this keeps the return analysis one level deep and cycle-free).
    fn walk_inner(&self, entry: Entry<I::Context>, deep: bool) -> FunctionCfg<I> {
        let mut cfg = FunctionCfg::new(entry);
        let mut queue = Queue::<I> {
            blocks: BTreeSet::from([(entry.addr, entry.context)]),
            runs: BTreeMap::new(),
        };
        let mut indirect = BTreeSet::new();
        loop {
            while let Some(block) = queue.pop() {
                self.walk_run(&mut cfg, block, deep, &mut queue, &mut indirect);
            }
            // A table's bound check may sit in a block walked after the jump, so tables are
            // recognised once the rest of the function is known, until no more are found.
            let mut found = false;
            for at in indirect.clone() {
                if let Some(table) = self.isa.jump_table(self.image, &cfg, at) {
                    let context = self.context_at(&cfg, at);
                    for &t in table.case_targets() {
                        // The state at the jump is gone: each case starts knowing nothing.
                        self.add_target(&mut cfg, &mut queue, t, context, &I::Run::default());
                    }
                    cfg.jump_tables.insert(at, table);
                    indirect.remove(&at);
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

    /// The context the block holding `at` started in.
    fn context_at(&self, cfg: &FunctionCfg<I>, at: GuestAddr) -> I::Context {
        cfg.block_starts
            .range(..=at)
            .next_back()
            .map_or(cfg.entry.context, |(_, &c)| c)
    }

    /// A jump or branch target: a tail call when it leaves the function, else a block.
    fn add_target(
        &self,
        cfg: &mut FunctionCfg<I>,
        queue: &mut Queue<I>,
        addr: GuestAddr,
        context: I::Context,
        run: &I::Run,
    ) {
        // A block already walked in another context decodes differently from here: it is the
        // entry of another variant, reached by a tail call (the 65816 reaching one loop with an
        // 8-bit and a 16-bit accumulator).
        let other_context = cfg.block_starts.get(&addr).is_some_and(|&c| c != context)
            || (addr == cfg.entry.addr && context != cfg.entry.context);
        if other_context {
            cfg.may_return = true;
            cfg.calls.insert(Entry { addr, context });
        } else if self.is_tail_target(addr, context, cfg.entry.addr) {
            if self.isa.external(addr) != Some(CallFlow::NoReturn) {
                cfg.may_return = true;
            }
            let entry = Entry { addr, context };
            if self.is_entry(entry) {
                cfg.calls.insert(entry);
            }
        } else {
            add_block(cfg, queue, addr, context, run);
        }
    }

    /// Decodes straight-line code from a block (its start, context and run state, as `Queue::pop`
    /// gives them) until the block ends or joins code already walked.
    fn walk_run(
        &self,
        cfg: &mut FunctionCfg<I>,
        (start, mut context, mut run): (GuestAddr, I::Context, I::Run),
        deep: bool,
        queue: &mut Queue<I>,
        indirect: &mut BTreeSet<GuestAddr>,
    ) {
        let mut pc = start;
        loop {
            if let Some(walked) = cfg.insns.get(&pc) {
                // Running into code walked in another context: that code is another variant's,
                // which this path enters by a tail call (the lifter ends the block there).
                if self.isa.insn_context(walked) != context {
                    cfg.calls.insert(Entry { addr: pc, context });
                    cfg.may_return = true;
                }
                return;
            }
            if cfg.failures.contains_key(&pc) {
                return;
            }
            let (insn, next) = match self.isa.decode(self.image, pc, context) {
                Ok(decoded) => decoded,
                Err(failure) => {
                    cfg.failures.insert(pc, failure);
                    cfg.may_return = true;
                    return;
                }
            };
            let flow = self
                .isa
                .flow(self.image, &insn, &mut context, &mut run, &mut cfg.code_constants);
            cfg.insns.insert(pc, insn);
            let flow = match flow {
                Ok(flow) => flow,
                Err(failure) => {
                    cfg.failures.insert(pc, failure);
                    cfg.may_return = true;
                    return;
                }
            };
            match flow {
                Flow::Next => {
                    pc = next;
                    continue;
                }
                Flow::Call { target, .. } if target == next => {
                    pc = next;
                    continue;
                }
                Flow::Jump(target) => self.add_target(cfg, queue, target, context, &run),
                Flow::Branch(target) => {
                    self.add_target(cfg, queue, target, context, &run);
                    add_block(cfg, queue, next, context, &run);
                }
                Flow::Call { target, conditional } => {
                    let flow = self.isa.call_flow(self.image, target);
                    let callee = Entry { addr: target, context };
                    if self.isa.external(target).is_none() && self.image.is_code(target) {
                        cfg.calls.insert(callee);
                    }
                    let returns = match flow {
                        Some(CallFlow::ReturnsTwice) => {
                            resume_after(cfg, pc, next, context);
                            return;
                        }
                        Some(flow) => flow == CallFlow::Returns,
                        None if self.image.is_code(target) => !deep || self.may_return(callee),
                        None => {
                            cfg.bad_calls.insert((pc, target));
                            true
                        }
                    };
                    if returns || conditional {
                        add_block(cfg, queue, next, context, &self.isa.run_after_call(&run));
                    } else {
                        cfg.noreturn_calls.insert(pc);
                    }
                }
                Flow::CallIndirect { external } => match external {
                    Some(CallFlow::ReturnsTwice) => resume_after(cfg, pc, next, context),
                    Some(CallFlow::NoReturn) => {
                        cfg.noreturn_calls.insert(pc);
                    }
                    Some(CallFlow::Returns) | None => {
                        add_block(cfg, queue, next, context, &self.isa.run_after_call(&run))
                    }
                },
                Flow::JumpIndirect { conditional: true } => {
                    cfg.may_return = true;
                    add_block(cfg, queue, next, context, &run);
                }
                Flow::JumpIndirect { conditional: false } => {
                    indirect.insert(pc);
                }
                Flow::TailExternal(flow) => {
                    if flow != CallFlow::NoReturn {
                        cfg.may_return = true;
                    }
                }
                Flow::Return { conditional } => {
                    cfg.may_return = true;
                    if conditional {
                        add_block(cfg, queue, next, context, &run);
                    }
                }
                Flow::Trap { conditional } => {
                    if conditional {
                        add_block(cfg, queue, next, context, &run);
                    }
                }
            }
            return;
        }
    }
}

fn add_block<I: Isa>(
    cfg: &mut FunctionCfg<I>,
    queue: &mut Queue<I>,
    addr: GuestAddr,
    context: I::Context,
    run: &I::Run,
) {
    if let std::collections::btree_map::Entry::Vacant(slot) = cfg.block_starts.entry(addr) {
        slot.insert(context);
        queue.blocks.insert((addr, context));
        queue.runs.insert(addr, run.clone());
    }
}

/// A call at `at` of an external that returns twice: the code after it is a function of its own,
/// which returns to this function's caller, so this function may return.
fn resume_after<I: Isa>(cfg: &mut FunctionCfg<I>, at: GuestAddr, next: GuestAddr, context: I::Context) {
    cfg.returns_twice_calls.insert(at);
    cfg.calls.insert(Entry { addr: next, context });
    cfg.may_return = true;
}

/// What [`discover`] found: the API's answer, and the entries in a context other than the default.
#[derive(Clone, Debug)]
pub struct Found<C> {
    /// Default-context functions, address-taken entries and diagnostics.
    pub discovery: Discovery,
    /// Entries in another context (for guests whose routines are entered in several widths).
    pub variants: BTreeSet<Entry<C>>,
}

/// Finds every function reachable from the image's entry, its exports and the seeds, plus the
/// weak candidates that survive validation.
pub fn discover<I: Isa>(isa: &I, image: &GuestImage, seeds: &Seeds) -> Found<I::Context> {
    discover_with_entries(isa, image, seeds, BTreeSet::new())
}

/// [`discover`], with `entries` as strong seeds besides the image's: entries in a context other
/// than the default (an SNES cartridge's native-mode interrupt vectors, entered in whatever widths
/// the interrupted code had).
pub fn discover_with_entries<I: Isa>(
    isa: &I,
    image: &GuestImage,
    seeds: &Seeds,
    entries: BTreeSet<Entry<I::Context>>,
) -> Found<I::Context> {
    let mut strong: BTreeSet<GuestAddr> = BTreeSet::new();
    let mut early = Vec::new();
    // A library may have no entry point (a PE DLL's AddressOfEntryPoint 0 lands on its headers):
    // that is worth a warning, not an error about undecodable bytes.
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
    let mut walker = Walker::new(isa, image, Cow::Owned(strong.clone()));
    let mut queue: BTreeSet<Entry<I::Context>> = strong
        .iter()
        .map(|&addr| Entry {
            addr,
            context: I::Context::default(),
        })
        .collect();
    for entry in entries {
        if image.is_code(entry.addr) && walker.add_function(entry) {
            queue.insert(entry);
        }
    }
    while let Some(f) = queue.pop_first() {
        let cfg = walker.walk_entry(f);
        for c in cfg.calls {
            if walker.add_function(c) {
                queue.insert(c);
            }
        }
    }
    let (strong_plain, strong_variants) = walker.all_functions();
    let strong_entries: Vec<Entry<I::Context>> = strong_plain
        .iter()
        .map(|&addr| Entry {
            addr,
            context: I::Context::default(),
        })
        .chain(strong_variants.iter().copied())
        .collect();
    // From here on the strong set is the walker's base, so trial walkers borrow it instead of copying it.
    let mut walker = Walker::new(isa, image, Cow::Borrowed(&strong_plain));
    walker.added = strong_variants;

    // Phase 2: weak candidates, validated one by one.
    let mut notes: BTreeMap<GuestAddr, String> = BTreeMap::new();
    let mut known = KnownCode::default();
    let mut candidates: BTreeSet<GuestAddr> = BTreeSet::new();
    let pointers = isa.pointer_candidates(image);
    for p in &pointers {
        known.named_at.entry(p.target).or_default().insert(p.at);
        candidates.insert(p.target);
    }
    for &f in &strong_entries {
        let cfg = walker.walk_entry(f);
        known.note(&cfg);
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
        if known.only_a_case(c) {
            // A jump table's own word naming one of its cases: a block of the function that jumps there.
            continue;
        }
        let new_functions = if let Some(&owner) = known.insns.get(&c) {
            // Code that a walk already took into a function, named from elsewhere: a label whose
            // address is stored (a landing pad, a computed-goto target outside any recognised
            // table) or a function that a neighbour's tail jump ran into. It is an entry of its
            // own into the same code; dropping it would leave a call through it nowhere to go.
            notes.insert(
                c,
                format!(
                    "{c} is inside {}, and its address is taken: it is also an entry of its own",
                    owner.function_name()
                ),
            );
            let entry = Entry {
                addr: c,
                context: I::Context::default(),
            };
            walker.add_function(entry);
            vec![walker.walk_entry(entry)]
        } else {
            match validate(&walker, c) {
                Ok(cfgs) => cfgs,
                Err(why) => {
                    notes.insert(c, format!("dropped the possible function pointer {c}: {why}"));
                    continue;
                }
            }
        };
        for cfg in &new_functions {
            walker.add_function(cfg.entry);
            known.note(cfg);
            candidates.extend(cfg.code_constants.iter().copied().filter(|a| !seen.contains(a)));
        }
        address_taken.insert(c);
    }

    // Phase 3: diagnostics for strong code, against the final function set.
    let mut diagnostics: Vec<Diagnostic> = early;
    diagnostics.extend(notes.into_iter().map(|(addr, message)| Diagnostic {
        severity: Severity::Note,
        addr,
        message,
    }));
    let mut errors: BTreeMap<GuestAddr, Diagnostic> = BTreeMap::new();
    for &f in &strong_entries {
        let cfg = walker.walk_entry(f);
        for (&addr, failure) in &cfg.failures {
            errors.entry(addr).or_insert_with(|| Diagnostic {
                severity: Severity::Error,
                addr,
                message: format!("in {}: {}", f.addr.function_name(), isa.describe(image, failure)),
            });
        }
        for &(addr, target) in &cfg.bad_calls {
            let weak = if isa.calls_address_zero(addr, target) {
                " (a call of address 0 as linked: an undefined weak function, which faults only if called)"
            } else {
                ""
            };
            errors.entry(addr).or_insert_with(|| Diagnostic {
                severity: Severity::Warning,
                addr,
                message: format!("call to {target}, which is not in an executable section{weak}"),
            });
        }
    }
    diagnostics.extend(errors.into_values());
    diagnostics.sort_by_key(|d| (d.addr, d.severity));
    let (functions, variants) = walker.all_functions();
    let pointer_tables = pointer_tables(image, &pointers, &functions);
    Found {
        discovery: Discovery {
            functions,
            address_taken,
            pointer_tables,
            diagnostics,
        },
        variants,
    }
}

/// The width of a table word: 32-bit guests' code pointers.
const POINTER_BYTES: u64 = 4;

/// The image's tables of function addresses (`rpt_ir::Program::pointer_tables`): runs of words
/// [`POINTER_BYTES`] apart that each name a function, keyed by where each run starts and by every
/// word of a run that another word of the image points at (a table of vtables, `kinds[]` naming
/// `rect_vt`, points into a run of vtables laid end to end). Such a pointer is read in either
/// byte order: the tables only suggest the targets an indirect call checks for, so one found by
/// chance costs a comparison, never a wrong call.
fn pointer_tables(
    image: &GuestImage,
    pointers: &[CodePointer],
    functions: &BTreeSet<GuestAddr>,
) -> BTreeMap<GuestAddr, Vec<GuestAddr>> {
    let words: BTreeMap<GuestAddr, GuestAddr> = pointers
        .iter()
        .filter(|p| functions.contains(&p.target))
        .map(|p| (p.at, p.target))
        .collect();
    let mut starts: BTreeSet<GuestAddr> = words
        .keys()
        .copied()
        .filter(|at| at.0 < POINTER_BYTES || !words.contains_key(&GuestAddr(at.0 - POINTER_BYTES)))
        .collect();
    for segment in &image.segments {
        for big_endian in [false, true] {
            for (_, value) in aligned_words(segment, big_endian) {
                let at = GuestAddr(u64::from(value));
                if words.contains_key(&at) {
                    starts.insert(at);
                }
            }
        }
    }
    starts
        .into_iter()
        .map(|start| {
            let run = (0..)
                .map_while(|k| words.get(&GuestAddr(start.0 + k * POINTER_BYTES)).copied())
                .collect();
            (start, run)
        })
        .collect()
}

/// What the walks so far know about code addresses, to judge a candidate that names one.
#[derive(Default)]
struct KnownCode {
    /// Instructions inside walked functions (their entries aside), with the function's entry.
    insns: BTreeMap<GuestAddr, GuestAddr>,
    /// Where the image's words name each candidate.
    named_at: BTreeMap<GuestAddr, BTreeSet<GuestAddr>>,
    /// Code constants of walked instructions: candidates named by code, never by a table alone.
    from_code: BTreeSet<GuestAddr>,
    /// Case targets of tables whose words are known, and those words.
    cases: BTreeSet<GuestAddr>,
    case_words: BTreeSet<GuestAddr>,
    /// Case targets of tables whose words are not known: named by the table wherever they appear.
    untracked_cases: BTreeSet<GuestAddr>,
}

impl KnownCode {
    /// Takes in a walked function.
    fn note<I: Isa>(&mut self, cfg: &FunctionCfg<I>) {
        let entry = cfg.entry.addr;
        self.insns
            .extend(cfg.insns.keys().filter(|&&a| a != entry).map(|&a| (a, entry)));
        self.from_code.extend(cfg.code_constants.iter().copied());
        for table in cfg.jump_tables.values() {
            match table.case_words() {
                Some(words) => {
                    self.cases.extend(table.case_targets().iter().copied());
                    self.case_words.extend(words);
                }
                None => self.untracked_cases.extend(table.case_targets().iter().copied()),
            }
        }
    }

    /// Whether `c` is named only as a case of a jump table (so it is a block, not an entry).
    fn only_a_case(&self, c: GuestAddr) -> bool {
        if self.untracked_cases.contains(&c) {
            return true;
        }
        if !self.cases.contains(&c) || self.from_code.contains(&c) {
            return false;
        }
        self.named_at
            .get(&c)
            .is_none_or(|words| words.is_subset(&self.case_words))
    }
}

/// Walks a weak candidate and the new functions it calls; all must be free of failures.
fn validate<I: Isa>(walker: &Walker<'_, I>, candidate: GuestAddr) -> Result<Vec<FunctionCfg<I>>, String> {
    let mut trial = walker.trial();
    let first = Entry {
        addr: candidate,
        context: I::Context::default(),
    };
    trial.add_function(first);
    let mut stack = vec![first];
    let mut cfgs = Vec::new();
    while let Some(f) = stack.pop() {
        let cfg = trial.walk_entry(f);
        if let Some((addr, failure)) = cfg.failures.iter().next() {
            return Err(format!("at {addr}: {}", walker.isa.describe(walker.image, failure)));
        }
        let calls_data = cfg
            .bad_calls
            .iter()
            .find(|&&(at, target)| !walker.isa.calls_address_zero(at, target));
        if let Some((_, target)) = calls_data {
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

/// The 32-bit words of a segment's initialised bytes at addresses that are multiples of four,
/// with the address of each, read in the guest's byte order.
pub fn aligned_words(segment: &Segment, big_endian: bool) -> impl Iterator<Item = (GuestAddr, u32)> + '_ {
    let skip = (4 - segment.addr.0 % 4) % 4;
    segment
        .bytes
        .get(skip as usize..)
        .unwrap_or_default()
        .chunks_exact(4)
        .enumerate()
        .filter_map(move |(i, chunk)| {
            let word = <[u8; 4]>::try_from(chunk).ok()?;
            let value = if big_endian {
                u32::from_be_bytes(word)
            } else {
                u32::from_le_bytes(word)
            };
            Some((GuestAddr(segment.addr.0 + skip + 4 * i as u64), value))
        })
}

#[cfg(test)]
mod tests;
