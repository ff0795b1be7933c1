/*
 * cxx_eh.c - C++ exceptions across recompiled code (docs/cxx-exceptions.md).
 *
 * The unwinder is the guest's own (libgcc's, linked into the PE): it walks the guest stack with
 * .eh_frame, then ends with `mov esp, ecx; ret` (__builtin_eh_return), which "returns" to a landing
 * pad in the middle of a function whose frame lies further up the guest stack. Lifted functions are
 * host C functions calling each other, so that jump must also drop the host frames in between.
 *
 * Discovery made every landing pad an entry of its own, and every function owning landing pads
 * (its FDE's LSDA names some) starts with a check the lifter adds: unless eip says "body", it sets
 * eip to its own address and calls rpt_x86_eh_frame, which dispatches the function again under a
 * resume point keyed by the function's guest frame (esp at entry, which points at the return
 * address), and returns when the function does. rpt_x86_eh_install, lifted in place of the
 * unwinder's final `ret`, finds the innermost such point whose frame is at or above the landing
 * esp (every frame below it belongs to the callees the exception left) and dispatches the landing
 * pad there, with the registers the unwinder restored.
 */
#include "win32_console.h"

void rpt_x86_fpu_after_longjmp(struct cpu *c);
void rpt_x86_eh_frame(struct cpu *restrict c);
void rpt_x86_eh_install(struct cpu *restrict c);

/* Entered from a function owning landing pads, with c->eip = that function and esp at its return address. */
void rpt_x86_eh_frame(struct cpu *restrict c)
{
	rpt_dispatch_framed(c, c->eip, c->esp);
}

/* The unwinder's `ret` after `mov esp, ecx`: [esp] is the landing pad, esp + 4 its frame's esp. */
void rpt_x86_eh_install(struct cpu *restrict c)
{
	uint32_t pad = rpt_load_u32_le(c->esp);
	c->esp += 4;
	c->eip = 0;
	/* The landing pad runs with an empty x87 stack, as after any call (i386 ABI). */
	rpt_x86_fpu_after_longjmp(c);
	rpt_resume_frame(c, c->esp, pad);
	rpt_win32_fatal("the C++ unwinder jumped to a landing pad whose function has no live frame: ", pad);
}
