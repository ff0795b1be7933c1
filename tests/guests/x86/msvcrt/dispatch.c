/* dispatch.c - the two ways real programs jump where static discovery does not look:
 *
 * 1. A bytecode interpreter dispatching with GCC's computed goto, as Lua 5.4, CPython and many
 *    emulators do: `goto *labels[insn & 0x7f]` repeated at the end of every handler, through a
 *    table of label addresses that is shorter than the mask admits (24 handlers under a 7-bit
 *    opcode field). Every label is inside the one interpreter function.
 * 2. Functions reached only through a table of function pointers whose neighbour ends in a tail
 *    jump to them (`jmp step_odd`), so a walk from the neighbour runs straight into them.
 *
 * rpt must turn the dispatch into direct jumps inside the interpreter and keep every table entry
 * callable. The output depends on nothing but the code. */
/* One source for both guests: as a mingw PE its output goes through msvcrt's printf; as a
 * PowerPC program (tests/guests/ppc/build.sh builds it with the freestanding rt.c) through rt.h. */
#ifdef __powerpc__
#include "rt.h"
void *memset(void *d, int c, size_t n);
static void put_str(const char *s) { rt_puts(s); }
static void put_u32(u32 v) { rt_put_u32(v); }
static void put_hex8(u32 v) { rt_put_hex32(v); }
#else
#include <stdio.h>
#include <string.h>
typedef unsigned int u32;
static void put_str(const char *s) { fputs(s, stdout); }
static void put_u32(u32 v) { printf("%u", v); }
static void put_hex8(u32 v) { printf("%08x", v); }
#endif

/* Instruction word: opcode in bits 0-6, A in 7-14, B in 15-23, C in 24-31. */
#define OP(i) ((i) & 0x7f)
#define A(i) (((i) >> 7) & 0xff)
#define B(i) (((i) >> 15) & 0x1ff)
#define C(i) ((i) >> 24)
#define SB(i) ((int)B(i) - 256)
#define INS(op, a, b, c) ((u32)(op) | (u32)(a) << 7 | (u32)(b) << 15 | (u32)(c) << 24)

enum {
    LOADI, /* r[A] = B - 256 */
    LOADK, /* r[A] = k[B] */
    MOVE,  /* r[A] = r[B] */
    ADD,   /* r[A] = r[B] + r[C] */
    SUB,
    MUL,
    DIVU, /* r[A] = r[B] / r[C], 0 when r[C] is 0 */
    MODU,
    AND,
    OR,
    XOR,
    SHL,
    SHR,
    ADDI,  /* r[A] = r[A] + B - 256 */
    JMP,   /* pc += B - 256 */
    JLT,   /* if (r[A] < r[C]) pc += B - 256 (unsigned) */
    JEQ,   /* if (r[A] == r[C]) pc += B - 256 */
    JNZ,   /* if (r[A]) pc += B - 256 */
    CALL,  /* push pc; pc = B */
    RET,   /* pc = pop */
    OUT,   /* print r[A] */
    MIX,   /* acc = acc * 31 + r[A] */
    NOT,   /* r[A] = ~r[B] */
    HALT,
    NUM_OPS
};

static const char *const op_names[NUM_OPS] = {
    "loadi", "loadk", "move", "add", "sub", "mul", "divu", "modu", "and", "or", "xor", "shl",
    "shr", "addi", "jmp", "jlt", "jeq", "jnz", "call", "ret", "out", "mix", "not", "halt",
};

struct vm {
    u32 r[16];
    u32 acc;
    u32 counts[NUM_OPS];
    u32 out[64];
    int nout;
};

/* Runs `code` from 0 until HALT; returns the number of instructions executed. */
__attribute__((noinline)) static u32 run(struct vm *vm, const u32 *code, const u32 *k)
{
    static const void *const labels[NUM_OPS] = {
        &&op_loadi, &&op_loadk, &&op_move, &&op_add, &&op_sub, &&op_mul, &&op_divu, &&op_modu,
        &&op_and, &&op_or, &&op_xor, &&op_shl, &&op_shr, &&op_addi, &&op_jmp, &&op_jlt,
        &&op_jeq, &&op_jnz, &&op_call, &&op_ret, &&op_out, &&op_mix, &&op_not, &&op_halt,
    };
    const u32 *pc = code;
    const u32 *stack[16];
    int sp = 0;
    u32 steps = 0;
    u32 i;
    u32 *r = vm->r;
#define NEXT()                                                                                     \
    do {                                                                                           \
        i = *pc++;                                                                                 \
        steps++;                                                                                   \
        vm->counts[OP(i)]++;                                                                       \
        goto *labels[OP(i)];                                                                       \
    } while (0)
    NEXT();
op_loadi:
    r[A(i) & 15] = (u32)SB(i);
    NEXT();
op_loadk:
    r[A(i) & 15] = k[B(i)];
    NEXT();
op_move:
    r[A(i) & 15] = r[B(i) & 15];
    NEXT();
op_add:
    r[A(i) & 15] = r[B(i) & 15] + r[C(i) & 15];
    NEXT();
op_sub:
    r[A(i) & 15] = r[B(i) & 15] - r[C(i) & 15];
    NEXT();
op_mul:
    r[A(i) & 15] = r[B(i) & 15] * r[C(i) & 15];
    NEXT();
op_divu:
    r[A(i) & 15] = r[C(i) & 15] ? r[B(i) & 15] / r[C(i) & 15] : 0;
    NEXT();
op_modu:
    r[A(i) & 15] = r[C(i) & 15] ? r[B(i) & 15] % r[C(i) & 15] : 0;
    NEXT();
op_and:
    r[A(i) & 15] = r[B(i) & 15] & r[C(i) & 15];
    NEXT();
op_or:
    r[A(i) & 15] = r[B(i) & 15] | r[C(i) & 15];
    NEXT();
op_xor:
    r[A(i) & 15] = r[B(i) & 15] ^ r[C(i) & 15];
    NEXT();
op_shl:
    r[A(i) & 15] = r[B(i) & 15] << (r[C(i) & 15] & 31);
    NEXT();
op_shr:
    r[A(i) & 15] = r[B(i) & 15] >> (r[C(i) & 15] & 31);
    NEXT();
op_addi:
    r[A(i) & 15] += (u32)SB(i);
    NEXT();
op_jmp:
    pc += SB(i);
    NEXT();
op_jlt:
    if (r[A(i) & 15] < r[C(i) & 15])
        pc += SB(i);
    NEXT();
op_jeq:
    if (r[A(i) & 15] == r[C(i) & 15])
        pc += SB(i);
    NEXT();
op_jnz:
    if (r[A(i) & 15])
        pc += SB(i);
    NEXT();
op_call:
    stack[sp++ & 15] = pc;
    pc = code + B(i);
    NEXT();
op_ret:
    pc = stack[--sp & 15];
    NEXT();
op_out:
    if (vm->nout < 64)
        vm->out[vm->nout++] = r[A(i) & 15];
    NEXT();
op_mix:
    vm->acc = vm->acc * 31 + r[A(i) & 15];
    NEXT();
op_not:
    r[A(i) & 15] = ~r[B(i) & 15];
    NEXT();
op_halt:
    return steps;
#undef NEXT
}

/* Programs. Registers: r0 is zero, the rest are free. */

/* The first 40 Fibonacci numbers mod 2^32, printing every 8th and mixing all. */
static const u32 prog_fib[] = {
    INS(LOADI, 0, 256, 0),  /* 0: r0 = 0 */
    INS(LOADI, 1, 256, 0),  /* r1 = 0 */
    INS(LOADI, 2, 257, 0),  /* r2 = 1 */
    INS(LOADI, 3, 296, 0),  /* r3 = 40 (count) */
    INS(LOADI, 4, 263, 0),  /* r4 = 7 (mask) */
    INS(ADD, 5, 1, 2),      /* 5: r5 = r1 + r2 */
    INS(MOVE, 1, 2, 0),     /* r1 = r2 */
    INS(MOVE, 2, 5, 0),     /* r2 = r5 */
    INS(MIX, 5, 0, 0),
    INS(AND, 6, 3, 4),      /* r6 = r3 & 7 */
    INS(JNZ, 6, 257, 0),    /* skip the OUT unless r3 % 8 == 0 */
    INS(OUT, 5, 0, 0),
    INS(ADDI, 3, 255, 0),   /* r3 -= 1 */
    INS(JNZ, 3, 256 - 9, 0), /* back to 5 */
    INS(HALT, 0, 0, 0),
};

/* Primes below 2000 by trial division, through a subroutine; prints the count and the last. */
static const u32 prog_primes[] = {
    INS(LOADI, 0, 256, 0),   /* 0: r0 = 0 */
    INS(LOADI, 1, 258, 0),   /* r1 = 2 (candidate) */
    INS(LOADK, 2, 0, 0),     /* r2 = 2000 */
    INS(LOADI, 3, 256, 0),   /* r3 = 0 (count) */
    INS(CALL, 0, 12, 0),     /* 4: r4 = is_prime(r1) */
    INS(JEQ, 4, 258, 0),     /* if r4 == 0 skip 2 */
    INS(ADDI, 3, 257, 0),    /* count++ */
    INS(MOVE, 7, 1, 0),      /* last = r1 */
    INS(ADDI, 1, 257, 0),    /* 8: r1++ */
    INS(JLT, 1, 256 - 6, 2), /* while r1 < r2 go to 4 */
    INS(OUT, 3, 0, 0),
    INS(JMP, 0, 256 + 9, 0), /* to the final OUT/HALT at 21 */
    /* 12: is_prime(r1) -> r4; uses r5, r6 */
    INS(LOADI, 4, 257, 0),  /* r4 = 1 */
    INS(LOADI, 5, 258, 0),  /* d = 2 */
    INS(MUL, 6, 5, 5),      /* 14: r6 = d*d */
    INS(JLT, 1, 256 + 4, 6), /* if r1 < d*d return 1 (to 20) */
    INS(MODU, 6, 1, 5),     /* r6 = r1 % d */
    INS(ADDI, 5, 257, 0),   /* d++ */
    INS(JNZ, 6, 256 - 5, 0), /* nonzero remainder: loop to 14 */
    INS(LOADI, 4, 256, 0),  /* divisible: r4 = 0 */
    INS(RET, 0, 0, 0),      /* 20 */
    INS(OUT, 7, 0, 0),      /* 21 */
    INS(MIX, 3, 0, 0),
    INS(MIX, 7, 0, 0),
    INS(HALT, 0, 0, 0),
};

/* A xorshift generator mixed through every arithmetic and logic handler. */
static const u32 prog_mix[] = {
    INS(LOADK, 1, 1, 0),     /* 0: r1 = seed */
    INS(LOADI, 2, 256 + 13, 0),
    INS(LOADI, 3, 256 + 17, 0),
    INS(LOADI, 4, 256 + 5, 0),
    INS(LOADK, 5, 2, 0),     /* r5 = 3000 (count) */
    INS(LOADI, 8, 256 + 7, 0),
    INS(SHL, 6, 1, 2),       /* 6: x ^= x << 13 */
    INS(XOR, 1, 1, 6),
    INS(SHR, 6, 1, 3),       /* x ^= x >> 17 */
    INS(XOR, 1, 1, 6),
    INS(SHL, 6, 1, 4),       /* x ^= x << 5 */
    INS(XOR, 1, 1, 6),
    INS(DIVU, 9, 1, 8),      /* r9 = x / 7 */
    INS(SUB, 10, 1, 9),
    INS(OR, 10, 10, 8),
    INS(NOT, 11, 10, 0),
    INS(ADD, 12, 12, 11),
    INS(MIX, 12, 0, 0),
    INS(ADDI, 5, 255, 0),
    INS(JNZ, 5, 256 - 14, 0), /* back to 6 */
    INS(OUT, 1, 0, 0),
    INS(OUT, 12, 0, 0),
    INS(HALT, 0, 0, 0),
};

static const u32 constants[] = {2000, 0x2545f491u, 3000};

/* Function-pointer steps. Each is its own function; step_even and step_odd are called only
 * through `steps` and the tail jumps of their neighbours. */
typedef u32 (*step_fn)(u32);

__attribute__((noipa)) static u32 step_odd(u32 x);
__attribute__((noipa)) static u32 step_even(u32 x);

__attribute__((noipa)) static u32 step_collatz(u32 x)
{
    if (x & 1)
        return step_odd(x);
    return step_even(x);
}

__attribute__((noipa)) static u32 step_odd(u32 x)
{
    return x * 3 + 1;
}

__attribute__((noipa)) static u32 step_even(u32 x)
{
    return x >> 1;
}

__attribute__((noipa)) static u32 step_rotate(u32 x)
{
    return (x << 7 | x >> 25) ^ 0x9e3779b9u;
}

static const step_fn steps[] = {step_odd, step_even, step_rotate, step_collatz};

static void run_program(const char *name, const u32 *code)
{
    struct vm vm;
    memset(&vm, 0, sizeof vm);
    u32 n = run(&vm, code, constants);
    put_str(name);
    put_str(": steps=");
    put_u32(n);
    put_str(" acc=");
    put_hex8(vm.acc);
    put_str(" out=");
    for (int j = 0; j < vm.nout; j++) {
        put_str(j ? "," : "");
        put_u32(vm.out[j]);
    }
    put_str("\n");
    for (int op = 0; op < NUM_OPS; op++)
        if (vm.counts[op]) {
            put_str(" ");
            put_str(op_names[op]);
            put_str("=");
            put_u32(vm.counts[op]);
        }
    put_str("\n");
}

int main(void)
{
    run_program("fib", prog_fib);
    run_program("primes", prog_primes);
    run_program("mix", prog_mix);

    /* Collatz lengths through the step table: entry 3 (step_collatz) calls the others by tail
     * jump; entries 0 and 1 call them directly through the table. */
    u32 total = 0, longest = 0, at = 0;
    for (u32 start = 1; start < 3000; start++) {
        u32 x = start, len = 0;
        while (x != 1 && len < 1000) {
            x = (start & 1) ? steps[3](x) : steps[x & 1 ? 0 : 1](x);
            len++;
        }
        total += len;
        if (len > longest) {
            longest = len;
            at = start;
        }
    }
    u32 h = 1;
    for (int j = 0; j < 100; j++)
        h = steps[2](h) + steps[j & 1](h) + step_collatz(h | 1);
    put_str("collatz: total=");
    put_u32(total);
    put_str(" longest=");
    put_u32(longest);
    put_str(" at=");
    put_u32(at);
    put_str(" hash=");
    put_hex8(h);
    put_str("\n");
    return 0;
}
