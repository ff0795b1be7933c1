//! Jump-table recognition for the shapes gcc emits for a dense `switch`.
//!
//! ```text
//!   cmp  idx, N            ; (optionally `movzx idx32, idx8/16` or `mov idx32, r` after the branch)
//!   ja   default           ; or `jbe table_jump` with the default falling through
//!   jmp  [idx*4 + table]   ; form A
//! or
//!   mov  r, [idx*4 + table]
//!   jmp  r                 ; form B
//! ```
//! The bound comes from the `cmp`: `ja`/`jbe` admit indices 0..=N, `jae`/`jb` admit 0..N. Every
//! table entry must point into executable code, and the table holds at most 1024 entries;
//! otherwise the jump is not treated as a table.
//!
//! GCC's computed goto (`goto *labels[op & 0x7f]`, the dispatch of Lua, CPython and many
//! emulators) compares nothing: the index's last write in the block is `and idx, MASK` (or a
//! `movzx` of a byte), which admits MASK + 1 indices. The table may be shorter than that, so it
//! ends at the first entry that is not code, and only entries that are labels of the dispatching
//! function are cases ([`keep_labels`]). Even a recognised table keeps the original
//! indirect jump as the switch's default, so a wrong guess can cost speed but not behaviour.

use std::collections::BTreeMap;

use iced_x86::{ConditionCode, FlowControl, Instruction, InstructionInfoFactory, Mnemonic, OpAccess, OpKind, Register};
use rpt_api::GuestImage;
use rpt_ir::{GuestAddr, SlotId};

use super::operand::reg_view;

/// The most entries rpt accepts in one table.
const MAX_ENTRIES: u64 = 1024;

/// How far back, in straight-line instructions, the load of a jump register or the mask of an
/// index may be.
const LOOKBACK: usize = 8;

/// A recognised jump table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct JumpTable {
    /// The 32-bit register holding the index when the table is read.
    pub(crate) index_slot: SlotId,
    /// The table's guest address.
    pub(crate) table: GuestAddr,
    /// The case of each index 0, 1, 2, ...; `None` takes the switch's default (the original jump).
    pub(crate) by_index: Vec<Option<GuestAddr>>,
    /// The cases, in index order (the `Some`s of `by_index`).
    pub(crate) targets: Vec<GuestAddr>,
    /// For form B, the address of the `mov r, [idx*4+table]` (the index must be read before it).
    pub(crate) load_at: Option<GuestAddr>,
}

/// The instruction that falls through into `addr`, if the walk decoded one.
fn fallthrough_pred(insns: &BTreeMap<GuestAddr, Instruction>, addr: GuestAddr) -> Option<&Instruction> {
    let (_, insn) = insns.range(..addr).next_back()?;
    (u64::from(insn.next_ip32()) == addr.0).then_some(insn)
}

/// `[idx*4 + table]` with no base: the index register and the table address.
fn table_operand(insn: &Instruction) -> Option<(Register, u32)> {
    (insn.memory_base() == Register::None
        && insn.memory_index().is_gpr32()
        && insn.memory_index_scale() == 4
        && insn.memory_size().size() == 4)
        .then(|| (insn.memory_index(), insn.memory_displacement32()))
}

/// The 32-bit register a register belongs to (`al` → `eax`).
fn full(r: Register) -> Option<SlotId> {
    reg_view(r).map(|(slot, _, _)| slot)
}

/// Tries to recognise the indirect jump `jmp` (already decoded into `insns`) as a jump table.
pub(crate) fn recognise(
    image: &GuestImage,
    insns: &BTreeMap<GuestAddr, Instruction>,
    block_starts: &BTreeMap<GuestAddr, ()>,
    jmp: &Instruction,
) -> Option<JumpTable> {
    let jmp_addr = GuestAddr(jmp.ip());
    let (index_reg, table, load_at, seq_start) = match jmp.op_kind(0) {
        OpKind::Memory => {
            let (idx, table) = table_operand(jmp)?;
            (idx, table, None, jmp_addr)
        }
        OpKind::Register => {
            // Form B: the load must be the jump register's last write, in the same block (GCC may
            // schedule other instructions between), so the lifter can read the index there,
            // before the load overwrites it.
            let load = last_write(insns, block_starts, jmp_addr, jmp.op_register(0))?;
            if load.mnemonic() != Mnemonic::Mov
                || load.op_kind(0) != OpKind::Register
                || load.op_register(0) != jmp.op_register(0)
                || load.op_kind(1) != OpKind::Memory
            {
                return None;
            }
            let (idx, table) = table_operand(load)?;
            let at = GuestAddr(load.ip());
            (idx, table, Some(at), at)
        }
        _ => return None,
    };
    let index_slot = full(index_reg)?;
    let (count, masked) = match bound(insns, seq_start, index_reg) {
        Some(n) => (n, false),
        None => (mask_bound(insns, block_starts, seq_start, index_reg)?, true),
    };
    if count == 0 || count > MAX_ENTRIES {
        return None;
    }
    let mut by_index = Vec::new();
    for i in 0..count {
        let at = GuestAddr(u64::from(table) + 4 * i);
        let target = image
            .bytes_at(at, 4)
            .and_then(|bytes| <[u8; 4]>::try_from(bytes).ok())
            .map(|word| GuestAddr(u64::from(u32::from_le_bytes(word))))
            .filter(|&t| image.is_code(t));
        match target {
            Some(t) => by_index.push(Some(t)),
            // A mask admits more indices than the program uses (Lua's 83 opcodes under a 7-bit
            // field): the table ends at the first word that is not code, and the indices past it
            // take the switch's default, the original jump.
            None if masked => break,
            None => return None,
        }
    }
    if masked {
        keep_labels(image, table, &mut by_index);
    }
    let targets: Vec<GuestAddr> = by_index.iter().flatten().copied().collect();
    if masked && targets.len() < 2 {
        return None;
    }
    Some(JumpTable {
        index_slot,
        table: GuestAddr(u64::from(table)),
        by_index,
        targets,
        load_at,
    })
}

/// How many instructions [`keep_labels`] decodes from one entry looking for the dispatch.
const LABEL_SEARCH_BUDGET: usize = 256;

/// Keeps the entries of a masked table that are labels of the dispatching function.
///
/// What follows a computed-goto table in the image may be another table of code addresses
/// (function pointers, say), and nothing in the words tells them apart: the mask admits them, and
/// they point at code. Those are not cases: they would hide functions that are only called through
/// their own table. A label of the dispatching function leads back to a dispatch through the same
/// table (every handler of an interpreter ends in one), found by decoding forward from it along
/// direct jumps and both sides of branches; an entry that does not (the handler that leaves the
/// interpreter) still counts when it lies among labels that do. The others become holes: the
/// switch's default, the original jump, takes them, and their words are function pointers again.
fn keep_labels(image: &GuestImage, table: u32, by_index: &mut Vec<Option<GuestAddr>>) {
    let leads_back: Vec<bool> = by_index
        .iter()
        .map(|t| t.is_some_and(|t| reaches_dispatch(image, table, t)))
        .collect();
    let confirmed = || {
        by_index
            .iter()
            .zip(&leads_back)
            .filter(|&(_, &ok)| ok)
            .filter_map(|(t, _)| *t)
    };
    let (Some(low), Some(high)) = (confirmed().min(), confirmed().max()) else {
        by_index.iter_mut().for_each(|t| *t = None);
        return;
    };
    for (t, ok) in by_index.iter_mut().zip(leads_back) {
        if !ok && t.is_some_and(|t| t < low || t > high) {
            *t = None;
        }
    }
    // Indices past the last label take the default anyway.
    while by_index.last() == Some(&None) {
        by_index.pop();
    }
}

/// Whether code from `start` reaches an instruction that reads `[idx*4 + table]`.
fn reaches_dispatch(image: &GuestImage, table: u32, start: GuestAddr) -> bool {
    let mut queue = vec![start];
    let mut seen = std::collections::BTreeSet::new();
    while let Some(mut pc) = queue.pop() {
        while seen.len() < LABEL_SEARCH_BUDGET && seen.insert(pc) {
            let Ok(insn) = crate::decode::decode_at(image, pc) else {
                break;
            };
            if (0..insn.op_count()).any(|i| insn.op_kind(i) == OpKind::Memory)
                && table_operand(&insn).is_some_and(|(_, t)| t == table)
            {
                return true;
            }
            let next = GuestAddr(u64::from(insn.next_ip32()));
            match insn.flow_control() {
                FlowControl::Next | FlowControl::Call => pc = next,
                FlowControl::UnconditionalBranch if insn.op_kind(0) == OpKind::NearBranch32 => {
                    pc = GuestAddr(insn.near_branch_target());
                }
                FlowControl::ConditionalBranch if insn.op_kind(0) == OpKind::NearBranch32 => {
                    queue.push(GuestAddr(insn.near_branch_target()));
                    pc = next;
                }
                _ => break,
            }
        }
    }
    false
}

/// The number of in-range indices the guard before `seq_start` admits.
fn bound(insns: &BTreeMap<GuestAddr, Instruction>, seq_start: GuestAddr, index_reg: Register) -> Option<u64> {
    // An optional zero-extension or copy into the index register between the guard and the table jump.
    let mut guard_end = seq_start;
    let mut compared = index_reg;
    if let Some(p) = fallthrough_pred(insns, seq_start)
        && matches!(p.mnemonic(), Mnemonic::Movzx | Mnemonic::Mov)
        && p.op_kind(0) == OpKind::Register
        && p.op_register(0) == index_reg
        && p.op_kind(1) == OpKind::Register
    {
        compared = p.op_register(1);
        guard_end = GuestAddr(p.ip());
    }
    // The guard: a `ja`/`jae` falling through into the sequence, or a `jbe`/`jb` jumping to it.
    let (guard, inclusive) = if let Some(g) = fallthrough_pred(insns, guard_end)
        && matches!(g.condition_code(), ConditionCode::a | ConditionCode::ae)
        && is_jcc(g)
    {
        (g, g.condition_code() == ConditionCode::a)
    } else {
        let g = insns.values().find(|g| {
            is_jcc(g)
                && g.near_branch_target() == guard_end.0
                && matches!(g.condition_code(), ConditionCode::be | ConditionCode::b)
        })?;
        (g, g.condition_code() == ConditionCode::be)
    };
    let cmp = fallthrough_pred(insns, GuestAddr(guard.ip()))?;
    if cmp.mnemonic() != Mnemonic::Cmp || cmp.op_kind(0) != OpKind::Register {
        return None;
    }
    // The compared register must be the index itself, or the source of the copy above.
    // A narrower compare without a zero-extension would leave the index's upper bits unchecked.
    let cmp_reg = cmp.op_register(0);
    if cmp_reg != compared {
        return None;
    }
    let n = match cmp.op_kind(1) {
        OpKind::Immediate8
        | OpKind::Immediate16
        | OpKind::Immediate32
        | OpKind::Immediate8to16
        | OpKind::Immediate8to32 => {
            // The immediate is compared unsigned at the register's width.
            let width = reg_view(cmp_reg)?.1;
            cmp.immediate(1) & width.mask()
        }
        _ => return None,
    };
    Some(if inclusive { n.checked_add(1)? } else { n })
}

/// The number of indices a mask admits: the index register's last write before `seq_start`, in
/// the same block, is `and idx, MASK` (MASK + 1 indices) or a zero-extending byte load (256).
/// This is the bound of GCC's computed goto, `goto *labels[op & 0x7f]`, which compares nothing.
fn mask_bound(
    insns: &BTreeMap<GuestAddr, Instruction>,
    block_starts: &BTreeMap<GuestAddr, ()>,
    seq_start: GuestAddr,
    index_reg: Register,
) -> Option<u64> {
    let index = index_reg.full_register32();
    let p = last_write(insns, block_starts, seq_start, index)?;
    let to_index = p.op_kind(0) == OpKind::Register && p.op_register(0) == index;
    match (p.mnemonic(), p.op_kind(1)) {
        (Mnemonic::And, OpKind::Immediate32 | OpKind::Immediate8to32) if to_index => {
            Some((p.immediate(1) & 0xffff_ffff) + 1)
        }
        (Mnemonic::Movzx, OpKind::Memory) if to_index && p.memory_size().size() == 1 => Some(256),
        (Mnemonic::Movzx, OpKind::Register) if to_index && p.op_register(1).size() == 1 => Some(256),
        _ => None,
    }
}

/// The last instruction before `at`, in the same block and at most [`LOOKBACK`] instructions back,
/// that writes `reg` (or any part of its 32-bit register).
fn last_write<'i>(
    insns: &'i BTreeMap<GuestAddr, Instruction>,
    block_starts: &BTreeMap<GuestAddr, ()>,
    at: GuestAddr,
    reg: Register,
) -> Option<&'i Instruction> {
    let full = reg.full_register32();
    let mut info = InstructionInfoFactory::new();
    let mut at = at;
    for _ in 0..LOOKBACK {
        if block_starts.contains_key(&at) {
            // Another path may enter here without the write.
            return None;
        }
        let p = fallthrough_pred(insns, at)?;
        let writes = info.info(p).used_registers().iter().any(|u| {
            u.register().full_register32() == full
                && matches!(
                    u.access(),
                    OpAccess::Write | OpAccess::CondWrite | OpAccess::ReadWrite | OpAccess::ReadCondWrite
                )
        });
        if writes {
            return Some(p);
        }
        at = GuestAddr(p.ip());
    }
    None
}

fn is_jcc(insn: &Instruction) -> bool {
    insn.op_count() == 1 && insn.op_kind(0) == OpKind::NearBranch32 && insn.condition_code() != ConditionCode::None
}
