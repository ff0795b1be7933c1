/*
 * cpu.h of the IR interpreter's build of the x87 helpers: build.rs compiles runtime/x87.c against
 * it (generations compile the same file against the cpu.h rpt generates), and src/interp.rs calls
 * the result.
 *
 * struct cpu holds only the slots the helpers touch, each declared as the generated cpu.h
 * declares it (a test compares the lines); src/interp.rs copies them in from the interpreter's
 * state before a call and back after it, through a #[repr(C)] mirror whose layout it checks
 * against layout.c's report before the first call. No x87 helper touches guest memory.
 */
#ifndef RPT_CPU_H
#define RPT_CPU_H

#define RPT_GUEST_ADDRESS_BITS 32
#define RPT_GUEST_BIG_ENDIAN 0
#define RPT_INTERPRETER 1
#define rpt_interpreter_read rpt_x86_interpreter_read
#define rpt_interpreter_write rpt_x86_interpreter_write

#include "rpt_runtime.h"

struct cpu {
	uint8_t cf; /* i1 flag */
	uint8_t pf; /* i1 flag */
	uint8_t af; /* i1 flag */
	uint8_t zf; /* i1 flag */
	uint8_t sf; /* i1 flag */
	uint8_t of; /* i1 flag */
	uint16_t fpu_cw; /* i16 special */
	uint16_t fpu_sw; /* i16 special */
	uint8_t fpu_top; /* i8 special */
	uint8_t fpu_tags; /* i8 special */
	uint64_t st_m[8]; /* i64[8] fpr */
	uint16_t st_e[8]; /* i16[8] fpr */
	uint16_t fpu_result_e; /* i16 special */
};

#endif /* RPT_CPU_H */
