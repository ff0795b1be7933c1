//! Golden tests (`tests/golden/*.rir`, `test pass x87-regions`): each case is a few x87
//! instructions (a `bytes` line of machine code, with its assembly in a comment), lifted by the x86
//! guest; the `lifted` section holds the lifted function (the pass's input) and the
//! `x87-regions` section the number of regions and the function after the pass. `RPT_BLESS=1
//! cargo test -p rpt-pass-x87-regions --test golden` rewrites them.
//!
//! Every case also runs in the reference interpreter before and after the pass, with the guest's
//! own x87 helpers, from random states: random GPRs, stack memory, control and status words, TOP,
//! tags (so the region's guard passes and fails) and register contents. The whole state and the
//! stack memory must come out the same.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use rpt_api::{GuestImage, GuestPlugin};
use rpt_guest_x86_pe::X86Pe;
use rpt_guest_x86_pe::interp::call_helper_in;
use rpt_guest_x86_pe::state::{ESP, FPU_CW, FPU_SW, FPU_TAGS, FPU_TOP, GPRS, ST_E, ST_M};
use rpt_guest_x86_pe::x87::Model;
use rpt_ir::interp::{MachineState, Outcome, Val};
use rpt_ir::print::function_to_string;
use rpt_ir::{AddrSpace, Function, GuestAddr, HelperDecl, Program, StateDesc};
use rpt_testkit::interp::{HelperEnv, empty_machine, run_from};
use rpt_testkit::{Rng, filetest, guest};

const CODE: u64 = 0x0040_1000;
/// Where esp points in the interpreted runs; the stack window around it is random.
const STACK: u64 = 0x0080_0000;
const WINDOW: u64 = 64;

fn image(code: &[u8]) -> GuestImage {
    guest::code_image(".text", CODE, code)
}

fn context() -> (StateDesc, BTreeMap<String, HelperDecl>) {
    let guest = X86Pe;
    let helpers = guest
        .helpers(&Default::default())
        .into_iter()
        .map(|h| (h.name.clone(), h))
        .collect();
    (guest.state(&Default::default()), helpers)
}

fn lift(code: &[u8]) -> Function {
    let entry = GuestAddr(CODE);
    X86Pe
        .lift(&image(code), entry, &BTreeSet::from([entry]), &Default::default())
        .function
}

fn program(func: &Function) -> Program {
    let (state, helpers) = context();
    let mut program = Program::new(state);
    program.helpers = helpers;
    program.functions.insert(func.entry, func.clone());
    program
}

#[test]
fn golden_functions() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let (state, helpers) = context();
    filetest::run(dir, "pass x87-regions", |case| {
        let original = lift(&guest::hex_bytes(case.field("bytes").ok_or("no `bytes` line")?)?);
        let mut transformed = original.clone();
        let regions = rpt_pass_x87_regions::run_on_function(&mut transformed, &state, &helpers)
            .ok_or("the pass finds no x87 unit in the x86 guest")?;
        rpt_ir::verify::verify_program(&program(&transformed))
            .map_err(|e| format!("the pass's output does not verify: {e}"))?;
        check_equivalent(&case.name, &original, &transformed);
        Ok(vec![
            ("lifted".to_string(), function_to_string(&original, &state)),
            (
                "x87-regions".to_string(),
                format!("; {regions} region(s)\n{}", function_to_string(&transformed, &state)),
            ),
        ])
    });
}

/// A register value: small integers, ordinary numbers, zeros, infinities and NaNs.
fn register(rng: &mut Rng) -> (u64, u16) {
    let sign = (rng.next() as u16) & 0x8000;
    match rng.next() % 6 {
        0 => (0, sign),
        1 => (0x8000_0000_0000_0000, sign | 0x7fff),
        2 => (0xc000_0000_0000_0000 | (rng.next() >> 20), sign | 0x7fff),
        _ => (
            rng.next() | 0x8000_0000_0000_0000,
            sign | (0x3fff - 40 + (rng.next() % 80) as u16),
        ),
    }
}

fn random_machine(desc: &StateDesc, rng: &mut Rng) -> MachineState {
    let mut m = empty_machine(desc);
    for slot in GPRS {
        m.state.set(desc, slot, Val::Int(rng.next() & 0xffff_ffff));
    }
    m.state.set(desc, ESP, Val::Int(STACK));
    for i in 0..WINDOW {
        let byte = rng.next() as u8;
        m.memory.write_u8(AddrSpace::RAM, STACK - WINDOW / 2 + i, byte);
    }
    // Doubles in the operand slots the cases read, so the arithmetic sees ordinary numbers too.
    for at in [4u64, 8, 12] {
        let value = ((rng.next() % 2000) as f64 - 1000.0) / 7.0;
        for (k, b) in value.to_bits().to_le_bytes().iter().enumerate() {
            if rng.next().is_multiple_of(2) {
                m.memory.write_u8(AddrSpace::RAM, STACK + at + k as u64, *b);
            }
        }
    }
    // Every exception masked: unmasked ones only set ES and B here, but the mask bits vary.
    let cw = 0x003f | ((rng.next() as u16 & 3) << 8) | ((rng.next() as u16 & 3) << 10);
    m.state.set(desc, FPU_CW, Val::Int(u64::from(cw)));
    m.state.set(desc, FPU_SW, Val::Int(rng.next() & 0x47ff & !0x3800));
    let top = rng.next() % 8;
    m.state.set(desc, FPU_TOP, Val::Int(top));
    // Usually a stack of some depth from TOP up; sometimes any tags at all.
    let tags = if rng.next().is_multiple_of(3) {
        rng.next() & 0xff
    } else {
        let depth = rng.next() % 9;
        let stack = ((1u64 << depth) - 1) as u8;
        u64::from(stack.rotate_left(top as u32))
    };
    m.state.set(desc, FPU_TAGS, Val::Int(tags));
    for p in 0..8 {
        let (mant, se) = register(rng);
        m.state.set_indexed(ST_M, p, Val::Int(mant));
        m.state.set_indexed(ST_E, p, Val::Int(u64::from(se)));
    }
    m
}

/// Runs `func` from `start` with the guest's own x87 helpers of `model` and nothing else.
fn run(func: &Function, start: &MachineState, model: Model) -> (Result<Outcome, String>, MachineState) {
    let mut x87_only =
        HelperEnv::new(move |name: &str, args: &[Val], m: &mut MachineState| call_helper_in(model, name, args, m));
    let (outcome, end) = run_from(&program(func), func.entry, start.clone(), None, &mut x87_only);
    (outcome.map_err(|e| e.to_string()), end)
}

fn check_equivalent(name: &str, original: &Function, transformed: &Function) {
    check_equivalent_as(name, original, transformed, false, Model::F80);
}

/// [`check_equivalent`]; with `quiet`, what a program that never reads the status word cannot
/// see is left out: the status word, and the contents of the registers left empty.
fn check_equivalent_as(name: &str, original: &Function, transformed: &Function, quiet: bool, model: Model) {
    let (desc, _) = context();
    let mut rng = Rng(0x87_5eed ^ name.len() as u64);
    for round in 0..300 {
        let start = random_machine(&desc, &mut rng);
        let (want_outcome, mut want) = run(original, &start, model);
        let (got_outcome, mut got) = run(transformed, &start, model);
        // The value forms' scratch slot is not part of the guest's state.
        let scratch = desc.find("fpu_result_e").expect("fpu_result_e");
        for m in [&mut want, &mut got] {
            m.state.set(&desc, scratch, Val::Int(0));
        }
        if quiet {
            let tags = want.state.get(&desc, FPU_TAGS).int();
            for m in [&mut want, &mut got] {
                m.state.set(&desc, FPU_SW, Val::Int(0));
                for p in (0..8).filter(|p| tags & (1 << p) == 0) {
                    m.state.set_indexed(ST_M, p, Val::Int(0));
                    m.state.set_indexed(ST_E, p, Val::Int(0));
                }
            }
        }
        assert_eq!(
            format!("{want_outcome:?}"),
            format!("{got_outcome:?}"),
            "{name}, state {round}: outcome"
        );
        assert!(
            want == got,
            "{name}, state {round}: the pass changed the result\nbefore: {:?}\nafter:  {:?}",
            want.state,
            got.state
        );
    }
}

/// The golden cases' machine code, by file name.
fn golden_cases() -> Vec<(String, Vec<u8>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("tests/golden")
        .map(|e| e.expect("a golden file").path())
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path).expect("a golden file");
            let hex = text
                .lines()
                .find_map(|l| l.strip_prefix("bytes "))
                .expect("a `bytes` line");
            let name = path.file_stem().unwrap_or_default().to_string_lossy().into_owned();
            (name, guest::hex_bytes(hex).expect("hex bytes"))
        })
        .collect()
}

/// With the quiet value forms (a program that never reads the status word), every golden case
/// leaves the full registers, tags, TOP, flags, GPRs and memory as before the pass; only the status
/// word and the contents of empty registers may differ.
#[test]
fn quiet_regions_change_nothing_but_the_status_word_and_empty_registers() {
    let (state, helpers) = context();
    let unit = rpt_pass_x87_regions::abi::Unit::find(&state, &helpers).expect("the x87 unit");
    let mut checked = 0;
    for (name, code) in golden_cases() {
        let original = lift(&code);
        // The pass chooses the quiet forms only for a program that cannot read the status word.
        if rpt_pass_x87_regions::status::reader(&program(&original), &unit).is_some() {
            continue;
        }
        checked += 1;
        let mut quiet = original.clone();
        rpt_pass_x87_regions::run_with_status(&mut quiet, &state, &helpers, true).expect("the x87 unit");
        rpt_ir::verify::verify_program(&program(&quiet)).expect("the quiet output verifies");
        // A quiet value form's kind or operation number has bit 8 set (`iconst 0x1..`).
        let uses_quiet_forms = function_to_string(&quiet, &state)
            .lines()
            .filter_map(|l| l.split_whitespace().last())
            .any(|t| t.len() == 5 && t.starts_with("0x1"));
        assert!(
            uses_quiet_forms || name == "lone_pop" || name == "lone_instruction",
            "{name}: no quiet value form"
        );
        // Both value models: each has its own unit under the quiet forms.
        for model in [Model::F80, Model::F64] {
            check_equivalent_as(&format!("{name} (quiet, {model:?})"), &original, &quiet, true, model);
        }
    }
    assert!(checked >= 10, "only {checked} golden cases read no status word");
}

/// What the pass's analysis calls a reader of the status word.
#[test]
fn the_status_word_is_read_by_fnstsw_and_by_externs_outside_the_platform() {
    let (state, helpers) = context();
    let unit = rpt_pass_x87_regions::abi::Unit::find(&state, &helpers).expect("the x87 unit");
    let status_of = |code: &[u8], externs: &[(u64, bool)]| {
        let mut p = program(&lift(code));
        for &(addr, platform) in externs {
            p.externs.insert(GuestAddr(addr), format!("extern_{addr:x}"));
            if platform {
                p.flag_transparent.insert(GuestAddr(addr));
            }
        }
        rpt_pass_x87_regions::status::reader(&p, &unit)
    };
    // fld qword [esp+4]; fadd st0,st0; fstp qword [esp+4]; ret
    let arithmetic = [0xdd, 0x44, 0x24, 0x04, 0xd8, 0xc0, 0xdd, 0x5c, 0x24, 0x04, 0xc3];
    // fld qword [esp+4]; fadd st0,st0; fnstsw ax; fstp qword [esp+4]; ret
    let fnstsw = [
        0xdd, 0x44, 0x24, 0x04, 0xd8, 0xc0, 0xdf, 0xe0, 0xdd, 0x5c, 0x24, 0x04, 0xc3,
    ];
    assert_eq!(status_of(&arithmetic, &[]), None);
    assert_eq!(
        status_of(&arithmetic, &[(0x0050_0000, true)]),
        None,
        "a platform function"
    );
    assert!(
        status_of(&arithmetic, &[(0x0050_0000, false)]).is_some(),
        "an override or setjmp"
    );
    assert!(status_of(&fnstsw, &[]).is_some_and(|why| why.contains("reads it")));
}
