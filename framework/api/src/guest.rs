//! The guest interface: load an image, find functions, lift them, supply runtime C.

use std::collections::{BTreeMap, BTreeSet};

use rpt_ir::{Function, GuestAddr, HelperDecl, SlotId, StateDesc};

use crate::{ParamValue, PluginInfo, SourceFile};

/// Guest-specific settings from the recipe's `guest_options` (e.g. the x86 guest's x87 value model).
pub type GuestOptions = BTreeMap<String, ParamValue>;

/// Access rights of a loaded segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize)]
pub struct SegmentFlags {
    /// Readable.
    pub read: bool,
    /// Writable.
    pub write: bool,
    /// Executable.
    pub execute: bool,
}

/// A piece of the guest image as it lies in guest memory.
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Segment {
    /// The section or segment name, for messages (`.text`, `text0`).
    pub name: String,
    /// Where it starts in guest memory.
    pub addr: GuestAddr,
    /// Its initialised bytes.
    pub bytes: Vec<u8>,
    /// Its size in memory; bytes past `bytes.len()` are zero.
    pub mem_size: u64,
    /// Access rights.
    pub flags: SegmentFlags,
}

/// A function the image imports from outside (a DLL export, a platform service).
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Import {
    /// The module it comes from (`KERNEL32.dll`).
    pub module: String,
    /// The imported name.
    pub name: String,
    /// Where the image keeps the pointer to it (the IAT slot).
    pub slot: GuestAddr,
    /// The address the loader gave the import; calls to it reach the platform's C implementation.
    pub thunk: GuestAddr,
}

/// A loaded guest image in guest-neutral form.
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct GuestImage {
    /// Segments in address order.
    pub segments: Vec<Segment>,
    /// The entry point.
    pub entry: GuestAddr,
    /// Exported or otherwise named entry points.
    pub exports: BTreeMap<String, GuestAddr>,
    /// Imported functions.
    pub imports: Vec<Import>,
}

impl GuestImage {
    /// The segment containing `addr`, if any.
    pub fn segment_at(&self, addr: GuestAddr) -> Option<&Segment> {
        self.segments
            .iter()
            .find(|s| addr.0 >= s.addr.0 && addr.0 - s.addr.0 < s.mem_size)
    }

    /// Reads up to `len` initialised bytes starting at `addr`, stopping at the end of its segment.
    pub fn bytes_at(&self, addr: GuestAddr, len: usize) -> Option<&[u8]> {
        let seg = self.segment_at(addr)?;
        let start = usize::try_from(addr.0 - seg.addr.0).ok()?;
        let end = start.saturating_add(len).min(seg.bytes.len());
        seg.bytes.get(start..end)
    }

    /// Whether `addr` lies in an executable segment.
    pub fn is_code(&self, addr: GuestAddr) -> bool {
        self.segment_at(addr).is_some_and(|s| s.flags.execute)
    }
}

/// How the guest sees memory, for the C runtime.
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct MemoryModel {
    /// Width of guest addresses in bits (32 for x86-32 and PowerPC, 24 for the 65816).
    pub address_bits: u32,
    /// Whether multi-byte values are big-endian in guest memory.
    pub big_endian: bool,
    /// The slot holding the stack pointer (x86 esp, PowerPC r1), where the guest's calling
    /// convention has one: registers saved below it on entry and loaded back before returning are
    /// what a function preserves (`rpt_emit_c::state_use`).
    #[serde(default)]
    pub stack_pointer: Option<SlotId>,
    /// The registers the guest's calling convention lets every function clobber and that carry
    /// no result (x86 `ecx`; PowerPC r0, r5..r12, ctr, xer, lr, cr0/1/5..7, f0, f2..f13): code
    /// outside lifted code (the runtime after an entry point or a callback returns, a platform
    /// function) never reads them after a call, so a function need not write them back when no
    /// lifted caller reads them after calling it (`rpt_emit_c::state_use`).
    #[serde(default)]
    pub scratch_registers: Vec<SlotId>,
    /// The registers the guest's calling conventions pass something through, in or out of a call:
    /// arguments, results, the stack pointer and small-data anchors, and the modes code runs
    /// under (rounding, precision, quantisation). Code the run-time tier runs keeps those
    /// conventions as compiled code does, so an indirect call that may reach it hands over these
    /// (and takes back those it reads after) besides what the lifted targets use
    /// (`rpt_emit_c`, "State in locals"); every other register is one the callee preserves or one
    /// the caller does not read after the call.
    #[serde(default)]
    pub call_registers: Vec<SlotId>,
}

/// Where function discovery starts.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize)]
pub struct Seeds {
    /// Extra entry points from the recipe; they are discovered like the image's entry.
    pub entry_points: BTreeSet<GuestAddr>,
    /// Function starts the recipe asserts (for code reached only indirectly).
    pub function_hints: BTreeSet<GuestAddr>,
}

/// How serious a diagnostic is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub enum Severity {
    /// Worth knowing; the output is still right.
    Note,
    /// Probably worth a look; the output is still right.
    Warning,
    /// The output would be wrong or incomplete (an unliftable instruction on a reachable path).
    Error,
}

/// A message about the guest code, anchored at a guest address.
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Diagnostic {
    /// How serious.
    pub severity: Severity,
    /// The guest address it concerns.
    pub addr: GuestAddr,
    /// What it says.
    pub message: String,
}

/// The functions discovery found.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize)]
pub struct Discovery {
    /// Every function entry to lift.
    pub functions: BTreeSet<GuestAddr>,
    /// Entries whose address is taken (code pointers in data or immediates).
    pub address_taken: BTreeSet<GuestAddr>,
    /// The image's tables of function addresses (`rpt_ir::Program::pointer_tables`).
    #[serde(default)]
    pub pointer_tables: BTreeMap<GuestAddr, Vec<GuestAddr>>,
    /// What discovery noticed on the way.
    pub diagnostics: Vec<Diagnostic>,
}

/// How a platform serves an image's imported functions.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize)]
pub struct Externs {
    /// The imports it implements: thunk address to C symbol.
    pub implemented: BTreeMap<GuestAddr, String>,
    /// The imports it lacks, in import-table order: thunk address and `module!name`
    /// (`KERNEL32.dll!FormatMessageA`). rpt calls a stub there that stops the program with the
    /// import's name and its caller, unless the recipe's `strict_imports` makes them an error
    /// ([`GuestError::MissingImports`]).
    pub missing: Vec<(GuestAddr, String)>,
    /// The thunks (of `implemented` or `missing`) whose C code neither reads nor writes a guest
    /// flag, so that every flag passes through a call of one unchanged: the platform functions
    /// of a C library, which take their arguments from registers and memory. passes/flag-abi
    /// relies on it to keep no flag alive for them; any other extern is assumed to read every
    /// flag (the PowerPC `setjmp` reads the CR fields it saves).
    pub flag_transparent: BTreeSet<GuestAddr>,
    /// The thunks whose C code reads and writes only some of the guest state, with those slots:
    /// a platform function of a C library takes its arguments from the stack and returns in the
    /// caller-saved registers, so a caller keeping the other registers in C locals need not hand
    /// them over around the call (`rpt_emit_c::state_use`). Any other extern may read and write
    /// every slot (`setjmp` reads the registers it saves, `longjmp` writes them).
    #[serde(default)]
    pub state_use: BTreeMap<GuestAddr, ExternStateUse>,
}

/// The guest state an extern's C code may read and write, as slot ids (a packed field stands for
/// its word).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize)]
pub struct ExternStateUse {
    /// The slots it may read.
    pub reads: Vec<SlotId>,
    /// The slots it may write.
    pub writes: Vec<SlotId>,
    /// Slots that, when it returns, hold their value at the call plus a constant: the stack
    /// pointer, where the callee pops its return address (x86 cdecl: esp + 4).
    pub adjusts: Vec<(SlotId, i64)>,
    /// It never returns (`exit`, `abort`): nothing after a call of it runs.
    pub never_returns: bool,
}

/// One lifted function plus what the lifter noticed.
///
/// Lifting never fails outright: bytes it cannot lift become an `exit ..., unlifted`
/// terminator carrying their address, with an [`Severity::Error`] diagnostic, and the
/// caller decides whether that stops the build.
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct LiftResult {
    /// The function.
    pub function: Function,
    /// Diagnostics, in address order.
    pub diagnostics: Vec<Diagnostic>,
    /// The disassembly of every lifted guest instruction, in address order, for the listing file.
    pub listing: Vec<(GuestAddr, String)>,
}

/// A failure of a guest plugin outside lifting: an image it cannot load, a platform it lacks.
#[derive(Clone, Debug, PartialEq, Eq, Hash, thiserror::Error, serde::Serialize, serde::Deserialize)]
pub enum GuestError {
    /// The image is malformed or truncated.
    #[error("bad image: {0}")]
    BadImage(String),
    /// The recipe names a platform this guest does not have.
    #[error("unknown platform `{platform}` (this guest has: {known})")]
    UnknownPlatform {
        /// What the recipe asked for.
        platform: String,
        /// The platforms the guest offers, comma-separated.
        known: String,
    },
    /// A guest option the guest does not know, or a value it does not accept.
    #[error("bad guest option `{name}`: {why}")]
    BadOption {
        /// The option.
        name: String,
        /// What is wrong.
        why: String,
    },
    /// The image imports a function the platform does not implement (one import; guests that can
    /// see the whole import table report [`GuestError::MissingImports`] instead).
    #[error("the {platform} platform does not implement the import {module}!{name}")]
    MissingImport {
        /// The platform.
        platform: String,
        /// The importing module.
        module: String,
        /// The import.
        name: String,
    },
    /// The image imports functions or data the platform does not implement: every one of them,
    /// in import-table order, so one run shows the whole gap.
    #[error("{}", describe_missing_imports(.platform, .imports))]
    MissingImports {
        /// The platform.
        platform: String,
        /// Each missing import as `module!name` (`msvcrt.dll!_wfopen`).
        imports: Vec<String>,
    },
    /// A guest loaded from a library failed at the plugin boundary (it panicked, or answered
    /// with bytes rpt cannot read); the message names the plugin.
    #[error("{0}")]
    Plugin(String),
}

/// The platform called `name` among a guest's `platforms` (`name_of` reads a platform's name), or
/// [`GuestError::UnknownPlatform`] listing the names there are.
pub fn find_platform<'p, P>(platforms: &'p [P], name: &str, name_of: impl Fn(&P) -> &str) -> Result<&'p P, GuestError> {
    platforms
        .iter()
        .find(|p| name_of(p) == name)
        .ok_or_else(|| GuestError::UnknownPlatform {
            platform: name.to_string(),
            known: platforms.iter().map(&name_of).collect::<Vec<_>>().join(", "),
        })
}

fn describe_missing_imports(platform: &str, imports: &[String]) -> String {
    let plural = if imports.len() == 1 { "" } else { "s" };
    let mut out = format!(
        "the {platform} platform does not implement {} import{plural} of this image:",
        imports.len()
    );
    for import in imports {
        out.push_str("\n  ");
        out.push_str(import);
    }
    out
}

/// A guest architecture: loader, decoder, lifter, state and runtime part.
pub trait GuestPlugin: Send + Sync {
    /// Name, version and source hash.
    fn info(&self) -> PluginInfo;

    /// Checks the recipe's guest options before anything else runs, so a typo fails early.
    fn check_options(&self, options: &GuestOptions) -> Result<(), GuestError>;

    /// The guest register file under these options; the C backend derives the CPU struct from it.
    fn state(&self, options: &GuestOptions) -> StateDesc;

    /// The runtime helpers lifted code may call under these options.
    fn helpers(&self, options: &GuestOptions) -> Vec<HelperDecl>;

    /// How the guest addresses memory on `platform` under these options (an SNES cartridge's
    /// mapping changes the address space).
    fn memory_model(&self, platform: &str, options: &GuestOptions) -> MemoryModel;

    /// The platforms this guest offers (`win32-console`, `linux-syscalls`, ...).
    fn platforms(&self) -> Vec<String>;

    /// Converts a file of another format into an image [`GuestPlugin::load`] takes (a PowerPC ELF
    /// linked at GameCube addresses into a DOL, for programs built with a cross compiler). A guest
    /// with nothing to convert answers with an error saying so.
    fn convert_image(&self, file: &[u8]) -> Result<Vec<u8>, GuestError>;

    /// Parses an image file for `platform` under these options (which may say how to map it).
    fn load(&self, image: &[u8], platform: &str, options: &GuestOptions) -> Result<GuestImage, GuestError>;

    /// How `platform` serves the image's imported functions: the C symbol of each it implements,
    /// and the name of each it lacks (rpt makes those stubs that stop the program when called).
    fn externs(&self, image: &GuestImage, platform: &str) -> Result<Externs, GuestError>;

    /// Finds every function reachable from the image's entry points and the recipe's seeds.
    fn discover(&self, image: &GuestImage, seeds: &Seeds) -> Discovery;

    /// Lifts the function at `entry`. `functions` is the discovered set, so calls and
    /// tail jumps into other functions can be told from jumps within this one.
    fn lift(
        &self,
        image: &GuestImage,
        entry: GuestAddr,
        functions: &BTreeSet<GuestAddr>,
        options: &GuestOptions,
    ) -> LiftResult;

    /// Lifts, one instruction each, the code of the image's executable segments that no lifted
    /// function holds, for the run-time tier ([`crate::tier`]): a linear sweep of what `covered`
    /// (every instruction of the lifted functions) leaves, each instruction lifted alone by
    /// [`crate::lift::lift_instruction`] with the guest's own lifter. `functions` is the
    /// discovered set, as for [`GuestPlugin::lift`].
    fn lift_uncovered(
        &self,
        image: &GuestImage,
        functions: &BTreeSet<GuestAddr>,
        covered: &BTreeSet<GuestAddr>,
        options: &GuestOptions,
    ) -> Vec<LiftResult>;

    /// The guest's C runtime part and the platform's C sources.
    fn runtime_sources(&self, platform: &str, options: &GuestOptions) -> Result<Vec<SourceFile>, GuestError>;
}
