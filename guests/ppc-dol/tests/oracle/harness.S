/* harness.S - runs one oracle case: loads every register from the state block at STATE_BASE,
 * jumps to the case through the trampoline, and saves every register back when the case's
 * final `b save_state` arrives. r1 points at the state block while the case runs (cases never
 * use r1), so save_state has a base register. */
#include "harness.h"

	.text
	.globl run_case
run_case:
	stwu 1,-256(1)
	mflr 0
	stw 0,260(1)
	stmw 14,8(1)
	stfd 14,80(1)
	stfd 15,88(1)
	stfd 16,96(1)
	stfd 17,104(1)
	stfd 18,112(1)
	stfd 19,120(1)
	stfd 20,128(1)
	stfd 21,136(1)
	stfd 22,144(1)
	stfd 23,152(1)
	stfd 24,160(1)
	stfd 25,168(1)
	stfd 26,176(1)
	stfd 27,184(1)
	stfd 28,192(1)
	stfd 29,200(1)
	stfd 30,208(1)
	stfd 31,216(1)
	mfcr 0
	stw 0,224(1)
	lis 4,saved_sp@ha
	stw 1,saved_sp@l(4)

	lis 1,STATE_BASE@h
	ori 1,1,STATE_BASE@l
	/* FPSCR first, through f0 (its low word), then every FPR. */
	lwz 0,OFF_FPSCR(1)
	stw 0,OFF_TMP+4(1)
	lfd 0,OFF_TMP(1)
	mtfsf 0xff,0
	.irp n,0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31
	lfd \n,OFF_FPR+8*\n(1)
	.endr
	lwz 0,OFF_CR(1)
	mtcrf 0xff,0
	lwz 0,OFF_XER(1)
	mtxer 0
	lwz 0,OFF_LR(1)
	mtlr 0
	lwz 0,OFF_CTR(1)
	mtctr 0
	lwz 0,OFF_GPR(1)
	lmw 2,OFF_GPR+8(1)
	b harness_trampoline

	.globl save_state
save_state:
	stw 0,OFF_GPR(1)
	stmw 2,OFF_GPR+8(1)
	mfcr 0
	stw 0,OFF_CR(1)
	mfxer 0
	stw 0,OFF_XER(1)
	mflr 0
	stw 0,OFF_LR(1)
	mfctr 0
	stw 0,OFF_CTR(1)
	.irp n,0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31
	stfd \n,OFF_FPR+8*\n(1)
	.endr
	mffs 0
	stfd 0,OFF_TMP(1)
	lwz 0,OFF_TMP+4(1)
	stw 0,OFF_FPSCR(1)
	/* Back to the C caller with a clean FPSCR. */
	mtfsfi 7,0
	mtfsfi 6,0
	mtfsfi 5,0
	mtfsfi 4,0
	mtfsfi 3,0
	mtfsfi 2,0
	mtfsfi 1,0
	mtfsfi 0,0

	lis 3,saved_sp@ha
	lwz 1,saved_sp@l(3)
	lwz 0,224(1)
	mtcrf 0xff,0
	lfd 14,80(1)
	lfd 15,88(1)
	lfd 16,96(1)
	lfd 17,104(1)
	lfd 18,112(1)
	lfd 19,120(1)
	lfd 20,128(1)
	lfd 21,136(1)
	lfd 22,144(1)
	lfd 23,152(1)
	lfd 24,160(1)
	lfd 25,168(1)
	lfd 26,176(1)
	lfd 27,184(1)
	lfd 28,192(1)
	lfd 29,200(1)
	lfd 30,208(1)
	lfd 31,216(1)
	lmw 14,8(1)
	lwz 0,260(1)
	mtlr 0
	addi 1,1,256
	blr

	.section .sbss,"aw",@nobits
	.align 2
saved_sp:
	.space 4

	.section .note.GNU-stack,"",@progbits
