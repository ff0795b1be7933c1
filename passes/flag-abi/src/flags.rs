//! Which state slots are flags, and sets of them.
//!
//! The analysis is generic over guests: a flag is any non-array slot with [`SlotRole::Flag`] (x86's
//! CF..OF, a PowerPC CR field or XER bit, a 65816 status bit). Slots are tracked as whole units:
//! a 4-bit CR field is live or dead as one. Reading or writing the plain parent of packed flags
//! (`mfcr`, `mtcrf`, a whole-XER move) reads or writes every flag packed in it.

use rpt_ir::{SlotId, SlotLayout, SlotRole, StateDesc};

/// A set of flags of one [`FlagUniverse`], as a bit per flag.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FlagSet(pub u128);

impl FlagSet {
    /// No flag.
    pub const EMPTY: FlagSet = FlagSet(0);

    /// Whether the set holds no flag.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// Whether every flag of `other` is in this set.
    pub fn contains(self, other: FlagSet) -> bool {
        self.0 & other.0 == other.0
    }

    /// Whether the two sets share a flag.
    pub fn intersects(self, other: FlagSet) -> bool {
        self.0 & other.0 != 0
    }

    /// Adds every flag of `other`; true if the set grew.
    pub fn insert(&mut self, other: FlagSet) -> bool {
        let before = self.0;
        self.0 |= other.0;
        self.0 != before
    }

    /// The union.
    pub fn union(self, other: FlagSet) -> FlagSet {
        FlagSet(self.0 | other.0)
    }

    /// The flags of this set not in `other`.
    pub fn minus(self, other: FlagSet) -> FlagSet {
        FlagSet(self.0 & !other.0)
    }

    /// The flags in both sets.
    pub fn intersect(self, other: FlagSet) -> FlagSet {
        FlagSet(self.0 & other.0)
    }
}

/// What a lifted function does to flag liveness, whoever calls it: with `R` the flags live when it
/// returns, the flags live at its entry are `reads ∪ (R ∩ passes)`.
///
/// Flag liveness is a union of independent per-flag facts (each flag is read, written or passed
/// along by every instruction on its own), so this pair describes a function exactly, and a call
/// site can apply it to its own live-after flags: a flag one caller reads after the call no longer
/// leaks into the entry-live flags that another caller sees.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Summary {
    /// The flags it reads before writing them on some path, whatever its caller reads after.
    pub reads: FlagSet,
    /// The flags that reach its return unwritten on some path (may include flags of `reads`).
    pub passes: FlagSet,
}

impl Summary {
    /// The flags live at entry when `after` are live at the return.
    pub fn entry_live(self, after: FlagSet) -> FlagSet {
        self.reads.union(after.intersect(self.passes))
    }

    /// Grows this summary by `other`; whether it changed.
    pub fn insert(&mut self, other: Summary) -> bool {
        let reads_grew = self.reads.insert(other.reads);
        self.passes.insert(other.passes) || reads_grew
    }
}

/// The most flags one guest may declare; a guest with more would need a wider [`FlagSet`].
pub const MAX_FLAGS: usize = 128;

/// The flags of one guest's register file and how slot accesses touch them.
#[derive(Clone, Debug)]
pub struct FlagUniverse {
    /// The flag slots in declaration order; a flag's bit in a [`FlagSet`] is its position here.
    flags: Vec<SlotId>,
    /// For every slot id, the flags an access to that slot touches (itself, or its packed flags).
    touches: Vec<FlagSet>,
    /// The flags that are plain slots (not packed in a word).
    plain: FlagSet,
}

/// A register file the analysis cannot describe.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum UniverseError {
    /// More flag slots than a [`FlagSet`] holds.
    #[error("the guest declares {0} flag slots; flag-abi handles at most {MAX_FLAGS}")]
    TooManyFlags(usize),
}

impl FlagUniverse {
    /// The flags of `state`.
    pub fn new(state: &StateDesc) -> Result<FlagUniverse, UniverseError> {
        let flags: Vec<SlotId> = state
            .iter()
            .filter(|(_, s)| s.role == SlotRole::Flag && !matches!(s.layout, SlotLayout::Array { .. }))
            .map(|(id, _)| id)
            .collect();
        if flags.len() > MAX_FLAGS {
            return Err(UniverseError::TooManyFlags(flags.len()));
        }
        let mut touches = vec![FlagSet::EMPTY; state.len()];
        let mut plain = FlagSet::EMPTY;
        for (bit, &id) in flags.iter().enumerate() {
            let own = FlagSet(1 << bit);
            touches[id.index()].insert(own);
            match state.slot(id).layout {
                SlotLayout::Packed { parent, .. } => {
                    touches[parent.index()].insert(own);
                }
                _ => {
                    plain.insert(own);
                }
            }
        }
        Ok(FlagUniverse { flags, touches, plain })
    }

    /// Every flag.
    pub fn all(&self) -> FlagSet {
        match self.flags.len() {
            MAX_FLAGS => FlagSet(u128::MAX),
            n => FlagSet((1u128 << n) - 1),
        }
    }

    /// The flags a read or write of `slot` touches (empty for a slot holding no flag).
    pub fn touched_by(&self, slot: SlotId) -> FlagSet {
        self.touches.get(slot.index()).copied().unwrap_or(FlagSet::EMPTY)
    }

    /// The plain flag slots among `set` (packed flags share a word with others), in declaration
    /// order.
    pub fn plain_slots(&self, set: FlagSet) -> impl Iterator<Item = SlotId> + '_ {
        let wanted = set.intersect(self.plain);
        self.flags
            .iter()
            .enumerate()
            .filter(move |(bit, _)| wanted.0 & (1 << bit) != 0)
            .map(|(_, &id)| id)
    }

    /// Whether `slot` is itself a flag (so a write of it can be dropped when the flag is dead).
    pub fn is_flag(&self, slot: SlotId) -> bool {
        self.flags.contains(&slot)
    }

    /// The names of the flags in `set`, in declaration order.
    pub fn names(&self, set: FlagSet, state: &StateDesc) -> Vec<String> {
        self.flags
            .iter()
            .enumerate()
            .filter(|(bit, _)| set.0 & (1 << bit) != 0)
            .map(|(_, &id)| state.slot(id).name.clone())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rpt_ir::{Slot, Type};

    #[test]
    fn packed_flags_are_touched_through_their_parent() {
        let mut state = StateDesc::new();
        let cr = state.plain("cr", Type::I32, SlotRole::Special).unwrap();
        let cr0 = state
            .add(Slot {
                name: "cr0".into(),
                ty: Type::I8,
                role: SlotRole::Flag,
                layout: SlotLayout::Packed {
                    parent: cr,
                    lsb: 28,
                    bits: 4,
                },
            })
            .unwrap();
        let cf = state.plain("cf", Type::I1, SlotRole::Flag).unwrap();
        let eax = state.plain("eax", Type::I32, SlotRole::Gpr).unwrap();
        let u = FlagUniverse::new(&state).unwrap();
        assert_eq!(u.touched_by(cr0), FlagSet(1));
        assert_eq!(u.touched_by(cr), FlagSet(1));
        assert_eq!(u.touched_by(cf), FlagSet(2));
        assert_eq!(u.touched_by(eax), FlagSet::EMPTY);
        assert!(u.is_flag(cr0) && !u.is_flag(cr));
        assert_eq!(u.all(), FlagSet(3));
        assert_eq!(u.names(u.all(), &state), ["cr0", "cf"]);
    }
}
