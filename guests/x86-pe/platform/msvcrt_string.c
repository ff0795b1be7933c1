/*
 * msvcrt_string.c - msvcrt's string and memory functions, ctype, number conversions, qsort and
 * bsearch, rand, getenv and integer helpers. All are cdecl externs working on guest memory.
 *
 * Decisions:
 * - The "C" locale: ctype classes are msvcrt's table for 0-127 and nothing for 128-255; the is*
 *   functions return the masked class bits (as msvcrt does, so isalpha('a') is 0x102, not 1).
 * - rand() is msvcrt's generator (seed * 214013 + 2531011, bits 16-30), starting from seed 1.
 * - qsort is an introspective quicksort (median of three, insertion sort below 8 elements) that
 *   calls the guest's comparator; like msvcrt's, it is not stable, and the order of equal
 *   elements may differ from msvcrt's.
 * - getenv compares names ignoring case, as Windows does.
 * - strtod and atof convert exactly (see msvcrt_format.c) and return in st(0).
 */
#include "win32_console.h"

#define RPT_MSVCRT(name) void rpt_win32_msvcrt_##name(struct cpu *restrict c)

/* ---------------------------------------------------------------- memory */

RPT_MSVCRT(memcpy);
RPT_MSVCRT(memmove);
RPT_MSVCRT(memset);
RPT_MSVCRT(memcmp);
RPT_MSVCRT(memchr);

void rpt_win32_msvcrt_memcpy(struct cpu *restrict c)
{
	uint32_t dst = rpt_win32_arg(c, 0);
	rpt_guest_memmove(dst, rpt_win32_arg(c, 1), rpt_win32_arg(c, 2));
	rpt_win32_return_cdecl(c, dst);
}

void rpt_win32_msvcrt_memmove(struct cpu *restrict c)
{
	uint32_t dst = rpt_win32_arg(c, 0);
	rpt_guest_memmove(dst, rpt_win32_arg(c, 1), rpt_win32_arg(c, 2));
	rpt_win32_return_cdecl(c, dst);
}

void rpt_win32_msvcrt_memset(struct cpu *restrict c)
{
	uint32_t dst = rpt_win32_arg(c, 0);
	rpt_guest_memset(dst, (uint8_t)rpt_win32_arg(c, 1), rpt_win32_arg(c, 2));
	rpt_win32_return_cdecl(c, dst);
}

void rpt_win32_msvcrt_memcmp(struct cpu *restrict c)
{
	uint32_t a = rpt_win32_arg(c, 0), b = rpt_win32_arg(c, 1), n = rpt_win32_arg(c, 2);
	int32_t r = 0;
	for (uint32_t i = 0; i < n && !r; i++)
		r = (int32_t)rpt_load_u8_le(a + i) - (int32_t)rpt_load_u8_le(b + i);
	rpt_win32_return_cdecl(c, (uint32_t)(r < 0 ? -1 : r > 0));
}

void rpt_win32_msvcrt_memchr(struct cpu *restrict c)
{
	uint32_t s = rpt_win32_arg(c, 0), n = rpt_win32_arg(c, 2);
	uint8_t ch = (uint8_t)rpt_win32_arg(c, 1);
	uint32_t found = 0;
	for (uint32_t i = 0; i < n; i++) {
		if (rpt_load_u8_le(s + i) == ch) {
			found = s + i;
			break;
		}
	}
	rpt_win32_return_cdecl(c, found);
}

/* ---------------------------------------------------------------- strings */

RPT_MSVCRT(strlen);
RPT_MSVCRT(strcpy);
RPT_MSVCRT(strncpy);
RPT_MSVCRT(strcat);
RPT_MSVCRT(strncat);
RPT_MSVCRT(strcmp);
RPT_MSVCRT(strncmp);
RPT_MSVCRT(strcoll);
RPT_MSVCRT(_stricmp);
RPT_MSVCRT(_strcmpi);
RPT_MSVCRT(_strnicmp);
RPT_MSVCRT(strchr);
RPT_MSVCRT(strrchr);
RPT_MSVCRT(strstr);
RPT_MSVCRT(strspn);
RPT_MSVCRT(strcspn);
RPT_MSVCRT(strpbrk);
RPT_MSVCRT(strtok);
RPT_MSVCRT(_strdup);
RPT_MSVCRT(strdup);
RPT_MSVCRT(_strlwr);
RPT_MSVCRT(_strupr);
RPT_MSVCRT(_strrev);
RPT_MSVCRT(wcslen);

void rpt_win32_msvcrt_strlen(struct cpu *restrict c)
{
	rpt_win32_return_cdecl(c, rpt_guest_strlen(rpt_win32_arg(c, 0)));
}

void rpt_win32_msvcrt_strcpy(struct cpu *restrict c)
{
	uint32_t dst = rpt_win32_arg(c, 0), src = rpt_win32_arg(c, 1);
	uint32_t i = 0;
	uint8_t ch;
	do {
		ch = rpt_load_u8_le(src + i);
		rpt_store_u8_le(dst + i, ch);
		i++;
	} while (ch);
	rpt_win32_return_cdecl(c, dst);
}

void rpt_win32_msvcrt_strncpy(struct cpu *restrict c)
{
	uint32_t dst = rpt_win32_arg(c, 0), src = rpt_win32_arg(c, 1), n = rpt_win32_arg(c, 2);
	uint32_t i = 0;
	for (; i < n; i++) {
		uint8_t ch = rpt_load_u8_le(src + i);
		if (!ch)
			break;
		rpt_store_u8_le(dst + i, ch);
	}
	/* strncpy pads with NULs up to n. */
	for (; i < n; i++)
		rpt_store_u8_le(dst + i, 0);
	rpt_win32_return_cdecl(c, dst);
}

void rpt_win32_msvcrt_strcat(struct cpu *restrict c)
{
	uint32_t dst = rpt_win32_arg(c, 0), src = rpt_win32_arg(c, 1);
	uint32_t at = dst + rpt_guest_strlen(dst);
	uint32_t i = 0;
	uint8_t ch;
	do {
		ch = rpt_load_u8_le(src + i);
		rpt_store_u8_le(at + i, ch);
		i++;
	} while (ch);
	rpt_win32_return_cdecl(c, dst);
}

void rpt_win32_msvcrt_strncat(struct cpu *restrict c)
{
	uint32_t dst = rpt_win32_arg(c, 0), src = rpt_win32_arg(c, 1), n = rpt_win32_arg(c, 2);
	uint32_t at = dst + rpt_guest_strlen(dst);
	uint32_t i = 0;
	for (; i < n; i++) {
		uint8_t ch = rpt_load_u8_le(src + i);
		if (!ch)
			break;
		rpt_store_u8_le(at + i, ch);
	}
	rpt_store_u8_le(at + i, 0);
	rpt_win32_return_cdecl(c, dst);
}

static int rpt_fold(int ch)
{
	return ch >= 'A' && ch <= 'Z' ? ch + 32 : ch;
}

/* Compares at most n bytes; msvcrt returns -1, 0 or 1. */
static uint32_t rpt_string_compare(uint32_t a, uint32_t b, uint32_t n, int fold)
{
	for (uint32_t i = 0; i < n; i++) {
		int x = rpt_load_u8_le(a + i), y = rpt_load_u8_le(b + i);
		if (fold) {
			x = rpt_fold(x);
			y = rpt_fold(y);
		}
		if (x != y)
			return x < y ? 0xffffffffu : 1u;
		if (!x)
			break;
	}
	return 0;
}

void rpt_win32_msvcrt_strcmp(struct cpu *restrict c)
{
	rpt_win32_return_cdecl(c, rpt_string_compare(rpt_win32_arg(c, 0), rpt_win32_arg(c, 1), 0xffffffffu, 0));
}

void rpt_win32_msvcrt_strncmp(struct cpu *restrict c)
{
	rpt_win32_return_cdecl(c, rpt_string_compare(rpt_win32_arg(c, 0), rpt_win32_arg(c, 1), rpt_win32_arg(c, 2), 0));
}

/* In the "C" locale collation is byte order. */
void rpt_win32_msvcrt_strcoll(struct cpu *restrict c)
{
	rpt_win32_return_cdecl(c, rpt_string_compare(rpt_win32_arg(c, 0), rpt_win32_arg(c, 1), 0xffffffffu, 0));
}

void rpt_win32_msvcrt__stricmp(struct cpu *restrict c)
{
	rpt_win32_return_cdecl(c, rpt_string_compare(rpt_win32_arg(c, 0), rpt_win32_arg(c, 1), 0xffffffffu, 1));
}

void rpt_win32_msvcrt__strcmpi(struct cpu *restrict c)
{
	rpt_win32_return_cdecl(c, rpt_string_compare(rpt_win32_arg(c, 0), rpt_win32_arg(c, 1), 0xffffffffu, 1));
}

void rpt_win32_msvcrt__strnicmp(struct cpu *restrict c)
{
	rpt_win32_return_cdecl(c, rpt_string_compare(rpt_win32_arg(c, 0), rpt_win32_arg(c, 1), rpt_win32_arg(c, 2), 1));
}

void rpt_win32_msvcrt_strchr(struct cpu *restrict c)
{
	uint32_t s = rpt_win32_arg(c, 0);
	uint8_t want = (uint8_t)rpt_win32_arg(c, 1);
	for (;; s++) {
		uint8_t ch = rpt_load_u8_le(s);
		if (ch == want) {
			rpt_win32_return_cdecl(c, s);
			return;
		}
		if (!ch)
			break;
	}
	rpt_win32_return_cdecl(c, 0);
}

void rpt_win32_msvcrt_strrchr(struct cpu *restrict c)
{
	uint32_t s = rpt_win32_arg(c, 0), found = 0;
	uint8_t want = (uint8_t)rpt_win32_arg(c, 1);
	for (;; s++) {
		uint8_t ch = rpt_load_u8_le(s);
		if (ch == want)
			found = s;
		if (!ch)
			break;
	}
	rpt_win32_return_cdecl(c, found);
}

void rpt_win32_msvcrt_strstr(struct cpu *restrict c)
{
	uint32_t hay = rpt_win32_arg(c, 0), needle = rpt_win32_arg(c, 1);
	uint32_t n = rpt_guest_strlen(needle);
	for (uint32_t at = hay;; at++) {
		uint32_t i = 0;
		while (i < n && rpt_load_u8_le(at + i) == rpt_load_u8_le(needle + i))
			i++;
		if (i == n) {
			rpt_win32_return_cdecl(c, at);
			return;
		}
		if (!rpt_load_u8_le(at))
			break;
	}
	rpt_win32_return_cdecl(c, 0);
}

/* Whether byte `ch` is in the guest string `set`. */
static int rpt_in_set(uint32_t set, uint8_t ch)
{
	for (;; set++) {
		uint8_t s = rpt_load_u8_le(set);
		if (!s)
			return 0;
		if (s == ch)
			return 1;
	}
}

void rpt_win32_msvcrt_strspn(struct cpu *restrict c)
{
	uint32_t s = rpt_win32_arg(c, 0), set = rpt_win32_arg(c, 1), n = 0;
	for (uint8_t ch; (ch = rpt_load_u8_le(s + n)) && rpt_in_set(set, ch);)
		n++;
	rpt_win32_return_cdecl(c, n);
}

void rpt_win32_msvcrt_strcspn(struct cpu *restrict c)
{
	uint32_t s = rpt_win32_arg(c, 0), set = rpt_win32_arg(c, 1), n = 0;
	for (uint8_t ch; (ch = rpt_load_u8_le(s + n)) && !rpt_in_set(set, ch);)
		n++;
	rpt_win32_return_cdecl(c, n);
}

void rpt_win32_msvcrt_strpbrk(struct cpu *restrict c)
{
	uint32_t s = rpt_win32_arg(c, 0), set = rpt_win32_arg(c, 1);
	for (uint8_t ch; (ch = rpt_load_u8_le(s)); s++) {
		if (rpt_in_set(set, ch)) {
			rpt_win32_return_cdecl(c, s);
			return;
		}
	}
	rpt_win32_return_cdecl(c, 0);
}

static uint32_t rpt_strtok_next;

void rpt_win32_msvcrt_strtok(struct cpu *restrict c)
{
	uint32_t s = rpt_win32_arg(c, 0), set = rpt_win32_arg(c, 1);
	if (!s)
		s = rpt_strtok_next;
	if (!s) {
		rpt_win32_return_cdecl(c, 0);
		return;
	}
	while (rpt_load_u8_le(s) && rpt_in_set(set, rpt_load_u8_le(s)))
		s++;
	if (!rpt_load_u8_le(s)) {
		rpt_strtok_next = 0;
		rpt_win32_return_cdecl(c, 0);
		return;
	}
	uint32_t token = s;
	while (rpt_load_u8_le(s) && !rpt_in_set(set, rpt_load_u8_le(s)))
		s++;
	if (rpt_load_u8_le(s)) {
		rpt_store_u8_le(s, 0);
		rpt_strtok_next = s + 1;
	} else {
		rpt_strtok_next = 0;
	}
	rpt_win32_return_cdecl(c, token);
}

static void rpt_strdup_common(struct cpu *c)
{
	uint32_t s = rpt_win32_arg(c, 0);
	uint32_t p = 0;
	if (s) {
		uint32_t n = rpt_guest_strlen(s);
		p = rpt_msvcrt_malloc(n + 1);
		if (p)
			rpt_guest_memmove(p, s, n + 1);
	}
	rpt_win32_return_cdecl(c, p);
}

void rpt_win32_msvcrt__strdup(struct cpu *restrict c)
{
	rpt_strdup_common(c);
}

void rpt_win32_msvcrt_strdup(struct cpu *restrict c)
{
	rpt_strdup_common(c);
}

void rpt_win32_msvcrt__strlwr(struct cpu *restrict c)
{
	uint32_t s = rpt_win32_arg(c, 0);
	for (uint32_t p = s; rpt_load_u8_le(p); p++)
		rpt_store_u8_le(p, (uint8_t)rpt_fold(rpt_load_u8_le(p)));
	rpt_win32_return_cdecl(c, s);
}

void rpt_win32_msvcrt__strupr(struct cpu *restrict c)
{
	uint32_t s = rpt_win32_arg(c, 0);
	for (uint32_t p = s; rpt_load_u8_le(p); p++) {
		uint8_t ch = rpt_load_u8_le(p);
		if (ch >= 'a' && ch <= 'z')
			rpt_store_u8_le(p, (uint8_t)(ch - 32));
	}
	rpt_win32_return_cdecl(c, s);
}

void rpt_win32_msvcrt__strrev(struct cpu *restrict c)
{
	uint32_t s = rpt_win32_arg(c, 0);
	uint32_t n = rpt_guest_strlen(s);
	for (uint32_t i = 0; i < n / 2; i++) {
		uint8_t a = rpt_load_u8_le(s + i), b = rpt_load_u8_le(s + n - 1 - i);
		rpt_store_u8_le(s + i, b);
		rpt_store_u8_le(s + n - 1 - i, a);
	}
	rpt_win32_return_cdecl(c, s);
}

void rpt_win32_msvcrt_wcslen(struct cpu *restrict c)
{
	uint32_t s = rpt_win32_arg(c, 0), n = 0;
	while (rpt_load_u16_le(s + 2 * n))
		n++;
	rpt_win32_return_cdecl(c, n);
}

/* ---------------------------------------------------------------- ctype */

RPT_MSVCRT(isalpha);
RPT_MSVCRT(isupper);
RPT_MSVCRT(islower);
RPT_MSVCRT(isdigit);
RPT_MSVCRT(isxdigit);
RPT_MSVCRT(isspace);
RPT_MSVCRT(ispunct);
RPT_MSVCRT(isalnum);
RPT_MSVCRT(isprint);
RPT_MSVCRT(isgraph);
RPT_MSVCRT(iscntrl);
RPT_MSVCRT(_isctype);
RPT_MSVCRT(__isascii);
RPT_MSVCRT(__toascii);
RPT_MSVCRT(toupper);
RPT_MSVCRT(tolower);
RPT_MSVCRT(_toupper);
RPT_MSVCRT(_tolower);
RPT_MSVCRT(__pctype_func);

uint16_t rpt_msvcrt_ctype(int ch)
{
	if (ch < 0 || ch > 127)
		return 0;
	uint16_t t = 0;
	if (ch < 32 || ch == 127)
		t |= RPT_CT_CONTROL;
	if ((ch >= 9 && ch <= 13) || ch == ' ')
		t |= RPT_CT_SPACE;
	/* msvcrt's _BLANK marks the space only (a tab is a control character and space). */
	if (ch == ' ')
		t |= RPT_CT_BLANK;
	if (ch >= '0' && ch <= '9')
		t |= RPT_CT_DIGIT | RPT_CT_HEX;
	if (ch >= 'A' && ch <= 'Z')
		t |= 0x100 | RPT_CT_UPPER;
	if (ch >= 'a' && ch <= 'z')
		t |= 0x100 | RPT_CT_LOWER;
	if ((ch >= 'A' && ch <= 'F') || (ch >= 'a' && ch <= 'f'))
		t |= RPT_CT_HEX;
	if (ch > 32 && ch < 127 && !(t & (0x100 | RPT_CT_DIGIT)))
		t |= RPT_CT_PUNCT;
	return t;
}

void rpt_msvcrt_ctype_init(void)
{
	/* _pctype points at entry 0; entry -1 (EOF) is 0. */
	rpt_store_u16_le(RPT_DATA_CTYPE, 0);
	for (int ch = 0; ch < 256; ch++)
		rpt_store_u16_le(RPT_DATA_CTYPE + 2 + 2 * (uint32_t)ch, rpt_msvcrt_ctype(ch));
	rpt_store_u32_le(RPT_DATA_PCTYPE, RPT_DATA_CTYPE + 2);
}

static void rpt_ctype_common(struct cpu *c, uint16_t mask)
{
	int ch = (int)rpt_win32_arg(c, 0);
	rpt_win32_return_cdecl(c, rpt_msvcrt_ctype(ch) & mask);
}

void rpt_win32_msvcrt_isalpha(struct cpu *restrict c) { rpt_ctype_common(c, RPT_CT_ALPHA); }
void rpt_win32_msvcrt_isupper(struct cpu *restrict c) { rpt_ctype_common(c, RPT_CT_UPPER); }
void rpt_win32_msvcrt_islower(struct cpu *restrict c) { rpt_ctype_common(c, RPT_CT_LOWER); }
void rpt_win32_msvcrt_isdigit(struct cpu *restrict c) { rpt_ctype_common(c, RPT_CT_DIGIT); }
void rpt_win32_msvcrt_isxdigit(struct cpu *restrict c) { rpt_ctype_common(c, RPT_CT_HEX); }
void rpt_win32_msvcrt_isspace(struct cpu *restrict c) { rpt_ctype_common(c, RPT_CT_SPACE); }
void rpt_win32_msvcrt_ispunct(struct cpu *restrict c) { rpt_ctype_common(c, RPT_CT_PUNCT); }
void rpt_win32_msvcrt_isalnum(struct cpu *restrict c) { rpt_ctype_common(c, RPT_CT_ALPHA | RPT_CT_DIGIT); }
void rpt_win32_msvcrt_isprint(struct cpu *restrict c) { rpt_ctype_common(c, RPT_CT_BLANK | RPT_CT_PUNCT | RPT_CT_ALPHA | RPT_CT_DIGIT); }
void rpt_win32_msvcrt_isgraph(struct cpu *restrict c) { rpt_ctype_common(c, RPT_CT_PUNCT | RPT_CT_ALPHA | RPT_CT_DIGIT); }
void rpt_win32_msvcrt_iscntrl(struct cpu *restrict c) { rpt_ctype_common(c, RPT_CT_CONTROL); }

void rpt_win32_msvcrt__isctype(struct cpu *restrict c)
{
	rpt_win32_return_cdecl(c, rpt_msvcrt_ctype((int)rpt_win32_arg(c, 0)) & rpt_win32_arg(c, 1));
}

void rpt_win32_msvcrt___isascii(struct cpu *restrict c)
{
	rpt_win32_return_cdecl(c, rpt_win32_arg(c, 0) < 128);
}

void rpt_win32_msvcrt___toascii(struct cpu *restrict c)
{
	rpt_win32_return_cdecl(c, rpt_win32_arg(c, 0) & 0x7f);
}

void rpt_win32_msvcrt_toupper(struct cpu *restrict c)
{
	uint32_t ch = rpt_win32_arg(c, 0);
	rpt_win32_return_cdecl(c, ch >= 'a' && ch <= 'z' ? ch - 32 : ch);
}

void rpt_win32_msvcrt_tolower(struct cpu *restrict c)
{
	uint32_t ch = rpt_win32_arg(c, 0);
	rpt_win32_return_cdecl(c, ch >= 'A' && ch <= 'Z' ? ch + 32 : ch);
}

/* _toupper and _tolower assume a letter of the right case, as msvcrt's do. */
void rpt_win32_msvcrt__toupper(struct cpu *restrict c)
{
	rpt_win32_return_cdecl(c, rpt_win32_arg(c, 0) - 32);
}

void rpt_win32_msvcrt__tolower(struct cpu *restrict c)
{
	rpt_win32_return_cdecl(c, rpt_win32_arg(c, 0) + 32);
}

void rpt_win32_msvcrt___pctype_func(struct cpu *restrict c)
{
	rpt_win32_return_cdecl(c, RPT_DATA_CTYPE + 2);
}

/* ---------------------------------------------------------------- number conversions */

RPT_MSVCRT(atoi);
RPT_MSVCRT(atol);
RPT_MSVCRT(_atoi64);
RPT_MSVCRT(strtol);
RPT_MSVCRT(strtoul);
RPT_MSVCRT(_strtoi64);
RPT_MSVCRT(_strtoui64);
RPT_MSVCRT(strtod);
RPT_MSVCRT(atof);
RPT_MSVCRT(_itoa);
RPT_MSVCRT(_ltoa);
RPT_MSVCRT(_ultoa);
RPT_MSVCRT(_i64toa);
RPT_MSVCRT(_ui64toa);

static int rpt_is_space(uint8_t ch)
{
	return ch == ' ' || (ch >= 9 && ch <= 13);
}

/* strtol's parser for every width: returns the magnitude clamped to `limit` (negative results
 * may reach limit + 1), sets *negative, *end and *overflow. */
static uint64_t rpt_parse_integer(uint32_t s, uint32_t base, uint64_t limit, int *negative, uint32_t *end, int *overflow)
{
	uint32_t p = s;
	*negative = 0;
	*overflow = 0;
	while (rpt_is_space(rpt_load_u8_le(p)))
		p++;
	uint8_t ch = rpt_load_u8_le(p);
	if (ch == '+' || ch == '-') {
		*negative = ch == '-';
		p++;
	}
	if ((base == 0 || base == 16) && rpt_load_u8_le(p) == '0' && (rpt_load_u8_le(p + 1) | 32) == 'x') {
		p += 2;
		base = 16;
	} else if (base == 0) {
		base = rpt_load_u8_le(p) == '0' ? 8 : 10;
	}
	uint64_t v = 0;
	int digits = 0;
	if (base >= 2 && base <= 36) {
		for (;; p++) {
			ch = rpt_load_u8_le(p);
			unsigned d = ch >= '0' && ch <= '9' ? ch - '0' : (ch | 32) >= 'a' && (ch | 32) <= 'z' ? (unsigned)((ch | 32) - 'a' + 10) : 99;
			if (d >= base)
				break;
			digits = 1;
			if (v > (limit - d) / base)
				*overflow = 1;
			else
				v = v * base + d;
		}
	}
	*end = digits ? p : s;
	return v;
}

/* Signed conversion with msvcrt's clamping: values beyond the range give the limit and ERANGE. */
static int64_t rpt_strto_signed(uint32_t s, uint32_t endp, uint32_t base, uint64_t max)
{
	int negative, overflow;
	uint32_t end;
	uint64_t v = rpt_parse_integer(s, base, max + 1, &negative, &end, &overflow);
	if (endp)
		rpt_store_u32_le(endp, end);
	if (overflow || (!negative && v > max)) {
		rpt_msvcrt_set_errno(RPT_ERANGE);
		return negative ? -(int64_t)max - 1 : (int64_t)max;
	}
	return negative ? (int64_t)((uint64_t)0 - v) : (int64_t)v;
}

static uint64_t rpt_strto_unsigned(uint32_t s, uint32_t endp, uint32_t base, uint64_t max)
{
	int negative, overflow;
	uint32_t end;
	uint64_t v = rpt_parse_integer(s, base, max, &negative, &end, &overflow);
	if (endp)
		rpt_store_u32_le(endp, end);
	if (overflow) {
		rpt_msvcrt_set_errno(RPT_ERANGE);
		return max;
	}
	return negative ? (((uint64_t)0 - v) & max) : v;
}

void rpt_win32_msvcrt_atoi(struct cpu *restrict c)
{
	rpt_win32_return_cdecl(c, (uint32_t)rpt_strto_signed(rpt_win32_arg(c, 0), 0, 10, 0x7fffffff));
}

void rpt_win32_msvcrt_atol(struct cpu *restrict c)
{
	rpt_win32_return_cdecl(c, (uint32_t)rpt_strto_signed(rpt_win32_arg(c, 0), 0, 10, 0x7fffffff));
}

void rpt_win32_msvcrt__atoi64(struct cpu *restrict c)
{
	rpt_win32_return_cdecl64(c, (uint64_t)rpt_strto_signed(rpt_win32_arg(c, 0), 0, 10, 0x7fffffffffffffffull));
}

void rpt_win32_msvcrt_strtol(struct cpu *restrict c)
{
	rpt_win32_return_cdecl(c, (uint32_t)rpt_strto_signed(rpt_win32_arg(c, 0), rpt_win32_arg(c, 1), rpt_win32_arg(c, 2), 0x7fffffff));
}

void rpt_win32_msvcrt_strtoul(struct cpu *restrict c)
{
	rpt_win32_return_cdecl(c, (uint32_t)rpt_strto_unsigned(rpt_win32_arg(c, 0), rpt_win32_arg(c, 1), rpt_win32_arg(c, 2), 0xffffffffu));
}

void rpt_win32_msvcrt__strtoi64(struct cpu *restrict c)
{
	rpt_win32_return_cdecl64(c, (uint64_t)rpt_strto_signed(rpt_win32_arg(c, 0), rpt_win32_arg(c, 1), rpt_win32_arg(c, 2),
							     0x7fffffffffffffffull));
}

void rpt_win32_msvcrt__strtoui64(struct cpu *restrict c)
{
	rpt_win32_return_cdecl64(c, rpt_strto_unsigned(rpt_win32_arg(c, 0), rpt_win32_arg(c, 1), rpt_win32_arg(c, 2), ~0ull));
}

/* Parses the guest string at `s` as a double; *end gets the first unused address. */
static double rpt_strtod_guest(uint32_t s, uint32_t *end)
{
	char text[1100];
	uint32_t n = rpt_guest_string(s, text, sizeof text);
	(void)n;
	double v;
	int range;
	uint32_t used = rpt_msvcrt_parse_double(text, &v, &range);
	if (range)
		rpt_msvcrt_set_errno(RPT_ERANGE);
	*end = s + used;
	return v;
}

void rpt_win32_msvcrt_strtod(struct cpu *restrict c)
{
	uint32_t s = rpt_win32_arg(c, 0), endp = rpt_win32_arg(c, 1), end;
	double v = rpt_strtod_guest(s, &end);
	if (endp)
		rpt_store_u32_le(endp, end);
	rpt_win32_return_cdecl_f64(c, v);
}

void rpt_win32_msvcrt_atof(struct cpu *restrict c)
{
	uint32_t end;
	rpt_win32_return_cdecl_f64(c, rpt_strtod_guest(rpt_win32_arg(c, 0), &end));
}

/* Writes v in `base` at `dst` (with a '-' when negative) and returns dst. */
static uint32_t rpt_to_text(uint64_t v, int negative, uint32_t dst, uint32_t base)
{
	char digits[72];
	uint32_t n = 0;
	if (base < 2 || base > 36) {
		rpt_store_u8_le(dst, 0);
		return dst;
	}
	do {
		digits[n++] = "0123456789abcdefghijklmnopqrstuvwxyz"[v % base];
		v /= base;
	} while (v);
	uint32_t at = dst;
	if (negative)
		rpt_store_u8_le(at++, '-');
	while (n)
		rpt_store_u8_le(at++, (uint8_t)digits[--n]);
	rpt_store_u8_le(at, 0);
	return dst;
}

/* _itoa and _ltoa write a '-' only in base 10; other bases show the two's complement bits. */
void rpt_win32_msvcrt__itoa(struct cpu *restrict c)
{
	int32_t v = (int32_t)rpt_win32_arg(c, 0);
	uint32_t base = rpt_win32_arg(c, 2);
	int negative = base == 10 && v < 0;
	uint64_t mag = negative ? (uint64_t)(-(int64_t)v) : (uint32_t)v;
	rpt_win32_return_cdecl(c, rpt_to_text(mag, negative, rpt_win32_arg(c, 1), base));
}

void rpt_win32_msvcrt__ltoa(struct cpu *restrict c)
{
	rpt_win32_msvcrt__itoa(c);
}

void rpt_win32_msvcrt__ultoa(struct cpu *restrict c)
{
	rpt_win32_return_cdecl(c, rpt_to_text(rpt_win32_arg(c, 0), 0, rpt_win32_arg(c, 1), rpt_win32_arg(c, 2)));
}

void rpt_win32_msvcrt__i64toa(struct cpu *restrict c)
{
	int64_t v = (int64_t)rpt_win32_arg64(c, 0);
	uint32_t base = rpt_win32_arg(c, 3);
	int negative = base == 10 && v < 0;
	uint64_t mag = negative ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
	rpt_win32_return_cdecl(c, rpt_to_text(mag, negative, rpt_win32_arg(c, 2), base));
}

void rpt_win32_msvcrt__ui64toa(struct cpu *restrict c)
{
	rpt_win32_return_cdecl(c, rpt_to_text(rpt_win32_arg64(c, 0), 0, rpt_win32_arg(c, 2), rpt_win32_arg(c, 3)));
}

/* ---------------------------------------------------------------- integers */

RPT_MSVCRT(abs);
RPT_MSVCRT(labs);
RPT_MSVCRT(_abs64);
RPT_MSVCRT(div);
RPT_MSVCRT(ldiv);
RPT_MSVCRT(rand);
RPT_MSVCRT(srand);

void rpt_win32_msvcrt_abs(struct cpu *restrict c)
{
	int32_t v = (int32_t)rpt_win32_arg(c, 0);
	rpt_win32_return_cdecl(c, v < 0 ? (uint32_t)0 - (uint32_t)v : (uint32_t)v);
}

void rpt_win32_msvcrt_labs(struct cpu *restrict c)
{
	rpt_win32_msvcrt_abs(c);
}

void rpt_win32_msvcrt__abs64(struct cpu *restrict c)
{
	int64_t v = (int64_t)rpt_win32_arg64(c, 0);
	rpt_win32_return_cdecl64(c, v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v);
}

/* div_t is returned in edx:eax (quot in eax), as the MS ABI returns 8-byte structures.
 * A division by zero or INT_MIN / -1 traps like the idiv instruction would. */
void rpt_win32_msvcrt_div(struct cpu *restrict c)
{
	int32_t a = (int32_t)rpt_win32_arg(c, 0), b = (int32_t)rpt_win32_arg(c, 1);
	if (b == 0 || (a == INT32_MIN && b == -1))
		rpt_exit(c, rpt_load_u32_le(c->esp), RPT_EXIT_DIVIDE_ERROR);
	c->edx = (uint32_t)(a % b);
	rpt_win32_return_cdecl(c, (uint32_t)(a / b));
}

void rpt_win32_msvcrt_ldiv(struct cpu *restrict c)
{
	rpt_win32_msvcrt_div(c);
}

static uint32_t rpt_rand_seed = 1;

void rpt_win32_msvcrt_rand(struct cpu *restrict c)
{
	rpt_rand_seed = rpt_rand_seed * 214013u + 2531011u;
	rpt_win32_return_cdecl(c, (rpt_rand_seed >> 16) & 0x7fff);
}

void rpt_win32_msvcrt_srand(struct cpu *restrict c)
{
	rpt_rand_seed = rpt_win32_arg(c, 0);
	rpt_win32_return_cdecl(c, 0);
}

/* ---------------------------------------------------------------- getenv */

RPT_MSVCRT(getenv);

/* The guest address of the value of environment variable `name` (matched without regard to
 * ASCII case, as Windows matches), or 0. getenv and GetEnvironmentVariableW share it. */
uint32_t rpt_msvcrt_env_lookup(const char *name)
{
	uint32_t env = rpt_load_u32_le(RPT_DATA_ENVIRON);
	uint32_t n = rpt_win32_strlen(name);
	for (uint32_t i = 0; env && n; i++) {
		uint32_t entry = rpt_load_u32_le(env + 4 * i);
		if (!entry)
			break;
		uint32_t k = 0;
		while (k < n && rpt_fold(rpt_load_u8_le(entry + k)) == rpt_fold((uint8_t)name[k]))
			k++;
		if (k == n && rpt_load_u8_le(entry + n) == '=')
			return entry + n + 1;
	}
	return 0;
}

void rpt_win32_msvcrt_getenv(struct cpu *restrict c)
{
	char name[256];
	uint32_t at = rpt_win32_arg(c, 0);
	/* A name longer than any the buffer holds is no variable's. */
	int fits = at && rpt_guest_string(at, name, sizeof name) < sizeof name;
	rpt_win32_return_cdecl(c, fits ? rpt_msvcrt_env_lookup(name) : 0);
}

/* ---------------------------------------------------------------- qsort and bsearch */

RPT_MSVCRT(qsort);
RPT_MSVCRT(bsearch);

struct rpt_sort {
	struct cpu *c;
	uint32_t base, size, compare;
};

static int32_t rpt_sort_compare(struct rpt_sort *s, uint32_t a, uint32_t b)
{
	uint32_t args[2] = { a, b };
	return (int32_t)rpt_win32_call_guest(s->c, s->compare, 2, args);
}

static void rpt_sort_swap(struct rpt_sort *s, uint32_t a, uint32_t b)
{
	if (a == b)
		return;
	for (uint32_t i = 0; i < s->size; i++) {
		uint8_t x = rpt_load_u8_le(a + i), y = rpt_load_u8_le(b + i);
		rpt_store_u8_le(a + i, y);
		rpt_store_u8_le(b + i, x);
	}
}

static uint32_t rpt_sort_at(struct rpt_sort *s, uint32_t i)
{
	return s->base + i * s->size;
}

/* Sorts elements [lo, hi] (inclusive); recursion only into the smaller side. */
static void rpt_sort_range(struct rpt_sort *s, uint32_t lo, uint32_t hi)
{
	while (hi > lo) {
		if (hi - lo < 8) {
			for (uint32_t i = lo + 1; i <= hi; i++)
				for (uint32_t j = i; j > lo && rpt_sort_compare(s, rpt_sort_at(s, j - 1), rpt_sort_at(s, j)) > 0; j--)
					rpt_sort_swap(s, rpt_sort_at(s, j - 1), rpt_sort_at(s, j));
			return;
		}
		/* Median of three to lo, then partition around it (Hoare). */
		uint32_t mid = lo + (hi - lo) / 2;
		if (rpt_sort_compare(s, rpt_sort_at(s, mid), rpt_sort_at(s, lo)) < 0)
			rpt_sort_swap(s, rpt_sort_at(s, mid), rpt_sort_at(s, lo));
		if (rpt_sort_compare(s, rpt_sort_at(s, hi), rpt_sort_at(s, lo)) < 0)
			rpt_sort_swap(s, rpt_sort_at(s, hi), rpt_sort_at(s, lo));
		if (rpt_sort_compare(s, rpt_sort_at(s, hi), rpt_sort_at(s, mid)) < 0)
			rpt_sort_swap(s, rpt_sort_at(s, hi), rpt_sort_at(s, mid));
		rpt_sort_swap(s, rpt_sort_at(s, mid), rpt_sort_at(s, lo));
		uint32_t i = lo, j = hi + 1;
		for (;;) {
			do
				i++;
			while (i <= hi && rpt_sort_compare(s, rpt_sort_at(s, i), rpt_sort_at(s, lo)) < 0);
			do
				j--;
			while (j > lo && rpt_sort_compare(s, rpt_sort_at(s, j), rpt_sort_at(s, lo)) > 0);
			if (i >= j)
				break;
			rpt_sort_swap(s, rpt_sort_at(s, i), rpt_sort_at(s, j));
		}
		rpt_sort_swap(s, rpt_sort_at(s, lo), rpt_sort_at(s, j));
		if (j - lo < hi - j) {
			if (j > lo)
				rpt_sort_range(s, lo, j - 1);
			lo = j + 1;
		} else {
			rpt_sort_range(s, j + 1, hi);
			if (j == 0)
				return;
			hi = j - 1;
		}
	}
}

/* void qsort(void *base, size_t n, size_t size, int (*compare)(const void *, const void *)) */
void rpt_win32_msvcrt_qsort(struct cpu *restrict c)
{
	struct rpt_sort s = { c, rpt_win32_arg(c, 0), rpt_win32_arg(c, 2), rpt_win32_arg(c, 3) };
	uint32_t n = rpt_win32_arg(c, 1);
	if (n > 1 && s.size)
		rpt_sort_range(&s, 0, n - 1);
	rpt_win32_return_cdecl(c, 0);
}

/* void *bsearch(const void *key, const void *base, size_t n, size_t size, compare) */
void rpt_win32_msvcrt_bsearch(struct cpu *restrict c)
{
	uint32_t key = rpt_win32_arg(c, 0), base = rpt_win32_arg(c, 1), n = rpt_win32_arg(c, 2);
	uint32_t size = rpt_win32_arg(c, 3), compare = rpt_win32_arg(c, 4);
	uint32_t lo = 0, hi = n, found = 0;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		uint32_t args[2] = { key, base + mid * size };
		int32_t r = (int32_t)rpt_win32_call_guest(c, compare, 2, args);
		if (r == 0) {
			found = base + mid * size;
			break;
		}
		if (r < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	rpt_win32_return_cdecl(c, found);
}
