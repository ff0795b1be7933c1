/*
 * jump.c - the non-local jumps of rpt_host.h (rpt_host_call_jumpable, rpt_host_jump) on LoongArch64
 * without a C library: a setjmp/longjmp pair in assembly, and the two primitives on top of it.
 *
 * clang's __builtin_setjmp is not implemented for LoongArch, hence the assembly. The pair saves and
 * restores exactly what the LP64D calling convention says a callee preserves: the return address,
 * the stack pointer, the frame pointer $fp ($r22), $s0-$s8 ($r23-$r31) and $fs0-$fs7 ($f24-$f31).
 * $tp ($r2) belongs to the thread and $r21 is reserved, so neither changes across the jump.
 */
#include "rpt_host.h"

/* Saved registers: $ra, $sp, $fp, $s0-$s8, then $fs0-$fs7, eight bytes each. */
#define RPT_LA64_JUMP_WORDS 20

/* Returns 0 after saving the registers to `regs`; returns again, with 1, when rpt_la64_longjmp(regs)
 * restores them. */
__attribute__((returns_twice)) int rpt_la64_setjmp(uint64_t regs[RPT_LA64_JUMP_WORDS]);
_Noreturn void rpt_la64_longjmp(uint64_t regs[RPT_LA64_JUMP_WORDS]);

__asm__(".text\n"
	".globl rpt_la64_setjmp\n"
	".type rpt_la64_setjmp, @function\n"
	"rpt_la64_setjmp:\n"
	"	st.d $ra, $a0, 0\n"
	"	st.d $sp, $a0, 8\n"
	"	st.d $fp, $a0, 16\n"
	"	st.d $s0, $a0, 24\n"
	"	st.d $s1, $a0, 32\n"
	"	st.d $s2, $a0, 40\n"
	"	st.d $s3, $a0, 48\n"
	"	st.d $s4, $a0, 56\n"
	"	st.d $s5, $a0, 64\n"
	"	st.d $s6, $a0, 72\n"
	"	st.d $s7, $a0, 80\n"
	"	st.d $s8, $a0, 88\n"
	"	fst.d $fs0, $a0, 96\n"
	"	fst.d $fs1, $a0, 104\n"
	"	fst.d $fs2, $a0, 112\n"
	"	fst.d $fs3, $a0, 120\n"
	"	fst.d $fs4, $a0, 128\n"
	"	fst.d $fs5, $a0, 136\n"
	"	fst.d $fs6, $a0, 144\n"
	"	fst.d $fs7, $a0, 152\n"
	"	move $a0, $zero\n"
	"	jr $ra\n"
	".size rpt_la64_setjmp, . - rpt_la64_setjmp\n"
	".globl rpt_la64_longjmp\n"
	".type rpt_la64_longjmp, @function\n"
	"rpt_la64_longjmp:\n"
	"	ld.d $ra, $a0, 0\n"
	"	ld.d $sp, $a0, 8\n"
	"	ld.d $fp, $a0, 16\n"
	"	ld.d $s0, $a0, 24\n"
	"	ld.d $s1, $a0, 32\n"
	"	ld.d $s2, $a0, 40\n"
	"	ld.d $s3, $a0, 48\n"
	"	ld.d $s4, $a0, 56\n"
	"	ld.d $s5, $a0, 64\n"
	"	ld.d $s6, $a0, 72\n"
	"	ld.d $s7, $a0, 80\n"
	"	ld.d $s8, $a0, 88\n"
	"	fld.d $fs0, $a0, 96\n"
	"	fld.d $fs1, $a0, 104\n"
	"	fld.d $fs2, $a0, 112\n"
	"	fld.d $fs3, $a0, 120\n"
	"	fld.d $fs4, $a0, 128\n"
	"	fld.d $fs5, $a0, 136\n"
	"	fld.d $fs6, $a0, 144\n"
	"	fld.d $fs7, $a0, 152\n"
	"	addi.d $a0, $zero, 1\n"
	"	jr $ra\n"
	".size rpt_la64_longjmp, . - rpt_la64_longjmp\n");

int rpt_host_call_jumpable(struct rpt_host_jump_target *target, void (*body)(void *ctx), void *ctx)
{
	uint64_t here[RPT_LA64_JUMP_WORDS];
	target->host = here;
	if (rpt_la64_setjmp(here))
		return 1;
	body(ctx);
	return 0;
}

_Noreturn void rpt_host_jump(struct rpt_host_jump_target *target)
{
	rpt_la64_longjmp(target->host);
}
