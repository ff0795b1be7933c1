//! C spellings of IR types, literals and names, and the integer idioms that avoid C's traps.
//!
//! Every integer value is held zero-extended in an unsigned C type; arithmetic happens in
//! `uint32_t` or `uint64_t` so that C's promotion of narrow types to `int` can never make
//! an operation signed (and so never overflow, which would be undefined behaviour).
//! Signed views are made by explicit casts where an operation needs them.

use rpt_ir::Type;

/// The C type holding values of `ty` (docs/c-abi.md, "Names").
pub fn c_type(ty: Type) -> &'static str {
    match ty {
        Type::I1 | Type::I8 => "uint8_t",
        Type::I16 => "uint16_t",
        Type::I32 => "uint32_t",
        Type::I64 => "uint64_t",
        Type::F32 => "float",
        Type::F64 => "double",
        Type::F80 => "long double",
        Type::V2F32 => "struct rpt_v2f32",
    }
}

/// The suffix of the runtime's access and bit-pattern helpers for `ty` (`u32`, `f64`), if it has one.
pub fn access_name(ty: Type) -> Option<&'static str> {
    match ty {
        Type::I1 => None,
        Type::I8 => Some("u8"),
        Type::I16 => Some("u16"),
        Type::I32 => Some("u32"),
        Type::I64 => Some("u64"),
        Type::F32 => Some("f32"),
        Type::F64 => Some("f64"),
        Type::F80 => Some("f80"),
        Type::V2F32 => Some("v2f32"),
    }
}

/// An unsigned literal of an integer type: `0x1fu`, or `0x1full` for 64 bits.
pub fn int_literal(ty: Type, imm: u64) -> String {
    if ty.bits() > 32 {
        format!("{imm:#x}ull")
    } else {
        format!("{imm:#x}u")
    }
}

/// Integer idioms for one width.
#[derive(Clone, Copy)]
pub struct Int {
    ty: Type,
}

impl Int {
    /// Idioms for an integer type (the caller has checked that `ty` is one).
    pub fn new(ty: Type) -> Int {
        Int { ty }
    }

    /// Width in bits.
    pub fn bits(self) -> u32 {
        self.ty.bits()
    }

    /// The C type of the value.
    pub fn c(self) -> &'static str {
        c_type(self.ty)
    }

    fn wide64(self) -> bool {
        self.bits() > 32
    }

    /// `x` widened to the unsigned type arithmetic happens in.
    pub fn zx(self, x: &str) -> String {
        if self.bits() >= 32 {
            x.to_string()
        } else {
            format!("(uint32_t){x}")
        }
    }

    /// `x` sign-extended to `int32_t` (or `int64_t` for 64 bits), parenthesised.
    pub fn sx(self, x: &str) -> String {
        match self.bits() {
            1 => format!("(-(int32_t){x})"),
            8 => format!("((int32_t)(int8_t){x})"),
            16 => format!("((int32_t)(int16_t){x})"),
            32 => format!("((int32_t){x})"),
            _ => format!("((int64_t){x})"),
        }
    }

    /// An unsigned wide expression cut back to this type. Full-width expressions already
    /// have it, so they pass through; `i1` keeps only bit 0.
    pub fn fit(self, e: &str) -> String {
        match self.bits() {
            1 => format!("(uint8_t)(({e}) & 1u)"),
            32 | 64 => e.to_string(),
            _ => format!("({})({e})", self.c()),
        }
    }

    /// An expression whose value is already in range, converted to this type.
    pub fn narrow(self, e: &str) -> String {
        match self.bits() {
            32 | 64 => e.to_string(),
            _ => format!("({})({e})", self.c()),
        }
    }

    /// Any integer expression (signed, or `int` from a builtin) converted to this type.
    pub fn cast(self, e: &str) -> String {
        match self.bits() {
            1 => format!("(uint8_t)(({e}) & 1)"),
            _ => format!("({})({e})", self.c()),
        }
    }

    /// A shift or rotate amount: `b` modulo the width (all widths are powers of two or 1).
    pub fn amount(self, b: &str) -> String {
        format!("({b} & {}u)", self.bits() - 1)
    }

    /// The literal `n` in the wide type.
    pub fn lit(self, n: u64) -> String {
        if self.wide64() {
            format!("{n}ull")
        } else {
            format!("{n}u")
        }
    }
}

/// Whether `name` is a C keyword (or a macro C headers define) that cannot name a field.
pub fn is_c_reserved(name: &str) -> bool {
    const RESERVED: &[&str] = &[
        "alignas",
        "alignof",
        "asm",
        "auto",
        "bool",
        "break",
        "case",
        "char",
        "const",
        "constexpr",
        "continue",
        "default",
        "do",
        "double",
        "else",
        "enum",
        "extern",
        "false",
        "float",
        "for",
        "goto",
        "if",
        "inline",
        "int",
        "long",
        "nullptr",
        "register",
        "restrict",
        "return",
        "short",
        "signed",
        "sizeof",
        "static",
        "static_assert",
        "struct",
        "switch",
        "thread_local",
        "true",
        "typedef",
        "typeof",
        "typeof_unqual",
        "union",
        "unsigned",
        "void",
        "volatile",
        "while",
        "_Alignas",
        "_Alignof",
        "_Atomic",
        "_BitInt",
        "_Bool",
        "_Complex",
        "_Decimal128",
        "_Decimal32",
        "_Decimal64",
        "_Generic",
        "_Imaginary",
        "_Noreturn",
        "_Static_assert",
        "_Thread_local",
    ];
    RESERVED.contains(&name)
}

/// The `struct cpu` field of a slot: the slot's name, with `_` appended if it is a C keyword
/// (a guest with a register called `int` still compiles).
pub fn field_name(slot: &str) -> String {
    if is_c_reserved(slot) {
        format!("{slot}_")
    } else {
        slot.to_string()
    }
}

/// A C string literal of arbitrary text: printable ASCII as is, everything else as octal escapes.
pub fn c_string(text: &str) -> String {
    let mut out = String::from("\"");
    for b in text.bytes() {
        match b {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            // `?` is escaped so that no trigraph can form.
            b'?' => out.push_str("\\?"),
            0x20..=0x7e => out.push(char::from(b)),
            _ => out.push_str(&format!("\\{b:03o}")),
        }
    }
    out.push('"');
    out
}
