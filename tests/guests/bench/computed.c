/* computed.c - functions reached only through addresses computed at run time, which static
 * discovery cannot see: no word of the image and no instruction operand holds their addresses.
 * The recompiled program runs them in the run-time tier (rpt_api::tier, docs/c-abi.md "The
 * run-time tier"), and the tier hands back to compiled code wherever it calls some.
 *
 * - A table of offsets from an anchor function (the one function here whose address the C takes),
 *   written by the assembler as symbol differences, so the table holds small numbers, not
 *   addresses.
 * - A "vtable" built at run time from those offsets, called the way C++ calls virtual methods.
 * - Callbacks registered by name: a registry of (name, offset) pairs searched with a string
 *   compare, the way plugins and script bindings are found.
 *
 * The hidden functions exercise what the tier must get right: a loop, a switch (an indirect jump
 * through a table, inside code nobody lifted), a call of another hidden function, a call of
 * compiled code (printing), and a callback into compiled code passed as an argument.
 * Input: the number of rounds. */
#include "bench.h"

/* Assembler names of C symbols: mingw's i386 ABI prefixes an underscore. */
#if defined(_WIN32)
#define CSYM(name) "_" #name
#else
#define CSYM(name) #name
#endif

/* noipa: no inlining, cloning or other interprocedural change, so every hidden function is one
 * routine at its own symbol, called only as written. */
#define HIDDEN __attribute__((noipa))

typedef u32 (*op_fn)(u32);
typedef u32 (*combine_fn)(u32, op_fn);

/* The anchor: its address is taken (discovery finds it); every hidden function is an offset from it. */
HIDDEN u32 tier_anchor(u32 x)
{
	return x ^ 0x5a5a5a5au;
}

/* Compiled code a hidden function calls back. */
static u32 square_low(u32 x)
{
	return (x & 0xffff) * (x & 0xffff);
}

HIDDEN u32 tier_rotate(u32 x)
{
	return (x << 7) | (x >> 25);
}

/* Calls another hidden function directly. */
HIDDEN u32 tier_scramble(u32 x)
{
	for (int i = 0; i < 4; i++)
		x = x * 2654435761u + tier_rotate(x);
	return x;
}

/* A loop with a data-dependent trip count. */
HIDDEN u32 tier_collatz(u32 x)
{
	u32 n = (x & 0xffff) | 1, steps = 0;
	while (n != 1 && steps < 500) {
		n = (n & 1) ? 3 * n + 1 : n / 2;
		steps++;
	}
	return steps;
}

/* A switch dense enough for a jump table. */
HIDDEN u32 tier_classify(u32 x)
{
	switch (x % 9) {
	case 0: return x + 11;
	case 1: return x * 3;
	case 2: return x ^ 0xff00ff00u;
	case 3: return x >> 3;
	case 4: return ~x;
	case 5: return x * x;
	case 6: return x - 77;
	case 7: return x << 2;
	default: return x | 0x80000001u;
	}
}

/* Calls compiled code: printing. */
HIDDEN u32 tier_report(u32 x)
{
	bench_line("report", x);
	return x + 1;
}

/* Calls back into compiled code through a pointer it is given. */
HIDDEN u32 tier_combine(u32 x, op_fn f)
{
	return f(x) + f(x + 1);
}

/* The offsets of the hidden functions from the anchor, in this order. */
__asm__(".section .data\n"
	"\t.p2align 2\n" CSYM(tier_offsets) ":\n"
	"\t.long " CSYM(tier_rotate) "-" CSYM(tier_anchor) "\n"
	"\t.long " CSYM(tier_scramble) "-" CSYM(tier_anchor) "\n"
	"\t.long " CSYM(tier_collatz) "-" CSYM(tier_anchor) "\n"
	"\t.long " CSYM(tier_classify) "-" CSYM(tier_anchor) "\n"
	"\t.long " CSYM(tier_report) "-" CSYM(tier_anchor) "\n"
	"\t.long " CSYM(tier_combine) "-" CSYM(tier_anchor) "\n"
	"\t.text\n");
extern const s32 tier_offsets[6];

enum { ROTATE, SCRAMBLE, COLLATZ, CLASSIFY, REPORT, COMBINE };

static void *hidden(int which)
{
	return (char *)tier_anchor + tier_offsets[which];
}

/* A vtable filled in at run time, as a constructor fills one. */
struct shape_ops {
	op_fn area;
	op_fn perimeter;
};

struct shape {
	const struct shape_ops *ops;
	u32 size;
};

/* Callbacks registered by name. */
struct registration {
	const char *name;
	int which;
};

static const struct registration registry[] = {
	{ "rotate", ROTATE }, { "scramble", SCRAMBLE }, { "collatz", COLLATZ }, { "classify", CLASSIFY },
};

static int same(const char *a, const char *b)
{
	while (*a && *a == *b)
		a++, b++;
	return *a == *b;
}

static op_fn lookup(const char *name)
{
	for (u32 i = 0; i < sizeof registry / sizeof registry[0]; i++)
		if (same(registry[i].name, name))
			return (op_fn)hidden(registry[i].which);
	return tier_anchor;
}

int main(void)
{
	u32 rounds = bench_scale(3);
	struct shape_ops ops = { (op_fn)hidden(SCRAMBLE), (op_fn)hidden(CLASSIFY) };
	struct shape shapes[3] = { { &ops, 3 }, { &ops, 10 }, { &ops, 12345 } };
	static const char *const names[] = { "classify", "collatz", "rotate", "missing", "scramble" };
	u32 h = 0;
	for (u32 r = 0; r < rounds; r++) {
		for (int k = ROTATE; k <= CLASSIFY; k++)
			h = bench_mix(h, ((op_fn)hidden(k))(r * 2654435761u + (u32)k));
		for (int s = 0; s < 3; s++) {
			h = bench_mix(h, shapes[s].ops->area(shapes[s].size + r));
			h = bench_mix(h, shapes[s].ops->perimeter(shapes[s].size * r));
		}
		for (u32 n = 0; n < sizeof names / sizeof names[0]; n++)
			h = bench_mix(h, lookup(names[n])(h + n));
		h = bench_mix(h, ((combine_fn)hidden(COMBINE))(h, square_low));
		if (r % 4 == 0)
			h = bench_mix(h, ((op_fn)hidden(REPORT))(h));
	}
	bench_line("checksum", h);
	return 0;
}
