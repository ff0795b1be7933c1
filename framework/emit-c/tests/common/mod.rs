//! Shared test support: writing a whole generation's `src/` for an IR program and building it.

#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use rpt_api::{GuestImage, HostPlugin, MemoryModel, SourceFile};
use rpt_build::{CompileJob, ObjectCache, Toolchain};
use rpt_emit_c::{EmitContext, EmittedFunction};
use rpt_ir::{GuestAddr, InstKind, Program};

/// The memory model of every test program: a little-endian 32-bit guest.
pub const MEMORY: MemoryModel = MemoryModel {
    address_bits: 32,
    big_endian: false,
};

/// The directory holding this crate's test data.
pub fn data_dir(sub: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests").join(sub)
}

/// The `.rir` files of a data directory, sorted.
pub fn rir_files(sub: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = fs::read_dir(data_dir(sub))
        .unwrap_or_else(|e| panic!("cannot list tests/{sub}: {e}"))
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "rir"))
        .collect();
    files.sort();
    files
}

/// Parses and verifies a program, panicking with the file name on any error.
pub fn load_program(path: &Path) -> Program {
    let text = fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let program = rpt_ir::parse::parse_program(&text).unwrap_or_else(|e| panic!("{}:{e}", path.display()));
    if let Err(e) = rpt_ir::verify::verify_program(&program) {
        panic!("{} does not verify:\n{e}", path.display());
    }
    program
}

/// Emits every function of a program, in address order.
pub fn emit_all(program: &Program, listing_name: &str) -> Vec<EmittedFunction> {
    emit_all_with(program, listing_name, false)
}

/// [`emit_all`], with or without MEMARG.
pub fn emit_all_with(program: &Program, listing_name: &str, memarg: bool) -> Vec<EmittedFunction> {
    let ctx = EmitContext {
        state: &program.state,
        helpers: &program.helpers,
        externs: &program.externs,
        memory: MEMORY,
        listing_name,
        memarg,
    };
    program
        .functions
        .values()
        .map(|f| rpt_emit_c::emit_function(f, &ctx).unwrap_or_else(|e| panic!("emit failed: {e}")))
        .collect()
}

/// The listing of a program's marks (the test programs have no disassembly, so each line names its pc).
pub fn listing_of(program: &Program) -> String {
    let mut lines = Vec::new();
    for f in program.functions.values() {
        for b in &f.blocks {
            for i in &b.insts {
                if let InstKind::Mark { pc } = i.kind {
                    lines.push((pc, format!("mark in {}", f.name())));
                }
            }
        }
    }
    rpt_emit_c::listing(&lines)
}

/// Writes a generation's `src/` (cpu.h, shards, functab.c, image.c, listing, runtime and
/// the given extra files) and returns the compile jobs for its C files, in a fixed order.
pub fn write_generation(
    src: &Path,
    program: &Program,
    image: &GuestImage,
    entry: GuestAddr,
    extra: &[SourceFile],
    shard_count: u32,
) -> Vec<CompileJob> {
    write_generation_with(src, program, image, entry, extra, shard_count, false)
}

/// [`write_generation`], with or without MEMARG.
pub fn write_generation_with(
    src: &Path,
    program: &Program,
    image: &GuestImage,
    entry: GuestAddr,
    extra: &[SourceFile],
    shard_count: u32,
    memarg: bool,
) -> Vec<CompileJob> {
    let emitted = emit_all_with(program, "test.lst", memarg);
    let mut files: BTreeMap<String, String> = BTreeMap::new();
    files.insert(
        "cpu.h".into(),
        rpt_emit_c::cpu_header(&program.state, MEMORY, &program.helpers),
    );
    let mut shards: BTreeMap<u32, Vec<&EmittedFunction>> = BTreeMap::new();
    for f in &emitted {
        shards
            .entry(rpt_emit_c::shard_of(f.entry, shard_count))
            .or_default()
            .push(f);
    }
    for (n, funcs) in &shards {
        files.insert(
            format!("shard_{n:02}.c"),
            rpt_emit_c::shard_source(funcs, &program.externs, memarg),
        );
    }
    let addrs: BTreeSet<GuestAddr> = program.functions.keys().copied().collect();
    files.insert(
        "functab.c".into(),
        rpt_emit_c::function_table(&addrs, &program.externs, entry, memarg),
    );
    files.insert("image.c".into(), rpt_emit_c::image_source(image));
    files.insert("test.lst".into(), listing_of(program));
    for f in rpt_runtime::sources().into_iter().chain(extra.iter().cloned()) {
        files.insert(f.path, f.contents);
    }
    let mut jobs = Vec::new();
    for (path, contents) in &files {
        let full = src.join(path);
        if let Some(dir) = full.parent() {
            fs::create_dir_all(dir).expect("create source directory");
        }
        fs::write(&full, contents).expect("write source file");
        if path.ends_with(".c") {
            jobs.push(CompileJob {
                name: path.trim_end_matches(".c").replace('/', "_"),
                source: full,
                key_extra: format!("{} {}", rpt_emit_c::EMITTER_HASH, rpt_runtime::RUNTIME_HASH),
            });
        }
    }
    jobs
}

/// The x86-64 host's toolchain with warnings turned into errors, so generated C stays warning-free.
pub fn strict_toolchain() -> Toolchain {
    let mut settings = rpt_host_x86_64::X86_64Host.compiler();
    settings
        .cflags
        .extend(["-Wall", "-Wextra", "-Werror"].map(String::from));
    Toolchain::probe(settings).unwrap_or_else(|e| panic!("{e}"))
}

/// Compiles and links a generation written by [`write_generation`] into `<root>/bin/test`.
pub fn build(root: &Path, src: &Path, jobs: &[CompileJob], toolchain: &Toolchain) -> PathBuf {
    let cache = ObjectCache::open(root.join("cache")).unwrap_or_else(|e| panic!("{e}"));
    let report = rpt_build::compile_all(
        toolchain,
        &cache,
        jobs,
        &[src.to_path_buf()],
        &root.join("obj"),
        &|_| {},
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert!(report.warnings.is_empty(), "compiler warnings: {:?}", report.warnings);
    let binary = root.join("bin").join("test");
    rpt_build::link(toolchain, &report.objects, &binary).unwrap_or_else(|e| panic!("{e}"));
    binary
}

/// A small deterministic PRNG (splitmix64), so tests need no dependency and every run
/// draws the same values.
pub struct Rng(u64);

impl Rng {
    /// A generator seeded from a name and a number.
    pub fn new(name: &str, n: u64) -> Rng {
        let mut seed = 0x243f_6a88_85a3_08d3u64 ^ n.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        for b in name.bytes() {
            seed = (seed ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number below `n` (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// A line-based diff of two texts, for golden-file failures.
pub fn diff(expected: &str, actual: &str) -> String {
    let a: Vec<&str> = expected.lines().collect();
    let b: Vec<&str> = actual.lines().collect();
    // Longest common subsequence table, then a walk that prints - and + lines.
    let mut lcs = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            lcs[i][j] = if a[i] == b[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    let mut out = String::new();
    while i < a.len() || j < b.len() {
        if i < a.len() && j < b.len() && a[i] == b[j] {
            out.push_str(&format!("  {}\n", a[i]));
            i += 1;
            j += 1;
        } else if j < b.len() && (i == a.len() || lcs[i][j + 1] >= lcs[i + 1][j]) {
            out.push_str(&format!("+ {}\n", b[j]));
            j += 1;
        } else {
            out.push_str(&format!("- {}\n", a[i]));
            i += 1;
        }
    }
    out
}
