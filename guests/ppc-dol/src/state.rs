//! The PowerPC 750 (Gekko/Broadway) user register file as IR state slots (docs/c-abi.md,
//! "PowerPC guest conventions").
//!
//! - `r0`..`r31` (i32 gpr) and `f0`..`f31` (f64 fpr, the FPR as ordinary FP code sees it, which is
//!   also paired-single slot 0); `ps1_0`..`ps1_31` (f64) hold paired-single slot 1. Both halves
//!   are kept as doubles, as Dolphin models Gekko: paired-single arithmetic rounds its results to
//!   single precision, but `ps_merge`/`ps_mr` move values without rounding.
//! - The condition register as eight flag slots `cr0`..`cr7` (i8 holding 4 bits: LT GT EQ SO from
//!   most to least significant), each its own field of `struct cpu`, so flag passes see them and a
//!   compare followed by a branch is a host compare and branch; only `mfcr`, `mtcrf` and the
//!   guest's C parts (setjmp, system calls) assemble the 32-bit word (cr0 the top nibble). One
//!   packed word cost a read-modify-write of it per compare (29% of vm-ppc's instructions).
//! - `xer` (i32) with `so`, `ov`, `ca` (i1 flags, bits 31, 30, 29) and the string byte count
//!   `xer_bc` (bits 0..6) packed in it.
//! - `lr`, `ctr`, `fpscr`, `gqr0`..`gqr7`, `hid2` (i32 special), and the `lwarx` reservation
//!   (`resv` i1, `resv_addr` i32).

use rpt_ir::{Slot, SlotId, SlotLayout, SlotRole, StateDesc, Type};

/// General-purpose register `n` (0..31).
pub const fn gpr(n: u32) -> SlotId {
    SlotId(n)
}

/// Floating-point register `n` (0..31), which is also paired-single slot 0.
pub const fn fpr(n: u32) -> SlotId {
    SlotId(32 + n)
}

/// Paired-single slot 1 of FPR `n` (0..31).
pub const fn ps1(n: u32) -> SlotId {
    SlotId(64 + n)
}

/// CR field `n` (0..7).
pub const fn cr_field(n: u32) -> SlotId {
    SlotId(96 + n)
}

/// The whole XER.
pub const XER: SlotId = SlotId(104);
/// XER summary overflow.
pub const SO: SlotId = SlotId(105);
/// XER overflow.
pub const OV: SlotId = SlotId(106);
/// XER carry.
pub const CA: SlotId = SlotId(107);
/// XER byte count for `lswx`/`stswx` (bits 0..6).
pub const XER_BC: SlotId = SlotId(108);
/// The link register.
pub const LR: SlotId = SlotId(109);
/// The count register.
pub const CTR: SlotId = SlotId(110);
/// The floating-point status and control register.
pub const FPSCR: SlotId = SlotId(111);

/// Graphics quantisation register `n` (0..7).
pub const fn gqr(n: u32) -> SlotId {
    SlotId(112 + n)
}

/// HID2 (paired-single enable and the locked-cache bits live here on Gekko).
pub const HID2: SlotId = SlotId(120);
/// Whether a `lwarx` reservation is held.
pub const RESV: SlotId = SlotId(121);
/// The reserved address.
pub const RESV_ADDR: SlotId = SlotId(122);

/// Number of slots.
pub const SLOT_COUNT: usize = 123;

/// The registers the PowerPC SysV and EABI calling conventions let every function clobber that
/// carry no result: r0, r5..r12, f0 and f2..f13 (with their paired-single halves), cr0, cr1 and
/// cr5..cr7, ctr, lr and xer. r3 and r4 return integers (r4 the low half of a 64-bit one) and f1
/// a float, so they are kept.
pub fn scratch_registers() -> Vec<SlotId> {
    let mut out = vec![gpr(0)];
    out.extend((5..13).map(gpr));
    for n in std::iter::once(0).chain(2..14) {
        out.push(fpr(n));
        out.push(ps1(n));
    }
    out.extend([0, 1, 5, 6, 7].map(cr_field));
    out.extend([CTR, LR, XER]);
    out
}

/// The registers the PowerPC SysV and EABI calling conventions pass something through: r1 (the
/// stack pointer), r2 and r13 (the small-data anchors), r3..r10 and f1..f8 (arguments; r3, r4 and
/// f1 results), with their paired-single halves, and the modes code runs under: the FPSCR
/// (rounding), the GQRs (paired-single quantisation) and HID2.
pub fn call_registers() -> Vec<SlotId> {
    let mut out = vec![gpr(1), gpr(2), gpr(13)];
    out.extend((3..11).map(gpr));
    for n in 1..9 {
        out.push(fpr(n));
        out.push(ps1(n));
    }
    out.push(FPSCR);
    out.extend((0..8).map(gqr));
    out.push(HID2);
    out
}

/// The SPR numbers `mfspr`/`mtspr` reach, with their slots.
pub const SPRS: [(u32, SlotId, &str); 12] = [
    (1, XER, "xer"),
    (8, LR, "lr"),
    (9, CTR, "ctr"),
    (912, gqr(0), "gqr0"),
    (913, gqr(1), "gqr1"),
    (914, gqr(2), "gqr2"),
    (915, gqr(3), "gqr3"),
    (916, gqr(4), "gqr4"),
    (917, gqr(5), "gqr5"),
    (918, gqr(6), "gqr6"),
    (919, gqr(7), "gqr7"),
    (920, HID2, "hid2"),
];

fn slot(name: String, ty: Type, role: SlotRole, layout: SlotLayout) -> Slot {
    Slot { name, ty, role, layout }
}

/// Every slot in declaration order; the constants above are positions in this list.
fn slots() -> Vec<Slot> {
    let plain = |name: String, ty, role| slot(name, ty, role, SlotLayout::Plain);
    let packed = |name: &str, ty, parent, lsb, bits| {
        slot(
            name.to_string(),
            ty,
            SlotRole::Flag,
            SlotLayout::Packed { parent, lsb, bits },
        )
    };
    let mut out = Vec::with_capacity(SLOT_COUNT);
    out.extend((0..32).map(|n| plain(format!("r{n}"), Type::I32, SlotRole::Gpr)));
    out.extend((0..32).map(|n| plain(format!("f{n}"), Type::F64, SlotRole::Fpr)));
    out.extend((0..32).map(|n| plain(format!("ps1_{n}"), Type::F64, SlotRole::Fpr)));
    out.extend((0..8).map(|n| plain(format!("cr{n}"), Type::I8, SlotRole::Flag)));
    out.push(plain("xer".to_string(), Type::I32, SlotRole::Special));
    out.push(packed("so", Type::I1, XER, 31, 1));
    out.push(packed("ov", Type::I1, XER, 30, 1));
    out.push(packed("ca", Type::I1, XER, 29, 1));
    let mut bc = packed("xer_bc", Type::I8, XER, 0, 7);
    bc.role = SlotRole::Special;
    out.push(bc);
    for name in ["lr", "ctr", "fpscr"] {
        out.push(plain(name.to_string(), Type::I32, SlotRole::Special));
    }
    out.extend((0..8).map(|n| plain(format!("gqr{n}"), Type::I32, SlotRole::Special)));
    out.push(plain("hid2".to_string(), Type::I32, SlotRole::Special));
    out.push(plain("resv".to_string(), Type::I1, SlotRole::Special));
    out.push(plain("resv_addr".to_string(), Type::I32, SlotRole::Special));
    out
}

/// The PowerPC register file (the unit test below checks the table).
pub fn state_desc() -> StateDesc {
    StateDesc::from_table(slots())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constants_match_the_table() {
        let desc = state_desc();
        assert_eq!(desc.len(), SLOT_COUNT);
        let mut named = vec![
            (XER, "xer".to_string()),
            (SO, "so".to_string()),
            (OV, "ov".to_string()),
            (CA, "ca".to_string()),
            (XER_BC, "xer_bc".to_string()),
            (LR, "lr".to_string()),
            (CTR, "ctr".to_string()),
            (FPSCR, "fpscr".to_string()),
            (HID2, "hid2".to_string()),
            (RESV, "resv".to_string()),
            (RESV_ADDR, "resv_addr".to_string()),
        ];
        for n in 0..32 {
            named.push((gpr(n), format!("r{n}")));
            named.push((fpr(n), format!("f{n}")));
            named.push((ps1(n), format!("ps1_{n}")));
        }
        for n in 0..8 {
            named.push((cr_field(n), format!("cr{n}")));
            named.push((gqr(n), format!("gqr{n}")));
        }
        for (id, name) in named {
            assert_eq!(desc.find(&name), Some(id), "{name}");
        }
        for (_, id, name) in SPRS {
            assert_eq!(desc.find(name), Some(id), "{name}");
        }
    }
}
