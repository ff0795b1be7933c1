//! The x87 instruction oracle: each case is one x87 instruction form with a random x87 state
//! (stack contents with zeros, denormals, infinities, quiet and signalling NaNs; TOP; tags; the
//! control word with random precision and rounding control; the status word's flags), random
//! registers, flags and a stack window. It runs natively (tests/oracle/harness.c built with
//! `-DHARNESS_X87`: `frstor`, the code, `fnsave`) and lifted in the IR interpreter, and everything
//! must agree: the eight GPRs, EFLAGS, the window, and the whole x87 state (control word, status
//! word with TOP and the exception flags, the valid/empty tags, all eight physical registers,
//! empty ones included).
//! The lifted run happens twice: in the IR interpreter, and compiled to C by the emitter with
//! clang-19 for this x86-64 host and linked with the real runtime and x87.c (one driver program
//! runs every case; each case ends in `hlt`, whose exit the driver's guest part turns into a
//! `longjmp` back to its loop).
//!
//! Masked, per form, and only these: the condition codes the manual calls undefined after it.
//! Not generated: pseudo-denormals and unnormals (encodings no compiler produces; the unit would
//! treat them as it does natively, but the harness's tag computation does not classify them), and
//! unmasked exceptions (they would trap natively; the model does not trap).
//!
//! A fourth run compiles x87.c with `-DRPT_X87_SOFT`: the software unit AArch64 and LoongArch64
//! hosts use, checked here against the real FPU: exactly, but for the [`TRANSCENDENTAL`] forms,
//! which it must match within one unit in the last place (and not on operands outside the range
//! Intel defines them for, [`undefined_operand`]).
//!
//! `RPT_X87_FUZZ_CASES=N` sets the cases per form (default 30: about 3600 cases), for a longer run:
//! `RPT_X87_FUZZ_CASES=1000 cargo test -p rpt-guest-x86-pe --test oracle_x87`;
//! `RPT_X87_FUZZ_FORM="fprem"` runs one form.

mod common;

use common::{HarnessCase, HarnessResult};
// The emitter's test support lays out a generation's sources as `rpt` does.
#[path = "../../../framework/emit-c/tests/common/generation.rs"]
mod generation;

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

use iced_x86::IcedError;
use iced_x86::code_asm::*;
use rpt_api::{GuestImage, GuestOptions, GuestPlugin, Severity, SourceFile};
use rpt_guest_x86_pe::X86Pe;
use rpt_guest_x86_pe::interp::call_helper_in;
use rpt_guest_x86_pe::state::{FPU_CW, FPU_SW, FPU_TAGS, FPU_TOP, ST_E, ST_M};
use rpt_guest_x86_pe::x87::{F80, Fpu, Model, sw};
use rpt_ir::interp::Interpreter;
use rpt_ir::{AddrSpace, GuestAddr, Program};
use rpt_testkit::guest::{self, hex_text};
use rpt_testkit::interp::{HelperEnv, read_bytes};
use rpt_testkit::{Rng, assert_no_failures};

const CODE_ADDR: u64 = 0x1000;
const WINDOW: usize = 128;
const ARITH: u32 = 0x8d5;
const C0: u16 = sw::C0;
const C1: u16 = sw::C1;
const C2: u16 = sw::C2;
const C3: u16 = sw::C3;
/// Undefined after most instructions: C0, C2 and C3.
const C023: u16 = C0 | C2 | C3;
const ALL_C: u16 = C0 | C1 | C2 | C3;

/// An 80-bit value: specials, denormals, integers, values near 1 and across the whole range.
fn random_f80(rng: &mut Rng) -> F80 {
    let sign = if rng.below(2) == 0 { 0 } else { 0x8000 };
    let r = rng.next();
    let (m, e) = match rng.below(14) {
        0 => (0, 0),
        1 => (1 << 63, 0x7fff),
        2 => (0xc000_0000_0000_0000 | (r >> 2 & nan_payload_mask(rng)), 0x7fff),
        3 => (0x8000_0000_0000_0000 | ((r >> 2) | 1), 0x7fff),
        4 => (r >> 1 >> rng.below(60), 0),
        5 => {
            let f = f64::from_bits(rng.next());
            return from_f64(if f.is_finite() { f } else { 1.5 });
        }
        6 => {
            return from_f64((rng.below(20_000) as f64 - 10_000.0) / [1.0, 2.0, 4.0, 10.0][rng.below(4) as usize]);
        }
        7 => (r | 1 << 63, 0x3fff - 2 + rng.below(5) as u16),
        8 => (r | 1 << 63, 1 + rng.below(0x100) as u16),
        9 => (r | 1 << 63, 0x7ffe - rng.below(0x100) as u16),
        10 => (r | 1 << 63, 0x3fff + rng.below(64) as u16),
        _ => (r | 1 << 63, 0x3fff - 70 + rng.below(140) as u16),
    };
    F80 { m, se: e | sign }
}

/// Sometimes a NaN payload of zero (the indefinite when the sign is set).
fn nan_payload_mask(rng: &mut Rng) -> u64 {
    if rng.below(4) == 0 { 0 } else { u64::MAX }
}

fn from_f64(f: f64) -> F80 {
    let bits = f.to_bits();
    let sign = ((bits >> 63) as u16) << 15;
    let exp = ((bits >> 52) & 0x7ff) as i32;
    let frac = bits & ((1 << 52) - 1);
    if exp == 0 && frac == 0 {
        return F80 { m: 0, se: sign };
    }
    if exp == 0 {
        let shift = frac.leading_zeros();
        let m = frac << shift;
        return F80 {
            m,
            se: sign | (0x3fff - 1022 - (shift as i32 - 11)) as u16,
        };
    }
    F80 {
        m: 1 << 63 | frac << 11,
        se: sign | (exp - 1023 + 0x3fff) as u16,
    }
}

/// The starting state of a case.
#[derive(Clone)]
struct Setup {
    regs: [u32; 8],
    eflags: u32,
    window: [u8; WINDOW],
    fpu: Fpu,
}

/// Memory operands stay inside the window: esp-64 .. esp+64, ten bytes at most.
const OFFSETS: [i32; 6] = [-32, -13, -4, 0, 8, 21];

struct Gen<'a> {
    rng: &'a mut Rng,
    setup: &'a mut Setup,
}

impl Gen<'_> {
    fn st(&mut self) -> AsmRegisterSt {
        [st0, st1, st2, st3, st4, st5, st6, st7][self.rng.below(8) as usize]
    }
    /// A memory operand whose bytes hold `bytes` (or stay random, now and then).
    fn mem(&mut self, bytes: &[u8]) -> AsmMemoryOperand {
        let off = self.rng.pick(&OFFSETS);
        if self.rng.below(8) != 0 {
            let at = (WINDOW as i32 / 2 + off) as usize;
            self.setup.window[at..at + bytes.len()].copy_from_slice(bytes);
        }
        esp + off
    }
    fn m32f(&mut self) -> AsmMemoryOperand {
        let v = random_f80(self.rng);
        let f = f64::from_bits(to_f64_bits(v)) as f32;
        let bits = if self.rng.below(6) == 0 {
            self.rng.u32()
        } else {
            f.to_bits()
        };
        dword_ptr(self.mem(&bits.to_le_bytes()))
    }
    fn m64f(&mut self) -> AsmMemoryOperand {
        let v = random_f80(self.rng);
        let bits = if self.rng.below(6) == 0 {
            self.rng.next()
        } else {
            to_f64_bits(v)
        };
        qword_ptr(self.mem(&bits.to_le_bytes()))
    }
    fn m80(&mut self) -> AsmMemoryOperand {
        let v = random_f80(self.rng);
        tword_ptr(self.mem(&v.to_bytes()))
    }
    fn int(&mut self, bytes: usize) -> AsmMemoryOperand {
        let edges = [
            0u64,
            1,
            u64::MAX,
            0x7fff,
            0x8000,
            0x7fff_ffff,
            0x8000_0000,
            1 << 63,
            (1 << 63) - 1,
        ];
        let v = match self.rng.below(3) {
            0 => self.rng.pick(&edges),
            1 => self.rng.below(2000).wrapping_sub(1000),
            _ => self.rng.next(),
        };
        let m = self.mem(&v.to_le_bytes()[..bytes]);
        match bytes {
            2 => word_ptr(m),
            4 => dword_ptr(m),
            _ => qword_ptr(m),
        }
    }
    /// An empty 16-bit word in the window (for stores of status and control words).
    fn m16(&mut self) -> AsmMemoryOperand {
        word_ptr(self.mem(&[]))
    }
    /// A control word in memory for fldcw: every exception masked, random PC and RC.
    fn cw_mem(&mut self) -> AsmMemoryOperand {
        // Always written: random bytes could unmask exceptions, which would trap natively.
        let cw = random_cw(self.rng);
        let off = self.rng.pick(&OFFSETS);
        let at = (WINDOW as i32 / 2 + off) as usize;
        self.setup.window[at..at + 2].copy_from_slice(&cw.to_le_bytes());
        word_ptr(esp + off)
    }
}

/// The nearest f64 of an F80 by truncation (only to pick memory operands of every class).
fn to_f64_bits(v: F80) -> u64 {
    let sign = u64::from(v.se >> 15) << 63;
    let e = i32::from(v.se & 0x7fff);
    if e == 0x7fff {
        return sign | 0x7ff0_0000_0000_0000 | (v.m << 1 >> 12) | u64::from(v.m << 1 != 0) << 51;
    }
    let de = e - 0x3fff + 1023;
    if v.m == 0 || de <= 0 {
        return sign | (v.m >> 40 & 0xf_ffff_ffff);
    }
    if de >= 0x7ff {
        return sign | 0x7fef_ffff_ffff_ffff;
    }
    sign | (de as u64) << 52 | (v.m << 1 >> 12)
}

fn random_cw(rng: &mut Rng) -> u16 {
    // Half the cases run under fninit's word, which mingw programs keep and which generated code
    // on x86-64 handles on a path of its own (runtime/x87_values.h, X87_BY_CW).
    if rng.below(2) == 0 {
        return 0x037f;
    }
    let pc = [0u16, 2, 3][rng.below(3) as usize];
    let rc = rng.below(4) as u16;
    0x1040 | 0x3f | pc << 8 | rc << 10
}

type GenFn = fn(&mut CodeAssembler, &mut Gen<'_>) -> Result<(), IcedError>;

/// One instruction form and the condition codes the manual leaves undefined after it.
struct Template {
    name: &'static str,
    undefined: u16,
    build: GenFn,
}

macro_rules! t {
    ($v:ident, $name:expr, $undef:expr, |$a:ident, $g:ident| $body:expr) => {
        $v.push(Template {
            name: $name,
            undefined: $undef,
            build: |$a, $g| $body,
        });
    };
}

macro_rules! arith {
    ($v:ident, $op:ident, $op2:ident, $opp:ident, $iop:ident) => {
        t!($v, concat!(stringify!($op), " st0, st(i)"), C023, |a, g| a
            .$op2(st0, g.st()));
        t!($v, concat!(stringify!($op), " st(i), st0"), C023, |a, g| a
            .$op2(g.st(), st0));
        t!($v, concat!(stringify!($opp), " st(i), st0"), C023, |a, g| a
            .$opp(g.st(), st0));
        t!($v, concat!(stringify!($op), " m32"), C023, |a, g| a.$op(g.m32f()));
        t!($v, concat!(stringify!($op), " m64"), C023, |a, g| a.$op(g.m64f()));
        t!($v, concat!(stringify!($iop), " m16"), C023, |a, g| a
            .$iop(g.int(2)));
        t!($v, concat!(stringify!($iop), " m32"), C023, |a, g| a
            .$iop(g.int(4)));
    };
}

// The table reads as one row per form; a vec![] literal could not hold the macro rows.
#[allow(clippy::vec_init_then_push)]
fn templates() -> Vec<Template> {
    let mut v = Vec::new();
    t!(v, "fld m32", C023, |a, g| a.fld(g.m32f()));
    t!(v, "fld m64", C023, |a, g| a.fld(g.m64f()));
    t!(v, "fld m80", C023, |a, g| a.fld(g.m80()));
    t!(v, "fld st(i)", C023, |a, g| a.fld(g.st()));
    t!(v, "fild m16", C023, |a, g| a.fild(g.int(2)));
    t!(v, "fild m32", C023, |a, g| a.fild(g.int(4)));
    t!(v, "fild m64", C023, |a, g| a.fild(g.int(8)));
    t!(v, "fst m32", C023, |a, g| a.fst(dword_ptr(g.mem(&[]))));
    t!(v, "fst m64", C023, |a, g| a.fst(qword_ptr(g.mem(&[]))));
    t!(v, "fstp m32", C023, |a, g| a.fstp(dword_ptr(g.mem(&[]))));
    t!(v, "fstp m64", C023, |a, g| a.fstp(qword_ptr(g.mem(&[]))));
    t!(v, "fstp m80", C023, |a, g| a.fstp(tword_ptr(g.mem(&[]))));
    t!(v, "fst st(i)", C023, |a, g| a.fst(g.st()));
    t!(v, "fstp st(i)", C023, |a, g| a.fstp(g.st()));
    t!(v, "fist m16", C023, |a, g| a.fist(word_ptr(g.mem(&[]))));
    t!(v, "fist m32", C023, |a, g| a.fist(dword_ptr(g.mem(&[]))));
    t!(v, "fistp m16", C023, |a, g| a.fistp(word_ptr(g.mem(&[]))));
    t!(v, "fistp m32", C023, |a, g| a.fistp(dword_ptr(g.mem(&[]))));
    t!(v, "fistp m64", C023, |a, g| a.fistp(qword_ptr(g.mem(&[]))));
    t!(v, "fisttp m16", C023, |a, g| a.fisttp(word_ptr(g.mem(&[]))));
    t!(v, "fisttp m32", C023, |a, g| a.fisttp(dword_ptr(g.mem(&[]))));
    t!(v, "fisttp m64", C023, |a, g| a.fisttp(qword_ptr(g.mem(&[]))));
    arith!(v, fadd, fadd_2, faddp, fiadd);
    arith!(v, fmul, fmul_2, fmulp, fimul);
    arith!(v, fsub, fsub_2, fsubp, fisub);
    arith!(v, fsubr, fsubr_2, fsubrp, fisubr);
    arith!(v, fdiv, fdiv_2, fdivp, fidiv);
    arith!(v, fdivr, fdivr_2, fdivrp, fidivr);
    t!(v, "fcom st(i)", 0, |a, g| a.fcom_2(st0, g.st()));
    t!(v, "fcomp st(i)", 0, |a, g| a.fcomp_2(st0, g.st()));
    t!(v, "fcompp", 0, |a, _g| a.fcompp());
    t!(v, "fucom st(i)", 0, |a, g| a.fucom(st0, g.st()));
    t!(v, "fucomp st(i)", 0, |a, g| a.fucomp(st0, g.st()));
    t!(v, "fucompp", 0, |a, _g| a.fucompp());
    t!(v, "fcom m32", 0, |a, g| a.fcom(g.m32f()));
    t!(v, "fcom m64", 0, |a, g| a.fcom(g.m64f()));
    t!(v, "fcomp m64", 0, |a, g| a.fcomp(g.m64f()));
    t!(v, "ficom m16", 0, |a, g| a.ficom(g.int(2)));
    t!(v, "ficomp m32", 0, |a, g| a.ficomp(g.int(4)));
    t!(v, "fcomi", 0, |a, g| a.fcomi(st0, g.st()));
    t!(v, "fcomip", 0, |a, g| a.fcomip(st0, g.st()));
    t!(v, "fucomi", 0, |a, g| a.fucomi(st0, g.st()));
    t!(v, "fucomip", 0, |a, g| a.fucomip(st0, g.st()));
    t!(v, "ftst", 0, |a, _g| a.ftst());
    t!(v, "fxam", 0, |a, _g| a.fxam());
    t!(v, "fxch st(i)", C023, |a, g| a.fxch(st0, g.st()));
    t!(v, "ffree st(i)", ALL_C, |a, g| a.ffree(g.st()));
    t!(v, "fincstp", C023, |a, _g| a.fincstp());
    t!(v, "fdecstp", C023, |a, _g| a.fdecstp());
    t!(v, "fninit", 0, |a, _g| a.fninit());
    t!(v, "fnclex", ALL_C, |a, _g| a.fnclex());
    t!(v, "fnstsw ax", ALL_C, |a, _g| a.fnstsw(ax));
    t!(v, "fnstsw m16", ALL_C, |a, g| a.fnstsw(g.m16()));
    t!(v, "fnstcw m16", ALL_C, |a, g| a.fnstcw(g.m16()));
    t!(v, "fldcw m16", ALL_C, |a, g| a.fldcw(g.cw_mem()));
    t!(v, "fchs", C023, |a, _g| a.fchs());
    t!(v, "fabs", C023, |a, _g| a.fabs());
    t!(v, "fsqrt", C023, |a, _g| a.fsqrt());
    t!(v, "frndint", C023, |a, _g| a.frndint());
    t!(v, "fscale", C023, |a, _g| a.fscale());
    t!(v, "fprem", 0, |a, _g| a.fprem());
    t!(v, "fprem1", 0, |a, _g| a.fprem1());
    t!(v, "fxtract", C023, |a, _g| a.fxtract());
    t!(v, "f2xm1", C023, |a, _g| a.f2xm1());
    t!(v, "fyl2x", C023, |a, _g| a.fyl2x());
    t!(v, "fyl2xp1", C023, |a, _g| a.fyl2xp1());
    t!(v, "fpatan", C023, |a, _g| a.fpatan());
    t!(v, "fsin", C0 | C3, |a, _g| a.fsin());
    t!(v, "fcos", C0 | C3, |a, _g| a.fcos());
    t!(v, "fsincos", C0 | C3, |a, _g| a.fsincos());
    t!(v, "fptan", C0 | C3, |a, _g| a.fptan());
    t!(v, "fld1", C023, |a, _g| a.fld1());
    t!(v, "fldz", C023, |a, _g| a.fldz());
    t!(v, "fldpi", C023, |a, _g| a.fldpi());
    t!(v, "fldl2e", C023, |a, _g| a.fldl2e());
    t!(v, "fldl2t", C023, |a, _g| a.fldl2t());
    t!(v, "fldlg2", C023, |a, _g| a.fldlg2());
    t!(v, "fldln2", C023, |a, _g| a.fldln2());
    t!(v, "fcmovb", C023, |a, g| a.fcmovb(st0, g.st()));
    t!(v, "fcmove", C023, |a, g| a.fcmove(st0, g.st()));
    t!(v, "fcmovbe", C023, |a, g| a.fcmovbe(st0, g.st()));
    t!(v, "fcmovu", C023, |a, g| a.fcmovu(st0, g.st()));
    t!(v, "fcmovnb", C023, |a, g| a.fcmovnb(st0, g.st()));
    t!(v, "fcmovne", C023, |a, g| a.fcmovne(st0, g.st()));
    t!(v, "fcmovnbe", C023, |a, g| a.fcmovnbe(st0, g.st()));
    t!(v, "fcmovnu", C023, |a, g| a.fcmovnu(st0, g.st()));
    v
}

/// A random x87 state: TOP anywhere, usually a stack of a few values from TOP up, now and then
/// random tags; random flags; the control word with every exception masked.
fn random_fpu(rng: &mut Rng) -> Fpu {
    let top = rng.below(8) as u8;
    let tags = if rng.below(4) == 0 {
        rng.next() as u8
    } else {
        let depth = rng.below(9) as u32;
        let stack = ((1u32 << depth) - 1) as u8;
        stack.rotate_left(u32::from(top))
    };
    let mut regs = [F80::ZERO; 8];
    for r in &mut regs {
        *r = random_f80(rng);
    }
    let flags = (rng.next() as u16) & (sw::EXCEPTIONS | sw::SF | ALL_C);
    Fpu {
        cw: random_cw(rng),
        sw: flags,
        top,
        tags,
        regs,
    }
}

/// The transcendental forms: the software unit (runtime/x87_soft_transcendental.h) computes them
/// to 128 bits and rounds once, the CPU to within one unit in the last place (Intel's bound), so
/// the software unit is held to the CPU within one unit in the last place of each register, with
/// every status flag but C1 (which says how the rounding went) exact.
const TRANSCENDENTAL: [&str; 8] = [
    "f2xm1", "fsin", "fcos", "fsincos", "fptan", "fpatan", "fyl2x", "fyl2xp1",
];

/// Whether a case runs a form on an operand outside the range where Intel defines its result
/// (f2xm1 beyond [-1, 1], fyl2xp1 beyond +-(1 - sqrt(2)/2)): the CPU's answer there is its own,
/// and the software unit is not compared with it.
fn undefined_operand(case: &Case) -> bool {
    let fpu = &case.setup.fpu;
    let top = usize::from(fpu.top);
    if fpu.tags & (1 << top) == 0 {
        return false; // a stack underflow, compared exactly
    }
    let head = fpu.regs[top];
    let exp = head.se & 0x7fff;
    match case.name {
        "f2xm1" => exp != 0x7fff && (exp > 0x3fff || (exp == 0x3fff && head.m != 1 << 63)),
        // 1 - sqrt(2)/2 = 0x3ffd:95f619980c4336f4...
        "fyl2xp1" => exp != 0x7fff && (exp > 0x3ffd || (exp == 0x3ffd && head.m >= 0x95f6_1998_0c43_36f4)),
        _ => false,
    }
}

/// The position of a finite or infinite value among those of its sign, so that neighbours differ
/// by one (across exponents and the denormal boundary too).
fn ordinal(v: F80) -> i128 {
    let exp = i128::from(v.se & 0x7fff);
    if exp == 0 {
        i128::from(v.m)
    } else {
        (exp - 1) * (1 << 63) + i128::from(v.m)
    }
}

fn within_one_ulp(a: F80, b: F80) -> bool {
    a == b || (a.se & 0x8000 == b.se & 0x8000 && a.se & 0x7fff != 0x7fff && (ordinal(a) - ordinal(b)).abs() <= 1)
}

/// [`differences`] for the software unit: exact for every form but the transcendental ones, which
/// may differ by one unit in the last place and in C1.
fn soft_differences(case: &Case, native: &Outcome32, soft: &Outcome32) -> Vec<String> {
    if !TRANSCENDENTAL.contains(&case.name) {
        return differences(case, native, soft);
    }
    let mut near = soft.clone();
    for (n, s) in native.fpu.regs.iter().zip(near.fpu.regs.iter_mut()) {
        if within_one_ulp(*n, *s) {
            *s = *n;
        }
    }
    near.fpu.sw = (near.fpu.sw & !C1) | (native.fpu.sw & C1);
    differences(case, native, &near)
}

#[derive(Clone)]
struct Case {
    name: &'static str,
    undefined: u16,
    code: Vec<u8>,
    setup: Setup,
    /// Whether the lifted code goes through the x87-regions pass before it runs.
    regions: bool,
}

/// A case's code followed by `hlt`: the lifted function ends where the native run jumps to its
/// epilogue.
fn ending_in_hlt(case: &Case) -> Vec<u8> {
    let mut bytes = case.code.clone();
    bytes.push(0xf4);
    bytes
}

/// The lifted function of a case, after the x87-regions pass when the case asks for it.
fn lift_case(case: &Case, image: &GuestImage, entry: GuestAddr) -> rpt_api::LiftResult {
    let mut lifted = common::lift_verified(image, entry, &BTreeSet::from([entry]));
    if case.regions {
        let options = GuestOptions::new();
        let state = X86Pe.state(&options);
        let helpers = guest::helpers_of(&X86Pe, &options);
        rpt_pass_x87_regions::run_on_function(&mut lifted.function, &state, &helpers)
            .expect("the x86 guest has the x87 slots and helpers");
        let mut program = Program::new(state);
        program.helpers = helpers;
        program.functions.insert(entry, lifted.function.clone());
        if let Err(e) = rpt_ir::verify::verify_program(&program) {
            panic!("{}: the x87-regions pass's output does not verify: {e}", case.name);
        }
    }
    lifted
}

/// A case's random starting state: memory window, GPRs, flags and the x87 unit.
fn random_setup(rng: &mut Rng) -> Setup {
    let mut window = [0u8; WINDOW];
    for b in &mut window {
        *b = rng.next() as u8;
    }
    let mut regs = [0u32; 8];
    for r in &mut regs {
        *r = rng.u32();
    }
    Setup {
        regs,
        eflags: (rng.next() as u32 & ARITH) | 2,
        window,
        fpu: random_fpu(rng),
    }
}

fn make_cases(per_form: usize) -> Vec<Case> {
    let mut rng = Rng(0x8787_2024_0bad_f00d);
    let mut cases = Vec::new();
    for t in templates() {
        for _ in 0..per_form {
            let mut setup = random_setup(&mut rng);
            let mut asm = CodeAssembler::new(32).expect("32-bit assembler");
            let mut g = Gen {
                rng: &mut rng,
                setup: &mut setup,
            };
            (t.build)(&mut asm, &mut g).unwrap_or_else(|e| panic!("{}: {e}", t.name));
            let code = asm.assemble(CODE_ADDR).unwrap_or_else(|e| panic!("{}: {e}", t.name));
            cases.push(Case {
                name: t.name,
                undefined: t.undefined,
                code,
                setup,
                regions: false,
            });
        }
    }
    cases
}

/// The full tag of a physical register, as `fnsave` writes it: 0 valid, 1 zero, 2 special, 3 empty.
fn full_tag(fpu: &Fpu, p: usize) -> u16 {
    if fpu.tags >> p & 1 == 0 {
        return 3;
    }
    let v = fpu.regs[p];
    let e = v.se & 0x7fff;
    match (e, v.m) {
        (0x7fff, _) => 2,
        (0, 0) => 1,
        (0, _) => 2,
        (_, m) if m >> 63 == 0 => 2,
        _ => 0,
    }
}

/// The 108-byte `fsave` image of a state.
fn fsave_image(fpu: &Fpu) -> Vec<u8> {
    let mut b = vec![0u8; 108];
    b[0..2].copy_from_slice(&fpu.cw.to_le_bytes());
    b[4..6].copy_from_slice(&fpu.status_word().to_le_bytes());
    let tw = (0..8).fold(0u16, |tw, p| tw | full_tag(fpu, p) << (2 * p));
    b[8..10].copy_from_slice(&tw.to_le_bytes());
    for i in 0..8 {
        let p = (usize::from(fpu.top) + i) & 7;
        b[28 + 10 * i..38 + 10 * i].copy_from_slice(&fpu.regs[p].to_bytes());
    }
    b
}

/// The state an `fnsave` image describes.
fn from_fsave(b: &[u8]) -> Fpu {
    let word = |at: usize| u16::from_le_bytes([b[at], b[at + 1]]);
    let status = word(4);
    let top = ((status >> 11) & 7) as u8;
    let tw = word(8);
    let mut regs = [F80::ZERO; 8];
    let mut tags = 0u8;
    for i in 0..8 {
        let p = (usize::from(top) + i) & 7;
        let mut r = [0u8; 10];
        r.copy_from_slice(&b[28 + 10 * i..38 + 10 * i]);
        regs[p] = F80::from_bytes(r);
    }
    for p in 0..8 {
        if (tw >> (2 * p)) & 3 != 3 {
            tags |= 1 << p;
        }
    }
    Fpu {
        cw: word(0),
        sw: status & !sw::TOP,
        top,
        tags,
        regs,
    }
}

#[derive(Clone, Debug, PartialEq)]
struct Outcome32 {
    regs: [u32; 8],
    eflags: u32,
    window: Vec<u8>,
    fpu: Fpu,
}

/// Runs every case natively in one harness process; returns (esp at start, outcome) per case.
fn run_native(cases: &[Case]) -> Vec<(u32, Outcome32)> {
    let exe = common::native_harness("harness.c", "harness_x87", &["-DHARNESS_X87"]);
    let fsave_images: Vec<Vec<u8>> = cases.iter().map(|c| fsave_image(&c.setup.fpu)).collect();
    let inputs: Vec<HarnessCase> = cases
        .iter()
        .zip(&fsave_images)
        .map(|(c, fsave)| HarnessCase {
            code: &c.code,
            regs: c.setup.regs,
            eflags: c.setup.eflags,
            fields: vec![&c.setup.window, fsave],
        })
        .collect();
    common::run_harness(&exe, &inputs)
        .into_iter()
        .zip(cases)
        .map(|(result, case)| match result {
            HarnessResult::Done {
                esp_in,
                regs,
                eflags,
                fields,
            } => (
                esp_in,
                Outcome32 {
                    regs,
                    eflags,
                    window: fields[0].clone(),
                    fpu: from_fsave(&fields[1]),
                },
            ),
            fault => panic!("{}: the harness said {fault:?} for {}", case.name, hex_text(&case.code)),
        })
        .collect()
}

/// Lifts and interprets one case with the native run's starting esp.
fn run_lifted(case: &Case, stack: u32, model: Model) -> Result<Outcome32, String> {
    let image = common::code_image(CODE_ADDR, &ending_in_hlt(case));
    let entry = GuestAddr(CODE_ADDR);
    let lifted = lift_case(case, &image, entry);
    if let Some(d) = lifted.diagnostics.iter().find(|d| d.severity == Severity::Error) {
        return Err(format!("not lifted: {} at {}", d.message, d.addr));
    }
    let desc = rpt_guest_x86_pe::state::state_desc();
    let mut program = Program::new(desc.clone());
    for h in rpt_guest_x86_pe::x87::helpers() {
        program.helpers.insert(h.name.clone(), h);
    }
    program.functions.insert(entry, lifted.function);
    let mut interp = Interpreter::new(&program);
    let mut regs = case.setup.regs;
    regs[4] = stack;
    // DF stays clear: the cases' flags are the arithmetic ones only.
    common::set_registers(&mut interp.machine, regs, case.setup.eflags & ARITH);
    case.setup.fpu.to_machine(&desc, &mut interp.machine);
    let base = u64::from(stack) - (WINDOW as u64 / 2);
    interp
        .machine
        .memory
        .write_bytes(AddrSpace::RAM, base, &case.setup.window);
    match interp
        .run(
            entry,
            &mut HelperEnv::new(|name, args, m| call_helper_in(model, name, args, m)),
        )
        .map_err(|e| format!("interpreter: {e}"))?
    {
        halted if common::halted_at(&halted, CODE_ADDR + case.code.len() as u64) => {}
        other => return Err(format!("unexpected outcome {other:?}")),
    }
    let (out, eflags) = common::registers(&interp.machine);
    let window = read_bytes(&interp.machine, AddrSpace::RAM, base, WINDOW);
    // The slots the model keeps, read back directly so a slot the helpers forget shows up here.
    let mut fpu = Fpu::from_machine(&desc, &interp.machine);
    fpu.cw = interp.machine.state.get(&desc, FPU_CW).int() as u16;
    fpu.sw = interp.machine.state.get(&desc, FPU_SW).int() as u16;
    fpu.top = interp.machine.state.get(&desc, FPU_TOP).int() as u8;
    fpu.tags = interp.machine.state.get(&desc, FPU_TAGS).int() as u8;
    for p in 0..8u64 {
        fpu.regs[p as usize] = F80 {
            m: interp.machine.state.get_indexed(ST_M, p).int(),
            se: interp.machine.state.get_indexed(ST_E, p).int() as u16,
        };
    }
    Ok(Outcome32 {
        regs: out,
        eflags,
        window,
        fpu,
    })
}

/// One failing case for the test's message: its label, code, starting x87 state and differences.
fn describe_failure(label: &str, case: &Case, differences: &[String]) -> String {
    format!(
        "{label} ({})\n  in: {}\n  {}",
        hex_text(&case.code),
        show_fpu(&case.setup.fpu),
        differences.join("\n  ")
    )
}

fn show_fpu(f: &Fpu) -> String {
    let regs: Vec<String> = (0..8)
        .map(|p| {
            let tag = if f.tags >> p & 1 == 1 { "" } else { "(empty)" };
            format!("R{p}={:04x}:{:016x}{tag}", f.regs[p].se, f.regs[p].m)
        })
        .collect();
    format!("cw={:04x} sw={:04x} top={} {}", f.cw, f.sw, f.top, regs.join(" "))
}

fn differences(case: &Case, native: &Outcome32, lifted: &Outcome32) -> Vec<String> {
    let mut d = Vec::new();
    if native.regs != lifted.regs {
        d.push(format!("GPRs: native {:08x?} lifted {:08x?}", native.regs, lifted.regs));
    }
    if native.eflags & ARITH != lifted.eflags & ARITH {
        d.push(format!(
            "EFLAGS: native {:03x} lifted {:03x}",
            native.eflags & ARITH,
            lifted.eflags & ARITH
        ));
    }
    if native.window != lifted.window {
        d.push(format!(
            "window: native {} lifted {}",
            hex_text(&native.window),
            hex_text(&lifted.window)
        ));
    }
    let (n, l) = (&native.fpu, &lifted.fpu);
    let mask = !(case.undefined | sw::TOP);
    if n.cw != l.cw || n.sw & mask != l.sw & mask || n.top != l.top || n.tags != l.tags || n.regs != l.regs {
        d.push(format!("x87:\n    native {}\n    lifted {}", show_fpu(n), show_fpu(l)));
    }
    d
}

/// Where case `i`'s function lives for the compiled run.
fn case_addr(i: usize) -> u64 {
    0x0010_0000 + 64 * i as u64
}

/// The driver: reads each case's state, calls its lifted function, writes the state back.
const DRIVER: &str = r#"/* The x87 oracle's driver for compiled cases (tests/oracle_x87.rs). */
#define _DEFAULT_SOURCE 1
#include "cpu.h"
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#undef main

/* The guest part's hooks: each case ends in hlt, whose exit comes back to the loop. */
static jmp_buf case_done;
void rpt_guest_init(struct cpu *c, int argc, char **argv) { (void)c; (void)argc; (void)argv; }
int rpt_guest_finish(struct cpu *c) { (void)c; return 0; }
int rpt_guest_on_exit(struct cpu *c, uint64_t pc, int reason) { (void)c; (void)pc; (void)reason; longjmp(case_done, 1); }
uint64_t rpt_guest_caller(struct cpu *c) { (void)c; return 0; }

/* One case, little-endian: esp, 8 registers, eflags, the window, cw sw top tags, 8 x (m, se). */
struct wire {
	uint32_t regs[8], eflags;
	uint8_t window[128];
	uint16_t cw, sw;
	uint8_t top, tags;
	uint64_t m[8];
	uint16_t e[8];
};

static int get(void *p, size_t n) { return fread(p, 1, n, stdin) == n; }

int main(void)
{
	rpt_mem = mmap(NULL, ((uint64_t)1 << 32) + 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (rpt_mem == MAP_FAILED) return 4;
	uint32_t count;
	if (!get(&count, 4)) return 3;
	for (uint32_t i = 0; i < count; i++) {
		static struct wire w;
		static struct cpu cpu;
		uint32_t addr;
		if (!get(&addr, 4) || !get(w.regs, 36) || !get(w.window, 128) || !get(&w.cw, 2) || !get(&w.sw, 2) ||
		    !get(&w.top, 1) || !get(&w.tags, 1) || !get(w.m, 64) || !get(w.e, 16))
			return 3;
		memset(&cpu, 0, sizeof cpu);
		uint32_t *r[8] = { &cpu.eax, &cpu.ecx, &cpu.edx, &cpu.ebx, &cpu.esp, &cpu.ebp, &cpu.esi, &cpu.edi };
		for (int k = 0; k < 8; k++) *r[k] = w.regs[k];
		cpu.cf = w.eflags & 1; cpu.pf = w.eflags >> 2 & 1; cpu.af = w.eflags >> 4 & 1;
		cpu.zf = w.eflags >> 6 & 1; cpu.sf = w.eflags >> 7 & 1; cpu.of = w.eflags >> 11 & 1;
		cpu.fpu_cw = w.cw; cpu.fpu_sw = w.sw; cpu.fpu_top = w.top; cpu.fpu_tags = w.tags;
		for (int k = 0; k < 8; k++) { cpu.st_m[k] = w.m[k]; cpu.st_e[k] = w.e[k]; }
		uint32_t base = cpu.esp - 64;
		memcpy(rpt_mem + base, w.window, 128);
		rpt_fn f = rpt_lookup(addr);
		if (!f) return 5;
		if (!setjmp(case_done)) {
			f(&cpu);
			return 6; /* a case that returns instead of reaching its hlt */
		}
		for (int k = 0; k < 8; k++) w.regs[k] = *r[k];
		w.eflags = 2u | cpu.cf | cpu.pf << 2 | cpu.af << 4 | cpu.zf << 6 | cpu.sf << 7 | (uint32_t)cpu.of << 11;
		memcpy(w.window, rpt_mem + base, 128);
		w.cw = cpu.fpu_cw; w.sw = cpu.fpu_sw; w.top = cpu.fpu_top; w.tags = cpu.fpu_tags;
		for (int k = 0; k < 8; k++) { w.m[k] = cpu.st_m[k]; w.e[k] = cpu.st_e[k]; }
		fwrite(w.regs, 1, 36, stdout); fwrite(w.window, 1, 128, stdout);
		fwrite(&w.cw, 1, 2, stdout); fwrite(&w.sw, 1, 2, stdout); fwrite(&w.top, 1, 1, stdout);
		fwrite(&w.tags, 1, 1, stdout); fwrite(w.m, 1, 64, stdout); fwrite(w.e, 1, 16, stdout);
	}
	return 0;
}
"#;

/// Bytes per case the driver writes back.
const WIRE_OUT: usize = 36 + 128 + 6 + 64 + 16;

/// Which unit x87.c is compiled with.
#[derive(Clone, Copy)]
enum CUnit {
    /// The f80 model on this host's own x87.
    Host,
    /// The f80 model's software unit (AArch64 and LoongArch64 hosts).
    Soft,
    /// The f64 model (`x87: "f64"`).
    F64,
}

/// Lifts every case (ending in `hlt`) at its own address, compiles them all with the runtime and
/// the driver, runs the cases from the native runs' starting esp and returns the outcomes.
fn run_compiled(cases: &[Case], stacks: &[u32], unit: CUnit) -> Vec<Outcome32> {
    let regions = if cases.first().is_some_and(|c| c.regions) {
        "-regions"
    } else {
        ""
    };
    let dir = common::scratch(&format!(
        "{}{regions}",
        match unit {
            CUnit::Host => "oracle-x87-c",
            CUnit::Soft => "oracle-x87-soft",
            CUnit::F64 => "oracle-x87-f64",
        }
    ));
    let _ = std::fs::remove_dir_all(&dir);
    let plugin = X86Pe;
    let options = GuestOptions::new();
    let mut program = Program::new(plugin.state(&options));
    program.helpers = guest::helpers_of(&plugin, &options);
    for (i, case) in cases.iter().enumerate() {
        let entry = GuestAddr(case_addr(i));
        let image = common::code_image(entry.0, &ending_in_hlt(case));
        program.functions.insert(entry, lift_case(case, &image, entry).function);
    }
    let mut extra = vec![SourceFile {
        path: "driver.c".into(),
        contents: DRIVER.into(),
    }];
    extra.extend(
        plugin
            .runtime_sources("win32-console", &options)
            .expect("platform")
            .into_iter()
            // The x87 unit, and the header through which generated code runs its value forms
            // inline on this host.
            .filter(|f| f.path.contains("x87") || f.path == rpt_api::GUEST_INLINE_HEADER),
    );
    let entry = GuestAddr(case_addr(0));
    let memory = plugin.memory_model("win32-console", &options);
    let files = generation::generation_sources(
        &program,
        memory,
        &guest::image_without_segments(entry),
        entry,
        &extra,
        2,
        // Guest state in C locals (passes/state-in-memory), so every x87 helper runs between a
        // spill and a reload of the registers it may see.
        generation::Choices {
            state_in_locals: rpt_ir::RoleSet::of(&rpt_ir::SlotRole::ALL),
            ..generation::Choices::BASELINE
        },
    );
    let unit_flags: &[&str] = match unit {
        CUnit::Host => &[],
        CUnit::Soft => &["-DRPT_X87_SOFT"],
        CUnit::F64 => &["-DRPT_X87_F64"],
    };
    let exe = generation::build_driver(&dir, &files, unit_flags, "x87-driver");
    let mut input = (cases.len() as u32).to_le_bytes().to_vec();
    for (i, (case, &stack)) in cases.iter().zip(stacks).enumerate() {
        input.extend_from_slice(&(case_addr(i) as u32).to_le_bytes());
        let mut regs = case.setup.regs;
        regs[4] = stack;
        for r in regs {
            input.extend_from_slice(&r.to_le_bytes());
        }
        input.extend_from_slice(&case.setup.eflags.to_le_bytes());
        input.extend_from_slice(&case.setup.window);
        let f = &case.setup.fpu;
        input.extend_from_slice(&f.cw.to_le_bytes());
        input.extend_from_slice(&f.sw.to_le_bytes());
        input.extend_from_slice(&[f.top, f.tags]);
        for r in &f.regs {
            input.extend_from_slice(&r.m.to_le_bytes());
        }
        for r in &f.regs {
            input.extend_from_slice(&r.se.to_le_bytes());
        }
    }
    let out = rpt_testkit::run_tool(&mut Command::new(&exe), &input, "the compiled x87 driver");
    assert_eq!(out.stdout.len(), WIRE_OUT * cases.len(), "one state per case");
    out.stdout
        .chunks(WIRE_OUT)
        .map(|b| {
            let u32_at = |at: usize| u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]]);
            let u16_at = |at: usize| u16::from_le_bytes([b[at], b[at + 1]]);
            let mut regs = [0u32; 8];
            for (k, r) in regs.iter_mut().enumerate() {
                *r = u32_at(4 * k);
            }
            let f = 36 + 128;
            let mut fpu = Fpu {
                cw: u16_at(f),
                sw: u16_at(f + 2),
                top: b[f + 4],
                tags: b[f + 5],
                regs: [F80::ZERO; 8],
            };
            for k in 0..8 {
                let mut m = [0u8; 8];
                m.copy_from_slice(&b[f + 6 + 8 * k..f + 14 + 8 * k]);
                fpu.regs[k] = F80 {
                    m: u64::from_le_bytes(m),
                    se: u16_at(f + 70 + 2 * k),
                };
            }
            Outcome32 {
                regs,
                eflags: u32_at(32),
                window: b[36..36 + 128].to_vec(),
                fpu,
            }
        })
        .collect()
}

#[test]
fn x87_forms_agree_with_this_cpu() {
    let per_form = rpt_testkit::env_number("RPT_X87_FUZZ_CASES", 30) as usize;
    let only = std::env::var("RPT_X87_FUZZ_FORM").ok();
    let mut cases = make_cases(per_form);
    cases.retain(|c| only.as_deref().is_none_or(|o| o == c.name));
    let native = run_native(&cases);
    let stacks: Vec<u32> = native.iter().map(|(s, _)| *s).collect();
    let compiled = run_compiled(&cases, &stacks, CUnit::Host);
    // The software unit (what AArch64 and LoongArch64 hosts run), built here for this host.
    let soft_cases: Vec<usize> = (0..cases.len()).filter(|&i| !undefined_operand(&cases[i])).collect();
    let soft_input: Vec<Case> = soft_cases.iter().map(|&i| cases[i].clone()).collect();
    let soft_stacks: Vec<u32> = soft_cases.iter().map(|&i| stacks[i]).collect();
    let soft_out = run_compiled(&soft_input, &soft_stacks, CUnit::Soft);
    let mut soft: Vec<Option<&Outcome32>> = vec![None; cases.len()];
    for (k, &i) in soft_cases.iter().enumerate() {
        soft[i] = Some(&soft_out[k]);
    }
    let mut per_name: BTreeMap<&str, usize> = BTreeMap::new();
    // For the transcendental forms: (cases compared in the software unit, of which bit for bit).
    let mut soft_exact: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    let mut failures = Vec::new();
    for (((case, (stack, want)), from_c), from_soft) in cases.iter().zip(&native).zip(&compiled).zip(&soft) {
        *per_name.entry(case.name).or_default() += 1;
        if let Some(from_soft) = from_soft.filter(|_| TRANSCENDENTAL.contains(&case.name)) {
            let tally = soft_exact.entry(case.name).or_default();
            tally.0 += 1;
            tally.1 += usize::from(differences(case, want, from_soft).is_empty());
        }
        let problem = match run_lifted(case, *stack, Model::F80) {
            Ok(got) => {
                let mut d = differences(case, want, &got);
                d.extend(
                    differences(case, want, from_c)
                        .into_iter()
                        .map(|x| format!("compiled C: {x}")),
                );
                if let Some(from_soft) = from_soft {
                    let soft_d = soft_differences(case, want, from_soft);
                    d.extend(soft_d.into_iter().map(|x| format!("soft unit: {x}")));
                }
                (!d.is_empty()).then(|| d.join("\n  "))
            }
            Err(e) => Some(e),
        };
        if let Some(p) = problem {
            failures.push(format!(
                "{} ({})\n  in: {}\n  {p}",
                case.name,
                hex_text(&case.code),
                show_fpu(&case.setup.fpu)
            ));
        }
    }
    println!(
        "x87 oracle: {} cases in {} forms, each native, interpreted and compiled",
        cases.len(),
        per_name.len()
    );
    for (name, n) in &per_name {
        println!("  {n:4}  {name}");
    }
    for (name, (compared, exact)) in &soft_exact {
        println!(
            "  software unit, {name}: {exact} of {compared} bit for bit, the rest within one unit in the last place"
        );
    }
    let mut failing_forms: BTreeMap<&str, usize> = BTreeMap::new();
    for f in &failures {
        let name = f.split(" (").next().unwrap_or_default();
        if let Some(t) = per_name.keys().find(|k| **k == name) {
            *failing_forms.entry(t).or_default() += 1;
        }
    }
    let what = format!("cases differ from this CPU (failing forms: {failing_forms:?})");
    assert_no_failures(&failures, cases.len(), &what, 12);
}

/// The forms the x87-regions pass keeps in its regions (the sequence cases draw from these), by
/// name prefix.
const REGION_FORMS: [&str; 28] = [
    "fld ", "fild", "fst ", "fstp m32", "fstp m64", "fstp st", "fist", "fisttp", "fadd", "fmul", "fsub", "fdiv",
    "fiadd", "fimul", "fisub", "fidiv", "fcom", "fucom", "ficom", "fxch", "fchs", "fabs", "fsqrt", "frndint", "fld1",
    "fldz", "fldpi", "fldl",
];

/// Cases of two to six instructions drawn from [`REGION_FORMS`], lifted through the x87-regions
/// pass: runs the pass turns into one region, with stacks that make its guard pass or fail.
/// The name of a sequence with an `fld m80`: an earlier store of the sequence can overwrite part
/// of its operand and make an unnormal or pseudo-denormal, encodings the software unit does not
/// model (see the file's header), so only the interpreter and the host unit are held to the CPU.
const SEQUENCE_WITH_M80: &str = "sequence with fld m80";

fn make_sequence_cases(count: usize) -> Vec<Case> {
    let forms: Vec<Template> = templates()
        .into_iter()
        .filter(|t| REGION_FORMS.iter().any(|p| t.name.starts_with(p)))
        .collect();
    let mut rng = Rng(0x0005_e97e_9ce5_0f87);
    let mut cases = Vec::new();
    for _ in 0..count {
        let mut setup = random_setup(&mut rng);
        let mut asm = CodeAssembler::new(32).expect("32-bit assembler");
        let length = 2 + rng.below(5) as usize;
        let mut undefined = 0;
        let mut name = "sequence";
        for _ in 0..length {
            let t = &forms[rng.below(forms.len() as u64) as usize];
            let mut g = Gen {
                rng: &mut rng,
                setup: &mut setup,
            };
            (t.build)(&mut asm, &mut g).unwrap_or_else(|e| panic!("{}: {e}", t.name));
            // What the last instruction leaves undefined is what the sequence does.
            undefined = t.undefined;
            if t.name == "fld m80" {
                name = SEQUENCE_WITH_M80;
            }
        }
        let code = asm.assemble(CODE_ADDR).expect("a sequence assembles");
        cases.push(Case {
            name,
            undefined,
            code,
            setup,
            regions: true,
        });
    }
    cases
}

#[test]
fn x87_regions_agree_with_this_cpu() {
    let count = rpt_testkit::env_number("RPT_X87_FUZZ_CASES", 30) as usize * 50;
    let cases = make_sequence_cases(count);
    let native = run_native(&cases);
    let stacks: Vec<u32> = native.iter().map(|(s, _)| *s).collect();
    let compiled = run_compiled(&cases, &stacks, CUnit::Host);
    let soft = run_compiled(&cases, &stacks, CUnit::Soft);
    let mut regions = 0;
    let mut with_m80 = 0;
    let mut failures = Vec::new();
    for (i, case) in cases.iter().enumerate() {
        let (stack, want) = &native[i];
        let image = common::code_image(CODE_ADDR, &ending_in_hlt(case));
        let lifted = lift_case(case, &image, GuestAddr(CODE_ADDR));
        let value_forms = lifted
            .function
            .blocks
            .iter()
            .flat_map(|b| &b.insts)
            .any(|i| matches!(&i.kind, rpt_ir::InstKind::CallHelper { helper, .. } if helper.starts_with("x87_v")));
        regions += usize::from(value_forms);
        let mut d = match run_lifted(case, *stack, Model::F80) {
            Ok(got) => differences(case, want, &got),
            Err(e) => vec![e],
        };
        d.extend(
            differences(case, want, &compiled[i])
                .into_iter()
                .map(|x| format!("compiled C: {x}")),
        );
        if case.name == SEQUENCE_WITH_M80 {
            with_m80 += 1;
        } else {
            d.extend(
                differences(case, want, &soft[i])
                    .into_iter()
                    .map(|x| format!("soft unit: {x}")),
            );
        }
        if !d.is_empty() {
            failures.push(describe_failure(&format!("sequence {i}"), case, &d));
        }
    }
    println!(
        "x87 regions oracle: {} sequences of 2-6 instructions, {regions} of them rewritten into regions; \
         {with_m80} with an fld m80 not compared in the software unit",
        cases.len()
    );
    assert!(regions * 2 > cases.len(), "too few sequences became regions: {regions}");
    assert_no_failures(
        &failures,
        cases.len(),
        "sequences differ from this CPU with x87-regions",
        8,
    );
}

/// The forms whose f64-model results must equal the real unit's at 53-bit precision.
const F64_FORMS: [&str; 18] = [
    "fadd",
    "fmul",
    "fsub",
    "fdiv",
    "fiadd",
    "fimul",
    "fisub",
    "fidiv",
    "fld m64",
    "fld st(i)",
    "fst m64",
    "fstp m64",
    "fistp",
    "fsqrt",
    "fcom",
    "fucomi",
    "fchs",
    "frndint",
];

/// A double register of the f64 model in the 80-bit format, NaNs and infinities included.
fn widen_double(bits: u64) -> F80 {
    if bits & 0x7ff0_0000_0000_0000 != 0x7ff0_0000_0000_0000 {
        return from_f64(f64::from_bits(bits));
    }
    F80 {
        m: 1 << 63 | (bits & 0x000f_ffff_ffff_ffff) << 11,
        se: (bits >> 48) as u16 | 0x7fff,
    }
}

/// A normal double (or zero) well inside the exponent range: integers and halves now and then,
/// for the rounding of fistp and frndint.
fn normal_double(rng: &mut Rng) -> f64 {
    if rng.below(3) == 0 {
        (rng.below(20_000) as f64 - 10_000.0) / [1.0, 2.0, 4.0, 10.0][rng.below(4) as usize]
    } else {
        f64::from_bits((rng.next() & 0x800f_ffff_ffff_ffff) | (1023 - 60 + rng.below(120)) << 52)
    }
}

/// The f64 model on the arithmetic forms: at 53-bit precision (any rounding control), on normal
/// doubles, the interpreter and the compiled C agree on everything, and both agree with this CPU
/// on registers (as doubles), memory, GPRs, EFLAGS, TOP, tags and the compare codes. A case is
/// left out of the second comparison only when the CPU raised an exception flag other than a
/// stack fault's IE (a denormal, overflowing or invalid operand from the random memory window), or
/// when a result lies outside the double exponent range (which 53-bit precision keeps at 80-bit
/// width): the f64 model keeps no flags but IE, and its NaNs and exponent range are the double's.
/// Not compared: C1 (the round-up bit) and the precision flag, which the fast path does not keep.
#[test]
fn f64_model_matches_the_cpu_at_53_bit_precision() {
    let per_form = rpt_testkit::env_number("RPT_X87_FUZZ_CASES", 30) as usize;
    let mut rng = Rng(0x5353_f640_2026_1202);
    let mut cases = make_cases(per_form);
    cases.retain(|c| F64_FORMS.iter().any(|f| c.name.starts_with(f)));
    // f80-model states for the CPU, and the same states with double registers for the f64 model.
    let mut f64_cases = Vec::new();
    for case in &mut cases {
        case.setup.fpu.cw = (case.setup.fpu.cw & !0x0300) | 0x0200;
        let mut as_f64 = case.clone();
        for p in 0..8 {
            let d = normal_double(&mut rng);
            case.setup.fpu.regs[p] = from_f64(d);
            as_f64.setup.fpu.regs[p] = F80 { m: d.to_bits(), se: 0 };
        }
        f64_cases.push(as_f64);
    }
    let native = run_native(&cases);
    let stacks: Vec<u32> = native.iter().map(|(s, _)| *s).collect();
    let compiled = run_compiled(&f64_cases, &stacks, CUnit::F64);
    let mut failures = Vec::new();
    let mut compared = 0;
    for (((case, f64_case), (stack, want)), from_c) in cases.iter().zip(&f64_cases).zip(&native).zip(&compiled) {
        let got = match run_lifted(f64_case, *stack, Model::F64) {
            Ok(got) => got,
            Err(e) => {
                failures.push(format!("{}: {e}", case.name));
                continue;
            }
        };
        if got.regs != from_c.regs
            || got.eflags != from_c.eflags
            || got.window != from_c.window
            || got.fpu != from_c.fpu
        {
            failures.push(format!(
                "{} ({}): interpreter and compiled C differ\n    interpreted {}\n    compiled    {}",
                case.name,
                hex_text(&case.code),
                show_fpu(&got.fpu),
                show_fpu(&from_c.fpu)
            ));
        }
        let raised = want.fpu.sw & !case.setup.fpu.sw;
        let stack_fault = want.fpu.sw & sw::SF != 0;
        let beyond_doubles = want.fpu.regs.iter().any(|r| {
            let e = r.se & 0x7fff;
            r.m != 0 && e != 0x7fff && !(0x3fff - 1022..=0x3fff + 1023).contains(&e)
        });
        if beyond_doubles || (raised & (sw::EXCEPTIONS & !0x20) != 0 && !(stack_fault && raised & 0x1e == 0)) {
            continue;
        }
        compared += 1;
        let mut as_f80 = got.clone();
        for r in &mut as_f80.fpu.regs {
            *r = widen_double(r.m);
        }
        // Only what the model keeps: the codes, where defined, and the stack fault bit.
        let kept = (C0 | C2 | C3 | sw::SF) & !case.undefined;
        as_f80.fpu.sw = (as_f80.fpu.sw & kept) | (want.fpu.sw & !kept);
        let d = differences(case, want, &as_f80);
        if !d.is_empty() {
            failures.push(describe_failure(case.name, case, &d));
        }
    }
    println!(
        "x87 f64 model: {} cases, interpreted against compiled; {compared} of them against this CPU",
        cases.len()
    );
    assert!(
        compared * 2 > cases.len(),
        "too few cases compared with the CPU: {compared}"
    );
    assert_no_failures(&failures, cases.len(), "cases fail", 12);
}
