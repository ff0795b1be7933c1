//! The runtime on every host: built with each host plugin's own flags (and the LoongArch64 shim in
//! place of a C library), warning-free under -Wall -Wextra, linked and run natively or under qemu.
//! The guest part here uses only the runtime's services, as a real guest part must.

use std::fs;
use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};

use rpt_api::{CEnvironment, HostPlugin, Runner};

const CPU_H: &str = r#"#ifndef RPT_CPU_H
#define RPT_CPU_H
#define RPT_GUEST_ADDRESS_BITS 32
#define RPT_GUEST_BIG_ENDIAN 0
#include "runtime/rpt_runtime.h"
struct cpu { uint32_t a; };
#endif
"#;

/// argv[1] picks what the entry does; everything is reported with rpt_write, never printf.
const GUEST_C: &str = r#"#include "cpu.h"

static const char *mode = "";

static int same(const char *a, const char *b)
{
	while (*a && *a == *b)
		a++, b++;
	return *a == *b;
}

static void put(const char *text)
{
	size_t n = 0;
	while (text[n])
		n++;
	rpt_write(1, text, n);
}

static void put_hex(uint64_t v)
{
	char digits[19] = "0x";
	for (int i = 0; i < 16; i++)
		digits[2 + i] = "0123456789abcdef"[(v >> (60 - 4 * i)) & 15];
	digits[18] = 0;
	put(digits);
}

static void line(const char *name, uint64_t v)
{
	put(name);
	put("=");
	put_hex(v);
	put("\n");
}

/* Large enough that copying it is a call to memcpy on every host. */
struct big {
	uint8_t bytes[1000];
};

static void entry(struct cpu *restrict c)
{
	if (same(mode, "memory")) {
		/* The whole 4 GiB space is reserved: its top, the image and masked addresses all work. */
		rpt_store_u64_le(0xfffffff8u, 0x0123456789abcdefull);
		line("top", rpt_load_u64_le(0xfffffff8u));
		line("top_byte", rpt_load_u8_le(0xffffffffu));
		line("image", rpt_load_u32_be(0x10000));
		line("masked", rpt_load_u32_be(0x100010000ull));
		rpt_store_u32_le(0x80000000u, 0xcafef00du);
		line("middle", rpt_load_u32_le(0x80000000u));
		line("untouched", rpt_load_u64_le(0x40000000u));
	} else if (same(mode, "rounding")) {
		volatile double third = 1.0, two = 2.0;
		third = third / 3.0;
		line("div_near", rpt_f64_bits(rpt_fdiv_f64(1.0, 3.0, RPT_ROUND_NEAREST)));
		line("div_up", rpt_f64_bits(rpt_fdiv_f64(1.0, 3.0, RPT_ROUND_UP)));
		line("div_down", rpt_f64_bits(rpt_fdiv_f64(1.0, 3.0, RPT_ROUND_DOWN)));
		line("div_zero", rpt_f64_bits(rpt_fdiv_f64(-1.0, 3.0, RPT_ROUND_ZERO)));
		line("sqrt_up", rpt_f64_bits(rpt_fsqrt_f64(two, RPT_ROUND_UP)));
		line("sqrt_down", rpt_f64_bits(rpt_fsqrt_f64(two, RPT_ROUND_DOWN)));
		line("f32_up", rpt_f32_bits(rpt_fconvert_f64_f32(third, RPT_ROUND_UP)));
		line("f32_down", rpt_f32_bits(rpt_fconvert_f64_f32(third, RPT_ROUND_DOWN)));
		line("u64_f32_down", rpt_f32_bits(rpt_u64_to_f32(0xffffffffffffffffull, RPT_ROUND_DOWN)));
		line("ftosi_up", (uint64_t)rpt_ftosi_f64(-2.5, RPT_ROUND_UP));
		/* Every helper restores the mode it found. */
		line("mode_after", (uint64_t)rpt_host_get_rounding());
	} else if (same(mode, "copy")) {
		static struct big a, b;
		for (unsigned i = 0; i < sizeof a.bytes; i++)
			a.bytes[i] = (uint8_t)(i * 7);
		b = a;
		__builtin_memmove(b.bytes + 1, b.bytes, 998);
		__builtin_memset(b.bytes + 500, 0x5a, 13);
		uint64_t sum = 0;
		for (unsigned i = 0; i < sizeof b.bytes; i++)
			sum = sum * 31 + b.bytes[i];
		line("sum", sum);
		line("equal", (uint64_t)(__builtin_memcmp(a.bytes, b.bytes + 1, 400) == 0));
	} else if (same(mode, "echo")) {
		char buf[16];
		int64_t total = 0, n;
		while ((n = rpt_read(0, buf, sizeof buf)) > 0) {
			rpt_write(1, buf, (size_t)n);
			total += n;
		}
		line("read", (uint64_t)total);
	} else if (same(mode, "unlifted")) {
		rpt_dispatch(c, 0x2002);
	}
	c->a = 42;
}

const struct rpt_function rpt_function_table[] = { { 0x5000, entry } };
const size_t rpt_function_count = 1;
const uint64_t rpt_entry_pc = 0x5000;

static const uint8_t seg0[4] = { 0xde, 0xad, 0xbe, 0xef };
const struct rpt_segment rpt_segments[] = {
	{ ".data", 0x10000, 0x100, 4, seg0, RPT_SEGMENT_READ | RPT_SEGMENT_WRITE },
};
const size_t rpt_segment_count = 1;

void rpt_guest_init(struct cpu *c, int argc, char **argv)
{
	c->a = 0;
	mode = argc > 1 ? argv[1] : "";
}

int rpt_guest_finish(struct cpu *c)
{
	return (int)c->a;
}

int rpt_guest_on_exit(struct cpu *c, uint64_t pc, int reason)
{
	(void)c;
	(void)pc;
	(void)reason;
	return 0;
}
"#;

fn hosts() -> Vec<Box<dyn HostPlugin>> {
    vec![
        Box::new(rpt_host_x86_64::X86_64Host),
        Box::new(rpt_host_aarch64::Aarch64Host),
        Box::new(rpt_host_loongarch64::Loongarch64Host),
    ]
}

/// Writes the tree, compiles every C file with the host's flags (a warning fails the test) and links.
fn build(host: &dyn HostPlugin, dir: &Path) -> std::path::PathBuf {
    let mut files = match host.environment() {
        CEnvironment::Libc => rpt_runtime::sources(),
        CEnvironment::Freestanding { shim } => {
            let mut files = rpt_runtime::freestanding_sources();
            files.extend(shim);
            files
        }
    };
    files.push(rpt_api::SourceFile {
        path: "cpu.h".into(),
        contents: CPU_H.into(),
    });
    files.push(rpt_api::SourceFile {
        path: "guest.c".into(),
        contents: GUEST_C.into(),
    });
    let cc = host.compiler();
    let mut objects = Vec::new();
    for f in &files {
        let path = dir.join(&f.path);
        fs::create_dir_all(path.parent().expect("a parent")).expect("create dir");
        fs::write(&path, &f.contents).expect("write source");
    }
    for (i, f) in files.iter().filter(|f| f.path.ends_with(".c")).enumerate() {
        let object = format!("o{i}.o");
        let out = Command::new(&cc.cc)
            .current_dir(dir)
            .args(&cc.cflags)
            .args(["-Wextra", "-I.", "-Iruntime", "-c", &f.path, "-o", &object])
            .output()
            .expect("clang-19 runs");
        assert!(
            out.status.success() && out.stderr.is_empty(),
            "{} on {}: {}",
            f.path,
            host.info().name,
            String::from_utf8_lossy(&out.stderr)
        );
        objects.push(object);
    }
    let out = Command::new(&cc.cc)
        .current_dir(dir)
        .args(&objects)
        .args(["-o", "prog"])
        .args(&cc.ldflags)
        .output()
        .expect("link");
    assert!(
        out.status.success(),
        "link on {}: {}",
        host.info().name,
        String::from_utf8_lossy(&out.stderr)
    );
    dir.join("prog")
}

/// Runs the program under the host's runner with one argument and the given standard input.
fn run(host: &dyn HostPlugin, prog: &Path, mode: &str, stdin: &[u8]) -> (Option<i32>, String, String) {
    let mut cmd = match host.runner() {
        Runner::Native => Command::new(prog),
        Runner::Emulator { program, args } => {
            let mut cmd = Command::new(program);
            cmd.args(args).arg(prog);
            cmd
        }
    };
    let mut child = cmd
        .arg(mode)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the program (or its emulator) starts");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin)
        .expect("write stdin");
    let out = child.wait_with_output().expect("wait");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn the_runtime_behaves_the_same_on_every_host() {
    let mut reference: Option<Vec<(Option<i32>, String, String)>> = None;
    for host in hosts() {
        let name = host.info().name;
        let dir = tempfile::tempdir().expect("temporary directory");
        let prog = build(host.as_ref(), dir.path());
        let results: Vec<_> = ["memory", "rounding", "copy", "echo", "unlifted"]
            .iter()
            .map(|mode| run(host.as_ref(), &prog, mode, b"some input that is longer than one buffer"))
            .collect();
        let (code, memory, stderr) = &results[0];
        assert_eq!(*code, Some(42), "{name}: {stderr}");
        assert!(memory.contains("top=0x0123456789abcdef\n"), "{name}:\n{memory}");
        assert!(memory.contains("image=0x00000000deadbeef\n"), "{name}:\n{memory}");
        assert!(memory.contains("masked=0x00000000deadbeef\n"), "{name}:\n{memory}");
        let rounding = &results[1].1;
        // 1/3 in binary64 lies between ...555 and ...556; nearest rounds down.
        for expected in [
            "div_near=0x3fd5555555555555",
            "div_up=0x3fd5555555555556",
            "div_down=0x3fd5555555555555",
            "div_zero=0xbfd5555555555555",
            "mode_after=0x0000000000000000",
        ] {
            assert!(
                rounding.contains(expected),
                "{name}: {expected} missing from\n{rounding}"
            );
        }
        assert!(
            results[3].1.starts_with("some input that is longer than one buffer"),
            "{name}"
        );
        assert!(
            results[3].1.ends_with("read=0x0000000000000029\n"),
            "{name}: {}",
            results[3].1
        );
        assert_eq!(
            (results[4].0, results[4].2.as_str()),
            (
                Some(125),
                "rpt: guest exit at 0x00002002: unlifted code (no lifted function at this address)\n"
            ),
            "{name}"
        );
        // Everything else must match the x86-64 host bit for bit.
        match &reference {
            None => reference = Some(results),
            Some(reference) => assert_eq!(&results, reference, "{name} differs from x86-64"),
        }
    }
}
