/*
 * start.c - process start-up for LoongArch64 Linux without a C library.
 *
 * The kernel enters `_start` with the stack pointer at argc, followed by the argv pointers, a NULL,
 * the environment pointers, a NULL and the auxiliary vector (the generic Linux ELF start-up layout).
 * `_start` clears the frame pointer and return address, so debuggers see the outermost frame, passes
 * that stack pointer to C, and C keeps the environment pointers for rpt_host_env, calls the
 * runtime's main and ends the process with its result.
 * Nothing needs initialising first: there is no C library, no thread-local storage, no constructor,
 * and the floating-point control register starts at round-to-nearest with no exceptions enabled.
 */
#include "rpt_host.h"

int main(int argc, char **argv);
_Noreturn void rpt_la64_start(uintptr_t *initial_sp);

__asm__(".text\n"
	".globl _start\n"
	".type _start, @function\n"
	"_start:\n"
	"	move $fp, $zero\n"
	"	move $ra, $zero\n"
	"	move $a0, $sp\n"
	/* The ABI wants 16-byte alignment at calls; the kernel already gives it, this makes sure. */
	"	bstrins.d $sp, $zero, 3, 0\n"
	"	bl rpt_la64_start\n"
	"	break 0\n"
	".size _start, . - _start\n");

/* The `NAME=value` strings the kernel put on the initial stack, NULL-terminated. */
static char **rpt_la64_envp;

_Noreturn void rpt_la64_start(uintptr_t *initial_sp)
{
	int argc = (int)initial_sp[0];
	char **argv = (char **)(initial_sp + 1);
	rpt_la64_envp = argv + argc + 1;
	rpt_host_exit(main(argc, argv));
}

const char *rpt_host_env(size_t i)
{
	for (size_t k = 0; k < i; k++)
		if (!rpt_la64_envp[k])
			return NULL;
	return rpt_la64_envp[i];
}
