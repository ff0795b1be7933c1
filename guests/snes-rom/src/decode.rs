//! The 65816 decoder: one table row per opcode (mnemonic, addressing mode, base cycles), operand
//! lengths that follow the M and X flags, and the cycle rules of the WDC W65C816S datasheet.
//!
//! The 65816 has no undefined opcodes: all 256 are instructions. What an instruction's bytes are
//! depends on the processor state: an immediate operand of an accumulator instruction is one byte
//! with M=1 and two with M=0, one of an index instruction follows X. Emulation mode (E=1) forces
//! M=X=1. So decoding takes a [`Widths`].

use std::fmt;

/// The processor state that decides instruction lengths and timing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Widths {
    /// The M flag: an 8-bit accumulator and memory operands.
    pub m8: bool,
    /// The X flag: 8-bit index registers.
    pub x8: bool,
    /// Emulation mode (6502 stack page, M=X=1 forced).
    pub emulation: bool,
}

impl Widths {
    /// The state after RESET: emulation mode, 8-bit everything.
    pub const RESET: Widths = Widths {
        m8: true,
        x8: true,
        emulation: true,
    };

    /// The state from the three bits `(E << 2) | (M << 1) | X`, with emulation forcing M and X.
    pub fn from_bits(bits: u8) -> Widths {
        let emulation = bits & 4 != 0;
        Widths {
            m8: emulation || bits & 2 != 0,
            x8: emulation || bits & 1 != 0,
            emulation,
        }
    }

    /// The inverse of [`Widths::from_bits`].
    pub fn bits(self) -> u8 {
        (u8::from(self.emulation) << 2) | (u8::from(self.m8) << 1) | u8::from(self.x8)
    }
}

/// RESET's state is the default context: the one the image's entry and the recipe's plain
/// addresses are entered in, and the one a function key without context bits names.
impl Default for Widths {
    fn default() -> Widths {
        Widths::RESET
    }
}

/// Where a function key keeps the context: bits 24–26, above the 24-bit address.
const KEY_SHIFT: u32 = 24;

impl Widths {
    /// The context bits of a function key: what differs from RESET's state (bit 2 native mode,
    /// bit 1 a 16-bit accumulator, bit 0 16-bit index registers), so RESET's state is 0 and a key
    /// in it is the plain address.
    pub fn key_bits(self) -> u64 {
        u64::from(self.bits() ^ 7)
    }

    /// The function key of the routine at the 24-bit `addr` entered in this state: one routine
    /// entered with 8- and 16-bit registers is two functions, told apart by these keys wherever rpt
    /// names a function by a guest address (its C name, the function table, coverage files).
    pub fn key(self, addr: u32) -> u64 {
        u64::from(addr & 0xff_ffff) | (self.key_bits() << KEY_SHIFT)
    }

    /// The address and state a function key names, or `None` for bits above the context.
    pub fn from_key(key: u64) -> Option<(u32, Widths)> {
        if key >> (KEY_SHIFT + 3) != 0 {
            return None;
        }
        let bits = ((key >> KEY_SHIFT) as u8) ^ 7;
        let widths = Widths::from_bits(bits);
        // Emulation mode forces 8-bit registers: a key saying otherwise names no state.
        (widths.bits() == bits).then_some(((key & 0xff_ffff) as u32, widths))
    }
}

impl fmt::Display for Widths {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let m = if self.m8 { "m8" } else { "m16" };
        let x = if self.x8 { "x8" } else { "x16" };
        if self.emulation {
            write!(f, "e1,{m},{x}")
        } else {
            write!(f, "e0,{m},{x}")
        }
    }
}

/// An addressing mode, as the datasheet names them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Mode {
    /// No operand (`CLC`, `TAX`, `RTS`).
    Implied,
    /// The accumulator (`ASL A`).
    Accumulator,
    /// `#imm`, 1 or 2 bytes by M.
    ImmediateM,
    /// `#imm`, 1 or 2 bytes by X.
    ImmediateX,
    /// `#imm8` (REP, SEP) or the signature byte of BRK, COP and WDM.
    Immediate8,
    /// `abs` (data bank).
    Absolute,
    /// `abs,X`.
    AbsoluteX,
    /// `abs,Y`.
    AbsoluteY,
    /// `long` (24-bit).
    Long,
    /// `long,X`.
    LongX,
    /// `dp`.
    Direct,
    /// `dp,X`.
    DirectX,
    /// `dp,Y`.
    DirectY,
    /// `(dp)`.
    DirectIndirect,
    /// `[dp]`.
    DirectIndirectLong,
    /// `(dp,X)`.
    DirectXIndirect,
    /// `(dp),Y`.
    DirectIndirectY,
    /// `[dp],Y`.
    DirectIndirectLongY,
    /// `sr,S`.
    Stack,
    /// `(sr,S),Y`.
    StackIndirectY,
    /// An 8-bit branch displacement.
    Relative8,
    /// A 16-bit branch displacement (`BRL`, `PER`).
    Relative16,
    /// `(abs)` (`JMP`, bank 0 pointer).
    AbsoluteIndirect,
    /// `[abs]` (`JML`).
    AbsoluteIndirectLong,
    /// `(abs,X)` (`JMP`, `JSR`, pointer in the program bank).
    AbsoluteXIndirect,
    /// `src,dst` bank bytes of `MVN`/`MVP` (encoded destination first).
    BlockMove,
}

impl Mode {
    /// Operand bytes after the opcode under `widths`.
    pub fn operand_len(self, widths: Widths) -> u32 {
        match self {
            Mode::Implied | Mode::Accumulator => 0,
            Mode::ImmediateM => 2 - u32::from(widths.m8),
            Mode::ImmediateX => 2 - u32::from(widths.x8),
            Mode::Immediate8
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
            | Mode::Relative8 => 1,
            Mode::Absolute
            | Mode::AbsoluteX
            | Mode::AbsoluteY
            | Mode::Relative16
            | Mode::AbsoluteIndirect
            | Mode::AbsoluteIndirectLong
            | Mode::AbsoluteXIndirect
            | Mode::BlockMove => 2,
            Mode::Long | Mode::LongX => 3,
        }
    }

    /// Whether the mode addresses through the direct page (one more cycle when D's low byte is
    /// not zero).
    pub fn uses_direct_page(self) -> bool {
        matches!(
            self,
            Mode::Direct
                | Mode::DirectX
                | Mode::DirectY
                | Mode::DirectIndirect
                | Mode::DirectIndirectLong
                | Mode::DirectXIndirect
                | Mode::DirectIndirectY
                | Mode::DirectIndirectLongY
        )
    }
}

/// How an instruction's width follows the flags, for its extra cycles and operand size.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Width {
    /// Neither flag matters.
    None,
    /// The accumulator/memory width (M).
    M,
    /// The index width (X).
    X,
}

/// One row of the opcode table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpInfo {
    /// The opcode byte.
    pub opcode: u8,
    /// The mnemonic in capitals.
    pub mnemonic: &'static str,
    /// The addressing mode.
    pub mode: Mode,
    /// Cycles with 8-bit registers, D's low byte zero, no page crossed, no branch taken, in
    /// native mode (the datasheet's base count).
    pub base_cycles: u8,
    /// Which flag sets the data width.
    pub width: Width,
    /// Extra cycles a 16-bit width costs (1 for reads and writes, 2 for read-modify-write).
    pub wide_cycles: u8,
}

// The row table, in opcode order: mnemonic, mode, base cycles, width flag, extra cycles at 16 bits.
use Mode::*;
use Width::{M as Wm, None as Wn, X as Wx};
#[rustfmt::skip]
const TABLE: [(&str, Mode, u8, Width, u8); 256] = [
    // 0x00
    ("BRK", Immediate8, 7, Wn, 0), ("ORA", DirectXIndirect, 6, Wm, 1), ("COP", Immediate8, 7, Wn, 0), ("ORA", Stack, 4, Wm, 1),
    ("TSB", Direct, 5, Wm, 2), ("ORA", Direct, 3, Wm, 1), ("ASL", Direct, 5, Wm, 2), ("ORA", DirectIndirectLong, 6, Wm, 1),
    ("PHP", Implied, 3, Wn, 0), ("ORA", ImmediateM, 2, Wm, 1), ("ASL", Accumulator, 2, Wm, 0), ("PHD", Implied, 4, Wn, 0),
    ("TSB", Absolute, 6, Wm, 2), ("ORA", Absolute, 4, Wm, 1), ("ASL", Absolute, 6, Wm, 2), ("ORA", Long, 5, Wm, 1),
    // 0x10
    ("BPL", Relative8, 2, Wn, 0), ("ORA", DirectIndirectY, 5, Wm, 1), ("ORA", DirectIndirect, 5, Wm, 1), ("ORA", StackIndirectY, 7, Wm, 1),
    ("TRB", Direct, 5, Wm, 2), ("ORA", DirectX, 4, Wm, 1), ("ASL", DirectX, 6, Wm, 2), ("ORA", DirectIndirectLongY, 6, Wm, 1),
    ("CLC", Implied, 2, Wn, 0), ("ORA", AbsoluteY, 4, Wm, 1), ("INC", Accumulator, 2, Wm, 0), ("TCS", Implied, 2, Wn, 0),
    ("TRB", Absolute, 6, Wm, 2), ("ORA", AbsoluteX, 4, Wm, 1), ("ASL", AbsoluteX, 7, Wm, 2), ("ORA", LongX, 5, Wm, 1),
    // 0x20
    ("JSR", Absolute, 6, Wn, 0), ("AND", DirectXIndirect, 6, Wm, 1), ("JSL", Long, 8, Wn, 0), ("AND", Stack, 4, Wm, 1),
    ("BIT", Direct, 3, Wm, 1), ("AND", Direct, 3, Wm, 1), ("ROL", Direct, 5, Wm, 2), ("AND", DirectIndirectLong, 6, Wm, 1),
    ("PLP", Implied, 4, Wn, 0), ("AND", ImmediateM, 2, Wm, 1), ("ROL", Accumulator, 2, Wm, 0), ("PLD", Implied, 5, Wn, 0),
    ("BIT", Absolute, 4, Wm, 1), ("AND", Absolute, 4, Wm, 1), ("ROL", Absolute, 6, Wm, 2), ("AND", Long, 5, Wm, 1),
    // 0x30
    ("BMI", Relative8, 2, Wn, 0), ("AND", DirectIndirectY, 5, Wm, 1), ("AND", DirectIndirect, 5, Wm, 1), ("AND", StackIndirectY, 7, Wm, 1),
    ("BIT", DirectX, 4, Wm, 1), ("AND", DirectX, 4, Wm, 1), ("ROL", DirectX, 6, Wm, 2), ("AND", DirectIndirectLongY, 6, Wm, 1),
    ("SEC", Implied, 2, Wn, 0), ("AND", AbsoluteY, 4, Wm, 1), ("DEC", Accumulator, 2, Wm, 0), ("TSC", Implied, 2, Wn, 0),
    ("BIT", AbsoluteX, 4, Wm, 1), ("AND", AbsoluteX, 4, Wm, 1), ("ROL", AbsoluteX, 7, Wm, 2), ("AND", LongX, 5, Wm, 1),
    // 0x40
    ("RTI", Implied, 6, Wn, 0), ("EOR", DirectXIndirect, 6, Wm, 1), ("WDM", Immediate8, 2, Wn, 0), ("EOR", Stack, 4, Wm, 1),
    ("MVP", BlockMove, 7, Wn, 0), ("EOR", Direct, 3, Wm, 1), ("LSR", Direct, 5, Wm, 2), ("EOR", DirectIndirectLong, 6, Wm, 1),
    ("PHA", Implied, 3, Wm, 1), ("EOR", ImmediateM, 2, Wm, 1), ("LSR", Accumulator, 2, Wm, 0), ("PHK", Implied, 3, Wn, 0),
    ("JMP", Absolute, 3, Wn, 0), ("EOR", Absolute, 4, Wm, 1), ("LSR", Absolute, 6, Wm, 2), ("EOR", Long, 5, Wm, 1),
    // 0x50
    ("BVC", Relative8, 2, Wn, 0), ("EOR", DirectIndirectY, 5, Wm, 1), ("EOR", DirectIndirect, 5, Wm, 1), ("EOR", StackIndirectY, 7, Wm, 1),
    ("MVN", BlockMove, 7, Wn, 0), ("EOR", DirectX, 4, Wm, 1), ("LSR", DirectX, 6, Wm, 2), ("EOR", DirectIndirectLongY, 6, Wm, 1),
    ("CLI", Implied, 2, Wn, 0), ("EOR", AbsoluteY, 4, Wm, 1), ("PHY", Implied, 3, Wx, 1), ("TCD", Implied, 2, Wn, 0),
    ("JML", Long, 4, Wn, 0), ("EOR", AbsoluteX, 4, Wm, 1), ("LSR", AbsoluteX, 7, Wm, 2), ("EOR", LongX, 5, Wm, 1),
    // 0x60
    ("RTS", Implied, 6, Wn, 0), ("ADC", DirectXIndirect, 6, Wm, 1), ("PER", Relative16, 6, Wn, 0), ("ADC", Stack, 4, Wm, 1),
    ("STZ", Direct, 3, Wm, 1), ("ADC", Direct, 3, Wm, 1), ("ROR", Direct, 5, Wm, 2), ("ADC", DirectIndirectLong, 6, Wm, 1),
    ("PLA", Implied, 4, Wm, 1), ("ADC", ImmediateM, 2, Wm, 1), ("ROR", Accumulator, 2, Wm, 0), ("RTL", Implied, 6, Wn, 0),
    ("JMP", AbsoluteIndirect, 5, Wn, 0), ("ADC", Absolute, 4, Wm, 1), ("ROR", Absolute, 6, Wm, 2), ("ADC", Long, 5, Wm, 1),
    // 0x70
    ("BVS", Relative8, 2, Wn, 0), ("ADC", DirectIndirectY, 5, Wm, 1), ("ADC", DirectIndirect, 5, Wm, 1), ("ADC", StackIndirectY, 7, Wm, 1),
    ("STZ", DirectX, 4, Wm, 1), ("ADC", DirectX, 4, Wm, 1), ("ROR", DirectX, 6, Wm, 2), ("ADC", DirectIndirectLongY, 6, Wm, 1),
    ("SEI", Implied, 2, Wn, 0), ("ADC", AbsoluteY, 4, Wm, 1), ("PLY", Implied, 4, Wx, 1), ("TDC", Implied, 2, Wn, 0),
    ("JMP", AbsoluteXIndirect, 6, Wn, 0), ("ADC", AbsoluteX, 4, Wm, 1), ("ROR", AbsoluteX, 7, Wm, 2), ("ADC", LongX, 5, Wm, 1),
    // 0x80
    ("BRA", Relative8, 3, Wn, 0), ("STA", DirectXIndirect, 6, Wm, 1), ("BRL", Relative16, 4, Wn, 0), ("STA", Stack, 4, Wm, 1),
    ("STY", Direct, 3, Wx, 1), ("STA", Direct, 3, Wm, 1), ("STX", Direct, 3, Wx, 1), ("STA", DirectIndirectLong, 6, Wm, 1),
    ("DEY", Implied, 2, Wn, 0), ("BIT", ImmediateM, 2, Wm, 1), ("TXA", Implied, 2, Wn, 0), ("PHB", Implied, 3, Wn, 0),
    ("STY", Absolute, 4, Wx, 1), ("STA", Absolute, 4, Wm, 1), ("STX", Absolute, 4, Wx, 1), ("STA", Long, 5, Wm, 1),
    // 0x90
    ("BCC", Relative8, 2, Wn, 0), ("STA", DirectIndirectY, 6, Wm, 1), ("STA", DirectIndirect, 5, Wm, 1), ("STA", StackIndirectY, 7, Wm, 1),
    ("STY", DirectX, 4, Wx, 1), ("STA", DirectX, 4, Wm, 1), ("STX", DirectY, 4, Wx, 1), ("STA", DirectIndirectLongY, 6, Wm, 1),
    ("TYA", Implied, 2, Wn, 0), ("STA", AbsoluteY, 5, Wm, 1), ("TXS", Implied, 2, Wn, 0), ("TXY", Implied, 2, Wn, 0),
    ("STZ", Absolute, 4, Wm, 1), ("STA", AbsoluteX, 5, Wm, 1), ("STZ", AbsoluteX, 5, Wm, 1), ("STA", LongX, 5, Wm, 1),
    // 0xa0
    ("LDY", ImmediateX, 2, Wx, 1), ("LDA", DirectXIndirect, 6, Wm, 1), ("LDX", ImmediateX, 2, Wx, 1), ("LDA", Stack, 4, Wm, 1),
    ("LDY", Direct, 3, Wx, 1), ("LDA", Direct, 3, Wm, 1), ("LDX", Direct, 3, Wx, 1), ("LDA", DirectIndirectLong, 6, Wm, 1),
    ("TAY", Implied, 2, Wn, 0), ("LDA", ImmediateM, 2, Wm, 1), ("TAX", Implied, 2, Wn, 0), ("PLB", Implied, 4, Wn, 0),
    ("LDY", Absolute, 4, Wx, 1), ("LDA", Absolute, 4, Wm, 1), ("LDX", Absolute, 4, Wx, 1), ("LDA", Long, 5, Wm, 1),
    // 0xb0
    ("BCS", Relative8, 2, Wn, 0), ("LDA", DirectIndirectY, 5, Wm, 1), ("LDA", DirectIndirect, 5, Wm, 1), ("LDA", StackIndirectY, 7, Wm, 1),
    ("LDY", DirectX, 4, Wx, 1), ("LDA", DirectX, 4, Wm, 1), ("LDX", DirectY, 4, Wx, 1), ("LDA", DirectIndirectLongY, 6, Wm, 1),
    ("CLV", Implied, 2, Wn, 0), ("LDA", AbsoluteY, 4, Wm, 1), ("TSX", Implied, 2, Wn, 0), ("TYX", Implied, 2, Wn, 0),
    ("LDY", AbsoluteX, 4, Wx, 1), ("LDA", AbsoluteX, 4, Wm, 1), ("LDX", AbsoluteY, 4, Wx, 1), ("LDA", LongX, 5, Wm, 1),
    // 0xc0
    ("CPY", ImmediateX, 2, Wx, 1), ("CMP", DirectXIndirect, 6, Wm, 1), ("REP", Immediate8, 3, Wn, 0), ("CMP", Stack, 4, Wm, 1),
    ("CPY", Direct, 3, Wx, 1), ("CMP", Direct, 3, Wm, 1), ("DEC", Direct, 5, Wm, 2), ("CMP", DirectIndirectLong, 6, Wm, 1),
    ("INY", Implied, 2, Wn, 0), ("CMP", ImmediateM, 2, Wm, 1), ("DEX", Implied, 2, Wn, 0), ("WAI", Implied, 3, Wn, 0),
    ("CPY", Absolute, 4, Wx, 1), ("CMP", Absolute, 4, Wm, 1), ("DEC", Absolute, 6, Wm, 2), ("CMP", Long, 5, Wm, 1),
    // 0xd0
    ("BNE", Relative8, 2, Wn, 0), ("CMP", DirectIndirectY, 5, Wm, 1), ("CMP", DirectIndirect, 5, Wm, 1), ("CMP", StackIndirectY, 7, Wm, 1),
    ("PEI", DirectIndirect, 6, Wn, 0), ("CMP", DirectX, 4, Wm, 1), ("DEC", DirectX, 6, Wm, 2), ("CMP", DirectIndirectLongY, 6, Wm, 1),
    ("CLD", Implied, 2, Wn, 0), ("CMP", AbsoluteY, 4, Wm, 1), ("PHX", Implied, 3, Wx, 1), ("STP", Implied, 3, Wn, 0),
    ("JML", AbsoluteIndirectLong, 6, Wn, 0), ("CMP", AbsoluteX, 4, Wm, 1), ("DEC", AbsoluteX, 7, Wm, 2), ("CMP", LongX, 5, Wm, 1),
    // 0xe0
    ("CPX", ImmediateX, 2, Wx, 1), ("SBC", DirectXIndirect, 6, Wm, 1), ("SEP", Immediate8, 3, Wn, 0), ("SBC", Stack, 4, Wm, 1),
    ("CPX", Direct, 3, Wx, 1), ("SBC", Direct, 3, Wm, 1), ("INC", Direct, 5, Wm, 2), ("SBC", DirectIndirectLong, 6, Wm, 1),
    ("INX", Implied, 2, Wn, 0), ("SBC", ImmediateM, 2, Wm, 1), ("NOP", Implied, 2, Wn, 0), ("XBA", Implied, 3, Wn, 0),
    ("CPX", Absolute, 4, Wx, 1), ("SBC", Absolute, 4, Wm, 1), ("INC", Absolute, 6, Wm, 2), ("SBC", Long, 5, Wm, 1),
    // 0xf0
    ("BEQ", Relative8, 2, Wn, 0), ("SBC", DirectIndirectY, 5, Wm, 1), ("SBC", DirectIndirect, 5, Wm, 1), ("SBC", StackIndirectY, 7, Wm, 1),
    ("PEA", Absolute, 5, Wn, 0), ("SBC", DirectX, 4, Wm, 1), ("INC", DirectX, 6, Wm, 2), ("SBC", DirectIndirectLongY, 6, Wm, 1),
    ("SED", Implied, 2, Wn, 0), ("SBC", AbsoluteY, 4, Wm, 1), ("PLX", Implied, 4, Wx, 1), ("XCE", Implied, 2, Wn, 0),
    ("JSR", AbsoluteXIndirect, 8, Wn, 0), ("SBC", AbsoluteX, 4, Wm, 1), ("INC", AbsoluteX, 7, Wm, 2), ("SBC", LongX, 5, Wm, 1),
];

/// The table row of `opcode`.
pub fn info(opcode: u8) -> OpInfo {
    let (mnemonic, mode, base_cycles, width, wide_cycles) = TABLE[usize::from(opcode)];
    OpInfo {
        opcode,
        mnemonic,
        mode,
        base_cycles,
        width,
        wide_cycles,
    }
}

/// One decoded instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Insn {
    /// Its table row.
    pub info: OpInfo,
    /// Where it is (24-bit: bank and offset).
    pub addr: u32,
    /// The widths it was decoded under.
    pub widths: Widths,
    /// Its length in bytes, opcode included.
    pub len: u32,
    /// The operand bytes as a little-endian number (for `MVN`/`MVP`: destination bank in the
    /// low byte, source bank in the next).
    pub operand: u32,
}

/// Why bytes do not decode.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// The instruction's operand runs past the bytes given (the end of a ROM bank).
    #[error("the instruction at ${addr:06X} runs past the end of its bank's code")]
    Truncated {
        /// Where it starts.
        addr: u32,
    },
}

/// Decodes the instruction at `addr` whose bytes start `bytes`, under `widths`.
pub fn decode(bytes: &[u8], addr: u32, widths: Widths) -> Result<Insn, DecodeError> {
    let opcode = *bytes.first().ok_or(DecodeError::Truncated { addr })?;
    let info = info(opcode);
    let operand_len = info.mode.operand_len(widths);
    let operand_bytes = bytes
        .get(1..1 + operand_len as usize)
        .ok_or(DecodeError::Truncated { addr })?;
    let operand = operand_bytes
        .iter()
        .rev()
        .fold(0u32, |acc, &b| (acc << 8) | u32::from(b));
    Ok(Insn {
        info,
        addr,
        widths,
        len: 1 + operand_len,
        operand,
    })
}

impl Insn {
    /// The address of the next instruction in the same bank (the program counter wraps within
    /// its bank; the bank register does not change).
    pub fn next(&self) -> u32 {
        (self.addr & 0xff_0000) | (self.addr.wrapping_add(self.len) & 0xffff)
    }

    /// Where a branch (`Relative8`/`Relative16`) or `PER` points, in the same bank.
    pub fn relative_target(&self) -> u32 {
        let offset = match self.info.mode {
            Mode::Relative8 => i32::from(self.operand as u8 as i8),
            _ => i32::from(self.operand as u16 as i16),
        };
        (self.addr & 0xff_0000) | (self.next().wrapping_add(offset as u32) & 0xffff)
    }

    /// Whether the data width is 16 bits under the widths it was decoded with.
    pub fn is_wide(&self) -> bool {
        match self.info.width {
            Width::None => false,
            Width::M => !self.widths.m8,
            Width::X => !self.widths.x8,
        }
    }

    /// Whether the instruction reads through `abs,X`, `abs,Y` or `(dp),Y`, which costs a cycle more
    /// when the index carries into the next page (always with 16-bit index registers).
    pub fn is_indexed_read(&self) -> bool {
        let info = &self.info;
        matches!(info.mode, Mode::AbsoluteX | Mode::AbsoluteY | Mode::DirectIndirectY)
            && matches!(info.width, Width::M | Width::X)
            && info.wide_cycles == 1
            && !matches!(info.mnemonic, "STA" | "STZ")
    }

    /// The cycles this instruction takes on the 65816 given what is only known when it runs:
    /// whether D's low byte is non-zero, whether indexing crossed a page, whether a branch was
    /// taken (and crossed a page). Block moves count one byte's worth.
    pub fn cycles(&self, dl_nonzero: bool, page_crossed: bool, branch_taken: bool) -> u32 {
        let info = &self.info;
        let mut cycles = u32::from(info.base_cycles);
        if self.is_wide() {
            cycles += u32::from(info.wide_cycles);
        }
        if dl_nonzero && info.mode.uses_direct_page() {
            cycles += 1;
        }
        // BRK, COP and RTI also push/pull the program bank in native mode; the base counts
        // emulation mode's 7 (BRK, COP) and 6 (RTI).
        if matches!(info.opcode, 0x00 | 0x02 | 0x40) && !self.widths.emulation {
            cycles += 1;
        }
        // Indexed reads take the extra cycle when the index crossed a page, or always with
        // 16-bit index registers.
        if self.is_indexed_read() && (page_crossed || !self.widths.x8) {
            cycles += 1;
        }
        if info.mode == Mode::Relative8 && info.opcode != 0x80 && branch_taken {
            cycles += 1;
        }
        if info.mode == Mode::Relative8 && branch_taken && self.widths.emulation && page_crossed {
            cycles += 1;
        }
        cycles
    }
}

impl fmt::Display for Insn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let m = self.info.mnemonic;
        let op = self.operand;
        let imm_digits = (self.len as usize - 1) * 2;
        match self.info.mode {
            Mode::Implied => write!(f, "{m}"),
            Mode::Accumulator => write!(f, "{m} A"),
            Mode::ImmediateM | Mode::ImmediateX | Mode::Immediate8 => write!(f, "{m} #${op:0imm_digits$X}"),
            Mode::Absolute if matches!(m, "JMP" | "JSR") => {
                write!(f, "{m} ${:06X}", (self.addr & 0xff_0000) | op)
            }
            Mode::Absolute => write!(f, "{m} ${op:04X}"),
            Mode::AbsoluteX => write!(f, "{m} ${op:04X},X"),
            Mode::AbsoluteY => write!(f, "{m} ${op:04X},Y"),
            Mode::Long => write!(f, "{m} ${op:06X}"),
            Mode::LongX => write!(f, "{m} ${op:06X},X"),
            Mode::Direct => write!(f, "{m} ${op:02X}"),
            Mode::DirectX => write!(f, "{m} ${op:02X},X"),
            Mode::DirectY => write!(f, "{m} ${op:02X},Y"),
            Mode::DirectIndirect => write!(f, "{m} (${op:02X})"),
            Mode::DirectIndirectLong => write!(f, "{m} [${op:02X}]"),
            Mode::DirectXIndirect => write!(f, "{m} (${op:02X},X)"),
            Mode::DirectIndirectY => write!(f, "{m} (${op:02X}),Y"),
            Mode::DirectIndirectLongY => write!(f, "{m} [${op:02X}],Y"),
            Mode::Stack => write!(f, "{m} ${op:02X},S"),
            Mode::StackIndirectY => write!(f, "{m} (${op:02X},S),Y"),
            Mode::Relative8 | Mode::Relative16 => write!(f, "{m} ${:06X}", self.relative_target()),
            Mode::AbsoluteIndirect => write!(f, "{m} (${op:04X})"),
            Mode::AbsoluteIndirectLong => write!(f, "{m} [${op:04X}]"),
            Mode::AbsoluteXIndirect => write!(f, "{m} (${op:04X},X)"),
            Mode::BlockMove => write!(f, "{m} ${:02X},${:02X}", op >> 8, op & 0xff),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NATIVE16: Widths = Widths {
        m8: false,
        x8: false,
        emulation: false,
    };

    #[test]
    fn every_opcode_has_a_row_and_a_length_under_every_width() {
        let mut mnemonics = std::collections::BTreeSet::new();
        for opcode in 0..=255u8 {
            let row = info(opcode);
            assert_eq!(row.opcode, opcode);
            mnemonics.insert(row.mnemonic);
            for bits in 0..8 {
                let widths = Widths::from_bits(bits);
                let bytes = [opcode, 0x12, 0x34, 0x56];
                let insn = decode(&bytes, 0x00_8000, widths).expect("four bytes hold any instruction");
                assert!((1..=4).contains(&insn.len));
                assert!(insn.cycles(false, false, false) >= 2);
            }
        }
        // The 65816's 92 mnemonics (JML and JSR appear under two modes each).
        assert_eq!(mnemonics.len(), 92);
    }

    #[test]
    fn immediate_lengths_follow_m_and_x_and_emulation_forces_8_bits() {
        let lda = [0xa9, 0x34, 0x12];
        assert_eq!(decode(&lda, 0, NATIVE16).unwrap().len, 3);
        assert_eq!(decode(&lda, 0, NATIVE16).unwrap().operand, 0x1234);
        assert_eq!(decode(&lda, 0, Widths { m8: true, ..NATIVE16 }).unwrap().len, 2);
        let ldx = [0xa2, 0x34, 0x12];
        assert_eq!(decode(&ldx, 0, Widths { m8: true, ..NATIVE16 }).unwrap().len, 3);
        assert_eq!(decode(&ldx, 0, Widths::from_bits(4)).unwrap().len, 2);
        assert_eq!(Widths::from_bits(4), Widths::RESET);
        // REP/SEP and the signature bytes never change size.
        assert_eq!(decode(&[0xc2, 0x30], 0, Widths::RESET).unwrap().len, 2);
    }

    #[test]
    fn function_keys_name_address_and_state_and_reset_is_the_plain_address() {
        assert_eq!(Widths::RESET.key(0x00_8000), 0x8000);
        assert_eq!(NATIVE16.key(0x80_8000), 0x0780_8000);
        for bits in [0, 4, 5, 6, 7] {
            let widths = Widths::from_bits(bits ^ 7);
            assert_eq!(Widths::from_key(widths.key(0x12_3456)), Some((0x12_3456, widths)));
        }
        // Emulation mode with a 16-bit accumulator is no state the CPU can be in.
        assert_eq!(Widths::from_key(0x0200_8000), None);
        assert_eq!(Widths::from_key(0x1000_0000), None);
    }

    #[test]
    fn truncated_operands_are_errors_naming_the_address() {
        let err = decode(&[0xad, 0x00], 0x01_fffe, Widths::RESET).unwrap_err();
        assert_eq!(err, DecodeError::Truncated { addr: 0x01_fffe });
        assert!(err.to_string().contains("$01FFFE"));
    }

    #[test]
    fn branches_and_the_program_counter_wrap_within_the_bank() {
        let bra = decode(&[0x80, 0xfe], 0x02_8000, Widths::RESET).unwrap();
        assert_eq!(bra.relative_target(), 0x02_8000);
        let at_end = decode(&[0xea], 0x02_ffff, Widths::RESET).unwrap();
        assert_eq!(at_end.next(), 0x02_0000);
        let brl = decode(&[0x82, 0x00, 0x80], 0x02_8000, Widths::RESET).unwrap();
        assert_eq!(brl.relative_target(), 0x02_0003);
        assert_eq!(brl.to_string(), "BRL $020003");
    }

    #[test]
    fn cycles_follow_the_datasheet_rules() {
        let at = |bytes: &[u8], widths| decode(bytes, 0x00_8000, widths).unwrap();
        // LDA dp: 3, +1 for 16 bits, +1 when D's low byte is not zero.
        assert_eq!(at(&[0xa5, 0x10], Widths::RESET).cycles(false, false, false), 3);
        assert_eq!(at(&[0xa5, 0x10], NATIVE16).cycles(true, false, false), 5);
        // ASL abs at 16 bits: 6 + 2.
        assert_eq!(at(&[0x0e, 0, 0], NATIVE16).cycles(false, false, false), 8);
        // LDA abs,X: +1 on a page crossing, always with 16-bit index registers; STA abs,X never.
        let lda_x = Widths {
            m8: true,
            x8: true,
            emulation: false,
        };
        assert_eq!(at(&[0xbd, 0xff, 0], lda_x).cycles(false, true, false), 5);
        assert_eq!(at(&[0xbd, 0xff, 0], lda_x).cycles(false, false, false), 4);
        assert_eq!(
            at(&[0xbd, 0xff, 0], Widths { x8: false, ..lda_x }).cycles(false, false, false),
            5
        );
        assert_eq!(at(&[0x9d, 0xff, 0], lda_x).cycles(false, true, false), 5);
        // Branches: +1 taken, +1 more crossing a page in emulation mode.
        assert_eq!(at(&[0xd0, 0x10], Widths::RESET).cycles(false, true, true), 4);
        assert_eq!(at(&[0xd0, 0x10], lda_x).cycles(false, true, true), 3);
        // BRK: 7 in emulation mode, 8 native.
        assert_eq!(at(&[0x00, 0x00], Widths::RESET).cycles(false, false, false), 7);
        assert_eq!(at(&[0x00, 0x00], lda_x).cycles(false, false, false), 8);
        // PEI pays for D's low byte like the direct-page modes.
        assert_eq!(at(&[0xd4, 0x10], lda_x).cycles(true, false, false), 7);
    }

    #[test]
    fn disassembly_names_modes_as_assemblers_write_them() {
        let text = |bytes: &[u8], widths| decode(bytes, 0x01_8000, widths).unwrap().to_string();
        assert_eq!(text(&[0xa9, 0x34, 0x12], NATIVE16), "LDA #$1234");
        assert_eq!(text(&[0xb7, 0x10], NATIVE16), "LDA [$10],Y");
        assert_eq!(text(&[0x54, 0x7e, 0x7f], NATIVE16), "MVN $7F,$7E");
        assert_eq!(text(&[0x20, 0x00, 0x90], NATIVE16), "JSR $019000");
        assert_eq!(text(&[0xfc, 0x00, 0x90], NATIVE16), "JSR ($9000,X)");
        assert_eq!(text(&[0x83, 0x03], NATIVE16), "STA $03,S");
    }
}
