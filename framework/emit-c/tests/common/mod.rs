//! Shared test support: writing a whole generation's `src/` for an IR program and building it.

#![allow(dead_code)]

pub mod generation;

use std::fs;
use std::path::{Path, PathBuf};

use rpt_api::{GuestImage, HostPlugin, MemoryModel, SourceFile};
use rpt_build::{CompileJob, ObjectCache, Toolchain};
use rpt_emit_c::EmittedFunction;
use rpt_ir::{GuestAddr, Program};

/// The memory model of every test program: a little-endian 32-bit guest.
pub const MEMORY: MemoryModel = MemoryModel {
    address_bits: 32,
    big_endian: false,
    stack_pointer: None,
    scratch_registers: Vec::new(),
    call_registers: Vec::new(),
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

/// Parses and verifies a program file (a golden file's input, or a whole `tests/diff` file),
/// panicking with the file name on any error.
pub fn load_program(path: &Path) -> Program {
    let text = fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let input = rpt_testkit::filetest::input_of(&text).unwrap_or(text);
    parse_program(path, &input)
}

/// Parses and verifies the program text read from `path`, panicking with the file name on any error.
pub fn parse_program(path: &Path, text: &str) -> Program {
    let program = rpt_ir::parse::parse_program(text).unwrap_or_else(|e| panic!("{}:{e}", path.display()));
    if let Err(e) = rpt_ir::verify::verify_program(&program) {
        panic!("{} does not verify:\n{e}", path.display());
    }
    program
}

/// Emits every function of a program, in address order.
pub fn emit_all(program: &Program, listing_name: &str) -> Vec<EmittedFunction> {
    emit_all_with(program, listing_name, generation::Choices::BASELINE)
}

/// [`emit_all`], with `choices`.
///
/// A slot named `sp` is the stack pointer (`MemoryModel::stack_pointer`), so test programs can
/// save and restore registers on a stack.
pub fn emit_all_with(program: &Program, listing_name: &str, choices: generation::Choices) -> Vec<EmittedFunction> {
    generation::emit_functions(program, memory_of(program), listing_name, choices)
}

/// [`MEMORY`], with the slot named `sp` (if any) as the stack pointer.
pub fn memory_of(program: &Program) -> MemoryModel {
    MemoryModel {
        stack_pointer: program.state.find("sp"),
        ..MEMORY
    }
}

/// Writes a generation's `src/` (cpu.h, shards, functab.c, image.c, listing, runtime and the
/// given extra files), with `choices`, and returns the compile jobs for its C files, in a
/// fixed order.
pub fn write_generation(
    src: &Path,
    program: &Program,
    image: &GuestImage,
    entry: GuestAddr,
    extra: &[SourceFile],
    shard_count: u32,
    choices: generation::Choices,
) -> Vec<CompileJob> {
    let files = generation::generation_sources(program, memory_of(program), image, entry, extra, shard_count, choices);
    generation::write_sources(src, &files)
        .into_iter()
        .map(|path| CompileJob {
            name: path.trim_end_matches(".c").replace('/', "_"),
            source: src.join(&path),
            key_extra: format!("{} {}", rpt_emit_c::EMITTER_HASH, rpt_runtime::RUNTIME_HASH),
        })
        .collect()
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
