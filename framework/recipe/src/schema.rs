//! The recipe's RON schema: the types serde reads a recipe file into.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// The host plugin a recipe builds for when it names none.
pub const DEFAULT_HOST: &str = "x86-64";

/// The number of C shards a recipe's functions are spread over when it names none.
pub const DEFAULT_SHARDS: u32 = 8;

/// The largest shard count a recipe may ask for.
pub const MAX_SHARDS: u32 = 4096;

/// One recipe: which guest program to recompile, how, and for which host.
///
/// Every struct of the schema denies unknown fields, so a misspelt field is an error with its line
/// and column rather than a silently ignored setting. Fields with a default may be left out.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Recipe {
    /// The guest plugin that loads, decodes and lifts the image (`"x86-pe"`).
    pub guest: String,
    /// The guest image, relative to the directory holding the recipe file (or absolute).
    pub image: PathBuf,
    /// The sha256 of the image's bytes, 64 hex digits (lower case once parsed); loading checks it.
    pub image_sha256: String,
    /// The guest platform: how the program meets its operating system (`"win32-console"`).
    pub platform: String,
    /// Guest-specific settings (optional), e.g. `{"x87": "f64"}` for the x86 guest.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub guest_options: BTreeMap<String, ParamValue>,
    /// The host plugin the C is compiled for.
    #[serde(default = "default_host")]
    pub host: String,
    /// The host's CPU model (optional; default: the host plugin's first model), e.g. `"cortex-a72"`.
    /// It sets the L1I geometry passes see and the tuning flags; `rpt hosts` lists the models.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_cpu: Option<String>,
    /// The host's L1 instruction cache (optional), overriding the CPU model's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub l1i: Option<CacheGeometry>,
    /// Guest addresses where execution may begin, besides the entry the image's header names.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub entry_points: Vec<u64>,
    /// Guest addresses known to start functions that discovery might not reach on its own.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub function_hints: Vec<u64>,
    /// Guest functions replaced by hand-written C functions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub overrides: Vec<Override>,
    /// Hand-written C files (the bodies of overrides, and headers they share), each pinned by its
    /// sha256 like the image; they are copied into the generation's `src/overrides/`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub c_sources: Vec<CSource>,
    /// The pass pipeline, run in this order. Absent, the host's recommended pipeline runs
    /// (`rpt hosts` lists it; `rpt recompile` prints the one it used); `passes: []` runs none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub passes: Option<Vec<PassConfig>>,
    /// How many C files the generated functions are spread over (1..=4096).
    #[serde(default = "default_shards")]
    pub shards: u32,
    /// Whether code rpt cannot lift stops the build, as an error listing every place. By default
    /// (`false`) such code compiles to a guest fault raised only if execution gets there, as the
    /// real CPU would fault, and each place is a warning (DESIGN.md §12).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub strict_lifting: bool,
    /// Whether the generated program runs guest code no lifted function holds in the run-time tier
    /// (`rpt_api::tier`: code discovery missed, reached through a pointer computed at run time).
    /// On by default; `false` leaves the tier out, and then control reaching such code stops the
    /// program there, naming the address and the caller.
    #[serde(default = "default_true", skip_serializing_if = "Clone::clone")]
    pub run_time_tier: bool,
    /// Whether the program counts the guest instructions it runs compiled, so that at exit it can
    /// say what fraction ran compiled rather than in the run-time tier (a counter per guest
    /// instruction: for measuring coverage, not for speed). Off by default.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub count_instructions: bool,
    /// The run-time tier's coverage file (relative to the recipe file, or absolute): `rpt run`
    /// has the program record there where it entered the tier, and `rpt recompile` reads it back
    /// as entry points, so code the tier ran once is compiled the next time. By default
    /// `gen/<recipe>/tier-coverage.txt`, beside the recipe's generations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tier_coverage: Option<PathBuf>,
    /// The entries the coverage file adds, with how often the tier was entered at each. Never
    /// written in a recipe file: the build fills it in from the coverage file
    /// (`rpt_generation::read_tier_coverage`), and it is part of the digest, so a generation with
    /// other entries has another name.
    #[serde(skip)]
    pub coverage_entries: BTreeMap<u64, u64>,
    /// Whether an import the platform does not implement stops the build, as an error listing every
    /// one. By default (`false`) each becomes a stub that stops the program, naming the import and
    /// its caller, only if it is called; each is a warning.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub strict_imports: bool,
    /// What stubs of imports the platform lacks do instead of stopping the program, by the
    /// `module!name` rpt's warning lists (the module without case, with or without `.dll`):
    /// `{"KERNEL32.dll!FormatMessageA": (returns: 0, pops: 28, last_error: Some(317))}`. An import
    /// stubbed here is no error under `strict_imports`; a name that is not a missing import of
    /// the image is an error.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub import_stubs: BTreeMap<String, ImportStub>,
    /// Compiler settings added to the host plugin's own.
    #[serde(default, skip_serializing_if = "CompilerOverrides::is_default")]
    pub compiler: CompilerOverrides,
    /// Plugins to load besides the built-in ones: `[(crate: "../passes/mine"), (library: "libx.so")]`.
    /// A plugin of the same name as a built-in replaces it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub plugins: Vec<PluginSource>,
}

/// An L1 instruction cache's geometry, as a recipe overrides it: `l1i: (size: 49152, ways: 3, line: 64)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CacheGeometry {
    /// Total size in bytes.
    pub size: u32,
    /// Associativity.
    pub ways: u32,
    /// Line size in bytes.
    pub line: u32,
}

/// What the stub of an import the platform lacks does when called: it returns, as the real
/// function would on failure, instead of stopping the program.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ImportStub {
    /// The value it returns (x86: in eax, and edx for the high half).
    #[serde(default)]
    pub returns: u64,
    /// The bytes of arguments it pops besides the return address: 4 per argument for a stdcall
    /// function (every KERNEL32 one), 0 for a cdecl one (msvcrt's).
    #[serde(default)]
    pub pops: u32,
    /// The error code it leaves for `GetLastError`, if any.
    #[serde(default)]
    pub last_error: Option<u32>,
}

/// A guest function replaced by a C function, guarded by a hash of the function's original bytes.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Override {
    /// The guest address of the function being replaced.
    pub function: u64,
    /// The C function that replaces it; it must be a C identifier.
    pub c_symbol: String,
    /// The sha256 of the original function's bytes (lower case once parsed), so an override never
    /// applies to changed code.
    pub original_sha256: String,
}

/// A hand-written C file compiled into every generation of the recipe.
///
/// `.c` files are compiled and linked; `.h` files are only copied, for the `.c` files to include.
/// A file lands in `src/overrides/<file name>`, where `#include "cpu.h"` reaches the guest's state.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CSource {
    /// The file, relative to the directory holding the recipe file (or absolute); its name must
    /// end in `.c` or `.h` and differ from every other source's name.
    pub path: PathBuf,
    /// The sha256 of the file's bytes (lower case once parsed); loading checks it, so a recipe
    /// never silently builds different C.
    pub sha256: String,
}

/// One pass of the pipeline and its parameters.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PassConfig {
    /// The pass's registered name; a name appears at most once in a recipe.
    pub name: String,
    /// Whether the pass runs; a listed pass runs unless this is `false`.
    #[serde(default = "default_true")]
    pub enabled: bool,
    /// The pass's parameters by name; the pass plugin checks names and types.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub params: BTreeMap<String, ParamValue>,
}

/// A pass parameter's value, written in RON as a plain `true`, `42` or `"text"`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ParamValue {
    /// A switch.
    Bool(bool),
    /// A signed integer (hex literals are fine).
    Int(i64),
    /// A string.
    Str(String),
}

/// Compiler settings a recipe adds to those of its host plugin.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CompilerOverrides {
    /// Extra flags passed to the C compiler after the host plugin's, in this order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cflags: Vec<String>,
    /// A compiler launcher such as `ccache` or `sccache`, run with the compiler command as its
    /// arguments. It changes how objects are built, never what they contain, so the digest leaves
    /// it out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launcher: Option<String>,
}

impl CompilerOverrides {
    /// True when nothing is overridden (the default).
    pub fn is_default(&self) -> bool {
        *self == CompilerOverrides::default()
    }
}

/// Where a plugin comes from: a crate rpt builds with cargo, or a library already built.
/// Exactly one of the two is given.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PluginSource {
    /// A plugin crate's directory (holding its Cargo.toml), relative to the recipe file's directory:
    /// rpt builds its `cdylib` with cargo.
    #[serde(rename = "crate", default, skip_serializing_if = "Option::is_none")]
    pub crate_dir: Option<PathBuf>,
    /// A plugin library (`.so`) built beforehand, relative to the recipe file's directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub library: Option<PathBuf>,
}

fn default_host() -> String {
    DEFAULT_HOST.to_owned()
}

fn default_shards() -> u32 {
    DEFAULT_SHARDS
}

fn default_true() -> bool {
    true
}
