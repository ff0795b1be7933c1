//! Golden tests (`tests/golden/*.rir`, `test pass flag-abi`): an input program and, after the `---`
//! line, the audit (as `;` comment lines) and the program after the pass. `RPT_BLESS=1 cargo test
//! -p rpt-pass-flag-abi --test golden` rewrites the expectations.
//!
//! Every case is also run through the reference interpreter, before and after the pass, from every
//! function with random registers: the guest-visible result must not change. Flags themselves are
//! compared wherever something may read them: at an exit, and whenever an extern or a state-reading
//! helper is called (the environment records the whole state at each such call).

use std::cell::RefCell;
use std::path::Path;

use rpt_ir::interp::{InterpError, MachineState, Outcome, StateValues, Val};
use rpt_ir::parse::parse_program;
use rpt_ir::print::write_program;
use rpt_ir::{AddrSpace, ExitReason, GuestAddr, Program, SlotLayout, SlotRole, StateDesc};
use rpt_testkit::interp::{HelperEnv, empty_machine, run_from};
use rpt_testkit::{Rng, filetest};

fn render(program: &mut Program) -> String {
    let audit = rpt_pass_flag_abi::run_on_program(program).expect("the golden programs have few flags");
    let mut out = String::new();
    for line in audit.text.lines() {
        out.push_str("; ");
        out.push_str(line);
        out.push('\n');
    }
    write_program(&mut out, program).expect("writing to a String");
    out
}

#[test]
fn golden_programs() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    filetest::run(dir, "pass flag-abi", |case| {
        let name = &case.name;
        let original = parse_program(&case.input).map_err(|e| format!("the input does not parse: {e}"))?;
        rpt_ir::verify::verify_program(&original).map_err(|e| format!("the input does not verify: {e}"))?;
        let mut transformed = original.clone();
        let actual = render(&mut transformed);
        rpt_ir::verify::verify_program(&transformed).map_err(|e| format!("the pass's output does not verify: {e}"))?;
        // The expected text is real IR: it reads back and prints the same (values the pass removed
        // leave gaps in the numbering, so the texts are compared, not the value tables).
        let reparsed = parse_program(&actual).map_err(|e| format!("the output does not parse: {e}"))?;
        let mut reprinted = String::new();
        write_program(&mut reprinted, &reparsed).expect("writing to a String");
        if !actual.ends_with(&reprinted) {
            return Err("print/parse round trip of the output".to_string());
        }
        check_equivalent(name, &original, &transformed);
        Ok(filetest::single(actual))
    });
}

fn random_state(desc: &StateDesc, rng: &mut Rng) -> StateValues {
    let mut values = StateValues::new(desc);
    for (id, slot) in desc.iter() {
        if slot.layout == SlotLayout::Plain && slot.ty.is_int() {
            let bits = slot.ty.bits();
            let mask = if bits >= 64 { u64::MAX } else { (1 << bits) - 1 };
            // Small values now and then, so compares against constants take both ways.
            let raw = if rng.next().is_multiple_of(3) {
                rng.next() % 8
            } else {
                rng.next()
            };
            values.set(desc, id, Val::Int(raw & mask));
        }
    }
    values
}

/// The state with every flag cleared: what must not change when no one reads the flags.
fn without_flags(desc: &StateDesc, values: &StateValues) -> StateValues {
    let mut out = values.clone();
    for (id, slot) in desc.iter() {
        if slot.role == SlotRole::Flag && !matches!(slot.layout, SlotLayout::Array { .. }) {
            out.set(desc, id, Val::zero(slot.ty));
        }
    }
    out
}

/// The whole state at each extern call and each call of the state-reading helper `@probe`, with
/// the callee's name; without the flags at a flag-transparent extern's call, which reads none
/// (what passes through it is checked where the caller reads it).
type CallLog = Vec<(String, StateValues)>;

/// Runs `entry` from `start` with every extern returning at once and every helper computing
/// `3 * arg + 1`; returns the outcome, the state at each call that may read flags, and the end.
fn run(
    program: &Program,
    entry: GuestAddr,
    start: &StateValues,
) -> (Result<Outcome, InterpError>, CallLog, MachineState) {
    let log = RefCell::new(CallLog::new());
    let mut env = HelperEnv::new(|name, args, machine| {
        if name == "probe" {
            log.borrow_mut().push((name.to_string(), machine.state.clone()));
        }
        let arg = args.first().map_or(0, |a| a.int());
        Ok(Some(Some(Val::Int((arg.wrapping_mul(3) + 1) & 0xffff_ffff))))
    })
    .with_externs(|addr, machine| {
        let seen = if program.flag_transparent.contains(&addr) {
            without_flags(&program.state, &machine.state)
        } else {
            machine.state.clone()
        };
        log.borrow_mut().push((addr.function_name(), seen));
        Ok(Some(Outcome::Returned))
    });
    let mut machine = empty_machine(&program.state);
    machine.state = start.clone();
    machine.memory.write_bytes(AddrSpace::RAM, 0x1000, &[0x5a; 64]);
    let (outcome, end) = run_from(program, entry, machine, Some(100_000), &mut env);
    drop(env);
    (outcome, log.into_inner(), end)
}

fn check_equivalent(name: &str, before: &Program, after: &Program) {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let desc = &before.state;
    for &entry in before.functions.keys() {
        for case in 0..64 {
            let start = random_state(desc, &mut rng);
            let (o1, log1, m1) = run(before, entry, &start);
            let (o2, log2, m2) = run(after, entry, &start);
            let what = format!("{name}: {} case {case}", entry.function_name());
            assert_eq!(o1, o2, "{what}: outcome");
            assert_eq!(m1.memory, m2.memory, "{what}: memory");
            assert_eq!(
                log1, log2,
                "{what}: the state seen by externs and state-reading helpers"
            );
            match o1 {
                Ok(Outcome::Exited {
                    reason: ExitReason::Unlifted | ExitReason::Syscall | ExitReason::Yield | ExitReason::Unliftable,
                    ..
                }) => assert_eq!(
                    m1.state, m2.state,
                    "{what}: state at an exit the runtime may resume from"
                ),
                _ => assert_eq!(
                    without_flags(desc, &m1.state),
                    without_flags(desc, &m2.state),
                    "{what}: state after the return or at the program's end (flags aside: nothing reads them)"
                ),
            }
        }
    }
}
