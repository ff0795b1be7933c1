/*
 * x87_host.h - the x87 unit of x86-64 hosts: the host's own x87 runs each guest operation, so
 * results and status words are bit-identical to the real FPU (x87.c describes the unit's seven
 * operations). Included by x87.c and, through inline.h, by generated code, which runs the value
 * forms inline; everything here is static inline, so a file compiles only what it calls.
 */
#ifndef RPT_X87_HOST_H
#define RPT_X87_HOST_H

/* The host's long double is the 80-bit format; these move bits in and out of one. */
union x87_host_f80 {
	long double f;
	struct {
		uint64_t m;
		uint16_t se;
	} bits;
};

X87_ALWAYS_INLINE long double x87_ld(struct rpt_f80 v)
{
	union x87_host_f80 u;
	u.bits.m = v.m;
	u.bits.se = v.se;
	return u.f;
}

X87_ALWAYS_INLINE struct rpt_f80 x87_bits(long double f)
{
	union x87_host_f80 u;
	u.f = f;
	struct rpt_f80 v = { u.bits.m, u.bits.se };
	return v;
}

#define X87_CLOBBERS "st", "st(1)", "st(2)", "st(3)", "st(4)", "st(5)", "st(6)", "st(7)"

/* Each operation runs its instructions on the host's x87 unit under the guest's control word (all
 * exceptions masked) in one asm statement, and reads the host's status word after them. The
 * exception flags in it are sticky, so the word may also report exceptions raised before the
 * statement; those do no harm when the guest's status word already has them (`raised`), since
 * every caller only ORs the operation's exceptions into the guest's word. So each statement first
 * reads the host's flags and clears them (fnclex) only when one of them is not in `raised`
 * (X87_CLEAR_STALE). It rarely has to: once the guest's word has the precision flag, say, the
 * host's copy of it may stay. fnclex is what it saves: tens of nanoseconds each on the machines
 * measured, against a few for fnstsw, and once per operation it was most of an x87 program's
 * time (docs/x87.md, "Stale flags"). No fninit is needed around it (an fninit costs
 * tens of cycles, and one before and one after every operation was most of an x87 program's
 * time): the x86-64 ABI keeps the register stack empty between statements, and the operands and
 * clobbers of each statement say which registers it uses.
 *
 * The control word is loaded only when the guest's (exceptions masked) is not the host's: fldcw is
 * the slow part, and the common guest word (0x37f, what mingw's start-up fninit leaves) is the
 * host's. That word is a constant, X87_HOST_CW: the x86-64 psABI starts every process with it and
 * makes it callee-saved, and nothing in a generation changes it beyond one runtime call
 * (rpt_host_set_rounding, which restores it).
 *
 * The statements are not volatile: the compiler then knows they touch nothing but their operands
 * (a volatile one, to clang, may touch any memory), keeps guest state it holds in registers across
 * them, and may move or merge them like any pure computation. That is safe because each statement
 * is whole: it sets the guest's control word if that is not the host's, clears stale flags,
 * computes, reads the status word and restores the host's word, so nothing can come between its
 * parts, and between statements the control word is the same everywhere in generated code.
 *
 * X87_FORM runs INSNS that way; OUTPUTS, INPUTS and CLOBBERS are parenthesised operand lists. */
#define X87_HOST_CW 0x037fu
/* Clears the host's exception flags if it holds one the guest's word lacks; uses ax and the
 * operand X87_STALE (the flags the guest's word lacks), which needs `raised` in scope. */
#define X87_CLEAR_STALE "fnstsw %%ax\n\ttest %w[stale_], %%ax\n\tjz 1f\n\tfnclex\n1:\n\t"
#define X87_STALE [stale_] "r"((uint16_t)(~(raised) & SW_EXCEPTIONS))
#define X87_UNPAREN(...) __VA_ARGS__
#define X87_FORM(cw_in, INSNS, OUTPUTS, INPUTS, CLOBBERS)                                           \
	X87_FORM_WITH(cw_in, X87_CLEAR_STALE, INSNS, OUTPUTS, (X87_UNPAREN INPUTS, X87_STALE),       \
		      (X87_UNPAREN CLOBBERS, "ax"))
/* X87_FORM with PRE before INSNS and no operand of its own (the quiet forms give "" for PRE). */
#define X87_FORM_WITH(cw_in, PRE, INSNS, OUTPUTS, INPUTS, CLOBBERS)                                 \
	do {                                                                                        \
		uint16_t want_ = (uint16_t)((cw_in) | 0x3fu), host_ = X87_HOST_CW;                  \
		if (want_ == X87_HOST_CW)                                                           \
			__asm__(PRE INSNS                                                             \
				: X87_UNPAREN OUTPUTS                                                 \
				: X87_UNPAREN INPUTS                                                  \
				: X87_UNPAREN CLOBBERS);                                              \
		else                                                                                \
			__asm__("fldcw %[want_]\n\t" PRE INSNS "\n\tfldcw %[host_]"                     \
					 : X87_UNPAREN OUTPUTS                                      \
					 : X87_UNPAREN INPUTS, [want_] "m"(want_), [host_] "m"(host_) \
					 : X87_UNPAREN CLOBBERS);                                   \
	} while (0)

/* X87_TWO runs BODY with st(0) = a, st(1) = b; FIX, after the status word is read, leaves exactly
 * two values, returned in *o0 (st(0)) and *o1. */
#define X87_TWO(cw_in, a_in, b_in, o0, o1, BODY, FIX)                                               \
	do {                                                                                        \
		uint16_t sw_;                                                                       \
		long double a_ = x87_ld(a_in), b_ = x87_ld(b_in), r0_, r1_;                         \
		X87_FORM(cw_in, "fldt %[b]\n\tfldt %[a]\n\t" BODY "\n\tfnstsw %[sw]\n\t" FIX          \
			 "\n\tfstpt %[r0]\n\tfstpt %[r1]",                                          \
			 ([sw] "=m"(sw_), [r0] "=m"(r0_), [r1] "=m"(r1_)), ([a] "m"(a_), [b] "m"(b_)), \
			 (X87_CLOBBERS));                                                           \
		*(o0) = x87_bits(r0_);                                                              \
		*(o1) = x87_bits(r1_);                                                              \
		hw = sw_;                                                                           \
	} while (0)

/* Pushes the value INSN loads from a memory operand holding `bits` into *out (see X87_REG_FORM
 * for the slot; a load needs no control word). */
#define X87_LOAD(INSN)                                                                              \
	do {                                                                                        \
		uint16_t sw_;                                                                       \
		long double r_;                                                                     \
		(void)cw;                                                                           \
		__asm__(X87_SLOT_ENTER "mov %[m_], (%%rsp)\n\t" X87_CLEAR_STALE INSN " (%%rsp)\n\tfnstsw %%ax" \
			X87_SLOT_LEAVE                                                              \
			: "=t"(r_), "=&a"(sw_)                                                      \
			: [m_] "r"((uint64_t)(bits)), X87_STALE                                  \
			: "cc");                                                                    \
		*out = x87_bits(r_);                                                                \
		return sw_;                                                                         \
	} while (0)

/* Stores v by INSN, which pops it, into *out. */
#define X87_STORE(INSN)                                                                             \
	do {                                                                                        \
		uint16_t sw_;                                                                       \
		uint64_t m_ = 0;                                                                    \
		long double a_ = x87_ld(v);                                                         \
		X87_FORM(cw, "fldt %[a]\n\t" INSN " %[m]\n\tfnstsw %[sw]", ([sw] "=m"(sw_), [m] "+m"(m_)), \
			 ([a] "m"(a_)), (X87_CLOBBERS));                                            \
		*out = m_;                                                                          \
		return sw_;                                                                         \
	} while (0)

/* The forms generated code runs most (arithmetic, compares, loads, memory operands) have no
 * memory operands at all: values in x87 registers ("t" is st(0), "u" st(1)), the status word in
 * ax, a memory operand's bits and the guest's control word in general registers. To clang such a
 * statement reads and writes nothing but its operands, so the values of a region stay in x87
 * registers from one operation to the next, and the guest state the code holds in registers (the
 * status word among it) stays there across them.
 *
 * The instructions that need memory (fldcw, and the memory operand of fmull and the like) get it
 * in a slot the statement makes for itself: it moves rsp down past the red zone (the 128 bytes
 * below rsp that the compiler may use in a leaf function) by 144 (the operand at (%rsp), the
 * control word at 8(%rsp), both below the red zone), stores into the slot and moves rsp back. None of these statements' operands is addressed from rsp, so the move cannot misplace one;
 * a signal arriving meanwhile is delivered below the slot.
 *
 * Loads and compares are the same under every control word (a load of a narrower format or an
 * integer is exact, a compare rounds nothing, and exceptions are masked either way), so they
 * never load one. */
#define X87_SLOT_ENTER "sub $144, %%rsp\n\t"
#define X87_SLOT_LEAVE "\n\tadd $144, %%rsp"
#define X87_CW_ENTER "movw %w[want_], 8(%%rsp)\n\tfldcw 8(%%rsp)\n\t"
#define X87_CW_LEAVE "\n\tmovw $0x37f, 8(%%rsp)\n\tfldcw 8(%%rsp)"
/* The assembler text cannot spell X87_HOST_CW (its C suffix), so the two are tied here. */
_Static_assert(X87_HOST_CW == 0x37fu, "X87_CW_LEAVE restores the host's control word");

/* Runs INSNS (which end with the status word in ax) under the guest's control word; OUTPUTS and
 * INPUTS are parenthesised operand lists. SLOT_IN, when not empty, stores into the slot at
 * (%rsp) before (the statement then makes the slot under either word; otherwise only to load a
 * control word). */
#define X87_REG_FORM(SLOT_IN, INSNS, OUTPUTS, INPUTS)                                               \
	X87_REG_FORM_WITH(SLOT_IN, X87_CLEAR_STALE, INSNS, OUTPUTS, (X87_UNPAREN INPUTS, X87_STALE))
/* X87_REG_FORM with PRE before INSNS and no operand of its own (the quiet forms give "" for PRE). */
#define X87_REG_FORM_WITH(SLOT_IN, PRE, INSNS, OUTPUTS, INPUTS)                                     \
	do {                                                                                        \
		uint16_t want_ = (uint16_t)(cw | 0x3fu);                                            \
		if (want_ == X87_HOST_CW && sizeof(SLOT_IN) == 1)                                   \
			__asm__(PRE INSNS : X87_UNPAREN OUTPUTS : X87_UNPAREN INPUTS);                \
		else if (want_ == X87_HOST_CW)                                                      \
			__asm__(X87_SLOT_ENTER SLOT_IN PRE INSNS X87_SLOT_LEAVE                       \
				: X87_UNPAREN OUTPUTS                                                 \
				: X87_UNPAREN INPUTS                                                  \
				: "cc");                                                              \
		else                                                                                \
			__asm__(X87_SLOT_ENTER SLOT_IN X87_CW_ENTER PRE INSNS X87_CW_LEAVE              \
					X87_SLOT_LEAVE                                              \
				: X87_UNPAREN OUTPUTS                                                 \
				: X87_UNPAREN INPUTS, [want_] "r"(want_)                              \
				: "cc");                                                              \
	} while (0)

/* Runs INSN with st(0) = a, st(1) = b; returns the status word, the new st(0) in *out. */
#define X87_ARITH(INSN)                                                                             \
	do {                                                                                        \
		uint16_t sw_;                                                                       \
		long double r_;                                                                     \
		X87_REG_FORM("", INSN "\n\tfnstsw %%ax", ("=t"(r_), "=&a"(sw_)),                     \
			     ("0"(x87_ld(a)), "u"(x87_ld(b))));                                     \
		*out = x87_bits(r_);                                                                \
		return sw_;                                                                         \
	} while (0)

/* Compares st(0) = a with st(1) = b by INSN; returns the status word. */
#define X87_COMPARE(INSN)                                                                           \
	do {                                                                                        \
		uint16_t sw_;                                                                       \
		(void)cw;                                                                           \
		__asm__(X87_CLEAR_STALE INSN "\n\tfnstsw %%ax"                                    \
			: "=&a"(sw_)                                                                \
			: "t"(x87_ld(a)), "u"(x87_ld(b)), X87_STALE);                               \
		return sw_;                                                                         \
	} while (0)

/* Runs INSN, an instruction with st(0) = a and a memory operand holding bits. */
#define X87_MEM(INSN)                                                                               \
	do {                                                                                        \
		uint16_t sw_;                                                                       \
		long double r_;                                                                     \
		X87_REG_FORM("mov %[m_], (%%rsp)\n\t", INSN " (%%rsp)\n\tfnstsw %%ax",                \
			     ("=t"(r_), "=&a"(sw_)), ("0"(x87_ld(a)), [m_] "r"(bits)));             \
		*out = x87_bits(r_);                                                                \
		return sw_;                                                                         \
	} while (0)

/* The instruction of each operand kind, operation and store, handed to FORM (a statement that
 * returns): the full forms and the quiet ones share these tables. A load or a memory-operand form
 * switches on `kind`, arithmetic on `op`, a store on `kind` and `truncate`. */
#define X87_LOAD_TABLE(FORM)            \
	switch (kind) {                 \
	case X87_KIND_F32:              \
		FORM("flds");           \
	case X87_KIND_F64:              \
		FORM("fldl");           \
	case X87_KIND_I16:              \
		FORM("filds");          \
	case X87_KIND_I32:              \
		FORM("fildl");          \
	default:                        \
		FORM("fildll");         \
	}
#define X87_STORE_TABLE(FORM)                                  \
	switch (kind * 2u + (truncate ? 1u : 0u)) {            \
	case X87_KIND_F32 * 2u:                                \
	case X87_KIND_F32 * 2u + 1u:                           \
		FORM("fstps");                                 \
	case X87_KIND_F64 * 2u:                                \
	case X87_KIND_F64 * 2u + 1u:                           \
		FORM("fstpl");                                 \
	case X87_KIND_I16 * 2u:                                \
		FORM("fistps");                                \
	case X87_KIND_I32 * 2u:                                \
		FORM("fistpl");                                \
	case X87_KIND_I64 * 2u:                                \
		FORM("fistpll");                               \
	case X87_KIND_I16 * 2u + 1u:                           \
		FORM("fisttps");                               \
	case X87_KIND_I32 * 2u + 1u:                           \
		FORM("fisttpl");                               \
	default:                                               \
		FORM("fisttpll");                              \
	}
#define X87_ARITH_TABLE(FORM)                   \
	switch (op) {                           \
	case X87_ADD:                           \
		FORM("fadd %%st(1), %%st");     \
	case X87_MUL:                           \
		FORM("fmul %%st(1), %%st");     \
	case X87_SUB:                           \
		FORM("fsub %%st(1), %%st");     \
	case X87_SUBR:                          \
		FORM("fsubr %%st(1), %%st");    \
	case X87_DIV:                           \
		FORM("fdiv %%st(1), %%st");     \
	default:                                \
		FORM("fdivr %%st(1), %%st");    \
	}
#define X87_MEM_KINDS(FORM, F32, F64, I16, I32) \
	switch (kind) {                         \
	case X87_KIND_F32:                      \
		FORM(F32);                      \
	case X87_KIND_F64:                      \
		FORM(F64);                      \
	case X87_KIND_I16:                      \
		FORM(I16);                      \
	default:                                \
		FORM(I32);                      \
	}
#define X87_MEM_TABLE(FORM)                                                      \
	switch (op) {                                                            \
	case X87_ADD:                                                            \
		X87_MEM_KINDS(FORM, "fadds", "faddl", "fiadds", "fiaddl");       \
	case X87_MUL:                                                            \
		X87_MEM_KINDS(FORM, "fmuls", "fmull", "fimuls", "fimull");       \
	case X87_SUB:                                                            \
		X87_MEM_KINDS(FORM, "fsubs", "fsubl", "fisubs", "fisubl");       \
	case X87_SUBR:                                                           \
		X87_MEM_KINDS(FORM, "fsubrs", "fsubrl", "fisubrs", "fisubrl");   \
	case X87_DIV:                                                            \
		X87_MEM_KINDS(FORM, "fdivs", "fdivl", "fidivs", "fidivl");       \
	default:                                                                 \
		X87_MEM_KINDS(FORM, "fdivrs", "fdivrl", "fidivrs", "fidivrl");   \
	}

/* The memory forms run as themselves: they flag a denormal operand only where the one
 * instruction does (not next to a NaN or an infinity, for one). */
X87_ALWAYS_INLINE uint16_t unit_arith_memory(uint16_t cw, uint16_t raised, unsigned op, unsigned kind, struct rpt_f80 a, uint64_t bits,
				  struct rpt_f80 *out)
{
	X87_MEM_TABLE(X87_MEM);
}

X87_ALWAYS_INLINE uint16_t unit_compare_memory(uint16_t cw, uint16_t raised, unsigned kind, struct rpt_f80 a, uint64_t bits)
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

X87_ALWAYS_INLINE uint16_t unit_load(uint16_t cw, uint16_t raised, unsigned kind, uint64_t bits, struct rpt_f80 *out)
{
	X87_LOAD_TABLE(X87_LOAD);
}

X87_ALWAYS_INLINE uint16_t unit_store(uint16_t cw, uint16_t raised, unsigned kind, int truncate, struct rpt_f80 v, uint64_t *out)
{
	X87_STORE_TABLE(X87_STORE);
}

X87_ALWAYS_INLINE uint16_t unit_arith(uint16_t cw, uint16_t raised, unsigned op, struct rpt_f80 a, struct rpt_f80 b, struct rpt_f80 *out)
{
	X87_ARITH_TABLE(X87_ARITH);
}

X87_ALWAYS_INLINE uint16_t unit_compare(uint16_t cw, uint16_t raised, int unordered, struct rpt_f80 a, struct rpt_f80 b)
{
	if (unordered)
		X87_COMPARE("fucom %%st(1)");
	X87_COMPARE("fcom %%st(1)");
}

/* For fptan, fsincos and fxtract *r replaces st(0) and *pushed is pushed. */
X87_ALWAYS_INLINE uint16_t unit_unary(uint16_t cw, uint16_t raised, unsigned op, struct rpt_f80 a, struct rpt_f80 *r, struct rpt_f80 *pushed)
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
X87_ALWAYS_INLINE uint16_t unit_binary(uint16_t cw, uint16_t raised, unsigned op, struct rpt_f80 a, struct rpt_f80 b, struct rpt_f80 *r)
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

/* Pushes INSN's constant, which depends on the rounding control only (no exception, so no
 * status word). */
#define X87_CONSTANT(INSN)                                                                          \
	do {                                                                                        \
		long double r_;                                                                     \
		uint16_t want_ = (uint16_t)(cw | 0x3fu);                                            \
		if (want_ == X87_HOST_CW)                                                           \
			__asm__(INSN : "=t"(r_));                                                    \
		else                                                                                \
			__asm__(X87_SLOT_ENTER X87_CW_ENTER INSN X87_CW_LEAVE X87_SLOT_LEAVE          \
				: "=t"(r_)                                                            \
				: [want_] "r"(want_)                                                  \
				: "cc");                                                              \
		return x87_bits(r_);                                                                \
	} while (0)

X87_ALWAYS_INLINE struct rpt_f80 unit_constant(uint16_t cw, unsigned op)
{
	switch (op) {
	case X87_FLD1:
		X87_CONSTANT("fld1");
	case X87_FLDZ:
		X87_CONSTANT("fldz");
	case X87_FLDPI:
		X87_CONSTANT("fldpi");
	case X87_FLDL2E:
		X87_CONSTANT("fldl2e");
	case X87_FLDL2T:
		X87_CONSTANT("fldl2t");
	case X87_FLDLG2:
		X87_CONSTANT("fldlg2");
	default:
		X87_CONSTANT("fldln2");
	}
}

/* The quiet forms (x87_values.h): the instruction alone, its status word left unread. Reading it
 * (fnstsw) waits for the instruction to finish, which serialises a chain of x87 operations that the
 * host would otherwise overlap. */
#define X87_UNIT_QUIET 1

X87_ALWAYS_INLINE void unit_load_quiet(uint16_t cw, unsigned kind, uint64_t bits, struct rpt_f80 *out)
{
	/* A load converts exactly under every control word, and a quiet one raises nothing anyone
	 * reads, so it is the C conversion: clang loads the operand itself (fld from memory) and
	 * folds a constant one. */
	(void)cw;
	switch (kind) {
	case X87_KIND_F32: {
		uint32_t w = (uint32_t)bits;
		float f;
		__builtin_memcpy(&f, &w, sizeof f);
		*out = x87_bits((long double)f);
		return;
	}
	case X87_KIND_F64: {
		double d;
		__builtin_memcpy(&d, &bits, sizeof d);
		*out = x87_bits((long double)d);
		return;
	}
	case X87_KIND_I16:
		*out = x87_bits((long double)(int16_t)bits);
		return;
	case X87_KIND_I32:
		*out = x87_bits((long double)(int32_t)bits);
		return;
	default:
		*out = x87_bits((long double)(int64_t)bits);
		return;
	}
}

X87_ALWAYS_INLINE void unit_store_quiet(uint16_t cw, unsigned kind, int truncate, struct rpt_f80 v, uint64_t *out)
{
	/* Under the host's control word a float store is the C conversion (clang's fstps and fstpl
	 * round by it as the guest's instruction does); integer stores and other words take the
	 * guest's instruction below. */
	if ((uint16_t)(cw | 0x3fu) == X87_HOST_CW && kind == X87_KIND_F32) {
		float f = (float)x87_ld(v);
		uint32_t w;
		__builtin_memcpy(&w, &f, sizeof w);
		*out = w;
		return;
	}
	if ((uint16_t)(cw | 0x3fu) == X87_HOST_CW && kind == X87_KIND_F64) {
		double d = (double)x87_ld(v);
		__builtin_memcpy(out, &d, sizeof d);
		return;
	}
#define X87_STORE_QUIET(INSN)                                                                       \
	do {                                                                                        \
		uint64_t m_ = 0;                                                                    \
		long double a_ = x87_ld(v);                                                         \
		X87_FORM_WITH(cw, "", "fldt %[a]\n\t" INSN " %[m]", ([m] "+m"(m_)), ([a] "m"(a_)),   \
			      (X87_CLOBBERS));                                                      \
		*out = m_;                                                                          \
		return;                                                                             \
	} while (0)
	X87_STORE_TABLE(X87_STORE_QUIET);
#undef X87_STORE_QUIET
}

X87_ALWAYS_INLINE void unit_arith_quiet(uint16_t cw, unsigned op, struct rpt_f80 a, struct rpt_f80 b, struct rpt_f80 *out)
{
	if ((uint16_t)(cw | 0x3fu) == X87_HOST_CW) {
		long double x = x87_ld(a), y = x87_ld(b), r;
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
		*out = x87_bits(r);
		return;
	}
#define X87_ARITH_QUIET(INSN)                                                                       \
	do {                                                                                        \
		long double r_;                                                                     \
		X87_REG_FORM_WITH("", "", INSN, ("=t"(r_)), ("0"(x87_ld(a)), "u"(x87_ld(b))));        \
		*out = x87_bits(r_);                                                                \
		return;                                                                             \
	} while (0)
	X87_ARITH_TABLE(X87_ARITH_QUIET);
#undef X87_ARITH_QUIET
}

X87_ALWAYS_INLINE void unit_arith_memory_quiet(uint16_t cw, unsigned op, unsigned kind, struct rpt_f80 a, uint64_t bits,
					       struct rpt_f80 *out)
{
	/* The memory form's value is the operand loaded, then the register form with it as st(1):
	 * the load is exact, and only the exception flags (which nobody reads here) tell them apart. */
	struct rpt_f80 b;
	unit_load_quiet(cw, kind, bits, &b);
	unit_arith_quiet(cw, op, a, b, out);
}

/* C0, C2 and C3 as comparing a with b sets them, by fucomi, whose result the branch reads from the
 * host's flags: no status word (a compare rounds nothing, so under any control word). */
X87_ALWAYS_INLINE uint16_t unit_compare_quiet(uint16_t cw, struct rpt_f80 a, struct rpt_f80 b)
{
	_Bool below, equal, unordered;
	(void)cw;
	__asm__("fucomi %%st(1), %%st"
		: "=@ccb"(below), "=@ccz"(equal), "=@ccp"(unordered)
		: "t"(x87_ld(a)), "u"(x87_ld(b)));
	return (uint16_t)((below ? SW_C0 : 0u) | (unordered ? SW_C2 : 0u) | (equal ? SW_C3 : 0u));
}

#endif /* RPT_X87_HOST_H */
