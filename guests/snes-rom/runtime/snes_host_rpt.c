/*
 * snes_host_rpt.c - the services the SNES platform asks of its host (platform/snes_host.h), given
 * by the rpt runtime in a recompiled program: its environment, its sandboxed files (paths are
 * relative to $RPT_SANDBOX, the current directory when unset), standard error and exit. The
 * platform's own tests give the same services with the C library instead.
 */
#include "cpu.h"
#include "snes_host.h"

const char *snes_host_env(const char *name)
{
	for (size_t i = 0;; i++) {
		const char *entry = rpt_env(i);
		if (!entry)
			return 0;
		size_t k = 0;
		while (name[k] && entry[k] == name[k])
			k++;
		if (!name[k] && entry[k] == '=')
			return entry + k + 1;
	}
}

int snes_host_open(const char *path, int write)
{
	unsigned flags = write ? RPT_OPEN_WRITE | RPT_OPEN_CREATE | RPT_OPEN_TRUNCATE : RPT_OPEN_READ;
	return rpt_open(path, flags);
}

long snes_host_read(int fd, void *buf, unsigned long len)
{
	return (long)rpt_read(fd, buf, (size_t)len);
}

int snes_host_write(int fd, const void *buf, unsigned long len)
{
	return rpt_write(fd, buf, (size_t)len) == len ? 0 : -1;
}

int snes_host_close(int fd)
{
	return rpt_close(fd);
}

void snes_host_error(const char *text)
{
	rpt_write_stderr(text);
}

_Noreturn void snes_host_exit(int status)
{
	rpt_process_exit(status);
}
