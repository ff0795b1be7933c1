//! The cartridge loader: an SNES ROM file → the 65816's view of the cartridge.
//!
//! A ROM file carries no format field: the cartridge's mapping (how the console's 24-bit address
//! space reaches ROM bytes) is told by the internal header, a 64-byte block that lies where the
//! CPU sees `$00:FFC0`–`$00:FFFF`: file offset `$7FC0` for LoROM, `$FFC0` for HiROM and `$40FFC0`
//! for ExHiROM. Each candidate is scored on what a real header holds (checksum and complement
//! summing to `$FFFF`, a map-mode byte naming that mapping, a reset vector into ROM whose first
//! opcode is one start-up code begins with, a printable title, a plausible size byte) and the
//! best one wins.
//!
//! Decisions:
//! - A file whose size is 512 more than a multiple of 1 KiB starts with a copier's header
//!   (Super Magicom, Super Wild Card): the 512 bytes are dropped.
//! - A checksum that does not match the bytes is a warning ([`Cartridge::warnings`]), not an
//!   error: homebrew and patched ROMs often carry a stale one, and the console never checks it.
//! - The recipe may name the mapping (`guest_options: {"mapping": "hirom"}`); the loader then
//!   reads that header but still refuses a mapping that cannot hold the file (a 32 KiB HiROM).
//! - The image's segments are the places code runs from: LoROM's 32 KiB banks at `$00-$7D:8000`
//!   and the FastROM mirror at `$80-$FF:8000`; HiROM's and ExHiROM's 64 KiB banks at `$C0-$FF`
//!   (and `$40-$7D` for ExHiROM's upper part) with their upper halves mirrored into `$00-$3F` and
//!   `$80-$BF`. Other mirrors exist on the bus (the platform serves every one); code
//!   running from them is found by the run-time tier. WRAM (`$7E:0000`, 128 KiB) is a writable
//!   segment without bytes.

use std::fmt;

use rpt_api::{GuestError, GuestImage, Segment, SegmentFlags};
use rpt_ir::GuestAddr;

/// The smallest ROM a cartridge holds: one LoROM bank.
pub const MIN_ROM_SIZE: usize = 0x8000;
/// Size of a copier's header in front of some ROM dumps.
pub const COPIER_HEADER_SIZE: usize = 512;
/// WRAM's place and size in the 24-bit address space.
pub const WRAM: (u64, u64) = (0x7e_0000, 0x2_0000);

/// How the cartridge wires ROM into the address space.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Mapping {
    /// Mode 20: 32 KiB of ROM in the upper half of each bank.
    LoRom,
    /// Mode 21: 64 KiB of ROM per bank from `$C0`.
    HiRom,
    /// Mode 25: HiROM extended past 4 MiB (the upper part in banks `$40-$7D`).
    ExHiRom,
}

impl Mapping {
    /// Every mapping, in the order candidates are scored.
    pub const ALL: [Mapping; 3] = [Mapping::LoRom, Mapping::HiRom, Mapping::ExHiRom];

    /// The name recipes use (`lorom`, `hirom`, `exhirom`).
    pub fn name(self) -> &'static str {
        match self {
            Mapping::LoRom => "lorom",
            Mapping::HiRom => "hirom",
            Mapping::ExHiRom => "exhirom",
        }
    }

    /// The mapping a recipe names, if it is one.
    pub fn from_name(name: &str) -> Option<Mapping> {
        Mapping::ALL.into_iter().find(|m| m.name() == name)
    }

    /// File offset of the internal header (`$00:FFC0` as the CPU sees it).
    pub fn header_offset(self) -> usize {
        match self {
            Mapping::LoRom => 0x7fc0,
            Mapping::HiRom => 0xffc0,
            Mapping::ExHiRom => 0x40_ffc0,
        }
    }

    /// The low nibble of the header's map-mode byte for this mapping.
    fn mode_nibble(self) -> u8 {
        match self {
            Mapping::LoRom => 0x0,
            Mapping::HiRom => 0x1,
            Mapping::ExHiRom => 0x5,
        }
    }

    /// The ROM sizes this mapping can wire up, inclusive.
    pub fn size_range(self) -> (usize, usize) {
        match self {
            Mapping::LoRom => (MIN_ROM_SIZE, 0x40_0000),
            Mapping::HiRom => (0x1_0000, 0x40_0000),
            Mapping::ExHiRom => (0x41_0000, 0x7e_0000),
        }
    }

    /// The ROM offset the CPU reaches at `addr` through this mapping's primary windows (the ones
    /// [`Cartridge::segments`] lists), or `None` for anything else.
    pub fn rom_offset(self, addr: u32, rom_len: usize) -> Option<usize> {
        let bank = (addr >> 16) as usize & 0xff;
        let low = addr as usize & 0xffff;
        let offset = match self {
            Mapping::LoRom => {
                if low < 0x8000 || bank == 0x7e || bank == 0x7f {
                    return None;
                }
                (bank & 0x7f) * 0x8000 + (low - 0x8000)
            }
            Mapping::HiRom => match bank {
                0xc0..=0xff => (bank - 0xc0) * 0x1_0000 + low,
                0x00..=0x3f | 0x80..=0xbf if low >= 0x8000 => (bank & 0x3f) * 0x1_0000 + low,
                _ => return None,
            },
            Mapping::ExHiRom => match bank {
                0xc0..=0xff => (bank - 0xc0) * 0x1_0000 + low,
                0x80..=0xbf if low >= 0x8000 => (bank - 0x80) * 0x1_0000 + low,
                0x40..=0x7d => 0x40_0000 + (bank - 0x40) * 0x1_0000 + low,
                0x00..=0x3f if low >= 0x8000 => 0x40_0000 + bank * 0x1_0000 + low,
                _ => return None,
            },
        };
        (offset < rom_len).then_some(offset)
    }
}

impl fmt::Display for Mapping {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The names of the native-mode vectors among [`Vectors::named`]: their handlers are entered in
/// whatever widths the interrupted code had.
pub const NATIVE_VECTORS: [&str; 5] = ["cop", "brk", "abort", "nmi", "irq"];

/// The interrupt and reset vectors of the header (`$FFE4`–`$FFFF`); 0 where the ROM holds none.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Vectors {
    /// Native-mode COP.
    pub cop: u16,
    /// Native-mode BRK.
    pub brk: u16,
    /// Native-mode ABORT.
    pub abort: u16,
    /// Native-mode NMI.
    pub nmi: u16,
    /// Native-mode IRQ.
    pub irq: u16,
    /// Emulation-mode COP.
    pub emu_cop: u16,
    /// Emulation-mode ABORT.
    pub emu_abort: u16,
    /// Emulation-mode NMI.
    pub emu_nmi: u16,
    /// RESET (always taken in emulation mode).
    pub reset: u16,
    /// Emulation-mode IRQ and BRK.
    pub emu_irq: u16,
}

impl Vectors {
    fn read(header: &[u8]) -> Vectors {
        let at = |offset: usize| u16::from_le_bytes([header[offset], header[offset + 1]]);
        Vectors {
            cop: at(0x24),
            brk: at(0x26),
            abort: at(0x28),
            nmi: at(0x2a),
            irq: at(0x2e),
            emu_cop: at(0x34),
            emu_abort: at(0x38),
            emu_nmi: at(0x3a),
            reset: at(0x3c),
            emu_irq: at(0x3e),
        }
    }

    /// Each vector with a name, in header order.
    pub fn named(&self) -> [(&'static str, u16); 10] {
        [
            ("cop", self.cop),
            ("brk", self.brk),
            ("abort", self.abort),
            ("nmi", self.nmi),
            ("irq", self.irq),
            ("emulation_cop", self.emu_cop),
            ("emulation_abort", self.emu_abort),
            ("emulation_nmi", self.emu_nmi),
            ("reset", self.reset),
            ("emulation_irq", self.emu_irq),
        ]
    }
}

/// The internal header's fields.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    /// The 21-byte title, trailing spaces dropped, non-ASCII bytes shown as `?`.
    pub title: String,
    /// The map-mode byte (`$20` LoROM, `$21` HiROM, `$25` ExHiROM; `+$10` for FastROM).
    pub map_mode: u8,
    /// The cartridge-type byte (ROM only, ROM+RAM, coprocessors).
    pub cartridge_type: u8,
    /// The ROM size byte: `1 << n` KiB.
    pub rom_size: u8,
    /// The SRAM size byte: `1 << n` KiB, 0 for none.
    pub sram_size: u8,
    /// The checksum's complement.
    pub complement: u16,
    /// The checksum.
    pub checksum: u16,
    /// The vectors.
    pub vectors: Vectors,
}

impl Header {
    fn read(bytes: &[u8]) -> Header {
        let title = bytes[..21]
            .iter()
            .map(|&b| if (0x20..0x7f).contains(&b) { b as char } else { '?' })
            .collect::<String>()
            .trim_end()
            .to_string();
        Header {
            title,
            map_mode: bytes[0x15],
            cartridge_type: bytes[0x16],
            rom_size: bytes[0x17],
            sram_size: bytes[0x18],
            complement: u16::from_le_bytes([bytes[0x1c], bytes[0x1d]]),
            checksum: u16::from_le_bytes([bytes[0x1e], bytes[0x1f]]),
            vectors: Vectors::read(bytes),
        }
    }

    /// Whether the map-mode byte says FastROM (the `$80-$FF` banks run at 3.58 MHz when `$420D`
    /// asks for it).
    pub fn fast_rom(&self) -> bool {
        self.map_mode & 0x10 != 0
    }

    /// SRAM size in bytes (the size byte says `1 << n` KiB; 0 means none; anything past 512 KiB
    /// is no real board and counts as none).
    pub fn sram_bytes(&self) -> u32 {
        match self.sram_size {
            1..=9 => 1024 << self.sram_size,
            _ => 0,
        }
    }
}

/// A loaded cartridge.
#[derive(Clone, PartialEq, Eq)]
pub struct Cartridge {
    /// The ROM bytes, without a copier's header.
    pub rom: Vec<u8>,
    /// Whether the file had a copier's header.
    pub had_copier_header: bool,
    /// The mapping, detected or named by the recipe.
    pub mapping: Mapping,
    /// The header at that mapping's place.
    pub header: Header,
    /// Things worth a warning (a checksum that does not match).
    pub warnings: Vec<String>,
}

/// First opcodes start-up code begins with: SEI, CLC, SEC, CLD, XCE, REP, SEP, STZ abs, LDA/LDX/LDY
/// immediate, STA abs, JMP, JML, JSR, JSL, and the `JML`/`SEI` pairs of FastROM stubs.
const START_OPCODES: [u8; 17] = [
    0x78, 0x18, 0x38, 0xd8, 0xfb, 0xc2, 0xe2, 0x9c, 0xa9, 0xa2, 0xa0, 0x8d, 0x4c, 0x5c, 0x20, 0x22, 0x4b,
];
/// Opcodes no reset handler starts with: BRK, COP, STP, WDM and the `$FF` of erased flash.
const NEVER_FIRST: [u8; 5] = [0x00, 0x02, 0xdb, 0x42, 0xff];

/// A plausibility score for the header of `mapping` in `rom`, or `None` when the ROM is too
/// small to hold it. The best-scoring candidate is the mapping.
pub fn score(rom: &[u8], mapping: Mapping) -> Option<i32> {
    let at = mapping.header_offset();
    let bytes = rom.get(at..at + 0x40)?;
    let header = Header::read(bytes);
    let mut score = 0;
    if header.checksum.wrapping_add(header.complement) == 0xffff {
        score += 4;
        if header.checksum == checksum(rom) {
            score += 4;
        }
    }
    if header.map_mode & 0xe0 == 0x20 && header.map_mode & 0x0f == mapping.mode_nibble() {
        score += 3;
    }
    let reset = header.vectors.reset;
    if reset < 0x8000 {
        score -= 8;
    } else {
        score += 2;
        let first = mapping.rom_offset(u32::from(reset), rom.len()).and_then(|o| rom.get(o));
        match first {
            Some(op) if START_OPCODES.contains(op) => score += 3,
            Some(op) if NEVER_FIRST.contains(op) => score -= 4,
            Some(_) => {}
            None => score -= 4,
        }
    }
    if bytes[..21].iter().all(|b| (0x20..0x7f).contains(b)) {
        score += 1;
    }
    if (0x07..=0x0d).contains(&header.rom_size) {
        score += 1;
    }
    Some(score)
}

/// The lowest score a header needs to be believed.
const MIN_SCORE: i32 = 4;

/// The 16-bit sum of the ROM's bytes as the header's checksum covers them: a size that is not a
/// power of two is counted as the cartridge's address decoding sees it, the part past the largest
/// power of two repeated until it fills the next one (a 3 MiB ROM counts its last MiB twice).
pub fn checksum(rom: &[u8]) -> u16 {
    fn sum(bytes: &[u8]) -> u64 {
        bytes.iter().map(|&b| u64::from(b)).sum()
    }
    // The sum of `bytes` repeated (by the same rule, recursively) to fill `target` bytes.
    fn mirrored(bytes: &[u8], target: usize) -> u64 {
        if bytes.is_empty() {
            return 0;
        }
        if bytes.len() >= target {
            return sum(&bytes[..target]);
        }
        let len = bytes.len();
        if len.is_power_of_two() {
            return sum(bytes) * (target / len) as u64;
        }
        let half = 1usize << (usize::BITS - 1 - len.leading_zeros());
        let filled = sum(&bytes[..half]) + mirrored(&bytes[half..], half);
        filled * (target / (2 * half)).max(1) as u64
    }
    let target = rom.len().next_power_of_two();
    (mirrored(rom, target) & 0xffff) as u16
}

fn bad(what: String) -> GuestError {
    GuestError::BadImage(format!("SNES ROM: {what}"))
}

/// Parses a ROM file. `mapping` is the recipe's override; without one the best-scoring header
/// decides.
pub fn parse(file: &[u8], mapping: Option<Mapping>) -> Result<Cartridge, GuestError> {
    let had_copier_header = file.len() % 1024 == COPIER_HEADER_SIZE;
    let rom = if had_copier_header {
        &file[COPIER_HEADER_SIZE..]
    } else {
        file
    };
    if rom.len() < MIN_ROM_SIZE {
        return Err(bad(format!(
            "the file holds {} bytes of ROM{}; a cartridge holds at least {} KiB",
            rom.len(),
            if had_copier_header {
                " after its 512-byte copier header"
            } else {
                ""
            },
            MIN_ROM_SIZE / 1024
        )));
    }
    let mapping = match mapping {
        Some(m) => {
            let (low, high) = m.size_range();
            if rom.len() < low || rom.len() > high {
                return Err(bad(format!(
                    "the recipe names the {m} mapping, which holds {} to {} KiB of ROM, but the file holds {} KiB",
                    low / 1024,
                    high / 1024,
                    rom.len() / 1024
                )));
            }
            m
        }
        None => detect(rom)?,
    };
    let at = mapping.header_offset();
    let header = Header::read(&rom[at..at + 0x40]);
    let mut warnings = Vec::new();
    let sum = checksum(rom);
    if header.checksum != sum {
        warnings.push(format!(
            "the header's checksum is ${:04X} but the ROM's bytes sum to ${sum:04X} (the console never checks it)",
            header.checksum
        ));
    }
    if header.vectors.reset < 0x8000 {
        return Err(bad(format!(
            "the reset vector ${:04X} points outside ROM (the {mapping} header at file offset ${at:X})",
            header.vectors.reset
        )));
    }
    Ok(Cartridge {
        rom: rom.to_vec(),
        had_copier_header,
        mapping,
        header,
        warnings,
    })
}

/// The mapping whose header scores best, refusing a ROM where none is plausible.
fn detect(rom: &[u8]) -> Result<Mapping, GuestError> {
    let mut best: Option<(i32, Mapping)> = None;
    let mut tried = Vec::new();
    for mapping in Mapping::ALL {
        let (low, high) = mapping.size_range();
        if rom.len() < low || rom.len() > high {
            continue;
        }
        let Some(s) = score(rom, mapping) else { continue };
        tried.push(format!("{mapping} {s}"));
        // Ties go to the earlier (smaller) mapping: a 64 KiB LoROM with a HiROM-looking echo.
        if best.is_none_or(|(b, _)| s > b) {
            best = Some((s, mapping));
        }
    }
    match best {
        Some((s, mapping)) if s >= MIN_SCORE => Ok(mapping),
        _ if tried.is_empty() => Err(bad(format!(
            "no mapping holds {} KiB of ROM (LoROM and HiROM hold up to 4 MiB, ExHiROM up to 8064 KiB)",
            rom.len() / 1024
        ))),
        _ => Err(bad(format!(
            "no plausible internal header (scores: {}; a header needs {MIN_SCORE}); name the mapping \
             in the recipe's guest_options if the ROM has none",
            tried.join(", ")
        ))),
    }
}

impl fmt::Debug for Cartridge {
    // The ROM's bytes would drown everything else.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Cartridge")
            .field("rom_len", &self.rom.len())
            .field("had_copier_header", &self.had_copier_header)
            .field("mapping", &self.mapping)
            .field("header", &self.header)
            .field("warnings", &self.warnings)
            .finish()
    }
}

impl Cartridge {
    /// The segments code runs from, in address order (see the module's decisions).
    pub fn segments(&self) -> Vec<Segment> {
        let rx = SegmentFlags {
            read: true,
            write: false,
            execute: true,
        };
        let mut out = Vec::new();
        let mut window = |bank: usize, low: usize, offset: usize, len: usize| {
            let end = (offset + len).min(self.rom.len());
            if offset >= end {
                return;
            }
            let addr = ((bank << 16) | low) as u64;
            out.push(Segment {
                name: format!("rom ${bank:02X}:{low:04X}"),
                addr: GuestAddr(addr),
                bytes: self.rom[offset..end].to_vec(),
                mem_size: (end - offset) as u64,
                flags: rx,
            });
        };
        match self.mapping {
            Mapping::LoRom => {
                for bank in (0x00..=0x7d).chain(0x80..=0xff) {
                    window(bank, 0x8000, (bank & 0x7f) * 0x8000, 0x8000);
                }
            }
            Mapping::HiRom => {
                for bank in (0x00..=0x3f).chain(0x80..=0xbf) {
                    window(bank, 0x8000, (bank & 0x3f) * 0x1_0000 + 0x8000, 0x8000);
                }
                for bank in 0xc0..=0xff {
                    window(bank, 0, (bank - 0xc0) * 0x1_0000, 0x1_0000);
                }
            }
            Mapping::ExHiRom => {
                for bank in 0x00..=0x3f {
                    window(bank, 0x8000, 0x40_0000 + bank * 0x1_0000 + 0x8000, 0x8000);
                }
                for bank in 0x40..=0x7d {
                    window(bank, 0, 0x40_0000 + (bank - 0x40) * 0x1_0000, 0x1_0000);
                }
                for bank in 0x80..=0xbf {
                    window(bank, 0x8000, (bank - 0x80) * 0x1_0000 + 0x8000, 0x8000);
                }
                for bank in 0xc0..=0xff {
                    window(bank, 0, (bank - 0xc0) * 0x1_0000, 0x1_0000);
                }
            }
        }
        out.push(Segment {
            name: "wram".to_string(),
            addr: GuestAddr(WRAM.0),
            bytes: Vec::new(),
            mem_size: WRAM.1,
            flags: SegmentFlags {
                read: true,
                write: true,
                execute: false,
            },
        });
        out.sort_by_key(|s| s.addr);
        out
    }

    /// The image rpt lifts: the segments, RESET in bank 0 as the entry, every vector that points
    /// into ROM as a named export (`nmi`, `emulation_irq`, ...).
    pub fn image(&self) -> GuestImage {
        let exports = self
            .header
            .vectors
            .named()
            .into_iter()
            .filter(|&(_, v)| v >= 0x8000 && v != 0xffff)
            .filter(|&(_, v)| self.mapping.rom_offset(u32::from(v), self.rom.len()).is_some())
            .map(|(name, v)| (name.to_string(), GuestAddr(u64::from(v))))
            .collect();
        GuestImage {
            segments: self.segments(),
            entry: GuestAddr(u64::from(self.header.vectors.reset)),
            exports,
            imports: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A ROM of `size` bytes with a header for `mapping` whose reset handler starts with SEI.
    fn rom_with_header(size: usize, mapping: Mapping, fix_checksum: bool) -> Vec<u8> {
        let mut rom = vec![0xeau8; size];
        let at = mapping.header_offset();
        rom[at..at + 21].copy_from_slice(b"RPT TEST             ");
        rom[at + 0x15] = 0x20 | mapping.mode_nibble();
        rom[at + 0x17] = 0x08;
        rom[at + 0x3c..at + 0x3e].copy_from_slice(&0x8000u16.to_le_bytes());
        rom[at + 0x2a..at + 0x2c].copy_from_slice(&0x8010u16.to_le_bytes());
        let reset = mapping.rom_offset(0x8000, size).expect("reset in ROM");
        rom[reset] = 0x78;
        if fix_checksum {
            rom[at + 0x1c..at + 0x20].copy_from_slice(&[0xff, 0xff, 0x00, 0x00]);
            let sum = checksum(&rom);
            rom[at + 0x1c..at + 0x1e].copy_from_slice(&(!sum).to_le_bytes());
            rom[at + 0x1e..at + 0x20].copy_from_slice(&sum.to_le_bytes());
        }
        rom
    }

    #[test]
    fn detects_each_mapping_from_its_header() {
        for (size, mapping) in [
            (0x2_0000, Mapping::LoRom),
            (0x2_0000, Mapping::HiRom),
            (0x50_0000, Mapping::ExHiRom),
        ] {
            let rom = rom_with_header(size, mapping, true);
            let cart = parse(&rom, None).expect("loads");
            assert_eq!(cart.mapping, mapping);
            assert!(cart.warnings.is_empty(), "{:?}", cart.warnings);
            assert_eq!(cart.header.title, "RPT TEST");
            assert_eq!(cart.image().entry, GuestAddr(0x8000));
            assert_eq!(cart.image().exports.get("nmi"), Some(&GuestAddr(0x8010)));
        }
    }

    #[test]
    fn strips_a_copier_header_and_warns_on_a_stale_checksum() {
        let mut file = vec![0u8; COPIER_HEADER_SIZE];
        file.extend(rom_with_header(0x8000, Mapping::LoRom, false));
        let cart = parse(&file, None).expect("loads");
        assert!(cart.had_copier_header);
        assert_eq!(cart.rom.len(), 0x8000);
        assert_eq!(cart.warnings.len(), 1);
        assert!(cart.warnings[0].contains("checksum"), "{}", cart.warnings[0]);
    }

    #[test]
    fn refuses_small_headerless_and_impossible_roms() {
        let err = parse(&[0u8; 0x4000], None).unwrap_err().to_string();
        assert!(err.contains("at least 32 KiB"), "{err}");
        let err = parse(&vec![0u8; 0x8000], None).unwrap_err().to_string();
        assert!(err.contains("no plausible internal header"), "{err}");
        let rom = rom_with_header(0x8000, Mapping::LoRom, true);
        let err = parse(&rom, Some(Mapping::HiRom)).unwrap_err().to_string();
        assert!(err.contains("names the hirom mapping"), "{err}");
        let err = parse(&vec![0u8; 0x90_0000], None).unwrap_err().to_string();
        assert!(err.contains("no mapping holds"), "{err}");
    }

    #[test]
    fn the_recipe_overrides_the_detected_mapping() {
        let mut rom = rom_with_header(0x2_0000, Mapping::LoRom, true);
        // The HiROM header place holds no header, but the recipe says so: its reset vector is 0.
        rom[0xffc0..0x1_0000].fill(0);
        let err = parse(&rom, Some(Mapping::HiRom)).unwrap_err().to_string();
        assert!(err.contains("reset vector $0000"), "{err}");
        let rom = rom_with_header(0x2_0000, Mapping::HiRom, true);
        assert_eq!(
            parse(&rom, Some(Mapping::HiRom)).expect("loads").mapping,
            Mapping::HiRom
        );
    }

    #[test]
    fn checksum_counts_a_non_power_of_two_tail_as_mirrored() {
        let mut rom = vec![1u8; 0x30_0000];
        rom[0x20_0000..].fill(2);
        // 2 MiB of 1s, then the 1 MiB of 2s counted twice: 2M + 4M = 6M.
        assert_eq!(checksum(&rom), (0x60_0000u64 & 0xffff) as u16);
        assert_eq!(checksum(&[3u8; 0x8000]), (0x1_8000u64 & 0xffff) as u16);
    }

    #[test]
    fn rom_offsets_follow_each_mapping() {
        assert_eq!(Mapping::LoRom.rom_offset(0x01_8000, 0x2_0000), Some(0x8000));
        assert_eq!(Mapping::LoRom.rom_offset(0x81_8123, 0x2_0000), Some(0x8123));
        assert_eq!(Mapping::LoRom.rom_offset(0x00_7fff, 0x2_0000), None);
        assert_eq!(Mapping::HiRom.rom_offset(0xc1_0123, 0x2_0000), Some(0x1_0123));
        assert_eq!(Mapping::HiRom.rom_offset(0x81_8000, 0x2_0000), Some(0x1_8000));
        assert_eq!(Mapping::ExHiRom.rom_offset(0x40_0000, 0x50_0000), Some(0x40_0000));
        assert_eq!(Mapping::ExHiRom.rom_offset(0x00_ffc0, 0x50_0000), Some(0x40_ffc0));
    }
}
