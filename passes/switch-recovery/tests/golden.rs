//! Golden tests (`tests/golden/*.rir`, `test pass switch-recovery`): an input program and, after
//! the `---` line, how many switches the pass made (a `;` line) and the program after it.
//! `RPT_BLESS=1 cargo test -p rpt-pass-switch-recovery --test golden` rewrites the expectations.
//!
//! Every case also runs through the reference interpreter before and after the pass, from every
//! function, with registers drawn at random and, for each register a tree compares, every value
//! at and around the constants it is compared with (in a register, or in memory at an address in
//! one): the outcome, memory and state must not change.

use std::collections::BTreeSet;
use std::path::Path;

use rpt_ir::interp::{MachineState, StateValues, Val};
use rpt_ir::parse::parse_program;
use rpt_ir::print::write_program;
use rpt_ir::{AddrSpace, InstKind, Program, SlotLayout, StateDesc};
use rpt_testkit::interp::{HelperEnv, empty_machine, run_from};
use rpt_testkit::{Rng, filetest};

#[test]
fn golden_programs() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    filetest::run(dir, "pass switch-recovery", |case| {
        let original = parse_program(&case.input).map_err(|e| format!("the input does not parse: {e}"))?;
        rpt_ir::verify::verify_program(&original).map_err(|e| format!("the input does not verify: {e}"))?;
        let mut transformed = original.clone();
        let mut made = 0;
        let state = transformed.state.clone();
        for func in transformed.functions.values_mut() {
            made += rpt_pass_switch_recovery::recover_switches(func, &state);
        }
        rpt_ir::verify::verify_program(&transformed).map_err(|e| format!("the pass's output does not verify: {e}"))?;
        let mut actual = format!("; {made} switches\n");
        write_program(&mut actual, &transformed).expect("writing to a String");
        check_equivalent(&case.name, &original, &transformed);
        Ok(filetest::single(actual))
    });
}

/// Every integer constant of the program and its neighbours: the values where a compare tree
/// changes its mind.
fn interesting_values(program: &Program) -> Vec<u64> {
    let mut values = BTreeSet::from([0u64, 1, 0x7fff_ffff, 0x8000_0000, 0xffff_ffff]);
    for func in program.functions.values() {
        for inst in func.blocks.iter().flat_map(|b| &b.insts) {
            if let InstKind::Iconst { imm, .. } = inst.kind {
                for v in [imm.wrapping_sub(1), imm, imm.wrapping_add(1)] {
                    values.insert(v & 0xffff_ffff);
                }
            }
        }
    }
    values.into_iter().collect()
}

fn random_state(desc: &StateDesc, rng: &mut Rng, interesting: &[u64]) -> StateValues {
    let mut values = StateValues::new(desc);
    for (id, slot) in desc.iter() {
        if slot.layout != SlotLayout::Plain || !slot.ty.is_int() {
            continue;
        }
        let pick = (rng.next() % interesting.len() as u64) as usize;
        let raw = match rng.next() % 5 {
            0 => rng.next(),
            1 => rng.next() % 8,
            // The address where `run` stores the same value, for trees over a loaded key.
            2 => INTERESTING_AT + 4 * pick as u64,
            _ => interesting[pick],
        };
        values.set(desc, id, Val::Int(raw & slot.ty.mask()));
    }
    values
}

/// Where memory holds the interesting values, each as a little-endian word.
const INTERESTING_AT: u64 = 0x2000;

fn run(
    program: &Program,
    entry: rpt_ir::GuestAddr,
    start: &StateValues,
    interesting: &[u64],
) -> (String, MachineState) {
    let mut env = HelperEnv::new(|_, args, _| {
        let arg = args.first().map_or(0, |a| a.int());
        Ok(Some(Some(Val::Int(arg.wrapping_mul(3).wrapping_add(1) & 0xffff_ffff))))
    });
    let mut machine = empty_machine(&program.state);
    machine.state = start.clone();
    machine.memory.write_bytes(AddrSpace::RAM, 0x1000, &[0x5a; 64]);
    let words: Vec<u8> = interesting.iter().flat_map(|&v| (v as u32).to_le_bytes()).collect();
    machine.memory.write_bytes(AddrSpace::RAM, INTERESTING_AT, &words);
    let (outcome, end) = run_from(program, entry, machine, Some(100_000), &mut env);
    (format!("{outcome:?}"), end)
}

fn check_equivalent(name: &str, before: &Program, after: &Program) {
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let interesting = interesting_values(before);
    for &entry in before.functions.keys() {
        for case in 0..256 {
            let start = random_state(&before.state, &mut rng, &interesting);
            let (o1, m1) = run(before, entry, &start, &interesting);
            let (o2, m2) = run(after, entry, &start, &interesting);
            let what = format!("{name}: {} case {case}", entry.function_name());
            assert_eq!(o1, o2, "{what}: outcome");
            assert_eq!(m1.memory, m2.memory, "{what}: memory");
            assert_eq!(m1.state, m2.state, "{what}: state");
        }
    }
}
