/*
 * snes_host.h - the services the SNES platform asks of whatever hosts it, and nothing else: the
 * platform uses no C library, so that it links into programs that have none (rpt's freestanding
 * LoongArch64 build). Everything it does outside the console goes through these seven functions:
 * reading its RPT_SNES_* settings, reading the input script, writing frame hashes, dumps and
 * pictures, reporting a problem and ending the process.
 *
 * Two hosts give them: rpt's runtime in a recompiled program (runtime/snes_host_rpt.c: files in
 * the program's sandbox directory) and the C library for the platform's own tests
 * (tests/platform/snes_host_libc.c). The platform passes paths on exactly as the settings give
 * them; resolving them is the host's business.
 */
#ifndef RPT_SNES_HOST_H
#define RPT_SNES_HOST_H

/*
 * The value of the environment variable `name`, or NULL (0) when it is not set. The string stays
 * valid for as long as the process runs. The platform treats an empty value as unset.
 */
const char *snes_host_env(const char *name);

/*
 * Opens the file at `path`: for reading when `write` is 0; when `write` is 1, for writing, created
 * if missing and emptied if present. Returns a descriptor (0 or more) for the other calls, or -1.
 */
int snes_host_open(const char *path, int write);

/*
 * Reads up to `len` bytes from the descriptor into `buf`. Returns how many it read (fewer than
 * asked is allowed), 0 at the end of the file, or -1 on an error.
 */
long snes_host_read(int fd, void *buf, unsigned long len);

/* Writes all `len` bytes of `buf` to the descriptor. Returns 0 when all were written, else -1. */
int snes_host_write(int fd, const void *buf, unsigned long len);

/* Closes a descriptor. Returns 0, or -1 when what was written could not be stored. */
int snes_host_close(int fd);

/* Writes `text` (a whole message, newline included) to standard error at once. */
void snes_host_error(const char *text);

/*
 * Ends the process with `status`. The platform keeps nothing buffered (every file it writes is
 * written through snes_host_write before this is called), so nothing of its needs flushing.
 */
_Noreturn void snes_host_exit(int status);

#endif
