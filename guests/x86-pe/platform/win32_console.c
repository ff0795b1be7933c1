/*
 * win32_console.c - the win32-console platform: process start-up, the guest memory the platform
 * owns (TEB, PEB, data imports, TLS), and the KERNEL32 functions console programs and the mingw
 * CRT call. The msvcrt half lives in the msvcrt_*.c files (see win32_console.h).
 *
 * Every function here is an extern in the sense of docs/c-abi.md: it is called like a lifted
 * function with esp pointing at the return address, reads its stdcall arguments above it,
 * leaves its result in eax and pops the return address and its arguments, as Windows does.
 * Registers other than eax, ecx, edx and esp are preserved, as the Win32 ABI promises.
 *
 * Decisions:
 * - One process, one thread. Critical sections only count; TLS slots live in the TEB.
 * - Standard handles are the small constants below; WriteFile and ReadFile map them to host
 *   fds 0-2 (through msvcrt's streams for stdout/stderr, so both keep their order).
 * - GetCommandLineA returns a string built once at start-up from the host's argv: the basename
 *   of argv[0] (so `./build/demo.exe a b` gives "demo.exe a b"), then each argument quoted by
 *   the rules CommandLineToArgvW undoes. It lives at 0x7ffe0000, just above the stack.
 * - VirtualAlloc is a bump allocator from 0x10000000 in 64 KiB steps, shared with msvcrt's heap.
 *   Memory it hands out has never been handed out before, so it is still the zero-filled, lazily
 *   committed reservation; it is not cleared again (that would commit every page of a large
 *   reservation). A commit inside an earlier allocation returns the page it names. VirtualFree
 *   only says yes.
 * - Data imports (msvcrt's `_iob`, `__initenv`, ...) are bound as the Windows loader binds every
 *   import: at start-up the platform walks the image's import directory in guest memory and
 *   points each data import's IAT slot at the variable it owns in the data area.
 * - TLS: the image's TLS template is copied into a block that TEB->ThreadLocalStoragePointer[0]
 *   points at, its index variable gets 0, and its TLS callbacks run with DLL_PROCESS_ATTACH before
 *   the entry point (the loader makes them discovery seeds).
 * - Modules: GetModuleHandle(NULL) is the image; KERNEL32 and msvcrt have fixed handles; other
 *   DLLs do not exist. GetProcAddress finds the functions and variables the image imports (by
 *   name, from any module): their thunks are the only platform code lifted code can reach.
 * - The operating system is reached only through the runtime's services (rpt_write, rpt_open,
 *   rpt_monotonic_ns, rpt_process_exit, ...; docs/c-abi.md), never libc, so the platform builds
 *   on freestanding hosts too.
 */
#include "win32_console.h"

/* ---------------------------------------------------------------- constants */

#define RPT_WIN32_ALLOC_GRANULE 0x10000u

#define RPT_WIN32_STD_INPUT_HANDLE 0xfffffff6u  /* (DWORD)-10 */
#define RPT_WIN32_STD_OUTPUT_HANDLE 0xfffffff5u /* (DWORD)-11 */
#define RPT_WIN32_STD_ERROR_HANDLE 0xfffffff4u  /* (DWORD)-12 */
#define RPT_WIN32_INVALID_HANDLE 0xffffffffu

/* The handles GetStdHandle gives out; any other handle is invalid. */
#define RPT_WIN32_HANDLE_STDIN 0x00000010u
#define RPT_WIN32_HANDLE_STDOUT 0x00000014u
#define RPT_WIN32_HANDLE_STDERR 0x00000018u

/* Module handles: the image's base, and fixed addresses for the two system DLLs. */
#define RPT_WIN32_KERNEL32_HANDLE 0x7c800000u
#define RPT_WIN32_MSVCRT_HANDLE 0x77c10000u

/* GetCurrentProcessId and GetCurrentThreadId. */
#define RPT_WIN32_PROCESS_ID 0x100u
#define RPT_WIN32_THREAD_ID 0x104u

/* Win32 error codes. */
#define RPT_ERROR_FILE_NOT_FOUND 2u
#define RPT_ERROR_INVALID_HANDLE 6u
#define RPT_ERROR_NOT_ENOUGH_MEMORY 8u
#define RPT_ERROR_MOD_NOT_FOUND 126u
#define RPT_ERROR_PROC_NOT_FOUND 127u
#define RPT_ERROR_ENVVAR_NOT_FOUND 203u
#define RPT_ERROR_INVALID_PARAMETER 87u

/* Memory protections and states for VirtualQuery. */
#define RPT_PAGE_READWRITE 0x04u
#define RPT_PAGE_EXECUTE_READWRITE 0x40u
#define RPT_MEM_COMMIT 0x1000u
#define RPT_MEM_FREE 0x10000u
#define RPT_MEM_IMAGE 0x1000000u
#define RPT_MEM_PRIVATE 0x20000u

/* The x87 stack is modelled by the guest's C part (x86_runtime.c). */
void rpt_x86_set_st0_f64(struct cpu *c, double v);

void rpt_x86_platform_init(struct cpu *c, int argc, char **argv);
void rpt_x86_platform_finish(struct cpu *c);

/* ---------------------------------------------------------------- guest memory helpers */

uint32_t rpt_win32_strlen(const char *s)
{
	uint32_t n = 0;
	while (s[n])
		n++;
	return n;
}

uint32_t rpt_guest_strlen(uint32_t s)
{
	uint32_t n = 0;
	while (rpt_load_u8_le((uint32_t)(s + n)))
		n++;
	return n;
}

uint32_t rpt_guest_string(uint32_t s, char *out, uint32_t cap)
{
	uint32_t n = 0;
	for (;; n++) {
		uint8_t ch = rpt_load_u8_le((uint32_t)(s + n));
		if (!ch)
			break;
		if (n + 1 < cap)
			out[n] = (char)ch;
	}
	if (cap > 0)
		out[n + 1 < cap ? n : cap - 1] = 0;
	return n;
}

void rpt_guest_copy_out(uint32_t dst, const void *src, uint32_t n)
{
	const uint8_t *s = (const uint8_t *)src;
	for (uint32_t i = 0; i < n; i++)
		rpt_store_u8_le((uint32_t)(dst + i), s[i]);
}

void rpt_guest_copy_in(void *dst, uint32_t src, uint32_t n)
{
	uint8_t *d = (uint8_t *)dst;
	for (uint32_t i = 0; i < n; i++)
		d[i] = rpt_load_u8_le((uint32_t)(src + i));
}

void rpt_guest_memmove(uint32_t dst, uint32_t src, uint32_t n)
{
	/* Within the 4 GiB space and not wrapping, both ranges are plain host memory. */
	if ((uint64_t)dst + n <= 0x100000000ull && (uint64_t)src + n <= 0x100000000ull) {
		__builtin_memmove(rpt_mem + dst, rpt_mem + src, n);
		return;
	}
	if (dst < src) {
		for (uint32_t i = 0; i < n; i++)
			rpt_store_u8_le((uint32_t)(dst + i), rpt_load_u8_le((uint32_t)(src + i)));
	} else {
		for (uint32_t i = n; i > 0; i--)
			rpt_store_u8_le((uint32_t)(dst + i - 1), rpt_load_u8_le((uint32_t)(src + i - 1)));
	}
}

void rpt_guest_memset(uint32_t dst, uint8_t v, uint32_t n)
{
	if ((uint64_t)dst + n <= 0x100000000ull) {
		__builtin_memset(rpt_mem + dst, v, n);
		return;
	}
	for (uint32_t i = 0; i < n; i++)
		rpt_store_u8_le((uint32_t)(dst + i), v);
}

void rpt_guest_store_string(uint32_t dst, const char *s)
{
	uint32_t n = rpt_win32_strlen(s);
	rpt_guest_copy_out(dst, s, n);
	rpt_store_u8_le((uint32_t)(dst + n), 0);
}

/* ---------------------------------------------------------------- calls, results, exits */

void rpt_win32_return_cdecl_f64(struct cpu *c, double result)
{
	rpt_x86_set_st0_f64(c, result);
	c->esp = c->esp + 4;
}

uint32_t rpt_win32_call_guest(struct cpu *c, uint32_t fn, uint32_t nargs, const uint32_t *args)
{
	uint32_t saved_esp = c->esp;
	for (uint32_t i = nargs; i > 0; i--) {
		c->esp -= 4;
		rpt_store_u32_le(c->esp, args[i - 1]);
	}
	/* The return address is never jumped to: the callee's `ret` returns to this C frame. */
	c->esp -= 4;
	rpt_store_u32_le(c->esp, 0);
	rpt_dispatch(c, fn);
	uint32_t result = c->eax;
	c->esp = saved_esp;
	return result;
}

_Noreturn void rpt_win32_exit_process(int code)
{
	rpt_msvcrt_flush_all();
	rpt_process_exit(code);
}

static void rpt_win32_append_hex(char *out, uint32_t *pos, uint32_t v)
{
	out[(*pos)++] = '0';
	out[(*pos)++] = 'x';
	for (int i = 7; i >= 0; i--)
		out[(*pos)++] = "0123456789abcdef"[(v >> (4 * i)) & 15];
}

_Noreturn void rpt_win32_fatal(const char *what, uint32_t addr)
{
	char msg[256];
	uint32_t pos = 0;
	const char *prefix = "rpt: win32-console: ";
	for (const char *p = prefix; *p; p++)
		msg[pos++] = *p;
	for (const char *p = what; *p && pos < 200; p++)
		msg[pos++] = *p;
	rpt_win32_append_hex(msg, &pos, addr);
	msg[pos++] = '\n';
	rpt_msvcrt_flush_all();
	rpt_write(2, msg, pos);
	rpt_process_exit(125);
}

void rpt_win32_set_last_error(uint32_t code)
{
	rpt_store_u32_le(RPT_X86_TEB_ADDR + RPT_TEB_LAST_ERROR, code);
}

/* ---------------------------------------------------------------- the command line */

static uint32_t rpt_win32_cmdline_len;

static void rpt_win32_cmdline_put(char ch)
{
	/* One byte stays free for the terminating NUL; a longer command line is cut off. */
	if (rpt_win32_cmdline_len + 1 < RPT_WIN32_CMDLINE_SIZE) {
		rpt_store_u8_le(RPT_WIN32_CMDLINE_ADDR + rpt_win32_cmdline_len, (uint8_t)ch);
		rpt_win32_cmdline_len++;
	}
}

/* Appends one argument, quoted so that CommandLineToArgvW gives it back unchanged. */
static void rpt_win32_cmdline_arg(const char *arg)
{
	int plain = arg[0] != 0;
	for (const char *p = arg; *p; p++)
		if (*p == ' ' || *p == '\t' || *p == '"')
			plain = 0;
	if (plain) {
		for (const char *p = arg; *p; p++)
			rpt_win32_cmdline_put(*p);
		return;
	}
	rpt_win32_cmdline_put('"');
	uint32_t backslashes = 0;
	for (const char *p = arg; *p; p++) {
		if (*p == '\\') {
			backslashes++;
			continue;
		}
		/* Backslashes are literal unless a quote follows; then each is doubled and the quote escaped. */
		uint32_t n = *p == '"' ? 2 * backslashes + 1 : backslashes;
		for (uint32_t i = 0; i < n; i++)
			rpt_win32_cmdline_put('\\');
		rpt_win32_cmdline_put(*p);
		backslashes = 0;
	}
	/* Before the closing quote, trailing backslashes are doubled. */
	for (uint32_t i = 0; i < 2 * backslashes; i++)
		rpt_win32_cmdline_put('\\');
	rpt_win32_cmdline_put('"');
}

static void rpt_win32_build_cmdline(int argc, char **argv)
{
	rpt_win32_cmdline_len = 0;
	const char *name = argc > 0 && argv[0] ? argv[0] : "program.exe";
	for (const char *p = name; *p; p++)
		if (*p == '/' || *p == '\\')
			name = p + 1;
	rpt_win32_cmdline_arg(name);
	for (int i = 1; i < argc; i++) {
		rpt_win32_cmdline_put(' ');
		rpt_win32_cmdline_arg(argv[i]);
	}
	rpt_store_u8_le(RPT_WIN32_CMDLINE_ADDR + rpt_win32_cmdline_len, 0);
}

/* ---------------------------------------------------------------- the image's own tables */

uint32_t rpt_win32_image_base(void)
{
	for (size_t i = 0; i < rpt_segment_count; i++) {
		const char *n = rpt_segments[i].name;
		if (n[0] == 'h' && n[1] == 'e' && n[2] == 'a' && n[3] == 'd' && n[4] == 'e' && n[5] == 'r' && n[6] == 's' && !n[7])
			return (uint32_t)rpt_segments[i].addr;
	}
	return RPT_WIN32_IMAGE_DEFAULT_BASE;
}

/* The RVA and size of data directory `index` of the PE32 image (0 when absent). */
static uint32_t rpt_win32_directory(uint32_t index, uint32_t *size)
{
	uint32_t base = rpt_win32_image_base();
	uint32_t nt = base + rpt_load_u32_le(base + 0x3cu);
	/* The optional header starts at nt+0x18; PE32's data directories start 0x60 into it. */
	uint32_t count = rpt_load_u32_le(nt + 0x18u + 0x5cu);
	if (index >= count)
		return 0;
	uint32_t entry = nt + 0x18u + 0x60u + 8u * index;
	if (size)
		*size = rpt_load_u32_le(entry + 4u);
	return rpt_load_u32_le(entry);
}

/* Whether the guest string at `s` equals `name`; `fold` ignores ASCII case and a `.dll` suffix. */
static int rpt_win32_guest_name_is(uint32_t s, const char *name, int fold)
{
	uint32_t i = 0;
	for (;; i++) {
		uint8_t a = rpt_load_u8_le((uint32_t)(s + i));
		uint8_t b = (uint8_t)name[i];
		if (fold) {
			if (a >= 'A' && a <= 'Z')
				a = (uint8_t)(a + 32);
			if (b >= 'A' && b <= 'Z')
				b = (uint8_t)(b + 32);
		}
		if (a != b) {
			/* "msvcrt" matches "msvcrt.dll" and the other way round. */
			if (fold && !b && a == '.')
				return rpt_win32_guest_name_is(s + i, ".dll", 1);
			if (fold && !a && b == '.')
				return name[i + 1] && (name[i + 1] | 32) == 'd' && (name[i + 2] | 32) == 'l' && (name[i + 3] | 32) == 'l' && !name[i + 4];
			return 0;
		}
		if (!a)
			return 1;
	}
}

/* Calls `visit(module, name, slot, ctx)` for every import by name, as the import directory lists
 * them; stops early when `visit` returns nonzero and returns that. The loader validated the
 * directory, and every access is masked into guest memory, so a bad table cannot fault here. */
typedef uint32_t (*rpt_win32_import_visitor)(uint32_t module, uint32_t name, uint32_t slot, const void *ctx);

static uint32_t rpt_win32_each_import(rpt_win32_import_visitor visit, const void *ctx)
{
	uint32_t base = rpt_win32_image_base();
	uint32_t rva = rpt_win32_directory(1, NULL);
	if (!rva)
		return 0;
	for (uint32_t d = base + rva, nd = 0; nd < 4096; d += 20, nd++) {
		uint32_t lookup = rpt_load_u32_le(d), module = rpt_load_u32_le(d + 12), iat = rpt_load_u32_le(d + 16);
		if (!module && !iat)
			break;
		if (!lookup)
			lookup = iat;
		for (uint32_t i = 0; i < 65536; i++) {
			uint32_t entry = rpt_load_u32_le(base + lookup + 4 * i);
			if (!entry)
				break;
			if (entry & 0x80000000u)
				continue;
			uint32_t r = visit(base + module, base + entry + 2, base + iat + 4 * i, ctx);
			if (r)
				return r;
		}
	}
	return 0;
}

struct rpt_win32_data_import {
	const char *name;
	uint32_t addr;
};

/* Every variable the platform exports. The Rust import table (src/platform/win32_console.rs)
 * lists the same names as `Data` imports; a unit test keeps the two in step.
 * BEGIN DATA IMPORTS */
static const struct rpt_win32_data_import rpt_win32_data_imports[] = {
	{ "_iob", RPT_DATA_IOB },
	{ "__initenv", RPT_DATA_INITENV },
	{ "_environ", RPT_DATA_ENVIRON },
	{ "__argc", RPT_DATA_ARGC },
	{ "__argv", RPT_DATA_ARGV },
	{ "_acmdln", RPT_DATA_ACMDLN },
	{ "_fmode", RPT_DATA_FMODE },
	{ "_commode", RPT_DATA_COMMODE },
	{ "__mb_cur_max", RPT_DATA_MB_CUR_MAX },
	{ "_pctype", RPT_DATA_PCTYPE },
	{ "_timezone", RPT_DATA_TIMEZONE },
	{ "_daylight", RPT_DATA_DAYLIGHT },
};
/* END DATA IMPORTS */

static uint32_t rpt_win32_bind_one(uint32_t module, uint32_t name, uint32_t slot, const void *ctx)
{
	(void)ctx;
	if (!rpt_win32_guest_name_is(module, "msvcrt.dll", 1))
		return 0;
	for (size_t i = 0; i < sizeof rpt_win32_data_imports / sizeof rpt_win32_data_imports[0]; i++)
		if (rpt_win32_guest_name_is(name, rpt_win32_data_imports[i].name, 0))
			rpt_store_u32_le(slot, rpt_win32_data_imports[i].addr);
	return 0;
}

static uint32_t rpt_win32_find_import(uint32_t module, uint32_t name, uint32_t slot, const void *ctx)
{
	(void)module;
	return rpt_win32_guest_name_is(name, (const char *)ctx, 0) ? rpt_load_u32_le(slot) : 0;
}

uint32_t rpt_win32_import_thunk(const char *name)
{
	return rpt_win32_each_import(rpt_win32_find_import, name);
}

/* Implicit TLS and TLS callbacks, from the image's TLS directory (data directory 9). */
static void rpt_win32_setup_tls(struct cpu *c)
{
	uint32_t rva = rpt_win32_directory(9, NULL);
	uint32_t tls_array = RPT_X86_TEB_ADDR + 0x800u; /* a one-entry array inside the TEB page */
	rpt_store_u32_le(RPT_X86_TEB_ADDR + RPT_TEB_TLS_POINTER, tls_array);
	if (!rva)
		return;
	uint32_t dir = rpt_win32_image_base() + rva;
	uint32_t start = rpt_load_u32_le(dir), end = rpt_load_u32_le(dir + 4), index_addr = rpt_load_u32_le(dir + 8);
	uint32_t callbacks = rpt_load_u32_le(dir + 12), zero_fill = rpt_load_u32_le(dir + 16);
	uint32_t size = end > start ? end - start : 0;
	uint32_t block = rpt_win32_reserve((uint64_t)size + zero_fill + 16);
	if (!block)
		rpt_win32_fatal("no guest memory for the TLS block of the image at ", rpt_win32_image_base());
	rpt_guest_memmove(block, start, size);
	rpt_store_u32_le(tls_array, block);
	if (index_addr)
		rpt_store_u32_le(index_addr, 0);
	for (uint32_t i = 0; callbacks && i < 256; i++) {
		uint32_t fn = rpt_load_u32_le(callbacks + 4 * i);
		if (!fn)
			break;
		uint32_t args[3] = { rpt_win32_image_base(), 1 /* DLL_PROCESS_ATTACH */, 0 };
		rpt_win32_call_guest(c, fn, 3, args);
	}
}

/* ---------------------------------------------------------------- start-up */

static void rpt_win32_setup_teb(void)
{
	uint32_t teb = RPT_X86_TEB_ADDR;
	rpt_store_u32_le(teb + RPT_TEB_EXCEPTION_LIST, 0xffffffffu);
	rpt_store_u32_le(teb + RPT_TEB_STACK_BASE, RPT_WIN32_STACK_TOP);
	rpt_store_u32_le(teb + RPT_TEB_STACK_LIMIT, RPT_WIN32_STACK_LIMIT);
	rpt_store_u32_le(teb + RPT_TEB_SELF, teb);
	rpt_store_u32_le(teb + RPT_TEB_PROCESS_ID, RPT_WIN32_PROCESS_ID);
	rpt_store_u32_le(teb + RPT_TEB_THREAD_ID, RPT_WIN32_THREAD_ID);
	rpt_store_u32_le(teb + RPT_TEB_PEB, RPT_WIN32_PEB_ADDR);
	rpt_store_u32_le(teb + RPT_TEB_LAST_ERROR, 0);
	/* PEB: ImageBaseAddress at 0x08, NumberOfProcessors at 0x64, OS version 5.1 (XP) at 0xa4. */
	rpt_store_u32_le(RPT_WIN32_PEB_ADDR + 0x08u, rpt_win32_image_base());
	rpt_store_u32_le(RPT_WIN32_PEB_ADDR + 0x64u, 1);
	rpt_store_u32_le(RPT_WIN32_PEB_ADDR + 0xa4u, 5);
	rpt_store_u32_le(RPT_WIN32_PEB_ADDR + 0xa8u, 1);
}

void rpt_x86_platform_init(struct cpu *c, int argc, char **argv)
{
	rpt_win32_build_cmdline(argc, argv);
	rpt_win32_setup_teb();
	rpt_msvcrt_init(c, argc, argv);
	rpt_win32_each_import(rpt_win32_bind_one, NULL);
	rpt_win32_setup_tls(c);
}

/* The entry point returned: Windows then ends the process through ExitProcess. */
/* The error a stub the recipe gives a return leaves (import_stubs' last_error): GetLastError's. */
void rpt_guest_stub_error(struct cpu *c, uint32_t code)
{
	(void)c;
	rpt_win32_set_last_error(code);
}

void rpt_x86_platform_finish(struct cpu *c)
{
	(void)c;
	rpt_msvcrt_flush_all();
}

/* ---------------------------------------------------------------- the page allocator */

static uint32_t rpt_win32_heap_next = RPT_WIN32_HEAP_BASE;

uint32_t rpt_win32_reserve(uint64_t size)
{
	uint64_t len = (size + RPT_WIN32_ALLOC_GRANULE - 1) & ~(uint64_t)(RPT_WIN32_ALLOC_GRANULE - 1);
	if (size == 0 || len > RPT_WIN32_HEAP_LIMIT - rpt_win32_heap_next)
		return 0;
	uint32_t at = rpt_win32_heap_next;
	rpt_win32_heap_next += (uint32_t)len;
	return at;
}

/* ---------------------------------------------------------------- KERNEL32 */

#define RPT_K32(name) void rpt_win32_KERNEL32_##name(struct cpu *restrict c)

RPT_K32(GetStdHandle);
RPT_K32(WriteFile);
RPT_K32(ReadFile);
RPT_K32(ExitProcess);
RPT_K32(GetCommandLineA);
RPT_K32(VirtualAlloc);
RPT_K32(VirtualFree);
RPT_K32(VirtualProtect);
RPT_K32(VirtualQuery);
RPT_K32(InitializeCriticalSection);
RPT_K32(InitializeCriticalSectionAndSpinCount);
RPT_K32(DeleteCriticalSection);
RPT_K32(EnterCriticalSection);
RPT_K32(TryEnterCriticalSection);
RPT_K32(LeaveCriticalSection);
RPT_K32(GetModuleHandleA);
RPT_K32(GetModuleHandleW);
RPT_K32(LoadLibraryA);
RPT_K32(LoadLibraryW);
RPT_K32(FreeLibrary);
RPT_K32(GetProcAddress);
RPT_K32(GetModuleFileNameA);
RPT_K32(GetLastError);
RPT_K32(SetLastError);
RPT_K32(GetStartupInfoA);
RPT_K32(SetUnhandledExceptionFilter);
RPT_K32(Sleep);
RPT_K32(TlsAlloc);
RPT_K32(TlsFree);
RPT_K32(TlsGetValue);
RPT_K32(TlsSetValue);
RPT_K32(QueryPerformanceCounter);
RPT_K32(QueryPerformanceFrequency);
RPT_K32(GetSystemTimeAsFileTime);
RPT_K32(GetTickCount);
RPT_K32(GetCurrentProcessId);
RPT_K32(GetCurrentThreadId);
RPT_K32(GetCurrentProcess);
RPT_K32(GetCurrentThread);
RPT_K32(IsDBCSLeadByteEx);
RPT_K32(MultiByteToWideChar);
RPT_K32(WideCharToMultiByte);
RPT_K32(CreateSemaphoreA);
RPT_K32(CreateSemaphoreW);
RPT_K32(ReleaseSemaphore);
RPT_K32(WaitForSingleObject);
RPT_K32(CloseHandle);

/* HANDLE GetStdHandle(DWORD nStdHandle) */
void rpt_win32_KERNEL32_GetStdHandle(struct cpu *restrict c)
{
	uint32_t which = rpt_win32_arg(c, 0);
	uint32_t handle = RPT_WIN32_INVALID_HANDLE;
	if (which == RPT_WIN32_STD_INPUT_HANDLE)
		handle = RPT_WIN32_HANDLE_STDIN;
	else if (which == RPT_WIN32_STD_OUTPUT_HANDLE)
		handle = RPT_WIN32_HANDLE_STDOUT;
	else if (which == RPT_WIN32_STD_ERROR_HANDLE)
		handle = RPT_WIN32_HANDLE_STDERR;
	rpt_win32_return(c, 1, handle);
}

/* BOOL WriteFile(HANDLE h, LPCVOID buf, DWORD n, LPDWORD written, LPOVERLAPPED ov)
 * Bytes go out unchanged; msvcrt's buffered stdout is flushed first so the two keep their order. */
void rpt_win32_KERNEL32_WriteFile(struct cpu *restrict c)
{
	uint32_t handle = rpt_win32_arg(c, 0);
	uint32_t buf = rpt_win32_arg(c, 1);
	uint32_t len = rpt_win32_arg(c, 2);
	uint32_t written_ptr = rpt_win32_arg(c, 3);
	int fd = handle == RPT_WIN32_HANDLE_STDOUT ? 1 : handle == RPT_WIN32_HANDLE_STDERR ? 2 : -1;
	if (fd < 0) {
		rpt_win32_set_last_error(RPT_ERROR_INVALID_HANDLE);
		rpt_win32_return(c, 5, 0);
		return;
	}
	rpt_msvcrt_stream_flush(rpt_msvcrt_stream_addr((uint32_t)fd));
	/* The guest buffer is contiguous in host memory unless it wraps past 4 GiB; clip it there. */
	if ((uint64_t)buf + len > (uint64_t)1 << 32)
		len = (uint32_t)(((uint64_t)1 << 32) - buf);
	uint32_t done = (uint32_t)rpt_write(fd, rpt_mem + buf, len);
	if (written_ptr != 0)
		rpt_store_u32_le(written_ptr, done);
	rpt_win32_return(c, 5, done == len ? 1u : 0u);
}

/* BOOL ReadFile(HANDLE h, LPVOID buf, DWORD n, LPDWORD read, LPOVERLAPPED ov) - stdin only. */
void rpt_win32_KERNEL32_ReadFile(struct cpu *restrict c)
{
	uint32_t handle = rpt_win32_arg(c, 0);
	uint32_t buf = rpt_win32_arg(c, 1);
	uint32_t len = rpt_win32_arg(c, 2);
	uint32_t read_ptr = rpt_win32_arg(c, 3);
	if (handle != RPT_WIN32_HANDLE_STDIN) {
		rpt_win32_set_last_error(RPT_ERROR_INVALID_HANDLE);
		rpt_win32_return(c, 5, 0);
		return;
	}
	if ((uint64_t)buf + len > (uint64_t)1 << 32)
		len = (uint32_t)(((uint64_t)1 << 32) - buf);
	int64_t n = rpt_read(0, rpt_mem + buf, len);
	if (read_ptr != 0)
		rpt_store_u32_le(read_ptr, n > 0 ? (uint32_t)n : 0);
	rpt_win32_return(c, 5, n >= 0 ? 1u : 0u);
}

/* VOID ExitProcess(UINT code) - never returns. msvcrt's streams are flushed, as its DLL detach does. */
void rpt_win32_KERNEL32_ExitProcess(struct cpu *restrict c)
{
	rpt_win32_exit_process((int)rpt_win32_arg(c, 0));
}

/* LPSTR GetCommandLineA(void) */
void rpt_win32_KERNEL32_GetCommandLineA(struct cpu *restrict c)
{
	rpt_win32_return(c, 0, RPT_WIN32_CMDLINE_ADDR);
}

/* LPVOID VirtualAlloc(LPVOID addr, SIZE_T size, DWORD type, DWORD protect) */
void rpt_win32_KERNEL32_VirtualAlloc(struct cpu *restrict c)
{
	uint32_t want = rpt_win32_arg(c, 0);
	uint64_t size = rpt_win32_arg(c, 1);
	uint32_t result = 0;
	if (size == 0) {
		result = 0;
	} else if (want != 0 && want >= RPT_WIN32_HEAP_BASE && (uint64_t)want + size <= rpt_win32_heap_next) {
		/* Committing pages of an earlier reservation: they are already usable. */
		result = want & ~0xfffu;
	} else if (want != 0) {
		uint64_t base = (uint64_t)want & ~(uint64_t)(RPT_WIN32_ALLOC_GRANULE - 1);
		uint64_t end = ((uint64_t)want + size + RPT_WIN32_ALLOC_GRANULE - 1) & ~(uint64_t)(RPT_WIN32_ALLOC_GRANULE - 1);
		if (base >= rpt_win32_heap_next && end <= RPT_WIN32_HEAP_LIMIT) {
			rpt_win32_heap_next = (uint32_t)end;
			result = want & ~0xfffu;
		}
	} else {
		result = rpt_win32_reserve(size);
	}
	if (!result)
		rpt_win32_set_last_error(RPT_ERROR_NOT_ENOUGH_MEMORY);
	rpt_win32_return(c, 4, result);
}

/* BOOL VirtualFree(LPVOID addr, SIZE_T size, DWORD type) - memory is never reused, so this only succeeds. */
void rpt_win32_KERNEL32_VirtualFree(struct cpu *restrict c)
{
	rpt_win32_return(c, 3, 1);
}

/* BOOL VirtualProtect(LPVOID addr, SIZE_T size, DWORD new, PDWORD old) - all guest memory is
 * readable and writable; the old protection reported is read-write (mingw's pseudo-relocation
 * code restores what it gets back). */
void rpt_win32_KERNEL32_VirtualProtect(struct cpu *restrict c)
{
	uint32_t old = rpt_win32_arg(c, 3);
	if (old)
		rpt_store_u32_le(old, RPT_PAGE_EXECUTE_READWRITE);
	rpt_win32_return(c, 4, 1);
}

/* SIZE_T VirtualQuery(LPCVOID addr, PMEMORY_BASIC_INFORMATION info, SIZE_T len) */
void rpt_win32_KERNEL32_VirtualQuery(struct cpu *restrict c)
{
	uint32_t addr = rpt_win32_arg(c, 0), info = rpt_win32_arg(c, 1), len = rpt_win32_arg(c, 2);
	if (len < 28) {
		rpt_win32_set_last_error(RPT_ERROR_INVALID_PARAMETER);
		rpt_win32_return(c, 3, 0);
		return;
	}
	uint32_t page = addr & ~0xfffu, region = page, size = 0x1000, state = RPT_MEM_FREE, type = 0, protect = 1;
	for (size_t i = 0; i < rpt_segment_count; i++) {
		const struct rpt_segment *s = &rpt_segments[i];
		if (addr >= s->addr && addr - s->addr < s->mem_size) {
			region = (uint32_t)s->addr & ~0xfffu;
			size = (uint32_t)((s->addr + s->mem_size + 0xfff) & ~(uint64_t)0xfff) - page;
			state = RPT_MEM_COMMIT;
			type = RPT_MEM_IMAGE;
			protect = RPT_PAGE_EXECUTE_READWRITE;
		}
	}
	if (state == RPT_MEM_FREE && addr >= RPT_WIN32_HEAP_BASE) {
		state = RPT_MEM_COMMIT;
		type = RPT_MEM_PRIVATE;
		protect = RPT_PAGE_READWRITE;
	}
	rpt_store_u32_le(info + 0, page);
	rpt_store_u32_le(info + 4, region);
	rpt_store_u32_le(info + 8, protect);
	rpt_store_u32_le(info + 12, size);
	rpt_store_u32_le(info + 16, state);
	rpt_store_u32_le(info + 20, protect);
	rpt_store_u32_le(info + 24, type);
	rpt_win32_return(c, 3, 28);
}

/* Critical sections: one thread never waits, so they only keep the recursion count
 * (CRITICAL_SECTION: DebugInfo, LockCount, RecursionCount, OwningThread, LockSemaphore, SpinCount). */
void rpt_win32_KERNEL32_InitializeCriticalSection(struct cpu *restrict c)
{
	rpt_guest_memset(rpt_win32_arg(c, 0), 0, 24);
	rpt_store_u32_le(rpt_win32_arg(c, 0) + 4, 0xffffffffu);
	rpt_win32_return(c, 1, 0);
}

void rpt_win32_KERNEL32_InitializeCriticalSectionAndSpinCount(struct cpu *restrict c)
{
	rpt_guest_memset(rpt_win32_arg(c, 0), 0, 24);
	rpt_store_u32_le(rpt_win32_arg(c, 0) + 4, 0xffffffffu);
	rpt_win32_return(c, 2, 1);
}

void rpt_win32_KERNEL32_DeleteCriticalSection(struct cpu *restrict c)
{
	rpt_win32_return(c, 1, 0);
}

void rpt_win32_KERNEL32_EnterCriticalSection(struct cpu *restrict c)
{
	uint32_t cs = rpt_win32_arg(c, 0);
	rpt_store_u32_le(cs + 8, rpt_load_u32_le(cs + 8) + 1);
	rpt_store_u32_le(cs + 12, RPT_WIN32_THREAD_ID);
	rpt_win32_return(c, 1, 0);
}

void rpt_win32_KERNEL32_TryEnterCriticalSection(struct cpu *restrict c)
{
	uint32_t cs = rpt_win32_arg(c, 0);
	rpt_store_u32_le(cs + 8, rpt_load_u32_le(cs + 8) + 1);
	rpt_store_u32_le(cs + 12, RPT_WIN32_THREAD_ID);
	rpt_win32_return(c, 1, 1);
}

void rpt_win32_KERNEL32_LeaveCriticalSection(struct cpu *restrict c)
{
	uint32_t cs = rpt_win32_arg(c, 0);
	uint32_t n = rpt_load_u32_le(cs + 8);
	rpt_store_u32_le(cs + 8, n ? n - 1 : 0);
	if (n <= 1)
		rpt_store_u32_le(cs + 12, 0);
	rpt_win32_return(c, 1, 0);
}

/* The handle of a module named by the guest string at `name` (ANSI, or UTF-16 when `wide`). */
static uint32_t rpt_win32_module_handle(uint32_t name, int wide)
{
	if (!name)
		return rpt_win32_image_base();
	char text[64];
	uint32_t n = 0;
	for (; n + 1 < sizeof text; n++) {
		uint32_t ch = wide ? rpt_load_u16_le(name + 2 * n) : rpt_load_u8_le(name + n);
		if (!ch)
			break;
		text[n] = (char)(ch >= 'A' && ch <= 'Z' ? ch + 32 : ch < 128 ? ch : '?');
	}
	text[n] = 0;
	/* Only the file name counts: "C:\\Windows\\system32\\KERNEL32.DLL" is kernel32. */
	const char *file = text;
	for (const char *p = text; *p; p++)
		if (*p == '\\' || *p == '/')
			file = p + 1;
	static const struct {
		const char *name;
		uint32_t handle;
	} known[] = { { "kernel32", RPT_WIN32_KERNEL32_HANDLE }, { "kernel32.dll", RPT_WIN32_KERNEL32_HANDLE },
		      { "msvcrt", RPT_WIN32_MSVCRT_HANDLE }, { "msvcrt.dll", RPT_WIN32_MSVCRT_HANDLE } };
	for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
		const char *a = file, *b = known[i].name;
		while (*a && *a == *b) {
			a++;
			b++;
		}
		if (!*a && !*b)
			return known[i].handle;
	}
	return 0;
}

void rpt_win32_KERNEL32_GetModuleHandleA(struct cpu *restrict c)
{
	uint32_t h = rpt_win32_module_handle(rpt_win32_arg(c, 0), 0);
	if (!h)
		rpt_win32_set_last_error(RPT_ERROR_MOD_NOT_FOUND);
	rpt_win32_return(c, 1, h);
}

void rpt_win32_KERNEL32_GetModuleHandleW(struct cpu *restrict c)
{
	uint32_t h = rpt_win32_module_handle(rpt_win32_arg(c, 0), 1);
	if (!h)
		rpt_win32_set_last_error(RPT_ERROR_MOD_NOT_FOUND);
	rpt_win32_return(c, 1, h);
}

/* LoadLibrary: the system DLLs are "loaded" already; no other DLL exists here. */
void rpt_win32_KERNEL32_LoadLibraryA(struct cpu *restrict c)
{
	uint32_t name = rpt_win32_arg(c, 0);
	uint32_t h = name ? rpt_win32_module_handle(name, 0) : 0;
	if (!h)
		rpt_win32_set_last_error(RPT_ERROR_MOD_NOT_FOUND);
	rpt_win32_return(c, 1, h);
}

void rpt_win32_KERNEL32_LoadLibraryW(struct cpu *restrict c)
{
	uint32_t name = rpt_win32_arg(c, 0);
	uint32_t h = name ? rpt_win32_module_handle(name, 1) : 0;
	if (!h)
		rpt_win32_set_last_error(RPT_ERROR_MOD_NOT_FOUND);
	rpt_win32_return(c, 1, h);
}

void rpt_win32_KERNEL32_FreeLibrary(struct cpu *restrict c)
{
	rpt_win32_return(c, 1, 1);
}

/* FARPROC GetProcAddress(HMODULE h, LPCSTR name) - what the image's IAT holds for that name. */
void rpt_win32_KERNEL32_GetProcAddress(struct cpu *restrict c)
{
	uint32_t name = rpt_win32_arg(c, 1);
	char text[128];
	uint32_t result = 0;
	/* Names longer than the buffer, and ordinals (a high word of 0), are never found. */
	if (name >> 16 && rpt_guest_string(name, text, sizeof text) < sizeof text)
		result = rpt_win32_import_thunk(text);
	if (!result)
		rpt_win32_set_last_error(RPT_ERROR_PROC_NOT_FOUND);
	rpt_win32_return(c, 2, result);
}

/* DWORD GetModuleFileNameA(HMODULE h, LPSTR buf, DWORD size) - a full path, as Windows gives:
 * the program sits at the root of drive C:, which is the sandbox's root (see "Files" in
 * docs/win32-console.md), under the name argv[0] ends in: `C:\lua.exe`. Programs find their
 * directory by the last backslash (Lua's package path does). A buffer too small gets the name cut
 * to size - 1 characters and a terminator, and the answer is `size`, as on Windows XP. */
void rpt_win32_KERNEL32_GetModuleFileNameA(struct cpu *restrict c)
{
	uint32_t buf = rpt_win32_arg(c, 1), size = rpt_win32_arg(c, 2);
	uint32_t n = 0;
	const char *prefix = "C:\\";
	uint32_t src = RPT_WIN32_CMDLINE_ADDR;
	int quoted = rpt_load_u8_le(src) == '"';
	if (quoted)
		src++;
	int truncated = 0;
	for (; *prefix; prefix++) {
		if (n + 1 >= size) {
			truncated = 1;
			break;
		}
		rpt_store_u8_le(buf + n++, (uint8_t)*prefix);
	}
	for (uint32_t i = 0; !truncated; i++) {
		uint8_t ch = rpt_load_u8_le(src + i);
		if (!ch || (quoted ? ch == '"' : ch == ' '))
			break;
		if (n + 1 >= size) {
			truncated = 1;
			break;
		}
		rpt_store_u8_le(buf + n++, ch);
	}
	if (size)
		rpt_store_u8_le(buf + n, 0);
	rpt_win32_return(c, 3, truncated ? size : n);
}

void rpt_win32_KERNEL32_GetLastError(struct cpu *restrict c)
{
	rpt_win32_return(c, 0, rpt_load_u32_le(RPT_X86_TEB_ADDR + RPT_TEB_LAST_ERROR));
}

void rpt_win32_KERNEL32_SetLastError(struct cpu *restrict c)
{
	rpt_win32_set_last_error(rpt_win32_arg(c, 0));
	rpt_win32_return(c, 1, 0);
}

/* VOID GetStartupInfoA(LPSTARTUPINFOA info): a console process started with no special settings. */
void rpt_win32_KERNEL32_GetStartupInfoA(struct cpu *restrict c)
{
	uint32_t info = rpt_win32_arg(c, 0);
	rpt_guest_memset(info, 0, 68);
	rpt_store_u32_le(info, 68);
	rpt_win32_return(c, 1, 0);
}

/* The filter is kept and handed back; no exception ever reaches it (see docs/win32-console.md). */
static uint32_t rpt_win32_exception_filter;

void rpt_win32_KERNEL32_SetUnhandledExceptionFilter(struct cpu *restrict c)
{
	uint32_t previous = rpt_win32_exception_filter;
	rpt_win32_exception_filter = rpt_win32_arg(c, 0);
	rpt_win32_return(c, 1, previous);
}

void rpt_win32_KERNEL32_Sleep(struct cpu *restrict c)
{
	rpt_msvcrt_flush_all();
	rpt_sleep_ns((uint64_t)rpt_win32_arg(c, 0) * 1000000u);
	rpt_win32_return(c, 1, 0);
}

/* TLS slots: a bit per slot in use; values live in the TEB's TlsSlots. */
static uint64_t rpt_win32_tls_used;

void rpt_win32_KERNEL32_TlsAlloc(struct cpu *restrict c)
{
	for (uint32_t i = 0; i < RPT_TEB_TLS_SLOT_COUNT; i++) {
		if (!(rpt_win32_tls_used >> i & 1)) {
			rpt_win32_tls_used |= (uint64_t)1 << i;
			rpt_store_u32_le(RPT_X86_TEB_ADDR + RPT_TEB_TLS_SLOTS + 4 * i, 0);
			rpt_win32_return(c, 0, i);
			return;
		}
	}
	rpt_win32_set_last_error(RPT_ERROR_NOT_ENOUGH_MEMORY);
	rpt_win32_return(c, 0, 0xffffffffu); /* TLS_OUT_OF_INDEXES */
}

void rpt_win32_KERNEL32_TlsFree(struct cpu *restrict c)
{
	uint32_t i = rpt_win32_arg(c, 0);
	int ok = i < RPT_TEB_TLS_SLOT_COUNT && (rpt_win32_tls_used >> i & 1);
	if (ok)
		rpt_win32_tls_used &= ~((uint64_t)1 << i);
	else
		rpt_win32_set_last_error(RPT_ERROR_INVALID_PARAMETER);
	rpt_win32_return(c, 1, ok ? 1u : 0u);
}

void rpt_win32_KERNEL32_TlsGetValue(struct cpu *restrict c)
{
	uint32_t i = rpt_win32_arg(c, 0);
	if (i >= RPT_TEB_TLS_SLOT_COUNT) {
		rpt_win32_set_last_error(RPT_ERROR_INVALID_PARAMETER);
		rpt_win32_return(c, 1, 0);
		return;
	}
	/* A successful TlsGetValue clears the last error, so a stored 0 can be told from a failure. */
	rpt_win32_set_last_error(0);
	rpt_win32_return(c, 1, rpt_load_u32_le(RPT_X86_TEB_ADDR + RPT_TEB_TLS_SLOTS + 4 * i));
}

void rpt_win32_KERNEL32_TlsSetValue(struct cpu *restrict c)
{
	uint32_t i = rpt_win32_arg(c, 0);
	if (i >= RPT_TEB_TLS_SLOT_COUNT) {
		rpt_win32_set_last_error(RPT_ERROR_INVALID_PARAMETER);
		rpt_win32_return(c, 2, 0);
		return;
	}
	rpt_store_u32_le(RPT_X86_TEB_ADDR + RPT_TEB_TLS_SLOTS + 4 * i, rpt_win32_arg(c, 1));
	rpt_win32_return(c, 2, 1);
}

/* The performance counter counts 100 ns ticks of the host's monotonic clock. */
void rpt_win32_KERNEL32_QueryPerformanceCounter(struct cpu *restrict c)
{
	rpt_store_u64_le(rpt_win32_arg(c, 0), rpt_monotonic_ns() / 100u);
	rpt_win32_return(c, 1, 1);
}

void rpt_win32_KERNEL32_QueryPerformanceFrequency(struct cpu *restrict c)
{
	rpt_store_u64_le(rpt_win32_arg(c, 0), 10000000u);
	rpt_win32_return(c, 1, 1);
}

/* FILETIME: 100 ns ticks since 1601-01-01 UTC, which is 11644473600 s before the Unix epoch. */
void rpt_win32_KERNEL32_GetSystemTimeAsFileTime(struct cpu *restrict c)
{
	int64_t ticks = rpt_realtime_ns() / 100 + (int64_t)11644473600 * 10000000;
	rpt_store_u64_le(rpt_win32_arg(c, 0), (uint64_t)ticks);
	rpt_win32_return(c, 1, 0);
}

void rpt_win32_KERNEL32_GetTickCount(struct cpu *restrict c)
{
	rpt_win32_return(c, 0, (uint32_t)(rpt_monotonic_ns() / 1000000u));
}

void rpt_win32_KERNEL32_GetCurrentProcessId(struct cpu *restrict c)
{
	rpt_win32_return(c, 0, RPT_WIN32_PROCESS_ID);
}

void rpt_win32_KERNEL32_GetCurrentThreadId(struct cpu *restrict c)
{
	rpt_win32_return(c, 0, RPT_WIN32_THREAD_ID);
}

/* The pseudo-handles Windows uses for "this process" and "this thread". */
void rpt_win32_KERNEL32_GetCurrentProcess(struct cpu *restrict c)
{
	rpt_win32_return(c, 0, 0xffffffffu);
}

void rpt_win32_KERNEL32_GetCurrentThread(struct cpu *restrict c)
{
	rpt_win32_return(c, 0, 0xfffffffeu);
}

/* The platform's code page is single-byte (Latin-1 in, '?' for what does not fit out). */
void rpt_win32_KERNEL32_IsDBCSLeadByteEx(struct cpu *restrict c)
{
	rpt_win32_return(c, 2, 0);
}

/* int MultiByteToWideChar(UINT cp, DWORD flags, LPCSTR src, int srclen, LPWSTR dst, int dstlen) */
void rpt_win32_KERNEL32_MultiByteToWideChar(struct cpu *restrict c)
{
	uint32_t src = rpt_win32_arg(c, 2), dst = rpt_win32_arg(c, 4);
	int32_t srclen = (int32_t)rpt_win32_arg(c, 3), dstlen = (int32_t)rpt_win32_arg(c, 5);
	uint32_t n = srclen < 0 ? rpt_guest_strlen(src) + 1 : (uint32_t)srclen;
	if (dstlen == 0) {
		rpt_win32_return(c, 6, n);
		return;
	}
	if (dstlen < 0 || (uint32_t)dstlen < n) {
		rpt_win32_set_last_error(122); /* ERROR_INSUFFICIENT_BUFFER */
		rpt_win32_return(c, 6, 0);
		return;
	}
	for (uint32_t i = 0; i < n; i++)
		rpt_store_u16_le(dst + 2 * i, rpt_load_u8_le(src + i));
	rpt_win32_return(c, 6, n);
}

/* int WideCharToMultiByte(UINT cp, DWORD flags, LPCWSTR src, int srclen, LPSTR dst, int dstlen,
 *                         LPCSTR defchar, LPBOOL useddef) */
void rpt_win32_KERNEL32_WideCharToMultiByte(struct cpu *restrict c)
{
	uint32_t src = rpt_win32_arg(c, 2), dst = rpt_win32_arg(c, 4), used = rpt_win32_arg(c, 7);
	int32_t srclen = (int32_t)rpt_win32_arg(c, 3), dstlen = (int32_t)rpt_win32_arg(c, 5);
	uint32_t n = (uint32_t)srclen;
	if (srclen < 0) {
		n = 0;
		while (rpt_load_u16_le(src + 2 * n))
			n++;
		n++;
	}
	if (dstlen == 0) {
		rpt_win32_return(c, 8, n);
		return;
	}
	if (dstlen < 0 || (uint32_t)dstlen < n) {
		rpt_win32_set_last_error(122);
		rpt_win32_return(c, 8, 0);
		return;
	}
	uint32_t defaulted = 0;
	for (uint32_t i = 0; i < n; i++) {
		uint16_t w = rpt_load_u16_le(src + 2 * i);
		if (w > 0xff)
			defaulted = 1;
		rpt_store_u8_le(dst + i, w > 0xff ? '?' : (uint8_t)w);
	}
	if (used)
		rpt_store_u32_le(used, defaulted);
	rpt_win32_return(c, 8, n);
}

/* ---- semaphores: one thread never waits, so a wait either takes a count or would block forever */

#define RPT_WIN32_SEMAPHORES 64u
#define RPT_WIN32_SEMAPHORE_HANDLE0 0x00000100u
#define RPT_WIN32_WAIT_OBJECT_0 0u
#define RPT_WIN32_WAIT_TIMEOUT 0x102u
#define RPT_WIN32_WAIT_FAILED 0xffffffffu
#define RPT_WIN32_INFINITE 0xffffffffu

static struct {
	int used;
	int32_t count, max;
} rpt_win32_semaphores[RPT_WIN32_SEMAPHORES];

/* The semaphore a handle names, or -1. */
static int rpt_win32_semaphore(uint32_t handle)
{
	uint32_t i = (handle - RPT_WIN32_SEMAPHORE_HANDLE0) / 4;
	if (handle < RPT_WIN32_SEMAPHORE_HANDLE0 || (handle & 3) || i >= RPT_WIN32_SEMAPHORES || !rpt_win32_semaphores[i].used)
		return -1;
	return (int)i;
}

static void rpt_win32_create_semaphore(struct cpu *c)
{
	int32_t initial = (int32_t)rpt_win32_arg(c, 1), max = (int32_t)rpt_win32_arg(c, 2);
	uint32_t handle = 0;
	if (max <= 0 || initial < 0 || initial > max) {
		rpt_win32_set_last_error(RPT_ERROR_INVALID_PARAMETER);
	} else {
		for (uint32_t i = 0; i < RPT_WIN32_SEMAPHORES; i++) {
			if (!rpt_win32_semaphores[i].used) {
				rpt_win32_semaphores[i].used = 1;
				rpt_win32_semaphores[i].count = initial;
				rpt_win32_semaphores[i].max = max;
				handle = RPT_WIN32_SEMAPHORE_HANDLE0 + 4 * i;
				break;
			}
		}
		if (!handle)
			rpt_win32_set_last_error(RPT_ERROR_NOT_ENOUGH_MEMORY);
	}
	rpt_win32_return(c, 4, handle);
}

/* HANDLE CreateSemaphore(LPSECURITY_ATTRIBUTES attr, LONG initial, LONG max, LPCSTR name) - names are ignored. */
void rpt_win32_KERNEL32_CreateSemaphoreA(struct cpu *restrict c)
{
	rpt_win32_create_semaphore(c);
}

void rpt_win32_KERNEL32_CreateSemaphoreW(struct cpu *restrict c)
{
	rpt_win32_create_semaphore(c);
}

/* BOOL ReleaseSemaphore(HANDLE h, LONG count, LPLONG previous) */
void rpt_win32_KERNEL32_ReleaseSemaphore(struct cpu *restrict c)
{
	int i = rpt_win32_semaphore(rpt_win32_arg(c, 0));
	int32_t n = (int32_t)rpt_win32_arg(c, 1);
	uint32_t previous = rpt_win32_arg(c, 2);
	if (i < 0 || n <= 0 || n > rpt_win32_semaphores[i].max - rpt_win32_semaphores[i].count) {
		rpt_win32_set_last_error(i < 0 ? RPT_ERROR_INVALID_HANDLE : 298u /* ERROR_TOO_MANY_POSTS */);
		rpt_win32_return(c, 3, 0);
		return;
	}
	if (previous)
		rpt_store_u32_le(previous, (uint32_t)rpt_win32_semaphores[i].count);
	rpt_win32_semaphores[i].count += n;
	rpt_win32_return(c, 3, 1);
}

/* DWORD WaitForSingleObject(HANDLE h, DWORD ms): with no other thread, a semaphore at zero stays
 * at zero, so a finite wait times out (after sleeping) and an infinite one is a deadlock. */
void rpt_win32_KERNEL32_WaitForSingleObject(struct cpu *restrict c)
{
	uint32_t handle = rpt_win32_arg(c, 0), ms = rpt_win32_arg(c, 1);
	int i = rpt_win32_semaphore(handle);
	if (i < 0) {
		rpt_win32_set_last_error(RPT_ERROR_INVALID_HANDLE);
		rpt_win32_return(c, 2, RPT_WIN32_WAIT_FAILED);
		return;
	}
	if (rpt_win32_semaphores[i].count > 0) {
		rpt_win32_semaphores[i].count--;
		rpt_win32_return(c, 2, RPT_WIN32_WAIT_OBJECT_0);
		return;
	}
	if (ms == RPT_WIN32_INFINITE)
		rpt_win32_fatal("the only thread waits forever on a semaphore nothing can release; its handle is ", handle);
	rpt_sleep_ns((uint64_t)ms * 1000000u);
	rpt_win32_return(c, 2, RPT_WIN32_WAIT_TIMEOUT);
}

/* BOOL CloseHandle(HANDLE h): semaphores are freed; the standard handles stay usable, as on Windows. */
void rpt_win32_KERNEL32_CloseHandle(struct cpu *restrict c)
{
	uint32_t handle = rpt_win32_arg(c, 0);
	int i = rpt_win32_semaphore(handle);
	int ok = handle == RPT_WIN32_HANDLE_STDIN || handle == RPT_WIN32_HANDLE_STDOUT || handle == RPT_WIN32_HANDLE_STDERR;
	if (i >= 0) {
		rpt_win32_semaphores[i].used = 0;
		ok = 1;
	}
	if (!ok)
		rpt_win32_set_last_error(RPT_ERROR_INVALID_HANDLE);
	rpt_win32_return(c, 1, ok ? 1u : 0u);
}

RPT_K32(GetVersion);
RPT_K32(GlobalMemoryStatus);
RPT_K32(SetConsoleCtrlHandler);

/* DWORD GetVersion(void): Windows 8's 6.2, build 9200, which is what Windows 8.1 and later report
 * to every program without a compatibility manifest (mingw's default). The low byte is the major
 * version, the next the minor, the high word the build (bit 31 clear: an NT system). */
void rpt_win32_KERNEL32_GetVersion(struct cpu *restrict c)
{
	rpt_win32_return(c, 0, (9200u << 16) | (2u << 8) | 6u);
}

/* void GlobalMemoryStatus(LPMEMORYSTATUS m): the guest's own memory, as a 32-bit process sees its
 * limits. Physical memory is the heap the platform can hand out (RPT_WIN32_HEAP_BASE up to
 * RPT_WIN32_HEAP_LIMIT, 1.5 GiB), the page file the same, and the virtual address space the 2 GiB
 * less 64 KiB at each end that Windows gives a process; all of it is reported available, as the
 * platform commits lazily. The load is 0 percent. */
void rpt_win32_KERNEL32_GlobalMemoryStatus(struct cpu *restrict c)
{
	uint32_t m = rpt_win32_arg(c, 0);
	uint32_t heap = RPT_WIN32_HEAP_LIMIT - RPT_WIN32_HEAP_BASE;
	uint32_t user = 0x7ffe0000u - 0x10000u;
	rpt_store_u32_le(m + 0, 32);   /* dwLength */
	rpt_store_u32_le(m + 4, 0);    /* dwMemoryLoad */
	rpt_store_u32_le(m + 8, heap); /* dwTotalPhys */
	rpt_store_u32_le(m + 12, heap);
	rpt_store_u32_le(m + 16, heap); /* dwTotalPageFile */
	rpt_store_u32_le(m + 20, heap);
	rpt_store_u32_le(m + 24, user); /* dwTotalVirtual */
	rpt_store_u32_le(m + 28, user);
	rpt_win32_return(c, 1, 0);
}

/* BOOL SetConsoleCtrlHandler(PHANDLER_ROUTINE h, BOOL add): accepted (TRUE). The platform has no
 * console of its own, so no Ctrl-C or close event ever reaches the handler; a host signal ends the
 * process as it would end any host program. */
void rpt_win32_KERNEL32_SetConsoleCtrlHandler(struct cpu *restrict c)
{
	rpt_win32_return(c, 2, 1);
}

RPT_K32(GetEnvironmentVariableW);

/* DWORD GetEnvironmentVariableW(LPCWSTR name, LPWSTR buf, DWORD size): msvcrt's environment (the
 * host's, see __getmainargs), its bytes widened one for one as MultiByteToWideChar does. The
 * length without the terminator when the value fits in `size` units, else the size it needs with
 * the terminator; 0 with ERROR_ENVVAR_NOT_FOUND when there is no such variable (a name with a
 * unit above 0xff, or longer than 255 units, is none). */
void rpt_win32_KERNEL32_GetEnvironmentVariableW(struct cpu *restrict c)
{
	uint32_t name = rpt_win32_arg(c, 0), buf = rpt_win32_arg(c, 1), size = rpt_win32_arg(c, 2);
	char text[256];
	uint32_t n = 0, value = 0;
	for (; name && n + 1 < sizeof text; n++) {
		uint16_t unit = rpt_load_u16_le(name + 2 * n);
		if (!unit || unit > 0xff)
			break;
		text[n] = (char)unit;
	}
	text[n] = 0;
	if (name && n + 1 < sizeof text && !rpt_load_u16_le(name + 2 * n))
		value = rpt_msvcrt_env_lookup(text);
	if (!value) {
		rpt_win32_set_last_error(RPT_ERROR_ENVVAR_NOT_FOUND);
		rpt_win32_return(c, 3, 0);
		return;
	}
	uint32_t len = rpt_guest_strlen(value);
	if (len + 1 > size) {
		rpt_win32_return(c, 3, len + 1);
		return;
	}
	for (uint32_t i = 0; i <= len; i++)
		rpt_store_u16_le(buf + 2 * i, rpt_load_u8_le(value + i));
	rpt_win32_return(c, 3, len);
}
