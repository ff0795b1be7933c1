/*
 * syscalls.c - the host primitives of rpt_host.h on LoongArch64 Linux, with raw system calls.
 *
 * LoongArch64 uses the generic Linux system call table (asm-generic/unistd.h): the number goes in
 * $a7, up to six arguments in $a0-$a5, `syscall 0` traps, and the result (or -errno) comes back in
 * $a0. The kernel may clobber the temporaries $t0-$t8, so the asm says so.
 */
#include "rpt_host.h"

#define RPT_LA64_SYS_READ 63
#define RPT_LA64_SYS_WRITE 64
#define RPT_LA64_SYS_EXIT_GROUP 94
#define RPT_LA64_SYS_MMAP 222

/* mmap's constants in the generic Linux ABI. */
#define RPT_LA64_PROT_READ 0x1
#define RPT_LA64_PROT_WRITE 0x2
#define RPT_LA64_MAP_PRIVATE 0x02
#define RPT_LA64_MAP_ANONYMOUS 0x20
#define RPT_LA64_MAP_NORESERVE 0x4000

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

uint8_t *rpt_host_reserve(uint64_t size)
{
	long p = rpt_la64_syscall6(RPT_LA64_SYS_MMAP, 0, (long)size, RPT_LA64_PROT_READ | RPT_LA64_PROT_WRITE,
				   RPT_LA64_MAP_PRIVATE | RPT_LA64_MAP_ANONYMOUS | RPT_LA64_MAP_NORESERVE, -1, 0);
	/* The kernel returns -errno, i.e. a value in the last page of the address space, on failure. */
	if ((unsigned long)p >= (unsigned long)-4096)
		return NULL;
	return (uint8_t *)p;
}

int64_t rpt_host_write(int fd, const void *buf, size_t len)
{
	return rpt_la64_syscall3(RPT_LA64_SYS_WRITE, fd, (long)buf, (long)len);
}

int64_t rpt_host_read(int fd, void *buf, size_t len)
{
	return rpt_la64_syscall3(RPT_LA64_SYS_READ, fd, (long)buf, (long)len);
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
