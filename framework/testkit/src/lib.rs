//! What rpt's tests share, so each kind of check is written once.
//!
//! - [`filetest`]: the golden-file runner every golden kind uses (lift, pass, emit-c): one header
//!   convention, a unified diff on failure, and one bless variable, `RPT_BLESS=1`.
//! - [`guest`]: lifting in tests for any guest plugin (images from bytes, verified lifting, the
//!   lifted text golden files hold).
//! - [`Rng`], [`scratch_dir`], [`process_scratch`], [`run_tool`] and [`env_number`]: the oracle kit that differential
//!   tests use to make random cases, keep their files apart, run compilers and emulators and read
//!   the knobs of longer runs; [`cbuild`] builds their C programs with a given compiler and flags.
//! - [`interp`]: running IR in the reference interpreter (an environment made of a guest's helper
//!   function, runs from a given state, random states of a register file).
//! - [`host`]: compiling, linking and running C with a host plugin's settings and runner.
//! - [`toolchains`]: building the same C as a freestanding PE and as a native i386 program.
//!
//! It is a dev-dependency only: nothing shipped depends on it.

pub mod bsnes;
pub mod cbuild;
pub mod filetest;
pub mod guest;
pub mod host;
pub mod interp;
mod oracle;
pub mod toolchains;

pub use oracle::{
    INT_EDGES, Rng, ToolOutput, assert_no_failures, env_number, memory_difference, process_scratch, run_tool,
    run_tool_within, scratch_dir,
};
