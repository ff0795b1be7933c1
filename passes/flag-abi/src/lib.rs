//! passes/flag-abi: the flag ABI, a whole-program liveness analysis of guest flags across calls.
//!
//! A lifter that cannot see across calls must assume a callee reads every flag its caller left and
//! that a caller reads every flag its callee leaves, so the last flag-setting instruction before
//! every `call` and `ret` computes and stores all of its flags. Compilers never use flags that way,
//! and this pass proves it per program: at a fixed point over the call graph it computes each
//! function's entry-live flags and the flags its callers read after it returns
//! ([`solve::solve`]), then drops, function by function, every flag write nothing can read
//! ([`rewrite::remove_dead_flag_writes`]). Only the functions and call sites that really pass flags
//! keep them; the [`Audit`] lists those, and goes into the generation's manifest so two
//! generations' flag ABIs can be compared. The analysis is generic over guests: it reasons about
//! the state slots with the `flag` role (x86 CF..OF, PowerPC CR fields and XER bits, 65816 P bits).
//! ../shared/reference/001 ("FLAGABI") is where the idea was measured first.

#![deny(missing_docs)]

pub mod flags;
pub mod liveness;
mod plugin;
pub mod rewrite;
pub mod solve;

use std::collections::BTreeMap;
use std::fmt::Write;

use rpt_ir::{Function, GuestAddr, HelperDecl, Program, StateDesc};

pub use flags::{FlagSet, FlagUniverse, Summary, UniverseError};
pub use liveness::Context;
pub use plugin::{FlagAbiPass, plugin};
pub use rewrite::{FunctionFacts, Removed};
pub use solve::{FlagAbi, ProgramView};

/// The pass's name in recipes and manifests.
pub const NAME: &str = "flag-abi";

/// Runs the analysis over every function of `program`.
pub fn analyze(program: &Program) -> Result<(FlagUniverse, FlagAbi), UniverseError> {
    let universe = FlagUniverse::new(&program.state)?;
    let view = ProgramView {
        universe: &universe,
        helpers: &program.helpers,
        functions: program.functions.iter().map(|(a, f)| (*a, f)).collect(),
        address_taken: &program.address_taken,
        flag_transparent: &program.flag_transparent,
    };
    let abi = solve::solve(&view);
    Ok((universe, abi))
}

/// What the transform of `func` needs from the analysis; `is_lifted` tells lifted functions from
/// externs. Caching the transform on this projection, not on the whole result, keeps a change in
/// one function from re-transforming functions whose facts stayed the same.
pub fn facts_for(abi: &FlagAbi, func: &Function, is_lifted: impl Fn(GuestAddr) -> bool) -> FunctionFacts {
    let (direct, indirect) = func.callees();
    FunctionFacts {
        ret_live: abi.ret_live_of(func.entry),
        // Only functions that make indirect calls depend on the union, so a change in it leaves
        // every other function's facts (and cached transform) alone.
        indirect_reads: if indirect { abi.indirect_reads } else { FlagSet::EMPTY },
        callees: direct
            .into_iter()
            .filter(|a| is_lifted(*a) || abi.summaries.contains_key(a))
            .map(|a| (a, abi.summary_of(a)))
            .collect(),
    }
}

/// Transforms one function with its facts.
pub fn apply(
    func: &mut Function,
    state: &StateDesc,
    helpers: &BTreeMap<String, HelperDecl>,
    facts: &FunctionFacts,
) -> Result<Removed, UniverseError> {
    let universe = FlagUniverse::new(state)?;
    let lookup = |addr: GuestAddr| facts.callees.get(&addr).copied();
    let ctx = Context {
        universe: &universe,
        helpers,
        ret_live: facts.ret_live,
        callee: &lookup,
        indirect_reads: facts.indirect_reads,
    };
    Ok(rewrite::remove_dead_flag_writes(func, &ctx))
}

/// Analyses and transforms a whole program in place; returns the audit.
pub fn run_on_program(program: &mut Program) -> Result<Audit, UniverseError> {
    let (universe, abi) = analyze(program)?;
    let lifted: Vec<GuestAddr> = program.functions.keys().copied().collect();
    let mut removed = Removed::default();
    for func in program.functions.values_mut() {
        let facts = facts_for(&abi, func, |a| lifted.binary_search(&a).is_ok());
        let r = apply(func, &program.state, &program.helpers, &facts)?;
        removed.flag_writes += r.flag_writes;
        removed.dead_values += r.dead_values;
        removed.kills += r.kills;
    }
    Ok(Audit::new(&abi, &universe, &program.state, lifted.len(), Some(removed)))
}

/// The analysis's findings in a stable text form, for the manifest and `rpt recompile --report`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Audit {
    /// The report text: a summary line, then one line per flag-returning function, entry-live
    /// function and conservative site, each sorted by address.
    pub text: String,
}

impl Audit {
    /// Renders the result of [`solve::solve`].
    /// `removed`, when given, adds the counts of a whole-program transform to the summary line.
    pub fn new(
        abi: &FlagAbi,
        universe: &FlagUniverse,
        state: &StateDesc,
        functions: usize,
        removed: Option<Removed>,
    ) -> Audit {
        let names = |set: FlagSet| universe.names(set, state).join(" ");
        let mut text = String::new();
        // Writing to a String cannot fail.
        let _ = write!(
            text,
            "flag-abi: {functions} functions, {} flag-returning, {} entry-live, {} conservative sites",
            abi.ret_live.len(),
            abi.entry_live.len(),
            abi.conservative_sites.len(),
        );
        if let Some(removed) = removed {
            let _ = write!(
                text,
                "; {} flag writes and {} values removed, {} kills added",
                removed.flag_writes, removed.dead_values, removed.kills
            );
        }
        text.push('\n');
        for (addr, set) in &abi.ret_live {
            let _ = writeln!(text, "flag-returning {}: {}", addr.function_name(), names(*set));
        }
        for (addr, set) in &abi.entry_live {
            let _ = writeln!(text, "entry-live {}: {}", addr.function_name(), names(*set));
        }
        if !abi.indirect_reads.is_empty() {
            let _ = writeln!(text, "indirect-callee-reads: {}", names(abi.indirect_reads));
        }
        for site in &abi.conservative_sites {
            let _ = writeln!(
                text,
                "conservative-site {} at {}: {}",
                site.function.function_name(),
                site.pc,
                names(site.flags)
            );
        }
        Audit { text }
    }
}
