/*
 * harness.c - runs x86 instruction sequences natively on this CPU for the instruction oracle
 * (tests/oracle.rs) and, built with -DHARNESS_X87, for the x87 oracle (tests/oracle_x87.rs), with
 * the x87 state added: `frstor` loads it before the code runs and `fnsave` reads it afterwards.
 *
 * Input, one case per line (hex, space-separated):
 *     <code bytes> <eax> <ecx> <edx> <ebx> <ebp> <esi> <edi> <eflags> <stack window bytes>
 *     and with HARNESS_X87 <fpu image: the 108-byte fsave layout>
 * The code is copied into an executable page and followed by `jmp [epilogue]`. esp starts at the
 * middle of a private stack whose 128-byte window [esp-64, esp+64) is filled from the input.
 * Output, one line per case:
 *     ok <esp_in> <eax> <ecx> <edx> <ebx> <esp> <ebp> <esi> <edi> <eflags> <window bytes>
 *     and with HARNESS_X87 <fpu image>
 * or  fault <signal>   (SIGFPE is the #DE of a division; others mean the case itself is broken).
 */
#include "harness_common.h"
#include <setjmp.h>

#define WINDOW 128
#define MAX_CODE 3072

#ifdef HARNESS_X87
#define FIELDS 11
#define LOAD_X87 "  frstor fpu_in\n"
#define STORE_X87 "  fnsave fpu_out\n"
uint8_t fpu_in[108], fpu_out[108];
#else
#define FIELDS 10
#define LOAD_X87 ""
#define STORE_X87 ""
#endif

struct regs {
	uint32_t eax, ecx, edx, ebx, esp, ebp, esi, edi, eflags;
};

/* Referenced by name from the assembly below, so they must be global and not optimised away. */
struct regs rin, rout;
void *code_page;

static uint8_t test_stack[65536] __attribute__((aligned(16)));
static sigjmp_buf trap;

HARNESS_RUN_CODE(rin, rout, "rin+16", "code_page", "", LOAD_X87, STORE_X87, "");

static void on_signal(int sig)
{
	siglongjmp(trap, sig);
}

/* Parses a run of hex digit pairs into at most `max` bytes; returns the byte count or -1. */
static int parse_bytes(const char *s, uint8_t *out, int max)
{
	size_t digits = strlen(s);
	if (digits % 2 != 0 || strspn(s, "0123456789abcdefABCDEF") != digits || digits / 2 > (size_t)max)
		return -1;
	for (size_t i = 0; i < digits / 2; i++)
		sscanf(s + 2 * i, "%2hhx", &out[i]);
	return (int)(digits / 2);
}

static void print_bytes(const uint8_t *bytes, int count)
{
	for (int i = 0; i < count; i++)
		printf("%02x", bytes[i]);
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
	catch_faults(on_signal);
	uint8_t *mid = test_stack + sizeof test_stack / 2;

	while (fgets(line, sizeof line, stdin)) {
		char *tok[FIELDS];
		int ntok = 0;
		for (char *t = strtok(line, " \t\r\n"); t && ntok < FIELDS; t = strtok(NULL, " \t\r\n"))
			tok[ntok++] = t;
		if (ntok != FIELDS) {
			fprintf(stderr, "harness: expected %d fields, got %d\n", FIELDS, ntok);
			return 2;
		}
		int len = parse_bytes(tok[0], code, MAX_CODE - 16);
		int bad = len < 0 || parse_bytes(tok[9], window, WINDOW) != WINDOW;
#ifdef HARNESS_X87
		bad = bad || parse_bytes(tok[10], fpu_in, sizeof fpu_in) != (int)sizeof fpu_in;
#endif
		if (bad) {
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

		memcpy(code_page, code, (size_t)len);
		end_with_jump_to_epilogue(code_page, (size_t)len);

		int sig = sigsetjmp(trap, 1);
		if (sig != 0) {
#ifdef HARNESS_X87
			__asm__ volatile("fninit");
#endif
			printf("fault %d\n", sig);
			continue;
		}
		run_code();
		printf("ok %08x %08x %08x %08x %08x %08x %08x %08x %08x %08x ", rin.esp, rout.eax, rout.ecx, rout.edx,
		       rout.ebx, rout.esp, rout.ebp, rout.esi, rout.edi, rout.eflags);
		print_bytes(mid - WINDOW / 2, WINDOW);
#ifdef HARNESS_X87
		printf(" ");
		print_bytes(fpu_out, sizeof fpu_out);
#endif
		printf("\n");
	}
	return 0;
}
