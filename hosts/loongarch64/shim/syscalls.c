/*
 * syscalls.c - the host primitives of rpt_host.h on LoongArch64 Linux, with raw system calls.
 *
 * LoongArch64 uses the generic Linux system call table (asm-generic/unistd.h): the number goes in
 * $a7, up to six arguments in $a0-$a5, `syscall 0` traps, and the result (or -errno) comes back in
 * $a0. The kernel may clobber the temporaries $t0-$t8, so the asm says so. Its constants (open
 * flags, errno values, ioctl numbers) are the generic ones too.
 *
 * LoongArch has neither fstat nor renameat (only their newer forms, statx and renameat2), so those
 * primitives use the newer calls; qemu-loongarch64 and every LoongArch kernel have them.
 * The environment (rpt_host_env) and the non-local jumps live in start.c and jump.c.
 */
#include "rpt_host.h"

#define RPT_LA64_SYS_IOCTL 29
#define RPT_LA64_SYS_UNLINKAT 35
#define RPT_LA64_SYS_FTRUNCATE 46
#define RPT_LA64_SYS_OPENAT 56
#define RPT_LA64_SYS_CLOSE 57
#define RPT_LA64_SYS_LSEEK 62
#define RPT_LA64_SYS_READ 63
#define RPT_LA64_SYS_WRITE 64
#define RPT_LA64_SYS_EXIT_GROUP 94
#define RPT_LA64_SYS_NANOSLEEP 101
#define RPT_LA64_SYS_CLOCK_GETTIME 113
#define RPT_LA64_SYS_MUNMAP 215
#define RPT_LA64_SYS_MMAP 222
#define RPT_LA64_SYS_RENAMEAT2 276
#define RPT_LA64_SYS_MEMFD_CREATE 279
#define RPT_LA64_SYS_STATX 291

/* mmap's constants in the generic Linux ABI. */
#define RPT_LA64_PROT_READ 0x1
#define RPT_LA64_PROT_WRITE 0x2
#define RPT_LA64_PROT_NONE 0x0
#define RPT_LA64_MAP_SHARED 0x01
#define RPT_LA64_MAP_PRIVATE 0x02
#define RPT_LA64_MAP_FIXED 0x10
#define RPT_LA64_MAP_ANONYMOUS 0x20
#define RPT_LA64_MAP_NORESERVE 0x4000

/* openat's flags (asm-generic/fcntl.h; AArch64 differs, LoongArch does not). */
#define RPT_LA64_O_WRONLY 01
#define RPT_LA64_O_RDWR 02
#define RPT_LA64_O_CREAT 0100
#define RPT_LA64_O_EXCL 0200
#define RPT_LA64_O_TRUNC 01000
#define RPT_LA64_O_APPEND 02000
#define RPT_LA64_O_DIRECTORY 0200000
#define RPT_LA64_O_NOFOLLOW 0400000
#define RPT_LA64_O_CLOEXEC 02000000

/* statx: look at the descriptor itself, and ask only for the file type. */
#define RPT_LA64_AT_EMPTY_PATH 0x1000
#define RPT_LA64_STATX_TYPE 0x1
#define RPT_LA64_STATX_SIZE 256
#define RPT_LA64_STATX_MODE_OFFSET 28
#define RPT_LA64_S_IFMT 0170000
#define RPT_LA64_S_IFREG 0100000
#define RPT_LA64_S_IFDIR 0040000

#define RPT_LA64_TCGETS 0x5401
#define RPT_LA64_CLOCK_REALTIME 0
#define RPT_LA64_CLOCK_MONOTONIC 1

/* errno values (asm-generic/errno-base.h, errno.h). */
#define RPT_LA64_EPERM 1
#define RPT_LA64_ENOENT 2
#define RPT_LA64_EINTR 4
#define RPT_LA64_EACCES 13
#define RPT_LA64_EEXIST 17
#define RPT_LA64_ENOTDIR 20
#define RPT_LA64_EISDIR 21
#define RPT_LA64_EINVAL 22
#define RPT_LA64_ENFILE 23
#define RPT_LA64_EMFILE 24
#define RPT_LA64_EROFS 30
#define RPT_LA64_ENAMETOOLONG 36
#define RPT_LA64_ENOTEMPTY 39
#define RPT_LA64_ELOOP 40

#define RPT_LA64_SYSCALL_CLOBBERS "$t0", "$t1", "$t2", "$t3", "$t4", "$t5", "$t6", "$t7", "$t8", "memory"

static long rpt_la64_syscall3(long number, long a, long b, long c)
{
	register long a0 __asm__("$a0") = a;
	register long a1 __asm__("$a1") = b;
	register long a2 __asm__("$a2") = c;
	register long a7 __asm__("$a7") = number;
	__asm__ volatile("syscall 0" : "+r"(a0) : "r"(a1), "r"(a2), "r"(a7) : RPT_LA64_SYSCALL_CLOBBERS);
	return a0;
}

static long rpt_la64_syscall6(long number, long a, long b, long c, long d, long e, long f)
{
	register long a0 __asm__("$a0") = a;
	register long a1 __asm__("$a1") = b;
	register long a2 __asm__("$a2") = c;
	register long a3 __asm__("$a3") = d;
	register long a4 __asm__("$a4") = e;
	register long a5 __asm__("$a5") = f;
	register long a7 __asm__("$a7") = number;
	__asm__ volatile("syscall 0"
			 : "+r"(a0)
			 : "r"(a1), "r"(a2), "r"(a3), "r"(a4), "r"(a5), "r"(a7)
			 : RPT_LA64_SYSCALL_CLOBBERS);
	return a0;
}

/* The kernel returns -errno, a value in the last page of the address space, on failure. */
static int rpt_la64_failed(long result)
{
	return (unsigned long)result >= (unsigned long)-4095;
}

/* The negative RPT_HOST_ERROR_* code for the kernel's failure result -errno. */
static int rpt_la64_error(long result)
{
	switch (-result) {
	case RPT_LA64_ENOENT:
	case RPT_LA64_ENOTDIR:
		return -RPT_HOST_ERROR_NOT_FOUND;
	case RPT_LA64_EACCES:
	case RPT_LA64_EPERM:
	case RPT_LA64_ELOOP:
	case RPT_LA64_EROFS:
		return -RPT_HOST_ERROR_ACCESS;
	case RPT_LA64_EEXIST:
	case RPT_LA64_ENOTEMPTY:
		return -RPT_HOST_ERROR_EXISTS;
	case RPT_LA64_EISDIR:
		return -RPT_HOST_ERROR_IS_DIRECTORY;
	case RPT_LA64_EMFILE:
	case RPT_LA64_ENFILE:
		return -RPT_HOST_ERROR_TOO_MANY;
	case RPT_LA64_EINVAL:
	case RPT_LA64_ENAMETOOLONG:
		return -RPT_HOST_ERROR_INVALID;
	default:
		return -RPT_HOST_ERROR_OTHER;
	}
}

/* A system call's result as a primitive returns it: itself, or a negative RPT_HOST_ERROR_*.
 * (Calls that may fail with EINTR before doing anything are made again by their primitive.) */
static long rpt_la64_result(long result)
{
	return rpt_la64_failed(result) ? rpt_la64_error(result) : result;
}

uint8_t *rpt_host_reserve(uint64_t size)
{
	long p = rpt_la64_syscall6(RPT_LA64_SYS_MMAP, 0, (long)size, RPT_LA64_PROT_READ | RPT_LA64_PROT_WRITE,
				   RPT_LA64_MAP_PRIVATE | RPT_LA64_MAP_ANONYMOUS | RPT_LA64_MAP_NORESERVE, -1, 0);
	return rpt_la64_failed(p) ? NULL : (uint8_t *)p;
}

/* memfd_create's close-on-exec flag. */
#define RPT_LA64_MFD_CLOEXEC 1

/* One view of `fd` from `offset` at `at`, replacing what the reservation had there. */
static int rpt_la64_map_view(uint8_t *at, uint64_t len, long fd, uint64_t offset)
{
	long p = rpt_la64_syscall6(RPT_LA64_SYS_MMAP, (long)at, (long)len, RPT_LA64_PROT_READ | RPT_LA64_PROT_WRITE,
				   RPT_LA64_MAP_SHARED | RPT_LA64_MAP_FIXED, fd, (long)offset);
	return rpt_la64_failed(p) ? -1 : 0;
}

/* As runtime/rpt_host_libc.c does it: a memory file, a PROT_NONE reservation, three views. */
uint8_t *rpt_host_reserve_mirrored(uint64_t size, uint64_t below, uint64_t above)
{
	long fd = rpt_la64_syscall3(RPT_LA64_SYS_MEMFD_CREATE, (long)"rpt-guest-memory", RPT_LA64_MFD_CLOEXEC, 0);
	if (rpt_la64_failed(fd))
		return NULL;
	uint64_t total = below + size + above;
	long area = -1;
	if (!rpt_la64_failed(rpt_la64_syscall3(RPT_LA64_SYS_FTRUNCATE, fd, (long)size, 0)))
		area = rpt_la64_syscall6(RPT_LA64_SYS_MMAP, 0, (long)total, RPT_LA64_PROT_NONE,
					 RPT_LA64_MAP_PRIVATE | RPT_LA64_MAP_ANONYMOUS | RPT_LA64_MAP_NORESERVE, -1, 0);
	uint8_t *base = rpt_la64_failed(area) ? NULL : (uint8_t *)area + below;
	if (base && (rpt_la64_map_view(base - below, below, fd, size - below) != 0 ||
		     rpt_la64_map_view(base, size, fd, 0) != 0 || rpt_la64_map_view(base + size, above, fd, 0) != 0)) {
		rpt_la64_syscall3(RPT_LA64_SYS_MUNMAP, area, (long)total, 0);
		base = NULL;
	}
	rpt_la64_syscall3(RPT_LA64_SYS_CLOSE, fd, 0, 0);
	return base;
}

/* exit_group rather than exit: the whole process ends, as the C library's exit() would end it.
 * There are no stdio buffers to flush: without a C library everything is written directly. */
_Noreturn void rpt_host_exit(int status)
{
	for (;;)
		rpt_la64_syscall3(RPT_LA64_SYS_EXIT_GROUP, status, 0, 0);
}

/* The rounding mode is the RM field, bits 8-9, of the floating-point control and status register
 * FCSR0: 0 nearest-even, 1 towards zero, 2 towards +infinity, 3 towards -infinity, which is the order
 * of RPT_ROUND_*. */
#define RPT_LA64_FCSR_RM_SHIFT 8
#define RPT_LA64_FCSR_RM_MASK (3u << RPT_LA64_FCSR_RM_SHIFT)

int rpt_host_get_rounding(void)
{
	unsigned fcsr;
	__asm__ volatile("movfcsr2gr %0, $fcsr0" : "=r"(fcsr));
	return (int)((fcsr & RPT_LA64_FCSR_RM_MASK) >> RPT_LA64_FCSR_RM_SHIFT);
}

void rpt_host_set_rounding(int mode)
{
	unsigned fcsr;
	__asm__ volatile("movfcsr2gr %0, $fcsr0" : "=r"(fcsr));
	fcsr = (fcsr & ~RPT_LA64_FCSR_RM_MASK) | (((unsigned)mode << RPT_LA64_FCSR_RM_SHIFT) & RPT_LA64_FCSR_RM_MASK);
	__asm__ volatile("movgr2fcsr $fcsr0, %0" : : "r"(fcsr) : "memory");
}

int64_t rpt_host_write(int fd, const void *buf, size_t len)
{
	long r;
	do
		r = rpt_la64_syscall3(RPT_LA64_SYS_WRITE, fd, (long)buf, (long)len);
	while (r == -RPT_LA64_EINTR);
	return rpt_la64_result(r);
}

int64_t rpt_host_read(int fd, void *buf, size_t len)
{
	long r;
	do
		r = rpt_la64_syscall3(RPT_LA64_SYS_READ, fd, (long)buf, (long)len);
	while (r == -RPT_LA64_EINTR);
	return rpt_la64_result(r);
}

int rpt_host_is_terminal(int fd)
{
	/* struct termios is 36 bytes in the generic ABI; the kernel fills it if fd is a terminal. */
	uint8_t termios[64];
	return rpt_la64_syscall3(RPT_LA64_SYS_IOCTL, fd, RPT_LA64_TCGETS, (long)termios) == 0;
}

int rpt_host_openat(int dir, const char *name, unsigned flags)
{
	long how = (flags & RPT_OPEN_READ) && (flags & RPT_OPEN_WRITE) ? RPT_LA64_O_RDWR
		   : (flags & RPT_OPEN_WRITE)                          ? RPT_LA64_O_WRONLY
								       : 0;
	if (flags & RPT_OPEN_CREATE)
		how |= RPT_LA64_O_CREAT;
	if (flags & RPT_OPEN_TRUNCATE)
		how |= RPT_LA64_O_TRUNC;
	if (flags & RPT_OPEN_APPEND)
		how |= RPT_LA64_O_APPEND;
	if (flags & RPT_OPEN_EXCLUSIVE)
		how |= RPT_LA64_O_EXCL;
	if (flags & RPT_OPEN_DIRECTORY)
		how |= RPT_LA64_O_DIRECTORY;
	if (flags & RPT_OPEN_NOFOLLOW)
		how |= RPT_LA64_O_NOFOLLOW;
	/* RPT_HOST_CWD is the kernel's AT_FDCWD (-100). */
	long r;
	do
		r = rpt_la64_syscall6(RPT_LA64_SYS_OPENAT, dir, (long)name, how | RPT_LA64_O_CLOEXEC, 0666, 0, 0);
	while (r == -RPT_LA64_EINTR);
	return (int)rpt_la64_result(r);
}

int rpt_host_file_kind(int fd)
{
	uint64_t statx[RPT_LA64_STATX_SIZE / 8];
	long r = rpt_la64_syscall6(RPT_LA64_SYS_STATX, fd, (long)"", RPT_LA64_AT_EMPTY_PATH, RPT_LA64_STATX_TYPE,
				   (long)statx, 0);
	if (rpt_la64_failed(r))
		return rpt_la64_error(r);
	uint16_t mode;
	__builtin_memcpy(&mode, (const uint8_t *)statx + RPT_LA64_STATX_MODE_OFFSET, sizeof mode);
	switch (mode & RPT_LA64_S_IFMT) {
	case RPT_LA64_S_IFREG:
		return RPT_HOST_FILE_REGULAR;
	case RPT_LA64_S_IFDIR:
		return RPT_HOST_FILE_DIRECTORY;
	default:
		return RPT_HOST_FILE_OTHER;
	}
}

/* close is not restarted: on Linux the descriptor is gone even when it reports EINTR. */
int rpt_host_close(int fd)
{
	return (int)rpt_la64_result(rpt_la64_syscall3(RPT_LA64_SYS_CLOSE, fd, 0, 0));
}

int64_t rpt_host_seek(int fd, int64_t offset, int whence)
{
	/* RPT_SEEK_SET, _CUR and _END are the kernel's SEEK_SET, SEEK_CUR and SEEK_END (0, 1, 2). */
	return rpt_la64_result(rpt_la64_syscall3(RPT_LA64_SYS_LSEEK, fd, (long)offset, whence));
}

int rpt_host_unlinkat(int dir, const char *name)
{
	return (int)rpt_la64_result(rpt_la64_syscall3(RPT_LA64_SYS_UNLINKAT, dir, (long)name, 0));
}

int rpt_host_renameat(int from_dir, const char *from, int to_dir, const char *to)
{
	return (int)rpt_la64_result(
		rpt_la64_syscall6(RPT_LA64_SYS_RENAMEAT2, from_dir, (long)from, to_dir, (long)to, 0, 0));
}

struct rpt_la64_timespec {
	long sec;
	long nsec;
};

static struct rpt_la64_timespec rpt_la64_clock(long clock)
{
	struct rpt_la64_timespec ts = { 0, 0 };
	rpt_la64_syscall3(RPT_LA64_SYS_CLOCK_GETTIME, clock, (long)&ts, 0);
	return ts;
}

uint64_t rpt_host_monotonic_ns(void)
{
	struct rpt_la64_timespec ts = rpt_la64_clock(RPT_LA64_CLOCK_MONOTONIC);
	return (uint64_t)ts.sec * 1000000000u + (uint64_t)ts.nsec;
}

int64_t rpt_host_realtime_ns(void)
{
	struct rpt_la64_timespec ts = rpt_la64_clock(RPT_LA64_CLOCK_REALTIME);
	return (int64_t)ts.sec * 1000000000 + ts.nsec;
}

void rpt_host_sleep_ns(uint64_t ns)
{
	struct rpt_la64_timespec ts = { (long)(ns / 1000000000u), (long)(ns % 1000000000u) };
	/* An interrupted nanosleep leaves the time still to sleep in its second argument. */
	while (rpt_la64_syscall3(RPT_LA64_SYS_NANOSLEEP, (long)&ts, (long)&ts, 0) == -RPT_LA64_EINTR) {
	}
}
