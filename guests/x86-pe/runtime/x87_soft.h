/*
 * x87_soft.h - the x87 unit in software, for hosts without one (AArch64, LoongArch64); included by
 * x87.c, which x86-64 hosts build with their own unit instead (and with -DRPT_X87_SOFT, this one:
 * the x87 oracle checks it against the real FPU that way).
 *
 * Exact, as the real FPU (the oracle's cases agree bit for bit, flags included): loads and stores
 * of every format, fild/fist/fisttp, the four operations and fsqrt under every precision and
 * rounding control, compares, ftst, fxam, fchs, fabs, frndint, fscale, fxtract, fprem, fprem1, the
 * constants. The transcendental instructions (f2xm1, fsin, fcos, fsincos, fptan, fpatan, fyl2x,
 * fyl2xp1) are in x87_soft_transcendental.h, within one unit in the last place of the CPU's. Values
 * are unpacked to a sign, an unbiased exponent and a significand with its top bit set, and computed
 * on 128-bit integers with a sticky bit, then rounded once.
 */

typedef unsigned __int128 x87_u128;

enum { X87_ZERO, X87_FINITE, X87_INF, X87_NAN };

#define SW_DE 0x0002u
#define SW_ZE 0x0004u
#define SW_OE 0x0008u
#define SW_UE 0x0010u
#define SW_PE 0x0020u

/* A value: (-1)^sign * sig * 2^(exp - 63) for finite ones, sig's bit 63 set. */
struct x87_val {
	int cls, sign, denormal;
	int32_t exp;
	uint64_t sig;
};

static struct x87_val x87_unpack(struct rpt_f80 v)
{
	struct x87_val u = { X87_FINITE, v.se >> 15, 0, 0, v.m };
	int e = v.se & 0x7fff;
	if (e == 0x7fff) {
		u.cls = (v.m << 1) ? X87_NAN : X87_INF;
	} else if (e == 0) {
		if (v.m == 0) {
			u.cls = X87_ZERO;
		} else {
			int shift = __builtin_clzll(v.m);
			u.denormal = 1;
			u.sig = v.m << shift;
			u.exp = 1 - 16383 - shift;
		}
	} else {
		u.exp = e - 16383;
	}
	return u;
}

static struct rpt_f80 x87_make(int sign, uint16_t e, uint64_t m)
{
	struct rpt_f80 r = { m, (uint16_t)((sign ? 0x8000u : 0) | e) };
	return r;
}

static int x87_is_snan(struct rpt_f80 v)
{
	return (v.se & 0x7fff) == 0x7fff && (v.m << 1) && !(v.m & 0x4000000000000000ull);
}

static struct rpt_f80 x87_quiet(struct rpt_f80 v)
{
	v.m |= 0xc000000000000000ull;
	return v;
}

/* The NaN result of an operation with a NaN operand: a quiet NaN over a signalling one, else the
 * larger significand (quieted). */
static struct rpt_f80 x87_nan_result(struct rpt_f80 a, struct rpt_f80 b, int a_nan, int b_nan, uint16_t *flags)
{
	int a_snan = a_nan && x87_is_snan(a), b_snan = b_nan && x87_is_snan(b);
	if (a_snan || b_snan)
		*flags |= SW_IE;
	if (a_nan && b_nan && a_snan != b_snan)
		return x87_quiet(a_snan ? b : a);
	if (a_nan && b_nan) {
		uint64_t ma = a.m | 0x4000000000000000ull, mb = b.m | 0x4000000000000000ull;
		if (ma != mb)
			return x87_quiet(ma > mb ? a : b);
		return x87_quiet((a.se >> 15) ? b : a);
	}
	return x87_quiet(a_nan ? a : b);
}

/* Rounds (-1)^sign * s * 2^(exp - 127) (s's bit 127 set; sticky ORed into bit 0) to `prec`
 * significant bits of a format whose normal exponents are emin..emax, by rc (0 nearest, 1 down,
 * 2 up, 3 toward zero). Gives the significand with the top of its `prec` bits at bit 63 and the
 * unbiased exponent; a subnormal result has exponent emin and bit 63 clear. Sets PE, UE (tiny
 * before rounding and inexact), OE and C1 (the magnitude was rounded up). */
static void x87_round(int sign, int32_t *exp, x87_u128 s, int prec, int32_t emin, int32_t emax, unsigned rc,
		      uint64_t *out, uint16_t *flags)
{
	int32_t e = *exp;
	int tiny = e < emin;
	int64_t drop = 128 - prec;
	if (tiny) {
		drop += (int64_t)emin - e;
		e = emin;
	}
	x87_u128 kept = 0, rest = s;
	int above_half = 0, at_half = 0;
	if (drop == 128) {
		above_half = s > ((x87_u128)1 << 127);
		at_half = s == ((x87_u128)1 << 127);
	} else if (drop < 128) {
		x87_u128 half = (x87_u128)1 << (drop - 1);
		kept = s >> drop;
		rest = s & ((half << 1) - 1);
		above_half = rest > half;
		at_half = rest == half;
	}
	int inexact = rest != 0, up = 0;
	if (inexact) {
		if (rc == 0)
			up = above_half || (at_half && (kept & 1));
		else if (rc == 1)
			up = sign;
		else if (rc == 2)
			up = !sign;
		*flags |= SW_PE;
		if (tiny)
			*flags |= SW_UE;
	}
	if (up) {
		*flags |= SW_C1;
		kept++;
		if (!tiny && (kept >> prec)) {
			kept >>= 1;
			e++;
		}
	}
	if (e > emax) {
		*flags |= SW_OE | SW_PE;
		if (rc == 0 || (rc == 1 && sign) || (rc == 2 && !sign)) {
			*flags |= SW_C1;
			*exp = emax + 1;
			*out = 0x8000000000000000ull;
		} else {
			*flags &= (uint16_t)~SW_C1;
			*exp = emax;
			*out = ~0ull << (64 - prec);
		}
		return;
	}
	*exp = e;
	*out = (uint64_t)kept << (64 - prec);
}

/* Packs a rounded 80-bit result: precision control's bits (all 64 for fscale, whose result the
 * precision field does not round), the 80-bit exponent range. */
static struct rpt_f80 x87_round80_prec(int sign, int32_t exp, x87_u128 s, uint16_t cw, int full, uint16_t *flags)
{
	static const int precision[4] = { 24, 64, 53, 64 };
	int prec = full ? 64 : precision[(cw >> 8) & 3];
	unsigned rc = (cw >> 10) & 3;
	uint64_t m;
	x87_round(sign, &exp, s, prec, -16382, 16383, rc, &m, flags);
	if (exp > 16383)
		return x87_make(sign, 0x7fff, 0x8000000000000000ull);
	if (!(m >> 63))
		return x87_make(sign, 0, m); /* a subnormal or zero */
	return x87_make(sign, (uint16_t)(exp + 16383), m);
}

static struct rpt_f80 x87_round80(int sign, int32_t exp, x87_u128 s, uint16_t cw, uint16_t *flags)
{
	return x87_round80_prec(sign, exp, s, cw, 0, flags);
}

/* Normalises s (nonzero) so that its bit 127 is set, adjusting the exponent of s * 2^(exp - 127). */
static x87_u128 x87_norm(x87_u128 s, int32_t *exp)
{
	uint64_t hi = (uint64_t)(s >> 64);
	int shift = hi ? __builtin_clzll(hi) : 64 + __builtin_clzll((uint64_t)s);
	*exp -= shift;
	return s << shift;
}

/* A shift right by n keeping a sticky bit in bit 0. */
static x87_u128 x87_shift_sticky(x87_u128 s, int32_t n)
{
	if (n <= 0)
		return s;
	if (n >= 128)
		return s != 0;
	return (s >> n) | ((s & ((((x87_u128)1) << n) - 1)) != 0);
}

/* n / d and n % d, bit by bit: freestanding hosts have no __udivti3 to divide 128-bit integers. */
static x87_u128 x87_udiv(x87_u128 n, uint64_t d, uint64_t *rem)
{
	x87_u128 q = 0, r = 0;
	for (int i = 127; i >= 0; i--) {
		r = (r << 1) | ((n >> i) & 1);
		if (r >= d) {
			r -= d;
			q |= (x87_u128)1 << i;
		}
	}
	*rem = (uint64_t)r;
	return q;
}

static struct rpt_f80 x87_from_int(int64_t i)
{
	if (i == 0)
		return x87_make(0, 0, 0);
	int sign = i < 0;
	uint64_t mag = sign ? 0 - (uint64_t)i : (uint64_t)i;
	int shift = __builtin_clzll(mag);
	return x87_make(sign, (uint16_t)(16383 + 63 - shift), mag << shift);
}

/* f32/f64 bits to 80 bits (exact); SNaN is quieted with IE, a subnormal operand flags DE. */
static struct rpt_f80 x87_from_ieee(uint64_t bits, int frac_bits, int exp_bits, uint16_t *flags)
{
	int sign = (int)(bits >> (frac_bits + exp_bits)) & 1;
	int32_t bias = (1 << (exp_bits - 1)) - 1;
	int32_t e = (int32_t)((bits >> frac_bits) & ((1u << exp_bits) - 1));
	uint64_t frac = bits & ((1ull << frac_bits) - 1);
	if (e == (1 << exp_bits) - 1) {
		uint64_t m = 0x8000000000000000ull | (frac << (63 - frac_bits));
		if (frac && !(frac >> (frac_bits - 1))) {
			*flags |= SW_IE;
			m |= 0x4000000000000000ull;
		}
		return x87_make(sign, 0x7fff, m);
	}
	if (e == 0) {
		if (!frac)
			return x87_make(sign, 0, 0);
		*flags |= SW_DE;
		int shift = __builtin_clzll(frac);
		/* value = frac * 2^(1 - bias - frac_bits) */
		int32_t exp = 1 - bias - frac_bits + (63 - shift);
		return x87_make(sign, (uint16_t)(exp + 16383), frac << shift);
	}
	return x87_make(sign, (uint16_t)(e - bias + 16383), 0x8000000000000000ull | (frac << (63 - frac_bits)));
}

/* 80 bits to f32/f64 bits, rounded by RC. */
static uint64_t x87_to_ieee(struct rpt_f80 v, int frac_bits, int exp_bits, uint16_t cw, uint16_t *flags)
{
	struct x87_val u = x87_unpack(v);
	int32_t bias = (1 << (exp_bits - 1)) - 1;
	uint64_t sign = (uint64_t)u.sign << (frac_bits + exp_bits);
	uint64_t inf = (((1ull << exp_bits) - 1) << frac_bits);
	if (u.cls == X87_ZERO)
		return sign;
	if (u.cls == X87_INF)
		return sign | inf;
	if (u.cls == X87_NAN) {
		if (x87_is_snan(v))
			*flags |= SW_IE;
		return sign | inf | (1ull << (frac_bits - 1)) | ((v.m << 1) >> (64 - frac_bits));
	}
	/* A store does not flag a denormal source (as this CPU does). */
	int32_t exp = u.exp;
	uint64_t m;
	x87_round(u.sign, &exp, (x87_u128)u.sig << 64, frac_bits + 1, 1 - bias, bias, (cw >> 10) & 3, &m, flags);
	if (exp > bias)
		return sign | inf;
	if (!(m >> 63)) /* subnormal: exponent field 0 */
		return sign | (m >> (63 - frac_bits));
	return sign | ((uint64_t)(exp + bias) << frac_bits) | ((m << 1) >> (64 - frac_bits));
}

static uint16_t unit_load(uint16_t cw, uint16_t raised, unsigned kind, uint64_t bits, struct rpt_f80 *out)
{
	(void)raised;
	uint16_t flags = 0;
	(void)cw;
	switch (kind) {
	case X87_KIND_F32:
		*out = x87_from_ieee(bits & 0xffffffffu, 23, 8, &flags);
		break;
	case X87_KIND_F64:
		*out = x87_from_ieee(bits, 52, 11, &flags);
		break;
	default:
		*out = x87_from_int((int64_t)bits);
		break;
	}
	return flags;
}

/* Rounds to an integer by rc: the integer's magnitude; *inexact and *up say how rounding went. */
static x87_u128 x87_to_integer(struct x87_val u, unsigned rc, int *inexact, int *up)
{
	*inexact = 0;
	*up = 0;
	if (u.cls == X87_ZERO)
		return 0;
	if (u.exp >= 63)
		return u.exp > 126 ? ~(x87_u128)0 : (x87_u128)u.sig << (u.exp - 63);
	x87_u128 s = (x87_u128)u.sig << 64; /* value = s * 2^(exp - 127) */
	int32_t drop = 127 - u.exp;
	x87_u128 kept = drop >= 128 ? 0 : s >> drop;
	x87_u128 rest = drop >= 128 ? s : s & ((((x87_u128)1) << drop) - 1);
	x87_u128 half = drop >= 129 ? 0 : ((x87_u128)1) << (drop - 1);
	if (drop >= 129)
		half = 0;
	if (rest) {
		*inexact = 1;
		switch (rc) {
		case 0:
			*up = drop <= 128 && (rest > half || (rest == half && (kept & 1)));
			break;
		case 1:
			*up = u.sign;
			break;
		case 2:
			*up = !u.sign;
			break;
		default:
			break;
		}
	}
	return kept + (unsigned)*up;
}

static uint16_t unit_store(uint16_t cw, uint16_t raised, unsigned kind, int truncate, struct rpt_f80 v, uint64_t *out)
{
	(void)raised;
	uint16_t flags = 0;
	if (kind == X87_KIND_F32) {
		*out = x87_to_ieee(v, 23, 8, cw, &flags);
		return flags;
	}
	if (kind == X87_KIND_F64) {
		*out = x87_to_ieee(v, 52, 11, cw, &flags);
		return flags;
	}
	int width = kind == X87_KIND_I16 ? 16 : kind == X87_KIND_I32 ? 32 : 64;
	uint64_t indefinite = 1ull << (width - 1);
	struct x87_val u = x87_unpack(v);
	if (u.cls == X87_NAN || u.cls == X87_INF) {
		*out = indefinite;
		return SW_IE;
	}
	int inexact, up;
	x87_u128 mag = x87_to_integer(u, truncate ? 3u : (cw >> 10) & 3, &inexact, &up);
	x87_u128 limit = u.sign ? ((x87_u128)1 << (width - 1)) : (((x87_u128)1 << (width - 1)) - 1);
	if (mag > limit) {
		*out = indefinite;
		return (uint16_t)(flags | SW_IE);
	}
	uint64_t m = (uint64_t)mag;
	*out = u.sign ? 0 - m : m;
	if (inexact)
		flags |= SW_PE;
	if (up)
		flags |= SW_C1;
	return flags;
}

static uint16_t unit_arith(uint16_t cw, uint16_t raised, unsigned op, struct rpt_f80 a, struct rpt_f80 b, struct rpt_f80 *out)
{
	(void)raised;
	uint16_t flags = 0;
	struct x87_val x = x87_unpack(a), y = x87_unpack(b);
	if (x.cls == X87_NAN || y.cls == X87_NAN) {
		*out = x87_nan_result(a, b, x.cls == X87_NAN, y.cls == X87_NAN, &flags);
		return flags;
	}
	if (x.denormal || y.denormal)
		flags |= SW_DE;
	if (op == X87_SUBR || op == X87_DIVR) {
		struct x87_val t = x;
		x = y;
		y = t;
		op = op == X87_SUBR ? X87_SUB : X87_DIV;
	}
	unsigned rc = (cw >> 10) & 3;
	if (op == X87_SUB) {
		y.sign ^= 1;
		op = X87_ADD;
	}
	if (op == X87_ADD) {
		if (x.cls == X87_INF || y.cls == X87_INF) {
			if (x.cls == X87_INF && y.cls == X87_INF && x.sign != y.sign) {
				*out = x87_indefinite;
				return (uint16_t)(flags | SW_IE);
			}
			*out = x87_make(x.cls == X87_INF ? x.sign : y.sign, 0x7fff, 0x8000000000000000ull);
			return flags;
		}
		if (x.cls == X87_ZERO && y.cls == X87_ZERO) {
			int sign = x.sign == y.sign ? x.sign : rc == 1;
			*out = x87_make(sign, 0, 0);
			return flags;
		}
		if (x.cls == X87_ZERO || y.cls == X87_ZERO) {
			struct x87_val z = x.cls == X87_ZERO ? y : x;
			*out = x87_round80(z.sign, z.exp, (x87_u128)z.sig << 64, cw, &flags);
			return flags;
		}
		/* s * 2^(exp - 126): bit 127 free for the carry. */
		if (x.exp < y.exp || (x.exp == y.exp && x.sig < y.sig)) {
			struct x87_val t = x;
			x = y;
			y = t;
		}
		x87_u128 sx = (x87_u128)x.sig << 63, sy = x87_shift_sticky((x87_u128)y.sig << 63, x.exp - y.exp);
		x87_u128 s = x.sign == y.sign ? sx + sy : sx - sy;
		if (s == 0) {
			*out = x87_make(rc == 1, 0, 0);
			return flags;
		}
		int32_t exp = x.exp + 1;
		s = x87_norm(s, &exp);
		*out = x87_round80(x.sign, exp, s, cw, &flags);
		return flags;
	}
	int sign = x.sign ^ y.sign;
	if (op == X87_MUL) {
		if ((x.cls == X87_INF && y.cls == X87_ZERO) || (x.cls == X87_ZERO && y.cls == X87_INF)) {
			*out = x87_indefinite;
			return (uint16_t)(flags | SW_IE);
		}
		if (x.cls == X87_INF || y.cls == X87_INF) {
			*out = x87_make(sign, 0x7fff, 0x8000000000000000ull);
			return flags;
		}
		if (x.cls == X87_ZERO || y.cls == X87_ZERO) {
			*out = x87_make(sign, 0, 0);
			return flags;
		}
		x87_u128 s = (x87_u128)x.sig * y.sig; /* value = s * 2^(ex + ey - 126) */
		int32_t exp = x.exp + y.exp + 1;
		s = x87_norm(s, &exp);
		*out = x87_round80(sign, exp, s, cw, &flags);
		return flags;
	}
	/* Division. */
	if ((x.cls == X87_INF && y.cls == X87_INF) || (x.cls == X87_ZERO && y.cls == X87_ZERO)) {
		*out = x87_indefinite;
		return (uint16_t)(flags | SW_IE);
	}
	if (x.cls == X87_INF || y.cls == X87_ZERO) {
		if (x.cls == X87_FINITE)
			flags = (uint16_t)((flags & ~SW_DE) | SW_ZE); /* ZE alone, as this CPU does */
		*out = x87_make(sign, 0x7fff, 0x8000000000000000ull);
		return flags;
	}
	if (x.cls == X87_ZERO || y.cls == X87_INF) {
		*out = x87_make(sign, 0, 0);
		return flags;
	}
	uint64_t r, r2;
	x87_u128 q = x87_udiv((x87_u128)x.sig << 64, y.sig, &r);
	x87_u128 q2 = x87_udiv((x87_u128)r << 64, y.sig, &r2);
	/* x/y = (q + q2 / 2^64 + ...) * 2^(ex - ey - 64); keep q above bit 62. */
	x87_u128 s = (q << 62) | (q2 >> 2) | ((q2 & 3) != 0) | (r2 != 0);
	int32_t exp = x.exp - y.exp - 64 + 127 - 62;
	s = x87_norm(s, &exp);
	*out = x87_round80(sign, exp, s, cw, &flags);
	return flags;
}

static uint16_t unit_compare(uint16_t cw, uint16_t raised, int unordered, struct rpt_f80 a, struct rpt_f80 b);

/* A memory operand's denormal is not flagged next to a NaN st(0) (as this CPU does), in an
 * arithmetic operation or a compare alike; next to an infinity it is. The operation itself flags
 * the rest. */
static uint16_t unit_arith_memory(uint16_t cw, uint16_t raised, unsigned op, unsigned kind, struct rpt_f80 a, uint64_t bits,
				  struct rpt_f80 *out)
{
	(void)raised;
	struct rpt_f80 b;
	uint16_t flags = unit_load(cw, raised, kind, bits, &b);
	if ((a.se & 0x7fff) == 0x7fff && (a.m << 1))
		flags &= (uint16_t)~SW_DE;
	/* A signalling NaN operand takes part as one: against a quiet NaN in st(0) the quiet one is
	 * the result, which the load's quieting would hide. The operation flags its IE. */
	if ((flags & SW_IE) && (b.se & 0x7fff) == 0x7fff) {
		b.m &= ~0x4000000000000000ull;
		flags &= (uint16_t)~SW_IE;
	}
	uint16_t op_flags = unit_arith(cw, raised, op, a, b, out);
	/* A division by zero flags ZE alone. */
	if (op_flags & SW_ZE)
		flags &= (uint16_t)~SW_DE;
	return (uint16_t)(flags | op_flags);
}

static uint16_t unit_compare_memory(uint16_t cw, uint16_t raised, unsigned kind, struct rpt_f80 a, uint64_t bits)
{
	(void)raised;
	struct rpt_f80 b;
	uint16_t flags = unit_load(cw, raised, kind, bits, &b);
	if ((a.se & 0x7fff) == 0x7fff && (a.m << 1))
		flags &= (uint16_t)~SW_DE;
	return (uint16_t)(flags | unit_compare(cw, raised, 0, a, b));
}

static uint16_t unit_compare(uint16_t cw, uint16_t raised, int unordered, struct rpt_f80 a, struct rpt_f80 b)
{
	(void)raised;
	(void)cw;
	struct x87_val x = x87_unpack(a), y = x87_unpack(b);
	uint16_t flags = 0;
	if (x.cls == X87_NAN || y.cls == X87_NAN) {
		if (!unordered || x87_is_snan(a) || x87_is_snan(b))
			flags |= SW_IE;
		return (uint16_t)(flags | SW_C0 | SW_C2 | SW_C3);
	}
	if (x.denormal || y.denormal)
		flags |= SW_DE;
	int cmp;
	if (x.cls == X87_ZERO && y.cls == X87_ZERO) {
		cmp = 0;
	} else if (x.cls == X87_ZERO) {
		cmp = y.sign ? 1 : -1;
	} else if (y.cls == X87_ZERO) {
		cmp = x.sign ? -1 : 1;
	} else if (x.sign != y.sign) {
		cmp = x.sign ? -1 : 1;
	} else {
		/* Same sign, both nonzero: infinities above every finite magnitude. */
		int mag;
		if (x.cls != y.cls)
			mag = x.cls == X87_INF ? 1 : -1;
		else if (x.cls == X87_INF)
			mag = 0;
		else if (x.exp != y.exp)
			mag = x.exp < y.exp ? -1 : 1;
		else
			mag = x.sig == y.sig ? 0 : x.sig < y.sig ? -1 : 1;
		cmp = x.sign ? -mag : mag;
	}
	if (cmp < 0)
		flags |= SW_C0;
	else if (cmp == 0)
		flags |= SW_C3;
	return flags;
}

static uint16_t x87_xam(struct rpt_f80 a)
{
	struct x87_val u = x87_unpack(a);
	switch (u.cls) {
	case X87_NAN:
		return SW_C0;
	case X87_INF:
		return SW_C2 | SW_C0;
	case X87_ZERO:
		return SW_C3;
	default:
		return u.denormal ? (SW_C3 | SW_C2) : SW_C2;
	}
}

#include "x87_soft_transcendental.h"

static uint16_t unit_unary(uint16_t cw, uint16_t raised, unsigned op, struct rpt_f80 a, struct rpt_f80 *r, struct rpt_f80 *pushed)
{
	(void)raised;
	uint16_t flags = 0;
	struct x87_val u = x87_unpack(a);
	*pushed = x87_zero;
	switch (op) {
	case X87_FCHS:
		*r = a;
		r->se ^= 0x8000u;
		return 0;
	case X87_FABS:
		*r = a;
		r->se &= 0x7fffu;
		return 0;
	case X87_FTST:
		return unit_compare(cw, raised, 0, a, x87_zero);
	case X87_FXAM:
		return x87_xam(a);
	case X87_FSQRT:
		if (u.cls == X87_NAN) {
			*r = x87_nan_result(a, a, 1, 0, &flags);
			return flags;
		}
		if (u.cls == X87_ZERO || (u.cls == X87_INF && !u.sign)) {
			*r = a;
			return 0;
		}
		if (u.sign) {
			*r = x87_indefinite;
			return SW_IE; /* invalid, not also denormal */
		}
		{
			if (u.denormal)
				flags |= SW_DE;
			/* sqrt(sig * 2^(exp-63)): make the exponent even, then a bit-by-bit root of 66 bits. */
			int32_t e = u.exp - 63;
			x87_u128 rad = u.sig;
			if (e & 1) {
				rad <<= 1;
				e -= 1;
			}
			/* rad has up to 65 bits; root bits come two radicand bits at a time (132 bits). */
			x87_u128 rem = 0, root = 0;
			for (int i = 0; i < 66; i++) {
				int pos = 130 - 2 * i; /* radicand bit pair at rad << 66 */
				unsigned pair = pos - 66 >= 0 ? (unsigned)((rad >> (pos - 66)) & 3) : 0;
				rem = (rem << 2) | pair;
				x87_u128 t = (root << 2) | 1;
				if (rem >= t) {
					rem -= t;
					root = (root << 1) | 1;
				} else {
					root <<= 1;
				}
			}
			/* root = floor(sqrt(rad * 2^66)) with 66 bits: value = root * 2^(e/2 - 33). */
			x87_u128 s = (root << 2) | (rem != 0);
			int32_t exp = e / 2 - 33 - 2 + 127;
			s = x87_norm(s, &exp);
			*r = x87_round80(0, exp, s, cw, &flags);
			return flags;
		}
	case X87_FRNDINT: {
		if (u.cls == X87_NAN) {
			*r = x87_nan_result(a, a, 1, 0, &flags);
			return flags;
		}
		if (u.cls != X87_FINITE || u.exp >= 63) {
			*r = a;
			return 0;
		}
		if (u.denormal)
			flags |= SW_DE;
		int inexact, up;
		x87_u128 mag = x87_to_integer(u, (cw >> 10) & 3, &inexact, &up);
		if (inexact)
			flags |= SW_PE;
		if (up)
			flags |= SW_C1;
		if (mag == 0) {
			*r = x87_make(u.sign, 0, 0);
		} else {
			struct rpt_f80 m = x87_from_int((int64_t)(uint64_t)mag);
			if (mag >> 63)
				m = x87_make(0, 16383 + 63, (uint64_t)mag);
			m.se = (uint16_t)((m.se & 0x7fff) | (u.sign ? 0x8000u : 0));
			*r = m;
		}
		return flags;
	}
	case X87_FXTRACT:
		if (u.cls == X87_NAN) {
			*r = x87_nan_result(a, a, 1, 0, &flags);
			*pushed = *r;
			return flags;
		}
		if (u.cls == X87_ZERO) {
			*r = x87_make(1, 0x7fff, 0x8000000000000000ull);
			*pushed = a;
			return SW_ZE;
		}
		if (u.cls == X87_INF) {
			*r = x87_make(0, 0x7fff, 0x8000000000000000ull);
			*pushed = a;
			return 0;
		}
		*r = x87_from_int(u.exp);
		*pushed = x87_make(u.sign, 16383, u.sig);
		return u.denormal ? SW_DE : 0;
	case X87_F2XM1:
		return x87_soft_f2xm1(cw, a, r);
	default:
		return x87_soft_trig(cw, op, a, r, pushed);
	}
}

/* (-1)^sign * rem * 2^(exp - 63), rem < 2^64: exact (every finite x87 value, and so every remainder of
 * two, is a multiple of 2^-16445), a denormal below the normal range. */
static struct rpt_f80 x87_exact(int sign, int32_t exp, uint64_t rem)
{
	if (rem == 0)
		return x87_make(sign, 0, 0);
	int shift = __builtin_clzll(rem);
	exp -= shift;
	rem <<= shift;
	if (exp < -16382)
		return x87_make(sign, 0, rem >> (-16382 - exp));
	return x87_make(sign, (uint16_t)(exp + 16383), rem);
}

/* fprem (quotient truncated) and fprem1 (quotient rounded to nearest even): st(0) - q * st(1),
 * exact, with the quotient's low three bits in C0 (bit 2), C3 (bit 1) and C1 (bit 0). When the
 * exponents differ by 64 or more the reduction is partial (C2 set, C0, C1 and C3 clear): the
 * manual's D - N with N "between 32 and 63" is 32 + D mod 32 on the Intel CPU the x87 oracle ran
 * on, so st(0) is reduced to an exponent difference that is a multiple of 32, truncating the
 * quotient in both forms. */
static uint16_t x87_prem(int nearest, struct rpt_f80 a, struct rpt_f80 b, struct rpt_f80 *r)
{
	uint16_t flags = 0;
	struct x87_val x = x87_unpack(a), y = x87_unpack(b);
	if (x.cls == X87_NAN || y.cls == X87_NAN) {
		*r = x87_nan_result(a, b, x.cls == X87_NAN, y.cls == X87_NAN, &flags);
		return flags;
	}
	if (x.cls == X87_INF || y.cls == X87_ZERO) {
		*r = x87_indefinite;
		return SW_IE;
	}
	if (x.denormal || y.denormal)
		flags |= SW_DE;
	int32_t d = x.exp - y.exp;
	if (x.cls == X87_ZERO || y.cls == X87_INF || d < -1) {
		*r = a;
		return flags;
	}
	if (d == -1) {
		/* |st(0)| / |st(1)| is in [1/4, 1): the quotient is 0, or 1 for fprem1 above one half. */
		if (nearest && x.sig > y.sig) {
			*r = x87_exact(!x.sign, x.exp, (uint64_t)(((x87_u128)y.sig << 1) - x.sig));
			return (uint16_t)(flags | SW_C1);
		}
		*r = a;
		return flags;
	}
	int32_t n = d < 64 ? d : 32 + d % 32;
	uint64_t rem;
	x87_u128 q = x87_udiv((x87_u128)x.sig << n, y.sig, &rem);
	int32_t exp = y.exp + (d - n);
	if (d >= 64) {
		*r = x87_exact(x.sign, exp, rem);
		return (uint16_t)(flags | SW_C2);
	}
	int sign = x.sign;
	if (nearest && ((x87_u128)rem << 1 > y.sig || ((x87_u128)rem << 1 == y.sig && (q & 1)))) {
		q++;
		rem = y.sig - rem;
		sign = !sign;
	}
	*r = x87_exact(rem ? sign : x.sign, exp, rem);
	if (q & 4)
		flags |= SW_C0;
	if (q & 2)
		flags |= SW_C3;
	if (q & 1)
		flags |= SW_C1;
	return flags;
}

static uint16_t unit_binary(uint16_t cw, uint16_t raised, unsigned op, struct rpt_f80 a, struct rpt_f80 b, struct rpt_f80 *r)
{
	(void)raised;
	uint16_t flags = 0;
	if (op == X87_FPREM || op == X87_FPREM1)
		return x87_prem(op == X87_FPREM1, a, b, r);
	if (op == X87_FPATAN)
		return x87_soft_fpatan(cw, a, b, r);
	if (op == X87_FYL2X || op == X87_FYL2XP1)
		return x87_soft_fyl2x(cw, op == X87_FYL2XP1, a, b, r);
	struct x87_val x = x87_unpack(a), y = x87_unpack(b);
	if (x.cls == X87_NAN || y.cls == X87_NAN) {
		*r = x87_nan_result(a, b, x.cls == X87_NAN, y.cls == X87_NAN, &flags);
		return flags;
	}
	if (x.denormal || y.denormal)
		flags |= SW_DE;
	if (y.cls == X87_INF) {
		if ((x.cls == X87_ZERO && !y.sign) || (x.cls == X87_INF && y.sign)) {
			*r = x87_indefinite;
			return (uint16_t)(flags | SW_IE);
		}
		if (x.cls == X87_ZERO || x.cls == X87_INF) {
			*r = a;
			return flags;
		}
		*r = y.sign ? x87_make(x.sign, 0, 0) : x87_make(x.sign, 0x7fff, 0x8000000000000000ull);
		return flags;
	}
	if (x.cls != X87_FINITE) {
		*r = a;
		return flags;
	}
	/* The scale is st(1) truncated toward zero, clamped far beyond any exponent. */
	int32_t n = 0;
	if (y.cls == X87_FINITE && y.exp >= 0) {
		n = y.exp > 20 ? 0x100000 : (int32_t)(y.sig >> (63 - y.exp));
		if (y.sign)
			n = -n;
	}
	*r = x87_round80_prec(x.sign, x.exp + n, (x87_u128)x.sig << 64, cw, 1, &flags);
	return flags;
}

static struct rpt_f80 unit_constant(uint16_t cw, unsigned op)
{
	/* Each constant's 64-bit truncated significand and whether the bits beyond round it up to
	 * nearest; RC = up rounds every inexact one up (all are positive); down and zero truncate. */
	static const struct {
		uint16_t e;
		uint64_t m;
		int exact, nearest_up;
	} k[] = {
		{ 0x3fff, 0x8000000000000000ull, 1, 0 }, /* 1 */
		{ 0, 0, 1, 0 },				 /* 0 */
		{ 0x4000, 0xc90fdaa22168c234ull, 0, 1 }, /* pi */
		{ 0x3fff, 0xb8aa3b295c17f0bbull, 0, 1 }, /* log2(e) */
		{ 0x4000, 0xd49a784bcd1b8afeull, 0, 0 }, /* log2(10) */
		{ 0x3ffd, 0x9a209a84fbcff798ull, 0, 1 }, /* log10(2) */
		{ 0x3ffe, 0xb17217f7d1cf79abull, 0, 1 }, /* ln(2) */
	};
	unsigned i = op - X87_FLD1;
	unsigned rc = (cw >> 10) & 3;
	uint64_t m = k[i].m;
	if (!k[i].exact && ((rc == 0 && k[i].nearest_up) || rc == 2))
		m++;
	return x87_make(0, k[i].e, m);
}
