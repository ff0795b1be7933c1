/*
 * x87_physics.c: n-body integration, a matrix product and an FFT, computed on the x87 (mingw's
 * default -m32 code) and printed by mingw's own printf (built without -D__USE_MINGW_ANSI_STDIO=0,
 * so the formatting code is guest code too, and it runs on the x87 as well).
 *
 * No libm: square roots are the fsqrt instruction (__builtin_sqrt with -fno-math-errno), the
 * FFT's twiddle factors come from a recurrence, so every operation is one the lifter models
 * and the three runs (rpt, Wine, the native i386 build) can agree to the last bit.
 */
#include <stdio.h>
#ifdef _WIN32
#include <fcntl.h>
#include <io.h>
#endif

/* ---------------------------------------------------------------- n-body */

struct body {
    double x, y, z, vx, vy, vz, mass;
};

#define PI 3.141592653589793
#define SOLAR_MASS (4 * PI * PI)
#define DAYS_PER_YEAR 365.24

static struct body bodies[5] = {
    { 0, 0, 0, 0, 0, 0, SOLAR_MASS },
    { 4.84143144246472090e+00, -1.16032004402742839e+00, -1.03622044471123109e-01,
      1.66007664274403694e-03 * DAYS_PER_YEAR, 7.69901118419740425e-03 * DAYS_PER_YEAR,
      -6.90460016972063023e-05 * DAYS_PER_YEAR, 9.54791938424326609e-04 * SOLAR_MASS },
    { 8.34336671824457987e+00, 4.12479856412430479e+00, -4.03523417114321381e-01,
      -2.76742510726862411e-03 * DAYS_PER_YEAR, 4.99852801234917238e-03 * DAYS_PER_YEAR,
      2.30417297573763929e-05 * DAYS_PER_YEAR, 2.85885980666130812e-04 * SOLAR_MASS },
    { 1.28943695621391310e+01, -1.51111514016986312e+01, -2.23307578892655734e-01,
      2.96460137564761618e-03 * DAYS_PER_YEAR, 2.37847173959480950e-03 * DAYS_PER_YEAR,
      -2.96589568540237556e-05 * DAYS_PER_YEAR, 4.36624404335156298e-05 * SOLAR_MASS },
    { 1.53796971148509165e+01, -2.59193146099879641e+01, 1.79258772950371181e-01,
      2.68067772490389322e-03 * DAYS_PER_YEAR, 1.62824170038242295e-03 * DAYS_PER_YEAR,
      -9.51592254519715870e-05 * DAYS_PER_YEAR, 5.15138902046611451e-05 * SOLAR_MASS },
};

static double energy(void)
{
    double e = 0.0;
    for (int i = 0; i < 5; i++) {
        struct body *b = &bodies[i];
        e += 0.5 * b->mass * (b->vx * b->vx + b->vy * b->vy + b->vz * b->vz);
        for (int j = i + 1; j < 5; j++) {
            struct body *c = &bodies[j];
            double dx = b->x - c->x, dy = b->y - c->y, dz = b->z - c->z;
            e -= b->mass * c->mass / __builtin_sqrt(dx * dx + dy * dy + dz * dz);
        }
    }
    return e;
}

static void advance(double dt)
{
    for (int i = 0; i < 5; i++) {
        struct body *b = &bodies[i];
        for (int j = i + 1; j < 5; j++) {
            struct body *c = &bodies[j];
            double dx = b->x - c->x, dy = b->y - c->y, dz = b->z - c->z;
            double d2 = dx * dx + dy * dy + dz * dz;
            double mag = dt / (d2 * __builtin_sqrt(d2));
            b->vx -= dx * c->mass * mag;
            b->vy -= dy * c->mass * mag;
            b->vz -= dz * c->mass * mag;
            c->vx += dx * b->mass * mag;
            c->vy += dy * b->mass * mag;
            c->vz += dz * b->mass * mag;
        }
    }
    for (int i = 0; i < 5; i++) {
        bodies[i].x += dt * bodies[i].vx;
        bodies[i].y += dt * bodies[i].vy;
        bodies[i].z += dt * bodies[i].vz;
    }
}

static void nbody(void)
{
    double px = 0, py = 0, pz = 0;
    for (int i = 0; i < 5; i++) {
        px += bodies[i].vx * bodies[i].mass;
        py += bodies[i].vy * bodies[i].mass;
        pz += bodies[i].vz * bodies[i].mass;
    }
    bodies[0].vx = -px / SOLAR_MASS;
    bodies[0].vy = -py / SOLAR_MASS;
    bodies[0].vz = -pz / SOLAR_MASS;
    printf("nbody: energy before %.17g\n", energy());
    for (int step = 0; step < 20000; step++)
        advance(0.01);
    printf("nbody: energy after  %.17g\n", energy());
    printf("nbody: jupiter at %.17g %.17g %.17g\n", bodies[1].x, bodies[1].y, bodies[1].z);
}

/* ---------------------------------------------------------------- matrix product */

#define N 24

static void matrix(void)
{
    static double a[N][N], b[N][N], c[N][N];
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            a[i][j] = (double)(i * N + j + 1) / (double)(i + 2 * j + 3);
            b[i][j] = (double)((i * 7 + j * 13) % 17) / 7.0 - 1.1;
        }
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            double s = 0.0;
            for (int k = 0; k < N; k++)
                s += a[i][k] * b[k][j];
            c[i][j] = s;
        }
    double trace = 0.0, norm = 0.0;
    for (int i = 0; i < N; i++) {
        trace += c[i][i];
        for (int j = 0; j < N; j++)
            norm += c[i][j] * c[i][j];
    }
    printf("matrix: trace %.17g frobenius^2 %.17g c[3][5] %.17g\n", trace, norm, c[3][5]);
}

/* ---------------------------------------------------------------- FFT */

#define FFT_N 256

static void fft(double *re, double *im, int n)
{
    for (int i = 1, j = 0; i < n; i++) {
        int bit = n >> 1;
        for (; j & bit; bit >>= 1)
            j ^= bit;
        j ^= bit;
        if (i < j) {
            double t = re[i];
            re[i] = re[j];
            re[j] = t;
            t = im[i];
            im[i] = im[j];
            im[j] = t;
        }
    }
    /* cos and sin of -pi/len by halving from len = 2 (cos = -1, sin = 0). */
    double c = -1.0, s = 0.0;
    for (int len = 2; len <= n; len <<= 1) {
        if (len > 2) {
            s = -__builtin_sqrt((1.0 - c) / 2.0);
            c = __builtin_sqrt((1.0 + c) / 2.0);
        }
        for (int i = 0; i < n; i += len) {
            double wr = 1.0, wi = 0.0;
            for (int k = 0; k < len / 2; k++) {
                int p = i + k, q = i + k + len / 2;
                double tr = re[q] * wr - im[q] * wi;
                double ti = re[q] * wi + im[q] * wr;
                re[q] = re[p] - tr;
                im[q] = im[p] - ti;
                re[p] += tr;
                im[p] += ti;
                double t = wr * c - wi * s;
                wi = wr * s + wi * c;
                wr = t;
            }
        }
    }
}

static void spectrum(void)
{
    static double re[FFT_N], im[FFT_N];
    unsigned state = 12345u;
    for (int i = 0; i < FFT_N; i++) {
        state = state * 1103515245u + 12345u;
        re[i] = (double)((state >> 8) % 2000) / 1000.0 - 1.0 + (i % 16 == 0 ? 3.0 : 0.0);
        im[i] = 0.0;
    }
    fft(re, im, FFT_N);
    double power = 0.0;
    int peak = 0;
    double peak_power = 0.0;
    for (int i = 0; i < FFT_N; i++) {
        double p = re[i] * re[i] + im[i] * im[i];
        power += p;
        if (i > 0 && p > peak_power) {
            peak_power = p;
            peak = i;
        }
    }
    printf("fft: power %.17g peak bin %d (%.17g) X[1] = %.17g %+.17gi\n", power, peak, peak_power, re[1], im[1]);
}

int main(void)
{
#ifdef _WIN32
    _setmode(_fileno(stdout), _O_BINARY); /* "\n" line ends, as the native build prints */
#endif
    nbody();
    matrix();
    spectrum();
    return 0;
}
