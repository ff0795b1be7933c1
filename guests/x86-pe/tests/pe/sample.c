/*
 * sample.c - a small freestanding console program for the PE tests (tests/pe.rs).
 *
 * Built twice: with mingw as a PE (the guest), and with `gcc -m32 -DNATIVE` as a Linux program
 * whose output is the reference the lifted PE must reproduce in the IR interpreter. It uses
 * what gcc -O2 emits for ordinary integer C: a dense switch (a jump table), recursion, function
 * pointers in read-only data, 64-bit arithmetic, division, byte loops, and an export.
 */
#ifdef NATIVE
#include <stdlib.h>
#include <unistd.h>
#define WINAPI __attribute__((stdcall))
#define EXPORT
static void *WINAPI GetStdHandle(unsigned long which)
{
	return (void *)(unsigned long)which;
}
static int WINAPI WriteFile(void *h, const void *buf, unsigned long n, unsigned long *written, void *ov)
{
	(void)h;
	(void)ov;
	if (write(1, buf, n) != (long)n)
		return 0;
	if (written)
		*written = n;
	return 1;
}
static void WINAPI ExitProcess(unsigned code)
{
	exit((int)code);
}
#else
#define WINAPI __attribute__((stdcall))
#define EXPORT __declspec(dllexport)
__declspec(dllimport) void *WINAPI GetStdHandle(unsigned long which);
__declspec(dllimport) int WINAPI WriteFile(void *h, const void *buf, unsigned long n, unsigned long *written, void *ov);
__declspec(dllimport) __attribute__((noreturn)) void WINAPI ExitProcess(unsigned code);
#endif

static void *out;

static void put(const char *s, unsigned long n)
{
	unsigned long written;
	WriteFile(out, s, n, &written, 0);
}

static void put_hex(const char *label, unsigned v)
{
	char buf[32];
	unsigned n = 0;
	while (label[n]) {
		buf[n] = label[n];
		n++;
	}
	buf[n++] = '=';
	for (int i = 7; i >= 0; i--)
		buf[n++] = "0123456789abcdef"[(v >> (4 * i)) & 15];
	buf[n++] = '\n';
	put(buf, n);
}

__attribute__((noinline)) static unsigned op(unsigned which, unsigned a, unsigned b)
{
	switch (which) {
	case 0: return a + b;
	case 1: return a - b;
	case 2: return a * b;
	case 3: return a ^ (b << 3);
	case 4: return a << (b & 31);
	case 5: return a >> (b & 31);
	case 6: return b ? a / b : 7;
	case 7: return a | (b >> 2);
	case 8: return (a & 0xff) * 3 + b;
	case 9: return (unsigned)((int)a >> (b & 31));
	default: return 0xdead;
	}
}

__attribute__((noinline)) static unsigned fib(unsigned n)
{
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

__attribute__((noinline)) static unsigned twice(unsigned x) { return x * 2 + 1; }
__attribute__((noinline)) static unsigned rotl5(unsigned x) { return (x << 5) | (x >> 27); }
__attribute__((noinline)) static unsigned negate(unsigned x) { return -x ^ 0x5a5a5a5a; }

/* Reached only through this table: discovery must find them as address-taken functions. */
static unsigned (*const transforms[])(unsigned) = { twice, rotl5, negate };

__attribute__((noinline)) static unsigned long long mix64(unsigned long long a, unsigned long long b)
{
	a ^= a << 13;
	a += b * 0x9e3779b97f4a7c15ull;
	return a ^ (a >> 29);
}

__attribute__((noinline)) static int sdiv(int a, int b)
{
	return b ? a / b + a % b : 0;
}

__attribute__((noinline)) static unsigned checksum(const unsigned char *p, unsigned n)
{
	unsigned h = 2166136261u;
	for (unsigned i = 0; i < n; i++)
		h = (h ^ p[i]) * 16777619u;
	return h;
}

/* Exported and never called: discovery must start from the export table too. */
EXPORT unsigned sample_version(unsigned x)
{
	return x * 0x0102u + 3;
}

void WINAPI start(void)
{
	out = GetStdHandle((unsigned long)-11);
	unsigned acc = 1;
	for (unsigned i = 0; i < 40; i++)
		acc = op(i % 11, acc, i * 2654435761u) + i;
	put_hex("switch", acc);
	put_hex("fib", fib(20));
	unsigned t = 12345;
	for (unsigned i = 0; i < 9; i++)
		t = transforms[i % 3](t);
	put_hex("pointers", t);
	unsigned long long m = mix64(0x0123456789abcdefull, acc);
	put_hex("mix-lo", (unsigned)m);
	put_hex("mix-hi", (unsigned)(m >> 32));
	put_hex("div", (unsigned)(sdiv(-1000003, 37) + sdiv(77777, -13) + sdiv((int)acc, 1 + (int)(acc & 15))));
	unsigned char bytes[64];
	for (unsigned i = 0; i < sizeof bytes; i++)
		bytes[i] = (unsigned char)(i * 7 + acc);
	put_hex("bytes", checksum(bytes, sizeof bytes));
	ExitProcess(acc & 0x7f);
}

#ifdef NATIVE
int main(void)
{
	start();
	return 0;
}
#endif
