//! The x86-32 register file as IR state slots (docs/c-abi.md, "x86 guest conventions").
//!
//! The tables below are the single source of truth: every slot id the lifter uses is found in
//! them by name at compile time, and `state_desc` adds the slots in the same order, so the two
//! cannot drift.

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
pub const EAX: SlotId = slot("eax");
/// `ecx`.
pub const ECX: SlotId = slot("ecx");
/// `edx`.
pub const EDX: SlotId = slot("edx");
/// `ebx`.
pub const EBX: SlotId = slot("ebx");
/// `esp`.
pub const ESP: SlotId = slot("esp");
/// `ebp`.
pub const EBP: SlotId = slot("ebp");
/// `esi`.
pub const ESI: SlotId = slot("esi");
/// `edi`.
pub const EDI: SlotId = slot("edi");
/// `eip`: kept for the runtime's benefit (resume, traces); lifted code does not maintain it.
pub const EIP: SlotId = slot("eip");
/// The carry flag.
pub const CF: SlotId = slot("cf");
/// The parity flag (even parity of the result's low byte).
pub const PF: SlotId = slot("pf");
/// The auxiliary-carry flag (carry out of bit 3).
pub const AF: SlotId = slot("af");
/// The zero flag.
pub const ZF: SlotId = slot("zf");
/// The sign flag.
pub const SF: SlotId = slot("sf");
/// The overflow flag.
pub const OF: SlotId = slot("of");
/// The direction flag (string instructions step down when set).
pub const DF: SlotId = slot("df");

/// The slot called `name`: its position in [`SLOTS`] followed by [`X87_SLOTS`], which is where
/// `state_desc` adds it. Found at compile time, so the constants stay right wherever rows are
/// added (a missing name fails the build).
const fn slot(name: &str) -> SlotId {
    let mut i = 0;
    while i < SLOTS.len() {
        if same_name(SLOTS[i].0, name) {
            return SlotId(i as u32);
        }
        i += 1;
    }
    let mut k = 0;
    while k < X87_SLOTS.len() {
        if same_name(X87_SLOTS[k].0, name) {
            return SlotId((SLOTS.len() + k) as u32);
        }
        k += 1;
    }
    panic!("no such slot in SLOTS or X87_SLOTS")
}

/// `a == b`, which `const fn`s cannot say of strings.
const fn same_name(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut k = 0;
    while k < a.len() && a[k] == b[k] {
        k += 1;
    }
    k == a.len()
}

/// The position of `xmm0_lo` in [`SLOTS`]; `xmmN_lo` and `xmmN_hi` follow in pairs.
const XMM_BASE: u32 = slot("xmm0_lo").0;

/// The registers the i386 calling conventions (cdecl, stdcall, thiscall, fastcall) let every
/// function clobber that carry no result: `ecx` and `xmm1`..`xmm7`. `eax` and `edx` return values
/// (`edx` the high half of a 64-bit one), and `xmm0` is kept too: `__vectorcall` returns in it.
pub fn scratch_registers() -> Vec<SlotId> {
    let mut out = vec![ECX];
    for n in 1..8 {
        out.push(xmm_lo(n));
        out.push(xmm_hi(n));
    }
    out
}

/// The registers the i386 calling conventions pass something through: `esp`; `eax`, `ecx` and
/// `edx` (fastcall's and thiscall's arguments, gcc's regparm, results in `eax` and `edx`); `df`
/// (clear at every call and return); `xmm0` (`__vectorcall`'s result); and the x87 unit (a float
/// result in st0, the control word's precision and rounding) and MXCSR.
pub fn call_registers() -> Vec<SlotId> {
    vec![
        ESP,
        EAX,
        ECX,
        EDX,
        DF,
        MXCSR,
        FPU_CW,
        FPU_SW,
        FPU_TOP,
        FPU_TAGS,
        ST_M,
        ST_E,
        FPU_RESULT_E,
        xmm_lo(0),
        xmm_hi(0),
    ]
}

/// The slot holding the low 64 bits of `xmm<n>` (`n` < 8): the scalar lane of every SSE instruction.
pub const fn xmm_lo(n: u32) -> SlotId {
    SlotId(XMM_BASE + 2 * n)
}

/// The slot holding the high 64 bits of `xmm<n>` (`n` < 8).
pub const fn xmm_hi(n: u32) -> SlotId {
    SlotId(XMM_BASE + 2 * n + 1)
}

/// MXCSR: the SSE control and status register (rounding control in bits 13-14).
pub const MXCSR: SlotId = slot("mxcsr");

/// MXCSR after reset and at process start on Windows and Linux: every exception masked, round to
/// nearest, no flush-to-zero.
pub const MXCSR_DEFAULT: u32 = 0x1f80;
/// The x87 control word (exception masks, PC in bits 8-9, RC in bits 10-11).
pub const FPU_CW: SlotId = slot("fpu_cw");
/// The x87 status word without its TOP field (bits 11-13 are kept zero here).
pub const FPU_SW: SlotId = slot("fpu_sw");
/// The x87 stack top (0-7): st(i) is physical register (TOP + i) mod 8.
pub const FPU_TOP: SlotId = slot("fpu_top");
/// One bit per physical x87 register: set when it holds a value, clear when its tag is "empty".
pub const FPU_TAGS: SlotId = slot("fpu_tags");
/// The significands (bits 0-63 of the 80-bit format) of the eight physical registers.
pub const ST_M: SlotId = slot("st_m");
/// Sign and exponent (bits 64-79 of the 80-bit format) of the eight physical registers.
pub const ST_E: SlotId = slot("st_e");
/// Not part of the guest's unit: the sign-and-exponent half of the last value-form x87 helper's
/// result (`x87_v*`, which the x87-regions pass calls), whose significand is the return value.
/// A helper returns one value, and an 80-bit register does not fit in one.
pub const FPU_RESULT_E: SlotId = slot("fpu_result_e");

/// The x87 unit's slots (see [`crate::x87`] for what they hold) in declaration order: name, type,
/// role and, for arrays, the length. They follow the integer table, so other register files
/// appended to that later do not move them.
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
    let integer = SLOTS
        .into_iter()
        .map(|(name, ty, role)| (name, ty, role, SlotLayout::Plain));
    let x87 = X87_SLOTS.into_iter().map(|(name, ty, role, len)| {
        let layout = match len {
            Some(len) => SlotLayout::Array { len },
            None => SlotLayout::Plain,
        };
        (name, ty, role, layout)
    });
    StateDesc::from_table(integer.chain(x87).map(|(name, ty, role, layout)| Slot {
        name: name.to_string(),
        ty,
        role,
        layout,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tables_are_one_valid_register_file() {
        let desc = state_desc();
        assert_eq!(desc.len(), SLOTS.len() + X87_SLOTS.len());
        // Each slot is where the constants' lookup says.
        for (id, s) in desc.iter() {
            assert_eq!(slot(&s.name), id, "{}", s.name);
        }
        for n in 0..8 {
            assert_eq!(desc.find(&format!("xmm{n}_lo")), Some(xmm_lo(n)), "xmm{n}_lo");
            assert_eq!(desc.find(&format!("xmm{n}_hi")), Some(xmm_hi(n)), "xmm{n}_hi");
        }
    }
}
