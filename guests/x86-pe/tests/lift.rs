//! Lifted code run in the interpreter: the two jump-table forms, stops and divide errors, loops,
//! and the `ret_eip` option. What lifting and discovery make of an image (unliftable instructions,
//! weak function pointers, tail calls, import calls, calls that never return, entries outside
//! code) is in the golden files, `tests/golden/program_*.rir`.

mod common;

use std::collections::BTreeSet;

use iced_x86::BlockEncoderOptions;
use iced_x86::code_asm::*;
use rpt_api::{GuestImage, GuestPlugin, Import, Seeds, Segment, SegmentFlags};
use rpt_guest_x86_pe::X86Pe;
use rpt_guest_x86_pe::state::{EAX, ECX, ESP};
use rpt_ir::interp::{Interpreter, NoEnvironment, Outcome, Val};
use rpt_ir::{AddrSpace, ExitReason, Function, GuestAddr, InstKind, Program};

const TEXT: u64 = 0x40_1000;
const DATA: u64 = 0x40_2000;

fn assemble(f: impl FnOnce(&mut CodeAssembler) -> Result<(), IcedError>) -> Vec<u8> {
    let mut a = CodeAssembler::new(32).expect("assembler");
    f(&mut a).expect("assemble");
    a.assemble(TEXT).expect("encode")
}

/// An image with `code` at 0x401000 and `data` (read-only data) at 0x402000.
fn image(code: Vec<u8>, data: Vec<u8>, imports: Vec<Import>) -> GuestImage {
    let mut img = common::code_image(TEXT, &code);
    img.segments.push(Segment {
        name: ".rdata".to_string(),
        addr: GuestAddr(DATA),
        mem_size: data.len().max(4) as u64,
        bytes: data,
        flags: SegmentFlags {
            read: true,
            write: false,
            execute: false,
        },
    });
    img.imports = imports;
    img
}

fn words(ws: &[u32]) -> Vec<u8> {
    ws.iter().flat_map(|w| w.to_le_bytes()).collect()
}

fn run(program: &Program, entry: GuestAddr, a: u32, c: u32) -> (Outcome, u32) {
    let mut interp = Interpreter::new(program);
    let desc = &program.state;
    interp.machine.state.set(desc, EAX, Val::Int(u64::from(a)));
    interp.machine.state.set(desc, ECX, Val::Int(u64::from(c)));
    interp.machine.state.set(desc, ESP, Val::Int(0x7ffd_fffc));
    for seg in &program_image_segments() {
        interp.machine.memory.write_bytes(AddrSpace::RAM, seg.0, &seg.1);
    }
    let outcome = interp.run(entry, &mut NoEnvironment).expect("runs");
    (outcome, interp.machine.state.get(desc, EAX).int() as u32)
}

thread_local! {
    static SEGMENTS: std::cell::RefCell<Vec<(u64, Vec<u8>)>> = const { std::cell::RefCell::new(Vec::new()) };
}

fn program_image_segments() -> Vec<(u64, Vec<u8>)> {
    SEGMENTS.with(|s| s.borrow().clone())
}

fn lift_all(img: &GuestImage) -> Program {
    lift_seeded(img, &Seeds::default())
}

fn lift_seeded(img: &GuestImage, seeds: &Seeds) -> Program {
    SEGMENTS.with(|s| *s.borrow_mut() = img.segments.iter().map(|s| (s.addr.0, s.bytes.clone())).collect());
    common::lift_program_with(img, seeds).0
}

#[test]
fn jump_tables_in_both_forms_become_switches() {
    // f(ecx) = table[ecx] for 0..=2, else 99; form A at `a`, form B at `b`.
    for form_b in [false, true] {
        let mut cases = Vec::new();
        let code = {
            let mut a = CodeAssembler::new(32).expect("assembler");
            let mut default = a.create_label();
            let mut labels = [a.create_label(), a.create_label(), a.create_label()];
            a.cmp(ecx, 2).expect("cmp");
            a.ja(default).expect("ja");
            if form_b {
                a.mov(edx, dword_ptr(ecx * 4 + DATA as i32)).expect("mov");
                a.jmp(edx).expect("jmp");
            } else {
                a.jmp(dword_ptr(ecx * 4 + DATA as i32)).expect("jmp");
            }
            for (i, l) in labels.iter_mut().enumerate() {
                a.set_label(l).expect("label");
                a.mov(eax, 10 * (i as u32 + 1)).expect("mov");
                a.ret().expect("ret");
            }
            a.set_label(&mut default).expect("label");
            a.mov(eax, 99u32).expect("mov");
            a.ret().expect("ret");
            let r = a
                .assemble_options(TEXT, BlockEncoderOptions::RETURN_NEW_INSTRUCTION_OFFSETS)
                .expect("encode");
            for l in &labels {
                cases.push(r.label_ip(l).expect("ip") as u32);
            }
            r.inner.code_buffer
        };
        // tests/golden/program_jump_table_*.rir show the switch each form becomes; here it runs.
        let img = image(code, words(&cases), vec![]);
        let program = lift_all(&img);
        for (index, want) in [(0, 10), (1, 20), (2, 30), (3, 99), (0xffff_ffff, 99)] {
            assert_eq!(
                run(&program, GuestAddr(TEXT), 0, index).1,
                want,
                "form B: {form_b}, ecx={index}"
            );
        }
    }
}

#[test]
fn stops_and_divide_errors_report_their_address() {
    for (bytes, reason) in [
        (vec![0x90, 0xf4], ExitReason::Halt),
        (vec![0x90, 0x0f, 0x0b], ExitReason::InvalidOpcode),
        (vec![0x90, 0xcc], ExitReason::InvalidOpcode),
        (vec![0x90, 0xf7, 0xf1, 0xc3], ExitReason::DivideError), // div ecx with ecx = 0
    ] {
        let img = image(bytes, vec![], vec![]);
        let program = lift_all(&img);
        let (outcome, _) = run(&program, GuestAddr(TEXT), 1, 0);
        assert_eq!(outcome, Outcome::Exited { pc: TEXT + 1, reason });
    }
}

#[test]
fn every_instruction_has_a_mark_and_a_listing_line() {
    let code = assemble(|a| {
        let mut top = a.create_label();
        a.xor(eax, eax)?;
        a.set_label(&mut top)?;
        a.add(eax, ecx)?;
        a.loop_(top)?;
        a.ret()
    });
    let img = image(code, vec![], vec![]);
    let entry = GuestAddr(TEXT);
    let result = common::lift_verified(&img, entry, &BTreeSet::from([entry]));
    let listed: Vec<GuestAddr> = result.listing.iter().map(|(a, _)| *a).collect();
    assert_eq!(listed, result.function.guest_pcs().into_iter().collect::<Vec<_>>());
    assert_eq!(listed.len(), 4);
    assert_eq!(result.listing[1].1, "add eax, ecx");
    assert_eq!(result.listing[2].1, "loop 0x00401002");
    let program = lift_all(&img);
    // sum of 4+3+2+1
    assert_eq!(run(&program, entry, 0, 4), (Outcome::Returned, 10));
}

#[test]
fn ret_eip_stores_the_return_address_only_when_asked() {
    use rpt_api::ParamValue;
    let code = assemble(|a| {
        a.mov(eax, 5)?;
        a.ret()
    });
    let img = image(code, Vec::new(), Vec::new());
    let entry = GuestAddr(0x0040_1000);
    let lift = |options: &rpt_api::GuestOptions| X86Pe.lift(&img, entry, &BTreeSet::from([entry]), options).function;
    let writes_eip = |f: &Function| {
        let eip = rpt_guest_x86_pe::state::EIP;
        f.blocks
            .iter()
            .flat_map(|b| &b.insts)
            .any(|i| matches!(i.kind, InstKind::SetSlot { slot, .. } if slot == eip))
    };
    assert!(
        !writes_eip(&lift(&Default::default())),
        "ret leaves eip alone by default"
    );
    let on: rpt_api::GuestOptions = [("ret_eip".to_string(), ParamValue::Bool(true))].into_iter().collect();
    assert_eq!(X86Pe.check_options(&on), Ok(()));
    let with = lift(&on);
    assert!(writes_eip(&with), "ret_eip: true stores the popped address");
    // The stored value is the return address on the stack.
    let mut program = Program::new(rpt_guest_x86_pe::state::state_desc());
    program.functions.insert(entry, with);
    let mut interp = Interpreter::new(&program);
    let desc = rpt_guest_x86_pe::state::state_desc();
    interp.machine.state.set(&desc, ESP, Val::Int(0x8000));
    interp
        .machine
        .memory
        .write_bytes(AddrSpace::RAM, 0x8000, &0x0040_2345u32.to_le_bytes());
    assert!(matches!(interp.run(entry, &mut NoEnvironment), Ok(Outcome::Returned)));
    assert_eq!(
        interp.machine.state.get(&desc, rpt_guest_x86_pe::state::EIP).int(),
        0x0040_2345
    );
    assert_eq!(interp.machine.state.get(&desc, ESP).int(), 0x8004);
    let bad: rpt_api::GuestOptions = [("ret_eip".to_string(), ParamValue::Str("yes".into()))]
        .into_iter()
        .collect();
    assert!(X86Pe.check_options(&bad).is_err());
}
