//! Discovery on the real sample DOLs: the functions the programs call are found, the callbacks
//! reached only through a table of pointers in data too, the switch's jump table is recognised
//! (no `bctr` is left as an indirect jump), and nothing reachable fails to lift. (Functions that
//! are never called, and those only ever tail-jumped to, are not separate functions: the first
//! are dead, the second are lifted as part of their callers.)

use std::collections::BTreeMap;
use std::path::PathBuf;

use object::BigEndian;
use object::read::elf::{ElfFile32, FileHeader, Sym};
use rpt_api::{GuestPlugin, Seeds, Severity};
use rpt_guest_ppc_dol::PpcDol;
use rpt_ir::{CallTarget, GuestAddr, Terminator};

fn sample(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/guests/ppc")
        .join(name)
}

/// The ELF's function symbols by name.
fn function_symbols(elf: &[u8]) -> BTreeMap<String, GuestAddr> {
    let file = ElfFile32::<BigEndian>::parse(elf).expect("an ELF");
    let endian = file.endian();
    let header = file.elf_header();
    let sections = header.sections(endian, elf).expect("sections");
    let symbols = sections.symbols(endian, elf, object::elf::SHT_SYMTAB).expect("symbols");
    symbols
        .iter()
        .filter(|s| s.st_type() == object::elf::STT_FUNC && s.st_size(endian) > 0)
        .filter_map(|s| {
            let name = symbols.symbol_name(endian, s).ok()?;
            Some((
                String::from_utf8_lossy(name).into_owned(),
                GuestAddr(u64::from(s.st_value(endian))),
            ))
        })
        .collect()
}

#[test]
fn every_function_of_the_samples_is_found_and_lifts() {
    let plugin = PpcDol;
    let wanted: [(&str, &[&str]); 3] = [
        (
            "integer",
            &[
                "_start", "main", "classify", "fib", "op_add", "op_sub", "op_mul", "op_xor", "op_rot", "__divdi3",
                "rt_sbrk",
            ],
        ),
        ("float", &["_start", "main", "rt_put_double_bits", "rt_put_float_bits"]),
        (
            "paired",
            &[
                "_start",
                "main",
                "sum_u8",
                "scale_pairs",
                "dot_pairs",
                "select_merge",
                "estimates",
            ],
        ),
    ];
    for (name, functions) in wanted {
        let dol = std::fs::read(sample(&format!("{name}.dol"))).expect("the committed sample DOL");
        let elf = std::fs::read(sample(&format!("{name}.elf"))).expect("the committed sample ELF");
        let image = rpt_guest_ppc_dol::loader_dol::load(&dol).expect("loads");
        let discovery = plugin.discover(&image, &Seeds::default());
        let errors: Vec<_> = discovery
            .diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Error)
            .collect();
        assert!(errors.is_empty(), "{name}: {errors:?}");
        let symbols = function_symbols(&elf);
        for f in functions {
            let addr = symbols.get(*f).unwrap_or_else(|| panic!("{name}: no symbol {f}"));
            assert!(
                discovery.functions.contains(addr),
                "{name}: {f} at {addr} was not discovered"
            );
        }
        let mut indirect_jumps = 0;
        for &f in &discovery.functions {
            let lifted = plugin.lift(&image, f, &discovery.functions, &Default::default());
            assert!(
                lifted.diagnostics.iter().all(|d| d.severity != Severity::Error),
                "{name}: {f}: {:?}",
                lifted.diagnostics
            );
            for block in &lifted.function.blocks {
                if matches!(
                    block.term,
                    Terminator::TailCall {
                        target: CallTarget::Indirect(_)
                    }
                ) {
                    indirect_jumps += 1;
                }
            }
        }
        // The only indirect tail jumps left are the jump tables' defaults (one per table).
        let tables = if name == "integer" { 1 } else { 0 };
        assert!(indirect_jumps <= tables, "{name}: {indirect_jumps} indirect jumps");
    }
}

/// The static-glibc guest (tests/guests/ppc-glibc): discovery follows glibc's start-up and
/// libraries, its position-independent jump tables become switches, and what cannot be lifted
/// (AltiVec and transactional-memory variants, glibc's `.long 0` in abort, calls of undefined
/// weak functions) is reported, never a function of its own.
#[test]
fn the_static_glibc_guest_is_discovered_with_its_jump_tables() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/guests/ppc-glibc");
    let dol = std::fs::read(dir.join("hello.dol")).expect("the committed glibc DOL");
    let elf = std::fs::read(dir.join("hello.elf")).expect("the committed glibc ELF");
    let image = rpt_guest_ppc_dol::loader_dol::load(&dol).expect("loads");
    let plugin = PpcDol;
    let discovery = plugin.discover(&image, &Seeds::default());
    let symbols = function_symbols(&elf);
    let at = |f: &str| *symbols.get(f).unwrap_or_else(|| panic!("no symbol {f}"));
    for f in [
        "_start",
        "main",
        "printf",
        "malloc",
        "qsort",
        "_wordcopy_fwd_aligned",
        "__sysconf",
    ] {
        assert!(
            discovery.functions.contains(&at(f)),
            "{f} at {} was not discovered",
            at(f)
        );
    }
    assert!(
        !discovery.functions.contains(&GuestAddr(0x8000_0000)),
        "a call of an undefined weak function made 0x80000000 a function"
    );
    let (mut switches, mut unliftable) = (0, 0);
    let mut switches_in = BTreeMap::new();
    for &f in &discovery.functions {
        let lifted = plugin.lift(&image, f, &discovery.functions, &Default::default());
        unliftable += lifted
            .diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Error)
            .count();
        let n = lifted
            .function
            .blocks
            .iter()
            .filter(|b| matches!(b.term, Terminator::Switch { .. }))
            .count();
        switches += n;
        switches_in.insert(f, n);
    }
    eprintln!(
        "{} functions, {switches} jump tables, {unliftable} places that cannot be lifted",
        discovery.functions.len()
    );
    // The PIC tables: _wordcopy_fwd_aligned's is bounded by its rlwinm mask (len & 7) and based on
    // the .got2 word its PIC register reaches from the bcl in the prologue; __sysconf's four are
    // bounded by cmplwi, and three of them lie far from the prologue that sets r30.
    assert_eq!(switches_in[&at("_wordcopy_fwd_aligned")], 1);
    assert_eq!(switches_in[&at("__sysconf")], 4);
    // printf_positional's PIC register is set 40 instructions after its `bcl`, past 18 saves.
    assert!(switches_in[&at("printf_positional")] >= 1);
    // Numbers for this build of glibc 2.36 (38 when this test was written). The `bctr`s left are
    // glibc's computed gotos in vfprintf and friends, whose label tables' addresses come from the
    // stack frame and whose index has no bound but the table's own length.
    assert!(switches >= 38, "only {switches} jump tables recognised");
    assert!(
        unliftable > 0 && unliftable < 40,
        "{unliftable} places cannot be lifted"
    );
}

/// bzip2 as a static-glibc DOL (tests/real/bzip2): `main` is only a weak candidate (glibc's
/// `_start` hands it over in a data word), and functions it reaches call undefined weak functions
/// after testing their addresses: `bl 0x80000000`, a call of address 0 wrapped by the 26-bit
/// displacement. Those calls do not make `main` look like data, so discovery keeps it with no
/// recipe hint, and each such call is reported as what it is.
#[test]
fn calls_of_undefined_weak_functions_do_not_drop_a_candidate() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/real/bzip2");
    let dol = std::fs::read(dir.join("bzip2.dol")).expect("the committed bzip2 DOL");
    let elf = std::fs::read(dir.join("bzip2.elf")).expect("the committed bzip2 ELF");
    let image = rpt_guest_ppc_dol::loader_dol::load(&dol).expect("loads");
    let discovery = PpcDol.discover(&image, &Seeds::default());
    let main = function_symbols(&elf)["main"];
    assert!(discovery.functions.contains(&main), "main at {main} was not discovered");
    let weak_calls = discovery
        .diagnostics
        .iter()
        .filter(|d| d.message.contains("call to 0x80000000") && d.message.contains("undefined weak function"))
        .count();
    assert!(weak_calls >= 2, "{:#?}", discovery.diagnostics);
}

/// A pointer's halves built on both sides of a call or a branch: gcc puts `lis` in a register the
/// call preserves before the call and the `addi` after it (Lua's `luaopen_io` so takes
/// `&io_noclose`, which only its file handles' `__gc` ever calls). The walk carries the constants
/// along each edge, a call's return keeping only the non-volatile registers.
#[test]
fn pointers_built_across_calls_and_branches_are_candidates() {
    let words = [
        0x3f80_8000, // 0x00 lis r28,0x8000 (non-volatile)
        0x3d20_8000, // 0x04 lis r9,0x8000 (volatile: the call may change it)
        0x4800_0029, // 0x08 bl 0x30
        0x387c_3038, // 0x0c addi r3,r28,0x3038: 0x80003038, a function
        0x3889_3040, // 0x10 addi r4,r9,0x3040: not known to be 0x80003040
        0x3d40_8000, // 0x14 lis r10,0x8000
        0x2c03_0000, // 0x18 cmpwi r3,0
        0x4182_0008, // 0x1c beq 0x24
        0x6000_0000, // 0x20 nop
        0x38aa_3048, // 0x24 addi r5,r10,0x3048: 0x80003048, a function
        0x4e80_0020, // 0x28 blr
        0x6000_0000, // 0x2c
        0x4e80_0020, // 0x30 the callee: blr
        0x6000_0000, // 0x34
        0x3860_0001, // 0x38 li r3,1
        0x4e80_0020, // 0x3c blr
        0x3860_0002, // 0x40 li r3,2
        0x4e80_0020, // 0x44 blr
        0x3860_0003, // 0x48 li r3,3
        0x4e80_0020, // 0x4c blr
    ];
    let bytes: Vec<u8> = words.iter().flat_map(|w: &u32| w.to_be_bytes()).collect();
    let image = rpt_testkit::guest::code_image("case", 0x8000_3000, &bytes);
    let discovery = PpcDol.discover(&image, &Seeds::default());
    let found = |a: u64| discovery.functions.contains(&GuestAddr(a));
    assert!(found(0x8000_3038), "the pointer built across the call: {discovery:?}");
    assert!(found(0x8000_3048), "the pointer built across the branch: {discovery:?}");
    assert!(!found(0x8000_3040), "r9 does not survive a call: {discovery:?}");
}
