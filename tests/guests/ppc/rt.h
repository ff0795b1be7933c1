/* rt.h - the test guests' tiny freestanding runtime: Linux system calls through `sc`, and
 * printing of strings and numbers without a libc (so the same code runs under qemu-ppc and,
 * as a DOL, through rpt's linux-syscalls platform). */
#ifndef RT_H
#define RT_H

typedef unsigned int u32;
typedef int s32;
typedef unsigned long long u64;
typedef long long s64;
typedef unsigned long size_t;

long rt_syscall3(long n, long a, long b, long c);
void rt_exit(int status) __attribute__((noreturn));
void rt_write(const char *s, size_t n);
void rt_puts(const char *s);
void rt_put_u32(u32 v);
void rt_put_s32(s32 v);
void rt_put_hex32(u32 v);
void rt_put_hex64(u64 v);
void rt_put_u64(u64 v);
void rt_put_double_bits(double d);
void rt_put_float_bits(float f);
void rt_nl(void);
void *rt_sbrk(u32 n);

/* Each program defines main; _start (rt.c) calls it and exits with its result. */
int main(void);

#endif
