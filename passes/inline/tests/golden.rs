//! Golden tests (`tests/golden/*.rir`, `test pass inline`): an input program and, after the `---`
//! line, how many calls the pass replaced with copies (a `;` line) and the program after it.
//! `RPT_BLESS=1 cargo test -p rpt-pass-inline --test golden` rewrites the expectations.
//!
//! Every case also runs through the reference interpreter before and after the pass, from every
//! function, with registers drawn at random (small numbers, table indexes, the addresses of the
//! functions and of the words in memory) and the program's tables written to memory: the outcome,
//! memory and state must not change, whether a call's target is a candidate or not.

use std::collections::BTreeSet;
use std::path::Path;

use rpt_ir::interp::{MachineState, StateValues, Val};
use rpt_ir::{AddrSpace, Program};
use rpt_testkit::interp::{HelperEnv, assert_same_runs, empty_machine, int_state, run_from};
use rpt_testkit::{Rng, filetest};

#[test]
fn golden_programs() {
    // A register drawn at random may name the function that calls through it: the interpreter
    // then recurses until its step limit, one host frame per guest call.
    std::thread::Builder::new()
        .stack_size(1 << 30)
        .spawn(run_goldens)
        .expect("a thread for the goldens")
        .join()
        .unwrap_or_else(|e| std::panic::resume_unwind(e));
}

fn run_goldens() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    filetest::run_program_pass(
        dir,
        "pass inline",
        |program| {
            let plans = rpt_pass_inline::plan(program);
            let mut inlined = 0;
            for (addr, plan) in &plans {
                // The plan crosses the plugin boundary as text: take the same road.
                let text = plan.encode(&program.state);
                let plan = rpt_pass_inline::Plan::decode(&text, &program.state)?;
                if let Some(func) = program.functions.get_mut(addr) {
                    inlined += rpt_pass_inline::apply(func, &plan);
                }
            }
            Ok(format!("{inlined} calls inlined"))
        },
        check_equivalent,
    );
}

/// Values worth putting in registers: small numbers and indexes, every function's address, and
/// the addresses of the table words and of the objects pointing at them.
fn interesting_values(program: &Program) -> Vec<u64> {
    let mut values = BTreeSet::from([0u64, 1, 2, 3, 4, 7, 8, 0xffff_ffff]);
    values.extend(program.functions.keys().map(|a| a.0));
    for (at, entries) in &program.pointer_tables {
        for k in 0..entries.len() as u64 {
            values.insert(at.0 + 4 * k);
        }
    }
    values.insert(OBJECTS);
    values.into_iter().collect()
}

/// Where memory holds objects whose first word points at each table in turn (vtable pointers).
const OBJECTS: u64 = 0x8000;

/// A register value: mostly an interesting one, now and then anything.
fn random_value(rng: &mut Rng, interesting: &[u64]) -> u64 {
    let pick = (rng.next() % interesting.len() as u64) as usize;
    match rng.next() % 4 {
        0 => rng.next(),
        _ => interesting[pick],
    }
}

fn run(program: &Program, entry: rpt_ir::GuestAddr, start: &StateValues) -> (String, MachineState) {
    let mut env = HelperEnv::new(|_, args, _| {
        let arg = args.first().map_or(0, |a| a.int());
        Ok(Some(Some(Val::Int(arg.wrapping_mul(3).wrapping_add(1) & 0xffff_ffff))))
    });
    let mut machine = empty_machine(&program.state);
    machine.state = start.clone();
    for (k, (at, entries)) in program.pointer_tables.iter().enumerate() {
        let words: Vec<u8> = entries.iter().flat_map(|f| (f.0 as u32).to_le_bytes()).collect();
        machine.memory.write_bytes(AddrSpace::RAM, at.0, &words);
        machine
            .memory
            .write_bytes(AddrSpace::RAM, OBJECTS + 16 * k as u64, &(at.0 as u32).to_le_bytes());
    }
    let (outcome, end) = run_from(program, entry, machine, Some(20_000), &mut env);
    (format!("{outcome:?}"), end)
}

fn check_equivalent(name: &str, before: &Program, after: &Program) {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let interesting = interesting_values(before);
    let start = || int_state(&before.state, || random_value(&mut rng, &interesting));
    assert_same_runs(name, before, after, 256, start, run);
}
