//! What the PowerPC oracles (the fuzzer against qemu, the paired-single facts) share: cases as
//! code images, lifting them, the interpreter's environment, and building their compiled form
//! with a test driver in place of the platform.

#![allow(dead_code)] // Each test binary uses a different subset.

// The emitter's test support lays out a generation's sources as `rpt` does.
#[path = "../../../../framework/emit-c/tests/common/generation.rs"]
mod generation;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use rpt_api::{GuestImage, GuestOptions, GuestPlugin, Seeds, Severity, SourceFile};
use rpt_guest_ppc_dol::{PpcDol, interp};
use rpt_ir::{Function, GuestAddr, Program};
use rpt_testkit::guest;
use rpt_testkit::interp::HelperEnv;

/// `blr`, the end of every case.
pub const BLR: u32 = 0x4e80_0020;

/// A case's code: `words` at `addr`, then `blr`, as one executable segment.
pub fn case_image(addr: u32, words: &[u32]) -> GuestImage {
    let bytes: Vec<u8> = words.iter().chain([&BLR]).flat_map(|w| w.to_be_bytes()).collect();
    guest::code_image("case", u64::from(addr), &bytes)
}

/// Discovers the case of `words` at `addr` from its entry and `hints` and lifts it into a
/// verified program; panics naming `what` when discovery or lifting reports an error.
pub fn lift_case(addr: u32, words: &[u32], hints: BTreeSet<GuestAddr>, what: &str) -> Program {
    let image = case_image(addr, words);
    let seeds = Seeds {
        entry_points: BTreeSet::from([image.entry]),
        function_hints: hints,
    };
    let (program, diagnostics) = guest::lift_program(&PpcDol, &image, &seeds, &GuestOptions::new());
    let errors: Vec<_> = diagnostics.iter().filter(|d| d.severity == Severity::Error).collect();
    assert!(errors.is_empty(), "{what}: {errors:?}");
    program
}

/// The interpreter's view of the platform: the helpers' C (the estimates, the quantisation) and
/// the FPSCR's rounding mode.
pub fn interpreter_env() -> HelperEnv<'static> {
    HelperEnv::new(interp::call_helper).with_rounding(interp::fpscr_rounding)
}

/// Builds the functions of `programs` as `rpt` emits them, with the runtime, the guest's C part
/// and `driver` (a guest part with its own `main`, standing in for the platform's C), into the
/// program `dir/name`; the functions are looked up from `entry` on.
pub fn build_compiled(dir: &Path, programs: &[Program], entry: GuestAddr, driver: String, name: &str) -> PathBuf {
    build_with(dir, programs, None, entry, driver, name)
}

/// Builds the instructions of `tier` as the run-time tier's C (`tier.c`, `rpt_emit_c::tier_source`)
/// with the runtime, the guest's C part and `driver`, and no lifted function at all, into the
/// program `dir/name`: the driver runs cases through `rpt_tier_run`.
pub fn build_tier(dir: &Path, tier: &[(GuestAddr, Function)], entry: GuestAddr, driver: String, name: &str) -> PathBuf {
    build_with(dir, &[], Some(tier), entry, driver, name)
}

fn build_with(
    dir: &Path,
    programs: &[Program],
    tier: Option<&[(GuestAddr, Function)]>,
    entry: GuestAddr,
    driver: String,
    name: &str,
) -> PathBuf {
    let options = GuestOptions::new();
    let mut program = Program::new(PpcDol.state(&options));
    program.helpers = guest::helpers_of(&PpcDol, &options);
    for p in programs {
        program.functions.extend(p.functions.clone());
    }
    let platform = rpt_guest_ppc_dol::platform::find("linux-syscalls").expect("platform");
    let mut extra = vec![SourceFile {
        path: "driver.c".into(),
        contents: driver,
    }];
    let memory = PpcDol.memory_model(platform.name, &options);
    if let Some(instructions) = tier {
        let forms = rpt_api::tier::group_forms(instructions);
        let externs = Default::default();
        let ctx = rpt_emit_c::EmitContext {
            state: &program.state,
            helpers: &program.helpers,
            externs: &externs,
            memory: &memory,
            listing_name: "test.lst",
            memarg: false,
            state_in_locals: rpt_ir::RoleSet::EMPTY,
            calls: &rpt_emit_c::state_use::UNKNOWN_CALLS,
            run_time_tier: false,
            count_instructions: false,
        };
        let functions = Default::default();
        extra.push(SourceFile {
            path: "tier.c".into(),
            contents: rpt_emit_c::tier_source(&forms, &functions, &ctx).expect("the tier's C"),
        });
    }
    extra.extend(
        PpcDol
            .runtime_sources(platform.name, &options)
            .expect("platform")
            .into_iter()
            .filter(|f| f.path != platform.c_path),
    );
    let image = guest::image_without_segments(entry);
    // Two shards, so that the two cores compile in parallel. Guest state lives in C locals
    // (passes/state-in-memory), the form the default pipeline builds.
    let choices = generation::Choices {
        state_in_locals: rpt_ir::RoleSet::of(&rpt_ir::SlotRole::ALL),
        ..generation::Choices::BASELINE
    };
    let files = generation::generation_sources(&program, memory, &image, entry, &extra, 2, choices);
    generation::build_driver(dir, &files, &[], name)
}
