//! rpt's intermediate representation: one IR for every guest.
//!
//! This crate owns the IR types ([`Program`], [`Function`], [`StateDesc`],
//! instructions and terminators), a [`FunctionBuilder`], the text form
//! ([`print`] and [`parse`], which round-trip exactly), the [`verify`]er and the
//! reference [`interp`]reter. It knows nothing of salsa, RON, C or any guest.

#![deny(missing_docs)]

mod builder;
mod entities;
mod function;
mod inst;
pub mod interp;
pub mod parse;
pub mod print;
mod state;
mod types;
pub mod verify;

pub use builder::FunctionBuilder;
pub use entities::{Block, GuestAddr, SlotId, Value};
pub use function::{BlockData, CallGraph, Function, Program};
pub use inst::{
    BinaryOp, BlockCall, CallTarget, ConvOp, Effects, ExitReason, FBinaryOp, FConvOp, FTernaryOp, FUnaryOp, FloatCC,
    HelperDecl, Inst, InstKind, IntCC, Terminator, UnaryOp,
};
pub use state::{RoleSet, Slot, SlotLayout, SlotRole, StateDesc, StateError, is_identifier};
pub use types::{AddrSpace, Endian, Rounding, Type};

/// What determines the memory layout of the IR types: the sha256 of this crate's source, the
/// compiler that built it (`rustc -vV`), the target and the compiler flags that can change layouts. Two builds with the
/// same digest lay out every IR type the same way; rpt-api's shared-layout plugin transport
/// relies on that to hand a plugin the host's functions in place.
pub const LAYOUT_DIGEST: &str = concat!(env!("RPT_SOURCE_HASH"), "; ", env!("RPT_IR_COMPILER"));
