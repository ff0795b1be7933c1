/*
 * longjmp_dangling.c: a longjmp to a jmp_buf whose setjmp caller has returned (a test fixture,
 * built at test time; see tests/msvcrt_samples.rs). C leaves this undefined; rpt must stop with a
 * message instead of jumping into a dead frame.
 */
#include <setjmp.h>
#include <stdio.h>

static jmp_buf target;

__attribute__((noinline)) static int arm(void)
{
    if (setjmp(target)) {
        puts("came back into a returned function");
        return 1;
    }
    return 0;
}

int main(void)
{
    printf("armed=%d\n", arm());
    fflush(stdout);
    longjmp(target, 1);
}
