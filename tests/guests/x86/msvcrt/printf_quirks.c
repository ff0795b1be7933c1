/*
 * printf_quirks.c: msvcrt printf behaviour that glibc does not share, checked against Wine only
 * (built with -D__USE_MINGW_ANSI_STDIO=0, so printf is msvcrt's).
 *
 * Exact ties round away from zero, infinities and NaNs print as "1.#INF" and friends, %p is eight
 * upper-case digits, the 0 flag pads strings and survives a precision, hh means h, an unknown
 * conversion prints its letter, and _snprintf reports truncation with -1. (Left-justified
 * infinities and NaNs are left out: msvcrt pads their digits in a way rpt does not copy.)
 * Doubles are passed as
 * their two 32-bit halves (see printf_float.c). There is no native oracle: glibc prints all of
 * these differently, on purpose. stdout is binary mode.
 */
#include <stdio.h>
#include <string.h>
#include <fcntl.h>
#include <io.h>

/* The formats below are meant to be ones gcc's format checker finds odd. */
#pragma GCC diagnostic ignored "-Wformat"
#pragma GCC diagnostic ignored "-Wformat-extra-args"

typedef unsigned int u32;
typedef unsigned long long u64;

static void print_double(const char *fmt, u64 bits)
{
    printf(fmt, (u32)bits, (u32)(bits >> 32));
}

int main(void)
{
    _setmode(_fileno(stdout), _O_BINARY);
    static const u64 ties[] = {
        0x3fc0000000000000ull, /* 0.125 */
        0x3fd8000000000000ull, /* 0.375 */
        0x3fe0000000000000ull, /* 0.5 */
        0x3ff8000000000000ull, /* 1.5 */
        0x4004000000000000ull, /* 2.5 */
        0xc004000000000000ull, /* -2.5 */
        0x408f3c0000000000ull, /* 999.5 */
    };
    for (unsigned i = 0; i < sizeof ties / sizeof ties[0]; i++) {
        print_double("tie: [%.0f]", ties[i]);
        print_double("[%.1f]", ties[i]);
        print_double("[%.2f]", ties[i]);
        print_double("[%.0e]", ties[i]);
        print_double("[%.1e]", ties[i]);
        print_double("[%.3g]\n", ties[i]);
    }
    static const u64 specials[] = {
        0x7ff0000000000000ull, /* +inf */
        0xfff0000000000000ull, /* -inf */
        0x7ff8000000000000ull, /* quiet NaN */
        0xfff8000000000000ull, /* the default NaN of x87 arithmetic */
        0xfff8000000000001ull,
    };
    static const char *const special_formats[] = { "[%f]", "[%e]", "[%g]", "[%.0f]", "[%.1f]", "[%.2f]",
                                                   "[%.3e]", "[%10.4g]", "[%+f]", "[%E]", "[%#g]" };
    for (unsigned i = 0; i < sizeof specials / sizeof specials[0]; i++) {
        printf("special:");
        for (unsigned f = 0; f < sizeof special_formats / sizeof special_formats[0]; f++)
            print_double(special_formats[f], specials[i]);
        printf("\n");
    }
    print_double("hex: [%a]", 0x3fb999999999999aull);
    print_double("[%A]", 0xbfb999999999999aull);
    print_double("[%.3a]", 0x3ff0000000000000ull);
    print_double("[%.0a]", 0x3ff8000000000000ull);
    print_double("[%a]", 0x0000000000001000ull);
    print_double("[%a]\n", 0x0000000000000000ull);
    printf("ints: [%p][%#p][%05s][%08.3d][%#.0o][%#.3o][%.0d][%hhd][%hhu][%+u][%-05d|][% 05d]\n", (void *)0xabcdef,
           (void *)0xab, "ab", 42, 0, 8, 0, 0x1ff, 0x1ff, 5, 3, 3);
    printf("sizes: [%I64d][%I64x][%I32d][%Id][%lld][%jd]", -5LL, 0xfedcba9876543210ULL, 7, 8, -9LL, 10LL);
    print_double("[%Lf]\n", 0x4000000000000000ull); /* long double is double in msvcrt */
    printf("unknown: [%y][%k][%F]\n", 1, 2);
    printf("wide: [%S][%ls][%hs][%C][%lc][%ws]\n", L"wide", L"ls", "hs", (int)L'W', (int)L'L', L"ws");
    char buf[16];
    memset(buf, '*', sizeof buf);
    int n = _snprintf(buf, 5, "%d", 123456);
    printf("snprintf: %d [%.8s]", n, buf);
    memset(buf, '*', sizeof buf);
    n = _snprintf(buf, 6, "%d", 123456);
    printf(" %d [%.8s]", n, buf);
    memset(buf, '*', sizeof buf);
    n = _snprintf(buf, 8, "%d", 123456);
    printf(" %d [%s]\n", n, buf);
    int count = 0;
    printf("count: abc%n", &count);
    printf(" %d, scprintf=%d\n", count, _scprintf("%05d|%s", 42, "xyz"));
    return 0;
}
