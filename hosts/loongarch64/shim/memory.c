/*
 * memory.c - memcpy, memmove, memset and memcmp, which the compiler may call even in freestanding
 * code (for struct copies and large __builtin_memcpy calls), so a host without a C library must
 * define them.
 *
 * Built with -ffreestanding, which keeps the compiler from turning these loops back into calls to
 * themselves. Aligned blocks move eight bytes at a time: start-up copies the whole guest image.
 */
#include <stddef.h>
#include <stdint.h>

void *memcpy(void *restrict dst, const void *restrict src, size_t n);
void *memmove(void *dst, const void *src, size_t n);
void *memset(void *dst, int c, size_t n);
int memcmp(const void *a, const void *b, size_t n);

static int rpt_la64_both_aligned(const void *a, const void *b)
{
	return (((uintptr_t)a | (uintptr_t)b) & 7u) == 0;
}

void *memcpy(void *restrict dst, const void *restrict src, size_t n)
{
	uint8_t *d = dst;
	const uint8_t *s = src;
	if (rpt_la64_both_aligned(d, s)) {
		for (; n >= 8; n -= 8, d += 8, s += 8)
			*(uint64_t *)(void *)d = *(const uint64_t *)(const void *)s;
	}
	for (; n > 0; n--)
		*d++ = *s++;
	return dst;
}

void *memmove(void *dst, const void *src, size_t n)
{
	uint8_t *d = dst;
	const uint8_t *s = src;
	if (d == s || n == 0)
		return dst;
	if (d < s || d >= s + n)
		return memcpy(dst, src, n);
	/* Overlapping with the destination above the source: copy backwards. */
	while (n > 0) {
		n--;
		d[n] = s[n];
	}
	return dst;
}

void *memset(void *dst, int c, size_t n)
{
	uint8_t *d = dst;
	uint8_t byte = (uint8_t)c;
	if (((uintptr_t)d & 7u) == 0) {
		uint64_t word = byte * UINT64_C(0x0101010101010101);
		for (; n >= 8; n -= 8, d += 8)
			*(uint64_t *)(void *)d = word;
	}
	for (; n > 0; n--)
		*d++ = byte;
	return dst;
}

int memcmp(const void *a, const void *b, size_t n)
{
	const uint8_t *x = a;
	const uint8_t *y = b;
	for (size_t i = 0; i < n; i++)
		if (x[i] != y[i])
			return x[i] < y[i] ? -1 : 1;
	return 0;
}
