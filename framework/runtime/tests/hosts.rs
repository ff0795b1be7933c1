//! The runtime on every host: built with each host plugin's own flags (and the LoongArch64 shim in
//! place of a C library), warning-free under -Wall -Wextra, linked and run natively or under qemu.
//! The guest part here uses only the runtime's services, as a real guest part must: memory,
//! rounding (fused multiply-adds included), output and input, the sandbox's files, the environment,
//! clocks and resume points.

mod common;

use std::fs;
use std::io::Write as _;
use std::path::Path;
use std::process::Stdio;

use common::{command_on, hosts, runtime_for};
use rpt_api::HostPlugin;

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

static void line_int(const char *name, int64_t v)
{
	line(name, (uint64_t)v);
}

/* The sandbox: the test makes dir/, outside.txt next to the sandbox, link.txt -> ../outside.txt and
 * linkdir -> .. inside it; nothing here may reach outside. */
static void files(void)
{
	int fd = rpt_open("dir/new.txt", RPT_OPEN_WRITE | RPT_OPEN_CREATE | RPT_OPEN_EXCLUSIVE);
	line("created", fd >= 0);
	line("wrote", rpt_write(fd, "hello, sandbox", 14));
	line_int("end", rpt_seek(fd, 0, RPT_SEEK_END));
	line_int("closed", rpt_close(fd));
	line_int("again", rpt_open("dir/new.txt", RPT_OPEN_WRITE | RPT_OPEN_CREATE | RPT_OPEN_EXCLUSIVE));
	line("again_why", (uint64_t)rpt_last_error());
	fd = rpt_open("dir/new.txt", RPT_OPEN_READ);
	line_int("at", rpt_seek(fd, 7, RPT_SEEK_SET));
	char buf[32];
	int64_t n = rpt_read(fd, buf, sizeof buf);
	line_int("read", n);
	put("[");
	rpt_write(1, buf, n > 0 ? (size_t)n : 0);
	put("]\n");
	line_int("read_end", rpt_read(fd, buf, sizeof buf));
	rpt_close(fd);
	fd = rpt_open("dir/new.txt", RPT_OPEN_WRITE | RPT_OPEN_APPEND);
	rpt_write(fd, "!", 1);
	line_int("appended", rpt_seek(fd, 0, RPT_SEEK_CUR));
	rpt_close(fd);
	line_int("renamed", rpt_rename("dir/new.txt", "moved.txt"));
	line_int("old", rpt_open("dir/new.txt", RPT_OPEN_READ));
	line("old_why", (uint64_t)rpt_last_error());
	const char *refused[] = { "../outside.txt", "dir/../../outside.txt", "/etc/passwd", "link.txt",
				  "linkdir/outside.txt", "dir", "", "dir//x", "./moved.txt" };
	for (unsigned i = 0; i < sizeof refused / sizeof refused[0]; i++) {
		int r = rpt_open(refused[i], RPT_OPEN_READ);
		put(refused[i]);
		line_int(": refused", r < 0 ? rpt_last_error() : -r);
	}
	line_int("write_through_link", rpt_open("link.txt", RPT_OPEN_WRITE | RPT_OPEN_TRUNCATE));
	line_int("rename_out", rpt_rename("moved.txt", "../escaped.txt"));
	line_int("remove_link", rpt_remove("link.txt"));
	line_int("remove_moved", rpt_remove("moved.txt"));
	line_int("remove_missing", rpt_remove("moved.txt"));
	line("missing_why", (uint64_t)rpt_last_error());
	line_int("terminal", rpt_is_terminal(1));
}

static void environment(void)
{
	size_t count = 0;
	const char *value = "(unset)";
	for (const char *e; (e = rpt_env(count)) != NULL; count++) {
		const char *want = "RPT_TEST_VALUE=";
		size_t k = 0;
		while (want[k] && e[k] == want[k])
			k++;
		if (!want[k])
			value = e + k;
	}
	put("value=[");
	put(value);
	put("]\n");
	line("some", count > 0);
}

static void clocks(void)
{
	uint64_t before = rpt_monotonic_ns();
	rpt_sleep_ns(2000000);
	uint64_t after = rpt_monotonic_ns();
	line("slept", after - before >= 2000000);
	/* 2020-01-01 in nanoseconds since 1970. */
	line("recent", rpt_realtime_ns() > INT64_C(1577836800000000000));
}

/* Resume points: the resumed function recurses, computing with doubles so the callee-saved
 * floating-point registers change, then jumps back from the bottom three times. */
static uint64_t resume_serial;
static unsigned resume_rounds;

static void established(struct cpu *c, uint64_t serial, void *ctx)
{
	(void)c;
	*(unsigned *)ctx += 1;
	resume_serial = serial;
}

static double descend(struct cpu *c, unsigned depth, double x)
{
	if (depth == 0) {
		if (resume_rounds < 3) {
			resume_rounds++;
			rpt_resume(c, resume_serial);
			rpt_process_exit(97);
		}
		return x;
	}
	double y = descend(c, depth - 1, x * 1.5 + (double)depth);
	return y - x / 3.0;
}

static void resumable(struct cpu *restrict c)
{
	volatile double seed = 0.25 * (double)(resume_rounds + 1);
	c->a = (uint32_t)(descend(c, 20, seed) * 1000.0);
}

static void resume(struct cpu *c)
{
	volatile double start = 3.0;
	double kept = start * 7.0; /* lives across the jumps, in a callee-saved register if anywhere */
	unsigned established_calls = 0;
	rpt_dispatch_resumable(c, 0x6000, established, &established_calls);
	line("established", established_calls);
	line("rounds", resume_rounds);
	line("result", c->a);
	line("kept", rpt_f64_bits(kept * 2.0));
	line("dangling", (uint64_t)rpt_resume(c, resume_serial));
}

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
		/* (1 + 2^-52)^2 - 1 = 2^-51 + 2^-104 rounds once, so directed modes see the 2^-104;
		 * (1 + 2^-23)^2 - 1 likewise in single precision. */
		volatile double wide = rpt_f64_from_bits(0x3ff0000000000001ull);
		volatile float narrow = rpt_f32_from_bits(0x3f800001u);
		line("fma_near", rpt_f64_bits(rpt_fma_f64(wide, wide, -1.0, RPT_ROUND_NEAREST)));
		line("fma_up", rpt_f64_bits(rpt_fma_f64(wide, wide, -1.0, RPT_ROUND_UP)));
		line("fma_down", rpt_f64_bits(rpt_fma_f64(-wide, wide, 1.0, RPT_ROUND_DOWN)));
		line("fma_zero", rpt_f64_bits(rpt_fma_f64(-wide, wide, 1.0, RPT_ROUND_ZERO)));
		line("fma_f32_up", rpt_f32_bits(rpt_fma_f32(narrow, narrow, -1.0f, RPT_ROUND_UP)));
		line("fma_f32_down", rpt_f32_bits(rpt_fma_f32(narrow, narrow, -1.0f, RPT_ROUND_DOWN)));
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
	} else if (same(mode, "files")) {
		files();
	} else if (same(mode, "env")) {
		environment();
	} else if (same(mode, "clocks")) {
		clocks();
	} else if (same(mode, "resume")) {
		resume(c);
	}
	c->a = 42;
}

const struct rpt_function rpt_function_table[] = { { 0x5000, entry, 0, 1 }, { 0x6000, resumable, 0, 1 } };
const size_t rpt_function_count = 2;
const uint64_t rpt_entry_pc = 0x5000;

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
	return (int)c->a;
}

int rpt_guest_on_exit(struct cpu *c, uint64_t pc, int reason)
{
	(void)c;
	(void)pc;
	(void)reason;
	return 0;
}

uint64_t rpt_guest_caller(struct cpu *c)
{
	(void)c;
	return 0;
}
"#;

/// Writes the tree, compiles every C file with the host's flags (a warning fails the test) and links.
fn build(host: &dyn HostPlugin, dir: &Path) -> std::path::PathBuf {
    let mut files = runtime_for(host);
    files.push(rpt_api::SourceFile {
        path: "cpu.h".into(),
        contents: CPU_H.into(),
    });
    files.push(rpt_api::SourceFile {
        path: "guest.c".into(),
        contents: GUEST_C.into(),
    });
    for f in &files {
        let path = dir.join(&f.path);
        fs::create_dir_all(path.parent().expect("a parent")).expect("create dir");
        fs::write(&path, &f.contents).expect("write source");
    }
    let units: Vec<&str> = files
        .iter()
        .map(|f| f.path.as_str())
        .filter(|p| p.ends_with(".c"))
        .collect();
    rpt_testkit::host::compile_and_link(host, dir, &units, &["-Wextra", "-I.", "-Iruntime"]);
    dir.join("prog")
}

/// Runs the program under the host's runner with one argument, the given standard input and
/// extra environment variables, in `cwd`.
fn run(
    host: &dyn HostPlugin,
    prog: &Path,
    mode: &str,
    stdin: &[u8],
    env: &[(&str, &Path)],
    cwd: &Path,
) -> (Option<i32>, String, String) {
    let mut cmd = command_on(host, prog);
    for (name, value) in env {
        cmd.env(name, value);
    }
    let mut child = cmd
        .arg(mode)
        .current_dir(cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the program (or its emulator) starts");
    match child.stdin.take().expect("stdin").write_all(stdin) {
        Ok(()) => {}
        // Only the `echo` mode reads its input; another may have ended before the write.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
        Err(e) => panic!("write stdin: {e}"),
    }
    let out = child.wait_with_output().expect("wait");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A sandbox with a directory, and links pointing out of it at a file next to it.
fn make_sandbox(base: &Path) -> std::path::PathBuf {
    let sandbox = base.join("box");
    fs::create_dir_all(sandbox.join("dir")).expect("mkdir");
    fs::write(base.join("outside.txt"), "outside").expect("write");
    std::os::unix::fs::symlink("../outside.txt", sandbox.join("link.txt")).expect("symlink");
    std::os::unix::fs::symlink("..", sandbox.join("linkdir")).expect("symlink");
    sandbox
}

/// What the `files` mode prints: every refusal names its reason (RPT_HOST_ERROR_*: 2 not found,
/// 3 access, 4 exists, 5 is a directory, 7 invalid).
const FILES_EXPECTED: &str = "\
created=0x0000000000000001
wrote=0x000000000000000e
end=0x000000000000000e
closed=0x0000000000000000
again=0xffffffffffffffff
again_why=0x0000000000000004
at=0x0000000000000007
read=0x0000000000000007
[sandbox]
read_end=0x0000000000000000
appended=0x000000000000000f
renamed=0x0000000000000000
old=0xffffffffffffffff
old_why=0x0000000000000002
../outside.txt: refused=0x0000000000000007
dir/../../outside.txt: refused=0x0000000000000007
/etc/passwd: refused=0x0000000000000007
link.txt: refused=0x0000000000000003
linkdir/outside.txt: refused=0x0000000000000002
dir: refused=0x0000000000000005
: refused=0x0000000000000007
dir//x: refused=0x0000000000000007
./moved.txt: refused=0x0000000000000007
write_through_link=0xffffffffffffffff
rename_out=0xffffffffffffffff
remove_link=0x0000000000000000
remove_moved=0x0000000000000000
remove_missing=0xffffffffffffffff
missing_why=0x0000000000000002
terminal=0x0000000000000000
";

#[test]
fn the_runtime_behaves_the_same_on_every_host() {
    let mut reference: Option<Vec<(Option<i32>, String, String)>> = None;
    for host in hosts() {
        let name = host.info().name;
        let dir = tempfile::tempdir().expect("temporary directory");
        let prog = build(host.as_ref(), dir.path());
        let base = tempfile::tempdir().expect("temporary directory");
        let sandbox = make_sandbox(base.path());
        let value = Path::new("a value with spaces");
        let env: &[(&str, &Path)] = &[("RPT_SANDBOX", &sandbox), ("RPT_TEST_VALUE", value)];
        let results: Vec<_> = [
            "memory", "rounding", "copy", "echo", "unlifted", "files", "env", "clocks", "resume",
        ]
        .iter()
        .map(|mode| {
            run(
                host.as_ref(),
                &prog,
                mode,
                b"some input that is longer than one buffer",
                env,
                base.path(),
            )
        })
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
            // 2^-51, then 2^-51 + 2^-103: the fused 2^-104 pushes a directed mode one step.
            "fma_near=0x3cc0000000000000",
            "fma_up=0x3cc0000000000001",
            "fma_down=0xbcc0000000000001",
            "fma_zero=0xbcc0000000000000",
            "fma_f32_up=0x0000000034800001",
            "fma_f32_down=0x0000000034800000",
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
        assert_eq!(
            (results[5].0, results[5].1.as_str()),
            (Some(42), FILES_EXPECTED),
            "{name}: {}",
            results[5].2
        );
        // Nothing outside the sandbox changed; inside, only what the test made is left.
        assert_eq!(
            fs::read_to_string(base.path().join("outside.txt")).expect("outside.txt"),
            "outside"
        );
        let mut left: Vec<String> = fs::read_dir(base.path())
            .expect("base")
            .chain(fs::read_dir(&sandbox).expect("sandbox"))
            .chain(fs::read_dir(sandbox.join("dir")).expect("dir"))
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(left, ["box", "dir", "linkdir", "outside.txt"], "{name}");
        assert_eq!(
            results[6].1, "value=[a value with spaces]\nsome=0x0000000000000001\n",
            "{name}"
        );
        assert_eq!(
            results[7].1, "slept=0x0000000000000001\nrecent=0x0000000000000001\n",
            "{name}"
        );
        let resume = &results[8].1;
        for expected in [
            "established=0x0000000000000001\n",
            "rounds=0x0000000000000003\n",
            // 3.0 * 7.0 * 2.0 = 42.0: kept intact across three jumps.
            "kept=0x4045000000000000\n",
            "dangling=0x0000000000000000\n",
        ] {
            assert!(resume.contains(expected), "{name}: {expected} missing from\n{resume}");
        }
        // Everything else must match the x86-64 host bit for bit.
        match &reference {
            None => reference = Some(results),
            Some(reference) => assert_eq!(&results, reference, "{name} differs from x86-64"),
        }
    }
}
