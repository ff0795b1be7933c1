/*
 * rpt_host.h - the host primitives: the only way the runtime reaches the operating system
 * (see docs/c-abi.md, "Host primitives").
 *
 * A host with a C library gets them from runtime/rpt_host_libc.c. A freestanding host (LoongArch64 here,
 * which has no C library) supplies them, with its start-up code, in its shim (hosts/<name>/shim/). This
 * header needs nothing but the compiler's own <stddef.h> and <stdint.h>, so a shim can include it
 * without a generated cpu.h.
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

/* Reserves `size` bytes of zeroed, lazily committed, readable and writable memory; NULL on failure. */
uint8_t *rpt_host_reserve(uint64_t size);

/* One write(2) of at most `len` bytes to `fd`: the count written, or a negative number on error. */
int64_t rpt_host_write(int fd, const void *buf, size_t len);

/* One read(2) of at most `len` bytes from `fd`: the count read (0 at end of file), or a negative number on error. */
int64_t rpt_host_read(int fd, void *buf, size_t len);

/* Ends the process with `status`. */
_Noreturn void rpt_host_exit(int status);

/* The floating-point rounding mode of this thread, as RPT_ROUND_*. */
int rpt_host_get_rounding(void);

/* Sets the floating-point rounding mode of this thread to an RPT_ROUND_* mode. */
void rpt_host_set_rounding(int mode);

#endif /* RPT_HOST_H */
