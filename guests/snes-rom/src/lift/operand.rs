//! Operands: registers at their widths, the bus, the stack, and the effective address of every
//! addressing mode with its wrapping rules.
//!
//! Values are i16 throughout; an 8-bit operation uses the low byte and leaves the accumulator's
//! high byte (B) alone. Addresses are i32 holding 24 bits.
//!
//! Wrapping, as the 65C816 datasheet gives it:
//! - `abs,X`, `abs,Y`, `long,X`, `(dp),Y`, `[dp],Y`, `(sr,S),Y` add the index to the 24-bit
//!   address (crossing into the next bank); the second byte of a 16-bit operand is the next
//!   24-bit address.
//! - The direct page and the stack are in bank 0 and wrap at 64 KiB, both the address and a 16-bit
//!   operand's second byte.
//! - In emulation mode with D's low byte zero, the 6502's modes (`dp`, `dp,X`, `dp,Y`, `(dp)`,
//!   `(dp,X)`, `(dp),Y`) wrap within the direct page, pointer fetches included; `[dp]` and
//!   `[dp],Y`, which the 6502 lacks, do not (where bsnes v094 differs, the hardware is the rule).
//! - The stack wraps within page 1 in emulation mode for the 6502's pushes and pulls; the
//!   65816's own (PEA, PEI, PER, PHD, PLD, PLB, JSL, RTL, `JSR (abs,X)`) move S as a 16-bit
//!   register and only then put it back into page 1.

use rpt_ir::{BinaryOp, IntCC, Type, Value};

use super::{BUS_READ, BUS_WRITE, Lifter};
use crate::decode::{Insn, Mode};
use crate::state::{A, D, DBR, N, S, X, Y, Z};

/// Where an instruction's data operand is.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Place {
    /// The accumulator (`ASL A`).
    Accumulator,
    /// An immediate value.
    Immediate(u32),
    /// Memory at a 24-bit address; `bank0` when the operand's bytes wrap at 64 KiB in bank 0
    /// (direct page, stack) rather than carrying into the next bank.
    Memory {
        /// The address of the first byte.
        addr: Value,
        /// Whether the next byte wraps within bank 0.
        bank0: bool,
    },
}

impl Lifter<'_> {
    // ---- registers

    /// A (i16): the whole of C when `wide`, else its low byte zero-extended.
    pub(crate) fn acc(&mut self, wide: bool) -> Value {
        let a = self.b.get(A);
        if wide {
            a
        } else {
            self.b.binary_imm(BinaryOp::And, a, 0xff)
        }
    }

    /// Writes A: all of C when `wide`, else its low byte (B kept).
    pub(crate) fn set_acc(&mut self, v: Value, wide: bool) {
        if wide {
            self.b.set(A, v);
        } else {
            let a = self.b.get(A);
            let high = self.b.binary_imm(BinaryOp::And, a, 0xff00);
            let low = self.b.binary_imm(BinaryOp::And, v, 0xff);
            let merged = self.b.binary(BinaryOp::Or, high, low);
            self.b.set(A, merged);
        }
    }

    /// Writes an index register (X or Y slot): with 8-bit index registers the high byte is zero.
    pub(crate) fn set_index(&mut self, slot: rpt_ir::SlotId, v: Value, x8: bool) {
        let v = if x8 {
            self.b.binary_imm(BinaryOp::And, v, 0xff)
        } else {
            v
        };
        self.b.set(slot, v);
    }

    /// Sets N and Z from an i16 result of an 8- or 16-bit operation.
    pub(crate) fn set_nz(&mut self, v: Value, wide: bool) {
        let (mask, sign) = if wide { (0xffff, 0x8000) } else { (0xff, 0x80) };
        let masked = self.b.binary_imm(BinaryOp::And, v, mask);
        let z = self.b.icmp_imm(IntCC::Eq, masked, 0);
        let signbit = self.b.binary_imm(BinaryOp::And, v, sign);
        let n = self.b.icmp_imm(IntCC::Ne, signbit, 0);
        self.b.set(Z, z);
        self.b.set(N, n);
    }

    // ---- the bus

    /// Reads the byte at the 24-bit address `addr` (i32) as an i16.
    pub(crate) fn read8(&mut self, addr: Value) -> Value {
        let byte = self.b.call_helper(BUS_READ, vec![addr], Some(Type::I8));
        let byte = byte.unwrap_or_else(|| self.b.iconst(Type::I8, 0));
        self.b.resize(byte, Type::I16)
    }

    /// Writes the low byte of the i16 `v` at `addr`.
    pub(crate) fn write8(&mut self, addr: Value, v: Value) {
        let byte = self.b.resize(v, Type::I8);
        self.b.call_helper(BUS_WRITE, vec![addr, byte], None);
    }

    /// The address of the byte after `addr`: within bank 0's 64 KiB, or the next 24-bit address.
    pub(crate) fn next_addr(&mut self, addr: Value, bank0: bool) -> Value {
        let next = self.b.binary_imm(BinaryOp::Add, addr, 1);
        self.b
            .binary_imm(BinaryOp::And, next, if bank0 { 0xffff } else { 0xff_ffff })
    }

    /// Reads an 8- or 16-bit operand (low byte first).
    pub(crate) fn read_place(&mut self, place: Place, wide: bool) -> Value {
        match place {
            Place::Accumulator => self.acc(wide),
            Place::Immediate(v) => self.b.iconst(Type::I16, u64::from(v)),
            Place::Memory { addr, bank0 } => {
                let low = self.read8(addr);
                if !wide {
                    return low;
                }
                let at = self.next_addr(addr, bank0);
                let high = self.read8(at);
                let high = self.b.binary_imm(BinaryOp::Shl, high, 8);
                self.b.binary(BinaryOp::Or, high, low)
            }
        }
    }

    /// Writes an 8- or 16-bit operand: low byte first, or high byte first for the write-back of a
    /// read-modify-write instruction, as the CPU does.
    pub(crate) fn write_place(&mut self, place: Place, v: Value, wide: bool, high_first: bool) {
        match place {
            Place::Accumulator => self.set_acc(v, wide),
            Place::Immediate(_) => {}
            Place::Memory { addr, bank0 } => {
                if !wide {
                    self.write8(addr, v);
                    return;
                }
                let at = self.next_addr(addr, bank0);
                let high = self.b.binary_imm(BinaryOp::Lshr, v, 8);
                if high_first {
                    self.write8(at, high);
                    self.write8(addr, v);
                } else {
                    self.write8(addr, v);
                    self.write8(at, high);
                }
            }
        }
    }

    // ---- the stack

    /// S as an i32 bank-0 address.
    fn s_addr(&mut self) -> Value {
        let s = self.b.get(S);
        self.b.resize(s, Type::I32)
    }

    /// S moved by `delta`: within page 1 when `page1`, else as a 16-bit register.
    fn moved_s(&mut self, delta: i64, page1: bool) -> Value {
        let s = self.b.get(S);
        let moved = self.b.binary_imm(BinaryOp::Add, s, delta as u64);
        if page1 {
            let low = self.b.binary_imm(BinaryOp::And, moved, 0xff);
            self.b.binary_imm(BinaryOp::Or, low, 0x100)
        } else {
            moved
        }
    }

    /// Pushes the low byte of `v`. `page1` wraps S within page 1 (emulation mode's 6502 pushes).
    pub(crate) fn push8(&mut self, v: Value, page1: bool) {
        let at = self.s_addr();
        self.write8(at, v);
        let s = self.moved_s(-1, page1);
        self.b.set(S, s);
    }

    /// Pulls a byte (an i16).
    pub(crate) fn pull8(&mut self, page1: bool) -> Value {
        let s = self.moved_s(1, page1);
        self.b.set(S, s);
        let at = self.s_addr();
        self.read8(at)
    }

    /// Pushes the 16-bit `v`, high byte first.
    pub(crate) fn push16(&mut self, v: Value, page1: bool) {
        let high = self.b.binary_imm(BinaryOp::Lshr, v, 8);
        self.push8(high, page1);
        self.push8(v, page1);
    }

    /// Pulls a 16-bit value, low byte first.
    pub(crate) fn pull16(&mut self, page1: bool) -> Value {
        let low = self.pull8(page1);
        let high = self.pull8(page1);
        let high = self.b.binary_imm(BinaryOp::Shl, high, 8);
        self.b.binary(BinaryOp::Or, high, low)
    }

    /// After a 65816 stack instruction in emulation mode: S back in page 1.
    pub(crate) fn stack_back_to_page1(&mut self, emulation: bool) {
        if emulation {
            let s = self.b.get(S);
            let low = self.b.binary_imm(BinaryOp::And, s, 0xff);
            let s = self.b.binary_imm(BinaryOp::Or, low, 0x100);
            self.b.set(S, s);
        }
    }

    // ---- effective addresses

    /// The data bank's base, `DBR << 16`, as an i32.
    fn data_bank(&mut self) -> Value {
        let dbr = self.b.get(DBR);
        let wide = self.b.resize(dbr, Type::I32);
        self.b.binary_imm(BinaryOp::Shl, wide, 16)
    }

    /// An index register as an i32.
    pub(crate) fn index32(&mut self, slot: rpt_ir::SlotId) -> Value {
        let v = self.b.get(slot);
        self.b.resize(v, Type::I32)
    }

    /// The bank-0 address `D + offset` (offset an i32 value), wrapping at 64 KiB; within the direct
    /// page instead when `page_wrap` and the CPU is in emulation mode with D's low byte zero.
    fn direct(&mut self, offset: Value, page_wrap: bool, emulation: bool) -> Value {
        let d = self.b.get(D);
        let d = self.b.resize(d, Type::I32);
        let sum = self.b.binary(BinaryOp::Add, d, offset);
        let flat = self.b.binary_imm(BinaryOp::And, sum, 0xffff);
        if !(page_wrap && emulation) {
            return flat;
        }
        let low = self.b.binary_imm(BinaryOp::And, offset, 0xff);
        let wrapped = self.b.binary(BinaryOp::Or, d, low);
        let dl = self.b.binary_imm(BinaryOp::And, d, 0xff);
        let dl_zero = self.b.icmp_imm(IntCC::Eq, dl, 0);
        self.b.select(dl_zero, wrapped, flat)
    }

    /// One cycle more when D's low byte is not zero (every direct-page mode, and PEI).
    pub(crate) fn direct_page_cycle(&mut self) {
        let d = self.b.get(D);
        let dl = self.b.binary_imm(BinaryOp::And, d, 0xff);
        let nonzero = self.b.icmp_imm(IntCC::Ne, dl, 0);
        self.add_cycle_if(nonzero);
    }

    /// A 16-bit pointer read from the direct page at `offset` (an i32), its high byte at
    /// `offset + 1` by the same wrapping rule.
    fn direct_pointer16(&mut self, offset: Value, page_wrap: bool, emulation: bool) -> Value {
        let at = self.direct(offset, page_wrap, emulation);
        let low = self.read8(at);
        let next = self.b.binary_imm(BinaryOp::Add, offset, 1);
        let at = self.direct(next, page_wrap, emulation);
        let high = self.read8(at);
        let high = self.b.binary_imm(BinaryOp::Shl, high, 8);
        let ptr = self.b.binary(BinaryOp::Or, high, low);
        self.b.resize(ptr, Type::I32)
    }

    /// PEI's operand: the 16-bit word at the direct-page address `D + dp` itself, not the word it
    /// points to (`PEI (dp)` pushes the pointer). Its high byte is at `D + dp + 1` in bank 0 with no
    /// wrapping within the page even in emulation mode, as for the 65816's own `[dp]`.
    pub(crate) fn direct_word(&mut self, dp: u32) -> Value {
        self.direct_page_cycle();
        let offset = self.b.iconst(Type::I32, u64::from(dp));
        let word = self.direct_pointer16(offset, false, false);
        self.b.resize(word, Type::I16)
    }

    /// `base + index` within 24 bits, and one cycle more for an indexed read that crossed a page
    /// with 8-bit index registers.
    fn indexed(&mut self, insn: &Insn, base: Value, index: Value) -> Value {
        let sum = self.b.binary(BinaryOp::Add, base, index);
        let sum = self.b.binary_imm(BinaryOp::And, sum, 0xff_ffff);
        if insn.is_indexed_read() && insn.widths.x8 {
            let page_before = self.b.binary_imm(BinaryOp::And, base, 0xff_ff00);
            let page_after = self.b.binary_imm(BinaryOp::And, sum, 0xff_ff00);
            let crossed = self.b.icmp(IntCC::Ne, page_before, page_after);
            self.add_cycle_if(crossed);
        }
        sum
    }

    /// Where `insn`'s data operand is (not for the control-flow modes), with the run-time cycle
    /// costs of getting there added.
    pub(crate) fn place(&mut self, insn: &Insn) -> Place {
        let op = insn.operand;
        let e = insn.widths.emulation;
        let k32 = |lx: &mut Self, v: u32| lx.b.iconst(Type::I32, u64::from(v));
        if insn.info.mode.uses_direct_page() {
            self.direct_page_cycle();
        }
        let memory = |addr, bank0| Place::Memory { addr, bank0 };
        match insn.info.mode {
            Mode::Accumulator => Place::Accumulator,
            Mode::ImmediateM | Mode::ImmediateX | Mode::Immediate8 => Place::Immediate(op),
            Mode::Absolute => {
                let bank = self.data_bank();
                let addr = self.b.binary_imm(BinaryOp::Or, bank, u64::from(op));
                memory(addr, false)
            }
            Mode::AbsoluteX | Mode::AbsoluteY => {
                let bank = self.data_bank();
                let base = self.b.binary_imm(BinaryOp::Or, bank, u64::from(op));
                let index = self.index32(if insn.info.mode == Mode::AbsoluteX { X } else { Y });
                memory(self.indexed(insn, base, index), false)
            }
            Mode::Long => memory(k32(self, op), false),
            Mode::LongX => {
                let base = k32(self, op);
                let index = self.index32(X);
                memory(self.indexed(insn, base, index), false)
            }
            Mode::Direct => {
                let offset = k32(self, op);
                memory(self.direct(offset, true, e), true)
            }
            Mode::DirectX | Mode::DirectY => {
                let index = self.index32(if insn.info.mode == Mode::DirectX { X } else { Y });
                let offset = self.b.binary_imm(BinaryOp::Add, index, u64::from(op));
                memory(self.direct(offset, true, e), true)
            }
            Mode::DirectIndirect => {
                let offset = k32(self, op);
                let ptr = self.direct_pointer16(offset, true, e);
                let bank = self.data_bank();
                memory(self.b.binary(BinaryOp::Or, bank, ptr), false)
            }
            Mode::DirectXIndirect => {
                let index = self.index32(X);
                let offset = self.b.binary_imm(BinaryOp::Add, index, u64::from(op));
                let ptr = self.direct_pointer16(offset, true, e);
                let bank = self.data_bank();
                memory(self.b.binary(BinaryOp::Or, bank, ptr), false)
            }
            Mode::DirectIndirectY => {
                let offset = k32(self, op);
                let ptr = self.direct_pointer16(offset, true, e);
                let bank = self.data_bank();
                let base = self.b.binary(BinaryOp::Or, bank, ptr);
                let index = self.index32(Y);
                memory(self.indexed(insn, base, index), false)
            }
            Mode::DirectIndirectLong | Mode::DirectIndirectLongY => {
                let offset = k32(self, op);
                let ptr = self.direct_pointer16(offset, false, e);
                let two = self.b.iconst(Type::I32, u64::from(op) + 2);
                let at = self.direct(two, false, e);
                let bank = self.read8(at);
                let bank = self.b.resize(bank, Type::I32);
                let bank = self.b.binary_imm(BinaryOp::Shl, bank, 16);
                let addr = self.b.binary(BinaryOp::Or, bank, ptr);
                if insn.info.mode == Mode::DirectIndirectLongY {
                    let index = self.index32(Y);
                    memory(self.indexed(insn, addr, index), false)
                } else {
                    memory(addr, false)
                }
            }
            Mode::Stack => {
                let s = self.index32(S);
                let at = self.b.binary_imm(BinaryOp::Add, s, u64::from(op));
                memory(self.b.binary_imm(BinaryOp::And, at, 0xffff), true)
            }
            Mode::StackIndirectY => {
                let s = self.index32(S);
                let at = self.b.binary_imm(BinaryOp::Add, s, u64::from(op));
                let at = self.b.binary_imm(BinaryOp::And, at, 0xffff);
                let low = self.read8(at);
                let at = self.next_addr(at, true);
                let high = self.read8(at);
                let high = self.b.binary_imm(BinaryOp::Shl, high, 8);
                let ptr = self.b.binary(BinaryOp::Or, high, low);
                let ptr = self.b.resize(ptr, Type::I32);
                let bank = self.data_bank();
                let base = self.b.binary(BinaryOp::Or, bank, ptr);
                let index = self.index32(Y);
                let sum = self.b.binary(BinaryOp::Add, base, index);
                memory(self.b.binary_imm(BinaryOp::And, sum, 0xff_ffff), false)
            }
            // The control-flow modes have no data operand; their instructions never ask.
            Mode::Implied
            | Mode::Relative8
            | Mode::Relative16
            | Mode::AbsoluteIndirect
            | Mode::AbsoluteIndirectLong
            | Mode::AbsoluteXIndirect
            | Mode::BlockMove => Place::Immediate(0),
        }
    }
}
