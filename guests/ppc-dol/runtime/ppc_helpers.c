/*
 * ppc_helpers.c - the helpers lifted PowerPC code calls: the 750's fres/frsqrte estimates and
 * paired-single quantisation (psq_l, psq_st), and the fold of uncached addresses they use.
 *
 * This file is the helpers' only definition: generations compile it, and the crate compiles the
 * same file into itself for rpt's IR interpreter (build.rs, src/interp.rs), where guest memory
 * accesses reach the interpreter's memory (rpt_runtime.h, RPT_INTERPRETER). It uses guest memory
 * only through rpt_load_* / rpt_store_* and guest state only through its arguments.
 */
#include "cpu.h"

/* The uncached views of MEM1 and MEM2 (0xc0000000, 0xd0000000) are the cached ones (0x80000000,
 * 0x90000000): bit 30 is cleared, as the lifter's loads and stores do (src/lift/mem.rs says why).
 * Platforms call it too, for the guest buffers their system calls read and write. */
uint32_t rpt_ppc_cached_view(uint32_t ea);

uint32_t rpt_ppc_cached_view(uint32_t ea)
{
	return ea & ~UINT32_C(0x40000000);
}

/* ---- fres / frsqrte: the 750's estimates (src/estimate.rs says where the tables and special
 * cases come from). Each is a table lookup on the top mantissa bits with linear interpolation: a
 * base and a decrement per segment of the input's mantissa, as Dolphin's hardware tests measured. */

static const int32_t rpt_ppc_fres_table[32][2] = {
	{ 0x7ff800, 0x3e1 }, { 0x783800, 0x3a7 }, { 0x70ea00, 0x371 }, { 0x6a0800, 0x340 },
	{ 0x638800, 0x313 }, { 0x5d6200, 0x2ea }, { 0x579000, 0x2c4 }, { 0x520800, 0x2a0 },
	{ 0x4cc800, 0x27f }, { 0x47ca00, 0x261 }, { 0x430800, 0x245 }, { 0x3e8000, 0x22a },
	{ 0x3a2c00, 0x212 }, { 0x360800, 0x1fb }, { 0x321400, 0x1e5 }, { 0x2e4a00, 0x1d1 },
	{ 0x2aa800, 0x1be }, { 0x272c00, 0x1ac }, { 0x23d600, 0x19b }, { 0x209e00, 0x18b },
	{ 0x1d8800, 0x17c }, { 0x1a9000, 0x16e }, { 0x17ae00, 0x15b }, { 0x14f800, 0x15b },
	{ 0x124400, 0x143 }, { 0x0fbe00, 0x143 }, { 0x0d3800, 0x12d }, { 0x0ade00, 0x12d },
	{ 0x088400, 0x11a }, { 0x065000, 0x11a }, { 0x041c00, 0x108 }, { 0x020c00, 0x106 },
};

static const int32_t rpt_ppc_frsqrte_table[32][2] = {
	{ 0x3ffa000, 0x7a4 }, { 0x3c29000, 0x700 }, { 0x38aa000, 0x670 }, { 0x3572000, 0x5f2 },
	{ 0x3279000, 0x584 }, { 0x2fb7000, 0x524 }, { 0x2d26000, 0x4cc }, { 0x2ac0000, 0x47e },
	{ 0x2881000, 0x43a }, { 0x2665000, 0x3fa }, { 0x2468000, 0x3c2 }, { 0x2287000, 0x38e },
	{ 0x20c1000, 0x35e }, { 0x1f12000, 0x332 }, { 0x1d79000, 0x30a }, { 0x1bf4000, 0x2e6 },
	{ 0x1a7e800, 0x568 }, { 0x17cb800, 0x4f3 }, { 0x1552800, 0x48d }, { 0x130c000, 0x435 },
	{ 0x10f2000, 0x3e7 }, { 0x0eff000, 0x3a2 }, { 0x0d2e000, 0x365 }, { 0x0b7c000, 0x32e },
	{ 0x09e5000, 0x2fc }, { 0x0867000, 0x2d0 }, { 0x06ff000, 0x2a8 }, { 0x05ab800, 0x283 },
	{ 0x046a000, 0x261 }, { 0x0339800, 0x243 }, { 0x0218800, 0x226 }, { 0x0105800, 0x20b },
};

#define RPT_PPC_SIGN (UINT64_C(1) << 63)
#define RPT_PPC_EXP (UINT64_C(0x7ff) << 52)
#define RPT_PPC_FRAC ((UINT64_C(1) << 52) - 1)
#define RPT_PPC_QUIET (UINT64_C(1) << 51)
#define RPT_PPC_DEFAULT_NAN UINT64_C(0x7ff8000000000000)
#define RPT_PPC_FLT_MAX UINT64_C(0x47efffffe0000000)

uint64_t rpt_helper_fres_estimate(struct cpu *restrict c, uint64_t bits)
{
	(void)c;
	uint64_t sign = bits & RPT_PPC_SIGN, exp = bits & RPT_PPC_EXP, frac = bits & RPT_PPC_FRAC;
	if (exp == 0 && frac == 0)
		return sign | RPT_PPC_EXP;
	if (exp == RPT_PPC_EXP)
		return frac == 0 ? sign : bits | RPT_PPC_QUIET;
	if (exp < (UINT64_C(895) << 52))
		return sign | RPT_PPC_FLT_MAX;
	if (exp >= (UINT64_C(1149) << 52))
		return sign;
	exp = (UINT64_C(0x7fd) << 52) - exp;
	int64_t i = (int64_t)(frac >> 37);
	const int32_t *entry = rpt_ppc_fres_table[i / 1024];
	int64_t m = entry[0] - (entry[1] * (i % 1024) + 1) / 2;
	return sign | exp | ((uint64_t)m << 29);
}

uint64_t rpt_helper_frsqrte_estimate(struct cpu *restrict c, uint64_t bits)
{
	(void)c;
	uint64_t sign = bits & RPT_PPC_SIGN, exp = bits & RPT_PPC_EXP, frac = bits & RPT_PPC_FRAC;
	if (exp == 0 && frac == 0)
		return sign | RPT_PPC_EXP;
	if (exp == RPT_PPC_EXP) {
		if (frac != 0)
			return bits | RPT_PPC_QUIET;
		return sign ? RPT_PPC_DEFAULT_NAN : 0;
	}
	if (sign)
		return RPT_PPC_DEFAULT_NAN;
	/* The exponent stays a shifted field, signed so a normalised denormal can go below zero. */
	int64_t exponent = (int64_t)exp;
	if (exponent == 0) {
		while (!(frac & (UINT64_C(1) << 52))) {
			exponent -= INT64_C(1) << 52;
			frac <<= 1;
		}
		frac &= RPT_PPC_FRAC;
		exponent += INT64_C(1) << 52;
	}
	int odd = !(exponent & (INT64_C(1) << 52));
	int64_t e = ((INT64_C(0x3ff) << 52) - ((exponent - (INT64_C(0x3fe) << 52)) / 2)) & (INT64_C(0x7ff) << 52);
	int64_t i = (int64_t)(frac >> 37);
	const int32_t *entry = rpt_ppc_frsqrte_table[i / 2048 + (odd ? 16 : 0)];
	return (uint64_t)e | ((uint64_t)(entry[0] - entry[1] * (i % 2048)) << 26);
}

/* ---- psq_l / psq_st quantisation (src/quantize.rs states the rules and where they come from). */

static uint32_t rpt_ppc_qsize(uint32_t type)
{
	switch (type & 7) {
	case 4:
	case 6:
		return 1;
	case 5:
	case 7:
		return 2;
	default:
		return 4;
	}
}

/* The signed 6-bit scale at bit `lsb` of a GQR. */
static int rpt_ppc_qscale(uint32_t gqr, unsigned lsb)
{
	int s = (int)((gqr >> lsb) & 63u);
	return s >= 32 ? s - 64 : s;
}

/* 2^e as a float, for e in -32..32. */
static float rpt_ppc_pow2(int e)
{
	return rpt_f32_from_bits((uint32_t)(127 + e) << 23);
}

static uint64_t rpt_ppc_single_to_double_bits(uint32_t w)
{
	float f = rpt_f32_from_bits(w);
	if (f != f)
		return ((uint64_t)(w & 0x80000000u) << 32) | UINT64_C(0x7ff0000000000000) | ((uint64_t)(w & 0x007fffffu) << 29);
	return rpt_f64_bits((double)f);
}

uint64_t rpt_helper_psq_load(struct cpu *restrict c, uint32_t ea, uint32_t gqr, uint32_t slot)
{
	(void)c;
	uint32_t type = (gqr >> 16) & 7u;
	uint32_t addr = rpt_ppc_cached_view(ea + slot * rpt_ppc_qsize(type));
	float v;
	switch (type) {
	case 4:
		v = (float)rpt_load_u8_be(addr);
		break;
	case 5:
		v = (float)rpt_load_u16_be(addr);
		break;
	case 6:
		v = (float)(int8_t)rpt_load_u8_be(addr);
		break;
	case 7:
		v = (float)(int16_t)rpt_load_u16_be(addr);
		break;
	default:
		return rpt_ppc_single_to_double_bits(rpt_load_u32_be(addr));
	}
	v = v * rpt_ppc_pow2(-rpt_ppc_qscale(gqr, 24));
	return rpt_f64_bits((double)v);
}

void rpt_helper_psq_store(struct cpu *restrict c, uint32_t ea, uint32_t gqr, uint64_t bits, uint32_t slot)
{
	(void)c;
	uint32_t type = gqr & 7u;
	uint32_t size = rpt_ppc_qsize(type);
	uint32_t addr = rpt_ppc_cached_view(ea + slot * size);
	float lo, hi;
	switch (type) {
	case 4: lo = 0.0f; hi = 255.0f; break;
	case 5: lo = 0.0f; hi = 65535.0f; break;
	case 6: lo = -128.0f; hi = 127.0f; break;
	case 7: lo = -32768.0f; hi = 32767.0f; break;
	default: {
		/* stfs's bit move, with the single denormal range flushed to a signed zero. */
		uint64_t exp = (bits >> 52) & 0x7ffu;
		uint32_t w = exp > 896 ? (uint32_t)(((bits >> 62) << 30) | ((bits >> 29) & 0x3fffffffu)) : (uint32_t)((bits >> 63) << 31);
		rpt_store_u32_be(addr, w);
		return;
	}
	}
	float f = (float)rpt_f64_from_bits(bits) * rpt_ppc_pow2(rpt_ppc_qscale(gqr, 8));
	int32_t v;
	if (f != f)
		v = 0;
	else if (f < lo)
		v = (int32_t)lo;
	else if (f > hi)
		v = (int32_t)hi;
	else
		v = (int32_t)f;
	if (size == 1)
		rpt_store_u8_be(addr, (uint8_t)v);
	else
		rpt_store_u16_be(addr, (uint16_t)v);
}
