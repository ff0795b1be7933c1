//! Value types and the small enums that qualify instructions (endianness, rounding, address space).

use std::fmt;

/// The type of an SSA value or a state slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
pub enum Type {
    /// A boolean: the result of a comparison, or a single flag bit.
    I1,
    /// An 8-bit integer.
    I8,
    /// A 16-bit integer.
    I16,
    /// A 32-bit integer.
    I32,
    /// A 64-bit integer.
    I64,
    /// An IEEE single.
    F32,
    /// An IEEE double.
    F64,
    /// The x87 80-bit extended format, for exact x87 emulation.
    F80,
    /// Two singles side by side (PowerPC paired singles).
    V2F32,
}

impl Type {
    /// Every type, in the order the text form lists them.
    pub const ALL: [Type; 9] = [
        Type::I1,
        Type::I8,
        Type::I16,
        Type::I32,
        Type::I64,
        Type::F32,
        Type::F64,
        Type::F80,
        Type::V2F32,
    ];

    /// The text-form spelling: `i32`, `f80`, `v2f32`.
    pub fn name(self) -> &'static str {
        match self {
            Type::I1 => "i1",
            Type::I8 => "i8",
            Type::I16 => "i16",
            Type::I32 => "i32",
            Type::I64 => "i64",
            Type::F32 => "f32",
            Type::F64 => "f64",
            Type::F80 => "f80",
            Type::V2F32 => "v2f32",
        }
    }

    /// Parses the text-form spelling.
    pub fn from_name(name: &str) -> Option<Type> {
        Type::ALL.into_iter().find(|t| t.name() == name)
    }

    /// Whether this is one of the integer types (including `i1`).
    pub fn is_int(self) -> bool {
        matches!(self, Type::I1 | Type::I8 | Type::I16 | Type::I32 | Type::I64)
    }

    /// Whether this is a scalar float type.
    pub fn is_float(self) -> bool {
        matches!(self, Type::F32 | Type::F64 | Type::F80)
    }

    /// The width in bits (for `v2f32`, both lanes together).
    pub fn bits(self) -> u32 {
        match self {
            Type::I1 => 1,
            Type::I8 => 8,
            Type::I16 => 16,
            Type::I32 => 32,
            Type::I64 => 64,
            Type::F32 => 32,
            Type::F64 => 64,
            Type::F80 => 80,
            Type::V2F32 => 64,
        }
    }

    /// The smallest integer type that holds `bits` bits, if there is one.
    pub fn int_with_bits(bits: u32) -> Option<Type> {
        match bits {
            1 => Some(Type::I1),
            2..=8 => Some(Type::I8),
            9..=16 => Some(Type::I16),
            17..=32 => Some(Type::I32),
            33..=64 => Some(Type::I64),
            _ => None,
        }
    }

    /// A mask of the low `bits()` bits, for integer types.
    pub fn mask(self) -> u64 {
        match self.bits() {
            64.. => u64::MAX,
            b => (1u64 << b) - 1,
        }
    }
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Byte order of a guest memory access.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
pub enum Endian {
    /// Least significant byte first (x86, 65816).
    Little,
    /// Most significant byte first (PowerPC).
    Big,
}

impl Endian {
    /// The text-form spelling: `le` or `be`.
    pub fn name(self) -> &'static str {
        match self {
            Endian::Little => "le",
            Endian::Big => "be",
        }
    }

    /// Parses the text-form spelling.
    pub fn from_name(name: &str) -> Option<Endian> {
        match name {
            "le" => Some(Endian::Little),
            "be" => Some(Endian::Big),
            _ => None,
        }
    }
}

/// Which guest address space a load or store goes to.
///
/// Space 0 is ordinary guest memory; guests with separate buses (SNES VRAM, I/O
/// ports) number the others and describe them in their runtime part.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default, serde::Serialize, serde::Deserialize)]
pub struct AddrSpace(pub u8);

impl AddrSpace {
    /// Ordinary guest memory.
    pub const RAM: AddrSpace = AddrSpace(0);
}

impl fmt::Display for AddrSpace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if *self == AddrSpace::RAM {
            f.write_str("ram")
        } else {
            write!(f, "as{}", self.0)
        }
    }
}

/// The rounding of one float operation.
///
/// `Dynamic` means "whatever the guest's rounding-control state says at run
/// time"; the others are fixed at lift time (e.g. `fctiwz` always truncates).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
pub enum Rounding {
    /// Round to nearest, ties to even.
    Nearest,
    /// Round toward zero.
    Zero,
    /// Round toward +infinity.
    Up,
    /// Round toward -infinity.
    Down,
    /// Taken from the guest's rounding-control state at run time.
    Dynamic,
}

impl Rounding {
    /// Every rounding mode, in text-form order.
    pub const ALL: [Rounding; 5] = [
        Rounding::Nearest,
        Rounding::Zero,
        Rounding::Up,
        Rounding::Down,
        Rounding::Dynamic,
    ];

    /// The text-form spelling: `rne`, `rz`, `ru`, `rd`, `rdyn`.
    pub fn name(self) -> &'static str {
        match self {
            Rounding::Nearest => "rne",
            Rounding::Zero => "rz",
            Rounding::Up => "ru",
            Rounding::Down => "rd",
            Rounding::Dynamic => "rdyn",
        }
    }

    /// Parses the text-form spelling.
    pub fn from_name(name: &str) -> Option<Rounding> {
        Rounding::ALL.into_iter().find(|r| r.name() == name)
    }
}
