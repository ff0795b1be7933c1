//! ELF to DOL: turns a big-endian 32-bit PowerPC executable linked at GameCube addresses into a DOL.
//!
//! Allocated sections become DOL sections: executable PROGBITS sections text, other PROGBITS
//! sections data, and NOBITS sections the one bss range (from the lowest to the highest). Sections
//! of one kind that follow each other with less than 64 bytes between them are merged into one
//! DOL section (the gap is zero-filled), so a usual link (.init .text .fini, .rodata .data .sdata
//! ...) fits the 7 text and 11 data slots. Empty sections are skipped.

use object::BigEndian;
use object::elf::{EM_PPC, FileHeader32, SHF_ALLOC, SHF_EXECINSTR, SHT_NOBITS, SHT_PROGBITS};
use object::read::elf::{FileHeader, SectionHeader};
use rpt_api::GuestError;

use crate::loader_dol;

/// Gaps smaller than this between two sections of one kind are filled instead of starting a new DOL section.
const MERGE_GAP: u64 = 64;

fn bad(what: String) -> GuestError {
    GuestError::BadImage(format!("ELF: {what}"))
}

/// Converts an ELF executable's bytes into a DOL's bytes.
pub fn convert(elf: &[u8]) -> Result<Vec<u8>, GuestError> {
    let header =
        FileHeader32::<BigEndian>::parse(elf).map_err(|e| bad(format!("not a big-endian 32-bit ELF file: {e}")))?;
    let endian = header.endian().map_err(|e| bad(e.to_string()))?;
    if header.e_machine(endian) != EM_PPC {
        return Err(bad(format!(
            "the machine is {}, not PowerPC ({EM_PPC})",
            header.e_machine(endian)
        )));
    }
    let sections = header
        .sections(endian, elf)
        .map_err(|e| bad(format!("bad section table: {e}")))?;
    let mut text: Vec<(u64, Vec<u8>)> = Vec::new();
    let mut data: Vec<(u64, Vec<u8>)> = Vec::new();
    let mut bss: Option<(u64, u64)> = None;
    let mut pieces = Vec::new();
    for section in sections.iter() {
        let flags = section.sh_flags(endian).0;
        let size = u64::from(section.sh_size(endian));
        if flags & SHF_ALLOC.0 == 0 || size == 0 {
            continue;
        }
        let addr = u64::from(section.sh_addr(endian));
        match section.sh_type(endian) {
            SHT_NOBITS => {
                let (lo, hi) = bss.unwrap_or((addr, addr + size));
                bss = Some((lo.min(addr), hi.max(addr + size)));
            }
            SHT_PROGBITS => {
                let bytes = section
                    .data(endian, elf)
                    .map_err(|e| bad(format!("section at {addr:#x}: {e}")))?;
                pieces.push((addr, flags & SHF_EXECINSTR.0 != 0, bytes.to_vec()));
            }
            _ => {}
        }
    }
    pieces.sort_by_key(|(addr, _, _)| *addr);
    for (addr, exec, bytes) in pieces {
        let list = if exec { &mut text } else { &mut data };
        match list.last_mut() {
            Some((start, merged))
                if addr >= *start + merged.len() as u64 && addr - (*start + merged.len() as u64) < MERGE_GAP =>
            {
                merged.resize((addr - *start) as usize, 0);
                merged.extend_from_slice(&bytes);
            }
            _ => list.push((addr, bytes)),
        }
    }
    let to32 = |v: u64, what: &str| u32::try_from(v).map_err(|_| bad(format!("{what} {v:#x} does not fit 32 bits")));
    let text = text
        .into_iter()
        .map(|(a, b)| Ok((to32(a, "address")?, b)))
        .collect::<Result<Vec<_>, GuestError>>()?;
    let data = data
        .into_iter()
        .map(|(a, b)| Ok((to32(a, "address")?, b)))
        .collect::<Result<Vec<_>, GuestError>>()?;
    let (bss_lo, bss_hi) = bss.unwrap_or((0, 0));
    loader_dol::write(
        &text,
        &data,
        (to32(bss_lo, "bss address")?, to32(bss_hi - bss_lo, "bss size")?),
        header.e_entry(endian),
    )
}
