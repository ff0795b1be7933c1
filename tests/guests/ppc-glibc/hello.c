/*
 * hello.c - a real static-glibc program for the PowerPC DOL guest: glibc's own start-up (TLS,
 * auxiliary vector, IRELATIVE resolvers picking string functions by AT_HWCAP), stdio through
 * printf (integers, strings, floating point, positional arguments, wide strings), snprintf,
 * malloc/realloc/free, string functions, qsort, getenv, its arguments and a switch gcc compiles
 * to a jump table. It prints the same bytes under qemu-ppc -cpu 750cl and through rpt, and exits
 * with the same status (44).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

/* noinline keeps the switch a jump table of its own rather than folded into the caller. */
static __attribute__((noinline)) const char *opname(unsigned op)
{
	switch (op) {
	case 0: return "nop";
	case 1: return "load";
	case 2: return "store";
	case 3: return "add";
	case 4: return "sub";
	case 5: return "mul";
	case 6: return "div";
	case 7: return "jump";
	case 8: return "call";
	case 9: return "ret";
	case 10: return "halt";
	default: return "?";
	}
}

static __attribute__((noinline)) int step(unsigned op, int acc, int x)
{
	switch (op) {
	case 0: return acc;
	case 1: return x;
	case 2: return acc ^ x;
	case 3: return acc + x;
	case 4: return acc - x;
	case 5: return acc * x;
	case 6: return x ? acc / x : 0;
	case 7: return acc << (x & 7);
	case 8: return acc >> (x & 7);
	case 9: return -acc;
	default: return acc | 1;
	}
}

static int by_value(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

static int by_string(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int main(int argc, char **argv)
{
	printf("hello from glibc on a 750: argc=%d\n", argc);
	printf("ints: %d %u %x %o %ld %lld %5d|%-5d|%05d\n", -42, 42u, 0xbeef, 8, -123456789L, -1234567890123LL, 7, 7,
	       7);
	printf("strings: [%s] [%10s] [%-10s] [%.3s] %c\n", "ppc", "right", "left", "truncated", 'Z');

	/* malloc, realloc and free: a growing array of squares. */
	int *v = NULL;
	size_t n = 0;
	for (int i = 1; i <= 300; i++) {
		if ((n & (n - 1)) == 0) {
			int *w = realloc(v, (n ? 2 * n : 1) * sizeof *v);
			if (!w)
				return 1;
			v = w;
		}
		v[n++] = (i * 7919) % 1000 - 500;
	}
	qsort(v, n, sizeof *v, by_value);
	long sum = 0;
	for (size_t i = 0; i < n; i++)
		sum += v[i] * (long)(i + 1);
	printf("sorted %zu: first %d last %d weighted sum %ld\n", n, v[0], v[n - 1], sum);
	free(v);

	/* String functions. */
	char *buf = malloc(256);
	if (!buf)
		return 1;
	strcpy(buf, "The quick brown fox");
	strcat(buf, " jumps over the lazy dog");
	char copy[64];
	memcpy(copy, buf, strlen(buf) + 1);
	memmove(copy + 4, copy, 9);
	printf("strlen=%zu strcmp=%d memcmp=%d strchr=%s\n", strlen(buf), strcmp(buf, copy) > 0,
	       memcmp(buf, "The", 3), strchr(buf, 'f'));
	printf("moved: %s\n", copy);
	const char *words[] = {"pear", "apple", "fig", "banana", "cherry", "date", "elderberry", "grape"};
	qsort(words, sizeof words / sizeof *words, sizeof *words, by_string);
	for (size_t i = 0; i < sizeof words / sizeof *words; i++)
		printf("%s%s", i ? "," : "words: ", words[i]);
	putchar('\n');
	free(buf);

	/* A switch compiled to a jump table, driven by data. */
	int acc = 1;
	for (unsigned i = 0; i < 40; i++) {
		unsigned op = (i * 5 + 3) % 12;
		acc = step(op, acc, (int)i + 1);
		if (i % 8 == 0)
			printf("%s(%d) -> %d\n", opname(op), (int)i + 1, acc);
	}
	printf("acc=%d\n", acc);

	/* Floating point through printf's own conversions, and snprintf into a buffer. */
	double d = 3.14159265358979;
	printf("floats: %f %e %g %.2f %10.3e|%-8g|\n", d, d * 1e10, d / 1e5, d, -d, 0.5);
	printf("more: %p %% %5.1s %hhd %hd %lu %#x %#o %+d % d %*d|%.*f\n", (void *)0x1234, "xyz", 300, 70000,
	       123456789UL, 255, 8, 5, 7, 6, 42, 3, 2.5);
	char line[64];
	int len = snprintf(line, sizeof line, "%s-%d-%c", "snp", 99, 'q');
	printf("snprintf: %s %d\n", line, len);
	/* Positional arguments go through glibc's printf_positional, wide strings through its wide conversions. */
	printf("positional: %2$s %1$d %3$5.2f\n", 5, "second", 2.5);
	printf("wide: %ls %lc; long double: %La\n", L"wide", (wint_t)L'w', 1.0L);

	const char *value = getenv("RPT_GLIBC_NO_SUCH_VARIABLE");
	printf("getenv: %s\n", value ? value : "(unset)");
	/* argv[0] is the host's path to the program, which differs between qemu and rpt. */
	printf("argv[0] given: %s\n", argc > 0 && argv[0] && argv[0][0] ? "yes" : "no");
	for (int i = 1; i < argc; i++)
		printf("argv[%d] = \"%s\" (%zu bytes)\n", i, argv[i], strlen(argv[i]));
	fflush(stdout);
	/* A status of its own, so a test sees it come through. */
	return (int)(n % 64) + (acc & 7);
}
