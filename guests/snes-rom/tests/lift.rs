//! The lifter's semantics, run in the IR interpreter: small 65816 programs in a LoROM, their
//! functions discovered and lifted as rpt does, run against a flat 24-bit bus, with expected
//! results worked out from the WDC W65C816S datasheet by hand.

use std::collections::{BTreeMap, BTreeSet};

use rpt_api::{GuestImage, GuestPlugin, Seeds};
use rpt_guest_snes_rom::decode::Widths;
use rpt_guest_snes_rom::loader_rom::{Mapping, checksum};
use rpt_guest_snes_rom::state::{self, A, C, CLOCK, D, DBR, EMU, M8, N, NEXT_EVENT, S, V, X, X8, Y, Z};
use rpt_guest_snes_rom::{BUS_READ, BUS_WRITE, POLL, SnesRom, WAIT};
use rpt_ir::interp::{Environment, InterpError, Interpreter, MachineState, Outcome, Val};
use rpt_ir::{AddrSpace, GuestAddr, Program, SlotId};

/// A 32 KiB LoROM with `code` at `$00:8000` (the reset handler) and `more` pieces placed at
/// their addresses in bank 0.
fn rom(code: &[u8], more: &[(u16, &[u8])]) -> Vec<u8> {
    let mut rom = vec![0u8; 0x8000];
    rom[..code.len()].copy_from_slice(code);
    for (addr, bytes) in more {
        let at = usize::from(*addr) - 0x8000;
        rom[at..at + bytes.len()].copy_from_slice(bytes);
    }
    let header = Mapping::LoRom.header_offset();
    rom[header..header + 21].copy_from_slice(b"RPT LIFT TEST        ");
    rom[header + 0x15] = 0x20;
    rom[header + 0x3c..header + 0x3e].copy_from_slice(&0x8000u16.to_le_bytes());
    let sum = checksum(&rom);
    rom[header + 0x1c..header + 0x1e].copy_from_slice(&(!sum).to_le_bytes());
    rom[header + 0x1e..header + 0x20].copy_from_slice(&sum.to_le_bytes());
    rom
}

/// The bus as a flat 16 MiB: enough for the CPU's semantics (the platform's map is tested with
/// the platform). Interrupt polls find nothing due.
struct FlatBus;

impl Environment for FlatBus {
    fn call_extern(&mut self, _: GuestAddr, _: &mut MachineState) -> Result<Option<Outcome>, InterpError> {
        Ok(None)
    }

    fn call_helper(
        &mut self,
        name: &str,
        args: &[Val],
        m: &mut MachineState,
    ) -> Result<Option<Option<Val>>, InterpError> {
        Ok(Some(match name {
            n if n == BUS_READ => {
                let addr = args[0].int() & 0xff_ffff;
                Some(Val::Int(u64::from(m.memory.read_u8(AddrSpace::RAM, addr))))
            }
            n if n == BUS_WRITE => {
                m.memory
                    .write_u8(AddrSpace::RAM, args[0].int() & 0xff_ffff, args[1].int() as u8);
                None
            }
            n if n == POLL || n == WAIT => None,
            _ => return Ok(None),
        }))
    }
}

/// The program rpt would build from the ROM: every discovered function lifted.
fn program(rom: &[u8]) -> (GuestImage, Program) {
    let guest = SnesRom;
    let options = BTreeMap::new();
    let image = guest.load(rom, "snes", &options).expect("the test ROM loads");
    let discovery = guest.discover(&image, &Seeds::default());
    let mut functions = BTreeMap::new();
    for &key in &discovery.functions {
        let lifted = guest.lift(&image, key, &discovery.functions, &options);
        functions.insert(key, lifted.function);
    }
    let program = Program {
        state: state::state_desc(),
        helpers: helpers_map(),
        externs: BTreeMap::new(),
        functions,
        address_taken: BTreeSet::new(),
        flag_transparent: BTreeSet::new(),
        pointer_tables: BTreeMap::new(),
    };
    if let Err(e) = rpt_ir::verify::verify_program(&program) {
        panic!("{e}");
    }
    (image, program)
}

fn helpers_map() -> BTreeMap<String, rpt_ir::HelperDecl> {
    rpt_guest_snes_rom::helpers()
        .into_iter()
        .map(|h| (h.name.clone(), h))
        .collect()
}

/// Runs the reset handler (emulation mode, S = $01FF, as after RESET) to its return or exit.
fn run(rom: &[u8]) -> (Outcome, MachineState) {
    let (_, program) = program(rom);
    let mut interp = Interpreter::new(&program);
    let desc = state::state_desc();
    for (slot, v) in [(EMU, 1), (M8, 1), (X8, 1), (S, 0x1ff), (NEXT_EVENT, u64::MAX)] {
        interp.machine.state.set(&desc, slot, Val::Int(v));
    }
    let outcome = interp.run(GuestAddr(0x8000), &mut FlatBus).expect("runs");
    (outcome, interp.machine)
}

fn get(m: &MachineState, slot: SlotId) -> u64 {
    m.state.get(&state::state_desc(), slot).int()
}

fn byte(m: &MachineState, addr: u64) -> u8 {
    m.memory.read_u8(AddrSpace::RAM, addr)
}

/// CLC; XCE; REP #$30: native mode with 16-bit registers.
const NATIVE16: [u8; 4] = [0x18, 0xfb, 0xc2, 0x30];

fn with_prefix(prefix: &[u8], body: &[u8]) -> Vec<u8> {
    let mut code = prefix.to_vec();
    code.extend_from_slice(body);
    code
}

#[test]
fn sixteen_bit_arithmetic_and_long_stores() {
    // LDA #$1234; CLC; ADC #$F000; STA $7E0010; LDX #$8000; STX $7E0012; RTS
    let code = with_prefix(
        &NATIVE16,
        &[
            0xa9, 0x34, 0x12, 0x18, 0x69, 0x00, 0xf0, 0x8f, 0x10, 0x00, 0x7e, 0xa2, 0x00, 0x80, 0x8e, 0x12, 0x00, 0x60,
        ],
    );
    let (outcome, m) = run(&rom(&code, &[]));
    assert_eq!(outcome, Outcome::Returned);
    assert_eq!(get(&m, A), 0x0234);
    assert_eq!(get(&m, C), 1, "carry out of bit 15");
    assert_eq!(get(&m, V), 0);
    assert_eq!((byte(&m, 0x7e0010), byte(&m, 0x7e0011)), (0x34, 0x02));
    // STX abs writes to the data bank (0): $00:0012.
    assert_eq!((byte(&m, 0x12), byte(&m, 0x13)), (0x00, 0x80));
    assert_eq!(get(&m, X), 0x8000);
    assert_eq!(get(&m, N), 1, "LDX #$8000 is negative at 16 bits");
    assert_eq!(get(&m, EMU), 0);
}

#[test]
fn eight_bit_operations_keep_the_accumulators_high_byte() {
    // REP #$20; LDA #$ABCD; SEP #$20; LDA #$7F; INC A; RTS  -> A = $AB80, V untouched, N set
    let code = with_prefix(
        &[0x18, 0xfb],
        &[0xc2, 0x20, 0xa9, 0xcd, 0xab, 0xe2, 0x20, 0xa9, 0x7f, 0x1a, 0x60],
    );
    let (_, m) = run(&rom(&code, &[]));
    assert_eq!(get(&m, A), 0xab80);
    assert_eq!(get(&m, N), 1);
    assert_eq!(get(&m, Z), 0);
}

#[test]
fn decimal_mode_adds_and_subtracts_bcd() {
    // SED; LDA #$99; CLC; ADC #$01; STA $10; PHP; PLA; STA $11 ;
    // LDA #$00; SEC; SBC #$01; STA $12; PHP; PLA; STA $13; CLD; RTS  (emulation mode, 8 bits)
    let code = [
        0xf8, 0xa9, 0x99, 0x18, 0x69, 0x01, 0x85, 0x10, 0x08, 0x68, 0x85, 0x11, 0xa9, 0x00, 0x38, 0xe9, 0x01, 0x85,
        0x12, 0x08, 0x68, 0x85, 0x13, 0xd8, 0x60,
    ];
    let (_, m) = run(&rom(&code, &[]));
    assert_eq!(byte(&m, 0x10), 0x00, "99 + 1 = 100");
    // P after: C and Z set, D set, I clear, emulation bits 4-5 set: N V 1 B D I Z C = 0011_1011.
    assert_eq!(byte(&m, 0x11), 0x3b);
    assert_eq!(byte(&m, 0x12), 0x99, "0 - 1 borrows to 99");
    // C clear (borrow), N set (bit 7 of $99), D set: 1011_1000.
    assert_eq!(byte(&m, 0x13), 0xb8);
}

#[test]
fn sixteen_bit_decimal_and_invalid_digits() {
    // CLC XCE REP #$30 SED; LDA #$0599; CLC; ADC #$0001; STA $20; LDA #$001A; CLC; ADC #$0000;
    // STA $22; CLD; RTS
    let code = with_prefix(
        &NATIVE16,
        &[
            0xf8, 0xa9, 0x99, 0x05, 0x18, 0x69, 0x01, 0x00, 0x85, 0x20, 0xa9, 0x1a, 0x00, 0x18, 0x69, 0x00, 0x00, 0x85,
            0x22, 0xd8, 0x60,
        ],
    );
    let (_, m) = run(&rom(&code, &[]));
    assert_eq!((byte(&m, 0x20), byte(&m, 0x21)), (0x00, 0x06));
    // An invalid low digit (A) is corrected like any above 9: $1A + 0 = $20.
    assert_eq!((byte(&m, 0x22), byte(&m, 0x23)), (0x20, 0x00));
}

#[test]
fn direct_page_stack_relative_and_indirect_long_addressing() {
    // Native 16: LDA #$0100; TCD (D = $0100); LDA #$BEEF; STA $10 (-> $0110);
    // LDA #$2000; STA $20; LDA #$007E; STA $22 (pointer $7E2000 at $0120);
    // LDA #$5A5A; STA [$20]; LDY #$0002; STA [$20],Y; PEA $1234; LDA $01,S; STA $7E3000; PLA; RTS
    let code = with_prefix(
        &NATIVE16,
        &[
            0xa9, 0x00, 0x01, 0x5b, 0xa9, 0xef, 0xbe, 0x85, 0x10, 0xa9, 0x00, 0x20, 0x85, 0x20, 0xa9, 0x7e, 0x00, 0x85,
            0x22, 0xa9, 0x5a, 0x5a, 0x87, 0x20, 0xa0, 0x02, 0x00, 0x97, 0x20, 0xf4, 0x34, 0x12, 0xa3, 0x01, 0x8f, 0x00,
            0x30, 0x7e, 0x68, 0x60,
        ],
    );
    let (_, m) = run(&rom(&code, &[]));
    assert_eq!(get(&m, D), 0x0100);
    assert_eq!((byte(&m, 0x110), byte(&m, 0x111)), (0xef, 0xbe));
    assert_eq!((byte(&m, 0x7e2000), byte(&m, 0x7e2001)), (0x5a, 0x5a));
    assert_eq!((byte(&m, 0x7e2002), byte(&m, 0x7e2003)), (0x5a, 0x5a));
    assert_eq!((byte(&m, 0x7e3000), byte(&m, 0x7e3001)), (0x34, 0x12));
    // PEA and PLA balance; the final RTS pulled two bytes the test's caller never pushed.
    assert_eq!(get(&m, S), 0x201);
}

#[test]
fn emulation_mode_direct_page_wraps_within_the_page() {
    // LDX #$20; LDA #$66; STA $F0,X  -> $0010 (wraps in page 0), not $0110; RTS
    let code = [0xa2, 0x20, 0xa9, 0x66, 0x95, 0xf0, 0x60];
    let (_, m) = run(&rom(&code, &[]));
    assert_eq!(byte(&m, 0x10), 0x66);
    assert_eq!(byte(&m, 0x110), 0x00);
}

#[test]
fn calls_returns_and_a_callee_that_changes_the_widths() {
    // Native 8-bit: CLC XCE; JSR $9000; LDA #$12 (decoded 8-bit: A9 12) ... but the callee
    // returns with M=0, so the guest goes on at $8005 in 16-bit widths, where the CPU reads
    // LDA #$EA12 (the NOP's byte as the high half).
    // $8000: 18 FB 20 00 90 A9 12 EA 85 30 60 ; $9000: C2 20 60 (REP #$20; RTS)
    let code = [0x18, 0xfb, 0x20, 0x00, 0x90, 0xa9, 0x12, 0xea, 0x85, 0x30, 0x60];
    let (_, program) = program(&rom(&code, &[(0x9000, &[0xc2, 0x20, 0x60])]));
    let mut interp = Interpreter::new(&program);
    let desc = state::state_desc();
    for (slot, v) in [(EMU, 1), (M8, 1), (X8, 1), (S, 0x1ff), (NEXT_EVENT, u64::MAX)] {
        interp.machine.state.set(&desc, slot, Val::Int(v));
    }
    // Lifted code goes on through the function table at the 16-bit variant of $8005, which no
    // walk found: at run time the run-time tier takes it from there.
    let m16 = Widths {
        m8: false,
        x8: true,
        emulation: false,
    };
    let err = interp.run(GuestAddr(0x8000), &mut FlatBus).unwrap_err();
    assert_eq!(err, InterpError::UnknownFunction(GuestAddr(m16.key(0x8005))));
    assert_eq!(get(&interp.machine, M8), 0);
    assert_eq!(
        get(&interp.machine, S),
        0x1ff,
        "the callee's RTS pulled what JSR pushed"
    );
}

#[test]
fn block_move_copies_and_leaves_the_registers_as_the_cpu_does() {
    // Native 16: fill $7E1000.. with a pattern via long stores, then MVN $7E,$7F (src $7E, dst $7F)
    // of 4 bytes: LDA #$0003 (count-1); LDX #$1000; LDY #$2000; MVN; RTS
    let mut body = Vec::new();
    for (i, v) in [0x11u8, 0x22, 0x33, 0x44].iter().enumerate() {
        // SEP #$20; LDA #v; STA $7E1000+i; REP #$20
        body.extend_from_slice(&[0xe2, 0x20, 0xa9, *v, 0x8f, i as u8, 0x10, 0x7e, 0xc2, 0x20]);
    }
    body.extend_from_slice(&[
        0xa9, 0x03, 0x00, 0xa2, 0x00, 0x10, 0xa0, 0x00, 0x20, 0x54, 0x7f, 0x7e, 0x60,
    ]);
    let (_, m) = run(&rom(&with_prefix(&NATIVE16, &body), &[]));
    let copied: Vec<u8> = (0..4).map(|i| byte(&m, 0x7f2000 + i)).collect();
    assert_eq!(copied, [0x11, 0x22, 0x33, 0x44]);
    assert_eq!(get(&m, A), 0xffff);
    assert_eq!((get(&m, X), get(&m, Y)), (0x1004, 0x2004));
    assert_eq!(get(&m, DBR), 0x7f);
}

#[test]
fn php_plp_restore_widths_and_xba_swaps() {
    // Native: CLC XCE; SEP #$30; PHP; REP #$30; LDA #$1234; XBA; STA $40; PLP; LDA #$56; STA $42; RTS
    let code = [
        0x18, 0xfb, 0xe2, 0x30, 0x08, 0xc2, 0x30, 0xa9, 0x34, 0x12, 0xeb, 0x85, 0x40, 0x28, 0xa9, 0x56, 0x85, 0x42,
        0x60,
    ];
    let (_, m) = run(&rom(&code, &[]));
    assert_eq!((byte(&m, 0x40), byte(&m, 0x41)), (0x12, 0x34));
    assert_eq!(byte(&m, 0x42), 0x56);
    assert_eq!(byte(&m, 0x43), 0x00, "PLP made the accumulator 8 bits again");
    assert_eq!(get(&m, M8), 1);
}

#[test]
fn every_instruction_adds_its_cycles() {
    // NOP; NOP; LDA $10 (3, emulation); RTS (6): 2 + 2 + 3 + 6 = 13 cycles of 8 master clocks
    let (_, m) = run(&rom(&[0xea, 0xea, 0xa5, 0x10, 0x60], &[]));
    assert_eq!(get(&m, CLOCK), 13 * 8);
}

#[test]
fn the_recipe_pins_the_widths_of_an_entry_the_walk_cannot_see() {
    // $8000: RTS. $9000 (reached by nothing): LDA #$1234 at 16 bits; RTS.
    let rom = rom(&[0x60], &[(0x9000, &[0xa9, 0x34, 0x12, 0x60])]);
    let guest = SnesRom;
    let m16 = Widths {
        m8: false,
        x8: false,
        emulation: false,
    };
    let key = GuestAddr(m16.key(0x9000));
    let mut options = BTreeMap::new();
    let image = guest.load(&rom, "snes", &options).expect("loads");
    assert!(!guest.discover(&image, &Seeds::default()).functions.contains(&key));
    options.insert(
        "pin_widths".to_string(),
        rpt_api::ParamValue::Str("009000:m16x16".to_string()),
    );
    guest.check_options(&options).expect("a good option");
    let image = guest.load(&rom, "snes", &options).expect("loads");
    let found = guest.discover(&image, &Seeds::default());
    assert!(found.functions.contains(&key), "{:?}", found.functions);
    let lifted = guest.lift(&image, key, &found.functions, &options);
    assert_eq!(lifted.listing[0].1, "LDA #$1234");
    // Typos are errors naming the option.
    for bad in ["9000", "009000:m32", "1009000:emu"] {
        options.insert("pin_widths".to_string(), rpt_api::ParamValue::Str(bad.to_string()));
        let err = guest.check_options(&options).unwrap_err().to_string();
        assert!(err.contains("pin_widths"), "{bad}: {err}");
    }
}

#[test]
fn xce_with_the_carry_clear_in_native_mode_keeps_the_widths_and_index_high_bytes() {
    // Native 16: LDX #$1234; CLC; XCE (stays native); STX $50 (still 16-bit); SEC; XCE (emulation):
    // X loses its high byte, S moves to page 1; RTS.
    let code = with_prefix(&NATIVE16, &[0xa2, 0x34, 0x12, 0x18, 0xfb, 0x86, 0x50, 0x38, 0xfb, 0x60]);
    let (_, m) = run(&rom(&code, &[]));
    assert_eq!((byte(&m, 0x50), byte(&m, 0x51)), (0x34, 0x12));
    assert_eq!(get(&m, X), 0x34);
    assert_eq!(get(&m, EMU), 1);
    assert_eq!(get(&m, C), 0, "the carry takes E's old value, native");
}
