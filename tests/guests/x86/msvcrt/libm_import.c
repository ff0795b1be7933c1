/* Calls msvcrt's own math functions, the ones a host needs a math library for, and prints their
 * results. mingw-w64 normally links its own sin, floor, ... (x87 code from libmingwex) instead of
 * importing msvcrt's, so the PE reaches msvcrt.dll's through their import address table slots
 * (`__imp__sin`); the native oracle calls glibc's.
 * tests/msvcrt_samples.rs recompiles it for every host: x86-64 and AArch64 compute these with
 * glibc, LoongArch64 (no C library) with the software x87 unit's 128-bit float; all must print
 * the native build's digits. */
#include <stdio.h>

#ifdef _WIN32
/* The IAT slots libmsvcrt.a defines: `_imp__sin` in C is the symbol `__imp__sin`. */
#define MSVCRT(name) (*_imp__##name)
extern double (*_imp__sin)(double), (*_imp__cos)(double), (*_imp__tan)(double), (*_imp__asin)(double),
    (*_imp__acos)(double), (*_imp__atan)(double), (*_imp__atan2)(double, double), (*_imp__sinh)(double),
    (*_imp__cosh)(double), (*_imp__tanh)(double), (*_imp__exp)(double), (*_imp__log)(double),
    (*_imp__log10)(double), (*_imp__pow)(double, double), (*_imp__fmod)(double, double),
    (*_imp___hypot)(double, double), (*_imp__floor)(double), (*_imp__ceil)(double),
    (*_imp__ldexp)(double, int), (*_imp__frexp)(double, int *), (*_imp__modf)(double, double *);
#else
#include <math.h>
#define MSVCRT(name) name
#define _hypot hypot
#endif

int main(void)
{
    static const double xs[] = { 0.5, 1.0, -2.25, 3.0, 0.1, 100.0, 1e-8, -0.75 };
    for (unsigned i = 0; i < sizeof xs / sizeof xs[0]; i++) {
        double x = xs[i];
        printf("x=%g sin %.17g cos %.17g tan %.17g atan %.17g\n", x, MSVCRT(sin)(x), MSVCRT(cos)(x),
               MSVCRT(tan)(x), MSVCRT(atan)(x));
        printf("  exp %.17g sinh %.15g cosh %.15g tanh %.15g\n", MSVCRT(exp)(x), MSVCRT(sinh)(x),
               MSVCRT(cosh)(x), MSVCRT(tanh)(x));
        double a = x > 1.0 || x < -1.0 ? 1.0 / x : x;
        printf("  asin %.17g acos %.17g atan2 %.17g pow %.17g\n", MSVCRT(asin)(a), MSVCRT(acos)(a),
               MSVCRT(atan2)(x, 0.3), MSVCRT(pow)(x < 0 ? -x : x, 1.7));
        if (x > 0)
            printf("  log %.17g log10 %.17g\n", MSVCRT(log)(x), MSVCRT(log10)(x));
        int e = 0;
        double whole = 0;
        double m = MSVCRT(frexp)(x * 1000.0, &e);
        double frac = MSVCRT(modf)(x * 7.0, &whole);
        printf("  floor %g ceil %g fmod %.17g hypot %.17g ldexp %.17g frexp %.17g %d modf %.17g %g\n",
               MSVCRT(floor)(x * 3.5), MSVCRT(ceil)(x * 3.5), MSVCRT(fmod)(x * 1000.0, 0.7),
               MSVCRT(_hypot)(x, 2.5), MSVCRT(ldexp)(x, 40), m, e, frac, whole);
    }
    printf("pow(10, 3) %.17g log10(1000) %.17g pow(-2, 3) %.17g\n", MSVCRT(pow)(10.0, 3.0),
           MSVCRT(log10)(1000.0), MSVCRT(pow)(-2.0, 3.0));
    return 0;
}
