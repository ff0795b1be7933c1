/*
 * harness_common.h - what the native x86 harnesses (harness.c, harness_sse.c) share: the code
 * that enters a case with its registers and flags and comes back with the host's, the jump that
 * ends each case, and fault handling. Both are built with `gcc -m32 -O1 -static`.
 *
 * A case's register block is eight u32 GPRs (eax ecx edx ebx esp ebp esi edi) and then EFLAGS at
 * offset 32. `run_code` saves every host register, lets the harness load its extra state, loads
 * the case's flags (on the host stack, so the test stack is untouched) and registers, and jumps to
 * the code. The code's trailing `jmp [epilogue_ptr]` comes back to `epilogue`, which stores the
 * registers and the extra state, switches to a scratch stack (so saving the flags does not write
 * the test stack), stores the flags, and returns to run_code's caller with the host's registers.
 */
#ifndef HARNESS_COMMON_H
#define HARNESS_COMMON_H

#define _GNU_SOURCE 1
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* Referenced by name from the assembly of HARNESS_RUN_CODE, so global and never optimised away. */
uint32_t host_esp;
void *epilogue_ptr;
uint8_t scratch_stack[256] __attribute__((aligned(16)));

void run_code(void);
void epilogue(void);

/*
 * The assembly of run_code and epilogue for the register blocks `in` and `out`: `load_extra` and
 * `store_extra` move the harness's own state (the x87 unit, xmm registers and MXCSR) in and out,
 * `save_host` and `restore_host` keep the host's copy of what load_extra changes, `stack` is
 * where the case's esp comes from and `code` the pointer to the case's code.
 */
#define HARNESS_RUN_CODE(in, out, stack, code, save_host, load_extra, store_extra, restore_host) \
	__asm__(".text\n"                                                                      \
		".globl run_code\n"                                                            \
		"run_code:\n"                                                                  \
		"  pushal\n"                                                                   \
		"  pushfl\n" save_host "  movl %esp, host_esp\n" load_extra                    \
		"  pushl " #in "+32\n"                                                         \
		"  popfl\n"                                                                    \
		"  movl " #in "+0, %eax\n"                                                     \
		"  movl " #in "+4, %ecx\n"                                                     \
		"  movl " #in "+8, %edx\n"                                                     \
		"  movl " #in "+12, %ebx\n"                                                    \
		"  movl " #in "+20, %ebp\n"                                                    \
		"  movl " #in "+24, %esi\n"                                                    \
		"  movl " #in "+28, %edi\n"                                                    \
		"  movl " stack ", %esp\n"                                                     \
		"  jmp *" code "\n"                                                            \
		".globl epilogue\n"                                                            \
		"epilogue:\n"                                                                  \
		"  movl %eax, " #out "+0\n"                                                    \
		"  movl %ecx, " #out "+4\n"                                                    \
		"  movl %edx, " #out "+8\n"                                                    \
		"  movl %ebx, " #out "+12\n"                                                   \
		"  movl %esp, " #out "+16\n"                                                   \
		"  movl %ebp, " #out "+20\n"                                                   \
		"  movl %esi, " #out "+24\n"                                                   \
		"  movl %edi, " #out "+28\n" store_extra "  movl $scratch_stack+128, %esp\n"   \
		"  pushfl\n"                                                                   \
		"  popl " #out "+32\n" restore_host "  movl host_esp, %esp\n"                  \
		"  popfl\n"                                                                    \
		"  popal\n"                                                                    \
		"  cld\n"                                                                      \
		"  ret\n")

/* Ends the `len` bytes of code at `code` with `jmp dword ptr [epilogue_ptr]`. */
static void end_with_jump_to_epilogue(uint8_t *code, size_t len)
{
	uint32_t slot = (uint32_t)(uintptr_t)&epilogue_ptr;
	code[len] = 0xff;
	code[len + 1] = 0x25;
	memcpy(code + len + 2, &slot, 4);
}

/* Sends the signals a case can raise to `handler`. */
static void catch_faults(void (*handler)(int))
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = handler;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGFPE, &sa, NULL);
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGILL, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
	sigaction(SIGTRAP, &sa, NULL);
}

#endif
