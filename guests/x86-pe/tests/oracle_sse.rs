//! The SSE differential fuzzer: random sequences of every lifted scalar SSE/SSE2 form, with random
//! xmm contents (zeros, denormals, infinities, quiet and signalling NaNs, values at the edges of
//! int32), a random MXCSR rounding mode, random GPRs and flags and a 256-byte memory window, run
//! four ways: natively on this CPU (tests/oracle/harness_sse.c, one process for every case), in
//! rpt's IR interpreter, as C emitted by rpt and compiled with clang-19, and through the run-time
//! tier's C (each instruction lifted alone, forms shared across the cases, run by `rpt_tier_run`:
//! the cross-tier fuzzer of compiled code and the tier in C). All must leave the same GPRs,
//! arithmetic flags, all 128 bits of xmm0-7, MXCSR and memory.
//!
//! `RPT_SSE_FUZZ_CASES=N` changes the number of cases (CI runs [`DEFAULT_CASES`]) and
//! `RPT_SSE_FUZZ_SEED=S` the seed, for longer runs:
//! `RPT_SSE_FUZZ_CASES=50000 cargo test --release -p rpt-guest-x86-pe --test oracle_sse`.
//!
//! What is masked, and why (only this): MXCSR's six exception flags (bits 0-5), which rpt does not
//! compute (see `src/lift/sse.rs` and docs/sse.md); every other MXCSR bit is compared. `stmxcsr`
//! therefore appears only in cases made of `ldmxcsr` and `stmxcsr`, whose flags are exactly the
//! loaded ones. Exceptions stay masked (MXCSR's mask bits are always set), as compilers leave them.

mod common;
// The emitter's test support writes and builds a generation's sources as `rpt` does.
#[path = "../../../framework/emit-c/tests/common/mod.rs"]
mod emit_support;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::process::Command;

use iced_x86::IcedError;
use iced_x86::code_asm::*;
use rpt_api::{GuestPlugin, HostPlugin, Severity, SourceFile};
use rpt_build::Toolchain;
use rpt_guest_x86_pe::X86Pe;
use rpt_guest_x86_pe::state::{MXCSR, xmm_hi, xmm_lo};
use rpt_host_x86_64::X86_64Host;
use rpt_ir::interp::{Interpreter, NoEnvironment, Outcome, Val};
use rpt_ir::{AddrSpace, Function, GuestAddr, Program};
use rpt_testkit::interp::read_bytes;
use rpt_testkit::{Rng, assert_no_failures, env_number, guest, run_tool};

/// Cases in a default (CI) run.
const DEFAULT_CASES: usize = 2000;
const DEFAULT_SEED: u64 = 0x55e2_f10a_7000_0001;

// The layout of tests/oracle/harness_sse.c.
const WINDOW_BASE: u32 = 0x1000_0000;
const WINDOW_SIZE: usize = 256;
const CODE_BASE: u32 = 0x2000_0000;
/// Where the lifted runs' esp points (its `ret` reads a return address there and ignores it).
const STACK: u32 = 0x3000_0000;
const CASE_STRIDE: u32 = 256;
/// esp's place in the GPRs; the harness's own stack, so it reads 0 in every result.
const OFF_ESP: usize = 16;
const OFF_EFLAGS: usize = 32;
const OFF_MXCSR: usize = 36;
const OFF_XMM: usize = 40;
const OFF_WINDOW: usize = 168;
const STATE_SIZE: usize = OFF_WINDOW + WINDOW_SIZE;
/// ebp during a case: the window's middle, so `[ebp + disp8]` reaches all of it.
const EBP_VALUE: u32 = WINDOW_BASE + 128;

/// EFLAGS bits of CF, PF, AF, ZF, SF, OF.
const ARITH_EFLAGS: u32 = 0x8d5;
/// MXCSR's exception flags, which rpt does not compute.
const MXCSR_FLAGS: u32 = 0x3f;

/// The random operands of SSE cases, drawn from the classes where SSE's rules differ most.
trait SseValues {
    /// A double's sign bit, at random.
    fn sign64(&mut self) -> u64;
    /// A double's bits.
    fn double(&mut self) -> u64;
    /// A float's bits.
    fn float(&mut self) -> u32;
    /// 64 bits of an xmm register or the window: one double or two floats.
    fn lane64(&mut self) -> u64;
    /// A GPR's value: edges of int32 and of a float's exact integers, small values, anything.
    fn gpr(&mut self) -> u32;
}

impl SseValues for Rng {
    fn sign64(&mut self) -> u64 {
        (self.next() & 1) << 63
    }

    fn double(&mut self) -> u64 {
        const EDGES: [f64; 18] = [
            2147483647.0,
            2147483647.5,
            2147483648.0,
            -2147483648.0,
            -2147483648.5,
            -2147483649.0,
            2147483646.5,
            -2147483647.5,
            4294967296.0,
            1e10,
            0.5,
            1.5,
            2.5,
            -2.5,
            1.0 / 3.0,
            16777217.0,
            3.4028234663852886e38,
            1.401298464324817e-45,
        ];
        match self.below(12) {
            0 => self.sign64(),
            1 => self.sign64() | (self.next() & ((1 << 52) - 1)),
            2 => self.sign64() | 0x7ff0_0000_0000_0000,
            3 => self.sign64() | 0x7ff8_0000_0000_0000 | (self.next() & ((1 << 51) - 1)),
            4 => self.sign64() | 0x7ff0_0000_0000_0000 | (self.next() & ((1 << 51) - 1)).max(1),
            5 => self.pick(&EDGES).to_bits() ^ self.sign64(),
            6 => ((self.below(128) as f64 - 64.0) / 4.0).to_bits(),
            7 => f64::from(f32::from_bits(self.float())).to_bits(),
            11 => self.next(),
            _ => {
                let exponent = 1023 - 40 + self.below(80);
                self.sign64() | (exponent << 52) | (self.next() & ((1 << 52) - 1))
            }
        }
    }

    fn float(&mut self) -> u32 {
        const EDGES: [f32; 12] = [
            2147483648.0,
            2147483520.0,
            -2147483648.0,
            -2147483904.0,
            0.5,
            1.5,
            2.5,
            16777216.0,
            16777218.0,
            3e9,
            1.0 / 3.0,
            f32::MAX,
        ];
        let sign = ((self.next() & 1) as u32) << 31;
        let bits = self.next() as u32;
        match self.below(12) {
            0 => sign,
            1 => sign | (bits & 0x007f_ffff),
            2 => sign | 0x7f80_0000,
            3 => sign | 0x7fc0_0000 | (bits & 0x003f_ffff),
            4 => sign | 0x7f80_0000 | (bits & 0x003f_ffff).max(1),
            5 => self.pick(&EDGES).to_bits() ^ sign,
            6 => ((self.below(128) as f32 - 64.0) / 4.0).to_bits(),
            11 => bits,
            _ => {
                let exponent = 127 - 20 + (bits >> 24) % 40;
                sign | (exponent << 23) | (bits & 0x007f_ffff)
            }
        }
    }

    fn lane64(&mut self) -> u64 {
        if self.next() & 1 == 0 {
            self.double()
        } else {
            u64::from(self.float()) | (u64::from(self.float()) << 32)
        }
    }

    fn gpr(&mut self) -> u32 {
        const EDGES: [u32; 9] = [
            0,
            1,
            0xffff_ffff,
            0x7fff_ffff,
            0x8000_0000,
            16_777_217,
            0xfeff_ffff,
            0x0100_0001,
            123_456_789,
        ];
        match self.below(3) {
            0 => self.pick(&EDGES),
            1 => (self.below(2001) as i32 - 1000) as u32,
            _ => self.next() as u32,
        }
    }
}

/// The machine state a case starts or ends with (the harness's state block).
#[derive(Clone, Debug, PartialEq, Eq)]
struct State {
    gpr: [u32; 8],
    eflags: u32,
    mxcsr: u32,
    xmm: [[u64; 2]; 8],
    window: Vec<u8>,
}

impl State {
    fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(STATE_SIZE);
        for g in self.gpr {
            out.extend_from_slice(&g.to_le_bytes());
        }
        out.extend_from_slice(&self.eflags.to_le_bytes());
        out.extend_from_slice(&self.mxcsr.to_le_bytes());
        for [lo, hi] in self.xmm {
            out.extend_from_slice(&lo.to_le_bytes());
            out.extend_from_slice(&hi.to_le_bytes());
        }
        out.extend_from_slice(&self.window);
        out
    }

    fn from_bytes(b: &[u8]) -> State {
        let u32_at = |o: usize| u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]]);
        let u64_at = |o: usize| u64::from(u32_at(o)) | (u64::from(u32_at(o + 4)) << 32);
        State {
            gpr: std::array::from_fn(|n| u32_at(4 * n)),
            eflags: u32_at(OFF_EFLAGS),
            mxcsr: u32_at(OFF_MXCSR),
            xmm: std::array::from_fn(|n| [u64_at(OFF_XMM + 16 * n), u64_at(OFF_XMM + 16 * n + 8)]),
            window: b[OFF_WINDOW..OFF_WINDOW + WINDOW_SIZE].to_vec(),
        }
    }
}

const XMMS: [AsmRegisterXmm; 8] = [xmm0, xmm1, xmm2, xmm3, xmm4, xmm5, xmm6, xmm7];
/// Destinations of conversions to int32: every GPR but esp (the harness's) and ebp (the window).
const DESTS: [AsmRegister32; 6] = [eax, ecx, edx, ebx, esi, edi];

/// What a template draws its operands from; the operands the table names (`x`, `r32`, `src32`,
/// `m32`, `m64`, `m128`, `a128`, `imm`) are the methods of the same names.
struct Gen<'a> {
    rng: &'a mut Rng,
}

impl Gen<'_> {
    fn x(&mut self) -> AsmRegisterXmm {
        self.rng.pick(&XMMS)
    }

    /// A destination GPR: never esp (the harness's) or ebp (the window's address).
    fn r32(&mut self) -> AsmRegister32 {
        self.rng.pick(&DESTS)
    }

    /// A cmpss/cmpsd predicate, the forms' only immediate (0-7: eq, lt, le, unord, neq, nlt, nle,
    /// ord).
    fn imm(&mut self) -> u32 {
        self.rng.below(8) as u32
    }

    /// Any GPR as a source, ebp (the window's address) included.
    fn src32(&mut self) -> AsmRegister32 {
        self.rng.pick(&[eax, ecx, edx, ebx, ebp, esi, edi])
    }

    /// A memory operand inside the window, 4-byte aligned, with room for `size` bytes.
    fn mem(&mut self, size: u32) -> AsmMemoryOperand {
        let slots = (WINDOW_SIZE as u32 - size) / 4 + 1;
        let off = 4 * self.rng.below(u64::from(slots)) as i32 - 128;
        ebp + off
    }

    fn m32(&mut self) -> AsmMemoryOperand {
        dword_ptr(self.mem(4))
    }

    fn m64(&mut self) -> AsmMemoryOperand {
        qword_ptr(self.mem(8))
    }

    /// 16 bytes in the window, as the unaligned moves take them.
    fn m128(&mut self) -> AsmMemoryOperand {
        xmmword_ptr(self.mem(16))
    }

    /// A 16-byte aligned memory operand (the packed forms fault on others).
    fn a128(&mut self) -> AsmMemoryOperand {
        let off = 16 * self.rng.below(WINDOW_SIZE as u64 / 16) as i32 - 128;
        xmmword_ptr(ebp + off)
    }
}

type Build = fn(&mut CodeAssembler, &mut Gen<'_>) -> Result<(), IcedError>;

/// One instruction form: its name in the count table and how to assemble a random instance.
struct Form {
    name: &'static str,
    build: Build,
}

/// How an operand reads in a form's name: a source GPR is an `r32` and aligned memory an `m128`.
macro_rules! operand_name {
    (src32) => {
        "r32"
    };
    (a128) => {
        "m128"
    };
    ($kind:ident) => {
        stringify!($kind)
    };
}

/// A form's mnemonic: the assembler method's name, or the one given where they differ.
macro_rules! mnemonic {
    ($method:ident) => {
        stringify!($method)
    };
    ($method:ident, $mnemonic:ident) => {
        stringify!($mnemonic)
    };
}

/// A table of forms, one row each: the assembler method, its operands (each drawn by the `Gen`
/// method of its name) and, where the method's name is not the mnemonic, `as` the mnemonic. A form's name is its mnemonic and operands (`movsd x,m64`).
macro_rules! forms {
    ($($method:ident($first:ident $(, $rest:ident)*) $(as $mnemonic:ident)?),* $(,)?) => {
        vec![$(Form {
            name: concat!(
                mnemonic!($method $(, $mnemonic)?), " ", operand_name!($first) $(, ",", operand_name!($rest))*
            ),
            build: |a, g| a.$method(g.$first() $(, g.$rest())*),
        },)*]
    };
}

/// Every lifted SSE form.
fn forms() -> Vec<Form> {
    // One line per instruction, or per family of scalar and packed twins; the order is the
    // order in which cases start with each form.
    let mut forms = forms! {
        movss(x, x), movss(x, m32), movss(m32, x),
        movsd_2(x, x) as movsd, movsd_2(x, m64) as movsd, movsd_2(m64, x) as movsd,
        movaps(x, x), movaps(x, a128), movaps(a128, x), movapd(x, x),
        movups(x, x), movups(x, m128), movups(m128, x), movupd(x, x), movupd(x, m128),
        movdqa(x, x), movdqu(x, m128), movdqu(m128, x),
        movd(x, src32), movd(x, m32), movd(r32, x), movd(m32, x),
        movq(x, x), movq(x, m64), movq(m64, x),
        addss(x, x), addss(x, m32), addsd(x, x), addsd(x, m64),
        subss(x, x), subss(x, m32), subsd(x, x), subsd(x, m64),
        mulss(x, x), mulss(x, m32), mulsd(x, x), mulsd(x, m64),
        divss(x, x), divss(x, m32), divsd(x, x), divsd(x, m64),
        sqrtss(x, x), sqrtss(x, m32), sqrtsd(x, x), sqrtsd(x, m64),
        minss(x, x), minss(x, m32), minsd(x, x), minsd(x, m64),
        maxss(x, x), maxss(x, m32), maxsd(x, x), maxsd(x, m64),
        comiss(x, x), comiss(x, m32), comisd(x, x), comisd(x, m64),
        ucomiss(x, x), ucomiss(x, m32), ucomisd(x, x), ucomisd(x, m64),
        cmpss(x, x, imm), cmpss(x, m32, imm), cmpsd_3(x, x, imm) as cmpsd, cmpsd_3(x, m64, imm) as cmpsd,
        movmskps(r32, x), movmskpd(r32, x),
        cvtsi2ss(x, src32), cvtsi2ss(x, m32), cvtsi2sd(x, src32), cvtsi2sd(x, m32),
        cvtss2sd(x, x), cvtss2sd(x, m32), cvtsd2ss(x, x), cvtsd2ss(x, m64),
        cvtss2si(r32, x), cvtss2si(r32, m32), cvtsd2si(r32, x), cvtsd2si(r32, m64),
        cvttss2si(r32, x), cvttss2si(r32, m32), cvttsd2si(r32, x), cvttsd2si(r32, m64),
        andps(x, x), andps(x, a128), andpd(x, x), andpd(x, a128),
        andnps(x, x), andnpd(x, a128),
        orps(x, x), orpd(x, a128),
        xorps(x, x), xorpd(x, x), xorpd(x, a128),
        pxor(x, x), pand(x, a128), pandn(x, x), por(x, x),
        unpcklps(x, x), unpcklps(x, a128), unpcklpd(x, x), unpcklpd(x, a128),
        cvtps2pd(x, x), cvtps2pd(x, m64),
    };
    forms.push(Form {
        name: "ldmxcsr m32",
        build: |a, g| ldmxcsr(a, g, false),
    });
    forms.push(Form {
        name: STORE_MXCSR,
        build: |a, g| ldmxcsr(a, g, true),
    });
    forms
}

/// `ldmxcsr` of a valid value with every exception masked (written into the window first by
/// integer code), optionally followed by `stmxcsr` into the window.
fn ldmxcsr(a: &mut CodeAssembler, g: &mut Gen<'_>, store: bool) -> Result<(), IcedError> {
    let value = 0x1f80 | ((g.rng.below(4) as u32) << 13) | (g.rng.next() as u32 & MXCSR_FLAGS);
    let at = g.m32();
    a.mov(at, value)?;
    a.ldmxcsr(at)?;
    if store {
        a.stmxcsr(g.m32())?;
    }
    Ok(())
}

struct Case {
    addr: u32,
    code: Vec<u8>,
    forms: Vec<&'static str>,
    init: State,
}

fn random_state(rng: &mut Rng) -> State {
    let mut gpr: [u32; 8] = std::array::from_fn(|_| rng.gpr());
    gpr[4] = 0;
    gpr[5] = EBP_VALUE;
    let mut window = Vec::with_capacity(WINDOW_SIZE);
    for _ in 0..WINDOW_SIZE / 8 {
        window.extend_from_slice(&rng.lane64().to_le_bytes());
    }
    State {
        gpr,
        eflags: (rng.next() as u32 & ARITH_EFLAGS) | 2,
        mxcsr: 0x1f80 | ((rng.below(4) as u32) << 13),
        xmm: std::array::from_fn(|_| [rng.lane64(), rng.lane64()]),
        window,
    }
}

/// The form that stores MXCSR: only ever a case's first and only form, because after arithmetic
/// it would store exception flags rpt does not compute.
const STORE_MXCSR: &str = "ldmxcsr+stmxcsr";

/// `count` cases: each form appears first in turn (so every form is covered), followed by up to
/// three random others.
fn generate(count: usize, seed: u64) -> Vec<Case> {
    let forms = forms();
    let mut rng = Rng(seed);
    let mut cases = Vec::with_capacity(count);
    for i in 0..count {
        let init = random_state(&mut rng);
        let mut a = CodeAssembler::new(32).expect("32-bit assembler");
        let first = &forms[i % forms.len()];
        let mut chosen = vec![first];
        if first.name != STORE_MXCSR {
            for _ in 0..rng.below(4) {
                let form = &forms[rng.below(forms.len() as u64) as usize];
                if form.name != STORE_MXCSR {
                    chosen.push(form);
                }
            }
        }
        for form in &chosen {
            let mut g = Gen { rng: &mut rng };
            (form.build)(&mut a, &mut g).unwrap_or_else(|e| panic!("{}: cannot assemble: {e}", form.name));
        }
        let addr = CODE_BASE + i as u32 * CASE_STRIDE;
        let code = a.assemble(u64::from(addr)).expect("assembles");
        assert!(code.len() < CASE_STRIDE as usize - 1, "case {i} is too long");
        cases.push(Case {
            addr,
            code,
            forms: chosen.iter().map(|f| f.name).collect(),
            init,
        });
    }
    cases
}

// ---------------------------------------------------------------- the three runs

fn input_stream(cases: &[Case]) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(&(cases.len() as u32).to_le_bytes());
    for c in cases {
        out.extend_from_slice(&(c.code.len() as u32).to_le_bytes());
        out.extend_from_slice(&c.code);
        out.extend_from_slice(&c.init.to_bytes());
    }
    out
}

fn parse_states(bytes: &[u8], count: usize, what: &str) -> Vec<State> {
    assert_eq!(bytes.len(), count * STATE_SIZE, "{what} wrote {} bytes", bytes.len());
    bytes.chunks_exact(STATE_SIZE).map(State::from_bytes).collect()
}

fn native_run(cases: &[Case], input: &[u8]) -> Vec<State> {
    let exe = common::native_harness("harness_sse.c", "harness_sse", &["-msse2"]);
    let out = run_tool(&mut Command::new(&exe), input, "the native SSE harness");
    parse_states(&out.stdout, cases.len(), "the native harness")
}

/// Lifts one case (its bytes and a closing `ret`), verified.
fn lift_case(case: &Case) -> Result<Program, String> {
    let mut bytes = case.code.clone();
    bytes.push(0xc3);
    let image = common::code_image(u64::from(case.addr), &bytes);
    let entry = GuestAddr(u64::from(case.addr));
    let lifted = common::lift_verified(&image, entry, &BTreeSet::from([entry]));
    if let Some(d) = lifted.diagnostics.iter().find(|d| d.severity == Severity::Error) {
        return Err(format!("not lifted: {} at {}", d.message, d.addr));
    }
    let mut program = Program::new(X86Pe.state(&Default::default()));
    program.functions.insert(entry, lifted.function);
    Ok(program)
}

fn interpret(case: &Case, program: &Program) -> Result<State, String> {
    let desc = &program.state;
    let mut interp = Interpreter::new(program);
    interp.steps_left = 100_000;
    let s = &case.init;
    let mut gpr = s.gpr;
    gpr[4] = STACK;
    common::set_registers(&mut interp.machine, gpr, s.eflags);
    let st = &mut interp.machine.state;
    st.set(desc, MXCSR, Val::Int(u64::from(s.mxcsr)));
    for (n, [lo, hi]) in s.xmm.iter().enumerate() {
        st.set(desc, xmm_lo(n as u32), Val::Int(*lo));
        st.set(desc, xmm_hi(n as u32), Val::Int(*hi));
    }
    interp
        .machine
        .memory
        .write_bytes(AddrSpace::RAM, u64::from(WINDOW_BASE), &s.window);
    match interp.run(GuestAddr(u64::from(case.addr)), &mut NoEnvironment) {
        Ok(Outcome::Returned) => {}
        other => return Err(format!("the interpreter ended with {other:?}")),
    }
    let m = &interp.machine;
    let get = |slot| m.state.get(desc, slot).int();
    let (mut gpr, eflags) = common::registers(m);
    gpr[4] = 0;
    Ok(State {
        gpr,
        eflags,
        mxcsr: get(MXCSR) as u32,
        xmm: std::array::from_fn(|n| [get(xmm_lo(n as u32)), get(xmm_hi(n as u32))]),
        window: read_bytes(m, AddrSpace::RAM, u64::from(WINDOW_BASE), WINDOW_SIZE),
    })
}

/// The C driver: reads the cases' state blocks (the native harness's input without the code,
/// see [`states_stream`]), runs each case's compiled function and writes the state blocks after.
/// Host and guest are both little-endian, so fields are copied with `memcpy`.
fn driver_source(run: &str) -> String {
    let mut fields = String::new();
    let gprs = ["eax", "ecx", "edx", "ebx", "esp", "ebp", "esi", "edi"];
    for (n, name) in gprs.iter().enumerate().filter(|(_, name)| **name != "esp") {
        let _ = writeln!(fields, "	FIELD(c->{name}, {});", 4 * n);
    }
    let _ = writeln!(fields, "	FIELD(c->mxcsr, {OFF_MXCSR});");
    for n in 0..8 {
        let _ = writeln!(fields, "	FIELD(c->xmm{n}_lo, {});", OFF_XMM + 16 * n);
        let _ = writeln!(fields, "	FIELD(c->xmm{n}_hi, {});", OFF_XMM + 16 * n + 8);
    }
    let flags = [("cf", 0), ("pf", 2), ("af", 4), ("zf", 6), ("sf", 7), ("of", 11)];
    let mut flags_in = String::new();
    let mut flags_out = String::new();
    for (flag, bit) in flags {
        let _ = writeln!(flags_in, "		cpu.{flag} = (eflags >> {bit}) & 1;");
        let _ = writeln!(flags_out, "		eflags |= (uint32_t)(cpu.{flag} & 1) << {bit};");
    }
    format!(
        r#"/* The SSE fuzzer's driver for compiled cases (generated by tests/oracle_sse.rs). */
#define _DEFAULT_SOURCE 1
#include "cpu.h"
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#undef main

void rpt_x86_platform_init(struct cpu *c, int argc, char **argv) {{ (void)c; (void)argc; (void)argv; }}
void rpt_x86_platform_finish(struct cpu *c) {{ (void)c; }}

/* Copies every register field between a state block and the CPU, in the direction FIELD says. */
#define TO_CPU(field, off) memcpy(&(field), block + (off), sizeof(field))
#define TO_BLOCK(field, off) memcpy(block + (off), &(field), sizeof(field))

static void load(struct cpu *c, const uint8_t *block)
{{
#define FIELD TO_CPU
{fields}#undef FIELD
}}

static void store(struct cpu *c, uint8_t *block)
{{
#define FIELD TO_BLOCK
{fields}#undef FIELD
}}

int main(void)
{{
	rpt_mem = mmap(NULL, ((uint64_t)1 << 32) + 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (rpt_mem == MAP_FAILED)
		return 4;
	static uint8_t block[{STATE_SIZE}];
	for (uint32_t i = 0; fread(block, 1, sizeof block, stdin) == sizeof block; i++) {{
		static struct cpu cpu;
		memset(&cpu, 0, sizeof cpu);
		load(&cpu, block);
		cpu.esp = {STACK}u;
		uint32_t eflags;
		memcpy(&eflags, block + {OFF_EFLAGS}, 4);
{flags_in}		memcpy(rpt_mem + {WINDOW_BASE}u, block + {OFF_WINDOW}, {WINDOW_SIZE});
		uint64_t pc = {CODE_BASE}u + i * {CASE_STRIDE}u;
		{run}
		store(&cpu, block);
		eflags = 2;
{flags_out}		memcpy(block + {OFF_EFLAGS}, &eflags, 4);
		memset(block + {OFF_ESP}, 0, 4);
		memcpy(block + {OFF_WINDOW}, rpt_mem + {WINDOW_BASE}u, {WINDOW_SIZE});
		fwrite(block, 1, sizeof block, stdout);
	}}
	return 0;
}}
"#
    )
}

/// The compiled driver's input: the cases' state blocks, back to back.
fn states_stream(cases: &[Case]) -> Vec<u8> {
    cases.iter().flat_map(|c| c.init.to_bytes()).collect()
}

/// Emits every case's function as C and builds it the way `rpt` builds a generation (the
/// emitter's test support: the x86-64 host's flags, warnings as errors), with the runtime, the
/// guest's C part and the driver, then runs it.
fn compiled_run(cases: &[Case], programs: &[Program]) -> Vec<State> {
    c_run(cases, programs, None)
}

/// Every case's instructions lifted alone and grouped into forms across all cases, built as the
/// run-time tier's C (`tier.c`) with no lifted function, and run through `rpt_tier_run`.
fn tier_run(cases: &[Case]) -> Vec<State> {
    let none = BTreeSet::new();
    let instructions: Vec<(GuestAddr, Function)> = cases
        .iter()
        .flat_map(|case| {
            let mut bytes = case.code.clone();
            bytes.push(0xc3);
            let image = common::code_image(u64::from(case.addr), &bytes);
            X86Pe
                .lift_uncovered(&image, &none, &none, &Default::default())
                .into_iter()
                .map(|lifted| (lifted.function.entry, lifted.function))
        })
        .collect();
    c_run(cases, &[], Some(&instructions))
}

/// Builds the cases as C (their functions from `programs`, or with `tier` the run-time tier's
/// instructions and no function) and runs them.
fn c_run(cases: &[Case], programs: &[Program], tier: Option<&[(GuestAddr, Function)]>) -> Vec<State> {
    let plugin = X86Pe;
    let mut program = Program::new(plugin.state(&Default::default()));
    program.helpers = guest::helpers_of(&plugin, &Default::default());
    for p in programs {
        program.functions.extend(p.functions.clone());
    }
    let entry = GuestAddr(u64::from(CODE_BASE));
    let image = guest::image_without_segments(entry);
    let run = match tier {
        None => "rpt_fn f = rpt_lookup(pc); if (!f) return 5; f(&cpu);",
        Some(_) => "rpt_tier_run(&cpu, rpt_mem, pc);",
    };
    let mut extra = vec![SourceFile {
        path: "guest/driver.c".to_string(),
        contents: driver_source(run),
    }];
    if let Some(instructions) = tier {
        let forms = rpt_api::tier::group_forms(instructions);
        let memory = plugin.memory_model("win32-console", &Default::default());
        let externs = BTreeMap::new();
        let ctx = rpt_emit_c::EmitContext {
            state: &program.state,
            helpers: &program.helpers,
            externs: &externs,
            memory: &memory,
            listing_name: "test.lst",
            memarg: false,
            state_in_locals: rpt_ir::RoleSet::EMPTY,
            calls: &rpt_emit_c::state_use::UNKNOWN_CALLS,
            run_time_tier: false,
            count_instructions: false,
        };
        extra.push(SourceFile {
            path: "tier.c".to_string(),
            contents: rpt_emit_c::tier_source(&forms, &BTreeSet::new(), &ctx).expect("the tier's C"),
        });
    }
    extra.extend(
        plugin
            .runtime_sources("win32-console", &Default::default())
            .expect("platform")
            .into_iter()
            // The guest's C part: start-up and the x87 unit it initialises.
            .filter(|f| f.path.ends_with("x86_runtime.c") || f.path.contains("x87")),
    );
    let dir = common::scratch("oracle_sse").join(format!("c-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let src = dir.join("src");
    // Two shards, so that two cores compile in parallel.
    let jobs = emit_support::write_generation(
        &src,
        &program,
        &image,
        entry,
        &extra,
        2,
        emit_support::generation::Choices::BASELINE,
    );
    let mut settings = X86_64Host.compiler();
    // The driver's main replaces the runtime's.
    settings
        .cflags
        .extend(["-Wall", "-Wextra", "-Werror", "-Dmain=rpt_runtime_main"].map(String::from));
    let toolchain = Toolchain::probe(settings).unwrap_or_else(|e| panic!("{e}"));
    let binary = emit_support::build(&dir, &src, &jobs, &toolchain);
    let out = run_tool(
        &mut Command::new(&binary),
        &states_stream(cases),
        "the compiled SSE fuzz driver",
    );
    let _ = std::fs::remove_dir_all(&dir);
    parse_states(&out.stdout, cases.len(), "the compiled driver")
}

// ---------------------------------------------------------------- comparison

fn describe(case: &Case) -> String {
    let mut dis = rpt_guest_x86_pe::decode::Disassembler::new();
    let mut decoder = iced_x86::Decoder::with_ip(32, &case.code, u64::from(case.addr), iced_x86::DecoderOptions::NONE);
    let mut s = format!("case at {:#010x} ({}):", case.addr, case.forms.join("; "));
    for insn in &mut decoder {
        let _ = write!(s, "\n    {}", dis.text(&insn));
    }
    let i = &case.init;
    let _ = write!(
        s,
        "\n  mxcsr {:#06x} eflags {:#x} gprs {:08x?}",
        i.mxcsr, i.eflags, i.gpr
    );
    for (n, [lo, hi]) in i.xmm.iter().enumerate() {
        let _ = write!(s, "\n  xmm{n} {hi:016x}_{lo:016x}");
    }
    s
}

/// The differences between two final states, as text.
fn differences(want: &State, got: &State) -> Vec<String> {
    let mut out = Vec::new();
    for n in 0..8 {
        if want.gpr[n] != got.gpr[n] {
            out.push(format!("gpr {n}: want {:#010x} got {:#010x}", want.gpr[n], got.gpr[n]));
        }
    }
    if want.eflags & ARITH_EFLAGS != got.eflags & ARITH_EFLAGS {
        out.push(format!(
            "eflags: want {:#x} got {:#x} (CF PF AF ZF SF OF compared)",
            want.eflags & ARITH_EFLAGS,
            got.eflags & ARITH_EFLAGS
        ));
    }
    if want.mxcsr & !MXCSR_FLAGS != got.mxcsr & !MXCSR_FLAGS {
        out.push(format!("mxcsr: want {:#06x} got {:#06x}", want.mxcsr, got.mxcsr));
    }
    for n in 0..8 {
        if want.xmm[n] != got.xmm[n] {
            out.push(format!(
                "xmm{n}: want {:016x}_{:016x} got {:016x}_{:016x}",
                want.xmm[n][1], want.xmm[n][0], got.xmm[n][1], got.xmm[n][0]
            ));
        }
    }
    out.extend(rpt_testkit::memory_difference(
        u64::from(WINDOW_BASE),
        &want.window,
        &got.window,
    ));
    out
}

#[test]
fn sse_forms_match_the_cpu_in_the_interpreter_and_in_compiled_c() {
    let count = env_number("RPT_SSE_FUZZ_CASES", DEFAULT_CASES as u64) as usize;
    let seed = env_number("RPT_SSE_FUZZ_SEED", DEFAULT_SEED);
    assert!(seed != 0, "RPT_SSE_FUZZ_SEED: xorshift cannot start from 0");
    // Cases are placed CASE_STRIDE bytes apart below the stack.
    assert!(
        count as u64 * u64::from(CASE_STRIDE) <= u64::from(STACK - CODE_BASE),
        "too many cases"
    );
    let cases = generate(count, seed);
    let input = input_stream(&cases);
    let native = native_run(&cases, &input);

    let mut failures = Vec::new();
    let mut programs = Vec::new();
    for (case, want) in cases.iter().zip(&native) {
        let program = match lift_case(case) {
            Ok(p) => p,
            Err(e) => {
                failures.push(format!("{}\n  {e}", describe(case)));
                continue;
            }
        };
        match interpret(case, &program) {
            Ok(got) => {
                let diffs = differences(want, &got);
                if !diffs.is_empty() {
                    failures.push(format!("interpreter: {}\n  {}", describe(case), diffs.join("\n  ")));
                }
            }
            Err(e) => failures.push(format!("interpreter: {}\n  {e}", describe(case))),
        }
        programs.push(program);
    }
    // The compiled run needs every case lifted; a case that did not is a failure already.
    if programs.len() == cases.len() {
        let compiled = compiled_run(&cases, &programs);
        let tier = tier_run(&cases);
        for (way, states) in [("compiled C", &compiled), ("run-time tier C", &tier)] {
            for ((case, want), got) in cases.iter().zip(&native).zip(states) {
                let diffs = differences(want, got);
                if !diffs.is_empty() {
                    failures.push(format!("{way}: {}\n  {}", describe(case), diffs.join("\n  ")));
                }
            }
        }
    }

    let mut per_form: BTreeMap<&str, usize> = BTreeMap::new();
    for case in &cases {
        for f in &case.forms {
            *per_form.entry(f).or_default() += 1;
        }
    }
    println!("{} cases (seed {seed:#x}), instructions per form:", cases.len());
    for (form, n) in &per_form {
        println!("  {form:<20} {n}");
    }
    let missing: Vec<&str> = forms()
        .iter()
        .map(|f| f.name)
        .filter(|n| !per_form.contains_key(n))
        .collect();
    assert!(missing.is_empty(), "forms never generated: {missing:?}");
    assert_no_failures(&failures, cases.len(), "cases differ from the CPU", 20);
}
