/*
 * cpu.h of the IR interpreter's build of this guest's helpers: build.rs compiles
 * runtime/ppc_helpers.c against it (generations compile the same file against the cpu.h rpt
 * generates), and src/interp.rs calls the result.
 *
 * No PowerPC helper touches guest state (each takes what it needs as arguments), so struct cpu
 * stays incomplete here and the interpreter passes a null pointer: a helper that starts using a
 * field fails to compile until the field is declared here and src/interp.rs copies it in and out.
 * Guest memory is the interpreter's (rpt_runtime.h, RPT_INTERPRETER), through this guest's pair
 * of callbacks in src/interp.rs.
 */
#ifndef RPT_CPU_H
#define RPT_CPU_H

#define RPT_GUEST_ADDRESS_BITS 32
#define RPT_GUEST_BIG_ENDIAN 1
#define RPT_INTERPRETER 1
#define rpt_interpreter_read rpt_ppc_interpreter_read
#define rpt_interpreter_write rpt_ppc_interpreter_write

#include "rpt_runtime.h"

#endif /* RPT_CPU_H */
