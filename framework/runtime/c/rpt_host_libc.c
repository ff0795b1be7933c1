/*
 * rpt_host_libc.c - the host primitives of rpt_host.h on a C library (glibc on x86-64 and AArch64).
 *
 * Hosts without a C library leave this file out and supply the same functions in their shim.
 */
/* mmap's MAP_ANONYMOUS and MAP_NORESERVE are not ISO C; ask for them before any header. */
#define _DEFAULT_SOURCE 1

#include "rpt_host.h"

#include <fenv.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

uint8_t *rpt_host_reserve(uint64_t size)
{
	void *p = mmap(NULL, (size_t)size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	return p == MAP_FAILED ? NULL : (uint8_t *)p;
}

int64_t rpt_host_write(int fd, const void *buf, size_t len)
{
	return write(fd, buf, len);
}

int64_t rpt_host_read(int fd, void *buf, size_t len)
{
	return read(fd, buf, len);
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
