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

/// Where the header holds what the malformed DOLs change: the first text section's file offset,
/// address and size, the first data section's address, the bss address and the entry point.
const TEXT0_OFFSET: usize = 0x00;
const TEXT0_ADDR: usize = 0x48;
const DATA0_ADDR: usize = 0x64;
const TEXT0_SIZE: usize = 0x90;
const BSS_ADDR: usize = 0xd8;
const ENTRY: usize = 0xe0;

/// The loader's error for the small DOL with the words of `patches` written into its header.
fn error_with(patches: &[(usize, u32)]) -> String {
    let mut dol = small_dol();
    for &(at, v) in patches {
        put(&mut dol, at, v);
    }
    error_of(&dol)
}

/// Asserts that `error` mentions each of `words`.
fn assert_mentions(error: &str, words: &[&str]) {
    let missing: Vec<&&str> = words.iter().filter(|w| !error.contains(**w)).collect();
    assert!(missing.is_empty(), "`{error}` does not mention {missing:?}");
}

#[test]
fn truncated_files_are_refused() {
    assert_mentions(&error_of(&[0; 0x40]), &["truncated", "64 bytes"]);
    let dol = small_dol();
    assert_mentions(&error_of(&dol[..dol.len() - 40]), &["truncated", "data0"]);
}

#[test]
fn overlapping_sections_are_refused() {
    // data0 moved onto text0.
    assert_mentions(
        &error_with(&[(DATA0_ADDR, 0x8000_3100)]),
        &["text0", "data0", "overlap"],
    );
    // data0 moved onto text0's uncached mirror: the same memory.
    assert_mentions(
        &error_with(&[(DATA0_ADDR, 0xc000_3100)]),
        &["text0", "data0", "0xc0003100", "overlap"],
    );
}

#[test]
fn sections_outside_the_address_map_are_refused() {
    assert_mentions(
        &error_with(&[(TEXT0_ADDR, 0x0040_0000), (ENTRY, 0x0040_0000)]),
        &["text0", "0x00400000", "address map"],
    );
    // Runs past the end of MEM1.
    assert_mentions(&error_with(&[(DATA0_ADDR, 0x817f_fffc)]), &["data0", "address map"]);
    assert_mentions(&error_with(&[(BSS_ADDR, 0x7fff_ff00)]), &["bss", "address map"]);
}

#[test]
fn other_malformations_are_refused() {
    assert_mentions(&error_with(&[(ENTRY, 0x8000_3200)]), &["entry point 0x80003200"]);
    assert_mentions(&error_with(&[(TEXT0_OFFSET, 0x20)]), &["text0", "inside the"]);
    let mut no_text = vec![0u8; HEADER_SIZE];
    put(&mut no_text, ENTRY, 0x8000_3100);
    assert_mentions(&error_of(&no_text), &["no text section"]);
    assert_mentions(&error_with(&[(TEXT0_SIZE, 6)]), &["word-aligned"]);
}

#[test]
fn the_converter_refuses_what_is_not_a_powerpc_elf() {
    let e = rpt_guest_ppc_dol::elf2dol::convert(b"MZ not an ELF file").expect_err("refused");
    assert!(e.to_string().contains("ELF"), "{e}");
}

/// The committed static-glibc guest (tests/guests/ppc-glibc): converting its ELF gives its DOL.
fn glibc_guest(name: &str) -> Vec<u8> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/guests/ppc-glibc")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn a_static_glibc_program_keeps_its_headers_arrays_and_thread_data() {
    let elf = glibc_guest("hello.elf");
    let dol = rpt_guest_ppc_dol::elf2dol::convert(&elf).expect("converts");
    assert_eq!(
        dol,
        glibc_guest("hello.dol"),
        "the committed DOL is the conversion of the ELF"
    );
    let header = loader_dol::parse_header(&dol).expect("a DOL");
    let image = loader_dol::load(&dol).expect("loads");
    let bytes = |addr: u64, len: usize| image.bytes_at(GuestAddr(addr), len).map(<[u8]>::to_vec);
    // The ELF header and its program headers are at 0x80000000, where the first PT_LOAD maps
    // them: 52 bytes of header, then e_phnum (6) headers of 32 bytes from e_phoff (52).
    assert_eq!(bytes(0x8000_0000, 0x34 + 6 * 32), Some(elf[..0x34 + 6 * 32].to_vec()));
    // .init_array (an INIT_ARRAY section at 0x800ace48, 4 bytes) is there with its contents.
    let init_array = 0x000a_ce48;
    assert_eq!(bytes(0x800a_ce48, 4), Some(elf[init_array..init_array + 4].to_vec()));
    // .tbss (0x800ace48, overlapping .init_array) is not bss: the bss range starts at .sbss.
    assert_eq!(
        (header.bss_addr, header.bss_size),
        (0x800b_11f8, 0x800b_3de4 - 0x800b_11f8)
    );
}

#[test]
fn programs_without_thread_local_storage_convert_without_their_headers() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/guests/ppc/integer.elf");
    let elf = std::fs::read(path).expect("the committed sample ELF");
    let dol = rpt_guest_ppc_dol::elf2dol::convert(&elf).expect("converts");
    let image = loader_dol::load(&dol).expect("loads");
    assert!(
        image.bytes_at(GuestAddr(0x8000_0000), 4).is_none(),
        "no headers at 0x80000000"
    );
}
