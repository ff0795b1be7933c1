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
 *
 * The parts generated code also compiles inline live in headers: x87_defs.h (numbers and the
 * register format), x87_host.h (the x86-64 unit) and x87_values.h (the value forms); inline.h
 * says when generated code uses them.
 */
/* This file defines the helpers out of line: inline.h, which cpu.h includes, must not route
 * their names to the inline copies here. */
#define RPT_X87_C 1
#include "cpu.h"

#ifdef RPT_X87_F64
/* The f64 model leaves parts of the exact unit unused (x87_f64.h delegates only some operations). */
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wunused-const-variable"
#endif

#include "x87_defs.h"

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
#define unit_load_quiet exact_load_quiet
#define unit_store_quiet exact_store_quiet
#define unit_arith_quiet exact_arith_quiet
#define unit_arith_memory_quiet exact_arith_memory_quiet
#define unit_compare_quiet exact_compare_quiet
#endif

#if defined(__x86_64__) && !defined(RPT_X87_SOFT)
#include "x87_host.h"
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
#undef unit_load_quiet
#undef unit_store_quiet
#undef unit_arith_quiet
#undef unit_arith_memory_quiet
#undef unit_compare_quiet
/* The exact unit's quiet forms work on its own registers, not the f64 model's: the model gets the
 * generic ones of x87_values.h. */
#undef X87_UNIT_QUIET
#include "x87_f64.h"
#endif

/* The f80 model, the status-word rules and the value forms. */
#include "x87_values.h"

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

/* Compares st(0) with *b (NULL: an empty register); returns C0, C2, C3 as the comparison sets them. */
static uint16_t x87_compare(struct cpu *c, const struct rpt_f80 *b, int unordered)
{
	if (b && x87_valid(c, 0)) {
		uint16_t hw = unit_compare(c->fpu_cw, c->fpu_sw, unordered, x87_get(c, 0), *b);
		x87_merge(c, hw, 0);
		c->fpu_sw = (uint16_t)(c->fpu_sw & ~SW_C1);
		return hw & (SW_C0 | SW_C2 | SW_C3);
	}
	x87_underflow(c);
	return SW_C0 | SW_C2 | SW_C3;
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
			hw = unit_load_f80(c->fpu_cw, c->fpu_sw, w, &v);
		} else {
			hw = unit_load(c->fpu_cw, c->fpu_sw, kind, lo, &v);
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
		uint16_t hw = unit_store(c->fpu_cw, c->fpu_sw, kind, (flags & X87_STORE_TRUNCATE) != 0, x87_get(c, 0), &out);
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
		uint16_t hw = unit_arith(c->fpu_cw, c->fpu_sw, op, x87_get(c, dst), x87_get(c, src), &r);
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
		uint16_t hw = unit_arith_memory(c->fpu_cw, c->fpu_sw, op, kind, x87_get(c, 0), bits, &r);
		x87_merge(c, hw, SW_C1);
		x87_put(c, 0, r);
	}
	x87_summary(c);
}

void rpt_helper_x87_com_mem(struct cpu *restrict c, uint32_t kind, uint64_t bits, uint32_t pop)
{
	uint16_t codes = SW_C0 | SW_C2 | SW_C3;
	if (x87_valid(c, 0)) {
		uint16_t hw = unit_compare_memory(c->fpu_cw, c->fpu_sw, kind, x87_get(c, 0), bits);
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

uint32_t rpt_helper_x87_reg(struct cpu *restrict c, uint32_t op, uint32_t i)
{
	uint32_t eflags_codes = 0;
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
			/* The lifted code sets ZF, PF and CF from these (and clears OF, SF, AF): the
			 * helper touches no flag, so flags can live in C locals around it. */
			eflags_codes = codes;
		} else {
			x87_set_codes(c, codes);
		}
		if (pop)
			x87_pop(c);
		break;
	}
	}
	x87_summary(c);
	return eflags_codes;
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
			hw = unit_unary(c->fpu_cw, c->fpu_sw, op, x87_get(c, 0), &r, &pushed);
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
			hw = unit_unary(c->fpu_cw, c->fpu_sw, op, x87_get(c, 0), &r, &pushed);
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
			hw = unit_unary(c->fpu_cw, c->fpu_sw, op, x87_get(c, 0), &r, &pushed);
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
			hw = unit_binary(c->fpu_cw, c->fpu_sw, op, x87_get(c, 0), x87_get(c, 1), &r);
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
			hw = unit_binary(c->fpu_cw, c->fpu_sw, op, x87_get(c, 0), x87_get(c, 1), &r);
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
			hw = unit_unary(c->fpu_cw, c->fpu_sw, X87_FXAM, v, &r, &pushed);
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
 * Out of line, for the IR interpreter and any caller without inline.h: x87_values.h's code. */

uint64_t rpt_helper_x87_vload(struct cpu *restrict c, uint32_t kind, uint64_t lo, uint32_t hi)
{
	return x87_vload_inline(c, kind, lo, hi);
}

uint64_t rpt_helper_x87_vstore(struct cpu *restrict c, uint32_t kind, uint32_t flags, uint64_t am, uint32_t ae)
{
	return x87_vstore_inline(c, kind, flags, am, ae);
}

uint64_t rpt_helper_x87_varith(struct cpu *restrict c, uint32_t op, uint64_t am, uint32_t ae, uint64_t bm, uint32_t be)
{
	return x87_varith_inline(c, op, am, ae, bm, be);
}

uint64_t rpt_helper_x87_varith_mem(struct cpu *restrict c, uint32_t op, uint32_t kind, uint64_t am, uint32_t ae,
				   uint64_t bits)
{
	return x87_varith_mem_inline(c, op, kind, am, ae, bits);
}

uint32_t rpt_helper_x87_vcom(struct cpu *restrict c, uint32_t which, uint64_t am, uint32_t ae, uint64_t bm, uint32_t be)
{
	return x87_vcom_inline(c, which, am, ae, bm, be);
}

uint32_t rpt_helper_x87_vcom_mem(struct cpu *restrict c, uint32_t kind, uint64_t am, uint32_t ae, uint64_t bits)
{
	return x87_vcom_mem_inline(c, kind, am, ae, bits);
}

uint64_t rpt_helper_x87_vunary(struct cpu *restrict c, uint32_t op, uint64_t am, uint32_t ae)
{
	return x87_vunary_inline(c, op, am, ae);
}

uint64_t rpt_helper_x87_vconst(struct cpu *restrict c, uint32_t op)
{
	return x87_vconst_inline(c, op);
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
