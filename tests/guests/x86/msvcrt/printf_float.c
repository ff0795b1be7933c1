/*
 * printf_float.c: msvcrt's printf formatting doubles (built with -D__USE_MINGW_ANSI_STDIO=0).
 *
 * The doubles are made from bit patterns by integer code (a xorshift generator and a table of
 * edge cases) and handed to printf as two 32-bit halves: on i386 a double argument is exactly
 * those two stack words, so printf reads the same value, and no x87 instruction is needed.
 *
 * msvcrt and glibc agree on every digit here but one thing: msvcrt writes at least three exponent
 * digits ("1e+005", glibc "1e+05"). The test compares with Wine byte for byte, and with the native
 * i386 build after widening its exponents to three digits; so %e and %g get no field width (the
 * padding would differ by that digit) and the character counts printf returns are not summed
 * over them. Values whose decimal expansion ends
 * exactly at a rounding position (ties, which msvcrt rounds away from zero and glibc to even) are
 * not printed at those precisions. stdout is binary on Windows, so line ends agree.
 */
#include <stdio.h>
#include <string.h>
#ifdef _WIN32
#include <fcntl.h>
#include <io.h>
#endif

typedef unsigned int u32;
typedef unsigned long long u64;

/* Calls printf(fmt, <the double with these bits>) and returns the length printed. The format is
 * not a literal, so the compiler does not check it against the two integer arguments. */
static int print_double(const char *fmt, u64 bits)
{
    return printf(fmt, (u32)bits, (u32)(bits >> 32));
}

/* The length printf returned, for the fixed-point formats only (see above). */
static unsigned count_fixed(const char *fmt, int printed)
{
    return fmt[strlen(fmt) - 2] == 'f' ? (unsigned)printed : 0;
}

static const char *const formats[] = {
    "[%e]", "[%.3e]", "[%.0e]", "[%.15e]", "[%E]", "[%+.7e]", "[%g]", "[%.1g]", "[%.10g]", "[%.17g]", "[%#g]",
    "[%G]", "[% g]", "[%f]", "[%.1f]", "[%.3f]", "[%12.2f]", "[%-12.4f]", "[%+.0f]",
};

static const u64 edges[] = {
    0x0000000000000000ull, /* 0 */
    0x8000000000000000ull, /* -0 */
    0x3ff0000000000000ull, /* 1 */
    0x3fb999999999999aull, /* 0.1 */
    0x3fd5555555555555ull, /* 1/3 */
    0x400921fb54442d18ull, /* pi */
    0x4005bf0a8b145769ull, /* e */
    0xc058ff5c28f5c28full, /* -99.99 */
    0x7fefffffffffffffull, /* the largest double */
    0x0010000000000000ull, /* the smallest normal */
    0x0000000000000001ull, /* the smallest subnormal */
    0x000fffffffffffffull, /* the largest subnormal */
    0x44b52d02c7e14af6ull, /* 1e23, which is not exactly representable */
    0x3e112e0be826d695ull, /* 1e-9 */
    0x408f3f3333333333ull, /* 999.9: %.1g rounds it up to 1e+003 (not %#g: glibc gets that one wrong) */
    0x43e0000000000000ull, /* 2^63 */
};

static u64 state = 0x243f6a8885a308d3ull;

static u64 next(void)
{
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
}

/* A random double with a binary exponent in [-70, 30] and all 52 fraction bits random, the last
 * one set: it has at least 22 digits after the decimal point and 20 significant ones, more than
 * any precision printed, so no rounding is a tie. */
static u64 random_double(void)
{
    u64 r = next();
    u64 exponent = 1023 - 70 + (next() % 101);
    return (r & 0x800fffffffffffffull) | (exponent << 52) | 1;
}

int main(void)
{
#ifdef _WIN32
    _setmode(_fileno(stdout), _O_BINARY);
#endif
    unsigned total = 0;
    printf("rpt msvcrt printf sample\n");
    for (unsigned i = 0; i < sizeof edges / sizeof edges[0]; i++) {
        printf("edge %2u:", i);
        for (unsigned f = 0; f < sizeof formats / sizeof formats[0]; f++) {
            /* %f of the largest double is 309 digits; print it once, below. */
            if (i == 8 && formats[f][strlen(formats[f]) - 2] == 'f')
                continue;
            total += count_fixed(formats[f], print_double(formats[f], edges[i]));
        }
        printf("\n");
    }
    total += (unsigned)print_double("max: %.0f\n", edges[8]);
    print_double("tiny: %.40e\n", edges[10]);
    /* Every digit of the longest expansions: 2^-1074 has 751 significant digits, 1074 after the point. */
    print_double("long: %.1080f\n", edges[10]);
    print_double("long: %.760e\n", edges[10]);
    print_double("long: %.800g\n", edges[3]);
    printf("long: [%.300d][%-310.300x|]\n", -42, 255u);
    for (unsigned i = 0; i < 120; i++) {
        u64 d = random_double();
        printf("rand %3u:", i);
        for (unsigned f = 0; f < sizeof formats / sizeof formats[0]; f++)
            total += count_fixed(formats[f], print_double(formats[f], d));
        printf("\n");
    }
    printf("done characters=%u\n", total);
    return 0;
}
