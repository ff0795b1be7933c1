/*
 * msvcrt_format.c - the printf and scanf engines of msvcrt, reading their arguments from guest
 * memory, and the exact decimal conversions behind them (no host libc is involved).
 *
 * printf follows msvcrt.dll as Wine 8 implements it (Wine is the oracle for PE programs):
 * - Floating point is converted exactly (big-number arithmetic), and an exact tie rounds away
 *   from zero: printf("%.0f", 2.5) is "3" and printf("%.2f", 0.125) is "0.13" (glibc rounds
 *   ties to even). Exponents have at least three digits ("1e+005").
 * - Infinities and NaNs are "1.#INF", "-1.#IND" (NaN with the sign bit), "1.#QNAN" and
 *   "1.#SNAN", and take part in rounding as if they were digits ("%.1f" of infinity is "1.$").
 * - Size prefixes: h and hh (short), l, L (long double is double), ll, I64, I32, I, j (64-bit),
 *   z, t, F and N (ignored, as msvcrt's far/near pointer sizes). Types: d i u o x X c C s S p n
 *   e E f g G a A and %%. An unknown type character is printed as itself.
 * - %p is eight upper-case hex digits; the 0 flag pads strings and characters too, and it still
 *   pads when a precision is given ("%08.3d" of 42 is "00000042"); "%#.0o" of 0 prints nothing.
 * - %n is honoured.
 *
 * scanf follows msvcrt: whitespace in the format skips any amount of input whitespace; d i u o
 * x X e E f g G s c [ ] n p and %% with widths, * (suppress), h, l, L, ll and I64. Floating-point
 * input is converted exactly (correctly rounded to nearest, ties to even, as msvcrt does);
 * %f into a float rounds the double.
 */
#include "win32_console.h"

/* ---------------------------------------------------------------- exact double to decimal */

/* A non-negative integer in base 10^9, least significant limb first. 10^767 (the longest exact
 * expansion of a double, 2^-1074) needs 86 limbs. */
#define RPT_DEC_LIMBS 100
struct rpt_dec {
	uint32_t limb[RPT_DEC_LIMBS];
	uint32_t n;
};

static void rpt_dec_mul_small(struct rpt_dec *a, uint32_t m)
{
	uint64_t carry = 0;
	for (uint32_t i = 0; i < a->n; i++) {
		uint64_t v = (uint64_t)a->limb[i] * m + carry;
		a->limb[i] = (uint32_t)(v % 1000000000u);
		carry = v / 1000000000u;
	}
	while (carry && a->n < RPT_DEC_LIMBS) {
		a->limb[a->n++] = (uint32_t)(carry % 1000000000u);
		carry /= 1000000000u;
	}
}

/* The exact decimal digits of a finite positive double: value = 0.D1D2...Dn x 10^point.
 * Returns n (no trailing zeros), at most 800. */
static uint32_t rpt_exact_digits(double v, char *digits, int *point)
{
	uint64_t bits = rpt_f64_bits(v);
	int biased = (int)(bits >> 52 & 0x7ff);
	uint64_t mantissa = bits & 0xfffffffffffffull;
	int exp2;
	if (biased == 0) {
		exp2 = -1074;
	} else {
		mantissa |= 1ull << 52;
		exp2 = biased - 1075;
	}
	if (mantissa == 0) {
		*point = 1;
		digits[0] = '0';
		return 1;
	}
	/* Take out the trailing zero bits first: fewer multiplications by five. */
	while (!(mantissa & 1)) {
		mantissa >>= 1;
		exp2++;
	}
	struct rpt_dec big;
	big.n = 0;
	while (mantissa) {
		big.limb[big.n++] = (uint32_t)(mantissa % 1000000000u);
		mantissa /= 1000000000u;
	}
	int shift = 0; /* decimal digits after the point in big's value */
	if (exp2 > 0) {
		for (int e = exp2; e > 0; e -= 29)
			rpt_dec_mul_small(&big, 1u << (e > 29 ? 29 : e));
	} else {
		/* m * 2^-k = m * 5^k / 10^k */
		for (int k = -exp2; k > 0; k -= 13) {
			uint32_t p = 1;
			for (int i = 0; i < (k > 13 ? 13 : k); i++)
				p *= 5;
			rpt_dec_mul_small(&big, p);
		}
		shift = -exp2;
	}
	/* Write the limbs out, most significant first, without leading zeros. */
	uint32_t n = 0;
	char tmp[9];
	for (uint32_t i = big.n; i > 0; i--) {
		uint32_t limb = big.limb[i - 1];
		for (int j = 8; j >= 0; j--) {
			tmp[j] = (char)('0' + limb % 10);
			limb /= 10;
		}
		for (int j = 0; j < 9; j++) {
			if (n == 0 && tmp[j] == '0')
				continue;
			digits[n++] = tmp[j];
		}
	}
	*point = (int)n - shift;
	while (n > 1 && digits[n - 1] == '0')
		n--;
	return n;
}

/* Rounds digits to their first `keep` digits, an exact tie (or more) away from zero. Digits may
 * be the letters of "#INF" and friends; rounding then follows their character codes. */
static uint32_t rpt_round_digits(char *digits, uint32_t n, int *point, int keep)
{
	if (keep < 0)
		return 0;
	if ((uint32_t)keep >= n)
		return n;
	int up = digits[keep] >= '5';
	n = (uint32_t)keep;
	if (!up)
		return n;
	for (uint32_t i = n; i > 0; i--) {
		if (digits[i - 1] != '9') {
			digits[i - 1]++;
			return n;
		}
		digits[i - 1] = '0';
	}
	/* 9.99 became 10.0: one more leading digit. */
	digits[0] = '1';
	(*point)++;
	return n ? n : 1;
}

/* ---------------------------------------------------------------- printf's output */

static void rpt_put(struct rpt_fmt_sink *sink, const char *bytes, uint32_t n)
{
	if (n)
		sink->put(sink, bytes, n);
	sink->count += n;
}

static void rpt_put_repeat(struct rpt_fmt_sink *sink, char ch, int32_t n)
{
	char block[32];
	for (int i = 0; i < 32; i++)
		block[i] = ch;
	while (n > 0) {
		uint32_t k = n > 32 ? 32 : (uint32_t)n;
		rpt_put(sink, block, k);
		n -= (int32_t)k;
	}
}

struct rpt_spec {
	int left, plus, space, alt, zero;
	int32_t width;
	int32_t precision; /* -1: none */
	int size;          /* 'h', 'l', 'q' (64-bit), 0 */
	char type;
};

/* A converted value as pieces: sign and prefix, then zero padding, zeros the precision asks for,
 * body, extra zeros, suffix. The body holds at most a double's exact expansion: 309 integer
 * digits, a point and 1074 fraction digits. */
struct rpt_piece {
	char head[4]; /* sign and "0x" */
	uint32_t head_len;
	int32_t zeros_before; /* an integer's precision zeros */
	char body[1400];
	uint32_t body_len;
	int32_t zeros_after; /* zeros after the body (a long %f fraction) */
	char tail[8];       /* exponent */
	uint32_t tail_len;
	int zero_pad_ok;
};

static void rpt_emit_piece(struct rpt_fmt_sink *sink, const struct rpt_spec *s, const struct rpt_piece *p)
{
	int32_t len = (int32_t)(p->head_len + p->body_len + p->tail_len) + p->zeros_before + p->zeros_after;
	int32_t pad = s->width > len ? s->width - len : 0;
	if (!s->left && !(s->zero && p->zero_pad_ok))
		rpt_put_repeat(sink, ' ', pad);
	rpt_put(sink, p->head, p->head_len);
	if (!s->left && s->zero && p->zero_pad_ok)
		rpt_put_repeat(sink, '0', pad);
	rpt_put_repeat(sink, '0', p->zeros_before);
	rpt_put(sink, p->body, p->body_len);
	rpt_put_repeat(sink, '0', p->zeros_after);
	rpt_put(sink, p->tail, p->tail_len);
	if (s->left)
		rpt_put_repeat(sink, ' ', pad);
}

static void rpt_body_char(struct rpt_piece *p, char ch)
{
	if (p->body_len < sizeof p->body)
		p->body[p->body_len++] = ch;
}

static void rpt_format_integer(struct rpt_fmt_sink *sink, const struct rpt_spec *s, uint64_t raw)
{
	struct rpt_piece p = { .zero_pad_ok = 1 };
	int is_signed = s->type == 'd' || s->type == 'i';
	uint64_t v = raw;
	if (is_signed) {
		int64_t sv = (int64_t)raw;
		if (sv < 0) {
			p.head[p.head_len++] = '-';
			v = (uint64_t)0 - raw;
		} else if (s->plus) {
			p.head[p.head_len++] = '+';
		} else if (s->space) {
			p.head[p.head_len++] = ' ';
		}
	}
	unsigned base = s->type == 'o' ? 8 : (s->type == 'x' || s->type == 'X' || s->type == 'p') ? 16 : 10;
	const char *hex = s->type == 'x' ? "0123456789abcdef" : "0123456789ABCDEF";
	char digits[24];
	uint32_t n = 0;
	for (uint64_t t = v; t; t /= base)
		digits[n++] = hex[t % base];
	if (s->alt && v != 0 && (s->type == 'x' || s->type == 'X')) {
		p.head[p.head_len++] = '0';
		p.head[p.head_len++] = s->type;
	}
	int32_t min_digits = s->precision >= 0 ? s->precision : 1;
	if (s->alt && s->type == 'o' && v != 0 && (int32_t)n >= min_digits)
		min_digits = (int32_t)n + 1;
	p.zeros_before = min_digits > (int32_t)n ? min_digits - (int32_t)n : 0;
	while (n > 0)
		rpt_body_char(&p, digits[--n]);
	rpt_emit_piece(sink, s, &p);
}

/* The digits of a special value, as msvcrt lets them take part in formatting. */
static const char *rpt_special_text(uint64_t bits)
{
	uint64_t mantissa = bits & 0xfffffffffffffull;
	if (!mantissa)
		return "1#INF";
	if (bits >> 63)
		return "1#IND";
	return mantissa >> 51 ? "1#QNAN" : "1#SNAN";
}

/* Appends the exponent "e+005" (at least three digits). */
static void rpt_exponent(struct rpt_piece *p, char e, int x)
{
	p->tail[p->tail_len++] = e;
	p->tail[p->tail_len++] = x < 0 ? '-' : '+';
	unsigned ax = (unsigned)(x < 0 ? -x : x);
	char d[5];
	int n = 0;
	do {
		d[n++] = (char)('0' + ax % 10);
		ax /= 10;
	} while (ax);
	while (n < 3)
		d[n++] = '0';
	while (n > 0)
		p->tail[p->tail_len++] = d[--n];
}

static void rpt_fixed(struct rpt_piece *p, const char *digits, uint32_t n, int point, int32_t precision, int alt)
{
	if (point <= 0) {
		rpt_body_char(p, '0');
	} else {
		for (int i = 0; i < point; i++)
			rpt_body_char(p, (uint32_t)i < n ? digits[i] : '0');
	}
	if (precision > 0 || alt)
		rpt_body_char(p, '.');
	/* Fraction digits: the known ones go into the body, the zeros beyond are only counted. */
	int32_t i = 0;
	for (; i < precision; i++) {
		int idx = point + i;
		if (idx >= (int)n)
			break;
		rpt_body_char(p, idx < 0 ? '0' : digits[idx]);
	}
	p->zeros_after = precision - i;
}

static void rpt_scientific(struct rpt_piece *p, const char *digits, uint32_t n, int point, int32_t precision, int alt,
			   char e, int is_zero)
{
	rpt_body_char(p, digits[0]);
	if (precision > 0 || alt)
		rpt_body_char(p, '.');
	int32_t i = 0;
	for (; i < precision && (uint32_t)(i + 1) < n; i++)
		rpt_body_char(p, digits[i + 1]);
	p->zeros_after = precision - i;
	rpt_exponent(p, e, is_zero ? 0 : point - 1);
}

/* Drops a %g fraction's trailing zeros, and its point if nothing follows it. */
static void rpt_trim_fraction(struct rpt_piece *p)
{
	p->zeros_after = 0;
	uint32_t dot = p->body_len;
	for (uint32_t i = 0; i < p->body_len; i++)
		if (p->body[i] == '.')
			dot = i;
	if (dot == p->body_len)
		return;
	while (p->body_len > dot + 1 && p->body[p->body_len - 1] == '0')
		p->body_len--;
	if (p->body_len == dot + 1)
		p->body_len = dot;
}

static void rpt_format_hexfloat(struct rpt_fmt_sink *sink, const struct rpt_spec *s, uint64_t bits, struct rpt_piece *p)
{
	int upper = s->type == 'A';
	const char *hex = upper ? "0123456789ABCDEF" : "0123456789abcdef";
	int biased = (int)(bits >> 52 & 0x7ff);
	uint64_t mantissa = bits & 0xfffffffffffffull;
	int lead = biased != 0;
	int exp2 = biased == 0 ? (mantissa ? -1022 : 0) : biased - 1023;
	if (s->precision >= 0 && s->precision < 13) {
		/* Round the 52 fraction bits to precision hex digits, a tie away from zero. */
		int drop = 4 * (13 - s->precision);
		uint64_t half = 1ull << (drop - 1);
		uint64_t rest = mantissa & ((1ull << drop) - 1);
		mantissa >>= drop;
		if (rest >= half)
			mantissa++;
		if (mantissa >> (4 * s->precision)) {
			mantissa &= (1ull << (4 * s->precision)) - 1;
			lead++;
		}
		mantissa <<= drop;
	}
	p->head[p->head_len++] = '0';
	p->head[p->head_len++] = upper ? 'X' : 'x';
	rpt_body_char(p, (char)('0' + lead));
	int32_t digits = s->precision >= 0 ? s->precision : 13;
	if (digits > 0 || s->alt)
		rpt_body_char(p, '.');
	for (int32_t i = 0; i < digits; i++)
		rpt_body_char(p, i < 13 ? hex[mantissa >> (48 - 4 * i) & 15] : '0');
	p->tail[p->tail_len++] = upper ? 'P' : 'p';
	p->tail[p->tail_len++] = exp2 < 0 ? '-' : '+';
	unsigned ax = (unsigned)(exp2 < 0 ? -exp2 : exp2);
	char d[5];
	int n = 0;
	do {
		d[n++] = (char)('0' + ax % 10);
		ax /= 10;
	} while (ax);
	while (n > 0)
		p->tail[p->tail_len++] = d[--n];
	rpt_emit_piece(sink, s, p);
}

static void rpt_format_double(struct rpt_fmt_sink *sink, const struct rpt_spec *s, uint64_t bits)
{
	struct rpt_piece p = { .zero_pad_ok = 1 };
	if (bits >> 63)
		p.head[p.head_len++] = '-';
	else if (s->plus)
		p.head[p.head_len++] = '+';
	else if (s->space)
		p.head[p.head_len++] = ' ';
	char type = s->type;
	if (type == 'a' || type == 'A') {
		rpt_format_hexfloat(sink, s, bits, &p);
		return;
	}
	char digits[820];
	uint32_t n;
	int point;
	int special = (bits >> 52 & 0x7ff) == 0x7ff;
	int is_zero = (bits << 1) == 0;
	if (special) {
		const char *text = rpt_special_text(bits);
		n = rpt_win32_strlen(text);
		for (uint32_t i = 0; i < n; i++)
			digits[i] = text[i];
		point = 1;
	} else {
		n = rpt_exact_digits(rpt_f64_from_bits(bits & ~(1ull << 63)), digits, &point);
	}
	int32_t precision = s->precision >= 0 ? s->precision : 6;
	char e = (type == 'E' || type == 'G') ? 'E' : 'e';
	if (type == 'f') {
		n = rpt_round_digits(digits, n, &point, point + precision);
		if (n == 0) {
			digits[0] = '0';
			n = 1;
			point = 1;
		}
		rpt_fixed(&p, digits, n, point, precision, s->alt);
	} else if (type == 'e' || type == 'E') {
		n = rpt_round_digits(digits, n, &point, precision + 1);
		rpt_scientific(&p, digits, n, point, precision, s->alt, e, is_zero);
	} else {
		if (precision == 0)
			precision = 1;
		n = rpt_round_digits(digits, n, &point, precision);
		int x = is_zero ? 0 : point - 1;
		if (x < precision && x >= -4)
			rpt_fixed(&p, digits, n, point, precision - 1 - x, s->alt);
		else
			rpt_scientific(&p, digits, n, point, precision - 1, s->alt, e, is_zero);
		if (!s->alt || special) {
			/* The exponent is in the tail, so trimming the body leaves it alone. */
			rpt_trim_fraction(&p);
		}
	}
	rpt_emit_piece(sink, s, &p);
}

static void rpt_format_text(struct rpt_fmt_sink *sink, const struct rpt_spec *s, uint32_t str, int wide)
{
	static const char null_text[] = "(null)";
	uint32_t len = 0;
	if (!str) {
		len = sizeof null_text - 1;
	} else {
		for (; s->precision < 0 || len < (uint32_t)s->precision; len++)
			if (!(wide ? rpt_load_u16_le(str + 2 * len) : rpt_load_u8_le(str + len)))
				break;
	}
	if (!str && s->precision >= 0 && len > (uint32_t)s->precision)
		len = (uint32_t)s->precision;
	int32_t pad = s->width > (int32_t)len ? s->width - (int32_t)len : 0;
	if (!s->left)
		rpt_put_repeat(sink, s->zero ? '0' : ' ', pad);
	char chunk[64];
	uint32_t k = 0;
	for (uint32_t i = 0; i < len; i++) {
		if (!str) {
			chunk[k++] = null_text[i];
		} else if (wide) {
			uint16_t w = rpt_load_u16_le(str + 2 * i);
			chunk[k++] = w > 0xff ? '?' : (char)w;
		} else {
			chunk[k++] = (char)rpt_load_u8_le(str + i);
		}
		if (k == sizeof chunk) {
			rpt_put(sink, chunk, k);
			k = 0;
		}
	}
	rpt_put(sink, chunk, k);
	if (s->left)
		rpt_put_repeat(sink, ' ', pad);
}

static void rpt_format_char(struct rpt_fmt_sink *sink, const struct rpt_spec *s, char ch)
{
	int32_t pad = s->width > 1 ? s->width - 1 : 0;
	if (!s->left)
		rpt_put_repeat(sink, s->zero ? '0' : ' ', pad);
	rpt_put(sink, &ch, 1);
	if (s->left)
		rpt_put_repeat(sink, ' ', pad);
}

static uint32_t rpt_next_arg(uint32_t *ap)
{
	uint32_t v = rpt_load_u32_le(*ap);
	*ap += 4;
	return v;
}

static uint64_t rpt_next_arg64(uint32_t *ap)
{
	uint64_t v = rpt_load_u64_le(*ap);
	*ap += 8;
	return v;
}

/* Reads a decimal number or '*' (an int argument) at *f. */
static int32_t rpt_format_number(uint32_t *f, uint32_t *ap, int *from_star)
{
	*from_star = 0;
	if (rpt_load_u8_le(*f) == '*') {
		(*f)++;
		*from_star = 1;
		return (int32_t)rpt_next_arg(ap);
	}
	int32_t v = 0;
	for (uint8_t ch; (ch = rpt_load_u8_le(*f)) >= '0' && ch <= '9'; (*f)++)
		v = v * 10 + (ch - '0');
	return v;
}

int rpt_msvcrt_format(struct rpt_fmt_sink *sink, uint32_t fmt, uint32_t args)
{
	uint32_t f = fmt, ap = args;
	for (;;) {
		/* Literal text up to the next '%', in chunks. */
		char chunk[64];
		uint32_t k = 0;
		uint8_t ch;
		while ((ch = rpt_load_u8_le(f)) && ch != '%') {
			chunk[k++] = (char)ch;
			f++;
			if (k == sizeof chunk) {
				rpt_put(sink, chunk, k);
				k = 0;
			}
		}
		rpt_put(sink, chunk, k);
		if (!ch)
			break;
		f++; /* the '%' */
		struct rpt_spec s = { .precision = -1 };
		for (;; f++) {
			ch = rpt_load_u8_le(f);
			if (ch == '-')
				s.left = 1;
			else if (ch == '+')
				s.plus = 1;
			else if (ch == ' ')
				s.space = 1;
			else if (ch == '#')
				s.alt = 1;
			else if (ch == '0')
				s.zero = 1;
			else
				break;
		}
		int star;
		s.width = rpt_format_number(&f, &ap, &star);
		if (s.width < 0) {
			s.left = 1;
			s.width = -s.width;
		}
		if (rpt_load_u8_le(f) == '.') {
			f++;
			s.precision = rpt_format_number(&f, &ap, &star);
			if (s.precision < 0)
				s.precision = -1;
		}
		int wide_chars = 0, narrow_chars = 0;
		for (;; f++) {
			ch = rpt_load_u8_le(f);
			if (ch == 'h') {
				s.size = 'h';
				narrow_chars = 1;
			} else if (ch == 'l') {
				if (rpt_load_u8_le(f + 1) == 'l') {
					f++;
					s.size = 'q';
				} else {
					s.size = 'l';
				}
				wide_chars = 1;
			} else if (ch == 'w') {
				wide_chars = 1;
			} else if (ch == 'L' || ch == 'F' || ch == 'N' || ch == 'z' || ch == 't') {
				/* long double is double; far/near and size_t/ptrdiff_t are 32-bit. */
			} else if (ch == 'j') {
				s.size = 'q';
			} else if (ch == 'I') {
				if (rpt_load_u8_le(f + 1) == '6' && rpt_load_u8_le(f + 2) == '4') {
					f += 2;
					s.size = 'q';
				} else if (rpt_load_u8_le(f + 1) == '3' && rpt_load_u8_le(f + 2) == '2') {
					f += 2;
					s.size = 0;
				}
			} else {
				break;
			}
		}
		s.type = (char)ch;
		if (!ch)
			break;
		f++;
		switch (ch) {
		case 'd':
		case 'i': {
			uint64_t v;
			if (s.size == 'q') {
				v = rpt_next_arg64(&ap);
			} else {
				uint32_t w = rpt_next_arg(&ap);
				v = s.size == 'h' ? (uint64_t)(int64_t)(int16_t)w : (uint64_t)(int64_t)(int32_t)w;
			}
			rpt_format_integer(sink, &s, v);
			break;
		}
		case 'u':
		case 'o':
		case 'x':
		case 'X': {
			uint64_t v;
			if (s.size == 'q') {
				v = rpt_next_arg64(&ap);
			} else {
				uint32_t w = rpt_next_arg(&ap);
				v = s.size == 'h' ? (uint16_t)w : w;
			}
			rpt_format_integer(sink, &s, v);
			break;
		}
		case 'p': {
			struct rpt_spec ps = s;
			ps.type = 'X';
			ps.precision = 8;
			rpt_format_integer(sink, &ps, rpt_next_arg(&ap));
			break;
		}
		case 'c':
		case 'C': {
			uint32_t v = rpt_next_arg(&ap);
			int wide = ch == 'C' ? !narrow_chars : wide_chars;
			rpt_format_char(sink, &s, wide && (v & 0xffff) > 0xff ? '?' : (char)v);
			break;
		}
		case 's':
		case 'S': {
			uint32_t v = rpt_next_arg(&ap);
			int wide = ch == 'S' ? !narrow_chars : wide_chars;
			rpt_format_text(sink, &s, v, wide);
			break;
		}
		case 'n': {
			uint32_t where = rpt_next_arg(&ap);
			if (s.size == 'h')
				rpt_store_u16_le(where, (uint16_t)sink->count);
			else
				rpt_store_u32_le(where, sink->count);
			break;
		}
		case 'e':
		case 'E':
		case 'f':
		case 'g':
		case 'G':
		case 'a':
		case 'A':
			rpt_format_double(sink, &s, rpt_next_arg64(&ap));
			break;
		default: {
			/* '%' and unknown types print the character itself, padded like one. */
			char c = (char)ch;
			rpt_format_char(sink, &s, c);
			break;
		}
		}
	}
	return sink->failed ? -1 : (int)sink->count;
}

/* ---------------------------------------------------------------- exact decimal to double */

/* A non-negative integer in base 2^32, least significant limb first; 10^1200 needs 125 limbs. */
#define RPT_BIN_LIMBS 160
struct rpt_bin {
	uint32_t limb[RPT_BIN_LIMBS];
	uint32_t n;
};

static void rpt_bin_mul_add(struct rpt_bin *a, uint32_t m, uint32_t add)
{
	uint64_t carry = add;
	for (uint32_t i = 0; i < a->n; i++) {
		uint64_t v = (uint64_t)a->limb[i] * m + carry;
		a->limb[i] = (uint32_t)v;
		carry = v >> 32;
	}
	if (carry && a->n < RPT_BIN_LIMBS)
		a->limb[a->n++] = (uint32_t)carry;
}

static uint32_t rpt_bin_bits(const struct rpt_bin *a)
{
	if (!a->n)
		return 0;
	return 32 * (a->n - 1) + (32 - (uint32_t)__builtin_clz(a->limb[a->n - 1]));
}

static void rpt_bin_shl(struct rpt_bin *a, uint32_t bits)
{
	if (!a->n)
		return;
	uint32_t words = bits / 32, rest = bits % 32;
	uint32_t n = a->n + words + 1;
	if (n > RPT_BIN_LIMBS)
		n = RPT_BIN_LIMBS;
	for (uint32_t i = n; i > 0; i--) {
		uint32_t src = i - 1;
		uint64_t hi = src >= words && src - words < a->n ? a->limb[src - words] : 0;
		uint64_t lo = rest && src >= words + 1 && src - words - 1 < a->n ? a->limb[src - words - 1] : 0;
		a->limb[src] = (uint32_t)((hi << rest) | (rest ? lo >> (32 - rest) : 0));
	}
	a->n = n;
	while (a->n && !a->limb[a->n - 1])
		a->n--;
}

static void rpt_bin_shr1(struct rpt_bin *a)
{
	for (uint32_t i = 0; i < a->n; i++)
		a->limb[i] = (a->limb[i] >> 1) | (i + 1 < a->n ? a->limb[i + 1] << 31 : 0);
	while (a->n && !a->limb[a->n - 1])
		a->n--;
}

static int rpt_bin_cmp(const struct rpt_bin *a, const struct rpt_bin *b)
{
	if (a->n != b->n)
		return a->n < b->n ? -1 : 1;
	for (uint32_t i = a->n; i > 0; i--)
		if (a->limb[i - 1] != b->limb[i - 1])
			return a->limb[i - 1] < b->limb[i - 1] ? -1 : 1;
	return 0;
}

static void rpt_bin_sub(struct rpt_bin *a, const struct rpt_bin *b)
{
	int64_t borrow = 0;
	for (uint32_t i = 0; i < a->n; i++) {
		int64_t v = (int64_t)a->limb[i] - (i < b->n ? b->limb[i] : 0) - borrow;
		borrow = v < 0;
		a->limb[i] = (uint32_t)v;
	}
	while (a->n && !a->limb[a->n - 1])
		a->n--;
}

/* The double nearest to (q + a bit of sticky below) * 2^exp2, ties to even. */
static double rpt_round_binary(uint64_t q, int exp2, int sticky, int *range_error)
{
	if (!q)
		return 0.0;
	int bits = 64 - __builtin_clzll(q);
	int e = bits - 1 + exp2; /* the unbiased exponent of the leading bit */
	int keep = 53;
	if (e < -1022)
		keep = 53 - (-1022 - e);
	if (keep < 0) {
		*range_error = 1;
		return 0.0;
	}
	int drop = bits - keep;
	uint64_t mantissa;
	if (drop <= 0) {
		mantissa = q << -drop;
	} else {
		mantissa = drop >= 64 ? 0 : q >> drop;
		uint64_t rest = drop >= 64 ? q : q & ((1ull << drop) - 1);
		uint64_t half = 1ull << (drop - 1);
		if (rest > half || (rest == half && (sticky || (mantissa & 1))))
			mantissa++;
	}
	/* mantissa now has `keep` bits (or keep+1 after a carry) for value mantissa * 2^(e-keep+1). */
	int scale = e - keep + 1;
	if (keep < 53) {
		/* Subnormal: the exponent is fixed at -1074. */
		uint64_t out = mantissa; /* units of 2^-1074 */
		if (out == 0)
			*range_error = 1;
		return rpt_f64_from_bits(out);
	}
	if (mantissa >> 53) {
		mantissa >>= 1;
		scale++;
	}
	int biased = scale + 52 + 1023;
	if (biased >= 0x7ff) {
		*range_error = 1;
		return rpt_f64_from_bits(0x7ff0000000000000ull);
	}
	return rpt_f64_from_bits((uint64_t)biased << 52 | (mantissa & 0xfffffffffffffull));
}

/* Keeps this many significant digits exactly; any further nonzero digit only sets `sticky`. */
#define RPT_PARSE_DIGITS 800

uint32_t rpt_msvcrt_parse_double(const char *text, double *out, int *range_error)
{
	const char *p = text;
	*range_error = 0;
	*out = 0.0;
	while (*p == ' ' || (*p >= '\t' && *p <= '\r'))
		p++;
	int negative = 0;
	if (*p == '+' || *p == '-')
		negative = *p++ == '-';
	struct rpt_bin d = { .n = 0 };
	int kept = 0, sticky = 0, any = 0;
	int exp10 = 0; /* value = d * 10^exp10 (plus sticky) */
	for (; *p >= '0' && *p <= '9'; p++) {
		any = 1;
		if (kept < RPT_PARSE_DIGITS) {
			if (d.n || *p != '0') {
				rpt_bin_mul_add(&d, 10, (uint32_t)(*p - '0'));
				kept++;
			}
		} else {
			exp10++;
			if (*p != '0')
				sticky = 1;
		}
	}
	if (*p == '.') {
		p++;
		for (; *p >= '0' && *p <= '9'; p++) {
			any = 1;
			if (kept < RPT_PARSE_DIGITS) {
				if (d.n || *p != '0') {
					rpt_bin_mul_add(&d, 10, (uint32_t)(*p - '0'));
					kept++;
				}
				exp10--;
			} else if (*p != '0') {
				sticky = 1;
			}
		}
	}
	if (!any)
		return 0;
	if (*p == 'e' || *p == 'E' || *p == 'd' || *p == 'D') {
		const char *q = p + 1;
		int eneg = 0;
		if (*q == '+' || *q == '-')
			eneg = *q++ == '-';
		if (*q >= '0' && *q <= '9') {
			int32_t e = 0;
			for (; *q >= '0' && *q <= '9'; q++)
				if (e < 100000)
					e = e * 10 + (*q - '0');
			exp10 += eneg ? -e : e;
			p = q;
		}
	}
	uint32_t used = (uint32_t)(p - text);
	double v = 0.0;
	if (d.n) {
		/* The decimal exponent of the leading digit decides the easy overflow/underflow cases. */
		int lead = exp10 + kept;
		if (lead > 310) {
			*range_error = 1;
			v = rpt_f64_from_bits(0x7ff0000000000000ull);
		} else if (lead < -330) {
			*range_error = 1;
			v = 0.0;
		} else if (exp10 >= 0) {
			for (int i = 0; i < exp10; i++)
				rpt_bin_mul_add(&d, 10, 0);
			uint32_t bits = rpt_bin_bits(&d);
			uint64_t top = 0;
			int low_sticky = 0;
			/* The leading 64 bits, and whether anything below them is set. */
			for (uint32_t b = 0; b < 64 && b < bits; b++) {
				uint32_t bit = bits - 1 - b;
				top = top << 1 | (d.limb[bit / 32] >> (bit % 32) & 1);
			}
			for (uint32_t bit = 0; bits > 64 && bit < bits - 64; bit++)
				if (d.limb[bit / 32] >> (bit % 32) & 1)
					low_sticky = 1;
			v = rpt_round_binary(top, bits > 64 ? (int)bits - 64 : 0, sticky || low_sticky, range_error);
		} else {
			struct rpt_bin s = { .n = 1 };
			s.limb[0] = 1;
			for (int i = 0; i < -exp10; i++)
				rpt_bin_mul_add(&s, 10, 0);
			/* q = floor(d * 2^shift / s) with 63 or 64 bits: the dividend gets 63 more bits than s. */
			int shift = 63 + (int)rpt_bin_bits(&s) - (int)rpt_bin_bits(&d);
			if (shift > 0)
				rpt_bin_shl(&d, (uint32_t)shift);
			else if (shift < 0)
				rpt_bin_shl(&s, (uint32_t)-shift);
			struct rpt_bin t = s;
			rpt_bin_shl(&t, 63);
			uint64_t q = 0;
			for (int b = 63; b >= 0; b--) {
				if (rpt_bin_cmp(&d, &t) >= 0) {
					rpt_bin_sub(&d, &t);
					q |= 1ull << b;
				}
				rpt_bin_shr1(&t);
			}
			v = rpt_round_binary(q, -shift, sticky || d.n != 0, range_error);
		}
	}
	*out = negative ? -v : v;
	return used;
}

/* ---------------------------------------------------------------- scanf */

static int rpt_scan_is_space(int ch)
{
	return ch == ' ' || (ch >= '\t' && ch <= '\r');
}

static int rpt_digit_value(int ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'z')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'Z')
		return ch - 'A' + 10;
	return 99;
}

int rpt_msvcrt_scan(struct rpt_scan_source *src, uint32_t fmt, uint32_t args)
{
	uint32_t f = fmt, ap = args;
	int assigned = 0, converted_any = 0;
	int ch = 0;
	for (;;) {
		uint8_t fc = rpt_load_u8_le(f);
		if (!fc)
			break;
		if (rpt_scan_is_space(fc)) {
			while (rpt_scan_is_space(rpt_load_u8_le(f)))
				f++;
			while (rpt_scan_is_space(ch = src->get(src)))
				;
			if (ch >= 0)
				src->unget(src, ch);
			continue;
		}
		if (fc != '%' || rpt_load_u8_le(f + 1) == '%') {
			f += fc == '%' ? 2 : 1;
			ch = src->get(src);
			/* "%%" skips whitespace first, like a conversion. */
			while (fc == '%' && rpt_scan_is_space(ch))
				ch = src->get(src);
			if (ch != fc) {
				if (ch >= 0)
					src->unget(src, ch);
				else if (!converted_any)
					return -1;
				break;
			}
			continue;
		}
		f++;
		int suppress = 0;
		if (rpt_load_u8_le(f) == '*') {
			suppress = 1;
			f++;
		}
		uint32_t width = 0;
		for (uint8_t c; (c = rpt_load_u8_le(f)) >= '0' && c <= '9'; f++)
			width = width * 10 + (uint32_t)(c - '0');
		if (width == 0)
			width = 0xffffffffu;
		int size = 0;
		for (;; f++) {
			uint8_t c = rpt_load_u8_le(f);
			if (c == 'h')
				size = 'h';
			else if (c == 'l')
				size = rpt_load_u8_le(f + 1) == 'l' ? (f++, 'q') : (size == 'l' ? 'q' : 'l');
			else if (c == 'L')
				size = 'L';
			else if (c == 'I' && rpt_load_u8_le(f + 1) == '6' && rpt_load_u8_le(f + 2) == '4') {
				f += 2;
				size = 'q';
			} else if (c == 'w' || c == 'F' || c == 'N')
				;
			else
				break;
		}
		uint8_t type = rpt_load_u8_le(f);
		if (!type)
			break;
		f++;
		if (type == 'n') {
			if (!suppress) {
				uint32_t where = rpt_next_arg(&ap);
				if (size == 'h')
					rpt_store_u16_le(where, (uint16_t)src->consumed);
				else
					rpt_store_u32_le(where, src->consumed);
			}
			continue;
		}
		/* Every conversion but %c and %[ skips leading whitespace. */
		if (type != 'c' && type != '[') {
			while (rpt_scan_is_space(ch = src->get(src)))
				;
			if (ch < 0)
				return converted_any ? assigned : -1;
			src->unget(src, ch);
		}
		switch (type) {
		case 'd':
		case 'i':
		case 'u':
		case 'o':
		case 'x':
		case 'X':
		case 'p': {
			unsigned base = type == 'o' ? 8 : (type == 'x' || type == 'X' || type == 'p') ? 16 : type == 'i' ? 0 : 10;
			int negative = 0, digits = 0;
			uint64_t v = 0;
			ch = src->get(src);
			if (width && (ch == '-' || ch == '+')) {
				negative = ch == '-';
				width--;
				ch = width ? src->get(src) : -1;
			}
			if (width && ch == '0' && (base == 0 || base == 16)) {
				digits = 1;
				width--;
				ch = width ? src->get(src) : -1;
				if (width && (ch == 'x' || ch == 'X')) {
					base = 16;
					digits = 0;
					width--;
					ch = width ? src->get(src) : -1;
				} else if (base == 0) {
					base = 8;
				}
			}
			if (base == 0)
				base = 10;
			while (width && ch >= 0 && rpt_digit_value(ch) < (int)base) {
				v = v * base + (uint64_t)rpt_digit_value(ch);
				digits++;
				width--;
				ch = width ? src->get(src) : -1;
			}
			if (ch >= 0)
				src->unget(src, ch);
			if (!digits)
				return converted_any ? assigned : (ch < 0 ? -1 : assigned);
			converted_any = 1;
			if (negative)
				v = (uint64_t)0 - v;
			if (!suppress) {
				uint32_t where = rpt_next_arg(&ap);
				if (size == 'q')
					rpt_store_u64_le(where, v);
				else if (size == 'h')
					rpt_store_u16_le(where, (uint16_t)v);
				else
					rpt_store_u32_le(where, (uint32_t)v);
				assigned++;
			}
			break;
		}
		case 'e':
		case 'E':
		case 'f':
		case 'g':
		case 'G': {
			char text[RPT_PARSE_DIGITS + 64];
			uint32_t n = 0;
			/* Collect the longest prefix that can be a number: sign, digits, point, exponent. */
			int seen_digit = 0, seen_point = 0, seen_exp = 0;
			ch = src->get(src);
			while (width && ch >= 0 && n + 1 < sizeof text) {
				int ok = 0;
				if ((ch == '+' || ch == '-') && (n == 0 || text[n - 1] == 'e' || text[n - 1] == 'E'))
					ok = 1;
				else if (ch >= '0' && ch <= '9')
					ok = seen_digit = 1;
				else if (ch == '.' && !seen_point && !seen_exp)
					ok = seen_point = 1;
				else if ((ch == 'e' || ch == 'E') && seen_digit && !seen_exp)
					ok = seen_exp = 1;
				if (!ok)
					break;
				text[n++] = (char)ch;
				width--;
				ch = width ? src->get(src) : -1;
			}
			if (ch >= 0)
				src->unget(src, ch);
			text[n] = 0;
			double v;
			int range;
			if (!seen_digit || !rpt_msvcrt_parse_double(text, &v, &range))
				return converted_any ? assigned : (ch < 0 && n == 0 ? -1 : assigned);
			converted_any = 1;
			if (!suppress) {
				uint32_t where = rpt_next_arg(&ap);
				if (size == 'l' || size == 'L' || size == 'q')
					rpt_store_f64_le(where, v);
				else
					rpt_store_f32_le(where, (float)v);
				assigned++;
			}
			break;
		}
		case 's': {
			uint32_t where = suppress ? 0 : rpt_next_arg(&ap);
			uint32_t n = 0;
			ch = src->get(src);
			while (width && ch >= 0 && !rpt_scan_is_space(ch)) {
				if (!suppress)
					rpt_store_u8_le(where + n, (uint8_t)ch);
				n++;
				width--;
				ch = width ? src->get(src) : -1;
			}
			if (ch >= 0)
				src->unget(src, ch);
			if (!n)
				return converted_any ? assigned : -1;
			converted_any = 1;
			if (!suppress) {
				rpt_store_u8_le(where + n, 0);
				assigned++;
			}
			break;
		}
		case 'c': {
			uint32_t where = suppress ? 0 : rpt_next_arg(&ap);
			if (width == 0xffffffffu)
				width = 1;
			uint32_t n = 0;
			while (n < width && (ch = src->get(src)) >= 0) {
				if (!suppress)
					rpt_store_u8_le(where + n, (uint8_t)ch);
				n++;
			}
			if (!n)
				return converted_any ? assigned : -1;
			converted_any = 1;
			if (!suppress)
				assigned++;
			break;
		}
		case '[': {
			uint8_t set[256] = { 0 };
			int negate = 0;
			if (rpt_load_u8_le(f) == '^') {
				negate = 1;
				f++;
			}
			uint32_t start = f;
			for (uint8_t c; (c = rpt_load_u8_le(f)) && (c != ']' || f == start); f++) {
				uint8_t next = rpt_load_u8_le(f + 1), last = rpt_load_u8_le(f + 2);
				if (next == '-' && last && last != ']') {
					for (unsigned x = c; x <= last; x++)
						set[x] = 1;
					f += 2;
				} else {
					set[c] = 1;
				}
			}
			if (rpt_load_u8_le(f) == ']')
				f++;
			uint32_t where = suppress ? 0 : rpt_next_arg(&ap);
			uint32_t n = 0;
			ch = src->get(src);
			while (width && ch >= 0 && (set[ch] != 0) != negate) {
				if (!suppress)
					rpt_store_u8_le(where + n, (uint8_t)ch);
				n++;
				width--;
				ch = width ? src->get(src) : -1;
			}
			if (ch >= 0)
				src->unget(src, ch);
			if (!n)
				return converted_any ? assigned : (ch < 0 ? -1 : assigned);
			converted_any = 1;
			if (!suppress) {
				rpt_store_u8_le(where + n, 0);
				assigned++;
			}
			break;
		}
		default:
			return assigned;
		}
	}
	return assigned;
}
