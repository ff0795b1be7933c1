/*
 * x87_soft_math.h - msvcrt's math functions computed on the software x87 unit's 128-bit float
 * (x87_soft_libm.h, built into x87.c wherever the software unit is). msvcrt_math.c calls them on
 * hosts without a C math library (LoongArch64 here); hosts with one use their libm.
 */
#ifndef RPT_X87_SOFT_MATH_H
#define RPT_X87_SOFT_MATH_H

double rpt_x86_soft_sin(double x);
double rpt_x86_soft_cos(double x);
double rpt_x86_soft_tan(double x);
double rpt_x86_soft_asin(double x);
double rpt_x86_soft_acos(double x);
double rpt_x86_soft_atan(double x);
double rpt_x86_soft_atan2(double y, double x);
double rpt_x86_soft_sinh(double x);
double rpt_x86_soft_cosh(double x);
double rpt_x86_soft_tanh(double x);
double rpt_x86_soft_exp(double x);
double rpt_x86_soft_log(double x);
double rpt_x86_soft_log10(double x);
double rpt_x86_soft_pow(double x, double y);
double rpt_x86_soft_fmod(double x, double y);
double rpt_x86_soft_hypot(double x, double y);
double rpt_x86_soft_floor(double x);
double rpt_x86_soft_ceil(double x);
double rpt_x86_soft_trunc(double x);
double rpt_x86_soft_ldexp(double x, int e);
double rpt_x86_soft_frexp(double x, int *e);

#endif
