//! The transform: checked direct calls in place of indirect ones, then copies of the callees in
//! place of direct calls.

use rpt_ir::{Block, BlockCall, BlockData, CallTarget, Function, Inst, InstKind, IntCC, Terminator, Value};

use crate::Plan;

/// Applies `plan` to `func`; returns how many calls it replaced with copies.
pub fn apply(func: &mut Function, plan: &Plan) -> usize {
    for (&block, candidates) in &plan.sites {
        check_candidates(func, block as usize, candidates);
    }
    let mut inlined = 0;
    // Copies add blocks but no calls (inlinable functions call nothing), so one sweep finds them all.
    for b in 0..func.blocks.len() {
        let Terminator::Call {
            target: CallTarget::Direct(addr),
            cont,
        } = &func.blocks[b].term
        else {
            continue;
        };
        if let Some(body) = plan.bodies.get(addr) {
            let cont = cont.clone();
            let entry = splice(func, body, &cont);
            func.blocks[b].term = Terminator::Jump(BlockCall::plain(entry));
            inlined += 1;
        }
    }
    if inlined > 0 {
        func.renumber_values();
    }
    inlined
}

/// Replaces the indirect call ending block `b` with a chain of checks: a target equal to a
/// candidate calls it directly (where the copy goes), any other makes the indirect call.
fn check_candidates(func: &mut Function, b: usize, candidates: &[rpt_ir::GuestAddr]) {
    let Some(Terminator::Call {
        target: CallTarget::Indirect(target),
        cont,
    }) = func.blocks.get(b).map(|d| d.term.clone())
    else {
        return;
    };
    let Some(ty) = func.value_type(target) else {
        return;
    };
    let mut at = Block(b as u32);
    for &candidate in candidates {
        let imm = func.new_value(ty);
        let equal = func.new_value(rpt_ir::Type::I1);
        let direct = func.new_block();
        let next = func.new_block();
        func.block_mut(direct).term = Terminator::Call {
            target: CallTarget::Direct(candidate),
            cont: cont.clone(),
        };
        let data = func.block_mut(at);
        data.insts.push(Inst {
            result: Some(imm),
            kind: InstKind::Iconst {
                ty,
                imm: candidate.0 & ty.mask(),
            },
        });
        data.insts.push(Inst {
            result: Some(equal),
            kind: InstKind::Icmp {
                cond: IntCC::Eq,
                args: [target, imm],
            },
        });
        data.term = Terminator::Branch {
            cond: equal,
            then_dest: BlockCall::plain(direct),
            else_dest: BlockCall::plain(next),
        };
        at = next;
    }
    func.block_mut(at).term = Terminator::Call {
        target: CallTarget::Indirect(target),
        cont,
    };
}

/// Appends a copy of `callee`'s blocks to `func`, its values renumbered and its returns jumping
/// to `cont`; returns the copy of its entry block.
fn splice(func: &mut Function, callee: &Function, cont: &BlockCall) -> Block {
    let values: Vec<Value> = callee.value_types.iter().map(|&ty| func.new_value(ty)).collect();
    let map = |v: Value| values.get(v.index()).copied().unwrap_or(v);
    let base = func.blocks.len() as u32;
    for block in &callee.blocks {
        let mut insts: Vec<Inst> = block.insts.clone();
        for inst in &mut insts {
            inst.result = inst.result.map(map);
            inst.kind.map_operands(map);
        }
        let term = match &block.term {
            Terminator::Return => Terminator::Jump(cont.clone()),
            other => {
                let mut term = other.clone();
                term.map_operands(map);
                for dest in term.successors_mut() {
                    dest.block = Block(base + dest.block.0);
                }
                term
            }
        };
        func.blocks.push(BlockData {
            params: block.params.iter().copied().map(map).collect(),
            insts,
            term,
        });
    }
    Block(base)
}
