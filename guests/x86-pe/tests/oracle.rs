//! The instruction oracle: lifted instruction sequences, run in the IR reference interpreter (as
//! one lifted function, and instruction by instruction as the run-time tier runs code discovery
//! missed), must leave the eight GPRs, the six arithmetic flags, DF and a 128-byte stack window
//! exactly as the same bytes leave them when this machine's CPU runs them natively
//! (tests/oracle/harness.c).
//!
//! Flags the manual calls undefined are masked per case, and only those:
//! - and/or/xor/test: AF.
//! - shl/shr/sar by a nonzero 5-bit count: AF; OF unless the count is 1; for 8- and 16-bit shl/shr
//!   by a count at least the width, CF.
//! - rol/ror by a nonzero 5-bit count: OF unless the count is 1.
//! - shld/shrd by a nonzero count: AF; OF unless the count is 1.
//! - mul/imul: SF, ZF, AF, PF. div/idiv: all six.
//! - bt/bts/btr/btc: OF, SF, AF, PF. bsf/bsr: CF, OF, SF, AF, PF.
//!
//! Division cases include zero divisors and overflowing quotients: the native run faults (#DE,
//! SIGFPE) and the lifted code must exit with `divide_error`.

mod common;

use common::{HarnessCase, HarnessResult};

use std::collections::{BTreeMap, BTreeSet};

use iced_x86::IcedError;
use iced_x86::code_asm::*;
use rpt_api::{GuestOptions, GuestPlugin, Severity};
use rpt_guest_x86_pe::X86Pe;
use rpt_ir::interp::{Interpreter, NoEnvironment, Outcome};
use rpt_ir::{AddrSpace, ExitReason, GuestAddr, Program};
use rpt_testkit::guest::hex_text;
use rpt_testkit::interp::{read_bytes, run_tier};
use rpt_testkit::{INT_EDGES, Rng};

const CF: u32 = 1 << 0;
const PF: u32 = 1 << 2;
const AF: u32 = 1 << 4;
const ZF: u32 = 1 << 6;
const SF: u32 = 1 << 7;
const DF_BIT: u32 = 1 << 10;
const OF: u32 = 1 << 11;
const ARITH: u32 = CF | PF | AF | ZF | SF | OF;
const CODE_ADDR: u64 = 0x1000;
const GPR_NAMES: [&str; 8] = ["eax", "ecx", "edx", "ebx", "esp", "ebp", "esi", "edi"];
const WINDOW: usize = 128;
const CASES_PER_TEMPLATE: usize = 48;

/// A 32-bit value, biased towards the edges where flags change.
fn value(rng: &mut Rng) -> u32 {
    rng.edgy_u32(&INT_EDGES)
}

/// A shift or rotate count: a third of the time one next to a width, else any 5-bit count.
fn shift_count(rng: &mut Rng) -> u32 {
    match rng.below(3) {
        0 => rng.pick(&[0, 1, 2, 7, 8, 9, 15, 16, 17, 31, 32, 33]),
        _ => rng.below(32) as u32,
    }
}

const R32: [AsmRegister32; 8] = [eax, ecx, edx, ebx, esp, ebp, esi, edi];
const R16: [AsmRegister16; 8] = [ax, cx, dx, bx, sp, bp, si, di];
const R8: [AsmRegister8; 8] = [al, cl, dl, bl, ah, ch, dh, bh];
/// Memory operands stay inside the stack window: esp-64 .. esp+64.
const OFFSETS: [i32; 8] = [-32, -13, -4, 0, 4, 8, 21, 40];

/// The registers, flags and stack window a case starts with.
#[derive(Clone)]
struct Setup {
    regs: [u32; 8],
    eflags: u32,
    window: [u8; WINDOW],
}

impl Setup {
    fn random(rng: &mut Rng) -> Setup {
        let mut regs = [0; 8];
        for r in &mut regs {
            *r = value(rng);
        }
        let mut window = [0; WINDOW];
        for b in &mut window {
            *b = rng.next() as u8;
        }
        Setup {
            regs,
            eflags: (rng.next() as u32 & ARITH) | 2,
            window,
        }
    }
}

/// Picks registers (never esp) and remembers the setup, so generators can shape inputs.
struct Gen<'a> {
    rng: &'a mut Rng,
    setup: &'a mut Setup,
}

/// The operands the tables name (`r32`, `imm8`, `m16`, ...) are the methods of the same names.
impl Gen<'_> {
    fn idx(&mut self) -> usize {
        self.rng.pick(&[0, 1, 2, 3, 5, 6, 7])
    }
    fn r32(&mut self) -> AsmRegister32 {
        let i = self.idx();
        R32[i]
    }
    fn r16(&mut self) -> AsmRegister16 {
        let i = self.idx();
        R16[i]
    }
    fn r8(&mut self) -> AsmRegister8 {
        R8[self.rng.below(8) as usize]
    }
    fn imm32(&mut self) -> i32 {
        value(self.rng) as i32
    }
    fn imm8(&mut self) -> i32 {
        value(self.rng) as i8 as i32
    }
    /// A bit number of a 16-bit operand, with the high bits an immediate may carry.
    fn imm6(&mut self) -> i32 {
        self.imm8() & 0x3f
    }
    /// A bit number of a 32-bit memory operand.
    fn imm5(&mut self) -> i32 {
        self.imm8() & 0x1f
    }
    fn mem(&mut self) -> AsmMemoryOperand {
        let off = self.rng.pick(&OFFSETS);
        esp + off
    }
    fn m32(&mut self) -> AsmMemoryOperand {
        dword_ptr(self.mem())
    }
    fn m16(&mut self) -> AsmMemoryOperand {
        word_ptr(self.mem())
    }
    fn m8(&mut self) -> AsmMemoryOperand {
        byte_ptr(self.mem())
    }
    /// Sets ecx to a random value whose low 5 bits are a shift count; returns the masked count.
    fn cl_count(&mut self) -> u32 {
        let c = shift_count(self.rng);
        self.setup.regs[1] = (self.rng.next() as u32 & !0xff) | c;
        c & 31
    }
}

type GenFn = fn(&mut CodeAssembler, &mut Gen<'_>) -> Result<u32, IcedError>;

/// One instruction form: a generator that assembles it and returns the flags it leaves undefined.
struct Template {
    name: &'static str,
    build: GenFn,
}

/// Flags undefined after a shift of a `width`-bit operand by the 5-bit count `c`.
fn shift_undefined(c: u32, width: u32, shl_or_shr: bool) -> u32 {
    if c == 0 {
        return 0;
    }
    let mut m = AF;
    if c != 1 {
        m |= OF;
    }
    if shl_or_shr && c >= width {
        m |= CF;
    }
    m
}

fn rotate_undefined(c: u32) -> u32 {
    if c == 0 || c == 1 { 0 } else { OF }
}

macro_rules! t {
    ($v:ident, $name:expr, |$a:ident, $g:ident| $body:block) => {
        $v.push(Template {
            name: $name,
            build: |$a, $g| $body,
        });
    };
}

/// The width in bits of a register or memory operand named as the tables name them (`r16`, `m8`).
fn width_of(operand: &str) -> u32 {
    operand[1..].parse().expect("an operand named by its kind and width")
}

/// A form's name: the given one, or the mnemonic and its operands (`add r32, imm8`).
macro_rules! form_name {
    ($op:ident;;) => {
        stringify!($op)
    };
    ($op:ident; $first:ident $(, $rest:ident)*;) => {
        concat!(stringify!($op), " ", stringify!($first) $(, ", ", stringify!($rest))*)
    };
    ($op:ident; $($operand:ident),*; $name:literal) => {
        $name
    };
}

/// A table of one-instruction forms that leave the same flags undefined: one row per form, the
/// assembler method and its operands, each drawn by the `Gen` method of its name (and the form's
/// name where the method's is not it).
macro_rules! forms {
    ($v:ident, $undef:expr; $($op:ident($($operand:ident),*) $(as $name:literal)?),* $(,)?) => {
        $(t!($v, form_name!($op; $($operand),*; $($name)?), |a, g| {
            let _ = &g; // Forms without operands draw nothing.
            a.$op($(g.$operand()),*)?;
            Ok($undef)
        });)*
    };
}

/// Shifts and rotates: one row per form, its destination and its count (`imm`: a random count,
/// `cl`: ecx set to one, `1`); `$undef` maps the masked count and the width to the flags left
/// undefined.
macro_rules! shift_forms {
    ($v:ident, $undef:expr; $($op:ident($dest:ident, $count:tt)),* $(,)?) => {
        $(shift_forms!(@one $v, $undef, $op, $dest, $count);)*
    };
    (@one $v:ident, $undef:expr, $op:ident, $dest:ident, imm) => {
        t!($v, concat!(stringify!($op), " ", stringify!($dest), ", imm"), |a, g| {
            let c = shift_count(g.rng);
            a.$op(g.$dest(), c)?;
            Ok(($undef)(c & 31, width_of(stringify!($dest))))
        });
    };
    (@one $v:ident, $undef:expr, $op:ident, $dest:ident, cl) => {
        t!($v, concat!(stringify!($op), " ", stringify!($dest), ", cl"), |a, g| {
            let c = g.cl_count();
            a.$op(g.$dest(), cl)?;
            Ok(($undef)(c, width_of(stringify!($dest))))
        });
    };
    (@one $v:ident, $undef:expr, $op:ident, $dest:ident, 1) => {
        t!($v, concat!(stringify!($op), " ", stringify!($dest), ", 1"), |a, g| {
            a.$op(g.$dest(), 1)?;
            Ok(($undef)(1, width_of(stringify!($dest))))
        });
    };
}

/// The forms of a two-operand ALU instruction; `with_load` adds the register-from-memory forms.
macro_rules! alu {
    ($v:ident, $op:ident, $undef:expr) => {
        forms!($v, $undef;
            $op(r32, r32), $op(r16, r16), $op(r8, r8), $op(r32, imm32), $op(r32, imm8), $op(r16, imm8),
            $op(r8, imm8), $op(m32, r32), $op(m8, imm8), $op(m16, r16));
    };
    ($v:ident, $op:ident, $undef:expr, with_load) => {
        alu!($v, $op, $undef);
        forms!($v, $undef; $op(r32, m32), $op(r8, m8));
    };
}

macro_rules! unary {
    ($v:ident, $op:ident) => {
        forms!($v, 0; $op(r32), $op(r16), $op(r8), $op(m32), $op(m8));
    };
}

macro_rules! shift {
    ($v:ident, $op:ident, $shl_or_shr:expr) => {
        shift_forms!($v, |c, width| shift_undefined(c, width, $shl_or_shr);
            $op(r32, imm), $op(r16, imm), $op(r8, imm), $op(r32, 1), $op(r32, cl), $op(r16, cl), $op(r8, cl),
            $op(m32, imm), $op(m8, cl));
    };
}

macro_rules! rotate {
    ($v:ident, $op:ident) => {
        shift_forms!($v, |c, _width| rotate_undefined(c);
            $op(r32, imm), $op(r16, imm), $op(r8, imm), $op(r32, cl), $op(r8, cl), $op(m16, 1));
    };
}

/// `div` or `idiv` of a register of each width; the divisor is picked first so the setup can
/// shape the dividend around it.
macro_rules! divide {
    ($v:ident, $op:ident, $signed:expr) => {
        t!($v, concat!(stringify!($op), " r32"), |a, g| {
            let d = g.idx();
            divide_setup(g, $signed, 32, Some(d));
            a.$op(R32[d])?;
            Ok(ARITH)
        });
        t!($v, concat!(stringify!($op), " r16"), |a, g| {
            let d = g.idx();
            divide_setup(g, $signed, 16, Some(d));
            a.$op(R16[d])?;
            Ok(ARITH)
        });
        t!($v, concat!(stringify!($op), " r8"), |a, g| {
            let d = g.idx().min(3);
            divide_setup(g, $signed, 8, Some(d));
            a.$op(R8[d])?;
            Ok(ARITH)
        });
    };
}

macro_rules! conditions {
    ($v:ident, $(($set:ident, $cmov:ident, $j:ident)),*) => {
        $(
            t!($v, stringify!($set), |a, g| { a.$set(g.r8())?; Ok(0) });
            t!($v, concat!(stringify!($set), " m8"), |a, g| { a.$set(byte_ptr(g.mem()))?; Ok(0) });
            t!($v, concat!(stringify!($cmov), " r32, r32"), |a, g| { a.$cmov(g.r32(), g.r32())?; Ok(0) });
            t!($v, concat!(stringify!($cmov), " r16, m16"), |a, g| { a.$cmov(g.r16(), word_ptr(g.mem()))?; Ok(0) });
            t!($v, stringify!($j), |a, g| {
                let mut skip = a.create_label();
                a.$j(skip)?;
                a.mov(g.r32(), g.imm32())?;
                a.set_label(&mut skip)?;
                a.inc(g.r32())?;
                Ok(0)
            });
            // Right after the instruction that set the flags, the lifter asks the condition of
            // that instruction's operands directly (lift/flags.rs): every such pairing, at every
            // width, and the ones where something between must stop it.
            t!($v, concat!("cmp r32, r32; ", stringify!($set)), |a, g| {
                a.cmp(g.r32(), g.r32())?;
                a.$set(g.r8())?;
                Ok(0)
            });
            t!($v, concat!("cmp r8, imm8; ", stringify!($j)), |a, g| {
                a.cmp(g.r8(), g.imm8())?;
                jump_over_mov!(a, g, $j);
                Ok(0)
            });
            t!($v, concat!("sub r16, m16; ", stringify!($cmov)), |a, g| {
                a.sub(g.r16(), g.m16())?;
                a.$cmov(g.r32(), g.r32())?;
                Ok(0)
            });
            t!($v, concat!("cmp m32, imm32; mov; ", stringify!($j)), |a, g| {
                a.cmp(g.m32(), g.imm32())?;
                a.mov(g.r32(), g.r32())?;
                jump_over_mov!(a, g, $j);
                Ok(0)
            });
            t!($v, concat!("neg r32; ", stringify!($set)), |a, g| {
                a.neg(g.r32())?;
                a.$set(g.r8())?;
                Ok(0)
            });
            t!($v, concat!("test r32, r32; ", stringify!($j)), |a, g| {
                a.test(g.r32(), g.r32())?;
                jump_over_mov!(a, g, $j);
                Ok(AF)
            });
            t!($v, concat!("and r8, r8; ", stringify!($set)), |a, g| {
                a.and(g.r8(), g.r8())?;
                a.$set(g.r8())?;
                Ok(AF)
            });
            t!($v, concat!("cmp r32, r32; inc; ", stringify!($j)), |a, g| {
                a.cmp(g.r32(), g.r32())?;
                a.inc(g.r32())?;
                jump_over_mov!(a, g, $j);
                Ok(0)
            });
            t!($v, concat!("sbb r32, r32; ", stringify!($set)), |a, g| {
                a.sbb(g.r32(), g.r32())?;
                a.$set(g.r8())?;
                Ok(0)
            });
            t!($v, concat!("add r16, imm8; ", stringify!($set)), |a, g| {
                a.add(g.r16(), g.imm8())?;
                a.$set(g.r8())?;
                Ok(0)
            });
        )*
    };
}

/// `jcc` over a `mov` of a random value, then an `inc`, as the plain condition cases do.
macro_rules! jump_over_mov {
    ($a:ident, $g:ident, $j:ident) => {
        let mut skip = $a.create_label();
        $a.$j(skip)?;
        $a.mov($g.r32(), $g.imm32())?;
        $a.set_label(&mut skip)?;
        $a.inc($g.r32())?;
    };
}

/// Division: about a third of the cases are shaped so the quotient fits; the rest fault freely.
fn divide_setup(g: &mut Gen<'_>, signed: bool, width: u32, divisor_idx: Option<usize>) {
    if g.rng.below(3) == 0 {
        return;
    }
    let (lo, hi) = (0usize, 2usize);
    let sign = if signed && g.setup.regs[lo] & (1 << (width - 1)) != 0 {
        u32::MAX
    } else {
        0
    };
    match width {
        8 => {
            // ax = al sign- or zero-extended: ah takes the sign.
            let low = g.setup.regs[lo] & 0xff;
            g.setup.regs[lo] = (g.setup.regs[lo] & !0xffff) | ((sign & 0xff) << 8) | low;
        }
        16 => g.setup.regs[hi] = (g.setup.regs[hi] & !0xffff) | (sign & 0xffff),
        _ => g.setup.regs[hi] = sign,
    }
    if let Some(d) = divisor_idx
        && d != lo
        && d != hi
        && g.setup.regs[d] == 0
    {
        g.setup.regs[d] = 7;
    }
}

fn templates() -> Vec<Template> {
    let mut v = Vec::new();
    alu!(v, add, 0, with_load);
    alu!(v, adc, 0, with_load);
    alu!(v, sub, 0, with_load);
    alu!(v, sbb, 0, with_load);
    alu!(v, cmp, 0, with_load);
    alu!(v, and, AF, with_load);
    alu!(v, or, AF, with_load);
    alu!(v, xor, AF, with_load);
    alu!(v, test, AF);
    unary!(v, inc);
    unary!(v, dec);
    unary!(v, neg);
    unary!(v, not);
    shift!(v, shl, true);
    shift!(v, shr, true);
    shift!(v, sar, false);
    rotate!(v, rol);
    rotate!(v, ror);
    t!(v, "shld r32, r32, imm", |a, g| {
        let c = shift_count(g.rng);
        a.shld(g.r32(), g.r32(), c)?;
        Ok(shift_undefined(c & 31, 32, false))
    });
    t!(v, "shrd r32, r32, imm", |a, g| {
        let c = shift_count(g.rng);
        a.shrd(g.r32(), g.r32(), c)?;
        Ok(shift_undefined(c & 31, 32, false))
    });
    t!(v, "shld r32, r32, cl", |a, g| {
        let c = g.cl_count();
        a.shld(g.r32(), g.r32(), cl)?;
        Ok(shift_undefined(c, 32, false))
    });
    t!(v, "shrd m32, r32, cl", |a, g| {
        let c = g.cl_count();
        a.shrd(dword_ptr(g.mem()), g.r32(), cl)?;
        Ok(shift_undefined(c, 32, false))
    });

    forms!(v, SF | ZF | AF | PF;
        mul(r32), mul(r16), mul(r8), mul(m32), imul(r32), imul(r16), imul(r8),
        imul_2(r32, r32) as "imul r32, r32",
        imul_2(r16, r16) as "imul r16, r16",
        imul_2(r32, m32) as "imul r32, m32",
        imul_3(r32, r32, imm8) as "imul r32, r32, imm8",
        imul_3(r32, r32, imm32) as "imul r32, r32, imm32",
        imul_3(r16, m16, imm8) as "imul r16, m16, imm8",
    );
    divide!(v, div, false);
    t!(v, "div m32", |a, g| {
        divide_setup(g, false, 32, None);
        a.div(dword_ptr(g.mem()))?;
        Ok(ARITH)
    });
    divide!(v, idiv, true);
    t!(v, "idiv MIN / -1", |a, g| {
        g.setup.regs[0] = 0x8000_0000;
        g.setup.regs[2] = 0xffff_ffff;
        g.setup.regs[3] = 0xffff_ffff;
        a.idiv(ebx)?;
        Ok(ARITH)
    });

    conditions!(
        v,
        (seto, cmovo, jo),
        (setno, cmovno, jno),
        (setb, cmovb, jb),
        (setae, cmovae, jae),
        (sete, cmove, je),
        (setne, cmovne, jne),
        (setbe, cmovbe, jbe),
        (seta, cmova, ja),
        (sets, cmovs, js),
        (setns, cmovns, jns),
        (setp, cmovp, jp),
        (setnp, cmovnp, jnp),
        (setl, cmovl, jl),
        (setge, cmovge, jge),
        (setle, cmovle, jle),
        (setg, cmovg, jg)
    );

    forms!(v, 0;
        mov(r32, r32), mov(r8, r8), mov(r16, imm8), mov(m8, r8), mov(m16, imm8), mov(r32, m32),
        movzx(r32, r8), movzx(r32, r16), movzx(r16, r8), movzx(r32, m8),
        movsx(r32, r8), movsx(r32, r16), movsx(r16, r8), movsx(r32, m16),
    );
    t!(v, "lea r32, [b+i*s+d]", |a, g| {
        let s = g.rng.pick(&[1u32, 2, 4, 8]);
        let d = g.imm32();
        a.lea(g.r32(), g.r32() + g.r32() * s + d)?;
        Ok(0)
    });
    t!(v, "lea r32, [i*s+d]", |a, g| {
        let s = g.rng.pick(&[2u32, 4, 8]);
        let d = g.imm8();
        a.lea(g.r32(), g.r32() * s + d)?;
        Ok(0)
    });
    t!(v, "lea r16, [b+d]", |a, g| {
        let d = g.imm8();
        a.lea(g.r16(), g.r32() + d)?;
        Ok(0)
    });
    forms!(v, 0; xchg(r32, r32), xchg(r8, r8), xchg(m32, r32), bswap(r32), cdq(), cwd(), cwde(), cbw());
    t!(v, "push r32; pop r32", |a, g| {
        a.push(g.r32())?;
        a.pop(g.r32())?;
        Ok(0)
    });
    t!(v, "push imm; push imm8", |a, g| {
        a.push(g.imm32())?;
        a.push(g.imm8())?;
        Ok(0)
    });
    t!(v, "push m32; pop m32", |a, g| {
        a.push(dword_ptr(g.mem()))?;
        a.pop(dword_ptr(g.mem()))?;
        Ok(0)
    });
    t!(v, "push esp; pop esp", |a, _g| {
        a.push(esp)?;
        a.pop(esp)?;
        Ok(0)
    });
    t!(v, "leave", |a, _g| {
        a.lea(ebp, esp + 8)?;
        a.leave()?;
        Ok(0)
    });
    t!(v, "pushad; popad", |a, g| {
        a.pushad()?;
        a.mov(g.r32(), dword_ptr(esp + 4 * g.idx() as i32))?;
        a.popad()?;
        a.pushad()?;
        a.add(esp, 32)?;
        Ok(0)
    });
    t!(v, "nop forms", |a, g| {
        a.nop()?;
        a.db(&[0x0f, 0x1f, 0x44, 0x00, 0x00])?; // nop dword [eax+eax]
        a.db(&[0x66, 0x90])?; // xchg ax, ax
        a.lea(esi, esi + 0)?;
        a.mov(edi, edi)?;
        a.inc(g.r32())?;
        Ok(0)
    });
    forms!(v, 0; lahf(), sahf());
    t!(v, "clc; cmc", |a, _g| {
        a.clc()?;
        a.cmc()?;
        Ok(0)
    });
    t!(v, "stc; cmc; cmc", |a, _g| {
        a.stc()?;
        a.cmc()?;
        a.cmc()?;
        Ok(0)
    });
    t!(v, "std; cld; std", |a, _g| {
        a.std()?;
        a.cld()?;
        a.std()?;
        Ok(0)
    });
    forms!(v, OF | SF | AF | PF;
        bt(r32, r32), bt(r16, imm6), bt(m32, imm5), bts(r32, r32), btr(r16, r16), btc(m32, imm5),
    );
    forms!(v, CF | OF | SF | AF | PF; bsf(r32, r32), bsr(r32, r32), bsf(r16, m16));

    forms!(v, 0; xadd(r32, r32));
    t!(v, "lock xadd m32, r32", |a, g| {
        a.lock().xadd(dword_ptr(g.mem()), g.r32())?;
        Ok(0)
    });
    forms!(v, 0; xadd(r8, r8));
    t!(v, "cmpxchg r32, r32", |a, g| {
        // Half the cases compare equal.
        let (d, s) = (g.idx(), g.idx());
        if g.rng.below(2) == 0 {
            g.setup.regs[d] = g.setup.regs[0];
        }
        a.cmpxchg(R32[d], R32[s])?;
        Ok(0)
    });
    t!(v, "lock cmpxchg m32, r32", |a, g| {
        let off = g.rng.pick(&OFFSETS);
        if g.rng.below(2) == 0 {
            let at = (64 + off) as usize;
            g.setup.window[at..at + 4].copy_from_slice(&g.setup.regs[0].to_le_bytes());
        }
        a.lock().cmpxchg(dword_ptr(esp + off), g.r32())?;
        Ok(0)
    });
    forms!(v, 0; cmpxchg(r8, r8));
    t!(v, "pause; endbr32", |a, g| {
        a.pause()?;
        a.db(&[0xf3, 0x0f, 0x1e, 0xfb])?;
        a.inc(g.r32())?;
        Ok(0)
    });

    // 64-bit arithmetic as compilers emit it for `long long`.
    t!(v, "add; adc", |a, _g| {
        a.add(eax, ecx)?;
        a.adc(edx, ebx)?;
        Ok(0)
    });
    t!(v, "sub; sbb", |a, _g| {
        a.sub(eax, ecx)?;
        a.sbb(edx, ebx)?;
        Ok(0)
    });
    t!(v, "partial registers", |a, g| {
        a.mov(ah, al)?;
        a.add(ah, bl)?;
        a.movzx(ecx, ah)?;
        a.sub(dx, g.imm8())?;
        a.xor(bh, dl)?;
        Ok(AF)
    });
    t!(v, "loop", |a, g| {
        g.setup.regs[1] = 1 + g.rng.below(5) as u32;
        let mut top = a.create_label();
        a.set_label(&mut top)?;
        a.add(eax, ebx)?;
        a.rol(edx, 3)?;
        a.loop_(top)?;
        Ok(OF)
    });
    t!(v, "jecxz", |a, g| {
        if g.rng.below(2) == 0 {
            g.setup.regs[1] = 0;
        }
        let mut skip = a.create_label();
        a.jecxz(skip)?;
        a.not(eax)?;
        a.set_label(&mut skip)?;
        a.neg(edx)?;
        Ok(0)
    });

    // String instructions on the stack window, both directions.
    t!(v, "rep movsb up", |a, g| {
        g.setup.regs[1] = g.rng.below(20) as u32;
        a.lea(esi, esp - 60)?;
        a.lea(edi, esp + 8)?;
        a.cld()?;
        a.rep().movsb()?;
        Ok(0)
    });
    t!(v, "rep movsd down", |a, g| {
        g.setup.regs[1] = g.rng.below(6) as u32;
        a.lea(esi, esp + 20)?;
        a.lea(edi, esp - 8)?;
        a.std()?;
        a.rep().movsd()?;
        Ok(0)
    });
    t!(v, "rep stosb down", |a, g| {
        g.setup.regs[1] = g.rng.below(30) as u32;
        a.lea(edi, esp + 40)?;
        a.std()?;
        a.rep().stosb()?;
        Ok(0)
    });
    t!(v, "rep stosd up", |a, g| {
        g.setup.regs[1] = g.rng.below(10) as u32;
        a.lea(edi, esp - 40)?;
        a.cld()?;
        a.rep().stosd()?;
        Ok(0)
    });
    t!(v, "movsw; stosw; lodsb", |a, _g| {
        a.lea(esi, esp - 30)?;
        a.lea(edi, esp + 30)?;
        a.movsw()?;
        a.stosw()?;
        a.lodsb()?;
        Ok(0)
    });
    t!(v, "repe cmpsb", |a, g| {
        // Make the two strings share a random-length prefix so the loop runs a while.
        let same = g.rng.below(12) as usize;
        for i in 0..same {
            g.setup.window[64 - 40 + i] = g.setup.window[64 + 4 + i];
        }
        g.setup.regs[1] = g.rng.below(16) as u32;
        a.lea(esi, esp - 40)?;
        a.lea(edi, esp + 4)?;
        a.cld()?;
        a.repe().cmpsb()?;
        Ok(0)
    });
    t!(v, "repne scasb", |a, g| {
        let at = g.rng.below(20) as usize;
        g.setup.regs[0] = (g.setup.regs[0] & !0xff) | u32::from(g.setup.window[64 + at]);
        g.setup.regs[1] = g.rng.below(24) as u32;
        a.lea(edi, esp + 0)?;
        a.cld()?;
        a.repne().scasb()?;
        Ok(0)
    });
    t!(v, "repe cmpsd down", |a, g| {
        g.setup.regs[1] = g.rng.below(4) as u32;
        a.lea(esi, esp + 20)?;
        a.lea(edi, esp - 20)?;
        a.std()?;
        a.repe().cmpsd()?;
        Ok(0)
    });
    v
}

struct Case {
    name: &'static str,
    code: Vec<u8>,
    setup: Setup,
    undefined: u32,
}

fn cases() -> Vec<Case> {
    let mut rng = Rng(0x005e_ed0f_0bad_cafe);
    let mut out = Vec::new();
    for t in templates() {
        for _ in 0..CASES_PER_TEMPLATE {
            let mut setup = Setup::random(&mut rng);
            let mut a = CodeAssembler::new(32).expect("32-bit assembler");
            let undefined = {
                let mut g = Gen {
                    rng: &mut rng,
                    setup: &mut setup,
                };
                (t.build)(&mut a, &mut g).unwrap_or_else(|e| panic!("{}: cannot assemble: {e}", t.name))
            };
            let code = a
                .assemble(CODE_ADDR)
                .unwrap_or_else(|e| panic!("{}: cannot assemble: {e}", t.name));
            out.push(Case {
                name: t.name,
                code,
                setup,
                undefined,
            });
        }
    }
    out
}

/// What a run left behind.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Result32 {
    Done {
        regs: [u32; 8],
        eflags: u32,
        window: Vec<u8>,
    },
    DivideError,
}

/// Runs every case natively in one harness process; returns (esp at start, result) per case.
fn run_native(cases: &[Case]) -> Vec<(u32, Result32)> {
    let exe = common::native_harness("harness.c", "harness32", &[]);
    let inputs: Vec<HarnessCase> = cases
        .iter()
        .map(|c| HarnessCase {
            code: &c.code,
            regs: c.setup.regs,
            eflags: c.setup.eflags,
            fields: vec![&c.setup.window],
        })
        .collect();
    common::run_harness(&exe, &inputs)
        .into_iter()
        .zip(cases)
        .map(|(result, case)| match result {
            HarnessResult::Fault(8) => (0, Result32::DivideError),
            HarnessResult::Done {
                esp_in,
                regs,
                eflags,
                mut fields,
            } => (
                esp_in,
                Result32::Done {
                    regs,
                    eflags,
                    window: fields.remove(0),
                },
            ),
            other => panic!("{}: the harness said {other:?} for {}", case.name, hex_text(&case.code)),
        })
        .collect()
}

/// How a case runs in the interpreter: as one lifted function, or instruction by instruction as
/// the run-time tier runs code discovery missed (`rpt_api::tier`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Way {
    Compiled,
    RunTimeTier,
}

/// Lifts and interprets one case with the same starting esp as the native run.
fn run_lifted(program_state: &rpt_ir::StateDesc, case: &Case, stack: u32, way: Way) -> Result<Result32, String> {
    let mut bytes = case.code.clone();
    bytes.push(0xf4); // hlt: the lifted function ends where the native run jumps to its epilogue
    let image = common::code_image(CODE_ADDR, &bytes);
    let entry = GuestAddr(CODE_ADDR);
    let mut program = Program::new(program_state.clone());
    let mut tier = BTreeMap::new();
    match way {
        Way::Compiled => {
            let lifted = common::lift_verified(&image, entry, &BTreeSet::from([entry]));
            if let Some(d) = lifted.diagnostics.iter().find(|d| d.severity == Severity::Error) {
                return Err(format!("not lifted: {} at {}", d.message, d.addr));
            }
            program.functions.insert(entry, lifted.function);
        }
        Way::RunTimeTier => {
            let none = BTreeSet::new();
            for lifted in X86Pe.lift_uncovered(&image, &none, &none, &GuestOptions::new()) {
                if let Some(d) = lifted.diagnostics.iter().find(|d| d.severity == Severity::Error) {
                    return Err(format!("not lifted: {} at {}", d.message, d.addr));
                }
                tier.insert(lifted.function.entry, lifted.function);
            }
        }
    }
    let mut interp = Interpreter::new(&program);
    let mut regs = case.setup.regs;
    regs[4] = stack;
    common::set_registers(&mut interp.machine, regs, case.setup.eflags);
    let base = u64::from(stack) - (WINDOW as u64 / 2);
    interp
        .machine
        .memory
        .write_bytes(AddrSpace::RAM, base, &case.setup.window);
    let outcome = match way {
        Way::Compiled => interp.run(entry, &mut NoEnvironment),
        Way::RunTimeTier => run_tier(&mut interp, &program, &tier, entry, &mut NoEnvironment),
    }
    .map_err(|e| format!("interpreter: {e}"))?;
    let end = CODE_ADDR + case.code.len() as u64;
    match outcome {
        Outcome::Exited {
            reason: ExitReason::DivideError,
            ..
        } => Ok(Result32::DivideError),
        halted if common::halted_at(&halted, end) => {
            let (regs, eflags) = common::registers(&interp.machine);
            let window = read_bytes(&interp.machine, AddrSpace::RAM, base, WINDOW);
            Ok(Result32::Done { regs, eflags, window })
        }
        other => Err(format!("unexpected outcome {other:?}")),
    }
}

fn describe(case: &Case) -> String {
    let mut dis = rpt_guest_x86_pe::decode::Disassembler::new();
    let mut text = Vec::new();
    let mut at = 0usize;
    while at < case.code.len() {
        let addr = GuestAddr(CODE_ADDR + at as u64);
        match rpt_guest_x86_pe::decode::decode_bytes(&case.code[at..], addr) {
            Ok(insn) => {
                text.push(dis.text(&insn));
                at += insn.len();
            }
            Err(_) => break,
        }
    }
    let registers: Vec<String> = GPR_NAMES
        .iter()
        .zip(case.setup.regs)
        .filter(|(name, _)| **name != "esp")
        .map(|(name, value)| format!("{name}={value:08x}"))
        .collect();
    format!(
        "{} [{}] ({})\n  in:  {} eflags={:03x}",
        case.name,
        text.join("; "),
        hex_text(&case.code),
        registers.join(" "),
        case.setup.eflags
    )
}

fn compare(case: &Case, native: &Result32, lifted: &Result32) -> Option<String> {
    match (native, lifted) {
        (Result32::DivideError, Result32::DivideError) => None,
        (
            Result32::Done {
                regs: nr,
                eflags: nf,
                window: nw,
            },
            Result32::Done {
                regs: lr,
                eflags: lf,
                window: lw,
            },
        ) => {
            let mask = (ARITH | DF_BIT) & !case.undefined;
            let mut diffs = Vec::new();
            for i in 0..8 {
                if nr[i] != lr[i] {
                    diffs.push(format!("{}: native {:08x} lifted {:08x}", GPR_NAMES[i], nr[i], lr[i]));
                }
            }
            if nf & mask != lf & mask {
                let names = [
                    (CF, "CF"),
                    (PF, "PF"),
                    (AF, "AF"),
                    (ZF, "ZF"),
                    (SF, "SF"),
                    (DF_BIT, "DF"),
                    (OF, "OF"),
                ];
                let bad: Vec<&str> = names
                    .iter()
                    .filter(|(b, _)| mask & b != 0 && (nf ^ lf) & b != 0)
                    .map(|(_, n)| *n)
                    .collect();
                diffs.push(format!(
                    "flags {bad:?}: native {:03x} lifted {:03x} (compared {mask:03x})",
                    nf, lf
                ));
            }
            if nw != lw {
                diffs.push(format!("stack window: native {} lifted {}", hex_text(nw), hex_text(lw)));
            }
            (!diffs.is_empty()).then(|| format!("{}\n  {}", describe(case), diffs.join("\n  ")))
        }
        _ => Some(format!("{}\n  native {native:?}\n  lifted {lifted:?}", describe(case))),
    }
}

#[test]
fn lifted_instructions_match_native_execution() {
    let cases = cases();
    let native = run_native(&cases);
    let state = rpt_guest_x86_pe::state::state_desc();
    let mut failures = Vec::new();
    let mut failed_templates: Vec<&str> = Vec::new();
    let mut divide_errors = 0;
    for (case, (stack, native)) in cases.iter().zip(&native) {
        let stack = if *native == Result32::DivideError {
            0x0800_0000
        } else {
            *stack
        };
        for way in [Way::Compiled, Way::RunTimeTier] {
            match run_lifted(&state, case, stack, way) {
                Ok(lifted) => {
                    if lifted == Result32::DivideError && *native == Result32::DivideError && way == Way::Compiled {
                        divide_errors += 1;
                    }
                    if let Some(f) = compare(case, native, &lifted) {
                        failures.push(format!("{way:?}: {f}"));
                        failed_templates.push(case.name);
                    }
                }
                Err(e) => {
                    failures.push(format!("{way:?}: {}\n  {e}", describe(case)));
                    failed_templates.push(case.name);
                }
            }
        }
    }
    let templates: BTreeSet<&str> = cases.iter().map(|c| c.name).collect();
    eprintln!(
        "oracle: {} cases from {} templates, {} divide errors, {} failures",
        cases.len(),
        templates.len(),
        divide_errors,
        failures.len()
    );
    assert!(divide_errors > 20, "the division cases should exercise #DE");
    if !failures.is_empty() {
        // At most two failures per template, so one broken form does not hide the others.
        let mut per_template: std::collections::BTreeMap<&str, usize> = std::collections::BTreeMap::new();
        let shown: Vec<&String> = failures
            .iter()
            .zip(&failed_templates)
            .filter(|(_, t)| {
                let n = per_template.entry(t).or_default();
                *n += 1;
                *n <= 2
            })
            .map(|(f, _)| f)
            .take(40)
            .collect();
        panic!(
            "{} of {} cases differ from the CPU (first {}):\n\n{}",
            failures.len(),
            cases.len(),
            shown.len(),
            shown.iter().map(|s| s.as_str()).collect::<Vec<_>>().join("\n\n")
        );
    }
}
