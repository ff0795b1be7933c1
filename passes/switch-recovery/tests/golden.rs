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
use rpt_ir::{AddrSpace, InstKind, Program};
use rpt_testkit::interp::{HelperEnv, assert_same_runs, empty_machine, int_state, run_from};
use rpt_testkit::{Rng, filetest};

#[test]
fn golden_programs() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    filetest::run_program_pass(
        dir,
        "pass switch-recovery",
        |program| {
            let mut made = 0;
            let state = program.state.clone();
            for func in program.functions.values_mut() {
                made += rpt_pass_switch_recovery::recover_switches(func, &state);
            }
            Ok(format!("{made} switches"))
        },
        check_equivalent,
    );
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

/// A register value: an interesting one, a small number, anything, or the address where `run`
/// stores an interesting one (for trees over a loaded key).
fn random_value(rng: &mut Rng, interesting: &[u64]) -> u64 {
    let pick = (rng.next() % interesting.len() as u64) as usize;
    match rng.next() % 5 {
        0 => rng.next(),
        1 => rng.next() % 8,
        2 => INTERESTING_AT + 4 * pick as u64,
        _ => interesting[pick],
    }
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
    let start = || int_state(&before.state, || random_value(&mut rng, &interesting));
    assert_same_runs(name, before, after, 256, start, |program, entry, state| {
        run(program, entry, state, &interesting)
    });
}
