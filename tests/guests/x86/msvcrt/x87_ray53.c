/*
 * x87_ray53.c: a small ray tracer (spheres, a plane, one light, shadows, reflections) rendered
 * to ASCII, run at 53-bit precision: it sets the x87 precision-control field to double with
 * fldcw first, as MSVC-built programs run. So the f64 value model, too, must give exactly
 * these bytes. printf is msvcrt's (-D__USE_MINGW_ANSI_STDIO=0); square roots come from
 * msvcrt's sqrt where gcc calls it (negative arguments) and from fsqrt elsewhere.
 */
#include <math.h>
#include <stdio.h>
#ifdef _WIN32
#include <fcntl.h>
#include <io.h>
#endif

struct vec {
    double x, y, z;
};

static struct vec v(double x, double y, double z)
{
    struct vec r = { x, y, z };
    return r;
}
static struct vec add(struct vec a, struct vec b) { return v(a.x + b.x, a.y + b.y, a.z + b.z); }
static struct vec sub(struct vec a, struct vec b) { return v(a.x - b.x, a.y - b.y, a.z - b.z); }
static struct vec mul(struct vec a, double k) { return v(a.x * k, a.y * k, a.z * k); }
static double dot(struct vec a, struct vec b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
static struct vec unit(struct vec a) { return mul(a, 1.0 / sqrt(dot(a, a))); }

struct sphere {
    struct vec center;
    double radius, reflect;
};

static const struct sphere spheres[] = {
    { { 0.0, 1.0, 5.0 }, 1.0, 0.5 },
    { { -2.2, 0.7, 6.5 }, 0.7, 0.2 },
    { { 2.0, 0.5, 4.0 }, 0.5, 0.0 },
};

/* Distance along the ray to the nearest hit, or a negative number; *what: sphere index, 3 plane. */
static double hit(struct vec o, struct vec d, int *what)
{
    double best = -1.0;
    for (int i = 0; i < 3; i++) {
        struct vec oc = sub(o, spheres[i].center);
        double b = dot(oc, d), c = dot(oc, oc) - spheres[i].radius * spheres[i].radius;
        double disc = b * b - c;
        if (disc < 0)
            continue;
        double t = -b - sqrt(disc);
        if (t > 1e-6 && (best < 0 || t < best)) {
            best = t;
            *what = i;
        }
    }
    if (d.y < -1e-9) {
        double t = -o.y / d.y;
        if (t > 1e-6 && (best < 0 || t < best)) {
            best = t;
            *what = 3;
        }
    }
    return best;
}

static double trace(struct vec o, struct vec d, int depth)
{
    int what = -1;
    double t = hit(o, d, &what);
    if (t < 0)
        return 0.1 + 0.2 * d.y;
    struct vec p = add(o, mul(d, t));
    struct vec n = what == 3 ? v(0, 1, 0) : unit(sub(p, spheres[what].center));
    struct vec light = unit(sub(v(-4.0, 6.0, 0.0), p));
    double diffuse = dot(n, light);
    if (diffuse < 0)
        diffuse = 0;
    int blocker;
    if (hit(add(p, mul(n, 1e-4)), light, &blocker) > 0)
        diffuse *= 0.3;
    double base = what == 3 ? ((((int)floor(p.x) + (int)floor(p.z)) & 1) ? 0.9 : 0.3) : 0.8;
    double color = 0.1 + base * diffuse;
    double reflect = what == 3 ? 0.1 : spheres[what].reflect;
    if (depth < 3 && reflect > 0) {
        struct vec r = sub(d, mul(n, 2.0 * dot(d, n)));
        color = color * (1.0 - reflect) + reflect * trace(add(p, mul(n, 1e-4)), r, depth + 1);
    }
    return color;
}

int main(void)
{
#ifdef _WIN32
    _setmode(_fileno(stdout), _O_BINARY); /* "\n" line ends, as the native build prints */
#endif
    /* Precision control = 53 bits (double), rounding to nearest, exceptions masked. */
    unsigned short cw = 0x027f;
    __asm__ volatile("fldcw %0" : : "m"(cw));
    static const char ramp[] = " .,:;ox%#@";
    double total = 0.0;
    for (int y = 0; y < 30; y++) {
        char line[81];
        for (int x = 0; x < 80; x++) {
            struct vec d = unit(v((x - 40) / 40.0, (15 - y) / 30.0 + 0.2, 1.0));
            double c = trace(v(0, 1.2, 0), d, 0);
            total += c;
            int k = (int)(c * 9.99);
            line[x] = ramp[k < 0 ? 0 : k > 9 ? 9 : k];
        }
        line[80] = 0;
        printf("%s\n", line);
    }
    printf("total brightness %.17g\n", total);
    return 0;
}
