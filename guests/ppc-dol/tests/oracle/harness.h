/* harness.h - the layout shared by the oracle harness (harness.c, harness.S) and the Rust test
 * (tests/oracle.rs): fixed guest addresses and the state block, all big-endian. */
#ifndef HARNESS_H
#define HARNESS_H

/* Where things live in the guest's address space, identical under qemu and in rpt. */
#define STATE_BASE 0x80780000u  /* the state block; r1 points here while a case runs */
#define WINDOW_BASE 0x80700100u /* the memory window cases load from and store to */
#define WINDOW_SIZE 1024u
#define TRAMPOLINE 0x807ff000u  /* a `b` to the current case, rewritten before each run */
#define CODE_BASE 0x80800000u   /* case i's code starts at CODE_BASE + i * CASE_STRIDE */
#define CASE_STRIDE 256u
#define MAX_CASES 8192u

/* Offsets in the state block. */
#define OFF_GPR 0
#define OFF_FPR 128
#define OFF_CR 384
#define OFF_XER 388
#define OFF_LR 392
#define OFF_CTR 396
#define OFF_FPSCR 400
#define OFF_TMP 408
#define OFF_WINDOW 416
#define STATE_SIZE (OFF_WINDOW + WINDOW_SIZE)

#endif
