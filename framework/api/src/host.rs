//! The host interface: what a target CPU is and how code for it is built and run.

use crate::PluginInfo;

/// Geometry of a level-1 instruction cache.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CacheGeometry {
    /// Total size in bytes.
    pub size: u32,
    /// Associativity.
    pub ways: u32,
    /// Line size in bytes.
    pub line: u32,
}

/// What passes may read about a host.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct HostDesc {
    /// The clang target triple.
    pub triple: String,
    /// Pointer width in bits.
    pub pointer_bits: u32,
    /// Allocatable general-purpose registers.
    pub gprs: u32,
    /// Allocatable floating-point registers.
    pub fprs: u32,
    /// Whether the host is big-endian.
    pub big_endian: bool,
    /// The L1 instruction cache.
    pub l1i: CacheGeometry,
}

/// How the host's C compiler is invoked.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct CompilerSettings {
    /// The compiler command (`clang-19`).
    pub cc: String,
    /// Flags for every compile (target, optimisation, `-fno-strict-aliasing`).
    pub cflags: Vec<String>,
    /// Flags for the final link.
    pub ldflags: Vec<String>,
}

/// How a built binary is started.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Runner {
    /// Run directly on this machine.
    Native,
    /// Run under an emulator: `program args... binary guest-args...`.
    Emulator {
        /// The emulator command (`qemu-aarch64`).
        program: String,
        /// Arguments before the binary.
        args: Vec<String>,
    },
}

/// A host target.
pub trait HostPlugin: Send + Sync {
    /// Name, version and source hash.
    fn info(&self) -> PluginInfo;
    /// The host's description for passes.
    fn desc(&self) -> HostDesc;
    /// How to compile and link for it.
    fn compiler(&self) -> CompilerSettings;
    /// How to run what was built.
    fn runner(&self) -> Runner;
}
