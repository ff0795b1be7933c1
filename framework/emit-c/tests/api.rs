//! Properties of the emitter's API: determinism (of text and of built binaries), stable
//! shard placement, errors that name what is unsupported, and the small generated files.

mod common;

use std::collections::{BTreeMap, BTreeSet};

use rpt_api::{GuestImage, Segment, SegmentFlags};
use rpt_emit_c::{EmitContext, EmitError};
use rpt_ir::{Effects, GuestAddr, HelperDecl, StateDesc, Type};

fn all_programs() -> Vec<std::path::PathBuf> {
    let mut files = common::rir_files("diff");
    files.extend(common::rir_files("golden"));
    files
}

#[test]
fn emitting_twice_gives_identical_text() {
    for path in all_programs() {
        let program = common::load_program(&path);
        let first = common::emit_all(&program, "x.lst");
        let second = common::emit_all(&program, "x.lst");
        assert_eq!(first, second, "{}", path.display());
        let state = rpt_emit_c::cpu_header(&program.state, common::MEMORY, &program.helpers, false);
        assert_eq!(
            state,
            rpt_emit_c::cpu_header(&program.state, common::MEMORY, &program.helpers, false)
        );
    }
}

/// Same inputs in two different directories, with two separate caches (so both really
/// compile) give byte-identical binaries: no path, time or order leaks into the output.
#[test]
fn building_twice_gives_identical_binaries() {
    let program = common::load_program(&common::data_dir("diff").join("calls.rir"));
    let entry = GuestAddr(0x7000);
    let image = rpt_testkit::guest::data_image(".data", 0x10000, &[1, 2, 3, 4], 0x1000, entry);
    let guest = rpt_api::SourceFile {
        path: "guest/part.c".into(),
        contents: r#"#include "cpu.h"
void rpt_guest_init(struct cpu *c, int argc, char **argv) { (void)argc; (void)argv; c->a = 7; }
int rpt_guest_finish(struct cpu *c) { return (int)(c->a & 0x7f); }
int rpt_guest_on_exit(struct cpu *c, uint64_t pc, int reason) { (void)c; (void)pc; (void)reason; return 0; }
uint64_t rpt_guest_caller(struct cpu *c) { (void)c; return 0; }
uint32_t rpt_helper_mix(struct cpu *restrict c, uint32_t a0, uint32_t a1) { (void)c; return a0 ^ a1; }
void rpt_helper_bump_b(struct cpu *restrict c, uint32_t a0) { c->b += a0; }
uint32_t rpt_helper_peek(struct cpu *restrict c, uint32_t a0) { (void)c; return rpt_load_u32_le(0x10000u + (a0 & 0xffcu)); }
void rpt_helper_poke(struct cpu *restrict c, uint32_t a0, uint32_t a1) { (void)c; rpt_store_u32_le(0x10000u + (a0 & 0xffcu), a1); }
void ext_bump(struct cpu *restrict c) { c->a += 1; }
void ext_swap(struct cpu *restrict c) { uint32_t t = c->a; c->a = c->b; c->b = t; }
"#
        .into(),
    };
    let toolchain = common::strict_toolchain();
    let mut binaries = Vec::new();
    let mut dirs = Vec::new();
    for _ in 0..2 {
        let dir = tempfile::tempdir().expect("temporary directory");
        let src = dir.path().join("deeper").join("src");
        let jobs = common::write_generation(
            &src,
            &program,
            &image,
            entry,
            std::slice::from_ref(&guest),
            2,
            common::generation::Choices::BASELINE,
        );
        let binary = common::build(dir.path(), &src, &jobs, &toolchain);
        binaries.push(std::fs::read(&binary).expect("read the binary"));
        let out = rpt_build::run_captured(&rpt_api::Runner::Native, &binary, &[]).expect("run");
        assert!(out.status.code().is_some(), "the binary crashed: {:?}", out);
        dirs.push(dir);
    }
    assert!(binaries[0] == binaries[1], "two builds of the same sources differ");
    let text = String::from_utf8_lossy(&binaries[0]);
    for dir in &dirs {
        let p = dir.path().to_string_lossy();
        assert!(
            !text.contains(p.as_ref()),
            "the binary contains the build directory {p}"
        );
    }
}

#[test]
fn shards_depend_on_the_address_alone() {
    // Fixed values: changing the hash would move every function and invalidate every object.
    assert_eq!(
        rpt_emit_c::shard_of(GuestAddr(0x0040_1000), 16),
        rpt_emit_c::shard_of(GuestAddr(0x0040_1000), 16)
    );
    assert_eq!(rpt_emit_c::shard_of(GuestAddr(0x1234), 0), 0);
    assert_eq!(rpt_emit_c::shard_of(GuestAddr(0x1234), 1), 0);
    let golden: Vec<u32> = [0x1000u64, 0x0040_1000, 0x8000_3100, 0xfff0_0000]
        .iter()
        .map(|a| rpt_emit_c::shard_of(GuestAddr(*a), 8))
        .collect();
    assert_eq!(
        golden,
        vec![3, 1, 0, 6],
        "shard_of changed; every generation's shards would move"
    );
    // Nearby functions (one every 16 bytes) still spread evenly.
    let mut counts = [0u32; 8];
    for i in 0..8000u64 {
        counts[rpt_emit_c::shard_of(GuestAddr(0x0040_0000 + 16 * i), 8) as usize] += 1;
    }
    assert!(
        counts.iter().all(|&c| (800..1200).contains(&c)),
        "uneven shards: {counts:?}"
    );
}

/// [`common::MEMORY`] with a place of its own, for contexts that borrow it.
static TEST_MEMORY: rpt_api::MemoryModel = common::MEMORY;

fn ctx<'a>(
    state: &'a StateDesc,
    helpers: &'a BTreeMap<String, HelperDecl>,
    externs: &'a BTreeMap<GuestAddr, String>,
) -> EmitContext<'a> {
    EmitContext {
        state,
        helpers,
        externs,
        memory: &TEST_MEMORY,
        listing_name: "t.lst",
        memarg: false,
        state_in_locals: rpt_ir::RoleSet::EMPTY,
        calls: &rpt_emit_c::state_use::UNKNOWN_CALLS,
        run_time_tier: false,
        count_instructions: false,
    }
}

#[test]
fn unsupported_operations_are_named() {
    let state = StateDesc::new();
    let (helpers, externs) = (BTreeMap::new(), BTreeMap::new());
    let func = rpt_ir::parse::parse_function(
        "function f_00001000 {\nblock0:\n    v0: f80 = fconst 0x3fff8000000000000000\n    v1: f80 = fadd.rne v0, v0\n    v2: i64 = iconst 0x1000\n    store.le ram v2, v1\n    return\n}\n",
        &state,
    )
    .expect("parse");
    let err = rpt_emit_c::emit_function(&func, &ctx(&state, &helpers, &externs)).expect_err("f80 arithmetic");
    assert!(matches!(err, EmitError::Unsupported { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        "f_00001000: the C backend does not support fadd.rne on f80 yet"
    );
}

#[test]
fn malformed_ir_is_an_error_not_bad_c() {
    let state = StateDesc::new();
    let (helpers, externs) = (BTreeMap::new(), BTreeMap::new());
    let undeclared = rpt_ir::parse::parse_function(
        "function f_00001000 {\nblock0:\n    v0: i32 = call_helper @nothing()\n    exit v0, halt\n}\n",
        &state,
    )
    .expect("parse");
    let err = rpt_emit_c::emit_function(&undeclared, &ctx(&state, &helpers, &externs)).expect_err("undeclared helper");
    assert_eq!(
        err.to_string(),
        "f_00001000: malformed IR: call to undeclared helper @nothing"
    );

    let bad_args = rpt_ir::parse::parse_function(
        "function f_00001000 {\nblock0:\n    jump block1\nblock1(v0: i32):\n    return\n}\n",
        &state,
    )
    .expect("parse");
    let err = rpt_emit_c::emit_function(&bad_args, &ctx(&state, &helpers, &externs)).expect_err("argument count");
    assert!(
        err.to_string().contains("block1 takes 1 arguments but a jump gives 0"),
        "{err}"
    );

    let mut externs = BTreeMap::new();
    externs.insert(GuestAddr(0x2000), "not an identifier".to_string());
    let call = rpt_ir::parse::parse_function("function f_00001000 {\nblock0:\n    tail f_00002000\n}\n", &state)
        .expect("parse");
    let err = rpt_emit_c::emit_function(&call, &ctx(&state, &helpers, &externs)).expect_err("bad symbol");
    assert!(err.to_string().contains("is not a C identifier"), "{err}");
}

#[test]
fn callees_list_direct_targets_and_externs() {
    let program = common::load_program(&common::data_dir("diff").join("calls.rir"));
    let emitted = common::emit_all(&program, "x.lst");
    let entry = emitted
        .iter()
        .find(|f| f.entry == GuestAddr(0x7000))
        .expect("f_00007000");
    let expected: BTreeSet<GuestAddr> = [0x7100, 0x7300, 0xfff0_0000].into_iter().map(GuestAddr).collect();
    assert_eq!(entry.callees, expected);
    let shard = rpt_emit_c::shard_source(&[entry], &program.externs, false);
    assert!(shard.contains("void ext_bump(struct cpu *restrict c);"), "{shard}");
    assert!(shard.contains("void f_00007100(struct cpu *restrict c);"), "{shard}");
}

#[test]
fn listing_is_sorted_and_deduplicated() {
    let lines = vec![
        (GuestAddr(0x401003), "ret".to_string()),
        (GuestAddr(0x401000), "push ebp".to_string()),
        (GuestAddr(0x401003), "ret".to_string()),
        (GuestAddr(0x401001), "mov ebp,\nesp".to_string()),
    ];
    assert_eq!(
        rpt_emit_c::listing(&lines),
        "0x00401000  push ebp\n0x00401001  mov ebp, esp\n0x00401003  ret\n"
    );
}

#[test]
fn image_source_holds_every_segment() {
    let image = GuestImage {
        segments: vec![
            Segment {
                name: ".text\"?".into(),
                addr: GuestAddr(0x401000),
                bytes: (0u8..20).collect(),
                mem_size: 0x1000,
                flags: SegmentFlags {
                    read: true,
                    write: false,
                    execute: true,
                },
            },
            Segment {
                name: ".bss".into(),
                addr: GuestAddr(0x402000),
                bytes: Vec::new(),
                mem_size: 0x2000,
                flags: SegmentFlags {
                    read: true,
                    write: true,
                    execute: false,
                },
            },
        ],
        entry: GuestAddr(0x401000),
        exports: BTreeMap::new(),
        imports: Vec::new(),
    };
    let text = rpt_emit_c::image_source(&image);
    assert!(text.contains("static const uint8_t rpt_segment_0[20] = {"), "{text}");
    assert!(text.contains("\t0x10, 0x11, 0x12, 0x13,\n"), "{text}");
    assert!(
        text.contains("{ \".text\\\"\\?\", 0x00401000ull, 0x1000ull, 0x14ull, rpt_segment_0, RPT_SEGMENT_READ | RPT_SEGMENT_EXECUTE },"),
        "{text}"
    );
    assert!(
        text.contains("{ \".bss\", 0x00402000ull, 0x2000ull, 0x0ull, 0, RPT_SEGMENT_READ | RPT_SEGMENT_WRITE },"),
        "{text}"
    );
    assert!(text.contains("const size_t rpt_segment_count = 2;"), "{text}");
}

#[test]
fn cpu_header_handles_awkward_states() {
    let empty = rpt_emit_c::cpu_header(&StateDesc::new(), common::MEMORY, &BTreeMap::new(), false);
    assert!(empty.contains("\tuint8_t rpt_no_state;\n"), "{empty}");
    let mut helpers = BTreeMap::new();
    helpers.insert(
        "bad.name".to_string(),
        HelperDecl {
            name: "bad.name".into(),
            params: vec![Type::I32],
            result: None,
            effects: Effects::PURE,
            touches: Vec::new(),
        },
    );
    let text = rpt_emit_c::cpu_header(&StateDesc::new(), common::MEMORY, &helpers, false);
    assert!(
        text.contains("#error \"helper name @bad.name is not a C identifier\""),
        "{text}"
    );
    let model = rpt_api::MemoryModel {
        address_bits: 24,
        big_endian: true,
        stack_pointer: None,
        scratch_registers: Vec::new(),
        call_registers: Vec::new(),
    };
    let text = rpt_emit_c::cpu_header(&StateDesc::new(), model, &BTreeMap::new(), false);
    assert!(
        text.contains("#define RPT_GUEST_ADDRESS_BITS 24\n#define RPT_GUEST_BIG_ENDIAN 1\n"),
        "{text}"
    );
}

#[test]
fn cpu_header_includes_the_guest_inline_header_after_the_prototypes() {
    let mut helpers = BTreeMap::new();
    helpers.insert(
        "twice".to_string(),
        HelperDecl {
            name: "twice".into(),
            params: vec![Type::I32],
            result: Some(Type::I32),
            effects: Effects::PURE,
            touches: Vec::new(),
        },
    );
    let without = rpt_emit_c::cpu_header(&StateDesc::new(), common::MEMORY, &helpers, false);
    assert!(!without.contains("guest/inline.h"), "{without}");
    let with = rpt_emit_c::cpu_header(&StateDesc::new(), common::MEMORY, &helpers, true);
    let prototype = with.find("rpt_helper_twice(").expect("the prototype");
    let include = with.find("#include \"guest/inline.h\"").expect("the include");
    assert!(prototype < include, "{with}");
}

#[test]
fn emitter_hash_is_a_sha256() {
    assert_eq!(rpt_emit_c::EMITTER_HASH.len(), 64);
    assert!(rpt_emit_c::EMITTER_HASH.bytes().all(|b| b.is_ascii_hexdigit()));
}
