/*
 * msvcrt_setjmp.c - setjmp and longjmp across recompiled code (docs/c-abi.md, "Resume points").
 *
 * Lifted functions are C functions calling each other, so a longjmp has to unwind host C frames.
 * Discovery makes that possible: a call of `_setjmp3` (or `_setjmp`) becomes a tail call that
 * sets eip to the return address, and the code after the call is a function of its own (the
 * resume function). `_setjmp3` below therefore runs in place of the function that called it:
 * it fills the guest's jmp_buf, then dispatches the resume function inside a runtime resume
 * point and returns when that function returns, i.e. when the setjmp caller's own frame ends.
 * `longjmp` restores the registers from the jmp_buf and asks the runtime to unwind to that point,
 * which dispatches the resume function again with eax = the value.
 *
 * The jmp_buf is msvcrt's _JUMP_BUFFER (16 words): Ebp, Ebx, Edi, Esi, Esp, Eip, Registration,
 * TryLevel, Cookie ("VC20"), UnwindFunc, UnwindData[6]; rpt keeps the resume point's serial number
 * in UnwindData[0..1]. A longjmp whose setjmp caller has already returned is reported with the
 * buffer's address and ends the process with status 125, instead of jumping into a dead frame.
 *
 * x87: the i386 ABI leaves the x87 stack empty at every call, so a longjmp only has to reset
 * it; rpt_x86_fpu_after_longjmp (x86_runtime.c) does what the x87 model needs.
 */
#include "win32_console.h"

#define RPT_JMP_EBP 0u
#define RPT_JMP_EBX 4u
#define RPT_JMP_EDI 8u
#define RPT_JMP_ESI 12u
#define RPT_JMP_ESP 16u
#define RPT_JMP_EIP 20u
#define RPT_JMP_REGISTRATION 24u
#define RPT_JMP_TRYLEVEL 28u
#define RPT_JMP_COOKIE 32u
#define RPT_JMP_UNWIND_FUNC 36u
#define RPT_JMP_SERIAL 40u
#define RPT_JMP_COOKIE_VALUE 0x56433230u /* "VC20" */

void rpt_x86_fpu_after_longjmp(struct cpu *c);

void rpt_win32_msvcrt__setjmp3(struct cpu *restrict c);
void rpt_win32_msvcrt__setjmp(struct cpu *restrict c);
void rpt_win32_msvcrt_longjmp(struct cpu *restrict c);

static void rpt_setjmp_established(struct cpu *c, uint64_t serial, void *ctx)
{
	(void)c;
	uint32_t buf = *(const uint32_t *)ctx;
	rpt_store_u64_le(buf + RPT_JMP_SERIAL, serial);
}

static void rpt_setjmp(struct cpu *c)
{
	uint32_t ret = rpt_load_u32_le(c->esp);
	if (c->eip != ret)
		rpt_win32_fatal("setjmp was called through a call rpt did not recognise as a setjmp call, so it "
				"cannot return twice; its return address is ",
				ret);
	c->eip = 0;
	uint32_t buf = rpt_win32_arg(c, 0);
	/* Return from the call as cdecl does (the caller pops the arguments later). */
	c->esp += 4;
	rpt_store_u32_le(buf + RPT_JMP_EBP, c->ebp);
	rpt_store_u32_le(buf + RPT_JMP_EBX, c->ebx);
	rpt_store_u32_le(buf + RPT_JMP_EDI, c->edi);
	rpt_store_u32_le(buf + RPT_JMP_ESI, c->esi);
	rpt_store_u32_le(buf + RPT_JMP_ESP, c->esp);
	rpt_store_u32_le(buf + RPT_JMP_EIP, ret);
	rpt_store_u32_le(buf + RPT_JMP_REGISTRATION, rpt_load_u32_le(RPT_X86_TEB_ADDR + RPT_TEB_EXCEPTION_LIST));
	rpt_store_u32_le(buf + RPT_JMP_TRYLEVEL, 0xffffffffu);
	rpt_store_u32_le(buf + RPT_JMP_COOKIE, RPT_JMP_COOKIE_VALUE);
	rpt_store_u32_le(buf + RPT_JMP_UNWIND_FUNC, 0);
	c->eax = 0;
	rpt_dispatch_resumable(c, ret, rpt_setjmp_established, &buf);
}

/* int _setjmp3(jmp_buf buf, int count, ...) - mingw's setjmp(). */
void rpt_win32_msvcrt__setjmp3(struct cpu *restrict c)
{
	rpt_setjmp(c);
}

/* int _setjmp(jmp_buf buf) */
void rpt_win32_msvcrt__setjmp(struct cpu *restrict c)
{
	rpt_setjmp(c);
}

/* void longjmp(jmp_buf buf, int value) - never returns. */
void rpt_win32_msvcrt_longjmp(struct cpu *restrict c)
{
	uint32_t buf = rpt_win32_arg(c, 0), value = rpt_win32_arg(c, 1);
	if (rpt_load_u32_le(buf + RPT_JMP_COOKIE) != RPT_JMP_COOKIE_VALUE)
		rpt_win32_fatal("longjmp with a jmp_buf that setjmp did not fill, at ", buf);
	uint64_t serial = rpt_load_u64_le(buf + RPT_JMP_SERIAL);
	c->ebp = rpt_load_u32_le(buf + RPT_JMP_EBP);
	c->ebx = rpt_load_u32_le(buf + RPT_JMP_EBX);
	c->edi = rpt_load_u32_le(buf + RPT_JMP_EDI);
	c->esi = rpt_load_u32_le(buf + RPT_JMP_ESI);
	c->esp = rpt_load_u32_le(buf + RPT_JMP_ESP);
	c->eax = value ? value : 1;
	c->df = 0;
	rpt_store_u32_le(RPT_X86_TEB_ADDR + RPT_TEB_EXCEPTION_LIST, rpt_load_u32_le(buf + RPT_JMP_REGISTRATION));
	rpt_x86_fpu_after_longjmp(c);
	rpt_resume(c, serial);
	rpt_win32_fatal("longjmp to a jmp_buf whose setjmp caller has already returned; the jmp_buf is at ", buf);
}
