//! The whole-program fixed point: each function's entry-live flags and the flags its callers read
//! after it returns.

use std::collections::{BTreeMap, BTreeSet};

use rpt_ir::{Function, GuestAddr, HelperDecl};

use crate::flags::{FlagSet, FlagUniverse};
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
    /// Per lifted function, the flags it reads before writing them (absent: none).
    pub entry_live: BTreeMap<GuestAddr, FlagSet>,
    /// Per lifted function, the flags some caller reads after it returns (absent: none).
    pub ret_live: BTreeMap<GuestAddr, FlagSet>,
    /// Indirect call sites whose flags are read after the call.
    pub conservative_sites: Vec<ConservativeSite>,
}

impl FlagAbi {
    /// The flags callers read after `addr` returns.
    pub fn ret_live_of(&self, addr: GuestAddr) -> FlagSet {
        self.ret_live.get(&addr).copied().unwrap_or(FlagSet::EMPTY)
    }

    /// The flags `addr` reads before writing them.
    pub fn entry_live_of(&self, addr: GuestAddr) -> FlagSet {
        self.entry_live.get(&addr).copied().unwrap_or(FlagSet::EMPTY)
    }
}

/// Runs the analysis to its fixed point.
///
/// Every set starts empty and only grows; a function is re-solved when its own `ret_live` grows or a
/// function it calls directly gains entry-live flags, so the loop ends after at most
/// (functions × flags) growths. Soundness rests on three conservative rules: an extern, an indirect
/// callee and the runtime behind an `exit` read every flag; a helper that reads state or may exit reads
/// every flag; and the flags read after an indirect call are live at the return of every address-taken
/// function. The runtime reads no flag after calling a function (entry point, callback).
pub fn solve(view: &ProgramView<'_>) -> FlagAbi {
    let mut callers: BTreeMap<GuestAddr, BTreeSet<GuestAddr>> = BTreeMap::new();
    for (&addr, func) in &view.functions {
        for callee in func.callees().0 {
            callers.entry(callee).or_default().insert(addr);
        }
    }
    let indirect_targets: Vec<GuestAddr> = view
        .address_taken
        .iter()
        .filter(|a| view.functions.contains_key(a))
        .copied()
        .collect();

    let mut entry_live: BTreeMap<GuestAddr, FlagSet> = BTreeMap::new();
    let mut ret_live: BTreeMap<GuestAddr, FlagSet> = BTreeMap::new();
    let mut conservative: BTreeMap<(GuestAddr, GuestAddr), FlagSet> = BTreeMap::new();
    let mut queue: BTreeSet<GuestAddr> = view.functions.keys().copied().collect();

    while let Some(addr) = queue.pop_first() {
        let Some(func) = view.functions.get(&addr) else {
            continue;
        };
        let own_ret = ret_live.get(&addr).copied().unwrap_or(FlagSet::EMPTY);
        let lookup = |callee: GuestAddr| {
            view.functions
                .contains_key(&callee)
                .then(|| entry_live.get(&callee).copied().unwrap_or(FlagSet::EMPTY))
        };
        let ctx = Context {
            universe: view.universe,
            helpers: view.helpers,
            ret_live: own_ret,
            callee_entry: &lookup,
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
        let entry = liveness.entry_live();
        if !entry.is_empty() && entry_live.entry(addr).or_default().insert(entry) {
            queue.extend(callers.get(&addr).into_iter().flatten().copied());
        }
    }
    ret_live.retain(|_, f| !f.is_empty());
    FlagAbi {
        entry_live,
        ret_live,
        conservative_sites: conservative
            .into_iter()
            .map(|((function, pc), flags)| ConservativeSite { function, pc, flags })
            .collect(),
    }
}
