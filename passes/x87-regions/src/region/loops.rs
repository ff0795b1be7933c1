//! Loops as regions: the x87 stack of a whole loop kept in values, tested once when the loop is
//! entered and written back when it is left.
//!
//! A block region pays its guard, its register loads and its write-back on every pass through the
//! block, which in a loop is every iteration (a Newton iteration of physics-x86 spent four times
//! its arithmetic on them). When every instruction of a natural loop is one the block regions
//! keep (x87 instructions they recognise, or instructions that do not touch the unit), no call
//! leaves it, and the stack has the same depth and the same known tags every time control reaches
//! a block (gcc's and MSVC's x87 code keep the depth fixed per program point), the whole loop is
//! one region:
//!
//! ```text
//! before:  P -> H (loop H..L, L -> H)          X <- (exits of the loop)
//! after:   P -> G(H's params): guard -> E or H (the loop as it was, later split into block regions)
//!          E: load the registers the loop touches -> H'(params, registers)
//!          H'..L' (the loop on values; L' -> H'(params, registers))
//!          exit edges of H'..L' -> W: write back, tags, TOP -> X
//! ```
//!
//! The registers travel between the copied blocks as block parameters (significand and
//! sign-and-exponent per register), so clang keeps them in host registers across iterations.
//! Every register the loop writes on some path is loaded on entry and written back at every
//! exit: where a path did not write it, the value written back is the one loaded, so the state
//! comes out as the stack forms leave it. The guard is the block regions' guard for the loop as a
//! whole (registers read before written full, registers pushed into empty); when it fails, the
//! loop runs as it was lifted, block regions and all. Values the loop defines may not be used
//! after it (the copies would need joining); such a loop, a loop whose header is the entry block,
//! and a loop whose depth or tags differ between paths stay with block regions.

use std::collections::{BTreeMap, BTreeSet};

use rpt_ir::verify::{NaturalLoop as Loop, natural_loops, reverse_postorder};
use rpt_ir::{Block, BlockCall, Function, FunctionBuilder, StateDesc, Terminator, Type, Value};

use super::{Fast, Held, Known, Shape, constants, ends_region, guard};
use crate::abi::{Op, Unit};

/// Rewrites every loop that can be one region, outermost first; returns how many there were.
pub fn run(func: &mut Function, state: &StateDesc, unit: &Unit, quiet: bool) -> usize {
    let mut count = 0;
    // Blocks of rewritten loops (both copies): their inner loops are already regions, or belong
    // to the fallback.
    let mut done: BTreeSet<Block> = BTreeSet::new();
    loop {
        let table = constants(func);
        let constant = |v: Value| table.get(&v).copied();
        let mut found = None;
        for body in natural_loops(func) {
            if !body.blocks.is_disjoint(&done) {
                continue;
            }
            if let Some(plan) = plan(func, unit, &body, &constant) {
                found = Some(plan);
                break;
            }
        }
        let Some(plan) = found else {
            break;
        };
        let first_new = func.blocks.len();
        rewrite(func, state, unit, &plan, &constant, quiet);
        done.extend(plan.order.iter().copied());
        done.extend((first_new..func.blocks.len()).map(|b| Block(b as u32)));
        count += 1;
    }
    count
}

/// A loop that can be one region.
struct Plan {
    header: Block,
    /// Its blocks, dominators first (the header first).
    order: Vec<Block>,
    /// The stack at each block's start.
    entry: BTreeMap<Block, Shape>,
    need_full: u8,
    need_empty: u8,
    /// Registers some path writes: loaded on entry and written back at every exit.
    written: u8,
    /// Whether a register move (which clears C1 in the IR) is among its instructions.
    moves: bool,
}

/// Whether `body` can be one region, and what its stack looks like where.
fn plan(func: &Function, unit: &Unit, body: &Loop, constant: &dyn Fn(Value) -> Option<u64>) -> Option<Plan> {
    if body.header == Block(0) {
        return None;
    }
    let order: Vec<Block> = reverse_postorder(func)
        .into_iter()
        .filter(|b| body.blocks.contains(b))
        .collect();
    let mut ops = 0;
    let mut moves = false;
    let mut defined: BTreeSet<Value> = BTreeSet::new();
    for &b in &order {
        let data = func.block(b);
        defined.extend(data.params.iter().copied());
        if matches!(data.term, Terminator::Call { .. } | Terminator::TailCall { .. }) {
            return None;
        }
        for inst in &data.insts {
            defined.extend(inst.result);
            match Op::recognize(inst, constant) {
                Some(op) => {
                    ops += 1;
                    moves |= op.is_move();
                }
                None if ends_region(inst, unit) => return None,
                None => {}
            }
        }
    }
    if ops == 0 {
        return None;
    }
    // Nothing after the loop may use what the loop computes.
    for (b, data) in func.iter_blocks() {
        if body.blocks.contains(&b) {
            continue;
        }
        let used = data
            .insts
            .iter()
            .flat_map(|i| i.kind.operands())
            .chain(data.term.operands());
        if used.into_iter().any(|v| defined.contains(&v)) {
            return None;
        }
    }
    // What the guard must test grows as paths disagree about a register the loop found as it
    // was; each round starts over with the larger test (at most one round per register and kind).
    let (mut full, mut empty) = (0u8, 0u8);
    for _ in 0..=16 {
        match shapes(func, body, &order, constant, full, empty)? {
            Shapes::Grow { full: f, empty: e } => {
                if f & e != 0 {
                    return None;
                }
                (full, empty) = (f, e);
            }
            Shapes::Stable { entry, written } => {
                return Some(Plan {
                    header: body.header,
                    order,
                    entry,
                    need_full: full,
                    need_empty: empty,
                    written,
                    moves,
                });
            }
        }
    }
    None
}

/// One round of the stack simulation over a loop.
enum Shapes {
    /// The guard must test more registers.
    Grow { full: u8, empty: u8 },
    /// Every block's stack is known and agrees on every path.
    Stable { entry: BTreeMap<Block, Shape>, written: u8 },
}

/// Simulates the stack over the loop from a guard testing `full` and `empty`; `None` if an
/// instruction faults on it or two paths disagree on the depth or on a register.
fn shapes(
    func: &Function,
    body: &Loop,
    order: &[Block],
    constant: &dyn Fn(Value) -> Option<u64>,
    full: u8,
    empty: u8,
) -> Option<Shapes> {
    let start = Shape::start(full, empty);
    let mut entry: BTreeMap<Block, Shape> = BTreeMap::from([(body.header, start.clone())]);
    let (mut need_full, mut need_empty, mut written) = (full, empty, 0u8);
    for &b in order {
        // A block no path inside the loop reaches first (only through a back edge of an inner
        // loop, which the order puts after it) does not occur: the order is the function's.
        let mut shape = entry.get(&b)?.clone();
        for inst in &func.block(b).insts {
            if let Some(op) = Op::recognize(inst, constant)
                && !shape.apply(&op)
            {
                return None;
            }
        }
        need_full |= shape.need_full;
        need_empty |= shape.need_empty;
        written |= shape.written;
        for s in func.block(b).term.successors() {
            if !body.blocks.contains(&s.block) {
                continue;
            }
            let Some(seen) = entry.get(&s.block) else {
                let mut next = shape.clone();
                next.need_full = 0;
                next.need_empty = 0;
                next.written = 0;
                entry.insert(s.block, next);
                continue;
            };
            if seen.offset != shape.offset {
                return None;
            }
            for r in 0..8 {
                match (seen.regs[r], shape.regs[r]) {
                    (a, b) if a == b => {}
                    (Known::Entry, Known::Full) | (Known::Full, Known::Entry) => need_full |= 1 << r,
                    (Known::Entry, Known::Empty) | (Known::Empty, Known::Entry) => need_empty |= 1 << r,
                    _ => return None,
                }
            }
        }
    }
    Some(if (need_full, need_empty) != (full, empty) {
        Shapes::Grow {
            full: need_full,
            empty: need_empty,
        }
    } else {
        Shapes::Stable { entry, written }
    })
}

/// The registers a plan keeps in values: those it reads at entry and those it writes.
fn held(plan: &Plan) -> Vec<usize> {
    (0..8)
        .filter(|r| (plan.need_full | plan.written) & (1 << r) != 0)
        .collect()
}

/// The held registers that travel into `block` as block parameters: those the loop writes. One it
/// only reads (a constant the code keeps on the stack) is the value loaded on entry everywhere in
/// the loop; carrying it through every join would make clang store and reload it at each one.
///
/// With `quiet` (the program reads no status word), registers empty where the block starts are
/// not carried either: an empty register's contents are seen only by fnsave and fxsave, which
/// the lifter does not lift, so the pass then neither keeps them nor writes them back (the
/// status-word analysis in `status.rs` must count those instructions as readers once they are
/// lifted). Without it they are, so that the state comes out bit for bit as the stack forms leave
/// it, popped registers included.
fn carried_into(plan: &Plan, block: Block, quiet: bool) -> Vec<usize> {
    let shape = plan.entry.get(&block);
    (0..8)
        .filter(|&r| plan.written & (1 << r) != 0)
        .filter(|&r| !quiet || shape.is_none_or(|s| s.regs[r] != Known::Empty))
        .collect()
}

fn rewrite(
    func: &mut Function,
    state: &StateDesc,
    unit: &Unit,
    plan: &Plan,
    constant: &dyn Fn(Value) -> Option<u64>,
    quiet: bool,
) {
    let body: BTreeSet<Block> = plan.order.iter().copied().collect();
    let held = held(plan);
    let guard_block = func.new_block();
    let load_block = func.new_block();
    let fast: BTreeMap<Block, Block> = plan.order.iter().map(|&b| (b, func.new_block())).collect();

    // The guard takes the header's parameters; every edge from outside the loop now enters it.
    let header_params = func.block(plan.header).params.clone();
    let guard_params: Vec<Value> = header_params
        .iter()
        .map(|v| func.new_value(func.value_type(*v).unwrap_or(Type::I64)))
        .collect();
    func.block_mut(guard_block).params = guard_params.clone();
    for b in 0..guard_block.index() {
        if body.contains(&Block(b as u32)) {
            continue;
        }
        for s in func.blocks[b].term.successors_mut() {
            if s.block == plan.header {
                s.block = guard_block;
            }
        }
    }
    // Each copy takes its original's parameters, then the registers.
    let mut map: BTreeMap<Value, Value> = BTreeMap::new();
    let mut register_params: BTreeMap<Block, Vec<(Value, Value)>> = BTreeMap::new();
    for (&orig, &copy) in &fast {
        let params = func.block(orig).params.clone();
        let mut copied = Vec::new();
        for p in params {
            let new = func.new_value(func.value_type(p).unwrap_or(Type::I64));
            map.insert(p, new);
            copied.push(new);
        }
        let mut regs = Vec::new();
        for _ in carried_into(plan, orig, quiet) {
            let m = func.new_value(Type::I64);
            let e = func.new_value(Type::I32);
            copied.extend([m, e]);
            regs.push((m, e));
        }
        func.block_mut(copy).params = copied;
        register_params.insert(orig, regs);
    }

    let mut b = FunctionBuilder::new(func, state);
    b.switch_to_block(guard_block);
    let (top, rel, ok) = guard(&mut b, unit, plan.need_full, plan.need_empty);
    b.terminate(Terminator::Branch {
        cond: ok,
        then_dest: BlockCall {
            block: load_block,
            args: Vec::new(),
        },
        else_dest: BlockCall {
            block: plan.header,
            args: guard_params.clone(),
        },
    });
    let mut f = Fast {
        b,
        unit,
        top,
        offset: 0,
        regs: [Held::Entry; 8],
        map,
        moved: false,
        summarised: false,
        quiet,
    };
    f.b.switch_to_block(load_block);
    let mut args = guard_params;
    let mut loaded: BTreeMap<usize, (Value, Value)> = BTreeMap::new();
    for &r in &held {
        let (m, e) = f.read_state(r);
        loaded.insert(r, (m, e));
        if carried_into(plan, plan.header, quiet).contains(&r) {
            args.extend([m, e]);
        }
    }
    let header_copy = fast[&plan.header];
    f.b.terminate(Terminator::Jump(BlockCall {
        block: header_copy,
        args,
    }));

    for &orig in &plan.order {
        let Some(mut shape) = plan.entry.get(&orig).cloned() else {
            continue;
        };
        f.b.switch_to_block(fast[&orig]);
        f.offset = shape.offset;
        f.regs = [Held::Entry; 8];
        let params = register_params.get(&orig).map_or(&[][..], Vec::as_slice);
        let carried = carried_into(plan, orig, quiet);
        for &r in &held {
            let value = if plan.written & (1 << r) == 0 {
                loaded.get(&r).copied()
            } else {
                carried
                    .iter()
                    .position(|&c| c == r)
                    .and_then(|k| params.get(k).copied())
            };
            f.regs[r] = match value {
                Some((m, e)) => Held::Value {
                    m,
                    e,
                    dirty: true,
                    full: shape.regs[r] == Known::Full,
                },
                // Written, but empty here and not carried (quiet): nothing reads it before a
                // push fills it.
                None => Held::Empty,
            };
        }
        let data = f.b.func().block(orig).clone();
        for inst in &data.insts {
            if let Some(op) = Op::recognize(inst, constant) {
                shape.apply(&op);
                f.op(&op, inst.result);
                continue;
            }
            f.copy(inst);
        }
        let mut term = data.term.clone();
        if let Terminator::Branch { cond: v, .. }
        | Terminator::Switch { index: v, .. }
        | Terminator::Exit { pc: v, .. } = &mut term
        {
            *v = f.mapped(*v);
        }
        let mut exits = Vec::new();
        for dest in term.successors_mut() {
            let mut dest_args: Vec<Value> = dest.args.iter().map(|v| f.mapped(*v)).collect();
            if body.contains(&dest.block) {
                for r in carried_into(plan, dest.block, quiet) {
                    // A register the target holds is full or untouched here too (the shapes
                    // agree on every edge), so it is a value; the state's copy would only stand
                    // in if it were not.
                    let (m, e) = match f.regs[r] {
                        Held::Value { m, e, .. } => (m, e),
                        Held::Entry | Held::Empty => f.read_state(r),
                    };
                    dest_args.extend([m, e]);
                }
                *dest = BlockCall {
                    block: fast[&dest.block],
                    args: dest_args,
                };
            } else {
                let out = f.b.create_block();
                exits.push((out, dest.block, dest_args));
                *dest = BlockCall {
                    block: out,
                    args: Vec::new(),
                };
            }
        }
        if matches!(term, Terminator::Return | Terminator::Exit { .. }) {
            leave(&mut f, rel, &shape, plan);
        }
        f.b.terminate(term);
        for (out, target, dest_args) in exits {
            f.b.switch_to_block(out);
            leave(&mut f, rel, &shape, plan);
            f.b.terminate(Terminator::Jump(BlockCall {
                block: target,
                args: dest_args,
            }));
        }
    }
}

/// Leaves the loop with the stack `shape`: writes back every register the loop may have
/// written, the tags the shape knows, TOP, and ES and B when register moves may have run alone.
fn leave(f: &mut Fast<'_, '_>, rel: Value, shape: &Shape, plan: &Plan) {
    let (mut empty, mut filled) = (0u8, 0u8);
    for (r, known) in shape.regs.iter().enumerate() {
        match known {
            Known::Full => filled |= 1 << r,
            Known::Empty => empty |= 1 << r,
            Known::Entry => {}
        }
    }
    // Quiet: an empty register's contents are not kept (see `carried_into`).
    f.write_back(if f.quiet { plan.written & !empty } else { plan.written });
    f.set_tags(rel, empty, filled);
    f.move_top(shape.offset);
    if plan.moves && !f.quiet {
        f.summarise();
    }
}
