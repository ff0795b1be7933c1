//! The DOL loader: GameCube/Wii executables (7 text and 11 data sections, a bss range, an entry).
//!
//! Layout of the 0x100-byte big-endian header: file offsets of text0..6 at 0x00 and data0..10 at
//! 0x1c, load addresses at 0x48 and 0x64, sizes at 0x90 and 0xac, the bss address and size at 0xd8
//! and 0xdc, the entry point at 0xe0. A section of size 0 is unused.
//!
//! Decisions:
//! - Sections must lie in the GameCube/Wii address map: MEM1 (24 MiB) at 0x80000000 or its
//!   uncached mirror at 0xc0000000, or the Wii's MEM2 (64 MiB) at 0x90000000. Anything else is
//!   refused, as are text and data sections that overlap each other (also through the mirror: the
//!   uncached view is the same memory, `lift/mem.rs`), sections whose bytes run past
//!   the end of the file or start inside the header, and an entry point outside every text section.
//! - The bss range may overlap data sections (real linkers often cover .sdata and .sbss with one
//!   range); the loader zeroes only the parts no text or data section covers, as the apploader's
//!   "clear bss, then copy the sections" order would leave it.

use rpt_api::{GuestError, GuestImage, Segment, SegmentFlags};
use rpt_ir::GuestAddr;

/// Size of the DOL header.
pub const HEADER_SIZE: usize = 0x100;
/// Number of text section slots.
pub const TEXT_SLOTS: usize = 7;
/// Number of data section slots.
pub const DATA_SLOTS: usize = 11;

/// The address ranges a DOL section may occupy: (start, end exclusive, name).
pub const ADDRESS_MAP: [(u64, u64, &str); 3] = [
    (0x8000_0000, 0x8180_0000, "MEM1"),
    (0x9000_0000, 0x9400_0000, "MEM2 (Wii)"),
    (0xc000_0000, 0xc180_0000, "MEM1 (uncached mirror)"),
];

/// One section as the header describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DolSection {
    /// `text0`..`text6`, `data0`..`data10`.
    pub name: String,
    /// File offset of its bytes.
    pub offset: u32,
    /// Load address.
    pub addr: u32,
    /// Size in bytes.
    pub size: u32,
    /// Whether it is a text (code) section.
    pub text: bool,
}

/// The parsed header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DolHeader {
    /// Used sections (size > 0), text first, in slot order.
    pub sections: Vec<DolSection>,
    /// Start of the bss range.
    pub bss_addr: u32,
    /// Size of the bss range.
    pub bss_size: u32,
    /// Entry point.
    pub entry: u32,
}

fn bad(what: String) -> GuestError {
    GuestError::BadImage(format!("DOL: {what}"))
}

fn word(bytes: &[u8], at: usize) -> u32 {
    bytes
        .get(at..at + 4)
        .and_then(|b| <[u8; 4]>::try_from(b).ok())
        .map_or(0, u32::from_be_bytes)
}

/// The cached address of `addr`: the uncached mirror at 0xc0000000 is MEM1 at 0x80000000.
fn cached_view(addr: u64) -> u64 {
    if addr >= 0xc000_0000 { addr - 0x4000_0000 } else { addr }
}

fn region_of(start: u64, end: u64) -> Option<&'static str> {
    ADDRESS_MAP
        .iter()
        .find(|(lo, hi, _)| start >= *lo && end <= *hi)
        .map(|(_, _, name)| *name)
}

/// Parses and checks the header against the file's length.
pub fn parse_header(image: &[u8]) -> Result<DolHeader, GuestError> {
    if image.len() < HEADER_SIZE {
        return Err(bad(format!(
            "the file is truncated: {} bytes, but the header alone is {HEADER_SIZE}",
            image.len()
        )));
    }
    let mut sections = Vec::new();
    for (text, slots, base) in [(true, TEXT_SLOTS, 0usize), (false, DATA_SLOTS, TEXT_SLOTS)] {
        for i in 0..slots {
            let slot = base + i;
            let size = word(image, 0x90 + 4 * slot);
            if size == 0 {
                continue;
            }
            sections.push(DolSection {
                name: format!("{}{i}", if text { "text" } else { "data" }),
                offset: word(image, 4 * slot),
                addr: word(image, 0x48 + 4 * slot),
                size,
                text,
            });
        }
    }
    let header = DolHeader {
        sections,
        bss_addr: word(image, 0xd8),
        bss_size: word(image, 0xdc),
        entry: word(image, 0xe0),
    };
    check(&header, image.len())?;
    Ok(header)
}

fn check(h: &DolHeader, file_len: usize) -> Result<(), GuestError> {
    if !h.sections.iter().any(|s| s.text) {
        return Err(bad("there is no text section (every text size is 0)".to_string()));
    }
    for s in &h.sections {
        let (offset, size) = (u64::from(s.offset), u64::from(s.size));
        if offset < HEADER_SIZE as u64 {
            return Err(bad(format!(
                "{} starts at file offset {:#x}, inside the {HEADER_SIZE:#x}-byte header",
                s.name, s.offset
            )));
        }
        if offset + size > file_len as u64 {
            return Err(bad(format!(
                "the file is truncated: {} needs bytes {:#x}..{:#x} but the file has {file_len:#x}",
                s.name,
                offset,
                offset + size
            )));
        }
        let (start, end) = (u64::from(s.addr), u64::from(s.addr) + size);
        if region_of(start, end).is_none() {
            return Err(bad(format!(
                "{} at {:#010x}..{end:#010x} lies outside the GameCube/Wii address map \
                 (MEM1 0x80000000..0x81800000, its mirror at 0xc0000000, MEM2 0x90000000..0x94000000)",
                s.name, s.addr
            )));
        }
        if s.text && (s.addr % 4 != 0 || s.size % 4 != 0) {
            return Err(bad(format!(
                "{} at {:#010x} (size {:#x}) is not word-aligned; code must be",
                s.name, s.addr, s.size
            )));
        }
    }
    for (i, a) in h.sections.iter().enumerate() {
        for b in &h.sections[i + 1..] {
            let (a0, a1) = (u64::from(a.addr), u64::from(a.addr) + u64::from(a.size));
            let (b0, b1) = (u64::from(b.addr), u64::from(b.addr) + u64::from(b.size));
            let (ca, cb) = (cached_view(a0), cached_view(b0));
            if ca < cb + (b1 - b0) && cb < ca + (a1 - a0) {
                return Err(bad(format!(
                    "sections {} ({a0:#010x}..{a1:#010x}) and {} ({b0:#010x}..{b1:#010x}) overlap",
                    a.name, b.name
                )));
            }
        }
    }
    if h.bss_size > 0 {
        let (start, end) = (u64::from(h.bss_addr), u64::from(h.bss_addr) + u64::from(h.bss_size));
        if region_of(start, end).is_none() {
            return Err(bad(format!(
                "the bss range {start:#010x}..{end:#010x} lies outside the GameCube/Wii address map"
            )));
        }
    }
    let entry = u64::from(h.entry);
    let in_text = h
        .sections
        .iter()
        .any(|s| s.text && entry >= u64::from(s.addr) && entry < u64::from(s.addr) + u64::from(s.size));
    if !in_text {
        return Err(bad(format!(
            "the entry point {:#010x} is not inside any text section",
            h.entry
        )));
    }
    Ok(())
}

/// Loads a DOL into segments: its sections, then the parts of the bss range they leave uncovered.
pub fn load(image: &[u8]) -> Result<GuestImage, GuestError> {
    let header = parse_header(image)?;
    let mut segments = Vec::new();
    for s in &header.sections {
        let start = s.offset as usize;
        let bytes = image
            .get(start..start + s.size as usize)
            .ok_or_else(|| bad(format!("{} lies outside the file", s.name)))?
            .to_vec();
        segments.push(Segment {
            name: s.name.clone(),
            addr: GuestAddr(u64::from(s.addr)),
            mem_size: u64::from(s.size),
            bytes,
            flags: SegmentFlags {
                read: true,
                write: !s.text,
                execute: s.text,
            },
        });
    }
    // The bss pieces between (and around) the sections it overlaps.
    let mut cursor = u64::from(header.bss_addr);
    let bss_end = cursor + u64::from(header.bss_size);
    let mut covered: Vec<(u64, u64)> = header
        .sections
        .iter()
        .map(|s| (u64::from(s.addr), u64::from(s.addr) + u64::from(s.size)))
        .collect();
    covered.sort_unstable();
    let mut piece = 0;
    let mut push_bss = |from: u64, to: u64, segments: &mut Vec<Segment>| {
        if to > from {
            segments.push(Segment {
                name: if piece == 0 {
                    "bss".to_string()
                } else {
                    format!("bss.{piece}")
                },
                addr: GuestAddr(from),
                bytes: Vec::new(),
                mem_size: to - from,
                flags: SegmentFlags {
                    read: true,
                    write: true,
                    execute: false,
                },
            });
            piece += 1;
        }
    };
    for (lo, hi) in covered {
        if hi <= cursor || lo >= bss_end {
            continue;
        }
        push_bss(cursor, lo.min(bss_end), &mut segments);
        cursor = cursor.max(hi);
    }
    push_bss(cursor, bss_end, &mut segments);
    segments.sort_by_key(|s| s.addr);
    Ok(GuestImage {
        segments,
        entry: GuestAddr(u64::from(header.entry)),
        exports: Default::default(),
        imports: Vec::new(),
    })
}

/// Builds a DOL file from sections (for the ELF converter and tests): each section's bytes are
/// placed in slot order after the header, padded to 32 bytes as the SDK's tools do.
pub fn write(
    text: &[(u32, Vec<u8>)],
    data: &[(u32, Vec<u8>)],
    bss: (u32, u32),
    entry: u32,
) -> Result<Vec<u8>, GuestError> {
    if text.len() > TEXT_SLOTS || data.len() > DATA_SLOTS {
        return Err(bad(format!(
            "{} text and {} data sections do not fit the {TEXT_SLOTS} text and {DATA_SLOTS} data slots",
            text.len(),
            data.len()
        )));
    }
    let mut out = vec![0u8; HEADER_SIZE];
    let put = |out: &mut Vec<u8>, at: usize, v: u32| out[at..at + 4].copy_from_slice(&v.to_be_bytes());
    let slots = text
        .iter()
        .enumerate()
        .chain(data.iter().enumerate().map(|(i, s)| (TEXT_SLOTS + i, s)));
    for (slot, (addr, bytes)) in slots {
        let offset = u32::try_from(out.len()).map_err(|_| bad("the DOL would exceed 4 GiB".to_string()))?;
        let size = u32::try_from(bytes.len()).map_err(|_| bad("a section exceeds 4 GiB".to_string()))?;
        put(&mut out, 4 * slot, offset);
        put(&mut out, 0x48 + 4 * slot, *addr);
        put(&mut out, 0x90 + 4 * slot, size);
        out.extend_from_slice(bytes);
        out.resize(out.len().next_multiple_of(32), 0);
    }
    put(&mut out, 0xd8, bss.0);
    put(&mut out, 0xdc, bss.1);
    put(&mut out, 0xe0, entry);
    // Check what we wrote with the same rules the loader applies.
    parse_header(&out)?;
    Ok(out)
}
