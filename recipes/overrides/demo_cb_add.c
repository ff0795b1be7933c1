/*
 * An override for recipes/demo-x86.ron: the guest function cb_add (0x004014b0) written by hand in C.
 *
 * cb_add is `u32 cb_add(u32 a, u32 b) { return a + b; }`, compiled by mingw as cdecl:
 *   mov eax, [esp+8]; mov edx, [esp+4]; add eax, edx; ret
 * A replacement has the signature of every lifted function (docs/c-abi.md): it takes its arguments
 * from guest state and memory, leaves its results there, and pops the return address as `ret` does.
 * It sets eax and edx as the original does; the flags of the `add` are left alone because the
 * callers (compiled C) never read flags across a call.
 */
#include "cpu.h"

void demo_cb_add(struct cpu *restrict c)
{
	uint8_t *const mb = rpt_mem;
	uint32_t a = rpt_load_u32_le_at(mb, c->esp + 4);
	uint32_t b = rpt_load_u32_le_at(mb, c->esp + 8);
	c->edx = a;
	c->eax = a + b;
	c->esp += 4;
}
