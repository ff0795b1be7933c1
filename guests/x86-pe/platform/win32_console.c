/*
 * win32_console.c - the win32-console platform: the KERNEL32 functions a console program needs.
 *
 * Every function here is an extern in the sense of docs/c-abi.md: it is called like a lifted
 * function with esp pointing at the return address, reads its stdcall arguments above it,
 * leaves its result in eax and pops the return address and its arguments, as Windows does.
 * Registers other than eax, ecx, edx and esp are preserved, as the Win32 ABI promises.
 *
 * Decisions:
 * - Standard handles are the small constants below; WriteFile maps them to host fds 0-2.
 * - GetCommandLineA returns a string built once at start-up from the host's argv: the basename
 *   of argv[0] (so `./build/demo.exe a b` gives "demo.exe a b"), then each argument quoted by
 *   the rules CommandLineToArgvW undoes. It lives at 0x7ffe0000, just above the stack.
 * - VirtualAlloc is a bump allocator from 0x10000000 in 64 KiB steps. Memory it hands out has
 *   never been handed out before, so it is still the zero-filled, lazily committed reservation;
 *   it is not cleared again (that would commit every page of a large reservation).
 *   A commit inside an earlier allocation returns the page it names. VirtualFree only says yes.
 * - The operating system is reached only through the runtime's host primitives (rpt_write,
 *   rpt_process_exit), never libc, so the platform builds on freestanding hosts too.
 */
#include "cpu.h"

#define RPT_WIN32_CMDLINE_ADDR 0x7ffe0000u
#define RPT_WIN32_CMDLINE_SIZE 0x10000u
#define RPT_WIN32_HEAP_BASE 0x10000000u
#define RPT_WIN32_HEAP_LIMIT 0x70000000u
#define RPT_WIN32_ALLOC_GRANULE 0x10000u

#define RPT_WIN32_STD_INPUT_HANDLE 0xfffffff6u  /* (DWORD)-10 */
#define RPT_WIN32_STD_OUTPUT_HANDLE 0xfffffff5u /* (DWORD)-11 */
#define RPT_WIN32_STD_ERROR_HANDLE 0xfffffff4u  /* (DWORD)-12 */
#define RPT_WIN32_INVALID_HANDLE 0xffffffffu

/* The handles GetStdHandle gives out; any other handle is invalid. */
#define RPT_WIN32_HANDLE_STDIN 0x00000010u
#define RPT_WIN32_HANDLE_STDOUT 0x00000014u
#define RPT_WIN32_HANDLE_STDERR 0x00000018u

static uint32_t rpt_win32_heap_next = RPT_WIN32_HEAP_BASE;

void rpt_x86_platform_init(struct cpu *c, int argc, char **argv);
void rpt_win32_KERNEL32_GetStdHandle(struct cpu *restrict c);
void rpt_win32_KERNEL32_WriteFile(struct cpu *restrict c);
void rpt_win32_KERNEL32_ExitProcess(struct cpu *restrict c);
void rpt_win32_KERNEL32_GetCommandLineA(struct cpu *restrict c);
void rpt_win32_KERNEL32_VirtualAlloc(struct cpu *restrict c);
void rpt_win32_KERNEL32_VirtualFree(struct cpu *restrict c);

/* Argument i (from 0) of a stdcall extern: above the return address at [esp]. */
static uint32_t rpt_win32_arg(struct cpu *c, uint32_t i)
{
	return rpt_load_u32_le((uint32_t)(c->esp + 4 + 4 * i));
}

/* Returns `result` in eax and pops the return address and `nargs` arguments. */
static void rpt_win32_return(struct cpu *c, uint32_t nargs, uint32_t result)
{
	c->eax = result;
	c->esp = c->esp + 4 + 4 * nargs;
}

/* ---- the command line */

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

void rpt_x86_platform_init(struct cpu *c, int argc, char **argv)
{
	(void)c;
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

/* ---- KERNEL32 */

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

/* BOOL WriteFile(HANDLE h, LPCVOID buf, DWORD n, LPDWORD written, LPOVERLAPPED ov) */
void rpt_win32_KERNEL32_WriteFile(struct cpu *restrict c)
{
	uint32_t handle = rpt_win32_arg(c, 0);
	uint32_t buf = rpt_win32_arg(c, 1);
	uint32_t len = rpt_win32_arg(c, 2);
	uint32_t written_ptr = rpt_win32_arg(c, 3);
	int fd = handle == RPT_WIN32_HANDLE_STDOUT ? 1 : handle == RPT_WIN32_HANDLE_STDERR ? 2 : -1;
	if (fd < 0) {
		rpt_win32_return(c, 5, 0);
		return;
	}
	/* The guest buffer is contiguous in host memory unless it wraps past 4 GiB; clip it there. */
	if ((uint64_t)buf + len > (uint64_t)1 << 32)
		len = (uint32_t)(((uint64_t)1 << 32) - buf);
	uint32_t done = (uint32_t)rpt_write(fd, rpt_mem + buf, len);
	if (written_ptr != 0)
		rpt_store_u32_le(written_ptr, done);
	rpt_win32_return(c, 5, done == len ? 1u : 0u);
}

/* VOID ExitProcess(UINT code) - never returns. */
void rpt_win32_KERNEL32_ExitProcess(struct cpu *restrict c)
{
	rpt_process_exit((int)rpt_win32_arg(c, 0));
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
	uint64_t len = (size + RPT_WIN32_ALLOC_GRANULE - 1) & ~(uint64_t)(RPT_WIN32_ALLOC_GRANULE - 1);
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
	} else if (len <= RPT_WIN32_HEAP_LIMIT - rpt_win32_heap_next) {
		result = rpt_win32_heap_next;
		rpt_win32_heap_next += (uint32_t)len;
	}
	rpt_win32_return(c, 4, result);
}

/* BOOL VirtualFree(LPVOID addr, SIZE_T size, DWORD type) - memory is never reused, so this only succeeds. */
void rpt_win32_KERNEL32_VirtualFree(struct cpu *restrict c)
{
	rpt_win32_return(c, 3, 1);
}
