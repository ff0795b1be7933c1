//! The whole-program fixed point: each function's entry-live flags and the flags its callers read
//! after it returns.

use std::collections::{BTreeMap, BTreeSet};

use rpt_ir::{Function, GuestAddr, HelperDecl};

use crate::flags::{FlagSet, FlagUniverse, Summary};
use crate::liveness::Context;

/// What the analysis needs of a program.
pub struct ProgramView<'a> {
    /// The guest's flags.
    pub universe: &'a FlagUniverse,
    /// The program's helpers.
    pub helpers: &'a BTreeMap<String, HelperDecl>,
    /// Every lifted function.
    pub functions: BTreeMap<GuestAddr, &'a Function>,
    /// Functions whose address is taken: the possible targets of every indirect call.
    pub address_taken: &'a BTreeSet<GuestAddr>,
    /// Externs that read no flag and pass every flag through.
    pub flag_transparent: &'a BTreeSet<GuestAddr>,
}

/// An indirect call after which flags are read: those flags are kept live at the return of every
/// address-taken function.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct ConservativeSite {
    /// The calling function.
    pub function: GuestAddr,
    /// The call instruction's address (the function's entry if the block has no mark).
    pub pc: GuestAddr,
    /// The flags read after the call.
    pub flags: FlagSet,
}

/// The program-wide result.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FlagAbi {
    /// Per lifted function and flag-transparent extern, what it does to flag liveness whoever
    /// calls it (absent for a lifted function: it reads none and writes every flag).
    pub summaries: BTreeMap<GuestAddr, Summary>,
    /// Per lifted function, the flags it reads before writing them given its `ret_live` (absent:
    /// none).
    pub entry_live: BTreeMap<GuestAddr, FlagSet>,
    /// Per lifted function, the flags some caller reads after it returns (absent: none).
    pub ret_live: BTreeMap<GuestAddr, FlagSet>,
    /// Indirect call sites whose flags are read after the call.
    pub conservative_sites: Vec<ConservativeSite>,
    /// The flags an indirect call's callee may read on entry: the union of what the address-taken
    /// functions read.
    pub indirect_reads: FlagSet,
}

impl FlagAbi {
    /// The flags callers read after `addr` returns.
    pub fn ret_live_of(&self, addr: GuestAddr) -> FlagSet {
        self.ret_live.get(&addr).copied().unwrap_or(FlagSet::EMPTY)
    }

    /// The flags `addr` reads before writing them, given what its callers read after it.
    pub fn entry_live_of(&self, addr: GuestAddr) -> FlagSet {
        self.entry_live.get(&addr).copied().unwrap_or(FlagSet::EMPTY)
    }

    /// What `addr` does to flag liveness (empty for a function that never reads a flag it did not
    /// write and always writes every flag).
    pub fn summary_of(&self, addr: GuestAddr) -> Summary {
        self.summaries.get(&addr).copied().unwrap_or_default()
    }
}

/// Runs the analysis to its fixed point, in two phases.
///
/// First each function's [`Summary`]: what it reads whatever its caller reads after it, and what
/// passes through it unwritten. A call site applies its callee's summary to its own live-after
/// flags, so liveness stays precise across calls (a flag one caller reads after a call is not
/// thought read by the callee at another caller's site). Then each function's `ret_live`, the union
/// over its call sites of the flags live after them, which tells the transform which of the
/// function's own flag writes reach a reader.
///
/// Every set starts empty and only grows; a function is re-solved when a function it calls
/// directly (or, for a function with indirect calls, any address-taken function) grows, or when
/// its own `ret_live` grows, so each phase ends after at most (functions × flags) growths.
/// Soundness rests on four conservative rules: a direct extern (unless the platform calls it
/// flag-transparent) and the runtime behind an `exit` read every flag; a helper that reads state or may exit reads every flag; an indirect call's
/// callee is one of the address-taken functions or a platform function (which reads no flag and
/// passes every flag through); and the flags read after an indirect call are live at the return
/// of every address-taken function. The runtime reads no flag after calling a function (entry
/// point, callback).
///
/// The indirect-call rule is the one the address-taken set already carries for returns: discovery
/// marks every function whose address appears in code or data, and an address computed otherwise
/// cannot reach a function at all today (it stops at `unlifted code`). A future run-time tier that
/// starts interpreting at such an address must take the flags as undefined on entry, as every
/// calling convention of rpt's guests does.
pub fn solve(view: &ProgramView<'_>) -> FlagAbi {
    let (summaries, indirect_reads) = summarize(view);
    let indirect_targets = indirect_targets(view);
    let lookup = |callee: GuestAddr| summaries.get(&callee).copied();

    let mut ret_live: BTreeMap<GuestAddr, FlagSet> = BTreeMap::new();
    let mut conservative: BTreeMap<(GuestAddr, GuestAddr), FlagSet> = BTreeMap::new();
    let mut queue: BTreeSet<GuestAddr> = view.functions.keys().copied().collect();
    while let Some(addr) = queue.pop_first() {
        let Some(func) = view.functions.get(&addr) else {
            continue;
        };
        let own_ret = ret_live.get(&addr).copied().unwrap_or(FlagSet::EMPTY);
        let ctx = Context {
            universe: view.universe,
            helpers: view.helpers,
            ret_live: own_ret,
            callee: &lookup,
            indirect_reads,
        };
        let liveness = ctx.solve(func);
        let mut grow_ret = |target: GuestAddr, flags: FlagSet, queue: &mut BTreeSet<GuestAddr>| {
            if !flags.is_empty()
                && view.functions.contains_key(&target)
                && ret_live.entry(target).or_default().insert(flags)
            {
                queue.insert(target);
            }
        };
        for site in &liveness.call_sites {
            let flags = if site.tail { own_ret } else { site.live_after };
            match site.direct {
                Some(callee) => grow_ret(callee, flags, &mut queue),
                None => {
                    if !site.tail && !flags.is_empty() {
                        conservative
                            .entry((addr, site.pc.unwrap_or(addr)))
                            .or_default()
                            .insert(flags);
                    }
                    for &target in &indirect_targets {
                        grow_ret(target, flags, &mut queue);
                    }
                }
            }
        }
    }
    ret_live.retain(|_, f| !f.is_empty());
    let entry_live = summaries
        .iter()
        .map(|(&addr, summary)| {
            let after = ret_live.get(&addr).copied().unwrap_or(FlagSet::EMPTY);
            (addr, summary.entry_live(after))
        })
        .filter(|(_, set)| !set.is_empty())
        .collect();
    FlagAbi {
        summaries: summaries
            .into_iter()
            .filter(|(_, s)| *s != Summary::default())
            .collect(),
        entry_live,
        ret_live,
        conservative_sites: conservative
            .into_iter()
            .map(|((function, pc), flags)| ConservativeSite { function, pc, flags })
            .collect(),
        indirect_reads,
    }
}

/// The address-taken functions that were lifted: the possible targets of every indirect call.
fn indirect_targets(view: &ProgramView<'_>) -> Vec<GuestAddr> {
    view.address_taken
        .iter()
        .filter(|a| view.functions.contains_key(a))
        .copied()
        .collect()
}

/// The first phase: every function's summary, and what indirect callees read.
fn summarize(view: &ProgramView<'_>) -> (BTreeMap<GuestAddr, Summary>, FlagSet) {
    let mut callers: BTreeMap<GuestAddr, BTreeSet<GuestAddr>> = BTreeMap::new();
    let mut indirect_callers = BTreeSet::new();
    for (&addr, func) in &view.functions {
        let (direct, indirect) = func.callees();
        for callee in direct {
            callers.entry(callee).or_default().insert(addr);
        }
        if indirect {
            indirect_callers.insert(addr);
        }
    }
    let address_taken: BTreeSet<GuestAddr> = indirect_targets(view).into_iter().collect();
    let mut summaries: BTreeMap<GuestAddr, Summary> =
        view.functions.keys().map(|&addr| (addr, Summary::default())).collect();
    let transparent = Summary {
        reads: FlagSet::EMPTY,
        passes: view.universe.all(),
    };
    for &addr in view.flag_transparent {
        summaries.entry(addr).or_insert(transparent);
    }
    let mut indirect_reads = FlagSet::EMPTY;
    let mut queue: BTreeSet<GuestAddr> = view.functions.keys().copied().collect();
    while let Some(addr) = queue.pop_first() {
        let Some(func) = view.functions.get(&addr) else {
            continue;
        };
        let lookup = |callee: GuestAddr| summaries.get(&callee).copied();
        let at_return = |ret_live: FlagSet| {
            Context {
                universe: view.universe,
                helpers: view.helpers,
                ret_live,
                callee: &lookup,
                indirect_reads,
            }
            .solve(func)
            .entry_live()
        };
        let found = Summary {
            reads: at_return(FlagSet::EMPTY),
            passes: at_return(view.universe.all()),
        };
        let grew = summaries.entry(addr).or_default().insert(found);
        if grew {
            queue.extend(callers.get(&addr).into_iter().flatten().copied());
            if address_taken.contains(&addr) && indirect_reads.insert(found.reads) {
                queue.extend(indirect_callers.iter().copied());
            }
        }
    }
    (summaries, indirect_reads)
}
