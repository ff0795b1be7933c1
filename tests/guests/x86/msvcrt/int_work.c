/*
 * int_work.c: integer work printed through msvcrt's printf (built with -D__USE_MINGW_ANSI_STDIO=0).
 *
 * stdout stays in text mode, so on Windows every "\n" leaves the program as "\r\n"; the test
 * compares with Wine byte for byte and with the native i386 build after turning its "\n" into
 * "\r\n". Only printf formats on which msvcrt and glibc agree are used (no %p, no 0 flag with a
 * precision, no hh). The exit status is 7.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef unsigned int u32;
typedef unsigned long long u64;

static u32 checksum = 0x811c9dc5u;

static void mix(u32 v)
{
    for (int i = 0; i < 4; i++) {
        checksum ^= (v >> (8 * i)) & 0xff;
        checksum *= 0x01000193u;
    }
}

static unsigned char sieve_bits[100001];

static void sieve(void)
{
    u32 limit = 100000, count = 0, last = 0;
    u64 sum = 0;
    memset(sieve_bits, 1, sizeof sieve_bits);
    sieve_bits[0] = sieve_bits[1] = 0;
    for (u32 i = 2; i * i <= limit; i++)
        if (sieve_bits[i])
            for (u32 j = i * i; j <= limit; j += i)
                sieve_bits[j] = 0;
    for (u32 i = 0; i <= limit; i++) {
        if (sieve_bits[i]) {
            count++;
            sum += i;
            last = i;
        }
    }
    mix(count);
    mix((u32)sum);
    printf("sieve: limit=%u primes=%u sum=%llu last=%u\n", limit, count, sum, last);
}

static void collatz(void)
{
    u32 best = 0, best_start = 0;
    for (u32 start = 1; start < 300000; start++) {
        u64 n = start;
        u32 steps = 0;
        while (n != 1) {
            n = (n & 1) ? 3 * n + 1 : n / 2;
            steps++;
        }
        if (steps > best) {
            best = steps;
            best_start = start;
        }
    }
    mix(best);
    printf("collatz: start=%u steps=%u\n", best_start, best);
}

/* 64-bit arithmetic: gcc calls libgcc's __udivdi3/__umoddi3/__divdi3 here, linked into the PE. */
static void wide(void)
{
    u64 f = 1;
    for (u64 i = 1; i <= 20; i++)
        f *= i;
    long long s = -1234567890123456789LL;
    u64 q = f / 1000003u, r = f % 1000003u;
    long long sq = s / 97, sr = s % 97;
    u64 fib_a = 0, fib_b = 1;
    for (int i = 0; i < 90; i++) {
        u64 t = fib_a + fib_b;
        fib_a = fib_b;
        fib_b = t;
    }
    mix((u32)q ^ (u32)(q >> 32));
    mix((u32)sr);
    printf("wide: 20!=%llu q=%llu r=%llu\n", f, q, r);
    printf("wide: s/97=%lld s%%97=%lld fib90=%llu hex=%llx\n", sq, sr, fib_a, fib_b);
}

static u32 gcd(u32 a, u32 b)
{
    while (b) {
        u32 t = a % b;
        a = b;
        b = t;
    }
    return a;
}

static void numbers(void)
{
    u32 g = 0, l = 1, pop = 0, rev = 0, v = 0xdeadbeefu;
    for (u32 i = 2; i < 40; i++) {
        g += gcd(i * 12, 360);
        l = l / gcd(l, i) * i % 1000000007u;
    }
    for (u32 x = v; x; x &= x - 1)
        pop++;
    for (int i = 0; i < 32; i++)
        rev |= ((v >> i) & 1u) << (31 - i);
    mix(g ^ l ^ pop ^ rev);
    printf("numbers: gcdsum=%u lcm=%u pop=%u rev=%08x\n", g, l, pop, rev);
}

static void matrix(void)
{
    int a[8][8], b[8][8], c[8][8];
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 8; j++) {
            a[i][j] = (i * 7 + j * 3) % 11 - 5;
            b[i][j] = (i * 5 + j * 9) % 13 - 6;
        }
    int trace = 0, total = 0;
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 8; j++) {
            int s = 0;
            for (int k = 0; k < 8; k++)
                s += a[i][k] * b[k][j];
            c[i][j] = s;
            total += s;
        }
    for (int i = 0; i < 8; i++)
        trace += c[i][i];
    mix((u32)trace);
    mix((u32)total);
    printf("matrix: trace=%d total=%d corner=%d,%d\n", trace, total, c[0][7], c[7][0]);
}

static void formats(void)
{
    printf("formats: [%5d] [%-5d] [%05d] [%+d] [% d] [%x] [%X] [%#x] [%o] [%#o] [%u]\n", 42, 42, 42, 42, 42, 255, 255,
           255, 8, 8, 4000000000u);
    printf("formats: [%c%c%c] [%s] [%10s] [%-10s] [%.3s] [%%] [%.5d] [%3.1s]\n", 'r', 'p', 't', "text", "right",
           "left", "truncate", -42, "xyz");
    printf("formats: [%*d] [%-*d] [%.*d] [%lx] [%ld] [%lu] [%hd] [%hu]\n", 6, 7, 6, 7, 4, 7, 0xabcdefL, -5L,
           3000000000UL, (short)-3, (unsigned short)65535);
    mix(0x600d);
}

static void hashing(void)
{
    char word[32];
    u32 h = 0;
    for (int i = 0; i < 1000; i++) {
        int n = sprintf(word, "w%d-%x", i * 37, i * i);
        u32 fnv = 2166136261u;
        for (int k = 0; k < n; k++) {
            fnv ^= (unsigned char)word[k];
            fnv *= 16777619u;
        }
        h ^= fnv + (h << 6) + (h >> 2);
    }
    mix(h);
    printf("hashing: words=1000 hash=%08x\n", h);
}

int main(int argc, char **argv)
{
    (void)argv;
    printf("rpt msvcrt integer sample, %d argument(s)\n", argc - 1);
    sieve();
    collatz();
    wide();
    numbers();
    matrix();
    formats();
    hashing();
    printf("done checksum=%08x\n", checksum);
    return 7;
}
