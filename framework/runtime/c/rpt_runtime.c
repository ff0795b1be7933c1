/*
 * rpt_runtime.c - start-up, guest memory, dispatch, exits and rounding helpers (see docs/c-abi.md).
 *
 * The file has two parts. The host part at the top is the only code that uses libc (mmap,
 * write, exit, fenv, the host services of docs/c-abi.md, setjmp); a freestanding host
 * (LoongArch) replaces just those few functions.
 * The portable part below it uses nothing but the host part and compiler builtins.
 */
/* mmap's MAP_ANONYMOUS and MAP_NORESERVE, openat and friends are not ISO C; ask for them
 * before any header. */
#define _DEFAULT_SOURCE 1
#define _ATFILE_SOURCE 1

#include "cpu.h"

/* ---------------------------------------------------------------- host part (libc) */

#include <fcntl.h>
#include <fenv.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Reserves `size` bytes of zeroed, lazily committed memory; NULL on failure. */
static uint8_t *rpt_host_reserve(uint64_t size)
{
	void *p = mmap(NULL, (size_t)size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	return p == MAP_FAILED ? NULL : (uint8_t *)p;
}

/* errno without <errno.h>, which needs the target's <asm/errno.h> (Debian has none for LoongArch):
 * glibc's errno is this function on every target, and Linux numbers these errors alike on x86-64,
 * AArch64 and LoongArch (asm-generic). */
extern int *__errno_location(void);
#define RPT_ERRNO (*__errno_location())
enum {
	RPT_E_PERM = 1, RPT_E_NOENT = 2, RPT_E_INTR = 4, RPT_E_ACCES = 13, RPT_E_EXIST = 17, RPT_E_NOTDIR = 20,
	RPT_E_ISDIR = 21, RPT_E_INVAL = 22, RPT_E_NFILE = 23, RPT_E_MFILE = 24, RPT_E_ROFS = 30,
	RPT_E_NAMETOOLONG = 36, RPT_E_NOTEMPTY = 39, RPT_E_LOOP = 40
};

uint64_t rpt_host_write(int fd, const void *bytes, uint64_t len)
{
	const uint8_t *p = (const uint8_t *)bytes;
	uint64_t done = 0;
	while (done < len) {
		ssize_t n = write(fd, p + done, (size_t)(len - done));
		if (n < 0 && RPT_ERRNO == RPT_E_INTR)
			continue;
		if (n <= 0)
			break;
		done += (uint64_t)n;
	}
	return done;
}

int64_t rpt_host_read(int fd, void *bytes, uint64_t len)
{
	for (;;) {
		ssize_t n = read(fd, bytes, (size_t)len);
		if (n < 0 && RPT_ERRNO == RPT_E_INTR)
			continue;
		return n;
	}
}

int rpt_host_is_terminal(int fd)
{
	return isatty(fd);
}

static int rpt_host_last_error;

int rpt_host_error(void)
{
	return rpt_host_last_error;
}

static int rpt_host_fail(int err)
{
	switch (err) {
	case RPT_E_NOENT:
	case RPT_E_NOTDIR:
		rpt_host_last_error = RPT_HOST_ERROR_NOT_FOUND;
		break;
	case RPT_E_ACCES:
	case RPT_E_PERM:
	case RPT_E_LOOP:
	case RPT_E_ROFS:
		rpt_host_last_error = RPT_HOST_ERROR_ACCESS;
		break;
	case RPT_E_EXIST:
	case RPT_E_NOTEMPTY:
		rpt_host_last_error = RPT_HOST_ERROR_EXISTS;
		break;
	case RPT_E_ISDIR:
		rpt_host_last_error = RPT_HOST_ERROR_IS_DIRECTORY;
		break;
	case RPT_E_MFILE:
	case RPT_E_NFILE:
		rpt_host_last_error = RPT_HOST_ERROR_TOO_MANY;
		break;
	case RPT_E_INVAL:
	case RPT_E_NAMETOOLONG:
		rpt_host_last_error = RPT_HOST_ERROR_INVALID;
		break;
	default:
		rpt_host_last_error = RPT_HOST_ERROR_OTHER;
		break;
	}
	return -1;
}

/* The sandbox directory, opened on first use: $RPT_SANDBOX, or the current directory. */
static int rpt_host_sandbox_fd = -1;

static int rpt_host_sandbox(void)
{
	if (rpt_host_sandbox_fd < 0) {
		const char *dir = getenv("RPT_SANDBOX");
		rpt_host_sandbox_fd = open(dir && *dir ? dir : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	}
	return rpt_host_sandbox_fd;
}

/* Longest sandbox path accepted, in bytes. */
#define RPT_HOST_PATH_MAX 1024

/* Opens the directory holding `path`'s last component beneath the sandbox, one component at a
 * time with O_NOFOLLOW, so neither `..` nor a symbolic link can lead outside. Copies the last
 * component to `last`. Returns a descriptor the caller closes, or -1. */
static int rpt_host_parent(const char *path, char last[RPT_HOST_PATH_MAX])
{
	int dir = rpt_host_sandbox();
	if (dir < 0)
		return rpt_host_fail(RPT_ERRNO);
	dir = dup(dir);
	if (dir < 0)
		return rpt_host_fail(RPT_ERRNO);
	const char *p = path;
	for (;;) {
		size_t n = 0;
		while (p[n] && p[n] != '/')
			n++;
		if (n == 0 || n >= RPT_HOST_PATH_MAX || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.')) {
			close(dir);
			rpt_host_last_error = RPT_HOST_ERROR_INVALID;
			return -1;
		}
		memcpy(last, p, n);
		last[n] = 0;
		if (!p[n])
			return dir;
		int next = openat(dir, last, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		int err = RPT_ERRNO;
		close(dir);
		if (next < 0)
			return rpt_host_fail(err);
		dir = next;
		p += n + 1;
	}
}

int rpt_host_open(const char *path, unsigned flags)
{
	char last[RPT_HOST_PATH_MAX];
	int dir = rpt_host_parent(path, last);
	if (dir < 0)
		return -1;
	int mode = (flags & RPT_OPEN_READ) && (flags & RPT_OPEN_WRITE) ? O_RDWR : (flags & RPT_OPEN_WRITE) ? O_WRONLY : O_RDONLY;
	if (flags & RPT_OPEN_CREATE)
		mode |= O_CREAT;
	if (flags & RPT_OPEN_TRUNCATE)
		mode |= O_TRUNC;
	if (flags & RPT_OPEN_APPEND)
		mode |= O_APPEND;
	if (flags & RPT_OPEN_EXCLUSIVE)
		mode |= O_EXCL;
	int fd = openat(dir, last, mode | O_NOFOLLOW | O_CLOEXEC, 0666);
	int err = RPT_ERRNO;
	close(dir);
	if (fd < 0)
		return rpt_host_fail(err);
	/* A directory opens read-only without error on Linux; the guest wants a file. */
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		rpt_host_last_error = S_ISDIR(st.st_mode) ? RPT_HOST_ERROR_IS_DIRECTORY : RPT_HOST_ERROR_ACCESS;
		return -1;
	}
	return fd;
}

int rpt_host_close(int fd)
{
	return close(fd) == 0 ? 0 : rpt_host_fail(RPT_ERRNO);
}

int64_t rpt_host_seek(int fd, int64_t offset, int whence)
{
	int how = whence == RPT_SEEK_CUR ? SEEK_CUR : whence == RPT_SEEK_END ? SEEK_END : SEEK_SET;
	off_t at = lseek(fd, (off_t)offset, how);
	return at < 0 ? rpt_host_fail(RPT_ERRNO) : (int64_t)at;
}

int rpt_host_remove(const char *path)
{
	char last[RPT_HOST_PATH_MAX];
	int dir = rpt_host_parent(path, last);
	if (dir < 0)
		return -1;
	/* unlinkat removes a symbolic link itself, never its target. */
	int r = unlinkat(dir, last, 0);
	int err = RPT_ERRNO;
	close(dir);
	return r == 0 ? 0 : rpt_host_fail(err);
}

int rpt_host_rename(const char *from, const char *to)
{
	char from_last[RPT_HOST_PATH_MAX], to_last[RPT_HOST_PATH_MAX];
	int from_dir = rpt_host_parent(from, from_last);
	if (from_dir < 0)
		return -1;
	int to_dir = rpt_host_parent(to, to_last);
	if (to_dir < 0) {
		close(from_dir);
		return -1;
	}
	int r = renameat(from_dir, from_last, to_dir, to_last);
	int err = RPT_ERRNO;
	close(from_dir);
	close(to_dir);
	return r == 0 ? 0 : rpt_host_fail(err);
}

uint64_t rpt_host_monotonic_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int64_t rpt_host_realtime_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void rpt_host_sleep_ns(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000u), (long)(ns % 1000000000u) };
	while (nanosleep(&ts, &ts) != 0 && RPT_ERRNO == RPT_E_INTR) {
	}
}

extern char **environ;

const char *rpt_host_env(size_t i)
{
	for (size_t k = 0; k < i; k++)
		if (!environ || !environ[k])
			return NULL;
	return environ ? environ[i] : NULL;
}

/* The host's non-local jump, for resume points. A freestanding host supplies its own pair. */
typedef jmp_buf rpt_host_jmp_buf;
#define rpt_host_setjmp(buf) setjmp(buf)
#define rpt_host_longjmp(buf) longjmp(buf, 1)

/* exit() rather than _exit(): it flushes stdio buffers a platform's C part may have filled. */
static _Noreturn void rpt_host_exit(int status)
{
	exit(status);
}

static int rpt_host_get_rounding(void)
{
	return fegetround();
}

static void rpt_host_set_rounding(int host_mode)
{
	fesetround(host_mode);
}

static int rpt_host_rounding_of(int mode)
{
	switch (mode) {
	case RPT_ROUND_ZERO:
		return FE_TOWARDZERO;
	case RPT_ROUND_UP:
		return FE_UPWARD;
	case RPT_ROUND_DOWN:
		return FE_DOWNWARD;
	default:
		return FE_TONEAREST;
	}
}

/* ---------------------------------------------------------------- portable part */

uint8_t *rpt_mem;

/* Room past the top of the guest's space, so a multi-byte access at the last address does not fault. */
#define RPT_GUARD_BYTES 4096u

static size_t rpt_strlen(const char *s)
{
	size_t n = 0;
	while (s[n])
		n++;
	return n;
}

void rpt_write_stderr(const char *text)
{
	rpt_host_write(2, text, rpt_strlen(text));
}

/* Appends `0x` and at least eight hex digits of `v` to `out` at `*pos` (no libc printf). */
static void rpt_append_hex(char *out, size_t cap, size_t *pos, uint64_t v)
{
	char digits[16];
	int n = 0;
	do {
		digits[n++] = "0123456789abcdef"[v & 15];
		v >>= 4;
	} while (v != 0 || n < 8);
	if (*pos + 2 + (size_t)n >= cap)
		return;
	out[(*pos)++] = '0';
	out[(*pos)++] = 'x';
	while (n > 0)
		out[(*pos)++] = digits[--n];
}

static void rpt_append(char *out, size_t cap, size_t *pos, const char *text)
{
	while (*text && *pos + 1 < cap)
		out[(*pos)++] = *text++;
}

static const char *rpt_exit_reason_name(int reason)
{
	switch (reason) {
	case RPT_EXIT_UNLIFTED:
		return "unlifted code (no lifted function at this address)";
	case RPT_EXIT_SYSCALL:
		return "system call not handled by the platform";
	case RPT_EXIT_HALT:
		return "the guest halted";
	case RPT_EXIT_YIELD:
		return "the guest yielded with no scheduler to resume it";
	case RPT_EXIT_DIVIDE_ERROR:
		return "divide error";
	case RPT_EXIT_INVALID_OPCODE:
		return "invalid opcode";
	default:
		return "unknown exit reason";
	}
}

_Noreturn void rpt_process_exit(int status)
{
	rpt_host_exit(status);
}

_Noreturn void rpt_exit(struct cpu *c, uint64_t pc, int reason)
{
	if (rpt_guest_on_exit(c, pc, reason))
		rpt_process_exit(rpt_guest_finish(c));
	char msg[160];
	size_t pos = 0;
	rpt_append(msg, sizeof msg, &pos, "rpt: guest exit at ");
	rpt_append_hex(msg, sizeof msg, &pos, pc);
	rpt_append(msg, sizeof msg, &pos, ": ");
	rpt_append(msg, sizeof msg, &pos, rpt_exit_reason_name(reason));
	rpt_append(msg, sizeof msg, &pos, "\n");
	rpt_host_write(2, msg, pos);
	rpt_process_exit(125);
}

_Noreturn void rpt_unreachable(struct cpu *c, uint64_t function)
{
	(void)c;
	char msg[160];
	size_t pos = 0;
	rpt_append(msg, sizeof msg, &pos, "rpt: reached code marked unreachable in the function at ");
	rpt_append_hex(msg, sizeof msg, &pos, function);
	rpt_append(msg, sizeof msg, &pos, "\n");
	rpt_host_write(2, msg, pos);
	rpt_process_exit(125);
}

rpt_fn rpt_lookup(uint64_t pc)
{
	size_t lo = 0, hi = rpt_function_count;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t at = rpt_function_table[mid].pc;
		if (at == pc)
			return rpt_function_table[mid].fn;
		if (at < pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

rpt_fn rpt_resolve(struct cpu *c, uint64_t pc)
{
	rpt_fn fn = rpt_lookup(pc);
	if (!fn)
		rpt_exit(c, pc, RPT_EXIT_UNLIFTED);
	return fn;
}

void rpt_dispatch(struct cpu *c, uint64_t pc)
{
	rpt_resolve(c, pc)(c);
}

static _Noreturn void rpt_fail_start(const char *what, uint64_t addr)
{
	char msg[200];
	size_t pos = 0;
	rpt_append(msg, sizeof msg, &pos, "rpt: ");
	rpt_append(msg, sizeof msg, &pos, what);
	rpt_append_hex(msg, sizeof msg, &pos, addr);
	rpt_append(msg, sizeof msg, &pos, "\n");
	rpt_host_write(2, msg, pos);
	rpt_process_exit(125);
}

/* ---------------------------------------------------------------- resume points
 *
 * The live points form a stack through their host frames: `rpt_resume_top` is the innermost.
 * A point leaves the stack when its dispatch returns, or when a resume unwinds past it.
 */
struct rpt_resume_point {
	rpt_host_jmp_buf jump;
	uint64_t serial;
	struct rpt_resume_point *outer;
};

static struct rpt_resume_point *rpt_resume_top;
static uint64_t rpt_resume_serials;

void rpt_dispatch_resumable(struct cpu *c, uint64_t pc, rpt_resume_established established, void *ctx)
{
	/* volatile: the point is read again after rpt_host_setjmp returns a second time. */
	struct rpt_resume_point point;
	struct rpt_resume_point *volatile self = &point;
	point.serial = ++rpt_resume_serials;
	point.outer = rpt_resume_top;
	established(c, point.serial, ctx);
	rpt_host_setjmp(point.jump);
	rpt_resume_top = self;
	rpt_dispatch(c, pc);
	rpt_resume_top = self->outer;
}

int rpt_resume(struct cpu *c, uint64_t serial)
{
	(void)c;
	for (struct rpt_resume_point *p = rpt_resume_top; p; p = p->outer) {
		if (p->serial == serial) {
			rpt_resume_top = p;
			rpt_host_longjmp(p->jump);
		}
	}
	return 0;
}

/* The whole guest address space is reserved up front, which a 64-bit host can do for up to 47 bits. */
#if RPT_GUEST_ADDRESS_BITS > 47
#error "rpt reserves the whole guest address space and cannot reserve more than 2^47 bytes"
#endif

/* Zero-initialised storage: the contract's "zeroed struct cpu", without putting it on the stack. */
static struct cpu rpt_cpu;

int main(int argc, char **argv)
{
	uint64_t space = (uint64_t)RPT_GUEST_ADDR_MASK + 1;
	rpt_mem = rpt_host_reserve(space + RPT_GUARD_BYTES);
	if (!rpt_mem)
		rpt_fail_start("cannot reserve guest memory; bytes wanted: ", space + RPT_GUARD_BYTES);
	for (size_t i = 0; i < rpt_segment_count; i++) {
		const struct rpt_segment *s = &rpt_segments[i];
		if (s->addr > RPT_GUEST_ADDR_MASK || s->mem_size > space - s->addr || s->size > s->mem_size)
			rpt_fail_start("an image segment lies outside the guest address space; it starts at ", s->addr);
		if (s->size > 0)
			__builtin_memcpy(rpt_mem + s->addr, s->bytes, (size_t)s->size);
	}
	rpt_guest_init(&rpt_cpu, argc, argv);
	rpt_dispatch(&rpt_cpu, rpt_entry_pc);
	rpt_process_exit(rpt_guest_finish(&rpt_cpu));
}

/* ---------------------------------------------------------------- rounding helpers
 *
 * Each operation runs between two rounding-mode switches. The compiler must neither fold
 * it nor move it across the switches: FENV_ACCESS says so where clang supports it, and on
 * every host the operands are read from and the result written to volatile objects, which
 * no compiler moves across a call. Round-to-nearest operations never get here: the emitter
 * writes them as plain C.
 */
#if defined(__x86_64__) || defined(__i386__) || defined(__aarch64__)
#pragma STDC FENV_ACCESS ON
#endif

#define RPT_ROUNDED2(type, mode, a, b, op)                         \
	do {                                                       \
		int saved_ = rpt_host_get_rounding();              \
		rpt_host_set_rounding(rpt_host_rounding_of(mode)); \
		volatile type a_ = (a), b_ = (b);                  \
		volatile type result_ = a_ op b_;                  \
		rpt_host_set_rounding(saved_);                     \
		return result_;                                    \
	} while (0)

#define RPT_ROUNDED1(type, from, mode, a, expr)                    \
	do {                                                       \
		int saved_ = rpt_host_get_rounding();              \
		rpt_host_set_rounding(rpt_host_rounding_of(mode)); \
		volatile from x_ = (a);                            \
		volatile type result_ = expr;                      \
		rpt_host_set_rounding(saved_);                     \
		return result_;                                    \
	} while (0)

float rpt_fadd_f32(float a, float b, int mode) { RPT_ROUNDED2(float, mode, a, b, +); }
float rpt_fsub_f32(float a, float b, int mode) { RPT_ROUNDED2(float, mode, a, b, -); }
float rpt_fmul_f32(float a, float b, int mode) { RPT_ROUNDED2(float, mode, a, b, *); }
float rpt_fdiv_f32(float a, float b, int mode) { RPT_ROUNDED2(float, mode, a, b, /); }
double rpt_fadd_f64(double a, double b, int mode) { RPT_ROUNDED2(double, mode, a, b, +); }
double rpt_fsub_f64(double a, double b, int mode) { RPT_ROUNDED2(double, mode, a, b, -); }
double rpt_fmul_f64(double a, double b, int mode) { RPT_ROUNDED2(double, mode, a, b, *); }
double rpt_fdiv_f64(double a, double b, int mode) { RPT_ROUNDED2(double, mode, a, b, /); }
float rpt_fsqrt_f32(float a, int mode) { RPT_ROUNDED1(float, float, mode, a, __builtin_sqrtf(x_)); }
double rpt_fsqrt_f64(double a, int mode) { RPT_ROUNDED1(double, double, mode, a, __builtin_sqrt(x_)); }
float rpt_fconvert_f64_f32(double a, int mode) { RPT_ROUNDED1(float, double, mode, a, (float)x_); }
float rpt_i64_to_f32(int64_t a, int mode) { RPT_ROUNDED1(float, int64_t, mode, a, (float)x_); }
double rpt_i64_to_f64(int64_t a, int mode) { RPT_ROUNDED1(double, int64_t, mode, a, (double)x_); }
float rpt_u64_to_f32(uint64_t a, int mode) { RPT_ROUNDED1(float, uint64_t, mode, a, (float)x_); }
double rpt_u64_to_f64(uint64_t a, int mode) { RPT_ROUNDED1(double, uint64_t, mode, a, (double)x_); }

/* Float to integer with a chosen rounding, exactly and without touching the FP environment:
 * truncate, then step by one where the discarded fraction says so. The fraction a - t is
 * exact because t is a nearby integer of no larger magnitude. Out-of-range inputs are
 * undefined in the IR; the lifter checks ranges first. */
int64_t rpt_ftosi_f64(double a, int mode)
{
	int64_t t = (int64_t)a;
	double frac = a - (double)t;
	switch (mode) {
	case RPT_ROUND_UP:
		return frac > 0 ? t + 1 : t;
	case RPT_ROUND_DOWN:
		return frac < 0 ? t - 1 : t;
	case RPT_ROUND_NEAREST:
		if (frac > 0.5 || (frac == 0.5 && (t & 1)))
			return t + 1;
		if (frac < -0.5 || (frac == -0.5 && (t & 1)))
			return t - 1;
		return t;
	default:
		return t;
	}
}
