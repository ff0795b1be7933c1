//! Differential fuzzing of rpt's 65816 against bsnes-mercury: ROMs of random instruction
//! sequences, recompiled by rpt and run in both; each sequence's registers and the memory it may
//! touch end up in a result slot in WRAM, and the two WRAMs are compared after the last sequence.
//!
//! # The ROM
//!
//! A LoROM. Bank `$00` holds the runner: `SEI; CLC; XCE`, native mode, S = `$1FFF`, D = 0, DBR = 0,
//! then `JSL` to groups of [`GROUP`] sequences, each group a `JSL` to each of its sequences (so no
//! recompiled function holds hundreds of calls), then a done mark at `$7E:0000` (`$600D` and the
//! sequence count), NMI on, and `WAI` forever; the NMI handler is an `RTI`. Interrupts never
//! happen while sequences run (NMI is off, nothing raises an IRQ), and nothing depends on timing,
//! so any frame after the done mark has the same WRAM in both. Bank `$00` also holds `save` and
//! `copy_out`, which every sequence calls.
//!
//! The sequences are in banks `$01` on (so PHK, PER and the returns see other banks), each bank
//! starting with its `prepare`. A sequence, entered with 16-bit registers and S = `$1FF9`:
//!
//! 1. `LDX #data; JSL prepare`: its 234 bytes of initial data (just before its code) are copied by
//!    `MVN` into the two scratch blocks every sequence shares, and the initial registers loaded:
//!    - LB, `$7E:0400-$047F`: the direct page's target, `abs` with DBR `$00`, `$7E` or a bank-0
//!      mirror, `long` through any mirror bank, pointers. Its data holds a few 16- and 24-bit
//!      pointers into LB and H, some less the initial Y.
//!    - H, `$7E:FFD0-$7F:002F`, across the bank boundary: `abs,X`, `long,X`, `(dp),Y` and block
//!      moves carry into bank `$7F` or stay in `$7E`.
//!    - Registers: D `$0400` half the time, else `$0360-$0420` (D's low byte then mostly not 0); DBR
//!      `$7E`, `$7F`, `$00` or a mirror bank; A an edge value a quarter of the time; X and Y often
//!      small.
//! 2. A fifth of the sequences run their body in emulation mode: `SEC; XCE` (M and X become 1, S
//!    `$01F9`). Half the time `PEA` of a pointer for `(sr,S),Y`; then P by `REP; SEP` with random
//!    bits: M and X (native mode), N, V, Z, C, decimal mode a quarter of the time; I stays set.
//! 3. The body: 4-10 random instructions. The generator follows the registers, the stack and the
//!    scratch bytes as far as it can know them (a small model: loads of known bytes, transfers,
//!    INX..DEY, pushes and pulls, block moves; ALU results are unknown) and picks operands whose
//!    every byte provably lands in the scratch blocks: all 15 memory addressing modes of the loads,
//!    stores, ALU, compare, BIT, TSB/TRB, shift and INC/DEC instructions, pointers included,
//!    `sr,S` and `(sr,S),Y` into bytes the body pushed (an indexed mode the index does not suit is
//!    sometimes preceded by an `LDX`/`LDY #` that makes it fit); immediates; the accumulator
//!    forms; transfers (TCS/TXS only to a known S in a safe range); INX..DEY; CLC, SEC, CLV, CLD,
//!    SED; REP/SEP with random bits but I, which change the widths; pushes (PEA, PEI, PER and the
//!    registers) and pulls of bytes the body pushed (PLP only of a PHP's byte, so rpt's discovery
//!    knows the widths after it); MVN/MVP of up to 16 bytes within the blocks with their `LDX`,
//!    `LDY`, `LDA #` setup; NOP; WDM; and branches (the eight conditional ones, BRA, BRL) over one
//!    instruction that changes neither widths nor stack.
//!    In emulation mode the direct-page modes wrap within the page when D's low byte is 0 (`dp,X`
//!    and `(dp)` pointers included, which the generator uses), S stays in page 1 away from its
//!    ends, and what bsnes v094 gets wrong there is left out: `[dp]`, `[dp],Y` and `(dp,X)` whose
//!    pointer or index would wrap within the page, PEI, and PLB.
//!    Left out everywhere: jumps, calls, returns, BRK, COP, STP, WAI, XCE, CLI, SEI, RTI, and
//!    everything that could reach I/O or write ROM; `(dp,X)` only with D's low byte 0 (bsnes v094
//!    reads it wrongly otherwise).
//! 4. After an emulation-mode body `PHP; CLC; XCE; PLP` (native again, the body's P with M and X
//!    1). `JSL save` stores the registers at `$7E:0020`; `REP #$38`, S back to `$1FF9`, and
//!    `LDX #stack; LDY #slot; JSL copy_out` copies the blocks, the stack and the registers into
//!    the sequence's result slot; `RTL`.
//!
//! A result slot is 256 bytes (`$7E:2000 + 256i` for the first 223, then `$7F:0100` on):
//!
//! | offset | contents |
//! |---|---|
//! | 0-127 | LB after the body |
//! | 128-223 | H after the body |
//! | 224-239 | the 16 stack bytes the body pushes first: `$1FEA-$1FF9` (`$01EA-$01F9` in emulation mode) |
//! | 240 | A (16 bits), X, Y, D, and S less 5 (as `save` sees it after its JSL and PHP) |
//! | 250, 251 | DBR, P |
//! | 252 | 0, 0, `$A5`, `$5A` |
//!
//! Besides rpt against bsnes, bsnes is checked against what the generator's model predicts (the
//! bytes and registers it knows, P's M and X): the model is what keeps every access inside the
//! blocks, so a disagreement there is a fuzzer bug. ROM 0 starts with [`REGRESSIONS`], fixed
//! sequences that once differed.
//!
//! # Running
//!
//! `RPT_SNES_FUZZ_SEED` (default `0x5EED`) and `RPT_SNES_FUZZ_SEQUENCES` (default 2000) choose the
//! run; the sequences are split over an even number of ROMs of at most [`PER_ROM`], ROM `r`
//! generated from the seed and `r` alone, and two ROMs are recompiled and run at a time (rpt's
//! build is mostly one core's work). The recipes turn the run-time tier off: every sequence is
//! statically discoverable, the build takes half as long, and code that would leave the compiled
//! functions fails loudly. A mismatch names the ROM, the sequence, the seed, the disassembly of the
//! sequence after its `JSL prepare` (prologue and body), the initial registers and every differing
//! byte (rpt and bsnes); the ROMs are then kept (`RPT_SNES_FUZZ_KEEP=1` keeps them anyway). Only
//! the x86-64 host is used; without the bsnes core the test says so and passes.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use rpt_guest_snes_rom::decode::{self, Mode, Width};
use rpt_testkit::bsnes::{self, FrameState};
use rpt_tests::snes_rom::{Asm, LoRom, NATIVE16, Vectors, opcode, rpt_dump_frame, write_recipe};

/// The seed of the CI run.
const DEFAULT_SEED: u64 = 0x5eed;
/// Sequences of the CI run.
const DEFAULT_SEQUENCES: usize = 2000;
/// Sequences per ROM at most: every ROM costs a recompile, every sequence about 1/10 of a frame,
/// and there are result slots for 478.
const PER_ROM: usize = 400;
const _: () = assert!(PER_ROM <= 478);

/// LB: WRAM offset and length.
const LB: u32 = 0x0400;
const LB_LEN: u32 = 0x80;
/// H: WRAM offset (`$7E:FFD0`) and length, across the bank boundary.
const H: u32 = 0xffd0;
const H_LEN: u32 = 0x60;
/// S when a sequence starts: the runner's `$1FFF` less two JSLs' return addresses (its group's
/// and its own).
const ENTRY_S: u16 = 0x1ff9;
/// S in emulation mode after `SEC; XCE` at a sequence's start: its high byte becomes 1.
const ENTRY_S_EMULATION: u16 = 0x0100 | (ENTRY_S & 0xff);
/// The stack bytes copied into the result slot: the 16 the body pushes first (under the
/// sequence's return address), in page 1 for an emulation-mode body.
const fn stack_copy(emulation: bool) -> u16 {
    (if emulation { ENTRY_S_EMULATION } else { ENTRY_S }) - 15
}
/// Where `copy_out` keeps the stack bytes' address while X serves the other copies.
const STACK_SOURCE: u32 = 0x7e_003a;
/// Bytes the body may push at most.
const MAX_PUSHED: usize = 24;
/// A result slot's size and where the fields are.
const SLOT: u32 = 256;
const SLOT_H: u32 = LB_LEN;
const SLOT_STACK: u32 = LB_LEN + H_LEN;
const SLOT_REGS: u32 = SLOT_STACK + 16;
/// The WRAM offset of the done mark the runner writes after the last sequence.
const DONE: usize = 0;

/// The WRAM offset of sequence `i`'s result slot.
fn slot_offset(i: usize) -> u32 {
    let i = i as u32;
    if i < 223 {
        0x2000 + SLOT * i
    } else {
        0x1_0100 + SLOT * (i - 223)
    }
}

// ---- random numbers

/// xorshift64*, seeded through splitmix64.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        let mut z = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        Rng((z ^ (z >> 31)) | 1)
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A number in `0..n`.
    fn below(&mut self, n: u32) -> u32 {
        (((self.next() >> 32) * u64::from(n)) >> 32) as u32
    }

    /// True `num` times in `den`.
    fn chance(&mut self, num: u32, den: u32) -> bool {
        self.below(den) < num
    }

    fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len() as u32) as usize]
    }

    fn byte(&mut self) -> u8 {
        self.next() as u8
    }

    /// A data value, an edge case a quarter of the time.
    fn value(&mut self, wide: bool) -> u16 {
        const EDGES: [u16; 14] = [
            0x0000, 0x0001, 0x007f, 0x0080, 0x00ff, 0x0100, 0x7fff, 0x8000, 0xffff, 0xfffe, 0x0099, 0x9999, 0x0909,
            0x5050,
        ];
        let v = if self.chance(1, 4) {
            self.pick(&EDGES)
        } else {
            self.next() as u16
        };
        if wide { v } else { v & 0xff }
    }

    /// An index value: often small, so that indexed modes reach the blocks.
    fn index(&mut self) -> u16 {
        match self.below(10) {
            0..=3 => self.below(0x40) as u16,
            4..=5 => self.below(0x100) as u16,
            _ => self.next() as u16,
        }
    }
}

// ---- what the generator knows

/// A byte the generator knows, or not.
type Byte = Option<u8>;

fn word(b: [Byte; 2]) -> Option<u16> {
    Some(u16::from(b[0]?) | u16::from(b[1]?) << 8)
}

fn known_word(v: u16) -> [Byte; 2] {
    [Some(v as u8), Some((v >> 8) as u8)]
}

/// A pushed byte: its value if known, and for PHP's byte the widths it holds.
#[derive(Clone, Copy, Debug)]
struct Pushed {
    value: Byte,
    php: Option<(bool, bool)>,
}

/// The WRAM offset (0-`$1FFFF`) a 24-bit address reaches, for WRAM and its bank-0 mirrors.
fn wram_offset(addr: u32) -> Option<u32> {
    let bank = addr >> 16;
    let low = addr & 0xffff;
    match bank {
        0x7e | 0x7f => Some((bank - 0x7e) << 16 | low),
        0x00..=0x3f | 0x80..=0xbf if low < 0x2000 => Some(low),
        _ => None,
    }
}

/// The index of a WRAM offset in the scratch model (LB, then H).
fn scratch_index(offset: u32) -> Option<usize> {
    if (LB..LB + LB_LEN).contains(&offset) {
        Some((offset - LB) as usize)
    } else if (H..H + H_LEN).contains(&offset) {
        Some((LB_LEN + offset - H) as usize)
    } else {
        None
    }
}

/// The WRAM offset of scratch model index `i`.
fn scratch_offset(i: usize) -> u32 {
    let i = i as u32;
    if i < LB_LEN { LB + i } else { H + i - LB_LEN }
}

/// The 24-bit address of the WRAM offset `offset` in `bank`, if that bank reaches it.
fn alias(bank: u32, offset: u32) -> Option<u32> {
    match bank {
        0x7e if offset < 0x1_0000 => Some(0x7e_0000 | offset),
        0x7f if offset >= 0x1_0000 => Some(0x7f_0000 | (offset & 0xffff)),
        0x00..=0x3f | 0x80..=0xbf if offset < 0x2000 => Some(bank << 16 | offset),
        _ => None,
    }
}

/// A random bank that mirrors bank 0's first 8 KiB.
fn mirror_bank(rng: &mut Rng) -> u32 {
    let b = rng.below(0x80);
    if b < 0x40 { b } else { b + 0x40 }
}

/// The model of the CPU the generator follows.
#[derive(Clone, Debug)]
struct Model {
    /// Emulation mode (M and X then 1, S in page 1).
    emulation: bool,
    m8: bool,
    x8: bool,
    c: [Byte; 2],
    x: [Byte; 2],
    y: [Byte; 2],
    d: Option<u16>,
    dbr: Option<u8>,
    /// The program bank.
    k: u8,
    s: u16,
    /// S when the stack model started: byte `i` of `stack` is at `s0 - i`.
    s0: u16,
    /// The highest stack address reads may reach (above `s0`: the JSL's return address).
    stack_top: u16,
    stack: Vec<Pushed>,
    /// LB, then H.
    mem: Vec<Byte>,
}

/// How an instruction uses its data operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Use {
    Read,
    Write,
    Modify,
}

fn use_of(mnemonic: &str) -> Option<Use> {
    match mnemonic {
        "ORA" | "AND" | "EOR" | "ADC" | "SBC" | "CMP" | "BIT" | "LDA" | "LDX" | "LDY" | "CPX" | "CPY" => {
            Some(Use::Read)
        }
        "STA" | "STX" | "STY" | "STZ" => Some(Use::Write),
        "ASL" | "LSR" | "ROL" | "ROR" | "INC" | "DEC" | "TSB" | "TRB" => Some(Use::Modify),
        _ => None,
    }
}

/// The addressing modes with a data operand in memory.
fn is_memory_mode(mode: Mode) -> bool {
    matches!(
        mode,
        Mode::Absolute
            | Mode::AbsoluteX
            | Mode::AbsoluteY
            | Mode::Long
            | Mode::LongX
            | Mode::Direct
            | Mode::DirectX
            | Mode::DirectY
            | Mode::DirectIndirect
            | Mode::DirectIndirectLong
            | Mode::DirectXIndirect
            | Mode::DirectIndirectY
            | Mode::DirectIndirectLongY
            | Mode::Stack
            | Mode::StackIndirectY
    )
}

impl Model {
    fn index(&self, which: [Byte; 2]) -> Option<u32> {
        word(which).map(u32::from)
    }

    fn widths(&self) -> decode::Widths {
        decode::Widths {
            m8: self.m8,
            x8: self.x8,
            emulation: self.emulation,
        }
    }

    /// Bytes of a data operand of `width`.
    fn bytes_of(&self, width: Width) -> u32 {
        match width {
            Width::M if !self.m8 => 2,
            Width::X if !self.x8 => 2,
            _ => 1,
        }
    }

    /// The stack byte at bank-0 address `addr`, if it is one the body pushed.
    fn pushed_at(&self, addr: u32) -> Option<&Pushed> {
        let k = u32::from(self.s0).checked_sub(addr)? as usize;
        (addr > u32::from(self.s) && k < self.stack.len()).then(|| &self.stack[k])
    }

    /// What a read of the 24-bit `addr` gives: `None` where the body must not read, else the
    /// byte if known. Stack addresses only for the stack-relative modes.
    fn read_at(&self, addr: u32, stack: bool) -> Option<Byte> {
        if stack {
            if addr >> 16 != 0 || addr <= u32::from(self.s) || addr > u32::from(self.stack_top) {
                return None;
            }
            return Some(self.pushed_at(addr).and_then(|p| p.value));
        }
        let i = scratch_index(wram_offset(addr)?)?;
        Some(self.mem[i])
    }

    /// Whether the body may write the 24-bit `addr` (a pushed byte that is not a PHP's, for the
    /// stack-relative modes, so every PLP pulls the widths rpt's discovery saw pushed).
    fn writable(&self, addr: u32, stack: bool) -> bool {
        if stack {
            return addr >> 16 == 0 && self.pushed_at(addr).is_some_and(|p| p.php.is_none());
        }
        wram_offset(addr).and_then(scratch_index).is_some()
    }

    fn write_at(&mut self, addr: u32, v: Byte, stack: bool) {
        if stack {
            let k = (u32::from(self.s0) - addr) as usize;
            self.stack[k].value = v;
        } else if let Some(i) = wram_offset(addr).and_then(scratch_index) {
            self.mem[i] = v;
        }
    }

    /// A pointer whose bytes are at the bank-0 addresses `at`, all known.
    fn pointer(&self, at: impl IntoIterator<Item = u32>) -> Option<u32> {
        let mut v = 0;
        for (i, a) in at.into_iter().enumerate() {
            let b = self.read_at(a, false).or_else(|| self.read_at(a, true))??;
            v |= u32::from(b) << (8 * i);
        }
        Some(v)
    }

    /// The bank-0 address of direct-page offset `offset` (operand plus index): within the page in
    /// emulation mode with D's low byte 0, else `D + offset` wrapping at 64 KiB.
    fn direct(&self, offset: u32) -> Option<u32> {
        let d = u32::from(self.d?);
        Some(if self.page_wraps() {
            d | (offset & 0xff)
        } else {
            (d + offset) & 0xffff
        })
    }

    /// Whether the 6502's direct-page modes wrap within the page.
    fn page_wraps(&self) -> bool {
        self.emulation && self.d.is_some_and(|d| d & 0xff == 0)
    }

    /// The addresses of the `n` bytes of the operand of `mode` with operand `op`, if the registers
    /// they depend on and the pointers on the way are known. Where bsnes v094 differs from the
    /// 65C816 (`(dp,X)` with D's low byte not 0; in emulation mode `(dp,X)`, `[dp]` and `[dp],Y`
    /// whose pointer would wrap within the page) there is none.
    fn operand_addrs(&self, mode: Mode, op: u32, n: u32) -> Option<Vec<u32>> {
        let bank0 = |base: u32| (0..n).map(|i| (base + i) & 0xffff).collect::<Vec<_>>();
        let linear = |base: u32| (0..n).map(|i| (base + i) & 0xff_ffff).collect::<Vec<_>>();
        let direct = |offset: u32| (0..n).map(|i| self.direct(offset + i)).collect::<Option<Vec<_>>>();
        let dbr = || self.dbr.map(|b| u32::from(b) << 16);
        let x = || self.index(self.x);
        let y = || self.index(self.y);
        // A pointer of `len` bytes at direct-page offset `offset`; none that the page would wrap
        // where `no_wrap` (the 65816's own `[dp]`, and `(dp,X)`).
        let pointer = |offset: u32, len: u32, no_wrap: bool| {
            if no_wrap && self.page_wraps() && (offset & 0xff) + len > 0x100 {
                return None;
            }
            let at = (0..len).map(|i| self.direct(offset + i)).collect::<Option<Vec<_>>>()?;
            self.pointer(at)
        };
        Some(match mode {
            Mode::Direct => direct(op)?,
            Mode::DirectX => direct(op + x()?)?,
            Mode::DirectY => direct(op + y()?)?,
            Mode::DirectIndirect => linear(dbr()? | pointer(op, 2, false)?),
            Mode::DirectXIndirect if self.d? & 0xff == 0 => {
                let x = x()?;
                if self.emulation && op + x + 1 > 0xff {
                    return None;
                }
                linear(dbr()? | pointer(op + x, 2, true)?)
            }
            Mode::DirectXIndirect => return None,
            Mode::DirectIndirectY => linear((dbr()? | pointer(op, 2, false)?) + y()?),
            Mode::DirectIndirectLong => linear(pointer(op, 3, true)?),
            Mode::DirectIndirectLongY => linear(pointer(op, 3, true)? + y()?),
            Mode::Absolute => linear(dbr()? | op),
            Mode::AbsoluteX => linear((dbr()? | op) + x()?),
            Mode::AbsoluteY => linear((dbr()? | op) + y()?),
            Mode::Long => linear(op),
            Mode::LongX => linear(op + x()?),
            Mode::Stack => bank0(u32::from(self.s) + op),
            Mode::StackIndirectY => {
                let at = u32::from(self.s) + op;
                linear((dbr()? | self.pointer([at & 0xffff, (at + 1) & 0xffff])?) + y()?)
            }
            _ => return None,
        })
    }

    /// The operand bytes of `mode`/`op` if every one may be accessed as `how`.
    fn access(&self, mode: Mode, op: u32, n: u32, how: Use) -> Option<Vec<u32>> {
        let addrs = self.operand_addrs(mode, op, n)?;
        let stack = mode == Mode::Stack;
        let ok = addrs.iter().all(|&a| match how {
            Use::Read => self.read_at(a, stack).is_some(),
            Use::Write | Use::Modify => self.writable(a, stack),
        });
        ok.then_some(addrs)
    }

    fn push(&mut self, v: Byte) {
        self.stack.push(Pushed { value: v, php: None });
        self.s -= 1;
    }

    /// Pushes a 16-bit value as the CPU does: high byte first.
    fn push2(&mut self, v: [Byte; 2]) {
        self.push(v[1]);
        self.push(v[0]);
    }

    fn pull(&mut self) -> Byte {
        self.s += 1;
        self.stack
            .pop()
            .expect("the generator pulls only what the body pushed")
            .value
    }

    fn pull2(&mut self) -> [Byte; 2] {
        let low = self.pull();
        [low, self.pull()]
    }

    /// Sets X's flag: 8-bit index registers clear their high bytes.
    fn set_x8(&mut self, x8: bool) {
        self.x8 = x8;
        if x8 {
            self.x[1] = Some(0);
            self.y[1] = Some(0);
        }
    }

    /// An index register written with `v` at the index width.
    fn index_from(&self, v: [Byte; 2]) -> [Byte; 2] {
        if self.x8 { [v[0], Some(0)] } else { v }
    }

    /// The accumulator written with `v` at the accumulator width (B kept with M=1).
    fn acc_from(&self, v: [Byte; 2]) -> [Byte; 2] {
        if self.m8 { [v[0], self.c[1]] } else { v }
    }

    /// S after TCS (`0x1b`) or TXS, if known: in emulation mode only the low byte moves.
    fn new_s(&self, opcode: u8) -> Option<u16> {
        let v = if opcode == 0x1b {
            self.c
        } else {
            self.index_from(self.x)
        };
        if self.emulation {
            Some(0x100 | u16::from(v[0]?))
        } else {
            word(v)
        }
    }

    fn room(&self, bytes: usize) -> bool {
        self.stack.len() + bytes <= MAX_PUSHED
    }

    /// What is known after either of two paths that changed neither the widths nor the stack.
    fn join(&self, other: &Model) -> Model {
        let byte = |a: Byte, b: Byte| if a == b { a } else { None };
        let pair = |a: [Byte; 2], b: [Byte; 2]| [byte(a[0], b[0]), byte(a[1], b[1])];
        assert!(self.m8 == other.m8 && self.x8 == other.x8 && self.s == other.s && self.emulation == other.emulation);
        Model {
            c: pair(self.c, other.c),
            x: pair(self.x, other.x),
            y: pair(self.y, other.y),
            d: if self.d == other.d { self.d } else { None },
            dbr: if self.dbr == other.dbr { self.dbr } else { None },
            stack: self
                .stack
                .iter()
                .zip(&other.stack)
                .map(|(a, b)| Pushed {
                    value: byte(a.value, b.value),
                    php: a.php,
                })
                .collect(),
            mem: self.mem.iter().zip(&other.mem).map(|(&a, &b)| byte(a, b)).collect(),
            ..self.clone()
        }
    }
}

// ---- the sequences

/// The initial registers of a sequence.
#[derive(Clone, Copy, Debug)]
struct Init {
    /// Emulation mode for the body (`SEC; XCE` after the registers are loaded).
    emulation: bool,
    a: u16,
    x: u16,
    y: u16,
    d: u16,
    dbr: u8,
    p: u8,
}

impl Init {
    /// Whether the body starts with 8-bit index registers.
    fn x8(&self) -> bool {
        self.emulation || self.p & 0x10 != 0
    }
}

/// One generated sequence, for the report.
#[derive(Clone, Debug)]
struct Sequence {
    index: usize,
    addr: u32,
    init: Init,
    /// Its prologue (from the initial registers on) and body, disassembled.
    listing: Vec<String>,
    /// What the generator's model knows of the result slot: offset, value, mask of known bits.
    known: Vec<(u32, u8, u8)>,
    /// For a regression, what it once caught.
    regression: Option<&'static str>,
}

/// A generated ROM.
struct FuzzRom {
    bytes: Vec<u8>,
    sequences: Vec<Sequence>,
    /// How often each opcode was emitted in the bodies.
    counts: [u32; 256],
    /// The frame after which every sequence has run.
    frame: u32,
}

/// One body instruction class and how often it is drawn.
#[derive(Clone, Copy, Debug)]
enum Class {
    Memory,
    Immediate,
    Accumulator,
    Register,
    Flags,
    Push,
    Pull,
    BlockMove,
    Branch,
}

const CLASSES: [(Class, u32); 9] = [
    (Class::Memory, 40),
    (Class::Immediate, 12),
    (Class::Accumulator, 6),
    (Class::Register, 12),
    (Class::Flags, 8),
    (Class::Push, 10),
    (Class::Pull, 9),
    (Class::BlockMove, 3),
    (Class::Branch, 5),
];

/// The opcodes of each class, from the decoder's table.
struct Opcodes {
    memory: Vec<u8>,
    immediate: Vec<u8>,
    accumulator: Vec<u8>,
}

impl Opcodes {
    fn new() -> Opcodes {
        let mut o = Opcodes {
            memory: Vec::new(),
            immediate: Vec::new(),
            accumulator: Vec::new(),
        };
        for opcode in 0..=255u8 {
            let info = decode::info(opcode);
            let Some(how) = use_of(info.mnemonic) else { continue };
            match info.mode {
                m if is_memory_mode(m) => o.memory.push(opcode),
                Mode::ImmediateM | Mode::ImmediateX if how == Use::Read => o.immediate.push(opcode),
                Mode::Accumulator => o.accumulator.push(opcode),
                _ => {}
            }
        }
        o
    }
}

const REGISTER_OPS: [u8; 17] = [
    0xaa, 0xa8, 0x8a, 0x98, 0x9b, 0xbb, 0x5b, 0x7b, 0xeb, 0x3b, 0xba, 0x1b, 0x9a, 0xe8, 0xc8, 0xca, 0x88,
];
const FLAG_OPS: [u8; 9] = [0x18, 0x38, 0xb8, 0xd8, 0xf8, 0xc2, 0xe2, 0xea, 0x42];
const PUSH_OPS: [u8; 10] = [0x48, 0xda, 0x5a, 0x8b, 0x0b, 0x4b, 0x08, 0xf4, 0xd4, 0x62];
const PULL_OPS: [u8; 6] = [0x68, 0xfa, 0x7a, 0xab, 0x2b, 0x28];
/// BPL BMI BVC BVS BCC BCS BNE BEQ BRA BRL.
const BRANCH_OPS: [u8; 10] = [0x10, 0x30, 0x50, 0x70, 0x90, 0xb0, 0xd0, 0xf0, 0x80, 0x82];

/// Where S may be set by TCS/TXS: room for the body's and the epilogue's pushes and nothing else
/// there, and in emulation mode no page-1 boundary within reach.
fn stack_ok(s: u16, emulation: bool) -> bool {
    if emulation {
        (0x0140..=0x01e0).contains(&s)
    } else {
        (0x1f40..=0x1fe0).contains(&s) || (0x0080..=0x00ff).contains(&s)
    }
}

/// Generates the body and the prologue's data for one sequence.
struct Generator<'a> {
    rng: &'a mut Rng,
    ops: &'a Opcodes,
    model: Model,
    /// How often each opcode was emitted.
    counts: &'a mut [u32; 256],
}

impl Generator<'_> {
    /// Candidate operands of a memory instruction in `mode` (all 256 for the one-byte forms,
    /// ones aimed at the scratch blocks for `abs` and `long`).
    fn candidates(&mut self, mode: Mode) -> Vec<u32> {
        let m = &self.model;
        match mode {
            Mode::Absolute | Mode::AbsoluteX | Mode::AbsoluteY => {
                let Some(dbr) = m.dbr.map(u32::from) else {
                    return Vec::new();
                };
                let index = match mode {
                    Mode::AbsoluteX => m.index(m.x),
                    Mode::AbsoluteY => m.index(m.y),
                    _ => Some(0),
                };
                let Some(index) = index else { return Vec::new() };
                let mut out = Vec::new();
                for bank in [dbr, dbr + 1] {
                    for i in 0..(LB_LEN + H_LEN) as usize {
                        let Some(t) = alias(bank, scratch_offset(i)) else {
                            continue;
                        };
                        if let Some(op) = t.checked_sub(dbr << 16).and_then(|v| v.checked_sub(index))
                            && op <= 0xffff
                        {
                            out.push(op);
                        }
                    }
                }
                out
            }
            Mode::Long | Mode::LongX => {
                let index = if mode == Mode::LongX { m.index(m.x) } else { Some(0) };
                let Some(index) = index else { return Vec::new() };
                let mut out = Vec::new();
                for _ in 0..64 {
                    let offset = scratch_offset(self.rng.below(LB_LEN + H_LEN) as usize);
                    let bank = match self.rng.below(4) {
                        0 => mirror_bank(self.rng),
                        1 => 0,
                        _ => 0x7e + (offset >> 16),
                    };
                    if let Some(op) = alias(bank, offset).and_then(|t| t.checked_sub(index)) {
                        out.push(op);
                    }
                }
                out
            }
            _ => (0..=255).collect(),
        }
    }

    /// Emits one body item; false when the drawn instruction cannot be used in this state.
    fn item(&mut self, asm: &mut Asm) -> bool {
        let total: u32 = CLASSES.iter().map(|c| c.1).sum();
        let mut r = self.rng.below(total);
        let class = CLASSES
            .iter()
            .find(|c| {
                if r < c.1 {
                    return true;
                }
                r -= c.1;
                false
            })
            .map(|c| c.0)
            .unwrap_or(Class::Memory);
        match class {
            Class::Memory => {
                let opcode = self.rng.pick(&self.ops.memory);
                self.memory(asm, opcode, true)
            }
            Class::Immediate => {
                let opcode = self.rng.pick(&self.ops.immediate);
                let wide = self.model.bytes_of(decode::info(opcode).width) == 2;
                let v = if matches!(opcode, 0xa2 | 0xa0) {
                    self.rng.index()
                } else {
                    self.rng.value(wide)
                };
                self.emit(asm, opcode, u32::from(v) & if wide { 0xffff } else { 0xff });
                true
            }
            Class::Accumulator => {
                let opcode = self.rng.pick(&self.ops.accumulator);
                self.emit(asm, opcode, 0);
                true
            }
            Class::Register => {
                let opcode = self.rng.pick(&REGISTER_OPS);
                self.implied(asm, opcode)
            }
            Class::Flags => {
                let opcode = self.rng.pick(&FLAG_OPS);
                let operand = match opcode {
                    // REP/SEP: random bits but I, often just the width bits.
                    0xc2 | 0xe2 if self.rng.chance(1, 2) => u32::from(self.rng.pick(&[0x10u8, 0x20, 0x30])),
                    0xc2 | 0xe2 => u32::from(self.rng.byte() & 0xfb),
                    0x42 => u32::from(self.rng.byte()),
                    _ => 0,
                };
                self.emit(asm, opcode, operand);
                true
            }
            Class::Push => {
                // PHP a quarter of the time, so that PLP has something to pull.
                let opcode = if self.rng.chance(1, 4) {
                    0x08
                } else {
                    self.rng.pick(&PUSH_OPS)
                };
                self.push(asm, opcode)
            }
            Class::Pull => {
                // PHP's byte on top: PLP half the time (the widths it restores are the test).
                let php_on_top = self.model.stack.last().is_some_and(|p| p.php.is_some());
                let opcode = if php_on_top && self.rng.chance(1, 2) {
                    0x28
                } else {
                    self.rng.pick(&PULL_OPS)
                };
                self.implied(asm, opcode)
            }
            Class::BlockMove => self.block_move(asm),
            Class::Branch => self.branch_over(asm),
        }
    }

    /// One instruction that changes neither the widths nor the stack (what a branch may skip).
    fn simple(&mut self, asm: &mut Asm) -> bool {
        match self.rng.below(5) {
            0 | 1 => {
                let opcode = self.rng.pick(&self.ops.memory);
                self.memory(asm, opcode, false)
            }
            2 => {
                let opcode = self.rng.pick(&self.ops.immediate);
                let wide = self.model.bytes_of(decode::info(opcode).width) == 2;
                let v = self.rng.value(wide);
                self.emit(asm, opcode, u32::from(v));
                true
            }
            3 => {
                let opcode = self.rng.pick(&self.ops.accumulator);
                self.emit(asm, opcode, 0);
                true
            }
            _ => {
                let opcode = self.rng.pick(&REGISTER_OPS);
                !matches!(opcode, 0x1b | 0x9a) && self.implied(asm, opcode)
            }
        }
    }

    /// A branch (conditional, BRA or BRL) over one instruction; after it the model knows what both
    /// ways agree on.
    fn branch_over(&mut self, asm: &mut Asm) -> bool {
        let branch = self.rng.pick(&BRANCH_OPS);
        let len = 1 + decode::info(branch).mode.operand_len(asm.widths());
        let before = self.model.clone();
        let mut skipped = Asm::new(asm.pc() + len, asm.widths());
        if !self.simple(&mut skipped) {
            self.model = before;
            return false;
        }
        let insn = decode::decode(
            skipped.bytes(),
            skipped.pc() - skipped.bytes().len() as u32,
            asm.widths(),
        )
        .expect("one whole instruction");
        asm.op(branch, insn.len);
        self.counts[usize::from(branch)] += 1;
        asm.op(insn.info.opcode, insn.operand);
        self.model = if matches!(branch, 0x80 | 0x82) {
            before
        } else {
            before.join(&self.model)
        };
        true
    }

    /// A memory instruction with an operand whose bytes all land where they may. With `fixup`, a
    /// mode the state does not suit is tried again half the time after instructions that may make
    /// it fit (kept only if they do): `LDX`/`LDY #` of a small value for the indexed modes, `PEA;
    /// PLD` of a D near the blocks for the direct-page modes when D is not known, of `$0400` for
    /// `(dp,X)` (D's low byte 0), and `PEA` of a pointer for `(sr,S),Y`.
    fn memory(&mut self, asm: &mut Asm, opcode: u8, fixup: bool) -> bool {
        if self.memory_as_is(asm, opcode) {
            return true;
        }
        if !fixup || !self.rng.chance(1, 2) {
            return false;
        }
        let (model, counts) = (self.model.clone(), *self.counts);
        let mut trial = asm.clone();
        self.fit(&mut trial, decode::info(opcode).mode);
        if self.memory_as_is(&mut trial, opcode) {
            *asm = trial;
            return true;
        }
        self.model = model;
        *self.counts = counts;
        false
    }

    /// A memory instruction if the state allows one of its operands.
    fn memory_as_is(&mut self, asm: &mut Asm, opcode: u8) -> bool {
        let info = decode::info(opcode);
        let how = use_of(info.mnemonic).expect("a memory instruction");
        let n = self.model.bytes_of(info.width);
        let valid = self.valid_operands(info.mode, n, how);
        if valid.is_empty() {
            return false;
        }
        let op = self.rng.pick(&valid);
        self.emit(asm, opcode, op);
        true
    }

    /// Instructions that may make `mode` usable (see [`Generator::memory`]).
    fn fit(&mut self, asm: &mut Asm, mode: Mode) {
        let small = self.rng.below(0x40);
        if mode.uses_direct_page() && mode != Mode::DirectXIndirect && self.model.d.is_none() && self.model.room(2) {
            // D lost (TCD or PLD of an unknown value): one near the blocks.
            let d = LB - 0xa0 + self.rng.below(0xc1);
            self.emit(asm, 0xf4, d);
            self.emit(asm, 0x2b, 0);
        }
        match mode {
            Mode::DirectXIndirect => {
                if self.model.d.is_none_or(|d| d & 0xff != 0) && self.model.room(2) {
                    self.emit(asm, 0xf4, u32::from(LB as u16));
                    self.emit(asm, 0x2b, 0);
                }
                self.emit(asm, 0xa2, small);
            }
            Mode::DirectX | Mode::AbsoluteX | Mode::LongX => self.emit(asm, 0xa2, small),
            Mode::StackIndirectY => {
                if self.model.index(self.model.y).is_none() || self.rng.chance(1, 2) {
                    self.emit(asm, 0xa0, small);
                }
                let y = self.model.index(self.model.y).unwrap_or(0);
                if let Some(p) = self.pointer16(y).filter(|_| self.model.room(2)) {
                    self.emit(asm, 0xf4, u32::from(p));
                }
            }
            Mode::DirectY | Mode::AbsoluteY | Mode::DirectIndirectY | Mode::DirectIndirectLongY => {
                self.emit(asm, 0xa0, small)
            }
            _ => {}
        }
    }

    /// The operands of a memory instruction in `mode` whose `n` bytes may be accessed as `how`.
    fn valid_operands(&mut self, mode: Mode, n: u32, how: Use) -> Vec<u32> {
        let candidates = self.candidates(mode);
        candidates
            .into_iter()
            .filter(|&op| self.model.access(mode, op, n, how).is_some())
            .collect()
    }

    /// Transfers, INX..., TCS/TXS and pulls, where the state allows them.
    fn implied(&mut self, asm: &mut Asm, opcode: u8) -> bool {
        let m = &self.model;
        let ok = match opcode {
            // TCS / TXS: only to a known S with room.
            0x1b | 0x9a => m.new_s(opcode).is_some_and(|s| stack_ok(s, m.emulation)),
            0x68 => m.stack.len() >= m.bytes_of(Width::M) as usize,
            0xfa | 0x7a => m.stack.len() >= m.bytes_of(Width::X) as usize,
            // PLB: not in emulation mode (bsnes v094 pulls it from the wrong page at S = $01FF).
            0xab => !m.stack.is_empty() && !m.emulation,
            0x2b => m.stack.len() >= 2,
            0x28 => m.stack.last().is_some_and(|p| p.php.is_some()),
            _ => true,
        };
        if !ok && matches!(opcode, 0x1b | 0x9a) && self.rng.chance(1, 2) {
            // Half the time a TCS/TXS that cannot be gets its value loaded first: in the stack's
            // page or page 0's upper half (where 8-bit index registers put S).
            let page0 = opcode == 0x9a && self.model.x8 || self.rng.chance(1, 2);
            let s = if self.model.emulation {
                // S's high byte stays 1: only its low byte is loaded.
                0x40 + self.rng.below(0xa1)
            } else if page0 {
                0x80 + self.rng.below(0x80)
            } else {
                0x1f40 + self.rng.below(0xa1)
            };
            if opcode == 0x9a {
                self.emit(asm, 0xa2, s);
            } else if self.model.m8 {
                self.emit(asm, 0xeb, 0);
                self.emit(asm, 0xa9, s >> 8);
                self.emit(asm, 0xeb, 0);
                self.emit(asm, 0xa9, s & 0xff);
            } else {
                self.emit(asm, 0xa9, s);
            }
            self.emit(asm, opcode, 0);
            return true;
        }
        if ok {
            self.emit(asm, opcode, 0);
        }
        ok
    }

    /// Pushes, with room on the stack; PEA often of a pointer for `(sr,S),Y`.
    fn push(&mut self, asm: &mut Asm, opcode: u8) -> bool {
        // PEI: not in emulation mode (bsnes v094 wraps its pointer within the page).
        if !self.model.room(2) || opcode == 0xd4 && self.model.emulation {
            return false;
        }
        let operand = match opcode {
            0xf4 => {
                // Often a pointer for the current Y (or none).
                let y = match self.model.index(self.model.y) {
                    Some(y) if self.rng.chance(1, 2) => y,
                    _ => 0,
                };
                u32::from(self.pointer16(y).unwrap_or_else(|| self.rng.value(true)))
            }
            0xd4 => {
                let valid: Vec<u32> = (0..=255)
                    .filter(|&op| self.model.access(Mode::Direct, op, 2, Use::Read).is_some())
                    .collect();
                if valid.is_empty() {
                    return false;
                }
                self.rng.pick(&valid)
            }
            0x62 => self.next_u16(),
            _ => 0,
        };
        self.emit(asm, opcode, operand);
        true
    }

    fn next_u16(&mut self) -> u32 {
        u32::from(self.rng.next() as u16)
    }

    /// A 16-bit pointer that `(sr,S),Y` or `(dp),Y` can use with the current DBR and index `y`.
    fn pointer16(&mut self, y: u32) -> Option<u16> {
        let m = &self.model;
        let dbr = u32::from(m.dbr?) << 16;
        for _ in 0..16 {
            let offset = scratch_offset(self.rng.below(LB_LEN + H_LEN) as usize);
            for bank in [dbr >> 16, (dbr >> 16) + 1] {
                if let Some(p) = alias(bank, offset)
                    .and_then(|t| t.checked_sub(dbr))
                    .and_then(|t| t.checked_sub(y))
                    .filter(|&p| p <= 0xffff)
                {
                    return Some(p as u16);
                }
            }
        }
        None
    }

    /// `LDX #src; LDY #dst; LDA #count; MVN/MVP dst,src` within the blocks (`XBA; LDA #0; XBA`
    /// first when A is 8-bit and B is not known to be 0).
    fn block_move(&mut self, asm: &mut Asm) -> bool {
        let mvp = self.rng.chance(1, 2);
        let count = self.rng.below(16);
        // A block: (bank choices, first and last 16-bit address). With 8-bit index registers only
        // H's bank-$7F part has addresses below $100.
        let pick_range = |rng: &mut Rng, x8: bool| -> (u32, u32) {
            let (bank, start, len) = match (x8, rng.below(3)) {
                (true, _) | (false, 0) => (0x7f, 0, 0x30),
                (false, 1) => (0x7e, H & 0xffff, 0x30),
                _ => {
                    let bank = match rng.below(3) {
                        0 => 0x7e,
                        1 => 0,
                        _ => mirror_bank(rng),
                    };
                    (bank, LB, LB_LEN)
                }
            };
            let first = start + rng.below(len - count);
            (bank, first)
        };
        let x8 = self.model.x8;
        let (src_bank, src) = pick_range(self.rng, x8);
        let (dst_bank, dst) = pick_range(self.rng, x8);
        let (x, y) = if mvp { (src + count, dst + count) } else { (src, dst) };
        if self.model.m8 && self.model.c[1] != Some(0) {
            self.emit(asm, 0xeb, 0);
            self.emit(asm, 0xa9, 0);
            self.emit(asm, 0xeb, 0);
        }
        self.emit(asm, 0xa2, x);
        self.emit(asm, 0xa0, y);
        self.emit(asm, 0xa9, count);
        let opcode = if mvp { 0x44 } else { 0x54 };
        self.emit(asm, opcode, dst_bank | src_bank << 8);
        true
    }

    /// Emits one instruction and follows its effect in the model.
    fn emit(&mut self, asm: &mut Asm, opcode: u8, operand: u32) {
        assert_eq!(asm.widths(), self.model.widths());
        asm.op(opcode, operand);
        self.counts[usize::from(opcode)] += 1;
        self.step(opcode, operand, asm.pc());
        asm.set_widths(self.model.widths());
    }

    /// What one instruction does to the model.
    fn step(&mut self, opcode: u8, op: u32, next_pc: u32) {
        let info = decode::info(opcode);
        let m = &mut self.model;
        let n = m.bytes_of(info.width);
        if let Some(how) = use_of(info.mnemonic) {
            let stack = info.mode == Mode::Stack;
            // The operand's bytes: immediate, accumulator or memory.
            let (addrs, vals): (Vec<u32>, Vec<Byte>) = match info.mode {
                Mode::ImmediateM | Mode::ImmediateX => {
                    (Vec::new(), (0..n).map(|i| Some((op >> (8 * i)) as u8)).collect())
                }
                Mode::Accumulator => (Vec::new(), m.c[..n as usize].to_vec()),
                mode => {
                    let addrs = m.access(mode, op, n, how).expect("the operand was checked");
                    let vals = addrs.iter().map(|&a| m.read_at(a, stack).flatten()).collect();
                    (addrs, vals)
                }
            };
            let two = |v: &[Byte]| [v[0], v.get(1).copied().unwrap_or(None)];
            let unknown = [None, None];
            match info.mnemonic {
                "LDA" => m.c = m.acc_from(two(&vals)),
                "LDX" => m.x = m.index_from(two(&vals)),
                "LDY" => m.y = m.index_from(two(&vals)),
                "ORA" | "AND" | "EOR" | "ADC" | "SBC" => m.c = m.acc_from(unknown),
                "STA" | "STX" | "STY" | "STZ" => {
                    let src = match info.mnemonic {
                        "STA" => m.c,
                        "STX" => m.x,
                        "STY" => m.y,
                        _ => [Some(0), Some(0)],
                    };
                    for (i, &a) in addrs.iter().enumerate() {
                        m.write_at(a, src[i], stack);
                    }
                }
                _ if how == Use::Modify => {
                    if info.mode == Mode::Accumulator {
                        m.c = m.acc_from(unknown);
                    } else {
                        for &a in &addrs {
                            m.write_at(a, None, stack);
                        }
                    }
                }
                _ => {}
            }
            return;
        }
        let add_index = |r: [Byte; 2], delta: i32, x8: bool| -> [Byte; 2] {
            match word(r) {
                Some(v) => {
                    let v = (i32::from(v) + delta) as u16;
                    if x8 { [Some(v as u8), Some(0)] } else { known_word(v) }
                }
                None => r,
            }
        };
        match info.mnemonic {
            "TAX" => m.x = m.index_from(m.c),
            "TAY" => m.y = m.index_from(m.c),
            "TXA" => m.c = m.acc_from(m.x),
            "TYA" => m.c = m.acc_from(m.y),
            "TXY" => m.y = m.x,
            "TYX" => m.x = m.y,
            "TCD" => m.d = word(m.c),
            "TDC" => m.c = m.d.map_or([None, None], known_word),
            "TSC" => m.c = known_word(m.s),
            "TSX" => m.x = m.index_from(known_word(m.s)),
            "XBA" => m.c = [m.c[1], m.c[0]],
            "TCS" | "TXS" => {
                m.s = m.new_s(opcode).expect("checked");
                m.s0 = m.s;
                m.stack_top = m.s;
                m.stack.clear();
            }
            "INX" => m.x = add_index(m.x, 1, m.x8),
            "DEX" => m.x = add_index(m.x, -1, m.x8),
            "INY" => m.y = add_index(m.y, 1, m.x8),
            "DEY" => m.y = add_index(m.y, -1, m.x8),
            // REP/SEP: M and X stay 1 in emulation mode.
            "REP" | "SEP" if !m.emulation => {
                let set = info.mnemonic == "SEP";
                if op & 0x20 != 0 {
                    m.m8 = set;
                }
                if op & 0x10 != 0 {
                    m.set_x8(set);
                }
            }
            "PHA" => {
                if m.m8 {
                    m.push(m.c[0]);
                } else {
                    m.push2(m.c);
                }
            }
            "PHX" | "PHY" => {
                let r = if info.mnemonic == "PHX" { m.x } else { m.y };
                if m.x8 {
                    m.push(r[0]);
                } else {
                    m.push2(r);
                }
            }
            "PHB" => m.push(m.dbr),
            "PHK" => m.push(Some(m.k)),
            "PHD" => m.push2(m.d.map_or([None, None], known_word)),
            "PHP" => {
                m.stack.push(Pushed {
                    value: None,
                    php: Some((m.m8, m.x8)),
                });
                m.s -= 1;
            }
            "PEA" => m.push2(known_word(op as u16)),
            "PER" => m.push2(known_word((next_pc as u16).wrapping_add(op as u16))),
            "PEI" => {
                let addrs = m.access(Mode::Direct, op, 2, Use::Read).expect("checked");
                let v = [
                    m.read_at(addrs[0], false).flatten(),
                    m.read_at(addrs[1], false).flatten(),
                ];
                m.push2(v);
            }
            "PLA" => {
                let v = if m.m8 { [m.pull(), None] } else { m.pull2() };
                m.c = m.acc_from(v);
            }
            "PLX" | "PLY" => {
                let v = if m.x8 { [m.pull(), Some(0)] } else { m.pull2() };
                if info.mnemonic == "PLX" {
                    m.x = v;
                } else {
                    m.y = v;
                }
            }
            "PLB" => m.dbr = m.pull(),
            "PLD" => m.d = word(m.pull2()),
            "PLP" => {
                let (m8, x8) = m.stack.last().and_then(|p| p.php).expect("checked");
                m.pull();
                m.m8 = m8;
                m.set_x8(x8);
            }
            "MVN" | "MVP" => {
                let (dst_bank, src_bank) = (op & 0xff, op >> 8);
                let count = word(m.c).expect("a known count") as u32;
                let mask = if m.x8 { 0xff } else { 0xffff };
                let (mut x, mut y) = (m.index(m.x).expect("known"), m.index(m.y).expect("known"));
                for _ in 0..=count {
                    let v = m.read_at(src_bank << 16 | x, false).expect("a block in scratch");
                    assert!(m.writable(dst_bank << 16 | y, false), "a block in scratch");
                    m.write_at(dst_bank << 16 | y, v, false);
                    if info.mnemonic == "MVN" {
                        x = (x + 1) & mask;
                        y = (y + 1) & mask;
                    } else {
                        x = x.wrapping_sub(1) & mask;
                        y = y.wrapping_sub(1) & mask;
                    }
                }
                m.x = m.index_from(known_word(x as u16));
                m.y = m.index_from(known_word(y as u16));
                m.c = known_word(0xffff);
                m.dbr = Some(dst_bank as u8);
            }
            // CLC, SEC, CLV, CLD, SED, NOP, WDM.
            _ => {}
        }
    }
}

/// The 224 bytes of a sequence's initial LB and H, with pointers into the blocks in LB: some for
/// `(dp)` and `(dp,X)` with the initial DBR, some for `(dp),Y` with the initial Y, some long.
fn initial_data(rng: &mut Rng, init: &Init) -> Vec<u8> {
    let mut data: Vec<u8> = (0..LB_LEN + H_LEN)
        .map(|_| {
            if rng.chance(1, 8) {
                rng.value(false) as u8
            } else {
                rng.byte()
            }
        })
        .collect();
    let dbr = u32::from(init.dbr);
    let y = u32::from(if init.x8() { init.y & 0xff } else { init.y });
    let mut used = vec![false; LB_LEN as usize];
    for slot in 0..8 {
        let at = rng.below(LB_LEN - 2) as usize;
        if used[at..at + 3].iter().any(|&u| u) {
            continue;
        }
        let target = scratch_offset(rng.below(LB_LEN + H_LEN) as usize);
        let minus = if slot % 2 == 1 { y } else { 0 };
        let pointer = if slot < 4 {
            // 16-bit, for the data bank (or the next, where the index carries into it); the
            // bank byte a mirror for [dp].
            [dbr, dbr + 1]
                .into_iter()
                .filter_map(|b| alias(b, target))
                .find_map(|t| t.checked_sub(dbr << 16)?.checked_sub(minus).filter(|&p| p <= 0xffff))
                .map(|p| p | mirror_bank(rng) << 16)
        } else {
            let bank = if target >= 0x2000 {
                0x7e + (target >> 16)
            } else if rng.chance(1, 2) {
                mirror_bank(rng)
            } else {
                0x7e
            };
            alias(bank, target).and_then(|t| t.checked_sub(minus))
        };
        if let Some(p) = pointer {
            data[at..at + 3].copy_from_slice(&p.to_le_bytes()[..3]);
            used[at..at + 3].fill(true);
        }
    }
    data
}

/// A fixed sequence that once showed a difference (fixed since): its initial registers and its
/// body as (opcode, operand) pairs. Every run starts ROM 0 with these.
struct Regression {
    what: &'static str,
    init: Init,
    body: &'static [(u8, u32)],
}

const REGRESSIONS: [Regression; 1] = [Regression {
    what: "PEI (dp) pushes the word at D+dp, not the word it points to (rpt pushed the latter)",
    init: Init {
        emulation: false,
        a: 0xeb92,
        x: 0x0021,
        y: 0x000a,
        d: 0x03e6,
        dbr: 0x7f,
        p: 0x04,
    },
    // PEI ($65); PLA; PEI ($6A); PLX; PEI ($1A); with 16-bit registers and D's low byte not 0.
    body: &[(0xd4, 0x65), (0x68, 0), (0xd4, 0x6a), (0xfa, 0), (0xd4, 0x1a)],
}];

/// Draws a sequence's initial registers.
fn draw_init(rng: &mut Rng) -> Init {
    let d = if rng.chance(1, 2) {
        0x0400
    } else {
        0x0360 + rng.below(0xc1) as u16
    };
    let dbr = match rng.below(5) {
        0 | 1 => 0x7e,
        2 => 0x7f,
        3 => 0x00,
        _ => mirror_bank(rng) as u8,
    };
    // P: N V M X D I Z C; I stays set, decimal mode a quarter of the time.
    let mut p = rng.byte() | 0x04;
    if !rng.chance(1, 4) {
        p &= !0x08;
    }
    Init {
        emulation: rng.chance(1, 5),
        a: rng.value(true),
        x: rng.index(),
        y: rng.index(),
        d,
        dbr,
        p,
    }
}

/// WRAM where `prepare` puts a sequence's initial A, X, Y, D and DBR (twice) before loading them.
const INIT_REGS: u32 = 0x7e_0030;
/// WRAM where `save` stores a sequence's final registers: A, X, Y, D, S, DBR, P, then 0, 0 and the
/// mark `$A5 $5A` (16 bytes, copied into the slot as they are).
const SAVED_REGS: u32 = 0x7e_0020;

/// Emits sequence `index` at `asm`'s position: its initial data (the blocks, then the registers),
/// then its code, which `save` and `copy_out` (at `shared`) serve. Gives the sequence.
fn sequence(
    rng: &mut Rng,
    ops: &Opcodes,
    counts: &mut [u32; 256],
    asm: &mut Asm,
    shared: &Shared,
    index: usize,
    regression: Option<&Regression>,
) -> Sequence {
    let init = regression.map_or_else(|| draw_init(rng), |r| r.init);
    let mut data = initial_data(rng, &init);
    for v in [init.a, init.x, init.y, init.d] {
        data.extend_from_slice(&v.to_le_bytes());
    }
    data.extend_from_slice(&[init.dbr, init.dbr]);
    let data_addr = asm.pc();
    asm.data(&data);
    let addr = asm.pc();

    // Entered from its group with 16-bit registers: the blocks and registers prepared first.
    asm.set_widths(NATIVE16);
    asm.ldx_imm(data_addr as u16);
    asm.jsl(data_addr & 0xff_0000 | 0x8000);
    let from = asm.count();
    let mut model = Model {
        emulation: false,
        m8: false,
        x8: false,
        c: known_word(init.a),
        x: known_word(init.x),
        y: known_word(init.y),
        d: Some(init.d),
        dbr: Some(init.dbr),
        k: (addr >> 16) as u8,
        s: ENTRY_S,
        s0: ENTRY_S,
        stack_top: 0x1fff,
        stack: Vec::new(),
        mem: data[..(LB_LEN + H_LEN) as usize].iter().map(|&b| Some(b)).collect(),
    };
    if init.emulation {
        // SEC; XCE: M and X 1 (the index registers' high bytes cleared), S in page 1.
        asm.op(0x38, 0);
        asm.op(0xfb, 0);
        model.emulation = true;
        model.m8 = true;
        model.set_x8(true);
        model.s = ENTRY_S_EMULATION;
        model.s0 = ENTRY_S_EMULATION;
        model.stack_top = ENTRY_S_EMULATION;
        asm.set_widths(model.widths());
    }
    let mut generator = Generator {
        rng,
        ops,
        model: model.clone(),
        counts,
    };
    if regression.is_none() && generator.rng.chance(1, 2) {
        // A pointer for `(sr,S),Y`, with the initial Y or none.
        let y = match init.x8() {
            _ if generator.rng.chance(1, 2) => 0,
            false => init.y,
            true => init.y & 0xff,
        };
        let p = generator.pointer16(u32::from(y)).unwrap_or(0);
        asm.pea(p);
        model.push2(known_word(p));
    }
    // REP/SEP leave M and X alone in emulation mode.
    if !init.p & 0xfb != 0 {
        asm.rep(!init.p & 0xfb);
    }
    asm.sep(init.p);
    if !init.emulation {
        model.m8 = init.p & 0x20 != 0;
        model.set_x8(init.p & 0x10 != 0);
    }

    // The body.
    generator.model = model;
    for &(opcode, operand) in regression.map_or(&[][..], |r| r.body) {
        let info = decode::info(opcode);
        if is_memory_mode(info.mode) || opcode == 0xd4 {
            let n = if opcode == 0xd4 {
                2
            } else {
                generator.model.bytes_of(info.width)
            };
            let how = use_of(info.mnemonic).unwrap_or(Use::Read);
            let mode = if opcode == 0xd4 { Mode::Direct } else { info.mode };
            assert!(
                generator.model.access(mode, operand, n, how).is_some(),
                "regression {index}: {} ${operand:X} reaches outside the blocks",
                info.mnemonic
            );
        }
        generator.emit(asm, opcode, operand);
    }
    let length = if regression.is_some() {
        0
    } else {
        4 + generator.rng.below(7)
    };
    let mut items = 0;
    let mut tries = 0;
    while items < length && tries < 1000 {
        tries += 1;
        if generator.item(asm) {
            items += 1;
        }
    }
    let listing = asm.listing(from);
    let known = known_result(&generator.model);

    // Back to native mode with the body's P (`PHP; CLC; XCE; PLP`: M and X 1, as the emulation
    // mode PHP pushed them); the registers saved; the stack and the widths back; the slot written.
    if init.emulation {
        asm.implied(opcode::PHP);
        asm.op(0x18, 0);
        asm.op(0xfb, 0);
        asm.implied(opcode::PLP);
        asm.set_widths(decode::Widths {
            m8: true,
            x8: true,
            emulation: false,
        });
    }
    let slot = 0x7e_0000 + slot_offset(index);
    asm.jsl(shared.save);
    asm.rep(0x38);
    asm.lda_imm(ENTRY_S);
    asm.implied(opcode::TCS);
    asm.ldx_imm(stack_copy(init.emulation));
    asm.ldy_imm(slot as u16);
    asm.jsl(shared.copy_out[(slot >> 16) as usize - 0x7e]);
    asm.implied(opcode::RTL);
    Sequence {
        index,
        addr,
        init,
        listing,
        known,
        regression: regression.map(|r| r.what),
    }
}

/// What `model` (after a body) says the result slot will hold, where it knows: the blocks'
/// bytes, the registers, S as `save` stores it (five bytes lower), and P's M and X.
fn known_result(model: &Model) -> Vec<(u32, u8, u8)> {
    // The model's scratch bytes are in the slot's order: LB, then H.
    let mut known: Vec<(u32, u8, u8)> = model
        .mem
        .iter()
        .enumerate()
        .filter_map(|(i, b)| b.map(|v| (i as u32, v, 0xff)))
        .collect();
    let s = known_word(model.s - 5);
    let regs = [model.c, model.x, model.y, model.d.map_or([None, None], known_word), s];
    for (i, b) in regs.iter().flatten().enumerate() {
        if let Some(v) = b {
            known.push((SLOT_REGS + i as u32, *v, 0xff));
        }
    }
    if let Some(dbr) = model.dbr {
        known.push((SLOT_REGS + 10, dbr, 0xff));
    }
    let p = u8::from(model.m8) << 5 | u8::from(model.x8) << 4;
    known.push((SLOT_REGS + 11, p, 0x30));
    known
}

/// Where the routines every sequence calls are.
struct Shared {
    save: u32,
    /// For slots in bank `$7E`, and in `$7F`.
    copy_out: [u32; 2],
}

/// `prepare` of a sequence bank, at its start: entered by JSL with 16-bit registers and X at a
/// sequence's initial data in this bank, copies LB and H into place and loads the initial A, X,
/// Y, D and DBR. `MVN` moves X on by the bytes it copied, so X walks through the data.
fn prepare(asm: &mut Asm) {
    let k = (asm.pc() >> 16) as u8;
    for (to, len, bank) in [
        (LB, LB_LEN, 0x7e),
        (H, 0x30, 0x7e),
        (0, 0x30, 0x7f),
        (INIT_REGS & 0xffff, 10, 0x7e),
    ] {
        asm.ldy_imm(to as u16);
        asm.lda_imm((len - 1) as u16);
        asm.mvn(bank, k);
    }
    asm.lda_long(INIT_REGS + 6);
    asm.implied(opcode::TCD);
    asm.lda_long(INIT_REGS + 2);
    asm.implied(opcode::TAX);
    asm.lda_long(INIT_REGS + 4);
    asm.implied(opcode::TAY);
    asm.lda_long(INIT_REGS + 8);
    asm.implied(opcode::PHA);
    asm.implied(opcode::PLB);
    asm.implied(opcode::PLB);
    asm.lda_long(INIT_REGS);
    asm.implied(opcode::RTL);
}

/// `save`, entered by JSL from the end of a body in any widths: stores the registers at
/// [`SAVED_REGS`] and returns in the widths it was entered in (PLP of its own PHP, which rpt's
/// discovery follows).
fn save(asm: &mut Asm) {
    // Nothing before the REP depends on the widths it is entered in.
    asm.set_widths(NATIVE16);
    asm.implied(opcode::PHP);
    asm.implied(opcode::PHP);
    asm.rep(0x30);
    asm.sta_long(SAVED_REGS);
    asm.implied(opcode::TXA);
    asm.sta_long(SAVED_REGS + 2);
    asm.implied(opcode::TYA);
    asm.sta_long(SAVED_REGS + 4);
    asm.implied(opcode::TDC);
    asm.sta_long(SAVED_REGS + 6);
    asm.implied(opcode::TSC);
    asm.sta_long(SAVED_REGS + 8);
    asm.sep(0x20);
    asm.implied(opcode::PHB);
    asm.implied(opcode::PLA);
    asm.sta_long(SAVED_REGS + 10);
    asm.implied(opcode::PLA);
    asm.sta_long(SAVED_REGS + 11);
    asm.implied(opcode::PLP);
    asm.implied(opcode::RTL);
}

/// `copy_out` for result slots in `bank`: entered by JSL with 16-bit registers, X at the stack
/// bytes to copy and Y at a slot, copies LB, H, the stack's 16 bytes and the saved registers into
/// it.
fn copy_out(asm: &mut Asm, bank: u8) {
    asm.set_widths(NATIVE16);
    asm.implied(opcode::TXA);
    asm.sta_long(STACK_SOURCE);
    asm.lda_imm(0);
    asm.sta_long(SAVED_REGS + 12);
    asm.lda_imm(0x5aa5);
    asm.sta_long(SAVED_REGS + 14);
    for (from, len, src) in [
        (Some(LB), LB_LEN, 0x7e),
        (Some(H), 0x30, 0x7e),
        (Some(0), 0x30, 0x7f),
        (None, 16, 0x7e),
        (Some(SAVED_REGS & 0xffff), 16, 0x7e),
    ] {
        match from {
            Some(from) => asm.ldx_imm(from as u16),
            None => {
                asm.lda_long(STACK_SOURCE);
                asm.implied(opcode::TAX);
            }
        }
        asm.lda_imm((len - 1) as u16);
        asm.mvn(bank, src);
    }
    asm.implied(opcode::RTL);
}

/// Sequences a group runs: the runner calls the groups, a group its sequences (so that no
/// function of the recompiled ROM holds hundreds of calls).
const GROUP: usize = 16;

/// Builds ROM `rom` of the run with `count` sequences.
fn build_rom(seed: u64, rom: usize, count: usize) -> FuzzRom {
    let mut rng = Rng::new(seed ^ (rom as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    let ops = Opcodes::new();

    // Bank $00: the shared routines first.
    let mut run = Asm::new(0x00_8000, NATIVE16);
    let rti = run.pc();
    run.implied(opcode::RTI);
    let save_at = run.pc();
    save(&mut run);
    let copy_out_7e = run.pc();
    copy_out(&mut run, 0x7e);
    let copy_out_7f = run.pc();
    copy_out(&mut run, 0x7f);
    let shared = Shared {
        save: save_at,
        copy_out: [copy_out_7e, copy_out_7f],
    };

    // The sequences, bank by bank from $01, each bank starting with its `prepare`.
    let new_bank = |bank: u32| {
        let mut asm = Asm::new(bank << 16 | 0x8000, NATIVE16);
        prepare(&mut asm);
        asm
    };
    let mut banks: Vec<Asm> = vec![new_bank(1)];
    let mut sequences = Vec::new();
    let mut counts = [0u32; 256];
    for i in 0..count {
        let mut asm = banks.last().cloned().expect("a bank");
        let mut drawn = counts;
        // ROM 0 starts with the regressions.
        let regression = REGRESSIONS.get(i).filter(|_| rom == 0);
        let seq = sequence(&mut rng, &ops, &mut drawn, &mut asm, &shared, i, regression);
        if asm.pc() & 0xffff >= 0xff00 || asm.pc() & 0xffff < 0x8000 {
            // Too close to the end of the bank: drawn again at the start of the next.
            let mut fresh = new_bank((banks.last().expect("a bank").pc() >> 16) + 1);
            sequences.push(sequence(
                &mut rng,
                &ops,
                &mut counts,
                &mut fresh,
                &shared,
                i,
                regression,
            ));
            banks.push(fresh);
        } else {
            *banks.last_mut().expect("a bank") = asm;
            counts = drawn;
            sequences.push(seq);
        }
    }

    // The groups, then the runner: native mode, S at $1FFF, D 0, DBR 0; every group; the done
    // mark; NMI on and WAI forever.
    let mut groups = Vec::new();
    for group in sequences.chunks(GROUP) {
        groups.push(run.pc());
        run.set_widths(NATIVE16);
        for seq in group {
            run.jsl(seq.addr);
        }
        run.implied(opcode::RTL);
    }
    let reset = run.pc();
    run.set_widths(decode::Widths::RESET);
    run.implied(opcode::SEI);
    run.to_native();
    run.rep(0x30);
    run.ldx_imm(0x1fff);
    run.implied(opcode::TXS);
    run.lda_imm(0);
    run.implied(opcode::TCD);
    run.pea(0);
    run.implied(opcode::PLB);
    run.implied(opcode::PLB);
    for group in groups {
        run.jsl(group);
    }
    run.lda_imm(0x600d);
    run.sta_long(0x7e_0000 + DONE as u32);
    run.lda_imm(count as u16);
    run.sta_long(0x7e_0002 + DONE as u32);
    run.sep(0x20);
    run.lda_imm(0x80);
    run.sta_long(0x00_4200);
    let wait = run.pc();
    run.implied(opcode::WAI);
    run.bra(wait);
    assert!(run.pc() < 0xff00, "the runner fits in bank $00");

    let size = (banks.len() + 1).next_power_of_two().max(4);
    let mut image = LoRom::new(size);
    image.put(0x00_8000, run.bytes());
    for bank in &banks {
        image.put(bank_base(bank), bank.bytes());
    }
    let bytes = image.finish(
        "RPT 65816 FUZZ",
        Vectors {
            nmi: rti as u16,
            reset: reset as u16,
            other: rti as u16,
        },
    );
    FuzzRom {
        bytes,
        sequences,
        counts,
        // About twelve sequences a frame (the block copies dominate), and a margin.
        frame: 10 + count as u32 / 8,
    }
}

fn bank_base(asm: &Asm) -> u32 {
    (asm.pc() - asm.bytes().len() as u32) & 0xff_ffff
}

// ---- comparing

/// The name of byte `at` of a result slot.
fn slot_byte_name(at: u32) -> String {
    match at {
        _ if at < SLOT_H => format!("LB $7E:{:04X}", LB + at),
        _ if at < SLOT_H + 0x30 => format!("H $7E:{:04X}", H + at - SLOT_H),
        _ if at < SLOT_STACK => format!("H $7F:{:04X}", at - SLOT_H - 0x30),
        _ if at < SLOT_REGS => format!("stack byte {} (from S at entry down)", SLOT_REGS - 1 - at),
        _ => {
            let names = [
                "A.l", "A.h", "X.l", "X.h", "Y.l", "Y.h", "D.l", "D.h", "S.l", "S.h", "DBR", "P", "zero", "zero",
                "mark", "mark",
            ];
            names[(at - SLOT_REGS) as usize].to_string()
        }
    }
}

/// The report of one sequence whose slot differs, or `None` when it agrees.
fn compare_slot(seed: u64, rom: usize, seq: &Sequence, ours: &[u8], theirs: &[u8]) -> Option<String> {
    let at = slot_offset(seq.index) as usize;
    let (a, b) = (&ours[at..at + SLOT as usize], &theirs[at..at + SLOT as usize]);
    if a == b {
        return None;
    }
    let i = &seq.init;
    let mut text = String::new();
    let _ = writeln!(
        text,
        "ROM {rom}, sequence {} (seed {seed:#x}; code at ${:06X}; result slot at WRAM ${at:05X}):",
        seq.index, seq.addr
    );
    let _ = writeln!(
        text,
        "  initial A={:04X} X={:04X} Y={:04X} D={:04X} DBR={:02X} P={:02X} E={}",
        i.a,
        i.x,
        i.y,
        i.d,
        i.dbr,
        i.p,
        u8::from(i.emulation)
    );
    if let Some(what) = seq.regression {
        let _ = writeln!(text, "  a regression: {what}");
    }
    for line in &seq.listing {
        let _ = writeln!(text, "    {line}");
    }
    for (k, (x, y)) in a.iter().zip(b).enumerate() {
        if x != y {
            let _ = writeln!(text, "  {:<18} rpt {x:02X}  bsnes {y:02X}", slot_byte_name(k as u32));
        }
    }
    Some(text)
}

/// The report of a sequence where bsnes disagrees with what the generator's model knows: a bug of
/// the generator (its safety of addresses rests on that model), or `None`.
fn check_model(rom: usize, seq: &Sequence, theirs: &[u8]) -> Option<String> {
    let at = slot_offset(seq.index) as usize;
    let wrong: Vec<String> = seq
        .known
        .iter()
        .filter(|&&(o, v, mask)| theirs[at + o as usize] & mask != v & mask)
        .map(|&(o, v, mask)| {
            format!(
                "  {:<18} model {v:02X} (mask {mask:02X})  bsnes {:02X}",
                slot_byte_name(o),
                theirs[at + o as usize]
            )
        })
        .collect();
    if wrong.is_empty() {
        return None;
    }
    Some(format!(
        "ROM {rom}, sequence {}: the generator's model disagrees with bsnes (a fuzzer bug):\n    {}\n{}",
        seq.index,
        seq.listing.join("\n    "),
        wrong.join("\n")
    ))
}

/// Every WRAM difference outside the result slots, as ranges.
fn other_differences(ours: &[u8], theirs: &[u8], slots: usize) -> Vec<String> {
    let in_slot =
        |o: usize| (0..slots).any(|i| (slot_offset(i) as usize..(slot_offset(i) + SLOT) as usize).contains(&o));
    ours.iter()
        .zip(theirs)
        .enumerate()
        .filter(|&(o, (a, b))| a != b && !in_slot(o))
        .take(32)
        .map(|(o, (a, b))| format!("WRAM $7E:{o:05X}: rpt {a:02X}, bsnes {b:02X}"))
        .collect()
}

/// The opcodes the generator never emits: control flow it does not follow, XCE, CLI/SEI, WAI, STP.
const NEVER_EMITTED: [u8; 18] = [
    0x00, 0x02, 0x20, 0x22, 0x40, 0x4c, 0x58, 0x5c, 0x60, 0x6b, 0x6c, 0x78, 0x7c, 0xcb, 0xdb, 0xdc, 0xfb, 0xfc,
];

/// How many of the opcodes the generator may emit the bodies used, which they never did, and the
/// rarest.
fn coverage(counts: &[u32; 256]) -> String {
    let used = counts.iter().filter(|&&n| n > 0).count();
    let never: Vec<String> = (0..=255u8)
        .filter(|&op| counts[usize::from(op)] == 0 && !NEVER_EMITTED.contains(&op))
        .map(|op| {
            let info = decode::info(op);
            format!("{op:02X} {} {:?}", info.mnemonic, info.mode)
        })
        .collect();
    let mut rare: Vec<(u32, u8)> = (0..=255u8)
        .map(|op| (counts[usize::from(op)], op))
        .filter(|&(n, _)| n > 0)
        .collect();
    rare.sort();
    let rare: Vec<String> = rare
        .iter()
        .take(12)
        .map(|&(n, op)| format!("{} {:?} x{n}", decode::info(op).mnemonic, decode::info(op).mode))
        .collect();
    format!(
        "opcodes in the bodies: {used} of the {} the generator emits; none of: [{}]; rarest: {}",
        256 - NEVER_EMITTED.len(),
        never.join(", "),
        rare.join(", ")
    )
}

/// What one ROM's run found.
struct RomResult {
    rom: usize,
    reports: Vec<String>,
    counts: [u32; 256],
}

fn env_number(name: &str) -> Option<u64> {
    let v = std::env::var(name).ok()?;
    let v = v.trim();
    let parsed = match v.strip_prefix("0x").or_else(|| v.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => v.parse(),
    };
    Some(parsed.unwrap_or_else(|e| panic!("{name}={v}: {e}")))
}

/// Runs ROM `rom` in both and gives the reports of the sequences that differ.
fn run_rom(seed: u64, rom: usize, fuzz: &FuzzRom, dir: &Path, cache: &Path) -> Vec<String> {
    let path = dir.join(format!("fuzz-{seed:x}-{rom}.sfc"));
    std::fs::write(&path, &fuzz.bytes).expect("writing the ROM");
    let frame = fuzz.frame;
    let oracle_rom = path.clone();
    let oracle = std::thread::spawn(move || {
        let t = Instant::now();
        let state = bsnes::dump_frame(&oracle_rom, frame, None);
        (state, t.elapsed())
    });
    let work = dir.join(format!("work-{rom}"));
    std::fs::create_dir_all(&work).expect("a work directory");
    let recipe = write_recipe(&work, &path, false);
    let t = Instant::now();
    let ours: FrameState = rpt_dump_frame(&recipe, &work, cache, frame);
    let rpt_time = t.elapsed();
    let (theirs, bsnes_time) = oracle.join().expect("the oracle thread");
    let theirs = theirs.unwrap_or_else(|e| panic!("bsnes: {e}"));
    eprintln!(
        "ROM {rom}: rpt recompiled and ran it in {:.1} s, bsnes in {:.1} s",
        rpt_time.as_secs_f64(),
        bsnes_time.as_secs_f64()
    );
    let done = |w: &[u8]| {
        w[DONE..DONE + 4]
            == [
                0x0d,
                0x60,
                fuzz.sequences.len() as u8,
                (fuzz.sequences.len() >> 8) as u8,
            ]
    };
    assert!(
        done(&theirs.wram),
        "ROM {rom}: bsnes had not run every sequence by frame {frame}; raise the frame count"
    );
    let mut reports: Vec<String> = fuzz
        .sequences
        .iter()
        .filter_map(|seq| compare_slot(seed, rom, seq, &ours.wram, &theirs.wram))
        .collect();
    reports.extend(
        fuzz.sequences
            .iter()
            .filter_map(|seq| check_model(rom, seq, &theirs.wram)),
    );
    if !done(&ours.wram) {
        reports.push(format!(
            "ROM {rom}: rpt's run has no done mark at $7E:0000 by frame {frame}"
        ));
    }
    let others = other_differences(&ours.wram, &theirs.wram, fuzz.sequences.len());
    if !others.is_empty() {
        reports.push(format!(
            "ROM {rom}: WRAM outside the result slots differs:\n  {}",
            others.join("\n  ")
        ));
    }
    reports
}

#[test]
fn random_65816_sequences_agree_with_bsnes() {
    if bsnes::core_path().is_none() {
        eprintln!("skipped: the bsnes-mercury core is not installed (scripts/install-deps.sh installs it)");
        return;
    }
    let seed = env_number("RPT_SNES_FUZZ_SEED").unwrap_or(DEFAULT_SEED);
    let total = env_number("RPT_SNES_FUZZ_SEQUENCES").map_or(DEFAULT_SEQUENCES, |n| n as usize);
    // An even number of ROMs, for the two workers below (the same on every machine, so that a
    // seed always gives the same ROMs).
    let roms = total.div_ceil(PER_ROM).next_multiple_of(2).min(total.max(1));
    let dir = tempfile::tempdir().expect("tempdir");
    let started = Instant::now();
    // rpt's build of a ROM runs mostly on one core: two ROMs at a time, each worker with its own
    // object cache (the platform's objects are reused from its second ROM on).
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get()).clamp(1, 2);
    let next = AtomicUsize::new(0);
    let found: Mutex<Vec<RomResult>> = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for worker in 0..workers {
            let (next, found, dir) = (&next, &found, dir.path());
            scope.spawn(move || {
                let cache = dir.join(format!("cache-{worker}"));
                loop {
                    let rom = next.fetch_add(1, Ordering::Relaxed);
                    if rom >= roms {
                        break;
                    }
                    let count = total / roms + usize::from(rom < total % roms);
                    let fuzz = build_rom(seed, rom, count);
                    let t = Instant::now();
                    let reports = run_rom(seed, rom, &fuzz, dir, &cache);
                    eprintln!(
                        "ROM {rom}: {count} sequences, {} KiB, frame {}, {} differ ({:.1} s)",
                        fuzz.bytes.len() / 1024,
                        fuzz.frame,
                        reports.len(),
                        t.elapsed().as_secs_f64()
                    );
                    found.lock().expect("no worker panicked").push(RomResult {
                        rom,
                        reports,
                        counts: fuzz.counts,
                    });
                }
            });
        }
    });
    let mut found = found.into_inner().expect("no worker panicked");
    found.sort_by_key(|r| r.rom);
    let mut counts = [0u32; 256];
    for result in &found {
        for (total, n) in counts.iter_mut().zip(&result.counts) {
            *total += n;
        }
    }
    eprintln!("{}", coverage(&counts));
    let reports: Vec<String> = found.into_iter().flat_map(|r| r.reports).collect();
    eprintln!(
        "{total} sequences from seed {seed:#x} in {roms} ROMs: {:.1} s",
        started.elapsed().as_secs_f64()
    );
    if reports.is_empty() && std::env::var_os("RPT_SNES_FUZZ_KEEP").is_some() {
        eprintln!("the ROMs and rpt's work are kept in {}", dir.keep().display());
    } else if !reports.is_empty() {
        let kept: PathBuf = dir.keep();
        let shown = reports.iter().take(12).cloned().collect::<Vec<_>>().join("\n");
        panic!(
            "{} sequences differ from bsnes (first {} below); the ROMs are kept in {}; \
             reproduce with RPT_SNES_FUZZ_SEED={seed:#x} RPT_SNES_FUZZ_SEQUENCES={total}\n\n{shown}",
            reports.len(),
            reports.len().min(12),
            kept.display()
        );
    }
}
