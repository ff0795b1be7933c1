/* integer.c - integer work for the PowerPC guest: arithmetic with carries and overflow, 64-bit
 * math through libgcc, division edge cases the compiler cannot fold, rotates and masks, a switch
 * compiled to a jump table, function pointers, recursion, sorting, strings and bit fields.
 * Its output must be byte-identical under qemu-ppc and recompiled by rpt. */
#include "rt.h"

static void line(const char *name, u32 v)
{
	rt_puts(name);
	rt_puts(" = ");
	rt_put_hex32(v);
	rt_puts(" ");
	rt_put_s32((s32)v);
	rt_nl();
}

/* Values the compiler cannot see through. */
static volatile u32 seeds[8] = { 0x12345678u, 0x9abcdef0u, 7u, 0xffffffffu, 0x80000000u, 3u, 0u, 100000u };

static u32 fnv(const unsigned char *p, u32 n)
{
	u32 h = 2166136261u;
	for (u32 i = 0; i < n; i++)
		h = (h ^ p[i]) * 16777619u;
	return h;
}

static u32 rotl(u32 x, u32 r)
{
	return (x << (r & 31)) | (x >> ((32 - r) & 31));
}

__attribute__((noinline)) static int classify(int x)
{
	switch (x) {
	case 0: return 11;
	case 1: return 23;
	case 2: return 37;
	case 3: return 41;
	case 4: return 59;
	case 5: return 67;
	case 6: return 73;
	case 7: return 89;
	default: return -1;
	}
}

typedef u32 (*binop)(u32, u32);
static u32 op_add(u32 a, u32 b) { return a + b; }
static u32 op_sub(u32 a, u32 b) { return a - b; }
static u32 op_mul(u32 a, u32 b) { return a * b; }
static u32 op_xor(u32 a, u32 b) { return a ^ b; }
static u32 op_rot(u32 a, u32 b) { return rotl(a, b); }
static binop ops[] = { op_add, op_sub, op_mul, op_xor, op_rot };

static u32 fib(u32 n)
{
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

static void sort(s32 *a, int n)
{
	for (int i = 1; i < n; i++) {
		s32 v = a[i];
		int j = i - 1;
		while (j >= 0 && a[j] > v) {
			a[j + 1] = a[j];
			j--;
		}
		a[j + 1] = v;
	}
}

struct packed {
	unsigned a : 3;
	unsigned b : 7;
	signed c : 5;
	unsigned d : 17;
};

static u64 mix64(u64 x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x;
}

int main(void)
{
	rt_puts("ppc integer sample\n");
	u32 a = seeds[0], b = seeds[1], c = seeds[2], m1 = seeds[3], min = seeds[4];

	line("add", a + b);
	line("sub", a - b);
	line("mul", a * b);
	line("mulhi", (u32)(((u64)a * b) >> 32));
	line("smulhi", (u32)(((s64)(s32)a * (s32)b) >> 32));
	line("udiv", b / c);
	line("sdiv", (u32)((s32)b / (s32)c));
	line("urem", b % c);
	line("srem", (u32)((s32)b % (s32)c));
	line("sdiv-neg", (u32)((s32)min / 3));
	line("shl", a << (c & 31));
	line("shr", b >> (c & 31));
	line("sar", (u32)((s32)b >> (c & 31)));
	line("rotl", rotl(a, 13));
	line("clz", (u32)__builtin_clz(c));
	line("popc", (u32)__builtin_popcount(a));
	line("bswap", __builtin_bswap32(a));
	line("sext8", (u32)(s32)(signed char)b);
	line("sext16", (u32)(s32)(short)b);
	line("lt", (s32)a < (s32)b);
	line("ltu", a < b);
	line("min", (s32)a < (s32)b ? a : b);
	line("abs", (u32)((s32)b < 0 ? -(s32)b : (s32)b));
	line("m1+1", m1 + 1);

	u64 x = ((u64)a << 32) | b;
	u64 y = ((u64)c << 32) | 12345;
	rt_puts("add64 = "); rt_put_hex64(x + y); rt_nl();
	rt_puts("mul64 = "); rt_put_hex64(x * y); rt_nl();
	rt_puts("div64 = "); rt_put_hex64(x / y); rt_nl();
	rt_puts("mod64 = "); rt_put_hex64(x % y); rt_nl();
	rt_puts("sdiv64 = "); rt_put_hex64((u64)((s64)x / (s64)(y | 1))); rt_nl();
	rt_puts("shift64 = "); rt_put_hex64(x >> (c + 20)); rt_nl();
	rt_puts("mix64 = "); rt_put_hex64(mix64(x)); rt_nl();
	rt_puts("dec64 = "); rt_put_u64(x); rt_nl();

	u32 acc = 0;
	for (int i = -3; i < 12; i++)
		acc = acc * 31 + (u32)classify(i);
	line("switch", acc);

	acc = 1;
	for (u32 i = 0; i < 20; i++)
		acc = ops[i % 5](acc, seeds[i % 8] + i);
	line("fnptr", acc);

	line("fib", fib(20 + (seeds[6] & 1)));

	s32 arr[16];
	for (int i = 0; i < 16; i++)
		arr[i] = (s32)(rotl(a, (u32)i) ^ (b * (u32)i));
	sort(arr, 16);
	acc = 0;
	for (int i = 0; i < 16; i++)
		acc = acc * 33 + (u32)arr[i];
	line("sort", acc);

	const char *text = "The quick brown fox jumps over the lazy dog";
	line("fnv", fnv((const unsigned char *)text, 43));

	struct packed p = { 0 };
	p.a = a;
	p.b = b;
	p.c = (s32)c - 20;
	p.d = a ^ b;
	line("bits", p.a * 1000000u + p.b * 1000u + (u32)(p.c + 16) + p.d);

	u32 *heap = rt_sbrk(64 * sizeof(u32));
	if (!heap) {
		rt_puts("sbrk failed\n");
		return 1;
	}
	for (u32 i = 0; i < 64; i++)
		heap[i] = rotl(a, i) + i * b;
	acc = 0;
	for (u32 i = 0; i < 64; i++)
		acc ^= heap[i] * (i + 1);
	line("heap", acc);

	/* Carries and overflows through long additions. */
	u32 lo = 0, hi = 0;
	for (u32 i = 0; i < 1000; i++) {
		u32 add = seeds[i % 8] * (i + 1);
		u32 nlo = lo + add;
		hi += (nlo < lo) + (add >> 31);
		lo = nlo;
	}
	line("carry-lo", lo);
	line("carry-hi", hi);
	rt_puts("done\n");
	return (int)(acc & 0x3f);
}
