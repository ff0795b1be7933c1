//! passes/x87-regions: x87 register allocation within a block.
//!
//! The x86 guest lifts each x87 instruction to one call of a stack-form helper, which finds
//! `st(i)` at run time as physical register `(TOP + i) mod 8`, checks its tag, and loads and stores
//! it through the guest state. Within a straight run of x87 instructions the stack depth is known
//! at compile time, so this pass turns such a run (a *region*) into code where `st(i)` is a plain
//! IR value: a register the region reads before writing is loaded once, each instruction becomes a
//! value-form helper call (`x87_v*`, which computes and updates the status word but touches no
//! register) or nothing at all (`fld st(i)`, `fxch`, `fst st(i)` are renamings), and at the region's
//! end only the registers it changed are written back, with TOP and the tags updated once.
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

use rpt_api::FunctionPass;
use rpt_ir::Function;

/// The pass's name in recipes and manifests.
pub const NAME: &str = "x87-regions";

/// The x87-regions pass. It takes no parameters.
pub const PASS: FunctionPass = FunctionPass {
    info: || rpt_api::plugin_info!(NAME),
    run: |func, cx| {
        if let Some(unit) = abi::Unit::find(cx.state, cx.helpers) {
            region::run(func, cx.state, &unit);
        }
        Ok(())
    },
};

/// Runs the pass over one function outside the plugin machinery (tests, benchmarks); returns the
/// number of regions it rewrote, or `None` when the guest lacks the x87 slots and helpers.
pub fn run_on_function(
    func: &mut Function,
    state: &rpt_ir::StateDesc,
    helpers: &std::collections::BTreeMap<String, rpt_ir::HelperDecl>,
) -> Option<usize> {
    let unit = abi::Unit::find(state, helpers)?;
    Some(region::run(func, state, &unit))
}

/// This pass as rpt registers it (`framework/cli/Cargo.toml` lists the built-in ones).
pub fn plugin() -> rpt_api::Plugin {
    rpt_api::Plugin::Pass(std::sync::Arc::new(PASS))
}
