/*
 * x87_defs.h - what every part of the x87 unit names: operation numbers, operand kinds,
 * status-word bits and the 80-bit register format (x87.c describes the unit).
 */
#ifndef RPT_X87_DEFS_H
#define RPT_X87_DEFS_H

#include <stdint.h>

/* Operation numbers: the same as src/x87.rs (a test there compares them). */
#define X87_ADD 0u
#define X87_MUL 1u
#define X87_SUB 4u
#define X87_SUBR 5u
#define X87_DIV 6u
#define X87_DIVR 7u

#define X87_FCHS 0u
#define X87_FABS 1u
#define X87_FSQRT 2u
#define X87_FRNDINT 3u
#define X87_F2XM1 4u
#define X87_FSIN 5u
#define X87_FCOS 6u
#define X87_FPTAN 7u
#define X87_FSINCOS 8u
#define X87_FPATAN 9u
#define X87_FYL2X 10u
#define X87_FYL2XP1 11u
#define X87_FSCALE 12u
#define X87_FPREM 13u
#define X87_FPREM1 14u
#define X87_FXTRACT 15u
#define X87_FTST 16u
#define X87_FXAM 17u
#define X87_FINCSTP 18u
#define X87_FDECSTP 19u
#define X87_FNINIT 20u
#define X87_FNCLEX 21u
#define X87_FLD1 22u
#define X87_FLDZ 23u
#define X87_FLDPI 24u
#define X87_FLDL2E 25u
#define X87_FLDL2T 26u
#define X87_FLDLG2 27u
#define X87_FLDLN2 28u
#define X87_FCOMPP 29u
#define X87_FUCOMPP 30u

#define X87_FLD 0u
#define X87_FST 1u
#define X87_FSTP 2u
#define X87_FXCH 3u
#define X87_FFREE 4u
#define X87_FFREEP 5u
#define X87_FCOM 6u
#define X87_FCOMI 10u

#define X87_STORE_POP 1u
#define X87_STORE_TRUNCATE 2u
#define X87_STORE_HIGH 4u

/* Or'd into the kind or operation number of a value form: the quiet form, which computes the value
 * alone and leaves the status word as it was (x87_values.h says when). */
#define X87_QUIET 0x100u

#define X87_KIND_F32 0u
#define X87_KIND_F64 1u
#define X87_KIND_F80 2u
#define X87_KIND_I16 3u
#define X87_KIND_I32 4u
#define X87_KIND_I64 5u

#define SW_IE 0x0001u
#define SW_EXCEPTIONS 0x003fu
#define SW_SF 0x0040u
#define SW_ES 0x0080u
#define SW_C0 0x0100u
#define SW_C1 0x0200u
#define SW_C2 0x0400u
#define SW_C3 0x4000u
#define SW_B 0x8000u
#define SW_TOP 0x3800u

#define X87_CW_INIT 0x037fu

/* What generated code calls on every x87 operation: inlined into the caller even where clang's
 * heuristics would not (the operation number is a constant there, and folding the switch on it
 * leaves a few instructions). */
#define X87_ALWAYS_INLINE static inline __attribute__((always_inline))

struct rpt_f80 {
	uint64_t m;
	uint16_t se;
};

/* Constants as compound literals: a file that includes this header and uses neither gets no
 * unused-variable warning. */
#define x87_indefinite ((struct rpt_f80){ 0xc000000000000000ull, 0xffffu })
#define x87_zero ((struct rpt_f80){ 0, 0 })

#endif /* RPT_X87_DEFS_H */
