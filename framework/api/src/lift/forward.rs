//! Flag values carried into blocks that have one predecessor.
//!
//! Guests lift each guest block on its own, so a condition read at the top of a block re-reads the
//! flag slots its predecessor just wrote: x86's `cmp eax, 12; je A; jg B` becomes two blocks,
//! the second reading SF and OF. The host compiler would see through the slot (a C local after
//! state-in-memory, a field of `struct cpu` otherwise) only after its own jump threading had
//! turned the values into phis, too late to fold `SF != OF` back into the comparison that wrote
//! them. Where a block has exactly one predecessor, which ends in a plain branch, the value the
//! predecessor left in a flag slot is known at the block's entry; each read of that slot before
//! anything may change it becomes that value, and the read disappears (so flag liveness sees one
//! reader fewer too).
//!
//! A join that only tests flags (the shared `jg` of two `cmp; je` pairs in a compiled switch's
//! compare tree) gets a copy per predecessor when every predecessor leaves the flags it reads
//! known: each copy then has one predecessor, and the test folds into each comparison.
//!
//! Only plain flag slots (role `flag`, own storage, no packed fields) are carried: those are the
//! condition bits lifters write with ordinary `set`. A helper call or an indexed write forgets
//! every carried value, as a helper may write any slot through the CPU state.

use std::collections::{BTreeMap, BTreeSet};

use rpt_ir::verify::reverse_postorder;
use rpt_ir::{Block, Function, InstKind, SlotId, SlotLayout, SlotRole, StateDesc, Terminator, Type, Value};

/// The most instructions (marks included) a flag-testing join may have to be copied into its
/// predecessors, and the most predecessors it may have: a condition is a handful of operations.
const JOIN_COPY_MAX_INSTS: usize = 16;
const JOIN_COPY_MAX_PREDS: usize = 8;

/// Replaces reads of plain flag slots whose value a unique predecessor block wrote (or read) by
/// that value, and removes the reads; copies flag-testing joins into their predecessors first
/// where that lets every copy's reads go.
pub fn forward_flags(func: &mut Function, state: &StateDesc) {
    let carried: BTreeSet<SlotId> = state
        .iter()
        .filter(|&(id, s)| {
            s.role == SlotRole::Flag
                && s.layout == SlotLayout::Plain
                && !state
                    .iter()
                    .any(|(_, o)| matches!(o.layout, SlotLayout::Packed { parent, .. } if parent == id))
        })
        .map(|(id, _)| id)
        .collect();
    if carried.is_empty() {
        return;
    }
    let at_exit = forward_pass(func, &carried);
    if copy_flag_tests_into_predecessors(func, &carried, &at_exit) {
        forward_pass(func, &carried);
    }
}

/// Whether control reaches a successor of a block ending in `term` straight from it, with no
/// callee in between that may write flags.
fn plain_edge(term: &Terminator) -> bool {
    matches!(
        term,
        Terminator::Jump(_) | Terminator::Branch { .. } | Terminator::Switch { .. }
    )
}

/// The distinct predecessors of each block reachable from `block0`.
fn predecessors(func: &Function, order: &[Block]) -> Vec<Vec<usize>> {
    let mut preds: Vec<Vec<usize>> = vec![Vec::new(); func.blocks.len()];
    for &b in order {
        let mut succs: Vec<usize> = func.blocks[b.index()]
            .term
            .successors()
            .iter()
            .map(|s| s.block.index())
            .collect();
        succs.sort_unstable();
        succs.dedup();
        for s in succs {
            if let Some(p) = preds.get_mut(s) {
                p.push(b.index());
            }
        }
    }
    preds
}

/// One forwarding sweep in reverse postorder; gives the carried values known at each block's end.
fn forward_pass(func: &mut Function, carried: &BTreeSet<SlotId>) -> Vec<BTreeMap<SlotId, Value>> {
    let order = reverse_postorder(func);
    let mut rank = vec![usize::MAX; func.blocks.len()];
    for (i, b) in order.iter().enumerate() {
        rank[b.index()] = i;
    }
    let preds = predecessors(func, &order);
    let mut at_exit: Vec<BTreeMap<SlotId, Value>> = vec![BTreeMap::new(); func.blocks.len()];
    let mut replaced: BTreeMap<Value, Value> = BTreeMap::new();
    for &b in &order {
        let bi = b.index();
        let mut known = match preds[bi].as_slice() {
            &[p] if rank[p] < rank[bi] && plain_edge(&func.blocks[p].term) => at_exit[p].clone(),
            _ => BTreeMap::new(),
        };
        let block = &mut func.blocks[bi];
        block.insts.retain(|inst| match (&inst.kind, inst.result) {
            (InstKind::GetSlot { slot }, Some(read)) if carried.contains(slot) => match known.get(slot) {
                Some(&value) => {
                    replaced.insert(read, value);
                    false
                }
                None => {
                    known.insert(*slot, read);
                    true
                }
            },
            (InstKind::SetSlot { slot, value }, _) if carried.contains(slot) => {
                known.insert(*slot, replaced.get(value).copied().unwrap_or(*value));
                true
            }
            (InstKind::Kill { slot }, _) => {
                known.remove(slot);
                true
            }
            (InstKind::CallHelper { .. } | InstKind::SetIndexed { .. }, _) => {
                known.clear();
                true
            }
            _ => true,
        });
        at_exit[bi] = known;
    }
    if !replaced.is_empty() {
        // The removed reads' values are now defined nowhere. Their entries in the value table
        // become `i1`, what the text form's reader records for a number it never sees defined,
        // so a lifted function still reads back from its text as itself (the golden tests).
        for read in replaced.keys() {
            if let Some(ty) = func.value_types.get_mut(read.index()) {
                *ty = Type::I1;
            }
        }
        let rename = |v: Value| replaced.get(&v).copied().unwrap_or(v);
        for block in &mut func.blocks {
            for inst in &mut block.insts {
                inst.kind.map_operands(rename);
            }
            block.term.map_operands(rename);
        }
    }
    at_exit
}

/// Gives each extra predecessor of a flag-testing join its own copy of the join, where every
/// predecessor leaves each flag the join reads known; says whether it copied any.
///
/// A flag-testing join: no parameters, only marks, carried-flag reads and pure integer
/// operations, a branch at the end, and no value used outside it.
fn copy_flag_tests_into_predecessors(
    func: &mut Function,
    carried: &BTreeSet<SlotId>,
    at_exit: &[BTreeMap<SlotId, Value>],
) -> bool {
    let order = reverse_postorder(func);
    let preds = predecessors(func, &order);
    let mut defined_in = vec![usize::MAX; func.value_types.len()];
    for (bi, block) in func.blocks.iter().enumerate() {
        for v in block
            .params
            .iter()
            .copied()
            .chain(block.insts.iter().filter_map(|i| i.result))
        {
            if let Some(d) = defined_in.get_mut(v.index()) {
                *d = bi;
            }
        }
    }
    let mut used_elsewhere = vec![false; func.blocks.len()];
    for (bi, block) in func.blocks.iter().enumerate() {
        let operands = block
            .insts
            .iter()
            .flat_map(|i| i.kind.operands())
            .chain(block.term.operands());
        for v in operands {
            if let Some(&d) = defined_in.get(v.index())
                && d != bi
                && d < used_elsewhere.len()
            {
                used_elsewhere[d] = true;
            }
        }
    }
    let mut copied = false;
    for &b in &order {
        let bi = b.index();
        let block = &func.blocks[bi];
        let ps = &preds[bi];
        let tests_flags = block.params.is_empty()
            && !used_elsewhere[bi]
            && block.insts.len() <= JOIN_COPY_MAX_INSTS
            && matches!(block.term, Terminator::Branch { .. })
            && block
                .insts
                .iter()
                .all(|i| i.result.is_none_or(|r| func.value_type(r).is_some()))
            && block.insts.iter().all(|i| match &i.kind {
                InstKind::GetSlot { slot } => carried.contains(slot),
                InstKind::Mark { .. }
                | InstKind::Iconst { .. }
                | InstKind::Unary { .. }
                | InstKind::Binary { .. }
                | InstKind::Icmp { .. }
                | InstKind::Select { .. } => true,
                _ => false,
            });
        if !tests_flags || ps.len() < 2 || ps.len() > JOIN_COPY_MAX_PREDS || ps.contains(&bi) {
            continue;
        }
        let reads: Vec<SlotId> = block
            .insts
            .iter()
            .filter_map(|i| match i.kind {
                InstKind::GetSlot { slot } => Some(slot),
                _ => None,
            })
            .collect();
        let all_known = ps
            .iter()
            .all(|&p| plain_edge(&func.blocks[p].term) && reads.iter().all(|s| at_exit[p].contains_key(s)));
        if reads.is_empty() || !all_known {
            continue;
        }
        let template = block.clone();
        for &p in &ps[1..] {
            let copy = func.new_block();
            let mut renamed: BTreeMap<Value, Value> = BTreeMap::new();
            let mut data = template.clone();
            for inst in &mut data.insts {
                inst.kind.map_operands(|v| renamed.get(&v).copied().unwrap_or(v));
                if let Some((r, ty)) = inst.result.and_then(|r| Some((r, func.value_type(r)?))) {
                    let fresh = func.new_value(ty);
                    renamed.insert(r, fresh);
                    inst.result = Some(fresh);
                }
            }
            data.term.map_operands(|v| renamed.get(&v).copied().unwrap_or(v));
            *func.block_mut(copy) = data;
            for dest in func.blocks[p].term.successors_mut() {
                if dest.block == b {
                    dest.block = copy;
                }
            }
        }
        copied = true;
    }
    copied
}

#[cfg(test)]
mod tests {
    use rpt_ir::parse::parse_program;
    use rpt_ir::print::function_to_string;

    use super::*;

    const STATE: &str =
        "state {\n    eax: i32 gpr\n    sf: i1 flag\n    of: i1 flag\n}\nhelper @h() -> i1 reads_state writes_state\n";

    fn forwarded(body: &str) -> String {
        let mut program =
            parse_program(&format!("{STATE}\nfunction f_00001000 {{\n{body}}}\n")).expect("test IR parses");
        let state = program.state.clone();
        let func = program.functions.values_mut().next().expect("one function");
        forward_flags(func, &state);
        let cx = rpt_ir::verify::VerifyContext {
            state: &state,
            helpers: Some(&program.helpers),
            callees: None,
        };
        rpt_ir::verify::verify_function(func, cx).expect("still valid");
        function_to_string(func, &state)
    }

    #[test]
    fn a_flag_written_by_the_only_predecessor_is_its_value() {
        let out = forwarded(
            "block0:
    v0: i32 = get %eax
    v1: i32 = iconst 0x0
    v2: i1 = icmp slt v0, v1
    set %sf, v2
    v3: i1 = icmp eq v0, v1
    set %of, v3
    br v2, block1, block2
block1:
    v4: i1 = get %sf
    v5: i1 = get %of
    v6: i1 = xor v4, v5
    br v6, block2, block2
block2:
    return
",
        );
        assert!(!out.contains("get %sf") && !out.contains("get %of"), "{out}");
        assert!(out.contains("xor v2, v3"), "{out}");
    }

    #[test]
    fn a_join_a_call_and_a_helper_forget_the_values() {
        let out = forwarded(
            "block0:
    v0: i32 = get %eax
    v1: i32 = iconst 0x0
    v2: i1 = icmp slt v0, v1
    set %sf, v2
    br v2, block1, block2
block1:
    jump block2
block2:
    v3: i1 = get %sf
    set %of, v3
    call f_00002000, block3
block3:
    v4: i1 = get %of
    set %sf, v4
    v5: i1 = call_helper @h()
    v6: i1 = get %sf
    set %of, v6
    v7: i1 = get %of
    return
",
        );
        // Kept: block2's read (two predecessors), block3's read (after a call) and the read
        // after the helper; the last read of `of` in block3 is the value just set.
        assert_eq!(out.matches("get %sf").count(), 2, "{out}");
        assert_eq!(out.matches("get %of").count(), 1, "{out}");
    }

    #[test]
    fn a_join_that_only_tests_flags_is_copied_into_each_predecessor() {
        let out = forwarded(
            "block0:
    v0: i32 = get %eax
    v1: i32 = iconst 0x0
    v2: i1 = icmp slt v0, v1
    set %sf, v2
    br v2, block1, block3
block1:
    v3: i1 = icmp eq v0, v1
    set %sf, v3
    br v3, block2, block3
block2:
    return
block3:
    mark 0x00001010
    v4: i1 = get %sf
    br v4, block2, block2
",
        );
        // Two tests of one guest instruction, each reading its own predecessor's comparison.
        assert_eq!(out.matches("mark 0x00001010").count(), 2, "{out}");
        assert!(!out.contains("get %sf"), "{out}");
        assert!(
            out.contains("br v2, block2, block2") && out.contains("br v3, block2, block2"),
            "{out}"
        );
    }
}
