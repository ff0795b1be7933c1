//! ELF to DOL: turns a big-endian 32-bit PowerPC executable linked at GameCube addresses into a DOL.
//!
//! Allocated sections become DOL sections: executable sections with contents text, other sections
//! with contents data (PROGBITS, and the INIT_ARRAY, FINI_ARRAY, PREINIT_ARRAY and NOTE sections a
//! C library's start-up reads), and NOBITS sections the one bss range (from the lowest to the
//! highest). Sections of one kind that follow each other with less than 64 bytes between them are
//! merged into one DOL section (the gap is zero-filled), so a usual link (.init .text .fini,
//! .rodata .data .sdata ...) fits the 7 text and 11 data slots. Empty sections are skipped.
//!
//! Decisions, for static glibc programs (tests/guests/ppc-glibc):
//! - A thread-local NOBITS section (`.tbss`) occupies no memory of the image: it is the template
//!   of each thread's zeroed TLS, and its address overlaps the sections after it. It is not bss.
//! - When the program has thread-local storage (a PT_TLS program header) and a loadable segment
//!   maps the file's start (the ELF header and program headers), those bytes become a data section
//!   at the segment's address, as the kernel maps them. glibc's static start-up finds its program
//!   headers there (`__ehdr_start`, or the auxiliary vector's AT_PHDR that the linux-syscalls
//!   platform derives from them) to set up TLS from PT_TLS; a DOL has no program headers of its
//!   own, so without these bytes the start-up would read zeros. Programs without TLS (the
//!   freestanding test guests) need nothing from their headers and convert as before.

use object::BigEndian;
use object::elf::{
    EM_PPC, FileHeader32, PT_LOAD, PT_TLS, SHF_ALLOC, SHF_EXECINSTR, SHF_TLS, SHT_FINI_ARRAY, SHT_INIT_ARRAY,
    SHT_NOBITS, SHT_NOTE, SHT_PREINIT_ARRAY, SHT_PROGBITS,
};
use object::read::elf::{FileHeader, ProgramHeader, SectionHeader};
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
            SHT_NOBITS if flags & SHF_TLS.0 != 0 => {}
            SHT_NOBITS => {
                let (lo, hi) = bss.unwrap_or((addr, addr + size));
                bss = Some((lo.min(addr), hi.max(addr + size)));
            }
            SHT_PROGBITS | SHT_INIT_ARRAY | SHT_FINI_ARRAY | SHT_PREINIT_ARRAY | SHT_NOTE => {
                let bytes = section
                    .data(endian, elf)
                    .map_err(|e| bad(format!("section at {addr:#x}: {e}")))?;
                pieces.push((addr, flags & SHF_EXECINSTR.0 != 0, bytes.to_vec()));
            }
            _ => {}
        }
    }
    if let Some(headers) = mapped_headers(header, endian, elf)? {
        pieces.push(headers);
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

/// The ELF header and program headers as a data piece at the address the loadable segment that
/// maps the file's start gives them, when the program has thread-local storage (whose only
/// description is its PT_TLS program header); None otherwise.
fn mapped_headers(
    header: &FileHeader32<BigEndian>,
    endian: BigEndian,
    elf: &[u8],
) -> Result<Option<(u64, bool, Vec<u8>)>, GuestError> {
    let phdrs = header
        .program_headers(endian, elf)
        .map_err(|e| bad(format!("bad program headers: {e}")))?;
    let end = u64::from(header.e_phoff(endian)) + phdrs.len() as u64 * u64::from(header.e_phentsize(endian));
    if !phdrs.iter().any(|p| p.p_type(endian) == PT_TLS) {
        return Ok(None);
    }
    let covering = phdrs
        .iter()
        .find(|p| p.p_type(endian) == PT_LOAD && p.p_offset(endian) == 0 && u64::from(p.p_filesz(endian)) >= end);
    let Some(segment) = covering else {
        return Ok(None);
    };
    let len = usize::try_from(end).map_err(|_| bad("program headers past the address space".into()))?;
    let bytes = elf
        .get(..len)
        .ok_or_else(|| bad("program headers past the end of the file".into()))?;
    Ok(Some((u64::from(segment.p_vaddr(endian)), false, bytes.to_vec())))
}
