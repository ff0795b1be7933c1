//! One IR function to one C function.
//!
//! Shape of the output:
//!
//! ```c
//! #line 4198400 "demo.lst"
//! void f_00401000(struct cpu *restrict c)
//! {
//!     uint8_t *const mb = rpt_mem;
//!     uint32_t v7;
//! #line 4198400 "demo.lst"
//!     uint32_t v0 = c->esp; uint32_t v1 = v0 - 0x4u; ...
//! block1:;
//! #line 4198403 "demo.lst"
//!     ...
//! }
//! ```
//!
//! - Blocks are written in reverse postorder, so every SSA definition precedes its uses
//!   in the text, and each value becomes a C local declared where it is defined. Block
//!   parameters are declared at the top and assigned by the jumps into their block.
//! - All statements of one guest instruction share one physical line right after the
//!   instruction's `#line <pc>`: the line table then maps every host instruction to
//!   exactly the guest instruction it came from, whatever the number of statements.
//! - Values nobody uses are not written (their instructions are pure), which keeps
//!   clang's unused-variable warnings away from raw lifter output.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

use rpt_ir::{
    AddrSpace, BinaryOp, Block, BlockCall, CallTarget, ConvOp, Endian, ExitReason, FBinaryOp, FConvOp, FTernaryOp,
    FUnaryOp, FloatCC, Function, GuestAddr, InstKind, IntCC, Rounding, SlotId, SlotLayout, Terminator, Type, UnaryOp,
    Value,
};

use crate::ctype::{Int, access_name, c_string, c_type, field_name, int_literal};
use crate::state_use::{StateUse, rounds_by_guest_mode};
use crate::{EmitContext, EmitError, EmittedFunction};

/// From this many different targets on, a switch whose jumps assign nothing becomes a table of
/// label addresses (`goto *table[index]`, a GNU C extension clang has on every host) rather than a
/// C `switch`: below it clang's compares (of ranges, for runs of cases with one target) cost no
/// more than the table's bounds check and load. Few targets matter more than the table's size: clang
/// joins every `goto *` of a function into one indirect branch, so each table adds its paths to the
/// one dispatch block (switch-recovery's range trees in luaV_execute cost 17% as tables).
const LABEL_TABLE_MIN_CASES: usize = 8;

/// State in locals: a function with this many locals or more keeps in a local only a slot it uses
/// at least [`CALL_COST_FACTOR`] times as often as calls hand it over (both weighted by loop
/// depth); the rest stay in `struct cpu`. A function with that many guest registers live (a
/// PowerPC interpreter loop: luaV_execute has 50) leaves most of them in host stack slots anyway,
/// where every call costs a write-back and a reload on top. An x86 function never has this many
/// (eight registers and the flags), so x86 guests are untouched.
const MANY_LOCALS: usize = 25;

/// See [`MANY_LOCALS`]. Measured on the bench samples (callgrind, default pipeline): with 4,
/// lua-ppc ran 0.87 of its instructions, calls-ppc 0.965, lz-ppc 0.99, and no sample more; with
/// 1 or 2 (and no [`MANY_LOCALS`] threshold) lua-ppc gained less (0.94, 0.89) and calls-ppc
/// less; without the threshold lua-x86 ran 1.07.
const CALL_COST_FACTOR: u64 = 4;

/// How much more a block nested one loop deeper counts, when weighing uses against calls.
const LOOP_WEIGHT: u64 = 8;

/// Emits one function as a C definition, per `docs/c-abi.md`.
pub fn emit_function(func: &Function, ctx: &EmitContext) -> Result<EmittedFunction, EmitError> {
    let mut e = FnEmitter::new(func, ctx, None)?;
    e.emit_body()?;
    Ok(e.finish())
}

/// The C definition of a guest function that the recipe overrides: its body only tail-calls
/// `c_symbol`, the hand-written C function with the same signature (`void sym(struct cpu *restrict c)`).
///
/// The prototype of `c_symbol` is part of the text, so the shard needs nothing else, and the
/// function keeps its `f_` name: callers and the function table are untouched by an override.
///
/// With MEMARG the override also gets the `_m` entry lifted callers use, a bridge that drops the
/// memory base (an override is C with the plain signature).
pub fn emit_override(entry: GuestAddr, c_symbol: &str, listing_name: &str, memarg: bool) -> EmittedFunction {
    let mut text = String::new();
    let _ = writeln!(text, "void {c_symbol}(struct cpu *restrict c);");
    if entry.0 <= u64::from(u32::MAX) {
        let _ = writeln!(text, "#line {} {}", entry.0, c_string(listing_name));
    }
    let _ = writeln!(text, "void {}(struct cpu *restrict c)\n{{", entry.function_name());
    text.push_str("\t/* Replaced by the recipe's override. */\n");
    let _ = writeln!(text, "\t__attribute__((musttail)) return {c_symbol}(c);");
    text.push_str("}\n");
    if memarg {
        let _ = writeln!(
            text,
            "void {}(struct cpu *restrict c, uint8_t *mb)\n{{\n\t(void)mb;\n\t{c_symbol}(c);\n}}",
            memarg_name(entry)
        );
    }
    EmittedFunction {
        entry,
        text,
        callees: BTreeSet::new(),
    }
}

/// Where a value is defined.
#[derive(Clone, Copy)]
enum Def {
    Param { block: usize, index: usize },
    Inst { block: usize, index: usize },
}

struct FnEmitter<'a> {
    func: &'a Function,
    ctx: &'a EmitContext<'a>,
    /// Reachable blocks in reverse postorder.
    order: Vec<usize>,
    /// Whether each value is needed (read by something that is emitted).
    live: Vec<bool>,
    /// Blocks some emitted jump goes to, which therefore need a label.
    targets: BTreeSet<usize>,
    callees: BTreeSet<GuestAddr>,
    uses_memory_base: bool,
    body: String,
    /// Statements of the physical line being built.
    line: Vec<String>,
    /// The guest pc of the instruction in progress at the end of each block (its last
    /// `mark`, else the one in progress when it was entered), filled in as blocks are written.
    exit_pc: Vec<Option<u64>>,
    /// The immediate dominator of each reachable block.
    idom: Vec<Option<Block>>,
    /// State in locals: the slots (plain slots, and words packed slots live in) this function
    /// keeps in C locals.
    locals: BTreeSet<SlotId>,
    /// State in locals: per block, the locals that may differ from `struct cpu` on entry
    /// (written since the last write-back on some path), so a write-back stores only those.
    dirty_in: Vec<BTreeSet<SlotId>>,
    /// The same, at the statement being emitted.
    dirty: BTreeSet<SlotId>,
    /// State in locals: per block, the locals whose value may be read from its entry on (by the
    /// function, or by anything it hands the state to) before being written.
    live_in: Vec<BTreeSet<SlotId>>,
    /// State in locals: the locals the body reads (a `get`, a packed field's write, a
    /// write-back). A local written but never read (every write of it killed before anything
    /// saw it) is marked used, or clang warns that it is set but not used.
    read_locals: BTreeSet<SlotId>,
    /// Per value, the base and displacement of the near access it can address ([`crate::near`]).
    near: Vec<Option<(Value, i64)>>,
    /// Emitting a form of the run-time tier rather than a function ([`crate::tier`]).
    tier: Option<&'a TierForm<'a>>,
}

/// What makes a form of the run-time tier's code differ from a function's ([`crate::tier`]): its
/// varying constants are read from `p`, and control that leaves the instruction is handed back
/// to the tier's loop as the address to go on at (`RPT_TIER_RETURN` for a return).
pub(crate) struct TierForm<'a> {
    /// The C function's name.
    pub name: String,
    /// The `p[k]` each varying `iconst` reads, by the value it defines.
    pub params: BTreeMap<Value, usize>,
    /// The `p[k]` holding the instruction's address, when it varies.
    pub entry: Option<usize>,
    /// The lifted functions: a direct call of one is a call by name, of anything else a call
    /// through the tier (`rpt_tier_run`).
    pub functions: &'a BTreeSet<GuestAddr>,
}

/// Emits one form of the run-time tier as a C function `uint64_t name(c, mb, p)`.
pub(crate) fn emit_tier_form(
    func: &Function,
    ctx: &EmitContext,
    form: &TierForm<'_>,
) -> Result<EmittedFunction, EmitError> {
    let mut e = FnEmitter::new(func, ctx, Some(form))?;
    e.emit_body()?;
    Ok(e.finish())
}

impl<'a> FnEmitter<'a> {
    fn new(
        func: &'a Function,
        ctx: &'a EmitContext<'a>,
        tier: Option<&'a TierForm<'a>>,
    ) -> Result<FnEmitter<'a>, EmitError> {
        // A near access folds its displacement into the C as a literal, and a tier form's varying
        // constants are read from `p` at run time: there every access is computed in full.
        let near = match tier {
            Some(_) => vec![None; func.value_types.len()],
            None => crate::near::near_addresses(func, ctx.memory.address_bits),
        };
        let mut e = FnEmitter {
            func,
            ctx,
            order: Vec::new(),
            live: vec![false; func.value_types.len()],
            targets: BTreeSet::new(),
            callees: BTreeSet::new(),
            uses_memory_base: false,
            body: String::new(),
            line: Vec::new(),
            exit_pc: vec![None; func.blocks.len()],
            idom: Vec::new(),
            locals: BTreeSet::new(),
            dirty_in: Vec::new(),
            dirty: BTreeSet::new(),
            live_in: Vec::new(),
            read_locals: BTreeSet::new(),
            near,
            tier,
        };
        if func.blocks.is_empty() {
            return Err(e.malformed("the function has no blocks".to_string()));
        }
        if !func.blocks[0].params.is_empty() {
            return Err(e.malformed("block0 (the entry) takes parameters".to_string()));
        }
        e.order = e.reverse_postorder()?;
        e.idom = rpt_ir::verify::dominators(func);
        e.compute_liveness()?;
        e.choose_locals();
        e.live_in = e.live_locals();
        e.dirty_in = e.dirty_locals();
        for &b in &e.order {
            for dest in func.blocks[b].term.successors() {
                e.targets.insert(dest.block.index());
            }
        }
        Ok(e)
    }

    fn malformed(&self, what: String) -> EmitError {
        EmitError::Malformed {
            function: self.func.entry,
            what,
        }
    }

    fn unsupported(&self, what: String) -> EmitError {
        EmitError::Unsupported {
            function: self.func.entry,
            what,
        }
    }

    fn block_exists(&self, b: Block) -> Result<usize, EmitError> {
        if b.index() < self.func.blocks.len() {
            Ok(b.index())
        } else {
            Err(self.malformed(format!("a jump to {b}, which does not exist")))
        }
    }

    fn reverse_postorder(&self) -> Result<Vec<usize>, EmitError> {
        let n = self.func.blocks.len();
        let mut seen = vec![false; n];
        let mut post = Vec::with_capacity(n);
        let mut stack: Vec<(usize, usize)> = vec![(0, 0)];
        seen[0] = true;
        while let Some((b, i)) = stack.pop() {
            let succs = self.func.blocks[b].term.successors();
            // Successors are visited last to first, so that reversing the postorder puts
            // them first to last: a branch's `then` block follows it in the text.
            if let Some(s) = succs.len().checked_sub(i + 1).and_then(|j| succs.get(j)) {
                stack.push((b, i + 1));
                let s = self.block_exists(s.block)?;
                if !seen[s] {
                    seen[s] = true;
                    stack.push((s, 0));
                }
            } else {
                post.push(b);
            }
        }
        post.reverse();
        Ok(post)
    }

    /// Marks every value an emitted statement needs: operands of side effects and
    /// terminators, then transitively the operands of live values, where a live block
    /// parameter makes the matching argument of every jump into its block live.
    fn compute_liveness(&mut self) -> Result<(), EmitError> {
        let func = self.func;
        let mut defs: Vec<Option<Def>> = vec![None; func.value_types.len()];
        let mut incoming: Vec<Vec<&BlockCall>> = vec![Vec::new(); func.blocks.len()];
        let mut work: Vec<Value> = Vec::new();
        for &b in &self.order {
            let data = &func.blocks[b];
            for (index, p) in data.params.iter().enumerate() {
                let slot = defs
                    .get_mut(p.index())
                    .ok_or_else(|| self.malformed(format!("{p} was never allocated")))?;
                *slot = Some(Def::Param { block: b, index });
            }
            for (index, inst) in data.insts.iter().enumerate() {
                if let Some(v) = inst.result {
                    let slot = defs
                        .get_mut(v.index())
                        .ok_or_else(|| self.malformed(format!("{v} was never allocated")))?;
                    *slot = Some(Def::Inst { block: b, index });
                }
                if inst.kind.has_side_effects() {
                    work.extend(self.operands_written(&inst.kind));
                }
            }
            let mut term_operands = data.term.operands();
            let arg_count: usize = data.term.successors().iter().map(|d| d.args.len()).sum();
            term_operands.truncate(term_operands.len() - arg_count);
            work.extend(term_operands);
            for dest in data.term.successors() {
                let target = self.block_exists(dest.block)?;
                if dest.args.len() != func.blocks[target].params.len() {
                    return Err(self.malformed(format!(
                        "{} takes {} arguments but a jump gives {}",
                        dest.block,
                        func.blocks[target].params.len(),
                        dest.args.len()
                    )));
                }
                incoming[target].push(dest);
            }
        }
        while let Some(v) = work.pop() {
            let Some(live) = self.live.get_mut(v.index()) else {
                return Err(self.malformed(format!("{v} was never allocated")));
            };
            if std::mem::replace(live, true) {
                continue;
            }
            match defs[v.index()] {
                None => return Err(self.malformed(format!("{v} is used but not defined in any reachable block"))),
                Some(Def::Inst { block, index }) => {
                    work.extend(self.operands_written(&func.blocks[block].insts[index].kind))
                }
                Some(Def::Param { block, index }) => {
                    for call in &incoming[block] {
                        work.push(call.args[index]);
                    }
                }
            }
        }
        Ok(())
    }

    /// The operands of `kind` its C statement names: a near access names its address's base
    /// rather than the address, which is then not written unless something else uses it.
    fn operands_written(&self, kind: &InstKind) -> Vec<Value> {
        let mut operands = kind.operands();
        if let InstKind::Load { space, addr, .. } | InstKind::Store { space, addr, .. } = kind
            && *space == AddrSpace::RAM
            && let Some((base, _)) = self.near_address(*addr)
            && let Some(operand) = operands.iter_mut().find(|v| **v == *addr)
        {
            *operand = base;
        }
        operands
    }

    fn is_live(&self, v: Value) -> bool {
        self.live.get(v.index()).copied().unwrap_or(false)
    }

    fn ty(&self, v: Value) -> Result<Type, EmitError> {
        self.func
            .value_type(v)
            .ok_or_else(|| self.malformed(format!("{v} was never allocated")))
    }

    fn int(&self, v: Value) -> Result<Int, EmitError> {
        let ty = self.ty(v)?;
        if ty.is_int() {
            Ok(Int::new(ty))
        } else {
            Err(self.malformed(format!("{v} is {ty}, expected an integer")))
        }
    }

    fn slot(&self, slot: SlotId) -> Result<&'a rpt_ir::Slot, EmitError> {
        self.ctx
            .state
            .get(slot)
            .ok_or_else(|| self.malformed(format!("{slot} is not in the register file")))
    }

    // ---- text layout

    fn stmt(&mut self, s: String) {
        self.line.push(s);
    }

    fn stmt_if_any(&mut self, s: String) {
        if !s.is_empty() {
            self.stmt(s);
        }
    }

    fn flush_line(&mut self) {
        if !self.line.is_empty() {
            self.body.push('\t');
            self.body.push_str(&self.line.join(" "));
            self.body.push('\n');
            self.line.clear();
        }
    }

    fn line_directive(&mut self, pc: u64) {
        self.flush_line();
        // A form's instructions are many, at many addresses: none of them is its line.
        if self.tier.is_some() {
            return;
        }
        // DWARF line numbers are 32 bits and clang rejects larger `#line` numbers.
        if pc <= u64::from(u32::MAX) {
            let _ = writeln!(self.body, "#line {pc} {}", c_string(self.ctx.listing_name));
        } else {
            let _ = writeln!(self.body, "\t/* guest pc {pc:#x} */");
        }
    }

    // ---- body

    fn emit_body(&mut self) -> Result<(), EmitError> {
        let func = self.func;
        let order = self.order.clone();
        for b in order {
            let data = &func.blocks[b];
            if self.targets.contains(&b) {
                self.flush_line();
                let _ = writeln!(self.body, "block{b}:;");
            }
            // Statements before a block's first mark belong to the guest instruction in
            // progress when the block is entered: the one its immediate dominator ends in
            // (written earlier, since reverse postorder puts dominators first).
            let entry_pc = match self.idom.get(b).copied().flatten() {
                Some(d) if d.index() != b => self.exit_pc.get(d.index()).copied().flatten(),
                _ => None,
            }
            .unwrap_or(func.entry.0);
            if !matches!(data.insts.first().map(|i| &i.kind), Some(InstKind::Mark { .. })) {
                self.line_directive(entry_pc);
            }
            self.dirty = self.dirty_in.get(b).cloned().unwrap_or_default();
            let mut pc = entry_pc;
            for inst in &data.insts {
                if let InstKind::Mark { pc: at } = inst.kind {
                    pc = at.0;
                }
                self.inst(inst.result, &inst.kind)?;
            }
            self.exit_pc[b] = Some(pc);
            self.terminator(&data.term)?;
        }
        self.flush_line();
        Ok(())
    }

    fn finish(self) -> EmittedFunction {
        let mut text = String::new();
        let entry = self.func.entry;
        if let Some(form) = self.tier {
            let _ = writeln!(
                text,
                "static uint64_t {}(struct cpu *restrict c, uint8_t *mb, const uint64_t *p)\n{{\n\t(void)mb;\n\t(void)p;",
                form.name
            );
        } else if entry.0 <= u64::from(u32::MAX) {
            let _ = writeln!(text, "#line {} {}", entry.0, c_string(self.ctx.listing_name));
        }
        if self.tier.is_some() {
            // The header is written above.
        } else if self.ctx.memarg {
            let _ = writeln!(
                text,
                "void {}(struct cpu *restrict c, uint8_t *mb)\n{{",
                memarg_name(entry)
            );
            if !self.uses_memory_base {
                text.push_str("\t(void)mb;\n");
            }
        } else {
            let _ = writeln!(text, "void {}(struct cpu *restrict c)\n{{", entry.function_name());
            if self.uses_memory_base {
                text.push_str("\tuint8_t *const mb = rpt_mem;\n");
            }
        }
        for &id in &self.locals {
            if let Some(s) = self.ctx.state.get(id) {
                let name = field_name(&s.name);
                let _ = writeln!(text, "\t{} l_{name} = c->{name};", c_type(s.ty));
                if !self.read_locals.contains(&id) {
                    let _ = writeln!(text, "\t(void)l_{name};");
                }
            }
        }
        for &b in &self.order {
            for &p in &self.func.blocks[b].params {
                if self.is_live(p) {
                    // The type was checked when the parameter was first used.
                    let ty = self.func.value_type(p).unwrap_or(Type::I1);
                    let _ = writeln!(text, "\t{} {p};", c_type(ty));
                }
            }
        }
        text.push_str(&self.body);
        text.push_str("}\n");
        if self.ctx.memarg && self.tier.is_none() {
            // The plain entry the function table, the runtime and overrides call. Not a tail call:
            // musttail needs the callee's signature to match.
            let _ = writeln!(
                text,
                "void {}(struct cpu *restrict c)\n{{\n\t{}(c, rpt_mem);\n}}",
                entry.function_name(),
                memarg_name(entry)
            );
        }
        EmittedFunction {
            entry,
            text,
            callees: self.callees,
        }
    }

    fn define(&mut self, result: Option<Value>, expr: String) -> Result<(), EmitError> {
        let v =
            result.ok_or_else(|| self.malformed("an instruction that produces a value defines none".to_string()))?;
        let ty = self.ty(v)?;
        self.stmt(format!("{} {v} = {expr};", c_type(ty)));
        Ok(())
    }

    fn inst(&mut self, result: Option<Value>, kind: &InstKind) -> Result<(), EmitError> {
        if let InstKind::Mark { pc } = kind {
            self.line_directive(pc.0);
            // One count per guest instruction compiled code runs (the tier counts its own).
            if self.ctx.count_instructions && self.tier.is_none() {
                self.stmt("rpt_compiled_insns++;".to_string());
            }
            return Ok(());
        }
        if !self.is_emitted(result, kind) {
            return Ok(());
        }
        if let Some(only) = self.written_back(kind) {
            let spill = self.spill_locals(only.as_ref());
            self.stmt_if_any(spill);
        }
        match kind {
            InstKind::Mark { .. } => Ok(()),
            InstKind::Iconst { ty, imm } => {
                if !ty.is_int() {
                    return Err(self.malformed(format!("iconst of {ty}")));
                }
                let param = self.tier.zip(result).and_then(|(form, v)| form.params.get(&v).copied());
                match param {
                    Some(k) => self.define(result, format!("({})p[{k}]", c_type(*ty))),
                    None => self.define(result, int_literal(*ty, *imm)),
                }
            }
            InstKind::Fconst { ty, bits } => {
                let e = self.fconst(*ty, *bits)?;
                self.define(result, e)
            }
            InstKind::Unary { op, arg } => {
                let e = self.unary(*op, *arg)?;
                self.define(result, e)
            }
            InstKind::Binary { op, args } => {
                let e = self.binary(*op, args[0], args[1])?;
                self.define(result, e)
            }
            InstKind::Icmp { cond, args } => {
                let e = self.icmp(*cond, args[0], args[1])?;
                self.define(result, e)
            }
            InstKind::Select {
                cond,
                if_true,
                if_false,
            } => self.define(result, format!("{cond} ? {if_true} : {if_false}")),
            InstKind::Convert { op, arg, to } => {
                let e = self.convert(*op, *arg, *to)?;
                self.define(result, e)
            }
            InstKind::FBinary { op, rounding, args } => {
                let e = self.fbinary(*op, *rounding, args[0], args[1])?;
                self.define(result, e)
            }
            InstKind::FTernary { op, rounding, args } => {
                let e = self.fternary(*op, *rounding, args)?;
                self.define(result, e)
            }
            InstKind::FUnary { op, rounding, arg } => {
                let e = self.funary(*op, *rounding, *arg)?;
                self.define(result, e)
            }
            InstKind::Fcmp { cond, args } => {
                let e = self.fcmp(*cond, args[0], args[1])?;
                self.define(result, e)
            }
            InstKind::FConvert { op, rounding, arg, to } => {
                let e = self.fconvert(*op, *rounding, *arg, *to)?;
                self.define(result, e)
            }
            InstKind::GetSlot { slot } => {
                let e = self.get_slot(*slot)?;
                self.read_locals.extend(self.word_of(*slot));
                self.define(result, e)
            }
            InstKind::SetSlot { slot, value } => {
                let s = self.set_slot(*slot, *value)?;
                if self.word_of(*slot) != Some(*slot) {
                    self.read_locals.extend(self.word_of(*slot));
                }
                self.stmt(s);
                if let Some(word) = self.word_of(*slot).filter(|w| self.locals.contains(w)) {
                    self.dirty.insert(word);
                }
                Ok(())
            }
            InstKind::Kill { slot } => {
                if let Some(word) = self.killed_local(*slot) {
                    self.dirty.remove(&word);
                }
                Ok(())
            }
            InstKind::GetIndexed { slot, index } => {
                let e = self.indexed(*slot, *index)?;
                self.define(result, e)
            }
            InstKind::SetIndexed { slot, index, value } => {
                let place = self.indexed(*slot, *index)?;
                self.stmt(format!("{place} = {value};"));
                Ok(())
            }
            InstKind::Load {
                ty,
                endian,
                space,
                addr,
            } => {
                let e = self.load(*ty, *endian, *space, *addr)?;
                self.define(result, e)
            }
            InstKind::Store {
                endian,
                space,
                addr,
                value,
            } => {
                let s = self.store(*endian, *space, *addr, *value)?;
                self.stmt(s);
                Ok(())
            }
            InstKind::CallHelper { helper, args } => self.call_helper(result, helper, args),
        }
    }

    // ---- integers

    fn unary(&self, op: UnaryOp, arg: Value) -> Result<String, EmitError> {
        let t = self.int(arg)?;
        let a = arg.to_string();
        let w = t.bits();
        Ok(match op {
            UnaryOp::Not => t.fit(&format!("~{}", t.zx(&a))),
            UnaryOp::Neg => t.fit(&format!("{} - {}", t.lit(0), t.zx(&a))),
            UnaryOp::Popcnt => {
                let f = if w > 32 {
                    "__builtin_popcountll"
                } else {
                    "__builtin_popcount"
                };
                t.cast(&format!("{f}({a})"))
            }
            UnaryOp::Clz => {
                if w > 32 {
                    t.cast(&format!("{a} ? __builtin_clzll({a}) : 64"))
                } else if w == 32 {
                    t.cast(&format!("{a} ? __builtin_clz({a}) : 32"))
                } else {
                    t.cast(&format!("{a} ? __builtin_clz({a}) - {} : {w}", 32 - w))
                }
            }
            UnaryOp::Ctz => {
                let f = if w > 32 { "__builtin_ctzll" } else { "__builtin_ctz" };
                t.cast(&format!("{a} ? {f}({a}) : {w}"))
            }
            UnaryOp::Bswap => match w {
                16 | 32 | 64 => format!("__builtin_bswap{w}({a})"),
                _ => return Err(self.malformed(format!("bswap of a {w}-bit value"))),
            },
        })
    }

    fn binary(&self, op: BinaryOp, a: Value, b: Value) -> Result<String, EmitError> {
        let t = self.int(a)?;
        if self.ty(b)? != self.ty(a)? {
            return Err(self.malformed(format!("{} of {a} and {b}, which differ in type", op.name())));
        }
        let (a, b) = (a.to_string(), b.to_string());
        let w = t.bits();
        let (za, zb) = (t.zx(&a), t.zx(&b));
        let (sa, sb) = (t.sx(&a), t.sx(&b));
        let amount = t.amount(&b);
        // The complementary amount of a rotate, computed so that it stays in range when `amount` is 0.
        let back = format!("((0u - {b}) & {}u)", w - 1);
        Ok(match op {
            BinaryOp::Add => t.fit(&format!("{za} + {zb}")),
            BinaryOp::Sub => t.fit(&format!("{za} - {zb}")),
            BinaryOp::Mul => t.fit(&format!("{za} * {zb}")),
            BinaryOp::Umulhi => match w {
                64 => format!("(uint64_t)(((unsigned __int128){a} * {b}) >> 64)"),
                32 => format!("(uint32_t)(((uint64_t){a} * {b}) >> 32)"),
                _ => t.fit(&format!("({za} * {zb}) >> {w}")),
            },
            BinaryOp::Smulhi => match w {
                64 => format!("(uint64_t)(((__int128)(int64_t){a} * (int64_t){b}) >> 64)"),
                32 => format!("(uint32_t)(((int64_t)(int32_t){a} * (int32_t){b}) >> 32)"),
                // The product of two sign-extended 16-bit values always fits in int32_t.
                _ => t.cast(&format!("({sa} * {sb}) >> {w}")),
            },
            BinaryOp::Udiv => t.fit(&format!("{za} / {zb}")),
            BinaryOp::Urem => t.fit(&format!("{za} % {zb}")),
            // Division by zero and MIN / -1 are undefined in the IR as in C; lifters guard them.
            BinaryOp::Sdiv => t.cast(&format!("{sa} / {sb}")),
            BinaryOp::Srem => t.cast(&format!("{sa} % {sb}")),
            // Bitwise results of in-range operands are in range, so a plain cast suffices even for i1.
            BinaryOp::And => t.narrow(&format!("{a} & {b}")),
            BinaryOp::Or => t.narrow(&format!("{a} | {b}")),
            BinaryOp::Xor => t.narrow(&format!("{a} ^ {b}")),
            BinaryOp::Shl => t.fit(&format!("{za} << {amount}")),
            BinaryOp::Lshr => t.fit(&format!("{za} >> {amount}")),
            // `>>` of a negative value is arithmetic in every compiler rpt supports (and in C23).
            BinaryOp::Ashr => t.cast(&format!("{sa} >> {amount}")),
            BinaryOp::Rotl => t.fit(&format!("({za} << {amount}) | ({za} >> {back})")),
            BinaryOp::Rotr => t.fit(&format!("({za} >> {amount}) | ({za} << {back})")),
        })
    }

    fn icmp(&self, cond: IntCC, a: Value, b: Value) -> Result<String, EmitError> {
        let t = self.int(a)?;
        let (a, b) = (a.to_string(), b.to_string());
        let (op, signed) = match cond {
            IntCC::Eq => ("==", false),
            IntCC::Ne => ("!=", false),
            IntCC::Ult => ("<", false),
            IntCC::Ule => ("<=", false),
            IntCC::Ugt => (">", false),
            IntCC::Uge => (">=", false),
            IntCC::Slt => ("<", true),
            IntCC::Sle => ("<=", true),
            IntCC::Sgt => (">", true),
            IntCC::Sge => (">=", true),
        };
        Ok(if signed {
            format!("(uint8_t)({} {op} {})", t.sx(&a), t.sx(&b))
        } else {
            format!("(uint8_t)({a} {op} {b})")
        })
    }

    fn convert(&self, op: ConvOp, arg: Value, to: Type) -> Result<String, EmitError> {
        let from = self.ty(arg)?;
        let a = arg.to_string();
        let bad = || self.malformed(format!("{} from {from} to {to}", op.name()));
        Ok(match op {
            ConvOp::Zext if from.is_int() && to.is_int() && from.bits() < to.bits() => format!("({}){a}", c_type(to)),
            ConvOp::Sext if from.is_int() && to.is_int() && from.bits() < to.bits() => {
                format!("({}){}", c_type(to), Int::new(from).sx(&a))
            }
            ConvOp::Trunc if from.is_int() && to.is_int() && from.bits() > to.bits() => Int::new(to).cast(&a),
            ConvOp::Bitcast if from.bits() == to.bits() && from != to => {
                let bits_of = |ty: Type, x: String| -> Option<String> {
                    match ty {
                        Type::I32 | Type::I64 => Some(x),
                        Type::F32 | Type::F64 | Type::V2F32 => Some(format!("rpt_{}_bits({x})", access_name(ty)?)),
                        Type::I1 | Type::I8 | Type::I16 | Type::F80 => None,
                    }
                };
                let from_bits = |ty: Type, x: String| -> Option<String> {
                    match ty {
                        Type::I32 | Type::I64 => Some(x),
                        Type::F32 | Type::F64 | Type::V2F32 => Some(format!("rpt_{}_from_bits({x})", access_name(ty)?)),
                        Type::I1 | Type::I8 | Type::I16 | Type::F80 => None,
                    }
                };
                bits_of(from, a).and_then(|x| from_bits(to, x)).ok_or_else(bad)?
            }
            ConvOp::Zext | ConvOp::Sext | ConvOp::Trunc | ConvOp::Bitcast => return Err(bad()),
        })
    }

    // ---- floats

    fn float_ty(&self, v: Value, what: &str) -> Result<Type, EmitError> {
        match self.ty(v)? {
            t @ (Type::F32 | Type::F64) => Ok(t),
            t @ (Type::F80 | Type::V2F32) => Err(self.unsupported(format!("{what} on {t}"))),
            t => Err(self.malformed(format!("{what} on {t}"))),
        }
    }

    /// The mode argument of a runtime rounding helper.
    fn mode(rounding: Rounding) -> &'static str {
        match rounding {
            Rounding::Nearest => "RPT_ROUND_NEAREST",
            Rounding::Zero => "RPT_ROUND_ZERO",
            Rounding::Up => "RPT_ROUND_UP",
            Rounding::Down => "RPT_ROUND_DOWN",
            Rounding::Dynamic => "rpt_guest_rounding(c)",
        }
    }

    fn fconst(&self, ty: Type, bits: u128) -> Result<String, EmitError> {
        // Constants are written as bit patterns: exact for NaN payloads and negative zero alike.
        Ok(match ty {
            Type::F32 => format!("rpt_f32_from_bits({:#x}u)", bits as u32),
            Type::F64 => format!("rpt_f64_from_bits({:#x}ull)", bits as u64),
            Type::F80 => format!("rpt_f80_from_bits({:#x}ull, {:#x}u)", bits as u64, (bits >> 64) as u16),
            Type::I1 | Type::I8 | Type::I16 | Type::I32 | Type::I64 | Type::V2F32 => {
                return Err(self.malformed(format!("fconst of {ty}")));
            }
        })
    }

    fn fbinary(&self, op: FBinaryOp, rounding: Rounding, a: Value, b: Value) -> Result<String, EmitError> {
        let what = format!("{}.{}", op.name(), rounding.name());
        let ty = self.float_ty(a, &what)?;
        let c_op = match op {
            FBinaryOp::Fadd => "+",
            FBinaryOp::Fsub => "-",
            FBinaryOp::Fmul => "*",
            FBinaryOp::Fdiv => "/",
        };
        Ok(match rounding {
            // The host runs in round-to-nearest-even everywhere outside the runtime's helpers.
            Rounding::Nearest => format!("{a} {c_op} {b}"),
            Rounding::Zero | Rounding::Up | Rounding::Down | Rounding::Dynamic => {
                format!("rpt_{}_{}({a}, {b}, {})", op.name(), ty.name(), Self::mode(rounding))
            }
        })
    }

    fn fternary(&self, op: FTernaryOp, rounding: Rounding, args: &[Value; 3]) -> Result<String, EmitError> {
        let what = format!("{}.{}", op.name(), rounding.name());
        let ty = self.float_ty(args[0], &what)?;
        let [a, b, c] = args;
        let (builtin, runtime) = match (op, ty) {
            (FTernaryOp::Fma, Type::F32) => ("__builtin_fmaf", "rpt_fma_f32"),
            (FTernaryOp::Fma, Type::F64) => ("__builtin_fma", "rpt_fma_f64"),
            _ => return Err(self.unsupported(format!("{what} on {ty}"))),
        };
        Ok(match rounding {
            Rounding::Nearest => format!("{builtin}({a}, {b}, {c})"),
            Rounding::Zero | Rounding::Up | Rounding::Down | Rounding::Dynamic => {
                format!("{runtime}({a}, {b}, {c}, {})", Self::mode(rounding))
            }
        })
    }

    fn funary(&self, op: FUnaryOp, rounding: Rounding, arg: Value) -> Result<String, EmitError> {
        let ty = self.ty(arg)?;
        let what = format!("{}.{} on {ty}", op.name(), rounding.name());
        let suffix = match ty {
            Type::F32 => "f",
            Type::F64 => "",
            Type::F80 => "l",
            Type::V2F32 => return Err(self.unsupported(what)),
            Type::I1 | Type::I8 | Type::I16 | Type::I32 | Type::I64 => return Err(self.malformed(what)),
        };
        Ok(match op {
            // Sign operations are exact bit operations in any rounding, f80 included.
            FUnaryOp::Fneg => format!("-{arg}"),
            FUnaryOp::Fabs => format!("__builtin_fabs{suffix}({arg})"),
            FUnaryOp::Fsqrt => match (ty, rounding) {
                (Type::F80, _) => return Err(self.unsupported(what)),
                (_, Rounding::Nearest) => format!("__builtin_sqrt{suffix}({arg})"),
                (_, Rounding::Zero | Rounding::Up | Rounding::Down | Rounding::Dynamic) => {
                    format!("rpt_fsqrt_{}({arg}, {})", ty.name(), Self::mode(rounding))
                }
            },
        })
    }

    fn fcmp(&self, cond: FloatCC, a: Value, b: Value) -> Result<String, EmitError> {
        let ty = self.ty(a)?;
        // Comparisons are exact, so f80 (the host's long double on x86) is fine here.
        if !ty.is_float() {
            return Err(if ty == Type::V2F32 {
                self.unsupported(format!("fcmp {} on {ty}", cond.name()))
            } else {
                self.malformed(format!("fcmp on {ty}"))
            });
        }
        Ok(match cond {
            FloatCC::Eq => format!("(uint8_t)({a} == {b})"),
            FloatCC::Lt => format!("(uint8_t)({a} < {b})"),
            FloatCC::Le => format!("(uint8_t)({a} <= {b})"),
            FloatCC::Uno => format!("(uint8_t)__builtin_isunordered({a}, {b})"),
        })
    }

    fn fconvert(&self, op: FConvOp, rounding: Rounding, arg: Value, to: Type) -> Result<String, EmitError> {
        let from = self.ty(arg)?;
        let what = format!("{}.{} from {from} to {to}", op.name(), rounding.name());
        let a = arg.to_string();
        let mode = Self::mode(rounding);
        match op {
            FConvOp::Fconvert => match (from, to, rounding) {
                (Type::F32, Type::F64, _) => Ok(format!("(double){a}")),
                (Type::F64, Type::F32, Rounding::Nearest) => Ok(format!("(float){a}")),
                (Type::F64, Type::F32, _) => Ok(format!("rpt_fconvert_f64_f32({a}, {mode})")),
                (Type::F80, _, _) | (_, Type::F80, _) => Err(self.unsupported(what)),
                _ => Err(self.malformed(what)),
            },
            FConvOp::SintToFloat | FConvOp::UintToFloat => {
                let mantissa = match to {
                    Type::F32 => 24,
                    Type::F64 => 53,
                    Type::F80 => return Err(self.unsupported(what)),
                    Type::I1 | Type::I8 | Type::I16 | Type::I32 | Type::I64 | Type::V2F32 => {
                        return Err(self.malformed(what));
                    }
                };
                if !from.is_int() || from == Type::I1 {
                    return Err(self.malformed(what));
                }
                let t = Int::new(from);
                let signed = op == FConvOp::SintToFloat;
                let (value, magnitude_bits) = if signed {
                    (t.sx(&a), t.bits() - 1)
                } else {
                    (t.zx(&a), t.bits())
                };
                if rounding == Rounding::Nearest || magnitude_bits <= mantissa {
                    // Either the host's default rounding is the one asked for, or the conversion is exact.
                    Ok(format!("({}){value}", c_type(to)))
                } else if signed {
                    Ok(format!("rpt_i64_to_{}({value}, {mode})", to.name()))
                } else {
                    Ok(format!("rpt_u64_to_{}({value}, {mode})", to.name()))
                }
            }
            FConvOp::FloatToSint => {
                match from {
                    Type::F32 | Type::F64 => {}
                    Type::F80 => return Err(self.unsupported(what)),
                    Type::I1 | Type::I8 | Type::I16 | Type::I32 | Type::I64 | Type::V2F32 => {
                        return Err(self.malformed(what));
                    }
                }
                if !to.is_int() || to == Type::I1 {
                    return Err(self.malformed(what));
                }
                let t = Int::new(to);
                // Out-of-range inputs are undefined in the IR; lifters check ranges first.
                Ok(match rounding {
                    Rounding::Zero if t.bits() > 32 => format!("(uint64_t)(int64_t){a}"),
                    Rounding::Zero => t.cast(&format!("(int32_t){a}")),
                    Rounding::Nearest | Rounding::Up | Rounding::Down | Rounding::Dynamic => {
                        t.cast(&format!("rpt_ftosi_f64({a}, {mode})"))
                    }
                })
            }
        }
    }

    // ---- state

    fn get_slot(&self, slot: SlotId) -> Result<String, EmitError> {
        let s = self.slot(slot)?;
        match s.layout {
            SlotLayout::Plain => Ok(self.place(slot, s)),
            SlotLayout::Packed { parent, lsb, bits } => {
                let p = self.slot(parent)?;
                let place = self.place(parent, p);
                // The masked field fits the slot's type, so a plain cast is exact.
                let mask = int_literal(p.ty, field_mask(bits));
                Ok(format!("({})({} & {mask})", c_type(s.ty), shifted(&place, ">>", lsb)))
            }
            SlotLayout::Array { .. } => Err(self.malformed(format!("get of array slot %{} without an index", s.name))),
        }
    }

    fn set_slot(&self, slot: SlotId, value: Value) -> Result<String, EmitError> {
        let s = self.slot(slot)?;
        match s.layout {
            SlotLayout::Plain => Ok(format!("{} = {value};", self.place(slot, s))),
            SlotLayout::Packed { parent, lsb, bits } => {
                let p = self.slot(parent)?;
                let pt = Int::new(p.ty);
                let field = field_mask(bits);
                let keep = !(field << lsb) & p.ty.mask();
                let wide = if pt.bits() > 32 { "uint64_t" } else { "uint32_t" };
                let place = self.place(parent, p);
                Ok(format!(
                    "{place} = {};",
                    pt.fit(&format!(
                        "({place} & {}) | {}",
                        int_literal(p.ty, keep),
                        shifted(&format!("(({wide}){value} & {})", int_literal(p.ty, field)), "<<", lsb)
                    ))
                ))
            }
            SlotLayout::Array { .. } => Err(self.malformed(format!("set of array slot %{} without an index", s.name))),
        }
    }

    /// Whether an instruction is written at all: its effects, or a value something needs.
    fn is_emitted(&self, result: Option<Value>, kind: &InstKind) -> bool {
        kind.has_side_effects() || result.is_some_and(|v| self.is_live(v))
    }

    /// The locals an (emitted) instruction needs written back before it: `None` for none,
    /// `Some(None)` for every dirty one, `Some(Some(set))` for those in `set`. A helper that reads
    /// or writes state sees what it touches (one that writes is handed the dirty locals too, so the
    /// reload after it cannot replace a newer value with `struct cpu`'s older one); an operation
    /// rounding by the guest's mode has the guest's C part (`rpt_guest_rounding`) read `struct cpu`.
    fn written_back(&self, kind: &InstKind) -> Option<Option<BTreeSet<SlotId>>> {
        if self.locals.is_empty() {
            return None;
        }
        match kind {
            InstKind::CallHelper { helper, .. } => {
                let decl = self.ctx.helpers.get(helper.as_str())?;
                let e = decl.effects;
                (e.reads_state || e.reads_flags || e.writes_state || e.may_exit).then(|| self.helper_sees(decl))
            }
            // The guest's C part reads the rounding mode from the special slots (PowerPC's FPSCR,
            // x86's MXCSR) and nothing else; `state_use` counts the same.
            kind if rounds_by_guest_mode(kind) => Some(Some(
                self.locals
                    .iter()
                    .copied()
                    .filter(|&w| {
                        self.ctx
                            .state
                            .get(w)
                            .is_some_and(|s| s.role == rpt_ir::SlotRole::Special)
                    })
                    .collect(),
            )),
            _ => None,
        }
    }

    /// Where plain slot `id` (or the word of packed slots) is read and written: its C local with
    /// state in locals, else its field of `struct cpu`.
    fn place(&self, id: SlotId, slot: &rpt_ir::Slot) -> String {
        if self.locals.contains(&id) {
            format!("l_{}", field_name(&slot.name))
        } else {
            format!("c->{}", field_name(&slot.name))
        }
    }

    /// The local a `kill` of `slot` makes clean: the slot's own, if it is a plain slot kept in a
    /// local. A packed field shares its word with live fields, and a slot in `struct cpu` has no
    /// write-back to skip, so a kill of either changes nothing.
    fn killed_local(&self, slot: SlotId) -> Option<SlotId> {
        (self.word_of(slot) == Some(slot) && self.locals.contains(&slot)).then_some(slot)
    }

    /// The slot holding `slot`'s bits: itself if plain, its parent if packed; none for an array.
    fn word_of(&self, slot: SlotId) -> Option<SlotId> {
        match self.ctx.state.get(slot)?.layout {
            SlotLayout::Plain => Some(slot),
            SlotLayout::Packed { parent, .. } => Some(parent),
            SlotLayout::Array { .. } => None,
        }
    }

    /// State in locals: picks the slots of the chosen roles this function reads (through a live
    /// value) or writes. Arrays stay in `struct cpu`: their index is a run-time value. So does a
    /// slot that a helper this function calls names among those it touches (the x87 unit's
    /// words): each such call would write it back and reload it, costing more than it saves.
    fn choose_locals(&mut self) {
        let roles = self.ctx.state_in_locals;
        if roles.is_empty() {
            return;
        }
        let func = self.func;
        let mut helper_slots = BTreeSet::new();
        for &b in &self.order {
            for inst in &func.blocks[b].insts {
                if let InstKind::CallHelper { helper, .. } = &inst.kind
                    && let Some(decl) = self.ctx.helpers.get(helper.as_str())
                {
                    helper_slots.extend(decl.touches.iter().filter_map(|&t| self.word_of(t)));
                }
            }
        }
        for &b in &self.order {
            for inst in &func.blocks[b].insts {
                if let Some(word) = self.local_candidate(inst, &helper_slots) {
                    self.locals.insert(word);
                }
            }
        }
        if self.locals.len() >= MANY_LOCALS {
            self.keep_locals_worth_their_calls(&helper_slots);
        }
    }

    /// The word an instruction reads (through a live value) or writes that may be a local: a
    /// plain slot of a chosen role that no helper this function calls names.
    fn local_candidate(&self, inst: &rpt_ir::Inst, helper_slots: &BTreeSet<SlotId>) -> Option<SlotId> {
        let slot = match &inst.kind {
            InstKind::GetSlot { slot } if inst.result.is_some_and(|v| self.is_live(v)) => *slot,
            InstKind::SetSlot { slot, .. } => *slot,
            _ => return None,
        };
        let word = self.word_of(slot)?;
        let w = self.ctx.state.get(word)?;
        (matches!(w.layout, SlotLayout::Plain)
            && self.ctx.state_in_locals.contains(w.role)
            && !helper_slots.contains(&word))
        .then_some(word)
    }

    /// [`MANY_LOCALS`]: keeps the locals used at least [`CALL_COST_FACTOR`] times as often as
    /// calls hand them over (a callee that may read or write a word, anything for an unknown
    /// one), uses and calls weighted [`LOOP_WEIGHT`] times per loop they are in.
    fn keep_locals_worth_their_calls(&mut self, helper_slots: &BTreeSet<SlotId>) {
        let func = self.func;
        let mut depth = vec![0u32; func.blocks.len()];
        for l in rpt_ir::verify::natural_loops(func) {
            for b in l.blocks {
                if let Some(d) = depth.get_mut(b.index()) {
                    *d += 1;
                }
            }
        }
        let weight = |b: usize| LOOP_WEIGHT.saturating_pow(depth.get(b).copied().unwrap_or(0));
        // Ways in from the blocks that are emitted (reachable ones).
        let mut preds: Vec<Vec<usize>> = vec![Vec::new(); func.blocks.len()];
        for &b in &self.order {
            for dest in func.blocks[b].term.successors() {
                if let Some(p) = preds.get_mut(dest.block.index()) {
                    p.push(b);
                }
            }
        }
        let mut uses: BTreeMap<SlotId, u64> = BTreeMap::new();
        let mut handovers: BTreeMap<SlotId, u64> = BTreeMap::new();
        for &b in &self.order {
            let data = &func.blocks[b];
            for inst in &data.insts {
                if let Some(word) = self.local_candidate(inst, helper_slots) {
                    let n = uses.entry(word).or_insert(0);
                    *n = n.saturating_add(weight(b));
                }
            }
            if let Terminator::Call { target, .. } = &data.term {
                let callee = self.light_indirect_call(target).or_else(|| self.ctx.calls.of(target));
                // An indirect call reached only when its target matched none of the functions
                // the inline pass checked it against first is the exception, not the loop's work.
                let weight = if checked_fallback(func, b, &preds) {
                    1
                } else {
                    weight(b)
                };
                for &word in &self.locals {
                    if callee.is_none_or(|c| c.reads.contains(&word) || c.writes.contains(&word)) {
                        let n = handovers.entry(word).or_insert(0);
                        *n = n.saturating_add(weight);
                    }
                }
            }
        }
        self.locals.retain(|w| {
            let used = uses.get(w).copied().unwrap_or(0);
            let handed = handovers.get(w).copied().unwrap_or(0);
            used >= handed.saturating_mul(CALL_COST_FACTOR)
        });
    }

    /// Statements writing locals back to `struct cpu`: before anything outside the function may
    /// read the state (calls, helpers that read it, returns, exits). Only the locals in `only`,
    /// when given, and only those that may be dirty; they are clean after.
    fn spill_locals(&mut self, only: Option<&BTreeSet<SlotId>>) -> String {
        let mut out = Vec::new();
        let spilled: Vec<SlotId> = self
            .dirty
            .iter()
            .copied()
            .filter(|id| only.is_none_or(|o| o.contains(id)))
            .collect();
        for id in spilled {
            self.dirty.remove(&id);
            self.read_locals.insert(id);
            if let Some(s) = self.ctx.state.get(id) {
                let name = field_name(&s.name);
                out.push(format!("c->{name} = l_{name};"));
            }
        }
        out.join(" ")
    }

    /// The locals a call of helper `decl` sees (and so must be written back before it and, if it
    /// writes state, reloaded after it), or `None` for every local: those it names (and the flags,
    /// if it reads them), unless it may leave lifted code, which hands the runtime everything.
    fn helper_sees(&self, decl: &rpt_ir::HelperDecl) -> Option<BTreeSet<SlotId>> {
        let effects = decl.effects;
        (!decl.touches.is_empty() && !effects.may_exit).then(|| {
            self.locals
                .iter()
                .copied()
                .filter(|&word| {
                    let flag = effects.reads_flags
                        && self
                            .ctx
                            .state
                            .get(word)
                            .is_some_and(|s| s.role == rpt_ir::SlotRole::Flag);
                    flag || decl.touches.iter().any(|&t| self.word_of(t) == Some(word))
                })
                .collect()
        })
    }

    /// The locals a call of `target` that continues at `cont` is handed (written back before it
    /// if dirty) and those it may write (reloaded after it), from what the callee reads and
    /// writes (`state_use`); `None` when the callee may read and write everything. A local the
    /// callee may write but not read is handed over only if its value may be read after the
    /// call: a path on which the callee leaves it alone must find the caller's value there.
    /// Otherwise neither version matters, and the local stays as it was, unread until written.
    fn call_hands_over(&self, target: &CallTarget, cont: &BlockCall) -> Option<(BTreeSet<SlotId>, BTreeSet<SlotId>)> {
        let light = self.light_indirect_call(target);
        let callee = match light {
            Some(light) => light,
            None => self.ctx.calls.of(target)?,
        };
        // An indirect call emitted once may reach code no function holds, which the run-time
        // tier runs: beyond what the lifted targets use, it hands over (and takes back) what the
        // guest's calling conventions pass through a call, which the tier's code reads and writes
        // as compiled code does. The two-version call's light version only reaches functions in
        // the direct table, and its other version hands over everything.
        let tier_may_run = self.ctx.run_time_tier && light.is_none() && matches!(target, CallTarget::Indirect(_));
        let passed_by_call = |w: &SlotId| tier_may_run && self.ctx.memory.call_registers.contains(w);
        let after = self.live_in.get(cont.block.index());
        let live_after = |w: &SlotId| after.is_none_or(|l| l.contains(w));
        let written: BTreeSet<SlotId> = self
            .locals
            .iter()
            .copied()
            .filter(|w| (callee.writes.contains(w) || passed_by_call(w)) && live_after(w))
            .collect();
        let handed = self
            .locals
            .iter()
            .copied()
            .filter(|w| callee.reads.contains(w) || written.contains(w) || passed_by_call(w))
            .collect();
        Some((handed, written))
    }

    /// Per block, the locals live on entry (`live_in`): a backward data flow where a `get`
    /// whose value is used reads a local, a plain `set` or a `kill` ends it, and anything that
    /// hands the state on (a helper that reads it, a callee, a return, a tail call, an exit)
    /// reads what it may see: a direct callee what `state_use` says it reads, a return what its
    /// callers read after it, anything else every local.
    fn live_locals(&self) -> Vec<BTreeSet<SlotId>> {
        let n = self.func.blocks.len();
        let mut live_in: Vec<BTreeSet<SlotId>> = vec![BTreeSet::new(); n];
        if self.locals.is_empty() {
            return live_in;
        }
        let mut changed = true;
        while changed {
            changed = false;
            for &b in self.order.iter().rev() {
                let data = &self.func.blocks[b];
                let mut live: BTreeSet<SlotId> = BTreeSet::new();
                for dest in data.term.successors() {
                    if let Some(l) = live_in.get(dest.block.index()) {
                        live.extend(l.iter().copied());
                    }
                }
                match &data.term {
                    Terminator::Jump(_) | Terminator::Branch { .. } | Terminator::Switch { .. } => {}
                    Terminator::Call {
                        target: target @ CallTarget::Direct(_),
                        ..
                    } => match self.ctx.calls.of(target) {
                        Some(callee) => live.extend(self.locals.iter().copied().filter(|w| callee.reads.contains(w))),
                        None => live.extend(self.locals.iter().copied()),
                    },
                    // A return hands over what some caller reads after it (`state_use::after_return`).
                    Terminator::Return => match &self.ctx.calls.after_return {
                        Some(read) => live.extend(self.locals.iter().copied().filter(|w| read.contains(w))),
                        None => live.extend(self.locals.iter().copied()),
                    },
                    _ => live.extend(self.locals.iter().copied()),
                }
                for inst in data.insts.iter().rev() {
                    if !self.is_emitted(inst.result, &inst.kind) {
                        continue;
                    }
                    match &inst.kind {
                        InstKind::GetSlot { slot } => {
                            if let Some(word) = self.word_of(*slot).filter(|w| self.locals.contains(w)) {
                                live.insert(word);
                            }
                        }
                        InstKind::SetSlot { slot, .. } => {
                            if let Some(word) = self.word_of(*slot).filter(|w| self.locals.contains(w)) {
                                if word == *slot {
                                    live.remove(&word);
                                } else {
                                    live.insert(word);
                                }
                            }
                        }
                        InstKind::Kill { slot } => {
                            if let Some(word) = self.killed_local(*slot) {
                                live.remove(&word);
                            }
                        }
                        kind => match self.written_back(kind) {
                            Some(Some(seen)) => live.extend(seen),
                            Some(None) => live.extend(self.locals.iter().copied()),
                            None => {}
                        },
                    }
                }
                if live != live_in[b] {
                    live_in[b] = live;
                    changed = true;
                }
            }
        }
        live_in
    }

    /// For an indirect call emitted in two versions (`state_use::ProgramStateUse` says why), what
    /// the version for a target in the direct table hands over; the dirty locals the other
    /// version writes back are clean after either. `None` for a call emitted once.
    fn light_indirect_call(&self, target: &CallTarget) -> Option<&StateUse> {
        match target {
            CallTarget::Indirect(_) if self.ctx.memarg && !self.locals.is_empty() => {
                self.ctx.calls.indirect_light.as_ref()
            }
            _ => None,
        }
    }

    /// Per block in the function, the locals that may be dirty on entry: a forward data flow
    /// where a write makes a local dirty and a write-back (before a call, a helper that reads the
    /// state) makes it clean, joined by union.
    fn dirty_locals(&self) -> Vec<BTreeSet<SlotId>> {
        let n = self.func.blocks.len();
        let mut dirty_in: Vec<BTreeSet<SlotId>> = vec![BTreeSet::new(); n];
        if self.locals.is_empty() {
            return dirty_in;
        }
        let mut changed = true;
        while changed {
            changed = false;
            for &b in &self.order {
                let data = &self.func.blocks[b];
                let mut dirty = dirty_in[b].clone();
                // The same steps as the emission's (`inst`), so the two agree on what is dirty.
                for inst in &data.insts {
                    if !self.is_emitted(inst.result, &inst.kind) {
                        continue;
                    }
                    match self.written_back(&inst.kind) {
                        Some(Some(seen)) => dirty.retain(|w| !seen.contains(w)),
                        Some(None) => dirty.clear(),
                        None => {}
                    }
                    match &inst.kind {
                        InstKind::SetSlot { slot, .. } => {
                            if let Some(word) = self.word_of(*slot).filter(|w| self.locals.contains(w)) {
                                dirty.insert(word);
                            }
                        }
                        InstKind::Kill { slot } => {
                            if let Some(word) = self.killed_local(*slot) {
                                dirty.remove(&word);
                            }
                        }
                        _ => {}
                    }
                }
                if let Terminator::Call { target, cont } = &data.term {
                    match self.call_hands_over(target, cont) {
                        Some((handed, _)) => dirty.retain(|w| !handed.contains(w)),
                        None => dirty.clear(),
                    }
                }
                for dest in data.term.successors() {
                    let target = dest.block.index();
                    if let Some(into) = dirty_in.get_mut(target) {
                        let before = into.len();
                        into.extend(dirty.iter().copied());
                        changed |= into.len() != before;
                    }
                }
            }
        }
        dirty_in
    }

    /// Statements reloading locals from `struct cpu` (only those in `only`, when given): after
    /// anything that may have written the state (calls, helpers that write it).
    fn reload_locals(&self, only: Option<&BTreeSet<SlotId>>) -> String {
        let mut out = Vec::new();
        for &id in &self.locals {
            if only.is_some_and(|o| !o.contains(&id)) {
                continue;
            }
            if let Some(s) = self.ctx.state.get(id) {
                let name = field_name(&s.name);
                out.push(format!("l_{name} = c->{name};"));
            }
        }
        out.join(" ")
    }

    fn indexed(&self, slot: SlotId, index: Value) -> Result<String, EmitError> {
        let s = self.slot(slot)?;
        let SlotLayout::Array { len } = s.layout else {
            return Err(self.malformed(format!("indexed access to %{}, which is not an array", s.name)));
        };
        if len == 0 {
            return Err(self.malformed(format!("array slot %{} has no elements", s.name)));
        }
        self.int(index)?;
        Ok(format!("c->{}[{index} % {len}u]", field_name(&s.name)))
    }

    // ---- memory

    fn near_address(&self, addr: Value) -> Option<(Value, i64)> {
        self.near.get(addr.index()).copied().flatten()
    }

    fn load(&mut self, ty: Type, endian: Endian, space: AddrSpace, addr: Value) -> Result<String, EmitError> {
        self.int(addr)?;
        let Some(name) = access_name(ty) else {
            return Err(self.malformed(format!("load of {ty}")));
        };
        let order = endian.name();
        if space == AddrSpace::RAM {
            self.uses_memory_base = true;
            if let Some((base, disp)) = self.near_address(addr) {
                return Ok(format!("rpt_load_{name}_{order}_near(mb, {base}, {disp})"));
            }
            return Ok(format!("rpt_load_{name}_{order}_at(mb, {addr})"));
        }
        let bytes = ty.bits() / 8;
        let raw = format!("rpt_load_space(c, {}u, {addr}, {bytes}u)", space.0);
        let int_ty = match ty {
            Type::I8 | Type::I16 | Type::I32 | Type::I64 => ty,
            Type::F32 => Type::I32,
            Type::F64 | Type::V2F32 => Type::I64,
            Type::I1 | Type::F80 => return Err(self.unsupported(format!("load of {ty} from {space}"))),
        };
        let mut value = format!("({}){raw}", c_type(int_ty));
        if endian == Endian::Big && bytes > 1 {
            value = format!("__builtin_bswap{}({value})", int_ty.bits());
        }
        Ok(if int_ty == ty {
            value
        } else {
            format!("rpt_{name}_from_bits({value})")
        })
    }

    fn store(&mut self, endian: Endian, space: AddrSpace, addr: Value, value: Value) -> Result<String, EmitError> {
        self.int(addr)?;
        let ty = self.ty(value)?;
        let Some(name) = access_name(ty) else {
            return Err(self.malformed(format!("store of {ty}")));
        };
        let order = endian.name();
        if space == AddrSpace::RAM {
            self.uses_memory_base = true;
            if let Some((base, disp)) = self.near_address(addr) {
                return Ok(format!("rpt_store_{name}_{order}_near(mb, {base}, {disp}, {value});"));
            }
            return Ok(format!("rpt_store_{name}_{order}_at(mb, {addr}, {value});"));
        }
        let bytes = ty.bits() / 8;
        let mut bits = match ty {
            Type::I8 | Type::I16 | Type::I32 | Type::I64 => value.to_string(),
            Type::F32 | Type::F64 | Type::V2F32 => format!("rpt_{name}_bits({value})"),
            Type::I1 | Type::F80 => return Err(self.unsupported(format!("store of {ty} to {space}"))),
        };
        if endian == Endian::Big && bytes > 1 {
            bits = format!("__builtin_bswap{}({bits})", ty.bits());
        }
        Ok(format!("rpt_store_space(c, {}u, {addr}, {bytes}u, {bits});", space.0))
    }

    fn call_helper(&mut self, result: Option<Value>, helper: &str, args: &[Value]) -> Result<(), EmitError> {
        let Some(decl) = self.ctx.helpers.get(helper) else {
            return Err(self.malformed(format!("call to undeclared helper @{helper}")));
        };
        if !rpt_ir::is_identifier(helper) {
            return Err(self.malformed(format!("helper name @{helper} is not a C identifier")));
        }
        if decl.params.len() != args.len() {
            return Err(self.malformed(format!(
                "@{helper} takes {} arguments, given {}",
                decl.params.len(),
                args.len()
            )));
        }
        let mut call = format!("rpt_helper_{helper}(c");
        for a in args {
            let _ = write!(call, ", {a}");
        }
        call.push(')');
        // `inst` wrote back what the helper sees; what it may have changed is reloaded after it.
        match result {
            Some(v) if self.is_live(v) => self.define(Some(v), call)?,
            _ => self.stmt(format!("{call};")),
        }
        if decl.effects.writes_state {
            let reload = self.reload_locals(self.helper_sees(decl).as_ref());
            self.stmt_if_any(reload);
        }
        Ok(())
    }

    // ---- terminators

    /// A direct call expression: `f_X(c)`, `f_X_m(c, mb)` with MEMARG, `extern_symbol(c)`.
    fn direct_call(&mut self, addr: GuestAddr) -> Result<String, EmitError> {
        let name = self.callee(addr)?;
        if self.ctx.memarg && !self.ctx.externs.contains_key(&addr) {
            self.uses_memory_base = true;
            Ok(format!("{}(c, mb)", memarg_name(addr)))
        } else {
            Ok(format!("{name}(c)"))
        }
    }

    fn callee(&mut self, addr: GuestAddr) -> Result<String, EmitError> {
        self.callees.insert(addr);
        match self.ctx.externs.get(&addr) {
            Some(symbol) if rpt_ir::is_identifier(symbol) => Ok(symbol.clone()),
            Some(symbol) => Err(self.malformed(format!("extern symbol {symbol:?} is not a C identifier"))),
            None => Ok(addr.function_name()),
        }
    }

    /// Assigns a jump's arguments to the target's (live) parameters and jumps.
    /// The values a jump assigns to its target's live parameters.
    fn jump_moves(&self, target: usize, call: &BlockCall) -> Vec<(Value, Value)> {
        self.func.blocks[target]
            .params
            .iter()
            .zip(&call.args)
            .filter(|(p, a)| self.is_live(**p) && p != a)
            .map(|(p, a)| (*p, *a))
            .collect()
    }

    /// The target block of a jump that assigns nothing (a bare `goto`), if it is one.
    fn plain_jump(&self, call: &BlockCall) -> Result<Option<usize>, EmitError> {
        let target = self.block_exists(call.block)?;
        Ok(self.jump_moves(target, call).is_empty().then_some(target))
    }

    fn jump(&self, call: &BlockCall) -> Result<String, EmitError> {
        let target = self.block_exists(call.block)?;
        let moves = self.jump_moves(target, call);
        let goto = format!("goto block{target};");
        if moves.is_empty() {
            return Ok(goto);
        }
        let mut s = String::from("{ ");
        // Arguments that are themselves parameters being assigned must be read before any is overwritten.
        let parallel = moves.iter().any(|(_, a)| moves.iter().any(|(p, _)| p == a));
        if parallel {
            for (i, (p, a)) in moves.iter().enumerate() {
                let _ = write!(s, "{} t{i} = {a}; ", c_type(self.ty(*p)?));
            }
            for (i, (p, _)) in moves.iter().enumerate() {
                let _ = write!(s, "{p} = t{i}; ");
            }
        } else {
            for (p, a) in &moves {
                let _ = write!(s, "{p} = {a}; ");
            }
        }
        s.push_str(&goto);
        s.push_str(" }");
        Ok(s)
    }

    /// An indirect call in two versions: a target in the direct table gets the light union's
    /// locals written back and reloaded; any other, found in the table of every function or by
    /// the run-time's full lookup, all of them. Both continue at `cont` with every local valid,
    /// and dirty only where the light version left it dirty.
    fn two_version_indirect_call(
        &mut self,
        v: Value,
        target: &CallTarget,
        cont: &BlockCall,
    ) -> Result<String, EmitError> {
        self.int(v)?;
        self.uses_memory_base = true;
        let (handed, written) = self.call_hands_over(target, cont).unwrap_or_default();
        let dirty_before = self.dirty.clone();
        let light_spill = self.spill_locals(Some(&handed));
        let dirty_after = std::mem::replace(&mut self.dirty, dirty_before);
        let full_spill = self.spill_locals(None);
        self.dirty = dirty_after;
        let light_reload = self.reload_locals(Some(&written));
        let full_reload = self.reload_locals(None);
        let jump = self.jump(cont)?;
        let part = |s: &str| if s.is_empty() { String::new() } else { format!("{s} ") };
        Ok(format!(
            "{{ rpt_fn_m t = rpt_direct_m({v}); if (__builtin_expect(t != 0, 1)) {{ {}t(c, mb); {}}} else {{ {}rpt_resolve_m_fast(c, {v})(c, mb); {}}} }} {jump}",
            part(&light_spill),
            part(&light_reload),
            part(&full_spill),
            part(&full_reload),
        ))
    }

    fn terminator(&mut self, term: &Terminator) -> Result<(), EmitError> {
        if let Some(form) = self.tier
            && let Some(s) = self.tier_terminator(form, term)?
        {
            self.stmt(s);
            return Ok(());
        }
        // Everything but a jump within the function lets code outside it see the state: a call
        // what its callee may read or write, anything else all of it.
        if let Terminator::Call { target, cont } = term
            && let (Some(_), CallTarget::Indirect(v)) = (self.light_indirect_call(target), target)
        {
            let s = self.two_version_indirect_call(*v, target, cont)?;
            self.stmt(s);
            return Ok(());
        }
        let call_state = match term {
            Terminator::Call { target, cont } => self.call_hands_over(target, cont),
            _ => None,
        };
        if !matches!(
            term,
            Terminator::Jump(_) | Terminator::Branch { .. } | Terminator::Switch { .. }
        ) {
            // At a return, only what some caller reads afterwards (a scratch register the callers
            // never look at stays in its local).
            let at_return = match term {
                Terminator::Return => self.ctx.calls.after_return.as_ref(),
                _ => None,
            };
            let spill = self.spill_locals(at_return.or(call_state.as_ref().map(|(handed, _)| handed)));
            self.stmt_if_any(spill);
        }
        let s = match term {
            Terminator::Jump(dest) => self.jump(dest)?,
            Terminator::Branch {
                cond,
                then_dest,
                else_dest,
            } => {
                format!("if ({cond}) {} else {}", self.jump(then_dest)?, self.jump(else_dest)?)
            }
            Terminator::Switch { index, cases, default } => {
                self.int(*index)?;
                let distinct: BTreeSet<Block> = cases.iter().map(|case| case.block).collect();
                let plain_cases: Option<Vec<usize>> = if distinct.len() >= LABEL_TABLE_MIN_CASES {
                    cases
                        .iter()
                        .map(|case| self.plain_jump(case))
                        .collect::<Result<_, _>>()?
                } else {
                    None
                };
                match plain_cases {
                    Some(targets) => {
                        // A table of label addresses, so the dispatch is one bounds check and one
                        // indirect jump however sparse the cases: a PowerPC jump table switches on
                        // the target address, its cases spread over the function's code, and clang
                        // turned the C switch over them into a binary search (luaV_execute).
                        let n = targets.len();
                        let labels: Vec<String> = targets.iter().map(|t| format!("&&block{t}")).collect();
                        format!(
                            "{{ static void *const jt_{index}[{n}] = {{ {} }}; if ({index} < {n}u) goto *jt_{index}[{index}]; {} }}",
                            labels.join(", "),
                            self.jump(default)?
                        )
                    }
                    _ => {
                        let mut s = format!("switch ({index}) {{ ");
                        for (i, case) in cases.iter().enumerate() {
                            let _ = write!(s, "case {i}: {} ", self.jump(case)?);
                        }
                        let _ = write!(s, "default: {} }}", self.jump(default)?);
                        s
                    }
                }
            }
            Terminator::Call { target, cont } => {
                let call = match target {
                    CallTarget::Direct(addr) => format!("{};", self.direct_call(*addr)?),
                    // With MEMARG the callee's `_m` entry, found inline in the direct table: no
                    // call of the dispatcher, and no hop through the callee's plain entry.
                    CallTarget::Indirect(v) if self.ctx.memarg => {
                        self.uses_memory_base = true;
                        format!("rpt_resolve_m_fast(c, {v})(c, mb);")
                    }
                    CallTarget::Indirect(v) => format!("rpt_dispatch(c, {v});"),
                };
                let reload = self.reload_locals(call_state.as_ref().map(|(_, written)| written));
                if reload.is_empty() {
                    format!("{call} {}", self.jump(cont)?)
                } else {
                    format!("{call} {reload} {}", self.jump(cont)?)
                }
            }
            Terminator::Return => "return;".to_string(),
            // musttail makes a guest tail jump a host jump, so chains of them cannot grow the host stack.
            Terminator::TailCall {
                target: CallTarget::Direct(addr),
            } => {
                let call = self.direct_call(*addr)?;
                if self.ctx.memarg && self.ctx.externs.contains_key(addr) {
                    // An extern has the plain signature, so this cannot be a musttail; an extern
                    // returns, so no chain of these can grow the stack.
                    format!("{call}; return;")
                } else {
                    format!("__attribute__((musttail)) return {call};")
                }
            }
            Terminator::TailCall {
                target: CallTarget::Indirect(v),
            } if self.ctx.memarg => {
                format!("{{ rpt_fn_m t = rpt_resolve_m_fast(c, {v}); __attribute__((musttail)) return t(c, mb); }}")
            }
            Terminator::TailCall {
                target: CallTarget::Indirect(v),
            } => {
                format!("{{ rpt_fn t = rpt_resolve(c, {v}); __attribute__((musttail)) return t(c); }}")
            }
            Terminator::Exit { pc, reason } => {
                self.int(*pc)?;
                format!("rpt_exit(c, {pc}, {});", exit_reason(*reason))
            }
            Terminator::Unreachable => format!("rpt_unreachable(c, {:#x}ull);", self.func.entry.0),
        };
        self.stmt(s);
        Ok(())
    }
}

impl FnEmitter<'_> {
    /// How a form of the run-time tier ends where control leaves its instruction (`None`: as a
    /// function would, for jumps within it and for exits to the runtime). A form keeps the state
    /// in `struct cpu`, so nothing is written back first. A call of a lifted function or an
    /// extern is the call compiled code makes; a call of anything else runs in the tier
    /// (`rpt_tier_run`, which calls a compiled function when one is there). Any other way out
    /// hands the tier's loop the address to go on at: a return is `RPT_TIER_RETURN`, and the loop
    /// finds a tail jump's target in the function table (externs included) or runs it itself.
    fn tier_terminator(&mut self, form: &TierForm<'_>, term: &Terminator) -> Result<Option<String>, EmitError> {
        let s = match term {
            Terminator::Exit {
                pc,
                reason: ExitReason::Unlifted,
            } => {
                self.int(*pc)?;
                format!("return {pc};")
            }
            Terminator::Return => "return RPT_TIER_RETURN;".to_string(),
            Terminator::Call { target, cont } => {
                let call = self.tier_call(form, target)?;
                format!("{call} {}", self.jump(cont)?)
            }
            Terminator::TailCall {
                target: CallTarget::Direct(addr),
            } => format!("return {:#x}ull;", addr.0),
            Terminator::TailCall {
                target: CallTarget::Indirect(v),
            } => {
                self.int(*v)?;
                format!("return {v};")
            }
            Terminator::Unreachable => {
                let entry = match form.entry {
                    Some(k) => format!("p[{k}]"),
                    None => format!("{:#x}ull", self.func.entry.0),
                };
                format!("rpt_unreachable(c, {entry});")
            }
            _ => return Ok(None),
        };
        Ok(Some(s))
    }

    /// A call from a form: by name for a lifted function or an extern, else through the tier.
    fn tier_call(&mut self, form: &TierForm<'_>, target: &CallTarget) -> Result<String, EmitError> {
        match target {
            CallTarget::Direct(addr) if self.ctx.externs.contains_key(addr) => {
                Ok(format!("{}(c);", self.callee(*addr)?))
            }
            CallTarget::Direct(addr) if form.functions.contains(addr) => {
                self.callees.insert(*addr);
                if self.ctx.memarg {
                    Ok(format!("{}(c, mb);", memarg_name(*addr)))
                } else {
                    Ok(format!("{}(c);", addr.function_name()))
                }
            }
            CallTarget::Direct(addr) => Ok(format!("rpt_tier_run(c, mb, {:#x}ull);", addr.0)),
            CallTarget::Indirect(v) => {
                self.int(*v)?;
                Ok(format!("rpt_tier_run(c, mb, {v});"))
            }
        }
    }
}

/// The name of a function's MEMARG entry (`f_00401000_m`).
pub(crate) fn memarg_name(entry: GuestAddr) -> String {
    format!("{}_m", entry.function_name())
}

/// `x <op> n`, or just `x` when `n` is 0 (which keeps generated field access readable).
fn shifted(x: &str, op: &str, n: u8) -> String {
    if n == 0 {
        x.to_string()
    } else {
        format!("({x} {op} {n})")
    }
}

/// The mask of a `bits`-wide field, unshifted.
fn field_mask(bits: u8) -> u64 {
    if bits >= 64 { u64::MAX } else { (1u64 << bits) - 1 }
}

/// The runtime's name for an exit reason.
fn exit_reason(reason: ExitReason) -> &'static str {
    match reason {
        ExitReason::Unlifted => "RPT_EXIT_UNLIFTED",
        ExitReason::Syscall => "RPT_EXIT_SYSCALL",
        ExitReason::Halt => "RPT_EXIT_HALT",
        ExitReason::Yield => "RPT_EXIT_YIELD",
        ExitReason::DivideError => "RPT_EXIT_DIVIDE_ERROR",
        ExitReason::InvalidOpcode => "RPT_EXIT_INVALID_OPCODE",
        ExitReason::Unliftable => "RPT_EXIT_UNLIFTABLE",
    }
}

/// Whether block `b` ends in an indirect call that every way in reaches only when the target
/// was found unequal to a constant (the last check the inline pass puts before the call it keeps
/// for targets that are none of its candidates).
fn checked_fallback(func: &Function, b: usize, preds: &[Vec<usize>]) -> bool {
    let Some(Terminator::Call {
        target: CallTarget::Indirect(target),
        ..
    }) = func.blocks.get(b).map(|d| &d.term)
    else {
        return false;
    };
    let ways_in = preds.get(b).map(Vec::as_slice).unwrap_or_default();
    !ways_in.is_empty()
        && ways_in.iter().all(|&p| {
            let Some(pred) = func.blocks.get(p) else {
                return false;
            };
            let defines = |v: &rpt_ir::Value, test: &dyn Fn(&InstKind) -> bool| {
                pred.insts.iter().any(|i| i.result == Some(*v) && test(&i.kind))
            };
            match &pred.term {
                Terminator::Branch { cond, then_dest, else_dest } => {
                    else_dest.block.index() == b
                        && then_dest.block.index() != b
                        && defines(cond, &|k| {
                            matches!(k, InstKind::Icmp { cond: rpt_ir::IntCC::Eq, args } if args.contains(target))
                        })
                }
                // The checks as switch-recovery leaves them: a switch on the target less a constant,
                // whose holes go to the default too.
                Terminator::Switch { index, default, .. } => {
                    default.block.index() == b
                        && (index == target
                            || defines(index, &|k| {
                                matches!(k, InstKind::Binary { op: rpt_ir::BinaryOp::Sub | rpt_ir::BinaryOp::Add, args } if args.contains(target))
                            }))
                }
                _ => false,
            }
        })
}
