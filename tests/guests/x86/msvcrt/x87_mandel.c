/*
 * x87_mandel.c: Mandelbrot iteration counts and orbit values, computed on the x87 (mingw's
 * default -m32 code generation), printed by msvcrt's printf (-D__USE_MINGW_ANSI_STDIO=0).
 *
 * mingw's start-up runs fninit, so the unit computes with 64-bit significands: the escape
 * iteration of points near the boundary, and the digits of the orbit values, depend on it.
 * The program prints counts as characters, a checksum of all counts, and a few orbit values
 * with 17 significant digits, so a difference in any rounding shows.
 */
#include <stdio.h>
#ifdef _WIN32
#include <fcntl.h>
#include <io.h>
#endif

#define WIDTH 72
#define HEIGHT 28
#define LIMIT 600

static int escape(double cr, double ci, double *last)
{
    double zr = 0.0, zi = 0.0;
    int n = 0;
    while (n < LIMIT && zr * zr + zi * zi <= 4.0) {
        double t = zr * zr - zi * zi + cr;
        zi = 2.0 * zr * zi + ci;
        zr = t;
        n++;
    }
    *last = zr * zr + zi * zi;
    return n;
}

int main(void)
{
#ifdef _WIN32
    _setmode(_fileno(stdout), _O_BINARY); /* "\n" line ends, as the native build prints */
#endif
    static const char shades[] = " .:-=+*#%@";
    unsigned long sum = 0, weighted = 0;
    double last = 0.0;
    for (int y = 0; y < HEIGHT; y++) {
        char line[WIDTH + 1];
        for (int x = 0; x < WIDTH; x++) {
            double cr = -2.2 + 3.0 * x / WIDTH;
            double ci = -1.2 + 2.4 * y / HEIGHT;
            int n = escape(cr, ci, &last);
            sum += (unsigned long)n;
            weighted = weighted * 31u + (unsigned long)n;
            line[x] = n >= LIMIT ? '@' : shades[n % 9];
        }
        line[WIDTH] = 0;
        printf("%s\n", line);
    }
    printf("sum=%lu weighted=%lu\n", sum, weighted);
    /* Points on the boundary's edge, where the orbit is long and chaotic. */
    static const double probes[][2] = {
        { -0.743643887037151, 0.131825904205330 },
        { -0.7436438870371, 0.1318259042053 },
        { 0.2500000000001, 0.0000001 },
        { -1.7548776662466927, 0.0 },
        { -0.1011, 0.9563 },
    };
    for (int i = 0; i < 5; i++) {
        int n = escape(probes[i][0], probes[i][1], &last);
        printf("probe %d: n=%d |z|^2=%.17g\n", i, n, last);
    }
    return 0;
}
