/*
 * ppc_runtime.c - the PowerPC guest's C part: start-up state, exit handling and the FPSCR
 * rounding mode (the helpers lifted code calls are in ppc_helpers.c).
 *
 * See docs/c-abi.md ("PowerPC guest conventions"). Guest memory is the runtime's flat 4 GiB
 * reservation, addressed with the guest's own (effective) addresses: a DOL's sections sit at
 * their MEM1 addresses (0x80000000...), so no translation happens on any access but one: an
 * address in an uncached view (0xc0000000...) is folded onto the cached one, in the lifted code
 * (src/lift/mem.rs says why) and in the helpers alike. Like every guest C part, this file uses
 * the runtime's services only, never the C library, so it builds for every host (the freestanding
 * LoongArch64 one included).
 */
#include "cpu.h"

/* An uncached view's address folded onto the cached one (ppc_helpers.c). */
uint32_t rpt_ppc_cached_view(uint32_t ea);

/* Defined by the platform's C file: platform state built from the host's arguments. */
void rpt_ppc_platform_init(struct cpu *c, int argc, char **argv);

void rpt_guest_init(struct cpu *c, int argc, char **argv)
{
	/* The runtime has copied every segment to its own address; lifted code reaches a segment
	 * loaded through the uncached mirror at its cached address, so it goes there as well. */
	for (size_t i = 0; i < rpt_segment_count; i++) {
		const struct rpt_segment *s = &rpt_segments[i];
		uint32_t at = rpt_ppc_cached_view((uint32_t)s->addr);
		if (at != s->addr && s->size > 0)
			__builtin_memcpy(rpt_mem + at, s->bytes, (size_t)s->size);
	}
	/* FPSCR 0: round to nearest, every exception disabled, as the SDK's start-up leaves it. */
	c->fpscr = 0;
	rpt_ppc_platform_init(c, argc, argv);
}

/* A returning entry point ends the process with r3, the C return value. */
int rpt_guest_finish(struct cpu *c)
{
	return (int)c->r3;
}

/* A platform function is entered as `bl` left it: the link register holds the return address. */
uint64_t rpt_guest_caller(struct cpu *c)
{
	return c->lr;
}

/* The callers of a fault: lr (a leaf's return address), then the LR save word of each frame on the
 * SysV back chain (the caller's frame holds it at 4 bytes past its back-chain word). The chain
 * ends at a null or non-increasing link, or one implausibly far up the stack. */
size_t rpt_guest_return_candidates(struct cpu *c, uint64_t *out, size_t max)
{
	size_t n = 0;
	if (n < max)
		out[n++] = c->lr;
	uint32_t sp = c->r1;
	while (n < max) {
		uint32_t next = rpt_load_u32_be(sp);
		if (next <= sp || next - sp > 0x100000u)
			break;
		out[n++] = rpt_load_u32_be(next + 4);
		sp = next;
	}
	return n;
}

/* No exit reason is handled here: the runtime reports every one with its guest address. */
int rpt_guest_on_exit(struct cpu *c, uint64_t pc, int reason)
{
	(void)c;
	(void)pc;
	(void)reason;
	return 0;
}

/* FPSCR[RN] numbers the modes as RPT_ROUND_* does: nearest, zero, +inf, -inf. */
int rpt_guest_rounding(struct cpu *c)
{
	return (int)(c->fpscr & 3u);
}
