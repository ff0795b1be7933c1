/*
 * demo.c: rpt's own x86 demo guest.
 *
 * One program that does real integer work and prints checksums, built twice from this one
 * source: as a freestanding Win32 console PE (the guest rpt recompiles, see build.sh) and as a
 * static i386 Linux program (the oracle). Both must print the same bytes.
 *
 * Rules this file keeps, because the PE is linked with -nostdlib and is meant to be lifted:
 *   - integer arithmetic only: no float, no double, anywhere;
 *   - no 64-bit types, so no 64-bit division and no libgcc helper calls;
 *   - no large locals (mingw without a CRT has no ___chkstk_ms): big buffers are globals;
 *   - gcc may emit memset/memcpy calls on its own, so the PE defines them (see the platform part);
 *   - the output never depends on argv, the environment, addresses or time.
 *
 * Exit status: 0 when every self-check passed, 1 when a self-check failed (the output then holds
 * a line starting with "FAILED"), 2 when the platform could not be set up (no command line, or
 * the sort buffer could not be allocated).
 */

typedef unsigned int u32;
typedef int i32;
typedef unsigned char u8;

/* ------------------------------------------------------------------------------------------ */
/* Platform layer: the only part that differs between the PE and the oracle.                 */
/* ------------------------------------------------------------------------------------------ */

static void plat_write(const char *p, u32 n);
static void *plat_alloc(u32 bytes);
static void plat_free(void *p);
static int plat_command_line_ok(void);
static void plat_exit(int status) __attribute__((noreturn));

/* Byte loops that gcc must not turn back into memset/memcpy calls (the PE's memset calls them). */
__attribute__((optimize("no-tree-loop-distribute-patterns"))) static void mem_fill(void *dst, int value, u32 n)
{
    u8 *d = (u8 *)dst;
    while (n--)
        *d++ = (u8)value;
}

__attribute__((optimize("no-tree-loop-distribute-patterns"))) static void mem_copy(void *dst, const void *src, u32 n)
{
    u8 *d = (u8 *)dst;
    const u8 *s = (const u8 *)src;
    while (n--)
        *d++ = *s++;
}

static u32 str_len(const char *s)
{
    u32 n = 0;
    while (s[n])
        n++;
    return n;
}

#ifdef _WIN32

/* Only kernel32 is imported; the prototypes are written here so no Windows header is needed. */
#define WINAPI __stdcall
__declspec(dllimport) void *WINAPI GetStdHandle(unsigned long which);
__declspec(dllimport) int WINAPI WriteFile(void *file, const void *buffer, unsigned long length,
                                           unsigned long *written, void *overlapped);
__declspec(dllimport) void WINAPI ExitProcess(unsigned int status) __attribute__((noreturn));
__declspec(dllimport) void *WINAPI VirtualAlloc(void *address, unsigned long size, unsigned long type,
                                               unsigned long protect);
__declspec(dllimport) int WINAPI VirtualFree(void *address, unsigned long size, unsigned long type);
__declspec(dllimport) char *WINAPI GetCommandLineA(void);

#define STD_OUTPUT_HANDLE ((unsigned long)-11)
#define MEM_COMMIT 0x1000
#define MEM_RESERVE 0x2000
#define MEM_RELEASE 0x8000
#define PAGE_READWRITE 0x04

/* gcc may emit calls to these even with -fno-builtin (struct copies, zeroing); -nostdlib has none.
 * They carry the same attribute as the loops they call, so an inlined copy of a loop can never be
 * turned back into a call to themselves. */
__attribute__((optimize("no-tree-loop-distribute-patterns"))) void *memset(void *dst, int value, unsigned int n)
{
    mem_fill(dst, value, n);
    return dst;
}

__attribute__((optimize("no-tree-loop-distribute-patterns"))) void *memcpy(void *dst, const void *src, unsigned int n)
{
    mem_copy(dst, src, n);
    return dst;
}

static void plat_write(const char *p, u32 n)
{
    unsigned long written = 0;
    WriteFile(GetStdHandle(STD_OUTPUT_HANDLE), p, n, &written, 0);
}

static void *plat_alloc(u32 bytes)
{
    return VirtualAlloc(0, bytes, MEM_COMMIT | MEM_RESERVE, PAGE_READWRITE);
}

static void plat_free(void *p)
{
    VirtualFree(p, 0, MEM_RELEASE);
}

static int plat_command_line_ok(void)
{
    return GetCommandLineA() != 0;
}

static void plat_exit(int status)
{
    ExitProcess((unsigned int)status);
}

#else /* the Linux oracle */

#include <stdlib.h>
#include <unistd.h>

static void plat_write(const char *p, u32 n)
{
    while (n > 0) {
        ssize_t w = write(1, p, n);
        if (w <= 0)
            return;
        p += w;
        n -= (u32)w;
    }
}

static void *plat_alloc(u32 bytes)
{
    return malloc(bytes);
}

static void plat_free(void *p)
{
    free(p);
}

static int plat_command_line_ok(void)
{
    return 1;
}

static void plat_exit(int status)
{
    exit(status);
}

#endif

/* ------------------------------------------------------------------------------------------ */
/* Output: one line at a time, formatted by hand; every byte written also feeds a CRC.        */
/* ------------------------------------------------------------------------------------------ */

static u32 crc_table[256];
static char line_buf[256];
static u32 line_len;
static u32 output_crc = 0xffffffffu;
static int failures;

static void crc_init(void)
{
    for (u32 i = 0; i < 256; i++) {
        u32 c = i;
        for (int k = 0; k < 8; k++)
            c = (c & 1) ? (c >> 1) ^ 0xedb88320u : c >> 1;
        crc_table[i] = c;
    }
}

/* Continues a CRC-32 whose register is `crc` (start with 0xffffffff, finish with ~). */
static u32 crc_update(u32 crc, const u8 *p, u32 n)
{
    for (u32 i = 0; i < n; i++)
        crc = crc_table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
    return crc;
}

static u32 crc32(const void *p, u32 n)
{
    return ~crc_update(0xffffffffu, (const u8 *)p, n);
}

static void put_char(char ch)
{
    if (line_len < sizeof line_buf)
        line_buf[line_len++] = ch;
}

static void put_str(const char *s)
{
    u32 n = str_len(s);
    if (n > sizeof line_buf - line_len)
        n = sizeof line_buf - line_len;
    mem_copy(line_buf + line_len, s, n);
    line_len += n;
}

/* Writes `v` in base `base` (2..16) into `out`, least significant digit last; returns the length. */
static u32 utoa_base(u32 v, u32 base, char *out)
{
    static const char digits[] = "0123456789abcdef";
    char tmp[33];
    u32 n = 0;
    do {
        tmp[n++] = digits[v % base];
        v /= base;
    } while (v != 0);
    for (u32 i = 0; i < n; i++)
        out[i] = tmp[n - 1 - i];
    out[n] = 0;
    return n;
}

static void put_dec(u32 v)
{
    char buf[12];
    u32 n = 0;
    do {
        buf[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v != 0);
    while (n > 0)
        put_char(buf[--n]);
}

static void put_int(i32 v)
{
    if (v < 0) {
        put_char('-');
        put_dec(0u - (u32)v);
    } else {
        put_dec((u32)v);
    }
}

static void put_hex(u32 v)
{
    static const char digits[] = "0123456789abcdef";
    put_str("0x");
    for (int shift = 28; shift >= 0; shift -= 4)
        put_char(digits[(v >> shift) & 15]);
}

/* Right-aligns `v` in a field of `width` characters, padding with `fill`. */
static void put_dec_padded(u32 v, u32 width, char fill)
{
    char buf[33];
    u32 n = utoa_base(v, 10, buf);
    while (width > n) {
        put_char(fill);
        width--;
    }
    put_str(buf);
}

static void put_field_dec(const char *name, u32 v)
{
    put_char(' ');
    put_str(name);
    put_char('=');
    put_dec(v);
}

static void put_field_hex(const char *name, u32 v)
{
    put_char(' ');
    put_str(name);
    put_char('=');
    put_hex(v);
}

static void end_line(void)
{
    put_char('\n');
    output_crc = crc_update(output_crc, (const u8 *)line_buf, line_len);
    plat_write(line_buf, line_len);
    line_len = 0;
}

static void check(int ok, const char *what)
{
    if (!ok) {
        failures++;
        put_str("FAILED: ");
        put_str(what);
        end_line();
    }
}

/* ------------------------------------------------------------------------------------------ */
/* A linear congruential generator (Numerical Recipes constants).                            */
/* ------------------------------------------------------------------------------------------ */

static u32 lcg_state;

static u32 lcg_next(void)
{
    lcg_state = lcg_state * 1664525u + 1013904223u;
    return lcg_state;
}

/* ------------------------------------------------------------------------------------------ */
/* Sieve of Eratosthenes.                                                                     */
/* ------------------------------------------------------------------------------------------ */

#define SIEVE_LIMIT 10000
static u8 composite[SIEVE_LIMIT];

static void demo_sieve(void)
{
    mem_fill(composite, 0, sizeof composite);
    composite[0] = composite[1] = 1;
    for (u32 i = 2; i * i < SIEVE_LIMIT; i++)
        if (!composite[i])
            for (u32 j = i * i; j < SIEVE_LIMIT; j += i)
                composite[j] = 1;

    u32 count = 0, sum = 0, last = 0, twins = 0;
    for (u32 i = 2; i < SIEVE_LIMIT; i++) {
        if (composite[i])
            continue;
        count++;
        sum += i;
        if (last != 0 && i - last == 2)
            twins++;
        last = i;
    }
    put_str("sieve:");
    put_field_dec("limit", SIEVE_LIMIT);
    put_field_dec("primes", count);
    put_field_dec("sum", sum);
    put_field_dec("last", last);
    put_field_dec("twins", twins);
    end_line();
    check(count == 1229 && sum == 5736396 && last == 9973, "sieve");
}

/* ------------------------------------------------------------------------------------------ */
/* Sorting: quicksort and insertion sort of the same pseudo-random signed array.              */
/* ------------------------------------------------------------------------------------------ */

#define SORT_COUNT 2000

static void insertion_sort(i32 *a, u32 n)
{
    for (u32 i = 1; i < n; i++) {
        i32 key = a[i];
        u32 j = i;
        while (j > 0 && a[j - 1] > key) {
            a[j] = a[j - 1];
            j--;
        }
        a[j] = key;
    }
}

/* Hoare partition around the median of three; recursion on the smaller half keeps depth low. */
static void quick_sort(i32 *a, i32 lo, i32 hi)
{
    while (hi - lo > 8) {
        i32 mid = lo + (hi - lo) / 2;
        i32 x = a[lo], y = a[mid], z = a[hi];
        i32 pivot = x < y ? (y < z ? y : (x < z ? z : x)) : (x < z ? x : (y < z ? z : y));
        i32 i = lo - 1, j = hi + 1;
        for (;;) {
            do
                i++;
            while (a[i] < pivot);
            do
                j--;
            while (a[j] > pivot);
            if (i >= j)
                break;
            i32 t = a[i];
            a[i] = a[j];
            a[j] = t;
        }
        if (j - lo < hi - j) {
            quick_sort(a, lo, j);
            lo = j + 1;
        } else {
            quick_sort(a, j + 1, hi);
            hi = j;
        }
    }
    insertion_sort(a + lo, (u32)(hi - lo + 1));
}

static void demo_sort(i32 *quick, i32 *insertion)
{
    lcg_state = 12345;
    for (u32 i = 0; i < SORT_COUNT; i++) {
        /* Arithmetic shift of a signed value: a spread of negative and positive keys. */
        i32 v = (i32)lcg_next() >> 12;
        if (i % 7 == 3)
            v = quick[i / 2]; /* some duplicates */
        quick[i] = v;
    }
    mem_copy(insertion, quick, SORT_COUNT * sizeof(i32));

    quick_sort(quick, 0, SORT_COUNT - 1);
    insertion_sort(insertion, SORT_COUNT);

    u32 sorted = 1, same = 1, weighted = 0;
    for (u32 i = 0; i < SORT_COUNT; i++) {
        if (i > 0 && quick[i - 1] > quick[i])
            sorted = 0;
        if (quick[i] != insertion[i])
            same = 0;
        weighted += (u32)quick[i] * (i + 1);
    }
    put_str("sort:");
    put_field_dec("n", SORT_COUNT);
    put_str(" min=");
    put_int(quick[0]);
    put_str(" median=");
    put_int(quick[SORT_COUNT / 2]);
    put_str(" max=");
    put_int(quick[SORT_COUNT - 1]);
    put_field_hex("weighted", weighted);
    put_field_hex("crc", crc32(quick, SORT_COUNT * sizeof(i32)));
    put_field_dec("sorted", sorted);
    put_field_dec("same", same);
    end_line();
    check(sorted && same, "sort");
}

/* ------------------------------------------------------------------------------------------ */
/* CRC-32 (the table-driven IEEE 802.3 one, as in zlib).                                      */
/* ------------------------------------------------------------------------------------------ */

static u8 crc_data[4096];

static void demo_crc(void)
{
    u32 check_value = crc32("123456789", 9);
    lcg_state = 0xC0FFEEu;
    for (u32 i = 0; i < sizeof crc_data; i++)
        crc_data[i] = (u8)(lcg_next() >> 24);
    u32 whole = crc32(crc_data, sizeof crc_data);
    /* Feeding the data in uneven pieces must give the same CRC. */
    u32 reg = 0xffffffffu, at = 0, piece = 1;
    while (at < sizeof crc_data) {
        u32 n = piece;
        if (n > sizeof crc_data - at)
            n = sizeof crc_data - at;
        reg = crc_update(reg, crc_data + at, n);
        at += n;
        piece = piece * 3 + 1;
    }
    put_str("crc32:");
    put_field_hex("check", check_value);
    put_field_dec("bytes", sizeof crc_data);
    put_field_hex("data", whole);
    put_field_hex("pieces", ~reg);
    end_line();
    check(check_value == 0xcbf43926u && whole == ~reg, "crc32");
}

/* ------------------------------------------------------------------------------------------ */
/* A little stack machine. Every instruction is two words, opcode and operand, so a jump      */
/* target is an instruction index. The dispatch `switch` is dense so gcc makes a jump table.  */
/* ------------------------------------------------------------------------------------------ */

enum {
    OP_HALT,  /* stop */
    OP_PUSH,  /* push operand */
    OP_LOAD,  /* push reg[operand] */
    OP_STORE, /* reg[operand] = pop */
    OP_ADD,
    OP_SUB,
    OP_MUL,
    OP_DIV,   /* signed; division by zero gives 0 */
    OP_MOD,   /* signed; modulo by zero gives 0 */
    OP_AND,
    OP_OR,
    OP_XOR,
    OP_SHL,   /* shift count taken mod 32 */
    OP_SHR,   /* logical */
    OP_DUP,
    OP_SWAP,
    OP_DROP,
    OP_LT,    /* signed less-than, pushes 0 or 1 */
    OP_EQ,
    OP_JMP,   /* to instruction index operand */
    OP_JZ,    /* pop; jump if zero */
    OP_JNZ,   /* pop; jump if nonzero */
    OP_OUT,   /* pop into the machine's output hash */
    OP_COUNT
};

#define VM_STACK 64
#define VM_REGS 8

static u32 vm_stack[VM_STACK];
static u32 vm_regs[VM_REGS];

struct vm_result {
    u32 steps;
    u32 outputs;
    u32 last_out;
    u32 hash;
    int error; /* 0, or 1 for a stack, register or pc error */
};

static struct vm_result vm_last;

static void vm_run(const i32 *code, u32 instruction_count, u32 step_limit)
{
    u32 pc = 0, sp = 0, steps = 0, outputs = 0, last_out = 0, hash = 2166136261u;
    int error = 0;
    mem_fill(vm_regs, 0, sizeof vm_regs);

    while (steps < step_limit) {
        if (pc >= instruction_count) {
            error = 1;
            break;
        }
        u32 op = (u32)code[2 * pc];
        i32 arg = code[2 * pc + 1];
        u32 a, b;
        pc++;
        steps++;
        /* Every opcode checks its stack needs first; `need` pops and `room` pushes. */
#define NEED(k)            \
    if (sp < (k)) {        \
        error = 1;         \
        goto stop;         \
    }
#define ROOM()             \
    if (sp >= VM_STACK) {  \
        error = 1;         \
        goto stop;         \
    }
#define BINARY(expr)           \
    NEED(2);                   \
    b = vm_stack[--sp];        \
    a = vm_stack[sp - 1];      \
    vm_stack[sp - 1] = (expr); \
    break
        switch (op) {
        case OP_HALT:
            goto stop;
        case OP_PUSH:
            ROOM();
            vm_stack[sp++] = (u32)arg;
            break;
        case OP_LOAD:
            ROOM();
            if ((u32)arg >= VM_REGS) {
                error = 1;
                goto stop;
            }
            vm_stack[sp++] = vm_regs[arg];
            break;
        case OP_STORE:
            NEED(1);
            if ((u32)arg >= VM_REGS) {
                error = 1;
                goto stop;
            }
            vm_regs[arg] = vm_stack[--sp];
            break;
        case OP_ADD:
            BINARY(a + b);
        case OP_SUB:
            BINARY(a - b);
        case OP_MUL:
            BINARY(a * b);
        case OP_DIV:
            BINARY(b == 0 || ((i32)a == (i32)0x80000000 && (i32)b == -1) ? 0 : (u32)((i32)a / (i32)b));
        case OP_MOD:
            BINARY(b == 0 || ((i32)a == (i32)0x80000000 && (i32)b == -1) ? 0 : (u32)((i32)a % (i32)b));
        case OP_AND:
            BINARY(a & b);
        case OP_OR:
            BINARY(a | b);
        case OP_XOR:
            BINARY(a ^ b);
        case OP_SHL:
            BINARY(a << (b & 31));
        case OP_SHR:
            BINARY(a >> (b & 31));
        case OP_DUP:
            NEED(1);
            ROOM();
            vm_stack[sp] = vm_stack[sp - 1];
            sp++;
            break;
        case OP_SWAP:
            NEED(2);
            a = vm_stack[sp - 1];
            vm_stack[sp - 1] = vm_stack[sp - 2];
            vm_stack[sp - 2] = a;
            break;
        case OP_DROP:
            NEED(1);
            sp--;
            break;
        case OP_LT:
            BINARY((i32)a < (i32)b);
        case OP_EQ:
            BINARY(a == b);
        case OP_JMP:
            pc = (u32)arg;
            break;
        case OP_JZ:
            NEED(1);
            if (vm_stack[--sp] == 0)
                pc = (u32)arg;
            break;
        case OP_JNZ:
            NEED(1);
            if (vm_stack[--sp] != 0)
                pc = (u32)arg;
            break;
        case OP_OUT:
            NEED(1);
            last_out = vm_stack[--sp];
            hash = (hash ^ last_out) * 16777619u;
            outputs++;
            break;
        default:
            error = 1;
            goto stop;
        }
#undef NEED
#undef ROOM
#undef BINARY
    }
stop:
    vm_last.steps = steps;
    vm_last.outputs = outputs;
    vm_last.last_out = last_out;
    vm_last.hash = hash;
    vm_last.error = error;
}

/* Fibonacci: r0 = a, r1 = b, r2 = i; outputs fib(0..29), then fib(30). */
static const i32 vm_fib[] = {
    /*  0 */ OP_PUSH, 0,
    /*  1 */ OP_STORE, 0,
    /*  2 */ OP_PUSH, 1,
    /*  3 */ OP_STORE, 1,
    /*  4 */ OP_PUSH, 0,
    /*  5 */ OP_STORE, 2,
    /*  6 */ OP_LOAD, 2,  /* loop: */
    /*  7 */ OP_PUSH, 30,
    /*  8 */ OP_LT, 0,
    /*  9 */ OP_JZ, 23,
    /* 10 */ OP_LOAD, 0,
    /* 11 */ OP_OUT, 0,
    /* 12 */ OP_LOAD, 0,
    /* 13 */ OP_LOAD, 1,
    /* 14 */ OP_ADD, 0,   /* a + b */
    /* 15 */ OP_LOAD, 1,
    /* 16 */ OP_STORE, 0, /* a = b */
    /* 17 */ OP_STORE, 1, /* b = a + b */
    /* 18 */ OP_LOAD, 2,
    /* 19 */ OP_PUSH, 1,
    /* 20 */ OP_ADD, 0,
    /* 21 */ OP_STORE, 2,
    /* 22 */ OP_JMP, 6,
    /* 23 */ OP_LOAD, 0,  /* done: */
    /* 24 */ OP_OUT, 0,
    /* 25 */ OP_HALT, 0,
};

/* Euclid: for i in 1..40, r1 = 37*i + 11, r2 = 1071 + 3*i; outputs gcd(r1, r2), then their sum (r3). */
static const i32 vm_gcd[] = {
    /*  0 */ OP_PUSH, 1,
    /*  1 */ OP_STORE, 0,
    /*  2 */ OP_PUSH, 0,
    /*  3 */ OP_STORE, 3,
    /*  4 */ OP_LOAD, 0,  /* outer: */
    /*  5 */ OP_PUSH, 41,
    /*  6 */ OP_LT, 0,
    /*  7 */ OP_JZ, 40,
    /*  8 */ OP_LOAD, 0,
    /*  9 */ OP_PUSH, 37,
    /* 10 */ OP_MUL, 0,
    /* 11 */ OP_PUSH, 11,
    /* 12 */ OP_ADD, 0,
    /* 13 */ OP_STORE, 1,
    /* 14 */ OP_LOAD, 0,
    /* 15 */ OP_PUSH, 3,
    /* 16 */ OP_MUL, 0,
    /* 17 */ OP_PUSH, 1071,
    /* 18 */ OP_ADD, 0,
    /* 19 */ OP_STORE, 2,
    /* 20 */ OP_LOAD, 2,  /* inner: while r2 != 0 */
    /* 21 */ OP_JZ, 29,
    /* 22 */ OP_LOAD, 1,
    /* 23 */ OP_LOAD, 2,
    /* 24 */ OP_MOD, 0,
    /* 25 */ OP_LOAD, 2,
    /* 26 */ OP_STORE, 1, /* r1 = r2 */
    /* 27 */ OP_STORE, 2, /* r2 = r1 % r2 */
    /* 28 */ OP_JMP, 20,
    /* 29 */ OP_LOAD, 1,  /* gcd found */
    /* 30 */ OP_OUT, 0,
    /* 31 */ OP_LOAD, 1,
    /* 32 */ OP_LOAD, 3,
    /* 33 */ OP_ADD, 0,
    /* 34 */ OP_STORE, 3,
    /* 35 */ OP_LOAD, 0,
    /* 36 */ OP_PUSH, 1,
    /* 37 */ OP_ADD, 0,
    /* 38 */ OP_STORE, 0,
    /* 39 */ OP_JMP, 4,
    /* 40 */ OP_LOAD, 3,  /* done: */
    /* 41 */ OP_OUT, 0,
    /* 42 */ OP_HALT, 0,
};

/* xorshift32 from r0 = 2463534242, 1000 rounds (r1 counts down); outputs the final state. */
static const i32 vm_xorshift[] = {
    /*  0 */ OP_PUSH, (i32)2463534242u,
    /*  1 */ OP_STORE, 0,
    /*  2 */ OP_PUSH, 1000,
    /*  3 */ OP_STORE, 1,
    /*  4 */ OP_LOAD, 0,   /* loop: x ^= x << 13 */
    /*  5 */ OP_DUP, 0,
    /*  6 */ OP_PUSH, 13,
    /*  7 */ OP_SHL, 0,
    /*  8 */ OP_XOR, 0,
    /*  9 */ OP_DUP, 0,    /* x ^= x >> 17 */
    /* 10 */ OP_PUSH, 17,
    /* 11 */ OP_SHR, 0,
    /* 12 */ OP_XOR, 0,
    /* 13 */ OP_DUP, 0,    /* x ^= x << 5 */
    /* 14 */ OP_PUSH, 5,
    /* 15 */ OP_SHL, 0,
    /* 16 */ OP_XOR, 0,
    /* 17 */ OP_STORE, 0,
    /* 18 */ OP_LOAD, 1,   /* r1 -= 1 */
    /* 19 */ OP_PUSH, 1,
    /* 20 */ OP_SUB, 0,
    /* 21 */ OP_DUP, 0,
    /* 22 */ OP_STORE, 1,
    /* 23 */ OP_JNZ, 4,
    /* 24 */ OP_LOAD, 0,   /* also exercise SWAP, DROP, EQ, AND, OR, DIV */
    /* 25 */ OP_DUP, 0,
    /* 26 */ OP_PUSH, 0xffff,
    /* 27 */ OP_AND, 0,
    /* 28 */ OP_SWAP, 0,
    /* 29 */ OP_PUSH, 0x10000,
    /* 30 */ OP_DIV, 0,    /* signed: x / 65536 */
    /* 31 */ OP_OR, 0,
    /* 32 */ OP_DUP, 0,
    /* 33 */ OP_DUP, 0,
    /* 34 */ OP_EQ, 0,     /* 1 */
    /* 35 */ OP_ADD, 0,
    /* 36 */ OP_PUSH, 99,
    /* 37 */ OP_DROP, 0,
    /* 38 */ OP_LOAD, 0,
    /* 39 */ OP_OUT, 0,
    /* 40 */ OP_OUT, 0,
    /* 41 */ OP_HALT, 0,
};

/* The same computations done directly in C, to check the machine against. */
static u32 direct_fib(u32 n)
{
    u32 a = 0, b = 1;
    while (n--) {
        u32 t = a + b;
        a = b;
        b = t;
    }
    return a;
}

static u32 direct_gcd(u32 a, u32 b)
{
    while (b != 0) {
        u32 t = a % b;
        a = b;
        b = t;
    }
    return a;
}

static u32 direct_xorshift(u32 x, u32 rounds)
{
    while (rounds--) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
    }
    return x;
}

static void demo_vm(void)
{
    u32 total_steps = 0, combined = 0;

    vm_run(vm_fib, sizeof vm_fib / sizeof vm_fib[0] / 2, 100000);
    put_str("vm fib:");
    put_field_dec("steps", vm_last.steps);
    put_field_dec("outputs", vm_last.outputs);
    put_field_dec("fib30", vm_last.last_out);
    put_field_hex("hash", vm_last.hash);
    end_line();
    check(!vm_last.error && vm_last.last_out == direct_fib(30) && vm_last.last_out == 832040, "vm fib");
    total_steps += vm_last.steps;
    combined ^= vm_last.hash;

    u32 gcd_sum = 0;
    for (u32 i = 1; i <= 40; i++)
        gcd_sum += direct_gcd(37 * i + 11, 1071 + 3 * i);
    vm_run(vm_gcd, sizeof vm_gcd / sizeof vm_gcd[0] / 2, 100000);
    put_str("vm gcd:");
    put_field_dec("steps", vm_last.steps);
    put_field_dec("outputs", vm_last.outputs);
    put_field_dec("sum", vm_last.last_out);
    put_field_hex("hash", vm_last.hash);
    end_line();
    check(!vm_last.error && vm_last.last_out == gcd_sum, "vm gcd");
    total_steps += vm_last.steps;
    combined ^= vm_last.hash;

    u32 x = direct_xorshift(2463534242u, 1000);
    u32 mixed = ((x & 0xffff) | (u32)((i32)x / 0x10000)) + 1;
    vm_run(vm_xorshift, sizeof vm_xorshift / sizeof vm_xorshift[0] / 2, 100000);
    put_str("vm xorshift:");
    put_field_dec("steps", vm_last.steps);
    put_field_hex("state", vm_last.last_out);
    put_field_hex("hash", vm_last.hash);
    end_line();
    check(!vm_last.error && vm_last.outputs == 2 && vm_last.last_out == mixed, "vm xorshift");
    total_steps += vm_last.steps;
    combined ^= vm_last.hash;

    /* A program with a bad opcode and one that underflows its stack must stop with an error. */
    static const i32 bad_opcode[] = {OP_PUSH, 1, OP_COUNT + 3, 0, OP_HALT, 0};
    static const i32 underflow[] = {OP_PUSH, 1, OP_ADD, 0, OP_HALT, 0};
    vm_run(bad_opcode, 3, 100);
    u32 errors = (u32)vm_last.error;
    vm_run(underflow, 3, 100);
    errors += (u32)vm_last.error;

    put_str("vm:");
    put_field_dec("opcodes", OP_COUNT);
    put_field_dec("steps", total_steps);
    put_field_dec("errors", errors);
    put_field_hex("combined", combined);
    end_line();
    check(errors == 2, "vm errors");
}

/* ------------------------------------------------------------------------------------------ */
/* Recursion.                                                                                 */
/* ------------------------------------------------------------------------------------------ */

static u32 ack_calls;

static u32 ackermann(u32 m, u32 n)
{
    ack_calls++;
    if (m == 0)
        return n + 1;
    if (n == 0)
        return ackermann(m - 1, 1);
    return ackermann(m - 1, ackermann(m, n - 1));
}

static u32 fib_recursive(u32 n)
{
    return n < 2 ? n : fib_recursive(n - 1) + fib_recursive(n - 2);
}

static u32 hanoi_moves;
static u32 hanoi_trace;

static void hanoi(u32 n, u32 from, u32 to, u32 via)
{
    if (n == 0)
        return;
    hanoi(n - 1, from, via, to);
    hanoi_moves++;
    hanoi_trace = hanoi_trace * 31 + from * 3 + to;
    hanoi(n - 1, via, to, from);
}

/* Mutual recursion: is_even and is_odd call each other. */
static int is_odd(u32 n);

static int is_even(u32 n)
{
    return n == 0 ? 1 : is_odd(n - 1);
}

static int is_odd(u32 n)
{
    return n == 0 ? 0 : is_even(n - 1);
}

static void demo_recursion(void)
{
    ack_calls = 0;
    u32 a23 = ackermann(2, 3);
    u32 a33 = ackermann(3, 3);
    u32 calls = ack_calls;
    u32 f = fib_recursive(22);
    hanoi_moves = 0;
    hanoi_trace = 0;
    hanoi(12, 1, 3, 2);
    put_str("recursion:");
    put_field_dec("ack(2,3)", a23);
    put_field_dec("ack(3,3)", a33);
    put_field_dec("ack_calls", calls);
    put_field_dec("fib(22)", f);
    put_field_dec("hanoi(12)", hanoi_moves);
    put_field_hex("trace", hanoi_trace);
    put_field_dec("even(77)", (u32)is_even(77));
    end_line();
    check(a23 == 9 && a33 == 61 && f == 17711 && hanoi_moves == 4095 && !is_even(77), "recursion");
}

/* ------------------------------------------------------------------------------------------ */
/* Function pointers: a table of callbacks, called indirectly.                                */
/* ------------------------------------------------------------------------------------------ */

typedef u32 (*binop_fn)(u32, u32);

static u32 cb_add(u32 a, u32 b) { return a + b; }
static u32 cb_sub(u32 a, u32 b) { return a - b; }
static u32 cb_mul(u32 a, u32 b) { return a * b + 1; }
static u32 cb_xor(u32 a, u32 b) { return a ^ b; }
static u32 cb_rotl(u32 a, u32 b) { b &= 31; return b ? (a << b) | (a >> (32 - b)) : a; }
static u32 cb_min(u32 a, u32 b) { return a < b ? a : b; }
static u32 cb_max(u32 a, u32 b) { return a > b ? a : b; }
static u32 cb_mix(u32 a, u32 b) { return (a ^ (b >> 3)) * 0x9e3779b1u; }

/* Not const and not static, so the calls through it stay indirect. */
binop_fn callback_table[8] = {cb_add, cb_sub, cb_mul, cb_xor, cb_rotl, cb_min, cb_max, cb_mix};

/* A higher-order function: folds `count` LCG values with `fn`. */
static u32 fold(binop_fn fn, u32 init, u32 count)
{
    u32 acc = init;
    for (u32 i = 0; i < count; i++)
        acc = fn(acc, lcg_next());
    return acc;
}

static void demo_callbacks(void)
{
    u32 calls[8];
    mem_fill(calls, 0, sizeof calls);
    lcg_state = 42;
    u32 acc = 1;
    for (u32 i = 0; i < 4096; i++) {
        u32 pick = (lcg_next() >> 16) & 7;
        calls[pick]++;
        acc = callback_table[pick](acc, lcg_state);
    }
    u32 folds = 0;
    for (u32 k = 0; k < 8; k++)
        folds = folds * 33 + fold(callback_table[k], k, 100);

    put_str("callbacks:");
    put_field_hex("acc", acc);
    put_field_hex("folds", folds);
    put_str(" calls=");
    for (u32 k = 0; k < 8; k++) {
        if (k)
            put_char(',');
        put_dec(calls[k]);
    }
    end_line();
}

/* ------------------------------------------------------------------------------------------ */
/* Formatting of our own.                                                                     */
/* ------------------------------------------------------------------------------------------ */

static void demo_format(void)
{
    char buf[40];
    put_str("format: dec=");
    put_dec(4294967295u);
    put_str(" neg=");
    put_int((i32)0x80000000);
    put_str(" hex=");
    put_hex(0xdeadbeefu);
    put_str(" bin=");
    utoa_base(42, 2, buf);
    put_str(buf);
    put_str(" oct=");
    utoa_base(511, 8, buf);
    put_str(buf);
    put_str(" pad=[");
    put_dec_padded(42, 6, ' ');
    put_str("] zero=[");
    put_dec_padded(7, 4, '0');
    put_str("]");
    u32 n = utoa_base(123456789, 16, buf);
    put_str(" len=");
    put_dec(n);
    end_line();
}

/* ------------------------------------------------------------------------------------------ */
/* The program.                                                                               */
/* ------------------------------------------------------------------------------------------ */

static int demo_main(void)
{
    crc_init();
    if (!plat_command_line_ok()) {
        put_str("error: no command line");
        end_line();
        return 2;
    }
    i32 *sort_buffer = (i32 *)plat_alloc(2 * SORT_COUNT * sizeof(i32));
    if (!sort_buffer) {
        put_str("error: cannot allocate the sort buffer");
        end_line();
        return 2;
    }

    put_str("rpt x86 demo");
    end_line();
    demo_sieve();
    demo_sort(sort_buffer, sort_buffer + SORT_COUNT);
    plat_free(sort_buffer);
    demo_crc();
    demo_vm();
    demo_recursion();
    demo_callbacks();
    demo_format();

    /* The checksum is the CRC-32 of every byte printed before this line. */
    u32 checksum = ~output_crc;
    put_str("done checksum=");
    put_hex(checksum);
    put_field_dec("failures", (u32)failures);
    end_line();
    return failures ? 1 : 0;
}

#ifdef _WIN32
void __stdcall start(void)
{
    plat_exit(demo_main());
}
#else
int main(void)
{
    plat_exit(demo_main());
}
#endif
