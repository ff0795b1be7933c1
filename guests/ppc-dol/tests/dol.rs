//! The DOL loader: real DOLs (converted from the sample ELFs) load into the expected segments, and
//! malformed ones are refused with messages that say what is wrong and where.

use rpt_guest_ppc_dol::loader_dol::{self, HEADER_SIZE};
use rpt_ir::GuestAddr;

/// A DOL with one text section at 0x80003100 (a `blr`) and one data section.
fn small_dol() -> Vec<u8> {
    loader_dol::write(
        &[(0x8000_3100, vec![0x4e, 0x80, 0x00, 0x20])],
        &[(0x8000_3200, vec![1, 2, 3, 4, 5, 6, 7, 8])],
        (0x8000_3208, 0x100),
        0x8000_3100,
    )
    .expect("a valid DOL")
}

fn put(dol: &mut [u8], at: usize, v: u32) {
    dol[at..at + 4].copy_from_slice(&v.to_be_bytes());
}

fn error_of(dol: &[u8]) -> String {
    match rpt_guest_ppc_dol::loader_dol::load(dol) {
        Ok(_) => panic!("the malformed DOL was accepted"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn loads_sections_and_bss() {
    let image = rpt_guest_ppc_dol::loader_dol::load(&small_dol()).expect("loads");
    assert_eq!(image.entry, GuestAddr(0x8000_3100));
    let names: Vec<(&str, u64, u64)> = image
        .segments
        .iter()
        .map(|s| (s.name.as_str(), s.addr.0, s.mem_size))
        .collect();
    assert_eq!(
        names,
        [
            ("text0", 0x8000_3100, 4),
            ("data0", 0x8000_3200, 8),
            ("bss", 0x8000_3208, 0x100)
        ]
    );
    assert!(image.is_code(GuestAddr(0x8000_3100)));
    assert!(!image.is_code(GuestAddr(0x8000_3200)));
    assert_eq!(image.bytes_at(GuestAddr(0x8000_3204), 4), Some(&[5u8, 6, 7, 8][..]));
}

#[test]
fn bss_around_an_overlapping_data_section_is_split() {
    let dol = loader_dol::write(
        &[(0x8000_3100, vec![0x4e, 0x80, 0x00, 0x20])],
        &[(0x8000_4000, vec![9; 16])],
        (0x8000_3f00, 0x200),
        0x8000_3100,
    )
    .expect("valid");
    let image = rpt_guest_ppc_dol::loader_dol::load(&dol).expect("loads");
    let bss: Vec<(u64, u64)> = image
        .segments
        .iter()
        .filter(|s| s.name.starts_with("bss"))
        .map(|s| (s.addr.0, s.mem_size))
        .collect();
    assert_eq!(bss, [(0x8000_3f00, 0x100), (0x8000_4010, 0xf0)]);
}

#[test]
fn truncated_files_are_refused() {
    let e = error_of(&[0; 0x40]);
    assert!(e.contains("truncated") && e.contains("64 bytes"), "{e}");
    let dol = small_dol();
    let e = error_of(&dol[..dol.len() - 40]);
    assert!(e.contains("truncated") && e.contains("data0"), "{e}");
}

#[test]
fn overlapping_sections_are_refused() {
    let mut dol = small_dol();
    // data0 moved onto text0.
    put(&mut dol, 0x48 + 4 * 7, 0x8000_3100);
    let e = error_of(&dol);
    assert!(
        e.contains("text0") && e.contains("data0") && e.contains("overlap"),
        "{e}"
    );
    // data0 moved onto text0's uncached mirror: the same memory.
    let mut dol = small_dol();
    put(&mut dol, 0x48 + 4 * 7, 0xc000_3100);
    let e = error_of(&dol);
    assert!(
        e.contains("text0") && e.contains("data0") && e.contains("0xc0003100") && e.contains("overlap"),
        "{e}"
    );
}

#[test]
fn sections_outside_the_address_map_are_refused() {
    let mut dol = small_dol();
    put(&mut dol, 0x48, 0x0040_0000);
    put(&mut dol, 0xe0, 0x0040_0000);
    let e = error_of(&dol);
    assert!(
        e.contains("text0") && e.contains("0x00400000") && e.contains("address map"),
        "{e}"
    );
    let mut dol = small_dol();
    // Runs past the end of MEM1.
    put(&mut dol, 0x48 + 4 * 7, 0x817f_fffc);
    let e = error_of(&dol);
    assert!(e.contains("data0") && e.contains("address map"), "{e}");
    let mut dol = small_dol();
    put(&mut dol, 0xd8, 0x7fff_ff00);
    let e = error_of(&dol);
    assert!(e.contains("bss") && e.contains("address map"), "{e}");
}

#[test]
fn other_malformations_are_refused() {
    let mut dol = small_dol();
    put(&mut dol, 0xe0, 0x8000_3200);
    let e = error_of(&dol);
    assert!(e.contains("entry point 0x80003200"), "{e}");
    let mut dol = small_dol();
    put(&mut dol, 0, 0x20);
    let e = error_of(&dol);
    assert!(e.contains("text0") && e.contains("inside the"), "{e}");
    let mut dol = vec![0u8; HEADER_SIZE];
    put(&mut dol, 0xe0, 0x8000_3100);
    let e = error_of(&dol);
    assert!(e.contains("no text section"), "{e}");
    let mut dol = small_dol();
    put(&mut dol, 0x90, 6);
    let e = error_of(&dol);
    assert!(e.contains("word-aligned"), "{e}");
}

#[test]
fn the_converter_refuses_what_is_not_a_powerpc_elf() {
    let e = rpt_guest_ppc_dol::elf2dol::convert(b"MZ not an ELF file").expect_err("refused");
    assert!(e.to_string().contains("ELF"), "{e}");
}
