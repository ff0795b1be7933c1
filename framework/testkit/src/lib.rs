//! What rpt's tests share, so each kind of check is written once.
//!
//! - [`filetest`]: the golden-file runner every golden kind uses (lift, pass, emit-c): one header
//!   convention, a unified diff on failure, and one bless variable, `RPT_BLESS=1`.
//! - [`guest`]: lifting in tests for any guest plugin (images from bytes, verified lifting, the
//!   lifted text golden files hold).
//! - [`Rng`], [`scratch_dir`] and [`run_tool`]: the oracle kit that differential tests use to
//!   make random cases, keep their files apart and run compilers and emulators.
//!
//! - [`host`]: compiling, linking and running C with a host plugin's settings and runner.
//! - [`toolchains`]: building the same C as a freestanding PE and as a native i386 program.
//!
//! It is a dev-dependency only: nothing shipped depends on it.

pub mod filetest;
pub mod guest;
pub mod host;
mod oracle;
pub mod toolchains;

pub use oracle::{Rng, ToolOutput, run_tool, scratch_dir};
