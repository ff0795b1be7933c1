//! The x86-32 register file as IR state slots (docs/c-abi.md, "x86 guest conventions").
//!
//! The table below is the single source of truth: the slot ids used by the lifter are
//! positions in it, and `state_desc` adds the slots in the same order, so the two cannot drift.

use rpt_ir::{Slot, SlotId, SlotLayout, SlotRole, StateDesc, Type};

/// Every slot: name, type and role, in declaration order.
pub const SLOTS: [(&str, Type, SlotRole); 33] = [
    ("eax", Type::I32, SlotRole::Gpr),
    ("ecx", Type::I32, SlotRole::Gpr),
    ("edx", Type::I32, SlotRole::Gpr),
    ("ebx", Type::I32, SlotRole::Gpr),
    ("esp", Type::I32, SlotRole::Gpr),
    ("ebp", Type::I32, SlotRole::Gpr),
    ("esi", Type::I32, SlotRole::Gpr),
    ("edi", Type::I32, SlotRole::Gpr),
    ("eip", Type::I32, SlotRole::Special),
    ("cf", Type::I1, SlotRole::Flag),
    ("pf", Type::I1, SlotRole::Flag),
    ("af", Type::I1, SlotRole::Flag),
    ("zf", Type::I1, SlotRole::Flag),
    ("sf", Type::I1, SlotRole::Flag),
    ("of", Type::I1, SlotRole::Flag),
    ("df", Type::I1, SlotRole::Special),
    // SSE: each xmm register as its low and high 64 bits (scalar code reads and writes the low
    // half; moves and bitwise operations also the high one), then MXCSR.
    ("xmm0_lo", Type::I64, SlotRole::Fpr),
    ("xmm0_hi", Type::I64, SlotRole::Fpr),
    ("xmm1_lo", Type::I64, SlotRole::Fpr),
    ("xmm1_hi", Type::I64, SlotRole::Fpr),
    ("xmm2_lo", Type::I64, SlotRole::Fpr),
    ("xmm2_hi", Type::I64, SlotRole::Fpr),
    ("xmm3_lo", Type::I64, SlotRole::Fpr),
    ("xmm3_hi", Type::I64, SlotRole::Fpr),
    ("xmm4_lo", Type::I64, SlotRole::Fpr),
    ("xmm4_hi", Type::I64, SlotRole::Fpr),
    ("xmm5_lo", Type::I64, SlotRole::Fpr),
    ("xmm5_hi", Type::I64, SlotRole::Fpr),
    ("xmm6_lo", Type::I64, SlotRole::Fpr),
    ("xmm6_hi", Type::I64, SlotRole::Fpr),
    ("xmm7_lo", Type::I64, SlotRole::Fpr),
    ("xmm7_hi", Type::I64, SlotRole::Fpr),
    ("mxcsr", Type::I32, SlotRole::Special),
];

/// `eax`.
pub const EAX: SlotId = SlotId(0);
/// `ecx`.
pub const ECX: SlotId = SlotId(1);
/// `edx`.
pub const EDX: SlotId = SlotId(2);
/// `ebx`.
pub const EBX: SlotId = SlotId(3);
/// `esp`.
pub const ESP: SlotId = SlotId(4);
/// `ebp`.
pub const EBP: SlotId = SlotId(5);
/// `esi`.
pub const ESI: SlotId = SlotId(6);
/// `edi`.
pub const EDI: SlotId = SlotId(7);
/// `eip`: kept for the runtime's benefit (resume, traces); lifted code does not maintain it.
pub const EIP: SlotId = SlotId(8);
/// The carry flag.
pub const CF: SlotId = SlotId(9);
/// The parity flag (even parity of the result's low byte).
pub const PF: SlotId = SlotId(10);
/// The auxiliary-carry flag (carry out of bit 3).
pub const AF: SlotId = SlotId(11);
/// The zero flag.
pub const ZF: SlotId = SlotId(12);
/// The sign flag.
pub const SF: SlotId = SlotId(13);
/// The overflow flag.
pub const OF: SlotId = SlotId(14);
/// The direction flag (string instructions step down when set).
pub const DF: SlotId = SlotId(15);

/// The position of a slot in [`SLOTS`], found at compile time, so the constants below stay right
/// wherever rows are added (a missing name fails the build).
const fn slot_index(name: &str) -> u32 {
    let mut i = 0;
    while i < SLOTS.len() {
        let row = SLOTS[i].0.as_bytes();
        let wanted = name.as_bytes();
        if row.len() == wanted.len() {
            let mut k = 0;
            while k < row.len() && row[k] == wanted[k] {
                k += 1;
            }
            if k == row.len() {
                return i as u32;
            }
        }
        i += 1;
    }
    panic!("no such slot in SLOTS")
}

/// The position of `xmm0_lo` in [`SLOTS`]; `xmmN_lo` and `xmmN_hi` follow in pairs.
const XMM_BASE: u32 = slot_index("xmm0_lo");

/// The slot holding the low 64 bits of `xmm<n>` (`n` < 8): the scalar lane of every SSE instruction.
pub const fn xmm_lo(n: u32) -> SlotId {
    SlotId(XMM_BASE + 2 * n)
}

/// The slot holding the high 64 bits of `xmm<n>` (`n` < 8).
pub const fn xmm_hi(n: u32) -> SlotId {
    SlotId(XMM_BASE + 2 * n + 1)
}

/// MXCSR: the SSE control and status register (rounding control in bits 13-14).
pub const MXCSR: SlotId = SlotId(slot_index("mxcsr"));

/// MXCSR after reset and at process start on Windows and Linux: every exception masked, round to
/// nearest, no flush-to-zero.
pub const MXCSR_DEFAULT: u32 = 0x1f80;
/// The x87 unit's slots follow the integer table (see [`crate::x87`] for what they hold): kept
/// after it, numbered from its length, so other register files appended later do not move them.
const X87_BASE: u32 = SLOTS.len() as u32;
/// The x87 control word (exception masks, PC in bits 8-9, RC in bits 10-11).
pub const FPU_CW: SlotId = SlotId(X87_BASE);
/// The x87 status word without its TOP field (bits 11-13 are kept zero here).
pub const FPU_SW: SlotId = SlotId(X87_BASE + 1);
/// The x87 stack top (0-7): st(i) is physical register (TOP + i) mod 8.
pub const FPU_TOP: SlotId = SlotId(X87_BASE + 2);
/// One bit per physical x87 register: set when it holds a value, clear when its tag is "empty".
pub const FPU_TAGS: SlotId = SlotId(X87_BASE + 3);
/// The significands (bits 0-63 of the 80-bit format) of the eight physical registers.
pub const ST_M: SlotId = SlotId(X87_BASE + 4);
/// Sign and exponent (bits 64-79 of the 80-bit format) of the eight physical registers.
pub const ST_E: SlotId = SlotId(X87_BASE + 5);
/// Not part of the guest's unit: the sign-and-exponent half of the last value-form x87 helper's
/// result (`x87_v*`, which the x87-regions pass calls), whose significand is the return value.
/// A helper returns one value, and an 80-bit register does not fit in one.
pub const FPU_RESULT_E: SlotId = SlotId(X87_BASE + 6);

/// The x87 slots in declaration order: name, type, role and, for arrays, the length.
const X87_SLOTS: [(&str, Type, SlotRole, Option<u32>); 7] = [
    ("fpu_cw", Type::I16, SlotRole::Special, None),
    ("fpu_sw", Type::I16, SlotRole::Special, None),
    ("fpu_top", Type::I8, SlotRole::Special, None),
    ("fpu_tags", Type::I8, SlotRole::Special, None),
    ("st_m", Type::I64, SlotRole::Fpr, Some(8)),
    ("st_e", Type::I16, SlotRole::Fpr, Some(8)),
    ("fpu_result_e", Type::I16, SlotRole::Special, None),
];

/// The eight general-purpose registers in encoding order (eax, ecx, edx, ebx, esp, ebp, esi, edi).
pub const GPRS: [SlotId; 8] = [EAX, ECX, EDX, EBX, ESP, EBP, ESI, EDI];

/// The six arithmetic flags in EFLAGS bit order (CF, PF, AF, ZF, SF, OF).
pub const ARITH_FLAGS: [(SlotId, u32); 6] = [(CF, 0), (PF, 2), (AF, 4), (ZF, 6), (SF, 7), (OF, 11)];

/// The x86-32 register file.
pub fn state_desc() -> StateDesc {
    let mut desc = StateDesc::new();
    for (name, ty, role) in SLOTS {
        // The names are fixed identifiers and distinct, so adding them cannot fail;
        // a failure would be a bug in the table above, caught by the unit test below.
        let added = desc.plain(name, ty, role);
        debug_assert!(added.is_ok(), "bad slot table entry {name}");
    }
    for (name, ty, role, len) in X87_SLOTS {
        let layout = match len {
            Some(len) => SlotLayout::Array { len },
            None => SlotLayout::Plain,
        };
        let added = desc.add(Slot {
            name: name.to_string(),
            ty,
            role,
            layout,
        });
        debug_assert!(added.is_ok(), "bad x87 slot table entry {name}");
    }
    desc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constants_match_the_table() {
        let desc = state_desc();
        assert_eq!(desc.len(), SLOTS.len() + X87_SLOTS.len());
        let named = [
            (EAX, "eax"),
            (ECX, "ecx"),
            (EDX, "edx"),
            (EBX, "ebx"),
            (ESP, "esp"),
            (EBP, "ebp"),
            (ESI, "esi"),
            (EDI, "edi"),
            (EIP, "eip"),
            (CF, "cf"),
            (PF, "pf"),
            (AF, "af"),
            (ZF, "zf"),
            (SF, "sf"),
            (OF, "of"),
            (DF, "df"),
            (MXCSR, "mxcsr"),
            (FPU_CW, "fpu_cw"),
            (FPU_SW, "fpu_sw"),
            (FPU_TOP, "fpu_top"),
            (FPU_TAGS, "fpu_tags"),
            (ST_M, "st_m"),
            (ST_E, "st_e"),
            (FPU_RESULT_E, "fpu_result_e"),
        ];
        for (id, name) in named {
            assert_eq!(desc.find(name), Some(id), "{name}");
        }
        for n in 0..8 {
            assert_eq!(desc.find(&format!("xmm{n}_lo")), Some(xmm_lo(n)), "xmm{n}_lo");
            assert_eq!(desc.find(&format!("xmm{n}_hi")), Some(xmm_hi(n)), "xmm{n}_hi");
        }
    }
}
