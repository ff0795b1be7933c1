//! The C backend: IR to C shards, the CPU header, the function table, the image and the listing.
//!
//! Everything here is a pure function from IR and plugin data to text, following the
//! contract in `docs/c-abi.md`: the same input always gives the same bytes (maps are
//! ordered, nothing reads the clock or the file system). Compiling the text is
//! `rpt-build`'s job; the C runtime the text calls into is `rpt-runtime`.
//!
//! - [`emit_function`] turns one lifted function into one C function definition.
//! - [`shard_source`], [`cpu_header`], [`function_table`], [`image_source`] and
//!   [`listing`] write the files of a generation's `src/`.
//! - [`tier_source`] writes `tier.c`, the run-time tier's instructions as C.
//! - [`shard_of`] places a function in a shard by a hash of its address, so adding a
//!   function never moves another one (and never invalidates another shard's object).

#![deny(missing_docs)]

mod ctype;
mod files;
mod function;
mod near;
pub mod state_use;
mod tier;

use std::collections::{BTreeMap, BTreeSet};

use rpt_api::MemoryModel;
use rpt_ir::{GuestAddr, HelperDecl, RoleSet, StateDesc};

pub use files::{
    StubReturn, cpu_header, fault_sites_source, function_table, image_source, listing, missing_import_stubs_source,
    missing_import_symbol, shard_of, shard_source,
};
pub use function::{emit_function, emit_override};
pub use state_use::CallStateUse;
pub use tier::tier_source;

/// Hex sha256 of the emitter's own sources; part of every object cache key and manifest,
/// so C written by an older emitter is never mistaken for C written by this one.
pub const EMITTER_HASH: &str = env!("RPT_SOURCE_HASH");

/// What a function is emitted against: the register file, helpers, externs and memory model.
#[derive(Clone, Copy, Debug)]
pub struct EmitContext<'a> {
    /// The guest register file; slots become fields of `struct cpu`.
    pub state: &'a StateDesc,
    /// Declared runtime helpers by name; a call to anything else is an error.
    pub helpers: &'a BTreeMap<String, HelperDecl>,
    /// Platform externs by address with their C symbol; direct calls to these addresses use the symbol.
    pub externs: &'a BTreeMap<GuestAddr, String>,
    /// The guest's memory model (address width and byte order).
    pub memory: &'a MemoryModel,
    /// The listing file named in `#line` directives (`my-game.lst`).
    pub listing_name: &'a str,
    /// MEMARG: lifted functions take the memory base as a parameter (`f_X_m(c, mb)`) and
    /// call each other that way; `f_X(c)` stays as a thin wrapper for the function table, the
    /// runtime and overrides (docs/c-abi.md, "MEMARG").
    pub memarg: bool,
    /// State in locals: slots of these roles (plain slots and the words packed slots live in;
    /// never arrays) are C locals in each function, loaded at entry and written back before
    /// anything outside the function can see `struct cpu` (docs/c-abi.md, "State in locals").
    pub state_in_locals: RoleSet,
    /// What the function's callees may read and write ([`state_use`]), so that with state in
    /// locals a call hands over and takes back only those; empty means everything for every call.
    pub calls: &'a CallStateUse,
    /// The program has the run-time tier (the recipe's `run_time_tier`): an indirect call may
    /// reach code no function holds, which the tier runs, so with state in locals an indirect
    /// call also hands over what the guest's calling conventions pass through a call
    /// (`MemoryModel::call_registers`).
    pub run_time_tier: bool,
    /// Count every guest instruction run compiled in `rpt_compiled_insns` (the recipe's
    /// `count_instructions`), so the runtime can say what fraction ran in the run-time tier.
    pub count_instructions: bool,
}

/// One emitted C function and the functions it names.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct EmittedFunction {
    /// The guest address of the function (its C name is `f_<8 hex digits>`).
    pub entry: GuestAddr,
    /// One C function definition, ending in a newline.
    pub text: String,
    /// The lifted functions and externs it calls or tail-calls directly, by address,
    /// so the shard can declare their prototypes.
    pub callees: BTreeSet<GuestAddr>,
}

/// Why a function cannot be emitted.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EmitError {
    /// An operation the C backend does not implement yet (x87 `f80` arithmetic, paired singles).
    #[error("{}: the C backend does not support {what} yet", function.function_name())]
    Unsupported {
        /// The function being emitted.
        function: GuestAddr,
        /// The operation, as IR text (`fadd.rne on f80`).
        what: String,
    },
    /// IR the verifier would reject: an undefined value, a missing block, an undeclared helper.
    #[error("{}: malformed IR: {what}", function.function_name())]
    Malformed {
        /// The function being emitted.
        function: GuestAddr,
        /// What is wrong.
        what: String,
    },
}
