/*
 * x87_fprem.c: a fixture for tests/msvcrt_samples.rs: fmodl, remainderl and remquol are mingw's own
 * x87 code (libmingwex), loops of fprem and fprem1 that read the quotient bits from C0, C3 and C1
 * and repeat while C2 says the reduction is partial. On AArch64 and LoongArch64 the software x87
 * unit runs them; every host must print what the native i386 build prints (glibc's versions are
 * the same instructions).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#ifdef _WIN32
#include <fcntl.h>
#include <io.h>
#endif

/* Exact: the 80 bits of the value, not a decimal rounding of them. */
static void show(const char *what, long double v)
{
    unsigned char b[10];
    memcpy(b, &v, sizeof b);
    printf("%s %02x%02x:%02x%02x%02x%02x%02x%02x%02x%02x\n", what, b[9], b[8], b[7], b[6], b[5], b[4], b[3],
           b[2], b[1], b[0]);
}

static volatile long double cases[][2] = {
    { 1e300L, 1.1L },         /* exponent difference far beyond 64: many partial steps */
    { 1e4000L, 3.0L },        /* beyond the double range */
    { -7.75L, 2.5L },         /* a negative dividend */
    { 7.5L, -2.5L },          /* an exact multiple */
    { 5.0L, 2.0L },           /* fprem1's tie to even */
    { 7.0L, 2.0L },           /* and the other way */
    { 0.75L, 1.0L },          /* above half the divisor */
    { 0.5L, 1.0L },           /* exactly half */
    { 1e-4940L, 3e-4942L },   /* denormals */
    { 123456789.0L, 1e-4900L }, /* a tiny divisor */
    { 0.0L, 3.0L },
    { 3.0L, 1e4000L },
};

int main(void)
{
#ifdef _WIN32
    _setmode(_fileno(stdout), _O_BINARY); /* "\n" line ends, as the native build prints */
#endif
    for (unsigned i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        long double a = cases[i][0], b = cases[i][1];
        int quo = 0;
        printf("case %u\n", i);
        show("  fmodl", fmodl(a, b));
        show("  remainderl", remainderl(a, b));
        show("  remquol", remquol(a, b, &quo));
        printf("  quotient bits %d\n", quo & 7);
    }
    return 0;
}
