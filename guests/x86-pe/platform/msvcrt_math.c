/*
 * msvcrt_math.c - msvcrt's math.h and time.h functions. All are cdecl externs.
 *
 * Decisions:
 * - Functions returning double leave the result in st(0), as the i386 ABI says; that goes
 *   through the guest's x87 model (rpt_x86_set_st0_f64 in x86_runtime.c).
 * - The transcendental functions use the host's libm (glibc on glibc hosts), which may differ
 *   from msvcrt's in the last bit for some arguments; sqrt, floor, ceil, fabs, fmod, ldexp,
 *   frexp and modf are exact everywhere. Hosts without a C library (LoongArch64 here) have no
 *   libm: there they run on the software x87 unit's 128-bit float (guest/x87_soft_libm.h),
 *   correctly rounded as glibc's nearly always are, so every host prints the same digits.
 * - Time: the host's clock. There are no time zones: local time is UTC, _timezone and _daylight
 *   are 0. clock() counts milliseconds since start-up (msvcrt's clock is wall time, not CPU time).
 *   Times before 1970 are not representable (gmtime and localtime return NULL, as msvcrt does).
 */
#include "win32_console.h"

#define RPT_MSVCRT(name) void rpt_win32_msvcrt_##name(struct cpu *restrict c)

/* A cdecl `double name(double)` or `double name(double, double)` that is one C function. */
#define RPT_MSVCRT_UNARY(name, f)                                               \
	RPT_MSVCRT(name);                                                       \
	RPT_MSVCRT(name)                                                        \
	{                                                                       \
		rpt_win32_return_cdecl_f64(c, f(rpt_win32_arg_f64(c, 0)));      \
	}
#define RPT_MSVCRT_BINARY(name, f)                                                                   \
	RPT_MSVCRT(name);                                                                            \
	RPT_MSVCRT(name)                                                                             \
	{                                                                                            \
		rpt_win32_return_cdecl_f64(c, f(rpt_win32_arg_f64(c, 0), rpt_win32_arg_f64(c, 2)));   \
	}

/* ---------------------------------------------------------------- math.h */

/* The C library's function `f` (clang turns the builtins into calls of sin, floor, ...), or its
 * counterpart in x87_soft_math.h where the host has no C library. */
#if __STDC_HOSTED__
#define RPT_LIBM(f) __builtin_##f
#else
#include "x87_soft_math.h"
#define RPT_LIBM(f) rpt_x86_soft_##f
#endif

RPT_MSVCRT_UNARY(sqrt, __builtin_sqrt)

RPT_MSVCRT_UNARY(fabs, __builtin_fabs)

RPT_MSVCRT(_isnan);
void rpt_win32_msvcrt__isnan(struct cpu *restrict c)
{
	rpt_win32_return_cdecl(c, __builtin_isnan(rpt_win32_arg_f64(c, 0)) ? 1u : 0u);
}

RPT_MSVCRT(_finite);
void rpt_win32_msvcrt__finite(struct cpu *restrict c)
{
	rpt_win32_return_cdecl(c, __builtin_isfinite(rpt_win32_arg_f64(c, 0)) ? 1u : 0u);
}

RPT_MSVCRT_UNARY(sin, RPT_LIBM(sin))

RPT_MSVCRT_UNARY(cos, RPT_LIBM(cos))

RPT_MSVCRT_UNARY(tan, RPT_LIBM(tan))

RPT_MSVCRT_UNARY(asin, RPT_LIBM(asin))

RPT_MSVCRT_UNARY(acos, RPT_LIBM(acos))

RPT_MSVCRT_UNARY(atan, RPT_LIBM(atan))

RPT_MSVCRT_UNARY(sinh, RPT_LIBM(sinh))

RPT_MSVCRT_UNARY(cosh, RPT_LIBM(cosh))

RPT_MSVCRT_UNARY(tanh, RPT_LIBM(tanh))

RPT_MSVCRT_UNARY(exp, RPT_LIBM(exp))

RPT_MSVCRT_UNARY(log, RPT_LIBM(log))

RPT_MSVCRT_UNARY(log10, RPT_LIBM(log10))

RPT_MSVCRT_UNARY(floor, RPT_LIBM(floor))

RPT_MSVCRT_UNARY(ceil, RPT_LIBM(ceil))

RPT_MSVCRT_BINARY(atan2, RPT_LIBM(atan2))

RPT_MSVCRT_BINARY(pow, RPT_LIBM(pow))

RPT_MSVCRT_BINARY(fmod, RPT_LIBM(fmod))

RPT_MSVCRT_BINARY(_hypot, RPT_LIBM(hypot))

RPT_MSVCRT(ldexp);
RPT_MSVCRT(frexp);
RPT_MSVCRT(modf);

/* double ldexp(double x, int e) */
void rpt_win32_msvcrt_ldexp(struct cpu *restrict c)
{
	rpt_win32_return_cdecl_f64(c, RPT_LIBM(ldexp)(rpt_win32_arg_f64(c, 0), (int)rpt_win32_arg(c, 2)));
}

/* double frexp(double x, int *e) */
void rpt_win32_msvcrt_frexp(struct cpu *restrict c)
{
	int e = 0;
	double m = RPT_LIBM(frexp)(rpt_win32_arg_f64(c, 0), &e);
	rpt_store_u32_le(rpt_win32_arg(c, 2), (uint32_t)e);
	rpt_win32_return_cdecl_f64(c, m);
}

/* double modf(double x, double *integral) */
void rpt_win32_msvcrt_modf(struct cpu *restrict c)
{
	double x = rpt_win32_arg_f64(c, 0);
	double whole = RPT_LIBM(trunc)(x);
	double frac = __builtin_isinf(x) ? __builtin_copysign(0.0, x) : x - whole;
	rpt_store_f64_le(rpt_win32_arg(c, 2), whole);
	rpt_win32_return_cdecl_f64(c, frac);
}


/* ---------------------------------------------------------------- time.h */

RPT_MSVCRT(time);
RPT_MSVCRT(_time32);
RPT_MSVCRT(_time64);
RPT_MSVCRT(clock);
RPT_MSVCRT(difftime);
RPT_MSVCRT(_difftime32);
RPT_MSVCRT(_difftime64);
RPT_MSVCRT(gmtime);
RPT_MSVCRT(_gmtime32);
RPT_MSVCRT(_gmtime64);
RPT_MSVCRT(localtime);
RPT_MSVCRT(_localtime32);
RPT_MSVCRT(_localtime64);
RPT_MSVCRT(mktime);
RPT_MSVCRT(_mktime32);
RPT_MSVCRT(_mktime64);
RPT_MSVCRT(asctime);
RPT_MSVCRT(ctime);
RPT_MSVCRT(_ctime64);
RPT_MSVCRT(strftime);

static int64_t rpt_now_seconds(void)
{
	int64_t ns = rpt_realtime_ns();
	return ns >= 0 ? ns / 1000000000 : -((-ns + 999999999) / 1000000000);
}

static void rpt_time_common(struct cpu *c, int wide)
{
	int64_t now = rpt_now_seconds();
	uint32_t out = rpt_win32_arg(c, 0);
	if (wide) {
		if (out)
			rpt_store_u64_le(out, (uint64_t)now);
		rpt_win32_return_cdecl64(c, (uint64_t)now);
	} else {
		if (out)
			rpt_store_u32_le(out, (uint32_t)now);
		rpt_win32_return_cdecl(c, (uint32_t)now);
	}
}

void rpt_win32_msvcrt_time(struct cpu *restrict c) { rpt_time_common(c, 0); }
void rpt_win32_msvcrt__time32(struct cpu *restrict c) { rpt_time_common(c, 0); }
void rpt_win32_msvcrt__time64(struct cpu *restrict c) { rpt_time_common(c, 1); }

static uint64_t rpt_clock_start;
static int rpt_clock_started;

/* clock(): milliseconds (CLOCKS_PER_SEC is 1000) since the process started; the first call of
 * any clock function marks the start, which is before main in every mingw program. */
void rpt_win32_msvcrt_clock(struct cpu *restrict c)
{
	uint64_t now = rpt_monotonic_ns();
	if (!rpt_clock_started) {
		rpt_clock_start = now;
		rpt_clock_started = 1;
	}
	rpt_win32_return_cdecl(c, (uint32_t)((now - rpt_clock_start) / 1000000u));
}

void rpt_win32_msvcrt_difftime(struct cpu *restrict c)
{
	rpt_win32_return_cdecl_f64(c, (double)(int32_t)rpt_win32_arg(c, 0) - (double)(int32_t)rpt_win32_arg(c, 1));
}

void rpt_win32_msvcrt__difftime32(struct cpu *restrict c)
{
	rpt_win32_msvcrt_difftime(c);
}

void rpt_win32_msvcrt__difftime64(struct cpu *restrict c)
{
	rpt_win32_return_cdecl_f64(c, (double)(int64_t)rpt_win32_arg64(c, 0) - (double)(int64_t)rpt_win32_arg64(c, 2));
}

/* Days since 1970-01-01 of a proleptic Gregorian date (month 1-12). */
static int64_t rpt_days_from_civil(int64_t y, int64_t m, int64_t d)
{
	y -= m <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	int64_t yoe = y - era * 400;
	int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

/* Fills the struct tm at `tm` with the UTC time `t`; 0 if t is negative. */
static uint32_t rpt_fill_tm(uint32_t tm, int64_t t)
{
	if (t < 0)
		return 0;
	int64_t days = t / 86400, secs = t % 86400;
	/* civil_from_days */
	int64_t z = days + 719468;
	int64_t era = z / 146097;
	int64_t doe = z - era * 146097;
	int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	int64_t y = yoe + era * 400;
	int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	int64_t mp = (5 * doy + 2) / 153;
	int64_t d = doy - (153 * mp + 2) / 5 + 1;
	int64_t m = mp + (mp < 10 ? 3 : -9);
	y += m <= 2;
	rpt_store_u32_le(tm + 0, (uint32_t)(secs % 60));
	rpt_store_u32_le(tm + 4, (uint32_t)(secs / 60 % 60));
	rpt_store_u32_le(tm + 8, (uint32_t)(secs / 3600));
	rpt_store_u32_le(tm + 12, (uint32_t)d);
	rpt_store_u32_le(tm + 16, (uint32_t)(m - 1));
	rpt_store_u32_le(tm + 20, (uint32_t)(y - 1900));
	rpt_store_u32_le(tm + 24, (uint32_t)((days + 4) % 7)); /* 1970-01-01 was a Thursday */
	rpt_store_u32_le(tm + 28, (uint32_t)(days - rpt_days_from_civil(y, 1, 1)));
	rpt_store_u32_le(tm + 32, 0);
	return tm;
}

void rpt_win32_msvcrt_gmtime(struct cpu *restrict c)
{
	uint32_t t = rpt_win32_arg(c, 0);
	rpt_win32_return_cdecl(c, rpt_fill_tm(RPT_DATA_TM, (int32_t)rpt_load_u32_le(t)));
}

void rpt_win32_msvcrt__gmtime32(struct cpu *restrict c)
{
	rpt_win32_msvcrt_gmtime(c);
}

void rpt_win32_msvcrt__gmtime64(struct cpu *restrict c)
{
	uint32_t t = rpt_win32_arg(c, 0);
	rpt_win32_return_cdecl(c, rpt_fill_tm(RPT_DATA_TM, (int64_t)rpt_load_u64_le(t)));
}

void rpt_win32_msvcrt_localtime(struct cpu *restrict c) { rpt_win32_msvcrt_gmtime(c); }
void rpt_win32_msvcrt__localtime32(struct cpu *restrict c) { rpt_win32_msvcrt_gmtime(c); }
void rpt_win32_msvcrt__localtime64(struct cpu *restrict c) { rpt_win32_msvcrt__gmtime64(c); }

/* mktime: normalises the struct tm in place and returns its time (UTC), or -1. */
static int64_t rpt_mktime(uint32_t tm)
{
	int64_t sec = (int32_t)rpt_load_u32_le(tm), min = (int32_t)rpt_load_u32_le(tm + 4);
	int64_t hour = (int32_t)rpt_load_u32_le(tm + 8), mday = (int32_t)rpt_load_u32_le(tm + 12);
	int64_t mon = (int32_t)rpt_load_u32_le(tm + 16), year = (int32_t)rpt_load_u32_le(tm + 20) + 1900;
	year += mon >= 0 ? mon / 12 : -((11 - mon) / 12);
	mon = ((mon % 12) + 12) % 12;
	int64_t t = (rpt_days_from_civil(year, mon + 1, 1) + mday - 1) * 86400 + hour * 3600 + min * 60 + sec;
	if (t < 0 || !rpt_fill_tm(tm, t))
		return -1;
	return t;
}

void rpt_win32_msvcrt_mktime(struct cpu *restrict c)
{
	int64_t t = rpt_mktime(rpt_win32_arg(c, 0));
	rpt_win32_return_cdecl(c, t > 0x7fffffff ? 0xffffffffu : (uint32_t)t);
}

void rpt_win32_msvcrt__mktime32(struct cpu *restrict c)
{
	rpt_win32_msvcrt_mktime(c);
}

void rpt_win32_msvcrt__mktime64(struct cpu *restrict c)
{
	rpt_win32_return_cdecl64(c, (uint64_t)rpt_mktime(rpt_win32_arg(c, 0)));
}

static const char *const rpt_day_names[7] = { "Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday" };
static const char *const rpt_month_names[12] = { "January", "February", "March", "April", "May", "June",
						  "July", "August", "September", "October", "November", "December" };

/* Appends `v` with at least `width` digits. */
static uint32_t rpt_put_number(char *out, uint32_t pos, uint32_t cap, int64_t v, int width)
{
	char d[24];
	int n = 0;
	uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
	do {
		d[n++] = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	while (n < width)
		d[n++] = '0';
	if (v < 0 && pos < cap)
		out[pos++] = '-';
	while (n > 0 && pos < cap)
		out[pos++] = d[--n];
	return pos;
}

static uint32_t rpt_put_text(char *out, uint32_t pos, uint32_t cap, const char *s, uint32_t max)
{
	for (uint32_t i = 0; s[i] && i < max && pos < cap; i++)
		out[pos++] = s[i];
	return pos;
}

/* strftime for the "C" locale into a host buffer; returns the length, or cap+1 if it did not fit. */
static uint32_t rpt_strftime(char *out, uint32_t cap, uint32_t fmt, uint32_t tm)
{
	int32_t f[9];
	for (int i = 0; i < 9; i++)
		f[i] = (int32_t)rpt_load_u32_le(tm + 4 * (uint32_t)i);
	int sec = f[0], min = f[1], hour = f[2], mday = f[3], mon = f[4], year = f[5] + 1900, wday = f[6], yday = f[7];
	const char *day = rpt_day_names[(wday % 7 + 7) % 7], *month = rpt_month_names[(mon % 12 + 12) % 12];
	uint32_t pos = 0;
	for (uint32_t p = fmt;; p++) {
		uint8_t ch = rpt_load_u8_le(p);
		if (!ch)
			break;
		if (ch != '%') {
			if (pos < cap)
				out[pos++] = (char)ch;
			else
				return cap + 1;
			continue;
		}
		ch = rpt_load_u8_le(++p);
		if (ch == '#')
			ch = rpt_load_u8_le(++p);
		switch (ch) {
		case 'a': pos = rpt_put_text(out, pos, cap, day, 3); break;
		case 'A': pos = rpt_put_text(out, pos, cap, day, 99); break;
		case 'b': pos = rpt_put_text(out, pos, cap, month, 3); break;
		case 'B': pos = rpt_put_text(out, pos, cap, month, 99); break;
		case 'd': pos = rpt_put_number(out, pos, cap, mday, 2); break;
		case 'H': pos = rpt_put_number(out, pos, cap, hour, 2); break;
		case 'I': pos = rpt_put_number(out, pos, cap, hour % 12 ? hour % 12 : 12, 2); break;
		case 'j': pos = rpt_put_number(out, pos, cap, yday + 1, 3); break;
		case 'm': pos = rpt_put_number(out, pos, cap, mon + 1, 2); break;
		case 'M': pos = rpt_put_number(out, pos, cap, min, 2); break;
		case 'p': pos = rpt_put_text(out, pos, cap, hour < 12 ? "AM" : "PM", 2); break;
		case 'S': pos = rpt_put_number(out, pos, cap, sec, 2); break;
		case 'U': pos = rpt_put_number(out, pos, cap, (yday + 7 - wday) / 7, 2); break;
		case 'W': pos = rpt_put_number(out, pos, cap, (yday + 7 - (wday + 6) % 7) / 7, 2); break;
		case 'w': pos = rpt_put_number(out, pos, cap, wday, 1); break;
		case 'y': pos = rpt_put_number(out, pos, cap, (year % 100 + 100) % 100, 2); break;
		case 'Y': pos = rpt_put_number(out, pos, cap, year, 1); break;
		case 'c':
		case 'x':
			pos = rpt_put_number(out, pos, cap, mon + 1, 2);
			pos = rpt_put_text(out, pos, cap, "/", 1);
			pos = rpt_put_number(out, pos, cap, mday, 2);
			pos = rpt_put_text(out, pos, cap, "/", 1);
			pos = rpt_put_number(out, pos, cap, (year % 100 + 100) % 100, 2);
			if (ch == 'x')
				break;
			pos = rpt_put_text(out, pos, cap, " ", 1);
			/* fall through */
		case 'X':
			pos = rpt_put_number(out, pos, cap, hour, 2);
			pos = rpt_put_text(out, pos, cap, ":", 1);
			pos = rpt_put_number(out, pos, cap, min, 2);
			pos = rpt_put_text(out, pos, cap, ":", 1);
			pos = rpt_put_number(out, pos, cap, sec, 2);
			break;
		case 'z':
		case 'Z': pos = rpt_put_text(out, pos, cap, "UTC", 3); break;
		case '%': pos = rpt_put_text(out, pos, cap, "%", 1); break;
		default:
			break;
		}
		if (pos >= cap)
			return cap + 1;
	}
	return pos;
}

/* size_t strftime(char *buf, size_t max, const char *fmt, const struct tm *tm) */
void rpt_win32_msvcrt_strftime(struct cpu *restrict c)
{
	uint32_t buf = rpt_win32_arg(c, 0), max = rpt_win32_arg(c, 1);
	char text[512];
	uint32_t cap = max > sizeof text ? (uint32_t)sizeof text : max;
	uint32_t n = rpt_strftime(text, cap, rpt_win32_arg(c, 2), rpt_win32_arg(c, 3));
	/* The result and its NUL must fit in max bytes. */
	if (n >= max) {
		if (max)
			rpt_store_u8_le(buf, 0);
		rpt_win32_return_cdecl(c, 0);
		return;
	}
	rpt_guest_copy_out(buf, text, n);
	rpt_store_u8_le(buf + n, 0);
	rpt_win32_return_cdecl(c, n);
}

/* "Wed Jan 02 02:03:55 1980\n", in a static buffer as msvcrt's is. */
static uint32_t rpt_asctime(uint32_t tm)
{
	char text[32];
	static const char fmt[] = "%a %b %d %H:%M:%S %Y\n";
	/* The format lives in the platform's strftime; put it in guest memory for the call. */
	rpt_guest_store_string(RPT_DATA_TIME_TEXT, fmt);
	uint32_t n = rpt_strftime(text, sizeof text - 1, RPT_DATA_TIME_TEXT, tm);
	if (n >= sizeof text)
		n = 0;
	rpt_guest_copy_out(RPT_DATA_TIME_TEXT, text, n);
	rpt_store_u8_le(RPT_DATA_TIME_TEXT + n, 0);
	return RPT_DATA_TIME_TEXT;
}

void rpt_win32_msvcrt_asctime(struct cpu *restrict c)
{
	rpt_win32_return_cdecl(c, rpt_asctime(rpt_win32_arg(c, 0)));
}

void rpt_win32_msvcrt_ctime(struct cpu *restrict c)
{
	uint32_t tm = rpt_fill_tm(RPT_DATA_TM, (int32_t)rpt_load_u32_le(rpt_win32_arg(c, 0)));
	rpt_win32_return_cdecl(c, tm ? rpt_asctime(tm) : 0);
}

void rpt_win32_msvcrt__ctime64(struct cpu *restrict c)
{
	uint32_t tm = rpt_fill_tm(RPT_DATA_TM, (int64_t)rpt_load_u64_le(rpt_win32_arg(c, 0)));
	rpt_win32_return_cdecl(c, tm ? rpt_asctime(tm) : 0);
}
