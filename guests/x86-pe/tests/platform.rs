//! The guest's C part and the win32-console platform, compiled with clang-19 against the real
//! runtime (framework/runtime/c) and a `cpu.h` written from this guest's state table, then run:
//! a hand-written stand-in for lifted code calls each extern the way lifted code does (arguments
//! and a return address pushed on the guest stack) and checks what comes back.

mod common;

use std::path::Path;
use std::process::Command;

use rpt_api::GuestPlugin;
use rpt_guest_x86_pe::X86Pe;
use rpt_guest_x86_pe::state::SLOTS;

/// `cpu.h` as docs/c-abi.md describes it: the memory model, the runtime header, `struct cpu`.
fn cpu_header() -> String {
    let mut out = String::from(
        "#ifndef RPT_CPU_H\n#define RPT_CPU_H\n#define RPT_GUEST_ADDRESS_BITS 32\n#define RPT_GUEST_BIG_ENDIAN 0\n\
         #include \"runtime/rpt_runtime.h\"\nstruct cpu {\n",
    );
    for (name, ty, _) in SLOTS {
        let c = if ty == rpt_ir::Type::I32 { "uint32_t" } else { "uint8_t" };
        out.push_str(&format!("\t{c} {name};\n"));
    }
    out.push_str("};\n#endif\n");
    out
}

/// Stands in for the emitter's functab.c, image.c and one lifted function.
const FAKE_GUEST: &str = r#"
#include "cpu.h"

void rpt_win32_KERNEL32_GetStdHandle(struct cpu *restrict c);
void rpt_win32_KERNEL32_WriteFile(struct cpu *restrict c);
void rpt_win32_KERNEL32_ExitProcess(struct cpu *restrict c);
void rpt_win32_KERNEL32_GetCommandLineA(struct cpu *restrict c);
void rpt_win32_KERNEL32_VirtualAlloc(struct cpu *restrict c);
void rpt_win32_KERNEL32_VirtualFree(struct cpu *restrict c);
void f_00401000(struct cpu *restrict c);

const struct rpt_function rpt_function_table[] = { { 0x00401000u, f_00401000 } };
const size_t rpt_function_count = 1;
const uint64_t rpt_entry_pc = 0x00401000u;
const struct rpt_segment rpt_segments[] = { { "none", 0, 0, 0, 0, 0 } };
const size_t rpt_segment_count = 0;

#define BUF 0x00500000u
#define WRITTEN 0x00500100u

static void push(struct cpu *c, uint32_t v)
{
	c->esp -= 4;
	rpt_store_u32_le(c->esp, v);
}

/* Calls an extern as lifted code does and checks that it popped its arguments (stdcall). */
static uint32_t call(struct cpu *c, rpt_fn f, uint32_t nargs, const uint32_t *args)
{
	uint32_t before = c->esp;
	for (uint32_t i = nargs; i > 0; i--)
		push(c, args[i - 1]);
	push(c, 0x00401234u);
	c->ebx = 0x1111u;
	c->esi = 0x2222u;
	c->edi = 0x3333u;
	c->ebp = 0x4444u;
	f(c);
	if (c->esp != before || c->ebx != 0x1111u || c->esi != 0x2222u || c->edi != 0x3333u || c->ebp != 0x4444u)
		rpt_process_exit(90);
	return c->eax;
}

static uint32_t out_handle;

static void write_guest(struct cpu *c, uint32_t addr, uint32_t len)
{
	uint32_t args[5] = { out_handle, addr, len, WRITTEN, 0 };
	rpt_store_u32_le(WRITTEN, 0xffffffffu);
	if (call(c, rpt_win32_KERNEL32_WriteFile, 5, args) != 1 || rpt_load_u32_le(WRITTEN) != len)
		rpt_process_exit(91);
}

static void write_text(struct cpu *c, const char *s)
{
	uint32_t n = 0;
	for (; s[n]; n++)
		rpt_store_u8_le(BUF + n, (uint8_t)s[n]);
	write_guest(c, BUF, n);
}

static void write_hex(struct cpu *c, uint32_t v)
{
	char text[10];
	for (int i = 0; i < 8; i++)
		text[i] = "0123456789abcdef"[(v >> (28 - 4 * i)) & 15];
	text[8] = '\n';
	text[9] = 0;
	write_text(c, text);
}

void f_00401000(struct cpu *restrict c)
{
	uint32_t std_output = 0xfffffff5u, std_error = 0xfffffff4u, bogus = 7;
	out_handle = call(c, rpt_win32_KERNEL32_GetStdHandle, 1, &std_output);
	if (call(c, rpt_win32_KERNEL32_GetStdHandle, 1, &bogus) != 0xffffffffu)
		rpt_process_exit(92);
	uint32_t err_handle = call(c, rpt_win32_KERNEL32_GetStdHandle, 1, &std_error);
	if (err_handle == out_handle)
		rpt_process_exit(93);

	uint32_t cmd = call(c, rpt_win32_KERNEL32_GetCommandLineA, 0, 0);
	uint32_t len = 0;
	while (rpt_load_u8_le(cmd + len))
		len++;
	write_guest(c, cmd, len);
	write_text(c, "\n");

	uint32_t alloc_args[4] = { 0, 100000, 0x3000, 4 };
	uint32_t a = call(c, rpt_win32_KERNEL32_VirtualAlloc, 4, alloc_args);
	uint32_t b = call(c, rpt_win32_KERNEL32_VirtualAlloc, 4, alloc_args);
	write_hex(c, a);
	write_hex(c, b);
	if (rpt_load_u32_le(a + 99996) != 0 || rpt_load_u32_le(b) != 0)
		rpt_process_exit(94);
	rpt_store_u32_le(a + 99996, 5);
	uint32_t commit_args[4] = { a + 4096, 4096, 0x1000, 4 };
	write_hex(c, call(c, rpt_win32_KERNEL32_VirtualAlloc, 4, commit_args));
	uint32_t free_args[3] = { a, 0, 0x8000 };
	write_hex(c, call(c, rpt_win32_KERNEL32_VirtualFree, 3, free_args));

	uint32_t code = 42;
	call(c, rpt_win32_KERNEL32_ExitProcess, 1, &code);
	rpt_process_exit(95);
}
"#;

#[test]
fn the_c_parts_compile_cleanly_and_behave() {
    let dir = common::scratch("platform");
    let runtime_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../framework/runtime/c");
    std::fs::create_dir_all(dir.join("runtime")).expect("mkdir runtime");
    std::fs::create_dir_all(dir.join("guest")).expect("mkdir guest");
    for f in ["rpt_runtime.h", "rpt_host.h", "rpt_runtime.c", "rpt_host_libc.c"] {
        std::fs::copy(runtime_dir.join(f), dir.join("runtime").join(f))
            .unwrap_or_else(|e| panic!("the runtime's {f} (framework/runtime/c) is needed: {e}"));
    }
    std::fs::write(dir.join("cpu.h"), cpu_header()).expect("write cpu.h");
    std::fs::write(dir.join("fake_guest.c"), FAKE_GUEST).expect("write fake guest");
    let mut objects = Vec::new();
    let sources = X86Pe
        .runtime_sources("win32-console", &Default::default())
        .expect("sources");
    for src in &sources {
        std::fs::write(dir.join(&src.path), &src.contents).expect("write guest source");
    }
    let strict = ["-Wall", "-Wextra", "-Werror", "-Wmissing-prototypes", "-std=c11"];
    let compile = |file: &str, flags: &[&str], objects: &mut Vec<std::path::PathBuf>| {
        let obj = dir.join(format!("{}.o", file.replace('/', "_")));
        common::run_tool(
            Command::new("clang-19")
                .args(["-O2", "-fno-strict-aliasing", "-c", "-I"])
                .arg(&dir)
                .args(flags)
                .arg(dir.join(file))
                .arg("-o")
                .arg(&obj),
            "the platform test needs clang-19",
        );
        objects.push(obj);
    };
    for src in &sources {
        compile(&src.path, &strict, &mut objects);
    }
    compile("fake_guest.c", &strict, &mut objects);
    compile("runtime/rpt_runtime.c", &[], &mut objects);
    compile("runtime/rpt_host_libc.c", &[], &mut objects);
    let exe = dir.join("fake.exe");
    common::run_tool(
        Command::new("clang-19").args(&objects).arg("-o").arg(&exe).arg("-lm"),
        "clang-19 links",
    );

    let out = Command::new(&exe)
        .args(["alpha", "b c", "q\"x", "", "tail\\"])
        .output()
        .expect("run");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(42),
        "stdout: {stdout}\nstderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines[0], r#"fake.exe alpha "b c" "q\"x" "" tail\"#);
    // 64 KiB steps from 0x10000000: 100000 bytes take two granules.
    assert_eq!(&lines[1..], ["10000000", "10020000", "10001000", "00000001"]);
}
