//! The C runtime on its own, compiled with clang-19 against a hand-written `cpu.h`,
//! function table and image: warning-free builds, dispatch, exits and start-up.

use std::fs;
use std::path::Path;
use std::process::{Command, Output};

const CPU_H: &str = r#"#ifndef RPT_CPU_H
#define RPT_CPU_H
#define RPT_GUEST_ADDRESS_BITS 32
#define RPT_GUEST_BIG_ENDIAN 0
#include "runtime/rpt_runtime.h"
struct cpu { uint32_t a; uint32_t pc; };
#endif
"#;

/// The guest part of the MEMARG direct tables' test: functions with `_m` entries, found through
/// `rpt_resolve_m_fast`, one of them (0x2008) not `direct`, so only the table of every function
/// holds it (a `direct` one is in both); argv[1] = "unaligned" asks for an address between two of
/// them, which must not run either neighbour.
const DIRECT_C: &str = r#"#include "cpu.h"
#include <stdio.h>
#include <string.h>

static const char *mode = "";

#define FN(addr) \
	static void f_##addr(struct cpu *restrict c) { (void)c; } \
	static void f_##addr##_m(struct cpu *restrict c, uint8_t *mb) { (void)mb; c->a = c->a * 10u + ((addr >> 2) & 0xfu); }
FN(0x1000) FN(0x1004) FN(0x100c) FN(0x2008) FN(0x8001014)

static void entry_m(struct cpu *restrict c, uint8_t *mb)
{
	static const uint64_t pcs[] = { 0x1000, 0x1004, 0x100c, 0x2008 };
	if (!strcmp(mode, "unaligned")) {
		rpt_resolve_m_fast(c, 0x1006)(c, mb);
		return;
	}
	for (unsigned i = 0; i < sizeof pcs / sizeof pcs[0]; i++)
		rpt_resolve_m_fast(c, pcs[i])(c, mb);
	/* 2^27 bytes above the first function: a 32-bit guest's tables cover its whole space. */
	rpt_resolve_m_fast(c, 0x8001014)(c, mb);
	/* The table of direct functions holds the direct ones only, at their exact addresses. */
	if (rpt_direct_m(0x2008) || rpt_direct_m(0x1006) || rpt_direct_m(0x1004) != f_0x1004_m ||
	    rpt_direct_m(0x8001014) != f_0x8001014_m || rpt_direct_m(0xffffffffu))
		c->a = 0;
}
/* The runtime starts the entry's plain function, which enters MEMARG code as generated code does. */
static void entry(struct cpu *restrict c)
{
	entry_m(c, rpt_mem);
}

const struct rpt_function rpt_function_table[] = {
	{ 0x1000, f_0x1000, f_0x1000_m, 1 }, { 0x1004, f_0x1004, f_0x1004_m, 1 }, { 0x100c, f_0x100c, f_0x100c_m, 1 },
	{ 0x2008, f_0x2008, f_0x2008_m, 0 }, { 0x3000, entry, entry_m, 1 }, { 0x8001014, f_0x8001014, f_0x8001014_m, 1 },
};
const size_t rpt_function_count = 6;
const uint64_t rpt_entry_pc = 0x3000;
"#;

/// A guest part with seven functions at odd addresses; argv[1] says what the entry does.
const GUEST_C: &str = r#"#include "cpu.h"
#include <stdio.h>
#include <string.h>

static const char *mode = "";

#define FN(addr) static void f_##addr(struct cpu *restrict c) { c->a = c->a * 10u + (addr & 0xfu); }
FN(0x1001) FN(0x1003) FN(0x1005) FN(0x2001) FN(0x2003) FN(0x3007) FN(0x400f)

static void entry(struct cpu *restrict c)
{
	static const uint64_t pcs[] = { 0x1001, 0x1003, 0x1005, 0x2001, 0x2003, 0x3007, 0x400f };
	if (!strcmp(mode, "lookup")) {
		for (unsigned i = 0; i < sizeof pcs / sizeof pcs[0]; i++)
			rpt_dispatch(c, pcs[i]);
		for (uint64_t pc = 0xff0; pc < 0x4020; pc++)
			if (rpt_lookup(pc) && pc != 0x1001 && pc != 0x1003 && pc != 0x1005 && pc != 0x2001 && pc != 0x2003 && pc != 0x3007 && pc != 0x400f && pc != 0x5000)
				c->a = 0xdead;
	} else if (!strcmp(mode, "unlifted")) {
		rpt_dispatch(c, 0x2002);
	} else if (!strcmp(mode, "halt")) {
		rpt_exit(c, 0x80003100u, RPT_EXIT_HALT);
	} else if (!strcmp(mode, "handled")) {
		rpt_exit(c, 0x1234, RPT_EXIT_SYSCALL);
	} else if (!strcmp(mode, "unreachable")) {
		rpt_unreachable(c, 0x401000);
	} else if (!strcmp(mode, "memory")) {
		/* The image: 4 bytes at 0x10000 and zeroes up to mem_size; the top of memory is writable. */
		c->a = rpt_load_u32_be(0x10000) ^ rpt_load_u32_le(0x10004);
		rpt_store_u64_le(0xfffffff8u, 0x0123456789abcdefull);
		if (rpt_load_u8_le(0xffffffffu) != 0x01 || rpt_load_u16_be(0xfffffff8u) != 0xefcd)
			c->a = 0xbad;
		/* Addresses wider than the guest's are masked into its space. */
		if (rpt_load_u32_le(0x100010000ull) != rpt_load_u32_le(0x10000))
			c->a = 0xbad2;
	} else if (!strcmp(mode, "near")) {
		/* Near accesses whose 32-bit sums wrap reach the bytes the guest means through the mirrors
		 * (bases opaque to clang, as lifted code's registers are). */
		volatile uint32_t top = 0xfffffffeu, low = 2;
		int ok = 1;
		rpt_store_u32_le_near(rpt_mem, top, 4, 0x11223344u);
		ok &= rpt_load_u32_le(2) == 0x11223344u;
		rpt_store_u32_be_near(rpt_mem, low, -0x10, 0xa1b2c3d4u);
		ok &= rpt_load_u32_be(0xfffffff2u) == 0xa1b2c3d4u;
		/* Straddling the top: fffe..ffff, then 0..5. */
		rpt_store_u64_le_near(rpt_mem, top, 0, 0x8877665544332211ull);
		ok &= rpt_load_u32_le(0xfffffffcu) == 0x22110000u && rpt_load_u32_le(0) == 0x66554433u;
		ok &= rpt_load_u64_le_near(rpt_mem, low, -4) == 0x8877665544332211ull;
		/* The ends of the window, either way. */
		rpt_store_u16_le(0x40000000u, 0xbeefu);
		rpt_store_u8_le(0xc0000003u, 0x5a);
		rpt_store_u8_le(0x3ffffffdu, 0xa5);
		ok &= rpt_load_u16_le_near(rpt_mem, low, 0x3fffffff - 1) == 0xbeefu;
		ok &= rpt_load_u8_le_near(rpt_mem, low, -(int64_t)0x40000000 + 1) == 0x5a;
		ok &= rpt_load_u8_be_near(rpt_mem, top, 0x3fffffff) == 0xa5;
		if (!ok)
			c->a = 0xbad3;
		else
			c->a = 0x600d;
	}
}

const struct rpt_function rpt_function_table[] = {
	{ 0x1001, f_0x1001, 0, 1 }, { 0x1003, f_0x1003, 0, 1 }, { 0x1005, f_0x1005, 0, 1 }, { 0x2001, f_0x2001, 0, 1 },
	{ 0x2003, f_0x2003, 0, 1 }, { 0x3007, f_0x3007, 0, 1 }, { 0x400f, f_0x400f, 0, 1 }, { 0x5000, entry, 0, 1 },
};
const size_t rpt_function_count = 8;
const uint64_t rpt_entry_pc = 0x5000;
"#;

/// What both guest parts share: an image segment and the guest's hooks.
const GUEST_COMMON_C: &str = r#"
static const uint8_t seg0[4] = { 0xde, 0xad, 0xbe, 0xef };
const struct rpt_segment rpt_segments[] = {
	{ ".data", 0x10000, 0x100, 4, seg0, RPT_SEGMENT_READ | RPT_SEGMENT_WRITE },
};
const size_t rpt_segment_count = 1;
const struct rpt_fault_site rpt_fault_sites[] = { { 0, 0 } };
const size_t rpt_fault_site_count = 0;
const uint64_t rpt_return_sites[] = { 0 };
const size_t rpt_return_site_count = 0;

void rpt_guest_init(struct cpu *c, int argc, char **argv)
{
	c->a = 0;
	mode = argc > 1 ? argv[1] : "";
}

int rpt_guest_finish(struct cpu *c)
{
	printf("a=%x\n", c->a);
	return (int)(c->a & 0x3f);
}

uint64_t rpt_guest_caller(struct cpu *c)
{
	(void)c;
	return 0;
}

int rpt_guest_on_exit(struct cpu *c, uint64_t pc, int reason)
{
	if (reason != RPT_EXIT_SYSCALL)
		return 0;
	printf("syscall at %llx\n", (unsigned long long)pc);
	c->a = 7;
	return 1;
}
"#;

const FLAGS: &[&str] = &["-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", "-fno-strict-aliasing"];

fn write_tree(dir: &Path) {
    fs::create_dir_all(dir.join("runtime")).expect("create runtime dir");
    for f in rpt_runtime::sources() {
        fs::write(dir.join(&f.path), &f.contents).expect("write runtime");
    }
    fs::write(dir.join("cpu.h"), CPU_H).expect("write cpu.h");
    fs::write(dir.join("guest.c"), format!("{GUEST_C}{GUEST_COMMON_C}")).expect("write guest.c");
    fs::write(dir.join("direct.c"), format!("{DIRECT_C}{GUEST_COMMON_C}")).expect("write direct.c");
}

fn clang(dir: &Path, args: &[&str]) -> Output {
    Command::new("clang-19")
        .current_dir(dir)
        .args(args)
        .output()
        .expect("clang-19 runs")
}

fn build(dir: &Path) -> std::path::PathBuf {
    build_guest(dir, "guest.c", "prog")
}

fn build_guest(dir: &Path, guest: &str, out_name: &str) -> std::path::PathBuf {
    write_tree(dir);
    let mut args = FLAGS.to_vec();
    args.extend([
        "-I.",
        "runtime/rpt_runtime.c",
        "runtime/rpt_host_libc.c",
        guest,
        "-fuse-ld=lld",
        "-lm",
        "-o",
        out_name,
    ]);
    let out = clang(dir, &args);
    assert!(
        out.status.success() && out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    dir.join(out_name)
}

fn run(prog: &Path, mode: &str) -> (Option<i32>, String, String) {
    let out = Command::new(prog).arg(mode).output().expect("run the test program");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn the_runtime_compiles_cleanly_for_every_host() {
    let dir = tempfile::tempdir().expect("temporary directory");
    write_tree(dir.path());
    for target in ["x86_64-linux-gnu", "aarch64-linux-gnu", "loongarch64-linux-gnu"] {
        let target_flag = format!("--target={target}");
        let mut args = FLAGS.to_vec();
        args.extend([target_flag.as_str(), "-I.", "-c", "runtime/rpt_runtime.c", "-o", "rt.o"]);
        let out = clang(dir.path(), &args);
        assert!(
            out.status.success(),
            "{target}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn dispatch_finds_every_function_and_nothing_else() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let prog = build(dir.path());
    let (code, stdout, stderr) = run(&prog, "lookup");
    // Each function appends the low hex digit of its address, as a decimal digit: 1 3 5 1 3 7 15.
    let expected = [1u32, 3, 5, 1, 3, 7, 15].iter().fold(0u32, |a, d| a * 10 + d);
    assert_eq!(stdout, format!("a={expected:x}\n"), "{stderr}");
    assert_eq!(code, Some((expected & 0x3f) as i32));
}

#[test]
fn the_direct_table_finds_functions_and_refuses_addresses_between_them() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let prog = build_guest(dir.path(), "direct.c", "direct");
    let (code, stdout, stderr) = run(&prog, "all");
    // Every function through the table, the last far above the others. Each appends
    // its address >> 2 & 15 as a decimal digit: 0, 1, 3, 2, 5.
    assert_eq!(stdout, format!("a={:x}\n", 1325), "{stderr}");
    assert_eq!(code, Some(1325 & 0x3f));
    let (code, stdout, stderr) = run(&prog, "unaligned");
    assert_eq!((code, stdout.as_str()), (Some(125), ""));
    assert_eq!(
        stderr,
        "rpt: guest exit at 0x00001006: unlifted code (no lifted function at this address)\n"
    );
}

#[test]
fn exits_report_the_guest_address() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let prog = build(dir.path());
    let (code, stdout, stderr) = run(&prog, "unlifted");
    assert_eq!(code, Some(125));
    assert_eq!(stdout, "");
    assert_eq!(
        stderr,
        "rpt: guest exit at 0x00002002: unlifted code (no lifted function at this address)\n"
    );
    let (code, _, stderr) = run(&prog, "halt");
    assert_eq!(
        (code, stderr.as_str()),
        (Some(125), "rpt: guest exit at 0x80003100: the guest halted\n")
    );
    let (code, _, stderr) = run(&prog, "unreachable");
    assert_eq!(code, Some(125));
    assert_eq!(
        stderr,
        "rpt: reached code marked unreachable in the function at 0x00401000\n"
    );
}

#[test]
fn a_guest_part_may_handle_an_exit_and_finish_normally() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let prog = build(dir.path());
    let (code, stdout, stderr) = run(&prog, "handled");
    assert_eq!(
        (code, stdout.as_str(), stderr.as_str()),
        (Some(7), "syscall at 1234\na=7\n", "")
    );
}

#[test]
fn start_up_copies_segments_into_reserved_memory() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let prog = build(dir.path());
    let (code, stdout, stderr) = run(&prog, "memory");
    // 0xdeadbeef (big-endian read) xor 0 (zero-filled past the initialised bytes).
    assert_eq!(stdout, "a=deadbeef\n", "{stderr}");
    assert_eq!(code, Some(0x2f));
}

/// A near access (a base plus a displacement within a quarter of the space, unmasked) whose 32-bit
/// sum wraps, below 0 or above 4 GiB, reaches the byte the guest means through the mirrors the
/// runtime maps around guest memory: what a masked access there reads and writes.
#[test]
fn near_accesses_that_wrap_reach_the_mirrored_bytes() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let prog = build(dir.path());
    let (code, stdout, stderr) = run(&prog, "near");
    assert_eq!(stdout, "a=600d\n", "{stderr}");
    assert_eq!(code, Some(0x0d));
}

#[test]
fn sources_are_at_their_contract_paths() {
    let paths: Vec<String> = rpt_runtime::sources().into_iter().map(|f| f.path).collect();
    assert_eq!(
        paths,
        vec![
            "runtime/rpt_runtime.h",
            "runtime/rpt_host.h",
            "runtime/rpt_runtime.c",
            "runtime/rpt_host_libc.c"
        ]
    );
    let freestanding: Vec<String> = rpt_runtime::freestanding_sources()
        .into_iter()
        .map(|f| f.path)
        .collect();
    assert_eq!(paths[..3], freestanding[..]);
    // Only the C-library part may include libc headers.
    for f in rpt_runtime::freestanding_sources() {
        for header in [
            "<stdlib.h>",
            "<unistd.h>",
            "<fenv.h>",
            "<sys/mman.h>",
            "<stdio.h>",
            "<string.h>",
        ] {
            assert!(!f.contents.contains(header), "{} includes {header}", f.path);
        }
    }
    assert_eq!(rpt_runtime::RUNTIME_HASH.len(), 64);
}
