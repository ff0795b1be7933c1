//! The decoder: iced-x86 in 32-bit mode over the loaded image, plus Intel-syntax disassembly text.

use iced_x86::{Decoder, DecoderOptions, Formatter, Instruction, IntelFormatter};
use rpt_api::GuestImage;
use rpt_ir::GuestAddr;

/// The longest x86 instruction.
const MAX_INSN_LEN: usize = 15;

/// Why no instruction could be decoded at an address.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DecodeError {
    /// The address is not in an executable segment (or has no initialised bytes there).
    NotCode,
    /// The bytes there are not a valid instruction (or are cut off by the end of the segment).
    Invalid {
        /// The bytes found, up to the longest instruction.
        bytes: Vec<u8>,
    },
}

impl std::fmt::Display for DecodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DecodeError::NotCode => f.write_str("not in an executable section"),
            DecodeError::Invalid { bytes } => write!(f, "invalid instruction bytes {}", hex_bytes(bytes)),
        }
    }
}

/// Formats bytes as `0f a2 90`.
pub fn hex_bytes(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect::<Vec<_>>().join(" ")
}

/// Decodes the instruction at `addr`, which must lie in an executable segment.
pub fn decode_at(image: &GuestImage, addr: GuestAddr) -> Result<Instruction, DecodeError> {
    if !image.is_code(addr) {
        return Err(DecodeError::NotCode);
    }
    let bytes = image.bytes_at(addr, MAX_INSN_LEN).ok_or(DecodeError::NotCode)?;
    if bytes.is_empty() {
        return Err(DecodeError::NotCode);
    }
    decode_bytes(bytes, addr)
}

/// Decodes one instruction from `bytes` as if it lay at `addr`.
pub fn decode_bytes(bytes: &[u8], addr: GuestAddr) -> Result<Instruction, DecodeError> {
    let mut decoder = Decoder::with_ip(32, bytes, addr.0, DecoderOptions::NONE);
    let insn = decoder.decode();
    if insn.is_invalid() {
        return Err(DecodeError::Invalid { bytes: bytes.to_vec() });
    }
    Ok(insn)
}

/// The instruction's own bytes, read back from the image (for diagnostics).
pub fn insn_bytes(image: &GuestImage, insn: &Instruction) -> Vec<u8> {
    image
        .bytes_at(GuestAddr(insn.ip()), insn.len())
        .map(<[u8]>::to_vec)
        .unwrap_or_default()
}

/// Intel-syntax disassembly (`mov eax, [ebp+8]`) for listings and diagnostics.
pub struct Disassembler {
    formatter: IntelFormatter,
}

impl Default for Disassembler {
    fn default() -> Self {
        Disassembler::new()
    }
}

impl Disassembler {
    /// Intel syntax as people write it: `mov eax, [ebp+0x8]`, `jne 0x00401020`, lower-case hex.
    pub fn new() -> Disassembler {
        let mut formatter = IntelFormatter::new();
        let o = formatter.options_mut();
        o.set_space_after_operand_separator(true);
        o.set_hex_prefix("0x");
        o.set_hex_suffix("");
        o.set_uppercase_hex(false);
        o.set_branch_leading_zeros(true);
        o.set_show_branch_size(false);
        Disassembler { formatter }
    }

    /// The text of one instruction.
    pub fn text(&mut self, insn: &Instruction) -> String {
        let mut out = String::new();
        self.formatter.format(insn, &mut out);
        out
    }
}
