//! The guest's C part and the win32-console platform, compiled with clang-19 for every host against
//! the real runtime (framework/runtime/c, and the LoongArch64 shim) and a `cpu.h` written from this
//! guest's state table, then run natively or under qemu:
//! a hand-written stand-in for lifted code calls each extern the way lifted code does (arguments
//! and a return address pushed on the guest stack) and checks what comes back.

mod common;
// The runtime's test support: the hosts and the runtime each builds.
#[path = "../../../framework/runtime/tests/common/mod.rs"]
mod host_support;

use std::path::{Path, PathBuf};
use std::process::Command;

use host_support::{command_on, hosts, runtime_for};
use rpt_api::{GuestPlugin, HostPlugin, SourceFile};
use rpt_guest_x86_pe::X86Pe;
use rpt_guest_x86_pe::state::state_desc;

/// `cpu.h` as docs/c-abi.md describes it: the memory model, the runtime header, `struct cpu`.
fn cpu_header() -> String {
    let mut out = String::from(
        "#ifndef RPT_CPU_H\n#define RPT_CPU_H\n#define RPT_GUEST_ADDRESS_BITS 32\n#define RPT_GUEST_BIG_ENDIAN 0\n\
         #include \"runtime/rpt_runtime.h\"\nstruct cpu {\n",
    );
    let c_type = |ty: rpt_ir::Type| match ty {
        rpt_ir::Type::I64 => "uint64_t",
        rpt_ir::Type::I32 => "uint32_t",
        rpt_ir::Type::I16 => "uint16_t",
        _ => "uint8_t",
    };
    for (_, slot) in state_desc().iter() {
        let len = match slot.layout {
            rpt_ir::SlotLayout::Array { len } => format!("[{len}]"),
            _ => String::new(),
        };
        out.push_str(&format!("\t{} {}{len};\n", c_type(slot.ty), slot.name));
    }
    out.push_str("};\n");
    for h in rpt_guest_x86_pe::x87::helpers() {
        let result = h.result.map_or("void", c_type);
        out.push_str(&format!("{result} rpt_helper_{}(struct cpu *restrict c", h.name));
        for (i, ty) in h.params.iter().enumerate() {
            out.push_str(&format!(", {} a{i}", c_type(*ty)));
        }
        out.push_str(");\n");
    }
    out.push_str("#endif\n");
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
void rpt_win32_KERNEL32_GetVersion(struct cpu *restrict c);
void rpt_win32_KERNEL32_GlobalMemoryStatus(struct cpu *restrict c);
void rpt_win32_KERNEL32_SetConsoleCtrlHandler(struct cpu *restrict c);
void rpt_win32_KERNEL32_GetEnvironmentVariableW(struct cpu *restrict c);
void rpt_win32_KERNEL32_GetLastError(struct cpu *restrict c);
void rpt_win32_msvcrt__write(struct cpu *restrict c);
void rpt_win32_msvcrt__read(struct cpu *restrict c);
void rpt_win32_msvcrt__close(struct cpu *restrict c);
void rpt_win32_msvcrt__lseeki64(struct cpu *restrict c);
void rpt_win32_msvcrt__fstati64(struct cpu *restrict c);
void rpt_win32_msvcrt__setmode(struct cpu *restrict c);
void f_00401000(struct cpu *restrict c);

const struct rpt_function rpt_function_table[] = { { 0x00401000u, f_00401000, 0 } };
const size_t rpt_function_count = 1;
const uint64_t rpt_entry_pc = 0x00401000u;
const struct rpt_segment rpt_segments[] = { { "none", 0, 0, 0, 0, 0 } };
const size_t rpt_segment_count = 0;
const struct rpt_fault_site rpt_fault_sites[] = { { 0, 0 } };
const size_t rpt_fault_site_count = 0;
const uint64_t rpt_return_sites[] = { 0 };
const size_t rpt_return_site_count = 0;

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

/* Calls a cdecl extern as lifted code does: it must leave its arguments for the caller to pop. */
static uint32_t call_cdecl(struct cpu *c, rpt_fn f, uint32_t nargs, const uint32_t *args)
{
	uint32_t before = c->esp;
	for (uint32_t i = nargs; i > 0; i--)
		push(c, args[i - 1]);
	push(c, 0x00401234u);
	f(c);
	if (c->esp != before - 4 * nargs)
		rpt_process_exit(96);
	c->esp = before;
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

	/* Windows 8's version, as Windows 8.1 and later tell a program without a manifest. */
	write_hex(c, call(c, rpt_win32_KERNEL32_GetVersion, 0, 0));
	uint32_t status = 0x00500200u;
	call(c, rpt_win32_KERNEL32_GlobalMemoryStatus, 1, &status);
	write_hex(c, rpt_load_u32_le(status) ^ rpt_load_u32_le(status + 8));
	uint32_t handler_args[2] = { 0x00401000u, 1 };
	write_hex(c, call(c, rpt_win32_KERNEL32_SetConsoleCtrlHandler, 2, handler_args));

	/* RPT_PLATFORM_TEST=Yes is in the environment: found without regard to case, too small a
	 * buffer gets the size needed, a missing name ERROR_ENVVAR_NOT_FOUND (203). */
	const char *name = "rpt_platform_TEST";
	for (uint32_t i = 0; i <= 17; i++)
		rpt_store_u16_le(0x00500300u + 2 * i, i < 17 ? (uint8_t)name[i] : 0);
	uint32_t env_args[3] = { 0x00500300u, 0x00500400u, 8 };
	write_hex(c, call(c, rpt_win32_KERNEL32_GetEnvironmentVariableW, 3, env_args));
	write_hex(c, rpt_load_u32_le(0x00500400u) ^ rpt_load_u32_le(0x00500404u));
	env_args[2] = 3;
	write_hex(c, call(c, rpt_win32_KERNEL32_GetEnvironmentVariableW, 3, env_args));
	rpt_store_u16_le(0x00500300u, 'x');
	write_hex(c, call(c, rpt_win32_KERNEL32_GetEnvironmentVariableW, 3, env_args));
	write_hex(c, call(c, rpt_win32_KERNEL32_GetLastError, 0, 0));

	/* msvcrt's descriptors: stdout in text mode writes "\n" as "\r\n", in binary mode as it is;
	 * it is a pipe here (the test collects it), which cannot seek and is not open for reading. */
	rpt_store_u8_le(BUF, 'T');
	rpt_store_u8_le(BUF + 1, '\n');
	uint32_t write_args[3] = { 1, BUF, 2 };
	write_hex(c, call_cdecl(c, rpt_win32_msvcrt__write, 3, write_args));
	uint32_t mode_args[2] = { 1, 0x8000u };
	call_cdecl(c, rpt_win32_msvcrt__setmode, 2, mode_args);
	rpt_store_u8_le(BUF, 'B'); /* write_hex used BUF in between */
	rpt_store_u8_le(BUF + 1, '\n');
	call_cdecl(c, rpt_win32_msvcrt__write, 3, write_args);
	uint32_t stat_args[2] = { 1, 0x00500500u };
	write_hex(c, call_cdecl(c, rpt_win32_msvcrt__fstati64, 2, stat_args));
	write_hex(c, rpt_load_u16_le(0x00500506u));
	uint32_t seek_args[4] = { 1, 0, 0, 1 };
	write_hex(c, call_cdecl(c, rpt_win32_msvcrt__lseeki64, 4, seek_args));
	uint32_t read_args[3] = { 1, BUF, 2 };
	write_hex(c, call_cdecl(c, rpt_win32_msvcrt__read, 3, read_args));
	uint32_t close_args[1] = { 40 };
	write_hex(c, call_cdecl(c, rpt_win32_msvcrt__close, 1, close_args));

	uint32_t code = 42;
	call(c, rpt_win32_KERNEL32_ExitProcess, 1, &code);
	rpt_process_exit(95);
}
"#;

/// Writes the runtime (with the C-library host part or the host's shim), `cpu.h`, the platform and
/// the fake guest into `dir`, compiles each with the host's own flags (warnings are errors; the
/// guest's files also get -Wmissing-prototypes and plain C11) and links them with the host's flags.
fn build_for(host: &dyn HostPlugin, dir: &Path) -> PathBuf {
    let mut files = runtime_for(host);
    let runtime_count = files.len();
    files.extend(
        X86Pe
            .runtime_sources("win32-console", &Default::default())
            .expect("sources"),
    );
    files.push(SourceFile {
        path: "cpu.h".into(),
        contents: cpu_header(),
    });
    files.push(SourceFile {
        path: "fake_guest.c".into(),
        contents: FAKE_GUEST.into(),
    });
    for f in &files {
        let path = dir.join(&f.path);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("create dir");
        std::fs::write(&path, &f.contents).expect("write source");
    }
    let cc = host.compiler();
    let strict = ["-Wmissing-prototypes", "-std=c11"];
    let mut objects = Vec::new();
    for (i, f) in files.iter().enumerate().filter(|(_, f)| f.path.ends_with(".c")) {
        let object = dir.join(format!("o{i}.o"));
        let mut cmd = Command::new(&cc.cc);
        cmd.current_dir(dir)
            .args(&cc.cflags)
            .args(["-Wextra", "-Werror", "-I.", "-Iruntime"]);
        if i >= runtime_count {
            cmd.args(strict);
        }
        common::run_tool(
            cmd.args(["-c", &f.path, "-o"]).arg(&object),
            "the platform test needs clang-19 (scripts/install-deps.sh)",
        );
        objects.push(object);
    }
    let exe = dir.join("fake.exe");
    common::run_tool(
        Command::new(&cc.cc)
            .current_dir(dir)
            .args(&objects)
            .arg("-o")
            .arg(&exe)
            .args(&cc.ldflags),
        "linking needs lld-19 (and, for aarch64, the arm64 cross glibc)",
    );
    exe
}

/// The platform's C reaches the host only through the runtime's services, so it builds with every
/// host's flags (the freestanding LoongArch64 host included, with its shim in place of a C library)
/// and behaves the same everywhere, natively or under qemu.
#[test]
fn the_c_parts_compile_cleanly_and_behave_on_every_host() {
    for host in hosts() {
        let name = host.info().name;
        let dir = common::scratch(&format!("platform-{name}"));
        let exe = build_for(host.as_ref(), &dir);
        let mut cmd = command_on(host.as_ref(), &exe);
        let out = cmd
            .args(["alpha", "b c", "q\"x", "", "tail\\"])
            .env("RPT_PLATFORM_TEST", "Yes")
            .output()
            .expect("run (qemu-user runs the foreign hosts)");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            out.status.code(),
            Some(42),
            "{name}: stdout: {stdout}\nstderr: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let lines: Vec<&str> = stdout.lines().collect();
        assert_eq!(lines[0], r#"fake.exe alpha "b c" "q\"x" "" tail\"#, "{name}");
        // 64 KiB steps after msvcrt's first 1 MiB heap arena (argv and the environment) at 0x10000000:
        // 100000 bytes take two granules.
        assert_eq!(&lines[1..5], ["10100000", "10120000", "10101000", "00000001"], "{name}");
        // GetVersion (6.2 build 9200); GlobalMemoryStatus's dwLength (32) ^ dwTotalPhys (1.5 GiB);
        // SetConsoleCtrlHandler's TRUE.
        assert_eq!(&lines[5..8], ["23f00206", "60000020", "00000001"], "{name}");
        // GetEnvironmentVariableW: 3 units ("Yes" as UTF-16: 'Y' 'e' ^ 's' 0), then 4 needed with a
        // buffer of 3, then 0 and ERROR_ENVVAR_NOT_FOUND for a name that is not there.
        assert_eq!(
            &lines[8..13],
            ["00000003", "0065002a", "00000004", "00000000", "000000cb"],
            "{name}"
        );
        // _write: "T\r\n" in text mode and its count, "B\n" in binary mode; _fstati64's 0 and
        // _S_IFIFO; _lseeki64's -1 (ESPIPE), _read's -1 (stdout is not readable), _close's -1 (EBADF).
        assert!(
            stdout.ends_with("T\r\n00000002\nB\n00000000\n00001000\nffffffff\nffffffff\nffffffff\n"),
            "{name}: {stdout:?}"
        );
    }
}
