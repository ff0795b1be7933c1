/* float.c - floating-point work for the PowerPC guest: double and single arithmetic (with the
 * fused multiply-adds gcc contracts a*b+c into), conversions both ways, comparisons and branches
 * on them, a Newton square root (the 750 has no fsqrt), a small physics loop in singles, the
 * four rounding modes set through the FPSCR, and special values. Everything is printed as bit
 * patterns and as fixed-point decimals, so the output must be byte-identical under qemu-ppc and
 * recompiled by rpt. */
#include "rt.h"

static volatile double dv[8] = { 1.0, 3.0, -2.5, 1e300, 1e-300, 0.1, 123456.789, -0.0 };
static volatile float fv[8] = { 1.5f, -3.25f, 0.1f, 1e30f, 1e-30f, 7.0f, 2.0f, -0.0f };
static volatile s32 iv[4] = { 7, -1234567, 2147483647, -2147483647 - 1 };

static void show_d(const char *name, double d)
{
	rt_puts(name);
	rt_puts(" = ");
	rt_put_double_bits(d);
	rt_nl();
}

static void show_f(const char *name, float f)
{
	rt_puts(name);
	rt_puts(" = ");
	rt_put_float_bits(f);
	rt_nl();
}

/* Prints d with six decimals (for |d| < 2^31), rounding toward zero. */
static void show_fixed(const char *name, double d)
{
	rt_puts(name);
	rt_puts(" = ");
	if (d < 0) {
		rt_write("-", 1);
		d = -d;
	}
	u32 whole = (u32)d;
	u32 frac = (u32)((d - (double)whole) * 1000000.0);
	rt_put_u32(whole);
	rt_write(".", 1);
	char buf[6];
	for (int i = 5; i >= 0; i--) {
		buf[i] = (char)('0' + frac % 10);
		frac /= 10;
	}
	rt_write(buf, 6);
	rt_nl();
}

static double newton_sqrt(double x)
{
	if (x <= 0)
		return 0;
	double r = x > 1 ? x / 2 : 1;
	for (int i = 0; i < 60; i++)
		r = 0.5 * (r + x / r);
	return r;
}

/* The FPSCR rounding mode (RN, the low two bits): 0 nearest, 1 zero, 2 up, 3 down. */
static void set_rounding(int mode)
{
	switch (mode) {
	case 0: __asm__ volatile("mtfsfi 7,0" ::: "memory"); break;
	case 1: __asm__ volatile("mtfsfi 7,1" ::: "memory"); break;
	case 2: __asm__ volatile("mtfsfi 7,2" ::: "memory"); break;
	default: __asm__ volatile("mtfsfi 7,3" ::: "memory"); break;
	}
}

static double read_fpscr(void)
{
	double d;
	__asm__ volatile("mffs %0" : "=f"(d));
	return d;
}

struct body {
	float x, y, vx, vy;
};

int main(void)
{
	rt_puts("ppc float sample\n");
	double a = dv[0], b = dv[1], c = dv[2], big = dv[3], tiny = dv[4], tenth = dv[5], m = dv[6];
	show_d("add", a + b);
	show_d("sub", a - c);
	show_d("mul", b * c);
	show_d("div", a / b);
	show_d("madd", b * c + tenth);
	show_d("msub", b * c - tenth);
	show_d("nmsub", tenth - b * c);
	show_d("overflow", big * big);
	show_d("underflow", tiny * tiny);
	show_d("denormal", tiny / 1e10);
	show_d("inf-inf", (big * big) - (big * big));
	show_d("zero/zero", dv[7] / dv[7]);
	show_d("neg", -m);
	show_d("abs", c < 0 ? -c : c);
	show_fixed("sqrt2", newton_sqrt(2.0 * a));
	show_fixed("sqrt-m", newton_sqrt(m));
	show_fixed("m", m);

	float fa = fv[0], fb = fv[1], fc = fv[2], fbig = fv[3];
	show_f("fadds", fa + fb);
	show_f("fmuls", fa * fc);
	show_f("fdivs", fa / fc);
	show_f("fmadds", fa * fb + fc);
	show_f("fnmsubs", fc - fa * fb);
	show_f("foverflow", fbig * fbig);
	show_f("frsp", (float)m);
	show_f("frsp-tenth", (float)tenth);
	show_d("widen", (double)fc);

	/* Conversions: float to int truncates (fctiwz); int to float uses the 2^52 trick. */
	for (int i = 0; i < 4; i++) {
		double d = (double)iv[i];
		show_d("i2d", d);
		rt_puts("d2i = ");
		rt_put_s32((s32)(d * 0.5));
		rt_nl();
		show_f("i2f", (float)iv[i]);
	}
	rt_puts("u2d = ");
	rt_put_double_bits((double)(u32)iv[3]);
	rt_nl();
	rt_puts("trunc = ");
	rt_put_s32((s32)(m * -3.0));
	rt_nl();

	/* Comparisons, including NaN. */
	double nan = (big * big) - (big * big);
	u32 flags = (a < b) | (a > b) << 1 | (a == a) << 2 | (nan == nan) << 3 | (nan < a) << 4 | (nan != nan) << 5 |
		    (c <= -2.5) << 6 | (fb < fa) << 7;
	rt_puts("compare = ");
	rt_put_hex32(flags);
	rt_nl();

	/* The four rounding modes on the same operations (volatile, so nothing moves across the
	 * mode switches). */
	static volatile double q, s, p, conv;
	static volatile float fq;
	static volatile s32 ci;
	for (int mode = 0; mode < 4; mode++) {
		set_rounding(mode);
		q = dv[0] / dv[1];
		s = dv[6] + dv[5];
		fq = fv[0] / fv[5];
		p = dv[5] * dv[1];
		conv = (double)(float)(dv[6] / dv[1]);
		ci = (s32)(dv[6] * dv[5]);
		set_rounding(0);
		rt_puts("mode ");
		rt_put_u32((u32)mode);
		rt_nl();
		show_d("  div", q);
		show_d("  add", s);
		show_f("  fdiv", fq);
		show_d("  mul", p);
		show_d("  frsp", conv);
		rt_puts("  int = ");
		rt_put_s32(ci);
		rt_nl();
	}
	/* The control bits only: rpt does not compute the FPSCR's exception and status bits
	 * (guests/ppc-dol/src/lift/fp.rs says why). */
	set_rounding(3);
	union { double d; u64 u; } fpscr = { read_fpscr() };
	set_rounding(0);
	rt_puts("fpscr control = ");
	rt_put_hex32((u32)fpscr.u & 0xff);
	rt_nl();

	/* A small physics loop in singles. */
	struct body bodies[4];
	for (int i = 0; i < 4; i++) {
		bodies[i].x = (float)i * fa;
		bodies[i].y = (float)(4 - i) * fv[6];
		bodies[i].vx = fc * (float)(i + 1);
		bodies[i].vy = 0.0f;
	}
	for (int step = 0; step < 200; step++) {
		for (int i = 0; i < 4; i++) {
			struct body *p = &bodies[i];
			p->vy -= 9.81f * 0.01f;
			p->x += p->vx * 0.01f;
			p->y += p->vy * 0.01f;
			if (p->y < 0.0f) {
				p->y = -p->y;
				p->vy = -p->vy * 0.8f;
			}
		}
	}
	for (int i = 0; i < 4; i++) {
		show_f("x", bodies[i].x);
		show_f("y", bodies[i].y);
	}

	/* A dot product and a polynomial in doubles. */
	double acc = 0;
	for (int i = 1; i <= 100; i++)
		acc += (double)i * tenth / (double)(i + 1);
	show_fixed("series", acc);
	double poly = 0;
	for (int i = 0; i < 10; i++)
		poly = poly * tenth + (double)(i + 1);
	show_fixed("poly", poly);
	rt_puts("done\n");
	return 0;
}
