/*
 * x87.c - the x87 unit: the helpers lifted x87 code calls (src/x87.rs describes the model). This
 * is their only definition: generations compile this file, and the crate compiles it into itself,
 * once per value model, for the IR interpreter (build.rs, src/interp.rs).
 *
 * State (struct cpu): fpu_cw, fpu_sw (without TOP), fpu_top, fpu_tags (bit i: physical register i
 * holds a value), st_m[8] and st_e[8] (significand, sign-and-exponent of each physical register).
 *
 * The arithmetic is done by a "unit" of seven operations (load, store, arith, compare, unary,
 * binary, constant). On x86-64 hosts the unit is the host's own x87: each operation loads its
 * operands under the guest's control word (exceptions masked), executes the guest's instruction
 * and reads back results and status word, so results are bit-identical to the real FPU. Other
 * hosts use the software unit in x87_soft.h (docs/x87.md says how exact it is).
 *
 * Built with RPT_X87_F64 (the recipe's guest option x87: "f64"), the registers hold IEEE doubles
 * instead and the unit is x87_f64.h's, which does the common operations in C doubles and hands
 * the rest to the exact unit under the name exact_*.
 */
#include "cpu.h"

#ifdef RPT_X87_F64
/* The f64 model leaves parts of the exact unit unused (x87_f64.h delegates only some operations). */
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wunused-const-variable"
#endif

/* Operation numbers: the same as src/x87.rs (a test there compares them). */
#define X87_ADD 0u
#define X87_MUL 1u
#define X87_SUB 4u
#define X87_SUBR 5u
#define X87_DIV 6u
#define X87_DIVR 7u

#define X87_FCHS 0u
#define X87_FABS 1u
#define X87_FSQRT 2u
#define X87_FRNDINT 3u
#define X87_F2XM1 4u
#define X87_FSIN 5u
#define X87_FCOS 6u
#define X87_FPTAN 7u
#define X87_FSINCOS 8u
#define X87_FPATAN 9u
#define X87_FYL2X 10u
#define X87_FYL2XP1 11u
#define X87_FSCALE 12u
#define X87_FPREM 13u
#define X87_FPREM1 14u
#define X87_FXTRACT 15u
#define X87_FTST 16u
#define X87_FXAM 17u
#define X87_FINCSTP 18u
#define X87_FDECSTP 19u
#define X87_FNINIT 20u
#define X87_FNCLEX 21u
#define X87_FLD1 22u
#define X87_FLDZ 23u
#define X87_FLDPI 24u
#define X87_FLDL2E 25u
#define X87_FLDL2T 26u
#define X87_FLDLG2 27u
#define X87_FLDLN2 28u
#define X87_FCOMPP 29u
#define X87_FUCOMPP 30u

#define X87_FLD 0u
#define X87_FST 1u
#define X87_FSTP 2u
#define X87_FXCH 3u
#define X87_FFREE 4u
#define X87_FFREEP 5u
#define X87_FCOM 6u
#define X87_FCOMI 10u

#define X87_STORE_POP 1u
#define X87_STORE_TRUNCATE 2u
#define X87_STORE_HIGH 4u

#define X87_KIND_F32 0u
#define X87_KIND_F64 1u
#define X87_KIND_F80 2u
#define X87_KIND_I16 3u
#define X87_KIND_I32 4u
#define X87_KIND_I64 5u

#define SW_IE 0x0001u
#define SW_EXCEPTIONS 0x003fu
#define SW_SF 0x0040u
#define SW_ES 0x0080u
#define SW_C0 0x0100u
#define SW_C1 0x0200u
#define SW_C2 0x0400u
#define SW_C3 0x4000u
#define SW_B 0x8000u
#define SW_TOP 0x3800u

#define X87_CW_INIT 0x037fu

struct rpt_f80 {
	uint64_t m;
	uint16_t se;
};

static const struct rpt_f80 x87_indefinite = { 0xc000000000000000ull, 0xffffu };
static const struct rpt_f80 x87_zero = { 0, 0 };

/* ---------------------------------------------------------------- the unit */

#ifdef RPT_X87_F64
/* The exact unit below serves the f64 model's unit (x87_f64.h) for what that one does not do in
 * doubles: its functions take the names exact_*. */
#define unit_load exact_load
#define unit_store exact_store
#define unit_arith exact_arith
#define unit_compare exact_compare
#define unit_unary exact_unary
#define unit_binary exact_binary
#define unit_constant exact_constant
#define unit_arith_memory exact_arith_memory
#define unit_compare_memory exact_compare_memory
#endif

#if defined(__x86_64__) && !defined(RPT_X87_SOFT)

/* The host's long double is the 80-bit format; these move bits in and out of one. */
static long double x87_ld(struct rpt_f80 v)
{
	long double f = 0;
	__builtin_memcpy(&f, &v.m, 8);
	__builtin_memcpy((uint8_t *)&f + 8, &v.se, 2);
	return f;
}

static struct rpt_f80 x87_bits(long double f)
{
	struct rpt_f80 v;
	__builtin_memcpy(&v.m, &f, 8);
	__builtin_memcpy(&v.se, (uint8_t *)&f + 8, 2);
	return v;
}

#define X87_CLOBBERS "st", "st(1)", "st(2)", "st(3)", "st(4)", "st(5)", "st(6)", "st(7)"

/* Each of these runs its instructions on the host's x87 unit under the guest's control word (all
 * exceptions masked), starting from an empty register stack and leaving it empty: the x86-64 ABI
 * keeps the stack empty between statements, and the clobbers keep the compiler's own values out of
 * it. So no fninit is needed around them (an fninit costs tens of cycles, and one before and one
 * after every operation was most of an x87 program's time): fnclex clears the exception flags so
 * that fnstsw reports this operation's alone, and the host's control word is restored after.
 *
 * X87_TWO runs BODY with st(0) = a, st(1) = b; FIX, after the status word is read, leaves exactly
 * two values, returned in *o0 (st(0)) and *o1. */
#define X87_TWO(cw_in, a_in, b_in, o0, o1, BODY, FIX)                                                     \
	do {                                                                                              \
		uint16_t save_ = 0, cw_ = (uint16_t)((cw_in) | 0x3fu), sw_ = 0;                           \
		long double a_ = x87_ld(a_in), b_ = x87_ld(b_in), r0_ = 0, r1_ = 0;                       \
		__asm__ volatile("fnstcw %[save]\n\tfnclex\n\tfldcw %[cw]\n\tfldt %[b]\n\tfldt %[a]\n\t" BODY \
				 "\n\tfnstsw %[sw]\n\t" FIX "\n\tfstpt %[r0]\n\tfstpt %[r1]\n\t"   \
				 "fldcw %[save]"                                                             \
				 : [save] "+m"(save_), [sw] "=m"(sw_), [r0] "=m"(r0_), [r1] "=m"(r1_)        \
				 : [cw] "m"(cw_), [a] "m"(a_), [b] "m"(b_)                                 \
				 : X87_CLOBBERS);                                                            \
		*(o0) = x87_bits(r0_);                                                                    \
		*(o1) = x87_bits(r1_);                                                                    \
		hw = sw_;                                                                                 \
	} while (0)

#define X87_LOAD(INSN, bits_in)                                                                     \
	do {                                                                                        \
		uint16_t save_ = 0, cw_ = (uint16_t)(cw | 0x3fu), sw_ = 0;                          \
		uint64_t m_ = (bits_in);                                                            \
		long double r_ = 0;                                                                 \
		__asm__ volatile("fnstcw %[save]\n\tfnclex\n\tfldcw %[cw]\n\t" INSN " %[m]\n\t"      \
				 "fnstsw %[sw]\n\tfstpt %[r]\n\tfldcw %[save]"             \
				 : [save] "+m"(save_), [sw] "=m"(sw_), [r] "=m"(r_)                  \
				 : [cw] "m"(cw_), [m] "m"(m_)                                        \
				 : X87_CLOBBERS);                                                    \
		*out = x87_bits(r_);                                                                \
		return sw_;                                                                         \
	} while (0)

#define X87_STORE(INSN)                                                                             \
	do {                                                                                        \
		uint16_t save_ = 0, cw_ = (uint16_t)(cw | 0x3fu), sw_ = 0;                          \
		uint64_t m_ = 0;                                                                    \
		long double a_ = x87_ld(v);                                                         \
		__asm__ volatile("fnstcw %[save]\n\tfnclex\n\tfldcw %[cw]\n\tfldt %[a]\n\t" INSN    \
				 " %[m]\n\tfnstsw %[sw]\n\tfldcw %[save]"                  \
				 : [save] "+m"(save_), [sw] "=m"(sw_), [m] "+m"(m_)                  \
				 : [cw] "m"(cw_), [a] "m"(a_)                                        \
				 : X87_CLOBBERS);                                                    \
		*out = m_;                                                                          \
		return sw_;                                                                         \
	} while (0)

/* Runs INSN, an instruction with st(0) = a and a memory operand holding bits. */
#define X87_MEM(INSN)                                                                               \
	do {                                                                                        \
		uint16_t save_ = 0, cw_ = (uint16_t)(cw | 0x3fu), sw_ = 0;                          \
		uint64_t m_ = bits;                                                                 \
		long double a_ = x87_ld(a), r_ = 0;                                                 \
		__asm__ volatile("fnstcw %[save]\n\tfnclex\n\tfldcw %[cw]\n\tfldt %[a]\n\t" INSN    \
				 " %[m]\n\tfnstsw %[sw]\n\tfstpt %[r]\n\tfldcw %[save]"        \
				 : [save] "+m"(save_), [sw] "=m"(sw_), [r] "=m"(r_)                  \
				 : [cw] "m"(cw_), [a] "m"(a_), [m] "m"(m_)                           \
				 : X87_CLOBBERS);                                                    \
		*out = x87_bits(r_);                                                                \
		return sw_;                                                                         \
	} while (0)

/* The memory forms run as themselves: they flag a denormal operand only where the one
 * instruction does (not next to a NaN or an infinity, for one). */
static uint16_t unit_arith_memory(uint16_t cw, unsigned op, unsigned kind, struct rpt_f80 a, uint64_t bits,
				  struct rpt_f80 *out)
{
#define X87_MEM_FORMS(F32, F64, I16, I32)   \
	switch (kind) {                     \
	case X87_KIND_F32:                  \
		X87_MEM(F32);               \
	case X87_KIND_F64:                  \
		X87_MEM(F64);               \
	case X87_KIND_I16:                  \
		X87_MEM(I16);               \
	default:                            \
		X87_MEM(I32);               \
	}
	switch (op) {
	case X87_ADD:
		X87_MEM_FORMS("fadds", "faddl", "fiadds", "fiaddl");
	case X87_MUL:
		X87_MEM_FORMS("fmuls", "fmull", "fimuls", "fimull");
	case X87_SUB:
		X87_MEM_FORMS("fsubs", "fsubl", "fisubs", "fisubl");
	case X87_SUBR:
		X87_MEM_FORMS("fsubrs", "fsubrl", "fisubrs", "fisubrl");
	case X87_DIV:
		X87_MEM_FORMS("fdivs", "fdivl", "fidivs", "fidivl");
	default:
		X87_MEM_FORMS("fdivrs", "fdivrl", "fidivrs", "fidivrl");
	}
#undef X87_MEM_FORMS
}

static uint16_t unit_compare_memory(uint16_t cw, unsigned kind, struct rpt_f80 a, uint64_t bits)
{
	struct rpt_f80 junk, *out = &junk;
	switch (kind) {
	case X87_KIND_F32:
		X87_MEM("fcoms");
	case X87_KIND_F64:
		X87_MEM("fcoml");
	case X87_KIND_I16:
		X87_MEM("ficoms");
	default:
		X87_MEM("ficoml");
	}
}

static uint16_t unit_load(uint16_t cw, unsigned kind, uint64_t bits, struct rpt_f80 *out)
{
	switch (kind) {
	case X87_KIND_F32:
		X87_LOAD("flds", bits);
	case X87_KIND_F64:
		X87_LOAD("fldl", bits);
	case X87_KIND_I16:
		X87_LOAD("filds", bits);
	case X87_KIND_I32:
		X87_LOAD("fildl", bits);
	default:
		X87_LOAD("fildll", bits);
	}
}

static uint16_t unit_store(uint16_t cw, unsigned kind, int truncate, struct rpt_f80 v, uint64_t *out)
{
	switch (kind * 2u + (truncate ? 1u : 0u)) {
	case X87_KIND_F32 * 2u:
	case X87_KIND_F32 * 2u + 1u:
		X87_STORE("fstps");
	case X87_KIND_F64 * 2u:
	case X87_KIND_F64 * 2u + 1u:
		X87_STORE("fstpl");
	case X87_KIND_I16 * 2u:
		X87_STORE("fistps");
	case X87_KIND_I32 * 2u:
		X87_STORE("fistpl");
	case X87_KIND_I64 * 2u:
		X87_STORE("fistpll");
	case X87_KIND_I16 * 2u + 1u:
		X87_STORE("fisttps");
	case X87_KIND_I32 * 2u + 1u:
		X87_STORE("fisttpl");
	default:
		X87_STORE("fisttpll");
	}
}

static uint16_t unit_arith(uint16_t cw, unsigned op, struct rpt_f80 a, struct rpt_f80 b, struct rpt_f80 *out)
{
	struct rpt_f80 junk;
	uint16_t hw;
	switch (op) {
	case X87_ADD:
		X87_TWO(cw, a, b, out, &junk, "fadd %%st(1), %%st", "");
		break;
	case X87_MUL:
		X87_TWO(cw, a, b, out, &junk, "fmul %%st(1), %%st", "");
		break;
	case X87_SUB:
		X87_TWO(cw, a, b, out, &junk, "fsub %%st(1), %%st", "");
		break;
	case X87_SUBR:
		X87_TWO(cw, a, b, out, &junk, "fsubr %%st(1), %%st", "");
		break;
	case X87_DIV:
		X87_TWO(cw, a, b, out, &junk, "fdiv %%st(1), %%st", "");
		break;
	default:
		X87_TWO(cw, a, b, out, &junk, "fdivr %%st(1), %%st", "");
		break;
	}
	return hw;
}

static uint16_t unit_compare(uint16_t cw, int unordered, struct rpt_f80 a, struct rpt_f80 b)
{
	struct rpt_f80 j0, j1;
	uint16_t hw;
	if (unordered)
		X87_TWO(cw, a, b, &j0, &j1, "fucom %%st(1)", "");
	else
		X87_TWO(cw, a, b, &j0, &j1, "fcom %%st(1)", "");
	return hw;
}

/* For fptan, fsincos and fxtract *r replaces st(0) and *pushed is pushed. */
static uint16_t unit_unary(uint16_t cw, unsigned op, struct rpt_f80 a, struct rpt_f80 *r, struct rpt_f80 *pushed)
{
	uint16_t hw;
	struct rpt_f80 z = x87_zero;
	switch (op) {
	case X87_FCHS:
		X87_TWO(cw, a, z, r, pushed, "fchs", "");
		break;
	case X87_FABS:
		X87_TWO(cw, a, z, r, pushed, "fabs", "");
		break;
	case X87_FSQRT:
		X87_TWO(cw, a, z, r, pushed, "fsqrt", "");
		break;
	case X87_FRNDINT:
		X87_TWO(cw, a, z, r, pushed, "frndint", "");
		break;
	case X87_F2XM1:
		X87_TWO(cw, a, z, r, pushed, "f2xm1", "");
		break;
	case X87_FSIN:
		X87_TWO(cw, a, z, r, pushed, "fsin", "");
		break;
	case X87_FCOS:
		X87_TWO(cw, a, z, r, pushed, "fcos", "");
		break;
	case X87_FTST:
		X87_TWO(cw, a, z, r, pushed, "ftst", "");
		break;
	case X87_FXAM:
		X87_TWO(cw, a, z, r, pushed, "fxam", "");
		break;
	case X87_FPTAN:
		X87_TWO(cw, a, z, r, pushed, "fptan", "fstp %%st(2)");
		break;
	case X87_FSINCOS:
		X87_TWO(cw, a, z, r, pushed, "fsincos", "fstp %%st(2)");
		break;
	default:
		X87_TWO(cw, a, z, r, pushed, "fxtract", "fstp %%st(2)");
		break;
	}
	return hw;
}

/* fscale/fprem/fprem1: the new st(0); fpatan/fyl2x/fyl2xp1: the new st(1). */
static uint16_t unit_binary(uint16_t cw, unsigned op, struct rpt_f80 a, struct rpt_f80 b, struct rpt_f80 *r)
{
	struct rpt_f80 junk;
	uint16_t hw;
	switch (op) {
	case X87_FSCALE:
		X87_TWO(cw, a, b, r, &junk, "fscale", "");
		break;
	case X87_FPREM:
		X87_TWO(cw, a, b, r, &junk, "fprem", "");
		break;
	case X87_FPREM1:
		X87_TWO(cw, a, b, r, &junk, "fprem1", "");
		break;
	case X87_FPATAN:
		X87_TWO(cw, a, b, r, &junk, "fpatan", "fld %%st(0)");
		break;
	case X87_FYL2X:
		X87_TWO(cw, a, b, r, &junk, "fyl2x", "fld %%st(0)");
		break;
	default:
		X87_TWO(cw, a, b, r, &junk, "fyl2xp1", "fld %%st(0)");
		break;
	}
	return hw;
}

static struct rpt_f80 unit_constant(uint16_t cw, unsigned op)
{
	struct rpt_f80 r, junk, z = x87_zero;
	uint16_t hw;
	switch (op) {
	case X87_FLD1:
		X87_TWO(cw, z, z, &r, &junk, "fld1", "fstp %%st(1)");
		break;
	case X87_FLDZ:
		X87_TWO(cw, z, z, &r, &junk, "fldz", "fstp %%st(1)");
		break;
	case X87_FLDPI:
		X87_TWO(cw, z, z, &r, &junk, "fldpi", "fstp %%st(1)");
		break;
	case X87_FLDL2E:
		X87_TWO(cw, z, z, &r, &junk, "fldl2e", "fstp %%st(1)");
		break;
	case X87_FLDL2T:
		X87_TWO(cw, z, z, &r, &junk, "fldl2t", "fstp %%st(1)");
		break;
	case X87_FLDLG2:
		X87_TWO(cw, z, z, &r, &junk, "fldlg2", "fstp %%st(1)");
		break;
	default:
		X87_TWO(cw, z, z, &r, &junk, "fldln2", "fstp %%st(1)");
		break;
	}
	(void)hw;
	return r;
}

#else /* not x86-64: the software unit */

#include "x87_soft.h"
/* msvcrt's math functions for hosts without a libm, on the same 128-bit float. */
#include "x87_soft_libm.h"

#endif


#define X87_F80_INDEFINITE_M 0xc000000000000000ull
#define X87_F80_INDEFINITE_SE 0xffffu

#ifdef RPT_X87_F64
#undef unit_load
#undef unit_store
#undef unit_arith
#undef unit_compare
#undef unit_unary
#undef unit_binary
#undef unit_constant
#undef unit_arith_memory
#undef unit_compare_memory
#include "x87_f64.h"
#else
/* The f80 model: registers hold the 80-bit format itself. */
#define x87_reg_indefinite x87_indefinite

static int x87_reg_is_nan(struct rpt_f80 v)
{
	return (v.se & 0x7fffu) == 0x7fffu && (v.m << 1) != 0;
}

static int x87_reg_sign(struct rpt_f80 v)
{
	return (v.se & 0x8000u) != 0;
}

static struct rpt_f80 unit_to_f80(struct rpt_f80 v)
{
	return v;
}

static uint16_t unit_load_f80(uint16_t cw, struct rpt_f80 w, struct rpt_f80 *out)
{
	(void)cw;
	*out = w;
	return 0;
}
#endif

/* ---------------------------------------------------------------- the stack */

static unsigned x87_phys(struct cpu *c, unsigned i)
{
	return (c->fpu_top + i) & 7u;
}

static int x87_valid(struct cpu *c, unsigned i)
{
	return (c->fpu_tags >> x87_phys(c, i)) & 1u;
}

static struct rpt_f80 x87_get(struct cpu *c, unsigned i)
{
	unsigned p = x87_phys(c, i);
	struct rpt_f80 v = { c->st_m[p], c->st_e[p] };
	return v;
}

static void x87_put(struct cpu *c, unsigned i, struct rpt_f80 v)
{
	unsigned p = x87_phys(c, i);
	c->st_m[p] = v.m;
	c->st_e[p] = v.se;
	c->fpu_tags = (uint8_t)(c->fpu_tags | (1u << p));
}

static void x87_pop(struct cpu *c)
{
	c->fpu_tags = (uint8_t)(c->fpu_tags & ~(1u << x87_phys(c, 0)));
	c->fpu_top = (uint8_t)((c->fpu_top + 1u) & 7u);
}

static void x87_underflow(struct cpu *c)
{
	c->fpu_sw = (uint16_t)((c->fpu_sw | SW_IE | SW_SF) & ~SW_C1);
}

static void x87_push(struct cpu *c, struct rpt_f80 v)
{
	c->fpu_top = (uint8_t)((c->fpu_top + 7u) & 7u);
	if (x87_valid(c, 0)) {
		c->fpu_sw = (uint16_t)(c->fpu_sw | SW_IE | SW_SF | SW_C1);
		x87_put(c, 0, x87_reg_indefinite);
	} else {
		c->fpu_sw = (uint16_t)(c->fpu_sw & ~SW_C1);
		x87_put(c, 0, v);
	}
}

static void x87_merge(struct cpu *c, uint16_t hw, uint16_t codes)
{
	c->fpu_sw = (uint16_t)(((c->fpu_sw | (hw & SW_EXCEPTIONS)) & ~codes) | (hw & codes));
}

static void x87_summary(struct cpu *c)
{
	if (c->fpu_sw & SW_EXCEPTIONS & ~c->fpu_cw)
		c->fpu_sw = (uint16_t)(c->fpu_sw | SW_ES | SW_B);
}

static void x87_set_codes(struct cpu *c, uint16_t codes)
{
	c->fpu_sw = (uint16_t)((c->fpu_sw & ~(SW_C0 | SW_C2 | SW_C3)) | codes);
}

/* Compares st(0) with *b (NULL: an empty register); returns C0, C2, C3 as the comparison sets them. */
static uint16_t x87_compare(struct cpu *c, const struct rpt_f80 *b, int unordered)
{
	if (b && x87_valid(c, 0)) {
		uint16_t hw = unit_compare(c->fpu_cw, unordered, x87_get(c, 0), *b);
		x87_merge(c, hw, 0);
		c->fpu_sw = (uint16_t)(c->fpu_sw & ~SW_C1);
		return hw & (SW_C0 | SW_C2 | SW_C3);
	}
	x87_underflow(c);
	return SW_C0 | SW_C2 | SW_C3;
}

static uint64_t x87_kind_mask(unsigned kind)
{
	switch (kind) {
	case X87_KIND_F32:
	case X87_KIND_I32:
		return 0xffffffffull;
	case X87_KIND_I16:
		return 0xffffull;
	default:
		return ~0ull;
	}
}

static uint64_t x87_kind_indefinite(unsigned kind)
{
	switch (kind) {
	case X87_KIND_F32:
		return 0xffc00000ull;
	case X87_KIND_F64:
		return 0xfff8000000000000ull;
	case X87_KIND_F80:
		return X87_F80_INDEFINITE_M;
	case X87_KIND_I16:
		return 0x8000ull;
	case X87_KIND_I32:
		return 0x80000000ull;
	default:
		return 0x8000000000000000ull;
	}
}

/* ---------------------------------------------------------------- the helpers */

void rpt_helper_x87_load(struct cpu *restrict c, uint32_t kind, uint64_t lo, uint32_t hi)
{
	struct rpt_f80 v;
	if (x87_valid(c, 7)) {
		x87_push(c, x87_reg_indefinite);
	} else {
		uint16_t hw = 0;
		if (kind == X87_KIND_F80) {
			struct rpt_f80 w = { lo, (uint16_t)hi };
			hw = unit_load_f80(c->fpu_cw, w, &v);
		} else {
			hw = unit_load(c->fpu_cw, kind, lo, &v);
		}
		x87_merge(c, hw, 0);
		x87_push(c, v);
	}
	x87_summary(c);
}

uint64_t rpt_helper_x87_store(struct cpu *restrict c, uint32_t kind, uint32_t flags)
{
	int high = (flags & X87_STORE_HIGH) != 0;
	uint64_t out;
	if (!x87_valid(c, 0)) {
		x87_underflow(c);
		out = kind == X87_KIND_F80 && high ? X87_F80_INDEFINITE_SE : x87_kind_indefinite(kind);
	} else if (kind == X87_KIND_F80) {
		struct rpt_f80 v = unit_to_f80(x87_get(c, 0));
		c->fpu_sw = (uint16_t)(c->fpu_sw & ~SW_C1);
		out = high ? v.se : v.m;
	} else {
		uint16_t hw = unit_store(c->fpu_cw, kind, (flags & X87_STORE_TRUNCATE) != 0, x87_get(c, 0), &out);
		out &= x87_kind_mask(kind);
		x87_merge(c, hw, SW_C1);
	}
	if (flags & X87_STORE_POP)
		x87_pop(c);
	x87_summary(c);
	return out;
}

void rpt_helper_x87_arith(struct cpu *restrict c, uint32_t op, uint32_t dst, uint32_t src, uint32_t pop)
{
	if (x87_valid(c, dst) && x87_valid(c, src)) {
		struct rpt_f80 r;
		uint16_t hw = unit_arith(c->fpu_cw, op, x87_get(c, dst), x87_get(c, src), &r);
		x87_merge(c, hw, SW_C1);
		x87_put(c, dst, r);
	} else {
		x87_underflow(c);
		x87_put(c, dst, x87_reg_indefinite);
	}
	if (pop)
		x87_pop(c);
	x87_summary(c);
}

void rpt_helper_x87_arith_mem(struct cpu *restrict c, uint32_t op, uint32_t kind, uint64_t bits)
{
	if (!x87_valid(c, 0)) {
		x87_underflow(c);
		x87_put(c, 0, x87_reg_indefinite);
	} else {
		struct rpt_f80 r;
		uint16_t hw = unit_arith_memory(c->fpu_cw, op, kind, x87_get(c, 0), bits, &r);
		x87_merge(c, hw, SW_C1);
		x87_put(c, 0, r);
	}
	x87_summary(c);
}

void rpt_helper_x87_com_mem(struct cpu *restrict c, uint32_t kind, uint64_t bits, uint32_t pop)
{
	uint16_t codes = SW_C0 | SW_C2 | SW_C3;
	if (x87_valid(c, 0)) {
		uint16_t hw = unit_compare_memory(c->fpu_cw, kind, x87_get(c, 0), bits);
		x87_merge(c, hw, 0);
		c->fpu_sw = (uint16_t)(c->fpu_sw & ~SW_C1);
		codes = hw & (SW_C0 | SW_C2 | SW_C3);
	} else {
		x87_underflow(c);
	}
	x87_set_codes(c, codes);
	if (pop)
		x87_pop(c);
	x87_summary(c);
}

void rpt_helper_x87_reg(struct cpu *restrict c, uint32_t op, uint32_t i)
{
	switch (op) {
	case X87_FLD: {
		int under = !x87_valid(c, i);
		struct rpt_f80 v = under ? x87_reg_indefinite : x87_get(c, i);
		x87_push(c, v);
		/* With an overflow too, the underflow's cleared C1 wins (as this CPU does). */
		if (under)
			c->fpu_sw = (uint16_t)((c->fpu_sw | SW_IE | SW_SF) & ~SW_C1);
		break;
	}
	case X87_FST:
	case X87_FSTP: {
		struct rpt_f80 v;
		if (x87_valid(c, 0)) {
			c->fpu_sw = (uint16_t)(c->fpu_sw & ~SW_C1);
			v = x87_get(c, 0);
		} else {
			x87_underflow(c);
			v = x87_reg_indefinite;
		}
		x87_put(c, i, v);
		if (op == X87_FSTP)
			x87_pop(c);
		break;
	}
	case X87_FXCH: {
		int a = x87_valid(c, 0), b = x87_valid(c, i);
		struct rpt_f80 va = a ? x87_get(c, 0) : x87_reg_indefinite;
		struct rpt_f80 vb = b ? x87_get(c, i) : x87_reg_indefinite;
		if (a && b)
			c->fpu_sw = (uint16_t)(c->fpu_sw & ~SW_C1);
		else
			x87_underflow(c);
		x87_put(c, 0, vb);
		x87_put(c, i, va);
		break;
	}
	case X87_FFREE:
	case X87_FFREEP:
		c->fpu_tags = (uint8_t)(c->fpu_tags & ~(1u << x87_phys(c, i)));
		if (op == X87_FFREEP)
			x87_pop(c);
		break;
	default: {
		unsigned k = op - X87_FCOM;
		int pop = (k & 1u) != 0, unordered = (k & 2u) != 0, to_eflags = (k & 4u) != 0;
		struct rpt_f80 b = x87_get(c, i);
		uint16_t c1 = c->fpu_sw & SW_C1;
		uint16_t codes = x87_compare(c, x87_valid(c, i) ? &b : 0, unordered);
		if (to_eflags) {
			/* fcomi clears C1 only on a stack underflow (this CPU does; the manual says it
			 * always clears it). */
			if (x87_valid(c, i) && x87_valid(c, 0))
				c->fpu_sw = (uint16_t)((c->fpu_sw & ~SW_C1) | c1);
			c->zf = (codes & SW_C3) != 0;
			c->pf = (codes & SW_C2) != 0;
			c->cf = (codes & SW_C0) != 0;
			c->of = 0;
			c->sf = 0;
			c->af = 0;
		} else {
			x87_set_codes(c, codes);
		}
		if (pop)
			x87_pop(c);
		break;
	}
	}
	x87_summary(c);
}

void rpt_helper_x87_op(struct cpu *restrict c, uint32_t op)
{
	struct rpt_f80 r, pushed;
	uint16_t hw;
	switch (op) {
	case X87_FCHS:
	case X87_FABS:
	case X87_FSQRT:
	case X87_FRNDINT:
	case X87_F2XM1:
		if (x87_valid(c, 0)) {
			hw = unit_unary(c->fpu_cw, op, x87_get(c, 0), &r, &pushed);
			x87_merge(c, hw, SW_C1);
			x87_put(c, 0, r);
		} else {
			x87_underflow(c);
			x87_put(c, 0, x87_reg_indefinite);
		}
		break;
	case X87_FSIN:
	case X87_FCOS:
		if (x87_valid(c, 0)) {
			hw = unit_unary(c->fpu_cw, op, x87_get(c, 0), &r, &pushed);
			x87_merge(c, hw, SW_C1 | SW_C2);
			if (!(hw & SW_C2))
				x87_put(c, 0, r);
		} else {
			x87_underflow(c);
			c->fpu_sw = (uint16_t)(c->fpu_sw & ~SW_C2);
			x87_put(c, 0, x87_reg_indefinite);
		}
		break;
	case X87_FPTAN:
	case X87_FSINCOS:
	case X87_FXTRACT:
		if (!x87_valid(c, 0)) {
			x87_underflow(c);
			x87_put(c, 0, x87_reg_indefinite);
			x87_push(c, x87_reg_indefinite);
			c->fpu_sw = (uint16_t)(c->fpu_sw & ~(SW_C1 | SW_C2));
		} else if (x87_valid(c, 7)) {
			c->fpu_sw = (uint16_t)((c->fpu_sw | SW_IE | SW_SF | SW_C1) & ~SW_C2);
			x87_put(c, 0, x87_reg_indefinite);
			x87_push(c, x87_reg_indefinite);
		} else {
			uint16_t codes = op == X87_FXTRACT ? SW_C1 : (SW_C1 | SW_C2);
			hw = unit_unary(c->fpu_cw, op, x87_get(c, 0), &r, &pushed);
			if ((hw & SW_C2) && op != X87_FXTRACT) {
				x87_merge(c, hw, codes);
			} else {
				x87_put(c, 0, r);
				x87_push(c, pushed);
				x87_merge(c, hw, codes);
			}
		}
		break;
	case X87_FPATAN:
	case X87_FYL2X:
	case X87_FYL2XP1:
		if (x87_valid(c, 0) && x87_valid(c, 1)) {
			hw = unit_binary(c->fpu_cw, op, x87_get(c, 0), x87_get(c, 1), &r);
			x87_merge(c, hw, SW_C1);
			x87_put(c, 1, r);
		} else {
			x87_underflow(c);
			x87_put(c, 1, x87_reg_indefinite);
		}
		x87_pop(c);
		break;
	case X87_FSCALE:
	case X87_FPREM:
	case X87_FPREM1:
		if (x87_valid(c, 0) && x87_valid(c, 1)) {
			hw = unit_binary(c->fpu_cw, op, x87_get(c, 0), x87_get(c, 1), &r);
			/* A NaN remainder leaves C0 and C3 alone (as this CPU does). */
			uint16_t codes = SW_C0 | SW_C1 | SW_C2 | SW_C3;
			if (op == X87_FSCALE)
				codes = SW_C1;
			else if (x87_reg_is_nan(r))
				codes = SW_C1 | SW_C2;
			x87_merge(c, hw, codes);
			x87_put(c, 0, r);
		} else {
			x87_underflow(c);
			if (op != X87_FSCALE)
				c->fpu_sw = (uint16_t)(c->fpu_sw & ~SW_C2);
			x87_put(c, 0, x87_reg_indefinite);
		}
		break;
	case X87_FTST: {
		struct rpt_f80 z = x87_zero;
		x87_set_codes(c, x87_compare(c, &z, 0));
		break;
	}
	case X87_FXAM: {
		struct rpt_f80 v = x87_get(c, 0);
		uint16_t sign = x87_reg_sign(v) ? SW_C1 : 0;
		uint16_t codes = SW_C0 | SW_C3;
		if (x87_valid(c, 0)) {
			hw = unit_unary(c->fpu_cw, X87_FXAM, v, &r, &pushed);
			codes = hw & (SW_C0 | SW_C2 | SW_C3);
		}
		c->fpu_sw = (uint16_t)((c->fpu_sw & ~(SW_C0 | SW_C1 | SW_C2 | SW_C3)) | codes | sign);
		break;
	}
	case X87_FINCSTP:
		c->fpu_top = (uint8_t)((c->fpu_top + 1u) & 7u);
		c->fpu_sw = (uint16_t)(c->fpu_sw & ~SW_C1);
		break;
	case X87_FDECSTP:
		c->fpu_top = (uint8_t)((c->fpu_top + 7u) & 7u);
		c->fpu_sw = (uint16_t)(c->fpu_sw & ~SW_C1);
		break;
	case X87_FNINIT:
		c->fpu_cw = X87_CW_INIT;
		c->fpu_sw = 0;
		c->fpu_top = 0;
		c->fpu_tags = 0; /* the registers' contents stay: only their tags say "empty" */
		break;
	case X87_FNCLEX:
		c->fpu_sw = (uint16_t)(c->fpu_sw & ~(SW_EXCEPTIONS | SW_SF | SW_ES | SW_B));
		break;
	case X87_FCOMPP:
	case X87_FUCOMPP: {
		struct rpt_f80 b = x87_get(c, 1);
		x87_set_codes(c, x87_compare(c, x87_valid(c, 1) ? &b : 0, op == X87_FUCOMPP));
		x87_pop(c);
		x87_pop(c);
		break;
	}
	default:
		x87_push(c, unit_constant(c->fpu_cw, op));
		break;
	}
	x87_summary(c);
}

/* An empty operand is a stack underflow whatever the condition (as this CPU does). */
void rpt_helper_x87_fcmov(struct cpu *restrict c, uint32_t i, uint32_t cond)
{
	if (x87_valid(c, 0) && x87_valid(c, i)) {
		if (cond & 1u)
			x87_put(c, 0, x87_get(c, i));
	} else {
		x87_underflow(c);
		x87_put(c, 0, x87_reg_indefinite);
	}
	x87_summary(c);
}

/* ---------------------------------------------------------------- the value forms
 *
 * What one instruction does to operand values and to the status word when no stack fault can
 * happen, for lifted code that keeps st(i) in its own variables (the x87-regions pass): the same
 * unit calls and status-word updates as the stack forms above, without TOP, tags or registers.
 * A result's significand is returned and its sign-and-exponent word left in fpu_result_e. */

static uint64_t x87_result(struct cpu *c, struct rpt_f80 v)
{
	c->fpu_result_e = v.se;
	return v.m;
}

static struct rpt_f80 x87_value(uint64_t m, uint32_t e)
{
	struct rpt_f80 v = { m, (uint16_t)e };
	return v;
}

uint64_t rpt_helper_x87_vload(struct cpu *restrict c, uint32_t kind, uint64_t lo, uint32_t hi)
{
	struct rpt_f80 v;
	uint16_t hw = kind == X87_KIND_F80 ? unit_load_f80(c->fpu_cw, x87_value(lo, hi), &v)
					   : unit_load(c->fpu_cw, kind, lo, &v);
	x87_merge(c, hw, 0);
	c->fpu_sw = (uint16_t)(c->fpu_sw & ~SW_C1);
	x87_summary(c);
	return x87_result(c, v);
}

uint64_t rpt_helper_x87_vstore(struct cpu *restrict c, uint32_t kind, uint32_t flags, uint64_t am, uint32_t ae)
{
	uint64_t out;
	if (kind == X87_KIND_F80) {
		struct rpt_f80 v = unit_to_f80(x87_value(am, ae));
		c->fpu_sw = (uint16_t)(c->fpu_sw & ~SW_C1);
		out = (flags & X87_STORE_HIGH) ? v.se : v.m;
	} else {
		uint16_t hw = unit_store(c->fpu_cw, kind, (flags & X87_STORE_TRUNCATE) != 0, x87_value(am, ae), &out);
		out &= x87_kind_mask(kind);
		x87_merge(c, hw, SW_C1);
	}
	x87_summary(c);
	return out;
}

uint64_t rpt_helper_x87_varith(struct cpu *restrict c, uint32_t op, uint64_t am, uint32_t ae, uint64_t bm, uint32_t be)
{
	struct rpt_f80 r;
	uint16_t hw = unit_arith(c->fpu_cw, op, x87_value(am, ae), x87_value(bm, be), &r);
	x87_merge(c, hw, SW_C1);
	x87_summary(c);
	return x87_result(c, r);
}

uint64_t rpt_helper_x87_varith_mem(struct cpu *restrict c, uint32_t op, uint32_t kind, uint64_t am, uint32_t ae,
				   uint64_t bits)
{
	struct rpt_f80 r;
	uint16_t hw = unit_arith_memory(c->fpu_cw, op, kind, x87_value(am, ae), bits, &r);
	x87_merge(c, hw, SW_C1);
	x87_summary(c);
	return x87_result(c, r);
}

uint32_t rpt_helper_x87_vcom(struct cpu *restrict c, uint32_t which, uint64_t am, uint32_t ae, uint64_t bm, uint32_t be)
{
	unsigned k = which - X87_FCOM;
	int unordered = (k & 2u) != 0, to_eflags = (k & 4u) != 0;
	uint16_t c1 = c->fpu_sw & SW_C1;
	uint16_t hw = unit_compare(c->fpu_cw, unordered, x87_value(am, ae), x87_value(bm, be));
	uint16_t codes = hw & (SW_C0 | SW_C2 | SW_C3);
	x87_merge(c, hw, 0);
	/* fcomi leaves C1 alone (see x87_reg); fcom clears it and sets the condition codes. */
	c->fpu_sw = (uint16_t)((c->fpu_sw & ~SW_C1) | (to_eflags ? c1 : 0u));
	if (!to_eflags)
		x87_set_codes(c, codes);
	x87_summary(c);
	return codes;
}

uint32_t rpt_helper_x87_vcom_mem(struct cpu *restrict c, uint32_t kind, uint64_t am, uint32_t ae, uint64_t bits)
{
	uint16_t hw = unit_compare_memory(c->fpu_cw, kind, x87_value(am, ae), bits);
	uint16_t codes = hw & (SW_C0 | SW_C2 | SW_C3);
	x87_merge(c, hw, 0);
	c->fpu_sw = (uint16_t)(c->fpu_sw & ~SW_C1);
	x87_set_codes(c, codes);
	x87_summary(c);
	return codes;
}

uint64_t rpt_helper_x87_vunary(struct cpu *restrict c, uint32_t op, uint64_t am, uint32_t ae)
{
	struct rpt_f80 r, pushed;
	uint16_t hw = unit_unary(c->fpu_cw, op, x87_value(am, ae), &r, &pushed);
	x87_merge(c, hw, SW_C1);
	x87_summary(c);
	return x87_result(c, r);
}

uint64_t rpt_helper_x87_vconst(struct cpu *restrict c, uint32_t op)
{
	struct rpt_f80 v = unit_constant(c->fpu_cw, op);
	c->fpu_sw = (uint16_t)(c->fpu_sw & ~SW_C1);
	x87_summary(c);
	return x87_result(c, v);
}

/* ---------------------------------------------------------------- hooks for platforms */

void rpt_x86_set_st0_f64(struct cpu *c, double v);
void rpt_x86_fpu_after_longjmp(struct cpu *c);
void rpt_x86_fpu_init(struct cpu *c);

/* Pushes v as the new st(0), as a cdecl function returning double leaves it (`fld m64`). */
void rpt_x86_set_st0_f64(struct cpu *c, double v)
{
	uint64_t bits;
	__builtin_memcpy(&bits, &v, 8);
	rpt_helper_x87_load(c, X87_KIND_F64, bits, 0);
}

/* After a longjmp: the x87 stack is empty, as it is at every call under the i386 ABI (msvcrt's
 * longjmp does not touch the unit; the control word stays what the program last set). */
void rpt_x86_fpu_after_longjmp(struct cpu *c)
{
	c->fpu_tags = 0;
}

/* The unit as Windows starts a process: fninit's state with 53-bit precision (control word 0x27f). */
void rpt_x86_fpu_init(struct cpu *c)
{
	rpt_helper_x87_op(c, X87_FNINIT);
	c->fpu_cw = 0x027fu;
}
