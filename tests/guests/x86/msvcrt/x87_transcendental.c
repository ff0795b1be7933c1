/*
 * x87_transcendental.c: a fixture for tests/msvcrt_samples.rs: mingw's long double math (libmingwex)
 * is x87 code built on the transcendental instructions: sinl, cosl and tanl are fsin, fcos and
 * fptan (with fprem1 reducing large arguments), atan2l and atanl fpatan, expl, exp2l and powl
 * f2xm1 with fscale, logl, log2l and log10l fyl2x, log1pl fyl2xp1. On AArch64 and LoongArch64 the
 * software x87 unit runs them. glibc's i386 versions are built on the same instructions, so every
 * host must print what the native i386 build prints: the values rounded to 13 significant digits,
 * as a game would use them, far above the last bits in which two x87 units or two libraries may
 * differ. A rotation applied 10,000 times and a compound-interest loop show that errors do not
 * build up.
 */
#include <math.h>
#include <stdio.h>
#ifdef _WIN32
#include <fcntl.h>
#include <io.h>
#endif

static void show(const char *what, int i, long double v)
{
    printf("%-6s %3d % .12e\n", what, i, (double)v);
}

int main(void)
{
#ifdef _WIN32
    _setmode(1, _O_BINARY);
#endif
    for (int i = -12; i <= 12; i++) {
        long double a = i * 0.61L;
        show("sin", i, sinl(a));
        show("cos", i, cosl(a));
        show("tan", i, tanl(a));
        show("atan2", i, atan2l(a, 2.0L - 0.3L * a));
        show("atan", i, atanl(a * a * a));
    }
    /* Large arguments: reduced modulo pi/2 by fprem1 first. */
    for (int i = 1; i <= 8; i++) {
        long double a = i * 1234.5678L;
        show("sinbig", i, sinl(a));
        show("cosbig", i, cosl(a));
    }
    for (int i = 1; i <= 16; i++) {
        long double x = i * 0.77L;
        show("exp", i, expl(x));
        show("exp2", i, exp2l(-x));
        show("log", i, logl(x));
        show("log2", i, log2l(x * 3.0L));
        show("log10", i, log10l(x * 1000.0L));
        show("log1p", i, log1pl(x / 64.0L));
        show("pow", i, powl(x, 1.0L / 3.0L));
        show("pow2", i, powl(1.5L, x));
    }
    /* A point rotated by a small angle 10,000 times, with a fresh sine and cosine each step. */
    long double px = 1.0L, py = 0.0L;
    for (int k = 0; k < 10000; k++) {
        long double t = 0.001L * (k % 7 + 1);
        long double s = sinl(t), c = cosl(t);
        long double nx = px * c - py * s;
        py = px * s + py * c;
        px = nx;
    }
    show("rot-x", 0, px);
    show("rot-y", 0, py);
    show("radius", 0, sqrtl(px * px + py * py));
    long double money = 100.0L;
    for (int year = 0; year < 40; year++)
        money *= expl(0.05L) * powl(1.001L, 12.0L);
    show("money", 40, money);
    return 0;
}
