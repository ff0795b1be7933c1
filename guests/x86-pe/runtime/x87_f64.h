/*
 * x87_f64.h - the unit of the f64 value model (guest option x87: "f64"; docs/x87.md), included by
 * x87.c after the exact unit, which it reaches as exact_*.
 *
 * A register holds an IEEE double: its bits in st_m, st_e unused (zero). Loads, stores, the four
 * operations, compares, fxam, fchs, fabs, fsqrt and frndint are plain C double arithmetic under
 * round to nearest, which the runtime never changes; under another rounding control the four
 * operations and fsqrt go through the exact unit at 53-bit precision and are rounded to a double
 * again (exact, as one rounding at 53 bits is one double rounding), as do the transcendental
 * instructions, fscale, fprem, fxtract and the constants other than 0 and 1. Precision control is
 * ignored: every result is a double, so the model equals the real unit only at 53-bit precision
 * (and inside the double exponent range). The fast path keeps no exception flags but IE.
 */

static const struct rpt_f80 x87_reg_indefinite = { 0xfff8000000000000ull, 0 };

#define X87_F64_SIGN 0x8000000000000000ull
#define X87_F64_QUIET 0x0008000000000000ull
#define X87_RC(cw) (((cw) >> 10) & 3u)
#define X87_RC_NEAREST 0u
#define X87_RC_TRUNCATE 3u
/* The guest's control word with 53-bit precision: the exact unit's results are then doubles
 * but for the exponent range. */
#define X87_CW53(cw) ((uint16_t)(((cw) & ~0x0300u) | 0x0200u))

static double f64_value(struct rpt_f80 v)
{
	double d;
	__builtin_memcpy(&d, &v.m, 8);
	return d;
}

static struct rpt_f80 f64_reg(double d)
{
	struct rpt_f80 v = { 0, 0 };
	__builtin_memcpy(&v.m, &d, 8);
	return v;
}

static int x87_reg_is_nan(struct rpt_f80 v)
{
	return (v.m & ~X87_F64_SIGN) > 0x7ff0000000000000ull;
}

static int x87_reg_sign(struct rpt_f80 v)
{
	return (v.m & X87_F64_SIGN) != 0;
}

static int f64_is_snan(uint64_t bits)
{
	return (bits & ~X87_F64_SIGN) > 0x7ff0000000000000ull && !(bits & X87_F64_QUIET);
}

/* A register value in the exact unit's 80-bit format (every double is one). */
static struct rpt_f80 unit_to_f80(struct rpt_f80 v)
{
	struct rpt_f80 w;
	exact_load(X87_CW_INIT, 0, X87_KIND_F64, v.m, &w);
	return w;
}

/* An 80-bit value rounded to a double under cw's rounding control; flags it raises join *hw. */
static struct rpt_f80 f64_narrow(uint16_t cw, struct rpt_f80 w, uint16_t *hw)
{
	struct rpt_f80 v = { 0, 0 };
	*hw = (uint16_t)(*hw | (exact_store(cw, 0, X87_KIND_F64, 0, w, &v.m) & SW_EXCEPTIONS));
	return v;
}

static uint16_t unit_load_f80(uint16_t cw, uint16_t raised, struct rpt_f80 w, struct rpt_f80 *out)
{
	(void)raised;
	uint16_t hw = 0;
	*out = f64_narrow(cw, w, &hw);
	return hw;
}

/* d rounded to an integer under rc; |d| < 2^52 has an exact int64 truncation and fraction. */
static double f64_round_int(double d, unsigned rc)
{
	if (!(__builtin_fabs(d) < 0x1p52))
		return d;
	int64_t i = (int64_t)d;
	double frac = d - (double)i;
	switch (rc) {
	case X87_RC_NEAREST:
		if (frac > 0.5 || (frac == 0.5 && (i & 1)))
			i += 1;
		else if (frac < -0.5 || (frac == -0.5 && (i & 1)))
			i -= 1;
		break;
	case 1u: /* down */
		if (frac < 0)
			i -= 1;
		break;
	case 2u: /* up */
		if (frac > 0)
			i += 1;
		break;
	default:
		break;
	}
	/* A zero result keeps the operand's sign, as frndint's does. */
	return i == 0 ? (d < 0 ? -0.0 : 0.0) : (double)i;
}

static uint16_t unit_load(uint16_t cw, uint16_t raised, unsigned kind, uint64_t bits, struct rpt_f80 *out)
{
	(void)raised;
	switch (kind) {
	case X87_KIND_F32: {
		uint32_t b = (uint32_t)bits;
		float f;
		__builtin_memcpy(&f, &b, 4);
		*out = f64_reg((double)f);
		return (b & 0x7fffffffu) > 0x7f800000u && !(b & 0x00400000u) ? SW_IE : 0;
	}
	case X87_KIND_F64:
		out->m = f64_is_snan(bits) ? bits | X87_F64_QUIET : bits;
		out->se = 0;
		return f64_is_snan(bits) ? SW_IE : 0;
	case X87_KIND_I16:
		*out = f64_reg((double)(int16_t)bits);
		return 0;
	case X87_KIND_I32:
		*out = f64_reg((double)(int32_t)bits);
		return 0;
	default: {
		/* Beyond 2^53 the conversion rounds, under the guest's rounding control. */
		int64_t i = (int64_t)bits;
		if (i > -(1ll << 53) && i < (1ll << 53)) {
			*out = f64_reg((double)i);
			return 0;
		}
		struct rpt_f80 w;
		uint16_t hw = exact_load(cw, raised, kind, bits, &w);
		*out = f64_narrow(cw, w, &hw);
		return hw;
	}
	}
}

static uint16_t unit_store(uint16_t cw, uint16_t raised, unsigned kind, int truncate, struct rpt_f80 v, uint64_t *out)
{
	(void)raised;
	double d = f64_value(v);
	switch (kind) {
	case X87_KIND_F32:
		if (X87_RC(cw) == X87_RC_NEAREST && !x87_reg_is_nan(v)) {
			float f = (float)d;
			uint32_t b;
			__builtin_memcpy(&b, &f, 4);
			*out = b;
			return 0;
		}
		return exact_store(cw, raised, kind, truncate, unit_to_f80(v), out);
	case X87_KIND_F64:
		*out = v.m;
		return 0;
	default: {
		double r = f64_round_int(d, truncate ? X87_RC_TRUNCATE : X87_RC(cw));
		double limit = kind == X87_KIND_I16 ? 0x1p15 : kind == X87_KIND_I32 ? 0x1p31 : 0x1p63;
		if (!(r >= -limit && r < limit)) {
			/* The integer indefinite: the sign bit of the format alone. */
			*out = kind == X87_KIND_I16 ? 0x8000ull : kind == X87_KIND_I32 ? 0x80000000ull : X87_F64_SIGN;
			return SW_IE;
		}
		*out = (uint64_t)(int64_t)r;
		return 0;
	}
	}
}

static uint16_t unit_arith(uint16_t cw, uint16_t raised, unsigned op, struct rpt_f80 a, struct rpt_f80 b, struct rpt_f80 *out)
{
	(void)raised;
	if (X87_RC(cw) != X87_RC_NEAREST) {
		struct rpt_f80 w;
		uint16_t hw = exact_arith(X87_CW53(cw), raised, op, unit_to_f80(a), unit_to_f80(b), &w);
		*out = f64_narrow(cw, w, &hw);
		return hw;
	}
	double x = f64_value(a), y = f64_value(b), r;
	switch (op) {
	case X87_ADD:
		r = x + y;
		break;
	case X87_MUL:
		r = x * y;
		break;
	case X87_SUB:
		r = x - y;
		break;
	case X87_SUBR:
		r = y - x;
		break;
	case X87_DIV:
		r = x / y;
		break;
	default:
		r = y / x;
		break;
	}
	*out = f64_reg(r);
	/* A NaN out of numbers is an invalid operation: the x87's indefinite. */
	if (r != r && x == x && y == y) {
		*out = x87_reg_indefinite;
		return SW_IE;
	}
	return 0;
}

static uint16_t unit_compare(uint16_t cw, uint16_t raised, int unordered, struct rpt_f80 a, struct rpt_f80 b)
{
	(void)raised;
	double x = f64_value(a), y = f64_value(b);
	(void)cw;
	if (x > y)
		return 0;
	if (x < y)
		return SW_C0;
	if (x == y)
		return SW_C3;
	/* fucom raises IE for a signalling NaN only, fcom for any NaN. */
	int invalid = !unordered || f64_is_snan(a.m) || f64_is_snan(b.m);
	return (uint16_t)(SW_C0 | SW_C2 | SW_C3 | (invalid ? SW_IE : 0));
}

static uint16_t unit_arith_memory(uint16_t cw, uint16_t raised, unsigned op, unsigned kind, struct rpt_f80 a, uint64_t bits,
				  struct rpt_f80 *out)
{
	(void)raised;
	struct rpt_f80 b;
	uint16_t hw = unit_load(cw, raised, kind, bits, &b);
	return (uint16_t)(hw | unit_arith(cw, raised, op, a, b, out));
}

static uint16_t unit_compare_memory(uint16_t cw, uint16_t raised, unsigned kind, struct rpt_f80 a, uint64_t bits)
{
	(void)raised;
	struct rpt_f80 b;
	uint16_t hw = unit_load(cw, raised, kind, bits, &b);
	return (uint16_t)(hw | unit_compare(cw, raised, 0, a, b));
}

static uint16_t unit_unary(uint16_t cw, uint16_t raised, unsigned op, struct rpt_f80 a, struct rpt_f80 *r, struct rpt_f80 *pushed)
{
	(void)raised;
	double x = f64_value(a);
	uint64_t exp = (a.m >> 52) & 0x7ffu, frac = a.m & 0x000fffffffffffffull;
	switch (op) {
	case X87_FCHS:
		r->m = a.m ^ X87_F64_SIGN;
		r->se = 0;
		return 0;
	case X87_FABS:
		r->m = a.m & ~X87_F64_SIGN;
		r->se = 0;
		return 0;
	case X87_FSQRT:
		if (X87_RC(cw) != X87_RC_NEAREST)
			break;
		if (x < 0) {
			*r = x87_reg_indefinite;
			return SW_IE;
		}
		*r = f64_reg(__builtin_sqrt(x));
		return 0;
	case X87_FRNDINT:
		*r = f64_reg(f64_round_int(x, X87_RC(cw)));
		return 0;
	case X87_FTST:
		return unit_compare(cw, raised, 0, a, f64_reg(0.0));
	case X87_FXAM:
		/* A double's denormal is a normal number in an 80-bit register, and fxam says so. */
		if (exp == 0x7ffu)
			return frac ? SW_C0 : (SW_C0 | SW_C2);
		return exp == 0 && frac == 0 ? SW_C3 : SW_C2;
	default:
		break;
	}
	struct rpt_f80 wr, wp;
	uint16_t hw = exact_unary(X87_CW53(cw), raised, op, unit_to_f80(a), &wr, &wp);
	*r = f64_narrow(cw, wr, &hw);
	*pushed = f64_narrow(cw, wp, &hw);
	return hw;
}

static uint16_t unit_binary(uint16_t cw, uint16_t raised, unsigned op, struct rpt_f80 a, struct rpt_f80 b, struct rpt_f80 *r)
{
	(void)raised;
	struct rpt_f80 w;
	uint16_t hw = exact_binary(X87_CW53(cw), raised, op, unit_to_f80(a), unit_to_f80(b), &w);
	*r = f64_narrow(cw, w, &hw);
	return hw;
}

static struct rpt_f80 unit_constant(uint16_t cw, unsigned op)
{
	uint16_t hw = 0;
	if (op == X87_FLDZ)
		return f64_reg(0.0);
	if (op == X87_FLD1)
		return f64_reg(1.0);
	return f64_narrow(cw, exact_constant(cw, op), &hw);
}
