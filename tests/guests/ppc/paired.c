/* paired.c - drives the paired-single routines of paired_ops.S (GameCube/Wii only; qemu-ppc has
 * no paired singles). Its expected output, paired.expected, was worked out from Gekko's documented
 * behaviour (tests/guests/ppc/README.md says how), and rpt's recompiled DOL must print exactly it. */
#include "rt.h"

float sum_u8(const unsigned char *p, int pairs);
void scale_pairs(float *out, const float *in, int pairs, float s);
float dot_pairs(const float *a, const float *b, int pairs);
void quantize_s16(short *out, const float *in, int pairs);
u32 select_merge(float *out, const float *a, const float *b);
void estimates(float *out, float x);

#define SET_GQR(n, v) __asm__ volatile("mtspr %0, %1" ::"i"(912 + (n)), "r"(v))

static void show(const char *name, float f)
{
	rt_puts(name);
	rt_puts(" = ");
	rt_put_float_bits(f);
	rt_nl();
}

static unsigned char bytes[16];
static float in[8] = { 1.5f, -2.25f, 3.0f, 0.125f, 100.0f, -0.5f, 7.75f, 1e-3f };
static float other[8] = { 0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f, 0.7f, 0.8f };
static float out[8];
static short q[8];

int main(void)
{
	rt_puts("ppc paired-single sample\n");
	/* GQR2: load u8 scale 4; GQR3: float; GQR4: store s16 scale 8. */
	SET_GQR(2, (4u << 24) | (4u << 16));
	SET_GQR(3, 0u);
	SET_GQR(4, (8u << 8) | 7u);
	for (int i = 0; i < 16; i++)
		bytes[i] = (unsigned char)(i * 37 + 5);
	show("sum_u8", sum_u8(bytes, 8));

	scale_pairs(out, in, 4, 0.5f);
	for (int i = 0; i < 8; i++)
		show("scaled", out[i]);

	show("dot", dot_pairs(in, other, 4));

	quantize_s16(q, in, 4);
	for (int i = 0; i < 8; i++) {
		rt_puts("s16 = ");
		rt_put_hex32((u32)(unsigned short)q[i]);
		rt_nl();
	}

	u32 cr = select_merge(out, in, other);
	for (int i = 0; i < 6; i++)
		show("sel/merge/nabs", out[i]);
	rt_puts("cr6:7 = ");
	rt_put_hex32(cr);
	rt_nl();

	estimates(out, 3.0f);
	for (int i = 0; i < 5; i++)
		show("estimate", out[i]);
	rt_puts("done\n");
	return 0;
}
