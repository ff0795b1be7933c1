/* harness.c - the oracle for the PowerPC instruction fuzzer (tests/oracle.rs): reads cases from
 * standard input, runs each natively under qemu-ppc -cpu 750cl, and writes the state after it.
 *
 * Input (big-endian): u32 count, then per case u32 n, n instruction words, and a STATE_SIZE
 * state block. Output: per case, the state block after the case ran. Case i's code is copied to
 * CODE_BASE + i * CASE_STRIDE and followed by `b save_state`; the trampoline branches to it. */
#include "harness.h"

typedef unsigned int u32;
typedef unsigned char u8;

/* The Linux system calls the harness makes through `sys`, by number. */
enum { SYS_READ = 3, SYS_WRITE = 4, SYS_MMAP2 = 192, SYS_EXIT_GROUP = 234 };

void run_case(void);
void save_state(void);

static long sys(long n, long a, long b, long c, long d, long e, long f)
{
	register long r0 __asm__("r0") = n;
	register long r3 __asm__("r3") = a;
	register long r4 __asm__("r4") = b;
	register long r5 __asm__("r5") = c;
	register long r6 __asm__("r6") = d;
	register long r7 __asm__("r7") = e;
	register long r8 __asm__("r8") = f;
	__asm__ volatile("sc\n\tbns+ 1f\n\tneg %1,%1\n1:"
			 : "+r"(r0), "+r"(r3), "+r"(r4), "+r"(r5), "+r"(r6), "+r"(r7), "+r"(r8)
			 :
			 : "r9", "r10", "r11", "r12", "cr0", "ctr", "memory");
	return r3;
}

static void fail(const char *why)
{
	u32 n = 0;
	while (why[n])
		n++;
	sys(SYS_WRITE, 2, (long)why, n, 0, 0, 0);
	sys(SYS_EXIT_GROUP, 3, 0, 0, 0, 0, 0);
}

/* Anonymous RWX memory at a fixed address (mmap2: MAP_PRIVATE | MAP_FIXED | MAP_ANONYMOUS). */
static void map_fixed(u32 addr, u32 len)
{
	if ((u32)sys(SYS_MMAP2, addr, len, 7, 0x32, -1, 0) != addr)
		fail("harness: mmap failed\n");
}

/* Reads (SYS_READ, from standard input) or writes (SYS_WRITE, to standard output) all n bytes at
 * p, however many calls that takes; fails with `why` at the end of the input or on an error. */
static void transfer_all(long call, u8 *p, u32 n, const char *why)
{
	long fd = call == SYS_READ ? 0 : 1;
	while (n > 0) {
		long done = sys(call, fd, (long)p, n, 0, 0, 0);
		if (done <= 0)
			fail(why);
		p += done;
		n -= (u32)done;
	}
}

static u32 read_u32(void)
{
	u32 v;
	transfer_all(SYS_READ, (u8 *)&v, 4, "harness: short input\n");
	return v;
}

static u32 branch_to(u32 from, u32 to)
{
	return 0x48000000u | ((to - from) & 0x03fffffcu);
}

int main(void)
{
	map_fixed(STATE_BASE, 0x1000);
	map_fixed(WINDOW_BASE & ~0xfffu, 0x1000);
	map_fixed(TRAMPOLINE, 0x1000);
	map_fixed(CODE_BASE, MAX_CASES * CASE_STRIDE);
	u32 count = read_u32();
	if (count > MAX_CASES)
		fail("harness: too many cases\n");
	volatile u32 *trampoline = (volatile u32 *)TRAMPOLINE;
	u8 *state = (u8 *)STATE_BASE;
	for (u32 i = 0; i < count; i++) {
		u32 n = read_u32();
		if (n > CASE_STRIDE / 4 - 1)
			fail("harness: case too long\n");
		u32 at = CODE_BASE + i * CASE_STRIDE;
		volatile u32 *code = (volatile u32 *)at;
		for (u32 k = 0; k < n; k++)
			code[k] = read_u32();
		code[n] = branch_to(at + 4 * n, (u32)save_state);
		*trampoline = branch_to(TRAMPOLINE, at);
		transfer_all(SYS_READ, state, STATE_SIZE, "harness: short input\n");
		u8 *window = (u8 *)WINDOW_BASE;
		for (u32 k = 0; k < WINDOW_SIZE; k++)
			window[k] = state[OFF_WINDOW + k];
		run_case();
		for (u32 k = 0; k < WINDOW_SIZE; k++)
			state[OFF_WINDOW + k] = window[k];
		transfer_all(SYS_WRITE, state, STATE_SIZE, "harness: write failed\n");
	}
	return 0;
}

void _start(void) __attribute__((noreturn));
void _start(void)
{
	sys(SYS_EXIT_GROUP, main(), 0, 0, 0, 0, 0);
	for (;;)
		;
}
