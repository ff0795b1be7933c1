/*
 * harness_x87.c - runs x87 instruction sequences natively on this CPU for the x87 oracle
 * (tests/oracle_x87.rs). Built by the test with `gcc -m32 -O1 -static`. It is harness.c with the
 * x87 state added: `frstor` loads it before the code runs and `fnsave` reads it afterwards.
 *
 * Input, one case per line (hex, space-separated):
 *     <code bytes> <eax> <ecx> <edx> <ebx> <ebp> <esi> <edi> <eflags> <stack window bytes>
 *     <fpu image: the 108-byte fsave layout>
 * The code is copied into an executable page and followed by `jmp [epilogue]`. esp starts at the
 * middle of a private stack whose 128-byte window [esp-64, esp+64) is filled from the input.
 * Output, one line per case:
 *     ok <esp_in> <eax> <ecx> <edx> <ebx> <esp> <ebp> <esi> <edi> <eflags> <window bytes> <fpu image>
 * or  fault <signal>   (SIGFPE is the #DE of a division; others mean the case itself is broken).
 */
#define _GNU_SOURCE 1
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define WINDOW 128
#define MAX_CODE 3072

struct regs {
	uint32_t eax, ecx, edx, ebx, esp, ebp, esi, edi, eflags;
};

/* Referenced by name from the assembly below, so they must be global and not optimised away. */
struct regs rin, rout;
uint8_t fpu_in[108], fpu_out[108];
uint32_t host_esp;
void *code_page;
void *epilogue_ptr;
uint8_t scratch_stack[256] __attribute__((aligned(16)));

static uint8_t test_stack[65536] __attribute__((aligned(16)));
static sigjmp_buf trap;

void run_code(void);
void epilogue(void);

/*
 * run_code saves every host register, loads the case's flags (on the host stack, so the test
 * stack is untouched) and registers, and jumps to the code. The code's trailing `jmp [epilogue_ptr]` comes back to epilogue, which stores the
 * registers, switches to a scratch stack (so saving the flags does not write the test stack),
 * stores the flags, and returns to run_code's caller with the host registers restored.
 */
__asm__(".text\n"
	".globl run_code\n"
	"run_code:\n"
	"  pushal\n"
	"  pushfl\n"
	"  movl %esp, host_esp\n"
	"  frstor fpu_in\n"
	"  pushl rin+32\n"
	"  popfl\n"
	"  movl rin+0, %eax\n"
	"  movl rin+4, %ecx\n"
	"  movl rin+8, %edx\n"
	"  movl rin+12, %ebx\n"
	"  movl rin+20, %ebp\n"
	"  movl rin+24, %esi\n"
	"  movl rin+28, %edi\n"
	"  movl rin+16, %esp\n"
	"  jmp *code_page\n"
	".globl epilogue\n"
	"epilogue:\n"
	"  fnsave fpu_out\n"
	"  movl %eax, rout+0\n"
	"  movl %ecx, rout+4\n"
	"  movl %edx, rout+8\n"
	"  movl %ebx, rout+12\n"
	"  movl %esp, rout+16\n"
	"  movl %ebp, rout+20\n"
	"  movl %esi, rout+24\n"
	"  movl %edi, rout+28\n"
	"  movl $scratch_stack+128, %esp\n"
	"  pushfl\n"
	"  popl rout+32\n"
	"  movl host_esp, %esp\n"
	"  popfl\n"
	"  popal\n"
	"  cld\n"
	"  ret\n");

static void on_signal(int sig)
{
	siglongjmp(trap, sig);
}

static int hexval(int ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

/* Parses a run of hex digit pairs; returns the byte count or -1. */
static int parse_bytes(const char *s, uint8_t *out, int max)
{
	int n = 0;
	while (s[0] && s[1]) {
		int hi = hexval(s[0]), lo = hexval(s[1]);
		if (hi < 0 || lo < 0 || n >= max)
			return -1;
		out[n++] = (uint8_t)(hi << 4 | lo);
		s += 2;
	}
	return s[0] ? -1 : n;
}

int main(void)
{
	static char line[16384];
	uint8_t code[MAX_CODE], window[WINDOW];
	code_page = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (code_page == MAP_FAILED) {
		perror("mmap");
		return 2;
	}
	epilogue_ptr = (void *)epilogue;
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGFPE, &sa, NULL);
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGILL, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
	sigaction(SIGTRAP, &sa, NULL);
	uint8_t *mid = test_stack + sizeof test_stack / 2;

	while (fgets(line, sizeof line, stdin)) {
		char *tok[11];
		int ntok = 0;
		for (char *t = strtok(line, " \t\r\n"); t && ntok < 11; t = strtok(NULL, " \t\r\n"))
			tok[ntok++] = t;
		if (ntok != 11) {
			fprintf(stderr, "harness: expected 11 fields, got %d\n", ntok);
			return 2;
		}
		int len = parse_bytes(tok[0], code, MAX_CODE - 16);
		if (len < 0 || parse_bytes(tok[9], window, WINDOW) != WINDOW ||
		    parse_bytes(tok[10], fpu_in, sizeof fpu_in) != (int)sizeof fpu_in) {
			fprintf(stderr, "harness: bad hex field\n");
			return 2;
		}
		uint32_t v[8];
		for (int i = 0; i < 8; i++)
			v[i] = (uint32_t)strtoul(tok[1 + i], NULL, 16);
		rin.eax = v[0];
		rin.ecx = v[1];
		rin.edx = v[2];
		rin.ebx = v[3];
		rin.ebp = v[4];
		rin.esi = v[5];
		rin.edi = v[6];
		/* Only the six arithmetic flags, DF and the always-one bit 1: TF or AC would trap. */
		rin.eflags = (v[7] & 0x0cd5u) | 0x2u;
		rin.esp = (uint32_t)(uintptr_t)mid;
		memcpy(mid - WINDOW / 2, window, WINDOW);

		uint8_t *page = code_page;
		memcpy(page, code, (size_t)len);
		page[len] = 0xff; /* jmp [epilogue_ptr] */
		page[len + 1] = 0x25;
		uint32_t slot = (uint32_t)(uintptr_t)&epilogue_ptr;
		memcpy(page + len + 2, &slot, 4);

		int sig = sigsetjmp(trap, 1);
		if (sig != 0) {
			__asm__ volatile("fninit");
			printf("fault %d\n", sig);
			continue;
		}
		run_code();
		printf("ok %08x %08x %08x %08x %08x %08x %08x %08x %08x %08x ", rin.esp, rout.eax, rout.ecx, rout.edx,
		       rout.ebx, rout.esp, rout.ebp, rout.esi, rout.edi, rout.eflags);
		for (int i = 0; i < WINDOW; i++)
			printf("%02x", mid[i - WINDOW / 2]);
		printf(" ");
		for (int i = 0; i < (int)sizeof fpu_out; i++)
			printf("%02x", fpu_out[i]);
		printf("\n");
	}
	return 0;
}
