//! The guest register file as named state slots.
//!
//! A slot is plain (its own storage), a packed bit field of a wider plain slot
//! (a PowerPC CR nibble, an XER bit), or an indexed array (the x87 stack, GQRs).
//! The C backend derives the CPU struct from this description, and passes find
//! the flags they reason about through [`SlotRole::Flag`].

use crate::{SlotId, Type};

/// What a slot means to the guest; passes select slots by role.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
pub enum SlotRole {
    /// A general-purpose integer register.
    Gpr,
    /// A floating-point register.
    Fpr,
    /// A condition flag (one bit or a small field of condition bits).
    Flag,
    /// Anything else: program counter, control words, segment bases, stack top.
    Special,
}

impl SlotRole {
    /// Every role, in text-form order.
    pub const ALL: [SlotRole; 4] = [SlotRole::Gpr, SlotRole::Fpr, SlotRole::Flag, SlotRole::Special];

    /// The text-form spelling.
    pub fn name(self) -> &'static str {
        match self {
            SlotRole::Gpr => "gpr",
            SlotRole::Fpr => "fpr",
            SlotRole::Flag => "flag",
            SlotRole::Special => "special",
        }
    }

    /// Parses the text-form spelling.
    pub fn from_name(name: &str) -> Option<SlotRole> {
        SlotRole::ALL.into_iter().find(|r| r.name() == name)
    }
}

/// A set of slot roles (the state-in-memory pass names the classes of slots kept in C locals).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
pub struct RoleSet(u8);

impl RoleSet {
    /// No roles.
    pub const EMPTY: RoleSet = RoleSet(0);

    fn bit(role: SlotRole) -> u8 {
        1 << SlotRole::ALL.iter().position(|r| *r == role).unwrap_or(0)
    }

    /// The set of `roles`.
    pub fn of(roles: &[SlotRole]) -> RoleSet {
        RoleSet(roles.iter().fold(0, |acc, r| acc | RoleSet::bit(*r)))
    }

    /// Whether `role` is in the set.
    pub fn contains(self, role: SlotRole) -> bool {
        self.0 & RoleSet::bit(role) != 0
    }

    /// Whether the set is empty.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The roles of either set.
    pub fn union(self, other: RoleSet) -> RoleSet {
        RoleSet(self.0 | other.0)
    }

    /// The roles in the set, in [`SlotRole::ALL`] order.
    pub fn roles(self) -> Vec<SlotRole> {
        SlotRole::ALL.into_iter().filter(|r| self.contains(*r)).collect()
    }
}

/// Where a slot's bits live.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
pub enum SlotLayout {
    /// The slot has storage of its own.
    Plain,
    /// The slot is `bits` bits of the plain integer slot `parent`, starting at bit `lsb`.
    Packed {
        /// The wider slot holding the field.
        parent: SlotId,
        /// The lowest bit of the field within the parent (bit 0 = least significant).
        lsb: u8,
        /// The field's width in bits.
        bits: u8,
    },
    /// The slot is an array of `len` elements of the slot's type, addressed by an index
    /// taken modulo `len` (so an x87 stack index wraps the way the hardware's does).
    Array {
        /// Number of elements.
        len: u32,
    },
}

/// One named slot of guest state.
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Slot {
    /// The name used in IR text and as the C struct field (`eax`, `cr0`, `st`).
    pub name: String,
    /// The type of the slot (of each element, for arrays).
    pub ty: Type,
    /// What the slot is to the guest.
    pub role: SlotRole,
    /// Where its bits live.
    pub layout: SlotLayout,
}

/// The guest's whole register file.
///
/// It crosses plugin boundaries as its slot list and is rebuilt with [`StateDesc::add`] on the
/// other side, so a description read from a plugin is checked like one built in process.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize)]
#[serde(into = "Vec<Slot>", try_from = "Vec<Slot>")]
pub struct StateDesc {
    slots: Vec<Slot>,
}

/// A reason a slot cannot be added to a [`StateDesc`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum StateError {
    /// Two slots share a name.
    #[error("state slot `{0}` is declared twice")]
    Duplicate(String),
    /// A name that is not a C identifier.
    #[error("state slot name `{0}` is not an identifier (letters, digits, `_`, not starting with a digit)")]
    BadName(String),
    /// A packed field whose parent is not a plain integer slot, or that does not fit it.
    #[error("packed slot `{name}` does not fit in its parent `{parent}`: {why}")]
    BadPacked {
        /// The packed slot.
        name: String,
        /// Its parent.
        parent: String,
        /// What is wrong.
        why: &'static str,
    },
}

/// Whether `name` can be a slot name (and so a C field name).
pub fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

impl From<StateDesc> for Vec<Slot> {
    fn from(state: StateDesc) -> Vec<Slot> {
        state.slots
    }
}

impl TryFrom<Vec<Slot>> for StateDesc {
    type Error = StateError;

    fn try_from(slots: Vec<Slot>) -> Result<StateDesc, StateError> {
        let mut state = StateDesc::new();
        for slot in slots {
            state.add(slot)?;
        }
        Ok(state)
    }
}

impl StateDesc {
    /// An empty register file.
    pub fn new() -> StateDesc {
        StateDesc::default()
    }

    /// Adds a slot, checking its name and, for packed slots, its parent.
    pub fn add(&mut self, slot: Slot) -> Result<SlotId, StateError> {
        if !is_identifier(&slot.name) {
            return Err(StateError::BadName(slot.name));
        }
        if self.find(&slot.name).is_some() {
            return Err(StateError::Duplicate(slot.name));
        }
        if let SlotLayout::Packed { parent, lsb, bits } = slot.layout {
            let bad = |why| StateError::BadPacked {
                name: slot.name.clone(),
                parent: self
                    .slots
                    .get(parent.index())
                    .map_or_else(|| parent.to_string(), |p| p.name.clone()),
                why,
            };
            let Some(p) = self.slots.get(parent.index()) else {
                return Err(bad("the parent is not declared before it"));
            };
            if p.layout != SlotLayout::Plain || !p.ty.is_int() {
                return Err(bad("the parent must be a plain integer slot"));
            }
            if bits == 0 || u32::from(lsb) + u32::from(bits) > p.ty.bits() {
                return Err(bad("the field lies outside the parent's bits"));
            }
            if Type::int_with_bits(u32::from(bits)) != Some(slot.ty) {
                return Err(bad(
                    "the slot's type must be the smallest integer type holding the field",
                ));
            }
        }
        let id = SlotId(self.slots.len() as u32);
        self.slots.push(slot);
        Ok(id)
    }

    /// A guest's register file from its fixed slot table. The table is part of the guest's code
    /// and the guest's tests check it, so an invalid slot is a bug: debug builds stop on it, and
    /// other builds leave it out.
    pub fn from_table(slots: impl IntoIterator<Item = Slot>) -> StateDesc {
        let mut desc = StateDesc::new();
        for slot in slots {
            let name = slot.name.clone();
            let added = desc.add(slot);
            debug_assert!(added.is_ok(), "bad slot table entry {name}");
        }
        desc
    }

    /// Adds a plain slot (convenience for guest state descriptions).
    pub fn plain(&mut self, name: &str, ty: Type, role: SlotRole) -> Result<SlotId, StateError> {
        self.add(Slot {
            name: name.to_string(),
            ty,
            role,
            layout: SlotLayout::Plain,
        })
    }

    /// Looks a slot up by name.
    pub fn find(&self, name: &str) -> Option<SlotId> {
        self.slots.iter().position(|s| s.name == name).map(|i| SlotId(i as u32))
    }

    /// The slot with this id.
    ///
    /// Panics if the id does not come from this description; ids are only minted by [`StateDesc::add`].
    pub fn slot(&self, id: SlotId) -> &Slot {
        &self.slots[id.index()]
    }

    /// The slot with this id, or `None` for an id from another description.
    pub fn get(&self, id: SlotId) -> Option<&Slot> {
        self.slots.get(id.index())
    }

    /// All slots with their ids, in declaration order.
    pub fn iter(&self) -> impl Iterator<Item = (SlotId, &Slot)> {
        self.slots.iter().enumerate().map(|(i, s)| (SlotId(i as u32), s))
    }

    /// Number of slots.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// Whether there are no slots.
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }
}
