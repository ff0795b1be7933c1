/* bench.h - what the benchmark programs need from their environment, for every build of them:
 * a mingw PE linked against msvcrt.dll, a native i386 or x86-64 Linux program, and a freestanding
 * PowerPC ELF (tests/guests/ppc/rt.c) whose DOL rpt recompiles. Each program reads its workload
 * size as a decimal number on standard input (so one binary serves a quick test and the full
 * benchmark) and prints one line per result, ending with a checksum line. */
#ifndef BENCH_H
#define BENCH_H

#if defined(__PPC__) || defined(__powerpc__)
#include "../ppc/rt.h"

static inline u32 bench_read(char *buf, u32 len)
{
	long n = rt_syscall3(3, 0, (long)buf, (long)len);
	return n > 0 ? (u32)n : 0;
}

static inline void bench_line(const char *name, u32 value)
{
	rt_puts(name);
	rt_puts(" ");
	rt_put_hex32(value);
	rt_nl();
}
#else
#include <stdio.h>
#include <string.h>
typedef unsigned int u32;
typedef int s32;
typedef unsigned long long u64;
typedef long long s64;

static inline u32 bench_read(char *buf, u32 len)
{
	return (u32)fread(buf, 1, len, stdin);
}

static inline void bench_line(const char *name, u32 value)
{
	printf("%s %08x\n", name, value);
}
#endif

/* The workload size from standard input: its leading decimal digits, or `fallback` if there are none. */
static inline u32 bench_scale(u32 fallback)
{
	char buf[16];
	u32 n = bench_read(buf, sizeof buf);
	u32 v = 0, digits = 0;
	for (u32 i = 0; i < n && buf[i] >= '0' && buf[i] <= '9'; i++, digits++)
		v = v * 10 + (u32)(buf[i] - '0');
	return digits ? v : fallback;
}

/* A small, fast generator (xorshift32) so every build sees the same data. */
static u32 bench_rng_state __attribute__((unused)) = 2463534242u;

static inline u32 bench_rand(void)
{
	u32 x = bench_rng_state;
	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	return bench_rng_state = x;
}

/* FNV-1a over a value's four bytes, little-endian order on every guest so checksums agree. */
static inline u32 bench_mix(u32 h, u32 v)
{
	for (int i = 0; i < 4; i++) {
		h ^= (v >> (8 * i)) & 0xff;
		h *= 0x01000193u;
	}
	return h;
}

#endif
