/*
 * x87_values.h - the value forms of the x87 helpers, and the status-word rules they share with
 * the stack forms: what one instruction does to operand values and to the status word when no
 * stack fault can happen, for lifted code that keeps st(i) in its own variables (the x87-regions
 * pass). The same unit calls and status-word updates as the stack forms in x87.c, without TOP,
 * tags or registers. A result's significand is returned and its sign-and-exponent word left in
 * fpu_result_e. Each ends by setting ES and B from the exception flags (x87_summary_cw), which the
 * x87-regions pass relies on to leave that to them.
 *
 * x87.c includes this after choosing a unit and defines the helpers rpt_helper_x87_v* as calls
 * of these (the IR interpreter calls those); on x86-64 hosts with the f80 model, generated code
 * includes it too (inline.h) and calls these directly, so clang sees the unit's instructions
 * inline. Both run this one copy.
 */
#ifndef RPT_X87_VALUES_H
#define RPT_X87_VALUES_H

#ifndef RPT_X87_F64
/* The f80 model: registers hold the 80-bit format itself. */
#define x87_reg_indefinite x87_indefinite

static inline int x87_reg_is_nan(struct rpt_f80 v)
{
	return (v.se & 0x7fffu) == 0x7fffu && (v.m << 1) != 0;
}

static inline int x87_reg_sign(struct rpt_f80 v)
{
	return (v.se & 0x8000u) != 0;
}

X87_ALWAYS_INLINE struct rpt_f80 unit_to_f80(struct rpt_f80 v)
{
	return v;
}

X87_ALWAYS_INLINE uint16_t unit_load_f80(uint16_t cw, uint16_t raised, struct rpt_f80 w, struct rpt_f80 *out)
{
	(void)raised;
	(void)cw;
	*out = w;
	return 0;
}
#endif

X87_ALWAYS_INLINE void x87_merge(struct cpu *c, uint16_t hw, uint16_t codes)
{
	c->fpu_sw = (uint16_t)(((c->fpu_sw | (hw & SW_EXCEPTIONS)) & ~codes) | (hw & codes));
}

/* ES and B follow the exceptions the control word cw leaves unmasked. */
X87_ALWAYS_INLINE void x87_summary_cw(struct cpu *c, uint16_t cw)
{
	if (c->fpu_sw & SW_EXCEPTIONS & ~cw)
		c->fpu_sw = (uint16_t)(c->fpu_sw | SW_ES | SW_B);
}

X87_ALWAYS_INLINE void x87_summary(struct cpu *c)
{
	x87_summary_cw(c, c->fpu_cw);
}

X87_ALWAYS_INLINE void x87_set_codes(struct cpu *c, uint16_t codes)
{
	c->fpu_sw = (uint16_t)((c->fpu_sw & ~(SW_C0 | SW_C2 | SW_C3)) | codes);
}

X87_ALWAYS_INLINE uint64_t x87_kind_mask(unsigned kind)
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

X87_ALWAYS_INLINE uint64_t x87_result(struct cpu *c, struct rpt_f80 v)
{
	c->fpu_result_e = v.se;
	return v.m;
}

X87_ALWAYS_INLINE struct rpt_f80 x87_value(uint64_t m, uint32_t e)
{
	struct rpt_f80 v = { m, (uint16_t)e };
	return v;
}

/* The quiet forms. When nothing in a program can read the x87 status word (no fnstsw anywhere in
 * its lifted code, no call of code that might; passes/x87-regions decides, see its README), the
 * exception flags and C1 that an operation would record are dead, and the x87-regions pass asks for
 * these forms by setting X87_QUIET in the kind or operation number. They compute the same value under
 * the same control word and leave the status word alone. A unit can define them itself
 * (X87_UNIT_QUIET: the host unit's run the instruction without reading its status word, which
 * waits for the instruction to finish); otherwise they are the full operation with its status
 * discarded. */
#ifndef X87_UNIT_QUIET
X87_ALWAYS_INLINE void unit_load_quiet(uint16_t cw, unsigned kind, uint64_t bits, struct rpt_f80 *out)
{
	(void)unit_load(cw, 0, kind, bits, out);
}

X87_ALWAYS_INLINE void unit_store_quiet(uint16_t cw, unsigned kind, int truncate, struct rpt_f80 v, uint64_t *out)
{
	(void)unit_store(cw, 0, kind, truncate, v, out);
}

X87_ALWAYS_INLINE void unit_arith_quiet(uint16_t cw, unsigned op, struct rpt_f80 a, struct rpt_f80 b, struct rpt_f80 *out)
{
	(void)unit_arith(cw, 0, op, a, b, out);
}

X87_ALWAYS_INLINE void unit_arith_memory_quiet(uint16_t cw, unsigned op, unsigned kind, struct rpt_f80 a, uint64_t bits,
					       struct rpt_f80 *out)
{
	(void)unit_arith_memory(cw, 0, op, kind, a, bits, out);
}

/* C0, C2 and C3 as comparing a with b sets them (fcom and fucom differ in exceptions only). */
X87_ALWAYS_INLINE uint16_t unit_compare_quiet(uint16_t cw, struct rpt_f80 a, struct rpt_f80 b)
{
	return (uint16_t)(unit_compare(cw, 0, 1, a, b) & (SW_C0 | SW_C2 | SW_C3));
}
#endif

X87_ALWAYS_INLINE uint64_t x87_vload_cw(struct cpu *restrict c, uint16_t cw, uint32_t kind, uint64_t lo, uint32_t hi)
{
	struct rpt_f80 v;
	if (kind & X87_QUIET) {
		kind &= ~X87_QUIET;
		if (kind == X87_KIND_F80)
			(void)unit_load_f80(cw, 0, x87_value(lo, hi), &v);
		else
			unit_load_quiet(cw, kind, lo, &v);
		return x87_result(c, v);
	}
	uint16_t hw = kind == X87_KIND_F80 ? unit_load_f80(cw, c->fpu_sw, x87_value(lo, hi), &v)
					   : unit_load(cw, c->fpu_sw, kind, lo, &v);
	x87_merge(c, hw, 0);
	c->fpu_sw = (uint16_t)(c->fpu_sw & ~SW_C1);
	x87_summary_cw(c, cw);
	return x87_result(c, v);
}

X87_ALWAYS_INLINE uint64_t x87_vstore_cw(struct cpu *restrict c, uint16_t cw, uint32_t kind, uint32_t flags, uint64_t am, uint32_t ae)
{
	uint64_t out;
	if (kind & X87_QUIET) {
		kind &= ~X87_QUIET;
		if (kind == X87_KIND_F80) {
			struct rpt_f80 v = unit_to_f80(x87_value(am, ae));
			return (flags & X87_STORE_HIGH) ? v.se : v.m;
		}
		unit_store_quiet(cw, kind, (flags & X87_STORE_TRUNCATE) != 0, x87_value(am, ae), &out);
		return out & x87_kind_mask(kind);
	}
	if (kind == X87_KIND_F80) {
		struct rpt_f80 v = unit_to_f80(x87_value(am, ae));
		c->fpu_sw = (uint16_t)(c->fpu_sw & ~SW_C1);
		out = (flags & X87_STORE_HIGH) ? v.se : v.m;
	} else {
		uint16_t hw = unit_store(cw, c->fpu_sw, kind, (flags & X87_STORE_TRUNCATE) != 0, x87_value(am, ae), &out);
		out &= x87_kind_mask(kind);
		x87_merge(c, hw, SW_C1);
	}
	x87_summary_cw(c, cw);
	return out;
}

X87_ALWAYS_INLINE uint64_t x87_varith_cw(struct cpu *restrict c, uint16_t cw, uint32_t op, uint64_t am, uint32_t ae, uint64_t bm, uint32_t be)
{
	struct rpt_f80 r;
	if (op & X87_QUIET) {
		unit_arith_quiet(cw, op & ~X87_QUIET, x87_value(am, ae), x87_value(bm, be), &r);
		return x87_result(c, r);
	}
	uint16_t hw = unit_arith(cw, c->fpu_sw, op, x87_value(am, ae), x87_value(bm, be), &r);
	x87_merge(c, hw, SW_C1);
	x87_summary_cw(c, cw);
	return x87_result(c, r);
}

X87_ALWAYS_INLINE uint64_t x87_varith_mem_cw(struct cpu *restrict c, uint16_t cw, uint32_t op, uint32_t kind, uint64_t am, uint32_t ae,
				   uint64_t bits)
{
	struct rpt_f80 r;
	if (op & X87_QUIET) {
		unit_arith_memory_quiet(cw, op & ~X87_QUIET, kind, x87_value(am, ae), bits, &r);
		return x87_result(c, r);
	}
	uint16_t hw = unit_arith_memory(cw, c->fpu_sw, op, kind, x87_value(am, ae), bits, &r);
	x87_merge(c, hw, SW_C1);
	x87_summary_cw(c, cw);
	return x87_result(c, r);
}

X87_ALWAYS_INLINE uint32_t x87_vcom_cw(struct cpu *restrict c, uint16_t cw, uint32_t which, uint64_t am, uint32_t ae, uint64_t bm, uint32_t be)
{
	if (which & X87_QUIET)
		return unit_compare_quiet(cw, x87_value(am, ae), x87_value(bm, be));
	unsigned k = which - X87_FCOM;
	int unordered = (k & 2u) != 0, to_eflags = (k & 4u) != 0;
	uint16_t c1 = c->fpu_sw & SW_C1;
	uint16_t hw = unit_compare(cw, c->fpu_sw, unordered, x87_value(am, ae), x87_value(bm, be));
	uint16_t codes = hw & (SW_C0 | SW_C2 | SW_C3);
	x87_merge(c, hw, 0);
	/* fcomi leaves C1 alone (see x87_reg); fcom clears it and sets the condition codes. */
	c->fpu_sw = (uint16_t)((c->fpu_sw & ~SW_C1) | (to_eflags ? c1 : 0u));
	if (!to_eflags)
		x87_set_codes(c, codes);
	x87_summary_cw(c, cw);
	return codes;
}

X87_ALWAYS_INLINE uint32_t x87_vcom_mem_cw(struct cpu *restrict c, uint16_t cw, uint32_t kind, uint64_t am, uint32_t ae, uint64_t bits)
{
	uint16_t hw = unit_compare_memory(cw, c->fpu_sw, kind, x87_value(am, ae), bits);
	uint16_t codes = hw & (SW_C0 | SW_C2 | SW_C3);
	x87_merge(c, hw, 0);
	c->fpu_sw = (uint16_t)(c->fpu_sw & ~SW_C1);
	x87_set_codes(c, codes);
	x87_summary_cw(c, cw);
	return codes;
}

X87_ALWAYS_INLINE uint64_t x87_vunary_cw(struct cpu *restrict c, uint16_t cw, uint32_t op, uint64_t am, uint32_t ae)
{
	struct rpt_f80 r, pushed;
	if (op & X87_QUIET) {
		(void)unit_unary(cw, 0, op & ~X87_QUIET, x87_value(am, ae), &r, &pushed);
		return x87_result(c, r);
	}
	uint16_t hw = unit_unary(cw, c->fpu_sw, op, x87_value(am, ae), &r, &pushed);
	x87_merge(c, hw, SW_C1);
	x87_summary_cw(c, cw);
	return x87_result(c, r);
}

X87_ALWAYS_INLINE uint64_t x87_vconst_cw(struct cpu *restrict c, uint16_t cw, uint32_t op)
{
	struct rpt_f80 v = unit_constant(cw, op);
	c->fpu_sw = (uint16_t)(c->fpu_sw & ~SW_C1);
	x87_summary_cw(c, cw);
	return x87_result(c, v);
}

/* The value forms as helpers call them. Each is its _cw form twice over: once for fninit's control
 * word (every exception masked, 64-bit precision, round to nearest), the word of mingw programs
 * and of the x86-64 host itself, where the compiler folds the control-word test of the host unit
 * and the exception summary away, and once for any other word. */
#define X87_BY_CW(form, c, ...)                                                                     \
	return (c)->fpu_cw == X87_CW_INIT ? form(c, X87_CW_INIT, __VA_ARGS__) : form(c, (c)->fpu_cw, __VA_ARGS__)

X87_ALWAYS_INLINE uint64_t x87_vload_inline(struct cpu *restrict c, uint32_t kind, uint64_t lo, uint32_t hi)
{
	X87_BY_CW(x87_vload_cw, c, kind, lo, hi);
}

X87_ALWAYS_INLINE uint64_t x87_vstore_inline(struct cpu *restrict c, uint32_t kind, uint32_t flags, uint64_t am, uint32_t ae)
{
	X87_BY_CW(x87_vstore_cw, c, kind, flags, am, ae);
}

X87_ALWAYS_INLINE uint64_t x87_varith_inline(struct cpu *restrict c, uint32_t op, uint64_t am, uint32_t ae, uint64_t bm, uint32_t be)
{
	X87_BY_CW(x87_varith_cw, c, op, am, ae, bm, be);
}

X87_ALWAYS_INLINE uint64_t x87_varith_mem_inline(struct cpu *restrict c, uint32_t op, uint32_t kind, uint64_t am, uint32_t ae, uint64_t bits)
{
	X87_BY_CW(x87_varith_mem_cw, c, op, kind, am, ae, bits);
}

X87_ALWAYS_INLINE uint32_t x87_vcom_inline(struct cpu *restrict c, uint32_t which, uint64_t am, uint32_t ae, uint64_t bm, uint32_t be)
{
	X87_BY_CW(x87_vcom_cw, c, which, am, ae, bm, be);
}

X87_ALWAYS_INLINE uint32_t x87_vcom_mem_inline(struct cpu *restrict c, uint32_t kind, uint64_t am, uint32_t ae, uint64_t bits)
{
	X87_BY_CW(x87_vcom_mem_cw, c, kind, am, ae, bits);
}

X87_ALWAYS_INLINE uint64_t x87_vunary_inline(struct cpu *restrict c, uint32_t op, uint64_t am, uint32_t ae)
{
	X87_BY_CW(x87_vunary_cw, c, op, am, ae);
}

X87_ALWAYS_INLINE uint64_t x87_vconst_inline(struct cpu *restrict c, uint32_t op)
{
	X87_BY_CW(x87_vconst_cw, c, op);
}

#endif /* RPT_X87_VALUES_H */
