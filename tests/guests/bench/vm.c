/* vm.c - a bytecode interpreter: a stack machine with locals, calls and a word heap, dispatched
 * through one switch (a jump table on both guests), running three programs written in its bytecode:
 * a sieve of Eratosthenes, recursive Fibonacci and Collatz step counts. Input: the number of rounds. */
#include "bench.h"

enum op {
	OP_HALT, OP_PUSH, OP_LOAD, OP_STORE, OP_ADD, OP_SUB, OP_MUL, OP_DIVU, OP_MODU, OP_AND, OP_OR,
	OP_XOR, OP_SHL, OP_SHR, OP_LTU, OP_EQ, OP_JMP, OP_JZ, OP_JNZ, OP_CALL, OP_RET, OP_DUP, OP_DROP,
	OP_HLOAD, OP_HSTORE,
};

#define CODE_WORDS 1024
#define STACK_WORDS 1024
#define FRAMES 256
#define LOCALS 8
#define HEAP_WORDS (1u << 16)

static s32 code[CODE_WORDS];
static u32 code_len;
static u32 heap[HEAP_WORDS];

struct frame {
	u32 return_pc;
	u32 locals[LOCALS];
};

static struct frame frames[FRAMES];
static u32 stack[STACK_WORDS];

static u32 emit(enum op op)
{
	code[code_len] = op;
	return code_len++;
}

static u32 emit1(enum op op, s32 arg)
{
	u32 at = emit(op);
	code[code_len++] = arg;
	return at;
}

/* The address of the next instruction, for backward jumps. */
static s32 here(void)
{
	return (s32)code_len;
}

/* Points the forward jump emitted at `at` to the next instruction. */
static void patch(u32 at)
{
	code[at + 1] = (s32)code_len;
}

/* Runs the function at `entry` with one argument until it returns, and gives its result. */
static u32 vm_run(u32 entry, u32 arg)
{
	u32 pc = entry, sp = 0, fp = 0;
	frames[0].locals[0] = arg;
	for (;;) {
		s32 op = code[pc++];
		u32 a, b;
		switch (op) {
		case OP_HALT:
			return sp ? stack[sp - 1] : 0;
		case OP_PUSH:
			stack[sp++] = (u32)code[pc++];
			break;
		case OP_LOAD:
			stack[sp++] = frames[fp].locals[code[pc++]];
			break;
		case OP_STORE:
			frames[fp].locals[code[pc++]] = stack[--sp];
			break;
		case OP_ADD: b = stack[--sp]; a = stack[sp - 1]; stack[sp - 1] = a + b; break;
		case OP_SUB: b = stack[--sp]; a = stack[sp - 1]; stack[sp - 1] = a - b; break;
		case OP_MUL: b = stack[--sp]; a = stack[sp - 1]; stack[sp - 1] = a * b; break;
		case OP_DIVU: b = stack[--sp]; a = stack[sp - 1]; stack[sp - 1] = b ? a / b : 0; break;
		case OP_MODU: b = stack[--sp]; a = stack[sp - 1]; stack[sp - 1] = b ? a % b : a; break;
		case OP_AND: b = stack[--sp]; a = stack[sp - 1]; stack[sp - 1] = a & b; break;
		case OP_OR: b = stack[--sp]; a = stack[sp - 1]; stack[sp - 1] = a | b; break;
		case OP_XOR: b = stack[--sp]; a = stack[sp - 1]; stack[sp - 1] = a ^ b; break;
		case OP_SHL: b = stack[--sp]; a = stack[sp - 1]; stack[sp - 1] = a << (b & 31); break;
		case OP_SHR: b = stack[--sp]; a = stack[sp - 1]; stack[sp - 1] = a >> (b & 31); break;
		case OP_LTU: b = stack[--sp]; a = stack[sp - 1]; stack[sp - 1] = a < b; break;
		case OP_EQ: b = stack[--sp]; a = stack[sp - 1]; stack[sp - 1] = a == b; break;
		case OP_JMP:
			pc = (u32)code[pc];
			break;
		case OP_JZ:
			pc = stack[--sp] ? pc + 1 : (u32)code[pc];
			break;
		case OP_JNZ:
			pc = stack[--sp] ? (u32)code[pc] : pc + 1;
			break;
		case OP_CALL:
			/* One argument, passed in the callee's first local. */
			fp++;
			frames[fp].return_pc = pc + 1;
			frames[fp].locals[0] = stack[--sp];
			pc = (u32)code[pc];
			break;
		case OP_RET:
			if (fp == 0)
				return stack[sp - 1];
			pc = frames[fp].return_pc;
			fp--;
			break;
		case OP_DUP:
			stack[sp] = stack[sp - 1];
			sp++;
			break;
		case OP_DROP:
			sp--;
			break;
		case OP_HLOAD:
			stack[sp - 1] = heap[stack[sp - 1] & (HEAP_WORDS - 1)];
			break;
		case OP_HSTORE:
			b = stack[--sp];
			a = stack[--sp];
			heap[a & (HEAP_WORDS - 1)] = b;
			break;
		default:
			return 0xdeadu;
		}
	}
}

/* Pushes `local op k`. */
static void emit_local_const(s32 local, enum op op, s32 k)
{
	emit1(OP_LOAD, local);
	emit1(OP_PUSH, k);
	emit(op);
}

/* Pushes `a op b` for locals a and b. */
static void emit_locals(s32 a, enum op op, s32 b)
{
	emit1(OP_LOAD, a);
	emit1(OP_LOAD, b);
	emit(op);
}

/* local = k. */
static void emit_set(s32 local, s32 k)
{
	emit1(OP_PUSH, k);
	emit1(OP_STORE, local);
}

/* local = local + 1. */
static void emit_increment(s32 local)
{
	emit_local_const(local, OP_ADD, 1);
	emit1(OP_STORE, local);
}

/* sieve(limit): the number of primes below limit. Locals: 0 limit, 1 i, 2 j, 3 count. */
static u32 assemble_sieve(void)
{
	u32 entry = code_len;
	emit_set(1, 0);
	s32 init = here();
	emit_locals(1, OP_LTU, 0);
	u32 init_done = emit1(OP_JZ, 0);
	emit_local_const(1, OP_HSTORE, 1); /* heap[i] = 1 */
	emit_increment(1);
	emit1(OP_JMP, init);
	patch(init_done);
	emit_set(1, 2);
	s32 outer = here();
	emit_locals(1, OP_MUL, 1);
	emit1(OP_LOAD, 0);
	emit(OP_LTU);
	u32 outer_done = emit1(OP_JZ, 0);
	emit1(OP_LOAD, 1);
	emit(OP_HLOAD);
	u32 not_prime = emit1(OP_JZ, 0);
	emit_locals(1, OP_MUL, 1);
	emit1(OP_STORE, 2);
	s32 inner = here();
	emit_locals(2, OP_LTU, 0);
	u32 inner_done = emit1(OP_JZ, 0);
	emit_local_const(2, OP_HSTORE, 0); /* heap[j] = 0 */
	emit_locals(2, OP_ADD, 1);
	emit1(OP_STORE, 2);
	emit1(OP_JMP, inner);
	patch(inner_done);
	patch(not_prime);
	emit_increment(1);
	emit1(OP_JMP, outer);
	patch(outer_done);
	emit_set(3, 0);
	emit_set(1, 2);
	s32 count = here();
	emit_locals(1, OP_LTU, 0);
	u32 count_done = emit1(OP_JZ, 0);
	emit1(OP_LOAD, 3);
	emit1(OP_LOAD, 1);
	emit(OP_HLOAD);
	emit(OP_ADD);
	emit1(OP_STORE, 3);
	emit_increment(1);
	emit1(OP_JMP, count);
	patch(count_done);
	emit1(OP_LOAD, 3);
	emit(OP_RET);
	return entry;
}

/* fib(n), recursively. Locals: 0 n. */
static u32 assemble_fib(void)
{
	u32 entry = code_len;
	emit_local_const(0, OP_LTU, 2);
	u32 recurse = emit1(OP_JZ, 0);
	emit1(OP_LOAD, 0);
	emit(OP_RET);
	patch(recurse);
	emit_local_const(0, OP_SUB, 1);
	emit1(OP_CALL, (s32)entry);
	emit_local_const(0, OP_SUB, 2);
	emit1(OP_CALL, (s32)entry);
	emit(OP_ADD);
	emit(OP_RET);
	return entry;
}

/* collatz(k): the total Collatz steps of 1..k-1. Locals: 0 k, 1 n, 2 steps, 3 x. */
static u32 assemble_collatz(void)
{
	u32 entry = code_len;
	emit_set(2, 0);
	emit_set(1, 1);
	s32 outer = here();
	emit_locals(1, OP_LTU, 0);
	u32 done = emit1(OP_JZ, 0);
	emit1(OP_LOAD, 1);
	emit1(OP_STORE, 3);
	s32 step = here();
	emit_local_const(3, OP_EQ, 1);
	u32 reached_one = emit1(OP_JNZ, 0);
	emit_local_const(3, OP_AND, 1);
	u32 even = emit1(OP_JZ, 0);
	emit_local_const(3, OP_MUL, 3);
	emit1(OP_PUSH, 1);
	emit(OP_ADD);
	emit1(OP_STORE, 3);
	u32 counted = emit1(OP_JMP, 0);
	patch(even);
	emit_local_const(3, OP_SHR, 1);
	emit1(OP_STORE, 3);
	patch(counted);
	emit_increment(2);
	emit1(OP_JMP, step);
	patch(reached_one);
	emit_increment(1);
	emit1(OP_JMP, outer);
	patch(done);
	emit1(OP_LOAD, 2);
	emit(OP_RET);
	return entry;
}

int main(void)
{
	u32 rounds = bench_scale(1);
	u32 sieve = assemble_sieve();
	u32 fib = assemble_fib();
	u32 collatz = assemble_collatz();
	u32 sum = 0x811c9dc5u;
	u32 primes = 0, fibs = 0, steps = 0;
	for (u32 r = 0; r < rounds; r++) {
		primes = vm_run(sieve, 20000 + r * 7);
		fibs = vm_run(fib, 16 + r % 4);
		steps = vm_run(collatz, 1500 + r * 3);
		sum = bench_mix(bench_mix(bench_mix(sum, primes), fibs), steps);
	}
	bench_line("primes", primes);
	bench_line("fib", fibs);
	bench_line("collatz", steps);
	bench_line("checksum", sum);
	return 0;
}
