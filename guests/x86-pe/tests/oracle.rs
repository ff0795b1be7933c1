//! The instruction oracle: lifted instruction sequences, run in the IR reference interpreter, must
//! leave the eight GPRs, the six arithmetic flags, DF and a 128-byte stack window exactly as the
//! same bytes leave them when this machine's CPU runs them natively (tests/oracle/harness.c).
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

use std::collections::BTreeSet;
use std::io::Write;
use std::process::{Command, Stdio};

use iced_x86::IcedError;
use iced_x86::code_asm::*;
use rpt_api::Severity;
use rpt_guest_x86_pe::state::{ARITH_FLAGS, DF, GPRS};
use rpt_ir::interp::{Interpreter, NoEnvironment, Outcome, Val};
use rpt_ir::{AddrSpace, ExitReason, GuestAddr, Program};

const CF: u32 = 1 << 0;
const PF: u32 = 1 << 2;
const AF: u32 = 1 << 4;
const ZF: u32 = 1 << 6;
const SF: u32 = 1 << 7;
const DF_BIT: u32 = 1 << 10;
const OF: u32 = 1 << 11;
const ARITH: u32 = CF | PF | AF | ZF | SF | OF;
const CODE_ADDR: u64 = 0x1000;
const WINDOW: usize = 128;
const CASES_PER_TEMPLATE: usize = 48;

/// xorshift64*: a fixed-seed generator, so every run tests the same cases.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len() as u64) as usize]
    }

    /// A 32-bit value, biased towards the edges where flags change.
    fn value(&mut self) -> u32 {
        const EDGES: [u32; 14] = [
            0,
            1,
            2,
            0x7f,
            0x80,
            0xff,
            0x100,
            0x7fff,
            0x8000,
            0xffff,
            0x7fff_ffff,
            0x8000_0000,
            0xffff_fffe,
            0xffff_ffff,
        ];
        match self.below(4) {
            0 => self.pick(&EDGES),
            1 => self.next() as u32 & 0xff,
            _ => self.next() as u32,
        }
    }

    fn count(&mut self) -> u32 {
        match self.below(3) {
            0 => self.pick(&[0, 1, 2, 7, 8, 9, 15, 16, 17, 31, 32, 33]),
            _ => self.below(32) as u32,
        }
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
            *r = rng.value();
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
    fn imm(&mut self) -> i32 {
        self.rng.value() as i32
    }
    fn imm8(&mut self) -> i32 {
        self.rng.value() as i8 as i32
    }
    fn mem(&mut self) -> AsmMemoryOperand {
        let off = self.rng.pick(&OFFSETS);
        esp + off
    }
    /// Sets ecx to a random value whose low 5 bits are a shift count; returns the masked count.
    fn cl_count(&mut self) -> u32 {
        let c = self.rng.count();
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

macro_rules! alu {
    ($v:ident, $op:ident, $undef:expr) => {
        t!($v, concat!(stringify!($op), " r32, r32"), |a, g| {
            a.$op(g.r32(), g.r32())?;
            Ok($undef)
        });
        t!($v, concat!(stringify!($op), " r16, r16"), |a, g| {
            a.$op(g.r16(), g.r16())?;
            Ok($undef)
        });
        t!($v, concat!(stringify!($op), " r8, r8"), |a, g| {
            a.$op(g.r8(), g.r8())?;
            Ok($undef)
        });
        t!($v, concat!(stringify!($op), " r32, imm32"), |a, g| {
            a.$op(g.r32(), g.imm())?;
            Ok($undef)
        });
        t!($v, concat!(stringify!($op), " r32, imm8"), |a, g| {
            a.$op(g.r32(), g.imm8())?;
            Ok($undef)
        });
        t!($v, concat!(stringify!($op), " r16, imm"), |a, g| {
            a.$op(g.r16(), g.imm8())?;
            Ok($undef)
        });
        t!($v, concat!(stringify!($op), " r8, imm8"), |a, g| {
            a.$op(g.r8(), g.imm8())?;
            Ok($undef)
        });
        t!($v, concat!(stringify!($op), " m32, r32"), |a, g| {
            a.$op(dword_ptr(g.mem()), g.r32())?;
            Ok($undef)
        });
        t!($v, concat!(stringify!($op), " m8, imm8"), |a, g| {
            a.$op(byte_ptr(g.mem()), g.imm8())?;
            Ok($undef)
        });
        t!($v, concat!(stringify!($op), " m16, r16"), |a, g| {
            a.$op(word_ptr(g.mem()), g.r16())?;
            Ok($undef)
        });
    };
    ($v:ident, $op:ident, $undef:expr, with_load) => {
        alu!($v, $op, $undef);
        t!($v, concat!(stringify!($op), " r32, m32"), |a, g| {
            a.$op(g.r32(), dword_ptr(g.mem()))?;
            Ok($undef)
        });
        t!($v, concat!(stringify!($op), " r8, m8"), |a, g| {
            a.$op(g.r8(), byte_ptr(g.mem()))?;
            Ok($undef)
        });
    };
}

macro_rules! unary {
    ($v:ident, $op:ident) => {
        t!($v, concat!(stringify!($op), " r32"), |a, g| {
            a.$op(g.r32())?;
            Ok(0)
        });
        t!($v, concat!(stringify!($op), " r16"), |a, g| {
            a.$op(g.r16())?;
            Ok(0)
        });
        t!($v, concat!(stringify!($op), " r8"), |a, g| {
            a.$op(g.r8())?;
            Ok(0)
        });
        t!($v, concat!(stringify!($op), " m32"), |a, g| {
            a.$op(dword_ptr(g.mem()))?;
            Ok(0)
        });
        t!($v, concat!(stringify!($op), " m8"), |a, g| {
            a.$op(byte_ptr(g.mem()))?;
            Ok(0)
        });
    };
}

macro_rules! shift {
    ($v:ident, $op:ident, $shl_or_shr:expr) => {
        t!($v, concat!(stringify!($op), " r32, imm"), |a, g| {
            let c = g.rng.count();
            a.$op(g.r32(), c)?;
            Ok(shift_undefined(c & 31, 32, $shl_or_shr))
        });
        t!($v, concat!(stringify!($op), " r16, imm"), |a, g| {
            let c = g.rng.count();
            a.$op(g.r16(), c)?;
            Ok(shift_undefined(c & 31, 16, $shl_or_shr))
        });
        t!($v, concat!(stringify!($op), " r8, imm"), |a, g| {
            let c = g.rng.count();
            a.$op(g.r8(), c)?;
            Ok(shift_undefined(c & 31, 8, $shl_or_shr))
        });
        t!($v, concat!(stringify!($op), " r32, 1"), |a, g| {
            a.$op(g.r32(), 1)?;
            Ok(shift_undefined(1, 32, $shl_or_shr))
        });
        t!($v, concat!(stringify!($op), " r32, cl"), |a, g| {
            let c = g.cl_count();
            a.$op(g.r32(), cl)?;
            Ok(shift_undefined(c, 32, $shl_or_shr))
        });
        t!($v, concat!(stringify!($op), " r16, cl"), |a, g| {
            let c = g.cl_count();
            a.$op(g.r16(), cl)?;
            Ok(shift_undefined(c, 16, $shl_or_shr))
        });
        t!($v, concat!(stringify!($op), " r8, cl"), |a, g| {
            let c = g.cl_count();
            a.$op(g.r8(), cl)?;
            Ok(shift_undefined(c, 8, $shl_or_shr))
        });
        t!($v, concat!(stringify!($op), " m32, imm"), |a, g| {
            let c = g.rng.count();
            a.$op(dword_ptr(g.mem()), c)?;
            Ok(shift_undefined(c & 31, 32, $shl_or_shr))
        });
        t!($v, concat!(stringify!($op), " m8, cl"), |a, g| {
            let c = g.cl_count();
            a.$op(byte_ptr(g.mem()), cl)?;
            Ok(shift_undefined(c, 8, $shl_or_shr))
        });
    };
}

macro_rules! rotate {
    ($v:ident, $op:ident) => {
        t!($v, concat!(stringify!($op), " r32, imm"), |a, g| {
            let c = g.rng.count();
            a.$op(g.r32(), c)?;
            Ok(rotate_undefined(c & 31))
        });
        t!($v, concat!(stringify!($op), " r16, imm"), |a, g| {
            let c = g.rng.count();
            a.$op(g.r16(), c)?;
            Ok(rotate_undefined(c & 31))
        });
        t!($v, concat!(stringify!($op), " r8, imm"), |a, g| {
            let c = g.rng.count();
            a.$op(g.r8(), c)?;
            Ok(rotate_undefined(c & 31))
        });
        t!($v, concat!(stringify!($op), " r32, cl"), |a, g| {
            let c = g.cl_count();
            a.$op(g.r32(), cl)?;
            Ok(rotate_undefined(c))
        });
        t!($v, concat!(stringify!($op), " r8, cl"), |a, g| {
            let c = g.cl_count();
            a.$op(g.r8(), cl)?;
            Ok(rotate_undefined(c))
        });
        t!($v, concat!(stringify!($op), " m16, 1"), |a, g| {
            a.$op(word_ptr(g.mem()), 1)?;
            Ok(0)
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
                a.mov(g.r32(), g.imm())?;
                a.set_label(&mut skip)?;
                a.inc(g.r32())?;
                Ok(0)
            });
        )*
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
        let c = g.rng.count();
        a.shld(g.r32(), g.r32(), c)?;
        Ok(shift_undefined(c & 31, 32, false))
    });
    t!(v, "shrd r32, r32, imm", |a, g| {
        let c = g.rng.count();
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

    const MUL_UNDEF: u32 = SF | ZF | AF | PF;
    t!(v, "mul r32", |a, g| {
        a.mul(g.r32())?;
        Ok(MUL_UNDEF)
    });
    t!(v, "mul r16", |a, g| {
        a.mul(g.r16())?;
        Ok(MUL_UNDEF)
    });
    t!(v, "mul r8", |a, g| {
        a.mul(g.r8())?;
        Ok(MUL_UNDEF)
    });
    t!(v, "mul m32", |a, g| {
        a.mul(dword_ptr(g.mem()))?;
        Ok(MUL_UNDEF)
    });
    t!(v, "imul r32", |a, g| {
        a.imul(g.r32())?;
        Ok(MUL_UNDEF)
    });
    t!(v, "imul r16", |a, g| {
        a.imul(g.r16())?;
        Ok(MUL_UNDEF)
    });
    t!(v, "imul r8", |a, g| {
        a.imul(g.r8())?;
        Ok(MUL_UNDEF)
    });
    t!(v, "imul r32, r32", |a, g| {
        a.imul_2(g.r32(), g.r32())?;
        Ok(MUL_UNDEF)
    });
    t!(v, "imul r16, r16", |a, g| {
        a.imul_2(g.r16(), g.r16())?;
        Ok(MUL_UNDEF)
    });
    t!(v, "imul r32, m32", |a, g| {
        a.imul_2(g.r32(), dword_ptr(g.mem()))?;
        Ok(MUL_UNDEF)
    });
    t!(v, "imul r32, r32, imm8", |a, g| {
        a.imul_3(g.r32(), g.r32(), g.imm8())?;
        Ok(MUL_UNDEF)
    });
    t!(v, "imul r32, r32, imm32", |a, g| {
        a.imul_3(g.r32(), g.r32(), g.imm())?;
        Ok(MUL_UNDEF)
    });
    t!(v, "imul r16, m16, imm", |a, g| {
        a.imul_3(g.r16(), word_ptr(g.mem()), g.imm8())?;
        Ok(MUL_UNDEF)
    });
    t!(v, "div r32", |a, g| {
        let d = g.idx();
        divide_setup(g, false, 32, Some(d));
        a.div(R32[d])?;
        Ok(ARITH)
    });
    t!(v, "div r16", |a, g| {
        let d = g.idx();
        divide_setup(g, false, 16, Some(d));
        a.div(R16[d])?;
        Ok(ARITH)
    });
    t!(v, "div r8", |a, g| {
        let d = g.idx().min(3);
        divide_setup(g, false, 8, Some(d));
        a.div(R8[d])?;
        Ok(ARITH)
    });
    t!(v, "div m32", |a, g| {
        divide_setup(g, false, 32, None);
        a.div(dword_ptr(g.mem()))?;
        Ok(ARITH)
    });
    t!(v, "idiv r32", |a, g| {
        let d = g.idx();
        divide_setup(g, true, 32, Some(d));
        a.idiv(R32[d])?;
        Ok(ARITH)
    });
    t!(v, "idiv r16", |a, g| {
        let d = g.idx();
        divide_setup(g, true, 16, Some(d));
        a.idiv(R16[d])?;
        Ok(ARITH)
    });
    t!(v, "idiv r8", |a, g| {
        let d = g.idx().min(3);
        divide_setup(g, true, 8, Some(d));
        a.idiv(R8[d])?;
        Ok(ARITH)
    });
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

    t!(v, "mov r32, r32", |a, g| {
        a.mov(g.r32(), g.r32())?;
        Ok(0)
    });
    t!(v, "mov r8, r8", |a, g| {
        a.mov(g.r8(), g.r8())?;
        Ok(0)
    });
    t!(v, "mov r16, imm", |a, g| {
        a.mov(g.r16(), g.imm8())?;
        Ok(0)
    });
    t!(v, "mov m8, r8", |a, g| {
        a.mov(byte_ptr(g.mem()), g.r8())?;
        Ok(0)
    });
    t!(v, "mov m16, imm", |a, g| {
        a.mov(word_ptr(g.mem()), g.imm8())?;
        Ok(0)
    });
    t!(v, "mov r32, m32", |a, g| {
        a.mov(g.r32(), dword_ptr(g.mem()))?;
        Ok(0)
    });
    t!(v, "movzx r32, r8", |a, g| {
        a.movzx(g.r32(), g.r8())?;
        Ok(0)
    });
    t!(v, "movzx r32, r16", |a, g| {
        a.movzx(g.r32(), g.r16())?;
        Ok(0)
    });
    t!(v, "movzx r16, r8", |a, g| {
        a.movzx(g.r16(), g.r8())?;
        Ok(0)
    });
    t!(v, "movzx r32, m8", |a, g| {
        a.movzx(g.r32(), byte_ptr(g.mem()))?;
        Ok(0)
    });
    t!(v, "movsx r32, r8", |a, g| {
        a.movsx(g.r32(), g.r8())?;
        Ok(0)
    });
    t!(v, "movsx r32, r16", |a, g| {
        a.movsx(g.r32(), g.r16())?;
        Ok(0)
    });
    t!(v, "movsx r16, r8", |a, g| {
        a.movsx(g.r16(), g.r8())?;
        Ok(0)
    });
    t!(v, "movsx r32, m16", |a, g| {
        a.movsx(g.r32(), word_ptr(g.mem()))?;
        Ok(0)
    });
    t!(v, "lea r32, [b+i*s+d]", |a, g| {
        let s = g.rng.pick(&[1u32, 2, 4, 8]);
        let d = g.imm();
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
    t!(v, "xchg r32, r32", |a, g| {
        a.xchg(g.r32(), g.r32())?;
        Ok(0)
    });
    t!(v, "xchg r8, r8", |a, g| {
        a.xchg(g.r8(), g.r8())?;
        Ok(0)
    });
    t!(v, "xchg m32, r32", |a, g| {
        a.xchg(dword_ptr(g.mem()), g.r32())?;
        Ok(0)
    });
    t!(v, "bswap r32", |a, g| {
        a.bswap(g.r32())?;
        Ok(0)
    });
    t!(v, "cdq", |a, _g| {
        a.cdq()?;
        Ok(0)
    });
    t!(v, "cwd", |a, _g| {
        a.cwd()?;
        Ok(0)
    });
    t!(v, "cwde", |a, _g| {
        a.cwde()?;
        Ok(0)
    });
    t!(v, "cbw", |a, _g| {
        a.cbw()?;
        Ok(0)
    });
    t!(v, "push r32; pop r32", |a, g| {
        a.push(g.r32())?;
        a.pop(g.r32())?;
        Ok(0)
    });
    t!(v, "push imm; push imm8", |a, g| {
        a.push(g.imm())?;
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
    t!(v, "lahf", |a, _g| {
        a.lahf()?;
        Ok(0)
    });
    t!(v, "sahf", |a, _g| {
        a.sahf()?;
        Ok(0)
    });
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
    t!(v, "bt r32, r32", |a, g| {
        a.bt(g.r32(), g.r32())?;
        Ok(OF | SF | AF | PF)
    });
    t!(v, "bt r16, imm", |a, g| {
        a.bt(g.r16(), g.imm8() & 0x3f)?;
        Ok(OF | SF | AF | PF)
    });
    t!(v, "bt m32, imm", |a, g| {
        a.bt(dword_ptr(g.mem()), g.imm8() & 0x1f)?;
        Ok(OF | SF | AF | PF)
    });
    t!(v, "bts r32, r32", |a, g| {
        a.bts(g.r32(), g.r32())?;
        Ok(OF | SF | AF | PF)
    });
    t!(v, "btr r16, r16", |a, g| {
        a.btr(g.r16(), g.r16())?;
        Ok(OF | SF | AF | PF)
    });
    t!(v, "btc m32, imm", |a, g| {
        a.btc(dword_ptr(g.mem()), g.imm8() & 0x1f)?;
        Ok(OF | SF | AF | PF)
    });
    t!(v, "bsf r32, r32", |a, g| {
        a.bsf(g.r32(), g.r32())?;
        Ok(CF | OF | SF | AF | PF)
    });
    t!(v, "bsr r32, r32", |a, g| {
        a.bsr(g.r32(), g.r32())?;
        Ok(CF | OF | SF | AF | PF)
    });
    t!(v, "bsf r16, m16", |a, g| {
        a.bsf(g.r16(), word_ptr(g.mem()))?;
        Ok(CF | OF | SF | AF | PF)
    });

    t!(v, "xadd r32, r32", |a, g| {
        a.xadd(g.r32(), g.r32())?;
        Ok(0)
    });
    t!(v, "lock xadd m32, r32", |a, g| {
        a.lock().xadd(dword_ptr(g.mem()), g.r32())?;
        Ok(0)
    });
    t!(v, "xadd r8, r8", |a, g| {
        a.xadd(g.r8(), g.r8())?;
        Ok(0)
    });
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
    t!(v, "cmpxchg r8, r8", |a, g| {
        a.cmpxchg(g.r8(), g.r8())?;
        Ok(0)
    });
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

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len() / 2)
        .map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).expect("hex"))
        .collect()
}

fn build_harness() -> std::path::PathBuf {
    let dir = common::scratch("oracle");
    let exe = dir.join("harness32");
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/oracle/harness.c");
    common::run_tool(
        Command::new("gcc")
            .args(["-m32", "-O1", "-static", "-o"])
            .arg(&exe)
            .arg(&src),
        "the instruction oracle runs x86 code natively and needs `gcc -m32`: install gcc-12-multilib \
         (apt-get install gcc-12-multilib)",
    );
    exe
}

/// Runs every case natively in one harness process; returns (esp at start, result) per case.
fn run_native(cases: &[Case]) -> Vec<(u32, Result32)> {
    let exe = build_harness();
    let mut input = String::new();
    for c in cases {
        let r = &c.setup.regs;
        input.push_str(&format!(
            "{} {:x} {:x} {:x} {:x} {:x} {:x} {:x} {:x} {}\n",
            hex(&c.code),
            r[0],
            r[1],
            r[2],
            r[3],
            r[5],
            r[6],
            r[7],
            c.setup.eflags,
            hex(&c.setup.window)
        ));
    }
    let mut child = Command::new(&exe)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the harness");
    let mut stdin = child.stdin.take().expect("harness stdin");
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child.wait_with_output().expect("harness output");
    writer.join().expect("writer thread").expect("write to harness");
    assert!(
        out.status.success(),
        "harness failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).expect("utf-8 output");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), cases.len(), "one result line per case");
    lines
        .iter()
        .zip(cases)
        .map(|(line, case)| {
            let f: Vec<&str> = line.split_whitespace().collect();
            match f.first().copied() {
                Some("fault") if f.get(1) == Some(&"8") => (0, Result32::DivideError),
                Some("ok") if f.len() == 12 => {
                    let n = |i: usize| u32::from_str_radix(f[i], 16).expect("hex register");
                    let regs = [n(2), n(3), n(4), n(5), n(6), n(7), n(8), n(9)];
                    (
                        n(1),
                        Result32::Done {
                            regs,
                            eflags: n(10),
                            window: unhex(f[11]),
                        },
                    )
                }
                _ => panic!("{}: harness said `{line}` for {}", case.name, hex(&case.code)),
            }
        })
        .collect()
}

/// Lifts and interprets one case with the same starting esp as the native run.
fn run_lifted(program_state: &rpt_ir::StateDesc, case: &Case, stack: u32) -> Result<Result32, String> {
    let mut bytes = case.code.clone();
    bytes.push(0xf4); // hlt: the lifted function ends where the native run jumps to its epilogue
    let image = common::code_image(CODE_ADDR, &bytes);
    let entry = GuestAddr(CODE_ADDR);
    let lifted = common::lift_verified(&image, entry, &BTreeSet::from([entry]));
    if let Some(d) = lifted.diagnostics.iter().find(|d| d.severity == Severity::Error) {
        return Err(format!("not lifted: {} at {}", d.message, d.addr));
    }
    let mut program = Program::new(program_state.clone());
    program.functions.insert(entry, lifted.function);
    let mut interp = Interpreter::new(&program);
    let desc = &program.state;
    let mut regs = case.setup.regs;
    regs[4] = stack;
    for (slot, v) in GPRS.iter().zip(regs) {
        interp.machine.state.set(desc, *slot, Val::Int(u64::from(v)));
    }
    for (slot, bit) in ARITH_FLAGS {
        interp
            .machine
            .state
            .set(desc, slot, Val::Int(u64::from((case.setup.eflags >> bit) & 1)));
    }
    interp
        .machine
        .state
        .set(desc, DF, Val::Int(u64::from((case.setup.eflags >> 10) & 1)));
    let base = u64::from(stack) - (WINDOW as u64 / 2);
    interp
        .machine
        .memory
        .write_bytes(AddrSpace::RAM, base, &case.setup.window);
    let outcome = interp
        .run(entry, &mut NoEnvironment)
        .map_err(|e| format!("interpreter: {e}"))?;
    match outcome {
        Outcome::Exited {
            reason: ExitReason::DivideError,
            ..
        } => return Ok(Result32::DivideError),
        Outcome::Exited {
            reason: ExitReason::Halt,
            pc,
        } if pc == CODE_ADDR + case.code.len() as u64 => {}
        other => return Err(format!("unexpected outcome {other:?}")),
    }
    let mut out = [0u32; 8];
    for (o, slot) in out.iter_mut().zip(GPRS) {
        *o = interp.machine.state.get(desc, slot).int() as u32;
    }
    let mut eflags = 2;
    for (slot, bit) in ARITH_FLAGS {
        eflags |= (interp.machine.state.get(desc, slot).int() as u32 & 1) << bit;
    }
    eflags |= (interp.machine.state.get(desc, DF).int() as u32 & 1) << 10;
    let window = (0..WINDOW as u64)
        .map(|i| interp.machine.memory.read_u8(AddrSpace::RAM, base + i))
        .collect();
    Ok(Result32::Done {
        regs: out,
        eflags,
        window,
    })
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
    let r = &case.setup.regs;
    format!(
        "{} [{}] ({})\n  in:  eax={:08x} ecx={:08x} edx={:08x} ebx={:08x} ebp={:08x} esi={:08x} edi={:08x} eflags={:03x}",
        case.name,
        text.join("; "),
        hex(&case.code),
        r[0],
        r[1],
        r[2],
        r[3],
        r[5],
        r[6],
        r[7],
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
            const NAMES: [&str; 8] = ["eax", "ecx", "edx", "ebx", "esp", "ebp", "esi", "edi"];
            for i in 0..8 {
                if nr[i] != lr[i] {
                    diffs.push(format!("{}: native {:08x} lifted {:08x}", NAMES[i], nr[i], lr[i]));
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
                diffs.push(format!("stack window: native {} lifted {}", hex(nw), hex(lw)));
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
        match run_lifted(&state, case, stack) {
            Ok(lifted) => {
                if lifted == Result32::DivideError && *native == Result32::DivideError {
                    divide_errors += 1;
                }
                if let Some(f) = compare(case, native, &lifted) {
                    failures.push(f);
                    failed_templates.push(case.name);
                }
            }
            Err(e) => {
                failures.push(format!("{}\n  {e}", describe(case)));
                failed_templates.push(case.name);
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
