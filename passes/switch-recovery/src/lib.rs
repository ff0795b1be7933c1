//! passes/switch-recovery: compare trees back into switches.
//!
//! A compiler without a jump table for a `switch` (gcc for PowerPC with few or sparse cases, gcc
//! for i386 with few) compiles it as a binary search: compare the value with a middle case, branch
//! to the case or to one of two subtrees, and so on, four or five compares per dispatch for two
//! dozen cases. Lifted as it is, that is what the host runs too, while the same program built
//! natively for i386 may jump through a table. This pass finds such a tree and replaces it with one
//! `switch` on the value, which the C backend emits as a bounds check and a table jump.
//!
//! A tree is rooted at a block ending in a two-way branch. Its inner nodes are blocks with no side
//! effects (no slot writes, stores, helper calls; `mark`s aside), no parameters and a two-way
//! branch without block arguments; its leaves are the first blocks off that path. The branch
//! conditions are evaluated rather than matched: every condition may depend on one integer, the
//! *key* (a slot's value at the end of the root, or an SSA value available there), only through
//! comparisons with constants, and on up to four `i1` values (PowerPC's summary-overflow bit rides
//! along in every CR field). A comparison with constant `c` can change its answer only between
//! `c - 1` and `c`, between `c` and `c + 1`, or where the signed order wraps, so the tree reaches
//! one leaf on each interval between those points: the pass walks the tree with the key at every
//! such point and every combination of the `i1` values, and gives up if the `i1` values ever
//! matter. The leaf of the largest interval becomes the default; the rest, at most
//! [`MAX_CASES`] values, become the cases, indexed by `key - lo`.
//!
//! The inner nodes stay in the function (other blocks may still branch into them); those only the
//! root reached become unreachable, and the backend writes no code for them.

#![deny(missing_docs)]

use std::collections::{BTreeMap, BTreeSet};

use rpt_api::{FunctionContext, PassError};
use rpt_ir::interp::eval_pure_int;
use rpt_ir::{
    BinaryOp, Block, BlockCall, Function, Inst, InstKind, SlotId, SlotLayout, StateDesc, Terminator, Type, Value,
};

/// The pass's name in recipes and manifests.
pub const NAME: &str = "switch-recovery";

/// The most cases a recovered switch may have (its table's entries).
pub const MAX_CASES: u64 = 1024;

/// The fewest two-way branches a tree must have to be worth a table: below it the compares cost
/// no more than the bounds check and the indirect jump.
const MIN_BRANCHES: usize = 3;

/// The most inner nodes a tree may have, and the most `i1` inputs its conditions may read.
const MAX_NODES: usize = 256;
const MAX_BOOLS: usize = 4;

/// This pass as rpt registers it (`framework/cli/Cargo.toml` lists the built-in ones).
pub fn plugin() -> rpt_api::Plugin {
    rpt_api::Plugin::Pass(std::sync::Arc::new(rpt_api::FunctionPass {
        info: || rpt_api::plugin_info!(NAME),
        run: run_pass,
    }))
}

fn run_pass(func: &mut Function, cx: &FunctionContext<'_>) -> Result<(), PassError> {
    recover_switches(func, cx.state);
    Ok(())
}

/// Replaces every compare tree of `func` with a switch; returns how many it replaced.
pub fn recover_switches(func: &mut Function, state: &StateDesc) -> usize {
    let mut made = 0;
    let mut facts = Facts::of(func);
    for root in 0..func.blocks.len() {
        let found = Tree::find(func, state, &facts, root).and_then(|tree| tree.recover());
        if let Some(switch) = found {
            switch.apply(func, root);
            made += 1;
            facts = Facts::of(func);
        }
    }
    made
}

/// What the trees of one function are looked for with: where each value is defined, and each
/// block's immediate dominator.
struct Facts {
    defs: Vec<Option<Site>>,
    idom: Vec<Option<Block>>,
}

impl Facts {
    fn of(func: &Function) -> Facts {
        let mut defs = vec![None; func.value_types.len()];
        for (block, data) in func.blocks.iter().enumerate() {
            for (index, inst) in data.insts.iter().enumerate() {
                if let Some(v) = inst.result
                    && let Some(slot) = defs.get_mut(v.index())
                {
                    *slot = Some(Site { block, index });
                }
            }
        }
        Facts {
            defs,
            idom: rpt_ir::verify::dominators(func),
        }
    }
}

/// Where an instruction of the function is.
#[derive(Clone, Copy)]
struct Site {
    block: usize,
    index: usize,
}

/// An input used as an operand of the instruction at a site.
type InputUse = (Site, Value);

/// A value the conditions depend on and the pass does not compute.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Input {
    /// A slot's value at the end of the root.
    Slot(SlotId),
    /// An SSA value defined in the root or a block dominating it.
    Value(Value),
}

/// A compare tree found at a root: its inner nodes, inputs and the constants the key meets.
struct Tree<'f> {
    func: &'f Function,
    state: &'f StateDesc,
    facts: &'f Facts,
    root: usize,
    nodes: BTreeSet<usize>,
    key: (Input, Type),
    bools: Vec<Input>,
    constants: BTreeSet<u64>,
}

/// The switch a tree becomes.
struct Switch {
    key: (Input, Type),
    lo: u64,
    cases: Vec<Block>,
    default: Block,
}

impl<'f> Tree<'f> {
    /// The tree rooted at `root`'s branch, if its conditions have the shape the pass evaluates.
    fn find(func: &'f Function, state: &'f StateDesc, facts: &'f Facts, root: usize) -> Option<Tree<'f>> {
        two_way(&func.blocks.get(root)?.term)?;
        let mut tree = Tree {
            func,
            state,
            facts,
            root,
            nodes: BTreeSet::new(),
            key: (Input::Value(Value(0)), Type::I1),
            bools: Vec::new(),
            constants: BTreeSet::new(),
        };
        // The key: the one integer the root's condition reads.
        let (root_inputs, _) = tree.cond_inputs(root)?;
        let mut keys = root_inputs.iter().filter(|(_, ty)| **ty != Type::I1);
        let (&key, &key_ty) = keys.next()?;
        if keys.next().is_some() || !key_ty.is_int() || key_ty.bits() > 64 {
            return None;
        }
        // The inner nodes: pure two-way blocks reachable from the root through inner nodes whose
        // conditions read the key and `i1` values only. Any other block is a leaf.
        let mut work = vec![root];
        while let Some(b) = work.pop() {
            let (_, then_to, else_to) = two_way(&func.blocks[b].term)?;
            for next in [then_to, else_to] {
                if next == root || tree.nodes.contains(&next) || !tree.is_node(next) {
                    continue;
                }
                tree.nodes.insert(next);
                let reads_key_only = tree
                    .cond_inputs(next)
                    .is_some_and(|(inputs, _)| inputs.iter().all(|(i, ty)| *i == key || *ty == Type::I1));
                if reads_key_only && tree.nodes.len() <= MAX_NODES {
                    work.push(next);
                } else {
                    tree.nodes.remove(&next);
                }
            }
        }
        if tree.nodes.len() + 1 < MIN_BRANCHES || tree.node_values_escape() {
            return None;
        }
        // The inputs of every condition, and how the key is used.
        let mut inputs = BTreeMap::<Input, Type>::new();
        let mut key_uses = Vec::new();
        for b in std::iter::once(root).chain(tree.nodes.iter().copied()) {
            let (more, uses) = tree.cond_inputs(b)?;
            inputs.extend(more);
            key_uses.extend(uses);
        }
        if inputs.iter().any(|(i, ty)| *i != key && *ty != Type::I1) {
            return None;
        }
        tree.bools = inputs.keys().copied().filter(|i| *i != key).collect();
        if tree.bools.len() > MAX_BOOLS {
            return None;
        }
        tree.key = (key, key_ty);
        // The key may only be compared with constants.
        for (user, operand) in key_uses {
            if tree.input_of(operand) != Some(key) {
                continue;
            }
            let InstKind::Icmp { args, .. } = tree.inst(user)?.kind else {
                return None;
            };
            let other = if args[0] == operand { args[1] } else { args[0] };
            match tree.inst(tree.def(other)?)?.kind {
                InstKind::Iconst { imm, .. } => tree.constants.insert(imm & key_ty.mask()),
                _ => return None,
            };
        }
        Some(tree)
    }

    /// The inputs block `b`'s branch condition reads, and each use of an input by an
    /// instruction it computes.
    fn cond_inputs(&self, b: usize) -> Option<(BTreeMap<Input, Type>, Vec<InputUse>)> {
        let (cond, ..) = two_way(&self.func.blocks[b].term)?;
        let mut inputs = BTreeMap::new();
        let mut uses = Vec::new();
        self.collect(cond, &mut inputs, &mut uses, &mut BTreeSet::new())?;
        Some((inputs, uses))
    }

    /// Whether a block other than an inner node uses a value an inner node defines: the leaves,
    /// reached from the root directly, would no longer see its definition.
    fn node_values_escape(&self) -> bool {
        let defined: BTreeSet<Value> = self
            .nodes
            .iter()
            .flat_map(|&b| &self.func.blocks[b].insts)
            .filter_map(|i| i.result)
            .collect();
        self.func.blocks.iter().enumerate().any(|(b, data)| {
            !self.nodes.contains(&b)
                && (data
                    .insts
                    .iter()
                    .any(|i| i.kind.operands().iter().any(|v| defined.contains(v)))
                    || data.term.operands().iter().any(|v| defined.contains(v)))
        })
    }

    fn inst(&self, site: Site) -> Option<&'f Inst> {
        self.func.blocks.get(site.block)?.insts.get(site.index)
    }

    fn def(&self, v: Value) -> Option<Site> {
        self.facts.defs.get(v.index()).copied().flatten()
    }

    /// Whether `b` can be an inner node: no parameters, nothing but pure instructions and marks,
    /// and a two-way branch whose targets take no arguments.
    fn is_node(&self, b: usize) -> bool {
        let data = &self.func.blocks[b];
        data.params.is_empty()
            && two_way(&data.term).is_some()
            && data
                .insts
                .iter()
                .all(|i| matches!(i.kind, InstKind::Mark { .. }) || !i.kind.has_side_effects())
    }

    /// The input `v` is, if it is one rather than something the pass computes.
    fn input_of(&self, v: Value) -> Option<Input> {
        let Some(site) = self.def(v) else {
            return Some(Input::Value(v)); // a block parameter
        };
        let inst = self.inst(site)?;
        if let InstKind::GetSlot { slot } = inst.kind {
            // A read in an inner node, or in the root after its last write of the slot, is the
            // slot's value at the end of the root (nodes write no slot).
            let word = |s: SlotId| match self.state.get(s).map(|d| &d.layout) {
                Some(SlotLayout::Packed { parent, .. }) => *parent,
                _ => s,
            };
            // A helper call may write any slot (the pass does not read its declaration).
            let later_write = self.func.blocks[site.block].insts[site.index + 1..].iter().any(|i| {
                matches!(i.kind, InstKind::SetSlot { slot: s, .. } | InstKind::Kill { slot: s }
                    | InstKind::SetIndexed { slot: s, .. } if word(s) == word(slot))
                    || matches!(i.kind, InstKind::CallHelper { .. })
            });
            if self.nodes.contains(&site.block) || (site.block == self.root && !later_write) {
                return Some(Input::Slot(slot));
            }
            return Some(Input::Value(v));
        }
        if self.nodes.contains(&site.block) || evaluable(&inst.kind) {
            return None;
        }
        Some(Input::Value(v))
    }

    /// Collects the inputs `v` depends on (with their types) and the uses of inputs, checking
    /// that every value it depends on can be computed at the end of the root.
    fn collect(
        &self,
        v: Value,
        inputs: &mut BTreeMap<Input, Type>,
        key_uses: &mut Vec<InputUse>,
        visited: &mut BTreeSet<Value>,
    ) -> Option<()> {
        if !visited.insert(v) {
            return Some(());
        }
        let ty = self.func.value_type(v)?;
        if let Some(input) = self.input_of(v) {
            if let Input::Value(value) = input
                && !self.available_at_root(value)
            {
                return None;
            }
            inputs.insert(input, ty);
            return Some(());
        }
        let site = self.def(v)?;
        let kind = &self.inst(site)?.kind;
        if !evaluable(kind) {
            return None;
        }
        for operand in kind.operands() {
            if self.input_of(operand).is_some() {
                key_uses.push((site, operand));
            }
            self.collect(operand, inputs, key_uses, visited)?;
        }
        Some(())
    }

    /// Whether `v` is defined in the root or in a block dominating it (or is a parameter of one).
    fn available_at_root(&self, v: Value) -> bool {
        let block = match self.def(v) {
            Some(site) => Some(site.block),
            None => self.func.blocks.iter().position(|b| b.params.contains(&v)),
        };
        let Some(block) = block else { return false };
        if self.nodes.contains(&block) {
            return false;
        }
        let idom = &self.facts.idom;
        let mut at = Some(Block(self.root as u32));
        while let Some(b) = at {
            if b.index() == block {
                return true;
            }
            at = idom.get(b.index()).copied().flatten().filter(|&d| d != b);
        }
        false
    }

    /// The leaf the tree reaches with `values` for its inputs; `None` if it loops.
    fn walk(&self, values: &BTreeMap<Input, u64>) -> Option<usize> {
        let mut memo = BTreeMap::new();
        let mut at = self.root;
        for _ in 0..=self.nodes.len() {
            let (cond, then_to, else_to) = two_way(&self.func.blocks[at].term)?;
            let next = if self.eval(cond, values, &mut memo)? & 1 == 1 {
                then_to
            } else {
                else_to
            };
            if !self.nodes.contains(&next) {
                return Some(next);
            }
            at = next;
        }
        None
    }

    fn eval(&self, v: Value, values: &BTreeMap<Input, u64>, memo: &mut BTreeMap<Value, u64>) -> Option<u64> {
        if let Some(&known) = memo.get(&v) {
            return Some(known);
        }
        let result = match self.input_of(v) {
            Some(input) => *values.get(&input)?,
            None => {
                let kind = &self.inst(self.def(v)?)?.kind;
                let mut operands = BTreeMap::new();
                for operand in kind.operands() {
                    let value = self.eval(operand, values, memo)?;
                    operands.insert(operand, (value, self.func.value_type(operand)?));
                }
                eval_pure_int(kind, &|o| operands.get(&o).copied())?
            }
        };
        memo.insert(v, result);
        Some(result)
    }

    /// The switch this tree is, if the `i1` inputs never change the leaf and the cases fit.
    fn recover(&self) -> Option<Switch> {
        let (key, ty) = self.key;
        let mask = ty.mask();
        // Every point where some comparison may change its answer starts an interval.
        let mut starts: BTreeSet<u64> = BTreeSet::from([0, (mask >> 1) + 1]);
        for &c in &self.constants {
            starts.insert(c);
            starts.insert(c.wrapping_add(1) & mask);
        }
        let starts: Vec<u64> = starts.into_iter().collect();
        let mut intervals: Vec<(u64, u64, usize)> = Vec::new();
        for (i, &start) in starts.iter().enumerate() {
            let end = starts.get(i + 1).map_or(mask, |next| next - 1);
            let mut leaf = None;
            for combination in 0..1u64 << self.bools.len() {
                let mut values = BTreeMap::from([(key, start)]);
                for (bit, &input) in self.bools.iter().enumerate() {
                    values.insert(input, (combination >> bit) & 1);
                }
                let reached = self.walk(&values)?;
                if leaf.is_some_and(|l| l != reached) {
                    return None;
                }
                leaf = Some(reached);
            }
            let leaf = leaf?;
            match intervals.last_mut() {
                Some(last) if last.2 == leaf => last.1 = end,
                _ => intervals.push((start, end, leaf)),
            }
        }
        // The first and the last interval meet across the wrap.
        if intervals.len() > 1
            && let (Some(first), Some(last)) = (intervals.first().copied(), intervals.last().copied())
            && first.2 == last.2
        {
            intervals.pop();
            intervals[0].0 = last.0;
        }
        if intervals.len() < 2 {
            return None;
        }
        let size = |&(start, end, _): &(u64, u64, usize)| end.wrapping_sub(start) & mask;
        // The widest interval (the first of equals) is the default.
        let &(start, end, default) = intervals
            .iter()
            .enumerate()
            .max_by_key(|(i, iv)| (size(iv), std::cmp::Reverse(*i)))
            .map(|(_, iv)| iv)?;
        let lo = end.wrapping_add(1) & mask;
        let count = start.wrapping_sub(lo) & mask;
        if count == 0 || count > MAX_CASES {
            return None;
        }
        let leaf_at = |x: u64| {
            intervals
                .iter()
                .find(|iv| (x.wrapping_sub(iv.0) & mask) <= size(iv))
                .map(|iv| iv.2)
        };
        let cases = (0..count)
            .map(|i| leaf_at(lo.wrapping_add(i) & mask).map(|b| Block(b as u32)))
            .collect::<Option<Vec<_>>>()?;
        Some(Switch {
            key: self.key,
            lo,
            cases,
            default: Block(default as u32),
        })
    }
}

impl Switch {
    /// Ends `root` with the switch: `index = key - lo`, then a switch over the cases.
    fn apply(self, func: &mut Function, root: usize) {
        let (key, ty) = self.key;
        let push = |func: &mut Function, kind: InstKind| {
            let v = func.new_value(ty);
            func.blocks[root].insts.push(Inst { result: Some(v), kind });
            v
        };
        let key_value = match key {
            Input::Value(v) => v,
            Input::Slot(slot) => push(func, InstKind::GetSlot { slot }),
        };
        let index = if self.lo == 0 {
            key_value
        } else {
            let lo = push(func, InstKind::Iconst { ty, imm: self.lo });
            push(
                func,
                InstKind::Binary {
                    op: BinaryOp::Sub,
                    args: [key_value, lo],
                },
            )
        };
        func.blocks[root].term = Terminator::Switch {
            index,
            cases: self.cases.into_iter().map(BlockCall::plain).collect(),
            default: BlockCall::plain(self.default),
        };
    }
}

/// A branch's condition and targets, when it is a two-way branch whose targets take no arguments.
fn two_way(term: &Terminator) -> Option<(Value, usize, usize)> {
    match term {
        Terminator::Branch {
            cond,
            then_dest,
            else_dest,
        } if then_dest.args.is_empty() && else_dest.args.is_empty() => {
            Some((*cond, then_dest.block.index(), else_dest.block.index()))
        }
        _ => None,
    }
}

/// Whether the pass computes what `kind` defines (from its operands).
fn evaluable(kind: &InstKind) -> bool {
    match kind {
        InstKind::Iconst { .. }
        | InstKind::Unary { .. }
        | InstKind::Binary { .. }
        | InstKind::Icmp { .. }
        | InstKind::Select { .. } => true,
        InstKind::Convert { to, op, .. } => to.is_int() && *op != rpt_ir::ConvOp::Bitcast,
        _ => false,
    }
}
