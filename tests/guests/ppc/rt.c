/* rt.c - see rt.h. */
#include "rt.h"

long rt_syscall3(long n, long a, long b, long c)
{
	register long r0 __asm__("r0") = n;
	register long r3 __asm__("r3") = a;
	register long r4 __asm__("r4") = b;
	register long r5 __asm__("r5") = c;
	__asm__ volatile("sc\n\tbns+ 1f\n\tneg %1,%1\n1:"
			 : "+r"(r0), "+r"(r3), "+r"(r4), "+r"(r5)
			 :
			 : "r6", "r7", "r8", "r9", "r10", "r11", "r12", "cr0", "ctr", "memory");
	return r3;
}

void rt_exit(int status)
{
	rt_syscall3(234, status, 0, 0);
	for (;;)
		;
}

void rt_write(const char *s, size_t n)
{
	rt_syscall3(4, 1, (long)s, (long)n);
}

void rt_puts(const char *s)
{
	size_t n = 0;
	while (s[n])
		n++;
	rt_write(s, n);
}

void rt_nl(void)
{
	rt_write("\n", 1);
}

void rt_put_u64(u64 v)
{
	char buf[24];
	int i = sizeof buf;
	do {
		buf[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	rt_write(buf + i, sizeof buf - i);
}

void rt_put_u32(u32 v)
{
	char buf[12];
	int i = sizeof buf;
	do {
		buf[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	rt_write(buf + i, sizeof buf - i);
}

void rt_put_s32(s32 v)
{
	if (v < 0) {
		rt_write("-", 1);
		rt_put_u32(0u - (u32)v);
	} else {
		rt_put_u32((u32)v);
	}
}

void rt_put_hex32(u32 v)
{
	char buf[8];
	for (int i = 7; i >= 0; i--) {
		buf[i] = "0123456789abcdef"[v & 15];
		v >>= 4;
	}
	rt_write(buf, 8);
}

void rt_put_hex64(u64 v)
{
	rt_put_hex32((u32)(v >> 32));
	rt_put_hex32((u32)v);
}

void rt_put_double_bits(double d)
{
	union { double d; u64 u; } x = { d };
	rt_put_hex64(x.u);
}

void rt_put_float_bits(float f)
{
	union { float f; u32 u; } x = { f };
	rt_put_hex32(x.u);
}

void *rt_sbrk(u32 n)
{
	static u32 top;
	if (!top)
		top = (u32)rt_syscall3(45, 0, 0, 0);
	u32 old = top;
	u32 want = (old + n + 15) & ~15u;
	if ((u32)rt_syscall3(45, (long)want, 0, 0) != want)
		return 0;
	top = want;
	return (void *)old;
}

/* gcc may call these even in freestanding code (struct copies, zeroing). */
void *memcpy(void *d, const void *s, size_t n)
{
	unsigned char *dp = d;
	const unsigned char *sp = s;
	while (n--)
		*dp++ = *sp++;
	return d;
}

void *memset(void *d, int c, size_t n)
{
	unsigned char *dp = d;
	while (n--)
		*dp++ = (unsigned char)c;
	return d;
}

extern char __bss_start[], __bss_end[];

void _start(void) __attribute__((noreturn, section(".init")));
void _start(void)
{
	/* The loader (qemu's or rpt's) zeroes bss already; clearing it again is what a real crt0 does. */
	for (char *p = __bss_start; p < __bss_end; p++)
		*p = 0;
	rt_exit(main());
}
