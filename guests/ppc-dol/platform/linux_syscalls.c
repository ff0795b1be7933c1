/*
 * linux_syscalls.c - the linux-syscalls platform: enough of 32-bit PowerPC Linux for test
 * programs built as static ELFs for qemu-ppc, so the same program runs as a DOL through rpt.
 *
 * `sc` calls rpt_helper_sc with the Linux convention: r0 is the call number, r3..r8 the
 * arguments, the result goes to r3, and CR0's SO bit says whether it is an error (then r3 holds
 * the positive errno).
 *
 * Decisions (memory layout in the guest's 4 GiB space):
 * - The stack starts at 0x817fff00, the top of MEM1 (24 MiB at 0x80000000) less a little room
 *   for the argc/argv/envp/auxv block _start finds at r1, as the kernel leaves it.
 * - brk starts at the first page after the image and may grow up to 0x81000000.
 * - Anonymous mmap hands out fresh pages from 0x90000000 up (never reused; the reservation
 *   is already zero-filled). munmap only says yes. File mappings fail with ENODEV.
 * - Calls: exit (1), exit_group (234), read (3), write (4), brk (45), mmap (90), munmap (91),
 *   mmap2 (192). Anything else fails with ENOSYS, as an old kernel would.
 * - The host is reached only through the runtime's services (rpt_write, rpt_read, rpt_monotonic_ns,
 *   rpt_process_exit), never the C library, so the platform builds for every host; brk and mmap
 *   need no host call at all, since their memory is the guest's own reservation.
 */
#include "cpu.h"

/* The GameCube time base runs at 40.5 MHz (a quarter of the 162 MHz bus clock). */
uint64_t rpt_helper_timebase(struct cpu *restrict c)
{
	(void)c;
	uint64_t ns = rpt_monotonic_ns();
	return ns / 1000000000u * 40500000u + ns % 1000000000u * 81u / 2000u;
}

#define RPT_LINUX_STACK_TOP 0x817fff00u
#define RPT_LINUX_BRK_LIMIT 0x81000000u
#define RPT_LINUX_MMAP_BASE 0x90000000u
#define RPT_LINUX_MMAP_LIMIT 0xc0000000u
#define RPT_LINUX_PAGE 4096u

#define RPT_LINUX_EIO 5
#define RPT_LINUX_ENOMEM 12
#define RPT_LINUX_EBADF 9
#define RPT_LINUX_ENODEV 19
#define RPT_LINUX_EINVAL 22
#define RPT_LINUX_ENOSYS 38
#define RPT_LINUX_MAP_ANONYMOUS 0x20u

static uint32_t rpt_linux_brk_start, rpt_linux_brk;
static uint32_t rpt_linux_mmap_next = RPT_LINUX_MMAP_BASE;

void rpt_ppc_platform_init(struct cpu *c, int argc, char **argv);
void rpt_helper_sc(struct cpu *restrict c);
/* ppc_runtime.c: the address memory is reached through for an effective address. */
uint32_t rpt_ppc_cached_view(uint32_t ea);

void rpt_ppc_platform_init(struct cpu *c, int argc, char **argv)
{
	(void)argc;
	(void)argv;
	uint64_t end = 0;
	for (size_t i = 0; i < rpt_segment_count; i++) {
		uint64_t e = rpt_ppc_cached_view((uint32_t)rpt_segments[i].addr) + rpt_segments[i].mem_size;
		if (e > end && e <= RPT_LINUX_BRK_LIMIT)
			end = e;
	}
	rpt_linux_brk_start = rpt_linux_brk = (uint32_t)((end + RPT_LINUX_PAGE - 1) & ~(uint64_t)(RPT_LINUX_PAGE - 1));
	/* argc = 0, then NULL argv, NULL envp and an empty auxv: all zero words. */
	c->r1 = RPT_LINUX_STACK_TOP;
	for (uint32_t i = 0; i < 4; i++)
		rpt_store_u32_be(RPT_LINUX_STACK_TOP + 4 * i, 0);
}

/* The result of a call: a value, or a negative errno. */
static void rpt_linux_return(struct cpu *c, int64_t result)
{
	/* CR0's SO is bit 28 of the CR. */
	if (result < 0 && result > -4096) {
		c->r3 = (uint32_t)(-result);
		c->cr |= UINT32_C(1) << 28;
	} else {
		c->r3 = (uint32_t)result;
		c->cr &= ~(UINT32_C(1) << 28);
	}
}

/* write(2) on the host's descriptor: the count written, or -EIO when nothing could be. */
static int64_t rpt_linux_write(int fd, const uint8_t *bytes, uint32_t len)
{
	size_t done = rpt_write(fd, bytes, len);
	return done > 0 || len == 0 ? (int64_t)done : -RPT_LINUX_EIO;
}

/* read(2) from the host's standard input: the count read, or -EIO. */
static int64_t rpt_linux_read(uint8_t *bytes, uint32_t len)
{
	int64_t n = rpt_read(0, bytes, len);
	return n < 0 ? -RPT_LINUX_EIO : n;
}

static int64_t rpt_linux_mmap(uint32_t len, uint32_t flags)
{
	if (!(flags & RPT_LINUX_MAP_ANONYMOUS))
		return -RPT_LINUX_ENODEV;
	uint64_t size = ((uint64_t)len + RPT_LINUX_PAGE - 1) & ~(uint64_t)(RPT_LINUX_PAGE - 1);
	if (size == 0)
		return -RPT_LINUX_EINVAL;
	if (size > RPT_LINUX_MMAP_LIMIT - rpt_linux_mmap_next)
		return -RPT_LINUX_ENOMEM;
	uint32_t at = rpt_linux_mmap_next;
	rpt_linux_mmap_next += (uint32_t)size;
	return at;
}

void rpt_helper_sc(struct cpu *restrict c)
{
	uint32_t a0 = c->r3, a1 = c->r4, a2 = c->r5, a3 = c->r6;
	(void)a3;
	switch (c->r0) {
	case 1:   /* exit */
	case 234: /* exit_group */
		rpt_process_exit((int)(a0 & 0xff));
	case 3: /* read(fd, buf, len) */
		if (a0 != 0) {
			rpt_linux_return(c, -RPT_LINUX_EBADF);
			return;
		}
		if ((uint64_t)a1 + a2 > (uint64_t)1 << 32)
			a2 = (uint32_t)(((uint64_t)1 << 32) - a1);
		rpt_linux_return(c, rpt_linux_read(rpt_mem + rpt_ppc_cached_view(a1), a2));
		return;
	case 4: /* write(fd, buf, len) */
		if (a0 != 1 && a0 != 2) {
			rpt_linux_return(c, -RPT_LINUX_EBADF);
			return;
		}
		if ((uint64_t)a1 + a2 > (uint64_t)1 << 32)
			a2 = (uint32_t)(((uint64_t)1 << 32) - a1);
		rpt_linux_return(c, rpt_linux_write((int)a0, rpt_mem + rpt_ppc_cached_view(a1), a2));
		return;
	case 45: /* brk(addr): the new break, or the old one when the request is refused */
		if (a0 >= rpt_linux_brk_start && a0 <= RPT_LINUX_BRK_LIMIT)
			rpt_linux_brk = a0;
		rpt_linux_return(c, rpt_linux_brk);
		return;
	case 90:  /* mmap(addr, len, prot, flags, fd, offset) */
	case 192: /* mmap2(addr, len, prot, flags, fd, pgoffset) */
		rpt_linux_return(c, rpt_linux_mmap(a1, c->r6));
		return;
	case 91: /* munmap */
		rpt_linux_return(c, 0);
		return;
	default:
		rpt_linux_return(c, -RPT_LINUX_ENOSYS);
		return;
	}
}
