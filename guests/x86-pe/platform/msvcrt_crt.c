/*
 * msvcrt_crt.c - msvcrt's process start-up and termination, the guest heap, errno, signals and
 * the "C" locale. All functions are cdecl externs (see win32_console.h).
 *
 * Decisions:
 * - argv and the environment are built once at start-up on the guest heap: argv from the host's
 *   arguments (argv[0] is the program's base name, as in the command line), the environment
 *   from the host's. Wildcards are not expanded (mingw's default, _dowildcard = 0).
 * - The heap lives in guest memory, in arenas of at least 1 MiB taken from the platform's page
 *   allocator (the VirtualAlloc area). Blocks have a 16-byte header and 16-byte aligned payloads
 *   whose capacity is a power of two from 16 bytes; freed blocks go to a free list per capacity
 *   and are reused first-in, last-out. Arenas are never given back. realloc keeps the block when
 *   it is big enough and otherwise copies. free() of a pointer the heap did not hand out, or of
 *   one already freed, ends the process with a message naming it (Windows would corrupt its heap).
 * - exit() runs the atexit/_onexit functions, last first, then flushes every stream; _exit()
 *   does neither; abort() prints msvcrt's message and ends with status 3.
 * - One locale exists, "C".
 */
#include "win32_console.h"

#define RPT_MSVCRT(name) void rpt_win32_msvcrt_##name(struct cpu *restrict c)

/* A cdecl function that returns the address of the platform's data `value` (`__p__fmode`). */
#define RPT_MSVCRT_CONSTANT(name, value)                 \
	RPT_MSVCRT(name)                                 \
	{                                                \
		rpt_win32_return_cdecl(c, value);        \
	}

RPT_MSVCRT(__getmainargs);
RPT_MSVCRT(__set_app_type);
RPT_MSVCRT(__setusermatherr);
RPT_MSVCRT(__p__acmdln);
RPT_MSVCRT(__p__commode);
RPT_MSVCRT(__p__fmode);
RPT_MSVCRT(__p___argc);
RPT_MSVCRT(__p___argv);
RPT_MSVCRT(__p__environ);
RPT_MSVCRT(__p___initenv);
RPT_MSVCRT(_initterm);
RPT_MSVCRT(_initterm_e);
RPT_MSVCRT(_amsg_exit);
RPT_MSVCRT(_cexit);
RPT_MSVCRT(_c_exit);
RPT_MSVCRT(exit);
RPT_MSVCRT(_exit);
RPT_MSVCRT(abort);
RPT_MSVCRT(atexit);
RPT_MSVCRT(_onexit);
RPT_MSVCRT(signal);
RPT_MSVCRT(raise);
RPT_MSVCRT(_errno);
RPT_MSVCRT(__doserrno);
RPT_MSVCRT(_lock);
RPT_MSVCRT(_unlock);
RPT_MSVCRT(setlocale);
RPT_MSVCRT(localeconv);
RPT_MSVCRT(___lc_codepage_func);
RPT_MSVCRT(___mb_cur_max_func);
RPT_MSVCRT(__p___mb_cur_max);
RPT_MSVCRT(_set_invalid_parameter_handler);
RPT_MSVCRT(_controlfp);
RPT_MSVCRT(_fpreset);
RPT_MSVCRT(malloc);
RPT_MSVCRT(calloc);
RPT_MSVCRT(realloc);
RPT_MSVCRT(free);
RPT_MSVCRT(_msize);

/* ---------------------------------------------------------------- errno */

void rpt_msvcrt_set_errno(int e)
{
	rpt_store_u32_le(RPT_DATA_ERRNO, (uint32_t)e);
}

void rpt_msvcrt_errno_from_host(void)
{
	switch (rpt_last_error()) {
	case RPT_HOST_ERROR_NOT_FOUND:
		rpt_msvcrt_set_errno(RPT_ENOENT);
		break;
	case RPT_HOST_ERROR_ACCESS:
		rpt_msvcrt_set_errno(RPT_EACCES);
		break;
	case RPT_HOST_ERROR_EXISTS:
		rpt_msvcrt_set_errno(RPT_EEXIST);
		break;
	case RPT_HOST_ERROR_IS_DIRECTORY:
		rpt_msvcrt_set_errno(RPT_EACCES);
		break;
	case RPT_HOST_ERROR_TOO_MANY:
		rpt_msvcrt_set_errno(RPT_EMFILE);
		break;
	case RPT_HOST_ERROR_INVALID:
		rpt_msvcrt_set_errno(RPT_EINVAL);
		break;
	default:
		rpt_msvcrt_set_errno(RPT_EACCES);
		break;
	}
}

RPT_MSVCRT_CONSTANT(_errno, RPT_DATA_ERRNO)

RPT_MSVCRT_CONSTANT(__doserrno, RPT_DATA_DOSERRNO)

/* ---------------------------------------------------------------- the heap */

#define RPT_HEAP_HEADER 16u
#define RPT_HEAP_CLASSES 27u /* capacities 16 << 0 ... 16 << 26 (1 GiB) */
#define RPT_HEAP_ARENA 0x100000u
#define RPT_HEAP_LIVE 0x6576696cu /* "live" */
#define RPT_HEAP_FREED 0x65657266u /* "free" */

static uint32_t rpt_heap_free_lists[RPT_HEAP_CLASSES];
static uint32_t rpt_heap_arena_next, rpt_heap_arena_end;

static int rpt_heap_class(uint32_t size)
{
	for (uint32_t k = 0; k < RPT_HEAP_CLASSES; k++)
		if (size <= (16u << k))
			return (int)k;
	return -1;
}

uint32_t rpt_msvcrt_malloc(uint32_t size)
{
	int k = rpt_heap_class(size);
	if (k < 0) {
		rpt_msvcrt_set_errno(RPT_ENOMEM);
		return 0;
	}
	uint32_t cap = 16u << k;
	uint32_t block = rpt_heap_free_lists[k];
	if (block) {
		rpt_heap_free_lists[k] = rpt_load_u32_le(block + RPT_HEAP_HEADER);
	} else {
		uint64_t need = (uint64_t)RPT_HEAP_HEADER + cap;
		if (need > (uint64_t)rpt_heap_arena_end - rpt_heap_arena_next) {
			uint64_t arena_size = need > RPT_HEAP_ARENA ? need : RPT_HEAP_ARENA;
			uint32_t arena = rpt_win32_reserve(arena_size);
			if (!arena) {
				rpt_msvcrt_set_errno(RPT_ENOMEM);
				return 0;
			}
			/* A new arena right after the old one simply extends it. */
			if (arena != rpt_heap_arena_end)
				rpt_heap_arena_next = arena;
			rpt_heap_arena_end = arena + (uint32_t)((arena_size + 0xffffu) & ~(uint64_t)0xffffu);
		}
		block = rpt_heap_arena_next;
		rpt_heap_arena_next += (uint32_t)need;
	}
	rpt_store_u32_le(block, cap);
	rpt_store_u32_le(block + 4, RPT_HEAP_LIVE);
	rpt_store_u32_le(block + 8, size);
	return block + RPT_HEAP_HEADER;
}

/* The block header of a live pointer, or a fatal error naming it. */
static uint32_t rpt_heap_block(uint32_t p, const char *what)
{
	uint32_t block = p - RPT_HEAP_HEADER;
	uint32_t magic = rpt_load_u32_le(block + 4);
	if (p < RPT_WIN32_HEAP_BASE || p >= RPT_WIN32_HEAP_LIMIT || (p & 15) || magic != RPT_HEAP_LIVE ||
	    rpt_heap_class(rpt_load_u32_le(block)) < 0)
		rpt_win32_fatal(magic == RPT_HEAP_FREED ? "a block freed twice was passed to " : what, p);
	(void)what;
	return block;
}

void rpt_msvcrt_free(uint32_t p)
{
	if (!p)
		return;
	uint32_t block = rpt_heap_block(p, "free() of a pointer malloc did not return: ");
	int k = rpt_heap_class(rpt_load_u32_le(block));
	rpt_store_u32_le(block + 4, RPT_HEAP_FREED);
	rpt_store_u32_le(p, rpt_heap_free_lists[k]);
	rpt_heap_free_lists[k] = block;
}

void rpt_win32_msvcrt_malloc(struct cpu *restrict c)
{
	rpt_win32_return_cdecl(c, rpt_msvcrt_malloc(rpt_win32_arg(c, 0)));
}

void rpt_win32_msvcrt_calloc(struct cpu *restrict c)
{
	uint64_t total = (uint64_t)rpt_win32_arg(c, 0) * rpt_win32_arg(c, 1);
	uint32_t p = 0;
	if (total <= 0xffffffffu) {
		p = rpt_msvcrt_malloc((uint32_t)total);
		if (p)
			rpt_guest_memset(p, 0, (uint32_t)total);
	} else {
		rpt_msvcrt_set_errno(RPT_ENOMEM);
	}
	rpt_win32_return_cdecl(c, p);
}

void rpt_win32_msvcrt_realloc(struct cpu *restrict c)
{
	uint32_t p = rpt_win32_arg(c, 0), size = rpt_win32_arg(c, 1);
	if (!p) {
		rpt_win32_return_cdecl(c, rpt_msvcrt_malloc(size));
		return;
	}
	uint32_t block = rpt_heap_block(p, "realloc() of a pointer malloc did not return: ");
	if (size == 0) {
		rpt_msvcrt_free(p);
		rpt_win32_return_cdecl(c, 0);
		return;
	}
	uint32_t cap = rpt_load_u32_le(block), old = rpt_load_u32_le(block + 8);
	if (size <= cap) {
		rpt_store_u32_le(block + 8, size);
		rpt_win32_return_cdecl(c, p);
		return;
	}
	uint32_t q = rpt_msvcrt_malloc(size);
	if (q) {
		rpt_guest_memmove(q, p, old);
		rpt_msvcrt_free(p);
	}
	rpt_win32_return_cdecl(c, q);
}

void rpt_win32_msvcrt_free(struct cpu *restrict c)
{
	rpt_msvcrt_free(rpt_win32_arg(c, 0));
	rpt_win32_return_cdecl(c, 0);
}

void rpt_win32_msvcrt__msize(struct cpu *restrict c)
{
	uint32_t block = rpt_heap_block(rpt_win32_arg(c, 0), "_msize() of a pointer malloc did not return: ");
	rpt_win32_return_cdecl(c, rpt_load_u32_le(block + 8));
}

/* ---------------------------------------------------------------- start-up */

static uint32_t rpt_msvcrt_app_type;
static uint32_t rpt_msvcrt_matherr;

/* Copies a host string onto the guest heap. */
static uint32_t rpt_msvcrt_strdup_host(const char *s)
{
	uint32_t n = rpt_win32_strlen(s);
	uint32_t p = rpt_msvcrt_malloc(n + 1);
	if (!p)
		rpt_win32_fatal("no guest memory for the program's arguments at ", RPT_WIN32_HEAP_BASE);
	rpt_guest_store_string(p, s);
	return p;
}

void rpt_msvcrt_init(struct cpu *c, int argc, char **argv)
{
	(void)c;
	uint32_t guest_argc = argc > 0 ? (uint32_t)argc : 1;
	uint32_t args = rpt_msvcrt_malloc(4 * (guest_argc + 1));
	if (!args)
		rpt_win32_fatal("no guest memory for argv at ", RPT_WIN32_HEAP_BASE);
	const char *name = argc > 0 && argv[0] ? argv[0] : "program.exe";
	for (const char *p = name; *p; p++)
		if (*p == '/' || *p == '\\')
			name = p + 1;
	rpt_store_u32_le(args, rpt_msvcrt_strdup_host(name));
	for (uint32_t i = 1; i < guest_argc; i++)
		rpt_store_u32_le(args + 4 * i, rpt_msvcrt_strdup_host(argv[i]));
	rpt_store_u32_le(args + 4 * guest_argc, 0);

	uint32_t env_count = 0;
	while (rpt_env(env_count))
		env_count++;
	uint32_t env = rpt_msvcrt_malloc(4 * (env_count + 1));
	if (!env)
		rpt_win32_fatal("no guest memory for the environment at ", RPT_WIN32_HEAP_BASE);
	for (uint32_t i = 0; i < env_count; i++)
		rpt_store_u32_le(env + 4 * i, rpt_msvcrt_strdup_host(rpt_env(i)));
	rpt_store_u32_le(env + 4 * env_count, 0);

	rpt_store_u32_le(RPT_DATA_ARGC, guest_argc);
	rpt_store_u32_le(RPT_DATA_ARGV, args);
	rpt_store_u32_le(RPT_DATA_ENVIRON, env);
	rpt_store_u32_le(RPT_DATA_INITENV, env);
	rpt_store_u32_le(RPT_DATA_ACMDLN, RPT_WIN32_CMDLINE_ADDR);
	rpt_store_u32_le(RPT_DATA_FMODE, 0);
	rpt_store_u32_le(RPT_DATA_COMMODE, 0);
	rpt_store_u32_le(RPT_DATA_MB_CUR_MAX, 1);
	rpt_store_u32_le(RPT_DATA_ERRNO, 0);
	rpt_store_u32_le(RPT_DATA_TIMEZONE, 0);
	rpt_store_u32_le(RPT_DATA_DAYLIGHT, 0);
	rpt_guest_store_string(RPT_DATA_LOCALE_NAME, "C");
	/* struct lconv: decimal_point ".", every other string "", every char field CHAR_MAX. */
	rpt_guest_store_string(RPT_DATA_LCONV_STRINGS, ".");
	rpt_store_u8_le(RPT_DATA_LCONV_STRINGS + 2, 0);
	for (uint32_t i = 0; i < 10; i++)
		rpt_store_u32_le(RPT_DATA_LCONV + 4 * i, RPT_DATA_LCONV_STRINGS + 2);
	rpt_store_u32_le(RPT_DATA_LCONV, RPT_DATA_LCONV_STRINGS);
	for (uint32_t i = 0; i < 8; i++)
		rpt_store_u8_le(RPT_DATA_LCONV + 40 + i, 127);
	rpt_msvcrt_ctype_init();
	rpt_msvcrt_stdio_init();
}

/* void __getmainargs(int *argc, char ***argv, char ***env, int wildcard, _startupinfo *info) */
void rpt_win32_msvcrt___getmainargs(struct cpu *restrict c)
{
	rpt_store_u32_le(rpt_win32_arg(c, 0), rpt_load_u32_le(RPT_DATA_ARGC));
	rpt_store_u32_le(rpt_win32_arg(c, 1), rpt_load_u32_le(RPT_DATA_ARGV));
	rpt_store_u32_le(rpt_win32_arg(c, 2), rpt_load_u32_le(RPT_DATA_ENVIRON));
	rpt_win32_return_cdecl(c, 0);
}

void rpt_win32_msvcrt___set_app_type(struct cpu *restrict c)
{
	rpt_msvcrt_app_type = rpt_win32_arg(c, 0);
	rpt_win32_return_cdecl(c, 0);
}

/* The handler is kept; math functions here report errors through errno only. */
void rpt_win32_msvcrt___setusermatherr(struct cpu *restrict c)
{
	rpt_msvcrt_matherr = rpt_win32_arg(c, 0);
	rpt_win32_return_cdecl(c, 0);
}

RPT_MSVCRT_CONSTANT(__p__acmdln, RPT_DATA_ACMDLN)

RPT_MSVCRT_CONSTANT(__p__commode, RPT_DATA_COMMODE)

RPT_MSVCRT_CONSTANT(__p__fmode, RPT_DATA_FMODE)

RPT_MSVCRT_CONSTANT(__p___argc, RPT_DATA_ARGC)

RPT_MSVCRT_CONSTANT(__p___argv, RPT_DATA_ARGV)

RPT_MSVCRT_CONSTANT(__p__environ, RPT_DATA_ENVIRON)

RPT_MSVCRT_CONSTANT(__p___initenv, RPT_DATA_INITENV)

RPT_MSVCRT_CONSTANT(__p___mb_cur_max, RPT_DATA_MB_CUR_MAX)

void rpt_win32_msvcrt____mb_cur_max_func(struct cpu *restrict c)
{
	rpt_win32_return_cdecl(c, 1);
}

void rpt_win32_msvcrt____lc_codepage_func(struct cpu *restrict c)
{
	rpt_win32_return_cdecl(c, 0);
}

/* void _initterm(_PVFV *start, _PVFV *end): calls each non-null pointer in [start, end). */
void rpt_win32_msvcrt__initterm(struct cpu *restrict c)
{
	uint32_t start = rpt_win32_arg(c, 0), end = rpt_win32_arg(c, 1);
	for (uint32_t p = start; p < end; p += 4) {
		uint32_t fn = rpt_load_u32_le(p);
		if (fn)
			rpt_win32_call_guest(c, fn, 0, NULL);
	}
	rpt_win32_return_cdecl(c, 0);
}

/* int _initterm_e(_PIFV *start, _PIFV *end): stops at the first function returning nonzero. */
void rpt_win32_msvcrt__initterm_e(struct cpu *restrict c)
{
	uint32_t start = rpt_win32_arg(c, 0), end = rpt_win32_arg(c, 1), result = 0;
	for (uint32_t p = start; p < end && !result; p += 4) {
		uint32_t fn = rpt_load_u32_le(p);
		if (fn)
			result = rpt_win32_call_guest(c, fn, 0, NULL);
	}
	rpt_win32_return_cdecl(c, result);
}

/* ---------------------------------------------------------------- termination */

#define RPT_MSVCRT_EXIT_HANDLERS 1024u
static uint32_t rpt_msvcrt_exit_handlers[RPT_MSVCRT_EXIT_HANDLERS];
static uint32_t rpt_msvcrt_exit_count;

void rpt_msvcrt_run_exit_handlers(struct cpu *c)
{
	/* A handler may register another; each runs once, newest first. */
	while (rpt_msvcrt_exit_count > 0) {
		uint32_t fn = rpt_msvcrt_exit_handlers[--rpt_msvcrt_exit_count];
		rpt_win32_call_guest(c, fn, 0, NULL);
	}
}

static int rpt_msvcrt_register_exit(uint32_t fn)
{
	if (rpt_msvcrt_exit_count >= RPT_MSVCRT_EXIT_HANDLERS)
		return 0;
	rpt_msvcrt_exit_handlers[rpt_msvcrt_exit_count++] = fn;
	return 1;
}

void rpt_win32_msvcrt_atexit(struct cpu *restrict c)
{
	rpt_win32_return_cdecl(c, rpt_msvcrt_register_exit(rpt_win32_arg(c, 0)) ? 0u : 0xffffffffu);
}

void rpt_win32_msvcrt__onexit(struct cpu *restrict c)
{
	uint32_t fn = rpt_win32_arg(c, 0);
	rpt_win32_return_cdecl(c, rpt_msvcrt_register_exit(fn) ? fn : 0u);
}

void rpt_win32_msvcrt_exit(struct cpu *restrict c)
{
	int code = (int)rpt_win32_arg(c, 0);
	rpt_msvcrt_run_exit_handlers(c);
	rpt_win32_exit_process(code);
}

void rpt_win32_msvcrt__exit(struct cpu *restrict c)
{
	rpt_process_exit((int)rpt_win32_arg(c, 0));
}

void rpt_win32_msvcrt__cexit(struct cpu *restrict c)
{
	rpt_msvcrt_run_exit_handlers(c);
	rpt_msvcrt_flush_all();
	rpt_win32_return_cdecl(c, 0);
}

void rpt_win32_msvcrt__c_exit(struct cpu *restrict c)
{
	rpt_msvcrt_flush_all();
	rpt_win32_return_cdecl(c, 0);
}

static _Noreturn void rpt_msvcrt_abort(void)
{
	static const char msg[] = "\r\nThis application has requested the Runtime to terminate it in an unusual way.\n"
				  "Please contact the application's support team for more information.\r\n";
	rpt_msvcrt_flush_all();
	rpt_write(2, msg, sizeof msg - 1);
	rpt_process_exit(3);
}

/* void _amsg_exit(int code): msvcrt's "runtime error R60nn" and status 255. */
void rpt_win32_msvcrt__amsg_exit(struct cpu *restrict c)
{
	uint32_t code = rpt_win32_arg(c, 0);
	char msg[] = "\r\nruntime error R6000\r\n";
	msg[17] = (char)('0' + code / 10 % 10);
	msg[18] = (char)('0' + code % 10);
	rpt_msvcrt_flush_all();
	rpt_write(2, msg, sizeof msg - 1);
	rpt_process_exit(255);
}

/* ---------------------------------------------------------------- signals */

#define RPT_SIGABRT 22u
#define RPT_SIG_DFL 0u
#define RPT_SIG_IGN 1u
#define RPT_SIG_ERR 0xffffffffu
#define RPT_MSVCRT_SIGNALS 23u

static uint32_t rpt_msvcrt_signal_handlers[RPT_MSVCRT_SIGNALS];

/* The signals msvcrt knows: SIGINT 2, SIGILL 4, SIGFPE 8, SIGSEGV 11, SIGTERM 15, SIGBREAK 21, SIGABRT 22. */
static int rpt_msvcrt_signal_known(uint32_t sig)
{
	return sig == 2 || sig == 4 || sig == 8 || sig == 11 || sig == 15 || sig == 21 || sig == 22;
}

void rpt_win32_msvcrt_signal(struct cpu *restrict c)
{
	uint32_t sig = rpt_win32_arg(c, 0), handler = rpt_win32_arg(c, 1);
	if (!rpt_msvcrt_signal_known(sig)) {
		rpt_msvcrt_set_errno(RPT_EINVAL);
		rpt_win32_return_cdecl(c, RPT_SIG_ERR);
		return;
	}
	uint32_t previous = rpt_msvcrt_signal_handlers[sig];
	rpt_msvcrt_signal_handlers[sig] = handler;
	rpt_win32_return_cdecl(c, previous);
}

void rpt_win32_msvcrt_raise(struct cpu *restrict c)
{
	uint32_t sig = rpt_win32_arg(c, 0);
	if (!rpt_msvcrt_signal_known(sig)) {
		rpt_win32_return_cdecl(c, 0xffffffffu);
		return;
	}
	uint32_t handler = rpt_msvcrt_signal_handlers[sig];
	if (handler == RPT_SIG_IGN) {
		rpt_win32_return_cdecl(c, 0);
		return;
	}
	if (handler == RPT_SIG_DFL) {
		if (sig == RPT_SIGABRT)
			rpt_msvcrt_abort();
		rpt_win32_exit_process(3);
	}
	/* As msvcrt does, the handler is reset to the default before it runs. */
	rpt_msvcrt_signal_handlers[sig] = RPT_SIG_DFL;
	uint32_t arg = sig;
	rpt_win32_call_guest(c, handler, 1, &arg);
	rpt_win32_return_cdecl(c, 0);
}

void rpt_win32_msvcrt_abort(struct cpu *restrict c)
{
	uint32_t handler = rpt_msvcrt_signal_handlers[RPT_SIGABRT];
	if (handler > RPT_SIG_IGN) {
		rpt_msvcrt_signal_handlers[RPT_SIGABRT] = RPT_SIG_DFL;
		uint32_t arg = RPT_SIGABRT;
		rpt_win32_call_guest(c, handler, 1, &arg);
	}
	rpt_msvcrt_abort();
}

/* ---------------------------------------------------------------- locks, locale, floating point */

void rpt_win32_msvcrt__lock(struct cpu *restrict c)
{
	rpt_win32_return_cdecl(c, 0);
}

void rpt_win32_msvcrt__unlock(struct cpu *restrict c)
{
	rpt_win32_return_cdecl(c, 0);
}

/* char *setlocale(int category, const char *locale): only "C" (and "", which means it here). */
void rpt_win32_msvcrt_setlocale(struct cpu *restrict c)
{
	uint32_t locale = rpt_win32_arg(c, 1);
	uint32_t result = RPT_DATA_LOCALE_NAME;
	if (locale) {
		uint8_t a = rpt_load_u8_le(locale), b = rpt_load_u8_le(locale + 1);
		if (!(a == 0 || (a == 'C' && b == 0)))
			result = 0;
	}
	rpt_win32_return_cdecl(c, result);
}

RPT_MSVCRT_CONSTANT(localeconv, RPT_DATA_LCONV)

static uint32_t rpt_msvcrt_invalid_parameter_handler;

void rpt_win32_msvcrt__set_invalid_parameter_handler(struct cpu *restrict c)
{
	uint32_t previous = rpt_msvcrt_invalid_parameter_handler;
	rpt_msvcrt_invalid_parameter_handler = rpt_win32_arg(c, 0);
	rpt_win32_return_cdecl(c, previous);
}

/* unsigned _controlfp(unsigned new, unsigned mask): the x87 unit's control word (fpu_cw) in msvcrt's
 * encoding. Exception masks: _EM_INVALID 0x10, _EM_DENORMAL 0x80000, _EM_ZERODIVIDE 0x8, _EM_OVERFLOW
 * 0x4, _EM_UNDERFLOW 0x2, _EM_INEXACT 0x1 (x87 bits 0-5: IM DM ZM OM UM PM); rounding _MCW_RC 0x300
 * (the x87's RC field moved down two bits); precision _PC_24 0x20000, _PC_53 0x10000, _PC_64 0
 * (x87 PC 0, 2, 3); _IC_AFFINE 0x40000 (bit 12). As msvcrt's, it cannot change the denormal mask. */
static const uint32_t rpt_msvcrt_em_bits[6] = { 0x10u, 0x80000u, 0x08u, 0x04u, 0x02u, 0x01u };

static uint32_t rpt_msvcrt_control_from_x87(uint16_t cw)
{
	uint32_t v = (uint32_t)((cw >> 10) & 3u) << 8;
	for (unsigned i = 0; i < 6; i++)
		if (cw & (1u << i))
			v |= rpt_msvcrt_em_bits[i];
	unsigned pc = (cw >> 8) & 3u;
	v |= pc == 0 ? 0x20000u : pc == 2 ? 0x10000u : 0;
	if (cw & 0x1000u)
		v |= 0x40000u;
	return v;
}

static uint16_t rpt_msvcrt_control_to_x87(uint32_t v, uint16_t old)
{
	uint32_t cw = old & ~0x1f3fu;
	for (unsigned i = 0; i < 6; i++)
		if (v & rpt_msvcrt_em_bits[i])
			cw |= 1u << i;
	cw |= ((v >> 8) & 3u) << 10;
	uint32_t pc = v & 0x30000u;
	cw |= (pc == 0x20000u ? 0u : pc == 0x10000u ? 2u : 3u) << 8;
	if (v & 0x40000u)
		cw |= 0x1000u;
	return (uint16_t)cw;
}

void rpt_win32_msvcrt__controlfp(struct cpu *restrict c)
{
	uint32_t value = rpt_win32_arg(c, 0), mask = rpt_win32_arg(c, 1) & ~0x80000u;
	uint32_t now = rpt_msvcrt_control_from_x87(c->fpu_cw);
	now = (now & ~mask) | (value & mask);
	c->fpu_cw = rpt_msvcrt_control_to_x87(now, c->fpu_cw);
	rpt_win32_return_cdecl(c, rpt_msvcrt_control_from_x87(c->fpu_cw));
}

/* void _fpreset(void): reinitialises the unit (fninit: all exceptions masked, 64-bit precision, nearest). */
void rpt_win32_msvcrt__fpreset(struct cpu *restrict c)
{
	rpt_helper_x87_op(c, 20u /* fninit: X87_FNINIT in x87.c */);
	rpt_win32_return_cdecl(c, 0);
}
