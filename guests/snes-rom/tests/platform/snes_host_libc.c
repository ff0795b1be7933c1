/*
 * snes_host_libc.c - the host services of platform/snes_host.h given with the C library and POSIX
 * files, for the platform's native tests: paths are used as they come, relative to the current
 * directory. (A recompiled program gets them from rpt's runtime instead: runtime/snes_host_rpt.c.)
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "snes_host.h"

const char *snes_host_env(const char *name)
{
	return getenv(name);
}

int snes_host_open(const char *path, int write)
{
	int fd;
	do
		fd = write ? open(path, O_WRONLY | O_CREAT | O_TRUNC, 0666) : open(path, O_RDONLY);
	while (fd < 0 && errno == EINTR);
	return fd;
}

long snes_host_read(int fd, void *buf, unsigned long len)
{
	ssize_t n;
	do
		n = read(fd, buf, len);
	while (n < 0 && errno == EINTR);
	return (long)n;
}

int snes_host_write(int fd, const void *buf, unsigned long len)
{
	const char *p = buf;
	while (len) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (unsigned long)n;
	}
	return 0;
}

int snes_host_close(int fd)
{
	return close(fd) == 0 ? 0 : -1;
}

void snes_host_error(const char *text)
{
	fputs(text, stderr);
	fflush(stderr);
}

/* exit, not _exit: the platform has nothing buffered, but the driver's own stdout may have. */
_Noreturn void snes_host_exit(int status)
{
	exit(status);
}
