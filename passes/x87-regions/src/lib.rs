//! passes/x87-regions: x87 register allocation within a block, or across a whole loop.
//!
//! The x86 guest lifts each x87 instruction to one call of a stack-form helper, which finds
//! `st(i)` at run time as physical register `(TOP + i) mod 8`, checks its tag, and loads and stores
//! it through the guest state. Within a straight run of x87 instructions the stack depth is known
//! at compile time, so this pass turns such a run (a *region*) into code where `st(i)` is a plain
//! IR value: a register the region reads before writing is loaded once, each instruction becomes a
//! value-form helper call (`x87_v*`, which computes and updates the status word but touches no
//! register) or nothing at all (`fld st(i)`, `fxch`, `fst st(i)` are renamings), and at the region's
//! end only the registers it changed are written back, with TOP and the tags updated once. A loop
//! whose stack has the same shape on every path is one region: guarded once on entry, its registers
//! carried from iteration to iteration as values, written back where it is left (`region::loops`).
//!
//! Before rewriting, the pass looks at the whole program ([`status`]): when nothing in it can read
//! the x87 status word, the regions call the quiet value forms, which compute values only.
//!
//! Exactness: the value forms are what the stack forms do when no stack fault happens. Whether
//! one can happen depends on the tags at run time, so each region starts with one test of the
//! tags the region needs (registers it reads before writing must be full, registers it pushes
//! into must be empty) and keeps the original code as the path taken when the test fails: the
//! guest sees the same state either way (docs/x87.md, "x87 regions").
//!
//! Where it comes from: ../shared/reference/001, "X87OPT" (a further -4 % of executed
//! instructions there, where x87 arithmetic was plain C on doubles).
//!
//! The pass knows the x86 guest's x87 helpers and slots by name ([`abi`]); on a guest without
//! them it changes nothing.

#![deny(missing_docs)]

pub mod abi;
mod region;
pub mod status;

use rpt_api::{FunctionContext, PassError, PassParams, PassPlugin, PluginInfo, ProgramAnalysis};
use rpt_ir::{Function, Program};

/// The pass's name in recipes and manifests.
pub const NAME: &str = "x87-regions";

/// The facts of every function of a program in which nothing reads the x87 status word.
const QUIET_FACTS: [u8; 1] = [1];

/// The x87-regions pass. It takes no parameters.
#[derive(Clone, Copy, Debug, Default)]
pub struct X87RegionsPass;

impl PassPlugin for X87RegionsPass {
    fn info(&self) -> PluginInfo {
        rpt_api::plugin_info!(NAME)
    }

    fn check_params(&self, params: &PassParams) -> Result<(), PassError> {
        rpt_api::refuse_params(NAME, params)
    }

    fn analyze(&self, program: &Program, _params: &PassParams) -> Result<Option<ProgramAnalysis>, PassError> {
        let Some(unit) = abi::Unit::find(&program.state, &program.helpers) else {
            return Ok(None);
        };
        let (facts, report) = match status::reader(program, &unit) {
            Some(why) => (
                Default::default(),
                format!("x87 status word: may be read ({why}); regions record it\n"),
            ),
            None => (
                program.functions.keys().map(|&a| (a, QUIET_FACTS.to_vec())).collect(),
                "x87 status word: never read; regions use the quiet value forms\n".to_string(),
            ),
        };
        Ok(Some(ProgramAnalysis { facts, report }))
    }

    fn run(&self, func: &mut Function, cx: &FunctionContext<'_>, _params: &PassParams) -> Result<(), PassError> {
        if let Some(unit) = abi::Unit::find(cx.state, cx.helpers) {
            let quiet = cx.facts == QUIET_FACTS;
            region::run_loops(func, cx.state, &unit, quiet);
            region::run(func, cx.state, &unit, quiet);
        }
        Ok(())
    }
}

/// Runs the pass over one function outside the plugin machinery (tests, benchmarks), as for a
/// program that may read the status word; returns the number of regions it rewrote (loops and
/// blocks), or `None` when the guest lacks the x87 slots and helpers.
pub fn run_on_function(
    func: &mut Function,
    state: &rpt_ir::StateDesc,
    helpers: &std::collections::BTreeMap<String, rpt_ir::HelperDecl>,
) -> Option<usize> {
    run_with_status(func, state, helpers, false)
}

/// [`run_on_function`], with `quiet` saying whether the program never reads the status word (the
/// regions then call the quiet value forms).
pub fn run_with_status(
    func: &mut Function,
    state: &rpt_ir::StateDesc,
    helpers: &std::collections::BTreeMap<String, rpt_ir::HelperDecl>,
    quiet: bool,
) -> Option<usize> {
    let unit = abi::Unit::find(state, helpers)?;
    let loops = region::run_loops(func, state, &unit, quiet);
    Some(loops + region::run(func, state, &unit, quiet))
}

/// This pass as rpt registers it (`framework/cli/Cargo.toml` lists the built-in ones).
pub fn plugin() -> rpt_api::Plugin {
    rpt_api::Plugin::Pass(std::sync::Arc::new(X87RegionsPass))
}
