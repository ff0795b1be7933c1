/*
 * x87_soft_libm.h - msvcrt's math functions (x87_soft_math.h) for hosts without a C math library,
 * computed on the software x87 unit's 128-bit float (x87_soft_transcendental.h). Included by
 * x87.c after x87_soft.h.
 *
 * Decisions:
 * - The guest's programs were checked against glibc on the other hosts and against Wine (whose
 *   msvcrt is correctly rounded in practice too), so these aim at the mathematical values, not at
 *   the x87's: sin, cos and tan reduce by pi/2 to 192 bits, not by the FPU's 66-bit pi, so they
 *   stay exact for large arguments. Beyond 2^63 they first take the remainder by the unit's 2 pi
 *   with fprem1, as msvcrt.dll does, where glibc reduces exactly: there the hosts differ.
 * - Invalid operands give the unit's default NaN (the "indefinite", which msvcrt prints as -1.#IND).
 * - Each result is computed in 128 bits and rounded once to double, to nearest: correctly rounded
 *   unless the exact value lies within about 2^-110 (relative) of a rounding boundary. glibc, which
 *   the other hosts use, is correctly rounded in all but rare cases too, so the hosts agree.
 * - Exact results stay exact: pow(10, 2) is 100, log10(1000) is 3, fmod, ldexp, frexp, floor,
 *   ceil and trunc are exact; C99's special cases (pow(x, 0) = 1, pow(-8, 1/3) a NaN, signed
 *   zeros and infinities) are those of glibc.
 * - errno is not set (msvcrt's EDOM and ERANGE); the hosts' libm cannot set the guest's errno either.
 */

#include "x87_soft_math.h"

#define SOFT_NAN_BITS 0xfff8000000000000ull
#define SOFT_INF_BITS 0x7ff0000000000000ull
#define SOFT_ONE_BITS 0x3ff0000000000000ull

static double soft_double(uint64_t b)
{
	double d;
	__builtin_memcpy(&d, &b, 8);
	return d;
}

static uint64_t soft_bits(double d)
{
	uint64_t b;
	__builtin_memcpy(&b, &d, 8);
	return b;
}

static struct rpt_f80 soft_f80(double d)
{
	uint16_t flags = 0;
	return x87_from_ieee(soft_bits(d), 52, 11, &flags);
}

static double soft_from_f80(struct rpt_f80 v)
{
	uint16_t flags = 0;
	return soft_double(x87_to_ieee(v, 52, 11, X87_CW_INIT, &flags));
}

static struct x87_val soft_unpack(double d)
{
	return x87_unpack(soft_f80(d));
}

static double soft_signed(int sign, uint64_t magnitude)
{
	return soft_double(magnitude | (sign ? 0x8000000000000000ull : 0));
}

/* The NaN of an operation with NaN operands, as the unit picks it. */
static double soft_nan_of(double a, double b)
{
	uint16_t flags = 0;
	struct rpt_f80 fa = soft_f80(a), fb = soft_f80(b);
	int a_nan = x87_unpack(fa).cls == X87_NAN, b_nan = x87_unpack(fb).cls == X87_NAN;
	return soft_from_f80(x87_nan_result(fa, fb, a_nan, b_nan, &flags));
}

/* v rounded once to double, to nearest even: subnormals and overflow included. */
static double xr_to_double(struct x87_xr v)
{
	if (!v.s)
		return soft_signed(v.sign, 0);
	int32_t exp = v.exp;
	uint64_t m;
	uint16_t flags = 0;
	x87_round(v.sign, &exp, v.s, 53, -1022, 1023, 0, &m, &flags);
	if (exp > 1023)
		return soft_signed(v.sign, SOFT_INF_BITS);
	if (!(m >> 63))
		return soft_signed(v.sign, m >> 11);
	return soft_signed(v.sign, ((uint64_t)(exp + 1023) << 52) | ((m << 1) >> 12));
}

/* The integer nearest t (ties away from zero), for |t| < 2^30. */
static int32_t xr_nearest(struct x87_xr t)
{
	if (!t.s || t.exp < -1)
		return 0;
	uint64_t twice = (uint64_t)(t.s >> (126 - t.exp));
	int32_t n = (int32_t)((twice + 1) >> 1);
	return t.sign ? -n : n;
}

/* 2^t for |t| < 2^30: 2^n * e^((t - n) ln 2) with n the integer nearest t. */
static struct x87_xr xr_exp2(struct x87_xr t)
{
	int32_t n = xr_nearest(t);
	struct x87_xr u = xr_mul(xr_sub(t, xr_int(n)), xr_const(&x87_consts[X87_LN2]));
	struct x87_xr p = xr_add(xr_expm1_small(u), xr_int(1));
	p.exp += n;
	return p;
}

/* e^x - 1 for |x| < 2^12, good in relative terms however small x is. */
static struct x87_xr xr_expm1(struct x87_xr x)
{
	struct x87_xr t = xr_mul(x, xr_const(&x87_consts[X87_LOG2E]));
	int32_t n = xr_nearest(t);
	if (n == 0)
		return xr_expm1_small(x); /* |x| < ln(2) / 2 */
	struct x87_xr u = xr_mul(xr_sub(t, xr_int(n)), xr_const(&x87_consts[X87_LN2]));
	struct x87_xr p = xr_add(xr_expm1_small(u), xr_int(1));
	p.exp += n;
	return xr_sub(p, xr_int(1));
}

/* sqrt(v), v >= 0: the host's double square root of v's significand as a start (53 good bits),
 * then two Newton steps y = (y + m / y) / 2 (each doubles the good bits). */
static struct x87_xr xr_sqrt(struct x87_xr v)
{
	if (!v.s)
		return v;
	int32_t half = v.exp >> 1; /* floor: v = m * 2^(2 half), m in [1, 4) */
	struct x87_xr m = v;
	m.exp -= 2 * half;
	struct x87_val start = soft_unpack(__builtin_sqrt(xr_to_double(m)));
	struct x87_xr y = xr_of(start);
	for (int i = 0; i < 2; i++) {
		y = xr_add(y, xr_div(m, y));
		y.exp -= 1;
	}
	y.exp += half;
	return y;
}

/* Whether a finite value is an integer, and whether an odd one. */
static int soft_is_integer(struct x87_val u)
{
	if (u.cls == X87_ZERO || u.exp >= 63)
		return 1;
	if (u.exp < 0)
		return 0;
	return (u.sig << (u.exp + 1)) == 0;
}

static int soft_is_odd(struct x87_val u)
{
	if (u.cls == X87_ZERO || u.exp < 0 || u.exp > 63 || !soft_is_integer(u))
		return 0;
	return (int)((u.sig >> (63 - u.exp)) & 1);
}

/* ---------------------------------------------------------------- trigonometry */

/* x - q pi/2 for the integer q nearest x / (pi/2), |x| < 2^63, and q (modulo 2^64). Each q times a
 * part of pi/2 (x87_pi_2_parts) is exact, so the result keeps its relative precision however close
 * x lies to a multiple of pi/2 (no double below 2^63 lies closer than about 2^-61). */
static struct x87_xr xr_reduce_pi_2(struct x87_xr x, uint64_t *quadrant)
{
	struct x87_xr t = xr_mul(x, xr_const(&x87_consts[X87_2_PI]));
	uint64_t q = 0;
	if (t.exp >= -1)
		q = (uint64_t)(((t.s >> (126 - t.exp)) + 1) >> 1); /* t.exp <= 62: 2|t| as an integer, halved */
	*quadrant = t.sign ? 0 - q : q;
	if (!q)
		return x;
	struct x87_xr times = { t.sign, 127, q };
	times.s = x87_norm(times.s, &times.exp);
	struct x87_xr r = x;
	for (int i = 0; i < 3; i++)
		r = xr_sub(r, xr_mul(times, xr_const(&x87_pi_2_parts[i])));
	return r;
}

static double soft_trig(unsigned op, double x)
{
	struct rpt_f80 a = soft_f80(x);
	struct x87_val u = x87_unpack(a);
	if (u.cls == X87_NAN)
		return soft_nan_of(x, x);
	if (u.cls == X87_INF)
		return soft_double(SOFT_NAN_BITS);
	if (u.cls == X87_FINITE && u.exp >= 63) {
		/* fsin's operand range ends at 2^63: the remainder by 2 pi (the unit's pi, doubled) first,
		 * exact, in as many partial steps as fprem1 needs. */
		const struct rpt_f80 two_pi = x87_make(0, 16384, 0xc90fdaa22168c235ull);
		uint16_t f;
		do {
			f = x87_prem(1, a, two_pi, &a);
		} while (f & SW_C2);
		u = x87_unpack(a);
	}
	if (u.cls == X87_ZERO)
		return op == X87_FCOS ? soft_double(SOFT_ONE_BITS) : soft_signed(u.sign, 0);
	uint64_t q;
	struct x87_xr s, c, red = xr_reduce_pi_2(xr_of(u), &q);
	xr_sin_cos_quadrant(red, q, &s, &c);
	if (op == X87_FSIN)
		return xr_to_double(s);
	if (op == X87_FCOS)
		return xr_to_double(c);
	return xr_to_double(xr_div(s, c));
}

double rpt_x86_soft_sin(double x)
{
	return soft_trig(X87_FSIN, x);
}

double rpt_x86_soft_cos(double x)
{
	return soft_trig(X87_FCOS, x);
}

double rpt_x86_soft_tan(double x)
{
	return soft_trig(X87_FPTAN, x);
}

double rpt_x86_soft_atan2(double y, double x)
{
	struct x87_val vy = soft_unpack(y), vx = soft_unpack(x);
	if (vy.cls == X87_NAN || vx.cls == X87_NAN)
		return soft_nan_of(y, x);
	return xr_to_double(xr_atan2(vy, vx));
}

double rpt_x86_soft_atan(double x)
{
	return rpt_x86_soft_atan2(x, soft_double(SOFT_ONE_BITS));
}

/* asin x = atan2(x, sqrt((1 - x)(1 + x))) and acos x = atan2(sqrt(...), x), for |x| <= 1. */
static double soft_arc(int cosine, double x)
{
	struct x87_val u = soft_unpack(x);
	if (u.cls == X87_NAN)
		return soft_nan_of(x, x);
	if (u.cls == X87_INF || (u.cls == X87_FINITE && (u.exp > 0 || (u.exp == 0 && u.sig != 1ull << 63))))
		return soft_double(SOFT_NAN_BITS); /* |x| > 1 */
	struct x87_xr v = xr_of(u), one = xr_int(1);
	struct x87_xr root = xr_sqrt(xr_mul(xr_sub(one, v), xr_add(one, v)));
	return xr_to_double(cosine ? xr_atan2_finite(root, v) : xr_atan2_finite(v, root));
}

double rpt_x86_soft_asin(double x)
{
	return soft_arc(0, x);
}

double rpt_x86_soft_acos(double x)
{
	return soft_arc(1, x);
}

/* ---------------------------------------------------------------- exponentials */

double rpt_x86_soft_exp(double x)
{
	struct x87_val u = soft_unpack(x);
	if (u.cls == X87_NAN)
		return soft_nan_of(x, x);
	if (u.cls == X87_ZERO)
		return soft_double(SOFT_ONE_BITS);
	if (u.cls == X87_INF || u.exp >= 12) /* |x| >= 4096: far beyond the double range */
		return u.sign ? 0.0 : soft_double(SOFT_INF_BITS);
	return xr_to_double(xr_exp2(xr_mul(xr_of(u), xr_const(&x87_consts[X87_LOG2E]))));
}

/* sinh, cosh and tanh of |x| from E = e^|x| - 1, which keeps small arguments exact in relative
 * terms: sinh = (E + E / (E + 1)) / 2, cosh = (E + 1 + 1 / (E + 1)) / 2, tanh = E' / (E' + 2)
 * with E' = e^(2|x|) - 1. */
static double soft_hyperbolic(int which, double x)
{
	struct x87_val u = soft_unpack(x);
	const double one = soft_double(SOFT_ONE_BITS);
	if (u.cls == X87_NAN)
		return soft_nan_of(x, x);
	if (u.cls == X87_ZERO)
		return which == 1 ? one : x;
	int big = u.cls == X87_INF || u.exp >= 12;
	struct x87_xr ax = xr_of(u), r;
	ax.sign = 0;
	if (which == 2) {
		if (big || u.exp >= 6) /* |x| >= 64: tanh rounds to +-1 */
			return soft_signed(u.sign, SOFT_ONE_BITS);
		ax.exp += 1;
		struct x87_xr e2 = xr_expm1(ax);
		r = xr_div(e2, xr_add(e2, xr_int(2)));
		r.sign = u.sign;
		return xr_to_double(r);
	}
	if (big)
		return soft_signed(which == 1 ? 0 : u.sign, SOFT_INF_BITS);
	struct x87_xr e = xr_expm1(ax), e_plus_1 = xr_add(e, xr_int(1));
	if (which == 1)
		r = xr_add(e_plus_1, xr_div(xr_int(1), e_plus_1));
	else
		r = xr_add(e, xr_div(e, e_plus_1));
	r.exp -= 1;
	if (which == 0)
		r.sign = u.sign;
	return xr_to_double(r);
}

double rpt_x86_soft_sinh(double x)
{
	return soft_hyperbolic(0, x);
}

double rpt_x86_soft_cosh(double x)
{
	return soft_hyperbolic(1, x);
}

double rpt_x86_soft_tanh(double x)
{
	return soft_hyperbolic(2, x);
}

/* ---------------------------------------------------------------- logarithms and powers */

/* log2 x scaled to base e (ten == 0) or base 10. */
static double soft_log(int ten, double x)
{
	struct x87_val u = soft_unpack(x);
	if (u.cls == X87_NAN)
		return soft_nan_of(x, x);
	if (u.cls == X87_ZERO)
		return soft_signed(1, SOFT_INF_BITS);
	if (u.sign)
		return soft_double(SOFT_NAN_BITS);
	if (u.cls == X87_INF)
		return x;
	int exact;
	struct x87_xr l = xr_log2(xr_of(u), &exact);
	if (!l.s)
		return 0.0;
	if (ten)
		l = xr_div(l, xr_log2(xr_int(10), &exact));
	else
		l = xr_mul(l, xr_const(&x87_consts[X87_LN2]));
	return xr_to_double(l);
}

double rpt_x86_soft_log(double x)
{
	return soft_log(0, x);
}

double rpt_x86_soft_log10(double x)
{
	return soft_log(1, x);
}

/* pow: C99's special cases, then 2^(y log2 |x|) with the sign an odd integer y gives a negative x. */
double rpt_x86_soft_pow(double x, double y)
{
	struct x87_val a = soft_unpack(x), b = soft_unpack(y);
	const double one = soft_double(SOFT_ONE_BITS), inf = soft_double(SOFT_INF_BITS);
	if (b.cls == X87_ZERO || soft_bits(x) == SOFT_ONE_BITS)
		return one;
	if (a.cls == X87_NAN || b.cls == X87_NAN)
		return soft_nan_of(x, y);
	int odd = b.cls == X87_FINITE && soft_is_odd(b);
	if (b.cls == X87_INF) {
		int magnitude_one = a.cls == X87_FINITE && a.exp == 0 && a.sig == 1ull << 63;
		if (magnitude_one)
			return one; /* pow(-1, +-inf) */
		int above_one = a.cls == X87_INF || (a.cls == X87_FINITE && a.exp >= 0);
		return above_one != b.sign ? inf : 0.0;
	}
	if (a.cls == X87_ZERO)
		return b.sign ? soft_signed(odd && a.sign, SOFT_INF_BITS) : soft_signed(odd && a.sign, 0);
	if (a.cls == X87_INF)
		return b.sign ? soft_signed(odd && a.sign, 0) : soft_signed(odd && a.sign, SOFT_INF_BITS);
	if (a.sign && !soft_is_integer(b))
		return soft_double(SOFT_NAN_BITS);
	struct x87_xr ax = xr_of(a);
	ax.sign = 0;
	int exact;
	struct x87_xr t = xr_mul(xr_log2(ax, &exact), xr_of(b));
	double r;
	if (t.s && t.exp >= 11) /* |t| >= 2048: beyond the double range either way */
		r = t.sign ? 0.0 : inf;
	else
		r = xr_to_double(xr_exp2(t));
	return a.sign && odd ? -r : r;
}

/* fmod: the truncating remainder, exact, which is fprem's (repeated while it reports a partial one). */
double rpt_x86_soft_fmod(double x, double y)
{
	struct rpt_f80 a = soft_f80(x), b = soft_f80(y);
	uint16_t f;
	do {
		f = x87_prem(0, a, b, &a);
	} while (f & SW_C2);
	return soft_from_f80(a);
}

double rpt_x86_soft_hypot(double x, double y)
{
	struct x87_val a = soft_unpack(x), b = soft_unpack(y);
	if (a.cls == X87_INF || b.cls == X87_INF)
		return soft_double(SOFT_INF_BITS);
	if (a.cls == X87_NAN || b.cls == X87_NAN)
		return soft_nan_of(x, y);
	struct x87_xr xa = xr_of(a), xb = xr_of(b);
	return xr_to_double(xr_sqrt(xr_add(xr_mul(xa, xa), xr_mul(xb, xb))));
}

/* ---------------------------------------------------------------- exact ones */

/* x rounded to an integer by rc (1 down, 2 up, 3 toward zero), on the bits. */
static double soft_integral(double x, unsigned rc)
{
	uint64_t b = soft_bits(x);
	int sign = (int)(b >> 63);
	int e = (int)((b >> 52) & 0x7ff) - 1023;
	if (e >= 52 || (b << 1) == 0)
		return x; /* already an integer, a zero, an infinity or a NaN */
	if (e < 0) {
		if (rc == 1 && sign)
			return soft_signed(1, SOFT_ONE_BITS);
		if (rc == 2 && !sign)
			return soft_double(SOFT_ONE_BITS);
		return soft_signed(sign, 0);
	}
	uint64_t fraction = 0x000fffffffffffffull >> e;
	if (!(b & fraction))
		return x;
	double t = soft_double(b & ~fraction);
	if ((rc == 1 && sign) || (rc == 2 && !sign))
		t += sign ? -1.0 : 1.0; /* exact: |t| < 2^52 */
	return t;
}

double rpt_x86_soft_floor(double x)
{
	return soft_integral(x, 1);
}

double rpt_x86_soft_ceil(double x)
{
	return soft_integral(x, 2);
}

double rpt_x86_soft_trunc(double x)
{
	return soft_integral(x, 3);
}

double rpt_x86_soft_ldexp(double x, int e)
{
	struct x87_val u = soft_unpack(x);
	if (u.cls != X87_FINITE)
		return u.cls == X87_NAN ? soft_nan_of(x, x) : x;
	struct x87_xr v = xr_of(u);
	v.exp += e > 5000 ? 5000 : e < -5000 ? -5000 : e;
	return xr_to_double(v);
}

/* The significand in [1/2, 1) and the power of two; zeros, infinities and NaNs come back as they
 * are, with 0. */
double rpt_x86_soft_frexp(double x, int *e)
{
	struct x87_val u = soft_unpack(x);
	*e = 0;
	if (u.cls != X87_FINITE)
		return u.cls == X87_NAN ? soft_nan_of(x, x) : x;
	*e = u.exp + 1;
	struct x87_xr v = xr_of(u);
	v.exp = -1;
	return xr_to_double(v);
}
