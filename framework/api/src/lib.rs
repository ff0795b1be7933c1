//! The plugin interfaces of rpt: what a guest, a host and a pass each provide.
//!
//! This crate owns the traits [`GuestPlugin`], [`HostPlugin`] and [`PassPlugin`]
//! and the plain data that crosses them. Built-in plugins implement these traits
//! exactly as a dynamically loaded plugin will; nothing here assumes a plugin is
//! linked into rpt. It depends only on `rpt-ir`.
//!
//! It also owns what every guest would otherwise write for itself: [`discover`], the function
//! discovery algorithm, which a guest drives through its [`discover::Isa`]; [`lift`], the loop
//! that lifts the blocks of a walk, which a guest drives through its [`lift::InsnLifter`];
//! [`tier`], the instructions of the run-time tier and the forms they share; and
//! [`find_platform`].

#![deny(missing_docs)]

pub mod abi;
pub mod discover;
mod guest;
mod host;
pub mod lift;
mod pass;
pub mod tier;

pub use guest::{
    Diagnostic, Discovery, ExternStateUse, Externs, GuestError, GuestImage, GuestOptions, GuestPlugin, Import,
    LiftResult, MemoryModel, Seeds, Segment, SegmentFlags, Severity, find_platform,
};
pub use host::{
    CEnvironment, CLANG, COMMON_CFLAGS, CacheGeometry, CompilerSettings, CpuModel, HostDesc, HostPlugin,
    MEASURED_PIPELINE, Needed, Purpose, Requirement, Runner,
};
pub use pass::{
    BatchContext, Codegen, FunctionContext, FunctionPass, ParamValue, PassError, PassParams, PassPlugin,
    ProgramAnalysis, refuse_params,
};

/// A plugin as rpt registers it. Every plugin crate offers `pub fn plugin() -> rpt_api::Plugin`;
/// the CLI's build script registers each plugin crate the CLI depends on, so making a plugin
/// built in is one line in `framework/cli/Cargo.toml`.
#[derive(Clone)]
pub enum Plugin {
    /// A guest.
    Guest(std::sync::Arc<dyn GuestPlugin>),
    /// A host.
    Host(std::sync::Arc<dyn HostPlugin>),
    /// A pass.
    Pass(std::sync::Arc<dyn PassPlugin>),
}

/// The [`PluginInfo`] of the crate it is written in: `name`, the crate's version, and the hash of
/// its sources that its build script exports as `RPT_SOURCE_HASH` (`rpt-source-hash`), or with
/// `hash = ...` another one (a test plugin without that build script).
#[macro_export]
macro_rules! plugin_info {
    ($name:expr) => {
        $crate::plugin_info!($name, hash = env!("RPT_SOURCE_HASH"))
    };
    ($name:expr, hash = $hash:expr) => {
        $crate::PluginInfo {
            name: ::std::string::ToString::to_string($name),
            version: env!("CARGO_PKG_VERSION").to_string(),
            hash: ::std::string::ToString::to_string($hash),
        }
    };
}

/// What identifies a plugin build: its name, version and the hash of the sources it was built from.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub struct PluginInfo {
    /// The name recipes use (`x86-pe`, `x86-64`, `flag-abi`).
    pub name: String,
    /// The plugin's version.
    pub version: String,
    /// Hex sha256 of the plugin's sources (built-ins) or its library file (dynamic plugins).
    pub hash: String,
}

/// The path (under a generation's `src/`) of a guest's inline header: when the guest's runtime
/// sources hold a file there, the generated `cpu.h` includes it after the helper prototypes, so
/// every shard sees it. A guest puts there what generated code should compile inline (helpers it
/// defines `static inline` and routes calls to by a macro); its runtime files define the
/// out-of-line helpers, which the IR interpreter calls, from the same code.
pub const GUEST_INLINE_HEADER: &str = "guest/inline.h";

/// A C source file a plugin contributes to a generation, at a path relative to the generation's `src/`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct SourceFile {
    /// Relative path with `/` separators, e.g. `guest/x86_runtime.c`.
    pub path: String,
    /// The file's text.
    pub contents: String,
}
