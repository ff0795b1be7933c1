/*
 * sse_float.c - float work compiled to scalar SSE2 (-msse2 -mfpmath=sse): dot products, a small
 * n-body simulation, a heat-diffusion stencil, conversions and arithmetic under the four MXCSR
 * rounding modes, min/max and comparisons with NaNs and signed zeros, and the NaNs SSE makes.
 *
 * Results that depend on rounding or NaN details are printed as bit patterns, so the output says
 * exactly what the CPU computed; the rest are printed with %.6f / %.9f, which msvcrt and glibc
 * format alike. Functions that return a float or double would return it in x87's st(0) under the
 * i386 ABI; every such function here is inlined, so the program has no x87 instruction of its own.
 */
#include <stdio.h>
#include <string.h>
#include <xmmintrin.h>
#include <emmintrin.h>

#define INLINE static inline __attribute__((always_inline))

/* MXCSR rounding control values (bits 13-14) with every exception masked. */
static const unsigned int modes[4] = {0x1f80, 0x3f80, 0x5f80, 0x7f80};
static const char *const mode_names[4] = {"nearest", "down", "up", "zero"};

static unsigned int lcg_state = 12345;

INLINE unsigned int lcg(void)
{
	lcg_state = lcg_state * 1103515245u + 12345u;
	return lcg_state >> 8;
}

/* A value in [-1, 1) from the generator. */
INLINE double unit(void)
{
	return (double)(int)(lcg() & 0xffff) / 32768.0 - 1.0;
}

INLINE unsigned int fbits(float f)
{
	unsigned int u;
	memcpy(&u, &f, sizeof u);
	return u;
}

INLINE unsigned long long dbits(double d)
{
	unsigned long long u;
	memcpy(&u, &d, sizeof u);
	return u;
}

INLINE float ffrom(unsigned int u)
{
	float f;
	memcpy(&f, &u, sizeof f);
	return f;
}

INLINE double dfrom(unsigned long long u)
{
	double d;
	memcpy(&d, &u, sizeof d);
	return d;
}

static void print_d(const char *what, double d)
{
	unsigned long long u = dbits(d);
	printf("%s %08x%08x\n", what, (unsigned int)(u >> 32), (unsigned int)u);
}

static void print_f(const char *what, float f)
{
	printf("%s %08x\n", what, fbits(f));
}

static float fa[256], fb[256];
static double da[256], db[256];

static void dot_products(void)
{
	for (int i = 0; i < 256; i++) {
		da[i] = unit();
		db[i] = unit() * 3.0;
		fa[i] = (float)da[i];
		fb[i] = (float)(db[i] * 0.5);
	}
	float fs = 0.0f;
	double ds = 0.0;
	for (int i = 0; i < 256; i++) {
		fs += fa[i] * fb[i];
		ds += da[i] * db[i];
	}
	printf("dot float %.6f double %.9f\n", (double)fs, ds);
	print_f("dot float bits", fs);
	print_d("dot double bits", ds);
}

struct body {
	double x, y, z, vx, vy, vz, m;
};

static struct body bodies[4] = {
	{0, 0, 0, 0, 0, 0, 39.47841760435743},
	{4.84, -1.16, -0.10, 0.606, 2.81, -0.02, 0.037},
	{8.34, 4.12, -0.40, -1.01, 1.82, 0.008, 0.011},
	{12.89, -15.11, -0.22, 1.08, 0.868, -0.01, 0.0017},
};

INLINE double energy(void)
{
	double e = 0.0;
	for (int i = 0; i < 4; i++) {
		struct body *b = &bodies[i];
		e += 0.5 * b->m * (b->vx * b->vx + b->vy * b->vy + b->vz * b->vz);
		for (int j = i + 1; j < 4; j++) {
			double dx = b->x - bodies[j].x, dy = b->y - bodies[j].y, dz = b->z - bodies[j].z;
			e -= b->m * bodies[j].m / __builtin_sqrt(dx * dx + dy * dy + dz * dz);
		}
	}
	return e;
}

static void simulate(void)
{
	printf("energy before %.9f\n", energy());
	for (int step = 0; step < 2000; step++) {
		for (int i = 0; i < 4; i++) {
			for (int j = i + 1; j < 4; j++) {
				double dx = bodies[i].x - bodies[j].x;
				double dy = bodies[i].y - bodies[j].y;
				double dz = bodies[i].z - bodies[j].z;
				double d2 = dx * dx + dy * dy + dz * dz;
				double mag = 0.01 / (d2 * __builtin_sqrt(d2));
				bodies[i].vx -= dx * bodies[j].m * mag;
				bodies[i].vy -= dy * bodies[j].m * mag;
				bodies[i].vz -= dz * bodies[j].m * mag;
				bodies[j].vx += dx * bodies[i].m * mag;
				bodies[j].vy += dy * bodies[i].m * mag;
				bodies[j].vz += dz * bodies[i].m * mag;
			}
		}
		for (int i = 0; i < 4; i++) {
			bodies[i].x += 0.01 * bodies[i].vx;
			bodies[i].y += 0.01 * bodies[i].vy;
			bodies[i].z += 0.01 * bodies[i].vz;
		}
	}
	double e = energy();
	printf("energy after %.9f\n", e);
	print_d("energy bits", e);
}

static float grid[2][64];

/* Heat diffusion in single precision: a stencil with a float-to-int checksum. */
static void diffuse(void)
{
	for (int i = 0; i < 64; i++)
		grid[0][i] = (i > 24 && i < 40) ? 100.0f : 0.0f;
	int cur = 0;
	for (int t = 0; t < 300; t++) {
		for (int i = 1; i < 63; i++)
			grid[1 - cur][i] = grid[cur][i] + 0.25f * (grid[cur][i - 1] - 2.0f * grid[cur][i] + grid[cur][i + 1]);
		grid[1 - cur][0] = grid[1 - cur][63] = 0.0f;
		cur = 1 - cur;
	}
	int checksum = 0;
	float peak = 0.0f;
	for (int i = 0; i < 64; i++) {
		checksum = checksum * 31 + (int)(grid[cur][i] * 1000.0f);
		peak = grid[cur][i] > peak ? grid[cur][i] : peak;
	}
	printf("diffusion checksum %d peak %.6f\n", checksum, (double)peak);
}

static volatile double dv[] = {2.5, -2.5, 3.5, 0.49999999999999994, -7.75, 1e10, -2147483648.5, 2147483647.4};
static volatile float fv[] = {1.5f, -1.5f, 2.5f, -0.5f, 16777217.0f, 3e9f, -3e9f, 0.75f};
static volatile int iv[] = {16777217, -16777219, 2147483647, 123456789};
static volatile double third_num = 1.0, third_den = 3.0, two = 2.0;

static void rounding_modes(void)
{
	unsigned int saved = _mm_getcsr();
	for (int m = 0; m < 4; m++) {
		_mm_setcsr(modes[m]);
		printf("mode %s mxcsr %08x\n", mode_names[m], _mm_getcsr());
		for (unsigned i = 0; i < sizeof dv / sizeof dv[0]; i++) {
			__m128d v = _mm_set_sd(dv[i]);
			printf(" cvtsd2si %d cvttsd2si %d", _mm_cvtsd_si32(v), _mm_cvttsd_si32(v));
		}
		printf("\n");
		for (unsigned i = 0; i < sizeof fv / sizeof fv[0]; i++) {
			__m128 v = _mm_set_ss(fv[i]);
			printf(" cvtss2si %d cvttss2si %d", _mm_cvtss_si32(v), _mm_cvttss_si32(v));
		}
		printf("\n");
		for (unsigned i = 0; i < sizeof iv / sizeof iv[0]; i++)
			printf(" cvtsi2ss %08x", fbits((float)iv[i]));
		printf("\n");
		double third = third_num / third_den;
		print_d(" 1/3", third);
		print_d(" -1/3", -third_num / third_den);
		print_f(" (float)(1/3)", (float)third);
		print_f(" (float)(-1/3)", (float)-third);
		print_d(" sqrt 2", __builtin_sqrt(two));
		print_f(" sqrtf 2", __builtin_sqrtf((float)two));
		print_f(" 1/3f", (float)third_num / (float)third_den);
		print_d(" 0.1+0.2", (third_num * 0.1) + (third_num * 0.2));
		print_d(" tiny*tiny", dfrom(0x0010000000000001ull) * (third_num * 0.75));
		print_f(" big*big", ffrom(0x7f000000u) * (float)(two));
	}
	_mm_setcsr(saved);
}

static volatile unsigned long long nan_bits[] = {
	0x7ff8000000000001ull, /* quiet, payload 1 */
	0x7ff0000000000002ull, /* signalling */
	0xfff8000000000003ull, /* negative quiet */
};
static volatile double zero = 0.0, one = 1.0, inf_src = 1e308;

static void nans_and_minmax(void)
{
	double qnan = dfrom(nan_bits[0]), snan = dfrom(nan_bits[1]), nqnan = dfrom(nan_bits[2]);
	double inf = inf_src * 10.0;
	print_d("0/0", zero / zero);
	print_d("inf-inf", inf - inf);
	print_d("0*inf", zero * inf);
	print_d("sqrt(-1)", __builtin_sqrt(-one));
	print_d("qnan+1", qnan + one);
	print_d("1+qnan", one + qnan);
	print_d("snan*1", snan * one);
	print_d("qnan+snan", qnan + snan);
	print_d("snan+nqnan", snan + nqnan);
	print_d("nqnan-qnan", nqnan - qnan);
	print_f("(float)snan", (float)snan);
	print_d("(double)(float)nqnan", (double)(float)nqnan);
	float fq = ffrom(0x7fc00005u), fs = ffrom(0x7f800009u);
	print_f("fq/2", fq / (float)two);
	print_f("fs-1", fs - (float)one);
	print_d("(double)fs", (double)fs);
	double vals[] = {one, -one, zero, -zero, qnan, snan, inf, -inf};
	for (int i = 0; i < 8; i++) {
		for (int j = 0; j < 8; j++) {
			double a = vals[i] * one, b = vals[j] * one;
			double mn = a < b ? a : b, mx = a > b ? a : b;
			float fa1 = (float)a, fb1 = (float)b;
			float fmn = fa1 < fb1 ? fa1 : fb1, fmx = fa1 > fb1 ? fa1 : fb1;
			unsigned long long umn = dbits(mn), umx = dbits(mx);
			printf("%d%d min %08x%08x max %08x%08x fmin %08x fmax %08x lt %d le %d eq %d ne %d\n", i, j,
			       (unsigned int)(umn >> 32), (unsigned int)umn, (unsigned int)(umx >> 32), (unsigned int)umx,
			       fbits(fmn), fbits(fmx), a < b, a <= b, a == b, a != b);
		}
	}
	double fabs_in = -third_num / third_den;
	print_d("fabs", __builtin_fabs(fabs_in));
	print_d("neg", -fabs_in);
	print_f("fabsf", __builtin_fabsf((float)fabs_in));
	print_d("copysign", __builtin_copysign(two, fabs_in));
}

int main(void)
{
	dot_products();
	simulate();
	diffuse();
	rounding_modes();
	nans_and_minmax();
	printf("done\n");
	return 0;
}
