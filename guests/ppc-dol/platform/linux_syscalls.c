/*
 * linux_syscalls.c - the linux-syscalls platform: enough of 32-bit PowerPC Linux for programs
 * built as static ELFs for qemu-ppc (freestanding test programs and static glibc ones), so the
 * same program runs as a DOL through rpt and prints what `qemu-ppc -cpu 750cl` prints.
 *
 * `sc` calls rpt_helper_sc with the Linux convention: r0 is the call number, r3..r8 the
 * arguments, the result goes to r3, and CR0's SO bit says whether it is an error (then r3 holds
 * the positive errno).
 *
 * Decisions (memory layout in the guest's 4 GiB space):
 * - The initial stack is the kernel's: at the top of MEM1 (24 MiB at 0x80000000) the strings
 *   (argv, the environment, the auxiliary vector's), 16 AT_RANDOM bytes, then, 16-byte aligned,
 *   argc, argv[], NULL, envp[], NULL and the auxiliary vector, with r1 pointing at argc. argv and
 *   the environment are the host's. glibc's static start-up reads all of it: argc must not be 0
 *   (its powerpc __libc_start_main takes a zero first word to mean "called with registers"), so
 *   r3..r7 also hold argc, argv, envp, auxv and 0 as that other convention wants.
 * - The auxiliary vector is what Linux gives a process on a 750CL (rpt_linux_auxv below).
 * - brk starts at the first page after the image and may grow up to 0x81000000.
 * - Anonymous mmap hands out fresh pages from 0x90000000 up (never reused; the reservation
 *   is already zero-filled). munmap, mprotect and madvise only say yes. File mappings fail with ENODEV.
 * - Files: descriptors 0, 1 and 2 are the host's; open and openat reach the runtime's sandbox
 *   (relative paths only; an absolute path fails with ENOENT, as if the file were not there).
 * - Randomness (AT_RANDOM, getrandom) is a fixed generator, not the host's: a recompiled program
 *   runs the same way every time, which matters more here than unpredictable stack canaries.
 * - A call this file does not implement fails with ENOSYS, as a kernel without it would, and is
 *   reported once on stderr. Calls glibc probes and handles failing (rseq) fail with ENOSYS
 *   silently, as under qemu-ppc.
 * - The host is reached only through the runtime's services (rpt_write, rpt_read, rpt_open,
 *   rpt_monotonic_ns, rpt_process_exit, ...), never the C library, so the platform builds for
 *   every host; brk and mmap need no host call at all, since their memory is the guest's own reservation.
 */
#include "cpu.h"

/* The GameCube time base runs at 40.5 MHz (a quarter of the 162 MHz bus clock). */
uint64_t rpt_helper_timebase(struct cpu *restrict c)
{
	(void)c;
	uint64_t ns = rpt_monotonic_ns();
	return ns / 1000000000u * 40500000u + ns % 1000000000u * 81u / 2000u;
}

#define RPT_LINUX_MEM1_TOP 0x81800000u
#define RPT_LINUX_BRK_LIMIT 0x81000000u
#define RPT_LINUX_MMAP_BASE 0x90000000u
#define RPT_LINUX_MMAP_LIMIT 0xc0000000u
#define RPT_LINUX_PAGE 4096u
/* Room the initial stack's strings and vectors may take; more arguments or environment are cut off. */
#define RPT_LINUX_ARGS_ROOM 0x10000u

#define RPT_LINUX_ENOENT 2
#define RPT_LINUX_EIO 5
#define RPT_LINUX_EBADF 9
#define RPT_LINUX_EAGAIN 11
#define RPT_LINUX_ENOMEM 12
#define RPT_LINUX_EACCES 13
#define RPT_LINUX_EEXIST 17
#define RPT_LINUX_ENODEV 19
#define RPT_LINUX_EISDIR 21
#define RPT_LINUX_EINVAL 22
#define RPT_LINUX_EMFILE 24
#define RPT_LINUX_ENOTTY 25
#define RPT_LINUX_ENAMETOOLONG 36
#define RPT_LINUX_ENOSYS 38
#define RPT_LINUX_MAP_ANONYMOUS 0x20u

/*
 * The processor's features as Linux reports them for a 750CL (its cputable entry:
 * PPC_FEATURE_32 | PPC_FEATURE_HAS_FPU | PPC_FEATURE_HAS_MMU, "COMMON_USER"), with no AltiVec,
 * so glibc's IFUNC resolvers pick their plain variants. qemu-ppc 7.2 -cpu 750cl reports
 * PPC_FEATURE_HAS_FPU alone; glibc's choices depend on neither of the other two bits.
 */
#define RPT_LINUX_HWCAP 0x8c000000u
/* The 750CL's L1 caches have 32-byte blocks; glibc's memset uses dcbz with that size. */
#define RPT_LINUX_CACHE_BLOCK 32u

enum {
	AT_NULL = 0, AT_IGNORE = 1, AT_PHDR = 3, AT_PHENT = 4, AT_PHNUM = 5, AT_PAGESZ = 6, AT_BASE = 7,
	AT_FLAGS = 8, AT_ENTRY = 9, AT_UID = 11, AT_EUID = 12, AT_GID = 13, AT_EGID = 14, AT_HWCAP = 16,
	AT_CLKTCK = 17, AT_SECURE = 23, AT_RANDOM = 25, AT_HWCAP2 = 26, AT_EXECFN = 31,
	AT_DCACHEBSIZE = 19, AT_ICACHEBSIZE = 20, AT_UCACHEBSIZE = 21, AT_IGNOREPPC = 22
};

static uint32_t rpt_linux_brk_start, rpt_linux_brk;
static uint32_t rpt_linux_mmap_next = RPT_LINUX_MMAP_BASE;
static uint64_t rpt_linux_random_state = 0x9e3779b97f4a7c15u;

/* The guest's file descriptors: the host descriptor each stands for, or -1 when closed. */
#define RPT_LINUX_FILES 64
static int rpt_linux_files[RPT_LINUX_FILES] = {0, 1, 2};
static int rpt_linux_files_ready;
/* Descriptors' status flags and the free-slot search ("descriptors, pipes and fcntl" below). */
#define RPT_LINUX_O_NONBLOCK 04000u
#define RPT_LINUX_O_APPEND 02000u
static uint32_t rpt_linux_status[RPT_LINUX_FILES];
static int rpt_linux_free_slot(int from);

/* Calls reported as unimplemented already (one bit per call number below 512). */
static uint32_t rpt_linux_reported[16];

void rpt_ppc_platform_init(struct cpu *c, int argc, char **argv);
void rpt_helper_sc(struct cpu *restrict c);
/* ppc_runtime.c: the address memory is reached through for an effective address. */
uint32_t rpt_ppc_cached_view(uint32_t ea);

static uint32_t rpt_linux_load32(uint32_t at)
{
	return rpt_load_u32_be(rpt_ppc_cached_view(at));
}

static void rpt_linux_store32(uint32_t at, uint32_t v)
{
	rpt_store_u32_be(rpt_ppc_cached_view(at), v);
}

static void rpt_linux_store64(uint32_t at, uint64_t v)
{
	rpt_linux_store32(at, (uint32_t)(v >> 32));
	rpt_linux_store32(at + 4, (uint32_t)v);
}

static void rpt_linux_zero(uint32_t at, uint32_t len)
{
	for (uint32_t i = 0; i < len; i++)
		rpt_store_u8_be(rpt_ppc_cached_view(at + i), 0);
}

/* The host buffer behind `len` guest bytes at `at`, cut at the top of the address space. */
static uint8_t *rpt_linux_bytes(uint32_t at, uint32_t *len)
{
	if ((uint64_t)at + *len > (uint64_t)1 << 32)
		*len = (uint32_t)(((uint64_t)1 << 32) - at);
	return rpt_mem + rpt_ppc_cached_view(at);
}

/* splitmix64: the fixed generator behind AT_RANDOM and getrandom (see the decisions above). */
static uint8_t rpt_linux_random_byte(void)
{
	uint64_t z = (rpt_linux_random_state += 0x9e3779b97f4a7c15u);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	return (uint8_t)(z ^ (z >> 31));
}

static size_t rpt_linux_strlen(const char *s)
{
	size_t n = 0;
	while (s[n])
		n++;
	return n;
}

/* Copies a string below `*top` (moving it down) and returns its guest address. */
static uint32_t rpt_linux_push_string(uint32_t *top, const char *s)
{
	uint32_t len = (uint32_t)rpt_linux_strlen(s) + 1;
	*top -= len;
	for (uint32_t i = 0; i < len; i++)
		rpt_store_u8_be(*top + i, (uint8_t)s[i]);
	return *top;
}

/*
 * Where the program headers are in guest memory: convert-image keeps the ELF header (and the
 * program headers after it) as a data section when the program has TLS (src/elf2dol.rs), so a
 * segment that starts with the ELF magic holds them. 0 when no segment does.
 */
static uint32_t rpt_linux_find_phdrs(uint32_t *count)
{
	for (size_t i = 0; i < rpt_segment_count; i++) {
		const struct rpt_segment *s = &rpt_segments[i];
		if (s->size < 52 || s->bytes[0] != 0x7f || s->bytes[1] != 'E' || s->bytes[2] != 'L' || s->bytes[3] != 'F')
			continue;
		uint32_t phoff = (uint32_t)s->bytes[28] << 24 | (uint32_t)s->bytes[29] << 16 |
				 (uint32_t)s->bytes[30] << 8 | s->bytes[31];
		uint32_t phnum = (uint32_t)s->bytes[44] << 8 | s->bytes[45];
		if ((uint64_t)phoff + (uint64_t)phnum * 32 > s->size)
			continue;
		*count = phnum;
		return (uint32_t)s->addr + phoff;
	}
	*count = 0;
	return 0;
}

void rpt_ppc_platform_init(struct cpu *c, int argc, char **argv)
{
	uint64_t end = 0;
	for (size_t i = 0; i < rpt_segment_count; i++) {
		uint64_t e = rpt_ppc_cached_view((uint32_t)rpt_segments[i].addr) + rpt_segments[i].mem_size;
		if (e > end && e <= RPT_LINUX_BRK_LIMIT)
			end = e;
	}
	rpt_linux_brk_start = rpt_linux_brk = (uint32_t)((end + RPT_LINUX_PAGE - 1) & ~(uint64_t)(RPT_LINUX_PAGE - 1));

	/* The strings first, from the top down, within RPT_LINUX_ARGS_ROOM / 2. */
	uint32_t top = RPT_LINUX_MEM1_TOP - 16;
	uint32_t floor = RPT_LINUX_MEM1_TOP - RPT_LINUX_ARGS_ROOM / 2;
	enum { MAX_STRINGS = 1024 };
	static uint32_t arg_at[MAX_STRINGS], env_at[MAX_STRINGS];
	uint32_t nargs = 0, nenv = 0;
	for (int i = 0; i < argc && nargs < MAX_STRINGS; i++) {
		if (top - floor < rpt_linux_strlen(argv[i]) + 1)
			break;
		arg_at[nargs++] = rpt_linux_push_string(&top, argv[i]);
	}
	for (size_t i = 0; nenv < MAX_STRINGS; i++) {
		const char *e = rpt_env(i);
		if (!e || top - floor < rpt_linux_strlen(e) + 1)
			break;
		env_at[nenv++] = rpt_linux_push_string(&top, e);
	}
	uint32_t execfn = nargs > 0 ? arg_at[0] : rpt_linux_push_string(&top, "");
	top &= ~15u;
	top -= 16;
	uint32_t random_at = top;
	for (uint32_t i = 0; i < 16; i++)
		rpt_store_u8_be(random_at + i, rpt_linux_random_byte());

	uint32_t phnum;
	uint32_t phdr = rpt_linux_find_phdrs(&phnum);
	uint32_t auxv[][2] = {
		{AT_IGNOREPPC, AT_IGNOREPPC},
		{AT_IGNOREPPC, AT_IGNOREPPC},
		{AT_DCACHEBSIZE, RPT_LINUX_CACHE_BLOCK},
		{AT_ICACHEBSIZE, RPT_LINUX_CACHE_BLOCK},
		{AT_UCACHEBSIZE, 0},
		{phdr ? AT_PHDR : AT_IGNORE, phdr},
		{phdr ? AT_PHENT : AT_IGNORE, phdr ? 32 : 0},
		{phdr ? AT_PHNUM : AT_IGNORE, phnum},
		{AT_PAGESZ, RPT_LINUX_PAGE},
		{AT_BASE, 0},
		{AT_FLAGS, 0},
		{AT_ENTRY, (uint32_t)rpt_entry_pc},
		{AT_UID, 0},
		{AT_EUID, 0},
		{AT_GID, 0},
		{AT_EGID, 0},
		{AT_HWCAP, RPT_LINUX_HWCAP},
		{AT_CLKTCK, 100},
		{AT_RANDOM, random_at},
		{AT_SECURE, 0},
		{AT_EXECFN, execfn},
		{AT_HWCAP2, 0},
		{AT_NULL, 0},
	};
	uint32_t nauxv = sizeof auxv / sizeof auxv[0];
	uint32_t words = 1 + nargs + 1 + nenv + 1 + 2 * nauxv;
	uint32_t sp = (top - 4 * words) & ~15u;
	uint32_t at = sp;
	rpt_store_u32_be(at, nargs);
	at += 4;
	uint32_t argv_at = at;
	for (uint32_t i = 0; i < nargs; i++, at += 4)
		rpt_store_u32_be(at, arg_at[i]);
	rpt_store_u32_be(at, 0);
	at += 4;
	uint32_t envp_at = at;
	for (uint32_t i = 0; i < nenv; i++, at += 4)
		rpt_store_u32_be(at, env_at[i]);
	rpt_store_u32_be(at, 0);
	at += 4;
	uint32_t auxv_at = at;
	for (uint32_t i = 0; i < nauxv; i++, at += 8) {
		rpt_store_u32_be(at, auxv[i][0]);
		rpt_store_u32_be(at + 4, auxv[i][1]);
	}
	c->r1 = sp;
	c->r3 = nargs;
	c->r4 = argv_at;
	c->r5 = envp_at;
	c->r6 = auxv_at;
	c->r7 = 0;
}

/* The result of a call: a value, or a negative errno. */
static void rpt_linux_return(struct cpu *c, int64_t result)
{
	/* CR0's SO is the low bit of the cr0 field (bit 28 of the 32-bit CR). */
	if (result < 0 && result > -4096) {
		c->r3 = (uint32_t)(-result);
		c->cr0 = (uint8_t)(c->cr0 | 1u);
	} else {
		c->r3 = (uint32_t)result;
		c->cr0 = (uint8_t)(c->cr0 & ~1u);
	}
}

/* Reports an unimplemented call once, then fails it with ENOSYS as a kernel without it would. */
static int64_t rpt_linux_unimplemented(uint32_t number, const char *what)
{
	uint32_t bit = number < 512 ? number : 511;
	if (!(rpt_linux_reported[bit / 32] & (UINT32_C(1) << (bit % 32)))) {
		rpt_linux_reported[bit / 32] |= UINT32_C(1) << (bit % 32);
		char text[160] = "rpt linux-syscalls: system call ";
		size_t n = rpt_linux_strlen(text);
		char digits[12];
		size_t d = 0;
		do {
			digits[d++] = (char)('0' + number % 10);
			number /= 10;
		} while (number);
		while (d)
			text[n++] = digits[--d];
		const char *rest = what ? what : " is not implemented: it fails with ENOSYS\n";
		while (*rest && n + 1 < sizeof text)
			text[n++] = *rest++;
		text[n] = 0;
		rpt_write_stderr(text);
	}
	return -RPT_LINUX_ENOSYS;
}

/* The host descriptor behind guest descriptor `fd`, or -1. */
static int rpt_linux_host_fd(uint32_t fd)
{
	if (!rpt_linux_files_ready) {
		for (int i = 3; i < RPT_LINUX_FILES; i++)
			rpt_linux_files[i] = -1;
		rpt_linux_files_ready = 1;
	}
	return fd < RPT_LINUX_FILES ? rpt_linux_files[fd] : -1;
}

/* The errno of the last failing file service. */
static int64_t rpt_linux_file_error(void)
{
	switch (rpt_last_error()) {
	case RPT_HOST_ERROR_NOT_FOUND: return -RPT_LINUX_ENOENT;
	case RPT_HOST_ERROR_ACCESS: return -RPT_LINUX_EACCES;
	case RPT_HOST_ERROR_EXISTS: return -RPT_LINUX_EEXIST;
	case RPT_HOST_ERROR_IS_DIRECTORY: return -RPT_LINUX_EISDIR;
	case RPT_HOST_ERROR_TOO_MANY: return -RPT_LINUX_EMFILE;
	case RPT_HOST_ERROR_INVALID: return -RPT_LINUX_EINVAL;
	default: return -RPT_LINUX_EIO;
	}
}

/* open(path, flags) in the sandbox: Linux's O_* flags on PowerPC map onto the runtime's. */
static int64_t rpt_linux_open(uint32_t path_at, uint32_t flags)
{
	char path[1024];
	uint32_t n = 0;
	for (;; n++) {
		if (n == sizeof path)
			return -RPT_LINUX_ENAMETOOLONG;
		path[n] = (char)rpt_load_u8_be(rpt_ppc_cached_view(path_at + n));
		if (!path[n])
			break;
	}
	if (path[0] == '/')
		return -RPT_LINUX_ENOENT;
	unsigned mode = 0;
	switch (flags & 3u) {
	case 0: mode = RPT_OPEN_READ; break;
	case 1: mode = RPT_OPEN_WRITE; break;
	default: mode = RPT_OPEN_READ | RPT_OPEN_WRITE; break;
	}
	if (flags & 0100u)
		mode |= RPT_OPEN_CREATE;
	if (flags & 0200u)
		mode |= RPT_OPEN_EXCLUSIVE;
	if (flags & 01000u)
		mode |= RPT_OPEN_TRUNCATE;
	if (flags & 02000u)
		mode |= RPT_OPEN_APPEND;
	int slot = rpt_linux_free_slot(3);
	if (slot < 0)
		return -RPT_LINUX_EMFILE;
	int host = rpt_open(path, mode);
	if (host < 0)
		return rpt_linux_file_error();
	rpt_linux_files[slot] = host;
	rpt_linux_status[slot] = flags & (3u | RPT_LINUX_O_APPEND | RPT_LINUX_O_NONBLOCK);
	return slot;
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

/* ---------------------------------------------------------------- descriptors, pipes and fcntl
 *
 * Besides the host's standard descriptors and sandbox files, a guest descriptor can be an end of a
 * pipe the guest made (pipe, pipe2), which lives here: 64 KiB of buffer, as Linux gives a pipe.
 * With one thread, a read of an empty pipe whose write end is open, or a write to a full one,
 * would wait forever: a descriptor with O_NONBLOCK gets EAGAIN, as on Linux, and one without ends
 * the program with a report instead of hanging. fcntl keeps each descriptor's status flags
 * (F_GETFL/F_SETFL) and close-on-exec bit (F_GETFD/F_SETFD). The standard descriptors report
 * O_RDWR on a terminal, else O_RDONLY for 0 and O_WRONLY for 1 and 2 (the shell's redirections
 * and pipes); O_NONBLOCK set on them is remembered, but their reads and writes still wait, as
 * they may on Linux when data is there. */

#define RPT_LINUX_ESPIPE 29
#define RPT_LINUX_EPIPE 32
#define RPT_LINUX_O_CLOEXEC 02000000u
#define RPT_LINUX_PIPES 4
#define RPT_LINUX_PIPE_SIZE 65536u

struct rpt_linux_pipe {
	uint8_t buf[RPT_LINUX_PIPE_SIZE];
	uint32_t start, len;
	uint32_t readers, writers;
};

static struct rpt_linux_pipe rpt_linux_pipes[RPT_LINUX_PIPES];
/* For each descriptor: -1, or 2 * pipe + end (0 the read end, 1 the write end). */
static int rpt_linux_pipe_ends[RPT_LINUX_FILES];
static uint8_t rpt_linux_cloexec[RPT_LINUX_FILES];
static int rpt_linux_fds_ready;

static void rpt_linux_fds_init(void)
{
	if (rpt_linux_fds_ready)
		return;
	rpt_linux_fds_ready = 1;
	for (int i = 0; i < RPT_LINUX_FILES; i++)
		rpt_linux_pipe_ends[i] = -1;
	for (int i = 0; i < 3; i++)
		rpt_linux_status[i] = rpt_is_terminal(i) ? 2u : i == 0 ? 0u : 1u;
}

/* The pipe end behind `fd` (2 * pipe + end), or -1. */
static int rpt_linux_pipe_end_of(uint32_t fd)
{
	rpt_linux_fds_init();
	return fd < RPT_LINUX_FILES ? rpt_linux_pipe_ends[fd] : -1;
}

/* The lowest free descriptor from `from`, or -1. */
static int rpt_linux_free_slot(int from)
{
	rpt_linux_host_fd(0);
	rpt_linux_fds_init();
	for (int slot = from; slot < RPT_LINUX_FILES; slot++)
		if (rpt_linux_files[slot] < 0 && rpt_linux_pipe_ends[slot] < 0) {
			rpt_linux_cloexec[slot] = 0;
			return slot;
		}
	return -1;
}

_Noreturn static void rpt_linux_pipe_deadlock(const char *what)
{
	rpt_write_stderr("rpt linux-syscalls: ");
	rpt_write_stderr(what);
	rpt_write_stderr(", and the program's only thread is the one that would have to change that: "
			 "it would wait forever\n");
	rpt_process_exit(124);
}

/* pipe2(fds, flags): two descriptors, read end first; flags O_NONBLOCK and O_CLOEXEC. */
static int64_t rpt_linux_pipe2(uint32_t fds, uint32_t flags)
{
	if (flags & ~(RPT_LINUX_O_NONBLOCK | RPT_LINUX_O_CLOEXEC))
		return -RPT_LINUX_EINVAL;
	int p = 0;
	while (p < RPT_LINUX_PIPES && (rpt_linux_pipes[p].readers || rpt_linux_pipes[p].writers))
		p++;
	int r = rpt_linux_free_slot(0);
	if (r >= 0)
		rpt_linux_pipe_ends[r] = 2 * p; /* held while the second is found */
	int w = rpt_linux_free_slot(0);
	if (p == RPT_LINUX_PIPES || r < 0 || w < 0) {
		if (r >= 0)
			rpt_linux_pipe_ends[r] = -1;
		return p == RPT_LINUX_PIPES ? -RPT_LINUX_ENOMEM : -RPT_LINUX_EMFILE;
	}
	rpt_linux_pipe_ends[w] = 2 * p + 1;
	rpt_linux_pipes[p].start = rpt_linux_pipes[p].len = 0;
	rpt_linux_pipes[p].readers = rpt_linux_pipes[p].writers = 1;
	rpt_linux_status[r] = (flags & RPT_LINUX_O_NONBLOCK);
	rpt_linux_status[w] = 1u | (flags & RPT_LINUX_O_NONBLOCK);
	rpt_linux_cloexec[r] = rpt_linux_cloexec[w] = (flags & RPT_LINUX_O_CLOEXEC) != 0;
	rpt_linux_store32(fds, (uint32_t)r);
	rpt_linux_store32(fds + 4, (uint32_t)w);
	return 0;
}

static int64_t rpt_linux_pipe_read(uint32_t fd, uint32_t at, uint32_t len)
{
	int end = rpt_linux_pipe_ends[fd];
	if (end & 1)
		return -RPT_LINUX_EBADF;
	struct rpt_linux_pipe *p = &rpt_linux_pipes[end / 2];
	if (!p->len) {
		if (!p->writers || !len)
			return 0;
		if (rpt_linux_status[fd] & RPT_LINUX_O_NONBLOCK)
			return -RPT_LINUX_EAGAIN;
		rpt_linux_pipe_deadlock("a read waits on an empty pipe whose write end is open");
	}
	uint32_t n = len < p->len ? len : p->len;
	for (uint32_t i = 0; i < n; i++)
		rpt_store_u8_be(rpt_ppc_cached_view(at + i), p->buf[(p->start + i) % RPT_LINUX_PIPE_SIZE]);
	p->start = (p->start + n) % RPT_LINUX_PIPE_SIZE;
	p->len -= n;
	return n;
}

static int64_t rpt_linux_pipe_write(uint32_t fd, uint32_t at, uint32_t len)
{
	int end = rpt_linux_pipe_ends[fd];
	if (!(end & 1))
		return -RPT_LINUX_EBADF;
	struct rpt_linux_pipe *p = &rpt_linux_pipes[end / 2];
	/* No reader: Linux raises SIGPIPE, whose default action ends the program, and the write
	 * fails with EPIPE where the signal is ignored or caught; no signal is delivered here. */
	if (!p->readers)
		return -RPT_LINUX_EPIPE;
	uint32_t room = RPT_LINUX_PIPE_SIZE - p->len;
	if (!room && len) {
		if (rpt_linux_status[fd] & RPT_LINUX_O_NONBLOCK)
			return -RPT_LINUX_EAGAIN;
		rpt_linux_pipe_deadlock("a write waits on a full pipe that nothing reads");
	}
	uint32_t n = len < room ? len : room;
	for (uint32_t i = 0; i < n; i++)
		p->buf[(p->start + p->len + i) % RPT_LINUX_PIPE_SIZE] = rpt_load_u8_be(rpt_ppc_cached_view(at + i));
	p->len += n;
	return n;
}

static void rpt_linux_pipe_close(uint32_t fd)
{
	int end = rpt_linux_pipe_ends[fd];
	struct rpt_linux_pipe *p = &rpt_linux_pipes[end / 2];
	if (end & 1)
		p->writers--;
	else
		p->readers--;
	rpt_linux_pipe_ends[fd] = -1;
}

/* fcntl(fd, cmd, arg): F_GETFD (1), F_SETFD (2), F_GETFL (3), F_SETFL (4; O_APPEND and
 * O_NONBLOCK change, the rest is ignored as Linux ignores it); others fail with EINVAL. */
static int64_t rpt_linux_fcntl(uint32_t fd, uint32_t cmd, uint32_t arg)
{
	if (rpt_linux_pipe_end_of(fd) < 0 && rpt_linux_host_fd(fd) < 0)
		return -RPT_LINUX_EBADF;
	switch (cmd) {
	case 1:
		return rpt_linux_cloexec[fd];
	case 2:
		rpt_linux_cloexec[fd] = arg & 1u;
		return 0;
	case 3:
		return rpt_linux_status[fd];
	case 4:
		rpt_linux_status[fd] = (rpt_linux_status[fd] & ~(RPT_LINUX_O_APPEND | RPT_LINUX_O_NONBLOCK)) |
				       (arg & (RPT_LINUX_O_APPEND | RPT_LINUX_O_NONBLOCK));
		return 0;
	default:
		rpt_linux_unimplemented(55, " (fcntl other than F_GETFD, F_SETFD, F_GETFL, F_SETFL) is not implemented: it fails with EINVAL\n");
		return -RPT_LINUX_EINVAL;
	}
}

/* read(2): the count read, or -EIO / -EBADF. */
static int64_t rpt_linux_read(uint32_t fd, uint32_t at, uint32_t len)
{
	if (rpt_linux_pipe_end_of(fd) >= 0)
		return rpt_linux_pipe_read(fd, at, len);
	int host = rpt_linux_host_fd(fd);
	if (host < 0)
		return -RPT_LINUX_EBADF;
	uint8_t *bytes = rpt_linux_bytes(at, &len);
	int64_t n = rpt_read(host, bytes, len);
	return n < 0 ? -RPT_LINUX_EIO : n;
}

/* write(2): the count written, or -EIO when nothing could be. */
static int64_t rpt_linux_write(uint32_t fd, uint32_t at, uint32_t len)
{
	if (rpt_linux_pipe_end_of(fd) >= 0)
		return rpt_linux_pipe_write(fd, at, len);
	int host = rpt_linux_host_fd(fd);
	if (host < 0)
		return -RPT_LINUX_EBADF;
	uint8_t *bytes = rpt_linux_bytes(at, &len);
	size_t done = rpt_write(host, bytes, len);
	return done > 0 || len == 0 ? (int64_t)done : -RPT_LINUX_EIO;
}

/* writev(fd, iov, count): each {base, len} pair in turn. */
static int64_t rpt_linux_writev(uint32_t fd, uint32_t iov, uint32_t count)
{
	if (count > 1024)
		return -RPT_LINUX_EINVAL;
	int64_t total = 0;
	for (uint32_t i = 0; i < count; i++) {
		uint32_t base = rpt_linux_load32(iov + 8 * i), len = rpt_linux_load32(iov + 8 * i + 4);
		int64_t n = rpt_linux_write(fd, base, len);
		if (n < 0)
			return total > 0 ? total : n;
		total += n;
		if ((uint32_t)n < len)
			break;
	}
	return total;
}

/* lseek on a sandbox file; the standard descriptors are pipes to the guest (ESPIPE). */
static int64_t rpt_linux_seek(uint32_t fd, int64_t offset, uint32_t whence)
{
	int host = rpt_linux_host_fd(fd);
	if (host < 0)
		return -RPT_LINUX_EBADF;
	if (fd < 3)
		return -29; /* ESPIPE */
	if (whence > 2)
		return -RPT_LINUX_EINVAL;
	int64_t at = rpt_seek(host, offset, (int)whence);
	return at < 0 ? rpt_linux_file_error() : at;
}

/*
 * statx(fd, "", AT_EMPTY_PATH, mask, buf) on a standard descriptor, which glibc's stdio asks
 * to choose its buffering: a terminal is a character device, anything else a pipe (a file
 * redirect is buffered by glibc just like a pipe, so it needs no host call to tell them apart).
 * A sandbox file is a regular file whose size the runtime's seek tells.
 */
static int64_t rpt_linux_statx(uint32_t dirfd, uint32_t path, uint32_t flags, uint32_t buf)
{
	int host = rpt_linux_host_fd(dirfd);
	if (!(flags & 0x1000u) || rpt_load_u8_be(rpt_ppc_cached_view(path)) != 0)
		return rpt_linux_unimplemented(383, " (statx of a path) is not implemented: it fails with ENOSYS\n");
	if (host < 0)
		return -RPT_LINUX_EBADF;
	uint32_t mode;
	uint64_t size = 0;
	if (dirfd < 3) {
		mode = rpt_is_terminal(host) ? 0020620u : 0010600u;
	} else {
		mode = 0100644u;
		int64_t here = rpt_seek(host, 0, RPT_SEEK_CUR);
		int64_t end = rpt_seek(host, 0, RPT_SEEK_END);
		if (here >= 0 && end >= 0) {
			size = (uint64_t)end;
			rpt_seek(host, here, RPT_SEEK_SET);
		}
	}
	/* struct statx: 256 bytes; the fields set are those STATX_BASIC_STATS (0x7ff) promises. */
	rpt_linux_zero(buf, 256);
	rpt_linux_store32(buf + 0, 0x7ffu);                       /* stx_mask */
	rpt_linux_store32(buf + 4, 4096);                         /* stx_blksize */
	rpt_linux_store32(buf + 16, 1);                           /* stx_nlink */
	rpt_store_u16_be(rpt_ppc_cached_view(buf + 28), (uint16_t)mode); /* stx_mode */
	rpt_linux_store64(buf + 40, size);                        /* stx_size */
	rpt_linux_store64(buf + 48, (size + 511) / 512);          /* stx_blocks */
	return 0;
}

/* A struct timespec with 32-bit (time32) or 64-bit seconds, from nanoseconds. */
static void rpt_linux_timespec(uint32_t at, int64_t ns, int wide)
{
	int64_t s = ns / 1000000000, frac = ns % 1000000000;
	if (wide) {
		rpt_linux_store64(at, (uint64_t)s);
		rpt_linux_store32(at + 8, 0);
		rpt_linux_store32(at + 12, (uint32_t)frac);
	} else {
		rpt_linux_store32(at, (uint32_t)s);
		rpt_linux_store32(at + 4, (uint32_t)frac);
	}
}

/* CLOCK_REALTIME (0) and its coarse form (5) read the real-time clock, every other clock the monotonic one. */
static int64_t rpt_linux_clock_ns(uint32_t clock)
{
	return clock == 0 || clock == 5 ? rpt_realtime_ns() : (int64_t)rpt_monotonic_ns();
}

/* uname: a Linux 6.1 kernel on a PowerPC, as qemu-ppc's host would report itself. */
static int64_t rpt_linux_uname(uint32_t at)
{
	static const char *const fields[6] = {"Linux", "rpt", "6.1.0", "#1 rpt linux-syscalls", "ppc", "(none)"};
	rpt_linux_zero(at, 6 * 65);
	for (uint32_t f = 0; f < 6; f++)
		for (uint32_t i = 0; fields[f][i]; i++)
			rpt_store_u8_be(rpt_ppc_cached_view(at + 65 * f + i), (uint8_t)fields[f][i]);
	return 0;
}

/* sysinfo: the uptime and the 24 MiB of MEM1 as total and free memory (glibc's qsort sizes its buffer by it). */
static int64_t rpt_linux_sysinfo(uint32_t at)
{
	rpt_linux_zero(at, 64);
	rpt_linux_store32(at, (uint32_t)(rpt_monotonic_ns() / 1000000000u));
	rpt_linux_store32(at + 16, 24u << 20); /* totalram */
	rpt_linux_store32(at + 20, 16u << 20); /* freeram */
	rpt_store_u16_be(rpt_ppc_cached_view(at + 40), 1); /* procs */
	rpt_linux_store32(at + 52, 1);         /* mem_unit */
	return 0;
}

/* getrlimit / prlimit64: 8 MiB of stack, everything else unlimited. `wide` is prlimit64's 64-bit form. */
static int64_t rpt_linux_rlimit(uint32_t resource, uint32_t at, int wide)
{
	uint64_t cur = resource == 3 ? 8u << 20 : UINT64_MAX, max = UINT64_MAX;
	if (!at)
		return 0;
	if (wide) {
		rpt_linux_store64(at, cur);
		rpt_linux_store64(at + 8, max);
	} else {
		rpt_linux_store32(at, cur > UINT32_MAX ? UINT32_MAX : (uint32_t)cur);
		rpt_linux_store32(at + 4, UINT32_MAX);
	}
	return 0;
}

void rpt_helper_sc(struct cpu *restrict c)
{
	uint32_t a0 = c->r3, a1 = c->r4, a2 = c->r5, a3 = c->r6, a4 = c->r7;
	int64_t r;
	switch (c->r0) {
	case 1:   /* exit */
	case 234: /* exit_group */
		rpt_process_exit((int)(a0 & 0xff));
	case 3: /* read(fd, buf, len) */
		r = rpt_linux_read(a0, a1, a2);
		break;
	case 4: /* write(fd, buf, len) */
		r = rpt_linux_write(a0, a1, a2);
		break;
	case 146: /* writev(fd, iov, count) */
		r = rpt_linux_writev(a0, a1, a2);
		break;
	case 5: /* open(path, flags, mode) */
		r = rpt_linux_open(a0, a1);
		break;
	case 286: /* openat(dirfd, path, flags, mode): only AT_FDCWD (-100) is a directory here */
		r = a0 == (uint32_t)-100 ? rpt_linux_open(a1, a2) : -RPT_LINUX_EBADF;
		break;
	case 6: /* close(fd) */
		if (rpt_linux_pipe_end_of(a0) >= 0) {
			rpt_linux_pipe_close(a0);
			r = 0;
		} else if (a0 < 3 || rpt_linux_host_fd(a0) < 0) {
			/* The standard descriptors stay the host's own: closing them only says yes. */
			r = a0 < 3 ? 0 : -RPT_LINUX_EBADF;
		} else {
			rpt_close(rpt_linux_files[a0]);
			rpt_linux_files[a0] = -1;
			r = 0;
		}
		break;
	case 42:  /* pipe(fds) */
	case 317: /* pipe2(fds, flags) */
		r = rpt_linux_pipe2(a0, c->r0 == 42 ? 0 : a1);
		break;
	case 55:  /* fcntl(fd, cmd, arg) */
	case 204: /* fcntl64(fd, cmd, arg) */
		r = rpt_linux_fcntl(a0, a1, a2);
		break;
	case 254: /* fadvise64_64(fd, advice, offset, len): advice changes nothing here */
		if (rpt_linux_pipe_end_of(a0) >= 0 || (a0 < 3 && rpt_linux_host_fd(a0) >= 0))
			r = -RPT_LINUX_ESPIPE;
		else
			r = rpt_linux_host_fd(a0) < 0 ? -RPT_LINUX_EBADF : a1 > 5 ? -RPT_LINUX_EINVAL : 0;
		break;
	case 19: /* lseek(fd, offset, whence) */
		r = rpt_linux_seek(a0, (int32_t)a1, a2);
		break;
	case 140: /* _llseek(fd, high, low, result, whence) */
		r = rpt_linux_seek(a0, (int64_t)((uint64_t)a1 << 32 | a2), a4);
		if (r >= 0) {
			rpt_linux_store64(a3, (uint64_t)r);
			r = 0;
		}
		break;
	case 383: /* statx(dirfd, path, flags, mask, buf) */
		r = rpt_linux_statx(a0, a1, a2, a4);
		break;
	case 54: /* ioctl(fd, request, arg): TCGETS (isatty) only */
		if (rpt_linux_host_fd(a0) < 0)
			r = -RPT_LINUX_EBADF;
		else if (a1 != 0x402c7413u) {
			/* A request the file does not support fails with ENOTTY on Linux, whatever the file. */
			rpt_linux_unimplemented(54, " (ioctl other than TCGETS) is not implemented: it fails with ENOTTY\n");
			r = -RPT_LINUX_ENOTTY;
		}
		else if (a0 < 3 && rpt_is_terminal(rpt_linux_files[a0])) {
			rpt_linux_zero(a2, 44); /* struct termios: what isatty needs is the success */
			r = 0;
		} else
			r = -RPT_LINUX_ENOTTY;
		break;
	case 45: /* brk(addr): the new break, or the old one when the request is refused */
		if (a0 >= rpt_linux_brk_start && a0 <= RPT_LINUX_BRK_LIMIT)
			rpt_linux_brk = a0;
		r = rpt_linux_brk;
		break;
	case 90:  /* mmap(addr, len, prot, flags, fd, offset) */
	case 192: /* mmap2(addr, len, prot, flags, fd, pgoffset) */
		r = rpt_linux_mmap(a1, a3);
		break;
	case 91:  /* munmap */
	case 125: /* mprotect: the reservation is readable and writable throughout */
	case 205: /* madvise */
		r = 0;
		break;
	case 20:  /* getpid */
	case 207: /* gettid */
	case 232: /* set_tid_address: the thread id */
		r = 2;
		break;
	case 24: /* getuid */
	case 47: /* getgid */
	case 49: /* geteuid */
	case 50: /* getegid */
		r = 0;
		break;
	case 300: /* set_robust_list: one thread that never dies holding a lock needs no list */
		r = 0;
		break;
	case 387: /* rseq: glibc carries on without it, as under qemu-ppc, which lacks it too */
		r = -RPT_LINUX_ENOSYS;
		break;
	case 173: /* rt_sigaction(sig, act, oldact, size): no signal is ever delivered */
		if (a2)
			rpt_linux_zero(a2, 16 + (a3 < 128 ? a3 : 128));
		r = a0 >= 1 && a0 <= 64 ? 0 : -RPT_LINUX_EINVAL;
		break;
	case 174: /* rt_sigprocmask(how, set, oldset, size): nothing is blocked */
		if (a2)
			rpt_linux_zero(a2, a3 < 128 ? a3 : 128);
		r = 0;
		break;
	case 122: /* uname */
		r = rpt_linux_uname(a0);
		break;
	case 116: /* sysinfo */
		r = rpt_linux_sysinfo(a0);
		break;
	case 190: /* ugetrlimit(resource, rlim) */
		r = rpt_linux_rlimit(a0, a1, 0);
		break;
	case 325: /* prlimit64(pid, resource, new, old) */
		r = rpt_linux_rlimit(a1, a3, 1);
		break;
	case 85: /* readlink: there is no /proc (glibc asks for /proc/self/exe and manages without) */
		r = -RPT_LINUX_ENOENT;
		break;
	case 359: /* getrandom(buf, len, flags) */
		for (uint32_t i = 0; i < a1; i++)
			rpt_store_u8_be(rpt_ppc_cached_view(a0 + i), rpt_linux_random_byte());
		r = a1;
		break;
	case 246: /* clock_gettime(clock, timespec32) */
	case 403: /* clock_gettime64(clock, timespec64) */
		rpt_linux_timespec(a1, rpt_linux_clock_ns(a0), c->r0 == 403);
		r = 0;
		break;
	case 78: /* gettimeofday(timeval, tz) */
		if (a0) {
			int64_t ns = rpt_realtime_ns();
			rpt_linux_store32(a0, (uint32_t)(ns / 1000000000));
			rpt_linux_store32(a0 + 4, (uint32_t)(ns % 1000000000 / 1000));
		}
		r = 0;
		break;
	case 13: /* time(t) */
		r = (uint32_t)(rpt_realtime_ns() / 1000000000);
		if (a0)
			rpt_linux_store32(a0, (uint32_t)r);
		break;
	case 221: /* futex: with one thread, a wake wakes nobody and a wait would never end */
		r = (a1 & 0x7fu) == 1 ? 0 : -RPT_LINUX_EAGAIN;
		break;
	default:
		r = rpt_linux_unimplemented(c->r0, NULL);
		break;
	}
	rpt_linux_return(c, r);
}
