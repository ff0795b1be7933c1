//! The differential fuzzer: random sequences of every lifted non-paired-single instruction, with
//! random GPRs, FPRs, CR, XER, LR, CTR, FPSCR rounding mode and a 1 KiB memory window, run three
//! ways: natively under `qemu-ppc -cpu 750cl` (tests/oracle/harness.c, one process for every
//! case), and four ways in rpt: in its IR interpreter and as C emitted by rpt and compiled with
//! clang, each both as the lifted function and instruction by instruction as the run-time tier
//! runs code discovery missed (`rpt_api::tier`; in C the forms shared across every case of a
//! chunk, run by the runtime's `rpt_tier_run`). All must leave the same registers and memory, so
//! this is also the cross-tier fuzzer: compiled code and the tier agree on every case.
//!
//! `RPT_PPC_FUZZ_CASES=N` changes the number of cases (CI runs [`DEFAULT_CASES`]) and
//! `RPT_PPC_FUZZ_SEED=S` the seed, for longer runs:
//! `RPT_PPC_FUZZ_CASES=100000 cargo test --release -p rpt-guest-ppc-dol --test oracle`.
//!
//! What is masked, and why (only this):
//! - `divw`/`divwu` by zero and `0x80000000 / -1`: rD. The 750 gives -1 or 0 (Dolphin's
//!   hardware facts, which rpt follows); qemu gives the dividend. Such cases write r28, which
//!   nothing reads, with Rc=0.
//! - The FPSCR's exception and status bits after float arithmetic (rpt does not compute them;
//!   see `lift/fp.rs`): those cases compare the control bits (RN, NI, the enables) only, and
//!   use no record forms (whose CR1 copies status bits). Cases made of FPSCR instructions and
//!   moves compare the whole FPSCR.
//! - `fres`/`frsqrte` are not fuzzed: qemu computes exact reciprocals, the 750 estimates (unit
//!   tests check the tables). `mftb`, traps, `sc`, `bl` and the paired singles are not fuzzed
//!   either (non-deterministic, fatal, platform, or not in qemu); the samples cover calls.
//! - `fnmadd`/`fnmsub` (and their single forms) run only under round-to-nearest and toward
//!   zero: qemu negates before rounding, the architecture after (see `lift/fp.rs`), which differs
//!   only under the roundings toward ±infinity.
//! - `fctiw`/`fctiwz`: the high word of the result (f31, see `FCTIW_SINK_HIGH_MASKED`).
//! - Single-precision multiplies run only in cases whose FPRs hold singles: the 750 rounds frC
//!   to 25 bits first (rpt does), qemu does not, and for singles that is the same.
//! - `mtfsb1 29` (NI): qemu ignores it; it is not generated (`mtfsf`/`mtfsfi` set NI in both).
//! - r1 is never used by cases: it points at the harness's state block while a case runs.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use rpt_api::{GuestOptions, GuestPlugin};
use rpt_guest_ppc_dol::state::{CTR, FPSCR, LR, XER, cr_field, fpr, gpr};
use rpt_guest_ppc_dol::{PpcDol, decode};
use rpt_ir::interp::{Interpreter, Outcome, Val};
use rpt_ir::{AddrSpace, Function, GuestAddr, Program};
use rpt_testkit::cbuild::CCompiler;
use rpt_testkit::interp::{read_bytes, run_tier};
use rpt_testkit::{INT_EDGES, Rng, assert_no_failures, env_number, run_tool_within, scratch_dir};

/// Cases in a default (CI) run.
const DEFAULT_CASES: usize = 4000;
/// Cases per harness run and per compiled driver (the harness has room for 8192 at a time).
const CHUNK: usize = 8000;
const DEFAULT_SEED: u64 = 0x5eed_750c_1dea_0001;

// The layout of tests/oracle/harness.h.
const STATE_BASE: u32 = 0x8078_0000;
const WINDOW_BASE: u32 = 0x8070_0100;
const WINDOW_SIZE: usize = 1024;
const CODE_BASE: u32 = 0x8080_0000;
const CASE_STRIDE: u32 = 256;
const OFF_FPR: usize = 128;
const OFF_CR: usize = 384;
const OFF_XER: usize = 388;
const OFF_LR: usize = 392;
const OFF_CTR: usize = 396;
const OFF_FPSCR: usize = 400;
const OFF_WINDOW: usize = 416;
const STATE_SIZE: usize = OFF_WINDOW + WINDOW_SIZE;

/// The FPSCR's control bits: RN, NI and the five enables.
const FPSCR_CONTROL: u32 = 0xff;
/// How long the harness under qemu and the compiled driver may run: a case that loops would
/// otherwise hang the test.
const RUN_LIMIT: Duration = Duration::from_secs(300);

/// This process's scratch directory: a debug and a release run may go on at the same time.
fn scratch() -> PathBuf {
    scratch_dir(
        env!("CARGO_TARGET_TMPDIR"),
        &format!("rpt-guest-ppc-dol-oracle-{}", std::process::id()),
    )
}

// ---------------------------------------------------------------- state

/// Everything a case reads and writes.
#[derive(Clone, PartialEq, Eq)]
struct State {
    gpr: [u32; 32],
    fpr: [u64; 32],
    cr: u32,
    xer: u32,
    lr: u32,
    ctr: u32,
    fpscr: u32,
    window: Vec<u8>,
}

impl State {
    fn to_bytes(&self) -> Vec<u8> {
        let mut out = vec![0u8; STATE_SIZE];
        for (i, g) in self.gpr.iter().enumerate() {
            out[4 * i..4 * i + 4].copy_from_slice(&g.to_be_bytes());
        }
        for (i, f) in self.fpr.iter().enumerate() {
            out[OFF_FPR + 8 * i..OFF_FPR + 8 * i + 8].copy_from_slice(&f.to_be_bytes());
        }
        for (off, v) in [
            (OFF_CR, self.cr),
            (OFF_XER, self.xer),
            (OFF_LR, self.lr),
            (OFF_CTR, self.ctr),
            (OFF_FPSCR, self.fpscr),
        ] {
            out[off..off + 4].copy_from_slice(&v.to_be_bytes());
        }
        out[OFF_WINDOW..].copy_from_slice(&self.window);
        out
    }

    fn from_bytes(b: &[u8]) -> State {
        let w = |off: usize| u32::from_be_bytes(b[off..off + 4].try_into().expect("4 bytes"));
        let d = |off: usize| u64::from_be_bytes(b[off..off + 8].try_into().expect("8 bytes"));
        State {
            gpr: std::array::from_fn(|i| w(4 * i)),
            fpr: std::array::from_fn(|i| d(OFF_FPR + 8 * i)),
            cr: w(OFF_CR),
            xer: w(OFF_XER),
            lr: w(OFF_LR),
            ctr: w(OFF_CTR),
            fpscr: w(OFF_FPSCR),
            window: b[OFF_WINDOW..OFF_WINDOW + WINDOW_SIZE].to_vec(),
        }
    }
}

/// What a case leaves out of the comparison.
#[derive(Clone, Copy, Default)]
struct Masks {
    /// GPRs not compared (bit n for rn).
    gprs: u32,
    /// FPSCR bits compared.
    fpscr: u32,
    /// The fixed source registers an earlier division has read: their values may not change.
    fixed_read: u32,
}

/// f31 is written only by `fctiw`/`fctiwz` and read only by `stfiwx`, and only its low word is
/// compared: the 750 puts 0xfff80000 above the integer (rpt does), qemu sign-extends it.
const FCTIW_SINK_HIGH_MASKED: usize = 31;

struct Case {
    addr: u32,
    words: Vec<u32>,
    init: State,
    masks: Masks,
    templates: Vec<&'static str>,
}

// ---------------------------------------------------------------- random

/// A 32-bit value biased towards the edges where carries and overflows change.
fn value(rng: &mut Rng) -> u32 {
    rng.edgy_u32(&INT_EDGES)
}

/// A double's bit pattern: specials, singles, small integers, or anything.
fn double(rng: &mut Rng) -> u64 {
    const SPECIAL: [u64; 16] = [
        0,
        0x8000_0000_0000_0000,
        0x3ff0_0000_0000_0000,
        0xbff0_0000_0000_0000,
        0x7ff0_0000_0000_0000,
        0xfff0_0000_0000_0000,
        0x7ff8_0000_0000_0000,
        0x7ff4_0000_0000_0001,
        0xfff8_0000_dead_beef,
        0x0000_0000_0000_0001,
        0x8008_0000_0000_0000,
        0x7fef_ffff_ffff_ffff,
        0x41e0_0000_0000_0000,
        0xc1e0_0000_0020_0000,
        0x3810_0000_0000_0000,
        0x47ef_ffff_e000_0000,
    ];
    match rng.below(6) {
        0 => rng.pick(&SPECIAL),
        1 => f64::from(f32::from_bits(rng.u32())).to_bits(),
        2 => f64::from(rng.u32() as i32 % 1000).to_bits(),
        3 => {
            let mantissa = rng.next() & ((1 << 52) - 1);
            let exp = 1023 - 8 + rng.below(16);
            ((rng.next() & 1) << 63) | (exp << 52) | mantissa
        }
        4 => f64::from(f32::from_bits(rng.u32() & 0xbfff_ffff | 0x3000_0000)).to_bits(),
        _ => rng.next(),
    }
}

// ---------------------------------------------------------------- encodings

fn d_form(op: u32, rt: u32, ra: u32, imm: u32) -> u32 {
    (op << 26) | (rt << 21) | (ra << 16) | (imm & 0xffff)
}
fn x_form(op: u32, rt: u32, ra: u32, rb: u32, xo: u32, rc: u32) -> u32 {
    (op << 26) | (rt << 21) | (ra << 16) | (rb << 11) | (xo << 1) | rc
}
fn xo_form(rt: u32, ra: u32, rb: u32, oe: u32, xo: u32, rc: u32) -> u32 {
    (31 << 26) | (rt << 21) | (ra << 16) | (rb << 11) | (oe << 10) | (xo << 1) | rc
}
fn a_form(op: u32, frt: u32, fra: u32, frb: u32, frc: u32, xo: u32) -> u32 {
    (op << 26) | (frt << 21) | (fra << 16) | (frb << 11) | (frc << 6) | (xo << 1)
}
fn spr_field(spr: u32) -> u32 {
    ((spr & 31) << 5) | (spr >> 5)
}

// ---------------------------------------------------------------- generators

/// Registers a case may write (never r1, the bases r5-r7, the sources r24-r27 or the sink r28).
const DST: [u32; 26] = [
    0, 2, 3, 4, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 29, 30, 31, 29, 30, 31,
];
/// Registers a case may read.
const SRC: [u32; 30] = [
    0, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 29, 30, 31,
];
/// Memory bases (they point into the window) and the index register.
const BASES: [u32; 2] = [5, 6];
const INDEX: u32 = 7;
/// Source registers nothing writes, so a division's operands are known when it is generated.
const FIXED: [u32; 4] = [24, 25, 26, 27];
const SINK: u32 = 28;

struct Gen<'a> {
    rng: &'a mut Rng,
    init: &'a mut State,
    masks: &'a mut Masks,
    lr_to_end: bool,
    ctr_to_end: bool,
}

impl Gen<'_> {
    fn dst(&mut self) -> u32 {
        self.rng.pick(&DST)
    }
    fn src(&mut self) -> u32 {
        self.rng.pick(&SRC)
    }
    /// The GPR a load writes (a destination) or a store reads (a source).
    fn data(&mut self, load: bool) -> u32 {
        if load { self.dst() } else { self.src() }
    }
    fn base(&mut self) -> u32 {
        self.rng.pick(&BASES)
    }
    fn f(&mut self) -> u32 {
        self.rng.below(32) as u32
    }
    /// An FPR for float templates: never f31, which only `fctiw`/`fctiwz` write (see [`Masks`]).
    fn fr(&mut self) -> u32 {
        self.rng.below(31) as u32
    }
    fn crf(&mut self) -> u32 {
        self.rng.below(8) as u32
    }
    fn bit(&mut self) -> u32 {
        self.rng.below(2) as u32
    }
    fn imm(&mut self) -> u32 {
        value(self.rng) & 0xffff
    }
    /// A displacement in [-48, 48]; a multiple of `align`.
    fn disp(&mut self, align: u32) -> u32 {
        let steps = 96 / align + 1;
        (self.rng.below(u64::from(steps)) as i32 * align as i32 - 48) as u32
    }
}

type Build = Box<dyn Fn(&mut Gen<'_>) -> Vec<u32>>;

/// A template's generator: the instruction words of one random instance.
fn build(words: impl Fn(&mut Gen<'_>) -> Vec<u32> + 'static) -> Build {
    Box::new(words)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Family {
    /// Integer ALU, CR and SPR moves.
    Int,
    /// Loads and stores (with ALU instructions between).
    Mem,
    /// Branches (with ALU instructions between).
    Branch,
    /// Float arithmetic, compares, moves, loads and stores.
    Float,
    /// FPSCR instructions and FPR moves.
    Fpscr,
}

struct Template {
    name: &'static str,
    families: &'static [Family],
    build: Build,
}

use Family::{Branch as B, Float as F, Fpscr as S, Int as I, Mem as M};

macro_rules! t {
    ($list:ident, $name:expr, $fam:expr, |$g:ident| $body:expr) => {
        $list.push(Template {
            name: $name,
            families: $fam,
            build: build(|$g| $body),
        });
    };
}

const ALU: &[Family] = &[I, M, B, F];

/// Adds a row of a template table: one mnemonic of a family of encodings that differ in a field.
fn table_row(
    templates: &mut Vec<Template>,
    name: &'static str,
    families: &'static [Family],
    words: impl Fn(&mut Gen<'_>) -> Vec<u32> + 'static,
) {
    templates.push(Template {
        name,
        families,
        build: build(words),
    });
}

fn templates() -> Vec<Template> {
    let mut v: Vec<Template> = Vec::new();
    // D-form arithmetic and compares.
    for (name, op) in [
        ("addi", 14),
        ("addis", 15),
        ("addic", 12),
        ("addic.", 13),
        ("subfic", 8),
        ("mulli", 7),
    ] {
        table_row(&mut v, name, ALU, move |g| vec![d_form(op, g.dst(), g.src(), g.imm())]);
    }
    t!(v, "cmpi", ALU, |g| vec![d_form(11, g.crf() << 2, g.src(), g.imm())]);
    t!(v, "cmpli", ALU, |g| vec![d_form(10, g.crf() << 2, g.src(), g.imm())]);
    t!(v, "ori", ALU, |g| vec![d_form(24, g.src(), g.dst(), g.imm())]);
    t!(v, "oris", ALU, |g| vec![d_form(25, g.src(), g.dst(), g.imm())]);
    t!(v, "xori", ALU, |g| vec![d_form(26, g.src(), g.dst(), g.imm())]);
    t!(v, "xoris", ALU, |g| vec![d_form(27, g.src(), g.dst(), g.imm())]);
    t!(v, "andi.", ALU, |g| vec![d_form(28, g.src(), g.dst(), g.imm())]);
    t!(v, "andis.", ALU, |g| vec![d_form(29, g.src(), g.dst(), g.imm())]);
    t!(v, "rlwinm", ALU, |g| {
        let (s, a, sh, mb, me, rc) = (g.src(), g.dst(), g.f(), g.f(), g.f(), g.bit());
        vec![(21 << 26) | (s << 21) | (a << 16) | (sh << 11) | (mb << 6) | (me << 1) | rc]
    });
    t!(v, "rlwimi", ALU, |g| {
        let (s, a, sh, mb, me, rc) = (g.src(), g.dst(), g.f(), g.f(), g.f(), g.bit());
        vec![(20 << 26) | (s << 21) | (a << 16) | (sh << 11) | (mb << 6) | (me << 1) | rc]
    });
    t!(v, "rlwnm", ALU, |g| {
        let (s, a, b, mb, me, rc) = (g.src(), g.dst(), g.src(), g.f(), g.f(), g.bit());
        vec![(23 << 26) | (s << 21) | (a << 16) | (b << 11) | (mb << 6) | (me << 1) | rc]
    });
    // XO-form arithmetic, every OE/Rc combination.
    for (name, xo, uses_b) in [
        ("add", 266, true),
        ("addc", 10, true),
        ("adde", 138, true),
        ("addme", 234, false),
        ("addze", 202, false),
        ("subf", 40, true),
        ("subfc", 8, true),
        ("subfe", 136, true),
        ("subfme", 232, false),
        ("subfze", 200, false),
        ("neg", 104, false),
        ("mullw", 235, true),
    ] {
        table_row(&mut v, name, ALU, move |g| {
            let (d, a) = (g.dst(), g.src());
            let b = if uses_b { g.src() } else { 0 };
            vec![xo_form(d, a, b, g.bit(), xo, g.bit())]
        });
    }
    t!(v, "divw", ALU, |g| divide(g, 491, true));
    t!(v, "divwu", ALU, |g| divide(g, 459, false));
    t!(v, "mulhw", ALU, |g| vec![x_form(
        31,
        g.dst(),
        g.src(),
        g.src(),
        75,
        g.bit()
    )]);
    t!(v, "mulhwu", ALU, |g| vec![x_form(
        31,
        g.dst(),
        g.src(),
        g.src(),
        11,
        g.bit()
    )]);
    t!(v, "cmp", ALU, |g| vec![x_form(
        31,
        g.crf() << 2,
        g.src(),
        g.src(),
        0,
        0
    )]);
    t!(v, "cmpl", ALU, |g| vec![x_form(
        31,
        g.crf() << 2,
        g.src(),
        g.src(),
        32,
        0
    )]);
    for (name, xo) in [
        ("and", 28),
        ("andc", 60),
        ("or", 444),
        ("orc", 412),
        ("xor", 316),
        ("nand", 476),
        ("nor", 124),
        ("eqv", 284),
        ("slw", 24),
        ("srw", 536),
        ("sraw", 792),
    ] {
        table_row(&mut v, name, ALU, move |g| {
            vec![x_form(31, g.src(), g.dst(), g.src(), xo, g.bit())]
        });
    }
    t!(v, "srawi", ALU, |g| vec![x_form(
        31,
        g.src(),
        g.dst(),
        g.f(),
        824,
        g.bit()
    )]);
    t!(v, "cntlzw", ALU, |g| vec![x_form(31, g.src(), g.dst(), 0, 26, g.bit())]);
    t!(v, "extsb", ALU, |g| vec![x_form(31, g.src(), g.dst(), 0, 954, g.bit())]);
    t!(v, "extsh", ALU, |g| vec![x_form(31, g.src(), g.dst(), 0, 922, g.bit())]);
    // CR and SPR moves.
    t!(v, "mcrf", &[I, B], |g| vec![
        (19 << 26) | (g.crf() << 23) | (g.crf() << 18)
    ]);
    for (name, xo) in [
        ("crand", 257),
        ("cror", 449),
        ("crxor", 193),
        ("crnand", 225),
        ("crnor", 33),
        ("creqv", 289),
        ("crandc", 129),
        ("crorc", 417),
    ] {
        table_row(&mut v, name, &[I, B], move |g| {
            vec![x_form(19, g.f(), g.f(), g.f(), xo, 0)]
        });
    }
    t!(v, "mfcr", &[I, B], |g| vec![x_form(31, g.dst(), 0, 0, 19, 0)]);
    t!(v, "mtcrf", &[I], |g| vec![
        (31 << 26) | (g.src() << 21) | ((g.rng.u32() & 0xff) << 12) | (144 << 1)
    ]);
    t!(v, "mcrxr", &[I], |g| vec![(31 << 26) | (g.crf() << 23) | (512 << 1)]);
    t!(v, "mfspr", &[I], |g| {
        let spr = g.rng.pick(&[1, 8, 9]);
        vec![(31 << 26) | (g.dst() << 21) | (spr_field(spr) << 11) | (339 << 1)]
    });
    t!(v, "mtspr", &[I], |g| {
        let spr = g.rng.pick(&[1, 8, 9]);
        vec![(31 << 26) | (g.src() << 21) | (spr_field(spr) << 11) | (467 << 1)]
    });
    t!(v, "sync", &[I, M], |_g| vec![x_form(31, 0, 0, 0, 598, 0)]);
    t!(v, "isync", &[I, M], |_g| vec![x_form(19, 0, 0, 0, 150, 0)]);
    t!(v, "eieio", &[I, M], |_g| vec![x_form(31, 0, 0, 0, 854, 0)]);
    // Integer loads and stores.
    for (name, op, load) in [
        ("lwz", 32, true),
        ("lwzu", 33, true),
        ("lbz", 34, true),
        ("lbzu", 35, true),
        ("lhz", 40, true),
        ("lhzu", 41, true),
        ("lha", 42, true),
        ("lhau", 43, true),
        ("stw", 36, false),
        ("stwu", 37, false),
        ("stb", 38, false),
        ("stbu", 39, false),
        ("sth", 44, false),
        ("sthu", 45, false),
    ] {
        // The update forms (the odd opcodes) take displacements in steps of 8.
        let align = if op % 2 == 1 { 8 } else { 1 };
        table_row(&mut v, name, &[M], move |g| {
            vec![d_form(op, g.data(load), g.base(), g.disp(align))]
        });
    }
    for (name, xo, load) in [
        ("lwzx", 23, true),
        ("lwzux", 55, true),
        ("lbzx", 87, true),
        ("lbzux", 119, true),
        ("lhzx", 279, true),
        ("lhzux", 311, true),
        ("lhax", 343, true),
        ("lhaux", 375, true),
        ("lhbrx", 790, true),
        ("lwbrx", 534, true),
        ("stwx", 151, false),
        ("stwux", 183, false),
        ("stbx", 215, false),
        ("stbux", 247, false),
        ("sthx", 407, false),
        ("sthux", 439, false),
        ("sthbrx", 918, false),
        ("stwbrx", 662, false),
    ] {
        table_row(&mut v, name, &[M], move |g| {
            vec![x_form(31, g.data(load), g.base(), INDEX, xo, 0)]
        });
    }
    t!(v, "lmw", &[M], |g| {
        let rd = g.rng.pick(&[29, 30, 31]);
        vec![d_form(46, rd, g.base(), g.disp(4))]
    });
    t!(v, "stmw", &[M], |g| {
        let rs = 20 + g.rng.below(12) as u32;
        vec![d_form(47, rs, g.base(), g.disp(4))]
    });
    t!(v, "lswi", &[M], |g| {
        let nb = g.rng.below(32) as u32;
        vec![x_form(31, 8, g.base(), nb, 597, 0)]
    });
    t!(v, "stswi", &[M], |g| {
        let rs = 8 + g.rng.below(13) as u32;
        let nb = g.rng.below(32) as u32;
        vec![x_form(31, rs, g.base(), nb, 725, 0)]
    });
    t!(v, "lswx", &[M], |g| {
        let bc = g.rng.below(41) as u32;
        g.init.xer = (g.init.xer & !0x7f) | bc;
        vec![x_form(31, 8, g.base(), INDEX, 533, 0)]
    });
    t!(v, "stswx", &[M], |g| {
        let bc = g.rng.below(41) as u32;
        g.init.xer = (g.init.xer & !0x7f) | bc;
        let rs = 8 + g.rng.below(13) as u32;
        vec![x_form(31, rs, g.base(), INDEX, 661, 0)]
    });
    t!(v, "lwarx/stwcx.", &[M], |g| {
        let base = g.base();
        let mut out = vec![x_form(31, g.dst(), base, INDEX, 20, 0)];
        if g.rng.chance(2) {
            out.push(xo_form(g.dst(), g.src(), g.src(), 0, 266, 0));
        }
        // Sometimes the other base: a store to an address that is not reserved fails.
        let store_base = if g.rng.chance(4) { g.base() } else { base };
        out.push(x_form(31, g.src(), store_base, INDEX, 150, 1));
        out
    });
    t!(v, "stwcx.", &[M], |g| vec![x_form(
        31,
        g.src(),
        g.base(),
        INDEX,
        150,
        1
    )]);
    t!(v, "dcbz", &[M], |g| vec![x_form(31, 0, g.base(), INDEX, 1014, 0)]);
    for (name, xo) in [
        ("dcbst", 54),
        ("dcbf", 86),
        ("dcbt", 278),
        ("dcbtst", 246),
        ("icbi", 982),
    ] {
        table_row(&mut v, name, &[M], move |g| vec![x_form(31, 0, g.base(), INDEX, xo, 0)]);
    }
    // Float loads and stores.
    for (name, op) in [
        ("lfs", 48),
        ("lfsu", 49),
        ("lfd", 50),
        ("lfdu", 51),
        ("stfs", 52),
        ("stfsu", 53),
        ("stfd", 54),
        ("stfdu", 55),
    ] {
        table_row(&mut v, name, &[M, F], move |g| {
            vec![d_form(op, g.fr(), g.base(), g.disp(8))]
        });
    }
    for (name, xo) in [
        ("lfsx", 535),
        ("lfsux", 567),
        ("lfdx", 599),
        ("lfdux", 631),
        ("stfsx", 663),
        ("stfsux", 695),
        ("stfdx", 727),
        ("stfdux", 759),
        ("stfiwx", 983),
    ] {
        // Only stfiwx reads f31, the sink of fctiw and fctiwz (see `Masks`).
        let any_fpr = xo == 983;
        table_row(&mut v, name, &[M, F], move |g| {
            let f = if any_fpr { g.f() } else { g.fr() };
            vec![x_form(31, f, g.base(), INDEX, xo, 0)]
        });
    }
    // Branches: forward over one ALU instruction, and to the case's end through LR or CTR.
    t!(v, "b", &[B], |g| vec![0x4800_0008, filler(g)]);
    t!(v, "bc", &[B], |g| {
        let bo = bo_any(g);
        if g.rng.chance(2) {
            g.init.ctr = g.rng.below(3) as u32;
        }
        vec![(16 << 26) | (bo << 21) | (g.fr() << 16) | 8, filler(g)]
    });
    t!(v, "bclr", &[B], |g| {
        g.lr_to_end = true;
        let bo = bo_any(g);
        vec![x_form(19, bo, g.fr(), 0, 16, 0)]
    });
    t!(v, "bcctr", &[B], |g| {
        g.ctr_to_end = true;
        let bo = g.rng.pick(&[4, 5, 6, 7, 12, 13, 14, 15, 20]);
        vec![x_form(19, bo, g.fr(), 0, 528, 0)]
    });
    // Float arithmetic (the FPSCR's status bits are masked in these cases).
    for (op, xo, name) in [
        (63, 21, "fadd"),
        (63, 20, "fsub"),
        (63, 25, "fmul"),
        (63, 18, "fdiv"),
        (59, 21, "fadds"),
        (59, 20, "fsubs"),
        (59, 25, "fmuls"),
        (59, 18, "fdivs"),
        (63, 29, "fmadd"),
        (63, 28, "fmsub"),
        (63, 31, "fnmadd"),
        (63, 30, "fnmsub"),
        (59, 29, "fmadds"),
        (59, 28, "fmsubs"),
        (59, 31, "fnmadds"),
        (59, 30, "fnmsubs"),
        (63, 23, "fsel"),
    ] {
        // A-form operands: multiplies have frA and frC, adds and divides frA and frB, the
        // multiply-adds and fsel all three.
        let (uses_b, uses_c) = match xo {
            25 => (false, true),
            18 | 20 | 21 => (true, false),
            _ => (true, true),
        };
        table_row(&mut v, name, &[F], move |g| {
            let (t, a) = (g.fr(), g.fr());
            let b = if uses_b { g.fr() } else { 0 };
            let c = if uses_c { g.fr() } else { 0 };
            vec![a_form(op, t, a, b, c, xo)]
        });
    }
    t!(v, "frsp", &[F], |g| vec![x_form(63, g.fr(), 0, g.fr(), 12, 0)]);
    t!(v, "fctiw", &[F], |g| vec![x_form(63, 31, 0, g.fr(), 14, 0)]);
    t!(v, "fctiwz", &[F], |g| vec![x_form(63, 31, 0, g.fr(), 15, 0)]);
    t!(v, "fcmpu", &[F], |g| vec![x_form(
        63,
        g.crf() << 2,
        g.fr(),
        g.fr(),
        0,
        0
    )]);
    t!(v, "fcmpo", &[F], |g| vec![x_form(
        63,
        g.crf() << 2,
        g.fr(),
        g.fr(),
        32,
        0
    )]);
    // Moves: in float cases without Rc; in FPSCR cases with it (CR1 is then exact).
    for (name, xo) in [("fmr", 72), ("fneg", 40), ("fabs", 264), ("fnabs", 136)] {
        table_row(&mut v, name, &[F], move |g| vec![x_form(63, g.fr(), 0, g.fr(), xo, 0)]);
    }
    t!(v, "fmr.", &[S], |g| vec![x_form(63, g.f(), 0, g.f(), 72, 1)]);
    t!(v, "fneg.", &[S], |g| vec![x_form(63, g.f(), 0, g.f(), 40, 1)]);
    t!(v, "fabs.", &[S], |g| vec![x_form(63, g.f(), 0, g.f(), 264, 1)]);
    t!(v, "fnabs.", &[S], |g| vec![x_form(63, g.f(), 0, g.f(), 136, 1)]);
    t!(v, "mffs", &[S], |g| vec![x_form(63, g.f(), 0, 0, 583, g.bit())]);
    t!(v, "mtfsf", &[S], |g| {
        let fm = g.rng.u32() & 0xff;
        vec![(63 << 26) | (fm << 17) | (g.f() << 11) | (711 << 1) | g.bit()]
    });
    // No exception is ever enabled: qemu-user would deliver SIGFPE for an enabled one that is set.
    t!(v, "mtfsfi", &[S], |g| {
        let field = g.crf();
        let imm = match field {
            6 => 0,
            7 => g.rng.below(8) as u32,
            _ => g.rng.below(16) as u32,
        };
        vec![(63 << 26) | (field << 23) | (imm << 12) | (134 << 1) | g.bit()]
    });
    t!(v, "mtfsb0", &[S], |g| vec![x_form(63, g.f(), 0, 0, 70, g.bit())]);
    t!(v, "mtfsb1", &[S], |g| {
        // Not 29 (NI): qemu's mtfsb1 ignores it, the 750 sets it (mtfsf and mtfsfi set it in both).
        let bit = g.rng.pick(&[
            0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 30, 31,
        ]);
        vec![x_form(63, bit, 0, 0, 38, g.bit())]
    });
    t!(v, "mcrfs", &[S], |g| vec![
        (63 << 26) | (g.crf() << 23) | (g.crf() << 18) | (64 << 1)
    ]);
    v
}

/// A BO with every meaning (CR test true/false/none, CTR decrement with zero/nonzero test),
/// with or without the prediction bit.
fn bo_any(g: &mut Gen<'_>) -> u32 {
    g.rng.pick(&[
        0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 24, 25, 26,
    ])
}

/// One ALU instruction, for branches to skip.
fn filler(g: &mut Gen<'_>) -> u32 {
    xo_form(g.dst(), g.src(), g.src(), 0, 266, g.bit())
}

/// `divw`/`divwu` with known operands; the undefined cases write the sink, unrecorded.
fn divide(g: &mut Gen<'_>, xo: u32, signed: bool) -> Vec<u32> {
    let (a, b) = (g.rng.pick(&FIXED), g.rng.pick(&FIXED));
    // Steer towards the undefined cases, but never change a register an earlier division read.
    let free = |r: u32, g: &Gen<'_>| g.masks.fixed_read & (1 << r) == 0;
    match g.rng.below(4) {
        0 if free(b, g) => g.init.gpr[b as usize] = 0,
        1 if signed && a != b && free(a, g) && free(b, g) => {
            g.init.gpr[a as usize] = 0x8000_0000;
            g.init.gpr[b as usize] = 0xffff_ffff;
        }
        _ => {}
    }
    g.masks.fixed_read |= (1 << a) | (1 << b);
    let (va, vb) = (g.init.gpr[a as usize], g.init.gpr[b as usize]);
    let undefined = vb == 0 || (signed && va == 0x8000_0000 && vb == 0xffff_ffff);
    if undefined {
        g.masks.gprs |= 1 << SINK;
        vec![xo_form(SINK, a, b, g.bit(), xo, 0)]
    } else {
        vec![xo_form(g.dst(), a, b, g.bit(), xo, g.bit())]
    }
}

fn random_state(rng: &mut Rng) -> State {
    let mut gpr: [u32; 32] = std::array::from_fn(|_| value(rng));
    gpr[1] = STATE_BASE;
    for b in BASES {
        gpr[b as usize] = WINDOW_BASE + (WINDOW_SIZE as u32) / 2 + (rng.below(17) as u32) * 8 - 64;
    }
    gpr[INDEX as usize] = rng.below(9) as u32 * 8;
    let fpr: [u64; 32] = std::array::from_fn(|_| double(rng));
    let mut window: Vec<u8> = (0..WINDOW_SIZE).map(|_| rng.next() as u8).collect();
    // Some doubles and singles worth loading.
    for k in 0..WINDOW_SIZE / 8 {
        if rng.chance(2) {
            let d = double(rng);
            window[8 * k..8 * k + 8].copy_from_slice(&d.to_be_bytes());
        }
    }
    let xer = (rng.u32() & 0xe000_0000) | rng.below(41) as u32;
    let ctr = if rng.chance(3) { rng.below(3) as u32 } else { value(rng) };
    State {
        gpr,
        fpr,
        cr: rng.u32(),
        xer,
        lr: value(rng),
        ctr,
        fpscr: rng.below(4) as u32,
        window,
    }
}

fn generate(count: usize, seed: u64) -> Vec<Case> {
    let all = templates();
    let mut rng = Rng(seed);
    let families = [I, M, B, F, S];
    let mut cases = Vec::with_capacity(count);
    for i in 0..count {
        let family = families[i % families.len()];
        // Half the float cases hold singles only and may use single-precision multiplies (which
        // round frC to 25 bits on the 750 but not in qemu: the same for singles); the others hold
        // any doubles and use no single-precision multiply.
        let singles_only = family == F && rng.chance(2);
        let pool: Vec<&Template> = all
            .iter()
            .filter(|t| t.families.contains(&family))
            .filter(|t| {
                if family != F {
                    true
                } else if singles_only {
                    !DOUBLE_ONLY.contains(&t.name)
                } else {
                    !SINGLE_MULTIPLIES.contains(&t.name)
                }
            })
            .collect();
        let mut init = random_state(&mut rng);
        if singles_only {
            for f in &mut init.fpr {
                *f = f64::from(f32::from_bits(rng.u32())).to_bits();
            }
        }
        if family == S {
            // `mtfsf` takes FPSCR bits from FPR low words: keep the enables (0xf8) out of them.
            for f in &mut init.fpr {
                *f &= !0xf8;
            }
        }
        let mut masks = Masks {
            gprs: 0,
            fpscr: if family == F { FPSCR_CONTROL } else { u32::MAX },
            fixed_read: 0,
        };
        let mut words = Vec::new();
        let mut names = Vec::new();
        let (mut lr_to_end, mut ctr_to_end) = (false, false);
        let n = 1 + rng.below(6);
        for _ in 0..n {
            let t = pool[rng.below(pool.len() as u64) as usize];
            let mut g = Gen {
                rng: &mut rng,
                init: &mut init,
                masks: &mut masks,
                lr_to_end: false,
                ctr_to_end: false,
            };
            words.extend((t.build)(&mut g));
            lr_to_end |= g.lr_to_end;
            ctr_to_end |= g.ctr_to_end;
            names.push(t.name);
        }
        if ctr_to_end {
            // A CTR decrement before `bcctr` would send it into the case (or onto itself).
            for w in &mut words {
                let op = *w >> 26;
                if op == 16 || (op == 19 && (*w >> 1) & 0x3ff == 16) {
                    *w |= 4 << 21;
                }
            }
        }
        if masks.gprs & (1 << SINK) != 0 {
            // `stmw` would store the sink: start it above r28.
            for w in &mut words {
                if *w >> 26 == 47 && (*w >> 21) & 31 <= SINK {
                    *w = (*w & !(31 << 21)) | (29 << 21);
                }
            }
        }
        if names.iter().any(|n| n.starts_with("fnm")) {
            // qemu negates fnmadd/fnmsub before rounding: keep to the modes where that agrees.
            init.fpscr &= 1;
        }
        let addr = CODE_BASE + (i % CHUNK) as u32 * CASE_STRIDE;
        let end = addr + 4 * words.len() as u32;
        if lr_to_end {
            init.lr = end;
        }
        if ctr_to_end {
            init.ctr = end;
        }
        cases.push(Case {
            addr,
            words,
            init,
            masks,
            templates: names,
        });
    }
    cases
}

/// Single-precision multiplies: only in cases whose values are all singles.
const SINGLE_MULTIPLIES: [&str; 5] = ["fmuls", "fmadds", "fmsubs", "fnmadds", "fnmsubs"];
/// What can make a value that is not a single: left out of the singles-only cases.
const DOUBLE_ONLY: [&str; 13] = [
    "fadd", "fsub", "fmul", "fdiv", "fmadd", "fmsub", "fnmadd", "fnmsub", "lfd", "lfdu", "lfdx", "lfdux", "fsel",
];

/// Every mnemonic the generator can produce, for the coverage check.
fn all_template_names() -> BTreeSet<&'static str> {
    templates().iter().map(|t| t.name).collect()
}

// ---------------------------------------------------------------- the three runs

/// The input the harness (and the C driver) read: count, then per case its words and state.
fn input_stream(cases: &[Case]) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(&(cases.len() as u32).to_be_bytes());
    for c in cases {
        out.extend_from_slice(&(c.words.len() as u32).to_be_bytes());
        for w in &c.words {
            out.extend_from_slice(&w.to_be_bytes());
        }
        out.extend_from_slice(&c.init.to_bytes());
    }
    out
}

fn parse_states(bytes: &[u8], count: usize, what: &str) -> Vec<State> {
    assert_eq!(bytes.len(), count * STATE_SIZE, "{what} wrote {} bytes", bytes.len());
    bytes.chunks_exact(STATE_SIZE).map(State::from_bytes).collect()
}

const PPC_FLAGS: &[&str] = &[
    "-mcpu=750",
    "-O2",
    "-mhard-float",
    "-ffreestanding",
    "-fno-builtin",
    "-nostdlib",
    "-fno-pie",
    "-no-pie",
    "-static",
    "-fno-pic",
    "-mno-sdata",
    "-fno-asynchronous-unwind-tables",
    "-fno-tree-loop-distribute-patterns",
    "-Wl,--build-id=none",
    "-Wl,--no-warn-rwx-segments",
];

fn qemu_run(cases: &[Case], input: &[u8]) -> Vec<State> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/oracle");
    let script = src.join("harness.ld").to_string_lossy().into_owned();
    let ldflags = [PPC_FLAGS, &["-T", script.as_str()][..]].concat();
    let gcc = CCompiler {
        command: "powerpc-linux-gnu-gcc",
        cflags: PPC_FLAGS,
        ldflags: &ldflags,
        hint: "the PowerPC oracle needs gcc-powerpc-linux-gnu (scripts/install-deps.sh)",
    };
    let elf = gcc.build(
        &scratch(),
        &[src.join("harness.c"), src.join("harness.S")],
        "harness.elf",
    );
    let out = run_tool_within(
        Command::new("qemu-ppc").args(["-cpu", "750cl"]).arg(&elf),
        input,
        "qemu-ppc (install qemu-user); a case that loops is stopped",
        Some(RUN_LIMIT),
    );
    parse_states(&out.stdout, cases.len(), "the qemu harness")
}

/// Discovers and lifts one case (its entry and the `blr` at its end), verifying every function.
fn lift_case(case: &Case) -> Program {
    let end = GuestAddr(u64::from(case.addr) + 4 * case.words.len() as u64);
    common::lift_case(case.addr, &case.words, BTreeSet::from([end]), &describe(case))
}

/// Every instruction of a case lifted alone, as the run-time tier runs code no function holds.
fn tier_instructions(case: &Case) -> BTreeMap<GuestAddr, Function> {
    let image = common::case_image(case.addr, &case.words);
    let none = BTreeSet::new();
    PpcDol
        .lift_uncovered(&image, &none, &none, &GuestOptions::new())
        .into_iter()
        .map(|lifted| (lifted.function.entry, lifted.function))
        .collect()
}

/// How the interpreter runs a case: as the lifted function, or through the run-time tier.
enum Tier<'a> {
    Compiled,
    RunTime(&'a BTreeMap<GuestAddr, Function>),
}

fn interpret(case: &Case, program: &Program, tier: Tier<'_>) -> Result<State, String> {
    let desc = &program.state;
    let mut interp = Interpreter::new(program);
    interp.steps_left = 1_000_000;
    let s = &case.init;
    for n in 0..32 {
        interp
            .machine
            .state
            .set(desc, gpr(n), Val::Int(u64::from(s.gpr[n as usize])));
        interp.machine.state.set(desc, fpr(n), Val::F64(s.fpr[n as usize]));
    }
    for (slot, v) in [(XER, s.xer), (LR, s.lr), (CTR, s.ctr), (FPSCR, s.fpscr)] {
        interp.machine.state.set(desc, slot, Val::Int(u64::from(v)));
    }
    // The CR's eight fields are slots of their own; cr0 is the word's top nibble.
    for n in 0..8 {
        let field = (s.cr >> (28 - 4 * n)) & 15;
        interp.machine.state.set(desc, cr_field(n), Val::Int(u64::from(field)));
    }
    interp
        .machine
        .memory
        .write_bytes(AddrSpace::RAM, u64::from(WINDOW_BASE), &s.window);
    let entry = GuestAddr(u64::from(case.addr));
    let mut env = common::interpreter_env();
    let outcome = match tier {
        Tier::Compiled => interp.run(entry, &mut env),
        // No function at all: every instruction runs in the tier, up to the case's `blr`.
        Tier::RunTime(instructions) => {
            run_tier(&mut interp, &Program::new(desc.clone()), instructions, entry, &mut env)
        }
    };
    match outcome {
        Ok(Outcome::Returned) => {}
        other => return Err(format!("the interpreter ended with {other:?}")),
    }
    let m = &interp.machine;
    let word = |slot| m.state.get(desc, slot).int() as u32;
    Ok(State {
        gpr: std::array::from_fn(|n| word(gpr(n as u32))),
        fpr: std::array::from_fn(|n| match m.state.get(desc, fpr(n as u32)) {
            Val::F64(b) => b,
            other => other.int(),
        }),
        cr: (0..8).fold(0, |cr, n| cr | (word(cr_field(n)) & 15) << (28 - 4 * n)),
        xer: word(XER),
        lr: word(LR),
        ctr: word(CTR),
        fpscr: word(FPSCR),
        window: read_bytes(m, AddrSpace::RAM, u64::from(WINDOW_BASE), WINDOW_SIZE),
    })
}

/// The C driver: reads the harness's input, runs each case (`run`: `f(&cpu)` for its compiled
/// function `f`, or through the run-time tier), writes states.
fn driver_source(run: &str) -> String {
    let mut load = String::new();
    let mut store = String::new();
    for n in 0..32 {
        let _ = writeln!(load, "\tc->r{n} = be32(s + {});", 4 * n);
        let _ = writeln!(load, "\tc->f{n} = rpt_f64_from_bits(be64(s + {}));", OFF_FPR + 8 * n);
        let _ = writeln!(store, "\tput32(s + {}, c->r{n});", 4 * n);
        let _ = writeln!(store, "\tput64(s + {}, rpt_f64_bits(c->f{n}));", OFF_FPR + 8 * n);
    }
    for n in 0..8 {
        let shift = 28 - 4 * n;
        let _ = writeln!(load, "\tc->cr{n} = (uint8_t)(be32(s + {OFF_CR}) >> {shift} & 15u);");
    }
    let fields: Vec<String> = (0..8)
        .map(|n| format!("((uint32_t)c->cr{n} << {})", 28 - 4 * n))
        .collect();
    let _ = writeln!(store, "\tput32(s + {OFF_CR}, {});", fields.join(" | "));
    for (field, off) in [("xer", OFF_XER), ("lr", OFF_LR), ("ctr", OFF_CTR), ("fpscr", OFF_FPSCR)] {
        let _ = writeln!(load, "\tc->{field} = be32(s + {off});");
        let _ = writeln!(store, "\tput32(s + {off}, c->{field});");
    }
    format!(
        r#"/* The fuzzer's driver for compiled cases (generated by tests/oracle.rs). */
#define _DEFAULT_SOURCE 1
#include "cpu.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#undef main

void rpt_ppc_platform_init(struct cpu *c, int argc, char **argv) {{ (void)c; (void)argc; (void)argv; }}
void rpt_helper_sc(struct cpu *restrict c) {{ (void)c; abort(); }}
uint64_t rpt_helper_timebase(struct cpu *restrict c) {{ (void)c; return 0; }}

static uint32_t be32(const uint8_t *p) {{ return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3]; }}
static uint64_t be64(const uint8_t *p) {{ return ((uint64_t)be32(p) << 32) | be32(p + 4); }}
static void put32(uint8_t *p, uint32_t v) {{ p[0] = v >> 24; p[1] = v >> 16; p[2] = v >> 8; p[3] = v; }}
static void put64(uint8_t *p, uint64_t v) {{ put32(p, (uint32_t)(v >> 32)); put32(p + 4, (uint32_t)v); }}

static void load(struct cpu *c, const uint8_t *s)
{{
{load}}}

static void store(const struct cpu *c, uint8_t *s)
{{
{store}}}

static uint32_t read_u32(void)
{{
	uint8_t b[4];
	if (fread(b, 1, 4, stdin) != 4) exit(3);
	return be32(b);
}}

int main(void)
{{
	rpt_mem = mmap(NULL, ((uint64_t)1 << 32) + 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (rpt_mem == MAP_FAILED) return 4;
	uint32_t count = read_u32();
	static uint8_t s[{STATE_SIZE}];
	for (uint32_t i = 0; i < count; i++) {{
		uint32_t n = read_u32();
		for (uint32_t k = 0; k < n; k++) read_u32();
		if (fread(s, 1, sizeof s, stdin) != sizeof s) return 3;
		static struct cpu cpu;
		memset(&cpu, 0, sizeof cpu);
		load(&cpu, s);
		memcpy(rpt_mem + {WINDOW_BASE}u, s + {OFF_WINDOW}, {WINDOW_SIZE});
		uint64_t pc = {CODE_BASE}u + i * {CASE_STRIDE}u;
		{run}
		store(&cpu, s);
		memcpy(s + {OFF_WINDOW}, rpt_mem + {WINDOW_BASE}u, {WINDOW_SIZE});
		fwrite(s, 1, sizeof s, stdout);
	}}
	return 0;
}}
"#
    )
}

/// Emits every case's functions as C, compiles them with the runtime and the driver, and runs it.
fn compiled_run(cases: &[Case], programs: &[Program], input: &[u8]) -> Vec<State> {
    let dir = scratch().join("c");
    let _ = std::fs::remove_dir_all(&dir);
    let entry = GuestAddr(u64::from(CODE_BASE));
    let call = "rpt_fn f = rpt_lookup(pc); if (!f) return 5; f(&cpu);";
    let exe = common::build_compiled(&dir, programs, entry, driver_source(call), "fuzz-driver");
    let out = run_tool_within(
        &mut Command::new(&exe),
        input,
        "the compiled fuzz driver; a case that loops is stopped",
        Some(RUN_LIMIT),
    );
    parse_states(&out.stdout, cases.len(), "the compiled driver")
}

/// Runs every case through the run-time tier's C: each case's instructions lifted alone and
/// grouped into forms across all the cases (so forms are shared, with their constants read at run
/// time), compiled with no lifted function, and run by `rpt_tier_run`.
fn tier_run(cases: &[Case], input: &[u8]) -> Vec<State> {
    let dir = scratch().join("tier");
    let _ = std::fs::remove_dir_all(&dir);
    let entry = GuestAddr(u64::from(CODE_BASE));
    let instructions: Vec<(GuestAddr, Function)> =
        cases.iter().flat_map(|c| tier_instructions(c).into_iter()).collect();
    let call = "rpt_tier_run(&cpu, rpt_mem, pc);";
    let exe = common::build_tier(&dir, &instructions, entry, driver_source(call), "fuzz-tier-driver");
    let out = run_tool_within(
        &mut Command::new(&exe),
        input,
        "the run-time tier's fuzz driver; a case that loops is stopped",
        Some(RUN_LIMIT),
    );
    parse_states(&out.stdout, cases.len(), "the run-time tier's driver")
}

// ---------------------------------------------------------------- comparison

fn describe(case: &Case) -> String {
    let mut s = format!("case at {:#010x} ({}):", case.addr, case.templates.join(", "));
    for (k, w) in case.words.iter().enumerate() {
        let addr = GuestAddr(u64::from(case.addr) + 4 * k as u64);
        let text = decode::decode(addr, *w).map_or_else(|| "?".to_string(), |i| i.text());
        let _ = write!(s, "\n    {w:08x}  {text}");
    }
    s
}

/// The differences between two final states under a case's masks, as text.
fn differences(case: &Case, want: &State, got: &State) -> Vec<String> {
    let mut out = Vec::new();
    for n in 0..32 {
        if case.masks.gprs & (1 << n) == 0 && want.gpr[n] != got.gpr[n] {
            out.push(format!("r{n}: want {:#010x} got {:#010x}", want.gpr[n], got.gpr[n]));
        }
    }
    for n in 0..32 {
        let mask = if n == FCTIW_SINK_HIGH_MASKED {
            0xffff_ffff
        } else {
            u64::MAX
        };
        if want.fpr[n] & mask != got.fpr[n] & mask {
            out.push(format!(
                "f{n}: want {:#018x} ({}) got {:#018x} ({})",
                want.fpr[n],
                f64::from_bits(want.fpr[n]),
                got.fpr[n],
                f64::from_bits(got.fpr[n])
            ));
        }
    }
    for (name, a, b, mask) in [
        ("cr", want.cr, got.cr, u32::MAX),
        ("xer", want.xer, got.xer, u32::MAX),
        ("lr", want.lr, got.lr, u32::MAX),
        ("ctr", want.ctr, got.ctr, u32::MAX),
        ("fpscr", want.fpscr, got.fpscr, case.masks.fpscr),
    ] {
        if a & mask != b & mask {
            out.push(format!(
                "{name}: want {a:#010x} got {b:#010x} (compared bits {mask:#010x})"
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

/// Runs one chunk of cases three ways and records every difference.
fn check_chunk(cases: &[Case], failures: &mut Vec<String>) {
    let input = input_stream(cases);
    let oracle = qemu_run(cases, &input);
    let programs: Vec<Program> = cases.iter().map(lift_case).collect();
    for ((case, program), want) in cases.iter().zip(&programs).zip(&oracle) {
        let instructions = tier_instructions(case);
        for (way, tier) in [
            ("interpreter", Tier::Compiled),
            ("run-time tier (interpreter)", Tier::RunTime(&instructions)),
        ] {
            match interpret(case, program, tier) {
                Ok(got) => {
                    let diffs = differences(case, want, &got);
                    if !diffs.is_empty() {
                        failures.push(format!("{way}: {}\n  {}", describe(case), diffs.join("\n  ")));
                    }
                }
                Err(e) => failures.push(format!("{way}: {}\n  {e}", describe(case))),
            }
        }
    }
    let compiled = compiled_run(cases, &programs, &input);
    let tier = tier_run(cases, &input);
    for (way, states) in [("compiled C", &compiled), ("run-time tier C", &tier)] {
        for ((case, want), got) in cases.iter().zip(&oracle).zip(states) {
            let diffs = differences(case, want, got);
            if !diffs.is_empty() {
                failures.push(format!("{way}: {}\n  {}", describe(case), diffs.join("\n  ")));
            }
        }
    }
}

#[test]
fn lifted_instructions_match_qemu_750cl() {
    let count = env_number("RPT_PPC_FUZZ_CASES", DEFAULT_CASES as u64) as usize;
    let seed = env_number("RPT_PPC_FUZZ_SEED", DEFAULT_SEED);
    let cases = generate(count, seed);
    let mut failures = Vec::new();
    for chunk in cases.chunks(CHUNK) {
        check_chunk(chunk, &mut failures);
    }
    // Every template must have been exercised.
    if count >= DEFAULT_CASES {
        let used: BTreeSet<&str> = cases.iter().flat_map(|c| c.templates.iter().copied()).collect();
        let missing: Vec<_> = all_template_names().difference(&used).copied().collect();
        assert!(missing.is_empty(), "templates never generated: {missing:?}");
    }
    let _ = std::fs::remove_dir_all(scratch());
    assert_no_failures(
        &failures,
        4 * cases.len(),
        "checks (cases x interpreter as function/as tier, C as function/as tier) differ from qemu-ppc -cpu 750cl",
        12,
    );
}
