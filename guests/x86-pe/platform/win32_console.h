/*
 * win32_console.h - what the files of the win32-console platform share (not part of docs/c-abi.md).
 *
 * The platform is split by subject: win32_console.c (start-up, guest memory layout, the TEB,
 * data imports, KERNEL32), msvcrt_crt.c (CRT start-up and exit, the heap, errno, signals, locale),
 * msvcrt_stdio.c (streams and the sandbox), msvcrt_format.c (the printf and scanf engines),
 * msvcrt_string.c (strings, memory, ctype, conversions, qsort/bsearch, rand, getenv),
 * msvcrt_math.c (math.h, time.h) and msvcrt_setjmp.c (setjmp/longjmp).
 *
 * Every extern follows docs/c-abi.md: esp points at the return address, arguments lie above it.
 * KERNEL32 functions are stdcall (they pop their arguments); msvcrt functions are cdecl (the
 * caller pops the arguments, the extern pops only the return address).
 */
#ifndef RPT_WIN32_CONSOLE_H
#define RPT_WIN32_CONSOLE_H

#include "cpu.h"

/* ---- guest memory layout (the whole map is in x86_runtime.c) */

#define RPT_WIN32_IMAGE_DEFAULT_BASE 0x00400000u
#define RPT_WIN32_HEAP_BASE 0x10000000u
#define RPT_WIN32_HEAP_LIMIT 0x70000000u
#define RPT_WIN32_STACK_TOP 0x7ffe0000u
#define RPT_WIN32_STACK_LIMIT RPT_WIN32_HEAP_LIMIT
#define RPT_WIN32_CMDLINE_ADDR 0x7ffe0000u
#define RPT_WIN32_CMDLINE_SIZE 0x10000u
/* FS points here (the lifter's TEB_ADDR in guests/x86-pe/src/lift/operand.rs; a test compares them). */
#define RPT_X86_TEB_ADDR 0x7fff0000u
#define RPT_WIN32_PEB_ADDR 0x7fff1000u
/* Platform variables the guest can see (data imports, FILE structures): 0x7fff2000-0x7fffffff. */
#define RPT_WIN32_DATA_ADDR 0x7fff2000u
#define RPT_WIN32_DATA_END 0x80000000u

/* Offsets in the TEB, as Windows lays it out. */
#define RPT_TEB_EXCEPTION_LIST 0x00u
#define RPT_TEB_STACK_BASE 0x04u
#define RPT_TEB_STACK_LIMIT 0x08u
#define RPT_TEB_SELF 0x18u
#define RPT_TEB_PROCESS_ID 0x20u
#define RPT_TEB_THREAD_ID 0x24u
#define RPT_TEB_TLS_POINTER 0x2cu
#define RPT_TEB_PEB 0x30u
#define RPT_TEB_LAST_ERROR 0x34u
#define RPT_TEB_TLS_SLOTS 0xe10u
#define RPT_TEB_TLS_SLOT_COUNT 64u

/* Guest addresses of platform variables, each in the data area above. */
enum {
	RPT_DATA_IOB = RPT_WIN32_DATA_ADDR,          /* FILE _iob[RPT_MSVCRT_STREAMS], 32 bytes each */
	RPT_DATA_INITENV = RPT_WIN32_DATA_ADDR + 0x1000, /* char **__initenv */
	RPT_DATA_ENVIRON = RPT_WIN32_DATA_ADDR + 0x1004, /* char **_environ */
	RPT_DATA_ARGC = RPT_WIN32_DATA_ADDR + 0x1008,    /* int __argc */
	RPT_DATA_ARGV = RPT_WIN32_DATA_ADDR + 0x100c,    /* char **__argv */
	RPT_DATA_ACMDLN = RPT_WIN32_DATA_ADDR + 0x1010,  /* char *_acmdln */
	RPT_DATA_FMODE = RPT_WIN32_DATA_ADDR + 0x1014,   /* int _fmode */
	RPT_DATA_COMMODE = RPT_WIN32_DATA_ADDR + 0x1018, /* int _commode */
	RPT_DATA_MB_CUR_MAX = RPT_WIN32_DATA_ADDR + 0x101c, /* int __mb_cur_max */
	RPT_DATA_ERRNO = RPT_WIN32_DATA_ADDR + 0x1020,   /* int errno (through _errno()) */
	RPT_DATA_PCTYPE = RPT_WIN32_DATA_ADDR + 0x1024,  /* unsigned short *_pctype */
	RPT_DATA_TIMEZONE = RPT_WIN32_DATA_ADDR + 0x1028, /* long _timezone */
	RPT_DATA_DAYLIGHT = RPT_WIN32_DATA_ADDR + 0x102c, /* int _daylight */
	RPT_DATA_DOSERRNO = RPT_WIN32_DATA_ADDR + 0x1030, /* unsigned long _doserrno */
	RPT_DATA_TM = RPT_WIN32_DATA_ADDR + 0x1040,      /* struct tm of gmtime/localtime (36 bytes) */
	RPT_DATA_LCONV = RPT_WIN32_DATA_ADDR + 0x1080,   /* struct lconv of localeconv (48 bytes) */
	RPT_DATA_LCONV_STRINGS = RPT_WIN32_DATA_ADDR + 0x10c0, /* its strings: ".", "" */
	RPT_DATA_LOCALE_NAME = RPT_WIN32_DATA_ADDR + 0x10d0, /* "C" */
	RPT_DATA_STRERROR = RPT_WIN32_DATA_ADDR + 0x1100, /* strerror's buffer (128 bytes) */
	RPT_DATA_TIME_TEXT = RPT_WIN32_DATA_ADDR + 0x1180, /* asctime/ctime's buffer (32 bytes) */
	RPT_DATA_CTYPE = RPT_WIN32_DATA_ADDR + 0x1200,   /* unsigned short [257]: EOF, then 0-255 */
	RPT_DATA_TMPNAM = RPT_WIN32_DATA_ADDR + 0x1500   /* tmpnam's buffer (32 bytes) */
};

/* ---- extern arguments and results */

/* Argument slot i (4 bytes each, from 0) above the return address at [esp]. */
static inline uint32_t rpt_win32_arg(struct cpu *c, uint32_t i)
{
	return rpt_load_u32_le((uint32_t)(c->esp + 4 + 4 * i));
}

/* A double or 64-bit integer argument occupying slots i and i+1. */
static inline uint64_t rpt_win32_arg64(struct cpu *c, uint32_t i)
{
	return (uint64_t)rpt_win32_arg(c, i) | (uint64_t)rpt_win32_arg(c, i + 1) << 32;
}

static inline double rpt_win32_arg_f64(struct cpu *c, uint32_t i)
{
	return rpt_f64_from_bits(rpt_win32_arg64(c, i));
}

/* stdcall: the result in eax; pops the return address and `nargs` argument slots. */
static inline void rpt_win32_return(struct cpu *c, uint32_t nargs, uint32_t result)
{
	c->eax = result;
	c->esp = c->esp + 4 + 4 * nargs;
}

/* cdecl: the result in eax; pops only the return address. */
static inline void rpt_win32_return_cdecl(struct cpu *c, uint32_t result)
{
	c->eax = result;
	c->esp = c->esp + 4;
}

/* cdecl with a 64-bit result in edx:eax. */
static inline void rpt_win32_return_cdecl64(struct cpu *c, uint64_t result)
{
	c->edx = (uint32_t)(result >> 32);
	rpt_win32_return_cdecl(c, (uint32_t)result);
}

/* cdecl with a double result, which the i386 ABI returns in st(0). */
void rpt_win32_return_cdecl_f64(struct cpu *c, double result);

/* Calls the cdecl guest function at `fn` with `nargs` 32-bit arguments and returns its eax.
 * The call happens below the extern's own frame; esp is as before afterwards. */
uint32_t rpt_win32_call_guest(struct cpu *c, uint32_t fn, uint32_t nargs, const uint32_t *args);

/* ---- process-wide services of win32_console.c */

/* Flushes every stream and ends the process with `code`, as ExitProcess does. */
_Noreturn void rpt_win32_exit_process(int code);
/* Reports a fatal error in the guest's use of the platform on stderr and exits with status 125. */
_Noreturn void rpt_win32_fatal(const char *what, uint32_t addr);
void rpt_win32_set_last_error(uint32_t code);
/* Reserves `size` bytes of zeroed guest memory (64 KiB granules); 0 when the heap area is full. */
uint32_t rpt_win32_reserve(uint64_t size);
/* The thunk address of an import the image names `name` (from any module), or 0. */
uint32_t rpt_win32_import_thunk(const char *name);
/* The image's base address (where its headers are). */
uint32_t rpt_win32_image_base(void);

/* ---- guest strings and memory, for every file */

uint32_t rpt_guest_strlen(uint32_t s);
/* Copies at most cap-1 bytes of the guest string at `s` into `out` and terminates it; returns the
 * guest string's full length. */
uint32_t rpt_guest_string(uint32_t s, char *out, uint32_t cap);
void rpt_guest_copy_out(uint32_t dst, const void *src, uint32_t n);
void rpt_guest_copy_in(void *dst, uint32_t src, uint32_t n);
void rpt_guest_memmove(uint32_t dst, uint32_t src, uint32_t n);
void rpt_guest_memset(uint32_t dst, uint8_t v, uint32_t n);
/* Stores a host string and its NUL at `dst`. */
void rpt_guest_store_string(uint32_t dst, const char *s);
uint32_t rpt_win32_strlen(const char *s);

/* ---- msvcrt internals shared between its files */

#define RPT_MSVCRT_STREAMS 64u   /* FILE structures: _iob[0..2] are stdin, stdout, stderr */
#define RPT_MSVCRT_FILE_SIZE 32u /* sizeof(FILE) in msvcrt */

/* msvcrt's errno values. */
enum {
	RPT_EPERM = 1, RPT_ENOENT = 2, RPT_EBADF = 9, RPT_ENOMEM = 12, RPT_EACCES = 13, RPT_EEXIST = 17,
	RPT_EISDIR = 21, RPT_EINVAL = 22, RPT_EMFILE = 24, RPT_ENOSPC = 28, RPT_ESPIPE = 29, RPT_EDOM = 33,
	RPT_ERANGE = 34
};

void rpt_msvcrt_init(struct cpu *c, int argc, char **argv);
void rpt_msvcrt_set_errno(int e);
/* Sets errno from rpt_last_error(). */
void rpt_msvcrt_errno_from_host(void);
/* Runs the atexit/_onexit functions, last registered first (once). */
void rpt_msvcrt_run_exit_handlers(struct cpu *c);
void rpt_msvcrt_flush_all(void);
void rpt_msvcrt_stdio_init(void);
void rpt_msvcrt_ctype_init(void);
uint32_t rpt_msvcrt_malloc(uint32_t size);
void rpt_msvcrt_free(uint32_t p);
uint32_t rpt_msvcrt_env_lookup(const char *name);
/* The ctype class bits of byte `ch` (0-255) or EOF (-1), msvcrt's _UPPER, _LOWER, ... */
uint16_t rpt_msvcrt_ctype(int ch);
enum {
	RPT_CT_UPPER = 0x1, RPT_CT_LOWER = 0x2, RPT_CT_DIGIT = 0x4, RPT_CT_SPACE = 0x8, RPT_CT_PUNCT = 0x10,
	RPT_CT_CONTROL = 0x20, RPT_CT_BLANK = 0x40, RPT_CT_HEX = 0x80, RPT_CT_ALPHA = 0x100 | RPT_CT_UPPER | RPT_CT_LOWER
};

/* Where formatted output goes: a stream, guest memory, or a host buffer. */
struct rpt_fmt_sink {
	void (*put)(struct rpt_fmt_sink *sink, const char *bytes, uint32_t n);
	uint32_t count; /* bytes produced so far, including any cut off by a limit */
	uint32_t stream; /* a FILE's guest address, for stream sinks */
	uint32_t dst, limit; /* guest buffer and its capacity, for memory sinks */
	int failed;
};

/* printf's engine: formats the guest format string at `fmt` with arguments read from guest
 * memory starting at `args` (a va_list); returns the count or -1 for a bad format. */
int rpt_msvcrt_format(struct rpt_fmt_sink *sink, uint32_t fmt, uint32_t args);

/* Characters for scanf's engine. */
struct rpt_scan_source {
	int (*get)(struct rpt_scan_source *src); /* next byte or -1 at the end */
	void (*unget)(struct rpt_scan_source *src, int ch);
	uint32_t stream; /* a FILE, for stream sources */
	uint32_t at;     /* the next byte, for string sources */
	uint32_t consumed;
};

/* scanf's engine: returns the number of assignments, or -1 at end of input before any. */
int rpt_msvcrt_scan(struct rpt_scan_source *src, uint32_t fmt, uint32_t args);

/* Exact decimal conversions shared by printf, scanf, strtod and atof. */
/* Parses a decimal or hexadecimal floating-point number from `text` (a host string) and returns
 * how many bytes it used (0 if none); *out gets the correctly rounded double. */
uint32_t rpt_msvcrt_parse_double(const char *text, double *out, int *range_error);

/* ---- streams (msvcrt_stdio.c) */

/* The stream number of a FILE address, or -1. */
int rpt_msvcrt_stream_index(uint32_t file);
uint32_t rpt_msvcrt_stream_addr(uint32_t index);
/* Writes bytes to a stream (with text-mode translation); returns how many were accepted. */
uint32_t rpt_msvcrt_stream_write(uint32_t file, const char *bytes, uint32_t n);
/* Reads one byte from a stream, -1 at end of file or on error. */
int rpt_msvcrt_stream_getc(uint32_t file);
int rpt_msvcrt_stream_ungetc(uint32_t file, int ch);
/* Writes to host stdout/stderr through the stream layer, for KERNEL32's WriteFile. */
void rpt_msvcrt_stream_flush(uint32_t file);

#endif /* RPT_WIN32_CONSOLE_H */
