/*
 * rpt_host.h - the host primitives: the only way the runtime reaches the operating system
 * (see docs/c-abi.md, "Host primitives and services").
 *
 * A host with a C library gets them from runtime/rpt_host_libc.c. A freestanding host (LoongArch64 here,
 * which has no C library) supplies them, with its start-up code, in its shim (hosts/<name>/shim/). This
 * header needs nothing but the compiler's own <stddef.h> and <stdint.h>, so a shim can include it
 * without a generated cpu.h.
 *
 * Each primitive is one system call, or as close to one as the host allows; anything that can be
 * written once on top of them (retrying short writes, the sandbox's path walk, remembering the last
 * error) lives in rpt_runtime.c instead, so every host shares it. Guest C parts call the runtime's
 * services (rpt_write, rpt_open, ...), never these.
 *
 * Failures: a primitive that can fail returns a negative number, minus an RPT_HOST_ERROR_* code.
 * Interrupted system calls (EINTR) are restarted inside the primitive, never reported.
 */
#ifndef RPT_HOST_H
#define RPT_HOST_H

#include <stddef.h>
#include <stdint.h>

/* Rounding modes, numbered in the order of rpt_ir::Rounding (without `dynamic`). */
enum {
	RPT_ROUND_NEAREST = 0,
	RPT_ROUND_ZERO = 1,
	RPT_ROUND_UP = 2,
	RPT_ROUND_DOWN = 3
};

/* Why a primitive (or a service built on one) failed. */
enum {
	RPT_HOST_ERROR_OTHER = 1,
	RPT_HOST_ERROR_NOT_FOUND = 2,    /* no such file, or a component on the way is no directory (a link included) */
	RPT_HOST_ERROR_ACCESS = 3,       /* permission denied, read-only, or the last component is a symbolic link */
	RPT_HOST_ERROR_EXISTS = 4,       /* the file exists (exclusive create), or a directory is not empty */
	RPT_HOST_ERROR_IS_DIRECTORY = 5,
	RPT_HOST_ERROR_TOO_MANY = 6,     /* out of file descriptors */
	RPT_HOST_ERROR_INVALID = 7       /* an argument or path no file can have */
};

/* ---------------------------------------------------------------- memory, process, floating point */

/* Reserves `size` bytes of zeroed, lazily committed, readable and writable memory; NULL on failure. */
uint8_t *rpt_host_reserve(uint64_t size);

/* Reserves `size` bytes as rpt_host_reserve does and maps the same memory twice more around them: the
 * last `below` bytes again just below the returned address and the first `above` bytes again just
 * above its end, so a write through one view is seen through the others. All three are multiples
 * of the largest page size (64 KiB). NULL on failure, with nothing left mapped. */
uint8_t *rpt_host_reserve_mirrored(uint64_t size, uint64_t below, uint64_t above);

/* Ends the process with `status`. */
_Noreturn void rpt_host_exit(int status);

/* The floating-point rounding mode of this thread, as RPT_ROUND_*. */
int rpt_host_get_rounding(void);

/* Sets the floating-point rounding mode of this thread to an RPT_ROUND_* mode. */
void rpt_host_set_rounding(int mode);

/* ---------------------------------------------------------------- file descriptors */

/* One write(2) of at most `len` bytes to `fd`: the count written, or a negative error. */
int64_t rpt_host_write(int fd, const void *buf, size_t len);

/* One read(2) of at most `len` bytes from `fd`: the count read (0 at end of file), or a negative error. */
int64_t rpt_host_read(int fd, void *buf, size_t len);

/* 1 if `fd` is a terminal, else 0 (ioctl TCGETS). */
int rpt_host_is_terminal(int fd);

/* Flags of rpt_host_openat (and of the runtime's rpt_open, which takes the first six). */
enum {
	RPT_OPEN_READ = 1,
	RPT_OPEN_WRITE = 2,
	RPT_OPEN_CREATE = 4,     /* create the file if missing (mode 0666 less the umask) */
	RPT_OPEN_TRUNCATE = 8,   /* empty it */
	RPT_OPEN_APPEND = 16,    /* every write goes to the end */
	RPT_OPEN_EXCLUSIVE = 32, /* with CREATE: fail if it exists */
	RPT_OPEN_DIRECTORY = 64, /* fail unless it is a directory */
	RPT_OPEN_NOFOLLOW = 128  /* fail (RPT_HOST_ERROR_ACCESS) if the last component is a symbolic link */
};

/* openat(2) relative to `dir`, RPT_HOST_CWD for the current directory; the descriptor is not
 * inherited by child processes. Returns a descriptor or a negative error. */
enum { RPT_HOST_CWD = -100 };
int rpt_host_openat(int dir, const char *name, unsigned flags);

/* What `fd` refers to (fstat / statx): one of these, or a negative error. */
enum { RPT_HOST_FILE_REGULAR = 0, RPT_HOST_FILE_DIRECTORY = 1, RPT_HOST_FILE_OTHER = 2 };
int rpt_host_file_kind(int fd);

/* close(2): 0 or a negative error. */
int rpt_host_close(int fd);

/* lseek(2), `whence` one of these: the new position or a negative error. */
enum { RPT_SEEK_SET = 0, RPT_SEEK_CUR = 1, RPT_SEEK_END = 2 };
int64_t rpt_host_seek(int fd, int64_t offset, int whence);

/* unlinkat(2) of a file (never a directory; a symbolic link itself, never its target): 0 or a negative error. */
int rpt_host_unlinkat(int dir, const char *name);

/* renameat(2): 0 or a negative error. */
int rpt_host_renameat(int from_dir, const char *from, int to_dir, const char *to);

/* ---------------------------------------------------------------- time and environment */

/* CLOCK_MONOTONIC in nanoseconds: never goes back. */
uint64_t rpt_host_monotonic_ns(void);

/* CLOCK_REALTIME in nanoseconds since 1970-01-01 UTC. */
int64_t rpt_host_realtime_ns(void);

/* Sleeps at least `ns` nanoseconds (resuming after interruptions). */
void rpt_host_sleep_ns(uint64_t ns);

/* The process environment's i-th `NAME=value` string, NULL past the end. */
const char *rpt_host_env(size_t i);

/* ---------------------------------------------------------------- non-local jumps
 *
 * setjmp/longjmp in a shape a host can implement without exposing its jmp_buf: the jump buffer
 * lives in rpt_host_call_jumpable's own frame, and `host` points at it while `body` runs.
 */
struct rpt_host_jump_target {
	void *host;
};

/* Calls body(ctx) with `target` set up; returns 0 when body returns, or 1 when rpt_host_jump(target)
 * was called from inside body (at any depth), abandoning every host frame above this call. */
int rpt_host_call_jumpable(struct rpt_host_jump_target *target, void (*body)(void *ctx), void *ctx);

/* Returns from the live rpt_host_call_jumpable that set up `target`, with 1. */
_Noreturn void rpt_host_jump(struct rpt_host_jump_target *target);

#endif /* RPT_HOST_H */
