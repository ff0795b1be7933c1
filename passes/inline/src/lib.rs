//! passes/inline: small leaf functions copied into their callers, and indirect calls through
//! tables of function addresses turned into checked direct calls first.
//!
//! A call between lifted functions costs far more than the guest's `call`: the caller hands its
//! registers over through `struct cpu` and takes them back, the callee loads and stores them, and
//! an indirect call looks its target up in the direct table. For the callbacks, comparators,
//! operation tables and virtual methods games are full of, that is most of the work: an `op_add`
//! of four guest instructions costs some thirty host ones. Copied into its caller, the callee's
//! code reads and writes the caller's own locals, and the call is gone.
//!
//! - A function is *inlinable* when it is a leaf of at most [`MAX_INSTS`] instructions in at most
//!   [`MAX_BLOCKS`] blocks: it calls nothing, never exits to the runtime, and calls no helper that
//!   may leave lifted code or sees guest state in `struct cpu`. Every direct call of one is replaced by a copy of its blocks, its
//!   returns jumping to the call's continuation. The copy keeps the callee's `mark`s, so a fault
//!   inside it reports the callee's guest address, and its stack traffic (the return address the
//!   caller pushed, the callee's own pushes) stays in guest memory as the guest wrote it.
//! - An indirect call whose target is loaded from a table of function addresses the image holds
//!   (`Program::pointer_tables`) is checked against that table's functions first: `table[i]` with
//!   a constant table address (an operation table; every function from that word to the table's
//!   end), or a word at a constant offset from a pointer loaded from memory (a virtual call: the
//!   word at that offset of every table). A target equal to one of at most [`MAX_CANDIDATES`]
//!   inlinable candidates runs its copy; any other goes through the indirect call as before. The
//!   tables only suggest; the check makes the call right whatever the program stored there. A
//!   target that is a register's value on entry (a comparator passed down a sort's recursion) is
//!   checked against the constants the function's direct callers pass in it.
//!
//! Which slot a target was read from is followed back through `set`s in the block and its
//! predecessors ([`candidates`]), so a target loaded in one block and called in the next (a
//! rotated loop) is found. The pass runs first in the pipeline: flag-abi then sees the copies in
//! their callers and drops the flag writes no caller reads.

#![deny(missing_docs)]

use std::collections::{BTreeMap, BTreeSet};

use rpt_api::{FunctionContext, PassError, PassParams, PassPlugin, PluginInfo, ProgramAnalysis};
use rpt_ir::{CallTarget, Function, GuestAddr, HelperDecl, InstKind, Program, SlotId, SlotRole, StateDesc, Terminator};

mod candidates;
mod facts;
mod splice;

pub use candidates::{candidates, constants_passed};
pub use facts::Plan;
pub use splice::apply;

/// The pass's name in recipes and manifests.
pub const NAME: &str = "inline";

/// The most instructions with an effect the guest sees (loads, stores, helper calls, writes of
/// registers other than flags) an inlinable function may have. Flag computations are not
/// counted: flag-abi drops those no caller reads once the copy is in its caller.
pub const MAX_EFFECTS: usize = 24;

/// The most instructions (`mark`s aside) an inlinable function may have, flag computations and all.
pub const MAX_INSTS: usize = 256;

/// The most blocks an inlinable function may have.
pub const MAX_BLOCKS: usize = 8;

/// The most functions an indirect call is checked against; a target with more candidates (a
/// virtual call whose offset many tables have) keeps its plain indirect call.
pub const MAX_CANDIDATES: usize = 8;

/// Whether `func` may be copied into its callers: a small leaf that never leaves lifted code.
pub fn inlinable(func: &Function, state: &StateDesc, helpers: &BTreeMap<String, HelperDecl>) -> bool {
    if func.blocks.is_empty() || func.blocks.len() > MAX_BLOCKS || !func.blocks[0].params.is_empty() {
        return false;
    }
    let mut insts = 0;
    let mut effects = 0;
    let mut returns = false;
    for block in &func.blocks {
        match &block.term {
            Terminator::Return => returns = true,
            Terminator::Jump(_) | Terminator::Branch { .. } | Terminator::Switch { .. } | Terminator::Unreachable => {}
            Terminator::Call { .. } | Terminator::TailCall { .. } | Terminator::Exit { .. } => return false,
        }
        for inst in &block.insts {
            match &inst.kind {
                InstKind::Mark { .. } => continue,
                // A helper that sees guest state through `struct cpu` (a system call naming the
                // registers it reads) would keep those registers out of C locals in every caller.
                InstKind::CallHelper { helper, .. }
                    if helpers
                        .get(helper)
                        .is_none_or(|h| h.effects.may_exit || h.effects.reads_state || h.effects.writes_state) =>
                {
                    return false;
                }
                InstKind::SetSlot { slot, .. } | InstKind::SetIndexed { slot, .. }
                    if state.get(*slot).is_some_and(|s| s.role == SlotRole::Flag) =>
                {
                    insts += 1
                }
                InstKind::SetSlot { .. }
                | InstKind::SetIndexed { .. }
                | InstKind::Load { .. }
                | InstKind::Store { .. }
                | InstKind::CallHelper { .. } => {
                    insts += 1;
                    effects += 1;
                }
                _ => insts += 1,
            }
        }
    }
    returns && insts <= MAX_INSTS && effects <= MAX_EFFECTS
}

/// What the pass does to each function of `program`: the indirect calls to check against
/// candidates, and the bodies of the inlinable functions it calls or may call. Functions with
/// nothing to do are absent.
pub fn plan(program: &Program) -> BTreeMap<GuestAddr, Plan> {
    let inlinable: BTreeSet<GuestAddr> = program
        .functions
        .values()
        .filter(|f| !program.externs.contains_key(&f.entry) && inlinable(f, &program.state, &program.helpers))
        .map(|f| f.entry)
        .collect();
    // Where each function is called directly: what its callers pass it.
    let mut callers: BTreeMap<GuestAddr, Vec<(GuestAddr, usize)>> = BTreeMap::new();
    for func in program.functions.values() {
        for (b, block) in func.blocks.iter().enumerate() {
            if let Terminator::Call {
                target: CallTarget::Direct(callee),
                ..
            }
            | Terminator::TailCall {
                target: CallTarget::Direct(callee),
            } = &block.term
            {
                callers.entry(*callee).or_default().push((func.entry, b));
            }
        }
    }
    let mut plans = BTreeMap::new();
    for func in program.functions.values() {
        // A register's entry value is what the direct callers pass, when only they can call
        // (indirect calls reach the address-taken functions).
        let on_entry = |slot: SlotId| -> Option<BTreeSet<GuestAddr>> {
            if program.address_taken.contains(&func.entry) {
                return None;
            }
            let mut out = BTreeSet::new();
            for &(caller, b) in callers.get(&func.entry)? {
                let caller = program.functions.get(&caller)?;
                out.extend(
                    constants_passed(caller, b, slot, func.entry)?
                        .into_iter()
                        .map(GuestAddr),
                );
            }
            Some(out)
        };
        let mut plan = Plan::default();
        for (block, found) in candidates(func, &program.pointer_tables, &on_entry) {
            // A candidate that is not inlinable would only trade the table lookup for a compare.
            let checked: Vec<GuestAddr> = found.into_iter().filter(|a| inlinable.contains(a)).collect();
            if !checked.is_empty() {
                plan.sites.insert(block, checked);
            }
        }
        let mut callees: BTreeSet<GuestAddr> = plan.sites.values().flatten().copied().collect();
        for block in &func.blocks {
            if let Terminator::Call {
                target: CallTarget::Direct(addr),
                ..
            } = &block.term
                && inlinable.contains(addr)
            {
                callees.insert(*addr);
            }
        }
        for addr in callees {
            if let Some(body) = program.functions.get(&addr) {
                plan.bodies.insert(addr, body.clone());
            }
        }
        if !plan.bodies.is_empty() {
            plans.insert(func.entry, plan);
        }
    }
    plans
}

/// The inline pass. It takes no parameters.
#[derive(Clone, Copy, Debug, Default)]
pub struct InlinePass;

impl PassPlugin for InlinePass {
    fn check_params(&self, params: &PassParams) -> Result<(), PassError> {
        rpt_api::refuse_params(NAME, params)
    }

    fn analyze(&self, program: &Program, _params: &PassParams) -> Result<Option<ProgramAnalysis>, PassError> {
        let plans = plan(program);

        let sites: usize = plans.values().map(|p| p.sites.len()).sum();
        let callees: BTreeSet<GuestAddr> = plans.values().flat_map(|p| p.bodies.keys().copied()).collect();
        let report = format!(
            "{} functions call {} inlinable ones; {} indirect calls checked against table candidates first\n",
            plans.len(),
            callees.len(),
            sites
        );
        let facts = plans
            .iter()
            .map(|(addr, plan)| (*addr, plan.encode(&program.state).into_bytes()))
            .collect();
        Ok(Some(ProgramAnalysis { facts, report }))
    }

    fn run(&self, func: &mut Function, cx: &FunctionContext<'_>, _params: &PassParams) -> Result<(), PassError> {
        if cx.facts.is_empty() {
            return Ok(());
        }
        let text = std::str::from_utf8(cx.facts).map_err(|e| PassError::Failed(format!("facts are not text: {e}")))?;
        let plan = Plan::decode(text, cx.state).map_err(PassError::Failed)?;
        apply(func, &plan);
        Ok(())
    }

    fn info(&self) -> PluginInfo {
        rpt_api::plugin_info!(NAME)
    }
}

/// This pass as rpt registers it (`framework/cli/Cargo.toml` lists the built-in ones).
pub fn plugin() -> rpt_api::Plugin {
    rpt_api::Plugin::Pass(std::sync::Arc::new(InlinePass))
}
