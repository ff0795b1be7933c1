//! Typed indices and addresses: the nouns every other IR module refers to.

use std::fmt;

/// An address in the guest's address space (a PC, a data pointer, a function entry).
///
/// Guests with narrower buses (the 65816's 24-bit bus) still use this type; the
/// value is the guest's own address, never a host pointer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default, serde::Serialize, serde::Deserialize)]
pub struct GuestAddr(pub u64);

impl fmt::Display for GuestAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:#010x}", self.0)
    }
}

impl GuestAddr {
    /// The name a lifted function at this address has in IR text and in C: `f_00401000`.
    pub fn function_name(self) -> String {
        format!("f_{:08x}", self.0)
    }

    /// The address a function name like `f_00401000` names (any number of hex digits).
    pub fn from_function_name(name: &str) -> Option<GuestAddr> {
        let hex = name.strip_prefix("f_")?;
        u64::from_str_radix(hex, 16).ok().map(GuestAddr)
    }
}

macro_rules! entity {
    ($(#[$meta:meta])* $name:ident, $prefix:literal) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
        pub struct $name(pub u32);

        impl $name {
            /// The position of this entity in its owner's table.
            pub fn index(self) -> usize {
                self.0 as usize
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, concat!($prefix, "{}"), self.0)
            }
        }
    };
}

entity!(
    /// An SSA value of one function: `v12`.
    Value,
    "v"
);
entity!(
    /// A basic block of one function: `block3`.
    Block,
    "block"
);
entity!(
    /// A state slot of the guest's [`crate::StateDesc`]; printed by its name, not its index.
    SlotId,
    "slot"
);
