/*
 * x87_soft_transcendental.h - the transcendental instructions of the software x87 unit: f2xm1,
 * fsin, fcos, fsincos, fptan, fpatan, fyl2x and fyl2xp1. Included by x87_soft.h.
 *
 * Each result is computed in a software float with a 128-bit significand (struct x87_xr) and
 * rounded once, under the control word, to the destination: the 128-bit value is good to about
 * 2^-120, so the rounded result is the correctly rounded one except when the exact value lies
 * within 2^-120 of a rounding boundary. The real FPU is not always correctly rounded (Intel
 * documents an error below one unit in the last place), so the x87 oracle holds these forms to
 * the CPU within one unit in the last place, with every flag but C1 (which says how rounding went)
 * exact. fsin, fcos, fsincos and fptan reduce their argument modulo pi/2 with the FPU's own 66-bit
 * approximation of pi, exactly, as the CPU does, so large arguments give the CPU's answers rather
 * than the mathematically exact ones. Outside the ranges Intel defines (f2xm1 beyond [-1, 1],
 * fyl2xp1 beyond +-(1 - sqrt(2)/2)) the CPU's results are undefined; these give the mathematical
 * values of the same formulas. The constants are in x87_soft_tables.h, written by
 * scripts/gen-x87-tables.py.
 */

/* (-1)^sign * s * 2^(exp - 127), s's bit 127 set (bit 0 may hold a sticky bit); s == 0 is zero. */
struct x87_xr {
	int sign;
	int32_t exp;
	x87_u128 s;
};

struct x87_xr_const {
	int sign;
	int32_t exp;
	uint64_t hi, lo;
};

#include "x87_soft_tables.h"

static struct x87_xr xr_const(const struct x87_xr_const *c)
{
	struct x87_xr r = { c->sign, c->exp, ((x87_u128)c->hi << 64) | c->lo };
	return r;
}

static struct x87_xr xr_of(struct x87_val u)
{
	struct x87_xr r = { u.sign, u.exp, (x87_u128)u.sig << 64 };
	if (u.cls == X87_ZERO)
		r.s = 0;
	return r;
}

static struct x87_xr xr_int(int32_t i)
{
	struct x87_xr r = { i < 0, 127, 0 };
	if (i == 0)
		return r;
	r.s = (x87_u128)(uint64_t)(i < 0 ? -(int64_t)i : (int64_t)i);
	r.s = x87_norm(r.s, &r.exp);
	return r;
}

static struct x87_xr xr_neg(struct x87_xr a)
{
	a.sign = !a.sign;
	return a;
}

static struct x87_xr xr_mul(struct x87_xr a, struct x87_xr b)
{
	struct x87_xr r = { a.sign ^ b.sign, 0, 0 };
	if (!a.s || !b.s)
		return r;
	uint64_t a1 = (uint64_t)(a.s >> 64), a0 = (uint64_t)a.s, b1 = (uint64_t)(b.s >> 64), b0 = (uint64_t)b.s;
	x87_u128 p00 = (x87_u128)a0 * b0, p01 = (x87_u128)a0 * b1, p10 = (x87_u128)a1 * b0, p11 = (x87_u128)a1 * b1;
	x87_u128 mid = (p00 >> 64) + (uint64_t)p01 + (uint64_t)p10;
	x87_u128 hi = p11 + (p01 >> 64) + (p10 >> 64) + (mid >> 64);
	uint64_t lo = (uint64_t)mid, lowest = (uint64_t)p00;
	r.exp = a.exp + b.exp;
	if (hi >> 127) {
		r.s = hi | (lo != 0 || lowest != 0);
		r.exp += 1;
	} else {
		r.s = (hi << 1) | (lo >> 63) | ((lo << 1) != 0 || lowest != 0);
	}
	return r;
}

static struct x87_xr xr_add(struct x87_xr a, struct x87_xr b)
{
	if (!b.s)
		return a;
	if (!a.s)
		return b;
	if (a.exp < b.exp || (a.exp == b.exp && a.s < b.s)) {
		struct x87_xr t = a;
		a = b;
		b = t;
	}
	/* One bit of headroom for the carry; the bits shifted out stay as a sticky bit. */
	x87_u128 as = (a.s >> 1) | (a.s & 1), bs = x87_shift_sticky(b.s, (a.exp - b.exp) + 1);
	struct x87_xr r = { a.sign, a.exp + 1, a.sign == b.sign ? as + bs : as - bs };
	if (r.s)
		r.s = x87_norm(r.s, &r.exp);
	return r;
}

static struct x87_xr xr_sub(struct x87_xr a, struct x87_xr b)
{
	return xr_add(a, xr_neg(b));
}

/* a / b (b nonzero), 128 quotient bits by restoring division and a sticky bit. */
static struct x87_xr xr_div(struct x87_xr a, struct x87_xr b)
{
	struct x87_xr r = { a.sign ^ b.sign, a.exp - b.exp, 0 };
	if (!a.s)
		return r;
	x87_u128 rem = a.s, d = b.s, q = 0;
	int bits = 127;
	if (rem >= d) {
		rem -= d;
		q = 1;
	} else {
		r.exp -= 1;
		bits = 128;
	}
	for (int i = 0; i < bits; i++) {
		int carry = (int)(rem >> 127);
		rem <<= 1;
		q <<= 1;
		if (carry || rem >= d) {
			rem -= d;
			q |= 1;
		}
	}
	r.s = q | (rem != 0);
	return r;
}

/* c[0] + z * (c[1] + z * (c[2] + ...)): Horner's scheme over n coefficients. */
static struct x87_xr xr_poly(struct x87_xr z, const struct x87_xr_const *c, int n)
{
	struct x87_xr acc = xr_const(&c[n - 1]);
	for (int k = n - 2; k >= 0; k--)
		acc = xr_add(xr_const(&c[k]), xr_mul(z, acc));
	return acc;
}

/* The result of an inexact operation: rounded under the control word's rounding control, to all
 * 64 bits whatever its precision control says (that rounds only the basic arithmetic and fsqrt),
 * with PE set even when the 128 bits computed happen to end in zeros. */
static struct rpt_f80 xr_round(struct x87_xr v, uint16_t cw, uint16_t *flags)
{
	if (!v.s)
		return x87_make(v.sign, 0, 0);
	return x87_round80_prec(v.sign, v.exp, v.s | 1, cw, 1, flags);
}

/* sin r and cos r for |r| <= pi/4 (Taylor series to the 33rd power: terms below 2^-134). */
static void xr_sin_cos(struct x87_xr r, struct x87_xr *sin_r, struct x87_xr *cos_r)
{
	struct x87_xr z = xr_mul(r, r);
	*sin_r = xr_mul(r, xr_poly(z, x87_sin_coeffs, 17));
	*cos_r = xr_poly(z, x87_cos_coeffs, 17);
}

/* |x| - q * pi66/2 for the q nearest |x| / (pi/2), where pi66 = K * 2^-66 is the FPU's 66-bit pi
 * (K = 0xC90FDAA22168C234C), computed exactly on integers: |x| < 2^63 is sig * 2^(exp - 63), and
 * both terms are whole multiples of 2^-67. Gives the reduced argument and q. */
static struct x87_xr x87_reduce(struct x87_val u, uint64_t *quadrant)
{
	struct x87_xr x = xr_of(u);
	x.sign = 0;
	*quadrant = 0;
	struct x87_xr t = xr_mul(x, xr_const(&x87_consts[X87_2_PI]));
	if (t.exp < -1)
		return x; /* |x| * 2/pi < 1/2: q = 0 */
	/* q = floor(t + 1/2), t < 2^63 * 2/pi */
	x87_u128 fixed = t.s >> (126 - t.exp); /* t * 2 as an integer */
	uint64_t q = (uint64_t)((fixed + 1) >> 1);
	const uint64_t k_hi = 0xc, k_lo = 0x90fdaa22168c234cull;
	/* A = sig * 2^(exp + 4) and q * K as 192-bit integers (three 64-bit words, low first). */
	int sh = u.exp + 4;
	uint64_t a[3] = { 0, 0, 0 };
	x87_u128 wide = (x87_u128)u.sig << (sh & 63);
	int word = sh >> 6;
	a[word] = (uint64_t)wide;
	if (word + 1 < 3)
		a[word + 1] = (uint64_t)(wide >> 64);
	for (int adjust = 0; adjust < 3; adjust++) {
		x87_u128 lo = (x87_u128)q * k_lo;
		x87_u128 hi = (x87_u128)q * k_hi + (lo >> 64);
		uint64_t qk[3] = { (uint64_t)lo, (uint64_t)hi, (uint64_t)(hi >> 64) };
		/* R = A - qK */
		uint64_t r[3];
		unsigned borrow = 0;
		for (int i = 0; i < 3; i++) {
			x87_u128 d = (x87_u128)a[i] - qk[i] - borrow;
			r[i] = (uint64_t)d;
			borrow = (unsigned)(d >> 127) & 1;
		}
		int negative = (int)(r[2] >> 63);
		if (negative) {
			/* two's complement magnitude */
			unsigned carry = 1;
			for (int i = 0; i < 3; i++) {
				x87_u128 n = (x87_u128)(uint64_t)~r[i] + carry;
				r[i] = (uint64_t)n;
				carry = (unsigned)(n >> 64);
			}
		}
		x87_u128 mag = ((x87_u128)r[1] << 64) | r[0];
		x87_u128 half_k = (((x87_u128)k_hi << 64) | k_lo) >> 1;
		if (r[2] == 0 && mag <= half_k) {
			*quadrant = q;
			struct x87_xr out = { negative, 60, mag };
			if (mag)
				out.s = x87_norm(mag, &out.exp);
			return out;
		}
		/* The estimate of q was one off (t is rounded): move it toward A. */
		q = negative ? q - 1 : q + 1;
	}
	return x; /* not reached: the estimate is never two off */
}

/* sin x and cos x from r = x - q pi/2 (|r| <= pi/4) and q's low bits. */
static void xr_sin_cos_quadrant(struct x87_xr red, uint64_t q, struct x87_xr *sin_out, struct x87_xr *cos_out)
{
	struct x87_xr s, c, sin_x, cos_x;
	xr_sin_cos(red, &s, &c);
	switch (q & 3) {
	case 0:
		sin_x = s;
		cos_x = c;
		break;
	case 1:
		sin_x = c;
		cos_x = xr_neg(s);
		break;
	case 2:
		sin_x = xr_neg(s);
		cos_x = xr_neg(c);
		break;
	default:
		sin_x = xr_neg(c);
		cos_x = s;
		break;
	}
	*sin_out = sin_x;
	*cos_out = cos_x;
}

/* sin x and cos x of a finite nonzero x with |x| < 2^63, reduced as the FPU reduces. */
static void x87_sin_cos_xr(struct x87_val u, struct x87_xr *sin_out, struct x87_xr *cos_out)
{
	uint64_t q;
	struct x87_xr red = x87_reduce(u, &q);
	xr_sin_cos_quadrant(red, q, sin_out, cos_out);
	/* sin is odd, cos even */
	if (u.sign)
		*sin_out = xr_neg(*sin_out);
}

/* fsin, fcos, fsincos and fptan of a finite nonzero x with |x| < 2^63. */
static void x87_trig(unsigned op, struct x87_val u, uint16_t cw, struct rpt_f80 *r, struct rpt_f80 *pushed,
		     uint16_t *flags)
{
	struct x87_xr sin_x, cos_x;
	x87_sin_cos_xr(u, &sin_x, &cos_x);
	switch (op) {
	case X87_FSIN:
		*r = xr_round(sin_x, cw, flags);
		break;
	case X87_FCOS:
		*r = xr_round(cos_x, cw, flags);
		break;
	case X87_FSINCOS: {
		uint16_t f = 0;
		*r = xr_round(sin_x, cw, flags);
		*pushed = xr_round(cos_x, cw, &f);
		/* C1 tells how the last result (the cosine, on top) was rounded. */
		*flags = (uint16_t)((*flags & ~SW_C1) | f);
		break;
	}
	default:
		*r = xr_round(xr_div(sin_x, cos_x), cw, flags);
		*pushed = x87_make(0, 16383, 0x8000000000000000ull);
		break;
	}
}

static uint16_t x87_soft_trig(uint16_t cw, unsigned op, struct rpt_f80 a, struct rpt_f80 *r, struct rpt_f80 *pushed)
{
	uint16_t flags = 0;
	struct x87_val u = x87_unpack(a);
	const struct rpt_f80 one = x87_make(0, 16383, 0x8000000000000000ull);
	if (u.cls == X87_NAN) {
		*r = x87_nan_result(a, a, 1, 0, &flags);
		*pushed = *r;
		return flags;
	}
	if (u.cls == X87_INF) {
		*r = x87_indefinite;
		*pushed = x87_indefinite;
		return SW_IE;
	}
	if (u.cls == X87_FINITE && u.exp >= 63)
		return SW_C2; /* out of range: the operand stays, C2 says so */
	if (u.denormal)
		flags |= SW_DE;
	if (u.cls == X87_ZERO) {
		/* sin 0 and tan 0 are the zero itself; cos 0 (and fptan's pushed value) is 1, exactly. */
		*r = op == X87_FCOS ? one : a;
		*pushed = one;
		return flags;
	}
	x87_trig(op, u, cw, r, pushed, &flags);
	return flags;
}

/* atan(t) for 0 <= t <= 1: atan(c) + atan((t - c) / (1 + t c)) with c the nearest eighth, and the
 * series of atan, t' * (1 - t'^2/3 + t'^4/5 - ...), on |t'| <= 1/16 (terms below 2^-132). */
static struct x87_xr xr_atan(struct x87_xr t)
{
	if (!t.s)
		return t;
	int eighths = 0;
	if (t.exp >= -4) {
		x87_u128 fixed = t.s >> (123 - t.exp); /* 16 t as an integer */
		eighths = (int)((fixed + 1) >> 1);
	}
	struct x87_xr base = { 0, 0, 0 }, rest = t;
	if (eighths) {
		struct x87_xr c = xr_int(eighths);
		c.exp -= 3;
		rest = xr_div(xr_sub(t, c), xr_add(xr_int(1), xr_mul(t, c)));
		base = xr_const(&x87_atan_eighths[eighths - 1]);
	}
	/* The odd reciprocals with alternating signs, as the series needs them. */
	struct x87_xr z = xr_neg(xr_mul(rest, rest));
	return xr_add(base, xr_mul(rest, xr_poly(z, x87_odd_recips, 18)));
}

/* ln(m) for m in [sqrt(2)/2, sqrt(2)]: 2 atanh(s), s = (m - 1) / (m + 1), |s| <= 0.1716, by the
 * series s * (1 + s^2/3 + s^4/5 + ...) (27 terms: below 2^-130). */
static struct x87_xr xr_ln_near_one(struct x87_xr m_minus_1, struct x87_xr m_plus_1)
{
	struct x87_xr s = xr_div(m_minus_1, m_plus_1);
	struct x87_xr sum = xr_mul(s, xr_poly(xr_mul(s, s), x87_odd_recips, 27));
	sum.exp += 1;
	return sum;
}

/* log2(v) for a positive v, and whether it is exact (v a power of two). */
static struct x87_xr xr_log2(struct x87_xr v, int *exact)
{
	int32_t e = v.exp;
	struct x87_xr m = { 0, 0, v.s }; /* v / 2^e, in [1, 2) */
	if (m.s >= xr_const(&x87_consts[X87_SQRT2]).s) {
		m.exp -= 1;
		e += 1;
	}
	struct x87_xr one = xr_int(1), frac = { 0, 0, 0 };
	*exact = m.exp == 0 && m.s == one.s;
	if (!*exact)
		frac = xr_mul(xr_ln_near_one(xr_sub(m, one), xr_add(m, one)), xr_const(&x87_consts[X87_LOG2E]));
	return xr_add(xr_int(e), frac);
}

static const struct rpt_f80 x87_inf = { 0x8000000000000000ull, 0x7fffu };

static struct rpt_f80 x87_signed_inf(int sign)
{
	struct rpt_f80 r = x87_inf;
	r.se = (uint16_t)(r.se | (sign ? 0x8000u : 0));
	return r;
}

/* atan2(y, x) of finite values (zeros allowed, with their signs): the angle's quadrant from the
 * signs, its size from atan of the smaller ratio. A zero result is a zero of y's sign. */
static struct x87_xr xr_atan2_finite(struct x87_xr y, struct x87_xr x)
{
	struct x87_xr angle = { 0, 0, 0 };
	if (!y.s) {
		if (x.sign)
			angle = xr_const(&x87_consts[X87_PI]);
	} else if (!x.s) {
		angle = xr_const(&x87_consts[X87_PI_2]);
	} else {
		struct x87_xr xv = x, yv = y;
		xv.sign = yv.sign = 0;
		int steep = yv.exp > xv.exp || (yv.exp == xv.exp && yv.s > xv.s);
		angle = steep ? xr_sub(xr_const(&x87_consts[X87_PI_2]), xr_atan(xr_div(xv, yv))) : xr_atan(xr_div(yv, xv));
		if (x.sign)
			angle = xr_sub(xr_const(&x87_consts[X87_PI]), angle);
	}
	angle.sign = y.sign;
	return angle;
}

/* atan2(y, x) of two values that are not NaNs, infinities included. */
static struct x87_xr xr_atan2(struct x87_val y, struct x87_val x)
{
	struct x87_xr angle = { 0, 0, 0 };
	if (y.cls == X87_INF)
		angle = xr_const(&x87_consts[x.cls == X87_INF ? (x.sign ? X87_3PI_4 : X87_PI_4) : X87_PI_2]);
	else if (x.cls == X87_INF && x.sign)
		angle = xr_const(&x87_consts[X87_PI]);
	else if (x.cls != X87_INF)
		return xr_atan2_finite(xr_of(y), xr_of(x));
	angle.sign = y.sign;
	return angle;
}

/* fpatan: atan2(st(1) = y, st(0) = x). */
static uint16_t x87_soft_fpatan(uint16_t cw, struct rpt_f80 a, struct rpt_f80 b, struct rpt_f80 *r)
{
	uint16_t flags = 0;
	struct x87_val x = x87_unpack(a), y = x87_unpack(b);
	if (x.cls == X87_NAN || y.cls == X87_NAN) {
		*r = x87_nan_result(a, b, x.cls == X87_NAN, y.cls == X87_NAN, &flags);
		return flags;
	}
	if (x.denormal || y.denormal)
		flags |= SW_DE;
	*r = xr_round(xr_atan2(y, x), cw, &flags);
	return flags;
}

/* fyl2x (y * log2 x) and fyl2xp1 (y * log2(x + 1)): st(0) = x, st(1) = y. */
static uint16_t x87_soft_fyl2x(uint16_t cw, int plus_one, struct rpt_f80 a, struct rpt_f80 b, struct rpt_f80 *r)
{
	uint16_t flags = 0;
	struct x87_val x = x87_unpack(a), y = x87_unpack(b);
	if (x.cls == X87_NAN || y.cls == X87_NAN) {
		*r = x87_nan_result(a, b, x.cls == X87_NAN, y.cls == X87_NAN, &flags);
		return flags;
	}
	/* A denormal operand is reported only when the operation computes: an invalid operation or a
	 * division by zero reports that alone. */
	uint16_t denormal = (x.denormal || y.denormal) ? SW_DE : 0;
	if (plus_one) {
		/* log2(1 + x): the sign of x is the sign of the logarithm; x = 0 gives a zero. */
		if (x.cls == X87_INF && x.sign) {
			*r = x87_indefinite;
			return (uint16_t)(flags | SW_IE);
		}
		if (x.cls == X87_ZERO || y.cls == X87_ZERO) {
			if ((x.cls == X87_ZERO && y.cls == X87_INF) || (y.cls == X87_ZERO && x.cls == X87_INF)) {
				*r = x87_indefinite;
				return (uint16_t)(flags | SW_IE);
			}
			*r = x87_make(x.sign ^ y.sign, 0, 0);
			return (uint16_t)(flags | denormal);
		}
		if (x.cls == X87_INF || y.cls == X87_INF) {
			*r = x87_signed_inf(x.sign ^ y.sign);
			return (uint16_t)(flags | denormal);
		}
		struct x87_xr xv = xr_of(x), one = xr_int(1), l;
		struct x87_xr sum = xr_add(xv, one);
		if (sum.sign || !sum.s) {
			/* x <= -1: the logarithm of zero or of a negative number */
			if (sum.s) {
				*r = x87_indefinite;
				return (uint16_t)(flags | SW_IE);
			}
			*r = x87_signed_inf(!y.sign);
			return (uint16_t)(flags | SW_ZE);
		}
		if (x.exp < -2) {
			/* |x| < 1/4, the defined range and a little more: 2 atanh(x / (x + 2)), exact in relative
			 * terms however small x is */
			l = xr_mul(xr_ln_near_one(xv, xr_add(xv, xr_int(2))), xr_const(&x87_consts[X87_LOG2E]));
		} else {
			int exact;
			l = xr_log2(sum, &exact);
		}
		*r = xr_round(xr_mul(xr_of(y), l), cw, &flags);
		return (uint16_t)(flags | denormal);
	}
	if (x.sign && x.cls != X87_ZERO) {
		*r = x87_indefinite;
		return (uint16_t)(flags | SW_IE);
	}
	if (x.cls == X87_ZERO) {
		if (y.cls == X87_ZERO) {
			*r = x87_indefinite;
			return (uint16_t)(flags | SW_IE);
		}
		/* log2 0 = -inf: a division by zero for a finite y */
		*r = x87_signed_inf(!y.sign);
		return (uint16_t)(flags | (y.cls == X87_INF ? 0 : SW_ZE));
	}
	if (x.cls == X87_INF) {
		if (y.cls == X87_ZERO) {
			*r = x87_indefinite;
			return (uint16_t)(flags | SW_IE);
		}
		*r = x87_signed_inf(y.sign);
		return (uint16_t)(flags | denormal);
	}
	int exact;
	struct x87_xr l = xr_log2(xr_of(x), &exact);
	if (y.cls == X87_INF) {
		if (!l.s) {
			*r = x87_indefinite;
			return (uint16_t)(flags | SW_IE);
		}
		*r = x87_signed_inf(y.sign ^ l.sign);
		return (uint16_t)(flags | denormal);
	}
	if (y.cls == X87_ZERO || !l.s) {
		*r = x87_make(y.sign ^ l.sign, 0, 0);
		return (uint16_t)(flags | denormal);
	}
	struct x87_xr p = xr_mul(xr_of(y), l);
	if (exact) {
		/* A power of two: the product is exact, but the CPU reports it inexact all the same (it
		 * computes the logarithm approximately), and so tiny when it is a denormal. */
		*r = x87_round80_prec(p.sign, p.exp, p.s, cw, 1, &flags);
		flags |= SW_PE;
		if ((r->se & 0x7fff) == 0)
			flags |= SW_UE;
	} else {
		*r = xr_round(p, cw, &flags);
	}
	return (uint16_t)(flags | denormal);
}

/* e^u - 1 for |u| <= ln 2, by the series u * (1 + u/2 + u^2/6 + ...) (28 terms: below 2^-130). */
static struct x87_xr xr_expm1_small(struct x87_xr u)
{
	return xr_mul(u, xr_poly(u, x87_expm1_coeffs, 28));
}

/* f2xm1: 2^x - 1 = expm1(x ln 2). */
static uint16_t x87_soft_f2xm1(uint16_t cw, struct rpt_f80 a, struct rpt_f80 *r)
{
	uint16_t flags = 0;
	struct x87_val x = x87_unpack(a);
	if (x.cls == X87_NAN) {
		*r = x87_nan_result(a, a, 1, 0, &flags);
		return flags;
	}
	if (x.cls == X87_ZERO) {
		*r = a;
		return 0;
	}
	if (x.cls == X87_INF) {
		*r = x.sign ? x87_make(1, 16383, 0x8000000000000000ull) : a;
		return 0;
	}
	if (x.denormal)
		flags |= SW_DE;
	if (x.exp < 0 || (x.exp == 0 && x.sig == 0x8000000000000000ull)) {
		if (x.exp == 0) {
			/* 2^1 - 1 = 1 and 2^-1 - 1 = -1/2, exactly */
			*r = x.sign ? x87_make(1, 16382, 0x8000000000000000ull) : x87_make(0, 16383, 0x8000000000000000ull);
			return flags;
		}
		struct x87_xr u = xr_mul(xr_of(x), xr_const(&x87_consts[X87_LN2]));
		*r = xr_round(xr_expm1_small(u), cw, &flags);
		return flags;
	}
	/* Beyond [-1, 1], where the CPU's result is undefined: 2^n * 2^f - 1 with n the integer nearest
	 * x and |f| <= 1/2; far enough out, 2^x overflows or 2^x - 1 rounds to -1. */
	if (x.exp >= 15) {
		struct x87_xr big = x.sign ? xr_int(-1) : xr_int(1);
		if (!x.sign)
			big.exp = 20000;
		*r = xr_round(big, cw, &flags);
		return flags;
	}
	x87_u128 fixed = ((x87_u128)x.sig << 64) >> (126 - x.exp); /* 2 |x| as an integer */
	int32_t n = (int32_t)((fixed + 1) >> 1);
	if (x.sign)
		n = -n;
	struct x87_xr f = xr_sub(xr_of(x), xr_int(n));
	struct x87_xr u = xr_mul(f, xr_const(&x87_consts[X87_LN2]));
	struct x87_xr p = xr_add(xr_expm1_small(u), xr_int(1));
	p.exp += n;
	*r = xr_round(xr_sub(p, xr_int(1)), cw, &flags);
	return flags;
}
