/*
 * rpt_host_libc.c - the host primitives of rpt_host.h on a C library (glibc on x86-64 and AArch64).
 *
 * Hosts without a C library leave this file out and supply the same functions in their shim.
 */
/* mmap's MAP_ANONYMOUS and MAP_NORESERVE, openat and its friends are not ISO C, memfd_create is
 * a GNU extension; ask for them before any header. */
#define _DEFAULT_SOURCE 1
#define _ATFILE_SOURCE 1
#define _GNU_SOURCE 1

#include "rpt_host.h"

#include <errno.h>
#include <fcntl.h>
#include <fenv.h>
#include <setjmp.h>
#include <stdio.h> /* renameat */
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* The negative RPT_HOST_ERROR_* code for errno value `err`. */
static int rpt_host_error_of(int err)
{
	switch (err) {
	case ENOENT:
	case ENOTDIR:
		return -RPT_HOST_ERROR_NOT_FOUND;
	case EACCES:
	case EPERM:
	case ELOOP:
	case EROFS:
		return -RPT_HOST_ERROR_ACCESS;
	case EEXIST:
	case ENOTEMPTY:
		return -RPT_HOST_ERROR_EXISTS;
	case EISDIR:
		return -RPT_HOST_ERROR_IS_DIRECTORY;
	case EMFILE:
	case ENFILE:
		return -RPT_HOST_ERROR_TOO_MANY;
	case EINVAL:
	case ENAMETOOLONG:
		return -RPT_HOST_ERROR_INVALID;
	default:
		return -RPT_HOST_ERROR_OTHER;
	}
}

uint8_t *rpt_host_reserve(uint64_t size)
{
	void *p = mmap(NULL, (size_t)size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	return p == MAP_FAILED ? NULL : (uint8_t *)p;
}

/* One view of `fd` from `offset` at `at`, replacing what the reservation had there. */
static int rpt_host_map_view(uint8_t *at, uint64_t len, int fd, uint64_t offset)
{
	void *p = mmap(at, (size_t)len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, (off_t)offset);
	return p == MAP_FAILED ? -1 : 0;
}

/* A memory file (lazily committed like anonymous memory: memfd_create does not account its size
 * up front) holds the memory; a PROT_NONE reservation of the whole range keeps other mappings out
 * while the three views are placed in it. */
uint8_t *rpt_host_reserve_mirrored(uint64_t size, uint64_t below, uint64_t above)
{
	int fd = memfd_create("rpt-guest-memory", MFD_CLOEXEC);
	if (fd < 0)
		return NULL;
	uint64_t total = below + size + above;
	void *area = MAP_FAILED;
	if (ftruncate(fd, (off_t)size) == 0)
		area = mmap(NULL, (size_t)total, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	uint8_t *base = area == MAP_FAILED ? NULL : (uint8_t *)area + below;
	if (base && (rpt_host_map_view(base - below, below, fd, size - below) != 0 ||
		     rpt_host_map_view(base, size, fd, 0) != 0 || rpt_host_map_view(base + size, above, fd, 0) != 0)) {
		munmap(area, (size_t)total);
		base = NULL;
	}
	close(fd);
	return base;
}

/* exit() rather than _exit(): it flushes stdio buffers a platform's C part may have filled. */
_Noreturn void rpt_host_exit(int status)
{
	exit(status);
}

int rpt_host_get_rounding(void)
{
	switch (fegetround()) {
	case FE_TOWARDZERO:
		return RPT_ROUND_ZERO;
	case FE_UPWARD:
		return RPT_ROUND_UP;
	case FE_DOWNWARD:
		return RPT_ROUND_DOWN;
	default:
		return RPT_ROUND_NEAREST;
	}
}

void rpt_host_set_rounding(int mode)
{
	switch (mode) {
	case RPT_ROUND_ZERO:
		fesetround(FE_TOWARDZERO);
		break;
	case RPT_ROUND_UP:
		fesetround(FE_UPWARD);
		break;
	case RPT_ROUND_DOWN:
		fesetround(FE_DOWNWARD);
		break;
	default:
		fesetround(FE_TONEAREST);
		break;
	}
}

/* Returns what a system call gives, retried while a signal interrupts it; a failure becomes a
 * RPT_HOST_E* error. */
#define RPT_RETRIED(call)                                        \
	for (;;) {                                               \
		int64_t result = (int64_t)(call);                \
		if (result >= 0)                                 \
			return result;                           \
		if (errno != EINTR)                              \
			return rpt_host_error_of(errno);         \
	}

int64_t rpt_host_write(int fd, const void *buf, size_t len)
{
	RPT_RETRIED(write(fd, buf, len));
}

int64_t rpt_host_read(int fd, void *buf, size_t len)
{
	RPT_RETRIED(read(fd, buf, len));
}

int rpt_host_is_terminal(int fd)
{
	return isatty(fd) == 1;
}

int rpt_host_openat(int dir, const char *name, unsigned flags)
{
	int how = (flags & RPT_OPEN_READ) && (flags & RPT_OPEN_WRITE) ? O_RDWR
		  : (flags & RPT_OPEN_WRITE)                          ? O_WRONLY
								      : O_RDONLY;
	if (flags & RPT_OPEN_CREATE)
		how |= O_CREAT;
	if (flags & RPT_OPEN_TRUNCATE)
		how |= O_TRUNC;
	if (flags & RPT_OPEN_APPEND)
		how |= O_APPEND;
	if (flags & RPT_OPEN_EXCLUSIVE)
		how |= O_EXCL;
	if (flags & RPT_OPEN_DIRECTORY)
		how |= O_DIRECTORY;
	if (flags & RPT_OPEN_NOFOLLOW)
		how |= O_NOFOLLOW;
	RPT_RETRIED(openat(dir == RPT_HOST_CWD ? AT_FDCWD : dir, name, how | O_CLOEXEC, 0666));
}

int rpt_host_file_kind(int fd)
{
	struct stat st;
	if (fstat(fd, &st) != 0)
		return rpt_host_error_of(errno);
	return S_ISREG(st.st_mode) ? RPT_HOST_FILE_REGULAR : S_ISDIR(st.st_mode) ? RPT_HOST_FILE_DIRECTORY : RPT_HOST_FILE_OTHER;
}

/* close is not retried on EINTR: on Linux the descriptor is gone either way. */
int rpt_host_close(int fd)
{
	return close(fd) == 0 ? 0 : rpt_host_error_of(errno);
}

int64_t rpt_host_seek(int fd, int64_t offset, int whence)
{
	int how = whence == RPT_SEEK_CUR ? SEEK_CUR : whence == RPT_SEEK_END ? SEEK_END : SEEK_SET;
	off_t at = lseek(fd, (off_t)offset, how);
	return at < 0 ? rpt_host_error_of(errno) : (int64_t)at;
}

int rpt_host_unlinkat(int dir, const char *name)
{
	return unlinkat(dir == RPT_HOST_CWD ? AT_FDCWD : dir, name, 0) == 0 ? 0 : rpt_host_error_of(errno);
}

int rpt_host_renameat(int from_dir, const char *from, int to_dir, const char *to)
{
	int r = renameat(from_dir == RPT_HOST_CWD ? AT_FDCWD : from_dir, from, to_dir == RPT_HOST_CWD ? AT_FDCWD : to_dir, to);
	return r == 0 ? 0 : rpt_host_error_of(errno);
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
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
	}
}

extern char **environ;

const char *rpt_host_env(size_t i)
{
	if (!environ)
		return NULL;
	for (size_t k = 0; k < i; k++)
		if (!environ[k])
			return NULL;
	return environ[i];
}

int rpt_host_call_jumpable(struct rpt_host_jump_target *target, void (*body)(void *ctx), void *ctx)
{
	jmp_buf here;
	target->host = &here;
	if (setjmp(here))
		return 1;
	body(ctx);
	return 0;
}

_Noreturn void rpt_host_jump(struct rpt_host_jump_target *target)
{
	jmp_buf *there = target->host;
	longjmp(*there, 1);
}
