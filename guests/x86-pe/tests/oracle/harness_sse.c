/*
 * harness_sse.c - runs x86 SSE instruction sequences natively on this CPU for the SSE fuzzer
 * (tests/oracle_sse.rs). Built by the test with `gcc -m32 -msse2 -O1 -static`.
 *
 * Input (stdin, little-endian): a u32 case count, then per case a u32 code length, the code
 * bytes and a state block; output (stdout): the state block after each case. A state block is
 *     u32 gpr[8] (eax ecx edx ebx esp ebp esi edi; esp is ignored on input and output as 0),
 *     u32 eflags, u32 mxcsr, u8 xmm[8][16], u8 window[WINDOW]
 * The window lives at WINDOW_BASE, where the cases' memory operands point; the code runs at
 * CODE_BASE followed by `jmp [epilogue_ptr]`. MXCSR is the case's while it runs and the host's
 * again afterwards.
 */
#define _GNU_SOURCE 1
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define WINDOW 256
#define WINDOW_BASE 0x10000000u
#define CODE_BASE 0x20000000u
#define MAX_CODE 4000

struct state {
	uint32_t gpr[8];
	uint32_t eflags;
	uint32_t mxcsr;
	uint8_t xmm[8][16];
};

/* Referenced by name from the assembly below. */
struct state case_in, case_out;
uint32_t host_esp, host_mxcsr;
void *epilogue_ptr;
uint8_t scratch_stack[256] __attribute__((aligned(16)));
static uint8_t case_stack[4096] __attribute__((aligned(16)));
uint32_t case_esp;

void run_code(void);
void epilogue(void);

/* offsets: gpr 0, eflags 32, mxcsr 36, xmm 40 + 16 * n */
__asm__(".text\n"
	".globl run_code\n"
	"run_code:\n"
	"  pushal\n"
	"  pushfl\n"
	"  stmxcsr host_mxcsr\n"
	"  movl %esp, host_esp\n"
	"  ldmxcsr case_in+36\n"
	"  movdqu case_in+40, %xmm0\n"
	"  movdqu case_in+56, %xmm1\n"
	"  movdqu case_in+72, %xmm2\n"
	"  movdqu case_in+88, %xmm3\n"
	"  movdqu case_in+104, %xmm4\n"
	"  movdqu case_in+120, %xmm5\n"
	"  movdqu case_in+136, %xmm6\n"
	"  movdqu case_in+152, %xmm7\n"
	"  pushl case_in+32\n"
	"  popfl\n"
	"  movl case_in+0, %eax\n"
	"  movl case_in+4, %ecx\n"
	"  movl case_in+8, %edx\n"
	"  movl case_in+12, %ebx\n"
	"  movl case_in+20, %ebp\n"
	"  movl case_in+24, %esi\n"
	"  movl case_in+28, %edi\n"
	"  movl case_esp, %esp\n"
	"  jmp *code_ptr\n"
	".globl epilogue\n"
	"epilogue:\n"
	"  movl %eax, case_out+0\n"
	"  movl %ecx, case_out+4\n"
	"  movl %edx, case_out+8\n"
	"  movl %ebx, case_out+12\n"
	"  movl %ebp, case_out+20\n"
	"  movl %esi, case_out+24\n"
	"  movl %edi, case_out+28\n"
	"  movdqu %xmm0, case_out+40\n"
	"  movdqu %xmm1, case_out+56\n"
	"  movdqu %xmm2, case_out+72\n"
	"  movdqu %xmm3, case_out+88\n"
	"  movdqu %xmm4, case_out+104\n"
	"  movdqu %xmm5, case_out+120\n"
	"  movdqu %xmm6, case_out+136\n"
	"  movdqu %xmm7, case_out+152\n"
	"  stmxcsr case_out+36\n"
	"  movl $scratch_stack+128, %esp\n"
	"  pushfl\n"
	"  popl case_out+32\n"
	"  ldmxcsr host_mxcsr\n"
	"  movl host_esp, %esp\n"
	"  popfl\n"
	"  popal\n"
	"  cld\n"
	"  ret\n");

void *code_ptr = (void *)CODE_BASE;

static void on_signal(int sig)
{
	fprintf(stderr, "harness_sse: signal %d in a case\n", sig);
	_exit(3);
}

static void read_exact(void *p, size_t n)
{
	if (fread(p, 1, n, stdin) != n) {
		fprintf(stderr, "harness_sse: short input\n");
		exit(2);
	}
}

static uint32_t read_u32(void)
{
	uint8_t b[4];
	read_exact(b, 4);
	return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

int main(void)
{
	uint8_t *code = mmap((void *)CODE_BASE, MAX_CODE + 16, PROT_READ | PROT_WRITE | PROT_EXEC,
			     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	uint8_t *window = mmap((void *)WINDOW_BASE, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
			       -1, 0);
	if (code == MAP_FAILED || window == MAP_FAILED) {
		perror("mmap");
		return 2;
	}
	epilogue_ptr = (void *)epilogue;
	case_esp = (uint32_t)(uintptr_t)(case_stack + sizeof case_stack / 2);
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGFPE, &sa, NULL);
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGILL, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);

	uint32_t count = read_u32();
	for (uint32_t i = 0; i < count; i++) {
		uint32_t len = read_u32();
		if (len > MAX_CODE) {
			fprintf(stderr, "harness_sse: case %u has %u code bytes\n", i, len);
			return 2;
		}
		read_exact(code, len);
		/* jmp dword ptr [epilogue_ptr] */
		code[len] = 0xff;
		code[len + 1] = 0x25;
		uint32_t target = (uint32_t)(uintptr_t)&epilogue_ptr;
		memcpy(code + len + 2, &target, 4);
		read_exact(&case_in, sizeof case_in);
		read_exact(window, WINDOW);
		run_code();
		case_out.gpr[4] = 0;
		fwrite(&case_out, 1, sizeof case_out, stdout);
		fwrite(window, 1, WINDOW, stdout);
	}
	return 0;
}
