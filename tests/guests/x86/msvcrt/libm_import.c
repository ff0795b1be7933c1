/* Imports two of msvcrt's math functions that need a C math library, sin and floor, without doing
 * any floating point itself (the x86 lifter has no x87 yet). mingw-w64 normally links its own sin
 * and floor (x87 code from libmingwex) instead of importing msvcrt's, so this program reaches
 * msvcrt.dll's through their import address table slots (`__imp__sin`), typed to take a double's
 * two 32-bit halves; each result is left in st(0).
 * tests/msvcrt_samples.rs recompiles it for the LoongArch64 host, which has no math library, and
 * expects the link to fail naming exactly these two imports. */
#include <stdio.h>

typedef void (*halves_fn)(unsigned lo, unsigned hi);

/* The IAT slots libmsvcrt.a defines: `_imp__sin` in C is the symbol `__imp__sin`. */
extern halves_fn _imp__sin;
extern halves_fn _imp__floor;

int main(void)
{
    _imp__sin(0, 0x3ff00000u); /* sin(1.0) */
    _imp__floor(0, 0x3ff80000u); /* floor(1.5) */
    printf("called\n");
    return 0;
}
