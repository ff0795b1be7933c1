//! CR logic and moves, SPR moves, the time base, `sc`, and the instructions that are no-ops in a
//! user program (sync, isync, eieio, cache hints other than `dcbz`).

use rpt_ir::{BinaryOp, ConvOp, Effects, HelperDecl, IntCC, SlotId, Type};

use super::Lifter;
use super::alu::Complement;
use crate::decode::Insn;
use crate::state::{CA, CTR, OV, SO, SPRS, XER, cr_field, gpr};

/// `@sc()`: the platform's system call; it reads and writes registers and memory and may end the process.
pub const SC_HELPER: &str = "sc";
/// `@timebase() -> i64`: the 64-bit time base.
pub const TIMEBASE_HELPER: &str = "timebase";

/// The helpers integer code calls.
pub fn helpers() -> Vec<HelperDecl> {
    vec![
        HelperDecl {
            name: SC_HELPER.to_string(),
            params: Vec::new(),
            result: None,
            // The system call convention of every PowerPC ABI: the call number and arguments in
            // the volatile registers, the result and the error flag back in them, the nonvolatile
            // ones (r1, r2, r13..r31, the FPRs, cr2..cr4, lr) kept. A platform's `sc` reads and
            // writes only the volatile set, so callers keeping state in C locals hand over only
            // that. Ending the process (exit, exit_group) is not leaving lifted code for the
            // runtime to go on with: nothing reads the state after it, so this is no `may_exit`.
            effects: Effects {
                reads_state: true,
                reads_flags: true,
                writes_state: true,
                reads_memory: true,
                writes_memory: true,
                may_exit: false,
            },
            touches: sc_touches(),
        },
        HelperDecl {
            name: TIMEBASE_HELPER.to_string(),
            params: Vec::new(),
            result: Some(Type::I64),
            // It reads a clock, so two calls must not be merged: say it reads state.
            effects: Effects {
                reads_state: true,
                ..Effects::PURE
            },
            touches: Vec::new(),
        },
    ]
}

/// The registers a system call may read and write: r0, r3..r12, cr0, cr1, cr5..cr7, ctr and the
/// XER (its packed fields with it), the volatile registers of the PowerPC ABIs.
fn sc_touches() -> Vec<SlotId> {
    let gprs = std::iter::once(0).chain(3..=12).map(gpr);
    let crs = [0, 1, 5, 6, 7].into_iter().map(cr_field);
    gprs.chain(crs).chain([CTR, XER]).collect()
}

/// XER bits that `mtxer` does not keep: SO, OV and CA live in their own slots, and the ISA 3.0
/// bits OV32 and CA32 (19, 18) do not exist on the 750.
const XER_PLAIN_MASK: u32 = !((1 << 31) | (1 << 30) | (1 << 29) | (1 << 19) | (1 << 18));

/// Cache and ordering instructions with no effect on a single user thread.
pub(crate) fn nop(_: &mut Lifter<'_>, _: &Insn) {}

/// `sc`: calls the platform.
pub(crate) fn sc(lx: &mut Lifter<'_>, _: &Insn) {
    lx.b.call_helper(SC_HELPER, Vec::new(), None);
}

/// `mcrf crfD,crfS`.
pub(crate) fn mcrf(lx: &mut Lifter<'_>, insn: &Insn) {
    let v = lx.b.get(cr_field(insn.crfs()));
    lx.b.set(cr_field(insn.crfd()), v);
}

/// `crand`, `crandc`, `cror`, `crorc`, `crxor`, `crnand`, `crnor`, `creqv` `crbD,crbA,crbB`: the
/// logical operations of `alu::logical` on CR bits.
pub(crate) fn cr_logic(lx: &mut Lifter<'_>, insn: &Insn, op: BinaryOp, complement: Complement) {
    let a = lx.cr_bit_value(insn.ra());
    let b = lx.cr_bit_value(insn.rb());
    let r = lx.logic(op, complement, a, b);
    lx.set_cr_bit(insn.rd(), r);
}

/// `mfcr rD`: the eight fields, cr0 in the top nibble.
pub(crate) fn mfcr(lx: &mut Lifter<'_>, insn: &Insn) {
    let mut acc = lx.c32(0);
    for n in 0..8 {
        let f = lx.b.get(cr_field(n));
        let wide = lx.b.resize(f, Type::I32);
        let shifted = lx.b.binary_imm(BinaryOp::Shl, wide, u64::from(28 - 4 * n));
        acc = lx.b.binary(BinaryOp::Or, acc, shifted);
    }
    lx.set_gpr(insn.rd(), acc);
}

/// `mtcrf CRM,rS`: the fields whose CRM bit is set (CRM's top bit is cr0).
pub(crate) fn mtcrf(lx: &mut Lifter<'_>, insn: &Insn) {
    let s = lx.gpr(insn.rd());
    for n in 0..8 {
        if insn.crm() & (0x80 >> n) != 0 {
            let shifted = lx.b.binary_imm(BinaryOp::Lshr, s, u64::from(28 - 4 * n));
            let nibble = lx.b.binary_imm(BinaryOp::And, shifted, 15);
            let field = lx.b.resize(nibble, Type::I8);
            lx.b.set(cr_field(n), field);
        }
    }
}

/// `mcrxr crfD`: SO, OV, CA into a CR field (its low bit 0), then clears them.
pub(crate) fn mcrxr(lx: &mut Lifter<'_>, insn: &Insn) {
    let bits = [SO, OV, CA].map(|slot| lx.b.get(slot));
    let field = lx.cr_field_from_bits(&bits);
    lx.b.set(cr_field(insn.crfd()), field);
    let off = lx.c1(false);
    for slot in [SO, OV, CA] {
        lx.b.set(slot, off);
    }
}

/// The PVR (SPR 287) reads as a 750CL's: version 0x0008, revision 0x7210 ("750CL v2.0, rev E").
/// The value is qemu's `CPU_POWERPC_750CL_v20` (target/ppc/cpu-models.h), which `qemu-ppc -cpu
/// 750cl` returns (a probe reading it prints 0x87210), so recompiled programs see the oracle's value.
pub const PVR_750CL: u32 = 0x0008_7210;

/// The PVR's SPR number.
const SPR_PVR: u32 = 287;

/// `mfspr rD,SPR`. `mfpvr` is privileged, but Linux emulates it for user programs (glibc's start-up
/// reads it), so it gives the 750CL's value. Other SPRs are privileged or absent: lifted code exits
/// with `invalid_opcode`.
pub(crate) fn mfspr(lx: &mut Lifter<'_>, insn: &Insn) {
    if let Some((_, slot, _)) = SPRS.iter().find(|(n, _, _)| *n == insn.spr()) {
        let v = lx.b.get(*slot);
        lx.set_gpr(insn.rd(), v);
    } else if insn.spr() == SPR_PVR {
        let v = lx.c32(PVR_750CL);
        lx.set_gpr(insn.rd(), v);
    } else {
        lx.exit_unknown_spr();
    }
}

/// `mtspr SPR,rS`.
pub(crate) fn mtspr(lx: &mut Lifter<'_>, insn: &Insn) {
    let Some((_, slot, _)) = SPRS.iter().find(|(n, _, _)| *n == insn.spr()) else {
        lx.exit_unknown_spr();
        return;
    };
    let s = lx.gpr(insn.rd());
    if *slot == XER {
        let kept = lx.b.binary_imm(BinaryOp::And, s, u64::from(XER_PLAIN_MASK));
        lx.b.set(XER, kept);
        for (slot, bit) in [(SO, 31), (OV, 30), (CA, 29)] {
            let shifted = lx.b.binary_imm(BinaryOp::Lshr, s, bit);
            let one = lx.b.binary_imm(BinaryOp::And, shifted, 1);
            let v = lx.b.icmp_imm(IntCC::Ne, one, 0);
            lx.b.set(slot, v);
        }
    } else {
        lx.b.set(*slot, s);
    }
}

/// `mftb rD,TBR`: TBL (268) or TBU (269) of the platform's time base.
pub(crate) fn mftb(lx: &mut Lifter<'_>, insn: &Insn) {
    let Some(tb) = lx.b.call_helper(TIMEBASE_HELPER, Vec::new(), Some(Type::I64)) else {
        return;
    };
    let part = if insn.spr() == 269 {
        lx.b.binary_imm(BinaryOp::Lshr, tb, 32)
    } else {
        tb
    };
    let v = lx.b.convert(ConvOp::Trunc, part, Type::I32);
    lx.set_gpr(insn.rd(), v);
}

impl Lifter<'_> {
    /// An SPR the lifter does not model: leave lifted code, as the hardware's privilege trap would.
    fn exit_unknown_spr(&mut self) {
        self.exit_here(rpt_ir::ExitReason::InvalidOpcode);
        // Later instructions of this guest block land in an unreachable block.
        let dead = self.b.create_block();
        self.b.switch_to_block(dead);
    }
}
