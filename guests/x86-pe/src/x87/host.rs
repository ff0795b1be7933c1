//! The x87 operations, run by this machine's own x87 unit (x86-64 build hosts only).
//!
//! Each function loads its operands into the host's x87 stack under the guest's control word (with
//! every exception masked, so nothing traps), executes the very instruction the guest executes,
//! and reads back the results and the status word. That makes rounding under each precision and
//! rounding control, NaN propagation, denormals, the transcendental instructions' own accuracy and
//! the condition codes bit-identical to the real FPU by construction. `fninit` before and after
//! leaves the host's x87 state as Rust expects it (empty stack, its own control word restored).

// The one place this crate departs from the workspace's `unsafe_code = "deny"`: executing the
// real instruction is the point, and only inline assembly reaches it.
#![allow(unsafe_code)]

use std::arch::asm;

use super::{F80, Kind, op};

/// Runs `$body` with st(0) = `$a`, st(1) = `$b`; `$fix` (after the status word is read) must
/// leave exactly two values: they are returned as (st(0), st(1)).
macro_rules! two {
    ($cw:expr, $a:expr, $b:expr, [$($body:literal),*], [$($fix:literal),*]) => {{
        let a: [u8; 10] = $a.to_bytes();
        let b: [u8; 10] = $b.to_bytes();
        let cw: u16 = $cw | 0x3f;
        let mut save = 0u16;
        let mut sw = 0u16;
        let mut o0 = [0u8; 10];
        let mut o1 = [0u8; 10];
        // SAFETY: every pointer is to a live local of the accessed size; the x87 stack is empty
        // before (fninit) and after (fninit), and the caller's control word is put back.
        unsafe {
            asm!(
                "fnstcw word ptr [{save}]",
                "fninit",
                "fldcw word ptr [{cw}]",
                "fld tbyte ptr [{b}]",
                "fld tbyte ptr [{a}]",
                $($body,)*
                "fnstsw word ptr [{sw}]",
                $($fix,)*
                "fstp tbyte ptr [{o0}]",
                "fstp tbyte ptr [{o1}]",
                "fninit",
                "fldcw word ptr [{save}]",
                save = in(reg) &raw mut save,
                cw = in(reg) &raw const cw,
                a = in(reg) a.as_ptr(),
                b = in(reg) b.as_ptr(),
                sw = in(reg) &raw mut sw,
                o0 = in(reg) o0.as_mut_ptr(),
                o1 = in(reg) o1.as_mut_ptr(),
                out("st(0)") _, out("st(1)") _, out("st(2)") _, out("st(3)") _,
                out("st(4)") _, out("st(5)") _, out("st(6)") _, out("st(7)") _,
                options(nostack),
            );
        }
        (F80::from_bytes(o0), F80::from_bytes(o1), sw)
    }};
}

/// Converts memory bits to 80 bits with `$insn` (a load of the memory operand at `{m}`).
macro_rules! load {
    ($cw:expr, $bits:expr, $insn:literal) => {{
        let m: u64 = $bits;
        let cw: u16 = $cw | 0x3f;
        let mut save = 0u16;
        let mut sw = 0u16;
        let mut o0 = [0u8; 10];
        // SAFETY: as in `two!`.
        unsafe {
            asm!(
                "fnstcw word ptr [{save}]",
                "fninit",
                "fldcw word ptr [{cw}]",
                $insn,
                "fnstsw word ptr [{sw}]",
                "fstp tbyte ptr [{o0}]",
                "fninit",
                "fldcw word ptr [{save}]",
                save = in(reg) &raw mut save,
                cw = in(reg) &raw const cw,
                m = in(reg) &raw const m,
                sw = in(reg) &raw mut sw,
                o0 = in(reg) o0.as_mut_ptr(),
                out("st(0)") _, out("st(1)") _, out("st(2)") _, out("st(3)") _,
                out("st(4)") _, out("st(5)") _, out("st(6)") _, out("st(7)") _,
                options(nostack),
            );
        }
        (F80::from_bytes(o0), sw)
    }};
}

/// Converts 80 bits to memory bits with `$insn` (a popping store to the memory operand at `{m}`).
macro_rules! store {
    ($cw:expr, $v:expr, $insn:literal) => {{
        let a: [u8; 10] = $v.to_bytes();
        let cw: u16 = $cw | 0x3f;
        let mut save = 0u16;
        let mut sw = 0u16;
        let mut m = 0u64;
        // SAFETY: as in `two!`.
        unsafe {
            asm!(
                "fnstcw word ptr [{save}]",
                "fninit",
                "fldcw word ptr [{cw}]",
                "fld tbyte ptr [{a}]",
                $insn,
                "fnstsw word ptr [{sw}]",
                "fninit",
                "fldcw word ptr [{save}]",
                save = in(reg) &raw mut save,
                cw = in(reg) &raw const cw,
                a = in(reg) a.as_ptr(),
                sw = in(reg) &raw mut sw,
                m = in(reg) &raw mut m,
                out("st(0)") _, out("st(1)") _, out("st(2)") _, out("st(3)") _,
                out("st(4)") _, out("st(5)") _, out("st(6)") _, out("st(7)") _,
                options(nostack),
            );
        }
        (m, sw)
    }};
}

/// Runs `$insn`, an instruction with st(0) = `$a` and the memory operand at `{m}` holding `$bits`.
macro_rules! with_memory {
    ($cw:expr, $a:expr, $bits:expr, $insn:literal) => {{
        let a: [u8; 10] = $a.to_bytes();
        let m: u64 = $bits;
        let cw: u16 = $cw | 0x3f;
        let mut save = 0u16;
        let mut sw = 0u16;
        let mut o0 = [0u8; 10];
        // SAFETY: as in `two!`.
        unsafe {
            asm!(
                "fnstcw word ptr [{save}]",
                "fninit",
                "fldcw word ptr [{cw}]",
                "fld tbyte ptr [{a}]",
                $insn,
                "fnstsw word ptr [{sw}]",
                "fstp tbyte ptr [{o0}]",
                "fninit",
                "fldcw word ptr [{save}]",
                save = in(reg) &raw mut save,
                cw = in(reg) &raw const cw,
                a = in(reg) a.as_ptr(),
                m = in(reg) &raw const m,
                sw = in(reg) &raw mut sw,
                o0 = in(reg) o0.as_mut_ptr(),
                out("st(0)") _, out("st(1)") _, out("st(2)") _, out("st(3)") _,
                out("st(4)") _, out("st(5)") _, out("st(6)") _, out("st(7)") _,
                options(nostack),
            );
        }
        (F80::from_bytes(o0), sw)
    }};
}

/// Arithmetic with a memory operand, `a OP memory`, as the memory form of the instruction does it
/// (which flags a denormal operand only where the one instruction would).
pub(crate) fn arith_memory(cw: u16, which: u32, kind: Kind, a: F80, bits: u64) -> (F80, u16) {
    macro_rules! forms {
        ($($op:path => [$f32:literal, $f64:literal, $i16:literal, $i32:literal]),*) => {
            match which {
                $($op => match kind {
                    Kind::F32 => with_memory!(cw, a, bits, $f32),
                    Kind::F64 => with_memory!(cw, a, bits, $f64),
                    Kind::I16 => with_memory!(cw, a, bits, $i16),
                    _ => with_memory!(cw, a, bits, $i32),
                },)*
                _ => (F80::INDEFINITE, 0),
            }
        };
    }
    forms!(
        op::ADD => ["fadd dword ptr [{m}]", "fadd qword ptr [{m}]", "fiadd word ptr [{m}]", "fiadd dword ptr [{m}]"],
        op::MUL => ["fmul dword ptr [{m}]", "fmul qword ptr [{m}]", "fimul word ptr [{m}]", "fimul dword ptr [{m}]"],
        op::SUB => ["fsub dword ptr [{m}]", "fsub qword ptr [{m}]", "fisub word ptr [{m}]", "fisub dword ptr [{m}]"],
        op::SUBR => ["fsubr dword ptr [{m}]", "fsubr qword ptr [{m}]", "fisubr word ptr [{m}]", "fisubr dword ptr [{m}]"],
        op::DIV => ["fdiv dword ptr [{m}]", "fdiv qword ptr [{m}]", "fidiv word ptr [{m}]", "fidiv dword ptr [{m}]"],
        op::DIVR => ["fdivr dword ptr [{m}]", "fdivr qword ptr [{m}]", "fidivr word ptr [{m}]", "fidivr dword ptr [{m}]"]
    )
}

/// The status word of `fcom`/`ficom` of `a` with a memory operand.
pub(crate) fn compare_memory(cw: u16, kind: Kind, a: F80, bits: u64) -> u16 {
    match kind {
        Kind::F32 => with_memory!(cw, a, bits, "fcom dword ptr [{m}]").1,
        Kind::F64 => with_memory!(cw, a, bits, "fcom qword ptr [{m}]").1,
        Kind::I16 => with_memory!(cw, a, bits, "ficom word ptr [{m}]").1,
        _ => with_memory!(cw, a, bits, "ficom dword ptr [{m}]").1,
    }
}

/// Memory bits of `kind` as an 80-bit value (exact; SNaN and denormal operands flag IE and DE).
pub(crate) fn load(cw: u16, kind: Kind, bits: u64) -> (F80, u16) {
    match kind {
        Kind::F32 => load!(cw, bits, "fld dword ptr [{m}]"),
        Kind::F64 => load!(cw, bits, "fld qword ptr [{m}]"),
        Kind::I16 => load!(cw, bits, "fild word ptr [{m}]"),
        Kind::I32 => load!(cw, bits, "fild dword ptr [{m}]"),
        Kind::I64 => load!(cw, bits, "fild qword ptr [{m}]"),
        Kind::F80 => (F80::from_u128(u128::from(bits)), 0),
    }
}

/// An 80-bit value stored as `kind`, rounded by RC (`truncate`: the `fisttp` forms).
pub(crate) fn store(cw: u16, kind: Kind, truncate: bool, v: F80) -> (u64, u16) {
    let (bits, sw) = match (kind, truncate) {
        (Kind::F32, _) => store!(cw, v, "fstp dword ptr [{m}]"),
        (Kind::F64, _) => store!(cw, v, "fstp qword ptr [{m}]"),
        (Kind::I16, false) => store!(cw, v, "fistp word ptr [{m}]"),
        (Kind::I32, false) => store!(cw, v, "fistp dword ptr [{m}]"),
        (Kind::I64, false) => store!(cw, v, "fistp qword ptr [{m}]"),
        (Kind::I16, true) => store!(cw, v, "fisttp word ptr [{m}]"),
        (Kind::I32, true) => store!(cw, v, "fisttp dword ptr [{m}]"),
        (Kind::I64, true) => store!(cw, v, "fisttp qword ptr [{m}]"),
        (Kind::F80, _) => (v.m, 0),
    };
    (bits & kind.mask(), sw)
}

/// `a OP b` for the arithmetic operations (`op::ADD` ... `op::DIVR`; SUBR is `b - a`).
pub(crate) fn arith(cw: u16, which: u32, a: F80, b: F80) -> (F80, u16) {
    let (r, _, sw) = match which {
        op::ADD => two!(cw, a, b, ["fadd st(0), st(1)"], []),
        op::MUL => two!(cw, a, b, ["fmul st(0), st(1)"], []),
        op::SUB => two!(cw, a, b, ["fsub st(0), st(1)"], []),
        op::SUBR => two!(cw, a, b, ["fsubr st(0), st(1)"], []),
        op::DIV => two!(cw, a, b, ["fdiv st(0), st(1)"], []),
        _ => two!(cw, a, b, ["fdivr st(0), st(1)"], []),
    };
    (r, sw)
}

/// The status word of comparing `a` with `b` (`unordered`: fucom, which accepts quiet NaNs).
pub(crate) fn compare(cw: u16, unordered: bool, a: F80, b: F80) -> u16 {
    let (_, _, sw) = if unordered {
        two!(cw, a, b, ["fucom st(1)"], [])
    } else {
        two!(cw, a, b, ["fcom st(1)"], [])
    };
    sw
}

/// A one-operand instruction on st(0) = `a`: (new st(0), pushed value or junk, status word).
/// For fptan, fsincos and fxtract the first value replaces st(0) and the second is pushed.
pub(crate) fn unary(cw: u16, which: u32, a: F80) -> (F80, F80, u16) {
    let z = F80::ZERO;
    match which {
        op::FCHS => two!(cw, a, z, ["fchs"], []),
        op::FABS => two!(cw, a, z, ["fabs"], []),
        op::FSQRT => two!(cw, a, z, ["fsqrt"], []),
        op::FRNDINT => two!(cw, a, z, ["frndint"], []),
        op::F2XM1 => two!(cw, a, z, ["f2xm1"], []),
        op::FSIN => two!(cw, a, z, ["fsin"], []),
        op::FCOS => two!(cw, a, z, ["fcos"], []),
        op::FTST => two!(cw, a, z, ["ftst"], []),
        op::FXAM => two!(cw, a, z, ["fxam"], []),
        // Three values after these, the pushed one on top; `fstp st(2)` moves it over the unused
        // second operand, leaving (replacement, pushed).
        op::FPTAN => two!(cw, a, z, ["fptan"], ["fstp st(2)"]),
        op::FSINCOS => two!(cw, a, z, ["fsincos"], ["fstp st(2)"]),
        _ => two!(cw, a, z, ["fxtract"], ["fstp st(2)"]),
    }
}

/// A two-operand instruction on st(0) = `a`, st(1) = `b`: fscale/fprem/fprem1 give the new
/// st(0); fpatan/fyl2x/fyl2xp1 give the new st(1) (which becomes st(0) after their pop).
pub(crate) fn binary(cw: u16, which: u32, a: F80, b: F80) -> (F80, u16) {
    let (r, _, sw) = match which {
        op::FSCALE => two!(cw, a, b, ["fscale"], []),
        op::FPREM => two!(cw, a, b, ["fprem"], []),
        op::FPREM1 => two!(cw, a, b, ["fprem1"], []),
        op::FPATAN => two!(cw, a, b, ["fpatan"], ["fld st(0)"]),
        op::FYL2X => two!(cw, a, b, ["fyl2x"], ["fld st(0)"]),
        _ => two!(cw, a, b, ["fyl2xp1"], ["fld st(0)"]),
    };
    (r, sw)
}

/// One of the constants of fld1 ... fldln2, rounded as RC says (the unit holds them wider).
pub(crate) fn constant(cw: u16, which: u32) -> F80 {
    let z = F80::ZERO;
    let (r, _, _) = match which {
        op::FLD1 => two!(cw, z, z, ["fld1"], ["fstp st(1)"]),
        op::FLDZ => two!(cw, z, z, ["fldz"], ["fstp st(1)"]),
        op::FLDPI => two!(cw, z, z, ["fldpi"], ["fstp st(1)"]),
        op::FLDL2E => two!(cw, z, z, ["fldl2e"], ["fstp st(1)"]),
        op::FLDL2T => two!(cw, z, z, ["fldl2t"], ["fstp st(1)"]),
        op::FLDLG2 => two!(cw, z, z, ["fldlg2"], ["fstp st(1)"]),
        _ => two!(cw, z, z, ["fldln2"], ["fstp st(1)"]),
    };
    r
}
