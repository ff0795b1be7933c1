/* paired_ops.S - hand-written paired-single routines for paired.c (Gekko/Broadway only:
 * assembled with `as -mgekko`; qemu-ppc cannot run them). Standard PowerPC EABI: arguments in
 * r3.., f1..; results in r3 or f1. GQR2..GQR4 are set by the caller (GQR3 must be the float type). */

	/* A fixed file symbol: without it the assembler names the temporary object, and builds differ. */
	.file "paired_ops.S"
	.text

/* float sum_u8(const u8 *p, int pairs): psq_l pairs through GQR2 (u8, scaled), summed in both
 * halves with ps_add, then the halves with ps_sum0. */
	.globl sum_u8
	.type sum_u8,@function
sum_u8:
	lis 9,zero_pair@ha
	addi 9,9,zero_pair@l
	psq_l 1,0(9),0,3        /* (0, 0) */
	mtctr 4
1:	psq_l 2,0(3),0,2
	ps_add 1,1,2
	addi 3,3,2
	bdnz 1b
	ps_sum0 1,1,1,1         /* ps0 = ps0 + ps1 */
	blr
	.size sum_u8,.-sum_u8

/* void scale_pairs(float *out, const float *in, int pairs, float s): out = in * s, using
 * ps_muls0 with s in ps0 of f1 (float pairs through GQR3 = 0). */
	.globl scale_pairs
	.type scale_pairs,@function
scale_pairs:
	mtctr 5
1:	psq_l 2,0(4),0,3
	ps_muls0 2,2,1
	psq_st 2,0(3),0,3
	addi 3,3,8
	addi 4,4,8
	bdnz 1b
	blr
	.size scale_pairs,.-scale_pairs

/* float dot_pairs(const float *a, const float *b, int pairs): ps_madd accumulation, ps_sum0. */
	.globl dot_pairs
	.type dot_pairs,@function
dot_pairs:
	lis 9,zero_pair@ha
	addi 9,9,zero_pair@l
	psq_l 1,0(9),0,3
	mtctr 5
1:	psq_l 2,0(3),0,3
	psq_l 3,0(4),0,3
	ps_madd 1,2,3,1
	addi 3,3,8
	addi 4,4,8
	bdnz 1b
	ps_sum0 1,1,1,1
	blr
	.size dot_pairs,.-dot_pairs

/* void quantize_s16(short *out, const float *in, int pairs): psq_st through GQR4 (s16, scaled). */
	.globl quantize_s16
	.type quantize_s16,@function
quantize_s16:
	mtctr 5
1:	psq_l 2,0(4),0,3
	psq_st 2,0(3),0,4
	addi 3,3,4
	addi 4,4,8
	bdnz 1b
	blr
	.size quantize_s16,.-quantize_s16

/* void select_merge(float *out, const float *a, const float *b): out[0..1] = ps_sel(a - b, a, b)
 * (the larger of each pair), out[2..3] = ps_merge10(a, b), out[4..5] = ps_neg(ps_abs(a)), and
 * returns in r3 the CR bits of ps_cmpu0 and ps_cmpu1 (cr1 in the low nibble from cr6/cr7). */
	.globl select_merge
	.type select_merge,@function
select_merge:
	psq_l 2,0(4),0,3
	psq_l 3,0(5),0,3
	ps_sub 4,2,3
	ps_sel 5,4,2,3
	psq_st 5,0(3),0,3
	ps_merge10 6,2,3
	psq_st 6,8(3),0,3
	ps_abs 7,2
	ps_neg 7,7
	psq_st 7,16(3),0,3
	ps_cmpu0 6,2,3
	ps_cmpu1 7,2,3
	mfcr 3
	andi. 3,3,0xff
	blr
	.size select_merge,.-select_merge

/* void estimates(float *out, float x): ps_res and ps_rsqrte of (x, 2x) as pairs, stored as floats
 * (out[0..1] reciprocal, out[2..3] reciprocal square root), then psq_st W=1 of 3x (out[4]). */
	.globl estimates
	.type estimates,@function
estimates:
	ps_merge00 2,1,1
	ps_add 3,2,2            /* (2x, 2x) */
	ps_merge00 2,1,3        /* (x, 2x) */
	ps_res 4,2
	psq_st 4,0(3),0,3
	ps_rsqrte 5,2
	psq_st 5,8(3),0,3
	ps_add 6,3,2            /* (3x, 4x) */
	psq_st 6,16(3),1,3
	blr
	.size estimates,.-estimates

	.section .rodata
	.align 3
zero_pair:
	.long 0, 0

	.section .note.GNU-stack,"",@progbits
