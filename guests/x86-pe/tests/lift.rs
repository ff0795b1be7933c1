//! Lifting and discovery on hand-made images: unliftable instructions, weak function pointers,
//! the two jump-table forms, tail calls, import calls, calls that never return, and exits.

mod common;

use std::collections::{BTreeMap, BTreeSet};

use iced_x86::BlockEncoderOptions;
use iced_x86::code_asm::*;
use rpt_api::{GuestImage, GuestPlugin, Import, Seeds, Segment, SegmentFlags, Severity};
use rpt_guest_x86_pe::X86Pe;
use rpt_guest_x86_pe::state::{EAX, ECX, ESP};
use rpt_ir::interp::{Interpreter, NoEnvironment, Outcome, Val};
use rpt_ir::{AddrSpace, CallTarget, ExitReason, Function, GuestAddr, InstKind, Program, Terminator};

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

fn terms(f: &Function) -> Vec<&Terminator> {
    f.blocks.iter().map(|b| &b.term).collect()
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

/// Seeds that add the recipe's function hints `hints` to what discovery finds.
fn hinted<const N: usize>(hints: [GuestAddr; N]) -> Seeds {
    Seeds {
        function_hints: BTreeSet::from(hints),
        ..Seeds::default()
    }
}

fn lift_all(img: &GuestImage) -> Program {
    lift_seeded(img, &Seeds::default())
}

fn lift_seeded(img: &GuestImage, seeds: &Seeds) -> Program {
    SEGMENTS.with(|s| *s.borrow_mut() = img.segments.iter().map(|s| (s.addr.0, s.bytes.clone())).collect());
    common::lift_program_with(img, seeds).0
}

#[test]
fn unknown_instructions_exit_unlifted_with_an_error() {
    // mov eax, 1; cpuid; ret   and a second function with an SSE op.
    let mut code = vec![0xb8, 1, 0, 0, 0, 0x0f, 0xa2, 0xc3];
    code.extend([0x0f, 0x58, 0xc1, 0xc3]); // addps xmm0, xmm1; ret  at 0x401008
    let img = image(code, vec![], vec![]);
    let entry = GuestAddr(TEXT);
    let result = common::lift_verified(&img, entry, &BTreeSet::from([entry]));
    let errs = common::errors(&result.diagnostics);
    assert_eq!(errs.len(), 1, "{:?}", result.diagnostics);
    assert_eq!(errs[0].addr, GuestAddr(TEXT + 5));
    assert!(
        errs[0].message.contains("cpuid") && errs[0].message.contains("0f a2"),
        "{}",
        errs[0].message
    );
    let exits: Vec<_> = result
        .function
        .blocks
        .iter()
        .filter(|b| {
            matches!(
                b.term,
                Terminator::Exit {
                    reason: ExitReason::Unlifted,
                    ..
                }
            )
        })
        .collect();
    assert_eq!(exits.len(), 1);
    // The unlifted exit reports the cpuid's address.
    let pc_value = match exits[0].term {
        Terminator::Exit { pc, .. } => pc,
        _ => unreachable!(),
    };
    let pc_const = exits[0]
        .insts
        .iter()
        .find(|i| i.result == Some(pc_value))
        .map(|i| &i.kind);
    assert_eq!(
        pc_const,
        Some(&InstKind::Iconst {
            ty: rpt_ir::Type::I32,
            imm: TEXT + 5
        })
    );
    assert_eq!(
        result.listing,
        [
            (GuestAddr(TEXT), "mov eax, 1".to_string()),
            (GuestAddr(TEXT + 5), "cpuid".to_string())
        ]
    );

    let sse = GuestAddr(TEXT + 8);
    let discovery = X86Pe.discover(&img, &hinted([sse]));
    let errs = common::errors(&discovery.diagnostics);
    assert_eq!(errs.len(), 2, "{:#?}", discovery.diagnostics);
    assert!(
        errs[1].addr == sse && errs[1].message.contains("addps"),
        "{}",
        errs[1].message
    );
}

#[test]
fn weak_candidates_are_kept_only_when_they_lift() {
    // 0x401000 entry: mov eax, offset good2; call helper; ret
    // helper: ret
    // good (pointed to by data): lea eax, [eax+1]; ret
    // good2 (pointed to by an immediate): ret
    // bad (pointed to by data): cpuid; ret
    let (helper, good, good2, bad, code) = {
        let mut a = CodeAssembler::new(32).expect("assembler");
        let mut l_helper = a.create_label();
        let mut l_good = a.create_label();
        let mut l_good2 = a.create_label();
        let mut l_bad = a.create_label();
        a.mov(eax, 0x40_1020u32).expect("mov"); // patched below to good2's address
        a.call(l_helper).expect("call");
        a.ret().expect("ret");
        a.set_label(&mut l_helper).expect("label");
        a.ret().expect("ret");
        a.set_label(&mut l_good).expect("label");
        a.lea(eax, eax + 1).expect("lea");
        a.ret().expect("ret");
        a.set_label(&mut l_good2).expect("label");
        a.ret().expect("ret");
        a.set_label(&mut l_bad).expect("label");
        a.db(&[0x0f, 0xa2, 0xc3]).expect("db");
        let r = a
            .assemble_options(TEXT, BlockEncoderOptions::RETURN_NEW_INSTRUCTION_OFFSETS)
            .expect("encode");
        let ip = |l: &CodeLabel| r.label_ip(l).expect("label address");
        (
            ip(&l_helper),
            ip(&l_good),
            ip(&l_good2),
            ip(&l_bad),
            r.inner.code_buffer.clone(),
        )
    };
    let mut code = code;
    code[1..5].copy_from_slice(&(good2 as u32).to_le_bytes());
    // Data: pointers to good, bad, the middle of the entry function, and a non-code value.
    let data = words(&[good as u32, bad as u32, (TEXT + 5) as u32, 0x1234_5678]);
    let img = image(code, data, vec![]);
    let discovery = X86Pe.discover(&img, &Seeds::default());
    let g = |a: u64| GuestAddr(a);
    assert_eq!(
        discovery.functions,
        BTreeSet::from([g(TEXT), g(helper), g(good), g(good2)])
    );
    assert_eq!(discovery.address_taken, BTreeSet::from([g(good), g(good2)]));
    let notes: BTreeMap<GuestAddr, &str> = discovery
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Note)
        .map(|d| (d.addr, d.message.as_str()))
        .collect();
    assert!(notes.get(&g(bad)).is_some_and(|m| m.contains("cpuid")), "{notes:?}");
    assert!(
        notes.get(&g(TEXT + 5)).is_some_and(|m| m.contains("inside known code")),
        "{notes:?}"
    );
    assert!(
        common::errors(&discovery.diagnostics).is_empty(),
        "{:?}",
        discovery.diagnostics
    );
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
        let img = image(code, words(&cases), vec![]);
        let program = lift_all(&img);
        let f = &program.functions[&GuestAddr(TEXT)];
        let switches: Vec<usize> = terms(f)
            .iter()
            .filter_map(|t| match t {
                Terminator::Switch { cases, .. } => Some(cases.len()),
                _ => None,
            })
            .collect();
        assert_eq!(switches, [3], "form B: {form_b}");
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
fn calls_tail_calls_imports_and_noreturn() {
    let exit_slot = DATA as u32;
    let write_slot = DATA as u32 + 4;
    let imports = vec![
        Import {
            module: "KERNEL32.dll".into(),
            name: "ExitProcess".into(),
            slot: GuestAddr(DATA),
            thunk: GuestAddr(0xfff0_0000),
        },
        Import {
            module: "KERNEL32.dll".into(),
            name: "WriteFile".into(),
            slot: GuestAddr(DATA + 4),
            thunk: GuestAddr(0xfff0_0010),
        },
    ];
    let (callee, second, code) = {
        let mut a = CodeAssembler::new(32).expect("assembler");
        let mut l_callee = a.create_label();
        let mut l_second = a.create_label();
        let mut l_entry_loop = a.create_label();
        a.set_label(&mut l_entry_loop).expect("label");
        a.dec(ecx).expect("dec");
        a.jnz(l_entry_loop).expect("jnz"); // a loop back to the function's first instruction
        a.call(l_callee).expect("call");
        a.call(dword_ptr(write_slot)).expect("call [IAT]");
        a.test(eax, eax).expect("test");
        a.jz(l_second).expect("jz"); // a conditional tail call
        a.call(dword_ptr(exit_slot)).expect("call [IAT]");
        a.db(&[0x0f, 0x0b, 0xff, 0xff]).expect("db"); // never reached: ud2 and garbage
        a.set_label(&mut l_callee).expect("label");
        a.mov(eax, 5u32).expect("mov");
        a.ret_1(8).expect("ret 8");
        a.set_label(&mut l_second).expect("label");
        a.jmp(dword_ptr(write_slot)).expect("jmp [IAT]");
        let r = a
            .assemble_options(TEXT, BlockEncoderOptions::RETURN_NEW_INSTRUCTION_OFFSETS)
            .expect("encode");
        let ip = |l: &CodeLabel| r.label_ip(l).expect("label address");
        (ip(&l_callee), ip(&l_second), r.inner.code_buffer.clone())
    };
    let mut data = words(&[0, 0]);
    data.extend([0; 8]);
    let img = image(code, data, imports);
    let seeds = hinted([GuestAddr(second)]);
    let discovery = X86Pe.discover(&img, &seeds);
    assert!(discovery.diagnostics.is_empty(), "{:#?}", discovery.diagnostics);
    assert_eq!(
        discovery.functions,
        BTreeSet::from([GuestAddr(TEXT), GuestAddr(callee), GuestAddr(second)])
    );
    let program = lift_seeded(&img, &seeds);
    let entry = &program.functions[&GuestAddr(TEXT)];
    let calls: Vec<&CallTarget> = terms(entry)
        .into_iter()
        .filter_map(|t| match t {
            Terminator::Call { target, .. } => Some(target),
            _ => None,
        })
        .collect();
    assert_eq!(
        calls,
        [
            &CallTarget::Direct(GuestAddr(callee)),
            &CallTarget::Direct(GuestAddr(0xfff0_0010)),
            &CallTarget::Direct(GuestAddr(0xfff0_0000))
        ]
    );
    assert!(
        terms(entry).contains(&&Terminator::TailCall {
            target: CallTarget::Direct(GuestAddr(second))
        }),
        "{:#?}",
        terms(entry)
    );
    let second_f = &program.functions[&GuestAddr(second)];
    assert_eq!(
        terms(second_f).last(),
        Some(&&Terminator::TailCall {
            target: CallTarget::Direct(GuestAddr(0xfff0_0010))
        })
    );
    // The call's continuation after ExitProcess is an exit, not the bytes after it.
    assert!(
        !entry.guest_pcs().iter().any(|pc| pc.0 > callee - 5 && pc.0 < callee),
        "{:?}",
        entry.guest_pcs()
    );
    assert!(entry.blocks.iter().any(|b| matches!(
        b.term,
        Terminator::Exit {
            reason: ExitReason::Unlifted,
            ..
        }
    )));
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
fn an_entry_outside_code_is_a_warning_and_hints_still_count() {
    let mut img = image(vec![0xc3], vec![0; 8], vec![]);
    img.entry = GuestAddr(DATA);
    let hint = GuestAddr(TEXT);
    let discovery = X86Pe.discover(&img, &hinted([hint]));
    assert_eq!(discovery.functions, BTreeSet::from([hint]));
    let severities: Vec<(GuestAddr, Severity)> = discovery.diagnostics.iter().map(|d| (d.addr, d.severity)).collect();
    assert_eq!(severities, [(GuestAddr(DATA), Severity::Warning)]);
    // A recipe hint that is not code is the recipe's mistake: an error naming the address.
    let bad = GuestAddr(DATA + 4);
    let discovery = X86Pe.discover(
        &img,
        &Seeds {
            entry_points: BTreeSet::from([bad]),
            ..Seeds::default()
        },
    );
    let errs = common::errors(&discovery.diagnostics);
    assert!(
        errs.len() == 1 && errs[0].addr == bad && errs[0].message.contains("not in an executable section"),
        "{errs:?}"
    );
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
