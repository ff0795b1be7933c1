//! The verifier: checks that a function is well-formed SSA with consistent types.
//!
//! Lifters and passes run it after every step in debug and test builds; its
//! messages name the function, block and instruction so a broken pass is found
//! from the message alone.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use crate::{
    Block, BlockCall, CallTarget, ConvOp, FConvOp, Function, GuestAddr, HelperDecl, InstKind, Program, SlotId,
    SlotLayout, StateDesc, Terminator, Type, UnaryOp, Value,
};

/// One problem found by the verifier.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VerifyError {
    /// The function it is in.
    pub function: GuestAddr,
    /// The block, if the problem is inside one.
    pub block: Option<Block>,
    /// The instruction's index in the block, or `None` for the block header or terminator.
    pub inst: Option<usize>,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for VerifyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.function.function_name())?;
        if let Some(b) = self.block {
            write!(f, " {b}")?;
            match self.inst {
                Some(i) => write!(f, " inst {i}")?,
                None => write!(f, " terminator/header")?,
            }
        }
        write!(f, ": {}", self.message)
    }
}

/// All problems found in one verification run.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct VerifyErrors(pub Vec<VerifyError>);

impl fmt::Display for VerifyErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{e}")?;
        }
        Ok(())
    }
}

/// What a function is checked against: the register file and, when known, the program around it.
#[derive(Clone, Copy)]
pub struct VerifyContext<'a> {
    /// The register file.
    pub state: &'a StateDesc,
    /// Declared helpers; `None` skips helper checks (a function verified on its own).
    pub helpers: Option<&'a BTreeMap<String, HelperDecl>>,
    /// Addresses that direct calls may name; `None` skips the check.
    pub callees: Option<&'a BTreeSet<GuestAddr>>,
}

/// Verifies every function of a program against its state, helpers, functions and externs.
pub fn verify_program(program: &Program) -> Result<(), VerifyErrors> {
    let callees: BTreeSet<GuestAddr> = program
        .functions
        .keys()
        .chain(program.externs.keys())
        .copied()
        .collect();
    let ctx = VerifyContext {
        state: &program.state,
        helpers: Some(&program.helpers),
        callees: Some(&callees),
    };
    let mut errors = Vec::new();
    for func in program.functions.values() {
        if let Err(VerifyErrors(mut e)) = verify_function(func, ctx) {
            errors.append(&mut e);
        }
    }
    for addr in &program.flag_transparent {
        if !program.externs.contains_key(addr) {
            errors.push(VerifyError {
                function: *addr,
                block: None,
                inst: None,
                message: "marked flag_transparent but not an extern".to_string(),
            });
        }
    }
    for addr in &program.address_taken {
        if !callees.contains(addr) {
            errors.push(VerifyError {
                function: *addr,
                block: None,
                inst: None,
                message: "marked address_taken but not defined".to_string(),
            });
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(VerifyErrors(errors))
    }
}

struct Checker<'a> {
    func: &'a Function,
    ctx: VerifyContext<'a>,
    errors: Vec<VerifyError>,
    block: Option<Block>,
    inst: Option<usize>,
}

impl Checker<'_> {
    fn error(&mut self, message: String) {
        self.errors.push(VerifyError {
            function: self.func.entry,
            block: self.block,
            inst: self.inst,
            message,
        });
    }

    fn ty(&mut self, v: Value) -> Option<Type> {
        let t = self.func.value_type(v);
        if t.is_none() {
            self.error(format!("{v} was never allocated"));
        }
        t
    }

    fn expect(&mut self, v: Value, what: &str, ok: impl Fn(Type) -> bool, wanted: &str) {
        if let Some(t) = self.ty(v)
            && !ok(t)
        {
            self.error(format!("{what} {v} is {t}, expected {wanted}"));
        }
    }

    fn same(&mut self, a: Value, b: Value) -> Option<Type> {
        let (ta, tb) = (self.ty(a)?, self.ty(b)?);
        if ta != tb {
            self.error(format!("operands {a}: {ta} and {b}: {tb} differ in type"));
            return None;
        }
        Some(ta)
    }

    fn result(&mut self, result: Option<Value>, expected: Option<Type>) {
        match (result, expected) {
            (Some(v), Some(t)) => {
                if let Some(rt) = self.ty(v)
                    && rt != t
                {
                    self.error(format!("result {v} is declared {rt} but the operation produces {t}"));
                }
            }
            (Some(v), None) => self.error(format!("this instruction produces no value, but defines {v}")),
            (None, Some(t)) => self.error(format!("this instruction produces a {t} but defines no value")),
            (None, None) => {}
        }
    }

    fn slot(&mut self, slot: SlotId, indexed: bool) -> Option<Type> {
        let Some(s) = self.ctx.state.get(slot) else {
            self.error(format!("{slot} is not in the register file"));
            return None;
        };
        let is_array = matches!(s.layout, SlotLayout::Array { .. });
        if is_array != indexed {
            let how = if is_array {
                "an array and needs an index"
            } else {
                "not an array and takes no index"
            };
            self.error(format!("slot %{} is {how}", s.name));
        }
        Some(s.ty)
    }

    fn block_call(&mut self, call: &BlockCall) {
        let Some(target) = self.func.blocks.get(call.block.index()) else {
            self.error(format!("jump to {} which does not exist", call.block));
            return;
        };
        if target.params.len() != call.args.len() {
            self.error(format!(
                "{} takes {} arguments but is given {}",
                call.block,
                target.params.len(),
                call.args.len()
            ));
            return;
        }
        for (arg, param) in call.args.iter().zip(&target.params) {
            if let (Some(ta), Some(tp)) = (self.ty(*arg), self.func.value_type(*param))
                && ta != tp
            {
                self.error(format!(
                    "argument {arg}: {ta} passed to {} parameter {param}: {tp}",
                    call.block
                ));
            }
        }
    }

    fn target(&mut self, target: &CallTarget) {
        match target {
            CallTarget::Direct(addr) => {
                if let Some(known) = self.ctx.callees
                    && !known.contains(addr)
                {
                    self.error(format!(
                        "call to {} which is neither a function nor an extern",
                        addr.function_name()
                    ));
                }
            }
            CallTarget::Indirect(v) => {
                self.expect(*v, "call target", |t| matches!(t, Type::I32 | Type::I64), "i32 or i64")
            }
        }
    }

    fn inst(&mut self, result: Option<Value>, kind: &InstKind) {
        let is_int = |t: Type| t.is_int();
        match kind {
            InstKind::Iconst { ty, imm } => {
                if !ty.is_int() {
                    self.error(format!("iconst of non-integer type {ty}"));
                } else if imm & !ty.mask() != 0 {
                    self.error(format!("iconst {imm:#x} does not fit in {ty}"));
                }
                self.result(result, Some(*ty));
            }
            InstKind::Fconst { ty, bits } => {
                if !ty.is_float() {
                    self.error(format!("fconst of non-float type {ty}"));
                } else if ty.bits() < 128 && bits >> ty.bits() != 0 {
                    self.error(format!("fconst {bits:#x} does not fit in {ty}"));
                }
                self.result(result, Some(*ty));
            }
            InstKind::Unary { op, arg } => {
                self.expect(*arg, "operand", is_int, "an integer");
                let t = self.func.value_type(*arg);
                if *op == UnaryOp::Bswap && matches!(t, Some(Type::I1 | Type::I8)) {
                    self.error("bswap needs at least 16 bits".to_string());
                }
                self.result(result, t);
            }
            InstKind::Binary { args, .. } => {
                let t = self.same(args[0], args[1]);
                if let Some(t) = t
                    && !t.is_int()
                {
                    self.error(format!("integer operation on {t}"));
                }
                self.result(result, t.or_else(|| self.func.value_type(args[0])));
            }
            InstKind::Icmp { args, .. } => {
                if let Some(t) = self.same(args[0], args[1])
                    && !t.is_int()
                {
                    self.error(format!("icmp on {t}"));
                }
                self.result(result, Some(Type::I1));
            }
            InstKind::Select {
                cond,
                if_true,
                if_false,
            } => {
                self.expect(*cond, "select condition", |t| t == Type::I1, "i1");
                let t = self.same(*if_true, *if_false);
                self.result(result, t.or_else(|| self.func.value_type(*if_true)));
            }
            InstKind::Convert { op, arg, to } => {
                if let Some(from) = self.ty(*arg) {
                    let ok = match op {
                        ConvOp::Zext | ConvOp::Sext => from.is_int() && to.is_int() && from.bits() < to.bits(),
                        ConvOp::Trunc => from.is_int() && to.is_int() && from.bits() > to.bits(),
                        ConvOp::Bitcast => {
                            from != *to && from.bits() == to.bits() && from != Type::I1 && from != Type::F80
                        }
                    };
                    if !ok {
                        self.error(format!("{} from {from} to {to} is not allowed", op.name()));
                    }
                }
                self.result(result, Some(*to));
            }
            InstKind::FBinary { args, .. } => {
                let t = self.same(args[0], args[1]);
                if let Some(t) = t
                    && !(t.is_float() || t == Type::V2F32)
                {
                    self.error(format!("float operation on {t}"));
                }
                self.result(result, t.or_else(|| self.func.value_type(args[0])));
            }
            InstKind::FTernary { args, .. } => {
                let t = self.same(args[0], args[1]);
                let u = self.same(args[0], args[2]);
                if let Some(t) = t.or(u)
                    && !t.is_float()
                {
                    self.error(format!("float operation on {t}"));
                }
                self.result(result, t.or_else(|| self.func.value_type(args[0])));
            }
            InstKind::FUnary { arg, .. } => {
                self.expect(*arg, "operand", |t| t.is_float() || t == Type::V2F32, "a float");
                let t = self.func.value_type(*arg);
                self.result(result, t);
            }
            InstKind::Fcmp { args, .. } => {
                if let Some(t) = self.same(args[0], args[1])
                    && !t.is_float()
                {
                    self.error(format!("fcmp on {t}"));
                }
                self.result(result, Some(Type::I1));
            }
            InstKind::FConvert { op, arg, to, .. } => {
                if let Some(from) = self.ty(*arg) {
                    let ok = match op {
                        FConvOp::Fconvert => from.is_float() && to.is_float() && from != *to,
                        FConvOp::SintToFloat | FConvOp::UintToFloat => {
                            from.is_int() && from != Type::I1 && to.is_float()
                        }
                        FConvOp::FloatToSint => from.is_float() && to.is_int() && *to != Type::I1,
                    };
                    if !ok {
                        self.error(format!("{} from {from} to {to} is not allowed", op.name()));
                    }
                }
                self.result(result, Some(*to));
            }
            InstKind::GetSlot { slot } => {
                let t = self.slot(*slot, false);
                self.result(result, t);
            }
            InstKind::SetSlot { slot, value } => {
                if let Some(t) = self.slot(*slot, false) {
                    self.expect(*value, "stored value", |vt| vt == t, t.name());
                }
                self.result(result, None);
            }
            InstKind::Kill { slot } => {
                self.slot(*slot, false);
                self.result(result, None);
            }
            InstKind::GetIndexed { slot, index } => {
                let t = self.slot(*slot, true);
                self.expect(*index, "index", |t| t == Type::I32, "i32");
                self.result(result, t);
            }
            InstKind::SetIndexed { slot, index, value } => {
                if let Some(t) = self.slot(*slot, true) {
                    self.expect(*value, "stored value", |vt| vt == t, t.name());
                }
                self.expect(*index, "index", |t| t == Type::I32, "i32");
                self.result(result, None);
            }
            InstKind::Load { ty, addr, .. } => {
                self.expect(*addr, "address", |t| matches!(t, Type::I32 | Type::I64), "i32 or i64");
                if *ty == Type::I1 {
                    self.error("load of i1: memory holds bytes".to_string());
                }
                self.result(result, Some(*ty));
            }
            InstKind::Store { addr, value, .. } => {
                self.expect(*addr, "address", |t| matches!(t, Type::I32 | Type::I64), "i32 or i64");
                self.expect(*value, "stored value", |t| t != Type::I1, "a byte-sized type");
                self.result(result, None);
            }
            InstKind::CallHelper { helper, args } => {
                let Some(helpers) = self.ctx.helpers else {
                    for a in args {
                        self.ty(*a);
                    }
                    return;
                };
                let Some(decl) = helpers.get(helper) else {
                    self.error(format!("call to undeclared helper @{helper}"));
                    return;
                };
                if decl.params.len() != args.len() {
                    self.error(format!(
                        "@{helper} takes {} arguments, given {}",
                        decl.params.len(),
                        args.len()
                    ));
                } else {
                    for (a, want) in args.iter().zip(&decl.params) {
                        self.expect(*a, "helper argument", |t| t == *want, want.name());
                    }
                }
                self.result(result, decl.result);
            }
            InstKind::Mark { .. } => self.result(result, None),
        }
    }

    fn terminator(&mut self, term: &Terminator) {
        match term {
            Terminator::Jump(dest) => self.block_call(dest),
            Terminator::Branch {
                cond,
                then_dest,
                else_dest,
            } => {
                self.expect(*cond, "branch condition", |t| t == Type::I1, "i1");
                self.block_call(then_dest);
                self.block_call(else_dest);
            }
            Terminator::Switch { index, cases, default } => {
                self.expect(*index, "switch index", |t| t.is_int() && t != Type::I1, "an integer");
                for case in cases {
                    self.block_call(case);
                }
                self.block_call(default);
            }
            Terminator::Call { target, cont } => {
                self.target(target);
                self.block_call(cont);
            }
            Terminator::TailCall { target } => self.target(target),
            Terminator::Exit { pc, .. } => self.expect(*pc, "exit pc", |t| t.is_int() && t != Type::I1, "an integer"),
            Terminator::Return | Terminator::Unreachable => {}
        }
    }
}

/// The blocks reachable from `block0`, in reverse postorder: every block after all of its
/// predecessors except those reaching it through a back edge.
pub fn reverse_postorder(func: &Function) -> Vec<Block> {
    let n = func.blocks.len();
    let mut order = Vec::new();
    let mut seen = vec![false; n];
    let mut stack: Vec<(usize, usize)> = Vec::new();
    if n > 0 {
        seen[0] = true;
        stack.push((0, 0));
    }
    while let Some((b, i)) = stack.pop() {
        let succs = func.blocks[b].term.successors();
        if let Some(s) = succs.get(i) {
            stack.push((b, i + 1));
            let s = s.block.index();
            if s < n && !seen[s] {
                seen[s] = true;
                stack.push((s, 0));
            }
        } else {
            order.push(b);
        }
    }
    order.reverse();
    order.into_iter().map(|b| Block(b as u32)).collect()
}

/// Immediate dominators of the blocks reachable from `block0` (`None` for unreachable blocks).
pub fn dominators(func: &Function) -> Vec<Option<Block>> {
    let n = func.blocks.len();
    let order: Vec<usize> = reverse_postorder(func).into_iter().map(|b| b.index()).collect();
    let mut rpo_index = vec![usize::MAX; n];
    for (i, b) in order.iter().enumerate() {
        rpo_index[*b] = i;
    }
    let mut preds = vec![Vec::new(); n];
    for &b in &order {
        for s in func.blocks[b].term.successors() {
            if s.block.index() < n {
                preds[s.block.index()].push(b);
            }
        }
    }
    let mut idom: Vec<Option<usize>> = vec![None; n];
    if n > 0 {
        idom[0] = Some(0);
    }
    let mut changed = true;
    while changed {
        changed = false;
        for &b in order.iter().skip(1) {
            let mut new_idom: Option<usize> = None;
            for &p in &preds[b] {
                if idom[p].is_none() {
                    continue;
                }
                new_idom = Some(match new_idom {
                    None => p,
                    Some(cur) => {
                        let (mut x, mut y) = (p, cur);
                        while x != y {
                            while rpo_index[x] > rpo_index[y] {
                                x = idom[x].unwrap_or(0);
                            }
                            while rpo_index[y] > rpo_index[x] {
                                y = idom[y].unwrap_or(0);
                            }
                        }
                        x
                    }
                });
            }
            if new_idom != idom[b] {
                idom[b] = new_idom;
                changed = true;
            }
        }
    }
    idom.into_iter().map(|d| d.map(|d| Block(d as u32))).collect()
}

/// A natural loop: its header and every block that reaches a back edge into it without passing it.
pub struct NaturalLoop {
    /// The block every back edge of the loop goes to.
    pub header: Block,
    /// The header and every block of the loop.
    pub blocks: BTreeSet<Block>,
}

/// The natural loops of `func` (back edges into one header make one loop), largest first, so an
/// outer loop comes before its inner ones.
pub fn natural_loops(func: &Function) -> Vec<NaturalLoop> {
    let idom = dominators(func);
    let dominates = |a: Block, mut b: Block| loop {
        if a == b {
            return true;
        }
        match idom.get(b.index()).copied().flatten() {
            Some(up) if up != b => b = up,
            _ => return false,
        }
    };
    let mut preds: Vec<Vec<Block>> = vec![Vec::new(); func.blocks.len()];
    for (b, data) in func.iter_blocks() {
        if idom.get(b.index()).copied().flatten().is_none() {
            continue;
        }
        for s in data.term.successors() {
            if let Some(p) = preds.get_mut(s.block.index()) {
                p.push(b);
            }
        }
    }
    let mut bodies: BTreeMap<Block, BTreeSet<Block>> = BTreeMap::new();
    for (b, data) in func.iter_blocks() {
        if idom.get(b.index()).copied().flatten().is_none() {
            continue;
        }
        for s in data.term.successors() {
            let header = s.block;
            if !dominates(header, b) {
                continue;
            }
            let body = bodies.entry(header).or_insert_with(|| BTreeSet::from([header]));
            let mut work = vec![b];
            while let Some(x) = work.pop() {
                if body.insert(x) {
                    work.extend(preds.get(x.index()).into_iter().flatten().copied());
                }
            }
        }
    }
    let mut loops: Vec<NaturalLoop> = bodies
        .into_iter()
        .map(|(header, blocks)| NaturalLoop { header, blocks })
        .collect();
    loops.sort_by_key(|l| (std::cmp::Reverse(l.blocks.len()), l.header));
    loops
}

/// Verifies one function.
pub fn verify_function(func: &Function, ctx: VerifyContext<'_>) -> Result<(), VerifyErrors> {
    let mut c = Checker {
        func,
        ctx,
        errors: Vec::new(),
        block: None,
        inst: None,
    };
    if func.blocks.is_empty() {
        c.error("the function has no blocks".to_string());
        return Err(VerifyErrors(c.errors));
    }
    if !func.blocks[0].params.is_empty() {
        c.block = Some(Block(0));
        c.error("block0 (the entry) must take no parameters".to_string());
    }
    // Where each value is defined: (block, position), position usize::MAX-1 for parameters.
    let mut def_site: Vec<Option<(usize, usize)>> = vec![None; func.value_types.len()];
    for (bi, block) in func.blocks.iter().enumerate() {
        c.block = Some(Block(bi as u32));
        let mut define = |c: &mut Checker<'_>, v: Value, pos: usize| match def_site.get_mut(v.index()) {
            None => c.error(format!("{v} was never allocated")),
            Some(Some(_)) => c.error(format!("{v} is defined more than once")),
            Some(slot @ None) => *slot = Some((bi, pos)),
        };
        c.inst = None;
        for &p in &block.params {
            define(&mut c, p, 0);
        }
        for (ii, inst) in block.insts.iter().enumerate() {
            c.inst = Some(ii);
            if let Some(v) = inst.result {
                define(&mut c, v, ii + 1);
            }
        }
    }
    let idom = dominators(func);
    let dominates = |a: usize, mut b: usize| loop {
        if a == b {
            return true;
        }
        match idom[b] {
            Some(d) if d.index() != b => b = d.index(),
            _ => return false,
        }
    };
    let check_use = |c: &mut Checker<'_>, v: Value, bi: usize, pos: usize| {
        if idom[bi].is_none() {
            return; // Unreachable blocks are not checked for dominance.
        }
        match def_site.get(v.index()).copied().flatten() {
            None => c.error(format!("{v} is used but never defined")),
            Some((db, dp)) => {
                let ok = if db == bi { dp < pos } else { dominates(db, bi) };
                if !ok {
                    c.error(format!("{v} is used where its definition does not dominate"));
                }
            }
        }
    };
    for (bi, block) in func.blocks.iter().enumerate() {
        c.block = Some(Block(bi as u32));
        for (ii, inst) in block.insts.iter().enumerate() {
            c.inst = Some(ii);
            for v in inst.kind.operands() {
                check_use(&mut c, v, bi, ii + 1);
            }
            c.inst(inst.result, &inst.kind);
        }
        c.inst = None;
        for v in block.term.operands() {
            check_use(&mut c, v, bi, usize::MAX);
        }
        c.terminator(&block.term);
    }
    if c.errors.is_empty() {
        Ok(())
    } else {
        Err(VerifyErrors(c.errors))
    }
}
