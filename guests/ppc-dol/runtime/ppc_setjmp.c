/*
 * ppc_setjmp.c - the program's own setjmp and longjmp, run on the runtime's resume points
 * (docs/c-abi.md, "Resume points"; src/nonlocal.rs says when: the recipe names their addresses).
 *
 * Lifted functions are C functions calling each other, so a longjmp has to unwind host frames.
 * Discovery makes that possible: a `bl` to a setjmp becomes a tail call with lr = the return
 * address (and ctr = lr, which says the call was recognised), and the code after the call is a
 * function of its own, the resume function. rpt_ppc_setjmp therefore runs in place of the
 * function that called it: it fills the jmp_buf, then dispatches the resume function inside a
 * resume point and returns when that function returns, i.e. when the setjmp caller's own frame
 * ends. rpt_ppc_longjmp restores the registers from the jmp_buf and asks the runtime to unwind to
 * that point, which dispatches the resume function again with r3 = the value.
 *
 * The jmp_buf layout is rpt's own (both halves are ours), 240 bytes, which fits glibc's (64 words
 * of __jmp_buf, then the mask flag and the signal mask) and CodeWarrior's: r1, r2, cr, lr, r14..r31,
 * f14..f31 (the non-volatile state of the SysV ABI), the resume point's serial number. The signal
 * mask is not kept (rpt models no signals). A longjmp whose setjmp caller has already returned is
 * reported with the buffer's address and ends the process with status 125.
 */
#include "cpu.h"

#define RPT_JB_R1 0u
#define RPT_JB_R2 4u
#define RPT_JB_CR 8u
#define RPT_JB_LR 12u
#define RPT_JB_GPRS 16u	  /* r14..r31, 4 bytes each */
#define RPT_JB_FPRS 88u	  /* f14..f31, 8 bytes each */
#define RPT_JB_SERIAL 232u

/* The non-volatile registers, in jmp_buf order. */
#define RPT_PPC_NONVOLATILE_GPRS(X) \
	X(14) X(15) X(16) X(17) X(18) X(19) X(20) X(21) X(22) X(23) X(24) X(25) X(26) X(27) X(28) X(29) X(30) X(31)

void rpt_ppc_setjmp(struct cpu *restrict c);
void rpt_ppc_longjmp(struct cpu *restrict c);

static _Noreturn void rpt_ppc_jmp_fatal(const char *what, uint32_t addr)
{
	char hex[12] = "0x";
	for (int i = 0; i < 8; i++)
		hex[2 + i] = "0123456789abcdef"[(addr >> (28 - 4 * i)) & 15];
	hex[10] = '\n';
	size_t n = 0;
	while (what[n])
		n++;
	rpt_write(2, "rpt: ", 5);
	rpt_write(2, what, n);
	rpt_write(2, hex, 11);
	rpt_process_exit(125);
}

static void rpt_ppc_setjmp_established(struct cpu *c, uint64_t serial, void *ctx)
{
	(void)c;
	uint32_t buf = *(const uint32_t *)ctx;
	rpt_store_u64_be(buf + RPT_JB_SERIAL, serial);
}

/* int setjmp(jmp_buf env), and every entry of its family (_setjmp, __sigsetjmp(env, savemask)). */
/* The 32-bit CR from its eight field slots (cr0 in the top nibble), as mfcr assembles it. */
static uint32_t rpt_ppc_cr_word(const struct cpu *c)
{
	return ((uint32_t)c->cr0 << 28) | ((uint32_t)c->cr1 << 24) | ((uint32_t)c->cr2 << 20) |
	       ((uint32_t)c->cr3 << 16) | ((uint32_t)c->cr4 << 12) | ((uint32_t)c->cr5 << 8) |
	       ((uint32_t)c->cr6 << 4) | (uint32_t)c->cr7;
}

/* The eight field slots from a 32-bit CR, as mtcrf 0xff sets them. */
static void rpt_ppc_set_cr_word(struct cpu *c, uint32_t cr)
{
	c->cr0 = (uint8_t)(cr >> 28 & 15u);
	c->cr1 = (uint8_t)(cr >> 24 & 15u);
	c->cr2 = (uint8_t)(cr >> 20 & 15u);
	c->cr3 = (uint8_t)(cr >> 16 & 15u);
	c->cr4 = (uint8_t)(cr >> 12 & 15u);
	c->cr5 = (uint8_t)(cr >> 8 & 15u);
	c->cr6 = (uint8_t)(cr >> 4 & 15u);
	c->cr7 = (uint8_t)(cr & 15u);
}

void rpt_ppc_setjmp(struct cpu *restrict c)
{
	uint32_t resume = c->lr;
	if (c->ctr != resume)
		rpt_ppc_jmp_fatal("setjmp was called through a call rpt did not recognise as a setjmp call, so it "
				  "cannot return twice; its return address is ",
				  resume);
	uint32_t buf = c->r3;
	rpt_store_u32_be(buf + RPT_JB_R1, c->r1);
	rpt_store_u32_be(buf + RPT_JB_R2, c->r2);
	rpt_store_u32_be(buf + RPT_JB_CR, rpt_ppc_cr_word(c));
	rpt_store_u32_be(buf + RPT_JB_LR, resume);
	uint32_t at = buf + RPT_JB_GPRS;
#define RPT_SAVE_GPR(n)                      \
	rpt_store_u32_be(at, c->r##n);       \
	at += 4;
	RPT_PPC_NONVOLATILE_GPRS(RPT_SAVE_GPR)
#undef RPT_SAVE_GPR
	at = buf + RPT_JB_FPRS;
#define RPT_SAVE_FPR(n)                                \
	rpt_store_u64_be(at, rpt_f64_bits(c->f##n));   \
	at += 8;
	RPT_PPC_NONVOLATILE_GPRS(RPT_SAVE_FPR)
#undef RPT_SAVE_FPR
	c->r3 = 0;
	rpt_dispatch_resumable(c, resume, rpt_ppc_setjmp_established, &buf);
}

/* void longjmp(jmp_buf env, int value), and its family (_longjmp, siglongjmp, __longjmp): never returns. */
void rpt_ppc_longjmp(struct cpu *restrict c)
{
	uint32_t buf = c->r3, value = c->r4;
	uint64_t serial = rpt_load_u64_be(buf + RPT_JB_SERIAL);
	c->r1 = rpt_load_u32_be(buf + RPT_JB_R1);
	c->r2 = rpt_load_u32_be(buf + RPT_JB_R2);
	rpt_ppc_set_cr_word(c, rpt_load_u32_be(buf + RPT_JB_CR));
	c->lr = rpt_load_u32_be(buf + RPT_JB_LR);
	uint32_t at = buf + RPT_JB_GPRS;
#define RPT_LOAD_GPR(n)                      \
	c->r##n = rpt_load_u32_be(at);       \
	at += 4;
	RPT_PPC_NONVOLATILE_GPRS(RPT_LOAD_GPR)
#undef RPT_LOAD_GPR
	at = buf + RPT_JB_FPRS;
#define RPT_LOAD_FPR(n)                                  \
	c->f##n = rpt_f64_from_bits(rpt_load_u64_be(at)); \
	at += 8;
	RPT_PPC_NONVOLATILE_GPRS(RPT_LOAD_FPR)
#undef RPT_LOAD_FPR
	c->r3 = value ? value : 1;
	rpt_resume(c, serial);
	rpt_ppc_jmp_fatal("longjmp to a jmp_buf whose setjmp caller has already returned; the jmp_buf is at ", buf);
}
