//! The host interface: what a target CPU is and how code for it is built and run.

use crate::{PluginInfo, SourceFile};

/// Geometry of a level-1 instruction cache.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct CacheGeometry {
    /// Total size in bytes.
    pub size: u32,
    /// Associativity.
    pub ways: u32,
    /// Line size in bytes.
    pub line: u32,
}

impl CacheGeometry {
    /// The number of sets (`size / (ways * line)`), or `None` when the three do not fit together.
    pub fn sets(&self) -> Option<u32> {
        let way_bytes = self.ways.checked_mul(self.line)?;
        (way_bytes > 0 && self.size.is_multiple_of(way_bytes)).then(|| self.size / way_bytes)
    }

    /// Checks that the geometry describes a real set-associative cache: every number positive, the
    /// line size and the number of sets powers of two (as cachegrind's `--I1=size,assoc,line`
    /// requires), and the size exactly `sets * ways * line`. The error says which rule is broken.
    pub fn check(&self) -> Result<(), String> {
        if self.size == 0 || self.ways == 0 || self.line == 0 {
            return Err(format!("size, ways and line must all be positive, found {self}"));
        }
        if !self.line.is_power_of_two() {
            return Err(format!("the line size must be a power of two, found {}", self.line));
        }
        match self.sets() {
            Some(sets) if sets.is_power_of_two() => Ok(()),
            Some(sets) => Err(format!(
                "{self} has {sets} sets; the number of sets (size / (ways * line)) must be a power of two"
            )),
            None => Err(format!("the size must be a multiple of ways * line, found {self}")),
        }
    }
}

impl std::fmt::Display for CacheGeometry {
    /// `48 KiB, 3-way, 64-byte lines` (sizes that are not whole KiB in bytes).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.size.is_multiple_of(1024) {
            write!(f, "{} KiB", self.size / 1024)?;
        } else {
            write!(f, "{} bytes", self.size)?;
        }
        write!(f, ", {}-way, {}-byte lines", self.ways, self.line)
    }
}

/// What passes may read about a host.
///
/// Register counts are the registers a compiler can keep values in across a function body: every
/// architectural register of the class minus the stack pointer, a hard-wired zero register, the
/// link register, the frame pointer, and registers the Linux ABI reserves (the thread pointer,
/// LoongArch's `$r21`). They tell a pass such as state-in-memory how many guest registers can live
/// in host registers at once; they are not an exact model of any compiler's allocator.
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct HostDesc {
    /// The clang target triple.
    pub triple: String,
    /// The CPU model this description is for (`cortex-a72`, `native`): a name from
    /// [`HostPlugin::cpu_models`].
    pub cpu: String,
    /// Pointer width in bits.
    pub pointer_bits: u32,
    /// Allocatable general-purpose registers (see above).
    pub gprs: u32,
    /// Allocatable floating-point registers.
    pub fprs: u32,
    /// Whether the host is big-endian.
    pub big_endian: bool,
    /// The L1 instruction cache.
    pub l1i: CacheGeometry,
    /// The passes a recipe that lists none runs on this host, in order: the pipeline measured
    /// fastest here (docs/benchmarks/results.md). Older plugins, which do not send it, recommend none.
    #[serde(default)]
    pub recommended_passes: Vec<String>,
}

impl HostDesc {
    /// The description of a 64-bit little-endian host (all of rpt's) for the CPU model `cpu`, with
    /// `gprs` general-purpose and `fprs` floating-point registers free for generated code.
    pub fn little_endian_64(triple: &str, cpu: &str, l1i: CacheGeometry, gprs: u32, fprs: u32) -> HostDesc {
        HostDesc {
            triple: triple.to_string(),
            cpu: cpu.to_string(),
            pointer_bits: 64,
            gprs,
            fprs,
            big_endian: false,
            l1i,
            recommended_passes: Vec::new(),
        }
    }

    /// This description with `passes` as the host's recommended pipeline.
    pub fn recommending(self, passes: &[&str]) -> HostDesc {
        HostDesc {
            recommended_passes: passes.iter().map(|p| p.to_string()).collect(),
            ..self
        }
    }
}

/// The pipeline every built-in host recommends today, the fastest configuration measured
/// (docs/benchmarks/results.md; passes/README.md has each pass's numbers). On x86-64 flag-abi,
/// x87-regions and memarg each lower the instruction count of every bench sample or leave it
/// unchanged; state-in-memory lowers most (vm-ppc to 0.50, vm-x86 0.74, physics-ppc 0.83) and
/// costs calls-ppc 5%. On AArch64 and LoongArch64, with more registers to keep locals in, the
/// write-up behind state-in-memory measured larger gains than on x86-64. switch-recovery runs
/// after flag-abi, whose removal of dead flag writes leaves a compare tree's inner blocks pure
/// (vm-ppc 0.68 of the pipeline without it; no other sample changes). inline runs first, so
/// flag-abi and state-in-memory see its copies in their callers (calls-x86 0.78, calls-ppc 0.84
/// of the pipeline without it; no other sample moves by 0.1%). A host that measures otherwise lists its own.
pub const MEASURED_PIPELINE: &[&str] = &[
    "inline",
    "flag-abi",
    "switch-recovery",
    "x87-regions",
    "memarg",
    "state-in-memory",
];

/// A CPU a host knows by name, with what distinguishes it from the host's other CPUs.
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct CpuModel {
    /// The name recipes use (`cortex-a72`, `apple-m1`, `loongson-3a6000`, `native`).
    pub name: String,
    /// One line for `rpt hosts`: what it is and where users meet it.
    pub summary: String,
    /// Its L1 instruction cache.
    pub l1i: CacheGeometry,
    /// Compile flags that tune code for it without narrowing where the code runs (`-mtune=...`),
    /// added after the host's own flags.
    pub cflags: Vec<String>,
}

/// How the runtime reaches the operating system on a host.
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum CEnvironment {
    /// A C library is there: the runtime's own C-library host part (`runtime/rpt_host_libc.c`)
    /// provides the host primitives of `docs/c-abi.md`.
    Libc,
    /// No C library: the host's shim provides start-up code (`_start`), the host primitives and
    /// whatever the compiler may call by itself (`memcpy`, `memset`, ...). The runtime's C-library
    /// part is left out.
    Freestanding {
        /// The shim's C files, at paths relative to a generation's `src/` (`host/start.c`).
        shim: Vec<SourceFile>,
    },
}

/// When a [`Requirement`] is needed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub enum Purpose {
    /// To compile and link for the host.
    Build,
    /// To run what was built.
    Run,
}

/// What a [`Requirement`] is.
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Needed {
    /// A command found on `PATH` (`clang-19`, `qemu-aarch64`).
    Command(String),
    /// A file at an absolute path (a cross C library, a start-up object).
    File(String),
}

/// Something a host's toolchain or runner needs on this machine, and the package that provides it,
/// so a missing piece is reported as "install this" rather than as a compiler's error.
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Requirement {
    /// What must be there.
    pub needed: Needed,
    /// The Debian package that provides it (`libc6-dev-arm64-cross`).
    pub package: String,
    /// When it is needed.
    pub purpose: Purpose,
}

impl Requirement {
    /// `needed` to compile and link, provided by `package`.
    pub fn to_build(needed: Needed, package: &str) -> Requirement {
        Requirement {
            needed,
            package: package.to_string(),
            purpose: Purpose::Build,
        }
    }

    /// `needed` to run what was built, provided by `package`.
    pub fn to_run(needed: Needed, package: &str) -> Requirement {
        Requirement {
            needed,
            package: package.to_string(),
            purpose: Purpose::Run,
        }
    }

    /// [`CLANG`] and its lld, which every host here compiles and links with.
    pub fn clang_19() -> Vec<Requirement> {
        vec![
            Requirement::to_build(Needed::Command(CLANG.to_string()), "clang-19"),
            Requirement::to_build(Needed::File("/usr/lib/llvm-19/bin/ld.lld".to_string()), "lld-19"),
        ]
    }

    /// A qemu-user emulator command (`qemu-aarch64`), from Debian's qemu-user.
    pub fn qemu_user(program: &str) -> Requirement {
        Requirement::to_run(Needed::Command(program.to_string()), "qemu-user")
    }
}

/// How the host's C compiler is invoked.
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct CompilerSettings {
    /// The compiler command (`clang-19`).
    pub cc: String,
    /// Flags for every compile (target, optimisation, `-fno-strict-aliasing`).
    pub cflags: Vec<String>,
    /// Flags for the final link.
    pub ldflags: Vec<String>,
}

/// The compiler every host here uses.
pub const CLANG: &str = "clang-19";

/// Flags every host compiles with, after its own, each for a reason:
///
/// - `-O2`: the speed recompiled code is for.
/// - `-fno-strict-aliasing`: lifted code reads one guest address with several types.
/// - `-fno-math-errno`: `sqrt` becomes one instruction instead of a libm call that sets errno.
/// - `-ffp-contract=off`: each IR float operation rounds once; fusing into FMA would not.
/// - `-gline-tables-only`: the `#line` guest-pc mapping reaches the binary for profilers
///   and debuggers, without full debug info.
/// - `-Wall`: generated code and the runtime are kept warning-free; rpt reports any warning as
///   a bug of its own.
/// - `-mllvm -enable-nontrivial-unswitch -mllvm -unswitch-threshold=30000`: a loop testing a
///   value it never changes (the PowerPC rounding mode before each floating-point operation, the
///   x87 unit's checks) is copied once per outcome, so the test runs once (clang's -O2 unswitches
///   only loops whose test guards no code). The default threshold (50) refuses most lifted loops:
///   their cold paths count towards their size. 30000 takes physics-ppc's force loop (with the
///   unswitching: physics-ppc 168M host instructions to 125M, physics-x86 142M to 86M, lz-ppc
///   485M to 439M); the real programs' compile times stayed within this machine's noise (xz's PE
///   43-49 s either way, its DOL 80 s).
///   These are LLVM's own options, as clang-19 has them (every host compiles with [`CLANG`]).
///
/// `-fwrapv` is deliberately absent: the emitter does all integer arithmetic in unsigned
/// types, so signed overflow cannot occur in generated code.
pub const COMMON_CFLAGS: &[&str] = &[
    "-O2",
    "-fno-strict-aliasing",
    "-fno-math-errno",
    "-ffp-contract=off",
    "-gline-tables-only",
    "-Wall",
    "-mllvm",
    "-enable-nontrivial-unswitch",
    "-mllvm",
    "-unswitch-threshold=30000",
];

impl CompilerSettings {
    /// [`CLANG`] for `triple`: the target, the host's own `cflags`, then [`COMMON_CFLAGS`]; the
    /// link with lld (fast and deterministic) and the host's `ldflags`.
    pub fn clang_for(triple: &str, cflags: &[&str], ldflags: &[&str]) -> CompilerSettings {
        let target = format!("--target={triple}");
        let owned = |flags: &[&str]| flags.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let mut all_cflags = vec![target.clone()];
        all_cflags.extend(owned(cflags));
        all_cflags.extend(owned(COMMON_CFLAGS));
        let mut all_ldflags = vec![target, "-fuse-ld=lld".to_string()];
        all_ldflags.extend(owned(ldflags));
        CompilerSettings {
            cc: CLANG.to_string(),
            cflags: all_cflags,
            ldflags: all_ldflags,
        }
    }
}

/// How a built binary is started.
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
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

impl Runner {
    /// Under `program` (`qemu-aarch64`) with no arguments of its own: static binaries need no sysroot.
    pub fn emulator(program: &str) -> Runner {
        Runner::Emulator {
            program: program.to_string(),
            args: Vec::new(),
        }
    }
}

/// A host target.
pub trait HostPlugin: Send + Sync {
    /// Name, version and source hash.
    fn info(&self) -> PluginInfo;
    /// The host's description for passes, for its default CPU model (the first of [`cpu_models`]).
    ///
    /// [`cpu_models`]: HostPlugin::cpu_models
    fn desc(&self) -> HostDesc;
    /// The CPU models a recipe may name with `host_cpu`; the first is the default.
    fn cpu_models(&self) -> Vec<CpuModel>;
    /// How to compile and link for it (before any CPU model's or recipe's flags).
    fn compiler(&self) -> CompilerSettings;
    /// Whether there is a C library, and if not, the shim that stands in for it.
    fn environment(&self) -> CEnvironment;
    /// What this machine needs to build for the host and to run the result.
    fn requirements(&self) -> Vec<Requirement>;
    /// How to run what was built.
    fn runner(&self) -> Runner;
}

impl HostDesc {
    /// This description for another of the host's CPU models: its name and L1I geometry.
    pub fn with_cpu(&self, model: &CpuModel) -> HostDesc {
        HostDesc {
            cpu: model.name.clone(),
            l1i: model.l1i,
            ..self.clone()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::CacheGeometry;

    fn geometry(size: u32, ways: u32, line: u32) -> CacheGeometry {
        CacheGeometry { size, ways, line }
    }

    #[test]
    fn real_caches_pass_and_impossible_ones_say_why() {
        assert_eq!(geometry(48 * 1024, 3, 64).check(), Ok(()));
        assert_eq!(geometry(48 * 1024, 3, 64).sets(), Some(256));
        assert_eq!(geometry(192 * 1024, 6, 128).check(), Ok(()));
        for (bad, why) in [
            (geometry(0, 4, 64), "positive"),
            (geometry(32768, 4, 48), "power of two, found 48"),
            (geometry(40000, 4, 64), "multiple of ways * line"),
            (geometry(36 * 1024, 3, 64), "192 sets"),
        ] {
            let err = bad.check().expect_err("impossible geometry");
            assert!(err.contains(why), "{bad:?}: {err}");
        }
        assert_eq!(geometry(u32::MAX, u32::MAX, 2).sets(), None);
    }

    #[test]
    fn geometry_displays_in_kib_where_it_can() {
        assert_eq!(geometry(49152, 3, 64).to_string(), "48 KiB, 3-way, 64-byte lines");
        assert_eq!(geometry(1536, 3, 64).to_string(), "1536 bytes, 3-way, 64-byte lines");
    }
}
