/*
 * x87_controlfp.c: a fixture for tests/msvcrt_samples.rs: msvcrt's _controlfp changes the x87
 * control word that lifted code computes under. Each line's digits depend on the precision or
 * rounding control in force, so the output shows whether the change took effect.
 */
#include <float.h>
#include <stdio.h>

static volatile double big = 1e16, one = 1.0, minus_one = -1.0, three = 3.0;

static void show(const char *when)
{
    /* 1e16 + 1 is exact in 64 bits, rounds to 1e16 in 53; -1/3 rounds differently down and to nearest. */
    double carry = (big + one) - big;
    double third = minus_one / three;
    printf("%s: control %#x carry %g third %.17g\n", when, _controlfp(0, 0), carry, third);
}

int main(void)
{
    show("start");
    printf("set 53-bit: %#x\n", _controlfp(_PC_53, _MCW_PC));
    show("53-bit");
    printf("round down: %#x\n", _controlfp(_RC_DOWN, _MCW_RC));
    show("53-bit down");
    printf("denormal mask untouched: %#x\n", _controlfp(0, _EM_DENORMAL));
    printf("back: %#x\n", _controlfp(_PC_64 | _RC_NEAR, _MCW_PC | _MCW_RC));
    show("64-bit near");
    return 0;
}
