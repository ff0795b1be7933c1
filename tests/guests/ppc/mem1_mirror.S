/* mem1_mirror.S - stores 42 through MEM1's cached address 0x80100000, loads it back through the
 * uncached mirror 0xc0100000 and exits with it (Linux exit through sc). On a GameCube both
 * addresses are the same memory; rpt folds the uncached address onto the cached one. The addresses
 * are constants, so a C compiler that saw two different addresses could move the load above the
 * store. (qemu-ppc has no such mirror: rpt only.) */
	.file "mem1_mirror.S"
	.text
	.globl _start
_start:
	lis 3,0x8010
	li 4,42
	stw 4,0(3)
	lis 5,0xc010
	lwz 3,0(5)
	li 0,1
	sc
1:	b 1b
	.section .note.GNU-stack,"",@progbits
