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
//! otherwise the jump is not treated as a table. Even a recognised table keeps the original
//! indirect jump as the switch's default, so a wrong guess can cost speed but not behaviour.

use std::collections::BTreeMap;

use iced_x86::{ConditionCode, Instruction, Mnemonic, OpKind, Register};
use rpt_api::GuestImage;
use rpt_ir::{GuestAddr, SlotId};

use super::operand::reg_view;

/// The most entries rpt accepts in one table.
const MAX_ENTRIES: u64 = 1024;

/// A recognised jump table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct JumpTable {
    /// The 32-bit register holding the index when the table is read.
    pub(crate) index_slot: SlotId,
    /// The table's guest address.
    pub(crate) table: GuestAddr,
    /// The case targets, for indices 0, 1, 2, ...
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
            // Form B: the load must sit right before the jump in the same block, so the lifter
            // can read the index before the load overwrites it.
            if block_starts.contains_key(&jmp_addr) {
                return None;
            }
            let load = fallthrough_pred(insns, jmp_addr)?;
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
    let count = bound(insns, seq_start, index_reg)?;
    if count == 0 || count > MAX_ENTRIES {
        return None;
    }
    let mut targets = Vec::new();
    for i in 0..count {
        let at = GuestAddr(u64::from(table) + 4 * i);
        let bytes = image.bytes_at(at, 4)?;
        let word: [u8; 4] = bytes.try_into().ok()?;
        let target = GuestAddr(u64::from(u32::from_le_bytes(word)));
        if !image.is_code(target) {
            return None;
        }
        targets.push(target);
    }
    Some(JumpTable {
        index_slot,
        table: GuestAddr(u64::from(table)),
        targets,
        load_at,
    })
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

fn is_jcc(insn: &Instruction) -> bool {
    insn.op_count() == 1 && insn.op_kind(0) == OpKind::NearBranch32 && insn.condition_code() != ConditionCode::None
}
