/*
 * x86_runtime.c - the x86 guest's C part: start-up state, the process result and exit handling.
 *
 * See docs/c-abi.md ("x86 guest conventions"). Guest memory layout chosen here and in the
 * platform files:
 *   0x00400000...          the PE image at its preferred ImageBase
 *   0x10000000-0x6fffffff  platform heap (VirtualAlloc's bump allocator; msvcrt's malloc arenas)
 *   0x70000000-0x7ffdffff  the stack, growing down from 0x7ffe0000
 *   0x7ffe0000-0x7ffeffff  platform strings (the command line)
 *   0x7fff0000-0x7fff0fff  the TEB, where FS points (the lifter's TEB_ADDR)
 *   0x7fff1000-0x7fff1fff  the PEB
 *   0x7fff2000-0x7fffffff  platform variables the guest sees (data imports, FILE structures)
 *   0xfff00000...          import thunks (addresses only; no bytes live there)
 */
#include "cpu.h"

/* The stack's top: esp starts here before the start-up return address is pushed. */
#define RPT_X86_STACK_TOP 0x7ffe0000u

/* Defined by the platform's C file: platform state built from the host's arguments, and what
 * the platform does when the entry point returns (Windows then ends the process). */
void rpt_x86_platform_init(struct cpu *c, int argc, char **argv);
void rpt_x86_platform_finish(struct cpu *c);

/* The x87 unit's state at start-up (x87.c). */
void rpt_x86_fpu_init(struct cpu *c);

void rpt_guest_init(struct cpu *c, int argc, char **argv)
{
	c->esp = RPT_X86_STACK_TOP;
	c->df = 0;
	/* MXCSR as Windows starts a process: exceptions masked, round to nearest. */
	c->mxcsr = 0x1f80u;
	rpt_x86_fpu_init(c);
	rpt_x86_platform_init(c, argc, argv);
	/* A return address of 0, as if the entry were called: an entry that returns ends the process with eax. */
	c->esp -= 4;
	rpt_store_u32_le(c->esp, 0);
}

/* A platform function is entered as the guest's `call` left it: the return address on top of the
 * stack, just after the call instruction. */
uint64_t rpt_guest_caller(struct cpu *c)
{
	return rpt_load_u32_le(c->esp);
}

/* A stub the recipe gives a return (import_stubs): the result in edx:eax, then the return
 * address and `pops` bytes of arguments off the stack, as a stdcall callee leaves it. (The
 * error it may leave is the platform's: rpt_guest_stub_error is in the platform's C file.) */
void rpt_guest_stub_return(struct cpu *c, uint64_t value, uint32_t pops)
{
	c->eax = (uint32_t)value;
	c->edx = (uint32_t)(value >> 32);
	c->esp = c->esp + 4 + pops;
}

/* The stack from esp up, for the callers of a fault: without frame pointers, any word may be a
 * return address (the runtime keeps those that are addresses calls return to). */
size_t rpt_guest_return_candidates(struct cpu *c, uint64_t *out, size_t max)
{
	size_t n = 0;
	for (uint32_t at = c->esp; n < max && at >= c->esp && at < RPT_X86_STACK_TOP; at += 4)
		out[n++] = rpt_load_u32_le(at);
	return n;
}

/* Windows ends a process whose entry point returns with the entry's result. */
int rpt_guest_finish(struct cpu *c)
{
	rpt_x86_platform_finish(c);
	return (int)c->eax;
}

/* No exit reason is handled here: the runtime reports every one with its guest address. What the
 * guest wrote to buffered streams before is written out first, so the output shows how far it got. */
int rpt_guest_on_exit(struct cpu *c, uint64_t pc, int reason)
{
	(void)pc;
	(void)reason;
	rpt_x86_platform_finish(c);
	return 0;
}
