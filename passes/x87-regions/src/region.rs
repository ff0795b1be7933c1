//! Finding regions and rewriting them.
//!
//! A region is a run of recognised x87 instructions within one block, possibly with other
//! instructions between them that do not touch the x87 unit (address arithmetic, guest memory
//! loads and stores, integer work). It ends at the block's end, at any other x87 helper, at any
//! access to an x87 slot (`fnstsw`, `fldcw`), at any helper that may read or write guest state,
//! and before an instruction that would fault on the stack the region has built (a pop below
//! what it pushed, a push onto a register it filled).
//!
//! The block is split around the region:
//!
//! ```text
//! before:  B: pre; region; post; term
//! after:   B: pre; guard(tags, TOP) -> F or S
//!          F: the region on values, then write back   -> J(escaping values)
//!          S: the region as it was                    -> J(escaping values)
//!          J(params): post; term
//! ```
//!
//! Values the region defines and code after it uses reach that code through J's parameters, which
//! keep the original values' numbers (both paths define copies under new numbers), so nothing
//! outside the region is renamed.

use std::collections::{BTreeMap, BTreeSet};

use rpt_ir::{
    BinaryOp, Block, BlockCall, Function, FunctionBuilder, Inst, InstKind, IntCC, StateDesc, Terminator, Type, Value,
};

use crate::abi::{Op, Unit, helper, sw};

mod loops;

pub use loops::run as run_loops;

/// Fewer x87 instructions than this stay as they are: the guard and write-back would cost
/// about what they save. A lone register move (`fstp st(0)`, `fxch`, `fld st(i)`) is the
/// exception: on values it is no code at all, so the guard and write-back replace a helper call
/// (a loop whose back edge pops, `fstp st(0)` alone in its block, spent a fifth of physics-x86's
/// instructions in that call).
const MIN_OPS: usize = 2;

/// Rewrites every region of `func`; returns how many there were.
pub fn run(func: &mut Function, state: &StateDesc, unit: &Unit, quiet: bool) -> usize {
    let constants = constants(func);
    let constant = |v: Value| constants.get(&v).copied();
    let mut uses = use_counts(func);
    let mut count = 0;
    let mut work: Vec<(Block, usize)> = (0..func.blocks.len()).map(|b| (Block(b as u32), 0)).collect();
    work.reverse();
    while let Some((block, from)) = work.pop() {
        let insts = &func.block(block).insts;
        let Some(plan) = scan(insts, from, unit, &constant) else {
            continue;
        };
        let join = rewrite(func, state, unit, block, &plan, &mut uses, quiet);
        count += 1;
        // The join block holds what followed the region: it may hold further regions.
        work.push((join, 0));
    }
    count
}

/// How many times each value is an operand, over the whole function: a value the region defines
/// is used after it exactly when it has more uses than the region's own.
fn use_counts(func: &Function) -> Vec<u32> {
    let mut uses = vec![0u32; func.value_types.len()];
    let mut count = |v: Value| {
        if let Some(n) = uses.get_mut(v.index()) {
            *n += 1;
        }
    };
    for block in &func.blocks {
        for inst in &block.insts {
            inst.kind.operands().into_iter().for_each(&mut count);
        }
        block.term.operands().into_iter().for_each(&mut count);
    }
    uses
}

/// The value of every `iconst` in the function.
fn constants(func: &Function) -> BTreeMap<Value, u64> {
    func.blocks
        .iter()
        .flat_map(|b| &b.insts)
        .filter_map(|i| match (i.result, &i.kind) {
            (Some(v), InstKind::Iconst { imm, .. }) => Some((v, *imm)),
            _ => None,
        })
        .collect()
}

/// A region found in a block.
#[derive(Debug)]
struct Plan {
    /// The index of its first x87 instruction.
    start: usize,
    /// One past its last x87 instruction.
    end: usize,
    /// Its x87 instructions by index.
    ops: BTreeMap<usize, Op>,
    /// Registers (relative to TOP at the start) that must hold values for the region to run on
    /// values, and registers that must be empty.
    need_full: u8,
    need_empty: u8,
}

/// What the scan knows of a register, relative to TOP at the region's start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Known {
    /// As the region found it: not read or written yet.
    Entry,
    Empty,
    Full,
}

/// The stack as the scan simulates it.
#[derive(Clone, Debug)]
struct Shape {
    /// TOP minus TOP at the start.
    offset: i32,
    regs: [Known; 8],
    need_full: u8,
    need_empty: u8,
    /// Registers written or pushed into (a loop region writes these back at its exits).
    written: u8,
}

impl Shape {
    /// The stack as a region finds it, given what its guard tests: `full` registers hold values,
    /// `empty` ones do not, the rest are as they were.
    fn start(full: u8, empty: u8) -> Shape {
        let mut regs = [Known::Entry; 8];
        for (r, known) in regs.iter_mut().enumerate() {
            if full & (1 << r) != 0 {
                *known = Known::Full;
            } else if empty & (1 << r) != 0 {
                *known = Known::Empty;
            }
        }
        Shape {
            offset: 0,
            regs,
            need_full: full,
            need_empty: empty,
            written: 0,
        }
    }

    fn rel(&self, i: u32) -> usize {
        (self.offset + i as i32).rem_euclid(8) as usize
    }

    fn read(&mut self, i: u32) -> bool {
        let r = self.rel(i);
        match self.regs[r] {
            Known::Entry => {
                self.need_full |= 1 << r;
                self.regs[r] = Known::Full;
                true
            }
            Known::Full => true,
            Known::Empty => false,
        }
    }

    fn write(&mut self, i: u32) {
        let r = self.rel(i);
        self.regs[r] = Known::Full;
        self.written |= 1 << r;
    }

    fn push(&mut self) -> bool {
        self.offset -= 1;
        let r = self.rel(0);
        self.written |= 1 << r;
        match self.regs[r] {
            Known::Entry => {
                self.need_empty |= 1 << r;
                self.regs[r] = Known::Full;
                true
            }
            Known::Empty => {
                self.regs[r] = Known::Full;
                true
            }
            Known::Full => false,
        }
    }

    fn pop(&mut self) {
        let r = self.rel(0);
        self.regs[r] = Known::Empty;
        self.offset += 1;
    }

    /// Applies an instruction; false if it would fault (the shape is then meaningless).
    fn apply(&mut self, op: &Op) -> bool {
        match *op {
            Op::Load { .. } | Op::Const { .. } => self.push(),
            Op::LoadReg { i } => self.read(i) && self.push(),
            Op::Store { pop, .. } => {
                let ok = self.read(0);
                if pop {
                    self.pop();
                }
                ok
            }
            Op::StoreReg { i, pop } => {
                let ok = self.read(0);
                self.write(i);
                if pop {
                    self.pop();
                }
                ok
            }
            Op::Xch { i } => {
                let ok = self.read(0) && self.read(i);
                self.write(0);
                self.write(i);
                ok
            }
            Op::Arith { dst, src, pop, .. } => {
                let ok = self.read(dst) && self.read(src);
                self.write(dst);
                if pop {
                    self.pop();
                }
                ok
            }
            Op::ArithMem { .. } | Op::Unary { .. } => {
                let ok = self.read(0);
                self.write(0);
                ok
            }
            Op::Com { i, pops, .. } => {
                let ok = self.read(0) && self.read(i);
                for _ in 0..pops {
                    self.pop();
                }
                ok
            }
            Op::ComMem { pop, .. } => {
                let ok = self.read(0);
                if pop {
                    self.pop();
                }
                ok
            }
        }
    }
}

/// Whether an instruction that is not a recognised x87 instruction must end a region.
fn ends_region(inst: &Inst, unit: &Unit) -> bool {
    match &inst.kind {
        InstKind::GetSlot { slot }
        | InstKind::SetSlot { slot, .. }
        | InstKind::Kill { slot }
        | InstKind::GetIndexed { slot, .. }
        | InstKind::SetIndexed { slot, .. } => unit.owns(*slot),
        // Every helper may touch the unit as far as the pass can tell: the x87 ones do, and the
        // rest declare state effects only as a whole.
        InstKind::CallHelper { .. } => true,
        _ => false,
    }
}

/// The first region at or after instruction `from`, if there is one worth rewriting.
fn scan(insts: &[Inst], from: usize, unit: &Unit, constant: &dyn Fn(Value) -> Option<u64>) -> Option<Plan> {
    let mut at = from;
    while at < insts.len() {
        let mut shape = Shape::start(0, 0);
        let mut ops = BTreeMap::new();
        let mut end = at;
        let mut i = at;
        // Whether the instruction at `i` ended the run by faulting on the simulated stack: it
        // may still start the next region, on a stack the next guard tests afresh.
        let mut faulted = false;
        while let Some(inst) = insts.get(i) {
            if let Some(op) = Op::recognize(inst, constant) {
                let mut next = shape.clone();
                if !next.apply(&op) {
                    faulted = true;
                    break;
                }
                shape = next;
                ops.insert(i, op);
                end = i + 1;
            } else if ends_region(inst, unit) {
                break;
            }
            i += 1;
        }
        if ops.len() >= MIN_OPS || (ops.len() == 1 && ops.values().all(Op::is_move)) {
            let start = *ops.keys().next()?;
            return Some(Plan {
                start,
                end,
                ops,
                need_full: shape.need_full,
                need_empty: shape.need_empty,
            });
        }
        // Too short: look again from the instruction that ended it.
        at = if faulted && !ops.is_empty() { i } else { i + 1 };
    }
    None
}

/// A register as the rewritten region holds it.
#[derive(Clone, Copy, Debug)]
enum Held {
    /// Not touched yet.
    Entry,
    /// Popped without the region having its value (its contents in the state stay).
    Empty,
    /// A value the region has, full or popped: a popped register keeps its contents, which
    /// `fnsave` shows, so a changed one is written back even though its tag says empty.
    Value {
        /// The significand (i64).
        m: Value,
        /// Sign and exponent (i32, as the helpers take it).
        e: Value,
        /// Whether the state's copy is out of date.
        dirty: bool,
        /// Whether the register is full (not popped).
        full: bool,
    },
}

/// Builds the fast path: the region's instructions on values.
struct Fast<'a, 'f> {
    b: FunctionBuilder<'f>,
    unit: &'a Unit,
    /// TOP at the start, as an i32.
    top: Value,
    offset: i32,
    regs: [Held; 8],
    /// Original values and what stands for them on this path.
    map: BTreeMap<Value, Value>,
    /// Whether a register move cleared C1 (the region then writes ES and B itself, unless a
    /// value form ran: see `finish`).
    moved: bool,
    /// Whether a value form ran (each ends by setting ES and B from the exception flags).
    summarised: bool,
    /// Whether the program never reads the status word: value forms are then quiet, and register
    /// moves leave C1 as it is.
    quiet: bool,
}

impl Fast<'_, '_> {
    fn rel(&self, i: u32) -> usize {
        (self.offset + i as i32).rem_euclid(8) as usize
    }

    fn mapped(&self, v: Value) -> Value {
        self.map.get(&v).copied().unwrap_or(v)
    }

    /// What a value form's kind or operation number carries: the quiet bit, or nothing.
    fn quiet_bit(&self) -> u32 {
        if self.quiet { crate::abi::QUIET } else { 0 }
    }

    fn c32(&mut self, n: u32) -> Value {
        self.b.iconst(Type::I32, u64::from(n))
    }

    /// st(i) as values, loaded from the state the first time.
    fn read(&mut self, i: u32) -> (Value, Value) {
        let r = self.rel(i);
        match self.regs[r] {
            Held::Value { m, e, full: true, .. } => (m, e),
            // The scan proved every read register full, so `Empty` does not occur here; reading
            // the state is what the original code would see in any case.
            Held::Entry | Held::Empty | Held::Value { full: false, .. } => {
                let (m, e) = self.read_state(r);
                self.regs[r] = Held::Value {
                    m,
                    e,
                    dirty: false,
                    full: true,
                };
                (m, e)
            }
        }
    }

    /// Copies an instruction that is not an x87 one onto the fast path, its operands and result
    /// renamed.
    fn copy(&mut self, inst: &Inst) {
        let mut kind = inst.kind.clone();
        kind.map_operands(|v| self.mapped(v));
        let ty = inst.result.and_then(|r| self.b.func().value_type(r));
        let copy = self.b.push_inst(kind, ty);
        if let (Some(old), Some(new)) = (inst.result, copy) {
            self.map.insert(old, new);
        }
    }

    /// Physical register TOP + `r` (TOP as the region found it) as the state holds it.
    fn read_state(&mut self, r: usize) -> (Value, Value) {
        let index = self.b.binary_imm(BinaryOp::Add, self.top, r as u64);
        let m = self.b.get_indexed(self.unit.st_m, index);
        let e16 = self.b.get_indexed(self.unit.st_e, index);
        let e = self.b.resize(e16, Type::I32);
        (m, e)
    }

    fn write(&mut self, i: u32, (m, e): (Value, Value)) {
        let r = self.rel(i);
        self.regs[r] = Held::Value {
            m,
            e,
            dirty: true,
            full: true,
        };
    }

    fn push(&mut self, v: (Value, Value)) {
        self.offset -= 1;
        self.write(0, v);
    }

    fn pop(&mut self) {
        let r = self.rel(0);
        self.regs[r] = match self.regs[r] {
            Held::Value { m, e, dirty, .. } => Held::Value {
                m,
                e,
                dirty,
                full: false,
            },
            Held::Entry | Held::Empty => Held::Empty,
        };
        self.offset += 1;
    }

    /// A register move clears C1 (and no helper runs to do it).
    fn clear_c1(&mut self) {
        if self.quiet {
            return;
        }
        let word = self.b.get(self.unit.sw);
        let cleared = self.b.binary_imm(BinaryOp::And, word, !sw::C1);
        self.b.set(self.unit.sw, cleared);
        self.moved = true;
    }

    /// Calls a value form that returns a register value.
    fn value_call(&mut self, name: &str, args: Vec<Value>) -> (Value, Value) {
        let m = self.call(name, args, Type::I64);
        let e16 = self.b.get(self.unit.result_e);
        let e = self.b.resize(e16, Type::I32);
        (m, e)
    }

    fn call(&mut self, name: &str, args: Vec<Value>, ty: Type) -> Value {
        self.summarised = true;
        match self.b.call_helper(name, args, Some(ty)) {
            Some(v) => v,
            // call_helper gives a value whenever a result type is asked for.
            None => self.b.iconst(ty, 0),
        }
    }

    /// Runs `op` on values; `result` is what the stack form's call defined (`x87_reg` gives a
    /// value: an fcomi's condition codes, else 0).
    fn op(&mut self, op: &Op, result: Option<Value>) {
        if let Some(r) = result
            && !matches!(op, Op::Com { .. })
        {
            let zero = self.c32(0);
            self.map.insert(r, zero);
        }
        match *op {
            Op::Load { kind, lo, hi } => {
                let k = self.c32(kind | self.quiet_bit());
                let (lo, hi) = (self.mapped(lo), self.mapped(hi));
                let v = self.value_call(helper::VLOAD, vec![k, lo, hi]);
                self.push(v);
            }
            Op::Const { op } => {
                let o = self.c32(op);
                let v = self.value_call(helper::VCONST, vec![o]);
                self.push(v);
            }
            Op::LoadReg { i } => {
                let v = self.read(i);
                self.push(v);
                self.clear_c1();
            }
            Op::Store {
                kind,
                flags,
                pop,
                result,
            } => {
                let (m, e) = self.read(0);
                let (k, f) = (self.c32(kind | self.quiet_bit()), self.c32(flags));
                let bits = self.call(helper::VSTORE, vec![k, f, m, e], Type::I64);
                self.map.insert(result, bits);
                if pop {
                    self.pop();
                }
            }
            Op::StoreReg { i, pop } => {
                self.clear_c1();
                // `fstp st(0)` (a pop) stores st(0) into itself: nothing to write back.
                if i != 0 {
                    let v = self.read(0);
                    self.write(i, v);
                }
                if pop {
                    self.pop();
                }
            }
            Op::Xch { i } => {
                let a = self.read(0);
                let b = self.read(i);
                self.clear_c1();
                self.write(0, b);
                self.write(i, a);
            }
            Op::Arith { op, dst, src, pop } => {
                let (am, ae) = self.read(dst);
                let (bm, be) = self.read(src);
                let o = self.c32(op | self.quiet_bit());
                let r = self.value_call(helper::VARITH, vec![o, am, ae, bm, be]);
                self.write(dst, r);
                if pop {
                    self.pop();
                }
            }
            Op::ArithMem { op, kind, bits } => {
                let (am, ae) = self.read(0);
                let (o, k) = (self.c32(op | self.quiet_bit()), self.c32(kind));
                let bits = self.mapped(bits);
                let r = self.value_call(helper::VARITH_MEM, vec![o, k, am, ae, bits]);
                self.write(0, r);
            }
            Op::Com { which, i, pops } => {
                let (am, ae) = self.read(0);
                let (bm, be) = self.read(i);
                let w = self.c32(which | self.quiet_bit());
                let codes = self.call(helper::VCOM, vec![w, am, ae, bm, be], Type::I32);
                // The stack form (`x87_reg`) returns an fcomi's codes, which the lifted code
                // turns into ZF, PF and CF; the other compares return 0.
                if let Some(r) = result {
                    let same = if Op::to_eflags(which) { codes } else { self.c32(0) };
                    self.map.insert(r, same);
                }
                for _ in 0..pops {
                    self.pop();
                }
            }
            Op::ComMem { kind, bits, pop } => {
                let (am, ae) = self.read(0);
                let k = self.c32(kind);
                let bits = self.mapped(bits);
                self.call(helper::VCOM_MEM, vec![k, am, ae, bits], Type::I32);
                if pop {
                    self.pop();
                }
            }
            Op::Unary { op } => {
                let (am, ae) = self.read(0);
                let o = self.c32(op | self.quiet_bit());
                let r = self.value_call(helper::VUNARY, vec![o, am, ae]);
                self.write(0, r);
            }
        }
    }

    /// Writes the changed registers back, then the tags and TOP; `rel` is the tags relative to
    /// TOP at the start (bit r: st(r) was full).
    fn finish(&mut self, rel: Value) {
        let mut empty = 0u8;
        let mut filled = 0u8;
        let mut dirty = 0u8;
        for (r, held) in self.regs.iter().enumerate() {
            match *held {
                Held::Value {
                    dirty: true,
                    full: true,
                    ..
                } => {
                    filled |= 1 << r;
                    dirty |= 1 << r;
                }
                Held::Value { dirty: true, .. } => {
                    empty |= 1 << r;
                    dirty |= 1 << r;
                }
                Held::Empty | Held::Value { full: false, .. } => empty |= 1 << r,
                Held::Entry | Held::Value { .. } => {}
            }
        }
        self.write_back(dirty);
        self.set_tags(rel, empty, filled);
        self.move_top(self.offset);
        if self.moved && !self.summarised && !self.quiet {
            // ES and B follow the unmasked exceptions after every instruction; the helpers see
            // to it after theirs, and the control word cannot change inside a region, so once
            // here covers the register moves. Moves change no exception flag, so after any
            // value form this would change nothing; a region of moves alone needs it, as the
            // state it starts from need not have ES and B in step.
            self.summarise();
        }
    }

    /// Writes the registers in `which` (relative to TOP at the start) to the state.
    fn write_back(&mut self, which: u8) {
        for r in 0..8usize {
            if which & (1 << r) == 0 {
                continue;
            }
            if let Held::Value { m, e, .. } = self.regs[r] {
                let index = self.b.binary_imm(BinaryOp::Add, self.top, r as u64);
                self.b.set_indexed(self.unit.st_m, index, m);
                let e16 = self.b.resize(e, Type::I16);
                self.b.set_indexed(self.unit.st_e, index, e16);
            }
        }
    }

    /// Sets the tags from `rel` (the tags relative to TOP at the start) without the `empty`
    /// registers and with the `filled` ones.
    fn set_tags(&mut self, rel: Value, empty: u8, filled: u8) {
        if empty | filled == 0 {
            return;
        }
        // rel' = rel without the emptied, with the filled; tags = rel' rotated left by TOP.
        let kept = self.b.binary_imm(BinaryOp::And, rel, u64::from(!empty));
        let now = self.b.binary_imm(BinaryOp::Or, kept, u64::from(filled));
        let high = self.b.binary_imm(BinaryOp::Shl, now, 8);
        let twice = self.b.binary(BinaryOp::Or, now, high);
        let shifted = self.b.binary(BinaryOp::Shl, twice, self.top);
        let down = self.b.binary_imm(BinaryOp::Lshr, shifted, 8);
        let ty = self.b.state().slot(self.unit.tags).ty;
        let tags = self.b.resize(down, ty);
        self.b.set(self.unit.tags, tags);
    }

    /// Sets TOP to TOP at the start plus `offset`.
    fn move_top(&mut self, offset: i32) {
        if offset.rem_euclid(8) == 0 {
            return;
        }
        let moved = self.b.binary_imm(BinaryOp::Add, self.top, offset.rem_euclid(8) as u64);
        let wrapped = self.b.binary_imm(BinaryOp::And, moved, 7);
        let ty = self.b.state().slot(self.unit.top).ty;
        let top = self.b.resize(wrapped, ty);
        self.b.set(self.unit.top, top);
    }

    /// Sets ES and B when an exception the control word leaves unmasked is pending.
    fn summarise(&mut self) {
        let word = self.b.get(self.unit.sw);
        let cw = self.b.get(self.unit.cw);
        let ty = self.b.ty(word);
        let cw = self.b.resize(cw, ty);
        let masked = self.b.unary(rpt_ir::UnaryOp::Not, cw);
        let raised = self.b.binary(BinaryOp::And, word, masked);
        let pending = self.b.binary_imm(BinaryOp::And, raised, sw::EXCEPTIONS);
        let any = self.b.icmp_imm(IntCC::Ne, pending, 0);
        let summary = self.b.binary_imm(BinaryOp::Or, word, sw::ES_B);
        let word = self.b.select(any, summary, word);
        self.b.set(self.unit.sw, word);
    }
}

/// Reads TOP and the tags, and tests that the `full` registers (relative to TOP) hold values and
/// the `empty` ones do not. Returns TOP (i32), the tags relative to TOP (bit r: st(r) is full) and
/// the test's result.
fn guard(b: &mut FunctionBuilder<'_>, unit: &Unit, full: u8, empty: u8) -> (Value, Value, Value) {
    let top8 = b.get(unit.top);
    let top = b.resize(top8, Type::I32);
    let tags8 = b.get(unit.tags);
    let tags = b.resize(tags8, Type::I32);
    let high = b.binary_imm(BinaryOp::Shl, tags, 8);
    let twice = b.binary(BinaryOp::Or, tags, high);
    let shifted = b.binary(BinaryOp::Lshr, twice, top);
    let rel = b.binary_imm(BinaryOp::And, shifted, 0xff);
    let tested = b.binary_imm(BinaryOp::And, rel, u64::from(full | empty));
    let ok = b.icmp_imm(IntCC::Eq, tested, u64::from(full));
    (top, rel, ok)
}

/// Splits `block` around the planned region; returns the block holding what followed it.
fn rewrite(
    func: &mut Function,
    state: &StateDesc,
    unit: &Unit,
    block: Block,
    plan: &Plan,
    uses: &mut Vec<u32>,
    quiet: bool,
) -> Block {
    let data = func.block_mut(block);
    let post = data.insts.split_off(plan.end);
    let region = data.insts.split_off(plan.start);
    let term = std::mem::replace(&mut data.term, Terminator::Unreachable);

    // Values the region defines that anything after it uses.
    let mut in_region: BTreeMap<Value, u32> = BTreeMap::new();
    for inst in &region {
        for v in inst.kind.operands() {
            *in_region.entry(v).or_default() += 1;
        }
    }
    let escaping: Vec<Value> = region
        .iter()
        .filter_map(|i| i.result)
        .filter(|v| uses.get(v.index()).copied().unwrap_or(0) > in_region.get(v).copied().unwrap_or(0))
        .collect();
    // What the fast path needs of the other instructions: their results used after the region,
    // or by an instruction of the region that stays as it is (the x87 calls' constant arguments
    // do not: the value forms get their own).
    let mut needed: BTreeSet<Value> = escaping.iter().copied().collect();
    for (k, inst) in region.iter().enumerate() {
        if !plan.ops.contains_key(&(plan.start + k)) {
            needed.extend(inst.kind.operands());
        }
    }
    for op in plan.ops.values() {
        match *op {
            Op::Load { lo, hi, .. } => needed.extend([lo, hi]),
            Op::ArithMem { bits, .. } | Op::ComMem { bits, .. } => {
                needed.insert(bits);
            }
            _ => {}
        }
    }
    let first_new = func.value_types.len();

    let fast = func.new_block();
    let slow = func.new_block();
    let join = func.new_block();
    func.block_mut(join).params = escaping.clone();
    func.block_mut(join).insts = post;
    func.block_mut(join).term = term;
    // The slow path: the region as it was, its results under new numbers.
    let mut renamed: BTreeMap<Value, Value> = BTreeMap::new();
    let mut slow_insts = Vec::with_capacity(region.len());
    for inst in &region {
        let mut kind = inst.kind.clone();
        kind.map_operands(|v| renamed.get(&v).copied().unwrap_or(v));
        let result = inst.result.map(|old| {
            let new = func.new_value(func.value_type(old).unwrap_or(Type::I64));
            renamed.insert(old, new);
            new
        });
        slow_insts.push(Inst { result, kind });
    }
    func.block_mut(slow).insts = slow_insts;
    let slow_args = escaping.iter().map(|v| renamed.get(v).copied().unwrap_or(*v)).collect();
    func.block_mut(slow).term = Terminator::Jump(BlockCall {
        block: join,
        args: slow_args,
    });

    let mut b = FunctionBuilder::new(func, state);
    // The guard: the registers read before written are full, those pushed into empty.
    b.switch_to_block(block);
    let (top, rel, ok) = guard(&mut b, unit, plan.need_full, plan.need_empty);
    b.branch(ok, fast, slow);

    b.switch_to_block(fast);
    let mut f = Fast {
        b,
        unit,
        top,
        offset: 0,
        regs: [Held::Entry; 8],
        map: BTreeMap::new(),
        moved: false,
        summarised: false,
        quiet,
    };
    for (k, inst) in region.iter().enumerate() {
        if let Some(op) = plan.ops.get(&(plan.start + k)) {
            f.op(op, inst.result);
            continue;
        }
        let pure_constant = matches!(inst.kind, InstKind::Iconst { .. });
        if pure_constant && inst.result.is_some_and(|r| !needed.contains(&r)) {
            continue;
        }
        f.copy(inst);
    }
    f.finish(rel);
    let args = escaping.iter().map(|v| f.mapped(*v)).collect();
    f.b.terminate(Terminator::Jump(BlockCall { block: join, args }));
    drop(f);

    // The region's operands from before it are now read twice, once on each path; later regions
    // count on the totals.
    uses.resize(func.value_types.len(), 0);
    for inst in &func.block(fast).insts {
        for v in inst.kind.operands() {
            if v.index() < first_new
                && let Some(n) = uses.get_mut(v.index())
            {
                *n += 1;
            }
        }
    }
    join
}
