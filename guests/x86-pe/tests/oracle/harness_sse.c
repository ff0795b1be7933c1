/*
 * harness_sse.c - runs x86 SSE instruction sequences natively on this CPU for the SSE fuzzer
 * (tests/oracle_sse.rs). Built by the test with `gcc -m32 -msse2 -O1 -static`.
 *
 * Input (stdin, little-endian): a u32 case count, then per case a u32 code length, the code
 * bytes and a state block; output (stdout): the state block after each case. A state block is
 *     u32 gpr[8] (eax ecx edx ebx esp ebp esi edi; esp is ignored on input and output as 0),
 *     u32 eflags, u32 mxcsr, u8 xmm[8][16], u8 window[WINDOW]
 * The window lives at WINDOW_BASE, where the cases' memory operands point; the code runs at
 * CODE_BASE followed by `jmp [epilogue_ptr]` (harness_common.h). MXCSR is the case's while it
 * runs and the host's again afterwards.
 */
#include "harness_common.h"

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
uint32_t host_mxcsr;
static uint8_t case_stack[4096] __attribute__((aligned(16)));
uint32_t case_esp;
void *code_ptr = (void *)CODE_BASE;

/* offsets: gpr 0, eflags 32, mxcsr 36, xmm 40 + 16 * n */
#define XMM_MOVES(direction) \
	direction(0, 40) direction(1, 56) direction(2, 72) direction(3, 88) \
	direction(4, 104) direction(5, 120) direction(6, 136) direction(7, 152)
#define XMM_IN(n, off) "  movdqu case_in+" #off ", %xmm" #n "\n"
#define XMM_OUT(n, off) "  movdqu %xmm" #n ", case_out+" #off "\n"

HARNESS_RUN_CODE(case_in, case_out, "case_esp", "code_ptr", "  stmxcsr host_mxcsr\n",
		 "  ldmxcsr case_in+36\n" XMM_MOVES(XMM_IN), XMM_MOVES(XMM_OUT) "  stmxcsr case_out+36\n",
		 "  ldmxcsr host_mxcsr\n");

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
	catch_faults(on_signal);

	uint32_t count = read_u32();
	for (uint32_t i = 0; i < count; i++) {
		uint32_t len = read_u32();
		if (len > MAX_CODE) {
			fprintf(stderr, "harness_sse: case %u has %u code bytes\n", i, len);
			return 2;
		}
		read_exact(code, len);
		end_with_jump_to_epilogue(code, len);
		read_exact(&case_in, sizeof case_in);
		read_exact(window, WINDOW);
		run_code();
		case_out.gpr[4] = 0;
		fwrite(&case_out, 1, sizeof case_out, stdout);
		fwrite(window, 1, WINDOW, stdout);
	}
	return 0;
}
