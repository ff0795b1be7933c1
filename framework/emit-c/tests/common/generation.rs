//! A generation's sources for an IR program, laid out as `rpt` writes them: `cpu.h`, the shards,
//! `functab.c`, `image.c`, the listing, the runtime and the test's own files. The emitter's tests
//! build them as `rpt` builds a generation (`mod.rs`); the guests' oracles include this file by
//! path and build them with the compiler and flags their oracle needs.

#![allow(dead_code)] // Each test binary uses a different subset.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use rpt_api::{GuestImage, MemoryModel, SourceFile};
use rpt_emit_c::state_use::ProgramStateUse;
use rpt_emit_c::{EmitContext, EmittedFunction};
use rpt_ir::{GuestAddr, InstKind, Program};
use rpt_testkit::cbuild::CCompiler;

/// The code-generation choices a test emits with (the default is none: the baseline).
#[derive(Clone, Copy, Debug, Default)]
pub struct Choices {
    /// MEMARG.
    pub memarg: bool,
    /// State in locals, for slots of these roles.
    pub state_in_locals: rpt_ir::RoleSet,
}

impl Choices {
    /// The baseline.
    pub const BASELINE: Choices = Choices {
        memarg: false,
        state_in_locals: rpt_ir::RoleSet::EMPTY,
    };

    /// Every combination the C backend has: baseline, MEMARG, state in locals (all roles), both.
    pub fn all() -> [Choices; 4] {
        let locals = rpt_ir::RoleSet::of(&rpt_ir::SlotRole::ALL);
        [
            (false, rpt_ir::RoleSet::EMPTY),
            (true, rpt_ir::RoleSet::EMPTY),
            (false, locals),
            (true, locals),
        ]
        .map(|(memarg, state_in_locals)| Choices {
            memarg,
            state_in_locals,
        })
    }

    /// A suffix naming the choices in test output (`""` for the baseline).
    pub fn suffix(self) -> String {
        let mut out = String::new();
        if self.memarg {
            out.push_str(" (memarg)");
        }
        if !self.state_in_locals.is_empty() {
            out.push_str(" (state in locals)");
        }
        out
    }
}

/// What each function of `program` reads and writes, with state in locals (as `rpt recompile`
/// analyses it: calls hand over what this says); nothing without.
pub fn state_uses(program: &Program, memory: &MemoryModel, choices: Choices) -> ProgramStateUse {
    if choices.state_in_locals.is_empty() {
        return ProgramStateUse::default();
    }
    // No scratch registers: the test drivers compare every register after each function returns,
    // where the runtime of a real program reads only the results and the preserved ones.
    rpt_emit_c::state_use::analyze(program, &Default::default(), memory.stack_pointer, &[])
}

/// Emits every function of a program for a guest of `memory`'s model, in address order, with
/// `choices`; the listing they point into is `listing_name`.
pub fn emit_functions(
    program: &Program,
    memory: MemoryModel,
    listing_name: &str,
    choices: Choices,
) -> Vec<EmittedFunction> {
    let uses = state_uses(program, &memory, choices);
    program
        .functions
        .values()
        .map(|f| {
            let calls = uses.calls_of(f);
            let ctx = EmitContext {
                state: &program.state,
                helpers: &program.helpers,
                externs: &program.externs,
                memory: &memory,
                listing_name,
                memarg: choices.memarg,
                state_in_locals: choices.state_in_locals,
                calls: &calls,
                run_time_tier: false,
                count_instructions: false,
            };
            rpt_emit_c::emit_function(f, &ctx).unwrap_or_else(|e| panic!("{}: emit failed: {e}", f.name()))
        })
        .collect()
}

/// The listing of a program's marks (test programs have no disassembly, so each line names its pc).
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

/// The files of a generation's `src/` for `program` (a guest of `memory`'s model, entered at
/// `entry`, its data in `image`) in `shard_count` shards, with the runtime and the `extra` files,
/// by path.
pub fn generation_sources(
    program: &Program,
    memory: MemoryModel,
    image: &GuestImage,
    entry: GuestAddr,
    extra: &[SourceFile],
    shard_count: u32,
    choices: Choices,
) -> BTreeMap<String, String> {
    let emitted = emit_functions(program, memory.clone(), "test.lst", choices);
    let mut files: BTreeMap<String, String> = BTreeMap::new();
    // As `rpt` decides it: the guest's inline header is included when its runtime has one.
    let inline_header = extra.iter().any(|f| f.path == rpt_api::GUEST_INLINE_HEADER);
    files.insert(
        "cpu.h".into(),
        rpt_emit_c::cpu_header(&program.state, memory.clone(), &program.helpers, inline_header),
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
            rpt_emit_c::shard_source(funcs, &program.externs, choices.memarg),
        );
    }
    let addrs: BTreeSet<GuestAddr> = program.functions.keys().copied().collect();
    files.insert(
        "functab.c".into(),
        rpt_emit_c::function_table(
            &addrs,
            &program.externs,
            entry,
            choices.memarg,
            &state_uses(program, &memory, choices),
        ),
    );
    files.insert("image.c".into(), rpt_emit_c::image_source(image));
    files.insert(
        "faults.c".into(),
        rpt_emit_c::fault_sites_source(&[], &Default::default()),
    );
    files.insert("test.lst".into(), listing_of(program));
    for f in rpt_runtime::sources().into_iter().chain(extra.iter().cloned()) {
        files.insert(f.path, f.contents);
    }
    files
}

/// Writes `files` under `dir` (their folders too) and returns the paths of the C files among
/// them, in path order.
pub fn write_sources(dir: &Path, files: &BTreeMap<String, String>) -> Vec<String> {
    for (path, contents) in files {
        let full = dir.join(path);
        if let Some(parent) = full.parent() {
            fs::create_dir_all(parent).expect("create source directory");
        }
        fs::write(&full, contents).expect("write source file");
    }
    files.keys().filter(|p| p.ends_with(".c")).cloned().collect()
}

/// The flags the guests' oracles build a generation's sources with: the runtime's `main` renamed,
/// so that the test's driver (which `#undef`s the macro) runs the cases instead; no warnings, as
/// the drivers are not the code under test (the emitter's own tests build with `-Werror`).
pub const DRIVER_CFLAGS: &[&str] = &[
    "-O1",
    "-fno-strict-aliasing",
    "-w",
    "-I",
    ".",
    "-Dmain=rpt_runtime_main",
];

/// Writes `files` under `dir` and builds them with clang-19, [`DRIVER_CFLAGS`] and `extra_cflags`
/// into the program `dir/name`.
pub fn build_driver(dir: &Path, files: &BTreeMap<String, String>, extra_cflags: &[&str], name: &str) -> PathBuf {
    let sources = write_sources(dir, files);
    let cflags = [DRIVER_CFLAGS, extra_cflags].concat();
    let clang = CCompiler {
        command: "clang-19",
        cflags: &cflags,
        ldflags: &["-lm"],
        hint: "compiled cases are built with clang-19 (scripts/install-deps.sh)",
    };
    clang.build(dir, &sources, name)
}
